#!/bin/bash
# fuzz.sh - a long libFuzzer run of one target, reproducible and logged.
#
#   scripts/fuzz.sh NAME SECONDS [OUTDIR]      e.g. scripts/fuzz.sh elf 3600
#
# Builds the targets (make fuzz), copies build/fuzz/fuzz_NAME to OUTDIR (so a
# rebuild does not swap the binary under a running fuzzer), and runs it at
# nice 19 over a working corpus in OUTDIR/corpus seeded from
# tests/fuzz/corpus/NAME/.  A crash does not end the run: the input is kept
# in OUTDIR/crashes/ and the fuzzer restarts until SECONDS of wall time are
# used.  Every libFuzzer run's log is OUTDIR/log.N; the summary lines
# (executions, cov, ft, CPU seconds, crashes) go to stdout and OUTDIR/summary.
# Crashing inputs belong in tests/fuzz/regress/NAME/ once fixed: t9000
# replays them.  Default OUTDIR: /tmp/fuzz-NAME.
set -u
name=${1:?usage: scripts/fuzz.sh NAME SECONDS [OUTDIR]}
secs=${2:?usage: scripts/fuzz.sh NAME SECONDS [OUTDIR]}
out=${3:-/tmp/fuzz-$name}
top=$(cd "$(dirname "$0")/.." && pwd)
# Leaks inside libdw, not prof's: tests/fuzz/lsan.supp says which; a
# suppression matches a frame of the allocation's stack, which the fast
# unwinder loses inside libc (no frame pointers), hence the slow one.
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$top/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

make -C "$top" -s fuzz >/dev/null || exit 1
mkdir -p "$out/corpus" "$out/crashes"
cp "$top/build/fuzz/fuzz_$name" "$out/fuzz_$name" || exit 1

deadline=$(( $(date +%s) + secs ))
run=0 crashes=0 execs=0 cpu_ms=0
while :; do
	left=$(( deadline - $(date +%s) ))
	[ "$left" -gt 0 ] || break
	run=$((run + 1))
	log="$out/log.$run"
	cmd=(nice -n 19 "$out/fuzz_$name" -max_total_time="$left" -timeout=20
	     -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/crashes/"
	     "$out/corpus" "$top/tests/fuzz/corpus/$name")
	echo "# run $run: ${cmd[*]}" >"$log"
	# bash's time: user and system CPU seconds of the fuzzer.
	TIMEFORMAT='%U %S'
	t=$( { time "${cmd[@]}" >>"$log" 2>&1; } 2>&1 )
	rc=$?
	cpu_ms=$(( cpu_ms + $(echo "$t" | awk '{printf "%d", ($1+$2)*1000}') ))
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	execs=$(( execs + ${n:-0} ))
	[ "$rc" = 0 ] || crashes=$((crashes + 1))
	# Crashes print no DONE line: an infinite-crash loop must still end.
	[ "$rc" = 0 ] || sleep 1
done
# The best coverage any run reached (each restart reloads the corpus).
cov=$(cat "$out"/log.* | sed -n 's/^#[0-9].* cov: \([0-9]*\) .*/\1/p' | sort -n | tail -n 1)
ft=$(cat "$out"/log.* | sed -n 's/^#[0-9].* ft: \([0-9]*\) .*/\1/p' | sort -n | tail -n 1)
summary="fuzz_$name: runs=$run executions=$execs cov=${cov:-?} ft=${ft:-?} cpu_min=$(awk "BEGIN{printf \"%.1f\", $cpu_ms/60000}") crashes=$crashes corpus=$(ls "$out/corpus" | wc -l) artifacts=$(ls "$out/crashes" | wc -l)"
echo "$summary" | tee "$out/summary"

#!/bin/bash
# system-wide.sh - the cost of recording the whole machine: two `tp`
# processes (one thread each) load both CPUs for SECS while nothing,
# `perf record -a --call-graph dwarf` or `prof record -a` (both cpu-clock,
# 999 Hz, DWARF) records, interleaved REPEAT times.  prof runs with
# --no-resources there, as perf records CPU samples only; a second pair
# adds off-CPU: `perf record -a` with sched:sched_switch (period 1, DWARF
# stacks) beside `prof record -a` (its default: sched_switch stacks and
# context-switch records).  Figures:
#   throughput / bare     the two targets' ops together, over bare runs
#   recorder CPU / sample  the recorder's own user+sys (runstat) over the
#                         samples its file holds (perf unwinds later, at
#                         report time; prof unwinds here, so this is all
#                         of prof's cost and only part of perf's)
#   bytes / sample        file size over samples
#   recorder CPU, off-CPU on  the recorder's user+sys seconds (the work
#                         differs: perf copies each switch's stack, prof
#                         also unwinds it), and the targets' throughput
# Everything else running on the machine is recorded too, by both.
. "$(dirname "$0")/lib.sh"
bench_build
SECS=${SECS:-5}
declare -A ops cpu bytes samples

# Runs the two targets beside RECORDER... (or nothing); adds their ops.
with_load() {	# key recorder...
	local key=$1 a b
	shift
	"$TP" "$SECS" 1 >"$BENCH_TMP/tp1" 2>/dev/null &
	a=$!
	"$TP" "$SECS" 1 >"$BENCH_TMP/tp2" 2>/dev/null &
	b=$!
	if [ $# -gt 0 ]; then
		"$RUNSTAT" "$@" >/dev/null 2>&1 3>"$BENCH_TMP/rec.stat"
		cpu[$key]+="$(awk '{print $1}' "$BENCH_TMP/rec.stat") "
	fi
	wait $a $b
	ops[$key]+="$(cat "$BENCH_TMP/tp1" "$BENCH_TMP/tp2" | awk '/^ops/ {s += $2} END {print s}') "
}

for i in $(seq "$REPEAT"); do
	with_load bare
	rm -f "$BENCH_TMP/sw.perf" "$BENCH_TMP/sw.prof"
	with_load perf perf record -q -a -e cpu-clock -F 999 --call-graph dwarf -o "$BENCH_TMP/sw.perf" -- sleep "$SECS"
	n=$(perf_samples_total "$BENCH_TMP/sw.perf")
	samples[perf]+="$n "
	bytes[perf]+="$(stat -c %s "$BENCH_TMP/sw.perf") "
	with_load prof "$PROF" record -q -a --no-resources -F 999 -d "$SECS" -o "$BENCH_TMP/sw.prof"
	samples[prof]+="$(prof_samples "$BENCH_TMP/sw.prof") "
	bytes[prof]+="$(stat -c %s "$BENCH_TMP/sw.prof") "
	rm -f "$BENCH_TMP/sw.perf" "$BENCH_TMP/sw.prof"
	with_load perf_oc perf record -q -a -c 1 -e cpu-clock/freq=999/ -e sched:sched_switch \
		--call-graph dwarf -o "$BENCH_TMP/sw.perf" -- sleep "$SECS"
	with_load prof_oc "$PROF" record -q -a -F 999 -d "$SECS" -o "$BENCH_TMP/sw.prof"
done
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
per() {	# sums-a sums-b -> median of a_i / b_i
	paste <(echo "$1" | tr ' ' '\n' | grep .) <(echo "$2" | tr ' ' '\n' | grep .) |
		awk '$2 > 0 {print $1 / $2}' | median
}
bare=$(m "${ops[bare]}")
rpe=$(ratio "$(m "${ops[perf]}")" "$bare"); rpr=$(ratio "$(m "${ops[prof]}")" "$bare")
row "-a overhead, 2 busy procs" "throughput / bare" "$rpe" "$rpr" "$(ratio "$rpr" "$rpe")" "info"
cpe=$(per "${cpu[perf]}" "${samples[perf]}"); cpr=$(per "${cpu[prof]}" "${samples[prof]}")
row "-a recorder CPU" "ms per sample" "$(awk -v x="$cpe" 'BEGIN {printf "%.3f", x * 1000}')" \
	"$(awk -v x="$cpr" 'BEGIN {printf "%.3f", x * 1000}')" "$(ratio "$cpr" "$cpe")" "info"
bpe=$(per "${bytes[perf]}" "${samples[perf]}"); bpr=$(per "${bytes[prof]}" "${samples[prof]}")
row "-a file size" "bytes per sample" "$(printf %.0f "$bpe")" "$(printf %.0f "$bpr")" "$(ratio "$bpr" "$bpe")" \
	"$(verdict "$bpr < $bpe")"
rpe=$(ratio "$(m "${ops[perf_oc]}")" "$bare"); rpr=$(ratio "$(m "${ops[prof_oc]}")" "$bare")
row "-a with off-CPU, 2 busy procs" "throughput / bare" "$rpe" "$rpr" "$(ratio "$rpr" "$rpe")" "info"
cpe=$(m "${cpu[perf_oc]}"); cpr=$(m "${cpu[prof_oc]}")
row "-a with off-CPU, recorder CPU" "seconds" "$cpe" "$cpr" "$(ratio "$cpr" "$cpe")" "info"
echo "# -a: bare median $bare ops (two tp, ${SECS}s); samples perf ${samples[perf]}/ prof ${samples[prof]}; $REPEAT runs" >&2

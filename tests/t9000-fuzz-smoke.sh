#!/bin/bash
# t9000-fuzz-smoke: run every libFuzzer target briefly over its seed corpus
# (plus new inputs for FUZZ_SECONDS, default 4), FUZZ_JOBS targets at a time
# (default: one per CPU; the targets are single-threaded, and one at a time
# this test alone was 94 s of make check's wall clock).  Long runs:
# scripts/fuzz.sh.
. "$(dirname "$0")/lib/test-lib.sh"

secs=${FUZZ_SECONDS:-4}
# Leaks inside libdw, not prof's: tests/fuzz/lsan.supp says which; a
# suppression matches a frame of the allocation's stack, which the fast
# unwinder loses inside libc (no frame pointers), hence the slow one for
# the target that reaches libdw's debuginfo search (fuzz_elf).  Not for
# the others: unwinding every allocation made fuzz_callgrind's seeds run
# past the timeout under load.
export LSAN_OPTIONS="suppressions=$TOP/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
slow_unwind() { [ "$1" = fuzz_elf ] && echo "fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" || echo "${ASAN_OPTIONS:-}"; }
jobs=${FUZZ_JOBS:-$(nproc)}
found=0
targets=()
for bin in "$TOP"/build/fuzz/fuzz_*; do
	[ -x "$bin" ] && targets+=("$bin")
done

fuzz_one() {	# bin: its run's output and exit status in $TRASH/NAME/
	local bin=$1 name
	name=$(basename "$bin")
	mkdir -p "$TRASH/$name/new"
	ASAN_OPTIONS=$(slow_unwind "$name") \
	"$bin" -max_total_time=$secs -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$TRASH/$name/" "$TRASH/$name/new" \
		"$TOP/tests/fuzz/corpus/${name#fuzz_}" >"$TRASH/$name/log" 2>&1
	echo $? >"$TRASH/$name/status"
}

running=0
for bin in "${targets[@]}"; do
	fuzz_one "$bin" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
for bin in "${targets[@]}"; do
	found=1
	name=$(basename "$bin")
	test_expect_success "$name runs ${secs}s without a crash" "
		tail -n 12 '$TRASH/$name/log'
		test \$(cat '$TRASH/$name/status') = 0
	"
done
# Crashes found by long runs (scripts/fuzz.sh) stay fixed: every input in
# tests/fuzz/regress/NAME/ is replayed through its target, and prof.data /
# perf.data ones also through prof report itself (exit 0 or 2, no crash).
for dir in "$TOP"/tests/fuzz/regress/*/; do
	[ -d "$dir" ] || continue
	name=$(basename "$dir")
	bin="$TOP/build/fuzz/fuzz_$name"
	if [ -x "$bin" ]; then
		found=1
		opts=$(slow_unwind "fuzz_$name")
		test_expect_success "fuzz_$name replays tests/fuzz/regress/$name" "
			ASAN_OPTIONS='$opts' '$bin' -runs=1 '$dir'* 2>&1 | tail -n 5
			test \${PIPESTATUS[0]} = 0
		"
	fi
	case $name in profdata|perfdata)
		ran_any=1	# needs only prof: runs without the fuzz targets too
		test_expect_success "prof report survives tests/fuzz/regress/$name" "
			for f in '$dir'*; do
				'$PROF' report -i \"\$f\" >/dev/null 2>&1; st=\$?
				test \$st = 0 || test \$st = 2 || { echo \"\$f: exit \$st\"; exit 1; }
			done
		"
	esac
done
if [ $found = 0 ]; then
	[ -n "${ran_any:-}" ] || skip_all "no fuzz targets built (make fuzz needs clang)"
	test_skip "fuzz targets" "none built in $TOP/build/fuzz (make fuzz needs clang)"
fi
test_done

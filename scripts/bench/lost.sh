#!/bin/bash
# lost.sh - goal 5: lost samples with two busy threads for SECS seconds at
# 4 kHz (goal: none) and at 20 kHz (reported for both tools).
. "$(dirname "$0")/lib.sh"
bench_build
SECS=${SECS:-30}
for hz in 4000 20000; do
	perf record -q -e cpu-clock -F $hz --call-graph dwarf -o "$BENCH_TMP/l.perf" -- "$TP" "$SECS" 2 >/dev/null 2>&1
	"$PROF" record -q -F $hz -o "$BENCH_TMP/l.prof" -- "$TP" "$SECS" 2 >/dev/null 2>&1
	pe=$(perf_lost "$BENCH_TMP/l.perf"); pr=$(prof_lost "$BENCH_TMP/l.prof")
	ok=info; [ $hz = 4000 ] && ok=$([ "$pr" = 0 ] && echo yes || echo NO)
	row "5 lost @${hz}Hz, 2 threads" "samples lost in ${SECS}s" "$pe" "$pr" "-" "$ok"
done

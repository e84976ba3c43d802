#!/bin/bash
# overhead.sh - goal 1: the target's own throughput under perf record
# --call-graph dwarf and under prof record (both DWARF), at 999 Hz and
# 4 kHz, against bare runs, interleaved REPEAT times.  Prints medians and
# ratios.  Goal: prof >= perf at 999 Hz and >= 95% of bare; at 4 kHz prof's
# cost (1 - ratio) at most half of perf's.
. "$(dirname "$0")/lib.sh"
bench_build
SECS=${SECS:-3}
declare -A ops
for i in $(seq "$REPEAT"); do
	ops[bare]+="$("$TP" "$SECS" 1 | awk '{print $2}') "
	for hz in 999 4000; do
		ops[perf$hz]+="$(perf record -q -e cpu-clock -F $hz --call-graph dwarf -o "$BENCH_TMP/o.perf" -- "$TP" "$SECS" 1 2>/dev/null | awk '/^ops/ {print $2}') "
		ops[prof$hz]+="$("$PROF" record -q -F $hz -o "$BENCH_TMP/o.prof" -- "$TP" "$SECS" 1 2>/dev/null | awk '/^ops/ {print $2}') "
	done
done
m() { echo "${ops[$1]}" | tr ' ' '\n' | grep . | median; }
bare=$(m bare)
for hz in 999 4000; do
	pe=$(m perf$hz); pr=$(m prof$hz)
	rpe=$(ratio "$pe" "$bare"); rpr=$(ratio "$pr" "$bare")
	if [ $hz = 999 ]; then
		ok=$(awk -v a="$rpr" -v b="$rpe" 'BEGIN {print (a >= b - 0.005 && a >= 0.95) ? "yes" : "NO"}')
	else
		ok=$(awk -v a="$rpr" -v b="$rpe" 'BEGIN {print ((1 - a) <= (1 - b) / 2 + 0.005) ? "yes" : "NO"}')
	fi
	row "1 overhead @${hz}Hz" "throughput / bare" "$rpe" "$rpr" "$(ratio "$rpr" "$rpe")" "$ok"
done
echo "# bare median ops: $bare over $REPEAT runs of ${SECS}s" >&2

#!/bin/bash
# attach-events.sh - what attaching costs a switch-bound process, by how
# the events are opened: `pingpong SECS 1` (one pair of threads bouncing a
# byte over pipes, ~10^5 context switches a second) pinned to CPU 1, and
# attached at once with -p until it exits, by
#   cpu         `prof record -p` (root: events per CPU, the targets' kept)
#   thread      `prof record -p --per-thread` (an event per thread, as perf)
#   cpu_nores   the same per CPU with --no-resources (CPU samples only)
#   thread_nores  the same per thread with --no-resources
#   perf        `perf record -p --call-graph dwarf -F 999`
# and by nothing, runs interleaved REPEAT times.  Reported: pingpong's
# round trips per second under each, median, over the bare median.  A
# per-thread event is switched out and in with its thread (its cpu-clock
# timer stopped and restarted inside the context switch); per CPU it is
# not.  Needs root (events per CPU).  CONFIGS picks recorders.
. "$(dirname "$0")/lib.sh"
bench_build
PP="$BENCH_TMP/pingpong"
[ -x "$PP" ] || gcc -O1 -g -fomit-frame-pointer -pthread "$TOP/tests/resources/pingpong.c" -o "$PP"
[ "$(id -u)" = 0 ] || { echo "attach-events.sh: needs root (events per CPU)" >&2; exit 1; }
SECS=${SECS:-4}
CONFIGS=${CONFIGS:-cpu thread cpu_nores thread_nores perf}
declare -A trips

# pingpong on CPU 1, attached by config $1 (or nothing) for its whole run
one() {
	local pid
	taskset -c 1 "$PP" "$SECS" 1 >"$BENCH_TMP/pp.out" &
	pid=$!
	case $1 in
	cpu) "$PROF" record -q -o "$BENCH_TMP/a.data" -p $pid ;;
	thread) "$PROF" record -q --per-thread -o "$BENCH_TMP/a.data" -p $pid ;;
	cpu_nores) "$PROF" record -q --no-resources -o "$BENCH_TMP/a.data" -p $pid ;;
	thread_nores) "$PROF" record -q --no-resources --per-thread -o "$BENCH_TMP/a.data" -p $pid ;;
	perf) perf record -q --call-graph dwarf -F 999 -o "$BENCH_TMP/a.perf" -p $pid 2>/dev/null ;;
	esac
	wait $pid
	sed -n 's/^trips_per_s //p' "$BENCH_TMP/pp.out"
}

echo "# attach-events: load average at start $(cut -d' ' -f1-3 /proc/loadavg); $REPEAT rounds of ${SECS}s" >&2
for r in $(seq "$REPEAT"); do
	for c in bare $CONFIGS; do
		t=$(one "$c")
		trips[$c]+="$t "
		echo "# round $r $c: $t trips/s; load $(cut -d' ' -f1 /proc/loadavg)" >&2
	done
done
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
bare=$(m "${trips[bare]}")
for c in $CONFIGS; do
	row "attach, switch-bound: $c" "trips/s / bare ($bare/s)" "" "$(ratio "$(m "${trips[$c]}")" "$bare")" "" "info"
done
echo "# attach-events: load average at end $(cut -d' ' -f1-3 /proc/loadavg)" >&2

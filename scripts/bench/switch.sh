#!/bin/bash
# switch.sh - off-CPU cost on a switch-heavy server: `pingpong` (two pairs of
# threads bouncing a byte over pipes, hundreds of thousands of switches/s
# bare) alone, under `perf record -e sched:sched_switch --call-graph dwarf`
# and under `prof record` (defaults: CPU samples plus off-CPU), interleaved.
# Reported: the workload's round trips/s under each as a ratio to bare (the
# median of REPEAT runs of SECS seconds), and prof's off-CPU time against
# the threads' own (wall - thread CPU time), and the difference per
# context switch: the kernel charges a switch to the incoming thread's CPU
# time from the moment it is picked, while the switch records that bound
# prof's intervals come later in the switch, so every switch adds about
# the switch's own cost (1.3-1.6 us here, docs/offcpu.md) to the
# off-CPU side.  The ratio therefore grows with the switch rate.
. "$(dirname "$0")/lib.sh"
PP="$BENCH_TMP/pingpong"
[ -x "$PP" ] || gcc -O1 -g -fomit-frame-pointer -pthread "$TOP/tests/resources/pingpong.c" -o "$PP"
SECS=${SECS:-5}
: >"$BENCH_TMP/sw.bare"; : >"$BENCH_TMP/sw.perf"; : >"$BENCH_TMP/sw.prof"; : >"$BENCH_TMP/sw.acc"; : >"$BENCH_TMP/sw.per"
trips() { sed -n 's/^trips_per_s //p' "$1"; }
for i in $(seq "$REPEAT"); do
	"$PP" "$SECS" 2 >"$BENCH_TMP/sw.out" && trips "$BENCH_TMP/sw.out" >>"$BENCH_TMP/sw.bare"
	perf record -q -e sched:sched_switch --call-graph dwarf -o "$BENCH_TMP/sw.perfdata" -- \
		"$PP" "$SECS" 2 >"$BENCH_TMP/sw.out" 2>/dev/null && trips "$BENCH_TMP/sw.out" >>"$BENCH_TMP/sw.perf"
	"$PROF" record -q -o "$BENCH_TMP/sw.profdata" -- "$PP" "$SECS" 2 >"$BENCH_TMP/sw.out" 2>/dev/null &&
		trips "$BENCH_TMP/sw.out" >>"$BENCH_TMP/sw.prof"
	own=$(sed -n 's/^offcpu_ns //p' "$BENCH_TMP/sw.out")
	switches=$(awk -v s="$SECS" '/^switches_per_s / {print $2 * s}' "$BENCH_TMP/sw.out")
	"$PROF" report -i "$BENCH_TMP/sw.profdata" --format=json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
got = sum(t["off_cpu_s"] for t in p["threads"] if t["comm"] in ("ping", "pong")) * 1e9
own, switches = int(sys.argv[1]), float(sys.argv[2])
print("%.3g" % (got / own))
print("%.3g" % ((got - own) / 1e3 / switches), file=sys.stderr)' "$own" "$switches" \
		>>"$BENCH_TMP/sw.acc" 2>>"$BENCH_TMP/sw.per"
done
bare=$(median <"$BENCH_TMP/sw.bare")
pe=$(ratio "$(median <"$BENCH_TMP/sw.perf")" "$bare")
pr=$(ratio "$(median <"$BENCH_TMP/sw.prof")" "$bare")
row "1c switch-heavy (pingpong)" "trips/s / bare ($bare/s)" "$pe" "$pr" "$(ratio "$pr" "$pe")" "$(verdict "$pr >= $pe")"
acc=$(median <"$BENCH_TMP/sw.acc")
row "1c switch-heavy off-CPU" "prof / own clock" "-" "$acc" "-" "$(verdict "$acc >= 0.9 && $acc <= 1.1")"
row "1c off-CPU minus own clock" "us per context switch" "-" "$(median <"$BENCH_TMP/sw.per")" "-" "info"

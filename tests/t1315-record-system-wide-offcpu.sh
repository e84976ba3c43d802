#!/bin/bash
# t1315-record-system-wide-offcpu: `prof record -a` records off-CPU time
# with stacks for every process, held to what the programs' own clocks
# say: a sleeper started during the recording shows its nanosleep time as
# sleep (within 25%, under sleep_a_while, never as I/O wait), and an
# fdatasync loop its blocked time as I/O wait (within 25%, under
# block_in_fdatasync).  prof's own waits are left out.  The recording is
# stopped by SIGINT once both workloads are done, after prof's reader
# threads exist (the events are on by then): no guess at how long setup
# takes on a loaded machine.  A process asleep across the whole recording
# has the window as off-CPU time.  Off-CPU and I/O wait count every switch
# (no sampling; false-failure chance from sampling: none, tests/README.md).
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/lib/slowdisk.sh"
require_perf_events
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] ||
	skip_all "system-wide recording needs root or perf_event_paranoid <= 0"
RB="$BUILD_DIR/tests/resources"
# The fdatasyncs go to a disk with a set latency (tests/lib/slowdisk.sh),
# so there is I/O wait to measure whatever the host's disk is.
slow_disk_setup 500 5000 || skip_all "$SLOW_DISK_WHY"

require_offcpu

# json_get FILE EXPR: a python expression over p (the report's only process).
json_get() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=d['processes'][0]; print($2)" "$1"
}

# within_25 TRUTH GOT (seconds)
within_25() {
	python3 -c "import sys; t,g=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(g-t) <= 0.25*t else 1)" "$1" "$2"
}

test_expect_success 'prof record -a while a sleeper and an fdatasync loop run' '
	"$PROF" record -a -o sw.data 2>record.err & PROFPID=$!
	echo $PROFPID >prof.pid
	wait_recording $PROFPID || kill -9 $PROFPID
	"$RB/sleeper" 1500 >sleep.out & SL=$!
	"$RB/fsync_wait" "$SLOW_DIR/sync.bin" 1 60 >io.out & IO=$!
	wait $SL; wait $IO; echo $SL >sleeper.pid; echo $IO >io.pid
	rm -f "$SLOW_DIR/sync.bin"
	kill -INT $PROFPID; wait $PROFPID; st=$?
	cat record.err sleep.out io.out; test $st = 0
'

test_expect_success 'the sleeper: sleep within 25% of its own clock, no I/O wait' '
	truth=$(sed -n "s/.*slept_ns //p" sleep.out) &&
	"$PROF" report -i sw.data --pid $(cat sleeper.pid) --format=json --metric=sleep >sleep.json &&
	sl=$(json_get sleep.json "p[\"sleep_s\"]") && io=$(json_get sleep.json "p[\"io_wait_s\"]") &&
	say "sleeper: $truth ns in nanosleep by its clock; prof sleep_s $sl io_wait_s $io" &&
	within_25 $(python3 -c "print($truth/1e9)") $sl &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 0.05 else 1)" $io &&
	"$PROF" report -i sw.data --pid $(cat sleeper.pid) --format=folded --metric=sleep >sleep.folded &&
	grep -q ";sleep_a_while;" sleep.folded
'

test_expect_success 'the fdatasync loop: I/O wait within 25% of its own clock, at the call' '
	truth=$(sed -n "s/^blocked_ns //p" io.out) &&
	"$PROF" report -i sw.data --pid $(cat io.pid) --format=json --metric=io-wait >io.json &&
	got=$(json_get io.json "p[\"io_wait_s\"]") &&
	say "fsync_wait: $truth ns blocked by its clock; prof io_wait_s $got" &&
	slow_disk_check_truth "$truth" 60 &&
	within_25 $(python3 -c "print($truth/1e9)") $got &&
	"$PROF" report -i sw.data --pid $(cat io.pid) --format=folded --metric=io-wait >io.folded &&
	folded_share io.folded ";block_in_fdatasync;" "^[^;]*;\[stack lost\]" 80
'

test_expect_success "prof's own off-CPU time is left out" '
	"$PROF" report -i sw.data --pid $(cat prof.pid) --metric=off-cpu >own.txt &&
	check_contains own.txt "no samples match"
'

test_expect_success 'off-CPU is recorded for other processes too (kernel threads, shells)' '
	"$PROF" report -i sw.data --metric=off-cpu --sort pid -q >pids.txt &&
	test $(wc -l <pids.txt) -ge 3
'

# A process asleep in one nanosleep across the whole recording (bounded
# by the command after -a, at least 1 s): none of its switches happen in
# the window, yet its off-CPU time is the window, as sleep, under the
# stack /proc showed when the recording began.  Counted, not sampled.
test_expect_success 'asleep the whole window: its off-CPU time is the window' '
	sleep 600 &
	zz=$!
	for _ in $(seq 600); do	# until it sleeps (S), at most 60 s
		[ "$(cat /proc/$zz/comm)" = sleep ] && [ "$(sed "s/.*) //" /proc/$zz/stat | cut -c1)" = S ] && break
		sleep 0.1
	done
	"$PROF" record -a -o zz.data -- sleep 1 2>zz.err; st=$?
	kill $zz; wait $zz 2>/dev/null
	cat zz.err && test "$st" = 0 &&
	"$PROF" report -i zz.data --pid $zz --metric=off-cpu --format=json >zz.json &&
	got=$(json_get zz.json "p[\"off_cpu_s\"], p[\"sleep_s\"]") &&
	say "pid $zz: off_cpu_s, sleep_s: $got" &&
	python3 -c "import sys; o,s=map(float,sys.argv[1:]); sys.exit(0 if o >= 0.99 and s == o else 1)" $(echo "$got" | tr -d "(),") &&
	"$PROF" report -i zz.data --pid $zz --format=folded --metric=off-cpu >zz.folded &&
	grep -q "^sleep;\[off-CPU when recording began\];.*nanosleep" zz.folded
'

test_expect_success '--no-resources leaves off-CPU out of -a' '
	"$PROF" report -i sw.data --header >sw.hdr && check_contains sw.hdr "^# off_cpu: sched_switch" &&
	"$PROF" record -a -d 1 --no-resources -o nores.data 2>nores.err &&
	"$PROF" report -i nores.data --metric=off-cpu >nores.txt &&
	check_contains nores.txt "no samples match" &&
	"$PROF" report -i nores.data --header >nores.hdr && check_not_contains nores.hdr "^# off_cpu:"
'

test_done

#!/bin/bash
# t1185-record-perf-flags: perf record's flags mean in prof what they mean
# in perf: -g with no argument, --call-graph MODE[,SIZE], -c PERIOD,
# -F max, -t TID, --no-inherit, -o - (read back with report -i -), -v,
# a command after -p/-t bounding the recording; -a/-C errors and perf
# flags prof lacks are refused naming the flag.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
WL="$TOP/tests/workloads/bin"

test_expect_success '-g takes no argument (perf: default call graph): the command after it runs' '
	"$PROF" record -q -g -o g.data -- "$WL/split" 1 >/dev/null &&
	"$PROF" report -i g.data >out && check_contains out "callgraph dwarf" &&
	check_contains out "spin_a"
'

test_expect_success '--call-graph dwarf,16384 sets the stack bytes' '
	"$PROF" record -q --call-graph dwarf,16384 -o d.data -- "$WL/split" 1 >/dev/null &&
	"$PROF" report -i d.data --header >out && check_contains out "^# stack_size: 16384$"
'

test_expect_success '--call-graph fp records kernel-walked stacks' '
	"$PROF" record -q --call-graph fp -o fp.data -- "$WL/split" 1 >/dev/null &&
	"$PROF" report -i fp.data >out && check_contains out "callgraph fp"
'

test_expect_failure_exit '--call-graph lbr is refused' 2 '"$PROF" record --call-graph lbr -- true'
test_expect_success '--call-graph lbr: the reason, one line' '
	! "$PROF" record --call-graph lbr -- true 2>err && test $(wc -l <err) = 1 &&
	check_contains err "lbr needs Intel.s Last Branch Record"
'

test_expect_success '-c PERIOD: one sample per PERIOD ns of cpu-clock (period_ns meta, no frequency)' '
	"$PROF" record -q -c 2000000 -o c.data -- "$WL/split" 1 >/dev/null &&
	"$PROF" report -i c.data --header >out &&
	check_contains out "^# period_ns: 2000000$" && check_not_contains out "Hz"
'

test_expect_success '-F max: the kernel.perf_event_max_sample_rate' '
	max=$(cat /proc/sys/kernel/perf_event_max_sample_rate) &&
	test "$max" -gt 100000 && max=100000
	"$PROF" record -q -F max -o max.data -- true &&
	"$PROF" report -i max.data --header >out && check_contains out "^# frequency: $max$"
'

test_expect_success '--no-inherit: the child of the command is not sampled' '
	"$PROF" record -q -o inh.data -- sh -c "\"$WL/split\" 1" >/dev/null &&
	"$PROF" record -q --no-inherit -o noinh.data -- sh -c "\"$WL/split\" 1" >/dev/null &&
	"$PROF" report -i inh.data >a && check_contains a "spin_a" &&
	"$PROF" report -i noinh.data >b && check_not_contains b "spin_a"
'

test_expect_success '-t TID: only that thread of a running process' '
	"$WL/threads" 4 >/dev/null 2>&1 & pid=$! &&
	# the workload starts its threads after 0.5 s of CPU time (not wall time)
	for i in $(seq 100); do
		test $(ls /proc/$pid/task 2>/dev/null | wc -l) -ge 3 && break; sleep 0.1
	done &&
	tid=$(ls /proc/$pid/task | sort -n | tail -1) &&
	"$PROF" record -q -t $tid -d 1 -o tid.data; st=$?; kill $pid 2>/dev/null; wait $pid
	test $st = 0 && "$PROF" report -i tid.data --format=json >tid.json &&
	python3 -c "
import json, sys
d = json.load(open(\"tid.json\"))
tids = {t[\"tid\"] for p in d[\"processes\"] for t in p[\"threads\"]}
assert tids == {int(sys.argv[1])}, tids
" $tid
'

test_expect_success '-o - streams the recording to stdout, the command output to stderr' '
	"$PROF" record -q -o - -- sh -c "echo hello; \"$WL/split\" 1" >s.data 2>err &&
	check_contains err "^hello$" &&
	"$PROF" report -i - <s.data >out && check_contains out "spin_a" &&
	"$PROF" record -q -o - -- "$WL/split" 1 2>/dev/null | "$PROF" report -i - >pipe.out &&
	check_contains pipe.out "spin_a" && test ! -e ./-
'

test_expect_success '-v says the sampling configuration' '
	"$PROF" record -v -o v.data -- true 2>err &&
	check_contains err "event cpu-clock, 999 Hz, call graph dwarf"
'

# perf's habit: a command after -p/-t bounds the recording of the
# targets; the command itself is not recorded, its status is prof's.
test_expect_success '-p PID -- CMD: records PID until CMD ends, not CMD; CMD.s status' '
	"$WL/split" 60 >/dev/null 2>&1 & pid=$! &&
	{ "$PROF" record -q -p $pid -o pb.data -- sh -c "\"$WL/split\" 1 >/dev/null; exit 3"; st=$?; } &&
	kill $pid; wait $pid
	test $st = 3 && "$PROF" report -i pb.data --sort pid -q >pids &&
	test "$(awk "{print \$3}" pids)" = $pid &&
	"$PROF" report -i pb.data >out && check_contains out "^# command: -p $pid -- sh -c "
'
test_expect_success '-t TID -- CMD: the thread until CMD ends' '
	"$WL/split" 60 >/dev/null 2>&1 & pid=$! &&
	"$PROF" record -q -t $pid -o tb.data -- true; st=$?; kill $pid; wait $pid
	test $st = 0 && "$PROF" report -i tb.data >out && check_contains out "^# command: -p $pid -- true"
'
test_expect_success '-a/-C: a target conflict or a bad CPU list is a usage error naming it' '
	{ "$PROF" record -a -p 1 -d 1 2>err; test $? = 2; } &&
	check_contains err "give either -p PID / -t TID or -a/-C, not both (-d SECONDS or a command" &&
	{ "$PROF" record -C x -d 1 2>err; test $? = 2; } && check_contains err "bad CPU list .x. for -C"
'
test_expect_success 'perf flags prof lacks: "perf'"'"'s X (MEANING) is not supported by prof: WHY"' '
	! "$PROF" record -b -- true 2>err && check_contains err "perf.s -b (sample taken branches) is not supported by prof: " &&
	! "$PROF" record --branch-filter any -- true 2>err &&
	check_contains err "perf.s --branch-filter (.*) is not supported by prof: " &&
	! "$PROF" record -qz -- true 2>err && check_contains err "perf.s -z (.*) is not supported"
'
test_expect_success 'a bad flag in a bundle is named, not the command' '
	! "$PROF" record -qY -- true 2>err && check_contains err "unknown option .-Y." &&
	check_not_contains err "record.$"
'

test_done

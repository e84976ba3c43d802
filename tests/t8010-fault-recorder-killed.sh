#!/bin/bash
# t8010-fault-recorder-killed: prof itself is stopped the hard or the
# polite way.  After SIGKILL everything up to the last flush (~1 s) reads
# back: report works, warns once that the file is truncated, has samples.
# After SIGINT or SIGTERM (attach and launch mode) the file is complete:
# report prints no warning at all.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
. "$TOP/tests/fault/fault-lib.sh"

test_expect_success 'SIGKILLed recorder: the flushed part reads back, with a warning' '
	"$PROF" record -o k.data -- "$CHURN" spin 20 2>rec.err &
	prof_pid=$! && child=$(child_of $prof_pid) &&
	wait_flushes k.data && kill -9 $prof_pid; wait $prof_pid; kill -9 $child &&
	"$PROF" report -i k.data --format=json -o k.json 2>rep.err &&
	cat rep.err && test $(wc -l <rep.err) = 1 &&
	check_contains rep.err "warning: k.data is truncated" &&
	n=$(json_field k.json "j[\"samples\"]") && echo "samples $n" && test $n -gt 0 &&
	"$PROF" report -i k.data >k.txt 2>/dev/null && check_contains k.txt spin_burn
'

attach_and_stop() {	# signal: attach to a spinning target, stop prof with it
	"$CHURN" spin 20 &
	target=$!
	sleep 0.3
	"$PROF" record -o "a$1.data" -p $target 2>"a$1.err" &
	prof_pid=$!
	sleep 2
	kill -$1 $prof_pid
	wait $prof_pid
	st=$?
	alive=no; kill -0 $target 2>/dev/null && alive=yes
	kill -9 $target; wait $target 2>/dev/null
	echo "prof exit $st, target alive after prof stopped: $alive"; cat "a$1.err"
	test $st = 0 && test $alive = yes && check_contains "a$1.err" "samples (0 lost" &&
	"$PROF" report -i "a$1.data" --format=json -o "a$1.json" 2>"a$1.rep" &&
	{ test ! -s "a$1.rep" || { cat "a$1.rep"; false; }; } &&
	test $(json_field "a$1.json" "j[\"samples\"]") -gt 0
}

test_expect_success 'attach, SIGINT: complete file, target unharmed' 'attach_and_stop INT'
test_expect_success 'attach, SIGTERM: complete file, target unharmed' 'attach_and_stop TERM'

test_expect_success 'launch, SIGTERM: forwarded, exit 143, complete file' '
	"$PROF" record -o t.data -- "$CHURN" spin 20 2>t.err &
	prof_pid=$! && child_of $prof_pid >/dev/null && sleep 1.5 &&
	kill -TERM $prof_pid; wait $prof_pid; st=$?; echo "prof exit $st"; cat t.err;
	test $st = 143 &&
	"$PROF" report -i t.data --format=json -o t.json 2>t.rep &&
	{ test ! -s t.rep || { cat t.rep; false; }; } &&
	test $(json_field t.json "j[\"samples\"]") -gt 0
'

test_expect_success 'launch, Ctrl-C (SIGINT to the process group): exit 130, complete file' '
	# Background jobs of a script start with SIGINT ignored: undo that, as a
	# terminal would have it.
	setsid env --default-signal=INT "$PROF" record -o i.data -- "$CHURN" spin 20 2>i.err &
	prof_pid=$! && child_of $prof_pid >/dev/null && sleep 1.5 &&
	pgid=$(ps -o pgid= $prof_pid | tr -d " ") &&
	kill -INT -- -$pgid; wait $prof_pid; st=$?; echo "prof exit $st"; cat i.err;
	test $st = 130 &&
	"$PROF" report -i i.data --format=json -o i.json 2>i.rep &&
	{ test ! -s i.rep || { cat i.rep; false; }; } &&
	test $(json_field i.json "j[\"samples\"]") -gt 0
'

test_done

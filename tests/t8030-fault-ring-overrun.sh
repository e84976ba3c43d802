#!/bin/bash
# t8030-fault-ring-overrun: 20 kHz sampling of two spinning threads into
# a 16 KiB ring (-m 4) with 4 KiB stack copies: the kernel overruns the
# ring.  The loss must be counted and shown - record's summary line, the
# text header "lost: N" and json "lost" agree on the same N > 0 - never
# silently dropped.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
. "$TOP/tests/fault/fault-lib.sh"

test_expect_success 'tiny ring at 20 kHz: record counts lost samples' '
	"$PROF" record -F 20000 -m 4 --stack-size 4096 -o r.data -- "$CHURN" tspin 1.5 2 2>r.err &&
	cat r.err &&
	lost=$(sed -n "s/.* samples (\([0-9]*\) lost.*/\1/p" r.err) &&
	echo "record says lost=$lost" && test "$lost" -gt 0
'

test_expect_success 'report shows the same loss in text and json' '
	lost=$(sed -n "s/.* samples (\([0-9]*\) lost.*/\1/p" r.err) &&
	"$PROF" report -i r.data >r.txt 2>r.rep && test ! -s r.rep &&
	check_contains r.txt "^# samples: [0-9]*, lost: $lost," &&
	"$PROF" report -i r.data --format=json -o r.json &&
	test "$(json_field r.json "j[\"lost\"]")" = "$lost"
'

test_expect_success 'the same loss survives a SIGKILLed recorder (SUMMARY at every flush)' '
	"$PROF" record -F 20000 -m 4 --stack-size 4096 -o k.data -- "$CHURN" tspin 20 2 2>/dev/null &
	prof_pid=$! && child=$(child_of $prof_pid) && wait_flushes k.data &&
	kill -9 $prof_pid; wait $prof_pid; kill -9 $child;
	"$PROF" report -i k.data --format=json -o k.json 2>k.rep &&
	check_contains k.rep truncated &&
	n=$(json_field k.json "j[\"lost\"]") && echo "lost before the kill: $n" && test "$n" -gt 0
'

test_done

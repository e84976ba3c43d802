#!/bin/bash
# t1180-record-report-errors: the error paths of record and report, per
# Errors a user meets first: unsupported event (no PMU here, so -e cycles), a missing command
# (exit 127), the command's exit status passing through, a missing /
# corrupt prof.data (exit 2, one line), and truncated files - cut by hand
# and left by a SIGKILLed recorder - (one warning, report anyway, exit 0).
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"

one_line() {	# file: exactly one non-empty line
	test "$(grep -c . "$1")" = 1 || { echo "want one line in $1:"; cat "$1"; return 1; }
}

if perf stat -e cycles -x, true >/dev/null 2>&1 &&
   ! perf stat -e cycles -x, true 2>&1 | grep -q "not supported"; then
	test_skip 'unsupported event -e cycles' 'this machine has a cycles PMU'
else
	test_expect_success 'unsupported event -e cycles: one line, non-zero exit' '
		"$PROF" record -e cycles -o cyc.data -- true >out 2>err;
		st=$?; cat err; test $st != 0 && one_line err && grep -q cycles err
	'
fi

test_expect_failure_exit 'missing command exits 127' 127 '
	"$PROF" record -q -o miss.data -- ./no-such-command-here
'

test_expect_success 'missing command: one line naming the command' '
	"$PROF" record -q -o miss.data -- ./no-such-command-here 2>err;
	cat err; one_line err && grep -q no-such-command-here err
'

test_expect_failure_exit 'the command exit status passes through' 7 '
	"$PROF" record -q -o st.data -- sh -c "exit 7"
'

test_expect_failure_exit 'a killed command gives 128+signal' 143 '
	"$PROF" record -q -o sig.data -- sh -c "kill -TERM \$\$"
'

test_expect_success 'report of a missing file: exit 2, one line, with a hint' '
	"$PROF" report -i nope.data >out 2>err;
	st=$?; cat err; test $st = 2 && one_line err &&
	grep -q "cannot open .nope.data.: No such file or directory" err &&
	grep -q "prof record" err
'

test_expect_success 'report of a file that is not prof.data: exit 2, one line' '
	printf "this is not a profile\n%.0s" $(seq 100) >text.data &&
	"$PROF" report -i text.data >out 2>err;
	st=$?; cat err; test $st = 2 && one_line err
'

test_expect_success 'report of an empty file: exit 2, one line' '
	: >empty.data &&
	"$PROF" report -i empty.data >out 2>err;
	st=$?; cat err; test $st = 2 && one_line err
'

test_expect_success 'record a complete file to damage' '
	"$PROF" record -q -o full.data -- "$WL/split" 1 >/dev/null &&
	"$PROF" report -i full.data --format=json >full.json 2>full.err &&
	! test -s full.err && $CHECK field full.json samples gt 10
'

test_expect_success 'corrupt header (first 16 bytes flipped): exit 2, one line' '
	cp full.data bad.data &&
	printf "\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377" |
		dd of=bad.data bs=1 seek=0 conv=notrunc status=none &&
	"$PROF" report -i bad.data >out 2>err;
	st=$?; cat err; test $st = 2 && one_line err
'

# Cut inside the last flush (3 bytes short of the end): a cut before the
# first sample is refused instead (t2001), and where 70% of the bytes end
# depends on how many samples a loaded machine let the run take.
test_expect_success 'truncated file (cut 3 bytes short): warning, report, exit 0' '
	size=$(stat -c %s full.data) &&
	head -c $((size - 3)) full.data >cut.data &&
	"$PROF" report -i cut.data >cut.txt 2>err;
	st=$?; cat err; test $st = 0 && one_line err &&
	grep -q "^prof report: warning: cut.data is truncated" err &&
	check_contains cut.txt "^# prof report"
'

test_expect_success 'truncated file: json still parses' '
	"$PROF" report -i cut.data --format=json >cut.json 2>/dev/null &&
	$CHECK field cut.json samples ge 0
'

test_expect_success 'SIGKILLed recorder: its file reports with a warning, with samples' '
	"$PROF" record -q -o killed.data -- "$WL/split" 6 >/dev/null 2>&1 &
	rec=$! &&
	sleep 3 &&
	kids=$(pgrep -P $rec) ;
	kill -9 $rec; wait $rec 2>/dev/null;
	for k in $kids; do kill $k 2>/dev/null; done;
	"$PROF" report -i killed.data --format=json >killed.json 2>err;
	st=$?; cat err; test $st = 0 &&
	grep -q "^prof report: warning: killed.data is truncated" err &&
	$CHECK field killed.json samples gt 0
'

test_expect_success 'one pid-list parser: record, top and report say the same, touch no file' '
	for c in "record -p" "record -t" "top -p" "report --pid" "report --tid"; do
		"$PROF" $c 12,x -o ids.data >out 2>err; st=$?; cat err
		test $st = 2 && one_line err && grep -q "invalid value .x. for -" err || return 1
		"$PROF" $c , -o ids.data >out 2>err; st=$?; cat err
		test $st = 2 && one_line err && grep -q "no id in .,. for -" err || return 1
	done; test ! -e ids.data
'

test_done

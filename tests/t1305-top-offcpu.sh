#!/bin/bash
# t1305-top-offcpu: `prof top --off-cpu` on the "service" workload (two
# workers that burn ~20 ms then sleep ~30 ms in burn_then_sleep, a main
# thread in pause()).  The table is off-CPU time: the header says
# off-CPU seconds, the process line "off-cpu:", and burn_then_sleep
# holds the workers' waits, with -p and with -a; --comm keeps one worker;
# prof's own threads (asleep most of the time under -a) are not shown;
# a thread of 2-ms naps has its time in the view within seconds;
# without the permission it takes there is one error line and no table.
#
# What is judged, and its false-failure chance.  Every switch-out of a
# worker happens inside burn_then_sleep (its nanosleep, or a preemption
# of its burn loop); the workers' loop does nothing else.  The main
# thread never wakes, so a live view never charges it.  So the charged
# time outside burn_then_sleep can only be the estimator's [stack not
# sampled] / [stack lost] (docs/offcpu.md); the test asks for 80%, and
# 12 runs of the -p table (fifth second, beside a `make check`, load 2-3)
# gave 100.00% every time, and 10 runs of the third second's table
# (beside the suite under scripts/check-under-load.sh, load 3) gave
# 97.8-99.9%.  The windows need charged
# intervals: the workers wake 20 times a second each, and the table is
# the one of the 3rd second (the first second's window holds little: an
# interval reaches the view when charged, up to a few hundred ms late).
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
require_offcpu

start_service

# last_table OUT: the last --stdio table of OUT (from its summary line).
last_table() {
	awk '/^prof top: / { n = 0; delete t } { t[n++] = $0 } END { for (i = 0; i < n; i++) print t[i] }' "$1"
}
# total_of TABLE FUNCTION: its total% over its rows (0 when absent): a
# function has a row per module it is in, and -a --comm also finds the
# workers of another service running on the machine (another test
# suite's), whose binary is another module.
total_of() { awk -v f="$2" '$3 == f { s += $2 } END { print s + 0 }' "$1"; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }' || { echo "$1 < $2"; return 1; }; }

test_expect_success '-p: off-CPU seconds, the workers in burn_then_sleep' '
	"$PROF" top --off-cpu --stdio -p $SVC -d 3.5 --delay 1 -n 40 >p.out 2>p.err &&
	last_table p.out >p.txt && cat p.txt &&
	check_contains p.txt "^prof top: pid $SVC  off-CPU [0-9.]*s in [0-9.]*s  lost" &&
	check_contains p.txt "^off-cpu:  svc-worker[12]($SVC) [0-9.]*%" &&
	check_not_contains p.txt "samples" &&
	at_least "$(total_of p.txt burn_then_sleep)" 80 &&
	at_least "$(total_of p.txt worker1)" 10 && at_least "$(total_of p.txt worker2)" 10
'

test_expect_success '--comm svc-worker2: only that thread'"'"'s waits' '
	"$PROF" top --off-cpu --stdio -p $SVC --comm svc-worker2 -d 3.5 --delay 1 -n 40 >c.out &&
	last_table c.out >c.txt && cat c.txt &&
	at_least "$(total_of c.txt worker2)" 80 &&
	[ "$(total_of c.txt worker1)" = 0 ]
'

test_expect_success '-a: the workers found machine-wide, prof itself left out' '
	"$PROF" top --off-cpu --stdio -a --comm svc-worker1,svc-worker2 -d 3.5 --delay 1 -n 40 >a.out &&
	last_table a.out >a.txt && cat a.txt &&
	at_least "$(total_of a.txt burn_then_sleep)" 80 &&
	{ "$PROF" top --off-cpu --stdio -a -d 3.5 --delay 1 -n 5 >all.out & } &&
	TOP=$! && wait $TOP &&
	last_table all.out >all.txt && cat all.txt &&
	check_contains all.txt "^off-cpu: " && check_not_contains all.txt "($TOP)"
'

# A thread of short waits: 2-ms naps, 500 switch-outs a second, each
# kept 1 in 61 at random (weight 61) beside the stale rule's one every
# 20 ms (weight 1).  A recording waits up to 10 s for a window of such
# weights to share its time steadily among the stacks; the live view
# charges each window once it is a second old.  The sleeper is off the
# CPU all along, so by the third second's table the windows of its
# first two seconds are charged: the header must show at least 1 s.
# Before the live view's windows: 0.0 s in each of 5 runs (the time came
# after 10 s); with them, 1.9-2.1 s in 20 runs beside two CPU burners.
# No sampling decides it (every interval is timed; only its stack is
# sampled): it fails only if the view lags a whole second.
"$BUILD_DIR/tests/resources/sleeper" 60000 2 >/dev/null &
SLP=$!
trap 'kill $SVC $SLP 2>/dev/null' EXIT
test_expect_success 'a thread of short waits: its time is shown within seconds' '
	"$PROF" top --off-cpu --stdio -p $SLP -d 3.5 --delay 1 -n 40 >s.out &&
	last_table s.out >s.txt && cat s.txt &&
	sed -n "s/^prof top: pid $SLP  off-CPU \([0-9.]*\)s in \([0-9.]*\)s .*/\1 \2/p" s.txt >s.secs &&
	read off in <s.secs && at_least "$in" 2.5 && at_least "$off" 1.0
'
kill $SLP 2>/dev/null

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ]; then
	test_expect_success 'without the permission: one error line, no table, non-zero exit' '
		! setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$PROF" top --off-cpu --stdio -p $SVC -d 1 >nobody.out 2>nobody.err &&
		one_error nobody.err "^prof top: error: --off-cpu: " && [ ! -s nobody.out ]
	'
else
	test_skip 'without the permission' "needs root, setpriv and perf_event_paranoid >= 1"
fi

test_done

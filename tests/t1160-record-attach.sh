#!/bin/bash
# t1160-record-attach: attach to the running "service" workload with
# `prof record -p PID -d 2`; the target must survive and its two worker
# threads' functions must be in the profile.  Attaching to a pid that
# cannot exist fails with exit 2 and one line on stderr.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"
# False-failure bounds (tests/README.md, tests/lib/bounds.py): 2 s attached,
# ~550 samples (the workers burn ~40% of a CPU each): service_work 54%,
# service_poll 42%, svc-worker2's ~240 samples 96.7% in service_poll.  The
# tightest: service_poll under 20%, `bounds.py below 550 41.7 20` = 9.8e-28.

start_service

test_expect_success 'the service is up' '
	check_contains service.out "^service: ready pid=$SVC\$"
'

test_expect_success 'prof record -p PID -d 2 exits 0' '
	"$PROF" record -o svc.data -p $SVC -d 2 2>record.err;
	st=$?; cat record.err; test $st = 0
'

test_expect_success 'the target is still alive afterwards' '
	kill -0 $SVC && test "$(sed -n "s/^State:[[:space:]]*\([A-Z]\).*/\1/p" /proc/$SVC/status)" != T
'

test_expect_success 'report shows the service functions and threads' '
	"$PROF" report -i svc.data --format=json >svc.json &&
	"$PROF" report -i svc.data --format=folded >svc.folded &&
	$CHECK min-self svc.json "^service_work\$" 20 &&
	$CHECK min-self svc.json "^service_poll\$" 20 &&
	$CHECK thread svc.json svc-worker1 &&
	$CHECK comm-frame svc.folded svc-worker2 service_poll 80
'

test_expect_success 'the command meta says which pid was attached' '
	python3 -c "
import json, sys
c = json.load(open(\"svc.json\")).get(\"command\", \"\")
print(repr(c))
sys.exit(0 if \"$SVC\" in c else 1)
"
'

test_expect_success 'attach to a missing pid: exit 2, one line on stderr' '
	missing=$(cat /proc/sys/kernel/pid_max) &&
	"$PROF" record -o none.data -p $missing -d 1 >out 2>err;
	st=$?; cat err; test $st = 2 && test "$(wc -l <err)" = 1 &&
	grep -q "$missing" err
'

kill $SVC 2>/dev/null
wait $SVC 2>/dev/null
trap - EXIT
test_done

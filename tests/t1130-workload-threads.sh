#!/bin/bash
# t1130-workload-threads: main burns in main_work for 0.5 s, then starts
# threads "wl-alpha" (alpha_work) and "wl-beta" (beta_work).  Threads that
# appear after recording started must be profiled, named, and keep their
# own functions apart.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"

test_expect_success 'record threads for 2 s' '
	"$PROF" record -q -o thr.data -- "$WL/threads" 2 >run.out &&
	cat run.out
'

test_expect_success 'report folded and json' '
	"$PROF" report -i thr.data --format=folded >thr.folded &&
	"$PROF" report -i thr.data --format=json >thr.json
'

test_expect_success 'json lists threads wl-alpha and wl-beta with samples' '
	$CHECK thread thr.json wl-alpha &&
	$CHECK thread thr.json wl-beta
'

test_expect_success 'the late threads have the tids the workload printed' '
	alpha=$(sed -n "s/^threads: wl-alpha tid //p" run.out) &&
	beta=$(sed -n "s/^threads: wl-beta tid //p" run.out) &&
	python3 -c "
import json, sys
doc = json.load(open(\"thr.json\"))
tids = {t[\"tid\"]: t[\"comm\"] for p in doc[\"processes\"] for t in p[\"threads\"]}
print(tids)
sys.exit(0 if tids.get($alpha) == \"wl-alpha\" and tids.get($beta) == \"wl-beta\" else 1)
"
'

test_expect_success 'wl-alpha runs alpha_work, wl-beta runs beta_work' '
	$CHECK comm-frame thr.folded wl-alpha alpha_work 90 &&
	$CHECK comm-frame thr.folded wl-beta beta_work 90
'

test_expect_success 'the threads functions do not leak into each other' '
	! grep "^wl-alpha;.*beta_work" thr.folded &&
	! grep "^wl-beta;.*alpha_work" thr.folded
'

test_expect_success 'main_work ran on the main thread' '
	$CHECK min-self thr.json "^main_work\$" 5 &&
	$CHECK comm-frame thr.folded threads main_work 50
'

test_done

#!/bin/bash
# t1130-workload-threads: main burns in main_work for 0.5 s, then starts
# threads "wl-alpha" (alpha_work) and "wl-beta" (beta_work).  Threads that
# appear after recording started must be profiled, named, and keep their
# own functions apart.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"
# False-failure bounds (tests/README.md, tests/lib/bounds.py): ~2000
# samples, ~790 on wl-alpha (98% with alpha_work), ~710 on wl-beta (98.7%),
# ~500 on the main thread (97% in main_work, 14-24% of all).  Under 90%:
# `bounds.py below 788 98 90` = 5.8e-31, beta 4.3e-40; main_work under 5%
# of 2000 (truth 14.4%): 1.7e-42; under 50% of its thread: 7.8e-228.

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

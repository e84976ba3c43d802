#!/bin/bash
# t1190-demo-script: scripts/demo.sh (what `make demo` runs) records the
# demo workload for 1 s and prints the flat report, the tree with the
# pipeline's functions, and the next commands; exit 0.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events

test_expect_success 'scripts/demo.sh 1 runs' '
	PROF_DEMO_BIN="$PROF" PROF_DEMO_DATA="$TRASH/demo.data" "$TOP/scripts/demo.sh" 1 >demo.out 2>&1;
	st=$?; cat demo.out; test $st = 0 && test -s demo.data
'

test_expect_success 'it shows the flat report with the pipeline functions' '
	check_contains demo.out "^# prof report: " &&
	check_contains demo.out "Self%.*Total%" &&
	for f in sort_records hash_records generate_records; do
		check_contains demo.out " $f " || return 1
	done
'

test_expect_success 'it shows a caller-first tree through worker_main' '
	check_contains demo.out "^=== prof report.*--tree" &&
	sed -n "/--tree/,/=== next/p" demo.out | grep -q "worker_main"
'

test_expect_success 'it tells the user what to try next' '
	check_contains demo.out "^=== next" &&
	check_contains demo.out "prof record -- YOUR_COMMAND"
'

test_done

#!/bin/bash
# t1115-workload-libunwind: the same stack-shape truths as t1110/t1150, but
# recorded with --unwinder=libunwind: the 201-deep recursion is complete,
# stacks cross the dlopen'ed libwl_dl.so into main, and the stripped binary
# still unwinds through its .eh_frame to the libc start frames.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"
# False-failure bounds (tests/README.md, tests/lib/bounds.py): 1 s runs,
# ~1000 samples.  main->wl_dl_spin under 15% when it is 25.7%: `bounds.py
# below 1000 25.7 15` = 9.3e-17; main->wl_lib_spin (50.6%) under 30%:
# 2.8e-40.  Depth: every stack is judged (992 of 992 whole), no sampling.

test_expect_success 'record with --unwinder=libunwind' '
	"$PROF" record -q --unwinder=libunwind -o rec.data -- "$WL/recursion" 1 200 &&
	"$PROF" record -q --unwinder=libunwind -o sh.data -- "$WL/shlib" 1 &&
	"$PROF" record -q --unwinder=libunwind -o st.data -- "$WL/stripped" 1 &&
	for d in rec sh st; do
		"$PROF" report -i $d.data --format=folded >$d.folded || return 1
	done
'

test_expect_success 'the meta says libunwind' '
	"$PROF" report -i rec.data --format=json >rec.json &&
	"$PROF" report -i rec.data >rec.txt &&
	check_contains rec.txt "^# event: .*libunwind"
'

test_expect_success 'recursion: >= 95% of hot_leaf stacks are 201 deep and reach main' '
	$CHECK depth rec.folded hot_leaf recurse 201 95 &&
	$CHECK field rec.json complete_pct ge 90
'

test_expect_success 'shlib: both libraries are called from main' '
	$CHECK edge sh.folded main wl_lib_spin 30 &&
	$CHECK edge sh.folded main wl_dl_spin 15
'

test_expect_success 'stripped: stacks reach the libc start frames' '
	grep -E "(__libc_start_call_main|_start);.*stripped_exported_spin [0-9]+\$" st.folded
'

test_done

#!/bin/bash
# t1150-workload-stripped-shlib: (1) a strip --strip-all'ed binary: the run
# and report must not fail, the .dynsym-exported stripped_exported_spin keeps
# its name and the nameless hidden_spin shows as "stripped+0xOFFSET";
# (2) shlib: wl_lib_spin (libwl.so, DT_NEEDED via $ORIGIN rpath) and
# wl_dl_spin (libwl_dl.so, dlopen'ed) appear with their library as module.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"
# False-failure bounds (tests/README.md, tests/lib/bounds.py): ~2000
# samples a run.  The tightest: wl_dl_spin (30%) under 15%, `bounds.py
# below 2000 30 15` = 1.6e-55; stripped+0x... (31%) under 15%: 6.6e-62;
# the --dso report (99.5% wl_lib_spin of ~1000) under 90%: 2.6e-94.

test_expect_success 'the stripped workload really has no .symtab and no debug info' '
	! readelf -S "$WL/stripped" | grep -E "\.symtab|\.debug_"
'

test_expect_success 'record and report the stripped binary' '
	"$PROF" record -q -o st.data -- "$WL/stripped" 2 &&
	"$PROF" report -i st.data >st.txt &&
	"$PROF" report -i st.data --format=json >st.json &&
	"$PROF" report -i st.data --format=folded >st.folded &&
	cat st.txt
'

test_expect_success 'stripped: the .dynsym name stripped_exported_spin is used' '
	$CHECK min-self st.json "^stripped_exported_spin\$" 40
'

test_expect_success 'stripped: nameless code shows as stripped+0xOFFSET' '
	$CHECK min-self st.json "^stripped\\+0x[0-9a-fA-F]+\$" 15
'

test_expect_success 'stripped: stacks still reach libc start through .eh_frame' '
	grep -E "(__libc_start_call_main|_start);.*stripped_exported_spin [0-9]+\$" st.folded
'

test_expect_success 'record and report shlib' '
	"$PROF" record -q -o sh.data -- "$WL/shlib" 2 &&
	"$PROF" report -i sh.data --format=json >sh.json &&
	"$PROF" report -i sh.data --format=folded >sh.folded
'

test_expect_success 'wl_lib_spin (DT_NEEDED) is in libwl.so' '
	$CHECK module sh.json wl_lib_spin libwl.so &&
	$CHECK min-self sh.json "^wl_lib_spin\$" 30
'

test_expect_success 'wl_dl_spin (dlopen) is in libwl_dl.so' '
	$CHECK module sh.json wl_dl_spin libwl_dl.so &&
	$CHECK min-self sh.json "^wl_dl_spin\$" 15
'

test_expect_success 'main_spin is in the shlib executable' '
	$CHECK module sh.json main_spin shlib
'

test_expect_success 'library frames are called from main' '
	$CHECK edge sh.folded main wl_lib_spin 30 &&
	$CHECK edge sh.folded main wl_dl_spin 15
'

test_expect_success 'report --dso libwl.so keeps only library samples' '
	"$PROF" report -i sh.data --dso libwl.so --format=json >dso.json &&
	$CHECK min-self dso.json "^wl_lib_spin\$" 90
'

test_done

#!/bin/bash
# t1199-workload-asserts-selftest: the assertions of t1100-t1180
# (tests/workloads/wlcheck.py) on hand-made JSON and folded reports: each
# must pass on a correct report and FAIL on a wrong one, so a broken
# profiler cannot slip through.  Needs no perf events.
. "$(dirname "$0")/lib/test-lib.sh"
CHECK="python3 $TOP/tests/workloads/wlcheck.py"

cat >good.json <<'JSON'
{"schema": "prof-report/1", "file": "prof.data", "event": "cpu-clock",
 "frequency": 999, "metric": "cpu", "unit": "samples", "samples": 2000,
 "lost": 0, "truncated_stacks": 10, "complete_pct": 99.5, "duration_s": 2.0,
 "command": "-p 4242",
 "processes": [
  {"pid": 10, "comm": "threads", "samples": 1500,
   "threads": [{"tid": 10, "comm": "threads", "samples": 500},
               {"tid": 11, "comm": "wl-alpha", "samples": 1000}]},
  {"pid": 12, "comm": "split", "samples": 500,
   "threads": [{"tid": 12, "comm": "split", "samples": 500}]}],
 "functions": [
  {"name": "spin_a", "module": "/x/tests/workloads/bin/split", "file": "/x/split.c",
   "line": 14, "self": 1200, "total": 1200, "self_pct": 60.0, "total_pct": 60.0},
  {"name": "spin_b", "module": "/x/tests/workloads/bin/split", "file": "/x/split.c",
   "line": 15, "self": 560, "total": 560, "self_pct": 28.0, "total_pct": 28.0},
  {"name": "stripped+0x1284", "module": "/x/bin/stripped", "file": "", "line": 0,
   "self": 200, "total": 200, "self_pct": 10.0, "total_pct": 10.0},
  {"name": "stripped+0x1290", "module": "/x/bin/stripped", "file": "", "line": 0,
   "self": 40, "total": 40, "self_pct": 2.0, "total_pct": 2.0}]}
JSON

cat >good.folded <<'EOF2'
rec;_start;__libc_start_call_main;main;recurse;recurse;recurse;hot_leaf 97
rec;_start;__libc_start_call_main;main;recurse;recurse;hot_leaf 3
rec;_start;__libc_start_call_main;main;recurse;recurse;recurse;hot_leaf;asm_irq_k_[k] 1
wl-alpha;clone3;start_thread;alpha_thread;alpha_work 95
wl-alpha;clone3;start_thread;alpha_thread;__vdso_clock_gettime 5
inl;main;outer_caller;inline_hot_[i] 90
EOF2

# --- passes on the good inputs ---
test_expect_success 'share passes within tolerance' '$CHECK share good.json spin_a 60 7 && $CHECK share good.json spin_b 30 7'
test_expect_success 'min-self sums regex matches' '$CHECK min-self good.json "^stripped\\+0x[0-9a-f]+\$" 12'
test_expect_success 'module matches the basename' '$CHECK module good.json spin_a split'
test_expect_success 'field comparisons' '$CHECK field good.json complete_pct ge 90 && $CHECK field good.json samples gt 100'
test_expect_success 'thread by comm' '$CHECK thread good.json wl-alpha'
test_expect_success 'processes count' '$CHECK processes good.json 2'
test_expect_success 'file-line' '$CHECK file-line good.json spin_a'
test_expect_success 'depth (kernel frames ignored)' '$CHECK depth good.folded hot_leaf recurse 3 95'
test_expect_success 'edge' '$CHECK edge good.folded outer_caller "inline_hot_[i]" 30'
test_expect_success 'comm-frame' '$CHECK comm-frame good.folded wl-alpha alpha_work 90'

# --- fails on wrong inputs ---
test_expect_failure_exit 'share fails outside tolerance' 1 '$CHECK share good.json spin_b 40 7'
test_expect_failure_exit 'share fails for a missing function' 1 '$CHECK share good.json spin_c 10 7'
test_expect_failure_exit 'min-self fails below the minimum' 1 '$CHECK min-self good.json "^stripped\\+0x" 15'
test_expect_failure_exit 'module fails for the wrong module' 1 '$CHECK module good.json spin_a libwl.so'
test_expect_failure_exit 'module does not match a mere suffix' 1 '$CHECK module good.json spin_a lit'
test_expect_failure_exit 'field fails' 1 '$CHECK field good.json complete_pct ge 99.9'
test_expect_failure_exit 'field fails for a missing key' 1 '$CHECK field good.json nope ge 1'
test_expect_failure_exit 'thread fails for an unknown name' 1 '$CHECK thread good.json wl-beta'
test_expect_failure_exit 'processes fails' 1 '$CHECK processes good.json 3'
test_expect_failure_exit 'file-line fails without a file' 1 '$CHECK file-line good.json stripped+0x1284'
test_expect_failure_exit 'depth fails when the chain is short' 1 '$CHECK depth good.folded hot_leaf recurse 3 98'
test_expect_failure_exit 'depth fails at the wrong depth' 1 '$CHECK depth good.folded hot_leaf recurse 4 1'
test_expect_failure_exit 'edge fails when callee is not directly inner' 1 '$CHECK edge good.folded main "inline_hot_[i]" 1'
test_expect_failure_exit 'comm-frame fails for the other thread function' 1 '$CHECK comm-frame good.folded wl-alpha beta_work 1'

test_expect_success 'depth needs main and a libc start frame' '
	echo "rec;recurse;recurse;recurse;hot_leaf 10" >nomain.folded &&
	echo "rec;main;recurse;recurse;recurse;hot_leaf 10" >nostart.folded &&
	! $CHECK depth nomain.folded hot_leaf recurse 3 1 &&
	! $CHECK depth nostart.folded hot_leaf recurse 3 1
'

test_expect_failure_exit 'wrong schema fails' 1 '
	sed "s#prof-report/1#prof-report/0#" good.json >v0.json && $CHECK field v0.json samples gt 1
'
test_expect_failure_exit 'malformed folded input fails' 1 '
	printf "a;b;c\n" >bad.folded && $CHECK edge bad.folded a b 1
'
test_expect_failure_exit 'empty folded input fails' 1 ': >empty.folded && $CHECK edge empty.folded a b 0'
test_expect_failure_exit 'truncated json fails' 1 'head -c 100 good.json >cut.json && $CHECK field cut.json samples gt 1'
test_expect_failure_exit 'usage errors exit 2' 2 '$CHECK share good.json spin_a'

# tests/lib/bounds.py computes the false-failure chances stated beside the
# statistical assertions (tests/README.md): checked against values known
# in closed form, and its exit status on bad usage.
test_expect_success 'bounds.py: binomial, Poisson, normal and Mann-Whitney tails' '
	python3 "$TOP/tests/lib/bounds.py" --selftest &&
	python3 "$TOP/tests/lib/bounds.py" share 2000 60 7 >b.out && check_contains b.out "^1.4e-10 (1 in " &&
	python3 "$TOP/tests/lib/bounds.py" sum 1e-5 2e-5 >s.out && check_contains s.out "^3e-05 (1 in 3.33e+04)"
'
test_expect_failure_exit 'bounds.py: usage errors exit 2' 2 'python3 "$TOP/tests/lib/bounds.py" share 2000 60'

test_done

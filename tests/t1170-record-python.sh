#!/bin/bash
# t1170-record-python: profile a pure-Python loop in CPython 3.11 whose
# libpython has full DWARF: the interpreter loop _PyEval_EvalFrameDefault
# must appear with libpython as module and a ceval.c file:line when the
# Python frames are off (--no-python; t1171 tests them).
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"
# False-failure bounds (tests/README.md, tests/lib/bounds.py): the loop
# gets ~370 samples; _PyEval_EvalFrameDefault has 12.6% self (25% in perf
# on an idle machine): under 5%, `bounds.py below 370 12.6 5` = 4.4e-7.
# Stacks through it: 97%, under 80%: 4.5e-39.

# The pyenv shim is a shell script: profile the real interpreter.
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -x "$PY" ] || skip_all "python3 not found"
ldd "$PY" | grep -q libpython || skip_all "$PY does not use a shared libpython"

PYCODE='
def work(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s

print(work(8_000_000))
'

test_expect_success 'record --no-python python3 -c "<pure-Python loop>"' '
	"$PROF" record -q --no-python -o py.data -- "$PY" -c "$PYCODE" >py.out &&
	check_contains py.out "^15999998\$"
'

test_expect_success 'report json and folded' '
	"$PROF" report -i py.data --format=json >py.json &&
	"$PROF" report -i py.data --format=folded >py.folded
'

test_expect_success '_PyEval_EvalFrameDefault is in libpython with file:line' '
	$CHECK module py.json _PyEval_EvalFrameDefault libpython3.11.so.1.0 &&
	$CHECK min-self py.json "^_PyEval_EvalFrameDefault\$" 5 &&
	$CHECK file-line py.json _PyEval_EvalFrameDefault &&
	python3 -c "
import json, sys
fs = [f for f in json.load(open(\"py.json\"))[\"functions\"] if f[\"name\"] == \"_PyEval_EvalFrameDefault\"]
print(fs)
sys.exit(0 if any(f[\"file\"].endswith(\"ceval.c\") for f in fs) else 1)
"
'

test_expect_success 'most stacks pass through the interpreter loop' '
	python3 -c "
import sys
tot = hit = 0
for line in open(\"py.folded\"):
    stack, n = line.rsplit(\" \", 1)
    tot += int(n)
    hit += int(n) if \";_PyEval_EvalFrameDefault\" in stack else 0
print(hit, tot)
sys.exit(0 if tot and hit >= 0.8 * tot else 1)
"
'

test_done

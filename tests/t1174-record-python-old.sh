#!/bin/bash
# t1174-record-python-old: t1171's program under CPython 3.8, 3.9 and 3.10
# (pyenv's, or python3.N on PATH), whose frames are PyFrameObjects chained
# by f_back, each run by its own _PyEval_EvalFrameDefault, whose thread
# states hold the pthread_t rather than the tid, and whose lines come from
# co_lnotab (3.8, 3.9) or 3.10's co_linetable: the shares, zlib above
# compress and the 16 recursive frames as in t1171, with the header's
# version.
#
# False failures: as t1171, 2.1e-5 a run (tests/lib/bounds.py at 3,800
# samples, 1.5 of the 5-point margin for bias), 6.3e-5 for the three.
# At load 15-20, with 20 rounds, the largest difference between prof's
# share and the program's was 0.4 points.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
. "$TOP/tests/lib/pyversions.sh"

run_version 8
run_version 9
run_version 10
test_done

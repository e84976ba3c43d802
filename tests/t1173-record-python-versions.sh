#!/bin/bash
# t1173-record-python-versions: t1171's program under the other CPython
# versions this machine has (pyenv's 3.12 and 3.13, or python3.12 /
# python3.13 on PATH): 3.12's frames are found by the layout table and end
# their activations with shim frames, 3.13's offsets come from the
# interpreter's own _Py_DebugOffsets; the shares, zlib above compress and
# the 16 recursive frames are checked as in t1171
# (tests/workloads/pysplit_check.py), with the header's version.
#
# False failures: as t1171, 2.1e-5 a run (tests/lib/bounds.py at 3,800
# samples, 1.5 of the 5-point margin for bias), 4.2e-5 for both versions.
# At load 15-18, with 40 rounds, the largest difference between prof's
# share and the program's was 0.2 points on either version.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
. "$TOP/tests/lib/pyversions.sh"

run_version 12
run_version 13
test_done

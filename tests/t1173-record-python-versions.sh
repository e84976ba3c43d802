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
CHECK="python3 $TOP/tests/workloads/pysplit_check.py"
APP="$TOP/tests/workloads/pysplit.py"

# pyenv's versions directory: where python3's own interpreter lives (the
# tests run with their own HOME), or PYENV_ROOT's
PYENV_VERSIONS=$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null)
case "$PYENV_VERSIONS" in */versions/*) PYENV_VERSIONS=${PYENV_VERSIONS%/*} ;; *) PYENV_VERSIONS=${PYENV_ROOT:-/nonexistent}/versions ;; esac

# find_python MINOR: an interpreter of 3.MINOR that runs (pyenv's shim of
# a version not selected does not): on PATH, else pyenv's newest
find_python() {
	local p
	for p in $(command -v python3.$1) $(ls -d "$PYENV_VERSIONS"/3.$1.*/bin/python3.$1 2>/dev/null | sort -V -r); do
		"$p" -c 'import zlib, threading' 2>/dev/null && { echo "$p"; return; }
	done
}

run_version() {	# minor
	local m=$1 py
	py=$(find_python $m)
	if [ -z "$py" ]; then
		test_skip "3.$m: record, shares, zlib, recursion" "no CPython 3.$m here (PATH or pyenv)"
		return
	fi
	test_expect_success "3.$m: record $py pysplit.py 100" '
		"$PROF" record -q -o v$m.data -- "$py" "$APP" 100 >v$m.json &&
		pid=$(python3 -c "import json; print(json.load(open(\"v$m.json\"))[\"pid\"])") &&
		"$PROF" report -i v$m.data --format=folded --tid $pid >v$m.folded &&
		"$PROF" report -i v$m.data >v$m.txt
	'
	test_expect_success "3.$m: shares, zlib above compress, 16 recursive frames" '
		$CHECK v$m.folded v$m.json
	'
	test_expect_success "3.$m: the header names the version" '
		check_contains v$m.txt "^# python: CPython 3\.$m frames in [0-9]* of [0-9]* stacks"
	'
}

run_version 12
run_version 13
test_done

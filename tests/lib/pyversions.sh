# pyversions.sh - for the tests that run tests/workloads/pysplit.py under
# each CPython version the machine has (t1173, t1174; sourced after
# test-lib.sh): find_python MINOR and run_version MINOR (record, the
# checker tests/workloads/pysplit_check.py, the header's version).
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


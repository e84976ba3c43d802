#!/bin/bash
# t1172-record-python-attach: `prof record -p PID` attached to a running
# CPython 3.11 (pyenv's and Debian's builds) that was started without
# prof: its threads are found through PyThreadState and matched to the
# kernel's tids, and the recording has the program's CPU split, zlib above
# compress and the 16 recursive frames (tests/workloads/pysplit_check.py),
# the split being the program's own thread time during the recording.
# The interpreter keeps running afterwards.
#
# False failures: the recording lasts until the program has done 110
# rounds (not a time), about 4,000 main-thread samples in the three
# functions (the checker fails below 3,800); the margin argument of t1171
# applies: 4.2e-5 for the 6 shares (tests/lib/bounds.py).
# Rounds done between the snapshot and the start of sampling have the same
# split as the others, so they do not bias the comparison.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/pysplit_check.py"
APP="$TOP/tests/workloads/pysplit.py"

PYENV=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
case "$PYENV" in /usr/bin/*) PYENV= ;; esac

rounds() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rounds"])' "$1" 2>/dev/null || echo 0; }

TARGET= REC=
trap 'kill $TARGET $REC 2>/dev/null' EXIT

# wait_rounds FILE N: until the program's state FILE says N rounds, or it died
wait_rounds() {
	while [ "$(rounds "$1")" -lt "$2" ]; do
		kill -0 $TARGET 2>/dev/null || return 1
		sleep 0.2
	done
}

run_build() {	# name interpreter
	local name=$1 py=$2
	if [ -z "$py" ] || ! "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
		test_skip "$name: attach" "no CPython 3.11 at '${py:-pyenv}'"
		return
	fi
	"$py" "$APP" --forever $name.state &
	TARGET=$!
	test_expect_success "$name: prof record -p PID until 110 more rounds" '
		wait_rounds $name.state 1 && cp $name.state $name.before &&
		{ "$PROF" record -q -o $name.data -p $TARGET & REC=$!; } &&
		wait_recording $REC &&
		wait_rounds $name.state $(( $(rounds $name.before) + 110 )) &&
		kill -INT $REC && wait $REC && REC= &&
		cp $name.state $name.after
	'
	test_expect_success "$name: the interpreter is still running" '
		r=$(rounds $name.after) && wait_rounds $name.state $((r + 2))
	'
	kill $TARGET 2>/dev/null
	wait $TARGET 2>/dev/null
	test_expect_success "$name: shares, zlib above compress, 16 recursive frames" '
		"$PROF" report -i $name.data --format=folded --tid $TARGET >$name.folded &&
		$CHECK $name.folded $name.after $name.before
	'
}

run_build pyenv "$PYENV"
run_build debian /usr/bin/python3.11

test_done

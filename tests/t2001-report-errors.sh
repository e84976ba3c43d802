#!/bin/bash
# t2001-report-errors: `prof report` on bad input says what failed in one
# line and exits 2; an interrupted recording warns once and still reports;
# --help prints usage.
. "$(dirname "$0")/lib/test-lib.sh"

GEN="$BUILD_DIR/tests/unit/output.t"
[ -x "$GEN" ] || skip_all "build/tests/unit/output.t not built (make unit)"
"$GEN" --write fx.data || skip_all "cannot write the fixture"

test_expect_success '--help prints usage to stdout' '
	"$PROF" report --help >out 2>err && check_contains out "^usage: prof report" &&
	test ! -s err
'

test_expect_failure_exit 'missing file exits 2' 2 '"$PROF" report -i nope.data'
test_expect_success 'missing file message' '
	! "$PROF" report -i nope.data 2>err &&
	echo "prof report: error: cannot open '\''nope.data'\'': No such file or directory (record one with '\''prof record -- CMD'\'')" >want &&
	cmp want err
'

test_expect_failure_exit 'not a prof.data file exits 2' 2 '
	echo "hello world, not a profile" >junk.data && "$PROF" report -i junk.data'
test_expect_success 'not a prof.data file: one line' '
	! "$PROF" report -i junk.data >out 2>err &&
	test $(wc -l <err) = 1 && check_contains err "not a prof.data file" && test ! -s out
'

test_expect_failure_exit 'corrupt records exit 2' 2 '
	head -c 200 fx.data >bad.data && printf "\004\002\000\000" >>bad.data &&
	tail -c +201 fx.data >>bad.data && "$PROF" report -i bad.data'

test_expect_success 'truncated file: one warning, report of what is there, exit 0' '
	size=$(stat -c %s fx.data) &&
	head -c $((size * 2 / 3)) fx.data >cut.data &&
	"$PROF" report -i cut.data >out 2>err &&
	test $(wc -l <err) = 1 &&
	check_contains err "^prof report: warning: cut.data is truncated (recording was interrupted); showing the [0-9]* samples before the cut$" &&
	check_contains out "^# samples: "
'

test_expect_failure_exit 'cut before its first sample: exit 2' 2 '
	head -c 12 fx.data >early.data && "$PROF" report -i early.data'
test_expect_success 'cut before its first sample: one line saying so, no report' '
	! "$PROF" report -i early.data >out 2>err && cat err &&
	test $(wc -l <err) = 1 && check_contains err "holds no samples" && test ! -s out
'

# A finished recording that took no sample (header, then an END record of
# zeros) is valid: it reports 0 samples, no error.
test_expect_success 'finished recording of 0 samples: exit 0, says 0 samples' '
	printf "PROFDATA\001\012\006\000\000\000\000\000\000" >zero.data &&
	"$PROF" report -i zero.data >out 2>err && cat out err &&
	check_contains out "^# samples: 0," && test ! -s err
'
if "$PROF" record -q -F 1 -o real0.data -- true >/dev/null 2>&1; then
	test_expect_success 'a real 0-sample recording (1 Hz, true): exit 0, 0 samples' '
		"$PROF" report -i real0.data >out 2>err && cat out err &&
		check_contains out "^# samples: 0," && test ! -s err
	'
else
	test_skip 'a real 0-sample recording' 'perf events unusable here'
fi

test_expect_success 'file cut at every 7th byte never crashes' '
	size=$(stat -c %s fx.data) && i=0 &&
	while [ $i -lt $size ]; do
		head -c $i fx.data >c.data
		"$PROF" report --format=json -i c.data >/dev/null 2>&1
		st=$?
		[ $st = 0 ] || [ $st = 2 ] || { echo "cut at $i: exit $st"; exit 1; }
		i=$((i + 7))
	done
'

test_expect_failure_exit 'bad --metric exits 2' 2 '"$PROF" report --metric gpu fx.data'
test_expect_failure_exit 'bad --format exits 2' 2 '"$PROF" report --format=xml fx.data'
test_expect_failure_exit 'unknown option exits 2' 2 '"$PROF" report --frobnicate fx.data'
test_expect_failure_exit 'bad --percent-limit exits 2' 2 '"$PROF" report --percent-limit x fx.data'
test_expect_success 'bad option message names the option' '
	! "$PROF" report --sort sideways fx.data 2>err &&
	check_contains err "^prof report: error: unknown --sort .sideways. (want "
'

test_expect_success 'no progress noise when stderr is not a tty' '
	"$PROF" report fx.data >/dev/null 2>err && test ! -s err
'

test_expect_failure_exit 'unwritable -o exits 2' 2 '"$PROF" report -o /nonexistent/dir/x fx.data'

test_done

#!/bin/bash
# t2010-report-diff-open-perfdata: `prof report --diff BASE HEAD` in text,
# folded and flamegraph form; `--open`; perf.data input through report;
# output files never written through a planted symlink.
# report --diff draws two recordings side by side and gives no verdict:
# the only sampled claim is that spin_a (60% of ~1000 samples) has a row,
# absent with P = 0.4^1000 (tests/README.md).
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events

test_expect_success 'record base and head of the split workload' '
	"$PROF" record -q -o base.data -- "$WL/split" 1 >/dev/null &&
	"$PROF" record -q -o head.data -- "$WL/split" 1 >/dev/null
'

test_expect_success 'diff text: one row per function, joined across recordings' '
	"$PROF" report --diff base.data head.data >diff.txt &&
	check_contains diff.txt "largest movers" &&
	test $(grep -c " spin_a " diff.txt) = 1 &&
	check_not_contains diff.txt "spin_a .*(new)"
'
# A function with no self time on either side (main, as a rule) has no
# row: it was once printed as "0 0 main (new)".
test_expect_success 'diff text: no row without self time on either side' '
	awk "\$4 == \"0\" && \$5 == \"0\"" diff.txt >zero.txt && cat zero.txt &&
	test ! -s zero.txt
'

test_expect_success 'diff folded: two counts per line, sums equal each side' '
	"$PROF" report --diff base.data head.data --format=folded >diff.folded &&
	"$PROF" report -i base.data --format=folded >base.folded &&
	"$PROF" report -i head.data --format=folded >head.folded &&
	base=$(folded_sum base.folded) head=$(folded_sum head.folded) &&
	awk -v b=$base -v h=$head "{sb+=\$(NF-1); sh+=\$NF} END {exit !(sb==b && sh==h)}" diff.folded
'

test_expect_success 'diff flamegraph: an SVG with both sides' '
	"$PROF" report --diff base.data head.data --format=flamegraph -o diff.svg &&
	check_contains diff.svg "<svg" && check_contains diff.svg spin_a
'

test_expect_success 'diff with json is refused: exit 2, one line' '
	"$PROF" report --diff base.data head.data --format=json 2>err
	test $? = 2 && test $(wc -l <err) = 1
'

test_expect_success '--open writes an HTML report to a temp file and prints its path' '
	path=$("$PROF" report -i head.data --open) &&
	test -f "$path" && check_contains "$path" "<html" && check_contains "$path" spin_a &&
	rm -rf "$(dirname "$path")"
'

test_expect_success 'output never goes through a planted symlink' '
	echo precious >victim &&
	ln -s victim out.txt &&
	test_must_fail_2() { "$@"; test $? = 2; } &&
	test_must_fail_2 "$PROF" report -i head.data -o out.txt 2>err &&
	test "$(cat victim)" = precious && test $(wc -l <err) = 1
'

test_expect_success 'perf.data recorded by perf is reported by prof report' '
	if ! perf record -q -e cpu-clock -F 999 -g -o perf.data -- "$WL/split" 1 >/dev/null 2>&1; then
		echo "perf record unavailable"; exit 0
	fi
	"$PROF" report -i perf.data --format=json -o perf.json &&
	python3 -c "import json; d=json.load(open(\"perf.json\")); n=[f[\"name\"] for f in d[\"functions\"]]; assert \"spin_a\" in n, n[:10]"
'

test_done

#!/bin/bash
# t6003-crosscheck-server: the production-like recipe end to end.
# scripts/codspeed-crosscheck.sh records a long-running server
# (tests/eval/server.c) under a load generator (1500 requests at 1000/s)
# with `prof record -p PID -d SECS`, 10 times per build, for a base and a head
# build of different names and directories (the head does 50% more work in
# lookup()), runs both builds' benchmark under callgrind with CodSpeed's
# flags, and crosschecks: lookup is confirmed, render_reply is not an
# alarm, >= 90% of the callgrind functions are joined.
. "$(dirname "$0")/lib/test-lib.sh"

command -v valgrind >/dev/null || skip_all "valgrind not installed"
require_perf_events

mkdir -p base/src base/target/deps head/src head/bin
cp "$TOP/tests/eval/server.c" base/src/ && cp "$TOP/tests/eval/server.c" head/src/
(cd base && ${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -g -o target/deps/server-3f9a1c2b src/server.c &&
	ln -s target/deps/server-3f9a1c2b srv) &&
(cd head && ${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -g -DLOOKUP_EXTRA=50 -o bin/server-head src/server.c &&
	ln -s bin/server-head srv) || skip_all "cannot compile tests/eval/server.c"

# 10 runs a side, the recipe's advice: with 5, one slow head run (a lookup
# count 2.4 sd low at a 10% CV) beside a fast base run lifts Mann-Whitney's
# p past what Benjamini-Hochberg lets through: `bounds.py moved 48 0.10 5
# 3 4` = 6% missed, 8 runs 2.1e-4, 10 runs 2e-6 (tests/README.md).  It
# costs ~15 s more here.
test_expect_success 'recipe: 10 attached recordings per build under load, then crosscheck' '
	PROF="$PROF" "$TOP/scripts/codspeed-crosscheck.sh" -D base -C head -B true -n 10 -d 20 \
		-o out -S "./srv serve \"\$PROF_OUT/\$PROF_SIDE.port\"" \
		-L "./srv load \$(cat \"\$PROF_OUT/\$PROF_SIDE.port\") 1000 1.5" \
		-- ./srv bench 300 >report.md 2>log; s=$?; cat report.md; tail -3 log
	test $s = 1 && test $(ls out/base.*.data out/head.*.data | wc -l) = 20
'
test_expect_success 'the recordings are of the attached servers, under load' '
	"$PROF" report out/base.1.data >r.txt && grep -q "lookup .*server-3f9a1c2b" r.txt &&
	"$PROF" report out/head.1.data >r.txt && grep -q "lookup .*server-head" r.txt &&
	test $(grep -c "^load: 1500 requests" out/base.load.log) = 10 &&
	grep -q "^load: [0-9]* requests" out/base.load.log
'
# render_reply has ~45 samples a run: a -17.6% move at p 0.047 (CI -29.6
# to -3.5%) came in 1 of 6 runs here, a chance alarm at the default alpha
# and 3% minimum effect.  False-failure bounds (tests/README.md,
# tests/lib/bounds.py): counts of a server's functions under the load
# generator vary by a CV of 4-7% a run (lookup, ~95 samples) and 7-14%
# (render_reply, ~45; 2026-12-03, load 17-19).  render_reply's Ir does not
# change, so it is never confirmed or instructions-only; its time moved
# -9.8% (5+5 runs) and +16.2% (10+10, CI +2 to +32%): the head build's
# other layout may really move it.  Time-only needs the minimum effect:
# at 60%, with a true move of up to +16% and a CV of 15%, a 60% move is
# a 38% excess: `bounds.py ratio 0.15 10 38` = 7.9e-7 (lookup's +43..48%
# is not asked to clear it).  lookup's planted +50% (Ir exact,
# time +43% to +48%) missed at the defaults, CV 10%, its q at most 4 x
# its p: `bounds.py moved 43 0.10 10 3 4` = 2.9e-5 (10^6 draws; at +48%
# 2e-6).  The join counts
# functions expected to have >= 20 samples a run: none in 20 runs, P <
# e^-400.
test_expect_success 'lookup is confirmed, render_reply no alarm, >= 90% joined' '
	"$PROF" crosscheck --format=json --min-effect 60% \
		--callgrind-base out/base.callgrind --callgrind-head out/head.callgrind \
		--base out/base.*.data --head out/head.*.data >e60.json
	python3 - out/crosscheck.json e60.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	def by_name(doc):	# gcc may add .constprop.0
	    return {r["function"].split(".")[0]: r for r in doc["functions"]}
	rows, rows60 = by_name(d), by_name(json.load(open(sys.argv[2])))
	print(rows["lookup"])
	assert rows["lookup"]["verdict"] == "confirmed", rows["lookup"]
	assert abs(rows["lookup"]["ir"]["change_pct"] - 50) < 2, rows["lookup"]
	print(rows["render_reply"])
	assert rows60["render_reply"]["verdict"] in ("no-change", "inconclusive"), rows60["render_reply"]
	print(d["join"])
	assert d["join"][0]["matched_pct"] >= 90, d["join"]
	# grouped per benchmark: the one part of the harness
	b = d["benchmarks"]
	assert [x["benchmark"] for x in b] == ["server.c::bench_requests"], b
	assert any(r["function"] == "lookup" and r["verdict"] == "confirmed" for r in b[0]["functions"]), b
	EOF
'
test_expect_success '--benchmark restricts the callgrind side to that part' '
	"$PROF" crosscheck --format=json --benchmark server.c::bench_requests \
		--callgrind-base out/base.callgrind --callgrind-head out/head.callgrind \
		--base out/base.*.data --head out/head.*.data >b.json; test $? = 1 &&
	python3 -c "
import json; d = json.load(open(\"b.json\"))
assert \"benchmarks\" not in d
assert [r for r in d[\"functions\"] if r[\"function\"] == \"lookup\"][0][\"verdict\"] == \"confirmed\"
"
'
test_done

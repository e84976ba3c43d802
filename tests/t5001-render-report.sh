#!/bin/bash
# t5001-render-report.sh - the picture/interop formats end to end through
# `prof report --format=...` on a real recording: callgrind_annotate's
# PROGRAM TOTALS and the speedscope samples equal the samples of the json
# report, the pprof decodes, the SVG/HTML carry the workload's functions.
# Skips until report.c offers these formats, and when perf events are refused.
. "$(dirname "$0")/lib/test-lib.sh"

"$PROF" report --help 2>&1 | grep -q callgrind ||
	skip_all "prof report has no --format=callgrind yet (renderers not wired in src/cmd/report.c)"
require_perf_events
command -v gcc >/dev/null || skip_all "gcc missing"

cat >spin.c <<-\EOF
#include <stdlib.h>
__attribute__((noinline)) double spin_inner(double x) { for (int i = 0; i < 200000; i++) x = x * 1.0000001 + 1e-9; return x; }
__attribute__((noinline)) double spin_outer(int n) { double s = 0; for (int i = 0; i < n; i++) s += spin_inner(i); return s; }
int main(int c, char **v) { return spin_outer(c > 1 ? atoi(v[1]) : 3000) < 0; }
EOF

test_expect_success 'record a small workload' '
	gcc -O1 -g -o spin spin.c &&
	"$PROF" record -q -o prof.data -- ./spin 3000 &&
	"$PROF" report -i prof.data --format=json -o report.json &&
	python3 -c "import json; d=json.load(open(\"report.json\")); assert d[\"samples\"] > 50, d[\"samples\"]; print(sum(f[\"self\"] for f in d[\"functions\"]))" >total.txt &&
	test -s total.txt
'

test_expect_success 'callgrind export: callgrind_annotate totals = report samples' '
	"$PROF" report -i prof.data --format=callgrind -o callgrind.out.prof &&
	total=$(cat total.txt) &&
	callgrind_annotate callgrind.out.prof >annotate.txt &&
	grep "PROGRAM TOTALS" annotate.txt | tr -d , | grep -E "^ *$total " &&
	grep -q spin_inner annotate.txt
'

test_expect_success 'speedscope: one sample per report sample, weights in ns' '
	"$PROF" report -i prof.data --format=speedscope -o prof.speedscope.json &&
	python3 -c "
import json; d = json.load(open(\"prof.speedscope.json\"))
t = sum(len(p[\"samples\"]) for p in d[\"profiles\"])
assert t == int(open(\"total.txt\").read()), t
assert all(p[\"unit\"] == \"nanoseconds\" for p in d[\"profiles\"])
assert any(f[\"name\"] == \"spin_inner\" for f in d[\"shared\"][\"frames\"])"
'

test_expect_success 'pprof decodes' '
	"$PROF" report -i prof.data --format=pprof -o prof.pb.gz &&
	gunzip -c prof.pb.gz >prof.pb &&
	{ ! command -v protoc >/dev/null || protoc --decode_raw <prof.pb >/dev/null; } &&
	grep -q spin_inner prof.pb
'

test_expect_success 'flame graph and html name the workload functions' '
	"$PROF" report -i prof.data --format=flamegraph -o flame.svg &&
	"$PROF" report -i prof.data --format=html -o report.html &&
	grep -q "data-n=\"spin_inner\"" flame.svg &&
	grep -q "\"spin_inner\"" report.html
'

test_done

#!/bin/bash
# t5221-html-heap: the HTML report of a heap recording, driven in headless
# Chromium (tests/node/html-app-drive.js heap) on the planted heap
# workload run with its phases (tests/workloads/heap.c: leak_planted, then
# temp_planted and peak_planted, then young_planted, each phase apart and
# its boundary time printed).  The process has an allocation rate track
# with bars; a range dragged over a phase leaves only that phase's
# allocations in the alloc-bytes flame graph, as a range does for CPU; with
# live-bytes, a range is the snapshot diff (live at its end minus live at
# its start, by stack).  The leak view (an age typed into the page) and
# the snapshot diff show the same numbers as `prof report --min-age`,
# `--since` and `--at` with the flags the page gives for them: the same
# file seen two ways, compared exactly, per function and in total.
#
# False-failure chance: which allocation falls in a range is not sampled
# (each boundary time is taken between two phases, 40 ms of sleep apart,
# so a range dragged between boundaries holds exactly its phases' samples).
# What is sampled is whether a phase has samples at all: at --heap-rate
# 128 young_planted's 256 blocks of 4 KiB are each sampled with
# p = 1 - exp(-32), peak_planted's 1 MiB ones with certainty, and
# temp_planted's 20000 64-byte blocks with p = 0.393: none of them can go
# unsampled (chance (1 - 0.393)^20000, below 1e-4000).  The leak view and the
# snapshot diffs are compared with the report exactly (one file, two
# readers: no sampling between them); their other checks are sampled the
# same way: leak_planted's 4096 blocks of 1 KiB are each sampled with
# p = 1 - exp(-8), so the leak view holding none has chance (3.4e-4)^4096;
# young_planted is allocated 20 ms after the last mark, and an age from
# that mark (to the ms, then rounded up to whole buckets by the page)
# cuts at most 0.5 ms after it, so the leak view never holds it; and
# peak_planted's 1 MiB blocks have p = 1 in double precision (weight 1,
# hence +64 MiB exactly).
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/lib/node-tools.sh"
require_perf_events
[ -r /sys/bus/event_source/devices/uprobe/type ] || skip_all "no uprobe PMU in this kernel"
[ -x /usr/bin/chromium ] || skip_all "chromium is not installed (/usr/bin/chromium)"
require_node_tools
drive_start || skip_all "cannot start tests/node/html-app-drive.js serve"

test_expect_success 'record the phases with --heap and write the HTML report' '
	"$PROF" record -q --heap --heap-rate 128 -o h.data -- "$WL/heap" 20000 - phases >run.out &&
	cat run.out &&
	"$PROF" report -i h.data --format=html -o h.html
'
t() { sed -n "s/^phase $1 t=\([0-9]*\)/\1/p" run.out; }

test_expect_success 'drive the report in Chromium (no page errors)' '
	drive heap h.html "$(t after_leak)" "$(t mid_peak)" "$(t after_peak)" >drive.json &&
	q drive.json "d[\"errors\"] == []"
'

test_expect_success 'the process has an allocation rate track with bars' '
	q drive.json "[l[\"label\"] for l in d[\"lanes\"] if l[\"rate\"]] == [\"  allocation rate\"]" &&
	q drive.json "d[\"rateBars\"] > 0"
'

test_expect_success 'alloc-bytes: the whole recording has every planted function' '
	q drive.json "all(f in d[\"all\"][\"flame\"] for f in [\"leak_planted\", \"temp_planted\", \"peak_planted\", \"young_planted\"])"
'

test_expect_success 'a range over the middle phases: only their allocations' '
	q drive.json "\"temp_planted\" in d[\"middle\"][\"flame\"] and \"peak_planted\" in d[\"middle\"][\"flame\"]" &&
	q drive.json "\"leak_planted\" not in d[\"middle\"][\"flame\"] and \"young_planted\" not in d[\"middle\"][\"flame\"]" &&
	q drive.json "0 < d[\"middle\"][\"total\"] < d[\"all\"][\"total\"]"
'

test_expect_success 'a range after the peak: young_planted alone allocated; live-bytes: the heap at its end' '
	q drive.json "[f for f in d[\"end\"][\"flame\"] if f.endswith(\"_planted\")] == [\"young_planted\"]" &&
	q drive.json "sorted(f for f in d[\"liveEnd\"][\"flame\"] if f.endswith(\"_planted\")) == [\"leak_planted\", \"young_planted\"]"
'

# The page's view against `prof report CMD --format=folded` (CMD: the flags
# the page gives): each function's self weight (the folded stacks summed by
# their leaf) and the total, exactly.  A view in d[KEY]; DIFF=1 for a
# snapshot diff (base and head, against the page's table of changes).
check_view() {
	cmd=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]][\"cmd\"])" views.json "$1") &&
	echo "prof report $cmd" &&
	"$PROF" report -i h.data $cmd --format=folded >"$1.folded" &&
	python3 - views.json "$1" "$1.folded" "${2:-0}" <<-\EOF
	import collections, json, re, sys
	v = json.load(open(sys.argv[1]))[sys.argv[2]]
	diff = sys.argv[4] == "1"
	base, head = collections.Counter(), collections.Counter()
	for line in open(sys.argv[3]):
	    stack, *vals = line.split()
	    leaf = re.sub(r"_\[[a-z]\]$", "", stack.split(";")[-1])
	    base[leaf] += int(vals[0]) if diff else 0
	    head[leaf] += int(vals[-1])
	if diff:
	    got = {r[0]: (r[1], r[2], r[3]) for r in v["diff"]}
	    want = {f: (base[f], head[f], head[f] - base[f]) for f in set(base) | set(head) if base[f] or head[f]}
	    totals = (v["baseTotal"], v["total"]) == (sum(base.values()), sum(head.values()))
	else:
	    got = {f: w for f, w in v["self"].items() if w}
	    want = {f: w for f, w in head.items() if w}
	    totals = v["total"] == v["flameTotal"] == sum(head.values())
	print("page:  ", sorted(got.items()), v["baseTotal"], v["total"])
	print("report:", sorted(want.items()), sum(base.values()), sum(head.values()))
	sys.exit(0 if got == want and totals else 1)
	EOF
}

test_expect_success 'drive the leak view and the snapshot diff (no page errors)' '
	"$PROF" report -i h.data --format=json >h.json &&
	age=$(python3 -c "import json,sys; print(\"%.3f\" % ((json.load(open(\"h.json\"))[\"end_ns\"] - int(sys.argv[1])) / 1e9))" "$(t after_peak)") &&
	drive heapviews h.html "$age" "$(t after_leak)" "$(t mid_peak)" >views.json &&
	q views.json "d[\"errors\"] == [] and d[\"ageShown\"]"
'

test_expect_success 'leak view older than the last phase: leak_planted, not young_planted, as report --min-age' '
	q views.json "d[\"leak\"][\"mode\"] == \"leak\" and d[\"leak\"][\"metric\"] == \"live-bytes\"" &&
	q views.json "d[\"leak\"][\"self\"].get(\"leak_planted\", 0) > 0 and not d[\"leak\"][\"self\"].get(\"young_planted\")" &&
	check_view leak &&
	check_view leakAllocs
'

test_expect_success 'leak view of age 0: every live block, as report --min-age=0' '
	q views.json "d[\"leakAll\"][\"self\"][\"young_planted\"] > 0 and d[\"leakAll\"][\"self\"][\"leak_planted\"] > 0" &&
	q views.json "\"--min-age=0.000000000\" in d[\"leakAll\"][\"cmd\"]" &&
	check_view leakAll &&
	q views.json "not d[\"off\"][\"shown\"] and d[\"off\"][\"age\"] == \"\""
'

test_expect_success 'snapshot diff after the leak to the middle of the peak: peak_planted +64 MiB, as report --since --at' '
	q views.json "d[\"diff\"][\"mode\"] == \"diff\" and d[\"diff\"][\"diffShown\"]" &&
	q views.json "[r for r in d[\"diff\"][\"diff\"] if r[0] == \"peak_planted\"] == [[\"peak_planted\", 0, 64 << 20, 64 << 20]]" &&
	q views.json "d[\"diff\"][\"colours\"][\"peak_planted\"] == \"red\"" &&
	check_view diff 1 &&
	q views.json "{k: d[\"reopened\"][k] for k in (\"cmd\", \"diff\", \"total\")} == {k: d[\"diff\"][k] for k in (\"cmd\", \"diff\", \"total\")}"
'

test_expect_success 'the same diff of the process selected (--pid), and a range from the start (--at)' '
	q views.json "\" --pid=\" in d[\"diffPid\"][\"cmd\"] and d[\"diffPid\"][\"mode\"] == \"diff\"" &&
	check_view diffPid 1 &&
	q views.json "d[\"at\"][\"mode\"] == \"at\" and \"--at=\" in d[\"at\"][\"cmd\"] and \"--since\" not in d[\"at\"][\"cmd\"]" &&
	q views.json "d[\"at\"][\"self\"][\"leak_planted\"] > 0 and not d[\"at\"][\"self\"].get(\"peak_planted\")" &&
	check_view at
'

test_expect_success 'snapshot diff from the middle of the peak to the end: -64 MiB, young_planted +1 MiB' '
	q views.json "{r[0]: r[3] for r in d[\"tail\"][\"diff\"]}[\"peak_planted\"] == -(64 << 20)" &&
	q views.json "{r[0]: r[3] for r in d[\"tail\"][\"diff\"]}[\"young_planted\"] > 0" &&
	q views.json "\"--at\" not in d[\"tail\"][\"cmd\"]" &&
	check_view tail 1
'

# A file cut short does not say which blocks were live at its end (the
# list is written last, its length first): the page then carries no
# live-at-end columns, and the script shows no age box without them.
# live_columns CUT.html WHOLE.html: the cut page has heap columns, the
# live-at-end ones only the whole page.
live_columns() {
	python3 - "$1" "$2" <<-\EOF
	import json, sys
	def rows(path):
	    s = open(path, encoding="utf-8").read()
	    start = s.index('id="prof-app">') + len('id="prof-app">')
	    return json.loads(s[start:s.index("</script>", start)])["rows"]
	cut, whole = rows(sys.argv[1]), rows(sys.argv[2])
	print(sorted(cut), sorted(whole))
	sys.exit(0 if "allocs" in cut and "live_b" not in cut and "live_b" in whole else 1)
	EOF
}

test_expect_success 'a recording cut short: no live-at-end columns, so no leak view' '
	head -c $(($(stat -c %s h.data) / 2)) h.data >cut.data &&
	"$PROF" report -i cut.data --format=html -o cut.html 2>cut.err &&
	live_columns cut.html h.html
'

drive_stop
test_done

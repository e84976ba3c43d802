#!/bin/bash
# t5221-html-heap: the HTML report of a heap recording, driven in headless
# Chromium (tests/node/html-app-drive.js heap) on the planted heap
# workload run with its phases (tests/workloads/heap.c: leak_planted, then
# temp_planted and peak_planted, then young_planted, each phase apart and
# its boundary time printed).  The process has an allocation rate track
# with bars; a range dragged over a phase leaves only that phase's
# allocations in the alloc-bytes flame graph, as a range does for CPU; with
# live-bytes, a range is the snapshot diff (what it added to the heap).
#
# False-failure chance: which allocation falls in a range is not sampled
# (each boundary time is taken between two phases, 40 ms of sleep apart,
# so a range dragged between boundaries holds exactly its phases' samples).
# What is sampled is whether a phase has samples at all: at --heap-rate
# 128 young_planted's 256 blocks of 4 KiB are each sampled with
# p = 1 - exp(-32), peak_planted's 1 MiB ones with certainty, and
# temp_planted's 20000 64-byte blocks with p = 0.393: none of them can go
# unsampled (chance (1 - 0.393)^20000, below 1e-4000).
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/lib/node-tools.sh"
require_perf_events
[ -r /sys/bus/event_source/devices/uprobe/type ] || skip_all "no uprobe PMU in this kernel"
[ -x /usr/bin/chromium ] || skip_all "chromium is not installed (/usr/bin/chromium)"
require_node_tools
DRIVE="node $TOP/tests/node/html-app-drive.js"

test_expect_success 'record the phases with --heap and write the HTML report' '
	"$PROF" record -q --heap --heap-rate 128 -o h.data -- "$WL/heap" 20000 - phases >run.out &&
	cat run.out &&
	"$PROF" report -i h.data --format=html -o h.html
'
t() { sed -n "s/^phase $1 t=\([0-9]*\)/\1/p" run.out; }

test_expect_success 'drive the report in Chromium (no page errors)' '
	$DRIVE heap h.html "$(t after_leak)" "$(t mid_peak)" "$(t after_peak)" >drive.json &&
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

test_expect_success 'a range after the peak: young_planted alone, allocated and live' '
	q drive.json "[f for f in d[\"end\"][\"flame\"] if f.endswith(\"_planted\")] == [\"young_planted\"]" &&
	q drive.json "[f for f in d[\"liveEnd\"][\"flame\"] if f.endswith(\"_planted\")] == [\"young_planted\"]"
'

test_done

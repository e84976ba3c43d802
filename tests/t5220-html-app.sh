#!/bin/bash
# t5220-html-app: the HTML report as an application, driven in headless
# Chromium by playwright-core (tests/node/html-app-drive.js) on a real
# two-thread recording with an I/O phase (tests/workloads/phases).  Each
# interaction checks what the panels show: a range dragged over the I/O
# phase leaves only that phase's stacks in the flame graph and table; the
# main thread's track is coloured as I/O wait there; clicking a track
# selects its thread; the metric switch; search in the call tree and the
# flame graph; the stack chart keeps time order and draws every stack of
# a column; the source view of the hottest function marks its hot lines; the URL fragment reopens the same view; deep recursion is capped
# in height and collapses; `report --diff` renders red/blue with the
# movers table (recursion -> recursion then phases: recursion's share
# shrinks, blue; the phases functions are new, red).  And a 1M-sample file stays bounded (rows
# within the budget, every sample in the totals) and loads (time reported).
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/lib/slowdisk.sh"
# The I/O phase's fdatasyncs go to a disk with a set latency when one can
# be built (tests/lib/slowdisk.sh), so there is I/O wait to see on any
# host disk; otherwise to the trash's own disk.
IODIR=$TRASH
slow_disk_setup 500 5000 && IODIR=$SLOW_DIR
. "$TOP/tests/lib/node-tools.sh"
require_perf_events
[ -x /usr/bin/chromium ] || skip_all "chromium is not installed (/usr/bin/chromium)"
require_node_tools
export SHOT_DIR="$TRASH"
drive_start || skip_all "cannot start tests/node/html-app-drive.js serve"

test_expect_success 'record phases and write the HTML report' '
	"$PROF" record -q -o ph.data -- "$WL/phases" "$IODIR" 1.5 >run.out &&
	cat run.out &&
	"$PROF" report -i ph.data --format=html -o ph.html
'
set -- $(sed -n "s/^phases: io_start_ns \([0-9]*\) io_end_ns \([0-9]*\)/\1 \2/p" run.out)
IO0=${1:-0} IO1=${2:-0}

test_expect_success 'drive the report in Chromium (no page errors)' '
	drive phases ph.html "$IO0" "$IO1" >drive.json &&
	q drive.json "d[\"errors\"] == []" &&
	q drive.json "\"compute_phase\" in d[\"initial\"][\"fns\"] and d[\"initial\"][\"selinfo\"] == \"whole recording\""
'

test_expect_success 'range over the I/O phase: flame graph and table show only its stacks' '
	q drive.json "\"io_phase\" in d[\"range\"][\"flame\"] and \"compute_phase\" not in d[\"range\"][\"flame\"]" &&
	q drive.json "\"compute_phase\" not in d[\"range\"][\"fns\"] and \"io_phase\" in d[\"range\"][\"fns\"]" &&
	q drive.json "0 < d[\"range\"][\"total\"] < d[\"initial\"][\"total\"]" &&
	q drive.json "\"r=\" in d[\"range\"][\"hash\"]"
'

test_expect_success 'the main thread track shows I/O wait in the phase, not before it' '
	python3 -c "import json; d = json.load(open(\"drive.json\")); print(d[\"ioInside\"], d[\"ioBefore\"])" &&
	q drive.json "d[\"ioInside\"] > 1 and d[\"ioInside\"] > 4 * d[\"ioBefore\"]"
'

test_expect_success 'the URL fragment reopens the same selection' '
	q drive.json "d[\"reopened\"][\"selinfo\"] == d[\"range\"][\"selinfo\"]" &&
	q drive.json "d[\"reopened\"][\"fns\"] == d[\"range\"][\"fns\"] and d[\"reopened\"][\"total\"] == d[\"range\"][\"total\"]"
'

test_expect_success 'clicking the worker track selects that thread; clicking again unselects' '
	q drive.json "\"th=\" in d[\"track\"][\"hash\"] and \"work_function\" in d[\"track\"][\"fns\"]" &&
	q drive.json "\"compute_phase\" not in d[\"track\"][\"fns\"] and \"io_phase\" not in d[\"track\"][\"flame\"]" &&
	q drive.json "d[\"untrack\"][\"total\"] == d[\"initial\"][\"total\"]"
'

# (the kernel frames: the user part of an off-CPU stack may not unwind)
test_expect_success 'metric switch to io-wait: the I/O stacks, not the CPU loop' '
	q drive.json "\"m=io-wait\" in d[\"iowait\"][\"hash\"]" &&
	q drive.json "\"__x64_sys_fdatasync\" in d[\"iowait\"][\"flame\"] and \"work_function\" not in d[\"iowait\"][\"flame\"]" &&
	q drive.json "0 < d[\"iowait\"][\"total\"] and d[\"iowait\"][\"fns\"] != d[\"initial\"][\"fns\"]"
'

# (stackCols: per column of the stack chart, its first bucket and the
# functions drawn in it.  With the wall metric both threads weigh about
# half of every column, so both show, in 161 and 91 of 167 columns in two
# runs: not all, as an off-CPU stack may lack its user part or be lost.
# Drawing only each column's heaviest stack gave 0 of 105.)
test_expect_success 'stack chart: time order, and every stack of a column, not only the heaviest' '
	q drive.json "min(c[0] for c in d[\"initial\"][\"stackCols\"] if \"compute_phase\" in c[1]) < min(c[0] for c in d[\"initial\"][\"stackCols\"] if \"io_phase\" in c[1])" &&
	q drive.json "max(c[0] for c in d[\"initial\"][\"stackCols\"] if \"io_phase\" in c[1]) < max(c[0] for c in d[\"initial\"][\"stackCols\"] if \"compute_phase\" in c[1])" &&
	q drive.json "\"io_phase\" in set(n for c in d[\"range\"][\"stackCols\"] for n in c[1]) and \"compute_phase\" not in set(n for c in d[\"range\"][\"stackCols\"] for n in c[1])" &&
	q drive.json "len([c for c in d[\"wall\"][\"stackCols\"] if set(c[1]) & {\"work_function\", \"worker\", \"start_thread\"} and set(c[1]) & {\"main\", \"compute_phase\", \"io_phase\", \"__x64_sys_fdatasync\"}]) * 4 > len(d[\"wall\"][\"stackCols\"]) > 20"
'

test_expect_success 'search: call tree marks the function, flame graph reports the match' '
	q drive.json "d[\"ctsearch\"][\"hits\"] == [\"work_function\"] or set(d[\"ctsearch\"][\"hits\"]) == {\"work_function\"}" &&
	q drive.json "d[\"flamesearch\"][\"matched\"].endswith(\"% matched\")"
'

test_expect_success 'source view of the hottest function: its hot lines, the loop body' '
	q drive.json "d[\"source\"][\"srcName\"] == \"work_function\"" &&
	q drive.json "\"wl_sink = x + y;\" in d[\"source\"][\"source\"]" &&
	q drive.json "len(d[\"source\"][\"hottest\"]) == 1 and 27 <= d[\"source\"][\"hottest\"][0] <= 30" &&
	q drive.json "all(27 <= l <= 30 for l in d[\"source\"][\"hot\"])"
'

test_expect_success 'deep recursion: flame height capped with scrolling, recursion collapses' '
	"$PROF" record -q -o rec.data -- "$WL/recursion" 1 200 >/dev/null &&
	"$PROF" report -i rec.data --format=html -o rec.html &&
	drive deep rec.html >deep.json &&
	q deep.json "d[\"errors\"] == []" &&
	q deep.json "d[\"before\"][\"flameHeight\"] > 2000 and d[\"before\"][\"wrapHeight\"] <= 600" &&
	q deep.json "d[\"collapsed\"][\"flameHeight\"] * 4 < d[\"before\"][\"flameHeight\"] and \"rec=1\" in d[\"collapsed\"][\"hash\"]"
'

# (head runs recursion too: phases alone shares no frame with recursion,
# whose main, _start... are of another binary, so nothing could shrink;
# phases runs on wall time, so its share of head's CPU samples depends on
# the machine's load: hot_leaf fell by 34 points at load 24)
test_expect_success 'report --diff --format=html: red/blue flame graph and the movers' '
	"$PROF" record -q -o mix.data -- sh -c "\"$WL/recursion\" 0.3 200 && \"$WL/phases\" \"$TRASH\" 1" >/dev/null &&
	"$PROF" report --diff rec.data mix.data --format=html -o diff.html &&
	drive diff diff.html >diff.json &&
	q diff.json "d[\"errors\"] == [] and d[\"red\"] > 0 and d[\"blue\"] > 0 and not d[\"tracks\"]" &&
	q diff.json "dict(d[\"movers\"]).get(\"hot_leaf\", 0) < -10 and dict(d[\"movers\"]).get(\"work_function\", 0) > 2"
'

# A page of many processes (split and nine sleepers): the busiest processes
# and the flame graph on the first screen (1000 px), the table busiest
# first, one track per process, only the busiest one's threads shown.
test_expect_success 'many processes: flame graph and busiest processes first, tracks per process' '
	"$PROF" record -q -o many.data -- sh -c "for i in 1 2 3 4 5 6 7 8 9; do sleep 0.3 & done; \"$WL/split\" 1 >/dev/null; wait" &&
	"$PROF" report -i many.data --format=html -o many.html &&
	drive machine many.html >machine.json &&
	q machine.json "d[\"errors\"] == [] and d[\"flameTop\"] < 1000 and d[\"procsTop\"] < d[\"flameTop\"] < d[\"tracksTop\"]" &&
	q machine.json "d[\"procs\"][0][\"comm\"] == \"split\" and [p[\"weight\"] for p in d[\"procs\"]] == sorted((p[\"weight\"] for p in d[\"procs\"]), reverse=True)" &&
	q machine.json "len(d[\"procs\"]) > 10 and all(p[\"visible\"] for p in d[\"procs\"][:10]) and not any(p[\"visible\"] for p in d[\"procs\"][10:])" &&
	q machine.json "d[\"title\"].startswith(\"Processes: %d, %d threads\" % (len(d[\"procs\"]), sum(p[\"threads\"] for p in d[\"procs\"])))" &&
	q machine.json "[l[\"pid\"] for l in d[\"lanes\"] if l[\"proc\"]][0] == d[\"procs\"][0][\"pid\"]" &&
	q machine.json "[l[\"open\"] for l in d[\"lanes\"] if l[\"proc\"]] == [True] + [False] * (len([l for l in d[\"lanes\"] if l[\"proc\"]]) - 1)" &&
	q machine.json "[l for l in d[\"lanes\"] if not l[\"proc\"]] and all(l[\"pid\"] == d[\"procs\"][0][\"pid\"] for l in d[\"lanes\"] if not l[\"proc\"])" &&
	q machine.json "[l[\"open\"] for l in d[\"expanded\"] if l[\"proc\"]][:2] == [True, True] and len([l for l in d[\"expanded\"] if not l[\"proc\"]]) > len([l for l in d[\"lanes\"] if not l[\"proc\"]])"
'

# A whole machine of over 200 threads (HTML_TRACK_THREADS): the threads
# past 200 fold into one "other threads" track, and which keep a track
# goes by CPU time first.  Every thread alive across the window has the
# window as CPU plus off-CPU time (a sleeper too, charged from the
# start), so a busy process that lived for part of it must not be folded
# behind them: it keeps a track (the machine's busiest process, whichever
# it is on a shared host, the first one).  250 threads of one process sleep
# across the recording; split runs 0.5 s of CPU after a 0.5 s sleep (its
# samples are never few: ~500 at 999 Hz).  The tracks rank processes by
# their exact on-CPU time and the table by samples, which agree to a few
# samples: the first track's process is the table's first or one within
# 3% of it (seen: another test's 0.5-s workload tied with split at 506).
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	test_expect_success 'whole machine: the busiest process keeps the first track past 200 threads' '
		python3 -c "import threading, time
for _ in range(250): threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
print(\"ready\", flush=True); time.sleep(600)" >sleepers.out &
		sl=$!
		while ! grep -q ready sleepers.out; do sleep 0.1; done
		"$PROF" record -q -a -o wide.data -- sh -c "sleep 0.5; \"$WL/split\" 0.5 >/dev/null"; st=$?
		kill $sl; wait $sl 2>/dev/null
		test $st = 0 &&
		"$PROF" report -i wide.data --format=html -o wide.html &&
		drive machine wide.html >wide.json &&
		q wide.json "d[\"errors\"] == [] and any(l[\"pid\"] < 0 for l in d[\"lanes\"])" &&
		q wide.json "[p[\"weight\"] for p in d[\"procs\"] if p[\"pid\"] == [l[\"pid\"] for l in d[\"lanes\"] if l.get(\"proc\")][0]][0] >= 0.97 * d[\"procs\"][0][\"weight\"]" &&
		q wide.json "[p[\"pid\"] for p in d[\"procs\"] if p[\"comm\"] == \"split\"][0] in [l[\"pid\"] for l in d[\"lanes\"] if l.get(\"proc\")]"
	'
else
	test_skip 'whole machine: the busiest process keeps the first track past 200 threads' \
		"-a needs root or perf_event_paranoid <= 0"
fi

# Markers come from the kernel's fork, exec and exit records: split was
# forked by sh, exec'd and exited in the recording (kinds 0, 1, 2; the
# fork on the pre-exec sh track when that one had a sample); the
# nine sleeps' execs and exits are on their sleep tracks; an attached
# process (stopped for a while in the middle) that
# neither started nor ended in the window has none, however its samples
# come and go.
test_expect_success 'track markers: the fork, exec and exit records, and nothing else' '
	q machine.json "[e[3] for e in d[\"events\"] if e[0] == d[\"procs\"][0][\"pid\"]] == [0, 1, 2]" &&
	q machine.json "[e[3] for e in d[\"events\"] if e[2] == \"split\"][-2:] == [1, 2]" &&
	q machine.json "[e[3] for e in d[\"events\"] if e[2] == \"sleep\"].count(1) == 9" &&
	q machine.json "[e[3] for e in d[\"events\"] if e[2] == \"sleep\"].count(2) == 9" || return 1
	"$WL/split" 60 >/dev/null 2>&1 &
	pid=$!
	{ "$PROF" record -q -p $pid -o att.data -- sh -c "sleep 0.5; kill -STOP $pid; sleep 0.5; kill -CONT $pid; sleep 0.5"; st=$?; } &&
	kill $pid; wait $pid
	test $st = 0 && "$PROF" report -i att.data --format=html -o att.html &&
	drive machine att.html >att.json && q att.json "d[\"errors\"] == [] and d[\"events\"] == []"
'

GEN="$BUILD_DIR/tests/unit/data.t"
if [ -x "$GEN" ]; then
	# (the generator draws each sample's stack from a pool of 2,000: at
	# 1,000 buckets nearly every sample is a row of its own, 786k rows)
	test_expect_success '1M samples: the page stays bounded, every sample counted (time reported)' '
		"$GEN" --generate big.data 1000000 >/dev/null &&
		"$PROF" report -i big.data --format=html -o big.html &&
		python3 "$TOP/tests/lib/html-app-data.py" big.html >grid.json &&
		q grid.json "d[\"rows\"] <= 150000 and d[\"nbuckets\"] * d[\"lane_per\"] >= d[\"nlanes\"] > 500" &&
		q grid.json "d[\"samples\"] == 1000000 and d[\"lane_threads\"] == 4 and d[\"bad\"] == 0" &&
		test $(stat -c %s big.html) -lt 2000000 &&
		drive load big.html >load.json &&
		q load.json "d[\"errors\"] == [] and d[\"panels\"][\"total\"] == 1000000" &&
		python3 -c "
import json; d = json.load(open(\"load.json\")); g = json.load(open(\"grid.json\"))
print(\"# 1M samples: %d rows in %d buckets, ready %d ms, painted %d ms, browser CPU %d ms, load average %.1f, html %d bytes\" % (
    g[\"rows\"], g[\"nbuckets\"], d[\"page_ms\"], d[\"painted_ms\"], d[\"cpu_ms\"], d[\"loadavg\"],
    __import__(\"os\").path.getsize(\"big.html\")))"
	'
else
	test_skip '1M samples: the report loads' "$GEN not built (make unit)"
fi

drive_stop
test_done

#!/bin/bash
# t4120-resources-attach-window - `prof record -p` on processes that ran
# before the recording: every figure covers the recording window only
# (CPU against the target's own /proc delta over the window), and the text,
# JSON and HTML reports list the same processes, with the window as the
# duration even when nothing was sampled.  A thread off the CPU when the
# window begins or ends is charged up to that edge: asleep all along, its
# off-CPU time is the window.
#
# The window is made exact on a loaded machine by stopping the target
# (SIGSTOP) before prof starts and letting it run (SIGCONT) only after
# prof has taken its first readings: its resource sampler thread,
# "prof-resources", exists from then on.  No sampling: CPU time is read
# from /proc at rest (the target stopped), ticks of 10 ms against a 10%
# margin of ~2 s (tests/README.md).
. "$(dirname "$0")/lib/test-lib.sh"

RB="$BUILD_DIR/tests/resources"
require_perf_events
TCK=$(getconf CLK_TCK)

cpu_ticks() {	# utime + stime of a pid, in clock ticks
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}
wait_for_window() {	# prof pid: until its first readings are taken (at most 60 s)
	for _ in $(seq 600); do
		grep -qx prof-resources /proc/"$1"/task/*/comm 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
json_pids() {	# processes of a JSON report, sorted
	python3 -c "import json,sys; print(\" \".join(sorted(str(p[\"pid\"]) for p in json.load(open(sys.argv[1]))[\"processes\"])))" "$1"
}
html_pids() {	# rows of the HTML report's process table, sorted
	python3 - "$1" <<-'PY'
	import re, sys
	t = open(sys.argv[1]).read()
	t = t[t.index('id="procs"'):]
	t = t[:t.index("</table>")]
	print(" ".join(sorted(re.findall(r'<tr><td class="n">(\d+)</td>', t))))
	PY
}
within() {	# got truth fraction
	python3 -c "import sys; g,t,f=map(float,sys.argv[1:]); sys.exit(0 if abs(g-t) <= f*t else 1)" "$@"
}

test_expect_success 'a process with a past: its CPU is the /proc delta of the window' '
	"$RB/burn" 60000 >/dev/null &
	pid=$!
	sleep 2
	kill -STOP $pid &&
	before=$(cpu_ticks $pid) &&
	{ "$PROF" record -o win.data -p $pid -d 8 2>win.err & } &&
	rec=$! &&
	{ wait_for_window $rec || say "prof did not name its sampler thread; going on"; } &&
	kill -CONT $pid && sleep 2 && kill -STOP $pid &&
	after=$(cpu_ticks $pid) &&
	{ wait $rec; st=$?; } &&
	kill -9 $pid; wait $pid 2>/dev/null
	cat win.err &&
	test "$st" = 0 &&
	"$PROF" report -i win.data --format=json >win.json &&
	got=$(python3 -c "import json,sys; p=json.load(open(sys.argv[1]))[\"processes\"][0]; print(p[\"cpu_user_s\"] + p[\"cpu_sys_s\"])" win.json) &&
	truth=$(python3 -c "print(($after - $before) / $TCK)") &&
	say "past $(python3 -c "print($before / $TCK)") s of CPU; window: /proc delta $truth s, prof $got s" &&
	test "$after" -gt "$before" &&
	within "$got" "$truth" 0.10
'

test_expect_success 'the window is the duration, and wall - cpu of one thread is not negative' '
	dur=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"duration_s\"])" win.json) &&
	"$PROF" report -i win.data >win.txt &&
	wmc=$(sed -n "s/.*wall - cpu = \(-*[0-9.]*\) s.*/\1/p" win.txt) &&
	say "duration_s $dur, wall - cpu $wmc s" &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 7 and float(sys.argv[2]) >= 0 else 1)" "$dur" "$wmc"
'

# A parent asleep in wait() with busy children that already run, attached
# alone (as a postmaster without --children): it is never sampled, its
# children are not attached, and every format says so alike.
test_expect_success 'text, JSON and HTML list the same processes' '
	sh -c "\"$RB/burn\" 60000 >/dev/null & \"$RB/burn\" 60000 >/dev/null & wait" &
	parent=$!
	sleep 1
	"$PROF" record -o fam.data -p $parent -d 1 2>fam.err; st=$?
	kids=$(cat /proc/$parent/task/*/children)
	kill $kids $parent; wait $parent 2>/dev/null
	say "parent $parent, children $kids" &&
	test "$st" = 0 &&
	"$PROF" report -i fam.data --format=json >fam.json &&
	"$PROF" report -i fam.data >fam.txt &&
	"$PROF" report -i fam.data --format=html -o fam.html &&
	j=$(json_pids fam.json) &&
	t=$(sed -n "s/^# pid \([0-9]*\):.*/\1/p" fam.txt | sort | tr "\n" " " | sed "s/ $//") &&
	h=$(html_pids fam.html) &&
	dur=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"duration_s\"])" fam.json) &&
	say "json [$j] text [$t] html [$h], duration_s $dur" &&
	test "$j" = "$parent" && test "$t" = "$j" && test "$h" = "$j" &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.8 else 1)" "$dur"
'

# Off-CPU at the window's edges.  The off-CPU events may be unavailable
# here (no tracefs, not root): then these skip.
"$PROF" record -o probe.data -- true 2>probe.err
offcpu_why=$(sed -n 's/.*no off-CPU stacks in this recording: //p' probe.err)
json_proc() {	# file expr over p (processes[0]) and d
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=d[\"processes\"][0]; print($2)" "$1"
}
offcpu_test() {	# title body: skipped without the off-CPU events
	if [ -n "$offcpu_why" ]; then test_skip "$1" "$offcpu_why"; else test_expect_success "$1" "$2"; fi
}
wait_asleep() {	# pid comm: until it is comm and asleep (S), at most 60 s
	for _ in $(seq 600); do
		[ "$(cat /proc/"$1"/comm)" = "$2" ] && [ "$(sed "s/.*) //" /proc/"$1"/stat | cut -c1)" = S ] && return 0
		sleep 0.1
	done
	return 1
}
attached() {	# name pid cmd...: record pid bounded by cmd, end pid; NAME.json, NAME.folded (off-CPU)
	n=$1 pid=$2
	shift 2
	"$PROF" record -o $n.data -p $pid -- "$@" 2>$n.err; st=$?
	kill $pid; wait $pid 2>/dev/null
	cat $n.err && test "$st" = 0 &&
	"$PROF" report -i $n.data --format=json >$n.json &&
	"$PROF" report -i $n.data --format=folded --metric=off-cpu >$n.folded &&
	cat $n.folded
}

# A process asleep in one nanosleep for the whole window (bounded by the
# command after -p, which runs at least 1 s): no switch record of it ever
# comes, and its off-CPU time is the window, all sleep, under the stack
# /proc showed when the recording began.  No sampling (every switch and
# the window's edges are counted): no false-failure chance.
offcpu_test 'asleep the whole window: its off-CPU time is the window' '
	sleep 600 &
	pid=$!
	{ wait_asleep $pid sleep || { kill $pid; false; }; } &&
	attached zz $pid sleep 1 &&
	got=$(json_proc zz.json "p[\"off_cpu_s\"], p[\"sleep_s\"], d[\"duration_s\"]") &&
	say "off_cpu_s, sleep_s, duration_s: $got" &&
	python3 -c "import sys; o,s,d=map(float,sys.argv[1:]); sys.exit(0 if o >= 0.99 and s == o and o <= d + 0.001 else 1)" $(echo "$got" | tr -d "(),") &&
	grep -q "^sleep;\[off-CPU when recording began\];.*nanosleep" zz.folded
'

# A shell blocked in read() on a FIFO when the window begins; the command
# after -p writes one line, the shell reads it and blocks in read() again
# until the end.  Both waits are charged up to the window's edges: its
# off-CPU time is the window but for its CPU time (/proc ticks, 10 ms
# each: 20 ms of margin), the first wait under the stack /proc showed,
# the last under its own switch-out's stack.
offcpu_test 'blocked at both edges: charged from the start and to the end' '
	rm -f fifo; mkfifo fifo
	sh -c "exec 3<>fifo; while read l <&3; do :; done" &
	pid=$!
	{ wait_asleep $pid sh || { kill $pid; false; }; } &&
	attached edge $pid sh -c "echo x >fifo; sleep 1" &&
	got=$(json_proc edge.json "p[\"off_cpu_s\"], p[\"cpu_user_s\"] + p[\"cpu_sys_s\"], d[\"duration_s\"]") &&
	say "off_cpu_s, cpu_s, duration_s: $got" &&
	python3 -c "import sys; o,c,d=map(float,sys.argv[1:]); sys.exit(0 if o >= d - c - 0.02 else 1)" $(echo "$got" | tr -d "(),") &&
	grep -q "^sh;\[off-CPU when recording began\];" edge.folded &&
	grep -v "off-CPU when recording began" edge.folded | grep -q "^sh;.*read"
'

test_done

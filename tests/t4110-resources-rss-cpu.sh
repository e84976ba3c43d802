#!/bin/bash
# t4110-resources-rss-cpu - the /proc side of `prof record`'s resource
# tracking against the workloads' own truth: peak RSS within 10% of the
# memory touched, CPU user and sys time within 20% of the program's own
# getrusage, the JSON fields (processes, threads, timeline), the text
# header line and the HTML timeline charts.
. "$(dirname "$0")/lib/test-lib.sh"

RB="$BUILD_DIR/tests/resources"
require_perf_events

json_get() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=d['processes'][0]; print($2)" "$1"
}
within() {	# got truth fraction
	python3 -c "import sys; g,t,f=map(float,sys.argv[1:]); sys.exit(0 if abs(g-t) <= f*t else 1)" "$@"
}

test_expect_success 'peak RSS within 10% of the memory touched' '
	"$PROF" record -o mem.data -- "$RB/memtouch" 200 1000 >mem.out 2>/dev/null &&
	truth=$(sed -n "s/^touched_bytes //p" mem.out) &&
	"$PROF" report -i mem.data --format=json --metric=wall >mem.json &&
	got=$(json_get mem.json "p[\"rss_peak_bytes\"]") &&
	say "touched $truth bytes, prof rss_peak_bytes $got" &&
	within "$got" "$truth" 0.10
'

# The memory is held 1 s: ten sampling intervals.
test_expect_success 'the RSS timeline rises to the touched size' '
	truth=$(sed -n "s/^touched_bytes //p" mem.out) &&
	n=$(json_get mem.json "len(p[\"timeline\"])") &&
	top=$(json_get mem.json "max(t[\"rss_bytes\"] for t in p[\"timeline\"])") &&
	say "$n timeline points, highest rss $top" &&
	test "$n" -ge 2 &&
	within "$top" "$truth" 0.10
'

# No sampling by prof: the user/sys split is the kernel's (tick-sampled
# at HZ 250, then scaled to the exact runtime), and prof (/proc) and the
# program (getrusage) read the same counters, a few ms apart: user 551.9
# against 550 ms, sys 249.1 against 240 ms here.
test_expect_success 'CPU user and sys time within 20% of getrusage' '
	"$PROF" record -o burn.data -- "$RB/burn" 400 >burn.out 2>/dev/null &&
	u=$(sed -n "s/.* user_us \([0-9]*\).*/\1/p" burn.out) &&
	s=$(sed -n "s/.* sys_us \([0-9]*\).*/\1/p" burn.out) &&
	"$PROF" report -i burn.data --format=json >burn.json &&
	gu=$(json_get burn.json "int(p[\"cpu_user_s\"]*1e6)") &&
	gs=$(json_get burn.json "int(p[\"cpu_sys_s\"]*1e6)") &&
	say "getrusage user $u us sys $s us; prof user $gu us sys $gs us" &&
	within "$gu" "$u" 0.20 && within "$gs" "$s" 0.20
'

test_expect_success 'JSON: every process and thread field is there' '
	python3 - burn.json <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	for p in d["processes"]:
	    for k in ("cpu_user_s", "cpu_sys_s", "rss_peak_bytes", "io_wait_s", "off_cpu_s",
	              "sleep_s", "io_read_bytes", "io_write_bytes", "timeline"):
	        assert k in p, k
	    for t in p["timeline"]:
	        assert set(t) == {"t", "rss_bytes", "cpu_pct", "io_wait_pct"}, t
	    for t in p["threads"]:
	        for k in ("cpu_user_s", "cpu_sys_s", "io_wait_s", "off_cpu_s", "sleep_s",
	                  "voluntary_switches", "involuntary_switches", "minor_faults", "major_faults"):
	            assert k in t, k
	PY
'

# A process of one thread is read through its own files alone (its stat
# and status are its thread's), but not once it has had a second thread:
# the dead thread's CPU stays in the process's totals, not its leader's.
# The thread burns 0.4 s of its own CPU time, whatever the machine's
# speed; the interpreter's start (0.15-0.25 s here) is the leader's and
# grows on a slower machine, so the leader is judged against the process
# less the thread, not against a fraction of the process.
test_expect_success 'a thread that exits: its CPU stays its own, the leader keeps only its own' '
	"$PROF" record -o th.data -- python3 -c "if 1:
		import threading, time
		def burn():
		    t = time.thread_time()
		    while time.thread_time() - t < 0.4:
		        pass
		th = threading.Thread(target=burn)
		th.start(); th.join(); time.sleep(0.5)" 2>th.err &&
	"$PROF" report -i th.data --format=json >th.json &&
	python3 - th.json <<-PY
	import json, sys
	p = json.load(open(sys.argv[1]))["processes"][0]
	cpu = lambda x: x["cpu_user_s"] + x["cpu_sys_s"]
	lead = [t for t in p["threads"] if t["tid"] == p["pid"]][0]
	other = [cpu(t) for t in p["threads"] if t["tid"] != p["pid"]]
	print("process", cpu(p), "leader", cpu(lead), "others", other)
	assert cpu(p) >= 0.35 and other and max(other) >= 0.2 and cpu(lead) <= cpu(p) - 0.2
	PY
'

test_expect_success 'text header: CPU user/sys, peak RSS, I/O wait, wall - cpu' '
	"$PROF" report -i mem.data >mem.txt &&
	check_contains mem.txt "^# pid [0-9]*: cpu [0-9.]* s user, [0-9.]* s sys; peak rss [0-9.]* MiB; io wait [0-9.]* s, off-cpu [0-9.]* s (sleep [0-9.]* s); wall - cpu = -*[0-9.]* s"
'

test_expect_success 'HTML: the timeline section charts CPU, RSS and I/O wait' '
	"$PROF" report -i mem.data --format=html -o mem.html &&
	check_contains mem.html "<h2>Timeline</h2>" &&
	check_contains mem.html "<b>CPU</b>" &&
	check_contains mem.html "<b>RSS</b>" &&
	check_contains mem.html "<b>I/O wait</b>"
'

test_expect_success 'a child process gets its own entry with its own peak RSS' '
	"$PROF" record -o kids.data -- sh -c "\"$RB/memtouch\" 100 1000 & \"$RB/sleeper\" 300; wait" >kids.out 2>/dev/null &&
	truth=$(sed -n "s/^touched_bytes //p" kids.out) &&
	"$PROF" report -i kids.data --format=json --metric=wall >kids.json &&
	got=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([p for p in d[\"processes\"] if p[\"comm\"] == \"memtouch\"][0][\"rss_peak_bytes\"])" kids.json) &&
	sh_peak=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([p for p in d[\"processes\"] if p[\"comm\"] == \"sh\"][0][\"rss_peak_bytes\"])" kids.json) &&
	say "memtouch child: touched $truth, rss_peak_bytes $got; sh: $sh_peak" &&
	within "$got" "$truth" 0.10 &&
	test "$sh_peak" -lt $((truth / 2))
'

test_expect_success 'attach (-p, -d): sleep and a timeline of the running process' '
	"$RB/sleeper" 3000 >/dev/null &
	pid=$! &&
	"$PROF" record -o att.data -p $pid -d 1 2>/dev/null &&
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	"$PROF" report -i att.data --format=json --metric=sleep >att.json &&
	sl=$(json_get att.json "p[\"sleep_s\"]") &&
	n=$(json_get att.json "len(p[\"timeline\"])") &&
	say "attached 1 s: sleep_s $sl, $n timeline points" &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.5 else 1)" "$sl" &&
	test "$n" -ge 2
'

test_expect_success 'the summary line counts a task once across its exec' '
	"$PROF" record -o sl.data -- "$RB/sleeper" 300 >/dev/null 2>sl.err &&
	cat sl.err &&
	check_contains sl.err "off-CPU time in 1 thread of 1 process;"
'

test_expect_success 'old readers: a file without resource records reports zeros' '
	"$PROF" record --no-resources -o plain.data -- "$RB/burn" 100 >/dev/null 2>&1 &&
	"$PROF" report -i plain.data >plain.txt &&
	check_not_contains plain.txt "^# pid "
'

test_done

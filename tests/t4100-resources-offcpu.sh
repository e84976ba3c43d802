#!/bin/bash
# t4100-resources-offcpu - off-CPU time recorded by `prof record` (the
# sched_switch tracepoint paired with context-switch records) against the
# truth the workloads measure themselves: I/O wait of fdatasync within 25%
# of the program's own clock_gettime measurement, charged to the blocking
# function's stack; sleep is counted as sleep, never as I/O wait.
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/lib/slowdisk.sh"

RB="$BUILD_DIR/tests/resources"
require_perf_events

require_offcpu

# json_get FILE EXPR: a python expression over d (the report) and p (processes[0]).
json_get() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=d['processes'][0]; print($2)" "$1"
}

# The fdatasyncs go to a disk with a set latency (tests/lib/slowdisk.sh:
# write requests 0.5 ms, flushes 5 ms): 60 of them block for at least
# 0.3 s on any machine, enough against a 25% tolerance, and the program's
# clock is held to that floor.  These checks count every switch (no
# sampling; false-failure chance from sampling: none).  Without such a
# disk (not root, no FUSE) they skip, and io.data is recorded on the
# trash's own disk for the format checks further down.
if slow_disk_setup 500 5000; then
	test_expect_success 'fdatasync: I/O wait within 25% of the measured blocked time' '
		"$PROF" record -o io.data -- "$RB/fsync_wait" "$SLOW_DIR/sync.bin" 1 60 >io.out 2>io.err &&
		rm -f "$SLOW_DIR/sync.bin" &&
		truth=$(sed -n "s/^blocked_ns //p" io.out) &&
		say "fdatasync blocked ${truth} ns by its own clock" &&
		slow_disk_check_truth "$truth" 60 &&
		"$PROF" report -i io.data --format=json --metric=io-wait >io.json &&
		got=$(json_get io.json "int(p[\"io_wait_s\"] * 1e9)") &&
		say "prof io_wait_s = ${got} ns" &&
		python3 -c "import sys; t,g=int(sys.argv[1]),int(sys.argv[2]); sys.exit(0 if abs(g-t) <= 0.25*t else 1)" "$truth" "$got"
	'

	# The fdatasync calls' own I/O wait (their kernel frames below the
	# system call) must carry the function that made them, the user
	# frames unwound: 90% of it.  Judged apart from the program's other
	# I/O wait, which a loaded machine makes real: beside two test suites
	# its open() of the file read a directory block of the slow disk for
	# 188 ms of 1.78 s (10.6%, under __open; the fdatasyncs' 89.4% all on
	# block_in_fdatasync), as exec's page faults can (below).
	test_expect_success 'fdatasync: the io-wait stacks go through the blocking function' '
		"$PROF" report -i io.data --format=folded --metric=io-wait >io.folded &&
		grep "sys_fdatasync_\[k\]" io.folded >io-sync.folded &&
		folded_share io-sync.folded ";block_in_fdatasync;" "" 90
	'

	test_expect_success 'fdatasync: io-wait stacks have kernel frames of the wait' '
		grep -q "io_schedule[a-z_]*_\[k\]" io.folded
	'
	slow_disk_teardown
else
	for t in 'fdatasync: I/O wait within 25% of the measured blocked time' \
		'fdatasync: the io-wait stacks go through the blocking function' \
		'fdatasync: io-wait stacks have kernel frames of the wait'; do
		test_skip "$t" "$SLOW_DISK_WHY"
	done
	"$PROF" record -o io.data -- "$RB/fsync_wait" ./sync.bin 1 20 >io.out 2>io.err
	rm -f sync.bin
fi

# The sleep's own stacks carry no I/O wait.  Some real I/O wait elsewhere
# is allowed: on a loaded machine exec's page faults read the binary
# (filemap_fault -> io_schedule, 47 ms of a 1.08 s run seen).
test_expect_success 'sleep is sleep, not I/O wait' '
	"$PROF" record -o sleep.data -- "$RB/sleeper" 500 >sleep.out 2>&1 &&
	truth=$(sed -n "s/.*slept_ns //p" sleep.out) &&
	"$PROF" report -i sleep.data --format=json --metric=sleep >sleep.json &&
	io=$(json_get sleep.json "p[\"io_wait_s\"]") &&
	sl=$(json_get sleep.json "p[\"sleep_s\"]") &&
	say "sleeper: measured $truth ns in nanosleep; prof sleep_s $sl io_wait_s $io" &&
	python3 -c "import sys; t,s,i=int(sys.argv[1])/1e9,float(sys.argv[2]),float(sys.argv[3]); sys.exit(0 if abs(s-t) <= 0.25*t and i < 0.25*t else 1)" "$truth" "$sl" "$io" &&
	"$PROF" report -i sleep.data --format=folded --metric=sleep >sleep.folded &&
	grep -q ";sleep_a_while;" sleep.folded &&
	"$PROF" report -i sleep.data --format=folded --metric=io-wait >sleep-io.folded &&
	! grep -q sleep_a_while sleep-io.folded
'

# A program that exits right after its one wait: the wait's sample
# reaches the recorder after the program's exit record, and must still
# be unwound in the program's address space (kept until the batch ends).
# The one sleep is its thread's first in its class, kept by the stale
# rule: no sampling, so no false-failure chance from it.
test_expect_success 'the last wait before exit keeps its user frames (coreutils sleep)' '
	"$PROF" record -o last.data -- sleep 0.4 &&
	"$PROF" report -i last.data --format=folded --metric=sleep >last.folded &&
	awk "{t += \$NF} /;clock_nanosleep;/ {s += \$NF} END {exit !(t > 0 && s >= 0.95 * t)}" last.folded
'

# A wait, then an exec of another program (the shell's exec first): the
# wait's sample reaches the recorder behind the exec (5 ms apart: in the
# same batch), and must be unwound in the image it was taken in and go to
# the thread as it was named then; the new program's first wait gets a
# stack of its own (the stale rule starts afresh at an exec) instead of
# the old image's.  System-wide too, where the recorder must not take a
# later image's maps from /proc for an earlier one's.  Both waits are
# their thread's first in their class since an exec, kept always: no
# sampling, so no false-failure chance from it.
for mode in "" -a; do
	test_expect_success "a wait before an exec keeps the old image, the wait after it its own${mode:+ ($mode)}" '
		"$PROF" record $mode -o exec.data -- sh -c "echo \$\$ >exec.pid; exec \"$RB/exec_after\" 5 sleep 0.2" &&
		"$PROF" report -i exec.data --pid "$(cat exec.pid)" --format=folded --metric=sleep >exec.folded &&
		awk "/^exec_after;.*;wait_before_exec;/ {w += \$NF} /^sleep;.*;clock_nanosleep;/ {s += \$NF} {t += \$NF}
			END {exit !(w >= 4500 && s >= 180000 && w + s >= 0.95 * t)}" exec.folded
	'
done

# A D-state wait that is not I/O: the parent of a vfork child waits in
# wait_for_vfork_done (TASK_KILLABLE, no in_iowait).  Every wait is kept
# (each is its thread's first D wait in 50 ms: the stale rule), so no
# sampling margin; the 25% are the clocks' differences, as above.
test_expect_success 'D state outside I/O: off-CPU, never I/O wait' '
	"$PROF" record -o vfork.data -- "$RB/vfork_wait" 50 10 >vfork.out 2>&1 &&
	truth=$(sed -n "s/^waited_ns //p" vfork.out) &&
	"$PROF" report -i vfork.data --format=folded --metric=off-cpu >vfork.folded &&
	got=$(awk "/;kernel_clone_\\[k\\];/ {s += \$NF} END {print s * 1000}" vfork.folded) &&
	say "vfork parent: waited $truth ns by its own clock; prof off-CPU in kernel_clone $got ns" &&
	python3 -c "import sys; t,g=int(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(g-t) <= 0.25*t else 1)" "$truth" "$got" &&
	"$PROF" report -i vfork.data --format=folded --metric=io-wait >vfork-io.folded &&
	! grep -q "kernel_clone_\[k\]" vfork-io.folded
'

# Two burners on one CPU preempt each other, in user mode (burn_user's
# loop, its clock_gettime system calls) and in read() of /dev/zero
# (burn_sys).  A kept switch-out's one kernel frame is the caller of
# __schedule: schedule() unless the thread was preempted inside the
# kernel (__cond_resched, preempt_schedule*), which a thread in
# burn_user's own loop is not (an interrupt there returns to user mode
# through schedule()).  The accountant gives schedule()'s
# frame without unwinding to every switch-out the tracepoint does not
# flag as a preemption, once the recorder has seen it (the sleep before
# the burners gives it one): a wrong frame there names another function
# (one 0x300 bytes on named preempt_schedule_irq, in every stack).
# The false-failure chance.  The stacks are kept by the stale rule, not
# at random: each burner's first preempted switch-out (whatever the
# budget) and one every 20 ms after it, so burn_user, 300 ms of CPU on a
# shared CPU, has several.  burn_user's own loop never runs in the
# kernel after its first page faults, so its frame is schedule() always.
# Only a preemption inside a system call can name another frame, and
# only on a fully preemptible kernel: burn_user spends under 1.5% of its
# time in them (`strace -c burn 300`: 2,487 clock_gettime calls in the
# whole run, 1 us each), so no schedule() among even 5 kept stacks has a
# chance under 0.015^5 = 8e-10.
test_expect_success 'preempted stacks end where __schedule was called (schedule, or a preemption in the kernel)' '
	cpu=$(python3 -c "import os; print(min(os.sched_getaffinity(0)))") &&
	taskset -c "$cpu" "$PROF" record -o pre.data -- sh -c "sleep 0.2; \"$RB/burn\" 300 & \"$RB/burn\" 300; wait" >pre.out 2>&1 &&
	"$PROF" report -i pre.data --format=folded --metric=off-cpu >pre.folded &&
	awk "/;burn_(user|sys);/ { n = split(\$0, s, \";\"); sub(/ [0-9]+\$/, \"\", s[n]); print s[n - 1] \" \" s[n] }" pre.folded |
	sort | uniq -c >pre.leaves &&
	say "$(cat pre.leaves | tr "\n" " ")" &&
	grep -q " schedule_\[k\]\$" pre.leaves &&
	! grep " burn_user [^ ]*\$" pre.leaves | grep -v " schedule_\[k\]\$" &&
	! grep -v -E " (schedule|__cond_resched|_cond_resched|preempt_schedule[a-z_]*)_\[k\]\$" pre.leaves
'

test_expect_success 'every format works with every metric' '
	for m in cpu off-cpu io-wait sleep wall; do
		for f in text folded json flamegraph html speedscope pprof callgrind; do
			"$PROF" report -i io.data --metric=$m --format=$f -o out.$m.$f 2>err || { echo "$m $f"; cat err; return 1; }
			test -s out.$m.$f || test $f = folded || { echo "empty: $m $f"; return 1; }
		done
	done &&
	python3 -c "import json; json.load(open(\"out.wall.json\")); json.load(open(\"out.io-wait.speedscope\"))"
'

test_expect_success 'folded weights: microseconds for time metrics, samples for cpu' '
	cpu=$(folded_sum out.cpu.folded) &&
	wall=$(folded_sum out.wall.folded) &&
	off=$(folded_sum out.off-cpu.folded) &&
	say "cpu $cpu samples, off-cpu $off us, wall $wall us" &&
	test "$wall" -gt "$off" && test "$off" -gt "$cpu"
'

test_expect_success '--no-resources records no off-CPU data and no timeline' '
	"$PROF" record --no-resources -o nores.data -- "$RB/burn" 200 >/dev/null 2>&1 &&
	"$PROF" report -i nores.data --format=json >nores.json &&
	test "$(json_get nores.json "len(p[\"timeline\"]), p[\"off_cpu_s\"]")" = "0 0.0"
'

# A switch-heavy server in miniature (two pairs of threads bouncing a byte
# over pipes, >= 100k switches/s): the kernel drops most switch-out stack
# samples, yet every off-CPU interval is timed (by the in-kernel
# accountant, or the context-switch records without it), so the threads'
# off-CPU time matches their own (wall - thread CPU time).
# pingpong_check DATA OUT: prof's ping+pong off-CPU against theirs (see below).
# Within 10%, plus 2 us a context switch for the switch records: the
# thread's own clock (CLOCK_THREAD_CPUTIME_ID) runs from the moment the
# scheduler picks it, before the switch itself and before the switch-in
# record that ends prof's interval; that part of each switch (1.3-1.4 us
# here, with any recorder, --offcpu-stacks=all included) is CPU by the
# thread's clock and off-CPU by the switch records.  At 250k switches/s it
# is 13% of pingpong's off-CPU time.  The accountant times intervals by
# the thread's own clock (kernel-notes/offcpu-accountant.md).
pingpong_check() {
	truth=$(sed -n "s/^offcpu_ns //p" "$2") &&
	switches=$(($(sed -n "s/^switches_per_s //p" "$2") * 2)) &&
	"$PROF" report -i "$1" --format=json >"$1.json" &&
	got=$(json_get "$1.json" "int(sum(t[\"off_cpu_s\"] for t in p[\"threads\"] if t[\"comm\"] in (\"ping\", \"pong\")) * 1e9)") &&
	say "$(sed -n "s/^switches_per_s //p" "$2") switches/s; off-CPU: own clock $truth ns, prof $got ns" &&
	python3 -c "import sys; t,g,n=map(int,sys.argv[1:]); sys.exit(0 if abs(g-t) <= 0.10*t + 2000*n else 1)" "$truth" "$got" "$switches"
}

test_expect_success 'switch-heavy threads: off-CPU time within 10% of their own, at the defaults' '
	"$PROF" record -o pp.data -- "$RB/pingpong" 2 2 >pp.out 2>pp.err &&
	cat pp.err && pingpong_check pp.data pp.out
'

# Without libbpf prof keeps the switch records: the same check on them.
test_expect_success 'switch-heavy threads: the same with the switch records (PROF_OFFCPU_SWITCH_RECORDS=1)' '
	PROF_OFFCPU_SWITCH_RECORDS=1 "$PROF" record -o pps.data -- "$RB/pingpong" 2 2 >pps.out 2>pps.err &&
	cat pps.err && pingpong_check pps.data pps.out
'

# The stale rule's budget (the in-kernel accountant's): a thread's first
# switch-out of a class 20 ms after its last stale keep is kept always
# when the thread's previous switch-out is 20 ms old, else only as a
# budget of 250 a second per CPU allows (docs/offcpu.md).  40 sleepers
# napping 2 ms are due 2,000 such keeps a second, beyond what this
# machine's CPUs hold: some must be refused, and the budget must pay for
# no more than it holds over the recording (250 a second per CPU, and
# one second's worth saved at the start).  Counts, not estimates: no
# sampling decides them.  The header also gives the program's own time
# in their ~30,000 switch-outs (each run timed).  The
# sleepers' sleep must still be placed on their stacks, nearly all of it
# in their naps: each thread's first switch-out of each class is kept,
# and ~8 a second at random.
test_expect_success 'the stale rule'"'"'s budget: refuses beyond it, never pays more, sleep still placed' '
	t0=$(date +%s) &&
	"$PROF" record -o budget.data -- sh -c "for i in \$(seq 40); do \"$RB/sleeper\" 1500 2 & done; wait" \
		>budget.out 2>budget.err &&
	t1=$(date +%s) && cat budget.err &&
	"$PROF" report -i budget.data --header >budget.hdr &&
	if grep -q "^# off_cpu_time: timed in the kernel" budget.hdr
	then
		sed -n "s/^# off_cpu_stale_budget: //p" budget.hdr >budget.n &&
		read paid refused per_cpu <budget.n &&
		cpus=$(getconf _NPROCESSORS_CONF) &&
		say "stale keeps paid by the budget $paid, refused $refused; $per_cpu a second on $cpus CPUs for $((t1 - t0 + 1)) s" &&
		test "$refused" -gt 0 && test "$paid" -gt 0 &&
		test "$paid" -le $((per_cpu * cpus * (t1 - t0 + 2))) &&
		sed -n "s/^# off_cpu_cost: prof.s BPF programs ran in \([0-9]*\) switch-outs.* \([0-9.]*\) s in all.*/\1 \2/p" \
			budget.hdr >budget.cost &&
		read runs secs <budget.cost && say "the program timed itself in $runs switch-outs: $secs s" &&
		test "$runs" -gt 1000 && awk -v s="$secs" "BEGIN { exit !(s > 0) }"
	else
		echo "# no in-kernel accountant here: no budget"
	fi &&
	"$PROF" report -i budget.data --format=folded --metric=sleep >budget.folded &&
	awk "/^sleeper;/ { t += \$NF; if (/;sleep_a_while;/) s += \$NF } END { print s, t; exit !(t > 0 && s >= 0.9 * t) }" budget.folded
'

# prof's own time in the switch (src/perf/bpf/owntime.h): the
# accountant's program runs with interrupts off, and a CPU sample that
# falls due meanwhile would be taken in the next thread's
# finish_task_switch.  The events per CPU of an attach as root find those
# samples by their due time and drop them; the header counts them (N)
# beside the programs' time in all (S).  A CPU's sampling timer falls due
# once a period, at times the switches do not know, so N is at most a
# sum of independent trials with mean S x 999: above S x 999 + 6 sqrt(it)
# + 6 by chance less than once in 10^9, and that bound catches a test
# that drops samples it should not.  One that drops none: where the mean
# is 40 or more, N = 0 has a chance of e^-40 even if only half the
# samples are taken at all (a CPU left idle takes none: exclude_idle),
# so N must then be positive; on a machine fast enough to make the mean
# smaller, only the bound is checked.  With the Python reader's program
# on the events and with the plain one (--no-python).
own_samples_check() {
	sed -n "s/^# off_cpu_cost: .* \([0-9.]*\) s in all.* \([0-9]*\) were found by their due time.*/\1 \2/p" \
		"$1.hdr" >"$1.own" &&
	read secs found <"$1.own" &&
	say "prof's programs inside the switches: $secs s; $found CPU samples found due then, left out" &&
	awk -v s="$secs" -v n="$found" "BEGIN { m = s * 999; print \"mean at most\", m;
		exit !(n <= m + 6 * sqrt(m) + 6 && (m < 40 || n > 0)) }"
}
if [ "$(id -u)" = 0 ]; then
	for opt in "" --no-python; do
		test_expect_success "prof's own samples in the switch are found and left out (-p ${opt:-with the Python reader})" '
			"$RB/pingpong" 4 2 >own.out &
			app=$! &&
			sleep 0.5 &&
			"$PROF" record -q -F 999 $opt -o own$opt.data -p $app -d 2 2>own.err;
			st=$? && wait $app; cat own.err && test $st = 0 &&
			"$PROF" report -i own$opt.data --header >own$opt.data.hdr &&
			if grep -q "^# off_cpu_time: timed in the kernel" own$opt.data.hdr
			then
				if grep -q "were found by their due time" own$opt.data.hdr
				then
					own_samples_check own$opt.data
				else
					echo "# the kernel'"'"'s BTF does not place a sample'"'"'s due time: nothing to check"
				fi
			else
				echo "# no in-kernel accountant here: nothing taken out"
			fi
		'
	done
else
	test_skip "prof's own samples in the switch are found and left out" "needs root (events per CPU)"
fi

# Every switch-out's own stack (--offcpu-stacks=all) is what overflows a
# tiny ring: the sampled default keeps one in 61 or so.  The switch
# records (which time the intervals in this mode) have their own ring,
# which -m does not shrink; a reader starved by the tests beside it lost
# 415,817 of them once (load 3-4), and the run is then recorded again
# (three tries), since what is judged here is the stack ring.
tiny_ring_record() {
	for _ in 1 2 3; do
		"$PROF" record -m 16 --offcpu-stacks=all -o ppm.data -- "$RB/pingpong" 2 2 >ppm.out 2>ppm.err &&
		cat ppm.err || return 1
		grep -q "context-switch records lost" ppm.err || return 0
		say "context-switch records lost: again"
	done
	return 1
}

test_expect_success 'tiny rings (-m 16): stacks lost are counted and charged to [stack lost], time still right' '
	tiny_ring_record && pingpong_check ppm.data ppm.out &&
	n=$(sed -n "s/.*warning: \([0-9]*\) off-CPU stacks lost.*charged to \[stack lost\]/\1/p" ppm.err) &&
	test "${n:-0}" -gt 0 &&
	"$PROF" report -i ppm.data --format=folded --metric=off-cpu >ppm.folded &&
	grep -E "^(ping|pong);\[stack lost\] [0-9]+$" ppm.folded &&
	"$PROF" report -i ppm.data --format=folded --metric=sleep >ppm-sleep.folded &&
	grep -q "^ping;\[stack lost\] " ppm-sleep.folded
'

# A fresh machine has no tracefs mounted: as root prof mounts it, as perf
# does.  Tried in a private mount namespace so the machine's state stays.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	test_expect_success 'tracefs unmounted: prof mounts it and records off-CPU stacks' '
		unshare -m sh -c "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null;
			! test -d /sys/kernel/tracing/events || exit 3
			\"\$1\" record -o mnt.data -- \"\$2\" 300 >/dev/null 2>mnt.err || exit 1
			test -d /sys/kernel/tracing/events" sh "$PROF" "$RB/sleeper" &&
		! grep -q "no off-CPU stacks" mnt.err &&
		"$PROF" report -i mnt.data --format=json --metric=sleep >mnt.json &&
		sl=$(json_get mnt.json "p[\"sleep_s\"]") &&
		say "sleep_s after mounting tracefs: $sl" &&
		python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.2 else 1)" "$sl"
	'
else
	test_skip 'tracefs unmounted: prof mounts it' 'needs root and unshare -m'
fi

# As nobody (paranoid 2): tracefs is root-only and raw tracepoint data
# needs CAP_PERFMON, so off-CPU is unavailable: said once, CPU samples go on.
# nobody runs copies (nobody_dir): the checkout may be out of its reach.
# At paranoid 3 nobody may not record at all (t8040 covers that).
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
   [ "$paranoid" -le 2 ] && nobody_dir "$PROF" "$RB/burn"; then
	test_expect_success 'unprivileged: says once why there is no off-CPU data, still samples CPU' '
		(cd "$NOBODY_DIR/out" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
			../prof record -o u.data -- ../burn 200 >/dev/null 2>err);
		st=$?; cat "$NOBODY_DIR/out/err";
		n=$(grep -c "no off-CPU stacks" "$NOBODY_DIR/out/err");
		samples=$(sed -n "s/^prof record: \([0-9]*\) samples.*/\1/p" "$NOBODY_DIR/out/err");
		test $st = 0 && test "$n" = 1 && test "${samples:-0}" -gt 20
	'
else
	test_skip 'unprivileged: says once why there is no off-CPU data' "needs root, setpriv, user nobody and perf_event_paranoid <= 2 (it is $paranoid)"
fi

test_done

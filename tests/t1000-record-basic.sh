#!/bin/bash
# t1000-record-basic - `prof record`: launching a command (output pass-through,
# exit status, signals), the error paths (missing command, missing pid,
# unsupported event, bad stack size) and attaching to a running process with
# -p/-d while it keeps running.
. "$(dirname "$0")/lib/test-lib.sh"

test_expect_success '--help lists every option, and records nothing' '
	"$PROF" record --help >out &&
	for o in -o -F -e -g --stack-size --unwinder -m -p -d -q --offcpu-stacks; do
		check_contains out " $o" || return 1
	done &&
	test ! -e prof.data
'

test_expect_failure_exit 'stack size over the u16 record limit is refused' 2 '
	"$PROF" record --stack-size 70000 -- true 2>err; st=$?
	check_contains err "u16" >&2; exit $st
'

test_expect_failure_exit 'unknown event is a usage error' 2 '
	"$PROF" record -e bogus -- true
'

require_perf_events

test_expect_success 'launch: output passes through and the summary line is printed' '
	"$PROF" record -o out.data -- sh -c "echo to-stdout; echo to-stderr >&2" >out 2>err &&
	check_contains out "^to-stdout$" &&
	check_contains err "^to-stderr$" &&
	check_contains err "^prof record: [0-9]* samples\{0,1\} ([0-9]* lost, [0-9.]*% fully unwound) in [0-9]* threads\{0,1\} of [0-9]* process\(es\)\{0,1\}\(, off-CPU time in [0-9]* threads\{0,1\} of [0-9]* process\(es\)\{0,1\}\)\{0,1\}; [0-9]* KiB written to out.data$" &&
	test -s out.data
'

# The summary counts what the file holds: the threads (tasks: a child's
# identities before and after its exec are one thread) and processes with
# CPU samples, and those with off-CPU time, as the report of the file
# lists them (not the processes seen, which include every process that
# forked or exec'd without being sampled).  Two busy children of a
# shell that waits: both are sampled whatever the sampling does (300 ms
# of CPU each), the counts are compared, not predicted: no false-failure
# chance from sampling.
test_expect_success 'the summary counts the threads and processes the file has samples of' '
	"$PROF" record -o cnt.data -- sh -c "\"$BUILD_DIR/tests/resources/burn\" 300 & \"$BUILD_DIR/tests/resources/burn\" 300 & wait" >/dev/null 2>cnt.err &&
	cat cnt.err &&
	line=$(grep "^prof record: " cnt.err) &&
	for m in cpu off-cpu; do
		"$PROF" report -i cnt.data --format=json --metric=$m >cnt.$m.json || return 1
	done &&
	counts() {	# json: "threads processes" with weight under the metric
		python3 -c "import json,sys; ps=[p for p in json.load(open(sys.argv[1]))[\"processes\"] if p[\"threads\"]]; print(len({(p[\"pid\"], t[\"tid\"]) for p in ps for t in p[\"threads\"]}), len(ps))" "$1"
	} &&
	read -r ct cp <<<"$(counts cnt.cpu.json)" &&
	read -r ot op <<<"$(counts cnt.off-cpu.json)" &&
	say "report: cpu $ct threads of $cp processes, off-cpu $ot of $op" &&
	test "$cp" -ge 2 &&
	echo "$line" | grep -q " in $ct threads\{0,1\} of $cp process\(es\)\{0,1\}[,;]" &&
	if grep -q "no off-CPU stacks" cnt.err; then :; else
		echo "$line" | grep -q ", off-CPU time in $ot threads\{0,1\} of $op process\(es\)\{0,1\};"
	fi
'

test_expect_success 'launch: a busy command gets samples' '
	"$PROF" record -o busy.data -- sh -c "i=0; while [ \$i -lt 1000000 ]; do i=\$((i+1)); done" 2>err &&
	n=$(sed -n "s/^prof record: \([0-9]*\) samples.*/\1/p" err) &&
	test "$n" -gt 20 || { cat err; false; }
'

test_expect_failure_exit 'launch: the command exit status passes through' 7 '
	"$PROF" record -q -o st.data -- sh -c "exit 7"
'

test_expect_failure_exit 'launch: killed by a signal exits 128+signal' 137 '
	"$PROF" record -q -o sig.data -- sh -c "kill -9 \$\$"
'

test_expect_success '-q prints nothing of its own' '
	"$PROF" record -q -o q.data -- true 2>err &&
	test ! -s err
'

test_expect_failure_exit 'missing command: one line, exit 127' 127 '
	"$PROF" record -o missing.data -- no-such-command-xyz 2>err; st=$?
	one_error err "cannot run .no-such-command-xyz.: No such file or directory" >&2 &&
	test ! -e missing.data || exit 99
	exit $st
'

test_expect_failure_exit 'missing pid: exit 2' 2 '
	"$PROF" record -o nopid.data -p 2147483 -d 1 2>err; st=$?
	check_contains err "^prof record: error: no process with pid 2147483$" >&2 || exit 99
	test ! -e nopid.data || exit 98
	exit $st
'

if "$PROF" record -q -e cycles -o cyc.data -- true 2>cycles.err; then
	test_skip 'unsupported event message' 'this machine has a hardware PMU'
else
	test_expect_success 'unsupported event: clear message, exit 2' '
		"$PROF" record -e cycles -- true 2>err; test $? = 2 &&
		check_contains err "event .cycles. is not supported here.*try -e cpu-clock"
	'
fi

test_expect_success 'attach -p with -d: samples, target keeps running' '
	sh -c "while :; do :; done" &
	pid=$! &&
	"$PROF" record -o att.data -p $pid -d 1 2>err; st=$?
	alive=no; kill -0 $pid 2>/dev/null && alive=yes
	kill $pid; wait $pid 2>/dev/null
	test $st = 0 && test $alive = yes &&
	n=$(sed -n "s/^prof record: \([0-9]*\) samples.*/\1/p" err) &&
	test "$n" -gt 0 || { cat err; false; }
'

test_expect_success 'attach: SIGINT stops recording, target keeps running' '
	sh -c "while :; do :; done" &
	pid=$!
	"$PROF" record -o int.data -p $pid 2>err &
	rec=$!
	wait_recording $rec || kill -9 $rec
	sleep 0.3; kill -INT $rec; wait $rec; st=$?
	alive=no; kill -0 $pid 2>/dev/null && alive=yes
	kill $pid; wait $pid 2>/dev/null
	test $st = 0 && test $alive = yes && check_contains err "samples"
'

test_expect_success '--call-graph fp and none record too' '
	"$PROF" record -q --call-graph fp -o fp.data -- sh -c "i=0; while [ \$i -lt 50000 ]; do i=\$((i+1)); done" &&
	"$PROF" record -q --call-graph none -o none.data -- sh -c "i=0; while [ \$i -lt 50000 ]; do i=\$((i+1)); done" &&
	test -s fp.data && test -s none.data
'

if ! command -v cc >/dev/null; then
	test_skip 'record then report shows DWARF-unwound stacks' 'no C compiler'
else
	test_expect_success 'record then report shows DWARF-unwound stacks' '
		cat >spin.c <<-\EOC &&
		volatile double sink;
		__attribute__((noinline)) void inner(void) { for (long i = 0; i < 100000000; i++) sink += i; }
		__attribute__((noinline)) void mid(void) { inner(); }
		int main(void) { mid(); return 0; }
		EOC
		cc -O1 -g -fomit-frame-pointer -o spin spin.c &&
		"$PROF" record -q -o spin.data -- ./spin &&
		"$PROF" report -i spin.data --format=folded >folded &&
		check_contains folded "^spin;.*main;mid;inner [0-9]*$"
	'
fi

if ! command -v cc >/dev/null; then
	test_skip 'attach covers threads created after attaching' 'no C compiler'
else
	test_expect_success 'attach covers threads created after attaching' '
		cat >thr.c <<-\EOC &&
		#include <pthread.h>
		#include <unistd.h>
		#include <sys/prctl.h>
		volatile long sink;
		static void *spin(void *name) { prctl(PR_SET_NAME, name); for (;;) sink++; return 0; }
		int main(void) {
			pthread_t t;
			pthread_create(&t, 0, spin, "early");
			sleep(1);	/* prof attaches meanwhile */
			pthread_create(&t, 0, spin, "late");
			pause();
		}
		EOC
		cc -O1 -g -pthread -o thr thr.c &&
		{ ./thr & pid=$!; } &&
		sleep 0.3 &&
		"$PROF" record -q -o thr.data -p $pid -d 2; st=$?
		kill $pid; wait $pid 2>/dev/null
		test $st = 0 &&
		"$PROF" report -i thr.data --format=folded >folded &&
		check_contains folded "^early;.*spin [0-9]*$" &&
		check_contains folded "^late;.*spin [0-9]*$"
	'
fi

test_expect_success 'a write error stops recording with one line, the command finishes' '
	# 1 KiB file limit and a ~3 s command: a flush while it runs must fail
	(trap "" XFSZ; ulimit -f 1
	 "$PROF" record -o small.data -- sh -c "i=0; while [ \$i -lt 3000000 ]; do i=\$((i+1)); done; echo done-running") >out 2>err
	check_contains out "^done-running$" &&
	one_error err "cannot write .small.data.*recording stopped"
'

test_done

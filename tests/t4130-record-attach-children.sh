#!/bin/bash
# t4130-record-attach-children - `prof record -p PID --children`: the
# descendants that already run are attached too (samples and resources
# per process), and children born during the recording are followed
# with or without --children; with the events per CPU (root) and per
# thread (--per-thread, or a user who may not record the machine).  The workload is a shell with busy
# children, like a server and its workers: one child (and its own child)
# run before prof attaches, one more is started once prof's threads
# exist (its events are on by then: no guess at how long attaching takes
# on a loaded machine).  "Sampled" asks for one sample of a burn that runs
# for ~3 s: at load average 30 it still gets ~200 ms of CPU, ~200 timer
# samples, none with P = e^-200 (Poisson; tests/README.md).
. "$(dirname "$0")/lib/test-lib.sh"

RB="$BUILD_DIR/tests/resources"
require_perf_events

# A family: sh -> burn (old), sh -> sh -> burn (old grandchild), and after
# a "go" file appears, sh -> burn (new).  Prints nothing; pids via /proc.
start_family() {
	sh -c "\"$RB/burn\" 60000 >/dev/null &
	       sh -c \"\\\"$RB/burn\\\" 60000 >/dev/null & wait\" &
	       while test ! -e go; do sleep 0.1; done
	       \"$RB/burn\" 60000 >/dev/null &
	       wait" &
	parent=$!
	sleep 1
}
descendants() {	# every descendant of $1, parents first
	for k in $(cat /proc/$1/task/*/children 2>/dev/null); do
		echo $k
		descendants $k
	done
}
stop_family() {
	kill $(descendants $parent) $parent 2>/dev/null; wait $parent 2>/dev/null
	rm -f go
}
# "pid comm samples cpu_s" per process of a JSON report
per_process() {
	python3 -c "
import json, sys
for p in json.load(open(sys.argv[1]))['processes']:
    print(p['pid'], p['comm'], p['samples'], round(p['cpu_user_s'] + p['cpu_sys_s'], 2))
" "$1"
}
record_family() {	# output, extra options
	start_family
	old=$(echo $(descendants $parent))
	"$PROF" record -o "$1" -p $parent $2 -d 3 2>"$1.err" &
	rec=$!
	wait_recording $rec
	touch go
	wait $rec; st=$?
	all=$(echo $(descendants $parent))
	stop_family
	cat "$1.err"
	say "parent $parent, running before: $old; at the end: $all"
	test "$st" = 0 && "$PROF" report -i "$1" --format=json >"$1.json" && per_process "$1.json" >"$1.procs" &&
	cat "$1.procs"
}
sampled() {	# procs-file pid: that process has samples and CPU time
	awk -v p="$2" '$1 == p && $3 > 0 && $4 > 0 { ok = 1 } END { exit !ok }' "$1"
}
listed() {
	awk -v p="$2" '$1 == p { ok = 1 } END { exit !ok }' "$1"
}

# the old descendants (at least 2) and the new ones sampled; $1: the record
children_followed() {
	n=0 && for p in $old; do
		if sampled $1.procs $p; then n=$((n + 1)); fi
	done &&
	say "$n of the old descendants sampled" &&
	test $n -ge 2 &&
	new=$(for p in $all; do case " $old " in *" $p "*) ;; *) echo $p;; esac; done) &&
	say "born during the recording: $new" &&
	for p in $new; do sampled $1.procs $p || return 1; done &&
	test -n "$new" &&
	np=$(sed -n "s/.* \([0-9]*\) processes.*/\1/p" $1.err) &&
	say "summary: $np processes" && test "$np" -ge 4
}
# none of the old descendants listed, the new ones sampled
only_new_followed() {
	test -n "$old" &&
	for p in $old; do ! listed $1.procs $p || return 1; done &&
	new=$(for p in $all; do case " $old " in *" $p "*) ;; *) echo $p;; esac; done) &&
	for p in $new; do sampled $1.procs $p || return 1; done
}

# As root the events are per CPU (the other processes' records dropped by
# prof), with --per-thread per thread, as perf opens them: the same answer.
for how in "per CPU" "per thread"; do
	opt= && [ "$how" = "per thread" ] && opt=--per-thread
	test_expect_success "--children ($how): the running descendants are sampled, per process" '
		record_family kids$opt.data "--children $opt" &&
		children_followed kids$opt.data
	'
	test_expect_success "without --children ($how): only new children are followed" '
		record_family alone$opt.data "$opt" &&
		only_new_followed alone$opt.data
	'
	if [ "$(id -u)" = 0 ]; then
		test_expect_success "the recording says how it attached ($how)" '
			"$PROF" report -i kids$opt.data --header >kids$opt.hdr &&
			check_contains kids$opt.hdr "^# attach_events: $how"
		'
	fi
done

# Per CPU, the machine's other processes run on the same events: a busy
# one beside the family is not in the recording.
test_expect_success 'per CPU: a busy process outside the family is left out' '
	"$RB/burn" 60000 >/dev/null &
	other=$! &&
	record_family beside.data "--children" &&
	kill $other && wait $other 2>/dev/null;
	! listed beside.data.procs $other &&
	children_followed beside.data
'

# Without the right to record the machine, attach is per thread.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] &&
   nobody_dir "$PROF" "$RB/burn"; then
	test_expect_success 'as a user without CAP_PERFMON: per thread' '
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$NOBODY_DIR/burn" 60000 >/dev/null &
		mine=$! &&
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$NOBODY_DIR/prof" record -q -o "$NOBODY_DIR/out/n.data" -p $mine -d 1 2>n.err;
		st=$? && kill $mine; cat n.err && test $st = 0 &&
		"$PROF" report -i "$NOBODY_DIR/out/n.data" --header >n.hdr &&
		check_contains n.hdr "^# attach_events: per thread" &&
		"$PROF" report -i "$NOBODY_DIR/out/n.data" --format=json >n.json && per_process n.json >n.procs &&
		sampled n.procs $mine
	'
else
	test_skip 'as a user without CAP_PERFMON: per thread' "needs root, setpriv and perf_event_paranoid >= 1"
fi

test_expect_failure_exit '--per-thread without -p is a usage error' 2 '
	"$PROF" record --per-thread -o x.data -- true
'

test_expect_failure_exit '--children without -p is a usage error' 2 '
	"$PROF" record --children -o x.data -- true
'

test_done

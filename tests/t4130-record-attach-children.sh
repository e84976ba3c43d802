#!/bin/bash
# t4130-record-attach-children - `prof record -p PID --children`: the
# descendants that already run are attached too (samples and resources
# per process), and children born during the recording are followed
# with or without --children.  The workload is a shell with busy
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

test_expect_success '--children: the running descendants are sampled, per process' '
	record_family kids.data --children &&
	n=0 && for p in $old; do
		if sampled kids.data.procs $p; then n=$((n + 1)); fi
	done &&
	say "$n of the old descendants sampled" &&
	test $n -ge 2 &&
	new=$(for p in $all; do case " $old " in *" $p "*) ;; *) echo $p;; esac; done) &&
	say "born during the recording: $new" &&
	for p in $new; do sampled kids.data.procs $p || exit 1; done &&
	test -n "$new" &&
	np=$(sed -n "s/.* \([0-9]*\) processes.*/\1/p" kids.data.err) &&
	say "summary: $np processes" && test "$np" -ge 4
'

test_expect_success 'without --children: only new children are followed' '
	record_family alone.data "" &&
	test -n "$old" &&
	for p in $old; do ! listed alone.data.procs $p || exit 1; done &&
	new=$(for p in $all; do case " $old " in *" $p "*) ;; *) echo $p;; esac; done) &&
	for p in $new; do sampled alone.data.procs $p || exit 1; done
'

test_expect_failure_exit '--children without -p is a usage error' 2 '
	"$PROF" record --children -o x.data -- true
'

test_done

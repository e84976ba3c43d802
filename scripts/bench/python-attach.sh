#!/bin/bash
# python-attach.sh - where the cost of attaching to a many-threaded CPython
# program goes.  tests/workloads/pysplit.py --seconds SECS THREADS (THREADS
# spinning threads that sleep 2 ms between bursts, and the main thread: 51
# threads taking turns at the GIL, ~12k context switches a second) runs
# REPEAT times per configuration, interleaved; once all its threads exist
# (so every thread gets its own events, none inherited), one of these
# attaches for the rest of the run:
#   bare            nothing
#   prof            prof record -F 999 -p PID (CPU samples with Python
#                   frames, off-CPU events, the /proc sampler)
#   nopy            the same with --no-python
#   nores           with --no-resources (CPU samples and Python frames only)
#   nores-nopy      with --no-resources --no-python (CPU samples only)
#   thread          prof record -F 999 -p PID --per-thread (an event per
#                   thread, as perf opens them; prof's default as root is
#                   per CPU)
#   perf            perf record -F 999 --call-graph dwarf -p PID
# Per configuration, medians over the runs: the spinning loops per second
# (of the whole run, the ~0.3 s before the attach included) and its ratio
# to bare; the program's user and system CPU seconds (the events' work at
# every context switch of a thread is system time of that thread) and
# its context switches a second (wait4's rusage, all threads); the
# recorder's CPU seconds; and, from the first round, the perf events the
# recorder holds per thread of the program.  PY= picks the interpreter.
SECS=${SECS:-10}
THREADS=${THREADS:-50}
. "$(dirname "$0")/lib.sh"
bench_build
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)')}
APP="$TOP/tests/workloads/pysplit.py"
CONFIGS=${CONFIGS:-bare prof thread nopy nores nores-nopy perf}
declare -A loops usr sys csw rcpu fds

recorder() {	# config pid: the recorder's command line in cmd
	case $1 in
	perf) cmd=(perf record -q -F 999 --call-graph dwarf -o "$BENCH_TMP/pa-perf.data" -p "$2") ;;
	prof) cmd=("$PROF" record -q -F 999 -o "$BENCH_TMP/pa.data" -p "$2") ;;
	thread) cmd=("$PROF" record -q -F 999 --per-thread -o "$BENCH_TMP/pa.data" -p "$2") ;;
	nopy) cmd=("$PROF" record -q -F 999 --no-python -o "$BENCH_TMP/pa.data" -p "$2") ;;
	nores) cmd=("$PROF" record -q -F 999 --no-resources -o "$BENCH_TMP/pa.data" -p "$2") ;;
	nores-nopy) cmd=("$PROF" record -q -F 999 --no-resources --no-python -o "$BENCH_TMP/pa.data" -p "$2") ;;
	esac
}

one() {	# config round
	local pid rs rec= cmd
	"$RUNSTAT" "$PY" "$APP" --seconds "$SECS" "$THREADS" >"$BENCH_TMP/pa.json" 2>/dev/null 3>"$BENCH_TMP/pa.run" &
	rs=$!
	for _ in $(seq 100); do
		pid=$(pgrep -P $rs | head -1)
		[ -n "$pid" ] && [ "$(ls /proc/"$pid"/task 2>/dev/null | wc -l)" -gt "$THREADS" ] && break
		sleep 0.02
	done
	if [ "$1" != bare ]; then
		recorder "$1" "$pid"
		"$RUNSTAT" "${cmd[@]}" >/dev/null 2>&1 3>"$BENCH_TMP/pa.rec" &
		rec=$!
		if [ "$2" = 1 ]; then
			sleep 2
			fds[$1]=$(awk -v n="$(ls /proc/"$pid"/task | wc -l)" -v f="$(ls -l /proc/$(pgrep -n -P $rec)/fd 2>/dev/null |
				grep -c perf_event)" 'BEGIN {printf "%.1f", f / n}')
		fi
	fi
	wait $rs
	[ -n "$rec" ] && wait $rec && rcpu[$1]+="$(awk '{print $1}' "$BENCH_TMP/pa.rec") "
	loops[$1]+="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["loops"] / float(sys.argv[2]))' \
		"$BENCH_TMP/pa.json" "$SECS") "
	read -r _ w _ u s v iv <"$BENCH_TMP/pa.run"
	usr[$1]+="$u "
	sys[$1]+="$s "
	csw[$1]+="$(awk -v w="$w" -v v="$v" -v iv="$iv" 'BEGIN {print (v + iv) / w}') "
}

load0=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq "$REPEAT"); do
	for c in $CONFIGS; do
		probes_gone
		one "$c" "$i"
	done
done
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
printf '| %-10s | %9s | %6s | %9s | %9s | %11s | %12s | %16s |\n' config "loops/s" "/ bare" "user s" "sys s" "switches/s" "recorder s" "events / thread"
printf '| %-10s | %9s | %6s | %9s | %9s | %11s | %12s | %16s |\n' --- --- --- --- --- --- --- ---
for c in $CONFIGS; do
	printf '| %-10s | %9.0f | %6s | %9.2f | %9.2f | %11.0f | %12s | %16s |\n' "$c" "$(m "${loops[$c]}")" \
		"$(ratio "$(m "${loops[$c]}")" "$(m "${loops[bare]}")")" "$(m "${usr[$c]}")" "$(m "${sys[$c]}")" \
		"$(m "${csw[$c]}")" "$([ "$c" = bare ] && echo - || m "${rcpu[$c]}")" "${fds[$c]:--}"
done
echo "# $PY, $THREADS threads, ${SECS}s x $REPEAT; load average $load0 at start, $(cut -d' ' -f1 /proc/loadavg) at end" >&2

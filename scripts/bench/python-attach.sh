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
#
# MODE=windows: runs apart drift by ~5% on this VM, too much to tell a 2%
# cost, so one long run of the program is cut into WINDOW-second windows
# (default 4) instead: a bare window, then one with a configuration's
# recorder attached for WINDOW seconds (the command lines above with -d
# WINDOW; perf's bounded by `sleep WINDOW`), then bare again, and so on,
# each configuration once per round, ROUNDS rounds (default 12; CONFIGS as
# above, bare implied).  A recorded window's figure is its loops per second
# over the mean of the two bare windows around it, so that drift slower
# than a window cancels.  The loops are the program's own count at its own
# time.monotonic(), written on SIGUSR1 (pysplit.py --progress): the main
# thread may wait ~0.2 s for the GIL before it answers, so the window's
# ends are taken where the program stamped them, not when they were asked
# for.  The bench waits for the answer before it starts a recorder, so a
# recorded window holds the recorder's whole life (attach and exit
# included) and up to a few tenths of a second of bare time.  The order of
# the configurations rotates each round, so that none always follows the
# same one (perf's data file, written out after it stops, say).  Per
# configuration: the median ratio with its distribution-free 95% interval
# (lib.sh's median_ci; a 2% cost is resolved when the interval lies wholly
# on one side of 0.98), the median recorder CPU seconds per window, and
# the number of windows.
SECS=${SECS:-10}
THREADS=${THREADS:-50}
MODE=${MODE:-runs}
WINDOW=${WINDOW:-4}
ROUNDS=${ROUNDS:-12}
. "$(dirname "$0")/lib.sh"
bench_build
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)')}
APP="$TOP/tests/workloads/pysplit.py"
CONFIGS=${CONFIGS:-bare prof thread nopy nores nores-nopy perf}
declare -A loops usr sys csw rcpu fds ratios

recorder() {	# config pid [secs]: the recorder's command line in cmd, for secs seconds if given
	case $1 in
	perf) cmd=(perf record -q -F 999 --call-graph dwarf -o "$BENCH_TMP/pa-perf.data" -p "$2") ;;
	prof) cmd=("$PROF" record -q -F 999 -o "$BENCH_TMP/pa.data" -p "$2") ;;
	thread) cmd=("$PROF" record -q -F 999 --per-thread -o "$BENCH_TMP/pa.data" -p "$2") ;;
	nopy) cmd=("$PROF" record -q -F 999 --no-python -o "$BENCH_TMP/pa.data" -p "$2") ;;
	nores) cmd=("$PROF" record -q -F 999 --no-resources -o "$BENCH_TMP/pa.data" -p "$2") ;;
	nores-nopy) cmd=("$PROF" record -q -F 999 --no-resources --no-python -o "$BENCH_TMP/pa.data" -p "$2") ;;
	esac
	if [ -n "${3:-}" ]; then
		if [ "$1" = perf ]; then cmd+=(-- sleep "$3"); else cmd+=(-d "$3"); fi
	fi
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

m() { echo "$1" | tr ' ' '\n' | grep . | median; }	# words -> their median

# MODE=windows: the one long run, which rewrites $PROG with "TIME LOOPS"
# at each SIGUSR1
PROG="$BENCH_TMP/pa.progress"
APID=
gone() { echo "python-attach.sh: the program ($APID) is gone or does not answer" >&2; exit 1; }
stop_app() { [ -n "$APID" ] && kill "$APID" 2>/dev/null; wait 2>/dev/null; }

# snap: the program's "TIME LOOPS" now, in SNAP (it renames the file into
# place, so a file that is there is whole)
snap() {
	rm -f "$PROG"
	kill -USR1 "$APID" 2>/dev/null || gone
	for _ in $(seq 3000); do
		[ -s "$PROG" ] && break
		sleep 0.01
	done
	[ -s "$PROG" ] || gone
	read -r SNAP <"$PROG"
}

# window bare|CONFIG: one window, from where the last one ended; its loops a
# second in W_RATE, the recorder's CPU seconds in W_CPU
window() {
	local s0=$SNAP cmd
	W_CPU=-
	if [ "$1" = bare ]; then
		sleep "$WINDOW"
	else
		probes_gone
		recorder "$1" "$APID" "$WINDOW"
		"$RUNSTAT" "${cmd[@]}" >/dev/null 2>"$BENCH_TMP/pa.err" 3>"$BENCH_TMP/pa.rec" ||
			echo "# $1: the recorder failed: $(tail -1 "$BENCH_TMP/pa.err")" >&2
		W_CPU=$(awk '{print $1}' "$BENCH_TMP/pa.rec")
		# now, so that its dirty pages are dropped, not written back in the next window
		rm -f "$BENCH_TMP/pa.data" "$BENCH_TMP/pa-perf.data"
	fi
	snap
	W_RATE=$(awk -v a="$s0" -v b="$SNAP" 'BEGIN {split(a, x, " "); split(b, y, " ");
		printf "%.1f", (y[2] - x[2]) / (y[1] - x[1])}')
}

windowed() {
	local cfgs=() c k i round prev cr cpu r bare load0
	for c in $CONFIGS; do [ "$c" = bare ] || cfgs+=("$c"); done
	k=${#cfgs[@]}
	trap stop_app EXIT
	trap 'exit 130' INT TERM
	# --seconds bounds the run should this script die without its trap
	"$PY" "$APP" --progress "$PROG" --seconds $((ROUNDS * (2 * k + 1) * (WINDOW + 60) + 60)) "$THREADS" \
		>/dev/null 2>&1 &
	APID=$!
	for _ in $(seq 500); do
		[ "$(ls /proc/"$APID"/task 2>/dev/null | wc -l)" -gt "$THREADS" ] && break
		sleep 0.02
	done
	[ "$(ls /proc/"$APID"/task 2>/dev/null | wc -l)" -gt "$THREADS" ] || gone
	load0=$(cut -d' ' -f1 /proc/loadavg)
	sleep 1	# the threads past their start
	snap
	window bare
	prev=$W_RATE bare="$W_RATE "
	for round in $(seq "$ROUNDS"); do
		for i in $(seq 0 $((k - 1))); do
			c=${cfgs[(i + round - 1) % k]}
			window "$c"
			cr=$W_RATE cpu=$W_CPU
			window bare
			r=$(awk -v x="$cr" -v a="$prev" -v b="$W_RATE" 'BEGIN {printf "%.4f", 2 * x / (a + b)}')
			ratios[$c]+="$r "
			loops[$c]+="$cr "
			rcpu[$c]+="$cpu "
			echo "# round $round $c: $cr loops/s, bare around $prev and $W_RATE: $r; recorder $cpu s; load $(cut -d' ' -f1 /proc/loadavg)" >&2
			prev=$W_RATE
			bare+="$W_RATE "
		done
	done
	printf '| %-10s | %9s | %-26s | %12s | %7s |\n' config "loops/s" "/ bare, median [95% CI]" "recorder s" windows
	printf '| %-10s | %9s | %-26s | %12s | %7s |\n' --- --- --- --- ---
	printf '| %-10s | %9.0f | %-26s | %12s | %7d |\n' bare "$(m "$bare")" - - "$(wc -w <<<"$bare")"
	for c in "${cfgs[@]}"; do
		printf '| %-10s | %9.0f | %-26s | %12.2f | %7d |\n' "$c" "$(m "${loops[$c]}")" \
			"$(echo "${ratios[$c]}" | tr ' ' '\n' | grep . | median_ci %.3f)" "$(m "${rcpu[$c]}")" \
			"$(wc -w <<<"${ratios[$c]}")"
	done
	echo "# $PY, $THREADS threads, $ROUNDS rounds of ${WINDOW}s windows; load average $load0 at start, $(cut -d' ' -f1 /proc/loadavg) at end" >&2
}

case $MODE in
runs) ;;
windows) windowed; exit ;;
*) echo "python-attach.sh: MODE is runs or windows" >&2; exit 2 ;;
esac

load0=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq "$REPEAT"); do
	for c in $CONFIGS; do
		probes_gone
		one "$c" "$i"
	done
done
printf '| %-10s | %9s | %6s | %9s | %9s | %11s | %12s | %16s |\n' config "loops/s" "/ bare" "user s" "sys s" "switches/s" "recorder s" "events / thread"
printf '| %-10s | %9s | %6s | %9s | %9s | %11s | %12s | %16s |\n' --- --- --- --- --- --- --- ---
for c in $CONFIGS; do
	printf '| %-10s | %9.0f | %6s | %9.2f | %9.2f | %11.0f | %12s | %16s |\n' "$c" "$(m "${loops[$c]}")" \
		"$(ratio "$(m "${loops[$c]}")" "$(m "${loops[bare]}")")" "$(m "${usr[$c]}")" "$(m "${sys[$c]}")" \
		"$(m "${csw[$c]}")" "$([ "$c" = bare ] && echo - || m "${rcpu[$c]}")" "${fds[$c]:--}"
done
echo "# $PY, $THREADS threads, ${SECS}s x $REPEAT; load average $load0 at start, $(cut -d' ' -f1 /proc/loadavg) at end" >&2

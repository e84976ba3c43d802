#!/bin/bash
# switch-prog.sh - what the off-CPU accountant's program costs the threads
# it runs in, as the kernel measures it.  The program runs inside every
# context switch of the recorded threads, where no throughput figure on
# this VM resolves a percent (docs/python.md); kernel.bpf_stats_enabled=1
# has the kernel time each run.  prof record -p attaches to
# tests/workloads/pysplit.py THREADS (default 50: 51 CPython threads
# handing the GIL around, ~16,000 switch-outs a second) for SECS seconds;
# from the recorder's own program fds (/proc/PID/fdinfo: the
# raw-tracepoint program with the most runs is the switch program, and its
# time includes the Python frame reader it tail-calls) the runs and
# nanoseconds between 1 s and SECS-0.5 s give runs a second, ns a run and
# the share of one CPU; the recording's header gives the off-CPU stacks
# the program kept.  With BASE_PROF= (another build) the two alternate,
# ROUNDS times each (default 3).  Needs root.
. "$(dirname "$0")/lib.sh"
bench_build
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)')}
APP="$TOP/tests/workloads/pysplit.py"
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-50}
[ "$(id -u)" = 0 ] || { echo "switch-prog.sh: needs root (BPF statistics, the accountant)" >&2; exit 1; }

# prog_stats PID: "runs ns" of PID's raw-tracepoint program with the most runs
prog_stats() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '
		/^prog_type:/ { rt = ($2 == 17) }	# BPF_PROG_TYPE_RAW_TRACEPOINT
		rt && /^run_time_ns:/ { t = $2 }
		rt && /^run_cnt:/ { if ($2 > n) { n = $2; best = t } }
		END { print n + 0, best + 0 }'
}

# one BUILD: a row "runs/s ns/run cpu% kept/s" for that prof binary
one() {
	local prof=$1 app rec a b
	"$PY" "$APP" --seconds $((SECS + 3)) "$THREADS" >/dev/null &
	app=$!
	sleep 1.5
	"$prof" record -q -F 999 -p $app -d "$SECS" -o "$BENCH_TMP/sp.data" &
	rec=$!
	sleep 1
	a=$(prog_stats $rec)
	sleep "$(awk -v s="$SECS" 'BEGIN { print s - 1.5 }')"
	b=$(prog_stats $rec)
	wait $rec
	wait $app
	kept=$("$prof" report -i "$BENCH_TMP/sp.data" --header 2>/dev/null |
		sed -n 's/.*at the switch-out (BPF) \([0-9]*\).*/\1/p')
	echo "$a $b ${kept:-0}" | awk -v s="$SECS" '{ n = $3 - $1; t = $4 - $2; w = s - 1.5
		printf "%.0f %.0f %.2f %.0f\n", n / w, n ? t / n : 0, t / w / 1e7, $5 / s }'
}

old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
trap 'sysctl -q kernel.bpf_stats_enabled="$old"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
builds="prof"
[ -n "${BASE_PROF:-}" ] && builds="prof base"
printf '| %-5s | %-5s | %-12s | %-8s | %-12s | %s\n' round build "runs a second" "ns a run" "% of a CPU" "stacks kept a second"
for r in $(seq "$ROUNDS"); do
	for b in $builds; do
		p=$PROF
		[ $b = base ] && p=$BASE_PROF
		read -r runs ns cpu kept < <(one "$p")
		printf '| %-5s | %-5s | %-12s | %-8s | %-12s | %s\n' "$r" "$b" "$runs" "$ns" "$cpu" "$kept"
	done
done
echo "# $PY, pysplit.py $THREADS attached for ${SECS}s; load average $load0 at start, $(cut -d' ' -f1 /proc/loadavg) at end" >&2

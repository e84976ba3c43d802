#!/bin/bash
# soak.sh - long system-wide recording under process churn (the long form
# of tests/t1320-*): `prof record -a -F 999` for MINUTES while
# scripts/churn.sh starts PER_MINUTE short-lived processes a minute.
# Every 10 s it logs prof's RSS and the processes alive; at the end it
# prints prof's own figures (CPU, peak RSS, processes seen, address spaces
# alive at once and freed), samples and lost, and checks the file reads
# back.  With --compare it first runs MINUTES at PER_MINUTE/10, then at
# PER_MINUTE, and prints both peaks: memory must follow the live
# processes, not the number that came and went.
#
# usage: scripts/soak.sh [--compare] [MINUTES=60] [PER_MINUTE=1000]
# PROF_ARGS adds record options (PROF_ARGS=--no-resources: no off-CPU).
# Needs root (or perf_event_paranoid <= 0) and the workloads (make check).
set -u
compare=
[ "${1:-}" = --compare ] && compare=1 && shift
minutes=${1:-60}
per_min=${2:-1000}
top=$(cd "$(dirname "$0")/.." && pwd)
prof=${PROF:-$top/prof}	# a copy keeps a long run safe from rebuilds
out=${SOAK_DIR:-$(mktemp -d /tmp/prof-soak.XXXXXX)}
mkdir -p "$out"

rss_of() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# One run: MINUTES of -a at RATE; prints one summary line, logs in $out.
soak_run() {	# name rate
	local name=$1 rate=$2 secs=$((minutes * 60)) pid churn_pid t=0
	PROF_RECORD_STATS=1 "$prof" record -a -F 999 ${PROF_ARGS:-} -d "$secs" -o "$out/$name.data" 2>"$out/$name.err" &
	pid=$!
	"$top/scripts/churn.sh" "$rate" "$secs" >"$out/$name.churn" 2>&1 &
	churn_pid=$!
	: >"$out/$name.rss"
	while kill -0 "$pid" 2>/dev/null; do
		echo "$t $(rss_of "$pid") $(ls -d /proc/[0-9]* 2>/dev/null | wc -l)" >>"$out/$name.rss"
		sleep 10
		t=$((t + 10))
	done
	wait "$pid"
	local st=$?
	wait "$churn_pid"
	local samples lost report_st
	"$prof" report -i "$out/$name.data" --format=json >"$out/$name.json" 2>"$out/$name.report.err"
	report_st=$?
	read -r samples lost < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["samples"], d["lost"])' "$out/$name.json" 2>/dev/null)
	echo "== $name: $minutes min at $rate/min: prof exit $st, report exit $report_st"
	cat "$out/$name.churn"
	grep -h "^prof record:" "$out/$name.err"
	awk 'NR == 1 || $2 > m {m = $2} {last = $2; n = $3 > n ? $3 : n}
	     END {printf "rss: first %s KiB, peak %s KiB, last %s KiB (every 10 s in %s); processes alive at most %s\n", f, m, last, FILENAME, n}
	     NR == 1 {f = $2}' "$out/$name.rss"
	echo "samples ${samples:-?}, lost ${lost:-?}; file $(du -k "$out/$name.data" | cut -f1) KiB"
}

echo "prof soak on $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
if [ -n "$compare" ]; then
	soak_run low $((per_min / 10))
fi
soak_run high "$per_min"
echo "logs in $out"

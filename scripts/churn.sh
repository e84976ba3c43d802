#!/bin/bash
# churn.sh - short-lived processes at a steady rate, for the system-wide
# churn test (tests/t1320-*) and soak (scripts/soak.sh).
# usage: churn.sh PER_MINUTE SECONDS [WORK_SECONDS=0.02]
# Each process is the split workload running WORK_SECONDS of CPU (so it
# is sampled, maps libraries and exits); at most 64 run at once.
set -u
per_min=${1:?per minute}
secs=${2:?seconds}
work=${3:-0.02}
top=$(cd "$(dirname "$0")/.." && pwd)
split="$top/tests/workloads/bin/split"
[ -x "$split" ] || { echo "churn.sh: build the workloads first (make check builds them)" >&2; exit 2; }
# The loop forks only the workload: time from $EPOCHREALTIME, sleep as a
# read timeout on a pipe nobody writes, and the n-th process starts at
# n * 60 / PER_MINUTE s (fork+exec costs tens of ms on a loaded machine:
# a fixed sleep would cut the rate).
exec {nap}<> <(:)
start=${EPOCHREALTIME/./}
n=0
while :; do
	now=${EPOCHREALTIME/./}
	elapsed=$((now - start))
	[ "$elapsed" -ge $((secs * 1000000)) ] && break
	due=$((elapsed * per_min / 60000000))
	if [ "$n" -le "$due" ]; then
		"$split" "$work" >/dev/null 2>&1 &
		n=$((n + 1))
		[ $((n % 64)) = 0 ] && wait
	else
		read -r -t 0.01 -u "$nap" _
	fi
done
wait
echo "churn.sh: $n processes in $secs s"

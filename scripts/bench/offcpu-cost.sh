#!/bin/bash
# offcpu-cost.sh - what off-CPU recording costs under `prof record -a`, on
# a load we control: `churn` (RATE short-lived processes a second, each a
# new exec with THREADS threads that nap) beside `pingpong` (one pair of
# threads over pipes: tens of thousands of switches a second), for SECS
# seconds under each recorder in turn, ROUNDS rounds interleaved:
#   perf    perf record -a --call-graph dwarf -F 999
#   prof    prof record -a -F 999 (defaults: off-CPU on)
#   nores   prof record -a -F 999 --no-resources (CPU samples only)
#   base    $BASE_PROF record -a -F 999: another build's default, for a
#           before/after in the same run (CONFIGS="perf base prof nores")
# Reported per recorder (medians over the rounds): its CPU (user+sys,
# runstat) and the ratio to perf's in the same round; for prof, the share
# of pingpong's CPU samples whose leaf is finish_task_switch (the work
# done inside the switch is billed there) and the difference to nores;
# the off-CPU stacks kept, and the share of churn's off-CPU time charged
# to [stack not sampled].  Everything else on the machine is recorded too,
# by all three: state the load (printed) with the figures.  Needs root.
. "$(dirname "$0")/lib.sh"
bench_build
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-${REPEAT}}
RATE=${RATE:-100}
THREADS=${THREADS:-2}
CONFIGS=${CONFIGS:-perf prof nores}
CHURN="$BENCH_TMP/churn"
PP="$BENCH_TMP/pingpong"
[ -x "$CHURN" ] || gcc -O2 -g -pthread "$TOP/scripts/bench/churn.c" -o "$CHURN"
[ -x "$PP" ] || gcc -O1 -g -fomit-frame-pointer -pthread "$TOP/tests/resources/pingpong.c" -o "$PP"
[ "$(id -u)" = 0 ] || { echo "offcpu-cost.sh: needs root (perf -a)" >&2; exit 1; }
B=$BENCH_TMP
declare -A cpu ratio fts stacks lost unsampled trips

recorder() {	# config
	case $1 in
	perf) perf record -q -a --call-graph dwarf -F 999 -o "$B/rec.perf" -- sleep "$SECS" ;;
	prof) PROF_RECORD_STATS=1 "$PROF" record -q -a -F 999 -d "$SECS" -o "$B/rec.prof" ;;
	nores) "$PROF" record -q -a -F 999 --no-resources -d "$SECS" -o "$B/rec.prof" ;;
	base) PROF_RECORD_STATS=1 "$BASE_PROF" record -q -a -F 999 -d "$SECS" -o "$B/rec.prof" ;;
	*) "$PROF" record -q -a -F 999 $1 -d "$SECS" -o "$B/rec.prof" ;;
	esac
}

export -f recorder
export PROF SECS B BASE_PROF=${BASE_PROF:-}

# pingpong's CPU samples ending in finish_task_switch, %; churn's off-CPU
# time in [stack not sampled], %.
shares() {
	"$PROF" report -i "$B/rec.prof" --format=folded 2>/dev/null |
		awk '$1 ~ /^(ping|pong|pingpong)[;]/ {n = $NF; t += n; $NF = ""; k = split($0, a, ";");
			sub(/ +$/, "", a[k]); if (a[k] ~ /^finish_task_switch/) f += n}
			END {printf "%.2f", t ? 100 * f / t : 0}'
	echo -n " "
	"$PROF" report -i "$B/rec.prof" --format=folded --metric=off-cpu 2>/dev/null |
		awk '$1 ~ /^churn[;]/ {t += $NF; if ($0 ~ /\[stack not sampled\]/) u += $NF}
			END {printf "%.3f", t ? 100 * u / t : 0}'
}

echo "# offcpu-cost: load average at start $(cut -d' ' -f1-3 /proc/loadavg); churn $RATE/s x $THREADS threads + pingpong 1 pair; ${SECS}s windows" >&2
for round in $(seq "$ROUNDS"); do
	declare -A this=()
	for c in $CONFIGS; do
		rm -f "$B"/rec.*
		"$CHURN" $((SECS + 1)) "$RATE" "$THREADS" >/dev/null &
		ch=$!
		"$PP" $((SECS + 1)) 1 >"$B/pp.out" &
		pp=$!
		sleep 0.3
		"$RUNSTAT" bash -c 'recorder "$0"' "$c" \
			>/dev/null 2>"$B/rec.err" 3>"$B/rec.stat"
		wait $ch $pp
		rc=$(awk '{print $1}' "$B/rec.stat")
		this[$c]=$rc
		cpu[$c]+="$rc "
		trips[$c]+="$(sed -n 's/^trips_per_s //p' "$B/pp.out") "
		msg="# round $round $c: cpu $rc s"
		if [ "$c" != perf ]; then
			read -r s u <<<"$(shares)"
			fts[$c]+="$s "
			unsampled[$c]+="$u "
			n=$(sed -n 's/^prof record: off-CPU: \([0-9]*\) full stacks.*/\1/p' "$B/rec.err")
			stacks[$c]+="${n:-0} "
			l=$(sed -n 's/^prof record: off-CPU: .*[ (]\([0-9]*\) lost).*/\1/p' "$B/rec.err")
			lost[$c]+="${l:-0} "
			msg+="; finish_task_switch $s% of pingpong; churn not sampled $u%; stacks ${n:--} (${l:--} lost)"
		fi
		echo "$msg; load $(cut -d' ' -f1 /proc/loadavg)" >&2
	done
	for c in $CONFIGS; do
		[ -n "${this[perf]:-}" ] && ratio[$c]+="$(ratio "${this[$c]}" "${this[perf]}") "
	done
done
rm -f "$B"/rec.*
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
printf '| %-8s | %-12s | %-14s | %-22s | %-14s | %-10s | %-8s |\n' recorder "CPU s" "CPU / perf's" \
	"finish_task_switch %" "churn unsampled %" "stacks" "lost"
for c in $CONFIGS; do
	printf '| %-8s | %-12s | %-14s | %-22s | %-14s | %-10s | %-8s |\n' "$c" "$(m "${cpu[$c]}")" "$(m "${ratio[$c]:-}")" \
		"$(m "${fts[$c]:-}")" "$(m "${unsampled[$c]:-}")" "$(m "${stacks[$c]:-}")" "$(m "${lost[$c]:-}")"
done
echo "# per round: cpu ${cpu[*]}; finish_task_switch ${fts[*]:-}; load at end $(cut -d' ' -f1-3 /proc/loadavg)" >&2

#!/bin/bash
# scaling.sh - goal 6: prof report time and peak memory against the number
# of samples (10k, 100k, 1M over 1000 stacks) and against the number of
# distinct stacks (1M samples over 1k, 10k, 100k stacks), on synthetic
# prof.data files written by the real writer (gen.c).  Linear or better:
# the per-sample cost at the largest size is at most 1.5x the one at 100k
# (the 10k point is dominated by start-up).  perf has no counterpart
# (its files cannot be synthesized), so the perf column stays empty.
. "$(dirname "$0")/lib.sh"
bench_build

point() {	# samples stacks -> "cpu_s rss_kib us_per_sample"
	"$GEN" "$BENCH_TMP/s.data" "$1" "$2" || return 1
	read -r c _ m < <(measure "$PROF" report -i "$BENCH_TMP/s.data")
	echo "$c $m $(awk -v c="$c" -v n="$1" 'BEGIN {printf "%.3f", c * 1e6 / n}')"
}
declare -A us
for n in 10000 100000 1000000; do
	read -r c m u < <(point $n 1000)
	us[n$n]=$u
	row "6 scaling, 1k stacks" "$n samples: CPU, RSS" "-" "$(printf %.3f "$c")s $((m / 1024))M" "-" "info"
	echo "$n samples 1000 stacks: $c s CPU, $m KiB, $u us/sample, $(stat -c %s "$BENCH_TMP/s.data") bytes" >&2
done
row "6 samples: linear?" "us/sample 1M vs 100k" "-" "${us[n1000000]}" "$(ratio "${us[n1000000]}" "${us[n100000]}")" \
	"$(verdict "${us[n1000000]} <= 1.5 * ${us[n100000]} + 0.05")"
for k in 1000 10000 100000; do
	read -r c m u < <(point 1000000 $k)
	us[k$k]=$u
	row "6 scaling, 1M samples" "$k stacks: CPU, RSS" "-" "$(printf %.3f "$c")s $((m / 1024))M" "-" "info"
	echo "1000000 samples $k stacks: $c s CPU, $m KiB, $u us/sample" >&2
done
# per distinct stack: the cost above the 1k-stack run, divided by stacks
ps10=$(awk -v a="${us[k10000]}" -v b="${us[k1000]}" 'BEGIN {printf "%.2f", (a - b) * 1e6 / 10000}')
ps100=$(awk -v a="${us[k100000]}" -v b="${us[k1000]}" 'BEGIN {printf "%.2f", (a - b) * 1e6 / 100000}')
row "6 stacks: linear?" "us/stack 100k vs 10k stk" "-" "$ps100" "$(ratio "$ps100" "$ps10")" \
	"$(verdict "$ps100 <= 1.5 * $ps10 + 0.5")"

#!/bin/bash
# size-and-report.sh - goals 2, 3 and 4 on one pair of recordings of the
# same workload (2 threads, 999 Hz, DWARF, ~15 s = ~30k samples):
#   2 recorder CPU per sample (attach mode, so the target is not a child),
#   3 bytes per sample, 4 report wall time and peak RSS.
. "$(dirname "$0")/lib.sh"
bench_build
SECS=${SECS:-15}

"$TP" $((SECS + 4)) 2 >/dev/null & tp=$!
sleep 0.5
/usr/bin/time -f '%U %S' -o "$BENCH_TMP/perf.time" \
	perf record -q -e cpu-clock -F 999 --call-graph dwarf -p $tp -o "$BENCH_TMP/r.perf" -- sleep "$SECS" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$BENCH_TMP/prof.time" \
	"$PROF" record -q -F 999 -p $tp -d "$SECS" -o "$BENCH_TMP/r.prof" 2>/dev/null
wait $tp

ps_=$(perf_samples_total "$BENCH_TMP/r.perf"); pr_=$(prof_samples "$BENCH_TMP/r.prof")
cpu() { awk '{print $1 + $2}' "$1"; }
pe_us=$(awk -v c="$(cpu "$BENCH_TMP/perf.time")" -v n="$ps_" 'BEGIN {printf "%.2f", c * 1e6 / n}')
pr_us=$(awk -v c="$(cpu "$BENCH_TMP/prof.time")" -v n="$pr_" 'BEGIN {printf "%.2f", c * 1e6 / n}')
row "2 recorder CPU" "us CPU / sample" "$pe_us" "$pr_us" "$(ratio "$pr_us" "$pe_us")" "info"

pe_b=$(( $(stat -c %s "$BENCH_TMP/r.perf") / ps_ )); pr_b=$(( $(stat -c %s "$BENCH_TMP/r.prof") / pr_ ))
row "3 data size" "bytes / sample" "$pe_b" "$pr_b" "$(ratio "$pr_b" "$pe_b")" \
	"$(awk -v a="$pr_b" -v b="$pe_b" 'BEGIN {print a * 20 <= b ? "yes" : "NO"}')"

tims() {	# cmd... -> "median_wall_s peak_kb"
	for i in $(seq "$REPEAT"); do
		/usr/bin/time -f '%e %M' -o "$BENCH_TMP/t" "$@" >/dev/null 2>&1
		cat "$BENCH_TMP/t"
	done | sort -g | awk '{w[NR]=$1; if ($2 > m) m = $2} END {print w[int((NR+1)/2)], m}'
}
read -r pe_t pe_m < <(tims perf report -i "$BENCH_TMP/r.perf" --stdio --no-children)
read -r pr_t pr_m < <(tims "$PROF" report -i "$BENCH_TMP/r.prof")
row "4 report time" "s (samples: $ps_/$pr_)" "$pe_t" "$pr_t" "$(ratio "$pr_t" "$pe_t")" \
	"$(awk -v a="$pr_t" -v b="$pe_t" 'BEGIN {print a * 10 <= b ? "yes" : "NO"}')"
row "4 report memory" "peak RSS KiB" "$pe_m" "$pr_m" "$(ratio "$pr_m" "$pe_m")" \
	"$(awk -v a="$pr_m" -v b="$pe_m" 'BEGIN {print a < b ? "yes" : "NO"}')"
pr_us=$(awk -v t="$pr_t" -v n="$pr_" 'BEGIN {printf "%.2f", t * 1e6 / n}')
row "4 report per sample" "us / sample (goal <= 3)" "$(awk -v t="$pe_t" -v n="$ps_" 'BEGIN {printf "%.2f", t * 1e6 / n}')" "$pr_us" "-" \
	"$(awk -v a="$pr_us" 'BEGIN {print a <= 3 ? "yes" : "NO"}')"

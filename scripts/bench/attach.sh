#!/bin/bash
# attach.sh - goal 7: attach latency and the target's hiccup.
#   latency: from starting `prof record -p PID` (or `perf record -p PID`)
#   to the first sample's timestamp (both stamp CLOCK_MONOTONIC: prof
#   always, perf with -k CLOCK_MONOTONIC).
#   hiccup: the target (hiccup.c) measures its own worst loop iteration
#   per 50 ms; we compare the worst one within 0.5 s after attaching and
#   after detaching with the median bucket of the quiet second before.
# Medians over REPEAT attach/detach cycles, perf and prof interleaved.
. "$(dirname "$0")/lib.sh"
bench_build
REC=${REC:-2}	# seconds recorded per attach

declare -A lat hic_a hic_d base
cycle() {	# tool -> appends latency_ms, attach/detach hiccup ms, baseline ms
	local tool=$1 t0 t1 first out=$BENCH_TMP/att.$1
	"$HICCUP" $((REC + 7)) >"$BENCH_TMP/h.out" & local h=$!
	sleep 1.2
	t0=$("$HICCUP" now)
	if [ "$tool" = prof ]; then
		"$PROF" record -q -F 999 -p $h -d "$REC" -o "$out" >/dev/null 2>&1
		t1=$("$HICCUP" now)
		first=$("$GEN" --start-ns "$out")
	else
		perf record -q -e cpu-clock -F 999 --call-graph dwarf -k CLOCK_MONOTONIC \
			-p $h -o "$out" -- sleep "$REC" >/dev/null 2>&1
		t1=$("$HICCUP" now)
		first=$(perf script -i "$out" -F time --ns 2>/dev/null | head -1 | tr -d ' :' | awk '{printf "%.0f", $1 * 1e9}')
	fi
	wait $h
	lat[$tool]+="$(awk -v a="$first" -v b="$t0" 'BEGIN {printf "%.2f", (a - b) / 1e6}') "
	# buckets: START_NS MAX_NS (the target outlives both tools by seconds)
	base[$tool]+="$(awk -v t0="$t0" '$1 >= t0 - 1e9 && $1 + 5e7 < t0 {print $2 / 1e6}' "$BENCH_TMP/h.out" | median) "
	hic_a[$tool]+="$(awk -v t0="$t0" '$1 + 5e7 >= t0 && $1 < t0 + 5e8 && $2 > m {m = $2} END {print m / 1e6}' "$BENCH_TMP/h.out") "
	hic_d[$tool]+="$(awk -v t1="$t1" '$1 + 5e7 >= t1 - 3e8 && $1 < t1 + 2e8 && $2 > m {m = $2} END {print m / 1e6}' "$BENCH_TMP/h.out") "
}
for i in $(seq "$REPEAT"); do
	cycle perf
	cycle prof
done
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
row "7 attach latency" "ms to first sample" "$(m "${lat[perf]}")" "$(m "${lat[prof]}")" \
	"$(ratio "$(m "${lat[prof]}")" "$(m "${lat[perf]}")")" "info"
row "7 attach hiccup" "worst iteration, ms" "$(m "${hic_a[perf]}")" "$(m "${hic_a[prof]}")" \
	"$(ratio "$(m "${hic_a[prof]}")" "$(m "${hic_a[perf]}")")" "info"
row "7 detach hiccup" "worst iteration, ms" "$(m "${hic_d[perf]}")" "$(m "${hic_d[prof]}")" \
	"$(ratio "$(m "${hic_d[prof]}")" "$(m "${hic_d[perf]}")")" "info"
echo "# quiet baseline worst iteration per 50 ms (median): perf run $(m "${base[perf]}") ms, prof run $(m "${base[prof]}") ms" >&2

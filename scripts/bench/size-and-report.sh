#!/bin/bash
# size-and-report.sh - goals 2, 3 and 4 on one pair of recordings of the
# same running target (2 threads, 999 Hz, DWARF, SECS each, ~30k samples
# when the machine is idle): both recorders attach to it in turn, so the
# target is never the recorder's child.
#   2 recorder CPU time per sample (user+sys of the recorder process)
#   3 bytes per sample (both keep full stacks: perf the raw 8 KiB stack
#     copy, prof the unwound, symbolized, deduplicated stack)
#   4 report CPU time and peak RSS: prof report on prof.data vs perf report
#     --stdio on perf.data; then our importer (prof report -i perf.data)
#     vs perf report on that very file.
. "$(dirname "$0")/lib.sh"
bench_build
SECS=${SECS:-15}

"$TP" $((2 * SECS + 6)) 2 >/dev/null & tp=$!
sleep 1
/usr/bin/time -f '%U %S' -o "$BENCH_TMP/prof.time" \
	"$PROF" record -q -F 999 -p $tp -d "$SECS" -o "$BENCH_TMP/r.prof" 2>/dev/null
/usr/bin/time -f '%U %S' -o "$BENCH_TMP/perf.time" \
	perf record -q -e cpu-clock -F 999 --call-graph dwarf -p $tp -o "$BENCH_TMP/r.perf" -- sleep "$SECS" 2>/dev/null
kill $tp 2>/dev/null; wait $tp 2>/dev/null

ps_=$(perf_samples_total "$BENCH_TMP/r.perf"); pr_=$(prof_samples "$BENCH_TMP/r.prof")
cpu() { awk '{print $1 + $2}' "$1"; }
pe_us=$(awk -v c="$(cpu "$BENCH_TMP/perf.time")" -v n="$ps_" 'BEGIN {printf "%.1f", c * 1e6 / n}')
pr_us=$(awk -v c="$(cpu "$BENCH_TMP/prof.time")" -v n="$pr_" 'BEGIN {printf "%.1f", c * 1e6 / n}')
row "2 recorder CPU (attach)" "us CPU / sample" "$pe_us" "$pr_us" "$(ratio "$pr_us" "$pe_us")" "info"

pe_b=$(( $(stat -c %s "$BENCH_TMP/r.perf") / ps_ )); pr_b=$(( $(stat -c %s "$BENCH_TMP/r.prof") / pr_ ))
row "3 data size" "bytes / sample" "$pe_b" "$pr_b" "$(ratio "$pr_b" "$pe_b")" \
	"$(verdict "$pr_b * 20 <= $pe_b")"

read -r pe_c pe_w pe_m < <(measure perf report -i "$BENCH_TMP/r.perf" --stdio)
read -r pr_c pr_w pr_m < <(measure "$PROF" report -i "$BENCH_TMP/r.prof")
read -r im_c im_w im_m < <(measure "$PROF" report -i "$BENCH_TMP/r.perf")
row "4 report prof.data" "CPU s ($ps_/$pr_ samples)" "$pe_c" "$pr_c" "$(ratio "$pr_c" "$pe_c")" \
	"$(verdict "$pr_c * 10 <= $pe_c")"
row "4 report prof.data" "peak RSS KiB" "$pe_m" "$pr_m" "$(ratio "$pr_m" "$pe_m")" \
	"$(verdict "$pr_m < $pe_m")"
row "4 report prof.data" "us CPU/sample (goal <=3)" \
	"$(awk -v t="$pe_c" -v n="$ps_" 'BEGIN {printf "%.2f", t * 1e6 / n}')" \
	"$(awk -v t="$pr_c" -v n="$pr_" 'BEGIN {printf "%.2f", t * 1e6 / n}')" "-" \
	"$(verdict "$pr_c * 1e6 / $pr_ <= 3")"
row "4 import perf.data" "CPU s, same file" "$pe_c" "$im_c" "$(ratio "$im_c" "$pe_c")" \
	"$(verdict "$im_c * 10 <= $pe_c")"
row "4 import perf.data" "peak RSS KiB" "$pe_m" "$im_m" "$(ratio "$im_m" "$pe_m")" \
	"$(verdict "$im_m < $pe_m")"
echo "# report wall medians (s): perf $pe_w, prof $pr_w, prof -i perf.data $im_w" >&2

# lib.sh - shared helpers for the side-by-side benchmarks (sourced).
# Every benchmark runs perf and prof in the same run on the same workload
# and prints perf's figure, ours and the ratio.  Absolute times on this
# noisy VM mean little; ratios of medians over REPEAT runs are the result.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PROF="$TOP/prof"
BENCH_TMP=${BENCH_TMP:-$(mktemp -d /tmp/prof-bench.XXXXXX)}
mkdir -p "$BENCH_TMP"
REPEAT=${REPEAT:-5}
TP="$BENCH_TMP/tp"

HICCUP="$BENCH_TMP/hiccup"
FLOOR="$BENCH_TMP/timerfloor"
BURN="$BENCH_TMP/burn"
RUNSTAT="$BENCH_TMP/runstat"
GEN="$BENCH_TMP/gen"

# Is helper BIN built from SRC as it is now?  A BENCH_TMP kept from an
# older tree must not run an older helper (a flag it lacks fails a window).
built() { [ -x "$1" ] && [ "$1" -nt "$2" ]; }

# The targets (no frame pointers, like real code) and the libprof helpers.
bench_build() {
	local libs
	# a tree's prof older than its sources measured the wrong build, silently
	make -s -C "$TOP" prof >/dev/null || { echo "$0: cannot build prof" >&2; exit 1; }
	built "$TP" "$TOP/scripts/bench/tp.c" || gcc -O2 -g -fomit-frame-pointer -pthread "$TOP/scripts/bench/tp.c" -o "$TP"
	built "$RUNSTAT" "$TOP/scripts/bench/runstat.c" || gcc -O2 "$TOP/scripts/bench/runstat.c" -o "$RUNSTAT"
	built "$FLOOR" "$TOP/scripts/bench/timerfloor.c" || gcc -O2 "$TOP/scripts/bench/timerfloor.c" -o "$FLOOR"
	built "$BURN" "$TOP/scripts/bench/burn.c" || gcc -O2 "$TOP/scripts/bench/burn.c" -o "$BURN"
	built "$HICCUP" "$TOP/scripts/bench/hiccup.c" || gcc -O2 -g "$TOP/scripts/bench/hiccup.c" -o "$HICCUP"
	libs=$(pkg-config --libs libdw libelf libunwind-generic zlib 2>/dev/null)
	pkg-config --exists libzstd && libs="$libs $(pkg-config --libs libzstd)"
	[ -x "$GEN" ] || gcc -O2 -g -I"$TOP/include" "$TOP/scripts/bench/gen.c" \
		"$TOP/build/libprof.a" $libs -lpthread -lm -o "$GEN"
}

# Runs CMD REPEAT times; prints "median_cpu_s median_wall_s peak_rss_kib".
# CPU time (user+sys, children included, from wait4) is the figure that matters: on a
# shared 2-vCPU VM wall time is mostly time spent waiting for a CPU.
measure() {
	local i
	: >"$BENCH_TMP/measure.all"
	for i in $(seq "$REPEAT"); do
		"$RUNSTAT" "$@" >/dev/null 2>&1 3>>"$BENCH_TMP/measure.all"
	done
	echo "$(awk '{print $1}' "$BENCH_TMP/measure.all" | median)" \
		"$(awk '{print $2}' "$BENCH_TMP/measure.all" | median)" \
		"$(awk '$3 > m {m = $3} END {print m}' "$BENCH_TMP/measure.all")"
}
verdict() { awk "BEGIN {print ($1) ? \"yes\" : \"NO\"}"; }

median() {	# numbers on stdin -> median
	sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"; exit} if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}

# median_ci [FMT]: numbers on stdin -> "MEDIAN [LO, HI]", LO and HI the
# order statistics x_(l) and x_(n+1-l) that bound a ~95% confidence interval
# for the median whatever the distribution: l is the largest k with
# P(Binomial(n, 1/2) < k) <= 0.025 (each value lies below the median with
# probability 1/2), so that the interval misses the median with probability
# 2 P(B < l) <= 5%.  Being discrete, the coverage 1 - 2 P(B < l) is above
# 95% and depends on n: 96.9% for n = 6 (ranks 1, 6), 99.2% for 8 (1, 8),
# 97.9% for 10 (2, 9), 96.1% for 12 (3, 10), 96.5% for 15 (4, 12), 95.9% for
# 20 (6, 15), 97.7% for 24 (7, 18), 95.7% for 30 (10, 21), 96.7% for 50
# (18, 33).  Below n = 6 even [min, max] covers less than 95% (93.8% at 5):
# "MEDIAN [n too small]".  FMT (printf, default %.4g) formats the numbers.
median_ci() {
	sort -g | awk -v fmt="${1:-%.4g}" '{x[NR] = $1}
	END {
		n = NR
		if (n == 0) { print "nan [n too small]"; exit }
		med = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
		# cdf = P(B < l), lp = log P(B = l): p(0) = 2^-n, p(k+1) = p(k) (n-k)/(k+1),
		# in logs so that a large n does not underflow to 0 for good
		cdf = 0; lp = n * log(0.5)
		for (l = 0; l < n && cdf + exp(lp) <= 0.025; l++) {
			cdf += exp(lp)
			lp += log((n - l) / (l + 1))
		}
		if (n < 6 || l < 1)
			printf fmt " [n too small]\n", med
		else
			printf fmt " [" fmt ", " fmt "]\n", med, x[l], x[n + 1 - l]
	}'
}

# at_least GOAL: "MEDIAN [LO, HI]" on stdin (median_ci, heap.sh's stats)
# -> yes (the interval wholly at or above GOAL), NO (wholly below) or "not
# resolved" (across GOAL, or no interval: n too small).
at_least() {
	awk -v g="$1" 'function num(s) { return s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
		{gsub(/[][,]/, ""); v = "not resolved"; if (num($2) && num($3) && $2 >= g) v = "yes"
		else if (num($2) && num($3) && $3 < g) v = "NO"; print v}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.3g", a / b }'; }

row() {	# goal metric perf prof ratio verdict
	printf '| %-28s | %-26s | %14s | %14s | %8s | %-4s |\n' "$@"
}
header() {
	row "goal" "metric" "perf" "prof" "ratio" "ok?"
	row "----" "------" "----" "----" "-----" "---"
}

# perf's sample count in a perf.data file (from its own header stats)
perf_samples() { perf report -i "$1" --stdio --header-only 2>/dev/null | awk '/sample_freq/ {next} /^# Samples:/ {print $3}' | head -1; }
perf_samples_total() {
	perf script -i "$1" -F period 2>/dev/null | wc -l
}
prof_samples() { "$PROF" report -i "$1" --format=json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])'; }
prof_lost() { "$PROF" report -i "$1" --format=json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["lost"])'; }
# perf's own total of lost samples (PERF_RECORD_LOST and LOST_SAMPLES)
perf_lost() { perf report -i "$1" --stdio 2>/dev/null | awk '/^# Total Lost Samples:/ {print $NF; f = 1} END {if (!f) print 0}'; }

# probes_gone: waits (20 s at most) until the heap uprobe definitions of
# profs that exited, which a background process of prof removes (~0.1 s
# per event), are gone, so that an attached run does not overlap that
# removal: twice a sampled run that started during it came out at a tenth
# of its siblings' CPU time (docs/heap.md; cause not found).
probes_gone() {
	local root=/sys/kernel/tracing pid
	[ -r "$root/uprobe_events" ] || root=/sys/kernel/debug/tracing
	for _ in $(seq 100); do
		pid=$(sed -n 's/.*prof_heap\/p\([0-9]*\)_.*/\1/p' "$root/uprobe_events" 2>/dev/null | sort -u |
			while read -r p; do kill -0 "$p" 2>/dev/null || echo "$p"; done)
		[ -z "$pid" ] && return
		sleep 0.2
	done
}

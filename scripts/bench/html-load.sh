#!/bin/bash
# html-load.sh - how long the HTML report takes to load in Chromium, for
# synthetic recordings of 100k and 1M samples (written through the real
# prof_writer) and a 1k-sample floor.  Each report is opened REPEAT times
# in a fresh headless Chromium by playwright-core
# (tests/node/html-app-drive.js load); per file it prints the HTML size,
# the selection grid (row buckets, rows) and the medians of:
#   ready  performance.now() when the application is ready (navigation
#          start -> every panel built), in the page's own clock
#   paint  the same at the first paint after that (layout and paint done)
#   cpu    user+sys CPU of all Chromium processes for open + ready
#   wall   page.goto() until ready, as the driver saw it
# and the 1-minute load average.  Recordings:
#   wide-N   tests/unit/data.t --generate N: 4 threads, a pool of up to
#            2,000 stacks drawn at random, 10% with an off-CPU interval
#            (nearly every sample has a (bucket, thread, stack) of its own:
#            the worst case for bucketing)
#   s200-N   scripts/bench/gen.c: 4 threads, 200 distinct 16-deep stacks
# BASE_PROF=/path/to/an/older/prof adds a row per file for that build's
# report, opened in the same run (name suffix "-base").
# Nothing here is a test; figures go to docs/viewer.md.
. "$(dirname "$0")/lib.sh"
bench_build
. "$TOP/tests/lib/node-tools.sh" 2>/dev/null
node_tools_ready || { echo "html-load: $NODE_TOOLS_WHY" >&2; exit 2; }
[ -x "$TOP/build/tests/unit/data.t" ] || make -C "$TOP" -s unit >/dev/null || exit 2
DRIVE="$TOP/tests/node/html-app-drive.js"

# grid FILE.html: "row buckets x fine buckets, rows" of the embedded data
grid() {
	python3 - "$1" <<'EOF'
import json, sys
s = open(sys.argv[1]).read()
m = s.find('id="prof-app">'); e = s.find('</script>', m)
a = json.loads(s[m + 14:e])
print("%d/%d %d" % (a["nbuckets"], a.get("nlanes", a["nbuckets"]), a["rows"]["count"]))
EOF
}

# loads FILE.html: REPEAT lines "ready paint cpu wall loadavg total"
loads() {
	for _ in $(seq "$REPEAT"); do
		node "$DRIVE" load "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert not d["errors"], d["errors"]
print(d["page_ms"], d["painted_ms"], d["cpu_ms"], d["wall_ms"], "%.1f" % d["loadavg"], d["panels"]["total"])'
	done
}

median() { sort -n | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "-"}'; }

# report_one NAME DATA [PROF]
report_one() {
	local name=$1 data=$2 html="$BENCH_TMP/$1.html"
	"${3:-$PROF}" report -i "$data" --format=html -o "$html" || return 1
	loads "$html" >"$BENCH_TMP/$name.loads" || return 1
	read -r nb rows < <(grid "$html")
	printf "%-13s %8s %9s %7s" "$name" "$(stat -c %s "$html")" "$nb" "$rows"
	for col in 1 2 3 4 5; do
		printf " %7s" "$(cut -d' ' -f$col "$BENCH_TMP/$name.loads" | median)"
	done
	printf " %s\n" "$(cut -d' ' -f6 "$BENCH_TMP/$name.loads" | sort -u | tr '\n' ' ')"
}

echo "# $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs," \
	"$(/usr/bin/chromium --version 2>/dev/null), REPEAT=$REPEAT"
printf "%-13s %8s %9s %7s %7s %7s %7s %7s %7s %s\n" file bytes buckets rows ready paint cpu_ms wall_ms load samples
for n in ${SIZES:-1000 100000 1000000}; do
	"$TOP/build/tests/unit/data.t" --generate "$BENCH_TMP/wide-$n.data" "$n" >/dev/null || exit 1
	[ "$n" -lt 100000 ] || "$GEN" "$BENCH_TMP/s200-$n.data" "$n" 200 >/dev/null || exit 1
	for f in "wide-$n" "s200-$n"; do
		[ -f "$BENCH_TMP/$f.data" ] || continue
		report_one "$f" "$BENCH_TMP/$f.data"
		[ -z "${BASE_PROF:-}" ] || report_one "$f-base" "$BENCH_TMP/$f.data" "$BASE_PROF"
	done
done

#!/bin/bash
# heap-error.sh - how far `prof record --heap`'s sampled estimates fall
# from the truth, against the standard error prof states.  Records the
# planted workload (tests/workloads/heap.c, PAIRS=200000) RUNS times at
# each rate of RATES, and per figure prints the mean estimate over the
# truth, the RMS relative error, the mean standard error the header gave
# (for the whole-heap figures) and how many runs fell within 2 of them.
# ATTACH=1: attached (-p) from before the first allocation, sampled by
# BPF, instead of launched.
#   RUNS (default 20), RATES (default "524288 4096"), ATTACH, BENCH_TMP.
. "$(dirname "$0")/lib.sh"
HEAP="$TOP/tests/workloads/bin/heap"
RUNS=${RUNS:-20}
RATES=${RATES:-524288 4096}
[ -x "$HEAP" ] || make -C "$TOP" -s tests/workloads/bin/heap
B="$BENCH_TMP"

for rate in $RATES; do
	: >"$B/err.$rate"
	for i in $(seq "$RUNS"); do
		if [ -n "$ATTACH" ]; then
			probes_gone
			rm -f "$B/go"
			"$HEAP" 200000 "$B/go" >"$B/e.truth" &
			T=$!
			for _ in $(seq 100); do grep -q "^heap: ready" "$B/e.truth" && break; sleep 0.1; done
			"$PROF" record -q --no-resources --heap-rate "$rate" -o "$B/e.data" -p $T &
			P=$!
			for _ in $(seq 600); do [ "$(ls /proc/$P/task 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.1; done
			touch "$B/go"
			wait $T
			wait $P
		else
			"$PROF" record -q --no-resources --heap-rate "$rate" -o "$B/e.data" -- "$HEAP" 200000 >"$B/e.truth"
		fi
		for m in allocs live-bytes peak-bytes; do
			"$PROF" report -i "$B/e.data" --metric=$m --format=json >"$B/e.$m.json"
		done
		"$PROF" report -i "$B/e.data" --metric=allocs --stdio | grep '^# heap: allocs' >"$B/e.hdr"
		python3 - "$B" >>"$B/err.$rate" <<'EOF'
import json, re, sys
b = sys.argv[1]
hdr = open(b + "/e.hdr").read()
def fig(name):	# "live-bytes at the end 4.09 MiB +- 79.31 KiB" -> value, error in bytes
    units = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
    m = re.search(name + r"[a-z ]* ([\d.]+) (\w+) \+- ([\d.]+) (\w+)", hdr)
    return float(m.group(1)) * units[m.group(2)], float(m.group(3)) * units[m.group(4)]
fn = lambda f: {x["name"]: x["total"] for x in json.load(open("%s/e.%s.json" % (b, f)))["functions"]}
a, l, p = fn("allocs"), fn("live-bytes"), fn("peak-bytes")
lv, le = fig("live-bytes")
pv, pe = fig("peak-bytes")
m = re.search(r"allocs (\d+) \+- (\d+)", hdr)
print(a.get("temp_planted", 0), l.get("leak_planted", 0), p.get("peak_planted", 0),
      lv, le, pv, pe, m.group(1), m.group(2))
EOF
	done
	echo "# rate $rate, $RUNS runs${ATTACH:+, attached}"
	awk '
	function stat(name, truth, col) { }
	{ n++
	  t[n] = $1; lk[n] = $2; pk[n] = $3; lv[n] = $4; le[n] = $5; pv[n] = $6; pe[n] = $7; av[n] = $8; ae[n] = $9 }
	END {
	  report("temp_planted allocs", t, 200000)
	  report("leak_planted live-bytes", lk, 4194304)
	  report("peak_planted peak-bytes", pk, 67108864)
	  reportse("all live-bytes", lv, le, 4194304)
	  reportse("all peak-bytes", pv, pe, 4194304 + 67108864)
	}
	function report(name, x, truth,   i, s, q) {
	  for (i = 1; i <= n; i++) { s += x[i]; q += (x[i] - truth) ^ 2 }
	  printf "%-26s mean/truth %.3f  rms rel error %.1f%%\n", name, s / n / truth, 100 * sqrt(q / n) / truth
	}
	function reportse(name, x, e, truth,   i, s, q, se, w) {
	  for (i = 1; i <= n; i++) { s += x[i]; q += (x[i] - truth) ^ 2; se += e[i]; w += (x[i] - truth) ^ 2 <= 4 * e[i] ^ 2 }
	  printf "%-26s mean/truth %.3f  rms rel error %.1f%%  stated error %.1f%%  within 2 stated errors %d/%d\n",
	    name, s / n / truth, 100 * sqrt(q / n) / truth, 100 * se / n / truth, w, n
	}' "$B/err.$rate"
done

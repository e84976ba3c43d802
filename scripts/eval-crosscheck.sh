#!/bin/bash
# eval-crosscheck.sh - how often do `prof diff` and `prof crosscheck` give the
# right verdict on this machine?  Uses tests/eval/planted.c: real CPU
# regressions of 2%, 5%, 10% and 20% in hot(), extra instructions hidden behind
# cache misses in chase() (instructions up, time flat), a cache-hostile
# stride in walk() (instructions flat, time up), and A/A pairs.
#
#   scripts/eval-crosscheck.sh [-n POOL] [-t TRIALS] [-k RUNS] [-F HZ] [-o DIR]
#
# 1. records POOL runs of every variant, round-robin (so machine drift hits
#    every variant alike), each with `prof record -F HZ`;
# 2. runs each variant once under callgrind (--cache-sim=yes, small SCALE:
#    instruction ratios do not depend on it);
# 3. for each benchmark, TRIALS times: draws K base and K head runs from the
#    pools (disjoint halves of one pool for A/A), runs `prof diff` and
#    `prof crosscheck --format=json`, and scores the verdicts.
# Trials resample a finite pool, so they are not independent: the rates are
# estimates whose precision is bounded by POOL, not TRIALS.
# Not part of `make check`; takes roughly POOL x 9 x (2-5 s) plus the trials.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
POOL=10 TRIALS=40 K=5 HZ=999 OUT=""
while getopts "n:t:k:F:o:h" opt; do
	case $opt in
	n) POOL=$OPTARG ;; t) TRIALS=$OPTARG ;; k) K=$OPTARG ;; F) HZ=$OPTARG ;; o) OUT=$OPTARG ;;
	*) sed -n '2,20p' "$0"; exit 2 ;;
	esac
done
if [ $((2 * K)) -gt "$POOL" ]; then
	echo "eval-crosscheck: -n POOL must be at least 2 x -k RUNS for disjoint A/A halves" >&2
	exit 2
fi
make -C "$TOP" -s prof eval-bins >/dev/null
PROF="$TOP/prof" BIN="$TOP/tests/eval/bin/planted"
DIR=${OUT:-$(mktemp -d /tmp/prof-eval.XXXXXX)}
mkdir -p "$DIR/pool" "$DIR/cg"
VARIANTS="cpu:0 cpu:2 cpu:5 cpu:10 cpu:20 memhide:0 memhide:1 layout:0 layout:1"

echo "# eval-crosscheck: pool $POOL runs/variant, $TRIALS trials, $K runs/side, -F $HZ, in $DIR" >&2
start=$(date +%s)
for i in $(seq 1 "$POOL"); do
	for v in $VARIANTS; do
		f="$DIR/pool/${v/:/-}.$i.data"
		[ -s "$f" ] || "$PROF" record -q -F "$HZ" -o "$f" -- "$BIN" ${v/:/ } >/dev/null
	done
	echo "# recorded round $i/$POOL ($(( $(date +%s) - start )) s)" >&2
done
for v in $VARIANTS; do
	f="$DIR/cg/${v/:/-}.callgrind"
	[ -s "$f" ] || valgrind -q --tool=callgrind --cache-sim=yes --callgrind-out-file="$f" \
		"$BIN" ${v/:/ } 0.02 >/dev/null 2>&1
done
echo "# callgrind done ($(( $(date +%s) - start )) s)" >&2

python3 - "$PROF" "$DIR" "$POOL" "$TRIALS" "$K" <<'PY'
import json, random, subprocess, sys
prof, d, pool, trials, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(1)
runs = lambda v: [f"{d}/pool/{v}.{i}.data" for i in range(1, pool + 1)]
cg = lambda v: f"{d}/cg/{v}.callgrind"
# name, base variant, head variant, planted function, right diff verdict, right crosscheck verdict
benches = [
    ("A/A cpu", "cpu-0", "cpu-0", "hot", "not regression", "no flag"),
    ("A/A layout", "layout-0", "layout-0", "walk", "not regression", "no flag"),
    ("A/A memhide (memory-bound)", "memhide-0", "memhide-0", "chase", "not regression", "no flag"),
    ("cpu +2%", "cpu-0", "cpu-2", "hot", "regression", "confirmed"),
    ("cpu +5%", "cpu-0", "cpu-5", "hot", "regression", "confirmed"),
    ("cpu +10%", "cpu-0", "cpu-10", "hot", "regression", "confirmed"),
    ("cpu +20%", "cpu-0", "cpu-20", "hot", "regression", "confirmed"),
    ("instr up, time flat", "memhide-0", "memhide-1", "chase", "not regression", "instructions-only"),
    ("layout: time up", "layout-0", "layout-1", "walk", "regression", "time-only"),
]

def run(args):
    p = subprocess.run([prof] + args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"prof {args[0]} failed: {p.stderr}")
    return p.returncode, json.loads(p.stdout)

def verdict(js, fn):
    for r in js["functions"]:
        # gcc may rename: walk -> walk.constprop.0
        if r["function"] == fn or r["function"].startswith(fn + "."):
            return r["verdict"]
    return "absent"

print(f"| benchmark | truth | diff: planted fn right | diff: any regression flagged "
      f"| crosscheck: planted fn right | crosscheck: any slowdown flagged |")
print("|---|---|---:|---:|---:|---:|")
for name, bv, hv, fn, want_diff, want_cross in benches:
    ok_d = flag_d = ok_x = flag_x = 0
    for _ in range(trials):
        if bv == hv:
            pick = rng.sample(runs(bv), 2 * k)
            base, head = pick[:k], pick[k:]
        else:
            base, head = rng.sample(runs(bv), k), rng.sample(runs(hv), k)
        rc, dj = run(["diff", "--format=json", "--base"] + base + ["--head"] + head)
        vd = verdict(dj, fn)
        flag_d += rc == 1
        ok_d += (vd == "regression") if want_diff == "regression" else (vd != "regression")
        rc, xj = run(["crosscheck", "--format=json", "--callgrind-base", cg(bv),
                      "--callgrind-head", cg(hv), "--base"] + base + ["--head"] + head)
        vx = verdict(xj, fn)
        flag_x += rc == 1
        if want_cross == "no flag":
            ok_x += vx not in ("confirmed", "time-only", "instructions-only")
        else:
            ok_x += vx == want_cross
    pct = lambda n: f"{100.0 * n / trials:.0f}%"
    truth = f"{fn}: {want_diff} / {want_cross}"
    print(f"| {name} | {truth} | {pct(ok_d)} | {pct(flag_d)} | {pct(ok_x)} | {pct(flag_x)} |")
PY

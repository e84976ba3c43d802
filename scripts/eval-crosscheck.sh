#!/bin/bash
# eval-crosscheck.sh - how often do `prof diff` and `prof crosscheck` give the
# right verdict on this machine?  Uses tests/eval/planted.c: real CPU
# regressions of 2%, 5%, 10% and 20% in hot(), extra instructions hidden behind
# cache misses in chase() (instructions up, time flat), a cache-hostile
# stride in walk() (instructions flat, time up), and A/A pairs.
#
#   scripts/eval-crosscheck.sh [-n POOL] [-t TRIALS] [-k RUNS] [-F HZ] [-o DIR]
#
# 0. builds planted.c twice, as CI does: a "base" build in one tree under a
#    cargo-like name (base/target/release/deps/planted-3f9a1c2b) and a "head"
#    build in another (head/build/bench-head), and copies both to a third
#    path for callgrind (runner/src/planted_base, planted_head), as the
#    CodSpeed runner names objects by its own paths;
# 1. records POOL runs of every variant, round-robin (so machine drift hits
#    every variant alike), each with `prof record -F HZ`, odd rounds with the
#    base build and even rounds with the head build;
# 2. runs each variant under callgrind, once per build (--cache-sim=yes,
#    small SCALE: instruction ratios do not depend on it);
# 3. for each benchmark, TRIALS times: draws K base runs (base build) and K
#    head runs (head build) from the pools, runs `prof diff` and
#    `prof crosscheck --format=json`, and scores the verdicts; it also
#    records the join rate crosscheck reports.
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
	echo "eval-crosscheck: -n POOL must be at least 2 x -k RUNS (half of it per build)" >&2
	exit 2
fi
make -C "$TOP" -s prof >/dev/null
PROF="$TOP/prof"
DIR=${OUT:-$(mktemp -d /tmp/prof-eval.XXXXXX)}
mkdir -p "$DIR/pool" "$DIR/cg" "$DIR/base/src" "$DIR/base/target/release/deps" \
	"$DIR/head/src" "$DIR/head/build" "$DIR/runner/src"
build() {	# tree binary
	cp "$TOP/tests/eval/planted.c" "$DIR/$1/src/planted.c"
	(cd "$DIR/$1" && ${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -g -o "$2" src/planted.c)
}
BASE_BIN="$DIR/base/target/release/deps/planted-3f9a1c2b" HEAD_BIN="$DIR/head/build/bench-head"
[ -x "$BASE_BIN" ] || build base target/release/deps/planted-3f9a1c2b
[ -x "$HEAD_BIN" ] || build head build/bench-head
cp "$BASE_BIN" "$DIR/runner/src/planted_base"
cp "$HEAD_BIN" "$DIR/runner/src/planted_head"
VARIANTS="cpu:0 cpu:2 cpu:5 cpu:10 cpu:20 memhide:0 memhide:1 layout:0 layout:1"

echo "# eval-crosscheck: pool $POOL runs/variant, $TRIALS trials, $K runs/side, -F $HZ, in $DIR" >&2
start=$(date +%s)
for i in $(seq 1 "$POOL"); do
	side=base bin=$BASE_BIN
	[ $((i % 2)) = 0 ] && side=head bin=$HEAD_BIN
	for v in $VARIANTS; do
		f="$DIR/pool/${v/:/-}.$side.$i.data"
		[ -s "$f" ] || "$PROF" record -q -F "$HZ" -o "$f" -- "$bin" ${v/:/ } >/dev/null
	done
	echo "# recorded round $i/$POOL ($(( $(date +%s) - start )) s)" >&2
done
for side in base head; do
	for v in $VARIANTS; do
		f="$DIR/cg/${v/:/-}.$side.callgrind"
		[ -s "$f" ] || valgrind -q --tool=callgrind --cache-sim=yes --callgrind-out-file="$f" \
			"$DIR/runner/src/planted_$side" ${v/:/ } 0.02 >/dev/null 2>&1
	done
done
echo "# callgrind done ($(( $(date +%s) - start )) s)" >&2

python3 - "$PROF" "$DIR" "$POOL" "$TRIALS" "$K" <<'PY'
import json, random, subprocess, sys
prof, d, pool, trials, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(1)
# odd rounds ran the base build, even rounds the head build
runs = lambda v, side: [f"{d}/pool/{v}.{side}.{i}.data" for i in range(1, pool + 1)
                        if (i % 2 == 1) == (side == "base")]
cg = lambda v, side: f"{d}/cg/{v}.{side}.callgrind"
joins = []
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
        base, head = rng.sample(runs(bv, "base"), k), rng.sample(runs(hv, "head"), k)
        rc, dj = run(["diff", "--format=json", "--base"] + base + ["--head"] + head)
        vd = verdict(dj, fn)
        flag_d += rc == 1
        ok_d += (vd == "regression") if want_diff == "regression" else (vd != "regression")
        rc, xj = run(["crosscheck", "--format=json", "--callgrind-base", cg(bv, "base"),
                      "--callgrind-head", cg(hv, "head"), "--base"] + base + ["--head"] + head)
        joins.append(xj["join"][0]["matched_pct"])
        vx = verdict(xj, fn)
        flag_x += rc == 1
        if want_cross == "no flag":
            ok_x += vx not in ("confirmed", "time-only", "instructions-only")
        else:
            ok_x += vx == want_cross
    pct = lambda n: f"{100.0 * n / trials:.0f}%"
    truth = f"{fn}: {want_diff} / {want_cross}"
    print(f"| {name} | {truth} | {pct(ok_d)} | {pct(flag_d)} | {pct(ok_x)} | {pct(flag_x)} |")
print(f"\ncallgrind functions matched by crosscheck: min {min(joins):.0f}%, "
      f"median {sorted(joins)[len(joins) // 2]:.0f}% over {len(joins)} runs")
PY

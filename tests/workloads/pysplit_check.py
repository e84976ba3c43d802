"""pysplit_check.py - judges a recording of tests/workloads/pysplit.py
against the CPU split the program measured itself (t1171, t1172).

usage: pysplit_check.py FOLDED PROGRAM.json [BEFORE.json]
  FOLDED        `prof report --format=folded --tid PID` of the main thread
  PROGRAM.json  the program's JSON at the end (or when recording stopped)
  BEFORE.json   attach: its JSON when recording started (subtracted)

Checks, each printed with its numbers:
  - at least MIN_SAMPLES samples with Python frames in one of the three
    functions (the statistics below assume it);
  - each function's share of those samples is within 5 points of its share
    of the program's own thread time;
  - zlib's native code (deflate) sits above compress: in >= 80% of the
    samples whose innermost Python frame is compress, and >= 98% of the
    samples in deflate have compress as their innermost Python frame;
  - recurse: >= 95% of its samples hold all 16 recursive frames, none more.
Stacks marked "[python: stack changed]" are left out (counted and shown).
"""
import json
import sys

FUNCS = ("pure_loop", "compress", "recurse")
MIN_SAMPLES = 3800
MARGIN = 5.0  # percentage points


def pyname(frame):
    """'recurse (pysplit.py:38)' -> 'recurse'; None for a native frame."""
    if frame.endswith(")") and " (pysplit.py:" in frame:
        return frame.split(" (")[0]
    return None


def main():
    folded, prog = sys.argv[1], json.load(open(sys.argv[2]))
    if len(sys.argv) > 3:
        before = json.load(open(sys.argv[3]))
        prog = {f: prog[f] - before[f] for f in FUNCS}
    counts = dict.fromkeys(FUNCS, 0)
    changed = deflate = deflate_ok = comp_leaf = comp_native = 0
    rec = rec16 = rec_over = 0
    for line in open(folded):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        n = int(n)
        frames = stack.split(";")
        if "[python: stack changed]" in frames:
            changed += n
            continue
        py = [(i, pyname(f)) for i, f in enumerate(frames) if pyname(f)]
        if not py:
            continue
        leaf_i, leaf = py[-1]
        hit = [f for f in FUNCS if any(name == f for _, name in py)]
        if len(hit) != 1:
            continue
        counts[hit[0]] += n
        above = frames[leaf_i + 1:]
        if leaf == "compress":
            comp_leaf += n
            comp_native += n if any("deflate" in f for f in above) else 0
        if any("deflate" in f for f in above):
            deflate += n
            deflate_ok += n if leaf == "compress" else 0
        if hit[0] == "recurse":
            depth = sum(1 for _, name in py if name == "recurse")
            rec += n
            rec16 += n if depth == 16 else 0
            rec_over += n if depth > 16 else 0
    total, ptotal = sum(counts.values()), sum(prog[f] for f in FUNCS)
    ok = True

    def check(cond, what):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what)
        ok = ok and cond

    check(total >= MIN_SAMPLES, f"{total} samples in the three functions (>= {MIN_SAMPLES}), "
          f"{changed} left out as changed")
    for f in FUNCS:
        a, b = 100.0 * counts[f] / max(total, 1), 100.0 * prog[f] / ptotal
        check(abs(a - b) <= MARGIN, f"{f}: prof {a:.1f}%, program {b:.1f}% (within {MARGIN} points)")
    check(comp_leaf and comp_native >= 0.8 * comp_leaf,
          f"deflate above compress in {comp_native} of {comp_leaf} compress samples (>= 80%)")
    check(deflate and deflate_ok >= 0.98 * deflate,
          f"{deflate_ok} of {deflate} deflate samples under compress (>= 98%)")
    check(rec and rec16 >= 0.95 * rec and rec_over == 0,
          f"{rec16} of {rec} recurse samples hold all 16 frames (>= 95%), {rec_over} more")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

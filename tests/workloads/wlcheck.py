#!/usr/bin/env python3
"""wlcheck.py - assertions the workload integration tests (tests/t11xx-*.sh)
make on `prof report --format=json` (schema prof-report/1) and
`--format=folded` output, as `prof report` writes it.  Each subcommand prints what it
measured, and on failure what it expected, then exits 1; usage errors exit 2.
Kept in one place so tests/t1199-workload-asserts-selftest.sh can prove,
on hand-made inputs, that every assertion can fail.

  wlcheck.py share JSON NAME TRUTH_PCT TOL_PCT   self_pct of NAME within TOL of TRUTH
  wlcheck.py min-self JSON NAME_REGEX MIN_PCT    summed self_pct of matching names >= MIN
  wlcheck.py module JSON NAME MODULE_BASENAME    function NAME's module ends in /MODULE_BASENAME
  wlcheck.py field JSON KEY OP VALUE             top-level numeric field (OP: ge gt le lt eq)
  wlcheck.py thread JSON COMM                    some thread has comm COMM and samples > 0
  wlcheck.py processes JSON MIN                  at least MIN distinct pids with samples
  wlcheck.py file-line JSON NAME                 NAME has a non-empty file and line > 0
  wlcheck.py depth FOLDED LEAF FRAME N MIN_PCT   of samples whose leaf is LEAF, >= MIN_PCT
                                                 have exactly N FRAME frames, main and a
                                                 libc start frame (__libc_start_call_main
                                                 or _start) outermost of main
  wlcheck.py edge FOLDED CALLER CALLEE MIN_PCT   CALLEE directly inner to CALLER in >= MIN_PCT
                                                 of all samples
  wlcheck.py comm-frame FOLDED COMM FRAME MIN_PCT  of samples with comm COMM, >= MIN_PCT have
                                                 FRAME somewhere in their stack
"""
import json
import re
import sys

START_FRAMES = ("__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl", "_start")


class Fail(Exception):
    pass


def load_json(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != "prof-report/1":
        raise Fail("%s: schema is %r, want 'prof-report/1'" % (path, doc.get("schema")))
    return doc


def load_folded(path):
    """[(comm, [outermost..innermost frames], count)]; kernel frames dropped."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            if not stack or not re.fullmatch(r"[0-9]+", count):
                raise Fail("%s:%d: not a folded line: %r" % (path, n, line))
            parts = stack.split(";")
            frames = [p for p in parts[1:] if not p.endswith("_[k]")]
            rows.append((parts[0], frames, int(count)))
    if not rows:
        raise Fail("%s: no folded stacks" % path)
    return rows


def functions(doc, name):
    return [f for f in doc.get("functions", []) if f.get("name") == name]


def self_pct(doc, name):
    return sum(f.get("self_pct", 0) for f in functions(doc, name))


def cmd_share(path, name, truth, tol):
    doc = load_json(path)
    got, truth, tol = self_pct(doc, name), float(truth), float(tol)
    print("%s self %.2f%% (truth %.1f%% +-%.1f)" % (name, got, truth, tol))
    if abs(got - truth) > tol:
        raise Fail("%s self share %.2f%% is not within %.1f of %.1f%%" % (name, got, tol, truth))


def cmd_min_self(path, pattern, minimum):
    doc = load_json(path)
    rx = re.compile(pattern)
    hits = [f for f in doc.get("functions", []) if rx.search(f.get("name", ""))]
    got = sum(f.get("self_pct", 0) for f in hits)
    print("/%s/: %d functions, self %.2f%% (want >= %s%%)" % (pattern, len(hits), got, minimum))
    for f in hits[:5]:
        print("  %s %s %.2f%%" % (f.get("name"), f.get("module"), f.get("self_pct", 0)))
    if got < float(minimum):
        names = [f.get("name") for f in doc.get("functions", [])[:15]]
        raise Fail("functions matching /%s/ have %.2f%% self, want >= %s%%; top functions: %s"
                   % (pattern, got, minimum, names))


def cmd_module(path, name, base):
    doc = load_json(path)
    mods = sorted({f.get("module", "") for f in functions(doc, name)})
    print("%s modules: %s" % (name, mods))
    if not mods:
        raise Fail("no function %r in the report" % name)
    if not any(m == base or m.endswith("/" + base) for m in mods):
        raise Fail("%s is in %s, want module %s" % (name, mods, base))


OPS = {"ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b,
       "lt": lambda a, b: a < b, "eq": lambda a, b: a == b}


def cmd_field(path, key, op, value):
    doc = load_json(path)
    if key not in doc:
        raise Fail("no field %r in %s" % (key, path))
    got = doc[key]
    print("%s = %r (want %s %s)" % (key, got, op, value))
    if not isinstance(got, (int, float)) or not OPS[op](got, float(value)):
        raise Fail("%s is %r, want %s %s" % (key, got, op, value))


def all_threads(doc):
    for p in doc.get("processes", []):
        for t in p.get("threads", []):
            yield p, t


def cmd_thread(path, comm):
    doc = load_json(path)
    seen = [(t.get("tid"), t.get("comm"), t.get("samples")) for _, t in all_threads(doc)]
    print("threads: %s" % seen)
    if not any(c == comm and (s or 0) > 0 for _, c, s in seen):
        raise Fail("no thread named %r with samples" % comm)


def cmd_processes(path, minimum):
    doc = load_json(path)
    procs = [(p.get("pid"), p.get("comm"), p.get("samples")) for p in doc.get("processes", [])]
    pids = {pid for pid, _, s in procs if (s or 0) > 0}
    print("processes: %s" % procs)
    if len(pids) < int(minimum):
        raise Fail("%d processes with samples, want >= %s" % (len(pids), minimum))


def cmd_file_line(path, name):
    doc = load_json(path)
    fs = functions(doc, name)
    print("%s: %s" % (name, [(f.get("module"), f.get("file"), f.get("line")) for f in fs]))
    if not fs:
        raise Fail("no function %r in the report" % name)
    if not any(f.get("file") and (f.get("line") or 0) > 0 for f in fs):
        raise Fail("%s has no file:line" % name)


def cmd_depth(path, leaf, frame, n, minimum):
    rows = load_folded(path)
    n, total, good, shapes = int(n), 0, 0, {}
    for _, frames, count in rows:
        if not frames or frames[-1] != leaf:
            continue
        total += count
        depth = frames.count(frame)
        has_main = "main" in frames
        has_start = has_main and any(f in START_FRAMES for f in frames[:frames.index("main")])
        key = (depth, has_main, has_start)
        shapes[key] = shapes.get(key, 0) + count
        if depth == n and has_start:
            good += count
    print("%d samples end in %s; (depth, main, libc start) -> samples: %s" % (total, leaf, shapes))
    if total == 0:
        raise Fail("no samples whose leaf is %s" % leaf)
    pct = 100.0 * good / total
    print("%.2f%% complete (want >= %s%%)" % (pct, minimum))
    if pct < float(minimum):
        raise Fail("only %.2f%% of %s samples have %d %s frames under main and a libc start frame"
                   % (pct, leaf, n, frame))


def cmd_edge(path, caller, callee, minimum):
    rows = load_folded(path)
    total = sum(c for _, _, c in rows)
    hit = sum(c for _, fr, c in rows if any(a == caller and b == callee for a, b in zip(fr, fr[1:])))
    pct = 100.0 * hit / total
    print("%s;%s in %d of %d samples (%.2f%%, want >= %s%%)" % (caller, callee, hit, total, pct, minimum))
    if pct < float(minimum):
        raise Fail("%s directly under %s in only %.2f%% of samples" % (callee, caller, pct))


def cmd_comm_frame(path, comm, frame, minimum):
    rows = load_folded(path)
    total = sum(c for cm, _, c in rows if cm == comm)
    hit = sum(c for cm, fr, c in rows if cm == comm and frame in fr)
    comms = sorted({cm for cm, _, _ in rows})
    print("comm %s: %d samples, %d with %s (comms: %s)" % (comm, total, hit, frame, comms))
    if total == 0:
        raise Fail("no samples with comm %r" % comm)
    if 100.0 * hit / total < float(minimum):
        raise Fail("only %.2f%% of %s samples have %s" % (100.0 * hit / total, comm, frame))


COMMANDS = {"share": (cmd_share, 4), "min-self": (cmd_min_self, 3), "module": (cmd_module, 3),
            "field": (cmd_field, 4), "thread": (cmd_thread, 2), "processes": (cmd_processes, 2),
            "file-line": (cmd_file_line, 2), "depth": (cmd_depth, 5), "edge": (cmd_edge, 4),
            "comm-frame": (cmd_comm_frame, 4)}


def main(argv):
    if len(argv) < 2 or argv[1] not in COMMANDS or len(argv) - 2 != COMMANDS[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    try:
        COMMANDS[argv[1]][0](*argv[2:])
    except Fail as e:
        print("FAIL: %s" % e)
        return 1
    except (OSError, ValueError) as e:
        print("FAIL: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""check.py - the assertions of the compatibility matrix (tests/t1200 and
scripts/compat.sh), on one kind's `prof report --format=json` output.

  check.py kind JSON MIN_COMPLETE TOL [--no-line] NAME=TRUTH...
      complete_pct >= MIN_COMPLETE; every NAME is a function of the report
      and its share of the NAMEs' summed self time is within TOL points of
      TRUTH (the known split; NAME may be re:REGEX); no row of >= 0.5% self is a raw mangled
      name; the hottest NAME has a source file and line (unless --no-line).
      With no NAME (go-g0): the complete share and the names only.
  check.py summary JSON NAME...
      one line: complete % and the self % of each NAME (for compat.sh).
  check.py addr2line ANNOTATE BINARY
      every instruction row of a `prof annotate --stdio` output (address,
      file:line) has the file:line `go tool addr2line BINARY` gives for the
      address; prints the hottest row.
  check.py inline FOLDED ANNOTATE JSON CALLER CALLEE
      CALLEE is an inline frame ("_[i]" in folded stacks) always directly
      inside CALLER, and ANNOTATE (of CALLER) shows it inlined; prints the
      call site: the line of CALLER whose total minus self is CALLEE's total.
  check.py caller FOLDED CALLER NAME...
      in at least 95% of the folded stacks where NAME is a frame, the frame
      just outside it is CALLER (a frameless leaf keeps its caller).
  check.py switched FOLDED MIN_PCT
      Go's stack switches: at least MIN_PCT% of the samples have a frame in
      runtime.systemstack, runtime.mcall or runtime.morestack (the g0 stack
      of a Go thread), and every such frame that is a caller is the
      outermost one: the stack ends there, as Go's own traceback ends it,
      and no word past the switch was read as a return address.
  check.py perf-script FILE NAME...
      the same line from `perf script -F comm,ip,sym` output: a stack is
      complete when its outermost frame is a thread root.

Exits 1 with the reason on a failed check, 2 on a usage error.
"""
import json
import re
import sys

MANGLED = re.compile(r"^_Z|^_R[A-Z]|\$LT\$|\$u[0-9a-f]{2}\$|::h[0-9a-f]{16}$")
ROOTS = ("_start", "__start", "_dl_start_user", "clone", "__clone", "clone3", "__clone3",
         "start_thread", "ret_from_fork", "ret_from_fork_asm", "_rt0_amd64_linux")
GO_ROOTS = ("runtime.goexit", "runtime.mstart", "runtime.clone", "runtime.rt0_go", "_rt0_amd64",
            # where Go's traceback ends a stack: the functions flagged TOPFRAME or
            # SPWRITE in Go 1.19's .gopclntab (prof reads the flags; perf's
            # output has only names)
            "runtime.sigtramp", "runtime.systemstack", "runtime.mcall", "runtime.morestack",
            "runtime.asmcgocall", "runtime.gogo", "gogo", "runtime.nanotime1", "time.now",
            "runtime.sigfwd", "runtime.callCgoSigaction", "runtime.callCgoMmap",
            "runtime.callCgoMunmap")
GO_SWITCHES = re.compile(r"^runtime\.(systemstack|mcall|morestack)(\.abi0)?$")


class Fail(Exception):
    pass


def is_root(name):
    name = name.split("@")[0]
    if name in ROOTS:
        return True
    return any(name == g or name == g + ".abi0" for g in GO_ROOTS)


def load(path):
    with open(path) as f:
        return json.load(f)


def matches(fname, name):
    """NAME is a function name, or "re:REGEX" for every name REGEX finds."""
    return re.search(name[3:], fname) is not None if name.startswith("re:") else fname == name


def self_of(doc, name):
    return sum(f.get("self_pct", 0) for f in doc.get("functions", []) if matches(f.get("name", ""), name))


def cmd_kind(path, min_complete, tol, args):
    doc = load(path)
    want_line = "--no-line" not in args
    pairs = [a.rsplit("=", 1) for a in args if a and a != "--no-line"]
    complete = doc.get("complete_pct", 0)
    print("complete stacks %.1f%% (want >= %s)" % (complete, min_complete))
    problems = []
    if complete < float(min_complete):
        problems.append("complete stacks %.1f%% < %s%%" % (complete, min_complete))
    shares = {name: self_of(doc, name) for name, _ in pairs}
    total = sum(shares.values())
    top = [f.get("name") for f in doc.get("functions", [])[:8]]
    for name, truth in pairs:
        rel = 100.0 * shares[name] / total if total else 0.0
        print("  %-55s self %5.1f%%, %5.1f%% of the split (truth %s)" % (name, shares[name], rel, truth))
        if shares[name] <= 0:
            problems.append("no function named %r (top: %s)" % (name, top))
        elif abs(rel - float(truth)) > float(tol):
            problems.append("%s has %.1f%% of the split, truth %s +- %s" % (name, rel, truth, tol))
    for f in doc.get("functions", []):
        if f.get("self_pct", 0) >= 0.5 and MANGLED.search(f.get("name", "")):
            problems.append("raw mangled name at %.1f%%: %s" % (f["self_pct"], f["name"]))
    if want_line and pairs:
        hottest = max(pairs, key=lambda p: shares[p[0]])[0]
        rows = [f for f in doc.get("functions", []) if matches(f.get("name", ""), hottest)]
        print("  hottest %s at %s" % (hottest, ["%s:%s" % (f.get("file"), f.get("line")) for f in rows]))
        if not any(f.get("file") and f.get("line", 0) > 0 for f in rows):
            problems.append("no file:line for the hottest function %s" % hottest)
    if problems:
        raise Fail("; ".join(problems))


def annotate_rows(path):
    """[(self, address, file:line)] of the instruction table, [(self, total, line, text)] of the source table."""
    insns, lines, section = [], [], None
    with open(path) as f:
        for line in f:
            if line.startswith("# source"):
                section = "source"
            elif line.startswith("# instructions"):
                section = "insns"
            elif not line.startswith("#"):
                parts = line.split()
                if section == "insns" and len(parts) >= 3 and re.match(r"^[0-9a-f]+$", parts[1]):
                    insns.append((int(parts[0]), parts[1], parts[2]))
                elif section == "source" and len(parts) >= 3 and parts[0].isdigit():
                    lines.append((int(parts[0]), int(parts[1]), int(parts[2]), " ".join(parts[3:])))
    return insns, lines


def cmd_addr2line(path, binary):
    import subprocess
    insns, _ = annotate_rows(path)
    if not insns:
        raise Fail("no instruction rows in %s" % path)
    out = subprocess.run(["go", "tool", "addr2line", binary], input="".join("0x%s\n" % a for _, a, _ in insns),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    want = [out[2 * i + 1] for i in range(len(insns))]
    bad = [(a, got, w) for (_, a, got), w in zip(insns, want)
           if got != "%s:%s" % (w.rsplit(":", 1)[0].rsplit("/", 1)[-1], w.rsplit(":", 1)[1])]
    hottest = max(insns)
    print("  hottest pc %s at %s (%d samples); %d rows" % (hottest[1], hottest[2], hottest[0], len(insns)))
    if bad:
        raise Fail("rows unlike go tool addr2line: %s" % ["%s %s != %s" % b for b in bad[:5]])


def cmd_inline(folded, annotate, jsonpath, caller, callee):
    inner, outside = 0, []
    with open(folded) as f:
        for line in f:
            frames = line.rsplit(" ", 1)[0].split(";")
            for i, fr in enumerate(frames):
                if fr == callee + "_[i]":
                    inner += 1
                    if i == 0 or frames[i - 1] != caller:
                        outside.append(frames[i - 1] if i else "-")
                elif fr == callee:
                    outside.append("%s (not inlined)" % callee)
    _, lines = annotate_rows(annotate)
    total = sum(f.get("total", 0) for f in load(jsonpath).get("functions", []) if f.get("name") == callee)
    sites = [ln for s, t, ln, text in lines if t - s == total and "[inlined" not in text]
    marked = [ln for s, t, ln, text in lines if "[inlined %s]" % callee in text]
    print("  %s: %d stacks inlined in %s; lines %s; call site %s" % (callee, inner, caller, marked, sites))
    if not inner or outside:
        raise Fail("%s is not always an inline frame of %s: %d stacks, other parents %s" %
                   (callee, caller, inner, outside[:5]))
    if not marked or len(sites) != 1:
        raise Fail("annotate of %s: %s inlined at %s, call sites %s" % (caller, callee, marked, sites))


def cmd_caller(folded, caller, names):
    problems = []
    for name in names:
        stacks = inside = 0
        others = {}
        with open(folded) as f:
            for line in f:
                frames, count = line.rsplit(" ", 1)
                frames = frames.split(";")
                if name in frames:
                    i = frames.index(name)
                    stacks += int(count)
                    if i and frames[i - 1] == caller:
                        inside += int(count)
                    else:
                        parent = frames[i - 1] if i else "-"
                        others[parent] = others.get(parent, 0) + int(count)
        print("  %s: %d of %d samples directly inside %s; else %s" % (name, inside, stacks, caller, others))
        if not stacks or inside < 0.95 * stacks:
            problems.append("%s: %d of %d samples inside %s" % (name, inside, stacks, caller))
    if problems:
        raise Fail("; ".join(problems))


def cmd_switched(folded, min_pct):
    total = switched = 0
    bad = {}
    with open(folded) as f:
        for line in f:
            frames, count = line.rsplit(" ", 1)
            user = [fr for fr in frames.split(";")[1:] if not fr.endswith("_[k]")]	# outermost first
            total += int(count)
            at = [i for i, fr in enumerate(user) if GO_SWITCHES.match(fr)]
            if at:
                switched += int(count)
            for i in at:
                if i != 0 and i != len(user) - 1:	# a caller with frames beyond it
                    key = ";".join(user[:i + 1])[:160]
                    bad[key] = bad.get(key, 0) + int(count)
    pct = 100.0 * switched / total if total else 0.0
    print("  %d of %d samples (%.1f%%) through a Go stack switch; %d read past one" %
          (switched, total, pct, sum(bad.values())))
    problems = []
    if pct < float(min_pct):
        problems.append("%.1f%% of samples through a stack switch < %s%%" % (pct, min_pct))
    if bad:
        problems.append("frames read past a stack switch: %s" % sorted(bad.items(), key=lambda kv: -kv[1])[:4])
    if problems:
        raise Fail("; ".join(problems))


def cmd_summary(path, names):
    doc = load(path)
    print("%.1f %s" % (doc.get("complete_pct", 0), " ".join("%.1f" % self_of(doc, n) for n in names)))


def perf_stacks(path):
    """[(leaf symbol, outermost symbol)] from perf script -F comm,ip,sym."""
    stacks, frames = [], []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if frames:
                    stacks.append((frames[0], frames[-1]))
                frames = []
            elif line[0] in " \t":
                parts = line.split(None, 1)
                sym = parts[1].strip() if len(parts) > 1 else "[unknown]"
                frames.append(sym.replace(" (inlined)", ""))
    if frames:
        stacks.append((frames[0], frames[-1]))
    return stacks


def without_params(name):
    """perf script prints C++ names without their parameter list."""
    return name if name.startswith("re:") else re.sub(r"\([^()]*\)$", "", name)


def cmd_perf_script(path, names):
    names = [without_params(n) for n in names]
    stacks = perf_stacks(path)
    n = len(stacks) or 1
    complete = 100.0 * sum(is_root(outer) for _, outer in stacks) / n
    selfs = ["%.1f" % (100.0 * sum(matches(leaf.split("+0x")[0], name) for leaf, _ in stacks) / n)
             for name in names]
    print("%.1f %s" % (complete, " ".join(selfs)))


def main(argv):
    try:
        if len(argv) >= 5 and argv[1] == "kind":
            cmd_kind(argv[2], argv[3], argv[4], argv[5:])
        elif len(argv) >= 3 and argv[1] == "summary":
            cmd_summary(argv[2], argv[3:])
        elif len(argv) == 4 and argv[1] == "addr2line":
            cmd_addr2line(argv[2], argv[3])
        elif len(argv) >= 5 and argv[1] == "caller":
            cmd_caller(argv[2], argv[3], argv[4:])
        elif len(argv) == 7 and argv[1] == "inline":
            cmd_inline(*argv[2:])
        elif len(argv) == 4 and argv[1] == "switched":
            cmd_switched(argv[2], argv[3])
        elif len(argv) >= 3 and argv[1] == "perf-script":
            cmd_perf_script(argv[2], argv[3:])
        else:
            sys.stderr.write(__doc__)
            return 2
    except Fail as e:
        print("FAIL: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

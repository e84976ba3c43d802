#!/usr/bin/env python3
"""heapcheck.py - compares prof's heap figures per planted function with the
truth the heap workload prints ("truth FUNCTION allocs=N bytes=B live=L
peak=P").

  heapcheck.py TRUTH PREFIX TOLERANCE [FIELD...]

PREFIX.allocs.json, PREFIX.live-bytes.json, PREFIX.peak-bytes.json (and
PREFIX.alloc-bytes.json) are `prof report --format=json --metric=M`
outputs.  FIELDs: allocs, bytes, live, peak (default: allocs live peak).
A function whose truth is 0 must be under 1% of the metric's total.
Exit 1 with one line per miss."""
import json
import sys

METRIC = {"allocs": "allocs", "bytes": "alloc-bytes", "live": "live-bytes", "peak": "peak-bytes"}


def main():
    truth_file, prefix, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    fields = sys.argv[4:] or ["allocs", "live", "peak"]
    truth = {}
    for line in open(truth_file):
        if line.startswith("truth "):
            parts = line.split()
            truth[parts[1]] = {k: float(v) for k, v in (p.split("=") for p in parts[2:])}
    if not truth:
        print("no truth lines in", truth_file)
        return 1
    bad = 0
    for field in fields:
        rep = json.load(open("%s.%s.json" % (prefix, METRIC[field])))
        unit = rep.get("unit")
        want_unit = "allocations" if field == "allocs" else "bytes"
        if unit != want_unit:
            print("%s: unit %r, want %r" % (field, unit, want_unit))
            bad += 1
        got = {f["name"]: f["total"] for f in rep["functions"]}
        grand = max([f["total"] for f in rep["functions"]] or [0])
        for fn, t in sorted(truth.items()):
            want, have = t[field], got.get(fn, 0)
            if want == 0:
                ok = have <= 0.01 * grand
            else:
                ok = abs(have - want) <= tol * want
            print("%s %-14s %-6s want %12.0f got %12.0f %s" %
                  ("ok  " if ok else "MISS", fn, field, want, have,
                   "" if want == 0 else "(%+.1f%%)" % (100.0 * (have - want) / want)))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

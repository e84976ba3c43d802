#!/usr/bin/env python3
"""html-app-data.py REPORT.html - decodes the bucketed samples the HTML
report embeds (#prof-app, written by src/output/htmlapp.c) without the
page's own script, and prints a summary as JSON for the tests:
  rows, nbuckets, nlanes, lane_per   the selection grid and the tracks'
  samples                            sample counts summed over every row
  lane_threads                       threads that have a track
  stacks, frames                     entries of the stack and frame tables
  bad                                rows out of order or out of the grid,
                                     stacks or frames that point nowhere
"""
import json
import sys


def app_data(path):
    s = open(path, encoding="utf-8").read()
    start = s.find('id="prof-app">')
    if start < 0:
        sys.exit("html-app-data: no #prof-app in " + path)
    start += len('id="prof-app">')
    return json.loads(s[start:s.find("</script>", start)])


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def vlq(text):
    """htmlapp.c's sb_add_vlq(): base64 digits, 5 bits each, lowest first,
    32 added while more digits follow."""
    out, v, shift = [], 0, 0
    for c in text:
        d = B64.index(c)
        v |= (d & 31) << shift
        if d & 32:
            shift += 5
        else:
            out.append(v)
            v, shift = 0, 0
    if shift:
        raise ValueError("cut VLQ number at the end")
    return out


def column(packed, n, default):
    """A column of emit_column(): sparse (row delta, value) pairs or dense."""
    col = [default] * n
    if isinstance(packed, dict):
        return vlq(packed["dense"])
    pairs = vlq(packed)
    row = 0
    for i in range(0, len(pairs), 2):
        row += pairs[i]
        col[row] = pairs[i + 1]
    return col


def main():
    a = app_data(sys.argv[1])
    p = a["rows"]
    n = p["count"]
    keys = []
    runs, deltas = vlq(p["runs"]), vlq(p["st"])
    for i in range(0, len(runs), 3):
        bucket, thread, length = runs[i:i + 3]
        stack = 0
        for k in range(length):
            stack = (stack if k else 0) + deltas[len(keys)]
            keys.append((bucket, thread, stack))
    counts = column(p["n"], n, 1)
    bad = sum(1 for i, k in enumerate(keys)
              if k[0] >= a["nbuckets"] or (i and keys[i - 1] >= k))
    # stacks: (distance to the parent, frame + 1) pairs, parents first
    st = vlq(a["stacks"])
    nst, nfr = len(st) // 2, len(a["frames"])
    bad += sum(1 for k in keys if k[2] >= nst)
    bad += sum(1 for s in range(1, nst)
               if not 1 <= st[2 * s] <= s or not 1 <= st[2 * s + 1] <= nfr)
    print(json.dumps({
        "rows": n, "decoded": len(keys), "nbuckets": a["nbuckets"],
        "nlanes": a.get("nlanes", a["nbuckets"]), "lane_per": a.get("lane_per", 1),
        "samples": sum(counts), "lane_threads": len(a.get("lanes", [])),
        "stacks": nst, "frames": nfr,
        "bad": bad + abs(n - len(keys)),
    }))


main()

#!/usr/bin/env python3
"""html-app-data.py REPORT.html - decodes the bucketed samples the HTML
report embeds (#prof-app, written by src/output/htmlapp.c) without the
page's own script, and prints a summary as JSON for the tests:
  rows, nbuckets, nlanes, lane_per   the selection grid and the tracks'
  samples                            sample counts summed over every row
  lane_threads                       threads that have a track
  bad                                rows out of order or out of the grid
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


def column(packed, n, default):
    """A column of emit_column(): sparse (row delta, value) pairs or dense."""
    col = [default] * n
    if isinstance(packed, dict):
        return list(packed["dense"])
    row = 0
    for i in range(0, len(packed), 2):
        row += packed[i]
        col[row] = packed[i + 1]
    return col


def main():
    a = app_data(sys.argv[1])
    p = a["rows"]
    n = p["count"]
    keys = []
    for i in range(0, len(p["runs"]), 3):
        bucket, thread, length = p["runs"][i:i + 3]
        stack = 0
        for k in range(length):
            stack = (stack if k else 0) + p["st"][len(keys)]
            keys.append((bucket, thread, stack))
    counts = column(p["n"], n, 1)
    bad = sum(1 for i, k in enumerate(keys)
              if k[0] >= a["nbuckets"] or (i and keys[i - 1] >= k))
    print(json.dumps({
        "rows": n, "decoded": len(keys), "nbuckets": a["nbuckets"],
        "nlanes": a.get("nlanes", a["nbuckets"]), "lane_per": a.get("lane_per", 1),
        "samples": sum(counts), "lane_threads": len(a.get("lanes", [])),
        "bad": bad + abs(n - len(keys)),
    }))


main()

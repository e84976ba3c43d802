#!/bin/sh
# screenshot-heap.sh [OUT.png [LEAKS.png]] - the README's pictures of a
# heap recording in the HTML report (default docs/heap.png and
# docs/heap-leaks.png): `prof record --heap --heap-rate 4096` of the
# planted heap workload run with its phases (tests/workloads/heap.c).
#  - OUT: the report of --metric=live-bytes scrolled to the tracks: the
#    process track draws the live heap (purple) beside RSS (green), the
#    allocation rate track below it the bytes allocated per bucket
#    (orange), and the flame graph below holds what was never freed;
#  - LEAKS: the leak view of the same page, the age from the last phase
#    mark to the end in its "Leaks older than" box (by the link's age=):
#    only leak_planted's old blocks, not young_planted's (allocated just
#    before the exit); the tracks shaded after the age's line.
# The recording stays in a temporary directory and is deleted.  Needs
# root (tracefs uprobes), ./prof and the workloads, node and
# /usr/bin/chromium; the npm tools are installed into build/node on first
# use.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/docs/heap.png}")
leaks=$(realpath -m "${2:-$top/docs/heap-leaks.png}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$top/prof" ] && [ -x "$top/tests/workloads/bin/heap" ] || make -C "$top" prof workloads >/dev/null
TOP=$top
. "$top/tests/lib/node-tools.sh"
node_tools_ready || { echo "$0: $NODE_TOOLS_WHY" >&2; exit 1; }
"$top/prof" record -q --heap --heap-rate 4096 -o "$tmp/heap.data" -- \
	"$top/tests/workloads/bin/heap" 1000000 - phases >"$tmp/truth"
"$top/prof" report -i "$tmp/heap.data" --metric=live-bytes --format=html -o "$tmp/heap.html"
"$top/prof" report -i "$tmp/heap.data" --format=json >"$tmp/heap.json"
age=$(python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
t = int(re.search(r"phase after_peak t=(\d+)", open(sys.argv[2]).read()).group(1))
print("%.3f" % ((d["end_ns"] - t) / 1e9))' "$tmp/heap.json" "$tmp/truth")
node "$top/tests/node/html-app-drive.js" shot "$tmp/heap.html" "$tmp/heap.png" 900 tracks >/dev/null
node "$top/tests/node/html-app-drive.js" shot "$tmp/heap.html#v=1&m=live-bytes&age=$age" "$tmp/leaks.png" 640 tracks >/dev/null
mkdir -p "$(dirname "$out")" "$(dirname "$leaks")"
cp "$tmp/heap.png" "$out"
cp "$tmp/leaks.png" "$leaks"
echo "wrote $out and $leaks (leak view: age $age s)"

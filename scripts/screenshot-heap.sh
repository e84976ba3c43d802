#!/bin/sh
# screenshot-heap.sh [OUT.png] - the README's picture of a heap recording
# in the HTML report (default docs/heap.png): `prof record --heap
# --heap-rate 4096` of the planted heap workload (tests/workloads/heap.c),
# the report of --metric=live-bytes (what was never freed), scrolled to
# the tracks: the process track draws the live heap (purple) beside RSS
# (green), the flame graph below holds the leak's stack.  The recording
# stays in a temporary directory and is deleted.  Needs root (tracefs
# uprobes), ./prof and the workloads, node and /usr/bin/chromium; the npm
# tools are installed into build/node on first use.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/docs/heap.png}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$top/prof" ] && [ -x "$top/tests/workloads/bin/heap" ] || make -C "$top" prof workloads >/dev/null
TOP=$top
. "$top/tests/lib/node-tools.sh"
node_tools_ready || { echo "$0: $NODE_TOOLS_WHY" >&2; exit 1; }
"$top/prof" record -q --heap --heap-rate 4096 -o "$tmp/heap.data" -- "$top/tests/workloads/bin/heap" 1000000 >/dev/null
"$top/prof" report -i "$tmp/heap.data" --metric=live-bytes --format=html -o "$tmp/heap.html"
node "$top/tests/node/html-app-drive.js" shot "$tmp/heap.html" "$tmp/heap.png" 900 tracks >/dev/null
mkdir -p "$(dirname "$out")"
cp "$tmp/heap.png" "$out"
echo "wrote $out"

#!/bin/sh
# screenshot-machine.sh [OUT.png] - the picture of a whole-machine HTML
# report in docs/system-wide.md: `prof record -a -- sleep 3` while split,
# recursion and a shell's short-lived children run, then the report's
# first screen (1400x1000) in headless Chromium (default
# docs/system-wide.png).  The recording stays in a temporary directory and
# is deleted.  Needs root (or perf_event_paranoid <= 0), ./prof and the
# workloads (make check builds them), node and /usr/bin/chromium; the npm
# tools are installed into build/node on first use.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/docs/system-wide.png}")
tmp=$(mktemp -d)
wl=$top/tests/workloads/bin
pids=
trap 'kill $pids 2>/dev/null; rm -rf "$tmp"' EXIT

[ -x "$top/prof" ] && [ -x "$wl/split" ] || make -C "$top" prof workloads >/dev/null
TOP=$top
. "$top/tests/lib/node-tools.sh"
node_tools_ready || { echo "$0: $NODE_TOOLS_WHY" >&2; exit 1; }
"$wl/split" 30 >/dev/null & pids="$pids $!"
"$wl/recursion" 30 >/dev/null & pids="$pids $!"
sh -c 'while :; do ls / >/dev/null; sleep 0.2; done' & pids="$pids $!"
"$top/prof" record -q -a -o "$tmp/sw.data" -- sleep 3
"$top/prof" report -i "$tmp/sw.data" --format=html -o "$tmp/sw.html"
node "$top/tests/node/html-app-drive.js" shot "$tmp/sw.html" "$tmp/sw.png" 1000 >/dev/null
mkdir -p "$(dirname "$out")"
cp "$tmp/sw.png" "$out"
echo "wrote $out"

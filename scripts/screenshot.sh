#!/bin/sh
# screenshot.sh [OUT.png] - the README's picture of the HTML report: records
# the phases workload (two threads, an fdatasync phase) with ./prof, writes
# the HTML report, selects the I/O phase in headless Chromium and saves a
# screenshot (default docs/report.png).  The recording stays in a temporary
# directory and is deleted.  Needs ./prof and the workloads (make check
# builds them), node and /usr/bin/chromium; the npm tools are installed
# into build/node on first use.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/docs/report.png}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$top/prof" ] && [ -x "$top/tests/workloads/bin/phases" ] ||
	make -C "$top" prof workloads >/dev/null
TOP=$top
. "$top/tests/lib/node-tools.sh"
node_tools_ready || { echo "$0: $NODE_TOOLS_WHY" >&2; exit 1; }
"$top/prof" record -q -o "$tmp/ph.data" -- "$top/tests/workloads/bin/phases" "$tmp" 2 >"$tmp/run.out"
"$top/prof" report -i "$tmp/ph.data" --format=html -o "$tmp/report.html"
set -- $(sed -n 's/^phases: io_start_ns \([0-9]*\) io_end_ns \([0-9]*\)/\1 \2/p' "$tmp/run.out")
SHOT_DIR=$tmp node "$top/tests/node/html-app-drive.js" phases "$tmp/report.html" "$1" "$2" >/dev/null
mkdir -p "$(dirname "$out")"
cp "$tmp/phases.png" "$out"
echo "wrote $out"

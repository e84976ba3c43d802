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
mkdir -p "$top/build/node"
if ! cmp -s "$top/tests/node/package.json" "$top/build/node/package.json" ||
   [ ! -d "$top/build/node/node_modules/playwright-core" ]; then
	cp "$top/tests/node/package.json" "$top/build/node/"
	(cd "$top/build/node" && npm install --no-audit --no-fund --silent)
fi
"$wl/split" 30 >/dev/null & pids="$pids $!"
"$wl/recursion" 30 >/dev/null & pids="$pids $!"
sh -c 'while :; do ls / >/dev/null; sleep 0.2; done' & pids="$pids $!"
"$top/prof" record -q -a -o "$tmp/sw.data" -- sleep 3
"$top/prof" report -i "$tmp/sw.data" --format=html -o "$tmp/sw.html"
cat >"$tmp/shot.js" <<'JS'
const { chromium } = require('playwright-core');
(async () => {
	const b = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--headless', '--no-sandbox', '--disable-gpu'], headless: true });
	const page = await b.newPage({ viewport: { width: 1400, height: 1000 } });
	await page.goto('file://' + process.argv[2]);
	await page.waitForSelector('body[data-app=ready]', { timeout: 120000 });
	await page.screenshot({ path: process.argv[3] });
	await b.close();
})().catch((e) => { console.error(e); process.exit(1); });
JS
NODE_PATH="$top/build/node/node_modules" node "$tmp/shot.js" "$tmp/sw.html" "$tmp/sw.png"
mkdir -p "$(dirname "$out")"
cp "$tmp/sw.png" "$out"
echo "wrote $out"

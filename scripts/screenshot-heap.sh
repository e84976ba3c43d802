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
mkdir -p "$top/build/node"
if ! cmp -s "$top/tests/node/package.json" "$top/build/node/package.json" ||
   [ ! -d "$top/build/node/node_modules/playwright-core" ]; then
	cp "$top/tests/node/package.json" "$top/build/node/"
	(cd "$top/build/node" && npm install --no-audit --no-fund --silent)
fi
"$top/prof" record -q --heap --heap-rate 4096 -o "$tmp/heap.data" -- "$top/tests/workloads/bin/heap" 1000000 >/dev/null
"$top/prof" report -i "$tmp/heap.data" --metric=live-bytes --format=html -o "$tmp/heap.html"
cat >"$tmp/shot.js" <<'JS'
const { chromium } = require('playwright-core');
(async () => {
	const b = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--headless', '--no-sandbox', '--disable-gpu'], headless: true });
	const page = await b.newPage({ viewport: { width: 1400, height: 900 } });
	await page.goto('file://' + process.argv[2]);
	await page.waitForSelector('body[data-app=ready]', { timeout: 120000 });
	await page.evaluate(() => document.getElementById('tracks').scrollIntoView());
	await page.evaluate(() => window.scrollBy(0, -60));
	await page.screenshot({ path: process.argv[3] });
	await b.close();
})().catch((e) => { console.error(e); process.exit(1); });
JS
NODE_PATH="$top/build/node/node_modules" node "$tmp/shot.js" "$tmp/heap.html" "$tmp/heap.png"
mkdir -p "$(dirname "$out")"
cp "$tmp/heap.png" "$out"
echo "wrote $out"

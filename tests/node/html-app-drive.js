// html-app-drive.js MODE REPORT.html [ARGS...] - drives prof's HTML report
// in the system Chromium with playwright-core (real mouse and keyboard
// events) and prints what the panels show as one JSON object; the shell
// test (tests/t5220-html-app.sh) makes the assertions.
//   phases REPORT IO_START_NS IO_END_NS   range, track, metric, search,
//                                         source view, URL round trip
//   deep REPORT                           height cap and collapse recursion
//   load REPORT                           load time (ready, first paint) and
//                                         Chromium's CPU time
//   diff REPORT                           red/blue flame graph, movers table
//   machine REPORT                        a many-process page: what the first
//                                         screen shows, the process table and
//                                         the process tracks, expanding one
//   warm N REPORT...                      each report N times, interleaved, in
//                                         one browser: per report the median
//                                         of each of the page's marks
//   heap REPORT T1 T2 T3                  a heap recording: the allocation rate
//                                         track, and the flame graph of ranges
//                                         dragged from T1 to T2, and of the
//                                         range from T3 to the end (ns)
//   heapviews REPORT AGE T1 T2            the leak view with AGE typed in (s; then
//                                         with allocs, then age 0) and the
//                                         snapshot diff of a range dragged on
//                                         the heap track from T1 to T2 (ns),
//                                         of its process, from the start to T1:
//                                         per view the numbers shown and the
//                                         report flags the page gives for it
//   shot REPORT OUT.png HEIGHT [ID]       the page at 1400xHEIGHT into OUT.png,
//                                         scrolled to element ID (the
//                                         pictures of the docs, scripts/)
//   serve                                 any of the above, one per line of
//                                         input, in one browser (below)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function open(browser, url, errors) {
	const page = await browser.newPage();
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	await page.goto(url);
	await page.waitForSelector('body[data-app=ready]', { timeout: 120000 });
	return page;
}

// What the panels show now.
function panels(page) {
	return page.evaluate(() => {
		return {
			hash: location.hash,
			selinfo: document.getElementById('selinfo').textContent,
			fns: Array.from(document.querySelectorAll('#fns tbody tr')).map((r) => r.cells[0].textContent),
			flame: JSON.parse(document.getElementById('flame').getAttribute('data-names') || '[]'),
			total: +document.getElementById('flame').getAttribute('data-total'),
			calltree: Array.from(document.querySelectorAll('#calltree .ct')).map((d) => d.getAttribute('data-n')),
			hits: Array.from(document.querySelectorAll('#calltree .ct.hit')).map((d) => d.getAttribute('data-n')),
			matched: document.getElementById('matched').textContent,
			source: document.getElementById('source').textContent,
			srcName: document.getElementById('src-name').textContent,
			hottest: Array.from(document.querySelectorAll('#srctable tr.hottest')).map((r) => +r.cells[2].textContent),
			hot: Array.from(document.querySelectorAll('#srctable tr.hot')).map((r) => +r.cells[2].textContent),
			stackCols: JSON.parse(document.getElementById('stackchart').getAttribute('data-cols') || '[]'),
			swName: document.getElementById('sw-name').textContent,
			flameHeight: document.getElementById('flame').offsetHeight,
			wrapHeight: document.getElementById('flamewrap').clientHeight,
		};
	});
}

function appData(page) {
	return page.evaluate(() => {
		const a = JSON.parse(document.getElementById('prof-app').textContent);
		return { t0: a.t0, bucket_ns: a.bucket_ns, nbuckets: a.nbuckets, threads: a.threads, strings: a.strings,
			 events: a.events };
	});
}

function lanes(page) {
	return page.evaluate(() => JSON.parse(document.getElementById('trk').getAttribute('data-lanes')));
}

// Pixels of one colour in a lane between two canvas x positions.
function countColour(page, lane, x0, x1, rgb) {
	return page.evaluate(([lane, x0, x1, rgb]) => {
		const cv = document.getElementById('trk'), g = cv.getContext('2d');
		const img = g.getImageData(Math.round(x0), lane.y, Math.max(1, Math.round(x1 - x0)), lane.h).data;
		let n = 0;
		for (let i = 0; i < img.length; i += 4)
			if (Math.abs(img[i] - rgb[0]) < 8 && Math.abs(img[i + 1] - rgb[1]) < 8 && Math.abs(img[i + 2] - rgb[2]) < 8) n++;
		return n / Math.max(1, Math.round(x1 - x0));
	}, [lane, x0, x1, rgb]);
}

// A lane as laid out now: a metric switch or a search may move the lanes
// after the page measured them.
async function laneNow(page, lane) {
	return (await lanes(page)).find((l) => l.th === lane.th && l.proc === lane.proc && l.rate === lane.rate) || lane;
}

// Clicks a track's label.  The canvas is scrolled into view and measured
// again first: filling the search boxes or clicking a table row scrolls the
// page, and a click at a position measured before that lands elsewhere
// (with a loaded machine's longer tables it missed the worker's track).
async function clickTrack(page, lane) {
	const trk = await page.$('#trk');
	await trk.scrollIntoViewIfNeeded();
	const b = await trk.boundingBox(), now = await laneNow(page, lane);
	await page.mouse.click(b.x + 60, b.y + now.y + now.h / 2);
}

async function phases(browser, url, ioStart, ioEnd, out, errors) {
	const page = await open(browser, url, errors);
	const box = await (await page.$('#trk')).boundingBox();
	const A = await appData(page), L = await lanes(page);
	const LABEL = 190, tw = box.width - LABEL;
	const xOf = (t) => LABEL + (t - A.t0) / A.bucket_ns * tw / A.nbuckets;
	const span = ioEnd - ioStart, s0 = ioStart + span * 0.15, s1 = ioEnd - span * 0.15;
	out.initial = await panels(page);

	// 1. drag over the middle of the I/O phase
	const y = box.y + L[L.length - 1].y + 5;
	await page.mouse.move(box.x + xOf(s0), y);
	await page.mouse.down();
	await page.mouse.move(box.x + (xOf(s0) + xOf(s1)) / 2, y, { steps: 4 });
	await page.mouse.move(box.x + xOf(s1), y, { steps: 4 });
	await page.mouse.up();
	out.range = await panels(page);
	const top = await page.evaluate(() => {
		const h = Array.from(document.querySelectorAll('h2')).find((e) => e.textContent == 'Tracks');
		return h.getBoundingClientRect().top + window.scrollY;
	});
	await page.screenshot({ path: path.join(process.env.SHOT_DIR || os.tmpdir(), 'phases.png'),
		fullPage: true, clip: { x: 0, y: top - 8, width: 1400, height: 1050 } });

	// 2. the main thread's track: I/O-wait colour inside the phase and before it
	// the main thread after exec (a thread entry per exec: the last one)
	const main = L.filter((l) => !l.proc && l.main).pop();
	const phase0 = xOf(s0), phase1 = xOf(s1), before1 = xOf(ioStart - span * 0.1), before0 = xOf(A.t0 + (ioStart - A.t0) * 0.2);
	out.ioInside = await countColour(page, main, phase0, phase1, [224, 69, 43]);
	out.ioBefore = await countColour(page, main, before0, before1, [224, 69, 43]);
	out.cpuBefore = await countColour(page, main, before0, before1, [42, 125, 225]);

	// 3. URL round trip: the same view from the link
	const link = page.url();
	const again = await open(browser, link, errors);
	out.reopened = await panels(again);
	await again.close();

	// 4. click the worker's track (its label)
	await page.click('#clearsel');
	// the worker's lane with its samples: a recording beside other tests
	// once had a second, empty identity of the same thread (same tid and
	// name, no samples) listed first
	const worker = L.filter((l) => !l.proc && !l.rate && /wl-worker/.test(l.label))
		.sort((a, b) => A.threads[b.th][3] - A.threads[a.th][3])[0];
	await clickTrack(page, worker);
	out.track = await panels(page);
	await clickTrack(page, worker);	// again: unselect
	out.untrack = await panels(page);

	// 5. metric switch
	await page.selectOption('#metric', 'io-wait');
	out.iowait = await panels(page);
	await page.selectOption('#metric', 'wall');	// both threads in every bucket
	out.wall = await panels(page);
	await page.selectOption('#metric', 'cpu');

	// 6. search: the call tree and the flame graph
	await page.fill('#ctq', 'work_function');
	await page.press('#ctq', 'n');	// keyup fires the search; the extra letter is removed below
	await page.fill('#ctq', 'work_function');
	await page.press('#ctq', 'End');
	out.ctsearch = await panels(page);
	await page.fill('#q', 'work');
	await page.press('#q', 'Enter');
	out.flamesearch = await panels(page);

	// 7. source view of the hottest function of the worker's track (the
	// worker runs only work_function; over both threads compute_phase can
	// outrank it when a loaded machine starves the worker): click its row
	await clickTrack(page, worker);
	// the table may be painted a frame later: a loaded machine once found it empty
	const first = await page.waitForSelector('#fns tbody tr', { timeout: 10000 }).catch(() => null);
	if (!first)
		throw new Error('no function rows after selecting the worker track: ' +
				JSON.stringify(await panels(page)).slice(0, 400));
	await first.click();
	out.source = await panels(page);
}

async function deep(browser, url, out, errors) {
	const page = await open(browser, url, errors);
	out.before = await panels(page);
	await page.check('#rec');
	out.collapsed = await panels(page);
}

// report --diff --format=html: the flame graph in red/blue, the movers table
async function diff(browser, url, out, errors) {
	const page = await browser.newPage();
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(url);
	await page.waitForSelector('#flame canvas');
	Object.assign(out, await page.evaluate(() => {
		// the fill of every box drawn (FB: the flame graph script's list)
		const cols = FB.map((b) => b[4]);
		const m = /rgb\((\d+), ?(\d+), ?(\d+)\)/;
		const kind = (c) => { const x = m.exec(c); if (!x) return 'other';
			return +x[1] > +x[3] + 20 ? 'red' : +x[3] > +x[1] + 20 ? 'blue' : 'grey'; };
		const k = cols.map(kind);
		return { red: k.filter((x) => x == 'red').length, blue: k.filter((x) => x == 'blue').length,
			 movers: Array.from(document.querySelectorAll('#movers tbody tr')).map((r) =>
				[r.cells[0].textContent, +r.cells[4].textContent]),
			 tracks: !!document.getElementById('trk') };
	}));
}

// What is under the viewport point (x, y): the canvas, or a description.
function hitAt(page, x, y) {
	return page.evaluate(([x, y]) => {
		const e = document.elementFromPoint(x, y);
		return e && e.id === 'trk' ? 'trk' : e ? e.tagName + '#' + e.id + ' scrollY=' + window.scrollY : 'nothing';
	}, [x, y]);
}

// Drags over the tracks from time t0 to t1 (ns) along lane's row, and
// waits for the page to take the range (its link names it).  Both ends
// are checked to be on the canvas first, so that a drag the page never
// saw fails here and says where it went, rather than as a missing view.
async function drag(page, lane, A, t0, t1) {
	const trk = await page.$('#trk');
	await trk.scrollIntoViewIfNeeded();
	const box = await trk.boundingBox(), LABEL = 190, tw = box.width - LABEL, now = await laneNow(page, lane);
	const xOf = (t) => box.x + LABEL + (t - A.t0) / A.bucket_ns * tw / A.nbuckets;
	const y = box.y + now.y + now.h / 2;
	for (const x of [xOf(t0), xOf(t1)]) {
		const hit = await hitAt(page, x, y);
		if (hit !== 'trk')
			throw new Error('drag: (' + x + ', ' + y + ') is on ' + hit + ', not the tracks ' + JSON.stringify(box));
	}
	await page.mouse.move(xOf(t0), y);
	await page.mouse.down();
	await page.mouse.move((xOf(t0) + xOf(t1)) / 2, y, { steps: 4 });
	await page.mouse.move(xOf(t1), y, { steps: 4 });
	await page.mouse.up();
	await page.waitForFunction(() => /[#&]r=/.test(location.hash), null, { timeout: 60000 }).catch(async () => {
		throw new Error('drag: the page took no range; ' + await hitAt(page, xOf(t1), y) + ' under the end, ' +
				'box then ' + JSON.stringify(box) + ', now ' + JSON.stringify(await trk.boundingBox()));
	});
}

// A heap recording (tests/t5221-html-heap.sh): the rate track's lane and
// its bars, and per range and metric what the flame graph holds.
async function heap(browser, url, t1, t2, t3, out, errors) {
	const page = await open(browser, url, errors);
	const A = await appData(page), L = await lanes(page);
	const rate = L.find((l) => l.rate);
	out.lanes = L;
	out.rateBars = rate ? await countColour(page, rate, 190, (await (await page.$('#trk')).boundingBox()).width, [211, 84, 0]) : 0;
	out.rateText = rate ? await page.evaluate(() => document.getElementById('trk').getAttribute('data-lanes')) : '';
	await page.selectOption('#metric', 'alloc-bytes');
	out.all = await panels(page);
	await drag(page, rate || L[0], A, t1, t2);
	out.middle = await panels(page);
	// to the very end: by the link (a drag to the canvas's edge ends outside it)
	const b3 = Math.floor((t3 - A.t0) / A.bucket_ns);
	const end = await open(browser, url + '#v=1&r=' + b3 + '-' + A.nbuckets + '&m=alloc-bytes', errors);
	out.end = await panels(end);
	await end.selectOption('#metric', 'live-bytes');
	out.liveEnd = await panels(end);
	await end.close();
}

// The heap view the page shows now: the line under the tracks (what it
// says and the report's flags for the same view), the total, each
// function's self weight in the table (its exact value, data-v), the
// snapshot diff's rows, and the colours of the flame graph's boxes.
function heapPanel(page) {
	return page.evaluate(() => {
		const hv = document.getElementById('heapview'), num = (td) => +td.getAttribute('data-v');
		const m = /rgb\((\d+), ?(\d+), ?(\d+)\)/;
		const kind = (c) => { const x = m.exec(c); if (!x) return 'other';
			return +x[1] > +x[3] + 20 ? 'red' : +x[3] > +x[1] + 20 ? 'blue' : 'grey'; };
		const colours = {};
		FB.forEach((b) => { if (b[0]) colours[S[N[b[0]][1]]] = kind(b[4]); });
		return {
			shown: !hv.hidden, text: hv.textContent, mode: hv.getAttribute('data-mode'),
			cmd: hv.getAttribute('data-cmd'), total: +hv.getAttribute('data-total'),
			baseTotal: +hv.getAttribute('data-base-total'),
			flameTotal: +document.getElementById('flame').getAttribute('data-total'),
			self: Object.fromEntries(Array.from(document.querySelectorAll('#fns tbody tr')).map((r) =>
				[r.cells[0].textContent, num(r.cells[2])])),
			diffShown: !document.getElementById('snapdiff').hidden,
			diff: Array.from(document.querySelectorAll('#snapdiff tbody tr')).map((r) =>
				[r.cells[0].textContent, num(r.cells[2]), num(r.cells[3]), num(r.cells[4])]),
			colours, hash: location.hash, age: document.getElementById('age').value,
			metric: document.getElementById('metric').value,
		};
	});
}

async function setAge(page, age) {
	await page.fill('#age', age);
	await page.press('#age', 'Tab');	// the change event: on leaving the box
}

// A heap recording's leak view and snapshot diff (tests/t5221-html-heap.sh).
async function heapviews(browser, url, age, t1, t2, out, errors) {
	const page = await open(browser, url, errors);
	const A = await appData(page), L = await lanes(page);
	out.ageShown = await page.evaluate(() => !document.getElementById('agectl').hidden);
	await page.selectOption('#metric', 'alloc-bytes');
	await setAge(page, age);	// switches to live-bytes
	out.leak = await heapPanel(page);
	await page.selectOption('#metric', 'allocs');
	out.leakAllocs = await heapPanel(page);
	await page.selectOption('#metric', 'live-bytes');
	await setAge(page, '0');
	out.leakAll = await heapPanel(page);
	await setAge(page, '');
	out.off = await heapPanel(page);
	await drag(page, L.find((l) => l.proc) || L[0], A, t1, t2);
	out.diff = await heapPanel(page);
	// the same view from its link
	const again = await open(browser, page.url(), errors);
	out.reopened = await heapPanel(again);
	await again.close();
	// the process's track clicked: the diff of its heap (--pid)
	await clickTrack(page, L.find((l) => l.proc) || L[0]);
	out.diffPid = await heapPanel(page);
	// a range from the start: the heap as at its end (--at), by the link
	const b1 = Math.floor((t1 - A.t0) / A.bucket_ns);
	const at = await open(browser, url + '#v=1&r=0-' + b1 + '&m=live-bytes', errors);
	out.at = await heapPanel(at);
	await at.close();
	// from T2 to the end: by the link (a drag to the canvas's edge ends outside it)
	const b2 = Math.floor((t2 - A.t0) / A.bucket_ns);
	const tail = await open(browser, url + '#v=1&r=' + b2 + '-' + A.nbuckets + '&m=live-bytes', errors);
	out.tail = await heapPanel(tail);
	await tail.close();
}

// A picture for the docs: the page at 1400xHEIGHT, scrolled to show the
// element id (with 60 px above it) when one is named.
async function shot(browser, url, png, height, id, errors) {
	const page = await open(browser, url, errors);
	await page.setViewportSize({ width: 1400, height });
	if (id) {
		await page.evaluate((i) => {
			document.getElementById(i).scrollIntoView();
			window.scrollBy(0, -60);
		}, id);
	}
	await page.screenshot({ path: png });
}

// A many-process page: the first screen (1400x1000) and the tracks.
async function machine(browser, url, out, errors) {
	const page = await open(browser, url, errors);
	Object.assign(out, await page.evaluate(() => {
		const top = (id) => document.getElementById(id).getBoundingClientRect().top + window.scrollY;
		const rows = Array.from(document.querySelectorAll('#procs tbody tr')).filter((r) =>
			r.cells.length > 3 && r.cells[0].textContent);
		return { flameTop: top('flamewrap'), procsTop: top('procs'), tracksTop: top('tracks'),
			 title: document.getElementById('procs-title').textContent,
			 procs: rows.map((r) => ({ pid: +r.cells[0].textContent, comm: r.cells[1].textContent,
				threads: +r.cells[2].textContent, weight: parseFloat(r.cells[3].textContent),
				visible: r.offsetParent !== null })) };
	}));
	out.lanes = await lanes(page);
	// the markers' records, each with its track's [pid, tid, name]
	const A = await appData(page);
	out.events = (A.events || []).map((e) => [A.threads[e[0]][0], A.threads[e[0]][1], A.strings[A.threads[e[0]][2]], e[2]]);
	// open the second process by its triangle
	const second = out.lanes.filter((l) => l.proc)[1];
	if (second) {
		const trk = await page.$('#trk');
		await trk.scrollIntoViewIfNeeded();
		const b = await trk.boundingBox();
		await page.mouse.click(b.x + 6, b.y + second.y + second.h / 2);
		out.expanded = await lanes(page);
	}
}

async function load(browser, url, out, errors) {
	const cpu = () => cpuOfTree(browserPid(browser.userDataDir));
	const c0 = cpu(), t0 = Date.now();
	const page = await open(browser, url, errors);
	// a page without the first-paint mark (an older build's): the next frame
	const own = await page.evaluate(() => Array.from(document.scripts).some((e) => e.text.includes('data-painted-ms')));
	const next = own ? null : await page.evaluate(() => new Promise((done) =>
		requestAnimationFrame(() => setTimeout(() => done(Math.round(performance.now())), 0))));
	if (own) await page.waitForSelector('body[data-painted-ms]', { timeout: 120000 });
	out.wall_ms = Date.now() - t0;
	out.cpu_ms = cpu() - c0;
	out.page_ms = +(await page.evaluate(() => document.body.getAttribute('data-load-ms')));
	out.painted_ms = own ? +(await page.evaluate(() => document.body.getAttribute('data-painted-ms'))) : next;
	out.marks = JSON.parse(await page.evaluate(() => document.body.getAttribute('data-marks')));
	out.panels = await panels(page);
	out.loadavg = os.loadavg()[0];
}

// Loads that do not pay for a browser start: the files interleaved so that
// a change in the machine's load hits all of them alike.
async function warm(browser, n, reports, out, errors) {
	const all = reports.map(() => []);
	for (let i = 0; i < n; i++)
		for (let r = 0; r < reports.length; r++) {
			const page = await open(browser, 'file://' + path.resolve(reports[r]), errors);
			await page.waitForSelector('body[data-painted-ms]', { timeout: 120000 });
			const m = JSON.parse(await page.evaluate(() => document.body.getAttribute('data-marks')));
			// from the start of the application script: without the HTML parse
			m.ready_from_start = m.ready - m.start;
			m.painted_from_start = m.painted - m.start;
			all[r].push(m);
			await page.close();
		}
	const median = (a) => a.sort((x, y) => x - y)[(a.length - 1) >> 1];
	out.loads = n;
	out.reports = reports.map((file, r) => {
		const m = {};
		for (const k of Object.keys(all[r][0])) m[k] = Math.round(median(all[r].map((x) => x[k])));
		return { file, marks: m };
	});
	out.loadavg = os.loadavg()[0];
}

// The browser process: the one started with our --user-data-dir, not a child (--type=).
function browserPid(dir) {
	for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
		let cmd;
		try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch (e) { continue; }
		if (cmd.includes('--user-data-dir=' + dir) && !cmd.includes('--type=')) return +pid;
	}
	return -1;
}

// user+system CPU ms of a process and all its descendants
function cpuOfTree(root) {
	const tick = 10;	// USER_HZ 100
	let total = 0;
	for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
		let st;
		try { st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch (e) { continue; }
		const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
		let p = +pid, ok = false;
		for (let depth = 0; depth < 6 && p > 1; depth++) {
			if (p == root) { ok = true; break; }
			try { p = +fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]; } catch (e) { break; }
		}
		if (ok) total += (+f[11] + +f[12]) * tick;
	}
	return total;
}

async function launch() {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prof-chromium-'));
	const browser = await chromium.launchPersistentContext(dir, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: FLAGS, headless: true,
		viewport: { width: 1400, height: 1000 } });
	browser.userDataDir = dir;
	return browser;
}

async function close(browser) {
	await browser.close();
	fs.rmSync(browser.userDataDir, { recursive: true, force: true });
}

function run(browser, mode, report, rest, out, errors) {
	const url = 'file://' + path.resolve(report);
	if (mode === 'phases') return phases(browser, url, +rest[0], +rest[1], out, errors);
	if (mode === 'deep') return deep(browser, url, out, errors);
	if (mode === 'load') return load(browser, url, out, errors);
	if (mode === 'diff') return diff(browser, url, out, errors);
	if (mode === 'machine') return machine(browser, url, out, errors);
	if (mode === 'heap') return heap(browser, url, +rest[0], +rest[1], +rest[2], out, errors);
	if (mode === 'heapviews') return heapviews(browser, url, rest[0], +rest[1], +rest[2], out, errors);
	if (mode === 'shot') return shot(browser, url, rest[0], +rest[1], rest[2], errors);
	if (mode === 'warm') return warm(browser, +report, rest, out, errors);
	throw new Error('unknown mode ' + mode);
}

// serve: one browser for many drives, as tests/lib/node-tools.sh's
// `drive` asks them (a start of Chromium costs ~4 CPU-s, and a test drives
// up to eight reports).  Each request is a line of tab-separated fields,
// DIR OUT.json MODE REPORT [ARGS...], run in DIR; its JSON goes to
// OUT.json and the answer is a line, "ok" or "error: " and the message.
// The pages a request opened are closed after it.  Ends at end of input.
async function serve() {
	const browser = await launch();
	const lines = require('readline').createInterface({ input: process.stdin });
	try {
		for await (const line of lines) {
			const [dir, outFile, mode, report, ...rest] = line.replace(/\t$/, '').split('\t');
			const before = new Set(browser.pages()), out = {}, errors = [];
			try {
				process.chdir(dir);
				await run(browser, mode, report, rest, out, errors);
				out.errors = errors;
				fs.writeFileSync(outFile, JSON.stringify(out) + '\n');
				process.stdout.write('ok\n');
			} catch (e) {
				process.stdout.write('error: ' + String(e.stack || e).replace(/\n/g, ' | ') + '\n');
			}
			for (const p of browser.pages())
				if (!before.has(p)) await p.close().catch(() => {});
		}
	} finally {
		await close(browser);
	}
}

async function once(mode, report, rest) {
	const browser = await launch();
	const out = {}, errors = [];
	try {
		await run(browser, mode, report, rest, out, errors);
	} finally {
		await close(browser);
	}
	out.errors = errors;
	console.log(JSON.stringify(out));
}

(async () => {
	const [mode, report, ...rest] = process.argv.slice(2);
	if (mode === 'serve') await serve();
	else await once(mode, report, rest);
})().catch((e) => { console.error('html-app-drive: ' + e.stack); process.exit(1); });

// html_app.js - the HTML report's application layer (embedded by
// src/output/html.c after the flame graph script, which defines D, S, N,
// K, render(), search(), sandwich(), fill(), sortBy()).  It reads the
// bucketed samples of src/output/htmlapp.c (#prof-app) and recomputes
// every panel for the current selection: a time range (drag on the
// tracks), a thread or process (click a track), the metric, a focused
// function and collapsed recursion.  State lives in the URL fragment
// ("#v=1&r=B0-B1&th=I&m=METRIC&fn=NAME..."), so a link reopens the view.
// Names only ever reach the page through textContent / title.
(function () {
'use strict';
var MARK = { start: performance.now() };
var A = JSON.parse(document.getElementById('prof-app').textContent);
MARK.parsed = performance.now();
var AS = A.strings, FR = A.frames, ST = unpackStacks(A.stacks), TH = A.threads, R = unpackRows(A.rows);
var NST = ST.length / 2, NR = R.b.length, NB = A.nbuckets;
var st = { r0: 0, r1: NB, th: null, pid: null, m: A.metric, fn: null, focus: null, rec: false,
	   inv: false, ct: '', age: null };
var $ = function (id) { return document.getElementById(id); };
var sw = new Float64Array(NST);	// weight per stack in the selection
var total = 0;

// htmlapp.c's stacks: per stack its distance to its parent and its frame
// + 1 (VLQ), into [parent, frame + 1] pairs.
function unpackStacks(txt) {
	var v = vlq(txt), out = new Int32Array(v.length);
	for (var i = 0; i + 1 < v.length; i += 2) {
		out[i] = i / 2 - v[i];
		out[i + 1] = v[i + 1];
	}
	return out;
}

// htmlapp.c's base64 VLQ numbers (sb_add_vlq(): 5 bits a digit, lowest
// first, 32 added while more follow) into an array.  (A function, not a
// table beside it: the rows are unpacked above, before a var here is set.)
function vlq(txt) {
	var digit = new Int8Array(128), B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
	for (var c = 0; c < 64; c++) digit[B64.charCodeAt(c)] = c;
	var out = new Float64Array(txt.length), n = 0, v = 0, mul = 1;
	for (var i = 0; i < txt.length; i++) {
		var d = digit[txt.charCodeAt(i)];
		if (d < 32) {
			out[n++] = v + d * mul;
			v = 0;
			mul = 1;
		} else {
			v += (d - 32) * mul;
			mul *= 32;
		}
	}
	return out.subarray(0, n);
}
// The packed rows of htmlapp.c's emit_rows() into typed columns.
function unpackRows(P) {
	var n = P.count, R = { b: new Int32Array(n), th: new Int32Array(n), st: new Int32Array(n),
		n: new Float64Array(n).fill(1), cpu: new Float64Array(n), off: new Float64Array(n),
		io: new Float64Array(n), sl: new Float64Array(n), ac: new Float64Array(n),
		ab: new Float64Array(n), fb: new Float64Array(n), pk: new Float64Array(n),
		ln: new Float64Array(n), lb: new Float64Array(n) };
	var runs = vlq(P.runs), dst = vlq(P.st);
	for (var i = 0, r = 0; i < runs.length; i += 3)
		for (var k = 0, prev = 0; k < runs[i + 2]; k++, r++) {
			R.b[r] = runs[i]; R.th[r] = runs[i + 1];
			R.st[r] = prev = (k ? prev : 0) + dst[r];
		}
	function sparse(packed, col, scale) {
		var list = vlq(packed.dense !== undefined ? packed.dense : packed);
		if (packed.dense !== undefined) { for (var d = 0; d < n; d++) col[d] = list[d] * scale; return; }
		for (var j = 0, row = 0; j < list.length; j += 2) { row += list[j]; col[row] = list[j + 1] * scale; }
	}
	sparse(P.n, R.n, 1);
	for (i = 0; i < n; i++) R.cpu[i] = R.n[i] * P.period;
	sparse(P.cpu, R.cpu, 1);
	sparse(P.other_us, R.off, 1000);	// off-CPU = other + I/O wait + sleep
	sparse(P.io_us, R.io, 1000);
	sparse(P.sl_us, R.sl, 1000);
	for (i = 0; i < n; i++) R.off[i] += R.io[i] + R.sl[i];
	if (P.allocs !== undefined) {	// record --heap
		sparse(P.allocs, R.ac, 1);
		sparse(P.alloc_b, R.ab, 1);
		sparse(P.free_b, R.fb, 1);
		sparse(P.peak_b, R.pk, 1);
	}
	if (P.live_b !== undefined) {	// the blocks live at the end, at their allocation
		sparse(P.live_n, R.ln, 1);
		sparse(P.live_b, R.lb, 1);
	}
	return R;
}
function sParent(s) { return ST[2 * s]; }
function sFrame(s) { return ST[2 * s + 1] - 1; }	// -1 for the root
function fName(f) { return AS[FR[f][0]]; }
function fMod(f) { return AS[FR[f][1]]; }
function fKey(f) { return fName(f) + '\t' + fMod(f); }
var HEAP_UNITS = { 'allocs': 'allocations', 'alloc-bytes': 'bytes', 'live-bytes': 'bytes', 'peak-bytes': 'bytes' };
function unit() { return st.m == 'cpu' ? 'samples' : HEAP_UNITS[st.m] || 'ns'; }
function weightOf(i) {
	switch (st.m) {
	case 'cpu': return R.n[i];
	case 'off-cpu': return R.off[i];
	case 'io-wait': return R.io[i];
	case 'sleep': return R.sl[i];
	case 'wall': return R.cpu[i] + R.off[i];
	case 'allocs': return leakOn() ? (R.b[i] < LEAK_CUT ? R.ln[i] : 0) : R.ac[i];
	case 'alloc-bytes': return R.ab[i];
	// allocated minus freed: over the whole recording what is live at
	// its end (a range is the snapshot diff: aggregate())
	case 'live-bytes': return leakOn() ? (R.b[i] < LEAK_CUT ? R.lb[i] : 0) : R.ab[i] - R.fb[i];
	case 'peak-bytes': return R.pk[i];
	}
	return 0;
}
function rowIn(i) {
	return R.b[i] >= st.r0 && R.b[i] < st.r1 && rowWho(i);
}
// the selected thread or process, if any
function rowWho(i) {
	if (st.th !== null && R.th[i] != st.th) return false;
	if (st.pid !== null && TH[R.th[i]][0] != st.pid) return false;
	return true;
}
function fmtW(v) {
	var u = unit();
	if (u == 'bytes') return v >= 1048576 ? (v / 1048576).toFixed(2) + ' MiB' : v >= 1024 ? (v / 1024).toFixed(1) + ' KiB' : Math.round(v) + ' B';
	if (u == 'allocations') return Math.round(v) + ' allocs';
	return u == 'samples' ? String(Math.round(v)) : (v / 1e6).toFixed(3) + ' ms';
}
function tMs(b) { return (b * A.bucket_ns / 1e6).toFixed(1); }

// --- heap views: the leak view and the snapshot diff -------------------------
// The leak view (an age set, metric live-bytes or allocs): the blocks live
// at the end of the recording that were allocated in the buckets wholly
// older than the age, as `prof report --min-age` counts them.  The age
// snaps to whole buckets; the page says which age it used, and the
// report's flags that select the same blocks (heapView()).
var LIVE_END = A.rows.live_b !== undefined, LEAK_CUT = NB, swBase = null, baseTotal = 0;
function leakOn() { return st.age !== null && LIVE_END && (st.m == 'live-bytes' || st.m == 'allocs'); }
// The first bucket not wholly older than st.age (NB: every live block).
function leakCut() {
	if (!st.age) return NB;
	var cut = A.end_rel - Math.round(st.age * 1e9);	// ns after t0: allocated at or before it
	return Math.max(0, Math.min(NB, Math.floor((cut + 1) / A.bucket_ns)));
}
// What live-bytes shows: 'leak', the heap at a range's end ('at', a range
// from the start) or live at its end minus live at its start ('diff').
function heapMode() {
	if (leakOn()) return 'leak';
	if (st.m != 'live-bytes' || (st.r0 == 0 && st.r1 == NB)) return '';
	return st.r0 ? 'diff' : 'at';
}
// Live bytes per stack at the end of bucket r1 - 1 (sw), and in a diff at
// the end of bucket r0 - 1 (swBase): allocated minus freed before then,
// as `prof report --at` sums the heap samples up to a moment.
function aggregateLive() {
	swBase = st.r0 ? new Float64Array(NST) : null;
	baseTotal = 0;
	for (var i = 0; i < NR; i++) {
		if (R.b[i] >= st.r1 || !rowWho(i)) continue;
		var w = R.ab[i] - R.fb[i];
		if (!w) continue;
		sw[R.st[i]] += w;
		total += w;
		if (swBase && R.b[i] < st.r0) { swBase[R.st[i]] += w; baseTotal += w; }
	}
}
// Seconds of an integer ns count, every digit kept: the report's flags.
function secs(ns) {
	ns = Math.max(0, Math.round(ns));
	var f = String(ns % 1e9);
	return Math.floor(ns / 1e9) + '.' + '000000000'.slice(f.length) + f;
}
// The report's time of the end of bucket k - 1 (its last ns), from the
// recording's first record as --at and --since count.
function bucketEndSecs(k) { return secs(k * A.bucket_ns - 1 - A.start_rel); }
function bucketSecs(k) { return ((k * A.bucket_ns - A.start_rel) / 1e9).toFixed(3); }
function who() {
	if (st.th !== null && TH[st.th][0] >= 0) return ' --tid=' + TH[st.th][1];
	if (st.pid !== null && st.pid >= 0) return ' --pid=' + st.pid;
	return st.th === null && st.pid === null ? '' : null;	// "other threads": no flag
}
function fmtSigned(v) { return (v > 0 ? '+' : v < 0 ? '-' : '') + fmtW(Math.abs(v)); }
// The line under the tracks that says what the heap view shows, the
// report command that shows the same (data-cmd), and in a diff the
// functions whose live bytes changed most (#snapdiff).
function heapView() {
	var box = $('heapview'), mode = heapMode(), f = who(), cmd = '', text = '';
	box.hidden = !mode;
	$('snapdiff').hidden = mode != 'diff';
	if (!mode) { box.removeAttribute('data-cmd'); return; }
	if (mode == 'leak') {
		var age = LEAK_CUT >= NB ? 0 : A.end_rel - LEAK_CUT * A.bucket_ns + 1;
		text = 'Leak view: ' + fmtW(total) + ' in the blocks live at the end that were allocated ' +
			(age ? 'at least ' + (age / 1e9).toFixed(3) + ' s before it (the age rounded up to whole ' +
			 (A.bucket_ns / 1e6).toFixed(1) + ' ms buckets)' : 'at any time') +
			(st.r0 || st.r1 < NB ? ', in the selected range' : '') + '.';
		if (!st.r0 && st.r1 == NB && f !== null) cmd = '--metric=' + st.m + ' --min-age=' + secs(age) + f;
	} else if (mode == 'at') {
		text = 'Live at ' + bucketSecs(st.r1) + ' s (the end of the selected range): ' + fmtW(total) + '.';
		if (f !== null) cmd = '--metric=live-bytes --at=' + bucketEndSecs(st.r1) + f;
	} else {
		text = 'Snapshot diff: live ' + (st.r1 < NB ? 'at ' + bucketSecs(st.r1) + ' s' : 'at the end') + ' (' + fmtW(total) +
			') minus live at ' + bucketSecs(st.r0) + ' s (' + fmtW(baseTotal) + '): ' +
			fmtSigned(total - baseTotal) + '. The flame graph is the heap at the end of the range, red where a stack grew, blue where it shrank.';
		if (f !== null) cmd = '--metric=live-bytes --since=' + bucketEndSecs(st.r0) + (st.r1 < NB ? ' --at=' + bucketEndSecs(st.r1) : '') + f;
		snapDiff();
	}
	box.textContent = text + (cmd ? '  The same: prof report ' + cmd : '');
	box.setAttribute('data-mode', mode);
	box.setAttribute('data-total', total);
	box.setAttribute('data-base-total', mode == 'diff' ? baseTotal : 0);
	if (cmd) box.setAttribute('data-cmd', cmd); else box.removeAttribute('data-cmd');
}
// The snapshot diff's table: self live bytes per function at the range's
// start and end, the largest changes first.
function snapDiff() {
	var head = selfOf(sw), base = selfOf(swBase), rows = [];
	for (var i = 0; i < FN.length; i++)
		if (head[i] || base[i]) rows.push({ fn: FN[i], base: base[i], head: head[i], d: head[i] - base[i] });
	rows.sort(function (x, y) { return Math.abs(y.d) - Math.abs(x.d) || (x.fn.k < y.fn.k ? -1 : 1); });
	var tb = document.querySelector('#snapdiff tbody');
	tb.textContent = '';
	rows.slice(0, 20).forEach(function (r) {
		var tr = document.createElement('tr'), base = r.fn.mod.split('/').pop();
		tr.style.color = r.d > 0 ? '#c00' : r.d < 0 ? '#00c' : '#444';
		td(tr, r.fn.name, r.fn.name);
		td(tr, base, base, false, r.fn.mod);
		td(tr, fmtW(r.base), r.base, true);
		td(tr, fmtW(r.head), r.head, true);
		td(tr, fmtSigned(r.d), r.d, true);
		tb.appendChild(tr);
	});
}

// --- selection -> per-stack weights -> panels ------------------------------
function aggregate() {
	sw.fill(0);
	total = 0;
	swBase = null;
	baseTotal = 0;
	LEAK_CUT = leakOn() ? leakCut() : NB;
	var mode = heapMode();
	if (mode == 'at' || mode == 'diff') { aggregateLive(); return; }
	for (var i = 0; i < NR; i++) {
		if (!rowIn(i)) continue;
		var w = weightOf(i);
		if (!w) continue;
		sw[R.st[i]] += w;
		total += w;
	}
	if (st.m == 'live-bytes') {	// a stack whose heap shrank in the range: 0
		total = 0;
		for (var k = 0; k < sw.length; k++) {
			if (sw[k] < 0) sw[k] = 0;
			total += sw[k];
		}
	}
}

// Flame nodes in the format of the flame graph script:
// [parent, name, module, file, line, kind, inlined, value, self]
// and in the snapshot diff the base value (live at the range's start) as a
// tenth element, which the script colours by (red grew, blue shrank).
function flameNodes() {
	var incl = inclusive(sw), base = swBase ? inclusive(swBase) : null;
	var map = new Int32Array(NST).fill(-1), inF = new Uint8Array(NST);
	var nodes = [base ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : [0, 0, 0, 0, 0, 0, 0, 0, 0]], index = new Map();
	map[0] = 0;
	for (var s = 1; s < NST; s++) {
		if (!incl[s]) continue;
		var p = sParent(s), f = sFrame(s), name = fName(f);
		if (st.focus) {
			inF[s] = inF[p] || name == st.focus;
			if (!inF[s]) continue;
		}
		var pn = st.focus && !inF[p] ? 0 : map[p];
		if (pn < 0) continue;
		if (st.rec && pn && AS[nodes[pn][1]] == name) { map[s] = pn; continue; }
		var k = pn + '\u0001' + FR[f][0] + '\u0001' + FR[f][1] + '\u0001' + FR[f][5];
		var id = index.get(k);
		if (id === undefined) {
			id = nodes.length;
			index.set(k, id);
			nodes.push([pn, FR[f][0], FR[f][1], FR[f][2], FR[f][3], FR[f][4], FR[f][5], 0, 0]);
			if (base) nodes[id].push(0);
		}
		map[s] = id;
		nodes[id][7] += incl[s];
		nodes[id][8] += sw[s];
		if (base) nodes[id][9] += base[s];
		if (!pn) nodes[0][7] += incl[s];
		if (!pn && base) nodes[0][9] += base[s];
	}
	if (!st.focus) nodes[0][7] = incl[0];
	if (!st.focus && base) nodes[0][9] = base[0];
	// preorder is not needed by render(): it rebuilds children from parents
	return nodes;
}

// Inclusive weights: each stack's own plus its descendants'.
function inclusive(w) {
	var incl = new Float64Array(NST);
	for (var s = NST - 1; s > 0; s--) { incl[s] += w[s]; incl[sParent(s)] += incl[s]; }
	return incl;
}
// The diff colouring's scale (html.c's max_share_delta()): the largest
// change of any node's share of its side's total.
function diffScale(nodes) {
	var head = nodes[0][7], base = nodes[0][9], m = 1e-9;
	for (var i = 1; i < nodes.length; i++)
		m = Math.max(m, Math.abs((head ? nodes[i][7] / head : 0) - (base ? nodes[i][9] / base : 0)));
	return m;
}

// Functions by (name, module): a dense id per merged frame's function.
var FN = [], FN_OF = new Int32Array(FR.length);
(function () {
	var ids = new Map();
	for (var f = 0; f < FR.length; f++) {
		var k = fKey(f), id = ids.get(k);
		if (id === undefined) { id = FN.length; ids.set(k, id); FN.push({ k: k, name: fName(f), mod: fMod(f), file: '', line: 0 }); }
		FN_OF[f] = id;
		var fn = FN[id], file = AS[FR[f][2]], line = FR[f][3];	// where it starts: its first line
		if (file && !(FR[f][5] & 1) && (!fn.file || (file == fn.file && line && (!fn.line || line < fn.line)))) { fn.file = file; fn.line = line; }
	}
})();
// Self weight per function of per-stack weights w.
function selfOf(w) {
	var self = new Float64Array(FN.length);
	for (var s = 1; s < NST; s++) if (w[s]) self[FN_OF[sFrame(s)]] += w[s];
	return self;
}
function functionRows() {
	var self = selfOf(sw), tot = new Float64Array(FN.length), stamp = new Int32Array(FN.length);
	for (var s = 1; s < NST; s++) {
		if (!sw[s]) continue;
		for (var a = s; a; a = sParent(a)) {	// each function once per stack
			var fn = FN_OF[sFrame(a)];
			if (stamp[fn] == s) continue;
			stamp[fn] = s;
			tot[fn] += sw[s];
		}
	}
	var rows = [];
	for (var i = 0; i < FN.length; i++)
		if (tot[i]) rows.push({ k: FN[i].k, name: FN[i].name, mod: FN[i].mod, self: self[i], tot: tot[i],
					loc: FN[i].file ? FN[i].file + ':' + FN[i].line : '' });
	return rows.sort(function (x, y) { return y.self - x.self || y.tot - x.tot; });
}

function td(tr, text, v, num, title) {
	var c = document.createElement('td');
	c.textContent = text;
	c.setAttribute('data-v', v);
	if (num) c.className = 'n';
	if (title) c.title = title;
	tr.appendChild(c);
}

function fillFunctions(rows) {
	var tb = document.querySelector('#fns tbody');
	tb.textContent = '';
	rows.slice(0, 500).forEach(function (r) {
		var tr = document.createElement('tr'), base = r.mod.split('/').pop();
		tr.setAttribute('data-k', r.k);
		td(tr, r.name, r.name);
		td(tr, base, base, false, r.mod);
		td(tr, fmtW(r.self), r.self, true);
		td(tr, (total ? 100 * r.self / total : 0).toFixed(2) + '%', r.self, true);
		td(tr, fmtW(r.tot), r.tot, true);
		td(tr, (total ? 100 * r.tot / total : 0).toFixed(2) + '%', r.tot, true);
		td(tr, r.loc, r.loc);
		tr.onclick = function () { sandwich(r.k); };
		tb.appendChild(tr);
	});
}

// --- call tree, top-down or inverted, with search ---------------------------
var ctOpen = new Set();
function callTree() {
	var root = { name: 'all', kids: new Map(), v: 0, id: '' };
	for (var s = 1; s < NST; s++) {
		if (!sw[s]) continue;
		var path = [];
		for (var a = s; a; a = sParent(a)) path.push(fName(sFrame(a)));
		if (!st.inv) path.reverse();
		var n = root;
		n.v += sw[s];
		for (var i = 0; i < path.length; i++) {
			if (st.rec && i && path[i] == path[i - 1]) continue;
			var c = n.kids.get(path[i]);
			if (!c) { c = { name: path[i], kids: new Map(), v: 0, id: n.id + '/' + path[i] }; n.kids.set(path[i], c); }
			c.v += sw[s];
			n = c;
		}
	}
	return root;
}
function renderCallTree() {
	var box = $('calltree'), q = st.ct, tree = callTree(), shown = 0;
	box.textContent = '';
	function matches(n) {
		if (n.m !== undefined) return n.m;
		n.m = false;
		n.kids.forEach(function (c) { if (matches(c)) n.m = true; });
		return n.m || (q && n.name.indexOf(q) >= 0);
	}
	if (q) matches(tree);
	(function walk(n, depth) {
		var kids = Array.from(n.kids.values()).sort(function (x, y) { return y.v - x.v; });
		kids.forEach(function (c, i) {
			if (shown > 3000) return;
			var open = ctOpen.has(c.id) || (q ? c.m : depth < 2 && i == 0);
			var row = document.createElement('div');
			row.className = 'ct' + (q && c.name.indexOf(q) >= 0 ? ' hit' : '');
			row.style.paddingLeft = (depth * 14) + 'px';
			row.setAttribute('data-n', c.name);
			row.textContent = (c.kids.size ? (open ? '\u25be ' : '\u25b8 ') : '  ') + c.name + '  ' +
				fmtW(c.v) + ' (' + (total ? 100 * c.v / total : 0).toFixed(1) + '%)';
			row.onclick = function () {
				if (ctOpen.has(c.id) || open) { ctOpen.delete(c.id); if (open) ctOpen.add('!' + c.id); }
				else ctOpen.add(c.id);
				if (ctOpen.has('!' + c.id) && !open) ctOpen.delete('!' + c.id);
				renderCallTree();
			};
			box.appendChild(row);
			shown++;
			if (open && !ctOpen.has('!' + c.id)) walk(c, depth + 1);
		});
	})(tree, 0);
}

// --- source view of the selected function ------------------------------------
function sourceView() {
	var box = $('source'), name = st.fn ? st.fn.split('\t')[0] : null;
	box.textContent = '';
	$('src-name').textContent = name || '(click a function)';
	if (!name) return;
	var lines = new Map(), file = null, fself = 0;
	function line(f) {
		var k = AS[FR[f][2]] + ':' + FR[f][3], l = lines.get(k);
		if (!l) { l = { file: AS[FR[f][2]], line: FR[f][3], self: 0, tot: 0 }; lines.set(k, l); }
		return l;
	}
	for (var s = 1; s < NST; s++) {
		if (!sw[s]) continue;
		var seen = new Set(), f = sFrame(s);
		if (fName(f) == name) { line(f).self += sw[s]; fself += sw[s]; }
		for (var a = s; a; a = sParent(a)) {
			var g = sFrame(a);
			if (fName(g) != name) continue;
			var l = line(g), k = l.file + ':' + l.line;
			if (!seen.has(k)) { seen.add(k); l.tot += sw[s]; }
		}
	}
	var best = null;
	lines.forEach(function (l) { if (!best || l.self > best.self || (l.self == best.self && l.tot > best.tot)) best = l; });
	if (!best) { box.textContent = 'no samples of ' + name + ' in the selection'; return; }
	file = best.file;
	var text = A.sources[file], lo = 1e9, hi = 0;
	lines.forEach(function (l) { if (l.file == file && l.line) { lo = Math.min(lo, l.line); hi = Math.max(hi, l.line); } });
	var hdr = document.createElement('div');
	hdr.className = 'muted';
	hdr.textContent = (file || '(unknown file)') + (text ? '' : '  (source text not embedded: not the recorded build or outside --source-root)');
	box.appendChild(hdr);
	var src = text ? text.split('\n') : [], tbl = document.createElement('table');
	tbl.id = 'srctable';
	for (var n = Math.max(1, lo - 3); n <= hi + 3; n++) {
		var l = lines.get(file + ':' + n);
		if (!text && !l) continue;
		if (text && n > src.length) break;
		var tr = document.createElement('tr');
		if (l && l.self) tr.className = l === best ? 'hot hottest' : (l.self * 10 >= fself ? 'hot' : '');
		td(tr, l ? fmtW(l.self) : '', l ? l.self : 0, true);
		td(tr, l ? fmtW(l.tot) : '', l ? l.tot : 0, true);
		td(tr, String(n), n, true);
		var code = document.createElement('td');
		code.className = 'code';
		code.textContent = text ? src[n - 1] : '';
		tr.appendChild(code);
		tbl.appendChild(tr);
	}
	box.appendChild(tbl);
}

// --- stack chart: every stack, in time order ----------------------------------
// Time is cut into columns of whole buckets, at least SC_COL_PX wide; each
// column is shared by its stacks in proportion to their weight (the
// heaviest column fills its width), stacks ordered as a flame graph's
// (preorder of the stack trie, children by name), so a frame common to
// neighbouring stacks is drawn as one box.  A narrow range gets a column
// per bucket, so zooming in shows each bucket's stacks; boxes narrower than
// half a pixel are not drawn.
var RANK = null, ORDER = null, SC_COL_PX = 8;
// RANK[stack] is its place in that order, ORDER[rank] the stack there.
function stackRanks() {
	var kids = [], order = [], rank = new Int32Array(NST);
	for (var s = 0; s < NST; s++) kids.push([]);
	for (s = 1; s < NST; s++) kids[sParent(s)].push(s);
	kids.forEach(function (k) { if (k.length > 1) k.sort(function (x, y) { return fName(sFrame(x)) < fName(sFrame(y)) ? -1 : 1; }); });
	for (var todo = [0]; todo.length;) {
		s = todo.pop();
		rank[s] = order.length;
		order.push(s);
		for (var i = kids[s].length - 1; i >= 0; i--) todo.push(kids[s][i]);
	}
	ORDER = Int32Array.from(order);
	return rank;
}
// A column's stacks in flame graph order: their ranks sorted as numbers
// (a typed array sorts without a comparator call per pair).
function byRank(stacks) {
	var rk = new Int32Array(stacks.length);
	for (var j = 0; j < stacks.length; j++) rk[j] = RANK[stacks[j]];
	rk.sort();
	return Array.from(rk, function (r) { return ORDER[r]; });
}
// Stack chart colours by name, made once: a canvas parses each new style.
var SC_COLOUR = new Map();
function scColour(nm) {
	var c = SC_COLOUR.get(nm);
	if (!c) { var h = hash(nm); c = 'hsl(' + (h % 60 + 10) + ',80%,' + (60 + h % 20) + '%)'; SC_COLOUR.set(nm, c); }
	return c;
}
function chainOf(s, cache) {
	var c = cache.get(s);
	if (!c) {
		c = [];
		for (var a = s; a > 0; a = sParent(a)) c.push(a);
		c.reverse();
		cache.set(s, c);
	}
	return c;
}
function stackChart() {
	var cv = $('stackchart'), W = Math.max(300, WID.sc - 4), H = 14;
	var b0 = st.r0, nb = st.r1 - st.r0, per = Math.max(1, Math.ceil(nb * SC_COL_PX / W));
	var ncol = Math.ceil(nb / per), cw = W / ncol;
	var acc = new Float64Array(NST), touched = [], cols = [], bmax = 0;
	function colOf(i) { return Math.floor((R.b[i] - b0) / per); }
	if (!RANK) RANK = stackRanks();
	// rows are sorted by bucket: sum each column's stacks
	for (var i = 0; i <= NR; i++) {
		if (i == NR || (i && colOf(i) != colOf(i - 1))) {
			var c = colOf(i - 1), sum = 0;
			if (touched.length && c >= 0 && c < ncol) {
				var sorted = byRank(touched);
				var col = { c: c, st: sorted, w: sorted.map(function (s) { return acc[s]; }) };
				col.w.forEach(function (w) { sum += w; });
				bmax = Math.max(bmax, sum);
				cols.push(col);
			}
			touched.forEach(function (s) { acc[s] = 0; });
			touched = [];
		}
		if (i == NR || !rowIn(i)) continue;
		var w = weightOf(i);
		if (!(w > 0)) continue;	// live-bytes: a bucket that freed more than it allocated
		if (!acc[R.st[i]]) touched.push(R.st[i]);
		acc[R.st[i]] += w;
	}
	// segments [x, width, chain] left to right, thin ones too: their
	// common frames add up to boxes wide enough to draw
	var segs = [], chains = new Map(), maxd = 0, names = new Map();
	cols.forEach(function (col) {
		var x = col.c * cw;
		names.set(col.c, new Set());
		col.st.forEach(function (s, k) {
			var wpx = cw * col.w[k] / bmax, ch = chainOf(s, chains);
			segs.push([x, wpx, ch]);
			maxd = Math.max(maxd, ch.length);
			x += wpx;
		});
	});
	cv.width = W;
	cv.height = Math.max(1, maxd) * H;
	var g = cv.getContext('2d');
	g.font = '10px sans-serif';
	g.textBaseline = 'middle';
	var style = null;
	function box(id, x0, x1, d) {
		var nm = fName(sFrame(id)), bw = x1 - x0, colour = scColour(nm);
		if (colour !== style) g.fillStyle = style = colour;
		g.fillRect(x0, d * H, Math.max(1, bw - 0.5), H - 1);
		if (bw > 30) { g.fillStyle = style = '#000'; g.fillText(nm.slice(0, Math.floor(bw / 6)), x0 + 2, d * H + H / 2); }
		for (var cc = Math.floor(x0 / cw + 1e-9); cc * cw < x1 - 1e-6 && cc < ncol; cc++)
			if (names.has(cc)) names.get(cc).add(nm);
	}
	// A box is a run of touching segments with one frame at depth d; the
	// frames above it are all inside its run (the frame at d + 1 names its
	// whole chain), so a box under half a pixel is skipped with everything
	// above it instead of every depth scanning every segment.
	(function level(from, to, d) {
		for (var k = from; k < to;) {
			var id = segs[k][2][d], x0 = segs[k][0], x1 = x0 + segs[k][1], e = k + 1;
			while (e < to && segs[e][2][d] === id && segs[e][0] - x1 < 1e-6) { x1 = segs[e][0] + segs[e][1]; e++; }
			if (id !== undefined && x1 - x0 >= 0.5) { box(id, x0, x1, d); level(k, e, d + 1); }
			k = e;
		}
	})(0, segs.length, 0);
	cv.setAttribute('data-depth', maxd);
	// for tests: per column, its first bucket and the functions it shows
	cv.setAttribute('data-per', per);
	cv.setAttribute('data-cols', JSON.stringify(Array.from(names, function (e) { return [b0 + e[0] * per, Array.from(e[1])]; })));
}
function hash(s) { var h = 0; for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0; return h; }

// --- tracks -------------------------------------------------------------------
var LABEL = 190, TRACK_H = 26, PROC_H = 22, lanes = [], procOrder = null, expanded = new Set();
// Processes busiest first (on-CPU, then off-CPU time in their tracks), each
// a track of its threads' sum; a process's threads are shown when it is
// expanded (its label's triangle, or selecting it); at first the busiest is.
function buildLanes() {
	var procs = new Map();
	TH.forEach(function (t, i) {
		if (!procs.has(t[0])) procs.set(t[0], []);
		procs.get(t[0]).push(i);
	});
	if (!procOrder) {
		// TH[i][3], [4]: the thread's exact on-CPU and off-CPU ns
		var weight = function (ths, k) { return ths.reduce(function (s, i) { return s + (TH[i][k] || 0); }, 0); };
		procOrder = Array.from(procs.keys()).map(function (pid) {
			var ths = procs.get(pid);
			return { pid: pid, cpu: weight(ths, 3), off: weight(ths, 4) };
		}).sort(function (a, b) {
			return (a.pid < 0) - (b.pid < 0) || b.cpu - a.cpu || b.off - a.off || a.pid - b.pid;
		}).map(function (e) { return e.pid; });
		if (procOrder.length && procOrder[0] >= 0) expanded.add(procOrder[0]);
	}
	lanes = [];
	procOrder.forEach(function (pid) {
		var ths = procs.get(pid);
		if (pid < 0) {	// htmlapp.c's "N other threads": one track, no process
			ths.forEach(function (i) { lanes.push({ pid: pid, th: i, label: AS[TH[i][2]] }); });
			return;
		}
		var main = ths.filter(function (i) { return TH[i][1] == pid; }), open = expanded.has(pid);
		var name = AS[TH[main.length ? main[main.length - 1] : ths[0]][2]];
		lanes.push({ pid: pid, proc: true, ths: ths, open: open,
			     label: (open ? '\u25be ' : '\u25b8 ') + name + ' (pid ' + pid + (ths.length > 1 ? ', ' + ths.length + ' threads' : '') + ')' });
		if (allocRate(pid)) lanes.push({ pid: pid, rate: true, label: '  allocation rate' });
		if (open) ths.forEach(function (i) { lanes.push({ pid: pid, th: i, label: '  ' + AS[TH[i][2]] + ' (tid ' + TH[i][1] + ')' }); });
	});
}
// record --heap: a process's bytes allocated per bucket (the estimates of
// its sampled allocations), or null when it allocated nothing sampled.
var RATE = null;
function allocRate(pid) {
	if (!RATE) {
		RATE = new Map();
		for (var i = 0; R.ab && i < NR; i++) {
			if (!R.ab[i]) continue;
			var p = TH[R.th[i]][0];
			if (!RATE.has(p)) RATE.set(p, new Float64Array(NB));
			RATE.get(p)[R.b[i]] += R.ab[i];
		}
	}
	return RATE.get(pid) || null;
}
// The allocation rate track: bytes allocated per bucket as bars, scaled
// to the busiest bucket, which the label gives in MiB/s.
function drawRate(g, l, y, h, tw) {
	var r = allocRate(l.pid), xs = tw / NB, w = Math.max(1, xs), max = 0;
	for (var b = 0; b < NB; b++) max = Math.max(max, r[b]);
	if (!max) return;
	g.fillStyle = '#d35400';
	g.beginPath();
	for (b = 0; b < NB; b++) {
		if (!r[b]) continue;
		var hh = Math.max(1, (h - 4) * r[b] / max);
		g.rect(LABEL + b * xs, y + h - 2 - hh, w, hh);
	}
	g.fill();
	g.fillText('alloc max ' + (max / 1048576 / (A.bucket_ns / 1e9)).toFixed(1) + ' MiB/s', LABEL + tw - 150, y + 7);
}
// The tracks' fine buckets (htmlapp.c's emit_lanes()): per thread, from its
// first bucket, 4 base64 digits a bucket (share of the bucket x 63) for on
// CPU, I/O wait, other off-CPU and sleep.
var NL = A.nlanes || NB, LPER = A.lane_per || 1;
function laneData() {
	var B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
	var per = TH.map(function () { return { first: NL, last: -1, q: null }; });
	(A.lanes || []).forEach(function (l) {
		var d = per[l[0]], txt = l[2], q = new Uint8Array(txt.length);
		for (var i = 0; i < txt.length; i++) q[i] = B64.indexOf(txt[i]);
		d.q = q;
		d.first = l[1];
		d.last = l[1] + txt.length / 4 - 1;
	});
	return per;
}
var LD = null;
function drawTracks() {
	var cv = $('trk'), W = Math.max(400, WID.tracks - 2), y = 0, H = 0;
	lanes.forEach(function (l) { H += l.proc ? PROC_H : TRACK_H; });
	cv.width = W;
	cv.height = H + 16;
	var g = cv.getContext('2d'), tw = W - LABEL, xs = tw / NB;
	g.font = '11px sans-serif';
	g.textBaseline = 'middle';
	lanes.forEach(function (l) {
		var h = l.proc ? PROC_H : TRACK_H;
		l.y = y; l.h = h;
		var sel = ((l.proc || l.rate) && st.pid === l.pid && st.th === null) || (!l.proc && !l.rate && st.th === l.th);
		g.fillStyle = sel ? '#ffe9a8' : (l.proc ? '#e4e4ea' : '#fff');
		g.fillRect(0, y, W, h);
		g.fillStyle = '#222';
		g.fillText(l.label.slice(0, 34), 4, y + h / 2);
		if (l.proc) { drawProcessSum(g, l, y, h, tw); drawProcess(g, l, y, h, tw, xs); }
		else if (l.rate) drawRate(g, l, y, h, tw);
		else drawThread(g, LD[l.th], l, y, h, tw);
		g.strokeStyle = '#ccc';
		g.beginPath(); g.moveTo(0, y + h - 0.5); g.lineTo(W, y + h - 0.5); g.stroke();
		y += h;
	});
	cv.setAttribute('data-lanes', JSON.stringify(lanes.map(function (l) {
		return { label: l.label, y: l.y, h: l.h, proc: !!l.proc, rate: !!l.rate, th: l.th, pid: l.pid, open: l.open,
			 main: !l.proc && !l.rate && TH[l.th][0] >= 0 && TH[l.th][1] == TH[l.th][0] };
	})));
	if (leakOn() && LEAK_CUT < NB) {	// the leak view counts what was allocated left of the line
		var xc = LABEL + LEAK_CUT * tw / NB;
		g.fillStyle = 'rgba(0,0,0,0.08)';
		g.fillRect(xc, 0, W - xc, y);
		g.fillStyle = '#8e44ad';
		g.fillRect(xc - 1, 0, 2, y);
		var label = '\u2190 the leak view: allocated before', lw = g.measureText(label).width + 6;
		var lx = Math.max(LABEL, xc - lw - 2);
		g.fillStyle = 'rgba(255,255,255,0.85)';
		g.fillRect(lx, y - 13, lw, 12);
		g.fillStyle = '#8e44ad';
		g.fillText(label, lx + 3, y - 7);
	}
	g.fillStyle = '#555';	// time axis
	for (var k = 0; k <= 10; k++) {
		var x = LABEL + k * tw / 10;
		g.fillRect(x, y, 1, 4);
		g.fillText(tMs(k * NB / 10) + ' ms', Math.min(x, W - 50), y + 10);
	}
	drawSelection();
}
// One path per colour: a fill per state, not per bucket.
var LANE_COLOURS = ['#2a7de1', '#e0452b', '#a05ac8', '#c8d2dc'];
function drawThread(g, d, l, y, h, tw) {
	var xs = tw / (NB * LPER), w = Math.max(1, xs), full = h - 4, n = d.last - d.first + 1;
	var base = new Float64Array(Math.max(0, n)).fill(y + h - 2);
	for (var c = 0; c < 4 && d.q; c++) {
		g.beginPath();
		for (var k = 0; k < n; k++) {
			var v = d.q[4 * k + c];
			if (!v) continue;
			var hh = full * v / 63;
			base[k] -= hh;
			g.rect(LABEL + (d.first + k) * xs, base[k], w, hh);
		}
		g.fillStyle = LANE_COLOURS[c];
		g.fill();
	}
	(A.events || []).forEach(function (e) {	// fork, exec and exit records (htmlapp.c)
		if (e[0] == l.th) marker(g, LABEL + e[1] * xs, y, EVENT_NAMES[e[2]] || '?', e[2] == 2 ? '#b00' : '#1a8a1a');
	});
}
var EVENT_NAMES = ['start', 'exec', 'exit'];
function marker(g, x, y, text, colour) {
	g.fillStyle = colour;
	g.fillRect(x - 1, y, 2, TRACK_H - 2);
	g.fillText(text, x + 3, y + 7);
}
// A process's track: its threads' states summed per bucket, scaled to the
// track's height where they add up past one thread's worth.
function drawProcessSum(g, l, y, h, tw) {
	var xs = tw / (NB * LPER), w = Math.max(1, xs), full = h - 4, sum = new Float64Array(4 * NL);
	l.ths.forEach(function (i) {
		var d = LD[i];
		for (var k = 0; d.q && k < d.q.length; k++) sum[4 * d.first + k] += d.q[k];
	});
	var base = new Float64Array(NL).fill(y + h - 2);
	for (var c = 0; c < 4; c++) {
		g.beginPath();
		for (var b = 0; b < NL; b++) {
			var v = sum[4 * b + c];
			if (!v) continue;
			var all = sum[4 * b] + sum[4 * b + 1] + sum[4 * b + 2] + sum[4 * b + 3];
			var hh = full * v / Math.max(63, all);
			base[b] -= hh;
			g.rect(LABEL + b * xs, base[b], w, hh);
		}
		g.fillStyle = LANE_COLOURS[c];
		g.fill();
	}
}
function drawProcess(g, l, y, h, tw, xs) {
	var pts = A.timeline.filter(function (p) { return p[0] == l.pid; });
	var hp = (A.heap || []).filter(function (p) { return p[0] == l.pid; });
	if (!pts.length && !hp.length) return;
	var rss = Math.max.apply(null, pts.map(function (p) { return p[2]; }).concat([0]));
	var hmax = Math.max.apply(null, hp.map(function (p) { return p[2]; }).concat([0]));
	var rmax = Math.max(rss, hmax) || 1;	// one scale: live heap beside RSS
	if (hp.length) {	// record --heap: estimated live bytes, a step line
		g.strokeStyle = '#8e44ad';
		g.beginPath();
		var yy0 = y + h - 2;
		g.moveTo(LABEL + hp[0][1] * xs, yy0);
		hp.forEach(function (p) {
			var x = LABEL + p[1] * xs, yy = y + h - 2 - (h - 4) * p[2] / rmax;
			g.lineTo(x, yy0); g.lineTo(x, yy); yy0 = yy;
		});
		g.lineTo(LABEL + tw, yy0);
		g.stroke();
		g.fillStyle = '#8e44ad';
		g.fillText('heap max ' + (hmax / 1048576).toFixed(1) + ' MiB', LABEL + tw - 270, y + 7);
	}
	if (!pts.length) return;
	g.strokeStyle = '#2d8a4e';
	g.beginPath();
	pts.forEach(function (p, i) {
		var x = LABEL + p[1] * xs, yy = y + h - 2 - (h - 4) * p[2] / rmax;
		if (i) g.lineTo(x, yy); else g.moveTo(x, yy);
	});
	g.stroke();
	g.strokeStyle = '#e0452b';
	g.beginPath();
	pts.forEach(function (p, i) {
		var x = LABEL + p[1] * xs, yy = y + h - 2 - (h - 4) * Math.min(1, p[4] / 10000);
		if (i) g.lineTo(x, yy); else g.moveTo(x, yy);
	});
	g.stroke();
	g.fillStyle = '#2d8a4e';
	g.fillText('RSS max ' + (rss / 1048576).toFixed(1) + ' MiB', LABEL + tw - 130, y + 7);
}
function drawSelection() {
	var box = $('selbox'), cv = $('trk'), tw = cv.width - LABEL;
	if (st.r0 == 0 && st.r1 == NB) { box.style.display = 'none'; $('selinfo').textContent = 'whole recording'; return; }
	box.style.display = 'block';
	box.style.left = (LABEL + st.r0 * tw / NB) + 'px';
	box.style.width = Math.max(2, (st.r1 - st.r0) * tw / NB) + 'px';
	box.style.height = cv.height + 'px';
	$('selinfo').textContent = tMs(st.r0) + ' - ' + tMs(st.r1) + ' ms selected';
}
function bucketAt(x) {
	var tw = $('trk').width - LABEL;
	return Math.max(0, Math.min(NB, Math.round((x - LABEL) * NB / tw)));
}
function trackEvents() {
	var cv = $('trk'), down = null;
	cv.onmousedown = function (ev) { down = { x: ev.offsetX, y: ev.offsetY }; ev.preventDefault(); };
	cv.onmousemove = function (ev) {
		if (!down || Math.abs(ev.offsetX - down.x) < 3) return;
		var a = bucketAt(Math.min(down.x, ev.offsetX)), b = bucketAt(Math.max(down.x, ev.offsetX));
		st.r0 = a; st.r1 = Math.max(a + 1, b);
		drawSelection();
	};
	cv.onmouseup = function (ev) {
		if (!down) return;
		var click = Math.abs(ev.offsetX - down.x) < 3;
		down = null;
		if (click) {
			var l = lanes.filter(function (l) { return ev.offsetY >= l.y && ev.offsetY < l.y + l.h; })[0];
			if (!l) return;
			if (l.proc && ev.offsetX < 16) {	// the triangle: show or hide its threads
				if (expanded.has(l.pid)) expanded.delete(l.pid); else expanded.add(l.pid);
				buildLanes();
				drawTracks();
				return;
			}
			if (l.proc || l.rate) {
				var same = st.pid === l.pid && st.th === null;
				st.pid = same ? null : l.pid; st.th = null;
				if (!same && !expanded.has(l.pid)) { expanded.add(l.pid); buildLanes(); }
			}
			else { st.th = st.th === l.th ? null : l.th; st.pid = null; }
		}
		update();
	};
}

// --- wiring -------------------------------------------------------------------
var baseSandwich = window.sandwich;
window.sandwich = function (k) {
	baseSandwich(k);
	st.fn = k;
	sourceView();
	saveHash();
};
function saveHash() {
	var q = ['v=1'];
	if (st.r0 != 0 || st.r1 != NB) q.push('r=' + st.r0 + '-' + st.r1);
	if (st.th !== null) q.push('th=' + st.th);
	if (st.pid !== null) q.push('pid=' + st.pid);
	if (st.m != A.metric) q.push('m=' + st.m);
	if (st.fn) q.push('fn=' + encodeURIComponent(st.fn.split('\t')[0]));
	if (st.focus) q.push('focus=' + encodeURIComponent(st.focus));
	if (st.rec) q.push('rec=1');
	if (st.inv) q.push('inv=1');
	if (st.ct) q.push('ct=' + encodeURIComponent(st.ct));
	if (st.age !== null) q.push('age=' + st.age);
	if (D.inverted) q.push('icicle=1');
	history.replaceState(null, '', '#' + q.join('&'));
}
function loadHash() {
	var h = location.hash.slice(1);
	if (h.indexOf('v=1') != 0) return false;
	var q = new URLSearchParams(h), r = q.get('r');
	if (r) { var p = r.split('-'); st.r0 = Math.max(0, +p[0] || 0); st.r1 = Math.min(NB, Math.max(st.r0 + 1, +p[1] || NB)); }
	if (q.get('th') !== null) st.th = +q.get('th');
	if (q.get('pid') !== null) st.pid = +q.get('pid');
	if (q.get('m')) st.m = q.get('m');
	st.focus = q.get('focus');
	st.rec = q.get('rec') == '1';
	st.inv = q.get('inv') == '1';
	st.ct = q.get('ct') || '';
	if (q.get('age') !== null) st.age = Math.max(0, +q.get('age') || 0);
	D.inverted = q.get('icicle') == '1';
	var fn = q.get('fn');
	if (fn) {
		for (var f = 0; f < FR.length; f++) if (fName(f) == fn) { st.fn = fKey(f); break; }
	}
	return true;
}
// Panel widths, read once before update() changes the DOM: reading one
// after a change forces a layout of the whole page, once per panel.
// The flame graph's goes to D.width, where render() looks first.
var WID = { tracks: 0, sc: 0 };
function measure() {
	WID.tracks = $('tracks').clientWidth;
	WID.sc = $('scwrap').clientWidth;
	D.width = $('flame').clientWidth;
}
function update() {
	var t = performance.now();
	measure();
	aggregate();
	MARK.aggregate = performance.now() - t;
	// the canvases first (tracks, stack chart, flame graph), while style
	// and layout are clean: a canvas font needs its element's style, which
	// after the DOM panels below (table, call tree) would cost a style pass
	drawTracks();
	MARK.tracks = performance.now() - t;
	stackChart();
	MARK.stackchart = performance.now() - t;
	N = flameNodes();
	MARK.flameNodes = performance.now() - t;
	S = AS;
	D.unit = unit();
	D.diff = !!swBase;
	if (D.diff) { D.base_total = N[0][9]; D.max_delta = diffScale(N); }
	K = [];
	N.forEach(function (n, i) { K.push([]); if (i) K[n[0]].push(i); });
	zoomId = 0;
	if (re) search($('q').value);	// a search from the URL ran on the placeholder tree
	else render();
	MARK.render = performance.now() - t;
	var rows = functionRows();
	MARK.functionRows = performance.now() - t;
	fillFunctions(rows);
	MARK.fill = performance.now() - t;
	var keep = st.fn && rows.some(function (r) { return r.k == st.fn; }) ? st.fn : rows.length ? rows[0].k : null;
	if (keep) window.sandwich(keep);
	else { st.fn = null; sourceView(); }
	MARK.sandwich = performance.now() - t;
	renderCallTree();
	MARK.calltree = performance.now() - t;
	heapView();
	$('metric').value = st.m;
	$('age').value = st.age === null ? '' : st.age;
	$('rec').checked = st.rec;
	$('ctinv').checked = st.inv;
	$('ctq').value = st.ct;
	$('focusinfo').textContent = st.focus ? 'focused on ' + st.focus : '';
	$('flame').setAttribute('data-total', total);
	var wrap = $('flamewrap');
	if (!D.inverted) wrap.scrollTop = wrap.scrollHeight;	// the one layout update() forces
	saveHash();
}
function init() {
	LD = laneData();
	buildLanes();
	MARK.lanes = performance.now();
	trackEvents();
	$('metric').onchange = function () { st.m = this.value; update(); };
	// the leak view's age: empty is off; an age with a metric it does not
	// count switches to live-bytes
	$('agectl').hidden = !LIVE_END;
	$('heaphint').hidden = A.rows.allocs === undefined;
	$('age').onchange = function () {
		var v = this.value.trim();
		st.age = v === '' || !(+v >= 0) ? null : +v;
		if (st.age !== null && st.m != 'live-bytes' && st.m != 'allocs') st.m = 'live-bytes';
		update();
	};
	if (A.trim_samples > 0 && $('appnote'))	// htmlapp.c's trim_stacks(): too many stacks to keep each
		$('appnote').textContent = 'Stacks under ' + 100 * A.trim_share + '% of the CPU and of the ' +
			'off-CPU time are drawn as (trimmed) under their nearest kept caller: ' +
			(100 * A.trim_samples).toFixed(1) + '% of the samples. prof report --format=folded ' +
			'keeps every stack.';
	$('clearsel').onclick = function () { st.r0 = 0; st.r1 = NB; st.th = null; st.pid = null; update(); };
	$('rec').onchange = function () { st.rec = this.checked; update(); };
	$('focusbtn').onclick = function () { st.focus = st.fn ? st.fn.split('\t')[0] : null; update(); };
	$('unfocus').onclick = function () { st.focus = null; update(); };
	$('icicle').onclick = function () { D.inverted = !D.inverted; update(); };
	$('ctinv').onchange = function () { st.inv = this.checked; ctOpen.clear(); renderCallTree(); saveHash(); };
	$('ctq').onkeyup = function () { st.ct = this.value; renderCallTree(); saveHash(); };
	var fromHash = loadHash();
	if (st.th !== null && TH[st.th]) expanded.add(TH[st.th][0]);	// a link to a thread shows it
	if (st.pid !== null) expanded.add(st.pid);
	if (fromHash) buildLanes();
	if (fromHash || A.timed) update();
	else { measure(); drawTracks(); renderCallTree(); stackChart(); sourceView(); $('flame').setAttribute('data-total', N[0][7]); }
	window.onresize = function () { measure(); drawTracks(); stackChart(); render(); };
	MARK.ready = performance.now();
	document.body.setAttribute('data-load-ms', Math.round(MARK.ready));
	document.body.setAttribute('data-marks', JSON.stringify(MARK));
	document.body.setAttribute('data-app', 'ready');
	// first paint: a frame callback runs before it, a task queued there after
	requestAnimationFrame(function () {
		setTimeout(function () {
			MARK.painted = performance.now();
			document.body.setAttribute('data-marks', JSON.stringify(MARK));
			document.body.setAttribute('data-painted-ms', Math.round(MARK.painted));
		}, 0);
	});
}
init();
})();

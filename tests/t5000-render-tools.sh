#!/bin/bash
# t5000-render-tools.sh - the picture/interop renderers checked with the
# real tools that consume them: callgrind_annotate reads the callgrind
# export and its PROGRAM TOTALS equal the profile's samples; protoc
# --decode_raw and a python profile.proto walker read the gunzipped pprof
# (string_table[0] == "", sample types, inline chains innermost first);
# python3 checks speedscope's file-format schema; headless Chromium runs
# the SVG/HTML scripts (URL-driven search shows "% matched", hostile
# symbol names never become elements).  The inputs are written by the
# render unit test binary from a model-built profile (RENDER_OUT_DIR).
. "$(dirname "$0")/lib/test-lib.sh"

RENDER_T="$BUILD_DIR/tests/unit/render.t"
[ -x "$RENDER_T" ] || skip_all "build/tests/unit/render.t not built (run make unit)"

test_expect_success 'render unit binary writes every format' '
	RENDER_OUT_DIR="$TRASH" "$RENDER_T" >unit.tap &&
	for f in flame.svg icicle.svg diff.svg report.html timeline.html speedscope.json profile.pb.gz callgrind.out; do
		test -s "$f" || { echo "missing $f"; exit 1; }
	done
'

test_expect_success 'speedscope: file-format schema' '
	python3 - speedscope.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
	frames = d["shared"]["frames"]
	assert frames and all(isinstance(f["name"], str) for f in frames)
	for f in frames:
	    assert set(f) <= {"name", "file", "line", "col"}, f
	    assert "line" not in f or isinstance(f["line"], int)
	assert len(d["profiles"]) == 2, "one profile per thread"
	total = 0
	for p in d["profiles"]:
	    assert p["type"] == "sampled" and p["unit"] in ("none", "nanoseconds")
	    assert isinstance(p["name"], str)
	    assert len(p["samples"]) == len(p["weights"]) > 0
	    for s in p["samples"]:
	        assert all(isinstance(i, int) and 0 <= i < len(frames) for i in s)
	        assert frames[s[0]]["name"] == "main", "outermost first"
	    assert p["startValue"] == 0 and p["endValue"] == sum(p["weights"])
	    total += sum(p["weights"])
	assert total == 18, total
	assert any(f["name"] == "quote\"back\\slash" for f in frames)
	assert 0 <= d.get("activeProfileIndex", 0) < len(d["profiles"])
	EOF
'

test_expect_success 'callgrind_annotate reads the export; totals = samples' '
	command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate missing"; exit 1; }
	callgrind_annotate callgrind.out >annotate.txt 2>&1 &&
	grep -E "^ *18 .*PROGRAM TOTALS" annotate.txt &&
	grep -E "^ *8 .*app.c:spin \[/usr/bin/app\]" annotate.txt &&
	callgrind_annotate --inclusive=yes callgrind.out >incl.txt 2>&1 &&
	grep -E "^ *18 .*app.c:main" incl.txt &&
	grep -E "^ *13 .*app.c:work" incl.txt
'

if command -v protoc >/dev/null; then
	test_expect_success 'pprof: protoc --decode_raw parses the gunzipped profile' '
		gunzip -c profile.pb.gz >profile.pb &&
		protoc --decode_raw <profile.pb >decoded.txt &&
		grep -q "^6: \"nanoseconds\"" decoded.txt &&
		grep -q "^6: \"00112233445566778899aabbccddeeff00112233\"" decoded.txt
	'
else
	test_skip 'pprof: protoc --decode_raw' 'protoc not installed (apt-get install protobuf-compiler)'
fi

test_expect_success 'pprof: profile.proto structure' '
	gunzip -c profile.pb.gz >profile.pb &&
	python3 - profile.pb <<-\EOF
	import sys
	def varint(b, i):
	    r = s = 0
	    while True:
	        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
	        if c < 0x80: return r, i
	def fields(b):
	    i, out = 0, []
	    while i < len(b):
	        k, i = varint(b, i); f, w = k >> 3, k & 7
	        if w == 0: v, i = varint(b, i)
	        elif w == 2: n, i = varint(b, i); v = b[i:i+n]; i += n
	        else: raise SystemExit("unexpected wire type %d" % w)
	        out.append((f, v))
	    return out
	def packed(b):
	    i, out = 0, []
	    while i < len(b): v, i = varint(b, i); out.append(v)
	    return out
	P = fields(open(sys.argv[1], "rb").read())
	strs = [v.decode() for f, v in P if f == 6]
	assert strs[0] == "", "string_table[0] must be empty"
	types = [dict(fields(v)) for f, v in P if f == 1]
	names = [(strs[t.get(1, 0)], strs[t.get(2, 0)]) for t in types]
	assert names[:2] == [("samples", "count"), ("cpu", "nanoseconds")], names
	period_type = dict(fields([v for f, v in P if f == 11][0]))
	assert strs[period_type[1]] == "cpu"
	funcs = {d[1]: strs[d.get(2, 0)] for d in (dict(fields(v)) for f, v in P if f == 5)}
	locs = {}
	for f, v in P:
	    if f == 4:
	        L = fields(v)
	        lid = [x for k, x in L if k == 1][0]
	        locs[lid] = [funcs[dict(fields(x))[1]] for k, x in L if k == 4]
	maps = [dict(fields(v)) for f, v in P if f == 3]
	assert any(strs[m.get(6, 0)] == "00112233445566778899aabbccddeeff00112233" for m in maps)
	total = 0
	stacks = []
	for f, v in P:
	    if f != 2: continue
	    S = fields(v)
	    ids = packed([x for k, x in S if k == 1][0])
	    vals = packed([x for k, x in S if k == 2][0])
	    assert len(vals) == len(types)
	    total += vals[0]
	    assert vals[1] == vals[0] * 1000000, vals
	    stacks.append([n for i in ids for n in locs[i]])
	assert total == 18, total
	assert ["helper", "work", "main"] in stacks, stacks
	# the inline chain is one location: helper (inlined) then work
	assert ["helper", "work"] in locs.values(), locs
	assert ["spin", "work", "main"] in stacks
	EOF
'

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
chrome() {
	timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run \
		--user-data-dir="$(mktemp -d "$TRASH/chrome.XXXXXX")" "$@" 2>/dev/null
}
if [ -z "$CHROMIUM" ]; then
	for t in 'svg search in chromium' 'icicle/diff svg load' 'html search in chromium' 'screenshots'; do
		test_skip "$t" 'chromium not installed (apt-get install chromium)'
	done
	test_done
fi

test_expect_success 'svg: URL search runs in chromium, hostile name stays text' '
	chrome --dump-dom "file://$TRASH/flame.svg?s=^sp" >svg.dom &&
	grep -q "44.4% matched" svg.dom &&
	! grep -qi "<img" svg.dom &&
	grep -q "fill=\"rgb(230,0,230)\"" svg.dom
'

test_expect_success 'svg: ?z= zooms: work fills the width, spin rescaled, main dimmed' '
	chrome --dump-dom "file://$TRASH/flame.svg?z=work" >zoom.dom &&
	# spin is 8 of work'"'"'s 13 samples: 8/13 of 1180 px after the zoom
	grep -A3 "data-n=\"spin\"" zoom.dom | grep -q "width=\"726.15\"" &&
	grep "data-n=\"main\"" zoom.dom | grep -q "opacity: 0.5" &&
	grep "data-n=\"quote" zoom.dom | grep -q "display: none"
'

test_expect_success 'svg: icicle and diff load; #search= fragment works' '
	chrome --dump-dom "file://$TRASH/icicle.svg#search=work" >icicle.dom &&
	grep -q "72.2% matched" icicle.dom &&
	chrome --dump-dom "file://$TRASH/diff.svg?s=gone" >diff.dom &&
	grep -q "Disappeared" diff.dom && grep -q "% matched" diff.dom
'

test_expect_success 'html: flame graph drawn by script, search, sandwich, no injection' '
	chrome --dump-dom "file://$TRASH/report.html#search=work" >html.dom &&
	grep -q "72.2% matched" html.dom &&
	grep -q "data-names=\"[^\"]*&quot;spin&quot;" html.dom &&
	grep -q "id=\"sw-name\"[^>]*>spin" html.dom &&
	! grep -qi "<img" html.dom &&
	! grep -q "<script>alert" html.dom
'

test_expect_success 'html: functions table sorts by a column (total)' '
	chrome --dump-dom "file://$TRASH/report.html?sort=4" >sorted.dom &&
	# by total, descending: main (18) first, work (13) second
	grep -o "<tr data-k=\"[a-z]*" sorted.dom | head -2 | tr "\n" " " >order.txt &&
	grep -q "data-k=\"main <tr data-k=\"work" order.txt
'

test_expect_success 'screenshots render' '
	chrome --screenshot="$TRASH/flame.png" --window-size=1200,400 "file://$TRASH/flame.svg?s=^sp" &&
	chrome --screenshot="$TRASH/report.png" --window-size=1200,1400 "file://$TRASH/report.html" &&
	test $(stat -c %s flame.png) -gt 5000 && test $(stat -c %s report.png) -gt 5000
'

test_done

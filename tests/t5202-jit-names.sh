#!/bin/bash
# t5202-jit-names: V8's perf-map names ("JS:*alpha /path/split.js:7:10",
# node --perf-basic-prof) are split into function, file and line, the
# same in every format: the text report and JSON name the function alone,
# speedscope's frames and the HTML report's frames carry the file and the
# line, the Firefox export marks the functions isJS with their file and
# start line, pprof's functions have the file.  The truth is the script
# itself: the line each function is defined on (grep).
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
command -v node >/dev/null && node --perf-basic-prof -e 0 2>/dev/null ||
	skip_all "node with --perf-basic-prof is not available"
JS="$TOP/tests/workloads/compat/split.js"
LINE_ALPHA=$(grep -n "^function alpha" "$JS" | cut -d: -f1)
LINE_BETA=$(grep -n "^function beta" "$JS" | cut -d: -f1)

# 2 s of a 6:3:1 split at 999 Hz: alpha and beta have hundreds of samples
# each; missing one from every format would take it never running.
test_expect_success 'record node running split.js' '
	"$PROF" record -q -o n.data -- node --perf-basic-prof "$JS" 2 >/dev/null
'

test_expect_success 'text and JSON: the function alone, never the JS:* name' '
	"$PROF" report -i n.data -q >text && check_contains text " alpha  *perf-[0-9]*\.map$" &&
	check_not_contains text "JS:" &&
	"$PROF" report -i n.data --format=json >n.json &&
	python3 - "$JS" "$LINE_ALPHA" "$LINE_BETA" <<-PY
	import json, sys
	d = json.load(open("n.json"))
	fn = {f["name"]: f for f in d["functions"]}
	for name, line in (("alpha", int(sys.argv[2])), ("beta", int(sys.argv[3]))):
	    assert fn[name]["file"] == sys.argv[1] and fn[name]["line"] == line, fn[name]
	assert not any(f["name"].startswith("JS:") for f in d["functions"]), "a JS: name"
	PY
'

test_expect_success 'speedscope and HTML frames: file and line' '
	"$PROF" report -i n.data --format=speedscope -o n.ss.json &&
	"$PROF" report -i n.data --format=html -o n.html &&
	python3 - "$JS" "$LINE_ALPHA" <<-PY
	import json, re, sys
	ss = json.load(open("n.ss.json"))
	frames = [f for f in ss["shared"]["frames"] if f["name"] == "alpha"]
	assert frames and all(f.get("file") == sys.argv[1] and f.get("line") == int(sys.argv[2]) for f in frames), frames
	t = open("n.html").read()
	a = json.loads(re.search(r"<script type=\"application/json\" id=\"prof-app\">(.*?)</script>", t, re.S).group(1))
	S = a["strings"]
	fr = [f for f in a["frames"] if S[f[0]] == "alpha"]
	assert fr and all(S[f[2]] == sys.argv[1] and f[3] == int(sys.argv[2]) for f in fr), fr
	PY
'

test_expect_success 'Firefox: isJS functions with their file and start line' '
	"$PROF" report -i n.data --format=firefox -o n.ff.json &&
	python3 "$TOP/tests/lib/firefox-check.py" n.ff.json &&
	python3 - "$JS" "$LINE_ALPHA" <<-PY
	import json, sys
	d = json.load(open("n.ff.json"))
	S = d["shared"]["stringArray"]
	seen = False
	for t in d["threads"]:
	    ft = t["funcTable"]
	    for i in range(ft["length"]):
	        if S[ft["name"][i]] == "alpha":
	            seen = True
	            assert ft["isJS"][i] and S[ft["fileName"][i]] == sys.argv[1] and ft["lineNumber"][i] == int(sys.argv[2])
	        elif ft["fileName"][i] is None:
	            assert not ft["isJS"][i], "isJS without a script: " + S[ft["name"][i]]
	assert seen
	PY
'

if command -v go >/dev/null; then
	test_expect_success 'pprof: the function has its file' '
		"$PROF" report -i n.data --format=pprof -o n.pb.gz &&
		go tool pprof -raw n.pb.gz >raw 2>raw.err &&
		grep -q " alpha $JS:$LINE_ALPHA" raw || { grep -m3 alpha raw; cat raw.err; false; }
	'
else
	test_skip 'pprof: the function has its file' 'go (go tool pprof) is not installed'
fi

test_done

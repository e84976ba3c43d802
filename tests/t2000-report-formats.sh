#!/bin/bash
# t2000-report-formats: `prof report` on a known prof.data (written by the
# output unit test's fixture writer, no recording needed): flat, tree,
# folded and JSON output, filters, --sort, --percent-limit, --metric, -o,
# and hostile symbol names in JSON.
. "$(dirname "$0")/lib/test-lib.sh"

GEN="$BUILD_DIR/tests/unit/output.t"
[ -x "$GEN" ] || skip_all "build/tests/unit/output.t not built (make unit)"
"$GEN" --write fx.data || skip_all "cannot write the fixture"

test_expect_success 'default is the flat text report with header' '
	"$PROF" report -i fx.data >out &&
	check_contains out "^# prof report: fx.data$" &&
	check_contains out "^# event: cpu-clock, 999 Hz$" &&
	check_contains out "^# samples: 100, lost: 0, duration: 0.10 s, fully unwound: 100.0%$" &&
	check_contains out "^# command: ./app --x$" &&
	check_contains out "^  Self%   Total%   Samples  Function  *Module$" &&
	check_contains out "^ 60.00%   90.00%        60  work  *app$" &&
	check_contains out "^  0.00%  100.00%         0  main  *app$"
'

test_expect_success 'positional file and --flat work the same' '
	"$PROF" report -i fx.data >a && "$PROF" report --flat fx.data >b && cmp a b
'

test_expect_success 'flat rows sorted by self; --sort total puts main first' '
	"$PROF" report fx.data | grep "^ *[0-9]" | awk "{print \$4}" >self &&
	printf "work\nhelper\nkfn\nrec\nmain\n" >want && cmp want self &&
	"$PROF" report --sort total fx.data | grep -v "^#" | sed -n 2p >top &&
	check_contains top " main "
'

test_expect_success '--percent-limit hides small rows' '
	"$PROF" report --percent-limit 15 fx.data >out &&
	check_contains out " helper " && check_not_contains out " kfn "
'

test_expect_success '--tree is caller first and indented' '
	"$PROF" report --tree fx.data >out &&
	check_contains out "^100.00%    0.00%       100  main  \[app\]$" &&
	check_contains out "^ 90.00%   60.00%        90    work  \[app\]$" &&
	check_contains out "^ 10.00%   10.00%        10      kfn  \[kernel.kallsyms\]$" &&
	check_contains out "^ 10.00%   10.00%        10        rec  \[app\]$"
'

test_expect_success 'folded lines like stackcollapse-perf' '
	"$PROF" report --format=folded fx.data >out &&
	printf "%s\n" "app;main;work 60" "app;main;work;helper_[i] 20" \
		"other;main;work;kfn_[k] 10" "worker;main;rec;rec;rec 10" >want &&
	cmp want out
'

test_expect_success 'folded off-cpu is in microseconds' '
	"$PROF" report --format=folded --metric off-cpu fx.data >out &&
	check_contains out "^app;main;work 1000$" &&
	test $(wc -l <out) = 2
'

test_expect_success 'filters: --pid --tid --comm --dso' '
	"$PROF" report --format=folded --pid 2 fx.data >out &&
	echo "other;main;work;kfn_[k] 10" >want && cmp want out &&
	"$PROF" report --format=folded --comm worker fx.data >out &&
	echo "worker;main;rec;rec;rec 10" >want && cmp want out &&
	"$PROF" report --format=folded --tid 2 fx.data >out && test $(wc -l <out) = 2 &&
	"$PROF" report --format=folded --dso "[kernel.kallsyms]" fx.data >out &&
	echo "other;main;work;kfn_[k] 10" >want && cmp want out
'

test_expect_success 'json is valid and has the prof-report/1 fields' '
	"$PROF" report --format=json -o out.json fx.data &&
	python3 -m json.tool out.json >/dev/null &&
	python3 - out.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["schema"] == "prof-report/1", d["schema"]
	want = {"schema", "file", "event", "frequency", "metric", "unit", "samples", "lost",
	        "truncated_stacks", "complete_pct", "duration_s", "start_ns", "end_ns", "command", "processes", "functions"}
	assert set(d) == want, set(d) ^ want
	assert (d["file"], d["event"], d["frequency"], d["metric"], d["unit"]) == \
	       ("fx.data", "cpu-clock", 999, "cpu", "samples"), d
	assert d["samples"] == 100 and d["lost"] == 0 and d["complete_pct"] == 100.0
	assert abs(d["duration_s"] - 0.1) < 1e-9 and d["command"] == "./app --x"
	procs = {p["pid"]: p for p in d["processes"]}
	assert procs[1]["samples"] == 90 and procs[1]["comm"] == "app", procs
	assert {t["tid"]: t["samples"] for t in procs[1]["threads"]} == {1: 80, 2: 10}
	assert set(procs[1]["threads"][0]) == {"tid", "comm", "samples", "cpu_user_s", "cpu_sys_s",
	                                       "io_wait_s", "off_cpu_s", "sleep_s", "voluntary_switches",
	                                       "involuntary_switches", "minor_faults", "major_faults"}
	f = d["functions"]
	assert set(f[0]) == {"name", "module", "file", "line", "self", "total", "self_pct", "total_pct"}
	assert [x["name"] for x in f] == ["work", "helper", "kfn", "rec", "main"], f
	assert f[0]["module"] == "/opt/bin/app" and f[0]["file"] == "/src/app.c"
	assert (f[0]["self"], f[0]["total"], f[0]["self_pct"], f[0]["total_pct"]) == (60, 90, 60.0, 90.0)
	EOF
'

test_expect_success 'json escapes hostile names (quotes, backslash, newline, html)' '
	"$PROF" report --format=json --metric sleep fx.data >out.json &&
	check_not_contains out.json "<img" &&
	python3 - out.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	names = {f["name"] for f in d["functions"]}
	assert "<img src=x onerror=alert(1)>" in names, names
	assert "q\"uo\\te\nnl" in names, names
	assert d["unit"] == "us" and d["metric"] == "sleep"
	assert d["functions"][0]["self"] == 3000, d["functions"]
	EOF
'

test_expect_success 'time metrics in text are milliseconds' '
	"$PROF" report --metric io-wait fx.data >out &&
	check_contains out "Time(ms)" &&
	check_contains out "^100.00%  100.00%      1.00  work "
'

test_expect_success '--sort total in json' '
	"$PROF" report --format=json --sort total fx.data >out.json &&
	python3 -c "import json,sys; f=json.load(open(\"out.json\"))[\"functions\"]; assert f[0][\"name\"]==\"main\", f"
'

test_done

#!/bin/bash
# t5200-export-time: the exports that other tools read, checked by those
# tools.  speedscope: validated against the file-format-schema.json of
# speedscope's own npm package, one sampled profile per thread with every
# sample of the recording, weights in nanoseconds, in time order (the
# phases workload's main thread goes compute -> I/O -> compute).  pprof:
# read by Go's `go tool pprof`, whose totals must equal prof's.
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/lib/node-tools.sh"
require_perf_events
export HOME="${HOME:-$TRASH}"

test_expect_success 'record the phases workload' '
	"$PROF" record -o ph.data -- "$WL/phases" "$TRASH" 1.5 >run.out 2>run.err &&
	cat run.out run.err &&
	"$PROF" report -i ph.data --format=json >ph.json &&
	"$PROF" report -i ph.data --format=speedscope -o cpu.ss.json &&
	"$PROF" report -i ph.data --format=speedscope --metric off-cpu -o off.ss.json &&
	"$PROF" report -i ph.data --format=pprof -o ph.pb.gz
'
samples=$(python3 -c "import json; print(json.load(open('ph.json'))['samples'])" 2>/dev/null)
offcpu=yes
grep -q "no off-CPU stacks" run.err && offcpu=""

if node_tools_ready; then
	CHECK="node $TOP/tests/node/speedscope-check.js"
	test_expect_success 'speedscope: valid, every sample, one profile per thread, ns' '
		$CHECK cpu.ss.json >cpu.sum && cat cpu.sum &&
		python3 - "$samples" <<-PY
		import json, sys
		s = json.load(open("cpu.sum"))["profiles"]
		n = sum(p["samples"] for p in s)
		print("samples in export", n, "recording", sys.argv[1])
		assert n == int(sys.argv[1]) and n > 100
		assert len(s) == 2, s			# main and wl-worker
		assert all(p["unit"] == "nanoseconds" for p in s)
		# cpu-clock at 999 Hz: each sample weighs its period, ~1 ms
		assert all(0.9e6 * p["samples"] <= p["weight"] <= 1.1e6 * p["samples"] for p in s)
		PY
	'
	test_expect_success 'speedscope: the checker rejects a file the schema forbids' '
		python3 -c "
import json; d = json.load(open(\"cpu.ss.json\"))
del d[\"profiles\"][0][\"weights\"]; json.dump(d, open(\"bad.json\", \"w\"))" &&
		! $CHECK bad.json 2>bad.err && cat bad.err && grep -q "schema" bad.err
	'
	test_expect_success 'speedscope: samples in time order (compute, I/O, compute)' '
		python3 - <<-PY
		import json
		d = json.load(open("cpu.ss.json"))
		names = [f["name"] for f in d["shared"]["frames"]]
		main = [p for p in d["profiles"] if "wl-worker" not in p["name"]][0]
		phase = []
		for s in main["samples"]:
		    fs = {names[i] for i in s}
		    p = "io" if "io_phase" in fs else "cpu" if "compute_phase" in fs else None
		    if p and (not phase or phase[-1] != p):
		        phase.append(p)
		print(phase)
		assert phase == ["cpu", "io", "cpu"], phase
		PY
	'
	if [ -n "$offcpu" ]; then
		test_expect_success 'speedscope off-cpu: valid, weights in ns' '
			$CHECK off.ss.json >off.sum && cat off.sum &&
			python3 -c "
import json; s = json.load(open(\"off.sum\"))[\"profiles\"]
assert all(p[\"unit\"] == \"nanoseconds\" for p in s) and sum(p[\"weight\"] for p in s) > 0"
		'
	else
		test_skip 'speedscope off-cpu: valid, weights in ns' 'no off-CPU data here'
	fi
else
	test_skip 'speedscope checks' "$NODE_TOOLS_WHY"
fi

if command -v go >/dev/null 2>&1; then
	test_expect_success 'go tool pprof: total samples and work_function equal prof' '
		go tool pprof -top ph.pb.gz >top.txt 2>&1 && head -12 top.txt &&
		grep -q "Total samples = $samples *\$" top.txt &&
		want=$("$PROF" report -i ph.data | awk "\$4 == \"work_function\" {print \$3}") &&
		got=$(awk "\$6 == \"work_function\" {print \$1}" top.txt) &&
		say "work_function prof $want, pprof $got" && test -n "$want" && test "$want" = "$got"
	'
	if [ -n "$offcpu" ] && node_tools_ready; then
		test_expect_success 'go tool pprof -raw: off-CPU ns equal the speedscope export' '
			go tool pprof -raw ph.pb.gz >raw.txt 2>&1 &&
			python3 - <<-PY
			import json
			lines = open("raw.txt").read().split("\n")
			i = next(k for k, l in enumerate(lines) if l.startswith("samples/count"))
			types = [t.split("/")[0] for t in lines[i].split()]
			col = types.index("off_cpu")
			total = 0
			for l in lines[i + 1:]:
			    if not l.strip() or not l.startswith(" ") or ":" not in l:
			        if l and not l.startswith(" "): break
			        continue
			    vals = l.split(":")[0].split()
			    if len(vals) == len(types): total += int(vals[col])
			ss = sum(p["weight"] for p in json.load(open("off.sum"))["profiles"])
			print("pprof off_cpu ns", total, "speedscope", ss)
			assert total == ss and total > 0
			PY
		'
	else
		test_skip 'go tool pprof -raw: off-CPU ns equal the speedscope export' 'no off-CPU data or node'
	fi
else
	test_skip 'go tool pprof checks' 'go is not installed'
fi

test_done

#!/bin/bash
# python.sh - what the Python frames cost a CPython program, and how often
# a stack moved before its frames were read.  The program is
# tests/workloads/pysplit.py (a main thread running pure Python, zlib and
# a 16-deep recursion, and a second thread), interleaved REPEAT times:
#   bare         python3 pysplit.py ROUNDS
#   --no-python  prof record -F 999 --no-python -- python3 pysplit.py ROUNDS
#   python       prof record -F 999 -- python3 pysplit.py ROUNDS
#   read         the same with PROF_PYTHON_NO_BPF=1: the recorder reads the
#                frames after the sample instead of the BPF program at it
#   perf         perf record -F 999 --call-graph dwarf (the anchor: what
#                sampling at that rate with stacks costs without prof)
# Two throughput figures per configuration, as ratios of medians:
#   wall         ROUNDS per wall second (at the mercy of the VM's other tenants)
#   main CPU     ROUNDS per CPU second of the main thread (the work is fixed:
#                what sampling costs the thread itself)
# Goals (judged on main CPU): python >= 0.99 of --no-python, >= 0.97 of bare.
# Then attached: pysplit.py --seconds SECS THREADS (THREADS=50 spinning threads and the
# main thread), bare, with `prof record --no-python -p PID` and with
# `prof record -p PID` for the whole run; its spinning loops per wall
# second and per process CPU second, as ratios (goal: >= 0.98 of bare).
# Also printed: the mismatch rate over the python recordings and over the
# read ones (stacks kept native because the chain moved before it was
# read), and the load.
# PY= picks the interpreter (default: python3's real binary);
# LAUNCH_REPEAT= and ATTACH_REPEAT= override REPEAT for each half.
. "$(dirname "$0")/lib.sh"
bench_build
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)')}
APP="$TOP/tests/workloads/pysplit.py"
ROUNDS=${ROUNDS:-40}
SECS=${SECS:-10}
declare -A wall cpu
: >"$BENCH_TMP/py.stats"
: >"$BENCH_TMP/read.stats"

# one CONFIG CMD...: runs CMD, adds its ROUNDS/wall and ROUNDS/main-CPU.
one() {
	local key=$1 w
	shift
	"$RUNSTAT" "$@" >"$BENCH_TMP/py.json" 2>/dev/null 3>"$BENCH_TMP/py.run"
	w=$(awk '{print $2}' "$BENCH_TMP/py.run")
	wall[$key]+="$(awk -v r="$ROUNDS" -v w="$w" 'BEGIN {print r / w}') "
	cpu[$key]+="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(int(sys.argv[2]) / (d["pure_loop"] + d["compress"] + d["recurse"]))' "$BENCH_TMP/py.json" "$ROUNDS") "
}
# python_stats DATA FILE: appends "stacks merged mismatched unread" of a recording
python_stats() {
	"$PROF" report -i "$1" --header 2>/dev/null | sed -n 's/^# python_samples: //p' >>"$2"
}

load0=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq "${LAUNCH_REPEAT:-$REPEAT}"); do
	one bare "$PY" "$APP" "$ROUNDS"
	one nopy "$PROF" record -q -F 999 --no-python -o "$BENCH_TMP/n.data" -- "$PY" "$APP" "$ROUNDS"
	one py "$PROF" record -q -F 999 -o "$BENCH_TMP/p.data" -- "$PY" "$APP" "$ROUNDS"
	python_stats "$BENCH_TMP/p.data" "$BENCH_TMP/py.stats"
	one read env PROF_PYTHON_NO_BPF=1 "$PROF" record -q -F 999 -o "$BENCH_TMP/r.data" -- "$PY" "$APP" "$ROUNDS"
	python_stats "$BENCH_TMP/r.data" "$BENCH_TMP/read.stats"
	one perf perf record -q -F 999 --call-graph dwarf -o "$BENCH_TMP/perf.data" -- "$PY" "$APP" "$ROUNDS"
done
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
[ "${LAUNCH_REPEAT:-$REPEAT}" -gt 0 ] && for f in wall cpu; do
	declare -n t=$f
	label=$([ $f = wall ] && echo "rounds per wall s" || echo "rounds per main-thread CPU s")
	ok=""
	[ $f = cpu ] && ok=$(verdict "$(ratio "$(m "${t[py]}")" "$(m "${t[nopy]}")") >= 0.99")
	row "py frames vs --no-python" "$label" "$(m "${t[nopy]}")" "$(m "${t[py]}")" \
		"$(ratio "$(m "${t[py]}")" "$(m "${t[nopy]}")")" "${ok:-info}"
	[ $f = cpu ] && ok=$(verdict "$(ratio "$(m "${t[py]}")" "$(m "${t[bare]}")") >= 0.97")
	row "py frames vs bare" "$label" "$(m "${t[bare]}")" "$(m "${t[py]}")" \
		"$(ratio "$(m "${t[py]}")" "$(m "${t[bare]}")")" "${ok:-info}"
	row "read after vs --no-python" "$label" "$(m "${t[nopy]}")" "$(m "${t[read]}")" \
		"$(ratio "$(m "${t[read]}")" "$(m "${t[nopy]}")")" info
	row "perf (no Python frames) vs bare" "$label" "$(m "${t[bare]}")" "$(m "${t[perf]}")" \
		"$(ratio "$(m "${t[perf]}")" "$(m "${t[bare]}")")" info
done

# Attached to THREADS spinning threads for the whole run.
THREADS=${THREADS:-50}
declare -A loops lcpu
attach_one() {	# key, prof record's extra flag (or none: bare)
	local pid rec=
	"$PY" "$APP" --seconds "$SECS" "$THREADS" >"$BENCH_TMP/a.json" &
	pid=$!
	if [ "$1" = read ]; then
		PROF_PYTHON_NO_BPF=1 "$PROF" record -q -F 999 -o "$BENCH_TMP/a.data" -p $pid 2>/dev/null &
		rec=$!
	elif [ "$1" = perf ]; then
		perf record -q -F 999 --call-graph dwarf -o "$BENCH_TMP/a-perf.data" -p $pid 2>/dev/null &
		rec=$!
	elif [ "$1" != bare ]; then
		"$PROF" record -q -F 999 ${2:-} -o "$BENCH_TMP/a.data" -p $pid 2>/dev/null &
		rec=$!
	fi
	wait $pid
	[ -n "$rec" ] && wait $rec && [ "$1" = prof ] && python_stats "$BENCH_TMP/a.data" "$BENCH_TMP/py.stats"
	[ -n "$rec" ] && [ "$1" = read ] && python_stats "$BENCH_TMP/a.data" "$BENCH_TMP/read.stats"
	loops[$1]+="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["loops"])' "$BENCH_TMP/a.json") "
	lcpu[$1]+="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["loops"] / d["cpu"])' "$BENCH_TMP/a.json") "
}
for i in $(seq "${ATTACH_REPEAT:-$REPEAT}"); do
	attach_one bare
	attach_one nopy --no-python
	attach_one prof
	attach_one read
	attach_one perf
done
[ "${ATTACH_REPEAT:-$REPEAT}" -gt 0 ] && {
row "py -p, $THREADS threads" "loops per wall s / bare" "$(m "${loops[bare]}")" "$(m "${loops[prof]}")" \
	"$(ratio "$(m "${loops[prof]}")" "$(m "${loops[bare]}")")" \
	"$(verdict "$(ratio "$(m "${loops[prof]}")" "$(m "${loops[bare]}")") >= 0.98")"
row "py -p, $THREADS threads" "loops per wall s / --no-python" "$(m "${loops[nopy]}")" "$(m "${loops[prof]}")" \
	"$(ratio "$(m "${loops[prof]}")" "$(m "${loops[nopy]}")")" "info"
row "py -p, $THREADS threads" "loops per CPU s / bare" "$(m "${lcpu[bare]}")" "$(m "${lcpu[prof]}")" \
	"$(ratio "$(m "${lcpu[prof]}")" "$(m "${lcpu[bare]}")")" "info"
row "read after, -p, $THREADS thr." "loops per wall s / bare" "$(m "${loops[bare]}")" "$(m "${loops[read]}")" \
	"$(ratio "$(m "${loops[read]}")" "$(m "${loops[bare]}")")" "info"
row "perf -p, $THREADS threads" "loops per wall s / bare" "$(m "${loops[bare]}")" "$(m "${loops[perf]}")" \
	"$(ratio "$(m "${loops[perf]}")" "$(m "${loops[bare]}")")" "info"
}

# BPF_STATS=1: one more recording with kernel.bpf_stats_enabled=1 (machine-
# wide, set back after) for the program's own time a sample, which is what
# the sampled thread pays for its Python frames beyond --no-python.
if [ "${BPF_STATS:-0}" = 1 ]; then
	old=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q kernel.bpf_stats_enabled=1
	"$PROF" record -q -F 999 -o "$BENCH_TMP/s.data" -- "$PY" "$APP" "$ROUNDS" >"$BENCH_TMP/s.json" &
	rec=$! last=
	# the program goes with prof: the last reading of the recorder's own
	# program fd (its fdinfo; other prof runs may load one too) counts
	while kill -0 $rec 2>/dev/null; do
		x=$(cat /proc/$rec/fdinfo/* 2>/dev/null | awk '/^prog_type:/ {p = 1} p && /^run_time_ns:/ {t = $2}
			p && /^run_cnt:/ {print t, $2; exit}')
		[ -n "$x" ] && last=$x
		sleep 0.2
	done
	sysctl -q kernel.bpf_stats_enabled="$old"
	echo "$last" | awk '$2 { printf "# BPF program: %d runs, %.2f us a run\n", $2, $1 / $2 / 1000 }' >&2
fi
for f in py read; do
	awk -v f=$f '{s += $1; m += $2; x += $3; u += $4} END {
	printf "# %s: python stacks %d, with Python frames %d (%.2f%%), mismatched %d (%.2f%%), unreadable %d\n",
		f, s, m, s ? 100 * m / s : 0, x, s ? 100 * x / s : 0, u }' "$BENCH_TMP/$f.stats" >&2
done
echo "# $PY, $ROUNDS rounds x ${LAUNCH_REPEAT:-$REPEAT}, attach ${SECS}s x ${ATTACH_REPEAT:-$REPEAT}; load average $load0 at start, $(cut -d' ' -f1 /proc/loadavg) at end" >&2

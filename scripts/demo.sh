#!/bin/bash
# demo.sh - `make demo`: profile a small, recognisable workload with ./prof
# and show what came out.  The workload (tests/workloads/demo.c) is a
# two-thread batch pipeline: generate records, sort them, hash them, and
# compress them with zlib, so the profile has the program's own functions,
# libc (snprintf) and libz, on two named threads.  Prints the flat
# report (top 25 rows), a short caller-first tree, and the next commands.
# Usage: scripts/demo.sh [SECONDS=3]
# The recording goes to profiles/demo.data, or to $PROF_DEMO_DATA if set;
# $PROF_DEMO_BIN runs another build of prof (the tests' sanitized one).
set -u
cd "$(dirname "$0")/.." || exit 1

secs=${1:-3}
data=${PROF_DEMO_DATA:-profiles/demo.data}
workload=tests/workloads/bin/demo
prof=${PROF_DEMO_BIN:-./prof}

for f in "$prof" "$workload"; do
	[ -x "$f" ] || { echo "demo: $f is missing; run 'make demo' (it builds both)" >&2; exit 2; }
done
mkdir -p "$(dirname "$data")"

rule() { printf '\n=== %s\n\n' "$*"; }

rule "prof record -o $data -- $workload $secs 2"
echo "(2 threads for ${secs}s: generate records -> merge sort -> FNV hash -> zlib compress)"
"$prof" record -o "$data" -- "$workload" "$secs" 2
st=$?
if [ $st != 0 ]; then
	echo "demo: prof record failed (exit $st); see the message above" >&2
	exit $st
fi

rule "prof report -i $data   (flat profile, top 25 functions)"
# Header lines start with '#'; then the column titles and 25 rows.
"$prof" report -i "$data" --flat | awk '/^#/ { print; next } n++ < 26'

rule "prof report -i $data --tree --percent-limit 3   (caller-first, first 40 lines)"
"$prof" report -i "$data" --tree --percent-limit 3 | head -n 40

cat <<MSG

=== next

  ./prof report -i $data --tree
        the whole call tree
  ./prof report -i $data --comm demo-worker-1
        one thread only
  ./prof report -i $data --format=folded > demo.folded
        folded stacks for flamegraph.pl or speedscope
  ./prof report -i $data --format=json
        machine-readable (schema prof-report/1)
  ./prof record -- YOUR_COMMAND ARGS
        profile your own program (writes prof.data; then ./prof report)
  ./prof record -p PID -d 10
        attach to a running process for 10 seconds
MSG

#!/bin/bash
# codspeed-crosscheck.sh - recipe for CodSpeed users: is the instruction
# change CodSpeed reports a real slowdown, an artifact, or is a slowdown
# hiding from instruction counts?
#
#   scripts/codspeed-crosscheck.sh [-r BASE_REF | -D BASE_DIR] [-C HEAD_DIR]
#          [-n RUNS] [-B BUILD_CMD] [-b BENCHMARK_URI] [-o OUTDIR]
#          [-S SERVE_CMD -L LOAD_CMD [-d SECS]] -- BENCH_CMD [ARGS]
#
# Run it from the head checkout (a git repository), or name it with -C.
#  1. the base is BASE_REF (default origin/main) checked out into a
#     temporary worktree, or the directory BASE_DIR as it is;
#  2. builds base and head with BUILD_CMD (default: make; -B true to skip),
#     each in its tree: their binaries may have different names and paths,
#     prof joins functions by identity, not by file name;
#  3. runs BENCH_CMD of each build once under valgrind's callgrind with
#     CodSpeed's flags (`prof callgrind run --codspeed`), which gives one
#     part per benchmark (CALLGRIND_DUMP_STATS_AT(uri) in the harness);
#  4. the time side, RUNS runs (default 5; 10 is better) of each build,
#     interleaved base/head so drift hits both alike:
#     - by default `prof record -- BENCH_CMD`: BENCH_CMD must do a FIXED
#       amount of work (fixed iterations), because prof compares absolute
#       time per function;
#     - with -S/-L, production-like load: SERVE_CMD (a long-running server)
#       is started once per build; each run records the server with
#       `prof record -p PID -d SECS` (default 10, the cap) and, a second
#       into the recording, runs LOAD_CMD: a load generator sending a FIXED
#       number of requests at a steady rate.  When it is done the recording
#       is stopped (SIGTERM), so every recording holds all of the load and
#       nothing else of it (a window of fixed length under a fixed rate is
#       not enough: a starved generator catches up in bursts that
#       straddle the window).
#       Both commands run in the build's tree with PROF_SIDE=base|head and
#       PROF_OUT=OUTDIR in the environment (e.g. a port file
#       "$PROF_OUT/$PROF_SIDE.port");
#  5. runs `prof crosscheck` and writes OUTDIR/crosscheck.md (a table for the
#     pull request, with the share of callgrind functions it could join) and
#     OUTDIR/crosscheck.json (rows per benchmark under "benchmarks").
# Exit status: that of prof crosscheck (0 nothing real, 1 a confirmed or
# time-only slowdown, 2 error, also when no function could be joined).
# PROF may point at the prof binary.
set -eu
PROF=${PROF:-prof}
BASE_REF=origin/main BASE_DIR="" HEAD_DIR="" RUNS=5 BUILD=make URI="" OUT=prof-crosscheck
SERVE="" LOAD="" SECS=10
while getopts "r:D:C:n:B:b:o:S:L:d:h" opt; do
	case $opt in
	r) BASE_REF=$OPTARG ;; D) BASE_DIR=$OPTARG ;; C) HEAD_DIR=$OPTARG ;;
	n) RUNS=$OPTARG ;; B) BUILD=$OPTARG ;; b) URI=$OPTARG ;; o) OUT=$OPTARG ;;
	S) SERVE=$OPTARG ;; L) LOAD=$OPTARG ;; d) SECS=$OPTARG ;;
	*) sed -n '2,38p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if [ $# = 0 ]; then
	echo "codspeed-crosscheck: give the benchmark command after -- (see -h)" >&2
	exit 2
fi
if { [ -n "$SERVE" ] && [ -z "$LOAD" ]; } || { [ -z "$SERVE" ] && [ -n "$LOAD" ]; }; then
	echo "codspeed-crosscheck: -S SERVE_CMD and -L LOAD_CMD go together" >&2
	exit 2
fi
HEAD_DIR=$(cd "${HEAD_DIR:-$(git rev-parse --show-toplevel)}" && pwd)
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
export PROF_OUT=$OUT
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	if [ -z "$BASE_DIR_GIVEN" ]; then
		git -C "$HEAD_DIR" worktree remove --force "$BASE_DIR" >/dev/null 2>&1 || true
	fi
}
BASE_DIR_GIVEN=$BASE_DIR
trap cleanup EXIT
if [ -n "$BASE_DIR" ]; then
	BASE_DIR=$(cd "$BASE_DIR" && pwd)
else
	BASE_DIR=$(mktemp -d /tmp/prof-base.XXXXXX)
	git -C "$HEAD_DIR" worktree add --detach "$BASE_DIR" "$BASE_REF" >/dev/null
fi
dir_of() { if [ "$1" = base ]; then echo "$BASE_DIR"; else echo "$HEAD_DIR"; fi; }

for side in base head; do
	dir=$(dir_of $side)
	echo "== build $side ($dir)" >&2
	(cd "$dir" && eval "$BUILD") >&2
	echo "== callgrind $side" >&2
	(cd "$dir" && "$PROF" callgrind run --codspeed -l "$side" -- "$@" >&2 &&
	 cp profiles/$side.callgrind "$OUT/$side.callgrind")
done

declare -A server
if [ -n "$SERVE" ]; then
	for side in base head; do
		(cd "$(dir_of $side)" && PROF_SIDE=$side exec bash -c "exec $SERVE") \
			>"$OUT/$side.server.log" 2>&1 &
		server[$side]=$!
		pids+=($!)
	done
	sleep 1	# let both servers come up
fi
for i in $(seq 1 "$RUNS"); do
	for side in base head; do
		dir=$(dir_of $side)
		echo "== record $side run $i/$RUNS" >&2
		if [ -z "$SERVE" ]; then
			(cd "$dir" && "$PROF" record -q -o "$OUT/$side.$i.data" -- "$@" >/dev/null)
			continue
		fi
		kill -0 "${server[$side]}" || { echo "codspeed-crosscheck: the $side server died" >&2; exit 2; }
		"$PROF" record -q -p "${server[$side]}" -d "$SECS" -o "$OUT/$side.$i.data" &
		rec=$!
		sleep 1	# attached before the first request
		(cd "$dir" && PROF_SIDE=$side exec bash -c "$LOAD") >>"$OUT/$side.load.log" 2>&1 ||
			{ echo "codspeed-crosscheck: the load generator failed" >&2; exit 2; }
		if ! kill -0 $rec 2>/dev/null; then
			echo "codspeed-crosscheck: the load outlasted the $SECS s recording; raise -d" >&2
			exit 2
		fi
		sleep 0.2	# the last replies
		kill -TERM $rec	# all of the load is in: stop early (-d is the cap)
		wait $rec || { echo "codspeed-crosscheck: prof record failed" >&2; exit 2; }
	done
done
args=(--callgrind-base "$OUT/base.callgrind" --callgrind-head "$OUT/head.callgrind"
      --base "$OUT"/base.*.data --head "$OUT"/head.*.data)
[ -n "$URI" ] && args+=(--benchmark "$URI")
"$PROF" crosscheck --format=json "${args[@]}" >"$OUT/crosscheck.json" || true
set +e
"$PROF" crosscheck "${args[@]}" >"$OUT/crosscheck.md"
status=$?
cat "$OUT/crosscheck.md"
exit $status

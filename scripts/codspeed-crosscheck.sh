#!/bin/bash
# codspeed-crosscheck.sh - recipe for CodSpeed users: is the instruction
# change CodSpeed reports a real slowdown, an artifact, or is a slowdown
# hiding from instruction counts?
#
#   scripts/codspeed-crosscheck.sh [-r BASE_REF] [-n RUNS] [-B BUILD_CMD]
#                                  [-b BENCHMARK_URI] [-o OUTDIR] -- BENCH_CMD [ARGS]
#
# Run it from the head checkout (a git repository).  It
#  1. checks BASE_REF (default origin/main) out into a temporary worktree;
#  2. builds base and head with BUILD_CMD (default: make), each in its tree;
#  3. runs BENCH_CMD of each build once under valgrind's callgrind with
#     CodSpeed's flags (`prof callgrind run --codspeed`), which gives one
#     part per benchmark (CALLGRIND_DUMP_STATS_AT(uri) in the harness);
#  4. records RUNS runs (default 5; 10 is better) of each build under load
#     with `prof record`, interleaved base/head so drift hits both alike.
#     BENCH_CMD must do a FIXED amount of work (fixed iterations), because
#     prof compares absolute time per function;
#  5. runs `prof crosscheck` and writes OUTDIR/crosscheck.md (a table for the
#     pull request) and OUTDIR/crosscheck.json.
# Exit status: that of prof crosscheck (0 nothing real, 1 a confirmed or
# time-only slowdown, 2 error).  PROF may point at the prof binary.
set -eu
PROF=${PROF:-prof}
BASE_REF=origin/main RUNS=5 BUILD=make URI="" OUT=prof-crosscheck
while getopts "r:n:B:b:o:h" opt; do
	case $opt in
	r) BASE_REF=$OPTARG ;; n) RUNS=$OPTARG ;; B) BUILD=$OPTARG ;;
	b) URI=$OPTARG ;; o) OUT=$OPTARG ;;
	*) sed -n '2,25p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if [ $# = 0 ]; then
	echo "codspeed-crosscheck: give the benchmark command after -- (see -h)" >&2
	exit 2
fi
HEAD_DIR=$(git rev-parse --show-toplevel)
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
BASE_DIR=$(mktemp -d /tmp/prof-base.XXXXXX)
trap 'git -C "$HEAD_DIR" worktree remove --force "$BASE_DIR" >/dev/null 2>&1 || true' EXIT

git -C "$HEAD_DIR" worktree add --detach "$BASE_DIR" "$BASE_REF" >/dev/null
for side in base head; do
	dir=$HEAD_DIR; [ $side = base ] && dir=$BASE_DIR
	echo "== build $side ($dir)" >&2
	(cd "$dir" && eval "$BUILD") >&2
	echo "== callgrind $side" >&2
	(cd "$dir" && "$PROF" callgrind run --codspeed -l "$side" -- "$@" >&2 &&
	 cp profiles/$side.callgrind "$OUT/$side.callgrind")
done
for i in $(seq 1 "$RUNS"); do
	for side in base head; do
		dir=$HEAD_DIR; [ $side = base ] && dir=$BASE_DIR
		echo "== record $side run $i/$RUNS" >&2
		(cd "$dir" && "$PROF" record -q -o "$OUT/$side.$i.data" -- "$@" >/dev/null)
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

#!/bin/bash
# run-all.sh - `make bench`: every side-by-side benchmark, one table.
# Environment: REPEAT (default 5), SECS per benchmark (see each script).
set -u
dir=$(cd "$(dirname "$0")" && pwd)
. "$dir/lib.sh"
export BENCH_TMP REPEAT
echo "prof vs perf on $(uname -r), $(nproc) CPUs, $(date -u +%F)"
header
for b in overhead size-and-report lost switch scaling attach system-wide icount; do
	[ -x "$dir/$b.sh" ] && "$dir/$b.sh"
done
rm -rf "$BENCH_TMP"

#!/bin/bash
# check-under-load.sh - `make check` while CPU-burning processes run beside
# it (two by default), as on a shared, noisy CI machine: a test that
# passes only on an idle machine fails here.  The burners are busy loops
# at normal priority; they are killed when make check ends, and the
# script exits with make check's status.
#
#   scripts/check-under-load.sh [MAKE ARGS...]     e.g. PROVE_FLAGS=-v
#   BURNERS=4 scripts/check-under-load.sh          more load
#   CHECK_TARGET=check-run ...                     tests only (already built)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
burners=${BURNERS:-2}
pids=()

stop_burners() {
	[ ${#pids[@]} -gt 0 ] || return 0
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pids=()
}
trap stop_burners EXIT
trap 'stop_burners; exit 130' INT TERM

for _ in $(seq "$burners"); do
	( while :; do :; done ) &
	pids+=($!)
done
echo "check-under-load: $burners CPU burners running (pids ${pids[*]})"
make -C "$top" "${CHECK_TARGET:-check}" "$@"
status=$?
stop_burners
echo "check-under-load: make ${CHECK_TARGET:-check} exited $status"
exit $status

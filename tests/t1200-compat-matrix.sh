#!/bin/bash
# t1200-compat-matrix: prof on every common kind of binary.  One small
# program with a known 60:30:10 self split (tests/workloads/split.c and
# tests/workloads/compat/) is built per kind: C linked by GNU ld, gold,
# lld and mold, clang (DWARF 5, with an inlined function), C++ from g++ and
# clang++ with lld, Rust with rustc's default rust-lld, the system linker and
# v0 mangling, Go, Node with --perf-basic-prof, a stripped binary, and a
# process in another mount namespace.  Each kind must give: complete
# stacks (reaching a thread root), the hot functions named (demangled) in
# the known split, no raw mangled name among the rows, and file:line for
# the hottest function (tests/workloads/compat/check.py).  A kind whose
# toolchain is missing is a SKIP with the reason.  scripts/compat.sh runs
# the same kinds side by side with perf.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
COMPAT="$TOP/tests/workloads/compat"
CHECK="python3 $COMPAT/check.py"
SECS=${COMPAT_SECONDS:-1}
MIN_COMPLETE=97		# the target is 99: a few samples of exec and the loader's startup
TOL=12			# points of the split; a loaded 2-vCPU VM gives ~150 samples a run

# kind NAME MIN_COMPLETE CMD... -- NAME=TRUTH...: record CMD and check it.
kind() {
	local name=$1 min=$2
	shift 2
	local cmd=() args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	args=("$@")
	test_expect_success "$name: complete stacks, named split, file:line" "
		'$PROF' record -q -o $name.data -- ${cmd[*]} >/dev/null &&
		'$PROF' report -i $name.data --format=json >$name.json &&
		$CHECK kind $name.json $min $TOL $(printf "'%s' " "${args[@]}")
	"
}

. "$COMPAT/kinds.sh"

test_done

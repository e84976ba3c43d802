#!/bin/bash
# t1200-compat-matrix: prof on every common kind of binary.  One small
# program with a known 60:30:10 self split (tests/workloads/split.c and
# tests/workloads/compat/) is built per kind: C linked by GNU ld, gold,
# lld and mold, clang (DWARF 5, with an inlined function), C++ from g++ and
# clang++ with lld, Rust with rustc's default rust-lld, the system linker and
# v0 mangling, Go (with DWARF, and built -ldflags='-s -w' so that only
# .gopclntab is left, and a program busy on its threads' g0 stacks), Node
# with --perf-basic-prof, a stripped binary, and a process in another mount
# namespace.  Each kind must give: complete
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
# Points of the split.  Every kind runs for SECS of CPU time (not wall
# time: a 1 s wall-clock Go run got 130 samples at load 10 and failed), so
# ~1000 samples, ~950 of them in the named functions: a share 12 points
# off its truth has a chance of `bounds.py share 950 60 12` = 3.7e-14
# (30%: 1.9e-15, 10% and 90%: 6e-28), under 1e-12 for the 16 kinds.
TOL=12

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

# Go, with DWARF and from .gopclntab alone: the lines of the hottest
# function's sampled pcs and of the code inlined into main.main.func1
# are the ones `go tool addr2line` gives for those pcs, main.gamma is an
# inline frame directly inside main.main.func1, and its call site (the
# caller's line) from .gopclntab is the one DWARF gives.  main.alpha and
# main.beta have no frame of their own: without CFI, frame pointers would
# skip main.main.func1, Go's frame sizes (pcsp) keep it.
for k in go go-stripped; do
	[ -f $k.data ] || continue
	bin=./go-split && [ $k = go ] || bin=./go-stripped
	test_expect_success "$k: file:line of sampled pcs is go tool addr2line's; main.gamma inlined" "
		'$PROF' annotate -i $k.data main.alpha --stdio --no-source >$k.alpha.ann &&
		$CHECK addr2line $k.alpha.ann \$bin &&
		'$PROF' annotate -i $k.data main.main.func1 --stdio --no-source >$k.func1.ann &&
		$CHECK addr2line $k.func1.ann \$bin &&
		'$PROF' report -i $k.data --format=folded >$k.folded &&
		$CHECK inline $k.folded $k.func1.ann $k.json main.main.func1 main.gamma >$k.inline &&
		cat $k.inline
	"
	test_expect_success "$k: the frameless main.alpha and main.beta keep their caller" "
		$CHECK caller $k.folded main.main.func1 main.alpha main.beta
	"
done
# Go's g0 stacks: runtime.systemstack, mcall and morestack switch SP to the
# thread's g0 stack, and their CFI then names a stale word of it as the
# return address.  The walk must end at them, as Go's traceback does.
for k in go-g0 go-g0-stripped; do
	[ -f $k.data ] || continue
	test_expect_success "$k: stacks through a Go stack switch end there" "
		'$PROF' report -i $k.data --format=folded >$k.folded &&
		$CHECK switched $k.folded 15
	"
done
if [ -f go.inline ] && [ -f go-stripped.inline ]; then
	test_expect_success "go-stripped: main.gamma's call site is DWARF's" "
		sed -n 's/.*call site //p' go.inline >want && sed -n 's/.*call site //p' go-stripped.inline >got &&
		cat want got && test -s want && cmp want got
	"
fi

test_done

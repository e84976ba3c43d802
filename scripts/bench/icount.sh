#!/bin/bash
# icount.sh - instruction-count regression check of the hot paths
# (`make bench-icount`; also the last rows of `make bench`).  Each driver
# operation in icount.c runs under callgrind twice, with N1 and N2
# operations; (Ir(N2) - Ir(N1)) / (N2 - N1) is the cost of one operation
# without start-up.  Instruction counts are deterministic on one machine
# (same compiler, libc, libdw), so this is not a timing assertion: a
# change of more than TOL percent (default 3) against
# scripts/bench/icount-baseline.txt fails (exit 1).
#   icount.sh            compare with the baseline
#   icount.sh --update   measure and rewrite the baseline
# Needs a plain build (no SANITIZE): sanitizers change every count.
. "$(dirname "$0")/lib.sh"
bench_build
TOL=${TOL:-3}
BASE="$TOP/scripts/bench/icount-baseline.txt"
ICOUNT="$BENCH_TMP/icount"
libs="$(pkg-config --libs libdw libelf libunwind-generic zlib) -ldl -lpthread -lm"
pkg-config --exists libzstd && libs="$libs $(pkg-config --libs libzstd)"
# the optional libraries libprof.a was built with (the Makefile's HAVE_*)
undef=$(nm "$TOP/build/libprof.a" 2>/dev/null | awk '$1 == "U" {print $2}')
grep -qx cplus_demangle <<<"$undef" && libs="$libs -liberty"
grep -qx cs_open <<<"$undef" && libs="$libs $(pkg-config --libs capstone)"
gcc -O2 -g -I"$TOP/include" -I"$TOP/tests/unit" "$TOP/scripts/bench/icount.c" \
	"$TOP/build/libprof.a" $libs -o "$ICOUNT" || exit 2
command -v valgrind >/dev/null || { echo "icount.sh: valgrind not installed" >&2; exit 2; }

ir() {	# driver args -> total Ir
	valgrind --tool=callgrind --callgrind-out-file="$BENCH_TMP/cg.out" "$ICOUNT" "$@" \
		2>&1 >/dev/null | awk '/Collected :/ {print $NF}'
}
per_op() {	# op n1 n2 [arg1 arg2] -> Ir per operation
	local a b
	a=$(ir "$1" "${4:-$2}"); b=$(ir "$1" "${5:-$3}")
	awk -v a="$a" -v b="$b" -v n=$(($3 - $2)) 'BEGIN {printf "%.0f", (b - a) / n}'
}
"$GEN" "$BENCH_TMP/ic1.data" 10000 1000 && "$GEN" "$BENCH_TMP/ic2.data" 110000 1000 || exit 2

declare -A now
now[unwind]=$(per_op unwind 10 210)
now[unwind-lu]=$(per_op unwind-lu 10 210)
now[symbolize]=$(per_op symbolize 10 110)
now[symhit]=$(per_op symhit 100 2100)
now[cgline]=$(per_op cgline 1000 21000)
now[import]=$(per_op import 10000 110000 "$BENCH_TMP/ic1.data" "$BENCH_TMP/ic2.data")
ops="unwind unwind-lu symbolize symhit cgline import"

if [ "${1:-}" = --update ]; then
	{
		echo "# Ir per operation (icount.sh --update); machine: $(uname -r), $(gcc -dumpfullversion), libdw $(pkg-config --modversion libdw)"
		for op in $ops; do echo "$op ${now[$op]}"; done
	} >"$BASE"
	cat "$BASE"
	exit 0
fi
fail=0
for op in $ops; do
	b=$(awk -v op="$op" '$1 == op {print $2}' "$BASE" 2>/dev/null)
	if [ -z "$b" ]; then
		row "icount $op" "Ir / op (no baseline)" "-" "${now[$op]}" "-" "info"
		continue
	fi
	# Also 16 Ir of slack: a cache hit's hash probes depend on where the
	# heap put the ELF handle, which the checkout's path length moves
	# (symhit: 238 Ir in one worktree, 251 in another, same code).
	ok=$(verdict "${now[$op]} <= $b * (1 + $TOL / 100) || ${now[$op]} <= $b + 16")
	[ "$ok" = yes ] || fail=1
	row "icount $op" "Ir / op vs baseline" "$b" "${now[$op]}" "$(ratio "${now[$op]}" "$b")" "$ok"
done
exit $fail

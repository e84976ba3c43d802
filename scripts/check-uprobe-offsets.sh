#!/bin/bash
# check-uprobe-offsets.sh - for every exported function of each LIB,
# checks the offset past its entry where prof would put a heap probe
# (prof_uprobe_fast_offset, src/perf/uprobe.c): a moved probe must be on
# an instruction boundary (objdump -d) and on an instruction the kernel
# emulates (jcc, jmp, call, push).  A wrong length there would put the
# int3 inside an instruction of the profiled program.  Needs a built
# tree (build/libprof.a) and binutils.
#   scripts/check-uprobe-offsets.sh [LIB...]   (default: libc, jemalloc, tcmalloc, libstdc++, libcrypto)
set -e
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/prof-offsets.XXXXXX)
trap 'rm -rf "$T"' EXIT
libs=$(pkg-config --libs libdw libelf libunwind-generic zlib 2>/dev/null)
pkg-config --exists libzstd && libs="$libs $(pkg-config --libs libzstd)"
gcc -O2 -I"$TOP/include" "$TOP/scripts/uprobe/offsets.c" "$TOP/build/libprof.a" $libs \
	-liberty -lcapstone -lbpf -lpthread -lm -o "$T/offsets" 2>/dev/null ||
	gcc -O2 -I"$TOP/include" "$TOP/scripts/uprobe/offsets.c" "$TOP/build/libprof.a" $libs -lpthread -lm -o "$T/offsets"
[ $# -gt 0 ] || set -- /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
	/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
	/usr/lib/x86_64-linux-gnu/libcrypto.so.3
status=0
for lib in "$@"; do
	[ -r "$lib" ] || { echo "$lib: not here"; continue; }
	readelf -Ws --dyn-syms "$lib" | awk '$4 == "FUNC" && $7 != "UND" && $3 > 0 {n = $8; sub(/@.*/, "", n); print n, $2}' |
		sort -u -k1,1 >"$T/syms"
	"$T/offsets" "$lib" $(cut -d' ' -f1 "$T/syms") >"$T/offs"
	objdump -d --no-show-raw-insn "$lib" | awk '/^ +[0-9a-f]+:/ {a = $1; sub(":", "", a); $1 = ""; print a, $0}' >"$T/insns"
	moved=0 bad=0
	while read -r name plus; do
		o=${plus#+}
		[ "$o" = 0 ] && continue
		moved=$((moved + 1))
		base=$(awk -v f="$name" '$1 == f {print $2; exit}' "$T/syms")
		addr=$(printf "%x" $((0x$base + o)))
		line=$(grep -m1 "^0*$addr " "$T/insns" || true)
		if [ -z "$line" ]; then
			echo "BAD: $lib $name +$o is inside an instruction"; bad=$((bad + 1))
		elif ! echo "$line" | grep -qE " (j[a-z]+|push|call) "; then
			echo "BAD: $lib $name +$o is not emulated: $line"; bad=$((bad + 1))
		fi
	done <"$T/offs"
	echo "$lib: $(wc -l <"$T/syms") functions, $moved probes moved, $bad bad"
	[ $bad = 0 ] || status=1
done
exit $status

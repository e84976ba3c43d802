#!/bin/bash
# t3100-callgrind-parity: every file:function row of `prof callgrind
# annotate` equals callgrind_annotate 3.19's self costs, number for number,
# on real profiles: the stored fixtures (Lua, stock per-dump files with
# instr+line positions and jumps, a valgrind-codspeed combined file split
# part by part) and fresh ones made here with valgrind (a C harness in
# stock and CodSpeed-flag modes, and CPython running a small script).
. "$(dirname "$0")/lib/test-lib.sh"

DATA="$TOP/tests/data/callgrind"
CMP="$DATA/compare-annotate.pl"
command -v callgrind_annotate >/dev/null || skip_all "callgrind_annotate is not installed (apt-get install valgrind)"
perl -MJSON::PP -e 1 2>/dev/null || skip_all "perl JSON::PP is missing"

# parity FILE [PART]: FILE holds one part (PART, default: its part: line).
parity() {
	part=${2:-$(sed -n 's/^part: *//p' "$1" | head -n 1)}
	part=${part:-1}
	"$PROF" callgrind annotate --compat --format=json "$1" >prof.json &&
	callgrind_annotate --threshold=100 --show-percs=no --auto=no "$1" >ann.txt 2>ann.err &&
	perl "$CMP" prof.json "$part" ann.txt
}

# split_parts FILE PREFIX: writes PREFIX.N per "part: N" (file header copied
# into each), for callgrind_annotate which sums all parts of a combined file.
split_parts() {
	awk -v pre="$2" '
		/^part:/ { n = $2; out = pre "." n; printf "%s", hdr > out }
		!n { hdr = hdr $0 "\n"; next }
		{ print > out }' "$1"
}

# parity_combined FILE: prof reads the combined file itself; each part is
# checked against callgrind_annotate on that part alone.
parity_combined() {
	"$PROF" callgrind annotate --compat --format=json "$1" >all.json || return 1
	split_parts "$1" split
	n=0
	for f in split.*; do
		p=${f#split.}
		callgrind_annotate --threshold=100 --show-percs=no --auto=no "$f" >ann.$p 2>/dev/null &&
		perl "$CMP" all.json "$p" ann.$p || return 1
		n=$((n + 1))
	done
	echo "$n parts checked"
	test $n -ge 2
}

test_expect_success 'lua fixture (585 functions, fi=/fe= inlined code)' '
	parity "$DATA/lua-stock.callgrind"
'

for n in 1 2 3; do
	test_expect_success "stock per-dump file .$n (instr+line positions, jumps, calls=0)" "
		parity '$DATA/harness-stock-instr-jumps.callgrind.$n'
	"
done
test_expect_success 'stock final dump file (empty part)' '
	parity "$DATA/harness-stock-instr-jumps.callgrind"
'

test_expect_success 'valgrind-codspeed combined file, part by part' '
	parity_combined "$DATA/harness-codspeed.callgrind" &&
	grep -q "rows 4, mismatches 0" <(perl "$CMP" all.json 2 ann.2)
'

test_expect_success 'the four per-dump files read together keep four parts' '
	"$PROF" callgrind annotate --format=json "$DATA"/harness-stock-instr-jumps.callgrind* >four.json &&
	test "$(grep -o "\"part\":[0-9]*" four.json | sort -u | wc -l)" = 4
'

# --- fresh profiles from valgrind on this machine ------------------------
command -v valgrind >/dev/null || { test_skip 'fresh profiles' 'valgrind missing'; test_done; }
if [ -r /usr/include/valgrind/callgrind.h ] && cc -O2 -g -o harness "$DATA/harness.c" 2>cc.err; then
	test_expect_success 'fresh stock profile with --dump-instr=yes --collect-jumps=yes' '
		valgrind -q --tool=callgrind --dump-instr=yes --collect-jumps=yes \
			--callgrind-out-file=h.out ./harness >/dev/null &&
		for f in h.out h.out.*; do parity "$f" || exit 1; done
	'
	test_expect_success 'fresh stock profile with instr-only positions (--dump-line=no)' '
		valgrind -q --tool=callgrind --dump-instr=yes --dump-line=no \
			--callgrind-out-file=i.out ./harness >/dev/null &&
		grep -q "^positions: instr$" i.out.1 &&
		for f in i.out i.out.*; do parity "$f" || exit 1; done
	'
	test_expect_success 'fresh profile with the CodSpeed runner flags stock valgrind takes' '
		valgrind -q --trace-children=yes --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 \
			--LL=8388608,16,64 --instr-atstart=no --collect-systime=nsec \
			--read-inline-info=yes --tool=callgrind --compress-strings=no \
			--combine-dumps=yes --callgrind-out-file=cs.%p.out ./harness >/dev/null &&
		parity_combined cs.*.out
	'
else
	test_skip 'fresh harness profiles' "cannot build harness.c: $(head -c 200 cc.err 2>/dev/null)"
fi

PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -n "$PY" ] && [ -x "$PY" ]; then
	test_expect_success 'CPython profile (large: thousands of functions)' '
		valgrind -q --tool=callgrind --callgrind-out-file=py.out "$PY" -c "
import json
d = [{\"a\": i, \"b\": str(i)} for i in range(2000)]
json.loads(json.dumps(d))
sorted(range(3000), key=lambda x: -x)
" &&
		parity py.out >py.res; cat py.res;
		rows=$(sed -n "s/^rows \([0-9]*\),.*/\1/p" py.res) &&
		test "$rows" -gt 1000 && grep -q "mismatches 0" py.res
	'
else
	test_skip 'CPython profile' 'python3 not found'
fi

test_done

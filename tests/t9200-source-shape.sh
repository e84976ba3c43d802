#!/bin/bash
# t9200-source-shape: the tree keeps the shape docs/hacking.md describes.
# From nm over the built objects (scripts/check-objects.py): every call
# between src/ folders points down the documented layer list, no folders
# form a cycle, and no global function goes uncalled.  The planted cases
# build a tiny tree of objects with one violation each, so the checks are
# shown to fail where they should.
. "$(dirname "$0")/lib/test-lib.sh"
command -v nm >/dev/null || skip_all "nm (binutils) is not installed"
CHECK="$TOP/scripts/check-objects.py"

test_expect_success 'calls between folders follow the layer list of docs/hacking.md' '
	python3 "$CHECK" layers "$BUILD_DIR" "$TOP/docs/hacking.md" >out 2>&1 || { cat out; return 1; }
'

# The fuzz targets and the instruction-count driver link the library too:
# their calls count (compiled here, since make check may build no fuzzer).
test_expect_success 'every global function is called from another file' '
	mkdir -p callers &&
	for f in "$TOP"/tests/fuzz/fuzz_*.c "$TOP"/scripts/bench/icount.c; do
		${CC:-cc} -std=gnu11 -D_GNU_SOURCE -I"$TOP/include" -I"$BUILD_DIR/gen" \
			-I"$TOP/tests/unit" $(pkg-config --cflags libdw 2>/dev/null) \
			-c -o "callers/$(basename "$f" .c).o" "$f" || return 1
	done &&
	python3 "$CHECK" dead "$BUILD_DIR" callers/*.o >out 2>&1 || { cat out; return 1; }
'

# A tree of three folders: low (bottom), mid, high (top).
plant() {	# folder file C-source
	mkdir -p planted/src/$1 && printf "%s\n" "$3" >planted/$1-$2.c &&
	${CC:-cc} -c -o planted/src/$1/$2.o planted/$1-$2.c
}
layers_md() {	# lines of the layer list
	{ echo "<!-- layers: bottom to top -->"; echo '```'; printf "%s\n" "$@"; echo '```'; } >layers.md
}
# check_fails OUT ARGS...: check-objects.py ARGS exits 1 (a problem found),
# its report in OUT.
check_fails() {
	local out=$1 st
	shift
	python3 "$CHECK" "$@" >"$out" 2>&1
	st=$?
	[ "$st" = 1 ] || { echo "check-objects.py $* exited $st, want 1:"; cat "$out"; return 1; }
}

test_expect_success 'planted: a clean tree passes' '
	rm -rf planted && layers_md "bottom  low" "middle  mid" "top  high" &&
	plant low a "int low_f(void) { return 1; }" &&
	plant mid b "int low_f(void); int mid_f(void) { return low_f(); }" &&
	plant high c "int mid_f(void); int main(void) { return mid_f(); }" &&
	python3 "$CHECK" layers planted layers.md
'

test_expect_success 'planted: a call up the layers fails, naming both files' '
	rm -rf planted && layers_md "bottom  low" "middle  mid" "top  high" &&
	plant low a "int high_f(void); int low_f(void) { return high_f(); }" &&
	plant mid b "int low_f(void); int mid_f(void) { return low_f(); }" &&
	plant high c "int mid_f(void); int high_f(void) { return 2; } int main(void) { return mid_f(); }" &&
	check_fails out layers planted layers.md >out &&
	check_contains out "^low -> high points up the layers: src/low/a.o calls high_f of src/high/c.o"
'

test_expect_success 'planted: a cycle between folders fails' '
	rm -rf planted && layers_md "bottom  low" "middle  mid" "top  high" &&
	plant low a "int mid_f(void); int low_f(void) { return mid_f(); }" &&
	plant mid b "int low_f(void); int mid_f(void) { return low_f(); }" &&
	plant high c "int main(void) { return 0; }" &&
	check_fails out layers planted layers.md >out &&
	check_contains out "^cycle between folders: low <-> mid"
'

test_expect_success 'planted: a folder missing from the list fails' '
	rm -rf planted && layers_md "bottom  low" "top  high" &&
	plant low a "int low_f(void) { return 1; }" &&
	plant mid b "int low_f(void); int mid_f(void) { return low_f(); }" &&
	plant high c "int mid_f(void); int main(void) { return mid_f(); }" &&
	check_fails out layers planted layers.md >out &&
	check_contains out "^src/mid/ is not in the layer list"
'

test_expect_success 'planted: a function nothing else calls fails the dead-code check' '
	rm -rf planted &&
	plant low a "int low_f(void) { return 1; } int low_unused(int x) { return x + 1; }" &&
	plant high c "int low_f(void); int main(void) { return low_f(); }" &&
	check_fails out dead planted >out &&
	check_contains out "^src/low/a.o: low_unused is called from no other file" &&
	test "$(wc -l <out)" = 1
'

# An object left in the build directory by a source since renamed or removed
# (its .d names a source that is gone) is not part of the program.
test_expect_success 'planted: an object whose source is gone is not judged' '
	rm -rf planted && layers_md "bottom  low" "top  high" &&
	plant low a "int high_f(void); int low_f(void) { return high_f(); }" &&
	plant low b "int low_g(void) { return 1; }" &&
	plant high c "int low_g(void); int high_f(void) { return 2; } int main(void) { return low_g(); }" &&
	check_fails out layers planted layers.md &&
	echo "planted/src/low/a.o: src/low/a.c" >planted/src/low/a.d &&
	python3 "$CHECK" layers planted layers.md &&
	mkdir -p src/low && touch src/low/a.c &&
	check_fails out layers planted layers.md
'

test_done

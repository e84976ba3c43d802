#!/bin/bash
# t9200-source-shape: the tree keeps the shape docs/hacking.md describes.
# From nm over the built objects (scripts/check-objects.py): every call
# between src/ folders points down the documented layer list, no folders
# form a cycle, and no global function goes uncalled; from the source,
# every #include points down the same list; and every global function's
# name begins with a prefix of its folder and is declared in a header of
# that folder.  The planted cases
# build a tiny tree of objects with one violation each, so the checks are
# shown to fail where they should.
. "$(dirname "$0")/lib/test-lib.sh"
command -v nm >/dev/null || skip_all "nm (binutils) is not installed"
CHECK="$TOP/scripts/check-objects.py"

test_expect_success 'calls between folders follow the layer list of docs/hacking.md' '
	python3 "$CHECK" layers "$BUILD_DIR" "$TOP/docs/hacking.md" >out 2>&1 || { cat out; return 1; }
'

test_expect_success 'includes between folders follow the layer list of docs/hacking.md' '
	python3 "$CHECK" includes "$TOP" "$TOP/docs/hacking.md" >out 2>&1 || { cat out; return 1; }
'

test_expect_success 'every global function begins with a prefix of its folder' '
	python3 "$CHECK" prefixes "$BUILD_DIR" "$TOP/docs/hacking.md" >out 2>&1 || { cat out; return 1; }
'

test_expect_success 'every function is declared in a header of the folder that defines it' '
	python3 "$CHECK" decls "$TOP" "$BUILD_DIR" "$TOP/docs/hacking.md" >out 2>&1 || { cat out; return 1; }
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

test_expect_success 'planted: a folder table in another order than the layers fails' '
	rm -rf planted && layers_md "bottom  low" "middle  mid" "top  high" &&
	printf "%s\n" "| folder | what |" "|---|---|" "| \`src/low/\` | a |" "| \`src/high/\` | c |" \
		"| \`src/mid/\` | b |" >>layers.md &&
	plant low a "int low_f(void) { return 1; }" &&
	plant mid b "int low_f(void); int mid_f(void) { return low_f(); }" &&
	plant high c "int mid_f(void); int main(void) { return mid_f(); }" &&
	check_fails out layers planted layers.md &&
	check_contains out "^the folder table of layers.md lists low high mid; the layer list, bottom to top, is low mid high" &&
	sed -i "s/src.high/src\/xx/; s/src.mid/src\/high/; s/src.xx/src\/mid/" layers.md &&
	python3 "$CHECK" layers planted layers.md
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

prefixes_md() {	# the three folders: low has no prefix, mid m_ and t_, high t_high_
	printf "%s\n" "<!-- prefixes: folder, prefixes -->" "\`\`\`" "low  -" "mid  m_ t_" "high  t_high_" "\`\`\`" >prefixes.md
}

test_expect_success 'planted: names with their folder prefixes pass' '
	rm -rf planted && prefixes_md &&
	plant low a "int low_f(void) { return 1; }" &&
	plant mid b "int m_f(void) { return 1; } int t_g(void) { return 2; }" &&
	plant high c "int t_high_f(void) { return 3; } static int local(void) { return 4; } int t_high_g(void) { return local(); }" &&
	python3 "$CHECK" prefixes planted prefixes.md
'

test_expect_success 'planted: a name with another folder prefix or none fails' '
	rm -rf planted && prefixes_md &&
	plant low a "int m_low(void) { return 1; }" &&
	plant mid b "int t_high_in_mid(void) { return 1; } int bare(void) { return 2; }" &&
	plant high c "int t_high_f(void) { return 3; }" &&
	check_fails out prefixes planted prefixes.md &&
	check_contains out "^src/low/a.o: m_low begins with a prefix of mid/, not low/.s" &&
	check_contains out "^src/mid/b.o: t_high_in_mid begins with a prefix of high/, not mid/.s" &&
	check_contains out "^src/mid/b.o: bare begins with no folder.s prefix, not mid/.s" &&
	test "$(wc -l <out)" = 3
'

# A source tree of the same three folders: plant_src FILE LINES... writes
# planted/FILE (src/F/x.c or include/prof/x.h).
plant_src() {
	local f=planted/$1
	shift
	mkdir -p "$(dirname "$f")" && printf "%s\n" "$@" >"$f"
}
plant_headers() {	# low.h, mid.h (includes low.h), high.h; extra.h belongs to mid
	rm -rf planted && layers_md "bottom  low" "middle  mid" "top  high" &&
	printf "%s\n" "<!-- headers: folder, headers -->" "\`\`\`" "mid  extra.h" "\`\`\`" >>layers.md &&
	plant_src include/prof/low.h "int low_f(void);" &&
	plant_src include/prof/mid.h "#include \"prof/low.h\"" "int mid_f(void);" &&
	plant_src include/prof/extra.h "#include \"prof/mid.h\"" &&
	plant_src include/prof/high.h "#include \"prof/extra.h\"" &&
	plant_src src/low/a.c "#include \"prof/low.h\"" "#include \"a-priv.h\"" "#include <stdio.h>" &&
	plant_src src/low/a-priv.h "int low_g(void);" &&
	plant_src src/mid/b.c "#include \"prof/low.h\"" "#include \"prof/extra.h\"" &&
	plant_src src/high/c.c "#include \"prof/high.h\"" "#include \"prof/mid.h\"" "#include \"generated.h\""
}

test_expect_success 'planted: includes down the layers pass' '
	plant_headers &&
	python3 "$CHECK" includes planted layers.md
'

# includes_fail WANT FILE LINES...: with FILE planted as LINES, the includes
# check fails, its report (in out) matching WANT.
includes_fail() {
	local want=$1
	shift
	plant_src "$@" && check_fails out includes planted layers.md && check_contains out "$want"
}

test_expect_success 'planted: a .c file including a header above it fails, naming file, line and layers' '
	plant_headers &&
	includes_fail "^src/low/a.c:3: includes prof/extra.h: low -> mid points up the layers" \
		src/low/a.c "#include \"prof/low.h\"" "" "#include \"prof/extra.h\"" &&
	test "$(wc -l <out)" = 1
'

test_expect_success 'planted: a header including a header above it fails' '
	plant_headers &&
	includes_fail "^include/prof/low.h:1: includes prof/high.h: low -> high points up the layers" \
		include/prof/low.h "#include \"prof/high.h\""
'

test_expect_success 'planted: a private header of a folder above fails' '
	plant_headers &&
	plant_src src/high/c-priv.h "int high_g(void);" &&
	includes_fail "^src/mid/b.c:1: includes src/high/c-priv.h: mid -> high points up the layers" \
		src/mid/b.c "#include \"../high/c-priv.h\""
'

test_expect_success 'planted: a header of no folder fails' '
	plant_headers &&
	includes_fail "^include/prof/stray.h belongs to no folder of the layer list" \
		include/prof/stray.h "int stray_f(void);"
'

test_expect_success 'planted: a header declaring a function of another folder fails' '
	rm -rf planted && layers_md "bottom  low" "middle  mid" "top  high" &&
	plant low a "int low_f(void) { return 1; }" &&
	plant mid b "int low_f(void); int mid_f(void) { return low_f(); }" &&
	plant_src include/prof/low.h "int low_f(void);" "static inline int low_g(void)" "{" "	return mid_f();" "}" &&
	plant_src include/prof/mid.h "#include \"prof/low.h\"" "int mid_f(void);" &&
	python3 "$CHECK" decls planted planted layers.md &&
	plant_src include/prof/high.h "/* mid_f(void) */" "const char *mid_f(void);" &&
	check_fails out decls planted planted layers.md &&
	check_contains out "^include/prof/high.h:2: declares mid_f, defined in src/mid/" &&
	test "$(wc -l <out)" = 1
'

test_done

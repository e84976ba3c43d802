#!/bin/bash
# t3101-callgrind-cli: the `prof callgrind` command line: annotate views
# (JSON schema, part/benchmark selection, --show, --tree, --inclusive,
# --auto), compressed input, bad input, diff and run.
. "$(dirname "$0")/lib/test-lib.sh"

DATA="$TOP/tests/data/callgrind"
CS="$DATA/harness-codspeed.callgrind"
LUA="$DATA/lua-stock.callgrind"

test_expect_success 'help goes to stdout, exit 0' '
	"$PROF" callgrind --help >out &&
	check_contains out "prof callgrind annotate" &&
	"$PROF" callgrind annotate --help >out && check_contains out "usage:"
'
test_expect_failure_exit 'unknown subcommand is a usage error' 2 '"$PROF" callgrind frob'
test_expect_failure_exit 'unknown option is a usage error' 2 '"$PROF" callgrind annotate --frob "$CS"'

test_expect_success 'json has parts, trigger, events, totals, functions with self/inclusive' '
	"$PROF" callgrind annotate --format=json "$CS" >cs.json &&
	python3 - cs.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	parts = d["parts"]
	assert [p["part"] for p in parts] == [1, 2, 3, 4], parts
	assert parts[1]["trigger"] == "harness.c::bench_fib"
	assert parts[3]["trigger"] == "Program termination"
	p = parts[1]
	assert p["events"][:3] == ["Ir", "Dr", "Dw"] and "sysCpuTime" in p["events"]
	assert p["totals"]["Ir"] == 579911
	fns = {f["function"]: f for f in p["functions"]}
	for f in p["functions"]:
	    for k in ("file", "function", "object", "self", "inclusive"):
	        assert k in f, k
	assert fns["fib'"'"'2"]["self"]["Ir"] == 579818
	assert fns["fib"]["inclusive"]["Ir"] == 579899, fns["fib"]
	assert fns["run"]["inclusive"]["Ir"] == 579911
	assert fns["fib"]["object"] == "/src/harness"
	assert parts[0]["functions"] == []
	print("ok")
	EOF
'

test_expect_success '--benchmark and --part select one part' '
	"$PROF" callgrind annotate --benchmark harness.c::bench_words "$CS" >w.txt &&
	check_contains w.txt "count_words.constprop.0" &&
	check_not_contains w.txt "fib" &&
	"$PROF" callgrind annotate --part 2 --format=json "$CS" >p2.json &&
	check_contains p2.json "\"part\":2" && check_not_contains p2.json "\"part\":3"
'
test_expect_failure_exit 'unknown benchmark is one error line, exit 2' 2 '
	"$PROF" callgrind annotate --benchmark nope "$CS" 2>err; s=$?; cat err; test $(wc -l <err) = 1 && exit $s
'
test_expect_failure_exit 'unknown event in --show is one error line, exit 2' 2 '
	"$PROF" callgrind annotate --show=Ir,Bogus "$CS" 2>err; s=$?; cat err
	grep -q "unknown event .Bogus." err && test $(wc -l <err) = 1 && exit $s
'

test_expect_success 'text: header with events and totals, rows sorted' '
	"$PROF" callgrind annotate --threshold=100 "$LUA" >lua.txt &&
	check_contains lua.txt "Events recorded:  Ir" &&
	check_contains lua.txt "127,310,591 (100.0%)  PROGRAM TOTALS" &&
	sed -n "/file:function/,\$p" lua.txt | sed -n "3p" | grep -q "lapi.c:lua_geti"
'

test_expect_success '--tree=both shows callers (<) and callees (>)' '
	"$PROF" callgrind annotate --tree=both --threshold=100 --part 2 "$CS" >tree.txt &&
	grep -q " <   /src/harness.c:fib " tree.txt &&
	grep -q " >   /src/harness.c:fib'"'"'2 " tree.txt &&
	grep -q "(28,645x)" tree.txt
'

test_expect_success '--inclusive sorts by inclusive cost' '
	"$PROF" callgrind annotate --inclusive --threshold=100 --part 2 --show=Ir "$CS" >inc.txt &&
	sed -n "/file:function/,\$p" inc.txt | sed -n "3p" | grep -q "579,911.*:run "
'

test_expect_success '--auto annotates source lines where the source exists' '
	mkdir -p src && cp "$DATA/harness.c" src/harness.c &&
	sed "s|/src/|$TRASH/src/|g" "$CS" >local.callgrind &&
	"$PROF" callgrind annotate --auto --part 2 --show=Ir local.callgrind >auto.txt &&
	check_contains auto.txt "Auto-annotated source: src/harness.c" &&
	grep -q "358,\?[0-9]*.*return n < 2" auto.txt || grep -q "return n < 2" auto.txt
'

test_expect_success 'gzip and zstd input give the same result' '
	"$PROF" callgrind annotate --format=json "$LUA" >plain.json &&
	gzip -c "$LUA" >lua.gz &&
	"$PROF" callgrind annotate --format=json lua.gz | sed "s/lua.gz/LUA/" >gz.json &&
	sed "s|$LUA|LUA|" plain.json >plain2.json && cmp plain2.json gz.json &&
	if command -v zstd >/dev/null; then
		zstd -q -c "$LUA" >lua.zst &&
		"$PROF" callgrind annotate --format=json lua.zst | sed "s/lua.zst/LUA/" >zst.json &&
		cmp plain2.json zst.json
	fi
'

test_expect_failure_exit 'missing file: one line, exit 2' 2 '
	"$PROF" callgrind annotate nope.callgrind 2>err; s=$?; cat err
	grep -q "cannot open .nope.callgrind." err && test $(wc -l <err) = 1 && exit $s
'
test_expect_failure_exit 'garbage: one line, exit 2' 2 '
	head -c 3000 /bin/sh >garbage && "$PROF" callgrind annotate garbage >out 2>err; s=$?; cat err
	test $(wc -l <err) = 1 && check_contains err "is not a callgrind profile" &&
	test ! -s out && exit $s
'
# Random bytes hold lines that start with a digit (cost lines to a lax
# parser); no line of them is valid callgrind, so the file is refused.
test_expect_failure_exit '100 kB of random bytes: one line, exit 2' 2 '
	python3 -c "import random, sys; r = random.Random(18)
sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(100000)))" >random.bin &&
	"$PROF" callgrind annotate random.bin >out 2>err; s=$?; cat err
	test $(wc -l <err) = 1 && check_contains err "none of its [0-9]* lines is callgrind format" &&
	test ! -s out && exit $s
'
test_expect_failure_exit 'random bytes to diff: one line, exit 2' 2 '
	"$PROF" callgrind diff random.bin "$CS" >out 2>err; s=$?; cat err
	test $(wc -l <err) = 1 && exit $s
'
test_expect_success 'truncated file: warning and partial results' '
	head -c 80000 "$LUA" >trunc.callgrind &&
	"$PROF" callgrind annotate trunc.callgrind >t.txt 2>err && cat err &&
	check_contains err "truncated" && check_contains t.txt "file:function"
'
test_expect_failure_exit 'corrupt gzip: one line, exit 2' 2 '
	gzip -c "$LUA" | head -c 5000 >cut.gz && "$PROF" callgrind annotate cut.gz 2>err; s=$?; cat err
	test $(wc -l <err) = 1 && exit $s
'
test_expect_success 'empty part selected explicitly: warning, totals shown' '
	"$PROF" callgrind annotate --part 1 "$CS" >e.txt 2>err &&
	check_contains err "part 1 has no costs" && check_contains e.txt "PROGRAM TOTALS"
'

# --- diff -------------------------------------------------------------------
test_expect_success 'diff of a profile with itself: no change' '
	"$PROF" callgrind diff "$CS" "$CS" >d0.txt &&
	check_contains d0.txt "benchmark: harness.c::bench_fib" &&
	grep -q "# total: 579911 -> 579911 *+0 *+0.00%" d0.txt &&
	test $(grep -c "^ *[0-9]" d0.txt) = 0
'
test_expect_success 'diff pairs benchmarks by name; changed, added and removed functions' '
	# head: fib'"'"'2 self +1000 Ir, count_words renamed, parts reordered
	awk "/^fn=fib.2/ { f = 1 } f && /^13 28656/ { sub(/^13 28656/, \"13 29656\"); f = 0 } { print }" "$CS" |
		sed "s/count_words.constprop.0/count_words_fast/" >head.callgrind &&
	"$PROF" callgrind diff --format=json "$CS" head.callgrind >d.json &&
	python3 - d.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	b = {x["benchmark"]: x for x in d["benchmarks"]}
	fib = b["harness.c::bench_fib"]
	f = {x["function"]: x for x in fib["functions"]}
	assert f["fib'"'"'2"]["self"]["change"] == 1000, f["fib'"'"'2"]
	assert fib["functions"][0]["function"] == "fib'"'"'2"   # sorted by |change|
	w = {x["function"]: x for x in b["harness.c::bench_words"]["functions"]}
	assert w["count_words_fast"]["status"] == "added"
	assert w["count_words.constprop.0"]["status"] == "removed"
	assert w["count_words.constprop.0"]["self"]["head"] == 0
	print("ok")
	EOF
'
test_expect_success 'diff --event and --benchmark' '
	"$PROF" callgrind diff --event Dr --benchmark harness.c::bench_fib "$CS" head.callgrind >dd.txt &&
	check_contains dd.txt "event Dr" && check_not_contains dd.txt bench_words
'
test_expect_failure_exit 'diff with an unknown event: one line, exit 2' 2 '
	"$PROF" callgrind diff --event Nope "$CS" "$CS" 2>err; s=$?; cat err; test $(wc -l <err) = 1 && exit $s
'

# --- run --------------------------------------------------------------------
if command -v valgrind >/dev/null; then
	test_expect_success 'run writes the profile and both annotations' '
		"$PROF" callgrind run -l sh1 -- sh -c "i=0; while [ \$i -lt 200 ]; do i=\$((i+1)); done" &&
		test -s profiles/sh1.callgrind &&
		check_contains profiles/sh1.callgrind.flat.txt "PROGRAM TOTALS" &&
		check_contains profiles/sh1.callgrind.tree.txt " * "
	'
	test_expect_success 'run passes the exit status through' '
		"$PROF" callgrind run -l st -- sh -c "exit 3"; test $? = 3
	'
	test_expect_success 'run --codspeed uses the runner flags (combined dumps, cache sim)' '
		"$PROF" callgrind run --codspeed -l cs -- sh -c "echo hi" >o 2>err; cat err &&
		grep -q "^events: Ir Dr Dw I1mr" profiles/cs.callgrind
	'
	# valgrind 3.19 here accepts every CodSpeed flag, so an older valgrind
	# is simulated by a wrapper that refuses one flag the way valgrind
	# does, then runs the real valgrind.
	REAL_VG=$(command -v valgrind)
	mkdir -p oldvg && cat >oldvg/valgrind <<-EOF
	#!/bin/sh
	for a in "\$@"; do
		case "\$a" in --collect-systime=*) echo "valgrind: Bad option: \$a" >&2; exit 1;; esac
	done
	exec "$REAL_VG" "\$@"
	EOF
	chmod +x oldvg/valgrind
	test_expect_success 'run --codspeed drops the flags an older valgrind rejects and says so' '
		PATH="$TRASH/oldvg:$PATH" "$PROF" callgrind run --codspeed -l old -- true 2>err; cat err
		grep -q "rejects --collect-systime=nsec" err && test -s profiles/old.callgrind &&
		check_not_contains profiles/old.callgrind "sysCount"
	'
	mkdir -p csvg && cat >csvg/valgrind <<-EOF
	#!/bin/sh
	[ "\$1" = --version ] && { echo valgrind-3.24.0.codspeed; exit 0; }
	exec "$REAL_VG" "\$@"
	EOF
	chmod +x csvg/valgrind
	test_expect_success 'run --codspeed on valgrind-codspeed (by --version) uses the flags unprobed' '
		PATH="$TRASH/csvg:$PATH" "$PROF" callgrind run --codspeed -l cs2 -- true 2>err; cat err
		check_not_contains err "checking which" && check_contains profiles/cs2.callgrind "sysCount"
	'
else
	test_skip 'run' 'valgrind is not installed'
fi
test_expect_failure_exit 'run without valgrind says how to install it' 2 '
	mkdir -p emptybin && ln -sf "$(command -v sh)" emptybin/sh &&
	PATH="$TRASH/emptybin" "$PROF" callgrind run -- true 2>err; s=$?; cat err
	grep -q "apt-get install valgrind" err && exit $s
'

test_done

#!/bin/bash
# t8060-security-output: prof never writes through a symlink planted at
# an output path (prof.data and its .old, report -o, stat -o and
# --save-baseline, callgrind run's profiles/*.txt): the victim file stays
# unchanged.  And names from the profiled program (a binary file name
# and a thread name holding quotes, ';', newlines, terminal escapes) are
# escaped in every report format: no control byte reaches the terminal,
# folded stays one stack per line, JSON parses and round-trips them.
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/fault/fault-lib.sh"

echo "precious" >victim
victim_intact() { test "$(cat victim)" = precious || { echo "victim changed:"; cat victim; return 1; }; }
no_control_bytes() {	# file: nothing below 0x20 but \t and \n, no DEL
	! LC_ALL=C grep -q "[$(printf '\001-\010\013-\037\177')]" "$1" ||
		{ echo "control bytes in $1:"; cat -A "$1" | head; return 1; }
}

test_expect_success 'record -o SYMLINK: the link is moved aside, the victim untouched' '
	ln -s victim rec.data &&
	"$PROF" record -q --call-graph none -o rec.data -- true 2>/dev/null || true
	victim_intact && test -L rec.data.old && test ! -L rec.data
'

test_expect_success 'record: a symlink at FILE.old is replaced, not followed' '
	echo old >r2.data && ln -s victim r2.data.old &&
	{ "$PROF" record -q --call-graph none -o r2.data -- true 2>/dev/null || true; } &&
	victim_intact && test "$(cat r2.data.old)" = old
'

test_expect_success 'record -o DEVICE (a private /dev/null twin) writes in place, no rename' '
	if mknod null c 1 3 2>/dev/null; then
		"$PROF" record -q --call-graph none -o null -- true 2>/dev/null;
		test -c null && test ! -e null.old
	else
		echo "mknod refused (not root?): nothing to check"
	fi
'

test_expect_success 'report -o SYMLINK: refused with one line, victim untouched' '
	"$PROF" record -q --call-graph none -o good.data -- "$CHURN" spin 0.2 2>/dev/null ||
		cp "$TOP/tests/fuzz/corpus/profdata/fixture.data" good.data
	ln -s victim rep.txt &&
	"$PROF" report -i good.data -o rep.txt 2>rep.err; st=$?
	cat rep.err; test $st != 0 && victim_intact && test $(wc -l <rep.err) = 1 &&
	"$PROF" report -i good.data -o /dev/null
'

test_expect_success 'stat -o and --save-baseline SYMLINK: victim untouched' '
	ln -s victim stat.txt && ln -s victim base.json &&
	"$PROF" stat -o stat.txt -- true 2>&1;
	"$PROF" stat --save-baseline base.json -- true 2>&1;
	victim_intact && test -L stat.txt && test -L base.json
'

if command -v valgrind >/dev/null; then
	test_expect_success 'callgrind run: symlinks at profiles/*.txt are not followed' '
		mkdir -p profiles && ln -s ../victim profiles/sec.callgrind.flat.txt &&
		ln -s ../victim profiles/sec.callgrind.tree.txt &&
		"$PROF" callgrind run -l sec -- true >cg.out 2>&1; cat cg.out;
		victim_intact && test -s profiles/sec.callgrind
	'
else
	test_skip 'callgrind run symlinks' 'valgrind is not installed'
fi

weird_bin=$(printf 'we"ird;na me\n\033[31mX<&>\\')
weird_comm=$(printf 'q"\033[2J;a b\n<x>')
test_expect_success 'record a program with a hostile file name and thread name' '
	cp "$CHURN" "$TRASH/$weird_bin" &&
	"$PROF" record -o w.data -- "$TRASH/$weird_bin" name "$weird_comm" 0.5 2>w.err &&
	no_control_bytes w.err
' || true

if [ -s w.data ]; then
	test_expect_success 'text, tree and folded reports carry no control bytes' '
		"$PROF" report -i w.data >w.txt && no_control_bytes w.txt &&
		check_contains w.txt "spin_burn" &&
		"$PROF" report -i w.data --tree >w.tree && no_control_bytes w.tree &&
		"$PROF" report -i w.data --format=folded >w.folded && no_control_bytes w.folded &&
		! grep -v "^[^;]*;.* [0-9][0-9]*$" w.folded
	'
	test_expect_success 'json parses and round-trips the names exactly' '
		"$PROF" report -i w.data --format=json >w.json &&
		python3 - "$TRASH/$weird_bin" "$weird_comm" <<-\PY
		import json, sys
		j = json.load(open("w.json"))
		comms = {t["comm"] for p in j["processes"] for t in p["threads"]}
		mods = {f["module"] for f in j["functions"]}
		assert sys.argv[2][:15] in comms, (comms, sys.argv[2])
		assert sys.argv[1] in mods, mods
		PY
	'
else
	test_skip 'report escaping' 'perf events not usable here'
fi

test_expect_success 'callgrind annotate and diff: no control bytes, json parses' '
	printf "events: Ir\nfl=/a\"b\033[1m.c\nfn=evil\"fn\033[2J;<x>\\\\\n1 100\nfn=main\n2 5\ncfn=evil\"fn\033[2J;<x>\\\\\ncalls=1 1\n3 100\ntotals: 105\n" >cg.out &&
	"$PROF" callgrind annotate cg.out >ann.txt 2>ann.err && no_control_bytes ann.txt &&
	no_control_bytes ann.err && check_contains ann.txt "evil\"fn?\[2J" &&
	"$PROF" callgrind diff cg.out cg.out >diff.txt 2>&1 && no_control_bytes diff.txt &&
	"$PROF" callgrind annotate --format=json cg.out >ann.json &&
	python3 -c "import json; j=json.load(open(\"ann.json\")); assert any(f[\"function\"].startswith(\"evil\\\"fn\x1b\") for p in j[\"parts\"] for f in p[\"functions\"])"
'
test_done

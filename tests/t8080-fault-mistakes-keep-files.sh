#!/bin/bash
# t8080-fault-mistakes-keep-files: a mistaken command line never costs a
# user a file.  In a directory holding a good prof.data (and a report, a
# stat JSON, a baseline, a callgrind profile), help, usage errors, a pid
# that does not exist, a command that cannot start, a report aimed at a
# recording and a report that fails leave every file byte for byte as it
# was, with no prof.data.old and no temporary file left behind.  Only a
# recording that really started replaces prof.data (the old one becomes
# prof.data.old at that moment).
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events

# snapshot: the names and checksums of every file here, dot files too.
snapshot() { find . -maxdepth 2 -type f ! -name '.out.*' ! -name 'snap.*' ! -name 'err' -print0 |
	sort -z | xargs -0 -r md5sum; }
unchanged() {	# the directory is as snap.before says
	snapshot >snap.after
	diff snap.before snap.after || { echo "files changed (above: before < > after)"; return 1; }
}

test_expect_success 'setup: a good recording and files made from it' '
	"$PROF" record -q -o prof.data -- "$WL/split" 0.3 >/dev/null &&
	"$PROF" report -i prof.data -o report.txt &&
	"$PROF" stat -o stat.json --format=json -- true &&
	"$PROF" stat --save-baseline base.json -- true &&
	test -s prof.data && test -s report.txt && test -s stat.json && test -s base.json &&
	snapshot >snap.before && cat snap.before
'

for args in "--help" "-h" "--bogus-option" "-F notanumber -- true" "-p 999999 -d 1" \
	    "-p notapid" "-- /nonexistent/cmd" "-- ./not-executable" "-e no-such-event -- true"; do
	test_expect_success "prof record $args: every file as it was" '
		printf "#!/bin/sh\n" >not-executable && chmod 644 not-executable &&
		snapshot >snap.before &&
		"$PROF" record $args >out 2>err; st=$?
		cat err; rm -f out
		unchanged && test ! -e prof.data.old &&
		case "$args" in --help|-h) test $st = 0 ;; *) test $st != 0 ;; esac
	'
done

test_expect_failure_exit 'a command that cannot start exits 127' 127 '
	"$PROF" record -- /nonexistent/cmd
'

test_expect_success 'a recording that started replaces prof.data, the old one becomes .old' '
	old=$(md5sum <prof.data) &&
	"$PROF" record -q -- true &&
	test "$(md5sum <prof.data.old)" = "$old" &&
	test "$(md5sum <prof.data)" != "$old" &&
	"$PROF" report -i prof.data.old >/dev/null &&
	"$PROF" report -i prof.data >/dev/null &&
	test -z "$(ls -A | grep "^\.prof\.data\.")" &&
	mv prof.data.old prof.data
'

test_expect_success 'a command that fails after starting is a real recording' '
	"$PROF" record -q -o failing.data -- sh -c "exit 3"; st=$?
	test $st = 3 && test -s failing.data && test ! -e failing.data.old &&
	rm -f failing.data
'

for args in "-o prof.data" "-i prof.data -o prof.data" "--format=json -o prof.data"; do
	test_expect_success "prof report $args: refused, the recording kept" '
		snapshot >snap.before &&
		"$PROF" report $args >/dev/null 2>err; st=$?
		cat err; test $st != 0 && one_error err "is a recording" && unchanged
	'
done

if command -v perf >/dev/null && perf record -q -o perf.data true >/dev/null 2>&1; then
	test_expect_success 'prof report -i perf.data -o perf.data: refused' '
		snapshot >snap.before &&
		"$PROF" report -i perf.data -o perf.data >/dev/null 2>err; st=$?
		cat err; test $st != 0 && one_error err "is a recording" && unchanged &&
		rm -f perf.data
	'
else
	test_skip 'prof report -i perf.data -o perf.data: refused' 'perf record does not work here'
fi

for args in "-i missing.data -o report.txt" "--format=bogus -o report.txt" \
	    "--metric=bogus -o report.txt" "--bogus -o report.txt"; do
	test_expect_success "prof report $args: report.txt as it was" '
		snapshot >snap.before &&
		"$PROF" report $args >/dev/null 2>err; st=$?
		cat err; test $st != 0 && unchanged
	'
done

test_expect_success 'prof report -o FILE: replaced only by a complete report, no temporary left' '
	"$PROF" report -i prof.data --format=json -o report.json &&
	python3 -c "import json; json.load(open(\"report.json\"))" &&
	test -z "$(ls -A | grep "^\.report")" && rm report.json
'

for args in "-o stat.json -- /nonexistent/cmd" "--save-baseline base.json -- /nonexistent/cmd" \
	    "--bogus -o stat.json -- true" "--help"; do
	test_expect_success "prof stat $args: stat.json and base.json as they were" '
		snapshot >snap.before &&
		"$PROF" stat $args >/dev/null 2>err; st=$?
		cat err; unchanged &&
		case "$args" in --help) test $st = 0 ;; *) test $st != 0 ;; esac
	'
done

test_expect_success 'prof diff -o with a missing input: the file at -o as it was' '
	snapshot >snap.before &&
	"$PROF" diff --base prof.data --head missing.data -o report.txt >/dev/null 2>err; st=$?
	cat err; test $st != 0 && unchanged
'

if command -v valgrind >/dev/null; then
	test_expect_success 'prof callgrind run: a command that cannot start keeps the last profile' '
		"$PROF" callgrind run -l keep -- true >err 2>&1 &&
		test -s profiles/keep.callgrind &&
		snapshot >snap.before &&
		"$PROF" callgrind run -l keep -- /nonexistent/cmd >err 2>&1; st=$?
		cat err; test $st != 0 && unchanged
	'
else
	test_skip 'prof callgrind run keeps the last profile' 'valgrind is not installed'
fi

test_done

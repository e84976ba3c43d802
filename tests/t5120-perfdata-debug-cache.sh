#!/bin/bash
# t5120-perfdata-debug-cache: a stripped program whose DWARF is in a
# separate, zlib-compressed debug file (found by .gnu_debuglink, as
# distributions ship them) gets an inflated copy of that file in
# $XDG_CACHE_HOME/prof/debug/BUILDID.debug on the first report; later
# reports use it and say the same; a damaged or foreign copy is ignored
# and rebuilt; an unwritable cache place changes nothing.
. "$(dirname "$0")/lib/test-lib.sh"

command -v perf >/dev/null || skip_all "perf is not installed"
command -v objcopy >/dev/null || skip_all "objcopy is not installed"
perf record -q -e cpu-clock -o probe.data -- true >/dev/null 2>&1 ||
	skip_all "perf record -e cpu-clock is refused here"

cat >dbg.c <<'SRC'
static volatile unsigned long sink;
__attribute__((noinline)) void leaf_work(int n) { for (int i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void caller_work(int n) { leaf_work(n); sink++; }
int main(void) { for (int i = 0; i < 300; i++) caller_work(1000000); return 0; }
SRC
cc -O1 -g -fno-omit-frame-pointer -o dbg dbg.c &&
	objcopy --only-keep-debug --compress-debug-sections=zlib dbg dbg.debug &&
	objcopy --strip-all --add-gnu-debuglink=dbg.debug dbg ||
	skip_all "cannot build a program with a compressed debug file"
readelf -SW dbg.debug 2>/dev/null | grep -q '^ *\[.*debug.* C ' || skip_all "objcopy did not compress"
perf record -q -e cpu-clock -F 999 -g -o d.data -- ./dbg >/dev/null 2>&1 ||
	skip_all "perf record failed"
# section lines (not the legend) with the C flag
compressed() { readelf -SW "$1" 2>/dev/null | grep -q '^ *\[.*debug.* C '; }
id=$(readelf -n dbg | awk '/Build ID/ { print $3 }')
COPY=$PWD/cache/prof/debug/$id.debug

report() {	# report OUT [XDG_CACHE_HOME]
	XDG_CACHE_HOME=${2:-$PWD/cache} "$PROF" report -i d.data --format=folded >"$1" 2>err.txt
	st=$?
	cat err.txt
	return $st
}

test_expect_success 'first report: names from the compressed debug file, copy made' '
	report first.txt && grep -q ";main;leaf_work " first.txt &&
	test -f "$COPY" && test "$(stat -c %a "$COPY")" = 600 &&
	! compressed "$COPY"
'
test_expect_success 'the copy is used as it is, same report' '
	before=$(stat -c %i "$COPY") &&
	report again.txt && cmp first.txt again.txt &&
	test "$(stat -c %i "$COPY")" = "$before"
'
test_expect_success 'a truncated copy is ignored and rebuilt' '
	truncate -s 100 "$COPY" &&
	report cut.txt && cmp first.txt cut.txt &&
	report cut2.txt && cmp first.txt cut2.txt &&
	test "$(stat -c %s "$COPY")" -gt 100
'
test_expect_success 'a copy of another build is ignored' '
	cp /bin/true "$COPY" &&
	report foreign.txt && cmp first.txt foreign.txt
'
test_expect_success 'an unwritable cache place: same report, nothing said' '
	report nodir.txt /dev/null/x && cmp first.txt nodir.txt && test ! -s err.txt
'
test_done

#!/bin/bash
# t5100-perfdata-report: perf.data files recorded by the installed `perf`
# import into the model with the same flat self profile as
# `perf report --no-children --sort sym`: fp (-g) and --call-graph dwarf
# recordings of a small frame-pointer program (built here: our workloads
# have no frame pointers), pipe mode, zstd (-z), and damaged files.
# The driver is build/tests/unit/perfdata_import.t --flat until `prof
# report -i perf.data` reads perf.data itself.
. "$(dirname "$0")/lib/test-lib.sh"

DRIVER="$BUILD_DIR/tests/unit/perfdata_import.t"
command -v perf >/dev/null || skip_all "perf is not installed"
command -v cc >/dev/null || skip_all "no C compiler"
[ -x "$DRIVER" ] || skip_all "build the unit tests first (make unit)"
perf record -q -e cpu-clock -o probe.data -- true >/dev/null 2>&1 ||
	skip_all "perf record -e cpu-clock is refused here"

cat >spin.c <<'SRC'
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static volatile unsigned long sink;
static char a[1 << 16], b[1 << 16];
__attribute__((noinline)) void hot(int n) { for (int i = 0; i < n; i++) sink += i * 3; }
__attribute__((noinline)) void warm(int n) { for (int i = 0; i < n; i++) sink ^= i * 7; }
__attribute__((noinline)) void copy(int n) { for (int i = 0; i < n; i++) { memcpy(a, b, sizeof(a)); b[i & 0xffff] = a[0] + 1; } }
__attribute__((noinline)) void sys(int n) { for (int i = 0; i < n; i++) getppid(); }
__attribute__((noinline)) void middle(int n) { hot(n); warm(n / 2); }
static void *side(void *arg) { for (int i = 0; i < 200; i++) warm(1000000); return arg; }
int main(int argc, char **argv)
{
	int it = argc > 1 ? atoi(argv[1]) : 100;
	pthread_t t;
	if (argc > 2)	/* a second thread: same address space, its own tid */
		pthread_create(&t, NULL, side, NULL);
	for (int i = 0; i < it; i++) { middle(1000000); copy(200); sys(3000); }
	if (argc > 2)
		pthread_join(t, NULL);
	return 0;
}
SRC
cc -O1 -g -fno-omit-frame-pointer -pthread -o spin spin.c || skip_all "cannot build the test program"

# "PCT SYMBOL" lines from perf report; "PCT SAMPLES SYMBOL MODULE" from the driver.
perf_flat() {
	perf report --stdio --no-children --sort sym -g none -q --percent-limit 0 -i "$1" 2>/dev/null |
		awk 'NF >= 3 { p = $1; sub("%", "", p); $1 = ""; $2 = ""; sub("^ +", ""); print p, $0 }'
}

# Every function perf gives >= 2% must be within 0.5 pp in ours (found by
# name, or by its glibc alias); the side
# by side table goes to cmp-FILE.txt (printed as diagnostics below).
compare_flat() {
	perf_flat "$1" >perf.txt
	"$DRIVER" --flat "$1" >ours.txt || return 1
	bad=0
	{
		echo "$1: $(head -1 ours.txt | sed 's/^# //')"
		printf '%-34s %8s %8s\n' function perf% prof%
	} >"cmp-$1.txt"
	while read -r pct sym; do
		mine=$(awk -v s="$sym" '$3 == s { print $1; exit }' ours.txt)
		# glibc's hidden aliases: perf may pick __GI___getppid where we
		# pick getppid for the same address
		alias=$(echo "$sym" | sed -E 's/^__GI_+//')
		[ -n "$mine" ] || mine=$(awk -v s="$alias" '$3 == s { print $1; exit }' ours.txt)
		printf '%-34s %8.2f %8s\n' "$sym" "$pct" "${mine:-none}" >>"cmp-$1.txt"
		awk -v p="$pct" -v m="${mine:-0}" 'BEGIN { d = p - m; if (d < 0) d = -d; exit !(p < 2 || d <= 0.5) }' ||
			{ echo "mismatch for $sym: perf $pct, prof ${mine:-none}"; bad=1; }
	done <perf.txt
	cat "cmp-$1.txt"
	[ -s perf.txt ] && [ $bad = 0 ]
}

test_expect_success 'fp (-g) recording: flat self profile agrees with perf report' '
	perf record -q -e cpu-clock -F 999 -g -o fp.data -- ./spin 300 >/dev/null 2>&1 &&
	compare_flat fp.data
'
sed 's/^/#   /' cmp-fp.data.txt 2>/dev/null
test_expect_success 'dwarf recording: flat self profile agrees with perf report' '
	perf record -q -e cpu-clock -F 999 --call-graph dwarf -o dwarf.data -- ./spin 300 >/dev/null 2>&1 &&
	compare_flat dwarf.data
'
sed 's/^/#   /' cmp-dwarf.data.txt 2>/dev/null
test_expect_success 'fork + exec (sh running two children): agrees with perf report' '
	perf record -q -e cpu-clock -F 999 -g -o fork.data -- sh -c "./spin 100 & ./spin 100; wait" >/dev/null 2>&1 &&
	compare_flat fork.data
'
sed 's/^/#   /' cmp-fork.data.txt 2>/dev/null
test_expect_success 'two threads (dwarf): agrees with perf report, side thread unwound' '
	perf record -q -e cpu-clock -F 999 --call-graph dwarf -o threads.data -- ./spin 100 2 >/dev/null 2>&1 &&
	compare_flat threads.data &&
	"$DRIVER" --folded threads.data >folded.txt &&
	check_contains folded.txt ";side;warm "
'
sed 's/^/#   /' cmp-threads.data.txt 2>/dev/null
test_expect_success 'dwarf stacks reach main through middle' '
	"$DRIVER" --folded dwarf.data >folded.txt &&
	check_contains folded.txt ";main;middle;hot " &&
	"$DRIVER" --flat dwarf.data | head -1 | grep -q "truncated"
'
test_expect_success 'sample count equals perf script' '
	want=$(perf script -F event -i fp.data 2>/dev/null | grep -c cpu-clock) &&
	"$DRIVER" --flat fp.data | head -1 >head.txt && cat head.txt &&
	check_contains head.txt "# samples $want "
'
# The streams take -B: a stream cannot be taken again when perf aborts in
# its build-id code (see perf() in tests/lib/test-lib.sh), and -B skips it.
# ./spin 40: at ./spin 10 hot() had 3 to 8 of ~50 samples here, and a
# slower or faster machine may give it none.
test_expect_success 'pipe mode (perf record -o -) imports' '
	perf record -B -q -e cpu-clock -F 999 -g -o - -- ./spin 40 2>/dev/null >pipe.data &&
	want=$(perf script -F event -i pipe.data 2>/dev/null | grep -c cpu-clock) &&
	"$DRIVER" --flat pipe.data >out.txt && cat out.txt &&
	check_contains out.txt "# samples $want " && check_contains out.txt " hot "
'
test_expect_success 'pipe mode straight into stdin (-)' '
	perf record -B -q -e cpu-clock -F 999 -g -o - -- ./spin 40 2>/dev/null |
		"$DRIVER" --flat - >out.txt && cat out.txt &&
	check_contains out.txt " hot "
'
if perf record -q -z -e cpu-clock -o z.data -- true >/dev/null 2>&1 && pkg-config --exists libzstd; then
	# -z records do not abort at the end (perf skips the build-ids then),
	# but perf script may abort reading them (perf() in test-lib.sh): the
	# count comes from a file perf can read, recorded again if need be.
	test_expect_success 'zstd-compressed (perf record -z) imports' '
		for try in 1 2 3; do
			perf record -q -z -e cpu-clock -F 999 -g -o z.data -- ./spin 10 >/dev/null 2>&1 || exit 1
			perf script -F event -i z.data >z.events 2>/dev/null && break
			echo "perf script aborted on its own recording, try $try of 3"
		done &&
		want=$(grep -c cpu-clock z.events) &&
		"$DRIVER" --flat z.data >out.txt && cat out.txt &&
		check_contains out.txt "# samples $want "
	'
else
	test_skip 'zstd-compressed (perf record -z) imports' 'perf -z or libzstd unavailable'
fi
test_expect_success 'a cut perf.data imports what is there, no crash' '
	size=$(stat -c %s dwarf.data) &&
	for frac in 2 3 5 7; do
		head -c $((size * (frac - 1) / frac)) dwarf.data >cut.data
		"$DRIVER" --flat cut.data >/dev/null 2>err.txt; st=$?
		echo "cut at $((frac - 1))/$frac: exit $st"; cat err.txt
		[ $st = 0 ] || [ $st = 2 ] || exit 1
	done
'
test_expect_success 'a SIGKILLed perf record leaves a file that imports (cut)' '
	perf record -q -e cpu-clock -F 999 -g -o killed.data -- ./spin 3000 >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	kill -9 $pid
	wait $pid
	"$DRIVER" --flat killed.data >out.txt 2>err.txt; st=$?
	cat out.txt err.txt
	test $st = 0 && check_contains out.txt "file-cut" ||
	{ test $st = 2 && test $(wc -l <err.txt) = 1; }
'
# A period of 10 s of CPU: `true` never reaches it, the file has no sample.
test_expect_failure_exit 'a perf.data with no sample: exit 2' 2 '
	perf record -q -e cpu-clock -c 10000000000 -o nosample.data -- true >/dev/null 2>&1 &&
	"$PROF" report -i nosample.data'
test_expect_success 'a perf.data with no sample: one line saying so' '
	! "$PROF" report -i nosample.data >out 2>err && cat err &&
	test $(wc -l <err) = 1 && check_contains err "holds no samples" && test ! -s out
'
test_expect_failure_exit 'garbage is refused with one line' 2 '
	echo "PERFILE2 but nothing more here, really" >junk.data &&
	"$DRIVER" --flat junk.data 2>err.txt; st=$?; cat err.txt
	test $(wc -l <err.txt) = 1 && exit $st
'
test_done

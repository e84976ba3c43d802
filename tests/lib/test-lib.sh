# test-lib.sh - git-style shell test library producing TAP for prove.
#
#   . "$(dirname "$0")/lib/test-lib.sh"
#   test_expect_success 'title' 'commands'
#   test_skip 'title' 'reason'
#   skip_case REASON   (in a case's commands: skipped, said why)
#   test_done
#
# Each test script gets a fresh scratch directory $TRASH (removed on
# success, kept on failure for inspection) and runs with cwd = $TRASH.
# $PROF is the absolute path of the built ./prof, $TOP the source tree,
# $BUILD_DIR the build directory (build/, or build-san/ under make
# check-sanitize: PROF_BUILD), $WL the workload binaries directory.
# PROF_TEST_KEEP=1 keeps the scratch directory of a passing script too (to
# read the sample counts a run got, tests/README.md).  PROF_TEST_TIMES=1
# follows each case's line with its wall time, a TAP comment (to find
# where a slow script's time goes: prove -v).  Helpers:
#   require_perf_events  - skip_all unless perf_event_open works here
#   skip_all REASON      - plan 0 tests and exit (TAP "1..0 # SKIP")
#   nobody_dir FILE...   - copies for `setpriv --reuid=nobody` (see below)

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR="$TOP/${PROF_BUILD:-build}"
if [ "${PROF_BUILD:-build}" = build ]; then PROF="$TOP/prof"; else PROF="$BUILD_DIR/prof"; fi
WL="$TOP/tests/workloads/bin"
TEST_NAME=$(basename "$0" .sh)
TRASH="$TOP/tests/trash/$TEST_NAME"
# A killed run may have left its disk with a set latency mounted in the
# trash (tests/lib/slowdisk.sh): take it down before removing the trash.
if [ -d "$TRASH/.slowdisk" ]; then
	for _l in $(losetup -n -O NAME -j "$TRASH/.slowdisk/fuse/disk" 2>/dev/null); do
		umount -l "$TRASH/.slowdisk/mnt" 2>/dev/null; losetup -d "$_l" 2>/dev/null
	done
	umount -l "$TRASH/.slowdisk/mnt" 2>/dev/null; umount -l "$TRASH/.slowdisk/fuse" 2>/dev/null
fi
rm -rf "$TRASH"
mkdir -p "$TRASH"
cd "$TRASH" || exit 1
test_count=0
test_failed=0

say() { printf '# %s\n' "$*"; }

# A failed test's title and the last lines it printed, also in
# tests/trash/FAILURES: make check prints that file after prove's summary,
# so that the end of a CI log says what failed, not only where.  One
# append per failure, so that two scripts side by side do not interleave.
FAILURES="$TOP/tests/trash/FAILURES"
note_failure() {	# title
	local block
	block=$(printf '%s #%d: %s\n' "$TEST_NAME" "$test_count" "$1"
		tail -n 4 "$TRASH/.out.$test_count" | cut -c1-160 | sed 's/^/    /')
	printf '%s\n' "$block" >>"$FAILURES"
}

# skip_case REASON: ends the case being run as skipped, said with REASON:
# for a state of the machine, not of prof, that leaves nothing to judge
# (a recorder starved of CPU lost what an exact count needs).
skip_case() {
	printf '%s\n' "$*" >"$TRASH/.skip.$test_count"
	exit 77
}

# case_time START: the case's wall time as a TAP comment, if asked for.
case_time() {
	[ -n "${PROF_TEST_TIMES:-}" ] || return 0
	local us=$(( ${EPOCHREALTIME/./} - ${1/./} ))
	printf '# %d.%01d s\n' $((us / 1000000)) $((us / 100000 % 10))
}

test_expect_success() {
	local t0=$EPOCHREALTIME
	test_count=$((test_count + 1))
	(eval "$2") >"$TRASH/.out.$test_count" 2>&1
	st=$?
	if [ "$st" = 0 ]; then
		echo "ok $test_count - $1"
	elif [ "$st" = 77 ] && [ -s "$TRASH/.skip.$test_count" ]; then
		echo "ok $test_count # SKIP $1: $(head -n 1 "$TRASH/.skip.$test_count")"
	else
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TRASH/.out.$test_count" | tail -n 40 >&2
		note_failure "$1"
		test_failed=$((test_failed + 1))
	fi
	case_time "$t0"
}

test_expect_failure_exit() {	# title expected-status commands
	test_count=$((test_count + 1))
	(eval "$3") >"$TRASH/.out.$test_count" 2>&1
	st=$?
	if [ "$st" = "$2" ]; then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1 (exit $st, want $2)"
		sed 's/^/#   /' "$TRASH/.out.$test_count" | tail -n 40 >&2
		note_failure "$1 (exit $st, want $2)"
		test_failed=$((test_failed + 1))
	fi
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count # SKIP $1: $2"
}

skip_all() {
	echo "1..0 # SKIP $*"
	rm -rf "$NOBODY_DIR"
	exit 0
}

# nobody_dir FILE...: a fresh directory $NOBODY_DIR under /tmp that user
# nobody can enter, holding copies of FILE... and a world-writable out/.
# Tests that run binaries as nobody (setpriv --reuid=nobody) run these
# copies: the checkout may sit where nobody cannot reach (a 0700 home, a
# mktemp -d directory).  Fails if nobody still cannot run them; test_done
# removes the directory.
NOBODY_DIR=
nobody_dir() {
	local f
	NOBODY_DIR=$(mktemp -d /tmp/prof-nobody.XXXXXX) && chmod 755 "$NOBODY_DIR" &&
		mkdir "$NOBODY_DIR/out" && chmod 777 "$NOBODY_DIR/out" || return 1
	for f in "$@"; do
		cp "$f" "$NOBODY_DIR/" && chmod 755 "$NOBODY_DIR/${f##*/}" || return 1
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			test -x "$NOBODY_DIR/${f##*/}" || return 1
	done
}

test_done() {
	rm -rf "$NOBODY_DIR"
	if type slow_disk_teardown >/dev/null 2>&1; then slow_disk_teardown; fi
	echo "1..$test_count"
	if [ "$test_failed" = 0 ]; then
		[ -n "${PROF_TEST_KEEP:-}" ] || { cd "$TOP" && rm -rf "$TRASH"; }
		exit 0
	fi
	say "$test_failed of $test_count failed; scratch kept in $TRASH"
	exit 1
}

# perf 6.1 (Debian 12) on Linux 6.18 aborts at the end of `perf record`
# ("assertion failed at util/build-id.c:1010", stack smashing) when its
# MMAP2 records carry a build-id flag they should not: a system-wide
# session that asks for build-ids, running meanwhile, makes the kernel
# mark them (kernel-notes/events.md; prof -a no longer asks).  Every perf
# command of a test gets a build-id cache of its own in the test's
# scratch directory (a test that sets HOME itself keeps its own): the
# suite neither reads nor fills the user's ~/.debug (827 MB on the
# project VM).  A file record that still dies of SIGABRT is taken again,
# at most three times, and said on stderr.  Streams (-o -) are not
# retried: tests give them -B.  Tests compare prof with perf, not perf
# with itself.
TEST_HOME=$HOME
perf() {
	local try st home=$HOME
	[ "$home" != "$TEST_HOME" ] || { home="$TRASH/.perf-home"; mkdir -p "$home"; }
	if [ "${1:-}" != record ] || [[ " $* " == *" -o - "* ]]; then
		HOME="$home" command perf "$@"
		return
	fi
	for try in 1 2 3; do
		HOME="$home" command perf "$@"
		st=$?
		[ "$st" = 134 ] || return "$st"
		echo "# perf record aborted (perf's build-id bug), try $try of 3" >&2
	done
	return "$st"
}

# start_service: tests/workloads/service in the background (SVC its pid,
# killed when the test exits; output in service.out), up to 5 s for it
# to say it is ready.
start_service() {
	"$WL/service" >service.out 2>&1 &
	SVC=$!
	trap 'kill $SVC 2>/dev/null' EXIT
	for _ in $(seq 50); do
		grep -q "^service: ready pid=" service.out && break
		sleep 0.1
	done
}

# wait_recording PID: waits (60 s at most) until prof PID runs a second
# thread: its ring readers start once the events are on and its signal
# handlers are in place.  A signal sent before may be lost for good:
# background jobs of a script start with SIGINT ignored, and an ASan
# build on a loaded machine took over 0.5 s to get there.
wait_recording() {
	local i
	for i in $(seq 600); do
		[ "$(ls /proc/"$1"/task 2>/dev/null | wc -l)" -ge 2 ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

require_perf_events() {
	"$PROF" record -q -o "$TRASH/.probe.data" -- true >/dev/null 2>&1 ||
		skip_all "perf_event_open is not usable here (see kernel-notes/permissions.md)"
	rm -f "$TRASH/.probe.data"
}

# Why prof records no off-CPU data here (no tracefs, no permission), in
# prof's words; nothing when it does.
offcpu_why() {
	"$PROF" record -o "$TRASH/.probe.data" -- true 2>"$TRASH/.probe.err"
	rm -f "$TRASH/.probe.data"
	sed -n 's/.*no off-CPU stacks in this recording: //p' "$TRASH/.probe.err"
}

# Skips the whole test when prof records no off-CPU data here.
require_offcpu() {
	local why

	why=$(offcpu_why)
	[ -z "$why" ] || skip_all "off-CPU tracepoint unavailable here: $why (kernel-notes/offcpu.md)"
}

# Assert helpers: print what went wrong, return non-zero.
check_contains() {	# file pattern
	grep -q -- "$2" "$1" || { echo "expected '$2' in $1:"; head -n 50 "$1"; return 1; }
}
# one_error FILE PATTERN: FILE (a stderr) has exactly one error line, it
# matches PATTERN, and every other line is a warning - a loaded machine or
# a missing tracefs may add one ("off-CPU switch samples lost").
one_error() {
	local n other
	n=$(grep -c "error:" "$1")
	other=$(grep -v -c "error:\|warning:" "$1")
	[ "$n" = 1 ] && [ "$other" = 0 ] && grep "error:" "$1" | grep -q -- "$2" ||
		{ echo "expected one error line matching '$2' (and warnings only) in $1:"; cat "$1"; return 1; }
}
check_not_contains() {
	! grep -q -- "$2" "$1" || { echo "unexpected '$2' in $1"; grep -- "$2" "$1" | head; return 1; }
}

# Folded stacks (prof report --format=folded): "frame;frame;... COUNT".
# folded_sum FILE [PATTERN]: the sum of the counts (of the lines matching
# the grep PATTERN).
folded_sum() {
	if [ $# -gt 1 ]; then grep -- "$2" "$1"; else cat "$1"; fi | awk '{s += $NF} END {print s + 0}'
}
# folded_share FILE INSIDE LOST PCT: of the weight whose stack is known
# (lines not matching LOST; "": every line), at least PCT% is on lines
# matching INSIDE.
folded_share() {
	local total lost=0 inside
	total=$(folded_sum "$1") inside=$(folded_sum "$1" "$2")
	[ -z "$3" ] || lost=$(folded_sum "$1" "$3")
	say "$1: $inside of $total on '$2' ($lost with the stack lost)"
	test "$total" -gt "$lost" && test $((inside * 100)) -ge $(((total - lost) * $4))
}

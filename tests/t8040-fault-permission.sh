#!/bin/bash
# t8040-fault-permission: prof runs as nobody (setpriv, no capabilities)
# with kernel.perf_event_paranoid=3 (set here, restored by a trap) and is
# pointed at a root process: one error line that says why and how to fix
# it (run as the owner or root, or setcap cap_perfmon,cap_sys_ptrace),
# exit 2, no file left behind, the target unharmed.  Profiling its own
# command as nobody either works user-only (with a warning naming the
# fix) or fails with one such line, depending on the kernel's paranoid=3
# semantics (Debian's patch refuses all; upstream treats 3 like 2).
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
[ "$(id -u)" = 0 ] || skip_all "needs root (setpriv to nobody, sysctl)"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is missing"
. "$TOP/tests/fault/fault-lib.sh"

old_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
trap 'sysctl -q kernel.perf_event_paranoid=$old_paranoid' EXIT
sysctl -q kernel.perf_event_paranoid=3 || skip_all "cannot set kernel.perf_event_paranoid"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"; }
# nobody runs copies of prof and churn: the checkout may be out of its reach.
nobody_dir "$PROF" "$CHURN" || skip_all "cannot make a directory user nobody can reach under /tmp"
PROF_N="$NOBODY_DIR/prof" CHURN_N="$NOBODY_DIR/churn" OUT="$NOBODY_DIR/out"

test_expect_success 'nobody attaching to a root process: one line naming the fix, exit 2' '
	"$CHURN" spin 10 &
	target=$!
	as_nobody "$PROF_N" record -o "$OUT/a.data" -p $target -d 1 2>a.err; st=$?
	alive=no; kill -0 $target && alive=yes; kill -9 $target; wait $target 2>/dev/null
	cat a.err; echo "exit $st, target alive: $alive"
	test $st = 2 && test $alive = yes && test $(wc -l <a.err) = 1 &&
	check_contains a.err "no permission to sample task $target: it belongs to uid 0" &&
	check_contains a.err "setcap cap_perfmon,cap_sys_ptrace+ep" &&
	test ! -e "$OUT/a.data"
'

test_expect_success 'nobody recording its own command at paranoid 3: works user-only or one line' '
	as_nobody "$PROF_N" record -o "$OUT/l.data" -- "$CHURN_N" spin 0.5 2>l.err; st=$?
	cat l.err; echo "exit $st"
	if test $st = 0; then
		check_contains l.err "sampling user space only" &&
		check_contains l.err "perf_event_paranoid=1. or CAP_PERFMON" &&
		"$PROF" report -i "$OUT/l.data" >l.txt && check_contains l.txt spin_burn
	else
		test $st = 2 && test $(wc -l <l.err) = 1 && check_contains l.err "setcap cap_perfmon"
	fi
'

test_expect_success 'paranoid level is restored by the trap' '
	sysctl -q kernel.perf_event_paranoid=$old_paranoid &&
	test "$(cat /proc/sys/kernel/perf_event_paranoid)" = "$old_paranoid"
'
test_done

#!/bin/bash
# t4003-stat-events.sh - prof stat -e: software counters (task-clock,
# page-faults, context-switches) are counted on the command and its
# children (inherit=1); hardware events are refused on this PMU-less VM and
# prof says so: alone they fail with one line, mixed they are dropped.
. "$(dirname "$0")/lib/test-lib.sh"
SB="$TOP/tests/stat/bin"
[ -x "$SB/burn" ] || skip_all "tests/stat/bin not built (run make check)"
"$PROF" stat -e task-clock -- true >/dev/null 2>&1 ||
	skip_all "perf_event_open refuses software counters here"

jsonq() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["metrics"]; r=eval(sys.argv[2]); print(sys.argv[2], "->", r); sys.exit(0 if r else 1)' "$1" "$2"
}

test_expect_success 'task-clock of a 0.2 s CPU burn is ~ its user+sys time' '
	"$PROF" stat -r 2 -e task-clock,page-faults,context-switches --format=json -o e.json -- "$SB/burn" user 0.2 &&
	jsonq e.json "m[\"task-clock\"][\"unit\"] == \"ns\" and m[\"task-clock\"][\"min\"] >= 0.18e9" &&
	jsonq e.json "all(abs(t/1e9 - (u+s)) < 0.05 for t, u, s in zip(m[\"task-clock\"][\"runs\"], m[\"cpu_user_s\"][\"runs\"], m[\"cpu_sys_s\"][\"runs\"]))"
'
test_expect_success 'page-faults counts the 32 MiB touched by alloc (8192 pages)' '
	"$PROF" stat -e page-faults --format=json -o p.json -- "$SB/alloc" 32 &&
	jsonq p.json "m[\"page-faults\"][\"min\"] >= 8192"
'
test_expect_success 'counters include children (inherit): sh -c runs alloc' '
	"$PROF" stat -e page-faults --format=json -o c.json -- sh -c "\"$SB/alloc\" 32; true" &&
	jsonq c.json "m[\"page-faults\"][\"min\"] >= 8192"
'
# As an unprivileged user with perf_event_paranoid=2 only user-space
# counting is allowed: prof falls back to exclude_kernel and must say so.
# nobody runs copies of prof and the workload (nobody_dir): the checkout
# may be out of its reach.  Paranoid 3 refuses it everything (Debian).
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$paranoid" = 2 ] &&
   nobody_dir "$PROF" "$SB/alloc"; then
	test_expect_success 'unprivileged: page-faults falls back to user-only, with a warning' '
		(cd "$NOBODY_DIR" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
			./prof stat -e page-faults -- ./alloc 8) 2>err >/dev/null &&
		check_contains err "page-faults.* excludes the kernel"
	'
else
	test_skip 'unprivileged fallback' "needs root, setpriv, user nobody and perf_event_paranoid 2 (it is $paranoid)"
fi
if "$PROF" stat -e cycles -- true >/dev/null 2>&1; then
	test_skip 'hardware events are refused' 'this machine has a PMU'
	test_skip 'mixed hardware and software events' 'this machine has a PMU'
else
	test_expect_failure_exit 'only hardware events: fails (2)' 2 '"$PROF" stat -e cycles,instructions -- true'
	test_expect_success 'only hardware events: says why, one error line' '
		! "$PROF" stat -e cycles -- true 2>err &&
		check_contains err "cycles.* cannot be counted here" &&
		test "$(grep -c "error:" err)" = 1
	'
	test_expect_success 'mixed: warns, drops cycles, keeps task-clock' '
		"$PROF" stat -e cycles,task-clock --format=json -o m.json -- true 2>err &&
		check_contains err "continuing without it" &&
		jsonq m.json "\"task-clock\" in m and \"cycles\" not in m"
	'
fi
test_done

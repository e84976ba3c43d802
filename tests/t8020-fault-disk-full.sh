#!/bin/bash
# t8020-fault-disk-full: prof.data lives on a 256 KiB tmpfs that fills up
# while recording (dd fills it after the first flush).  prof must print
# one clear error line, stop recording, leave the target alone (it runs
# to completion and its exit status passes through; an attached target
# keeps running), and the file must read back up to the failure.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
[ "$(id -u)" = 0 ] || skip_all "mounting a tmpfs needs root"
mnt="$TRASH/mnt"
mkdir -p "$mnt"
mount -t tmpfs -o size=256k prof-t8020 "$mnt" 2>/dev/null || skip_all "cannot mount a tmpfs here"
trap 'umount "$mnt" 2>/dev/null' EXIT
. "$TOP/tests/fault/fault-lib.sh"

# Wait for the first flush (the file grows past its header), then fill
# the file system.  tmpfs hands out whole pages, so up to 4 KiB more of
# prof.data still fit after dd: the targets below run until prof has hit
# the full disk (or a minute passed), not for a fixed time, so a slow
# machine that samples little still gets there.
fill_after_first_flush() {
	wait_size "$1" 1 && sleep 0.3 &&
	wait_size "$1" $(( $(stat -c %s "$1") + 1 )) &&
	{ dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null; true; } &&
	echo "disk full at $(stat -c %s "$1") bytes of $(basename "$1")"
}

# wait_for FILE PATTERN: up to ~60 s for PATTERN to appear in FILE.
wait_for() {
	local i
	for i in $(seq 600); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# The launched command spins in 1 s steps until $TRASH/stop exists, then
# creates $TRASH/done and exits 3.  One error line: warnings a loaded
# machine brings (lost off-CPU switch samples) may come beside it.
test_expect_success 'launch: one error line, the command finishes, its status passes through' '
	"$PROF" record -o "$mnt/l.data" -- sh -c "while [ ! -e \"\$1\" ]; do \"\$2\" spin 1; done; touch \"\$3\"; exit 3" \
		sh "$TRASH/stop" "$CHURN" "$TRASH/done" 2>l.err &
	prof_pid=$! &&
	fill_after_first_flush "$mnt/l.data";
	wait_for l.err "No space left"; touch "$TRASH/stop";
	{ wait $prof_pid; st=$?; } ; echo "prof exit $st"; cat l.err &&
	test $st = 3 && test -e "$TRASH/done" &&
	one_error l.err "No space left on device.*the target keeps running"
'

test_expect_success 'launch: the file reads back up to the failure' '
	"$PROF" report -i "$mnt/l.data" --format=json -o l.json 2>l.rep; st=$?;
	cat l.rep && test $st = 0 &&
	check_contains l.rep "truncated" &&
	n=$(json_field l.json "j[\"samples\"]") && echo "samples before the failure: $n" &&
	test $n -gt 0
'

rm -f "$mnt"/*
# The attached target spins far longer than the test; prof must stop by
# itself on the full disk (after a minute without that, it is stopped).
test_expect_success 'attach: one error line, prof stops, the target keeps running' '
	"$CHURN" spin 600 &
	target=$!
	"$PROF" record -o "$mnt/a.data" -p $target 2>a.err &
	prof_pid=$! &&
	fill_after_first_flush "$mnt/a.data";
	wait_for a.err "No space left" || kill -INT $prof_pid;
	{ wait $prof_pid; st=$?; } ; echo "prof exit $st"; cat a.err;
	alive=no; kill -0 $target 2>/dev/null && alive=yes;
	kill -9 $target; wait $target 2>/dev/null;
	echo "target alive: $alive" && test $alive = yes && test $st != 0 &&
	one_error a.err "No space left on device" &&
	"$PROF" report -i "$mnt/a.data" >a.txt 2>a.rep && check_contains a.rep truncated
'

rm -f "$mnt"/*
test_expect_success 'no room even for the header: one error line, exit 2, no crash' '
	dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null;
	"$PROF" record -o "$mnt/f.data" -- "$CHURN" spin 0.2 2>f.err; st=$?;
	echo "prof exit $st"; cat f.err &&
	test $st = 2 && test $(wc -l <f.err) = 1 && check_contains f.err "No space left on device"
'

umount "$mnt"
test_done

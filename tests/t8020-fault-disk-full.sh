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
# the file system.
fill_after_first_flush() {
	wait_size "$1" 1 && sleep 0.3 &&
	wait_size "$1" $(( $(stat -c %s "$1") + 1 )) &&
	{ dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null; true; } &&
	echo "disk full at $(stat -c %s "$1") bytes of $(basename "$1")"
}

test_expect_success 'launch: one error line, the command finishes, its status passes through' '
	"$PROF" record -o "$mnt/l.data" -- "$CHURN" spin 4 "$TRASH/done" 3 2>l.err &
	prof_pid=$! &&
	fill_after_first_flush "$mnt/l.data" &&
	{ wait $prof_pid; st=$?; } ; echo "prof exit $st"; cat l.err &&
	test $st = 3 && test -e "$TRASH/done" &&
	test $(wc -l <l.err) = 1 &&
	check_contains l.err "No space left on device" &&
	check_contains l.err "the target keeps running"
'

test_expect_success 'launch: the file reads back up to the failure' '
	"$PROF" report -i "$mnt/l.data" --format=json -o l.json 2>l.rep; st=$?;
	cat l.rep && test $st = 0 &&
	check_contains l.rep "truncated" &&
	n=$(json_field l.json "j[\"samples\"]") && echo "samples before the failure: $n" &&
	test $n -gt 0
'

rm -f "$mnt"/*
test_expect_success 'attach: one error line, prof stops, the target keeps running' '
	"$CHURN" spin 15 &
	target=$!
	"$PROF" record -o "$mnt/a.data" -p $target 2>a.err &
	prof_pid=$! &&
	fill_after_first_flush "$mnt/a.data" &&
	{ wait $prof_pid; st=$?; } ; echo "prof exit $st"; cat a.err;
	alive=no; kill -0 $target 2>/dev/null && alive=yes;
	kill -9 $target; wait $target 2>/dev/null;
	echo "target alive: $alive" && test $alive = yes && test $st != 0 &&
	test $(wc -l <a.err) = 1 && check_contains a.err "No space left on device" &&
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

# slowdisk.sh - a file system on a disk whose latency the test sets, for
# the I/O-wait tests: sourced by them after test-lib.sh.
#
#   slow_disk_setup WRITE_US FSYNC_US || skip_all "$SLOW_DISK_WHY"
#   ... "$RB/fsync_wait" "$SLOW_DIR/sync.bin" 1 60 ...
#
# The host's disk may be a fast NVMe, a slow network volume or tmpfs: a
# test that measured I/O wait on it would fail on one and measure nothing
# on another.  Here the disk is tests/resources/slowdisk (a FUSE file
# whose every write request is held WRITE_US and every fsync FSYNC_US
# microseconds, one request at a time), a loop device over it and ext4 on
# that, mounted at $SLOW_DIR.  An fdatasync of new data on it waits in
# the block layer (io_schedule, jbd2) for at least one cache flush, so at
# least FSYNC_US, whatever the machine: slow_disk_check_truth holds the
# program's own clock to that floor.
#
# Needs root, /dev/fuse, losetup, mkfs.ext4 and the slowdisk binary
# (libfuse3); without one of them slow_disk_setup fails and says which in
# $SLOW_DISK_WHY.  Everything is undone by slow_disk_teardown, which
# test_done and the EXIT trap call; a mount left by a killed test lives
# under its tests/trash/ directory and is taken down by the next run.

SLOW_DIR=
SLOW_DISK_WHY=
SLOW_DISK_FSYNC_US=0
_slow_root=
_slow_loop=
_slow_pid=

# The environment may override the set latency (to show a test passes
# both on a disk that takes 40 ms for 60 fdatasyncs and one that takes
# 4 s): PROF_TEST_SLOWDISK_US="WRITE_US FSYNC_US".
slow_disk_setup() {
	local write_us=${1:-500} fsync_us=${2:-5000} bin="$BUILD_DIR/tests/resources/slowdisk" i
	if [ -n "${PROF_TEST_SLOWDISK_US:-}" ]; then
		set -- $PROF_TEST_SLOWDISK_US
		write_us=$1 fsync_us=$2
	fi
	SLOW_DISK_WHY=
	[ "$(id -u)" = 0 ] || SLOW_DISK_WHY="a disk with a set latency needs root (loop device, mount)"
	[ -n "$SLOW_DISK_WHY" ] || [ -c /dev/fuse ] || SLOW_DISK_WHY="no /dev/fuse: cannot build a disk with a set latency"
	[ -n "$SLOW_DISK_WHY" ] || [ -x "$bin" ] || SLOW_DISK_WHY="tests/resources/slowdisk not built (libfuse3-dev missing)"
	[ -n "$SLOW_DISK_WHY" ] || command -v losetup >/dev/null || SLOW_DISK_WHY="losetup missing"
	[ -n "$SLOW_DISK_WHY" ] || command -v mkfs.ext4 >/dev/null || SLOW_DISK_WHY="mkfs.ext4 missing"
	[ -n "$SLOW_DISK_WHY" ] || [ -e /dev/loop-control ] || SLOW_DISK_WHY="no loop devices (/dev/loop-control)"
	[ -z "$SLOW_DISK_WHY" ] || return 1

	_slow_root="$TRASH/.slowdisk"
	mkdir -p "$_slow_root/fuse" "$_slow_root/mnt" || return 1
	"$bin" "$_slow_root/fuse" 256 "$write_us" "$fsync_us" >"$_slow_root/log" 2>&1 &
	_slow_pid=$!
	trap slow_disk_teardown EXIT
	for i in $(seq 100); do
		[ -f "$_slow_root/fuse/disk" ] && break
		kill -0 "$_slow_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! [ -f "$_slow_root/fuse/disk" ]; then
		SLOW_DISK_WHY="the FUSE disk did not come up: $(head -c 200 "$_slow_root/log")"
		slow_disk_teardown
		return 1
	fi
	_slow_loop=$(losetup -f --show "$_slow_root/fuse/disk" 2>"$_slow_root/log") &&
	mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$_slow_loop" >>"$_slow_root/log" 2>&1 &&
	mount -t ext4 "$_slow_loop" "$_slow_root/mnt" 2>>"$_slow_root/log" || {
		SLOW_DISK_WHY="cannot put ext4 on a loop device here: $(tail -n 1 "$_slow_root/log")"
		slow_disk_teardown
		return 1
	}
	SLOW_DIR="$_slow_root/mnt"
	SLOW_DISK_FSYNC_US=$fsync_us
	say "disk with a set latency: $_slow_loop over slowdisk (write ${write_us} us, fsync ${fsync_us} us), ext4 at $SLOW_DIR"
}

slow_disk_teardown() {
	[ -n "$_slow_root" ] || return 0
	mountpoint -q "$_slow_root/mnt" 2>/dev/null && umount "$_slow_root/mnt"
	[ -n "$_slow_loop" ] && losetup -d "$_slow_loop" 2>/dev/null
	mountpoint -q "$_slow_root/fuse" 2>/dev/null && { fusermount3 -u "$_slow_root/fuse" 2>/dev/null || umount -l "$_slow_root/fuse"; }
	[ -n "$_slow_pid" ] && { kill "$_slow_pid" 2>/dev/null; wait "$_slow_pid" 2>/dev/null; }
	_slow_root= _slow_loop= _slow_pid= SLOW_DIR=
	return 0
}

# slow_disk_check_truth BLOCKED_NS ROUNDS: the program's own clock saw
# at least ROUNDS set fsync latencies, so the disk really was this slow
# and the test is not measuring nothing (tmpfs, a cache that lies).
slow_disk_check_truth() {
	local floor=$(( $2 * SLOW_DISK_FSYNC_US * 1000 ))
	[ "$1" -ge "$floor" ] ||
		{ echo "the program blocked $1 ns in $2 fdatasyncs, under the disk's floor of $floor ns"; return 1; }
}

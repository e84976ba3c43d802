#!/bin/bash
# t5110-perfdata-kallsyms-cache: kernel frames come from a cache of
# /proc/kallsyms in $XDG_CACHE_HOME/prof (or ~/.cache/prof) once a run has
# made it.  A valid cache is used as it is (the file is not rewritten: same
# inode); a truncated, garbage or other-boot cache is ignored and rebuilt;
# an unwritable cache place or a planted symlink changes nothing in the
# output.  The report must be the same in every case.
. "$(dirname "$0")/lib/test-lib.sh"

command -v perf >/dev/null || skip_all "perf is not installed"
grep -qv '^0000000000000000 ' <(head -1 /proc/kallsyms) ||
	skip_all "kallsyms addresses are hidden (kptr_restrict)"
perf record -q -e cpu-clock -o probe.data -- true >/dev/null 2>&1 ||
	skip_all "perf record -e cpu-clock is refused here"

# kernel time: reading /proc/kallsyms is formatted in the kernel
perf record -q -e cpu-clock -F 999 -g -o k.data -- \
	sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; cat /proc/kallsyms >/dev/null' \
	>/dev/null 2>&1 || skip_all "perf record failed"

CACHE=$PWD/cache/prof/kallsyms
report() {	# report OUT: folded report of k.data with the cache under ./cache
	XDG_CACHE_HOME=$PWD/cache "$PROF" report -i k.data --format=folded >"$1" 2>err.txt
	st=$?
	cat err.txt
	return $st
}
inode() { stat -c %i "$CACHE"; }

test_expect_success 'first report makes the cache (mode 600) and shows kernel frames' '
	report first.txt &&
	test -f "$CACHE" && test "$(stat -c %a "$CACHE")" = 600 &&
	grep -q "_\[k\]" first.txt
'
test_expect_success 'a valid cache is used as it is, same report' '
	before=$(inode) &&
	report again.txt && cmp first.txt again.txt &&
	test "$(inode)" = "$before"
'
# Rebuilt, not the same size: BPF programs loaded or unloaded meanwhile
# (by systemd, or any tool) change /proc/kallsyms, and the cache with it.
test_expect_success 'a truncated cache is ignored and rebuilt' '
	size=$(stat -c %s "$CACHE") &&
	truncate -s $((size / 2)) "$CACHE" &&
	report cut.txt && cmp first.txt cut.txt &&
	test "$(stat -c %s "$CACHE")" -gt $((size / 2)) &&
	head -c 8 "$CACHE" | grep -q PROFKSY1 &&
	before=$(inode) && report again2.txt && test "$(inode)" = "$before"
'
test_expect_success 'a garbage cache of the right size is ignored and rebuilt' '
	size=$(stat -c %s "$CACHE") &&
	head -c "$size" /dev/urandom >"$CACHE" &&
	report garbage.txt && cmp first.txt garbage.txt &&
	head -c 8 "$CACHE" | grep -q PROFKSY1
'
test_expect_success 'a cache of another boot is ignored and rebuilt' '
	printf zzzzzzzz | dd of="$CACHE" bs=1 seek=8 conv=notrunc 2>/dev/null &&
	report stale.txt && cmp first.txt stale.txt &&
	test "$(head -c 44 "$CACHE" | tail -c 36)" = "$(cat /proc/sys/kernel/random/boot_id)"
'
test_expect_success 'an unwritable cache place: same report, nothing said' '
	XDG_CACHE_HOME=/dev/null/x "$PROF" report -i k.data --format=folded >nodir.txt 2>err.txt &&
	cmp first.txt nodir.txt && test ! -s err.txt
'
test_expect_success 'a symlink planted at the cache path is not written through' '
	echo precious >victim &&
	rm -f "$CACHE" && ln -s "$PWD/victim" "$CACHE" &&
	report link.txt && cmp first.txt link.txt &&
	test "$(cat victim)" = precious && test ! -L "$CACHE"
'
test_expect_success 'without XDG_CACHE_HOME the cache goes to ~/.cache/prof' '
	env -u XDG_CACHE_HOME HOME=$PWD/home "$PROF" report -i k.data --format=folded >home.txt &&
	cmp first.txt home.txt && test -f home/.cache/prof/kallsyms
'
test_done

#!/bin/bash
# t1400-record-heap: `prof record --heap` on the planted heap workload
# (tests/workloads/heap.c: a 4 MiB leak in leak_planted, 20000 temporary
# 64-byte blocks in temp_planted, a 64 MiB peak in peak_planted), which
# prints its own truth.  Per function, prof's allocation count, live bytes
# at the end (the leak) and bytes live at the peak must be within 10% of
# it: launched with glibc malloc, jemalloc and tcmalloc (preloaded by the
# user), and attached (-p) to a running process.  A static binary gets one
# warning and a CPU profile.
#
# False-failure chance: launched, at --heap-rate 128 a 64-byte block is
# sampled with p = 1 - exp(-64/128) = 0.393, so temp_planted's estimated
# count (and bytes) has a relative standard error of
# sqrt((1-p) / (p^2 * 20000)) = 1.4%: 10% is 7.1 standard errors, a
# chance under 1e-11 per figure.  A 1 KiB block is sampled with
# p = 1 - exp(-8) = 0.9997 (error 0.03%), a 1 MiB one with certainty.
# Attached at --heap-rate 1 (or without BPF), every call is recorded: the
# figures are exact.  Attached at --heap-rate 128, BPF programs keep a
# 64-byte block with p = 64/128 = 0.5 exactly (bpf_heap.c's u * 128 <
# 64 << 32), weight 2, so temp_planted's count is 2 x Binomial(20000,
# 0.5): outside 10% only if the kept share leaves 45-55%, `bounds.py
# share 20000 50 5` = 1.6e-45; 1 KiB and 1 MiB blocks (p = 1) and every
# free of a kept block are exact.  The attached runs add realloc_planted
# (20000 x realloc(NULL, 64), realloc to 256 bytes, free: glibc's first
# realloc jumps to malloc, one allocation): 2 x Binomial(20000, 0.5) +
# 20000 against 40000, outside 10% only if the kept share leaves 40-60%,
# `bounds.py share 20000 50 10` = 2.9e-177.
# The aligned entry points (the launched aligned run, and the attached
# runs) add pmalign_planted (1024 posix_memalign of 1 KiB kept, 1024
# more freed at once) and 1024 kept 1 KiB blocks each from
# posix_memalign into a static array, aligned_alloc, memalign, valloc,
# pvalloc and reallocarray.  Launched at 128 a 1 KiB block's p = 0.9997
# gives 1024 of them a count error of sqrt(e^-8 / 1024) = 0.06%: 10% is
# 170 standard errors.  Attached by BPF at 128, 1 KiB blocks are kept
# with certainty (and their frees): exact.  Exact runs are exact.
# The leak view and the snapshot diff (the workload's phases) weigh 1 KiB
# blocks (leak_planted: 4096, count error sqrt(e^-8 / 4096) = 0.03%), 4 KiB
# and 1 MiB ones (sampled with certainty): 10% is over 300 standard
# errors.  Which blocks fall before a phase mark is not sampled: the mark's
# time is taken between the phases, so every allocation is on its side.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
[ -r /sys/bus/event_source/devices/uprobe/type ] || skip_all "no uprobe PMU in this kernel"
CHECK="python3 $TOP/tests/workloads/heapcheck.py"

# heap_record NAME PROF-RECORD-ARGS...: records NAME.data (truth in
# NAME.truth), again (3 tries) when the kernel dropped heap samples: a
# full ring is reported, not hidden, and the figures of a recording with
# losses are low by what was lost (a loaded machine whose reader thread
# did not run in time lost 773 of 12,000 samples).
heap_record() {
	local name=$1 try
	shift
	for try in 1 2 3; do
		"$PROF" record -o $name.data "$@" >$name.truth 2>$name.err
		cat $name.err
		grep -q "heap: .* 0 samples lost" $name.err && return 0
		say "heap samples lost, try $try of 3"
	done
	return 1
}

# stale_uprobes: definitions of a prof that is gone (a background process
# of prof removes them once the kernel released the events: 55-140 ms
# per event, one at a time).
stale_uprobes() {
	local root pid
	root=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
	[ -n "$root" ] || return 1
	for pid in $(sed -n 's/.*prof_heap\/p\([0-9]*\)_.*/\1/p' "$root/uprobe_events" | sort -u); do
		kill -0 "$pid" 2>/dev/null || return 0
	done
	return 1
}

# attach_record [COMMAND-PREFIX...]: (RATE_ARGS: --heap-rate) the workload waits for a file, prof
# attaches with -p, the file is created; retried like heap_record.  The
# workload runs its realloc and aligned-entry-point parts too.  A program
# with jemalloc calls glibc's pvalloc (jemalloc has none), outside the
# probed allocator: no truth for it then.
attach_record() {
	local try T P
	for try in 1 2 3; do
		# a retry starts once the last try's probes are gone (seen once:
		# a retry under load whose recording missed its last third)
		[ $try = 1 ] || for _ in $(seq 60); do stale_uprobes || break; sleep 0.5; done
		rm -f go
		"$WL/heap" 20000 go realloc+aligned >att.truth &
		T=$!
		for _ in $(seq 100); do grep -q "^heap: ready" att.truth && break; sleep 0.1; done
		"$@" "$PROF" record --heap $RATE_ARGS -o att.data -p $T 2>att.err &
		P=$!
		wait_recording $P || return 1
		touch go
		wait $T && wait $P || return 1
		cat att.err
		case "${LD_PRELOAD:-}" in *jemalloc*) sed -i /pvalloc_planted/d att.truth ;; esac
		grep -q "heap: .* 0 samples lost" att.err && return 0
		say "heap samples lost, try $try of 3"
	done
	# Attached, nothing can pause the program for the recorder (launched,
	# the program waits for it): a reader starved of CPU loses records, and
	# says so, in a recording whose counts then cannot be judged (under a
	# 1-CPU cap beside five other tests: 26-646 of ~52,000 lost, 3 of 3).
	skip_case "the recorder lost heap samples in 3 of 3 tries: this machine left it too little CPU"
}

reports() {	# DATA PREFIX
	for m in allocs alloc-bytes live-bytes peak-bytes; do
		"$PROF" report -i "$1" --metric=$m --format=json >"$2.$m.json" || return 1
	done
}

test_expect_success 'launched, glibc malloc: count, leak and peak per function within 10%' '
	heap_record glibc --heap-rate 128 -- "$WL/heap" 20000 &&
	reports glibc.data glibc && $CHECK glibc.truth glibc 0.10 allocs live peak
'

test_expect_success 'launched: posix_memalign, aligned_alloc, memalign, valloc, pvalloc, reallocarray within 10%' '
	heap_record aligned --heap-rate 128 -- "$WL/heap" 20000 - aligned &&
	reports aligned.data aligned && $CHECK aligned.truth aligned 0.10 allocs live
'

test_expect_success 'the text report says the rate and the standard errors' '
	"$PROF" report -i glibc.data --metric=peak-bytes --stdio >glibc.txt &&
	check_contains glibc.txt "^# heap: one sample per 128 B allocated on average (preloaded sampler)" &&
	check_contains glibc.txt "^# heap: allocs [0-9]* +- [0-9]*, alloc-bytes .* peak-bytes .* +- " &&
	check_contains glibc.txt "Bytes  Function"
'

test_expect_success 'JSON has the whole-heap estimates, HTML the live heap per process' '
	"$PROF" report -i glibc.data --format=json --metric=allocs >glibc.json &&
	python3 -c "
import json, sys
h = json.load(open(\"glibc.json\"))[\"heap\"]
print(h)
ok = h[\"rate_bytes\"] == 128 and abs(h[\"live_bytes\"] - 4194304) < 0.1 * 4194304 and h[\"allocs_err\"] > 0
sys.exit(0 if ok else 1)
" &&
	"$PROF" report -i glibc.data --format=html -o glibc.html &&
	grep -q "\"heap\":\[\[[0-9]*,[0-9.]*,[0-9]*\]" glibc.html &&
	grep -q "\"alloc_b\":" glibc.html && grep -q "<option value=\"live-bytes\">" glibc.html
'

# secs NAME: the phase mark NAME of phases.truth in seconds from the
# recording's start (the JSON's start_ns); age NAME: from it to the end.
secs() {
	python3 - "$1" <<-\EOF
	import json, re, sys
	d = json.load(open("phases.json"))
	t = int(re.search(r"phase %s t=(\d+)" % sys.argv[1], open("phases.truth").read()).group(1))
	print("%.6f" % ((t - d["start_ns"]) / 1e9))
	EOF
}
age() {
	python3 - "$1" <<-\EOF
	import json, re, sys
	d = json.load(open("phases.json"))
	t = int(re.search(r"phase %s t=(\d+)" % sys.argv[1], open("phases.truth").read()).group(1))
	print("%.6f" % ((d["end_ns"] - t) / 1e9))
	EOF
}
# truth FILE FUNCTION=ALLOCS:LIVE...: heapcheck truth lines (others 0)
truth() {
	local f=$1 fn
	shift
	: >$f
	for fn in leak_planted temp_planted peak_planted young_planted; do
		local a=0 l=0 kv
		for kv in "$@"; do
			[ "${kv%%=*}" = $fn ] && a=${kv#*=} && l=${a#*:} && a=${a%:*}
		done
		echo "truth $fn allocs=$a bytes=0 live=$l peak=0" >>$f
	done
}
# leaks PREFIX ARGS: the leak view's allocs and live-bytes as JSON
leaks() {
	local pre=$1
	shift
	"$PROF" report -i phases.data --format=json --metric=allocs "$@" >$pre.allocs.json &&
	"$PROF" report -i phases.data --format=json "$@" >$pre.live-bytes.json
}
# moved FOLDED: per planted function, head minus base of the snapshot diff
moved() {
	awk '{ n = split($1, f, ";"); d[f[n]] += $3 - $2 }
	     END { for (k in d) if (k ~ /_planted$/) print k, d[k] }' "$1" | sort
}

test_expect_success 'the leak view: live at the end and older than --min-age, per function' '
	heap_record phases --heap-rate 128 -- "$WL/heap" 20000 - phases &&
	"$PROF" report -i phases.data --format=json >phases.json &&
	leaks old --min-age=$(age after_peak) &&
	truth old.truth leak_planted=4096:4194304 && $CHECK old.truth old 0.10 allocs live &&
	leaks all --min-age=0 &&
	truth all.truth leak_planted=4096:4194304 young_planted=256:1048576 &&
	$CHECK all.truth all 0.10 allocs live &&
	"$PROF" report -i phases.data --min-age=$(age after_peak) >old.txt &&
	check_contains old.txt "^# heap: showing blocks live at the end, allocated at least [0-9.]* s before it" &&
	check_contains old.txt "^# metric: live-bytes" &&
	"$PROF" report -i phases.data --min-age=$(age after_peak) --format=html -o old.html &&
	grep -q "<tr><th>Heap</th><td>blocks live at the end, allocated at least" old.html
'

test_expect_success 'the snapshot diff: live at B minus live at A, by stack' '
	"$PROF" report -i phases.data --since=$(secs after_leak) --at=$(secs mid_peak) \
		--format=folded >grow.folded &&
	moved grow.folded >grow.txt && cat grow.txt &&
	check_contains grow.txt "^peak_planted 67108864\$" &&
	check_not_contains grow.txt "^leak_planted [1-9]" &&
	check_not_contains grow.txt "^young_planted [1-9]" &&
	"$PROF" report -i phases.data --since=$(secs mid_peak) --format=folded >shrink.folded &&
	moved shrink.folded >shrink.txt && cat shrink.txt &&
	check_contains shrink.txt "^peak_planted -67108864\$" &&
	check_contains shrink.txt "^young_planted 1048576\$" &&
	"$PROF" report -i phases.data --at=$(secs mid_peak) --format=json --metric=live-bytes >mid.live-bytes.json &&
	truth mid.truth leak_planted=0:4194304 peak_planted=0:67108864 &&
	$CHECK mid.truth mid 0.10 live
'

# snap_error ARGS... PATTERN: the report fails with status 2 and one
# error line matching PATTERN.
snap_error() {
	local n=$(($# - 1))
	"$PROF" report -i phases.data "${@:1:$n}" >err.out 2>err.txt
	[ $? = 2 ] && one_error err.txt "${!#}" && [ ! -s err.out ]
}

# The list of live blocks is written last, with its length in the meta
# data: a file cut anywhere before its end has no list or part of it.
test_expect_success 'the leak view of a recording cut short: one error line' '
	head -c $(($(stat -c %s phases.data) / 2)) phases.data >cut.data &&
	{ "$PROF" report -i cut.data --min-age=0 >cut.out 2>cut.err; test $? = 2; } &&
	one_error cut.err "does not say which blocks were live at its end (the recording was cut short)"
'

test_expect_success 'snapshots: a bad combination gets one line' '
	snap_error --min-age=1 --metric=cpu "show heap metrics, not --metric=cpu" &&
	snap_error --min-age=1 --at=1 "takes no --at or --since" &&
	snap_error --since=1 --format=json "makes a diff" &&
	snap_error --since=2 --at=1 "is after --at"
'

if command -v go >/dev/null; then
	test_expect_success 'go tool pprof reads the heap export (inuse_space, alloc_objects)' '
		"$PROF" report -i glibc.data --metric=live-bytes --format=pprof -o glibc.pb.gz &&
		go tool pprof -sample_index=inuse_space -top glibc.pb.gz >inuse.txt 2>&1 &&
		cat inuse.txt && check_contains inuse.txt "^Type: inuse_space" &&
		grep "leak_planted\$" inuse.txt | grep -q "^ *4MB" &&
		go tool pprof -sample_index=alloc_objects -top glibc.pb.gz >objects.txt 2>&1 &&
		check_contains objects.txt "^Type: alloc_objects" &&
		go tool pprof -raw glibc.pb.gz >raw.txt 2>&1 &&
		check_contains raw.txt "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"
	'
else
	test_skip 'go tool pprof reads the heap export' 'go is not installed'
fi

for lib in libjemalloc.so.2 libtcmalloc_minimal.so.4; do
	if ! ldconfig -p | grep -q "$lib"; then
		test_skip "launched with $lib" "$lib is not installed"
		continue
	fi
	test_expect_success "launched with LD_PRELOAD=$lib: within 10%" '
		LD_PRELOAD=$lib heap_record pre --heap-rate 128 -- "$WL/heap" 20000 &&
		reports pre.data pre && $CHECK pre.truth pre 0.10 allocs live peak
	'
done

for lib in "" libjemalloc.so.2 libtcmalloc_minimal.so.4; do
	if [ -n "$lib" ] && ! ldconfig -p | grep -q "$lib"; then
		test_skip "attached to a process using $lib" "$lib is not installed"
		continue
	fi
	test_expect_success "attached (-p) to a running process${lib:+ using $lib}, --heap-rate 1: exact, posix_memalign too, the leak view too" '
		RATE_ARGS="--heap-rate 1" LD_PRELOAD=$lib attach_record &&
		check_contains att.err "every call, by uprobes on the allocator" &&
		check_not_contains att.err "records every allocator call" &&
		check_not_contains att.err "posix_memalign blocks not recorded" &&
		"$PROF" report -i att.data --stdio --header >att.txt &&
		check_contains att.txt "heap_allocator: .*${lib:-libc.so}" &&
		reports att.data att && $CHECK att.truth att 0.001 allocs live peak &&
		"$PROF" report -i att.data --min-age=0 --format=json >attold.live-bytes.json &&
		"$PROF" report -i att.data --min-age=0 --format=json --metric=allocs >attold.allocs.json &&
		truth attold.truth leak_planted=4096:4194304 && $CHECK attold.truth attold 0.001 allocs live
	'
	test_expect_success "attached (-p)${lib:+ using $lib}, sampled by BPF at --heap-rate 128: within 10%, posix_memalign too" '
		RATE_ARGS="--heap-rate 128" LD_PRELOAD=$lib attach_record &&
		check_contains att.err "about one per rate bytes, by BPF on uprobes on the allocator" &&
		check_not_contains att.err "posix_memalign blocks not recorded" &&
		"$PROF" report -i att.data --stdio --header >att.txt &&
		check_contains att.txt "heap_mode: uprobes on the allocator, sampled by BPF" &&
		reports att.data att && $CHECK att.truth att 0.10 allocs live peak
	'
done

# Without CAP_BPF (setpriv drops it, and CAP_SYS_ADMIN, from the bounding
# set) the programs cannot be loaded: every call, exactly, said once on
# stderr and in the header.  posix_memalign's blocks come from the stack
# its return probe copies: those stored into a static array are not
# recorded, and said (pmalign_far_planted: 1024).
if command -v setpriv >/dev/null; then
	test_expect_success 'attached without CAP_BPF: every call, exact, said once' '
		RATE_ARGS= attach_record setpriv --bounding-set -bpf,-sys_admin &&
		test "$(grep -c "warning: --heap -p records every allocator call with its stack" att.err)" = 1 &&
		check_contains att.err "every call, by uprobes on the allocator" &&
		check_contains att.err "warning: heap: 1024 posix_memalign blocks not recorded: the pointer went to memory outside the caller.s stack" &&
		"$PROF" report -i att.data --stdio --header >att.txt &&
		check_contains att.txt "heap_mode: uprobes on the allocator, every call: cannot load its BPF programs" &&
		sed -i "s/^truth pmalign_far_planted .*/truth pmalign_far_planted allocs=0 bytes=0 live=0 peak=0/" att.truth &&
		reports att.data att && $CHECK att.truth att 0.001 allocs live peak
	'
else
	test_skip 'attached without CAP_BPF: every call, exact, said once' 'setpriv is not installed'
fi

test_expect_success 'a static binary: one warning, the CPU profile goes on' '
	"$PROF" record --heap -o static.data -- "$WL/heap-static" 20000 >static.truth 2>static.err &&
	cat static.err &&
	test "$(grep -c "warning: no heap profile in this recording: .*statically linked" static.err)" = 1 &&
	"$PROF" report -i static.data --stdio >static.txt && check_contains static.txt "Samples  Function" &&
	{ "$PROF" report -i static.data --min-age=1 2>static.err2; test $? = 2; } &&
	one_error static.err2 "has no heap samples (record with --heap)"
'

# The uprobe PMU's inherited events broke every fork and pthread_create
# of the profiled program (EFAULT); tracefs uprobes do not.
test_expect_success 'attached with --children: one warning, the children are not in the heap profile' '
	sleep 30 & S=$!
	"$PROF" record --heap -p $S --children -d 0.5 -o kids.data 2>kids.err; st=$?
	kill $S; cat kids.err && test $st = 0 &&
	test "$(grep -c "warning: --heap records the allocations of process $S, not those of its children already running" kids.err)" = 1
'

test_expect_success 'a program that forks, execs and starts threads runs normally' '
	"$PROF" record --heap -o fork.data -- "$WL/forkexec" 1 >fork.out 2>fork.err &&
	cat fork.err && check_not_contains fork.err "Bad address" &&
	"$PROF" record --heap -o thr.data -- "$WL/threads" 1 >thr.out 2>thr.err &&
	"$PROF" report -i thr.data --format=json >thr.json &&
	grep -q "\"comm\": \"wl-beta\"" thr.json &&
	"$PROF" report -i fork.data --format=json >fork.json &&
	grep -q "\"comm\": \"split\"" fork.json
'

# flow_state FILE: "budget settled issued" of the allocation probe, read
# from the pacing page (src/record/preload/flow.h: budget[0] at byte 0,
# settled[0] at 64, issued[0] at 128).
flow_state() {
	python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read(136)
print(*(struct.unpack_from("<Q", b, o)[0] for o in (0, 64, 128)))' "$1"
}

# stopped_record: the planted workload launched under prof at --heap-rate
# 128, prof stopped (SIGSTOP) once the workload was told to go, until the
# workload has been over its budget for a second without a call; then prof
# goes on.  Whatever fails, prof is continued and the workload let go.
stopped_record() {
	local P T flow issued ok=0
	rm -f go
	"$PROF" record --heap --heap-rate 128 -o paced.data -- "$WL/heap" 20000 go >paced.truth 2>paced.err &
	P=$!
	for _ in $(seq 100); do grep -q "^heap: ready" paced.truth && break; sleep 0.1; done
	T=$(sed -n "s/^heap: ready pid=//p" paced.truth)
	flow=$(tr "\0" "\n" </proc/${T:-0}/environ | sed -n "s/^PROF_HEAP_FLOW=//p")
	if [ -n "$flow" ] && wait_recording $P && kill -STOP $P && touch go; then
		for _ in $(seq 600); do
			set -- $(flow_state "$flow")
			[ "$1" -gt 0 ] && [ $(($3 - $2)) -gt "$1" ] && break
			sleep 0.1
		done
		say "stopped recorder: budget $1, settled $2, issued $3"
		issued=$3
		sleep 1
		set -- $(flow_state "$flow")
		[ $((issued - $2)) -gt "$1" ] && [ "$3" = "$issued" ] && ok=1
	fi
	touch go
	kill -CONT $P
	wait $P && [ $ok = 1 ]
}

# The condition built: no pump reads the rings (a ring holds ~2,000
# samples) while the launched program makes its ~12,000.  The program
# must stop at its budget and wait: nothing lost, the figures as in the
# first test (its false-failure chance).  Without pacing, the kernel drops
# thousands of samples and the program never waits.
test_expect_success 'launched: a program ahead of a recorder that cannot run waits for it, nothing is lost' '
	stopped_record &&
	cat paced.err &&
	grep -q "heap: .* 0 samples lost" paced.err &&
	grep -q "heap: the program paused" paced.err &&
	reports paced.data paced && $CHECK paced.truth paced 0.10 allocs live peak
'

# A prof killed before it removed its probes leaves their definitions; the
# next --heap removes those whose prof is gone (the name carries its pid).
# The planted one's pid is above any pid_max (2^22), and this script's own
# pid makes it unique: the definitions are the machine's, and a second
# suite running beside this one plants its own.
TRACEFS=$(awk '$3 == "tracefs" {print $2; exit}' /proc/mounts)
GONE=prof_heap/p$((4194304 + $$))_0
if [ -n "$TRACEFS" ]; then
	test_expect_success 'the definitions of a prof that is gone go with the next --heap' '
		libc=$(ldd "$WL/heap" | sed -n "s/.*=> \(\/[^ ]*libc\.so\.6\) .*/\1/p") && [ -n "$libc" ] &&
		echo "p:$GONE $libc:0x1000" >>"$TRACEFS/uprobe_events" &&
		grep -q "$GONE " "$TRACEFS/uprobe_events" &&
		"$PROF" record -q --heap -o gone.data -- "$WL/heap" 200 - >/dev/null &&
		! grep "$GONE " "$TRACEFS/uprobe_events"
	'
else
	test_skip 'the definitions of a prof that is gone go with the next --heap' 'no tracefs mounted here'
fi

test_expect_success 'no uprobe definitions are left behind' '
	for _ in $(seq 60); do stale_uprobes || break; sleep 0.5; done &&
	! stale_uprobes
'

test_expect_success 'a run without --heap has no heap header' '
	check_not_contains static.txt "^# heap:"
'

test_done

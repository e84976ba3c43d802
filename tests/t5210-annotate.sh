#!/bin/bash
# t5210-annotate: `prof annotate FUNCTION` on a real recording of the
# phases workload (work_function's loop body spans lines 27-30 of
# tests/workloads/phases.c): per-line self costs and per-instruction
# costs each add up to the function's self samples in `prof report`,
# the source text and the disassembly (capstone) are shown (without it,
# when its library cannot be loaded, the reason), the same on
# a perf.data import; and source reading obeys the policy: a hostile
# prof.data naming /etc/shadow or a secret file, a symlink out of a
# --source-root, or ".." never gets a file's text printed or embedded in
# an HTML report.
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/lib/slowdisk.sh"
# The I/O phase's fdatasyncs go to a disk with a set latency when one can
# be built (tests/lib/slowdisk.sh), so there is I/O wait to see on any
# host disk; otherwise to the trash's own disk.
IODIR=$TRASH
slow_disk_setup 500 5000 && IODIR=$SLOW_DIR
require_perf_events
REWRITE="python3 $TOP/tests/lib/profdata-rewrite.py"
SRC="$TOP/tests/workloads/phases.c"

# sums FILE: "self line_sum insn_sum" from an annotate listing
sums() {
	awk '/^# self:/ {self=$3} /^# source:/ {sec="src"} /^# disassembly:/ {sec="asm"}
	     /^# instructions:/ {sec="asm"}
	     sec=="src" && $1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {ls+=$1}
	     sec=="asm" && $1 ~ /^[0-9]+$/ && NF>=3 {is+=$1}
	     END {print self+0, ls+0, is+0}' "$1"
}

test_expect_success 'record the phases workload' '
	"$PROF" record -q -o ph.data -- "$WL/phases" "$IODIR" 1.5 >/dev/null &&
	"$PROF" report -i ph.data >report.txt
'

# Sampling (tests/README.md): work_function gets ~59 samples (~1 a ms of
# its CPU), 10 or fewer with `bounds.py poisson-below 59 11` = 4e-15; all
# 59 fell on loop lines 27-30 (18, 24, 17), so a line outside the loop
# being the hottest would need ~15 of them: no sampling chance worth a
# number.  The sums are compared exactly.
test_expect_success 'per-line and per-instruction costs add up to the self samples' '
	"$PROF" annotate -i ph.data --stdio work_function >ann.txt && head -30 ann.txt &&
	want=$(awk "\$4 == \"work_function\" {print \$3}" report.txt) &&
	set -- $(sums ann.txt) && say "report $want, annotate self $1, lines $2, insns $3" &&
	test "$want" -gt 10 && test "$1" = "$want" && test "$2" = "$want" && test "$3" = "$want"
'

test_expect_success 'the hot lines are the loop body, with their source text' '
	grep -q "^ *[0-9]* *[0-9]* *30  *	*wl_sink = x + y;" ann.txt &&
	hot=$(awk "/^# source:/ {s=1; next} /^#/ {s=0} s && \$1 ~ /^[0-9]+\$/ && \$1 > max {max=\$1; line=\$3} END {print line}" ann.txt) &&
	say "hottest line $hot" && test "$hot" -ge 27 && test "$hot" -le 30
'

test_expect_success 'the disassembly comes from the binary with samples on instructions' '
	grep -q "^# disassembly: .*/phases (capstone" ann.txt &&
	grep -q "phases.c:29" ann.txt &&
	awk "/^# disassembly:/ {s=1} s && \$1 > 0 && \$3 ~ /^[a-z]/" ann.txt | grep -q .
'

# capstone is opened when annotate first disassembles: where its library
# cannot be loaded (here /dev/null bound over every libcapstone.so.N, in
# a mount namespace of its own), the listing goes on without instructions
# and says why.
CAPSTONE_LIBS=$(ldconfig -p 2>/dev/null | awk "/libcapstone\\.so\\.[0-9]+ .*=> / {print \$NF}" | sort -u)
if grep -q "^# disassembly: .*(capstone" ann.txt && [ "$(id -u)" = 0 ] && [ -n "$CAPSTONE_LIBS" ] &&
	unshare -m true 2>/dev/null; then
	test_expect_success 'capstone that cannot be loaded: addresses and lines, and why' '
		unshare -m sh -c "for l in $(echo $CAPSTONE_LIBS); do mount --bind /dev/null \$l || exit 1; done &&
			\"\$0\" annotate -i ph.data work_function --stdio" "$PROF" >nocs.txt 2>nocs.err &&
		check_contains nocs.txt "^# instructions: no disassembly (capstone, the disassembler, could not be loaded)" &&
		check_not_contains nocs.txt "^# disassembly:" && test ! -s nocs.err
	'
else
	test_skip 'capstone that cannot be loaded' 'needs a build with capstone, root, unshare -m and a libcapstone.so.N in ldconfig'
fi

test_expect_success 'off-CPU metric: the I/O phase line carries the I/O wait' '
	"$PROF" annotate -i ph.data --metric io-wait io_phase >io.txt 2>&1 || {
		grep -q "no io-wait samples" io.txt && say "no off-CPU data here"; exit 0; }
	grep "fdatasync(fd);" io.txt | awk "{exit !(\$2 > 0)}"
'

test_expect_failure_exit 'an unknown function is an error' 2 '
	"$PROF" annotate -i ph.data no_such_function
'
test_expect_failure_exit 'a missing FUNCTION is a usage error' 2 '
	"$PROF" annotate -i ph.data
'

# perf itself aborts now and then on a loaded machine: one retry, then a
# skip that says so (the import is what is tested, not perf)
perf_rc=1
for try in 1 2; do
	command -v perf >/dev/null 2>&1 || break
	perf record -q -e cpu-clock -F 999 --call-graph dwarf -o perf.data -- \
		"$WL/phases" "$TRASH" 1 >/dev/null 2>perf.err && { perf_rc=0; break; }
	perf_rc=$?
done
if [ "$perf_rc" = 0 ]; then
	test_expect_success 'perf.data import: the same sums' '
		"$PROF" report -i perf.data >preport.txt &&
		"$PROF" annotate -i perf.data work_function >pann.txt &&
		want=$(awk "\$4 == \"work_function\" {print \$3}" preport.txt) &&
		set -- $(sums pann.txt) && say "report $want, annotate $1 $2 $3" &&
		test "$want" -gt 10 && test "$1" = "$want" && test "$2" = "$want" && test "$3" = "$want"
	'
else
	test_skip 'perf.data import: the same sums' "perf record failed here (exit $perf_rc, twice)"
fi

# --- the hostile prof.data: source paths rewritten -------------------------
printf "TOP-SECRET-%s\n" 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 \
	21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 >secret.txt

test_expect_success 'a recording naming /etc/shadow or a secret file shows neither' '
	$REWRITE ph.data shadow.data "$SRC=/etc/shadow" &&
	"$PROF" annotate -i shadow.data work_function >shadow.txt &&
	grep -q "^# source: /etc/shadow (text not shown: not allowed" shadow.txt &&
	! grep -q "^root:" shadow.txt &&
	$REWRITE ph.data secret.data "$SRC=$TRASH/secret.txt" &&
	"$PROF" annotate -i secret.data work_function >secret.out &&
	! grep -q TOP-SECRET secret.out &&
	"$PROF" annotate -i secret.data --source-root /nonexistent work_function >secret2.out &&
	! grep -q TOP-SECRET secret2.out
'

test_expect_success '--source-root: found below the root, symlinks out of it refused' '
	mkdir -p root/tests/workloads evil/tests/workloads &&
	cp "$SRC" root/tests/workloads/phases.c &&
	ln -s "$TRASH/secret.txt" evil/tests/workloads/phases.c &&
	$REWRITE ph.data moved.data "$SRC=/gone/build/tests/workloads/phases.c" &&
	"$PROF" annotate -i moved.data work_function >moved0.txt &&
	! grep -q "wl_sink = x + y" moved0.txt &&
	"$PROF" annotate -i moved.data --source-root root work_function >moved.txt &&
	grep -q "wl_sink = x + y" moved.txt &&
	"$PROF" annotate -i moved.data --source-root evil work_function >evil.txt &&
	! grep -q TOP-SECRET evil.txt && grep -q "not allowed" evil.txt
'

test_expect_success 'a ".." path never climbs out of a --source-root' '
	$REWRITE ph.data dots.data "$SRC=../../secret.txt" &&
	mkdir -p r1/a/b && "$PROF" annotate -i dots.data --source-root r1/a/b work_function >dots.txt &&
	! grep -q TOP-SECRET dots.txt
'

test_expect_success 'a module path rewritten to /etc/shadow: no disassembly, no crash' '
	bin=$(awk "/^# disassembly:/ {print \$3}" ann.txt) &&
	$REWRITE ph.data mod.data "$bin=/etc/shadow" &&
	"$PROF" annotate -i mod.data work_function >mod.txt &&
	grep -q "^# instructions: no disassembly" mod.txt && ! grep -q "^root:" mod.txt
'

test_expect_success 'the HTML report embeds the real source, never the hostile ones' '
	"$PROF" report -i ph.data --format=html -o ok.html &&
	grep -q "wl_sink = x + y;" ok.html &&
	"$PROF" report -i shadow.data --format=html -o shadow.html &&
	! grep -q "wl_sink = x + y;" shadow.html && ! grep -q "root:" shadow.html &&
	"$PROF" report -i secret.data --format=html -o secret.html &&
	! grep -q TOP-SECRET secret.html &&
	"$PROF" report -i moved.data --format=html --source-root evil -o evil.html &&
	! grep -q TOP-SECRET evil.html &&
	"$PROF" report -i dots.data --format=html --source-root r1/a/b -o dots.html &&
	! grep -q TOP-SECRET dots.html &&
	"$PROF" report -i moved.data --format=html --source-root root -o moved.html &&
	grep -q "wl_sink = x + y;" moved.html
'

test_done

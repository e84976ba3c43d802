#!/bin/bash
# t1140-workload-forkexec: the parent burns in parent_work; its forked
# child burns in child_work, then execs "split".  All three must be in the
# profile: two processes, child_work, and the exec'd image's spin_a under
# comm "split".
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"
# False-failure bounds (tests/README.md, tests/lib/bounds.py): ~4000
# samples; parent_work 48.3%, child_work 24.4%, spin_[abc] 24.5%, and of
# comm split's ~1000 samples 59.4% in spin_a.  The tightest: spin_[abc]
# under 15%, `bounds.py below 4000 24.5 15` = 1.4e-49; spin_a under 30%
# of split's: 1.5e-78.

test_expect_success 'record forkexec for 2 s (exit status passes through)' '
	"$PROF" record -q -o fe.data -- "$WL/forkexec" 2 >run.out &&
	cat run.out && check_contains run.out "split: [0-9]* rounds"
'

test_expect_success 'report folded and json' '
	"$PROF" report -i fe.data --format=folded >fe.folded &&
	"$PROF" report -i fe.data --format=json >fe.json
'

test_expect_success 'two processes have samples' '$CHECK processes fe.json 2'

test_expect_success 'parent_work and child_work both appear' '
	$CHECK min-self fe.json "^parent_work\$" 20 &&
	$CHECK min-self fe.json "^child_work\$" 8
'

test_expect_success 'the exec'"'"'d split shows spin_a/b/c under comm split' '
	$CHECK comm-frame fe.folded split spin_a 30 &&
	$CHECK min-self fe.json "^spin_[abc]\$" 15 &&
	$CHECK module fe.json spin_a split
'

test_expect_success 'the child pid is a separate process from the parent' '
	parent=$(sed -n "s/^forkexec: parent \([0-9]*\), child.*/\1/p" run.out) &&
	child=$(sed -n "s/^forkexec: parent [0-9]*, child \([0-9]*\)/\1/p" run.out) &&
	python3 -c "
import json, sys
pids = {p[\"pid\"] for p in json.load(open(\"fe.json\"))[\"processes\"]}
print(pids)
sys.exit(0 if {$parent, $child} <= pids else 1)
"
'

# A sample taken inside an exec (after its COMM record, before the new
# image runs) has the old image's user registers and the new image's
# memory: its user frame must be the old image's call of execve, not
# [unknown] in the new image.  300 execs of true took 41-111 such samples
# in five runs on the project VM at 999 Hz (~0.3 ms of CPU each), so
# 1,000 take 137 or more; on a machine five times faster at exec, fewer
# than 5 of a mean of 27 has a chance under 1e-7 (Poisson).  One goes
# unnamed only when sampled more than 1 s after its exec's COMM record
# with no sample of the new image between: an exec stalled for a second.
# The frames inside the exec are the kernel's: named only where prof can
# read kernel symbols.
title="samples inside an exec name the old image's call of execve"
if [ "$(id -u)" = 0 ] && awk 'NR == 1 {exit $1 ~ /^0+$/}' /proc/kallsyms; then
	test_expect_success "$title" '
		"$PROF" record -q -o loop.data -- sh -c "i=0; while [ \$i -lt 1000 ]; do /bin/true; i=\$((i + 1)); done" &&
		"$PROF" report -i loop.data --format=folded >loop.folded &&
		awk "/^true;.*sys_execve/ {n += \$NF; if (\$0 ~ /^true;\\[unknown\\]/) u += \$NF}
			END {print \"# in exec:\", n + 0, \"unnamed:\", u + 0; exit !(n >= 5 && u == 0)}" loop.folded
	'
else
	test_skip "$title" "kernel symbols are not readable here (not root, or kptr_restrict)"
fi

test_done

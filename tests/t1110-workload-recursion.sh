#!/bin/bash
# t1110-workload-recursion: 200-deep recursion (201 recurse frames, each a
# real 64-byte frame, no frame pointers) above a hot leaf.  At least 95% of
# the hot_leaf samples must carry the whole chain down to main and the libc
# start frames, and the report must call >= 90% of all stacks complete;
# with a stack copy too small for the chain, it must call them truncated.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
CHECK="python3 $TOP/tests/workloads/wlcheck.py"
DEPTH=200
# False-failure bounds (tests/README.md): hot_leaf under 90% of ~2000
# samples when it has 97.7% (load takes 2%): `bounds.py below 2000 97.7
# 90` = 2.6e-66.  The depth and complete_pct checks judge each stack's
# unwinding, not a share: 1979 of 1979 were whole (no sampling margin
# involved; a miss is a bug).

test_expect_success 'record recursion (depth 200) for 2 s' '
	"$PROF" record -q -o rec.data -- "$WL/recursion" 2 $DEPTH
'

test_expect_success 'report folded and json' '
	"$PROF" report -i rec.data --format=folded >rec.folded &&
	"$PROF" report -i rec.data --format=json >rec.json
'

test_expect_success 'hot_leaf has most of the self time' '
	$CHECK min-self rec.json "^hot_leaf\$" 90
'

test_expect_success '>= 95% of hot_leaf stacks have all 201 recurse frames, main, libc start' '
	$CHECK depth rec.folded hot_leaf recurse $((DEPTH + 1)) 95
'

test_expect_success 'complete_pct >= 90' '
	$CHECK field rec.json complete_pct ge 90
'

# 201 frames of 64 bytes need ~13 KiB of stack: a 4 KiB copy cannot reach
# main, so (SPEC) every such sample is PROF_SAMPLE_TRUNCATED and the report
# must not claim the stacks are complete.
test_expect_success 'a 4 KiB stack copy: stacks are cut and complete_pct says so' '
	"$PROF" record -q --stack-size 4096 -o small.data -- "$WL/recursion" 1 $DEPTH &&
	"$PROF" report -i small.data --format=folded >small.folded &&
	"$PROF" report -i small.data --format=json >small.json &&
	! $CHECK depth small.folded hot_leaf recurse $((DEPTH + 1)) 50 &&
	$CHECK field small.json complete_pct lt 50 &&
	$CHECK field small.json truncated_stacks gt 0
'

test_done

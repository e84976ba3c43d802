#!/bin/bash
# t4140-resources-offcpu-sites - off-CPU stacks by site: one thread
# blocks at three sites (tests/resources/sites.c: the cycle A B A C,
# naps of 100, 300 and 200 us) that call the same blocking function at
# the same depth, so only return addresses tell them apart; the program
# measures the time it spent blocked at each.  The shares of the three
# sites in the off-CPU stacks must be within 5 points of the program's
# own, with the default sampled stacks (a site's stack from its last
# full sample, sites told apart by the return addresses in each small
# copy) and with --offcpu-stacks=all (every switch-out's own stack).
# No sampling chance enters these shares: every interval is timed by its
# switch records and attributed by its own switch-out's site; what can
# go wrong is sites confused (the shares then move by tens of points) or
# intervals left unattributed ([stack lost], also checked under 5%).
. "$(dirname "$0")/lib/test-lib.sh"

RB="$BUILD_DIR/tests/resources"
require_perf_events

require_offcpu

# check DATA OUT MAX: each site's share of prof's off-CPU time at the
# three sites against the program's, within 5 points; off-CPU time
# outside the sites (mostly [stack lost]) under MAX%.
check() {
	"$PROF" report -i "$1" --format=folded --metric=off-cpu >"$1.folded" &&
	python3 - "$1.folded" "$2" "$3" <<-'PY'
	import re, sys
	prof = {"a": 0, "b": 0, "c": 0}
	other = total = 0
	for line in open(sys.argv[1]):
	    stack, n = line.rsplit(" ", 1)
	    n = int(n)
	    total += n
	    m = re.search(r";site_([abc]);", stack)
	    if m:
	        prof[m.group(1)] += n
	    else:
	        other += n
	truth = {k: int(re.search(r"site_%s_ns (\d+)" % k, open(sys.argv[2]).read()).group(1)) for k in "abc"}
	ps, ts = sum(prof.values()), sum(truth.values())
	bad = False
	for k in "abc":
	    p, t = 100.0 * prof[k] / ps, 100.0 * truth[k] / ts
	    print("# site_%s: prof %.1f%%, own clock %.1f%%" % (k, p, t))
	    bad |= abs(p - t) > 5
	print("# off-CPU time outside the sites: %.2f%%" % (100.0 * other / total))
	sys.exit(1 if bad or other > float(sys.argv[3]) / 100 * total else 0)
	PY
}

test_expect_success 'sampled stacks (default): site shares within 5 points of the program'"'"'s own' '
	"$PROF" record -o s.data -- "$RB/sites" 1500 >s.out 2>s.err &&
	check s.data s.out 5
'

# Every switch-out's 8 KiB stack is what a loaded machine's recorder
# cannot keep up with: many land in [stack lost] (3675 of ~6000 seen at
# load 18), which leaves the sites' shares as they were.
test_expect_success '--offcpu-stacks=all: the same, from every switch-out'"'"'s own stack' '
	"$PROF" record --offcpu-stacks=all -o a.data -- "$RB/sites" 1500 >a.out 2>a.err &&
	check a.data a.out 100
'

test_expect_success 'the recording says which stacks it has' '
	"$PROF" report -i s.data --header >s.hdr &&
	"$PROF" report -i a.data --header >a.hdr &&
	check_contains s.hdr "^# off_cpu_stacks: sampled$" &&
	check_contains a.hdr "^# off_cpu_stacks: all$"
'

test_expect_failure_exit 'a bad --offcpu-stacks is a usage error that records nothing' 2 '
	"$PROF" record --offcpu-stacks=some -o bad.data -- true 2>bad.err
	st=$?
	one_error bad.err "unknown --offcpu-stacks '"'"'some'"'"' (want sampled or all)" && test ! -e bad.data || exit 1
	exit $st
'

test_done

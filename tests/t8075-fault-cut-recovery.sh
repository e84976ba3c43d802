#!/bin/bash
# t8075-fault-cut-recovery: a real recording cut at every 1% of its bytes
# reads back everything whose bytes precede the cut - the whole samples
# inside a cut SAMPLES record too, every RESOURCES and TIMELINE record -
# and nothing after it.  The truth comes from a walk of the file written
# here in Python from the format description in src/data/format.c (record
# framing and the sample encoding), independent of prof's reader: for
# each sample and record it gives the byte at which it ends.  t8070 covers
# "never a crash"; this test covers "nothing lost".
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/fault/fault-lib.sh"
require_perf_events

# Three seconds of spinning: three flushes, so the cuts fall in every
# part of a flush (definitions, samples, summary) more than once.
test_expect_success 'record a 3 s spin' '
	"$PROF" record -q -o base.data -- "$CHURN" spin 3 &&
	say "$(stat -c %s base.data) bytes"
'

test_expect_success 'every 1% cut reads back exactly what precedes it' '
	python3 - "$PROF" base.data <<-\PY
	import json, subprocess, sys
	prof, base = sys.argv[1], sys.argv[2]
	data = open(base, "rb").read()

	def varint(pos, end):
	    """(value, next position) or None if the bytes end inside it."""
	    v = shift = 0
	    while pos < end:
	        b = data[pos]
	        v |= (b & 0x7F) << shift
	        pos += 1
	        if not b & 0x80:
	            return v, pos
	        shift += 7
	    return None

	# Walk the whole file: samples as (end byte, metric, value),
	# TIMELINE as end bytes, RESOURCES as (end byte, pid, tid, invol_cs).
	samples, timeline, resources, nrec = [], [], [], {}
	_, pos = varint(8, len(data))            # magic, version
	while pos < len(data):
	    rtype = data[pos]
	    length, body = varint(pos + 1, len(data))
	    end = body + length
	    nrec[rtype] = nrec.get(rtype, 0) + 1
	    if rtype == 7:                       # SAMPLES
	        _, p = varint(body, end)         # base time
	        last = {}
	        while p < end:
	            head, p = varint(p, end)
	            _, p = varint(p, end)        # time delta
	            for bit in (0x8, 0x10):      # same thread, same node
	                if not head & bit:
	                    _, p = varint(p, end)
	            metric = head & 7
	            value = last.get(metric, 1)
	            if not head & 0x20:          # same value
	                value, p = varint(p, end)
	            last[metric] = value
	            samples.append((p, metric, value))
	    elif rtype == 13:                    # TIMELINE: t_ns, pid, ...
	        _, p = varint(body, end)
	        timeline.append((end, varint(p, end)[0]))
	    elif rtype == 12:                    # RESOURCES
	        f, p = [], body
	        while p < end:
	            v, p = varint(p, end)
	            f.append(v)
	        resources.append((end, f[0], f[1], f[5]))
	    pos = end
	ncpu = sum(v for _, m, v in samples if m == 0)
	print("# %d bytes: %d SAMPLES records, %d CPU samples, %d TIMELINE, %d RESOURCES"
	      % (len(data), nrec.get(7, 0), ncpu, len(timeline), len(resources)))
	if nrec.get(7, 0) < 2 or ncpu < 100 or not timeline or not resources:
	    sys.exit("too little in the recording to test cuts")

	fails, prev, checked_t = 0, -1, 0
	for pct in range(1, 101):
	    cut = len(data) * pct // 100
	    open("cut.data", "wb").write(data[:cut])
	    r = subprocess.run([prof, "report", "-i", "cut.data", "--format=json"],
	                       capture_output=True)
	    want_s = sum(v for e, m, v in samples if m == 0 and e <= cut)
	    want_r = {}
	    for e, pid, tid, invol in resources:
	        if e <= cut and tid == 0:
	            want_r[pid] = invol
	    if r.returncode != 0:
	        # Only a cut before the first sample may be refused.
	        if want_s:
	            print("cut %d%%: exit %d %r" % (pct, r.returncode, r.stderr))
	            fails += 1
	        continue
	    j = json.loads(r.stdout)
	    # The report lists the processes that have samples; their
	    # timeline and resources are compared.
	    listed = {p["pid"] for p in j["processes"]}
	    want_t = sum(1 for e, pid in timeline if e <= cut and pid in listed)
	    want_r = {pid: v for pid, v in want_r.items() if pid in listed}
	    got_s = sum(p["samples"] for p in j["processes"])
	    got_t = sum(len(p["timeline"]) for p in j["processes"])
	    got_r = {p["pid"]: p["involuntary_switches"] for p in j["processes"]}
	    checked_t += want_t
	    bad = got_s != want_s or got_t != want_t or got_s < prev or \
	          any(got_r.get(pid, 0) != v for pid, v in want_r.items())
	    if bad:
	        fails += 1
	        print("cut %d%% at byte %d: samples %d (want %d, previous cut %d), "
	              "timeline %d (want %d), resources %r (want %r)"
	              % (pct, cut, got_s, want_s, prev, got_t, want_t, got_r, want_r))
	    prev = got_s
	print("%d of 100 cuts wrong; %d timeline points compared" % (fails, checked_t))
	if not checked_t:
	    fails += 1
	sys.exit(1 if fails else 0)
	PY
'

test_done

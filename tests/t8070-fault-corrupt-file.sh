#!/bin/bash
# t8070-fault-corrupt-file: prof report on damaged recordings, through the
# real command line (the fuzzers cover the library): a recording cut at
# 200 offsets spread over its whole length (a recorder killed mid-write,
# a full disk) and 200 copies with one random byte changed (seeded, so
# every run tries the same cases).  Every run must end with exit 0 (a
# valid report, a truncation warning at most) or 2 (one error line),
# never a crash or a hang; exit-0 JSON must parse.
. "$(dirname "$0")/lib/test-lib.sh"
. "$TOP/tests/fault/fault-lib.sh"

if "$PROF" record -q -o base.data -- "$CHURN" spin 0.5 2>/dev/null && test -s base.data; then
	say "damaging a fresh recording ($(stat -c %s base.data) bytes)"
else
	cp "$TOP/tests/fuzz/corpus/profdata/fixture.data" base.data
	say "perf events unusable: damaging tests/fuzz/corpus/profdata/fixture.data"
fi

# One python process drives all cases: exit 0 must come with JSON that
# parses, exit 2 with exactly one stderr line, anything else fails.
damage() {	# mode count
	python3 - "$PROF" base.data "$1" "$2" <<-\PY
	import json, random, subprocess, sys
	prof, base, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
	data = open(base, "rb").read()
	rng = random.Random(8070)
	fails = 0
	for i in range(count):
	    if mode == "cut":
	        b = data[:i * len(data) // count]
	    else:
	        b = bytearray(data)
	        b[rng.randrange(len(b))] = rng.randrange(256)
	    open("case.data", "wb").write(b)
	    try:
	        r = subprocess.run([prof, "report", "-i", "case.data", "--format=json"],
	                           capture_output=True, timeout=20)
	    except subprocess.TimeoutExpired:
	        r = None
	    ok = r is not None and (r.returncode == 0 or
	                            (r.returncode == 2 and r.stderr.count(b"\n") == 1))
	    if ok and r.returncode == 0:
	        try:
	            json.loads(r.stdout)
	        except ValueError:
	            ok = False
	    if not ok:
	        fails += 1
	        open("keep-%s-%d.data" % (mode, i), "wb").write(b)
	        print("case %s %d: %s" % (mode, i, "timeout" if r is None else
	              "exit %d %r" % (r.returncode, r.stderr[:300])))
	print("%d of %d cases failed" % (fails, count))
	sys.exit(1 if fails else 0)
	PY
}

test_expect_success 'truncated at 200 offsets: exit 0 or 2, never a crash' 'damage cut 200'
test_expect_success 'one random byte changed, 200 times: exit 0 or 2, never a crash' 'damage flip 200'
test_done

#!/bin/bash
# t5130-replay-live-vs-perfdata: live recording (prof record) and perf.data
# import (perf record, then prof report -i perf.data) go through the same
# replay engine, so the same workload must come out the same way: the
# same processes, the same thread identities (forkexec's child execs
# "split": its samples before the exec stay with a "forkexec" thread, the
# rest go to a new "split" thread of the same tid) and the same top
# functions with shares within sampling margins.  Two runs of a workload
# on a loaded machine differ, so shares are compared with a wide margin
# (15 points) and by the work-based ratio inside split (spin_a:spin_c is
# 6:1 by rounds, whatever the scheduler does).  Kernel functions may come
# next on a busy VM, so only the top 3 must be the workload's.  perf runs
# with -B (no build-ids): perf 6.1 aborts in util/build-id.c when other
# perf runs update the shared ~/.debug cache at the same time.
# False-failure bound (tests/README.md, tests/lib/bounds.py): each run
# has ~3000 samples (parent_work ~48%, the widest binomial spread); the two
# shares differ by 15 points only if one strays 7.5 from the truth:
# 2 x `bounds.py share 3000 48.3 7.5` = 3e-16.  The ratio spin_a > spin_c
# (6:1 of ~600 split samples): < 1e-60.
. "$(dirname "$0")/lib/test-lib.sh"
require_perf_events
command -v perf >/dev/null || skip_all "perf is not installed"
perf record -q -e cpu-clock -o probe.data -- true >/dev/null 2>&1 ||
	skip_all "perf record -e cpu-clock is refused here"

test_expect_success 'record forkexec live with prof record' '
	"$PROF" record -q -o live.data -- "$WL/forkexec" 3 >live.out &&
	"$PROF" report -i live.data --format=json >live.json
'

test_expect_success 'record forkexec with perf record --call-graph dwarf' '
	perf record -q -B -e cpu-clock -F 999 --call-graph dwarf -o perf.data -- "$WL/forkexec" 3 >perf.out 2>perf.err &&
	"$PROF" report -i perf.data --format=json >pd.json
'

cat >compare.py <<'PY'
import json, sys

def load(path):
    doc = json.load(open(path))
    procs = [p for p in doc["processes"] if p.get("samples", 0) > 0]
    # role of a process: the child is the one that became "split"
    roles = {}
    for p in procs:
        comms = sorted(t["comm"] for t in p["threads"] if t.get("samples", 0) > 0)
        roles["child" if "split" in comms else "parent"] = (p["pid"], comms, p["threads"])
    funcs = {f["name"]: f["self_pct"] for f in doc["functions"]}
    return procs, roles, funcs

def check(what, ok, detail):
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, detail))
    return ok

live, pd = load(sys.argv[1]), load(sys.argv[2])
good = True
for name, (procs, roles, funcs) in (("live", live), ("perf.data", pd)):
    good &= check(name + " processes", len(procs) == 2 and set(roles) == {"parent", "child"},
                  [(p["pid"], p["comm"]) for p in procs])
    if "child" not in roles:
        continue
    pid, comms, threads = roles["child"]
    tids = {t["tid"] for t in threads if t.get("samples", 0) > 0}
    good &= check(name + " child threads (exec: a new identity, same tid)",
                  comms == ["forkexec", "split"] and tids == {pid}, [(t["tid"], t["comm"]) for t in threads])
    good &= check(name + " parent threads", roles.get("parent", (0, []))[1] == ["forkexec"],
                  roles.get("parent", (0, []))[1])
top = ["parent_work", "child_work", "spin_a", "spin_b", "spin_c"]
for f in top:
    a, b = live[2].get(f, 0.0), pd[2].get(f, 0.0)
    good &= check("self%% of %s" % f, a > 0 and b > 0 and abs(a - b) <= 15, "live %.1f, perf.data %.1f" % (a, b))
for name, funcs in (("live", live[2]), ("perf.data", pd[2])):
    ranked = sorted(funcs, key=funcs.get, reverse=True)[:3]
    good &= check(name + " top 3 are the workload's", set(ranked) <= set(top), ranked)
    good &= check(name + " spin_a > spin_c (6:1 rounds)",
                  funcs.get("spin_a", 0) > funcs.get("spin_c", 0), [funcs.get(f, 0) for f in top[2:]])
sys.exit(0 if good else 1)
PY

test_expect_success 'same processes, threads and top functions from both' '
	python3 compare.py live.json pd.json
'

test_done

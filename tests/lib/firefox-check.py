#!/usr/bin/env python3
# firefox-check.py FILE - checks a Firefox Profiler "processed profile" of
# version 57 (meta.preprocessedProfileVersion) against what the format's
# documentation requires: the types of src/types/profile.ts in
# firefox-devtools/profiler, read with docs-developer/CHANGELOG-formats.md
# for what versions 53-58 changed, and the columns the profiler's upgraders
# (processed-profile-versioning.ts, 57 -> current) read from a v57 file.
# It is written from those documents, not from prof's writer.
#
# Checked: the required meta, profile and thread fields; every table's
# length equals each column's length; every index is in range (stack ->
# frame, prefix, frame -> func and category, func -> string and resource,
# resource -> lib and string, sample -> stack, marker -> string, category
# and cause stack); stack prefixes form a tree (prefix < own index); sample
# times never decrease; weights and threadCPUDelta pair with the samples;
# interval markers end after they start and every marker's data.type has a
# meta.markerSchema entry shaped as version 55 made it; columns that version 57 no longer
# has (stackTable.category, frameTable.implementation, per-thread
# stringArray) or does not have yet (funcTable.source) are absent.
#
# Prints one JSON summary: per thread name, pid, tid, sample count, weight
# sum, CPU delta sum (µs), the functions' self weights (by leaf function
# name), per sample its time and leaf-to-root function names, and the
# markers' total length (ms) by name and the I/O wait markers' span; exits 1 with
# "firefox-check: ..." on the first violation.
import json
import sys

VERSION = 57


def fail(msg):
    sys.stderr.write("firefox-check: " + msg + "\n")
    sys.exit(1)


def need(obj, keys, where):
    if not isinstance(obj, dict):
        fail(f"{where} is not an object")
    for k in keys:
        if k not in obj:
            fail(f"{where}: missing '{k}'")


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def index_col(table, col, limit, where, nullable=False, minus_one=False):
    for i, x in enumerate(table[col]):
        if x is None and nullable:
            continue
        if x == -1 and minus_one:
            continue
        if not is_int(x) or x < 0 or x >= limit:
            fail(f"{where}.{col}[{i}] = {x!r} is not an index below {limit}")


def table(obj, name, cols, where):
    need(obj, [name], where)
    t = obj[name]
    need(t, ["length"] + cols, f"{where}.{name}")
    n = t["length"]
    if not is_int(n) or n < 0:
        fail(f"{where}.{name}.length = {n!r}")
    for c in cols:
        if not isinstance(t[c], list):
            fail(f"{where}.{name}.{c} is not an array")
        if len(t[c]) != n:
            fail(f"{where}.{name}.{c} has {len(t[c])} entries, length says {n}")
    return t


def check_meta(d):
    need(d, ["meta", "libs", "threads", "shared"], "profile")
    m = d["meta"]
    need(m, ["interval", "startTime", "processType", "product", "stackwalk", "version",
             "preprocessedProfileVersion", "markerSchema", "categories"], "meta")
    if m["preprocessedProfileVersion"] != VERSION:
        fail(f"meta.preprocessedProfileVersion is {m['preprocessedProfileVersion']}, "
             f"checked here is {VERSION}")
    cats = m["categories"]
    if not isinstance(cats, list) or not cats:
        fail("meta.categories is empty")
    for i, c in enumerate(cats):
        need(c, ["name", "color", "subcategories"], f"meta.categories[{i}]")
        if not c["subcategories"]:
            fail(f"meta.categories[{i}] has no subcategory 0")
    if not any(c["color"] == "grey" for c in cats):
        fail("meta.categories has no grey (default) category")
    units = m.get("sampleUnits")
    if units is not None:
        need(units, ["time", "eventDelay", "threadCPUDelta"], "meta.sampleUnits")
        if units["time"] not in ("ms", "bytes"):
            fail(f"meta.sampleUnits.time is {units['time']!r}")
        if units["threadCPUDelta"] not in ("ns", "µs", "variable CPU cycles"):
            fail(f"meta.sampleUnits.threadCPUDelta is {units['threadCPUDelta']!r}")
    return cats


def check_libs(d):
    for i, lib in enumerate(d["libs"]):
        need(lib, ["arch", "name", "path", "debugName", "debugPath", "breakpadId", "codeId"],
             f"libs[{i}]")
        if lib["codeId"] is not None and not isinstance(lib["codeId"], str):
            fail(f"libs[{i}].codeId is {lib['codeId']!r}")


THREAD_KEYS = ["processType", "processStartupTime", "processShutdownTime", "registerTime",
               "unregisterTime", "pausedRanges", "name", "isMainThread", "pid", "tid",
               "samples", "markers", "stackTable", "frameTable", "funcTable",
               "resourceTable", "nativeSymbols"]


def check_thread(th, w, nstr, nlibs, cats, schemas):
    need(th, THREAD_KEYS, w)
    if "stringArray" in th:
        fail(f"{w} has its own stringArray (version 56 moved it to shared)")
    if not isinstance(th["pid"], str):
        fail(f"{w}.pid is {th['pid']!r}, a string since version 47")
    if not isinstance(th["isMainThread"], bool):
        fail(f"{w}.isMainThread is not a boolean")

    res = table(th, "resourceTable", ["lib", "name", "host", "type"], w)
    index_col(res, "lib", nlibs, f"{w}.resourceTable", nullable=True)
    index_col(res, "name", nstr, f"{w}.resourceTable")
    index_col(res, "host", nstr, f"{w}.resourceTable", nullable=True)

    fn = table(th, "funcTable", ["name", "isJS", "relevantForJS", "resource", "fileName",
                                 "lineNumber", "columnNumber"], w)
    if "source" in fn:
        fail(f"{w}.funcTable.source is version 58's column")
    index_col(fn, "name", nstr, f"{w}.funcTable")
    index_col(fn, "resource", res["length"], f"{w}.funcTable", minus_one=True)
    index_col(fn, "fileName", nstr, f"{w}.funcTable", nullable=True)

    syms = table(th, "nativeSymbols", ["libIndex", "address", "name", "functionSize"], w)
    index_col(syms, "libIndex", nlibs, f"{w}.nativeSymbols")
    index_col(syms, "name", nstr, f"{w}.nativeSymbols")

    fr = table(th, "frameTable", ["address", "inlineDepth", "category", "subcategory", "func",
                                  "nativeSymbol", "innerWindowID", "line", "column"], w)
    if "implementation" in fr:
        fail(f"{w}.frameTable.implementation was removed in version 54")
    index_col(fr, "func", fn["length"], f"{w}.frameTable")
    index_col(fr, "category", len(cats), f"{w}.frameTable", nullable=True)
    index_col(fr, "nativeSymbol", syms["length"], f"{w}.frameTable", nullable=True)
    for i, (c, s) in enumerate(zip(fr["category"], fr["subcategory"])):
        if c is not None and (not is_int(s) or s < 0 or s >= len(cats[c]["subcategories"])):
            fail(f"{w}.frameTable.subcategory[{i}] = {s!r} for category {c}")
    for i, a in enumerate(fr["address"]):
        if not is_int(a) or a < -1:
            fail(f"{w}.frameTable.address[{i}] = {a!r}")

    st = table(th, "stackTable", ["frame", "prefix"], w)
    for c in ("category", "subcategory"):
        if c in st:
            fail(f"{w}.stackTable.{c} was removed in version 53")
    index_col(st, "frame", fr["length"], f"{w}.stackTable")
    for i, p in enumerate(st["prefix"]):
        if p is not None and (not is_int(p) or p < 0 or p >= i):
            fail(f"{w}.stackTable.prefix[{i}] = {p!r}: not a caller before it (a tree)")

    mk = table(th, "markers", ["data", "name", "startTime", "endTime", "phase", "category"], w)
    index_col(mk, "name", nstr, f"{w}.markers")
    index_col(mk, "category", len(cats), f"{w}.markers")
    for i in range(mk["length"]):
        where, data = f"{w}.markers[{i}]", mk["data"][i]
        start, end, phase = mk["startTime"][i], mk["endTime"][i], mk["phase"][i]
        if phase not in (0, 1, 2, 3):
            fail(f"{where}: phase {phase!r}")
        if phase == 1 and (start is None or end is None or end < start):
            fail(f"{where}: interval {start!r}..{end!r}")
        if data is None:
            continue
        if data.get("type") not in schemas:	# looked up by data.type since v52
            fail(f"{where}: data.type {data.get('type')!r} has no meta.markerSchema entry")
        cause = data.get("cause")
        if cause is not None:
            need(cause, ["stack"], f"{where}.data.cause")
            if not is_int(cause["stack"]) or not 0 <= cause["stack"] < st["length"]:
                fail(f"{where}.data.cause.stack = {cause['stack']!r}")

    sm = th["samples"]
    need(sm, ["length", "stack", "weightType", "weight"], f"{w}.samples")
    cols = ["stack"] + [c for c in ("time", "timeDeltas", "threadCPUDelta", "eventDelay")
                        if c in sm]
    if sm["weight"] is not None:
        cols.append("weight")
    sm = table(th, "samples", cols, w)
    if "time" not in sm and "timeDeltas" not in sm:
        fail(f"{w}.samples has neither time nor timeDeltas")
    if sm["weightType"] not in ("samples", "tracing-ms", "bytes"):
        fail(f"{w}.samples.weightType is {sm['weightType']!r}")
    index_col(sm, "stack", st["length"], f"{w}.samples", nullable=True)
    times = sm["time"] if "time" in sm else None
    if times is None:
        times, t = [], 0
        for dt in sm["timeDeltas"]:
            t += dt
            times.append(t)
    for i in range(1, len(times)):
        if times[i] < times[i - 1]:
            fail(f"{w}.samples.time[{i}] = {times[i]} < time[{i - 1}] = {times[i - 1]}")
    return fn, fr, st, sm, mk, times


DISPLAY = {"marker-chart", "marker-table", "timeline-overview", "timeline-memory",
           "timeline-ipc", "timeline-fileio", "stack-chart"}


def check_schemas(meta):
    """meta.markerSchema as version 55 shaped it: fields with key and format."""
    names = set()
    for i, sc in enumerate(meta["markerSchema"]):
        need(sc, ["name", "display", "fields"], f"meta.markerSchema[{i}]")
        if "data" in sc:
            fail(f"meta.markerSchema[{i}].data was renamed fields in version 55")
        if not set(sc["display"]) <= DISPLAY:
            fail(f"meta.markerSchema[{i}].display {sc['display']!r}")
        for k, f in enumerate(sc["fields"]):
            need(f, ["key", "format"], f"meta.markerSchema[{i}].fields[{k}]")
        names.add(sc["name"])
    return names


def names_of(stack, fn, fr, st, strings):
    out = []
    while stack is not None:
        out.append(strings[fn["name"][fr["func"][st["frame"][stack]]]])
        stack = st["prefix"][stack]
    return out


def main():
    d = json.load(open(sys.argv[1]))
    cats = check_meta(d)
    check_libs(d)
    shared = d["shared"]
    need(shared, ["stringArray"], "shared")
    strings = shared["stringArray"]
    if not all(isinstance(s, str) for s in strings):
        fail("shared.stringArray holds a non-string")
    schemas = check_schemas(d["meta"])
    summary = []
    for k, th in enumerate(d["threads"]):
        fn, fr, st, sm, mk, times = check_thread(th, f"threads[{k}]", len(strings),
                                                 len(d["libs"]), cats, schemas)
        marker_ms = {}
        for n, a, b in zip(mk["name"], mk["startTime"], mk["endTime"]):
            marker_ms[strings[n]] = marker_ms.get(strings[n], 0) + (b or a) - a
        weights = sm["weight"] if sm["weight"] is not None else [1] * sm["length"]
        self_w = {}
        for s, wt in zip(sm["stack"], weights):
            if s is not None:
                leaf = strings[fn["name"][fr["func"][st["frame"][s]]]]
                self_w[leaf] = self_w.get(leaf, 0) + wt
        summary.append({
            "name": th["name"], "processName": th.get("processName"), "pid": th["pid"],
            "tid": th["tid"], "isMainThread": th["isMainThread"], "samples": sm["length"],
            "weightType": sm["weightType"], "weight": sum(weights),
            "cpu_delta_us": sum(x or 0 for x in sm.get("threadCPUDelta", [])),
            "first_ms": times[0] if times else None, "last_ms": times[-1] if times else None,
            "self": self_w,
            "stacks": [names_of(s, fn, fr, st, strings) for s in sm["stack"]],
            "times": times, "markers": mk["length"], "marker_ms": marker_ms,
            "io_wait_span": [min(a for n, a in zip(mk["name"], mk["startTime"])
                                 if strings[n] == "I/O wait"),
                             max(b for n, b in zip(mk["name"], mk["endTime"])
                                 if strings[n] == "I/O wait")]
            if any(strings[n] == "I/O wait" for n in mk["name"]) else None,
        })
    print(json.dumps({"version": d["meta"]["preprocessedProfileVersion"],
                      "libs": d["libs"], "threads": summary}))


main()

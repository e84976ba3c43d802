#!/usr/bin/env python3
"""check-objects.py - what the compiled objects say about the tree's shape.

  check-objects.py layers BUILD LAYERS_MD
      Every folder of BUILD/src/ is in the layer list of LAYERS_MD (the
      fenced block after the "<!-- layers" marker in docs/hacking.md), and
      every call between folders points down that list: a folder calls only
      the folders listed before it.  A cycle between folders is reported
      as such.  The table of folders in LAYERS_MD (rows "| `src/F/` |")
      names the same folders in the same order.
  check-objects.py includes TOP LAYERS_MD
      Every #include "prof/X.h" (and every include of a file of another
      folder) in TOP/src/ and TOP/include/prof/ points down the same layer
      list: a file includes headers of its own folder and of the folders
      listed before it.  include/prof/X.h belongs to src/X/, or to the
      folder the "<!-- headers" block of LAYERS_MD names for it.  This one
      reads the source, not the objects, so it also sees what only a
      type, a macro or an inline function ties together.
  check-objects.py prefixes BUILD LAYERS_MD
      Every global function of BUILD/src/F/ begins with a prefix the
      "<!-- prefixes" block of LAYERS_MD lists for F, the longest listed
      prefix deciding (model's "prof_" takes what no longer one claims); a
      folder listed with "-" (util) has none, and its names begin with no
      other folder's.  So a name says where it is defined.
  check-objects.py decls TOP BUILD LAYERS_MD
      Every function a header of TOP declares (include/prof/X.h, or a
      header under src/F/) is defined in that header's folder, as BUILD's
      objects say: a folder's functions are declared in its own headers,
      never in a header of their callers.
  check-objects.py dead BUILD [CALLER.o...]
      Every global function of BUILD/src/*/*.o is called from another
      object: src/, src/prof.o, a unit test under BUILD/tests/unit/, or
      one of the CALLER objects (the fuzz targets and the benchmark
      drivers, which link the library too).
      A function only its own file calls is static, so the compiler's
      -Wunused-function finds it once it is dead: the two together leave
      no function that nothing calls.

Calls are read from `nm`: a symbol one object leaves undefined (U) and
another defines.  Prints one line per problem and exits 1 when there is
one, 0 when there is none, 2 when it cannot run.  make check runs all
five through tests/t9200-source-shape.sh.
"""
import collections
import glob
import os
import re
import subprocess
import sys


def die(msg):
    print(f"check-objects: {msg}", file=sys.stderr)
    sys.exit(2)


def nm_all(objs):
    """{object: (defined global functions and data, functions, undefined
    symbols)}, from one nm run: an nm process takes ~0.1 s to start, and
    one per object made each check ~18 s."""
    info = {o: (set(), set(), set()) for o in objs}
    if not objs:
        return info
    out = subprocess.run(["nm", "-A", *objs], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        obj = f[0].rpartition(":")[0]	# "obj:address" or "obj:" before U
        if obj not in info:
            continue
        defined, funcs, undef = info[obj]
        if len(f) == 3 and f[1] == "U":
            undef.add(f[2])
        elif len(f) == 3 and f[1] in "TDBRCVWGS":
            defined.add(f[2])
            if f[1] == "T":
                funcs.add(f[2])
    return info


def stale(obj):
    """An object whose source is gone (renamed or removed since the build
    directory was last cleaned): its make dependency file names a first
    source that no longer exists.  Such an object is not in the program."""
    dep = obj[:-2] + ".d"
    try:
        text = open(dep, encoding="utf-8").read()
    except OSError:
        return False
    words = text.replace("\\\n", " ").split()
    if len(words) < 2:
        return False
    top = os.path.dirname(os.path.abspath(os.path.join(os.path.dirname(obj), "..", "..")))
    src = words[1]
    return not os.path.exists(src if os.path.isabs(src) else os.path.join(top, src))


def src_objects(build):
    objs = sorted(o for o in glob.glob(os.path.join(build, "src", "*", "*.o")) if not stale(o))
    if not objs:
        die(f"no objects under {build}/src (build first)")
    return objs


def folder(build, obj):
    return os.path.relpath(obj, os.path.join(build, "src")).split(os.sep)[0]


def fenced_block(path, marker, required=True):
    """Lines of the fenced block after "<!-- marker ... -->" in path, each
    split into (its text before the last two-space gap, its last words)."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- " + marker + r".*?-->\s*```\n(.*?)```", text, re.S)
    if not m:
        if required:
            die(f"no {marker} list (<!-- {marker} ... --> and a fenced block) in {path}")
        return []
    rows = []
    for line in m.group(1).splitlines():
        if line.strip():
            cols = re.split(r"\s{2,}", line.strip())
            rows.append((cols[0], cols[-1].split()))
    return rows


def read_layers(path):
    """Folders bottom to top, as docs/hacking.md lists them."""
    return [f for _, folders in fenced_block(path, "layers") for f in folders]


def read_header_owners(path):
    """{header: folder} for the include/prof/ headers not named after
    their folder: the "<!-- headers" block, one folder and its headers a
    line."""
    return {h: f for f, hs in fenced_block(path, "headers", required=False) for h in hs}


def calls_between_folders(build, objs):
    """{(from folder, to folder): [(from object, to object, symbol)]}"""
    info = nm_all(objs)
    owner = {s: o for o in objs for s in info[o][0]}
    arrows = collections.defaultdict(list)
    for o in objs:
        for s in sorted(info[o][2]):
            d = owner.get(s)
            if d and folder(build, d) != folder(build, o):
                arrows[(folder(build, o), folder(build, d))].append((o, d, s))
    return arrows


def cycles(nodes, arrows):
    """Strongly connected components of more than one folder (Tarjan)."""
    succ = collections.defaultdict(set)
    for a, b in arrows:
        succ[a].add(b)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check_layers(build, layers_md):
    objs = src_objects(build)
    order = read_layers(layers_md)
    rank = {f: i for i, f in enumerate(order)}
    problems = []
    folders = sorted({folder(build, o) for o in objs})
    for f in folders:
        if f not in rank:
            problems.append(f"src/{f}/ is not in the layer list of {layers_md}")
    for f in order:
        if f not in folders:
            problems.append(f"{layers_md} lists {f}, which has no objects under src/")
    table = re.findall(r"^\| `src/([^/`]+)/` \|", open(layers_md, encoding="utf-8").read(), re.M)
    if table and table != order:
        problems.append(f"the folder table of {layers_md} lists {' '.join(table)}; "
                        f"the layer list, bottom to top, is {' '.join(order)}")
    arrows = calls_between_folders(build, objs)
    for comp in cycles(folders, arrows):
        problems.append("cycle between folders: " + " <-> ".join(comp))
    for (a, b), calls in sorted(arrows.items()):
        if a in rank and b in rank and rank[b] > rank[a]:
            o, d, s = calls[0]
            more = f" (and {len(calls) - 1} more)" if len(calls) > 1 else ""
            problems.append(f"{a} -> {b} points up the layers: "
                            f"{os.path.relpath(o, build)} calls {s} of {os.path.relpath(d, build)}{more}")
    return problems


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def source_files(top):
    """(path relative to top, its folder) of every C file under src/ and
    include/prof/: a file under src/F/ (at any depth) is F's; src/prof.c,
    main(), sits above every folder and is not judged."""
    out = []
    for root, _, names in os.walk(os.path.join(top, "src")):
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(root, n), top)
            parts = rel.split(os.sep)
            if n.endswith((".c", ".h")) and len(parts) > 2:
                out.append((rel, parts[1]))
    inc = os.path.join(top, "include", "prof")
    for n in sorted(os.listdir(inc)) if os.path.isdir(inc) else []:
        if n.endswith(".h"):
            out.append((os.path.join("include", "prof", n), None))
    return sorted(out)


def check_includes(top, layers_md):
    order = read_layers(layers_md)
    rank = {f: i for i, f in enumerate(order)}
    owners = read_header_owners(layers_md)
    problems = []

    def header_folder(name):
        f = owners.get(name, name[:-2])
        return f if f in rank else None

    for h in owners:
        if not os.path.exists(os.path.join(top, "include", "prof", h)):
            problems.append(f"{layers_md} names include/prof/{h}, which does not exist")
    files = source_files(top)
    for rel, f in files:
        if f is None:
            f = header_folder(os.path.basename(rel))
            if f is None:
                problems.append(f"{rel} belongs to no folder of the layer list "
                                f"(name it after one, or list it in the headers block of {layers_md})")
                continue
        if f not in rank:
            continue	# the layers check reports the folder
        for n, line in enumerate(open(os.path.join(top, rel), encoding="utf-8", errors="replace"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            if inc.startswith("prof/"):
                to, what = header_folder(inc[5:]), inc
            else:
                path = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
                parts = path.split(os.sep)
                if not os.path.exists(os.path.join(top, path)) or parts[0] != "src" or len(parts) < 3:
                    continue	# generated (build/gen) or outside the folders
                to, what = parts[1], path
            if to in rank and rank[to] > rank[f]:
                problems.append(f"{rel}:{n}: includes {what}: {f} -> {to} points up the layers")
    return problems


def read_prefixes(path):
    """{folder: [prefixes]} from the "<!-- prefixes" block: a folder and
    the prefixes of its global functions a line ("-": none)."""
    return {f: [p for p in ps if p != "-"] for f, ps in fenced_block(path, "prefixes")}


def owner_of(name, prefixes):
    """The folder whose longest prefix begins name, or None."""
    best, owner = 0, None
    for f, ps in prefixes.items():
        for p in ps:
            if name.startswith(p) and len(p) > best:
                best, owner = len(p), f
    return owner


def check_prefixes(build, layers_md):
    objs = src_objects(build)
    prefixes = read_prefixes(layers_md)
    problems = []
    seen = {}
    for f, ps in sorted(prefixes.items()):
        for p in ps:
            if p in seen:
                problems.append(f"prefix {p} is listed for both {seen[p]} and {f}")
            seen[p] = f
    bare = [f for f, ps in prefixes.items() if not ps]
    info = nm_all(objs)
    for o in objs:
        f = folder(build, o)
        if f not in prefixes:
            problems.append(f"src/{f}/ has no line in the prefixes list of {layers_md}")
            continue
        for s in sorted(info[o][1]):
            want = owner_of(s, prefixes)
            if want == f or (want is None and f in bare):
                continue
            where = f"a prefix of {want}/" if want else "no folder's prefix"
            problems.append(f"{os.path.relpath(o, build)}: {s} begins with {where}, not {f}/'s")
    return problems


# A declaration: one or more type words, then the name and "(" (a call in
# a macro or an inline body starts with the name, or follows "return").
DECL = re.compile(r"^(?!\s*return\b)\s*(?:[A-Za-z_]\w*[\s*]+)+?([A-Za-z_]\w*)\s*\(")


def declarations(path):
    """(line number, name) of the functions path declares, comments and
    the bodies of static inline functions left out."""
    def blank(m):	# keeps the line numbers
        return re.sub(r"[^\n]", " ", m.group(0))

    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)
    text = re.sub(r"\)\s*\{.*?\n\}", blank, text, flags=re.S)	# function bodies
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = DECL.match(line)
        if m and not line.lstrip().startswith("#"):
            out.append((n, m.group(1)))
    return out


def check_decls(top, build, layers_md):
    rank = {f: i for i, f in enumerate(read_layers(layers_md))}
    owners = read_header_owners(layers_md)
    defined_in = {}
    for o, (_, funcs, _) in nm_all(src_objects(build)).items():
        for s in funcs:
            defined_in[s] = folder(build, o)
    problems = []
    for rel, f in source_files(top):
        if not rel.endswith(".h"):
            continue
        if f is None:
            f = owners.get(os.path.basename(rel), os.path.basename(rel)[:-2])
        if f not in rank:
            continue	# the includes check reports the header
        for n, name in declarations(os.path.join(top, rel)):
            d = defined_in.get(name)
            if d and d != f:
                problems.append(f"{rel}:{n}: declares {name}, defined in src/{d}/: "
                                f"declare it in a header of {d}/")
    return problems


def check_dead(build, extra):
    objs = src_objects(build)
    main = os.path.join(build, "src", "prof.o")
    callers = objs + ([main] if os.path.exists(main) else [])
    callers += sorted(glob.glob(os.path.join(build, "tests", "unit", "*.o"))) + extra
    info = nm_all(callers)
    used_by = collections.defaultdict(set)
    for o in callers:
        for s in info[o][2]:
            used_by[s].add(o)
    problems = []
    for o in objs:
        for s in sorted(info[o][1] - {"main"}):
            if not used_by[s] - {o}:
                problems.append(f"{os.path.relpath(o, build)}: {s} is called from no other file "
                                f"(make it static, or remove it)")
    return problems


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "layers":
        problems = check_layers(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "includes":
        problems = check_includes(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "prefixes":
        problems = check_prefixes(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "decls":
        problems = check_decls(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 3 and sys.argv[1] == "dead":
        problems = check_dead(sys.argv[2], sys.argv[3:])
    else:
        die("usage: check-objects.py layers BUILD LAYERS_MD | includes TOP LAYERS_MD | "
            "prefixes BUILD LAYERS_MD | decls TOP BUILD LAYERS_MD | dead BUILD [CALLER.o...]")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, subprocess.CalledProcessError) as e:
        die(e)

#!/usr/bin/env python3
"""mkseed_gopclntab.py - small .gopclntab inputs for fuzz_gopclntab (and the
unit test), cut out of a real Go binary's table.

  mkseed_gopclntab.py BINARY OUTDIR FUNC...

Reads BINARY's .gopclntab (Go 1.18-1.19 layout, as Debian 12's Go writes
it) and writes a table holding only the functions named FUNC (with their
pc-value tables, file names and inline trees) in the three layouts the
reader knows, OUTDIR/go116, go118 and go120, each in fuzz_gopclntab's
input form:

  the table | its funcdata (inline trees) | uint32: the funcdata's offset

The input is mapped at BASE: 1.16 funcdata are absolute addresses there,
1.18+ offsets from the funcdata start (go:func.*).  Function entries keep
their real addresses.  OUTDIR/pcs lists, per FUNC, "entry end name" for
checks.  The layouts follow Go's runtime/symtab.go (pcHeader, _func,
inlinedCall); a second implementation from the reader's, so a test that
compares them catches errors in either.
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from varint import uvarint  # noqa: E402

BASE = 0x10000
FUNCDATA_INLTREE = 3
PCDATA_INLTREE = 2


def section(binary, name):
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] == name:
            addr, off, size = int(parts[3], 16), int(parts[4], 16), int(parts[5], 16)
            with open(binary, "rb") as f:
                f.seek(off)
                return addr, f.read(size)
    raise SystemExit("no %s in %s" % (name, binary))


def read_vaddr(binary, vaddr, size):
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if p and p[0] == "LOAD":
            off, va, filesz = int(p[1], 16), int(p[2], 16), int(p[4], 16)
            if va <= vaddr and vaddr + size <= va + filesz:
                with open(binary, "rb") as f:
                    f.seek(off + vaddr - va)
                    return f.read(size)
    return None


def gofunc_of(binary):
    out = subprocess.run(["nm", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[2] in ("go.func.*", "go:func.*"):
            return int(p[0], 16)
    raise SystemExit("%s has no go.func.* symbol: build it without -s" % binary)


def cstr(buf, off):
    return buf[off:buf.index(b"\0", off)]


def pc_table(pctab, off):
    """The bytes of one pc-value table and its values [(value, pc delta)]."""
    if off == 0:
        return b"", []
    pos, vals, val, first = off, [], -1, True
    while True:
        if pctab[pos] == 0 and not first:
            return pctab[off:pos + 1], vals
        uv, pos = uvarint(pctab, pos)
        pcd, pos = uvarint(pctab, pos)
        val += -(uv & 1) ^ (uv >> 1)
        vals.append(val)
        first = False


class Table:
    def __init__(self, binary):
        self.vaddr, t = section(binary, ".gopclntab")
        assert struct.unpack_from("<I", t)[0] == 0xFFFFFFF0, "not a Go 1.18-1.19 table"
        w = struct.unpack_from("<8Q", t, 8)
        self.nfunc, self.text = w[0], w[2]
        self.names, self.cutab, self.filetab, self.pctab = (t[w[3]:w[4]], t[w[4]:w[5]], t[w[5]:w[6]],
                                                            t[w[6]:w[7]])
        self.pcln = t[w[7]:]
        self.gofunc = gofunc_of(binary)
        self.binary = binary

    def row(self, i):
        entry, off = struct.unpack_from("<II", self.pcln, 8 * i)
        return self.text + entry, off

    def func(self, i):
        entry, off = self.row(i)
        end = self.row(i + 1)[0]
        f = dict(zip(["entryoff", "nameoff", "args", "deferreturn", "pcsp", "pcfile", "pcln",
                      "npcdata", "cu"], struct.unpack_from("<Ii7I", self.pcln, off)))
        f["funcid"], f["flag"], _, f["nfuncdata"] = struct.unpack_from("<4B", self.pcln, off + 36)
        f["pcdata"] = list(struct.unpack_from("<%dI" % f["npcdata"], self.pcln, off + 40))
        f["funcdata"] = list(struct.unpack_from("<%dI" % f["nfuncdata"], self.pcln, off + 40 + 4 * f["npcdata"]))
        f["entry"], f["end"], f["name"] = entry, end, cstr(self.names, f["nameoff"])
        return f

    def inline_tree(self, f):
        """[(funcid, file, line, name, parentPc)] up to the highest index f's pcdata uses."""
        if len(f["funcdata"]) <= FUNCDATA_INLTREE or f["funcdata"][FUNCDATA_INLTREE] == 0xFFFFFFFF:
            return []
        if len(f["pcdata"]) <= PCDATA_INLTREE:
            return []
        _, vals = pc_table(self.pctab, f["pcdata"][PCDATA_INLTREE])
        n = max(vals + [-1]) + 1
        raw = read_vaddr(self.binary, self.gofunc + f["funcdata"][FUNCDATA_INLTREE], 20 * n)
        out = []
        for k in range(n):
            parent, funcid, _, file, line, nameoff, ppc = struct.unpack_from("<hBBiiiI", raw, 20 * k)
            out.append((funcid, file, line, cstr(self.names, nameoff), ppc))
        return out


class Builder:
    """Appends sub-tables and hands out offsets."""

    def __init__(self):
        self.names, self.name_off = bytearray(), {}
        self.files, self.file_off = bytearray(), {}
        self.cutab = []
        self.pctab = bytearray(b"\0")  # offset 0 means "no table"

    def name(self, s):
        if s not in self.name_off:
            self.name_off[s] = len(self.names)
            self.names += s + b"\0"
        return self.name_off[s]

    def file(self, s):
        if s not in self.file_off:
            self.file_off[s] = len(self.files)
            self.files += s + b"\0"
        return self.file_off[s]

    def table(self, data):
        if not data:
            return 0
        off = len(self.pctab)
        self.pctab += data
        return off


def build(tab, funcs, version):
    b = Builder()
    recs = []
    for f in funcs:
        # this function's CU: every file number its pcfile table uses
        _, fvals = pc_table(tab.pctab, f["pcfile"])
        nfile = max(fvals + [0]) + 1
        cu = len(b.cutab)
        for k in range(nfile):
            off, = struct.unpack_from("<I", tab.cutab, 4 * (f["cu"] + k))
            b.cutab.append(b.file(cstr(tab.filetab, off)) if off != 0xFFFFFFFF else 0xFFFFFFFF)
        tables = [b.table(pc_table(tab.pctab, f[k])[0]) for k in ("pcsp", "pcfile", "pcln")]
        pcdata = [b.table(pc_table(tab.pctab, o)[0]) for o in f["pcdata"]]
        tree = [(fid, file, line, b.name(name), ppc) for fid, file, line, name, ppc in tab.inline_tree(f)]
        recs.append((f, b.name(f["name"]), cu, tables, pcdata, tree))
    v116 = version == 116
    ptr = 8
    hdr_words = 7 if v116 else 8
    hdr = 8 + ptr * hdr_words
    cutab = struct.pack("<%dI" % len(b.cutab), *b.cutab)
    while (hdr + len(b.names) + len(cutab) + len(b.files) + len(b.pctab)) % 8:
        b.pctab += b"\0"  # the function table is pointer-aligned, as the linker writes it
    offs = [hdr]
    for part in (b.names, cutab, b.files, b.pctab):
        offs.append(offs[-1] + len(part))
    field = ptr if v116 else 4
    functab_size = (2 * len(recs) + 2) * field
    # _func records, and the funcdata blob (inline trees) they point into
    pcln, blob, rows = bytearray(b"\0" * functab_size), bytearray(), []
    fixed = {116: ptr + 36, 118: 40, 120: 44}[version]
    fixups = []
    for f, nameoff, cu, (pcsp, pcfile, pcln_off), pcdata, tree in recs:
        while len(pcln) % 8:
            pcln += b"\0"
        rows.append((f["entry"], len(pcln)))
        rec = bytearray()
        rec += struct.pack("<Q", f["entry"]) if v116 else struct.pack("<I", f["entry"] - tab.text)
        rec += struct.pack("<iiIIIIII", nameoff, f["args"], f["deferreturn"], pcsp, pcfile, pcln_off,
                           len(pcdata), cu)
        if version == 120:
            rec += struct.pack("<i", 0)  # startLine
        rec += struct.pack("<BBBB", f["funcid"], f["flag"], 0, len(f["funcdata"]))
        assert len(rec) == fixed
        rec += struct.pack("<%dI" % len(pcdata), *pcdata)
        tree_off = None
        if tree:
            tree_off = len(blob)
            for fid, file, line, name, ppc in tree:
                if version == 120:
                    blob += struct.pack("<B3xiii", fid, name, ppc, 0)
                else:
                    blob += struct.pack("<hBxiiiI", -1, fid, file, line, name, ppc)
        fd = [0xFFFFFFFF] * len(f["funcdata"])
        if tree_off is not None:
            fd[FUNCDATA_INLTREE] = tree_off
        if v116:
            if (len(pcln) + len(rec) + offs[4]) % 8:
                rec += b"\0" * 4
            at = len(pcln) + len(rec)
            for k, v in enumerate(fd):
                if v != 0xFFFFFFFF:
                    fixups.append((at + 8 * k, v))
            rec += b"\0" * (8 * len(fd))
        else:
            rec += struct.pack("<%dI" % len(fd), *fd)
        pcln += rec
    end = max(f["end"] for f in funcs)
    for i, (entry, off) in enumerate(rows + [(end, 0)]):
        val = entry if v116 else entry - tab.text
        fmt = "<Q" if v116 else "<I"
        struct.pack_into(fmt, pcln, 2 * i * field, val)
        if i < len(rows):
            struct.pack_into(fmt, pcln, (2 * i + 1) * field, off)
    words = [len(recs), len(b.file_off)] + ([] if v116 else [tab.text]) + offs
    out = bytearray(struct.pack("<IBBBB", {116: 0xFFFFFFFA, 118: 0xFFFFFFF0, 120: 0xFFFFFFF1}[version],
                                0, 0, 1, ptr))
    out += struct.pack("<%dQ" % len(words), *words)
    out += b.names + cutab + b.files + b.pctab
    pcln_start = len(out)
    out += pcln
    while len(out) % 8:
        out += b"\0"
    blob_start = len(out)
    for pos, v in fixups:
        struct.pack_into("<Q", out, pcln_start + pos, BASE + blob_start + v)
    out += blob
    out += struct.pack("<I", blob_start)
    return bytes(out)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    tab = Table(argv[1])
    want = [n.encode() for n in argv[3:]]
    funcs = []
    for i in range(tab.nfunc):
        f = tab.func(i)
        if f["name"] in want:
            funcs.append(f)
    if len(funcs) != len(want):
        raise SystemExit("found %s of %s" % ([f["name"] for f in funcs], want))
    funcs.sort(key=lambda f: f["entry"])
    for v in (116, 118, 120):
        with open("%s/go%d" % (argv[2], v), "wb") as f:
            f.write(build(tab, funcs, v))
    with open("%s/pcs" % argv[2], "w") as f:
        for fn in funcs:
            f.write("%x %x %s\n" % (fn["entry"], fn["end"], fn["name"].decode()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

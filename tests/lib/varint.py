"""varint.py - the unsigned LEB128 varints that prof.data (src/data/format.c)
and Go's pc-value tables share, for the test scripts that read or write
them (tests/lib/profdata-rewrite.py, tests/fuzz/mkseed_gopclntab.py)."""


def uvarint(buf, pos):
    """The value at buf[pos] and the position after it."""
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def put_uvarint(v):
    """v's bytes, least significant group first."""
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)

#!/usr/bin/env python3
"""profdata-rewrite.py IN OUT OLD=NEW... - a hostile prof.data for tests:
copies IN to OUT with every STRING record equal to OLD replaced by NEW
(src/data/format.c: magic, varint version, then u8 type | varint length |
payload; type 1 is a string).  Other records are copied byte for byte."""
import sys


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def put_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def main():
    src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
    swap = {old.encode(): new.encode() for old, new in (p.split("=", 1) for p in pairs)}
    buf = open(src, "rb").read()
    assert buf[:8] == b"PROFDATA", "not a prof.data file"
    _, i = varint(buf, 8)
    out = bytearray(buf[:i])
    done = 0
    while i < len(buf):
        rtype = buf[i]
        n, j = varint(buf, i + 1)
        payload = buf[j:j + n]
        if rtype == 1 and payload in swap:
            payload = swap[payload]
            done += 1
        out += bytes([rtype]) + put_varint(len(payload)) + payload
        i = j + n
    open(dst, "wb").write(out)
    print(f"rewrote {done} strings")
    sys.exit(0 if done else 1)


main()

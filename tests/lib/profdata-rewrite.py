#!/usr/bin/env python3
"""profdata-rewrite.py IN OUT OLD=NEW... - a hostile prof.data for tests:
copies IN to OUT with every STRING record equal to OLD replaced by NEW
(src/data/format.c: magic, varint version, then u8 type | varint length |
payload; type 1 is a string).  Other records are copied byte for byte."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from varint import put_uvarint, uvarint  # noqa: E402


def main():
    src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
    swap = {old.encode(): new.encode() for old, new in (p.split("=", 1) for p in pairs)}
    buf = open(src, "rb").read()
    assert buf[:8] == b"PROFDATA", "not a prof.data file"
    _, i = uvarint(buf, 8)
    out = bytearray(buf[:i])
    done = 0
    while i < len(buf):
        rtype = buf[i]
        n, j = uvarint(buf, i + 1)
        payload = buf[j:j + n]
        if rtype == 1 and payload in swap:
            payload = swap[payload]
            done += 1
        out += bytes([rtype]) + put_uvarint(len(payload)) + payload
        i = j + n
    open(dst, "wb").write(out)
    print(f"rewrote {done} strings")
    sys.exit(0 if done else 1)


main()

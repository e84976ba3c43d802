"""pydeep.py - a thread that blocks at the bottom of a deep stack of
Python called back from C: DEPTH levels, each a sorted() whose key
function goes one level deeper (an activation of the interpreter loop
each), and at the bottom naps of 2 ms in nap_at_bottom for SECONDS.  An
off-CPU sample copies 8 KiB of the C stack, less than 40 such levels
take, so its native stack stops short of the thread's root.

    python3 pydeep.py DEPTH SECONDS
"""
import sys
import time


def nap_at_bottom(end):
    while time.monotonic() < end:
        time.sleep(0.002)


def level(n, end):
    if n == 0:
        nap_at_bottom(end)
        return 0
    return sorted([n], key=lambda x: level(n - 1, end))[0]


level(int(sys.argv[1]), time.monotonic() + float(sys.argv[2]))

"""pysplit.py - a CPython program with a known CPU split, for the Python
frames tests (t1171, t1172), scripts/bench/python.sh, python-pairs.sh and
python-attach.sh.

The main thread runs rounds of three functions: pure_loop (pure Python),
compress (zlib.compress, native code under a Python caller) and recurse (a
16-deep Python recursion that works at its bottom).  A second thread runs
spin (pure Python).  The program measures each function's own CPU time
with time.thread_time() and prints it as JSON at the end, so the test can
compare prof's shares with the program's.

usage: pysplit.py ROUNDS            run ROUNDS rounds, then print the JSON
       pysplit.py --forever FILE     run until killed, rewriting FILE with
                                     the JSON after every round (attach tests)
       pysplit.py --seconds S [N]    rounds for S seconds of wall time, with N
                                     spinning threads (default 1), then the
                                     JSON (scripts/bench/python.sh)
       pysplit.py --progress FILE ARGS...
                                     as with ARGS, and at each SIGUSR1 FILE
                                     is rewritten with "TIME LOOPS": the
                                     time.monotonic() and the spinning
                                     threads' loops at that moment
                                     (scripts/bench/python-attach.sh's
                                     windows of one long run)
The JSON: {"pid", "rounds", "pure_loop", "compress", "recurse", "spin",
"loops", "cpu"}: CPU seconds of each function (spin: of the first spinning
thread), the spinning threads' loops (of 20,000 iterations) and the
process's CPU seconds.

glibc is told to keep freed memory (M_TRIM_THRESHOLD, M_MMAP_THRESHOLD):
otherwise each zlib.compress gives its 256 KiB of state back to the
kernel and faults it in again.  On a loaded VM half of compress's time
was then the kernel's page faults, and the cpu-clock samples of that time
fall short of the thread's CPU time, perf's as much as prof's
(kernel-notes/events.md): compress got 83% of its share, pure_loop 100%.
Kept, compress is zlib's own code.

The progress snapshot is taken by the main thread in a signal handler, when
asked, rather than written at intervals: the main thread's rounds are
seconds apart with 51 threads sharing the GIL, a writer thread would be one
more thread taking turns at it, and the spinning threads already keep their
counts; the workload is left as it is between snapshots.
"""
import json
import os
import signal
import sys
import threading
import time
import zlib

DEPTH = 16


def keep_freed_memory():
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 16 << 20)   # M_MMAP_THRESHOLD (at most 32 MiB)
    except (ImportError, OSError, AttributeError):
        pass  # not glibc, or no ctypes: the program runs as it is


DATA = bytes((i * 7919) % 251 for i in range(1 << 16)) * 4


def pure_loop(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def compress(n):
    out = 0
    for _ in range(n):
        out += len(zlib.compress(DATA, 9))
    return out


def recurse(depth, n):
    if depth > 1:
        return recurse(depth - 1, n)
    s = 0
    for i in range(n):
        s ^= i * 3
    return s


def spin(stop, box):
    # about a third of the main thread's CPU: busy, then a short sleep
    t0 = time.thread_time()
    loops = 0
    while not stop.is_set():
        pure = 0
        for i in range(20000):
            pure += i & 5
        loops += 1
        box["spin"] = time.thread_time() - t0
        box["loops"] = loops
        time.sleep(0.002)


def timed(acc, name, fn, *args):
    t0 = time.thread_time()
    fn(*args)
    acc[name] += time.thread_time() - t0


def report(acc, box, rounds):
    return json.dumps(dict(acc, pid=os.getpid(), rounds=rounds, spin=box.get("spin", 0.0),
                           loops=box.get("loops", 0), cpu=time.process_time()))


def progress(path, boxes):
    # the count and its time together, before the file's I/O lets the
    # other threads run
    loops = sum(b.get("loops", 0) for b in boxes)
    now = time.monotonic()
    with open(path + ".tmp", "w") as f:
        f.write("%.6f %d\n" % (now, loops))
    os.rename(path + ".tmp", path)


def main():
    keep_freed_memory()
    progress_file = None
    if sys.argv[1] == "--progress":
        progress_file = sys.argv[2]
        del sys.argv[1:3]
    forever = sys.argv[1] == "--forever"
    timed_run = sys.argv[1] == "--seconds"
    rounds = 0 if forever or timed_run else int(sys.argv[1])
    end = time.monotonic() + float(sys.argv[2]) if timed_run else 0
    spinners = int(sys.argv[3]) if timed_run and len(sys.argv) > 3 else 1
    acc = {"pure_loop": 0.0, "compress": 0.0, "recurse": 0.0}
    stop, box = threading.Event(), {}
    boxes = [box] + [{} for _ in range(spinners - 1)]
    threads = [threading.Thread(target=spin, args=(stop, b), name="spinner") for b in boxes]
    if progress_file:
        signal.signal(signal.SIGUSR1, lambda *_: progress(progress_file, boxes))
    for th in threads:
        th.start()
    r = 0
    while forever or (r < rounds if not timed_run else time.monotonic() < end):
        timed(acc, "pure_loop", pure_loop, 600000)
        timed(acc, "compress", compress, 24)
        timed(acc, "recurse", recurse, DEPTH, 350000)
        r += 1
        if forever:
            with open(sys.argv[2] + ".tmp", "w") as f:
                f.write(report(acc, box, r))
            os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    stop.set()
    for th in threads:
        th.join()
    box["loops"] = sum(b.get("loops", 0) for b in boxes)
    print(report(acc, box, r))


if __name__ == "__main__":
    main()

"""pywait.py - a CPython program whose threads block in known Python
functions, for the off-CPU Python frames test (t1171).

Two threads (the main one and one more) each alternate ROUNDS times
between nap, which blocks in time.sleep (clock_nanosleep), and
lock_wait, which blocks on a held threading.Lock for the same 5 ms (a
semaphore wait).  Both are called from the same loop at the same depth,
so their Python frames take the same slot of the thread's frame stack
one after the other: a chain read after the thread moved on from one to
the other would put the wrong function over the other's blocking call,
which the test looks for.

usage: pywait.py [ROUNDS]    (default 100: about 1 s per thread)
"""
import sys
import threading
import time

WAIT = 0.005


def nap():
    time.sleep(WAIT)


def lock_wait(lock):
    lock.acquire(timeout=WAIT)


def run(rounds):
    lock = threading.Lock()
    lock.acquire()  # held: every lock_wait times out after WAIT
    for _ in range(rounds):
        nap()
        lock_wait(lock)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    other = threading.Thread(target=run, args=(rounds,))
    other.start()
    run(rounds)
    other.join()


if __name__ == "__main__":
    main()

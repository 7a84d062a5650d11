#!/usr/bin/env python3
"""A steady read load on disks, for `arrayburn watch`'s tests: for SECONDS,
each DEV read at RATE requests a second (64 KiB each, O_DIRECT, one at a
time, paced against the clock), at places spread over its first 32 MiB.

With LOAD_SHIFT=AFTER:MIB in the environment, after AFTER seconds every
reader moves on to the 32 MiB from MIB MiB (a workload that turns to
another part of the disks, at the same rate).

usage: load.py SECONDS RATE:DEV [RATE:DEV ...]"""

import mmap
import os
import sys
import threading
import time

CHUNK = 64 << 10


def reader(dev, rate, until, shift):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, CHUNK)
    span = min(os.lseek(fd, 0, os.SEEK_END), 32 << 20) - CHUNK
    began, n = time.monotonic(), 0
    while time.monotonic() < until:
        base = shift[1] if shift and time.monotonic() >= shift[0] else 0
        os.preadv(fd, [buf], base + (n * 7 * CHUNK) % span // 4096 * 4096)
        n += 1
        wait = began + n / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    os.close(fd)


def main():
    began = time.monotonic()
    until = began + float(sys.argv[1])
    shift = None
    if os.environ.get("LOAD_SHIFT"):
        after, mib = os.environ["LOAD_SHIFT"].split(":")
        shift = (began + float(after), int(mib) << 20)
    threads = []
    for arg in sys.argv[2:]:
        rate, dev = arg.split(":", 1)
        t = threading.Thread(target=reader, args=(dev, float(rate), until, shift))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


main()

#!/usr/bin/env python3
"""A steady read load on disks, for `arrayburn watch`'s tests: for SECONDS,
each DEV read at RATE requests a second (64 KiB each, O_DIRECT, one at a
time, paced against the clock), at places spread over its first 32 MiB.

usage: load.py SECONDS RATE:DEV [RATE:DEV ...]"""

import mmap
import os
import sys
import threading
import time

CHUNK = 64 << 10


def reader(dev, rate, until):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, CHUNK)
    span = min(os.lseek(fd, 0, os.SEEK_END), 32 << 20) - CHUNK
    began, n = time.monotonic(), 0
    while time.monotonic() < until:
        os.preadv(fd, [buf], (n * 7 * CHUNK) % span // 4096 * 4096)
        n += 1
        wait = began + n / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    os.close(fd)


def main():
    until = time.monotonic() + float(sys.argv[1])
    threads = []
    for arg in sys.argv[2:]:
        rate, dev = arg.split(":", 1)
        t = threading.Thread(target=reader, args=(dev, float(rate), until))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


main()

#!/usr/bin/env python3
"""Verdicts under interference: repeated checks of identical loop devices
whose blk-throttle read limits a background thread moves over time, with
and without a disk held lower. Counts, per scenario and build, the healthy
disks blamed (false alarms: called slow), the healthy disks left unsure,
and whether the slow disk was found (called slow).

Scenarios: steady; independent jitter (each disk +-10 % every 250 ms);
shared drifts (the same factor for every disk at each moment: sines of
several sizes and periods with a random phase, and a random walk), each
also with one disk at 85 %; two slow disks of eight under a drift.

Run through bench/interference.sh (it builds arrayburn). Needs root and
cgroup v1 blkio. Creates its own loop devices, files and cgroup and
removes exactly those. Prints Markdown tables for docs/benchmarks.md.
"""
import argparse
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from fio_compare import fill, sh  # noqa: E402

MB = 1_000_000
BLKIO = "/sys/fs/cgroup/blkio"


def sine(amp, period):
    def f(t, phase):
        return 1.0 + amp * math.sin(2 * math.pi * t / period + phase)
    f.words = f"shared sine ±{amp * 100:.0f} %, period {period:.0f} s"
    return f


def walk(step, bound):
    state = {"v": 1.0, "t": 0.0}

    def f(t, phase):
        while state["t"] < t:
            state["t"] += 0.5
            state["v"] = min(1 + bound, max(1 - bound, state["v"] + random.uniform(-step, step)))
        return state["v"]
    f.words = f"shared random walk (±{step * 100:.0f} % per 0.5 s, within ±{bound * 100:.0f} %)"
    f.reset = lambda: state.update(v=1.0, t=0.0)
    return f


def steady(t, phase):
    return 1.0


steady.words = "steady"


class Array:
    """`n` memory-backed loop devices and a blkio cgroup limiting them."""

    def __init__(self, n, size, tmp):
        self.devs, self.files = [], []
        self.group = os.path.join(BLKIO, f"arrayburn-bench-{os.getpid()}")
        os.makedirs(self.group)
        # A private directory of its own in /dev/shm (anyone may write
        # there): no name another user could plant a link at.
        self.shm = tempfile.mkdtemp(prefix="arrayburn-bench-", dir="/dev/shm")
        for i in range(n):
            path = os.path.join(self.shm, f"disk-{i}")
            self.files.append(path)
            fill(path, size)
            self.devs.append(sh("losetup", "-f", "--show", "--direct-io=on", path).strip())
        self.majmin = [sh("stat", "-c", "%t:%T", d).strip() for d in self.devs]
        self.majmin = [":".join(str(int(x, 16)) for x in mm.split(":")) for mm in self.majmin]

    def limit(self, i, bps):
        with open(os.path.join(self.group, "blkio.throttle.read_bps_device"), "w") as f:
            f.write(f"{self.majmin[i]} {int(bps)}\n")

    def close(self):
        for d in self.devs:
            subprocess.run(["losetup", "-d", d])
        for f in self.files:
            if os.path.exists(f):
                os.remove(f)
        os.rmdir(self.shm)
        for i in range(len(self.majmin)):
            try:
                self.limit(i, 0)
            except OSError:
                pass
        try:
            os.rmdir(self.group)
        except OSError:
            pass


def run_check(binary, array, levels, shared, jitter, base, args, tmp):
    """One check under the moving limits; returns (verdict per disk, exit)."""
    stop = threading.Event()
    phase = random.uniform(0, 2 * math.pi)
    if hasattr(shared, "reset"):
        shared.reset()
    t0 = time.monotonic()

    def mover():
        noise = [1.0] * len(levels)
        last_jitter = 0.0
        while not stop.is_set():
            t = time.monotonic() - t0
            if jitter and t - last_jitter >= 0.25:
                noise = [random.uniform(0.9, 1.1) for _ in levels]
                last_jitter = t
            for i, lv in enumerate(levels):
                array.limit(i, base * lv * shared(t, phase) * noise[i])
            stop.wait(0.1)

    for i, lv in enumerate(levels):
        array.limit(i, base * lv * shared(0, phase))
    th = threading.Thread(target=mover)
    th.start()
    report = os.path.join(tmp, "r.json")
    procs = os.path.join(array.group, "cgroup.procs")
    cmd = ["sh", "-c", f'echo $$ > {procs} && exec "$0" "$@"', binary, "check",
           "--progress", "none", "--json", report, *args, *array.devs]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        stop.set()
        th.join()
    if p.returncode not in (0, 1, 3):
        raise RuntimeError(f"exit {p.returncode}: {p.stderr}")
    r = json.load(open(report))
    calls = ["ok"] * len(levels)
    for f in r["summary"]["flagged"]:
        i = array.devs.index(f["path"])
        if f["verdict"] in ("slow", "error"):
            calls[i] = "slow"
        elif f["verdict"] == "unsure" and calls[i] != "slow":
            calls[i] = "unsure"
    return calls, p.returncode, r


def main():
    # SIGTERM unwinds like Ctrl-C, so the devices and the cgroup go.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--against", help="an earlier build, run alongside")
    ap.add_argument("--unsliced", action="store_true",
                    help="also run this build with --slices 1 (each serial sample at once)")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--disks", type=int, default=8)
    ap.add_argument("--size", type=int, default=192 << 20)
    ap.add_argument("--base", type=int, default=100 * MB)
    ap.add_argument("--sample", default="4s")
    ap.add_argument("--slow", type=float, default=0.85)
    ap.add_argument("--only", help="run only scenarios whose name contains this")
    ap.add_argument("--keep", help="save here the report of each run that blamed a healthy "
                    "disk or left one unsure")
    a = ap.parse_args()
    n = a.disks
    healthy = [1.0] * n
    one = [a.slow if i == n // 2 else 1.0 for i in range(n)]
    two = [a.slow if i in (1, n - 2) else 1.0 for i in range(n)]
    scenarios = [
        ("steady", healthy, steady, False),
        ("steady, one at 85 %", one, steady, False),
        ("jitter ±10 % / 250 ms", healthy, steady, True),
        ("jitter, one at 85 %", one, steady, True),
    ]
    for amp, period in [(0.1, 20), (0.15, 40), (0.2, 60), (0.1, 120)]:
        s = sine(amp, period)
        scenarios.append((s.words, healthy, s, False))
        scenarios.append((s.words + ", one at 85 %", one, s, False))
    w = walk(0.03, 0.15)
    scenarios.append((w.words, healthy, w, False))
    scenarios.append((w.words + ", one at 85 %", one, w, False))
    s = sine(0.15, 40)
    scenarios.append((s.words + ", two at 85 %", two, s, False))
    if a.only:
        scenarios = [x for x in scenarios if a.only in x[0]]
    builds = [("this build", a.binary, [])]
    if a.against:
        builds.append(("earlier build", a.against, []))
    if a.unsliced:
        builds.append(("--slices 1", a.binary, ["--slices", "1"]))
    tmp = tempfile.mkdtemp()
    array = Array(n, a.size, tmp)
    rows = []
    try:
        for name, levels, shared, jitter in scenarios:
            for bname, binary, extra in builds:
                blamed = unsure = found = runs = 0
                for _ in range(a.runs):
                    args = ["--sample", a.sample, "--block", "1m", *extra]
                    calls, _, report = run_check(binary, array, levels, shared, jitter, a.base,
                                                 args, tmp)
                    runs += 1
                    slow_disks = [i for i, lv in enumerate(levels) if lv < 1.0]
                    wrong = [i for i, c in enumerate(calls) if c != "ok" and i not in slow_disks]
                    blamed += sum(1 for i in wrong if calls[i] == "slow")
                    unsure += sum(1 for i in wrong if calls[i] == "unsure")
                    if wrong and a.keep:
                        os.makedirs(a.keep, exist_ok=True)
                        kept = os.path.join(a.keep, f"run-{len(os.listdir(a.keep))}.json")
                        report["bench_scenario"] = f"{name} [{bname}]"
                        with open(kept, "w") as f:
                            json.dump(report, f, indent=1)
                    found += all(calls[i] == "slow" for i in slow_disks) if slow_disks else 0
                    print(f"{name} [{bname}]: {calls}", file=sys.stderr, flush=True)
                has_slow = any(lv < 1.0 for lv in levels)
                rows.append((name, bname, runs, blamed, unsure, f"{found}/{runs}" if has_slow else "-"))
    finally:
        array.close()
    print(f"\n{n} memory-backed loop devices, {a.base / MB:.0f} MB/s each (blk-throttle), "
          f"`--sample {a.sample} --block 1m`, {a.runs} runs per row\n")
    print("| Conditions | Build | Runs | Healthy disks blamed | Healthy disks unsure | Slow disk(s) found |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reads the same loop device with arrayburn and with fio (psync, O_DIRECT,
same block size) in alternating runs, and prints MB/s, the paired ratio and
each reader's CPU time per GiB. Also sweeps arrayburn's block size.

Run through bench/fio-compare.sh (it installs fio and builds arrayburn).
It creates its own loop devices and files and removes exactly those.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

GIB = 1 << 30


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def fill(path, size):
    """A non-sparse, incompressible file (AES-CTR keystream)."""
    with open(path, "wb") as out:
        enc = subprocess.Popen(
            ["openssl", "enc", "-aes-128-ctr", "-pass", "pass:arrayburn-bench", "-nosalt", "-pbkdf2"],
            stdin=open("/dev/zero", "rb"),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        left = size
        while left:
            chunk = enc.stdout.read(min(left, 8 << 20))
            out.write(chunk)
            left -= len(chunk)
        enc.kill()
        enc.wait()


def timed(cmd):
    """Runs cmd; returns (stdout, cpu seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def run_fio(dev, bs, size):
    out, cpu = timed(["fio", "--name=r", f"--filename={dev}", "--rw=read", "--direct=1",
                      "--ioengine=psync", f"--bs={bs}", "--output-format=json"])
    job = json.loads(out)["jobs"][0]["read"]
    return job["bw_bytes"] / 1e6, cpu / (job["io_bytes"] / GIB)


def run_arrayburn(binary, dev, bs, tmp):
    report = os.path.join(tmp, "r.json")
    _, cpu = timed([binary, "check", dev, "--passes", "serial", "--full-serial", "--block", bs,
                    "--progress", "none", "--json", report])
    disk = json.load(open(report))["passes"][0]["disks"][0]
    return disk["mb_per_s"], cpu / (disk["bytes"] / GIB)


def summary(values):
    return f"{statistics.median(values):8.1f} ({min(values):.1f}–{max(values):.1f})"


def compare(binary, dev, bs, rounds, cold, tmp):
    rows = {"fio": [], "arrayburn": [], "ratio": [], "fio_cpu": [], "ab_cpu": []}
    for r in range(rounds):
        order = ["fio", "arrayburn"] if r % 2 == 0 else ["arrayburn", "fio"]
        got = {}
        for tool in order:
            if cold:
                drop_caches()
            got[tool] = run_fio(dev, bs, None) if tool == "fio" else run_arrayburn(binary, dev, bs, tmp)
        rows["fio"].append(got["fio"][0])
        rows["arrayburn"].append(got["arrayburn"][0])
        rows["ratio"].append(got["arrayburn"][0] / got["fio"][0])
        rows["fio_cpu"].append(got["fio"][1])
        rows["ab_cpu"].append(got["arrayburn"][1])
        print(f"  round {r + 1}: fio {got['fio'][0]:.0f} MB/s, arrayburn {got['arrayburn'][0]:.0f} MB/s, "
              f"ratio {rows['ratio'][-1]:.3f}", file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--shm-size", type=int, default=4 * GIB)
    ap.add_argument("--disk-size", type=int, default=4 * GIB)
    ap.add_argument("--disk-dir", default="/var/tmp")
    ap.add_argument("--block", default="4m")
    ap.add_argument("--sweep", default="1m,2m,4m,8m,16m")
    args = ap.parse_args()

    made = []  # (loop device, file) to remove, in creation order
    try:
        with tempfile.TemporaryDirectory() as tmp:
            devices = []
            for kind, d, size, dio in [("memory-backed (/dev/shm)", "/dev/shm", args.shm_size, False),
                                       (f"disk-backed ({args.disk_dir}, --direct-io=on)", args.disk_dir, args.disk_size, True)]:
                path = os.path.join(d, f"arrayburn-bench-{os.getpid()}-{len(made)}.img")
                made.append([None, path])
                fill(path, size)
                dev = sh("losetup", "-f", "--show", *(["--direct-io=on"] if dio else []), path).strip()
                made[-1][0] = dev
                devices.append((kind, dev, dio))
            print(f"# arrayburn vs fio --ioengine=psync --direct=1, bs={args.block}, {args.rounds} alternating rounds")
            print("| device | fio MB/s median (min–max) | arrayburn MB/s median (min–max) | ratio median (min–max) | fio CPU s/GiB | arrayburn CPU s/GiB |")
            print("|---|---|---|---|---|---|")
            for kind, dev, dio in devices:
                rows = compare(args.binary, dev, args.block, args.rounds, dio, tmp)
                print(f"| {kind} | {summary(rows['fio'])} | {summary(rows['arrayburn'])} | "
                      f"{statistics.median(rows['ratio']):.3f} ({min(rows['ratio']):.3f}–{max(rows['ratio']):.3f}) | "
                      f"{statistics.median(rows['fio_cpu']):.3f} | {statistics.median(rows['ab_cpu']):.3f} |")
            print()
            print(f"# arrayburn block-size sweep ({args.rounds} rounds each, round-robin)")
            sizes = args.sweep.split(",")
            print("| device | " + " | ".join(f"{b} MB/s" for b in sizes) + " |")
            print("|---|" + "---|" * len(sizes))
            for kind, dev, dio in devices:
                res = {b: [] for b in sizes}
                for _ in range(args.rounds):
                    for b in sizes:
                        if dio:
                            drop_caches()
                        res[b].append(run_arrayburn(args.binary, dev, b, tmp)[0])
                print(f"| {kind} | " + " | ".join(summary(res[b]) for b in sizes) + " |")
    finally:
        for dev, path in reversed(made):
            if dev:
                subprocess.run(["losetup", "-d", dev])
            if os.path.exists(path):
                os.remove(path)


if __name__ == "__main__":
    main()

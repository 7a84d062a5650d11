#!/usr/bin/env python3
"""arrayburn iozone against fio and dd on the same file, same run.

1. O_DIRECT on a disk-backed filesystem: `arrayburn iozone -I -i 0 -i 1
   -r 1m -s SIZE` (write of a new file, then read) against fio (psync,
   direct=1, bs=1m; once with its default buffer, once with the buffer in
   huge pages, --iomem=shmhuge, which needs root: 16 huge pages are
   reserved for the run and the setting restored) and dd
   (oflag/iflag=direct, bs=1M) on the same path, rounds rotating which tool
   goes first. MB/s are decimal.
2. Cached, on tmpfs: CPU seconds (user+system) per GiB moved by
   `arrayburn iozone -i 0 -i 1` (write, rewrite, read, reread = 4x the
   file) with 1 MiB and 4 KiB records, against fio doing the same bytes.

Prints Markdown tables for docs/benchmarks.md. Removes its files.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

from fio_compare import timed as run  # (stdout, cpu seconds of the child)


def arrayburn(binary, path, size_mb, rec, direct):
    rm(path)
    js = path + ".json"
    args = [binary, "iozone", "-i", "0", "-i", "1", "-r", rec, "-s", f"{size_mb}m", "-f", path, "--json", js]
    if direct:
        args.append("-I")
    _, cpu = run(args)
    with open(js) as f:
        doc = json.load(f)
    os.remove(js)
    speed = {r["test"]: r["bytes_per_s"] / 1e6 for r in doc["results"]}
    return speed, cpu


def fio(path, size_mb, rw, bs, direct, huge=False):
    out, cpu = run([
        "fio", "--name=x", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--size={size_mb}m",
        f"--direct={1 if direct else 0}", "--ioengine=psync", "--output-format=json",
    ] + (["--iomem=shmhuge"] if huge else []))
    job = json.loads(out)["jobs"][0]
    side = "write" if "write" in rw else "read"
    return job[side]["bw_bytes"] / 1e6, cpu


def dd(path, size_mb, write):
    if write:
        rm(path)
        cmd = ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={size_mb}", "oflag=direct"]
    else:
        cmd = ["dd", f"if={path}", "of=/dev/null", "bs=1M", "iflag=direct"]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    # "... bytes (...) copied, 1.23 s, 456 MB/s"
    secs = float(r.stderr.strip().splitlines()[-1].split(",")[-2].split()[0])
    return size_mb * 1048576 / secs / 1e6


def rm(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def med(v):
    return f"{statistics.median(v):.0f} ({min(v):.0f}–{max(v):.0f})"


def direct_table(a):
    path = tempfile.mktemp(prefix="arrayburn-ioz-", dir=a.disk_dir)
    r = {k: [] for k in ["ab_w", "ab_r", "fio_w", "fio_r", "dd_w", "dd_r", "fh_w", "fh_r"]}
    # fio with its buffer in huge pages, as arrayburn's is: a 1 MiB O_DIRECT
    # transfer is then a few physically contiguous segments, not 256 pages.
    hp = "/proc/sys/vm/nr_hugepages"
    saved = open(hp).read().strip()
    with open(hp, "w") as f:
        f.write("16")
    try:
        for n in range(a.rounds):
            order = ["ab", "fio", "dd", "fh"]
            order = order[n % 4:] + order[:n % 4]
            for tool in order:
                if tool == "ab":
                    s, _ = arrayburn(a.binary, path, a.size_mb, "1m", True)
                    r["ab_w"].append(s["write"])
                    r["ab_r"].append(s["read"])
                elif tool in ("fio", "fh"):
                    rm(path)
                    w, _ = fio(path, a.size_mb, "write", "1m", True, tool == "fh")
                    rd, _ = fio(path, a.size_mb, "read", "1m", True, tool == "fh")
                    r[f"{tool}_w"].append(w)
                    r[f"{tool}_r"].append(rd)
                else:
                    r["dd_w"].append(dd(path, a.size_mb, True))
                    r["dd_r"].append(dd(path, a.size_mb, False))
    finally:
        rm(path)
        with open(hp, "w") as f:
            f.write(saved)
    print(f"O_DIRECT, 1 MiB records, {a.size_mb} MiB file in {a.disk_dir}, {a.rounds} rounds, "
          "MB/s median (min–max):\n")
    print("| | arrayburn iozone -I | fio direct=1 psync | fio, huge-page buffer | dd direct |")
    print("|---|---|---|---|---|")
    print(f"| write (new file) | {med(r['ab_w'])} | {med(r['fio_w'])} | {med(r['fh_w'])} | {med(r['dd_w'])} |")
    print(f"| read | {med(r['ab_r'])} | {med(r['fio_r'])} | {med(r['fh_r'])} | {med(r['dd_r'])} |")
    print()


def cpu_table(a):
    path = tempfile.mktemp(prefix="arrayburn-ioz-", dir="/dev/shm")
    gib = 4 * a.tmpfs_mb / 1024  # write, rewrite, read, reread
    print(f"Cached on tmpfs, `-i 0 -i 1` with a {a.tmpfs_mb} MiB file ({gib:.0f} GiB moved), "
          "CPU seconds per GiB, median of rounds:\n")
    print("| record | arrayburn iozone | fio (same bytes, psync) |")
    print("|---|---|---|")
    try:
        for rec, bs in [("1m", "1m"), ("4k", "4k")]:
            ab, fo = [], []
            for _ in range(a.rounds):
                _, cpu = arrayburn(a.binary, path, a.tmpfs_mb, rec, False)
                ab.append(cpu / gib)
                rm(path)
                cpu = 0.0
                for rw in ["write", "write", "read", "read"]:
                    _, c = fio(path, a.tmpfs_mb, rw, bs, False)
                    cpu += c
                fo.append(cpu / gib)
                rm(path)
            print(f"| {rec} | {statistics.median(ab):.3f} | {statistics.median(fo):.3f} |")
    finally:
        rm(path)
    print()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--size-mb", type=int, default=512)
    p.add_argument("--tmpfs-mb", type=int, default=1024)
    p.add_argument("--disk-dir", default="/var/tmp")
    a = p.parse_args()
    direct_table(a)
    cpu_table(a)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""arrayburn's engines (psync, io_uring at several queue depths) against
fio's (psync, io_uring with huge-page buffers) on the same loop devices,
alternating runs: one memory-backed disk, one disk-backed disk, and eight
memory-backed disks read at once (aggregate MB/s and the spread between
the fastest and the slowest disk, the fairness a parallel pass needs).
`--against BINARY` reads an earlier build alongside (`--no-fio`: only
the two builds, the ratio then against the earlier build's best).
Prints Markdown tables for docs/benchmarks.md.

Run through bench/engine-compare.sh (it installs fio and builds arrayburn).
It creates its own loop devices and files and removes exactly those; it
reserves huge pages for fio's buffers and gives them back.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from fio_compare import GIB, drop_caches, fill, sh  # noqa: E402


CGROUP = f"/sys/fs/cgroup/cpuacct/arrayburn-engine-{os.getpid()}"


def timed(cmd, ok=(0,)):
    """Runs `cmd` in a cpuacct cgroup of its own: its output and the CPU
    seconds of every process it started (arrayburn reads in a child its
    parent does not wait for, which getrusage of the children would miss;
    fio's jobs are counted the same way)."""
    def usage():
        return int(open(f"{CGROUP}/cpuacct.usage").read()) / 1e9

    def procs():
        return open(f"{CGROUP}/cgroup.procs").read().strip()

    before = usage()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       preexec_fn=lambda: open(f"{CGROUP}/cgroup.procs", "w").write(str(os.getpid())))
    if p.returncode not in ok:
        raise RuntimeError(f"{cmd}: exit {p.returncode}: {p.stderr}")
    for _ in range(200):
        if not procs():
            break
        time.sleep(0.05)
    else:
        print(f"{cmd[0]}: still running 10 s after it returned; its CPU is cut there", file=sys.stderr)
    return p.stdout, usage() - before


def fio(devs, engine, depth, bs):
    """Reads each device whole, one job per device: per-device MB/s, the
    aggregate MB/s (bytes over the longest job) and CPU s/GiB."""
    cmd = ["fio", "--rw=read", "--direct=1", f"--bs={bs}", "--output-format=json",
           f"--ioengine={engine}", "--iomem=shmhuge"]
    if engine == "io_uring":
        cmd += [f"--iodepth={depth}", "--fixedbufs", "--registerfiles"]
    for i, d in enumerate(devs):
        cmd += [f"--name=d{i}", f"--filename={d}"]
    out, cpu = timed(cmd)
    jobs = [j["read"] for j in json.loads(out)["jobs"]]
    total = sum(j["io_bytes"] for j in jobs)
    longest = max(j["runtime"] for j in jobs) / 1e3
    return [j["bw_bytes"] / 1e6 for j in jobs], total / longest / 1e6, cpu / (total / GIB)


def arrayburn(binary, devs, engine, depth, bs, tmp):
    report = os.path.join(tmp, "r.json")
    passes = ["--passes", "serial", "--full-serial"] if len(devs) == 1 else ["--passes", "parallel", "--full"]
    how = [] if engine is None else ["--engine", engine, "--queue-depth", str(depth)]
    _, cpu = timed([binary, "check", *devs, *passes, "--block", bs, *how,
                    "--progress", "none", "--json", report],
                   ok=(0, 1, 3))  # 3: one disk has no peers to be judged against
    disks = json.load(open(report))["passes"][0]["disks"]
    total = sum(d["bytes"] for d in disks)
    longest = max(d["elapsed_s"] for d in disks)
    return [d["mb_per_s"] for d in disks], total / longest / 1e6, cpu / (total / GIB)


def med(v):
    return f"{statistics.median(v):.0f} ({min(v):.0f}–{max(v):.0f})"


def run(configs, rounds, cold):
    """configs: name -> callable() returning (per-disk, aggregate, cpu).
    Rounds alternate the order; returns name -> lists."""
    res = {n: {"agg": [], "spread": [], "cpu": []} for n in configs}
    names = list(configs)
    for r in range(rounds):
        order = names if r % 2 == 0 else list(reversed(names))
        for n in order:
            if cold:
                drop_caches()
            per, agg, cpu = configs[n]()
            res[n]["agg"].append(agg)
            res[n]["spread"].append(max(per) / min(per))
            res[n]["cpu"].append(cpu)
        print(f"  round {r + 1} done", file=sys.stderr)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--depths", default="1,2,4,8,16")
    ap.add_argument("--block", default="4m")
    ap.add_argument("--shm-size", type=int, default=4 * GIB)
    ap.add_argument("--disk-size", type=int, default=2 * GIB)
    ap.add_argument("--disk-dir", default="/var/tmp")
    ap.add_argument("--array", type=int, default=8)
    ap.add_argument("--array-size", type=int, default=GIB // 2)
    ap.add_argument("--against", help="another arrayburn binary (an earlier build) read alongside")
    ap.add_argument("--no-fio", action="store_true", help="compare arrayburn builds only")
    ap.add_argument("--array-only", action="store_true", help="the disks read at once only")
    args = ap.parse_args()
    if args.no_fio and not args.against:
        ap.error("--no-fio compares two arrayburn builds: give the earlier one with --against")
    depths = [int(d) for d in args.depths.split(",")]
    bs = args.block

    hp = "/proc/sys/vm/nr_hugepages"
    hp_before = open(hp).read().strip()
    made = []
    os.mkdir(CGROUP)
    try:
        # fio's shmhuge buffers: bs x depth per job, 2 MiB pages.
        need = args.array * max(depths) * (4 << 20) // (2 << 20) + 64
        open(hp, "w").write(f"{need}\n")
        with tempfile.TemporaryDirectory() as tmp:
            def loop(d, size, dio):
                path = os.path.join(d, f"arrayburn-engine-{os.getpid()}-{len(made)}.img")
                made.append([None, path])
                fill(path, size)
                dev = sh("losetup", "-f", "--show", *(["--direct-io=on"] if dio else []), path).strip()
                made[-1][0] = dev
                return dev

            cases = []
            if not args.array_only:
                shm = loop("/dev/shm", args.shm_size, False)
                disk = loop(args.disk_dir, args.disk_size, True)
                cases += [
                    (f"one memory-backed loop ({args.shm_size // GIB} GiB)", [shm], False),
                    (f"one disk-backed loop ({args.disk_size // GIB} GiB, --direct-io=on, caches dropped)",
                     [disk], True),
                ]
            array = [loop("/dev/shm", args.array_size, False) for _ in range(args.array)]
            cases.append((f"{args.array} memory-backed loops at once ({args.array_size >> 20} MiB each)",
                          array, False))

            for title, devs, cold in cases:
                readers = {"arrayburn": args.binary}
                if args.against:
                    readers["earlier build"] = args.against
                # Each build at its default settings (no --engine, no
                # --queue-depth), as a user runs it.
                configs = {f"{name} default": (lambda devs=devs, b=binary:
                                               arrayburn(b, devs, None, None, bs, tmp))
                           for name, binary in readers.items()}
                for q in [0] + depths:
                    engine, depth = ("psync", 1) if q == 0 else ("io_uring", q)
                    how = "psync" if q == 0 else f"io_uring QD{q}"
                    if not args.no_fio:
                        configs[f"fio {how}"] = lambda devs=devs, e=engine, d=depth: fio(devs, e, d, bs)
                    for name, binary in readers.items():
                        configs[f"{name} {how}"] = (lambda devs=devs, b=binary, e=engine, d=depth:
                                                    arrayburn(b, devs, e, d, bs, tmp))
                print(f"\n### {title}, {bs} reads, {args.rounds} alternating rounds\n", flush=True)
                res = run(configs, args.rounds, cold)
                anchor = "earlier build" if args.no_fio else "fio"
                best_fio = max((n for n in res if n.startswith(anchor)),
                               key=lambda n: statistics.median(res[n]["agg"]))
                # The best of the anchor's configurations in each round.
                anchors = [n for n in res if n.startswith(anchor)]
                round_best = [max(res[n]["agg"][r] for n in anchors) for r in range(args.rounds)]
                print(f"| reader | MB/s median (min–max) | max/min disk | CPU s/GiB | vs {best_fio} "
                      f"| vs {anchor}'s best of each round |")
                print("|---|---|---|---|---|---|")
                for n, r in res.items():
                    ratio = [a / b for a, b in zip(r["agg"], res[best_fio]["agg"])]
                    best = [a / b for a, b in zip(r["agg"], round_best)]
                    print(f"| {n} | {med(r['agg'])} | {statistics.median(r['spread']):.2f} | "
                          f"{statistics.median(r['cpu']):.3f} | "
                          f"{statistics.median(ratio):.3f} ({min(ratio):.3f}–{max(ratio):.3f}) | "
                          f"{statistics.median(best):.3f} ({min(best):.3f}–{max(best):.3f}) |", flush=True)
    finally:
        for dev, path in reversed(made):
            if dev:
                subprocess.run(["losetup", "-d", dev])
            if os.path.exists(path):
                os.remove(path)
        open(hp, "w").write(f"{hp_before}\n")
        os.rmdir(CGROUP)


if __name__ == "__main__":
    main()

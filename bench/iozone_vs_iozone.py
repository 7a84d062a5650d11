#!/usr/bin/env python3
"""Real iozone 3.487 against `arrayburn iozone`: the same command lines on the
same filesystem, alternating which goes first, several rounds; the median of
each number and the ratio arrayburn / iozone per test.

Both tools' text output is parsed the same way (arrayburn prints iozone's
layout): single and auto mode by the columns of the table header, throughput
mode by its "Children see throughput for N <test>" lines. Optionally a third
variant, `arrayburn iozone --huge-pages`, shows what 2 MiB-page buffers gain.

Prints a Markdown table for docs/benchmarks.md. Works in a temporary
directory under --dir and removes it.
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile

# Sizes scaled to a 2-core, 24 GiB machine: the O_DIRECT lines (the
# tender's, the issue's) stay large enough to time the disk; the cached
# lines (the forum seeds') stay within memory, as they did on their hosts.
COMMANDS = [
    ("issue 14: O_DIRECT, 1 MiB records", "-I -s 512m -r 1m -i 0 -i 1 -i 2 -f F"),
    ("tender: one process, O_DIRECT", "-i 0 -i 1 -i 2 -R -I -l 1 -u 1 -r 1m -s 512m -F F"),
    ("tender: 4 processes, O_DIRECT", "-R -I -l 4 -u 4 -r 1m -s 128m -F F1 F2 F3 F4"),
    ("seed 003: -c -e, 64 KiB records", "-c -e -s 256m -r 64k -f F"),
    ("seed 000: auto, ops/s", "-a -g 64m -O -n 32k -y 32 -q 32 -i 0 -i 2 -f F"),
    ("seed 004: auto, -y 64 -q 512", "-a -i 0 -i 1 -y 64 -q 512 -n 32m -g 64m -f F"),
    ("seed 004: threads, O_SYNC, 8 KiB", "-t 2 -T -O -r 8k -o -s 64m -F F1 F2"),
    ("threads, cached, 8 KiB: per-call costs", "-t 2 -T -r 8k -s 256m -i 0 -i 1 -i 2 -i 3 -i 5 -F F1 F2"),
]

THROUGHPUT = re.compile(r"Children see throughput for\s+(\d+)\s+(.+?)\s+=\s+([\d.]+)\s")


def table_values(text):
    """{(kB, reclen, column name): value} from a single/auto-mode table."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.search(r"\bkB\s+reclen\b", line):
            head2, head1 = line, lines[i - 1] if i else ""
            body = lines[i + 1:]
            break
    else:
        return {}
    ends = {m.end(): m.group() for m in re.finditer(r"\S+", head2)}
    above = {m.end(): m.group() for m in re.finditer(r"\S+", head1)}
    def over(e):
        near = [a for a in above if abs(a - e) <= 2]
        return above[near[0]] + " " if near else ""
    names = {e: over(e) + n for e, n in ends.items()}
    out = {}
    for line in body:
        toks = list(re.finditer(r"\S+", line))
        if len(toks) < 3 or not all(re.fullmatch(r"[\d.]+", t.group()) for t in toks):
            if out:
                break
            continue
        kb, rec = toks[0].group(), toks[1].group()
        for t in toks[2:]:
            # Labels sit within a character or two of their column's edge.
            e = min(names, key=lambda e: abs(e - t.end()))
            if abs(e - t.end()) <= 3:
                out[(kb, rec, names[e])] = float(t.group())
    return out


def values(text):
    tp = {("", n, test.strip()): float(v) for n, test, v in THROUGHPUT.findall(text)}
    return tp or table_values(text)


def cell(v):
    """Median (min–max) of one variant's rounds."""
    return f"{statistics.median(v):.0f} ({min(v):.0f}–{max(v):.0f})"


def ratio(ours, ref):
    """Median of the per-round ratios: each round's runs are back to back,
    so a drift of the machine between rounds cancels; the spread of the
    per-round ratios follows."""
    per = [o / r for o, r in zip(ours, ref)]
    return f"{statistics.median(per):.2f} ({min(per):.2f}–{max(per):.2f})"


def run(argv, cwd):
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return values(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iozone", required=True, help="a built iozone 3.487 binary")
    ap.add_argument("--arrayburn", required=True, help="the arrayburn binary")
    ap.add_argument("--dir", default="/var/tmp", help="a directory on the filesystem to test")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--huge-pages", action="store_true", help="also run arrayburn --huge-pages")
    ap.add_argument("--only", type=int, nargs="*", help="command line numbers to run (0-based)")
    a = ap.parse_args()
    a.iozone, a.arrayburn = os.path.abspath(a.iozone), os.path.abspath(a.arrayburn)
    work = tempfile.mkdtemp(prefix="arrayburn-vs-iozone-", dir=a.dir)
    variants = [("iozone", [a.iozone]), ("arrayburn", [a.arrayburn, "iozone"])]
    if a.huge_pages:
        variants.append(("huge", [a.arrayburn, "iozone", "--huge-pages"]))
    try:
        print("| command line | test | iozone | arrayburn | arrayburn / iozone |"
              + (" --huge-pages | --huge-pages / iozone |" if a.huge_pages else ""))
        print("|---|---|---|---|---|" + ("---|---|" if a.huge_pages else ""))
        for k, (label, args) in enumerate(COMMANDS):
            if a.only is not None and k not in a.only:
                continue
            # got[variant][key] = one value per round, in round order.
            got = {name: {} for name, _ in variants}
            for r in range(a.rounds):
                order = variants if r % 2 == 0 else variants[::-1]
                for name, prefix in order:
                    for key, v in run(prefix + args.split(), work).items():
                        got[name].setdefault(key, []).append(v)
                    for f in os.listdir(work):
                        os.remove(os.path.join(work, f))
            for key, ref in got["iozone"].items():
                ours = got["arrayburn"].get(key)
                if not ours or len(ours) != len(ref) or min(ref) <= 0:
                    continue
                test = " ".join(x for x in key if x)
                row = (f"| `{args}` ({label}) | {test} | {cell(ref)} | {cell(ours)} "
                       f"| {ratio(ours, ref)} |")
                if a.huge_pages:
                    h = got["huge"].get(key)
                    row += f" {cell(h)} | {ratio(h, ref)} |" if h and len(h) == len(ref) else " | |"
                print(row, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

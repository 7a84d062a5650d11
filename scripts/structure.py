#!/usr/bin/env python3
"""The house's structure figures, for issue 42 and docs/structure.md.

    python3 scripts/structure.py [SRC_DIR] [--under PREFIX]... [--long]

Over the non-test Rust code under SRC_DIR (default: src): non-test lines,
functions, functions over 50 lines per 1,000 non-test lines, the median
function length, and the same per PREFIX given (say `fleet/`); then the
lengths of src/commands/*.rs and the matches on `Doc::Check`/`Doc::Burnin`
outside fleet/load.rs; with --long, every function over 50 lines. The
same counting runs on any Rust tree (the
anchors': hyperfine, fd, ripgrep), so the figures compare.

A function is an `fn` item with a body; its length is its lines from the
`fn` line to its closing brace. `#[cfg(test)]` modules and `tests/`
directories are left out, as are blank and comment-only lines from the
non-test line count.
"""

import os
import re
import statistics
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+\w+")


def strip_strings(line):
    """The line without string and char literals or a trailing comment."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if c == "/" and line[i : i + 2] == "//":
            break
        if c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if c == "'" and i + 2 < n and (line[i + 2] == "'" or line[i + 1] == "\\"):
            j = line.find("'", i + 2)
            i = j + 1 if j > 0 else i + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def non_test_lines(lines):
    """Lines outside `#[cfg(test)]` items, with their numbers."""
    keep, skip_depth, depth, pending = [], None, 0, False
    for no, raw in enumerate(lines):
        code = strip_strings(raw)
        if skip_depth is None and raw.strip().startswith("#[cfg(test)]"):
            pending = True
            continue
        opens, closes = code.count("{"), code.count("}")
        if pending and skip_depth is None:
            if "{" in code:
                skip_depth = depth
                pending = False
            elif code.strip().endswith(";"):
                pending = False
                continue
        if skip_depth is None:
            keep.append((no, raw, code))
        depth += opens - closes
        if skip_depth is not None and depth <= skip_depth:
            skip_depth = None
    return keep


def functions(kept, named=False):
    """The length of each function with a body in the kept lines (with
    `named`: (length, line number, first line))."""
    out = []
    i = 0
    while i < len(kept):
        _, raw, code = kept[i]
        if FN.match(raw):
            depth, started, j = 0, False, i
            while j < len(kept):
                c = kept[j][2]
                depth += c.count("{") - c.count("}")
                if "{" in c:
                    started = True
                if not started and c.rstrip().endswith(";"):
                    break
                if started and depth <= 0:
                    n = kept[j][0] - kept[i][0] + 1
                    out.append((n, kept[i][0] + 1, raw.strip()) if named else n)
                    break
                j += 1
        i += 1
    return out


def measure(files):
    lines, fns = 0, []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as h:
            kept = non_test_lines(h.read().splitlines())
        lines += sum(1 for _, raw, _ in kept if raw.strip() and not raw.strip().startswith("//"))
        fns += functions(kept)
    over = sum(1 for n in fns if n > 50)
    return {
        "lines": lines,
        "functions": len(fns),
        "over_50": over,
        "over_50_per_kloc": round(1000 * over / lines, 2) if lines else 0,
        "over_100": sum(1 for n in fns if n > 100),
        "median": statistics.median(fns) if fns else 0,
    }


def rust_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in ("tests", "target", ".git", "benches", "examples")]
        for f in files:
            if f.endswith(".rs") and f != "tests.rs":
                yield os.path.join(d, f)


def main():
    args = sys.argv[1:]
    long = "--long" in args
    args = [a for a in args if a != "--long"]
    unders = [args[i + 1] for i, a in enumerate(args) if a == "--under"]
    rest = [a for i, a in enumerate(args) if a != "--under" and (i == 0 or args[i - 1] != "--under")]
    root = rest[0] if rest else "src"
    files = sorted(rust_files(root))
    row = lambda name, m: print(
        f"{name:<12} {m['lines']:>7} lines {m['functions']:>5} fns  over 50: {m['over_50']:>3} "
        f"({m['over_50_per_kloc']:.2f}/1000)  over 100: {m['over_100']}  median {m['median']}"
    )
    row("all", measure(files))
    for u in unders:
        row(u, measure([f for f in files if os.path.relpath(f, root).startswith(u)]))
    commands = os.path.join(root, "commands")
    if os.path.isdir(commands):
        for f in sorted(os.listdir(commands)):
            with open(os.path.join(commands, f), encoding="utf-8") as h:
                print(f"commands/{f}: {len(h.read().splitlines())} lines")
    matches = []
    for f in files:
        if f.endswith(os.path.join("fleet", "load.rs")):
            continue
        with open(f, encoding="utf-8") as h:
            for no, line, _ in non_test_lines(h.read().splitlines()):
                if re.search(r"Doc::(Check|Burnin)\b", line):
                    matches.append(f"{os.path.relpath(f, root)}:{no + 1}")
    if long:
        for f in files:
            with open(f, encoding="utf-8", errors="replace") as h:
                kept = non_test_lines(h.read().splitlines())
            for n, no, first in functions(kept, named=True):
                if n > 50:
                    print(f"{n:>4} {os.path.relpath(f, root)}:{no} {first[:70]}")
    if os.path.isdir(os.path.join(root, "fleet")):
        print(f"Doc::Check/Doc::Burnin outside fleet/load.rs: {len(matches)} {' '.join(matches)}")


if __name__ == "__main__":
    main()

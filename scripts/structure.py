#!/usr/bin/env python3
"""The house's structure figures and its layering check (issues 42 and 59,
docs/structure.md).

    python3 scripts/structure.py [SRC_DIR] [--under PREFIX]... [--long] [--imports]

Over the non-test Rust code under SRC_DIR (default: src): non-test lines,
functions, functions over 50 lines per 1,000 non-test lines, the median
function length, and the same per PREFIX given (say `fleet/`); then the
lengths of src/commands/*.rs and the matches on `Doc::Check`/`Doc::Burnin`
outside fleet/load.rs; with --long, every function over 50 lines. The
same counting runs on any Rust tree (the
anchors': hyperfine, fd, ripgrep), so the figures compare.

The layering check: every path into the crate (`use crate::`, `super::`,
a child module's name, `crate::a::b` written inline) is an import from
its file to the file that defines the module it names. README.md's
"Floors" block puts each top-level module on a floor; an import must run
to a lower floor, or stay inside its module. It fails (exit 1), naming
file, line and names, on an import that runs up or sideways, a module
on no floor, a circle between files (a folder's `mod.rs` re-exporting
its children is its face, not an import; a child's `super::X` reaches
the sibling that defines X) and a cycle between modules. `--imports`
prints every import found.

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


USE = re.compile(r"(\bpub(?:\([^)]*\))?\s+)?\buse\s+([^;]+);", re.S)


def expand(tree):
    """A use tree, `a::{b, c::{d, e as f}}`, as (path, name in scope) pairs."""
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        path, _, alias = tree.partition(" as ")
        segs = [s.strip() for s in path.split("::") if s.strip()]
        return [(segs, alias.strip() or segs[-1])] if segs else []
    prefix = [s.strip() for s in tree[:i].split("::") if s.strip()]
    parts, depth, cur = [], 0, ""
    for c in tree[i + 1 : tree.rfind("}")]:
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (c == "{") - (c == "}")
        cur += c
    parts.append(cur)
    out = []
    for p in parts:
        for segs, alias in expand(p):
            out.append((prefix, prefix[-1]) if segs == ["self"] else (prefix + segs, alias))
    return out


def module_of(root, f):
    """The module path of a file: src/a/b.rs and src/a/b/mod.rs are [a, b]."""
    rel = os.path.relpath(f, root)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    return [] if rel in (["lib"], ["main"]) else rel


def locate(root, segs):
    """The file that defines the longest module prefix of `segs`, and the
    names after it."""
    d, found, used = root, os.path.join(root, "lib.rs"), 0
    for i, s in enumerate(segs):
        if os.path.isfile(os.path.join(d, s + ".rs")):
            found = os.path.join(d, s + ".rs")
        elif os.path.isfile(os.path.join(d, s, "mod.rs")):
            found = os.path.join(d, s, "mod.rs")
        else:
            break
        d, used = os.path.join(d, s), i + 1
    return found, segs[used:]


def absolute(here, segs, scope):
    """`segs` as a path from the crate root, or None where it is not ours."""
    head = segs[0]
    if head in ("crate", "arrayburn"):
        return segs[1:]
    if head in ("super", "self"):
        mod = list(here)
        while segs and segs[0] in ("super", "self"):
            mod = mod[:-1] if segs[0] == "super" else mod
            segs = segs[1:]
        return mod + segs
    return scope[head] + segs[1:] if head in scope else None


def imports(root, f):
    """(line, file it reaches, name, re-exported) for every path into the
    crate written in `f`'s non-test code."""
    with open(f, encoding="utf-8", errors="replace") as h:
        kept = non_test_lines(h.read().splitlines())
    here = module_of(root, f)
    text = "\n".join(code for _, _, code in kept)
    numbers = [no for no, _, _ in kept]
    line_at = lambda pos: numbers[text.count("\n", 0, pos)] + 1
    # Modules written inline (`mod order { ... }`): `super` inside one is
    # the file's module.
    inline = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            depth += (text[i] == "{") - (text[i] == "}")
            if depth == 0:
                break
            i += 1
        inline.append((m.start(), i, m.group(1)))
    module_at = lambda pos: here + [n for a, b, n in inline if a <= pos < b]
    # Names in scope: the module's children, then what its `use`s bring.
    scope = {}
    own = os.path.dirname(f) if os.path.basename(f) in ("mod.rs", "lib.rs", "main.rs") else f[:-3]
    for x in os.listdir(own) if os.path.isdir(own) else []:
        if x.endswith(".rs") and x != "mod.rs":
            scope[x[:-3]] = here + [x[:-3]]
        elif os.path.isfile(os.path.join(own, x, "mod.rs")):
            scope[x] = here + [x]
    out, spans = [], []
    for m in USE.finditer(text):
        spans.append((m.start(), m.end()))
        for segs, alias in expand(m.group(2)):
            path = absolute(module_at(m.start()), segs, scope)
            if path is None:
                continue
            target, rest = locate(root, path)
            if not rest and alias not in ("*", "self"):
                scope[alias] = path
            out.append((line_at(m.start()), target, rest[0] if rest else alias, bool(m.group(1))))
    heads = "|".join(sorted({"crate", "super", "self", "arrayburn", *scope}, key=len, reverse=True))
    for m in re.finditer(r"(?<![\w:])(?:" + heads + r")(?:::\w+)+", text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        path = absolute(module_at(m.start()), m.group(0).split("::"), scope)
        if path is not None:
            target, rest = locate(root, path)
            out.append((line_at(m.start()), target, rest[0] if rest else "", False))
    return [i for i in out if i[1] != f]


def within(folder_file, f):
    """Whether `f` lies inside the folder a mod.rs (or lib.rs) opens."""
    return os.path.basename(folder_file) in ("mod.rs", "lib.rs") and f.startswith(
        os.path.dirname(folder_file) + os.sep
    )


def edges(root, files):
    """The file-to-file imports: (from, line, to, name). A folder's face
    (mod.rs re-exporting its own children) is left out; a child reaching a
    sibling through its folder's face is taken to the sibling."""
    found = {f: imports(root, f) for f in files}
    faces = {f: {n: t for _, t, n, public in found[f] if public and within(f, t)} for f in files}
    out = []
    for f in files:
        for no, t, name, public in found[f]:
            if public and within(f, t):
                continue
            seen = set()
            while within(t, f) and name in faces.get(t, {}) and t not in seen:
                seen.add(t)
                t = faces[t][name]
            if t != f:
                out.append((f, no, t, name))
    return out


def cycles(pairs):
    """The strongly connected parts, of more than one node, of a graph
    given as (from, to) pairs (Tarjan's, without recursion)."""
    adj = {}
    for a, b in pairs:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []
    for start in sorted(adj):
        if start in index:
            continue
        work = [(start, iter(sorted(adj[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(adj[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                part = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    part.append(w)
                    if w == v:
                        break
                if len(part) > 1:
                    out.append(sorted(part))
    return out


def shortest_circle(part, ties):
    """The fewest imports (from, line, to, name) that lead from the first
    file of a circle back to it."""
    start = sorted(part)[0]
    first = {}
    for f, no, t, name in sorted(ties):
        first.setdefault((f, t), (f, no, t, name))
    came, queue = {start: None}, [start]
    while queue:
        f = queue.pop(0)
        for (a, b), tie in first.items():
            if a != f:
                continue
            if b == start:
                path = [tie]
                while came[path[0][0]] is not None:
                    path.insert(0, came[path[0][0]])
                return path
            if b not in came:
                came[b] = tie
                queue.append(b)
    return []


def floors(readme):
    """README.md's "Floors" block: `floor N: a, b, c` lines, module -> N."""
    out = {}
    if not os.path.isfile(readme):
        return out
    with open(readme, encoding="utf-8") as h:
        for line in h:
            m = re.match(r"^\s*(?:[-*]\s*)?floor (\d+):\s*(.+)$", line)
            if m:
                for name in re.findall(r"`(\w+)`", m.group(2)):
                    out[name] = int(m.group(1))
    return out


def top(root, f):
    """The top-level module a file belongs to (main.rs and lib.rs: `main`, `lib`)."""
    return os.path.relpath(f, root).split(os.sep)[0].removesuffix(".rs")


def layering(root, files, show=False):
    """The layering's faults, one line each, and its figures."""
    found = edges(root, files)
    rel = lambda f: os.path.join(os.path.basename(os.path.abspath(root)), os.path.relpath(f, root))
    if show:
        for f, no, t, name in found:
            print(f"{rel(f)}:{no} -> {rel(t)} {name}")
    floor = floors(os.path.join(root, os.pardir, "README.md"))
    faults, up = [], 0
    if floor:
        for m in sorted({top(root, f) for f in files} - {"lib", "main"} - set(floor)):
            faults.append(f"module `{m}` is on no floor: put it on one in README.md's Floors block")
        for f, no, t, name in found:
            a, b = top(root, f), top(root, t)
            if a == b or a in ("main", "lib") or a not in floor or b not in floor:
                continue
            if floor[b] >= floor[a]:
                up += 1
                way = "up" if floor[b] > floor[a] else "sideways"
                faults.append(
                    f"{rel(f)}:{no}: {a} (floor {floor[a]}) imports {b}"
                    f"{'::' + name if name else ''} (floor {floor[b]}): an import that runs {way}"
                )
    circles = cycles((f, t) for f, _, t, _ in found)
    for part in circles:
        hops = shortest_circle(part, [e for e in found if e[0] in part and e[2] in part])
        said = " -> ".join(f"{rel(f)}:{no} ({name or '*'})" for f, no, _, name in hops)
        faults.append(
            f"a circle between {len(part)} files, one way round: {said} -> {rel(hops[0][0])}"
        )
    mods = cycles((top(root, f), top(root, t)) for f, _, t, _ in found if top(root, f) != top(root, t))
    for part in mods:
        faults.append(f"a cycle between {len(part)} modules: {' '.join(part)}")
    figures = {"imports": len(found), "up": up, "circles": len(circles), "cycles": len(mods), "floors": bool(floor)}
    return faults, figures


# The ratchets CI holds (issue 83): where a figure stood when it was last
# brought down; lowering one is welcome, raising one fails.
COMMAND_MAX_LINES = 150
FILE_MAX_LINES = 1100
LONG_PER_KLOC_MAX = 1.50


def ratchets(root, files, overall):
    """The ratchets' faults, one line each: a command over its lines, a
    file over its lines, functions over 50 lines above their figure."""
    faults = []
    commands = os.path.join(root, "commands")
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as h:
            n = len(h.read().splitlines())
        rel = os.path.relpath(f, root)
        if os.path.dirname(os.path.abspath(f)) == os.path.abspath(commands) and n > COMMAND_MAX_LINES:
            faults.append(
                f"{rel}: {n} lines, over the {COMMAND_MAX_LINES} a command may have: it is glue; "
                "move its steps to run/, its rules to judge/, its layout to export/"
            )
        if n > FILE_MAX_LINES:
            faults.append(f"{rel}: {n} lines, over {FILE_MAX_LINES}: split it by what its parts do")
    if overall["over_50_per_kloc"] > LONG_PER_KLOC_MAX + 1e-9:
        faults.append(
            f"functions over 50 lines: {overall['over_50_per_kloc']:.2f} per 1,000 lines, above the "
            f"{LONG_PER_KLOC_MAX:.2f} held: split the longest (--long lists them)"
        )
    return faults


def main():
    args = sys.argv[1:]
    long, show = "--long" in args, "--imports" in args
    args = [a for a in args if a not in ("--long", "--imports")]
    unders = [args[i + 1] for i, a in enumerate(args) if a == "--under"]
    rest = [a for i, a in enumerate(args) if a != "--under" and (i == 0 or args[i - 1] != "--under")]
    root = rest[0] if rest else "src"
    files = sorted(rust_files(root))
    row = lambda name, m: print(
        f"{name:<12} {m['lines']:>7} lines {m['functions']:>5} fns  over 50: {m['over_50']:>3} "
        f"({m['over_50_per_kloc']:.2f}/1000)  over 100: {m['over_100']}  median {m['median']}"
    )
    overall = measure(files)
    row("all", overall)
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
    faults, fig = layering(root, files, show)
    if fig["floors"]:
        faults += ratchets(root, files, overall)
    print(
        f"layering     {fig['imports']} imports, {fig['up']} running up or sideways"
        f"{'' if fig['floors'] else ' (no Floors block in README.md: not checked)'}, "
        f"{fig['circles']} circles between files, {fig['cycles']} cycles between modules; "
        f"functions over 50 lines {overall['over_50_per_kloc']:.2f} per 1,000, median {overall['median']}"
    )
    for line in faults:
        print(line, file=sys.stderr)
    if faults:
        print(f"structure.py: {len(faults)} fault(s) in the layering or the ratchets, each above", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

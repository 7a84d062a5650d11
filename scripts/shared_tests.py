#!/usr/bin/env python3
"""Prints a nextest filterset naming the device tests that may share the
machine: those tests/util/lock.rs lists in UNTIMED or PACED (by the start of
their path in the `tests` binary). scripts/test.sh runs them apart from the
timed ones, so a timed test never waits for shared ones to drain and a
shared one never waits behind a timed one. The tables stay the one place
that says which test is which.
"""
import re
import sys
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "tests" / "util" / "lock.rs"


def starts(text: str, table: str) -> list[str]:
    body = re.search(rf"pub const {table}: &\[\(&str, &str\)\] = &\[(.*?)\n\];", text, re.S)
    if not body:
        sys.exit(f"scripts/shared_tests.py: no table {table} in {LOCK}: was it renamed?")
    return re.findall(r'\(\s*"([^"]+)",', body.group(1))


def main() -> None:
    text = LOCK.read_text()
    names = starts(text, "UNTIMED") + starts(text, "PACED")
    bad = [n for n in names if not re.fullmatch(r"[a-z0-9_:]+", n)]
    if bad or not names:
        sys.exit(f"scripts/shared_tests.py: unexpected test path starts in {LOCK}: {bad}")
    print("binary(tests) and test(/^(" + "|".join(names) + ")/)")


if __name__ == "__main__":
    main()

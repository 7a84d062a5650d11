#!/usr/bin/env bash
# Runs arrayburn's tests. As root it first installs what the device tests
# need (libfuse3-dev + fuse3 for the bad-sector disk, e2fsprogs, util-linux,
# strace for iozone's system-call patterns, chromium to render the HTML
# report headless, ansible-core for the playbook in contrib/ansible)
# and then runs them all on loop devices it creates and removes. Without
# root, the device tests print why and skip.
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
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "scripts/test.sh: installing ${need[*]}" >&2
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    else
        echo "scripts/test.sh: not root: device tests will skip (they also need: ${need[*]})" >&2
    fi
fi
# The API docs (`cargo doc`) are the layout's map: a broken link in them fails.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
exec cargo test "$@"

#!/usr/bin/env bash
# Peak memory (max RSS) of `arrayburn check` on 8 and on 64 disks: memory
# must grow with the number of disks (one read buffer, histogram and
# surface per worker), never with their size. Needs root; makes its own
# memory-backed loop devices and removes exactly those, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/arrayburn
devs=()   # loop devices of the current case
files=()  # their backing files
teardown() {
    local i
    for i in "${!devs[@]}"; do losetup -d "${devs[$i]}" 2>/dev/null || true; done
    for i in "${!files[@]}"; do rm -f "${files[$i]}"; done
    devs=(); files=()
}
trap teardown EXIT
attach() { # N SIZE_MIB: fills devs/files in this shell (no subshell)
    local i f
    for i in $(seq "$1"); do
        f=$(mktemp -p /dev/shm arrayburn-mem.XXXXXX.img)
        files+=("$f")
        head -c $(($2 << 20)) /dev/urandom >"$f"
        devs+=("$(losetup -f --show "$f")")
    done
}
out=$(mktemp -d)
trap 'teardown; rm -rf "$out"' EXIT
echo "| disks | disk size | passes | block | max RSS (MiB) |"
echo "|---|---|---|---|---|"
for case in "8 64" "8 256" "8 64 seek" "64 16"; do
    set -- $case
    attach "$1" "$2"
    passes=both; [ "$1" -gt 8 ] && passes=parallel
    extra=(); label=$passes
    if [ "${3:-}" = seek ]; then
        # Six readers per disk, each with its own buffer; charts drawn too.
        extra=(--seek --out "$out/run"); label="$passes + seek (6 readers) + --out charts"
    fi
    # A flagged disk (exit 1) is fine here: only the memory is measured.
    rss=$( { /usr/bin/time -f '%M' "$bin" check --passes $passes --sample 1.5s --progress none "${extra[@]}" "${devs[@]}" >/dev/null || true; } 2>&1 | tail -1)
    echo "| $1 | $2 MiB | $label | 4 MiB | $((rss / 1024)) |"
    teardown
done

#!/usr/bin/env bash
# The capacity probe beside f3probe (Debian's f3) on the same fake disks:
# in-memory FUSE disks (tests/helpers/faultdisk.c) with a direct-I/O loop
# device on top, whose bytes past a real end either wrap onto the start
# (FAULTDISK_ALIAS) or keep nothing (FAULTDISK_DROP). Each tool gets a
# fresh disk of each kind; the table gives what each said usable and how
# long it took. Needs root, fuse3, libfuse3-dev, gcc and f3 (installs f3
# and fuse3 where missing); builds arrayburn --release. Written up in
# docs/benchmarks.md. Touches only the devices and mounts it makes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-probe.sh: needs root (loop devices, FUSE)" >&2; exit 2; }
command -v f3probe >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq f3 >/dev/null
cargo build --release --quiet
bin=$PWD/target/release/arrayburn
work=$(mktemp -d /tmp/arrayburn-bench-probe.XXXXXX)
gcc -O2 -o "$work/faultdisk" tests/helpers/faultdisk.c $(pkg-config --cflags --libs fuse3)
dev= mnt= daemon=
cleanup() {
    if [ -n "$dev" ]; then losetup -d "$dev" 2>/dev/null || true; fi
    if [ -n "$mnt" ]; then
        local gone=
        for _ in $(seq 50); do umount "$mnt" 2>/dev/null && gone=1 && break; sleep 0.1; done
        [ -n "$gone" ] || umount -l "$mnt" 2>/dev/null || true
    fi
    if [ -n "$daemon" ]; then kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
    dev= mnt= daemon=
}
trap 'cleanup; rm -rf "$work"' EXIT

# A fresh fake disk of SIZE bytes: `alias REAL` wraps [REAL, SIZE) onto
# the start, `drop REAL` keeps nothing written there. Sets $dev.
disk() {
    local size=$1 how=$2 real=$3
    mnt=$(mktemp -d "$work/mnt.XXXX")
    local env=(FAULTDISK_RW=1)
    case $how in
        alias) env+=("FAULTDISK_ALIAS=$real:$((size - real)):0") ;;
        drop) env+=("FAULTDISK_DROP=$real:$((size - real))") ;;
    esac
    env "${env[@]}" "$work/faultdisk" "$size" - - "$mnt" -f &
    daemon=$!
    for _ in $(seq 100); do [ -e "$mnt/disk.img" ] && break; sleep 0.05; done
    dev=$(losetup -f --show --direct-io=on "$mnt/disk.img")
}

# Seconds `cmd` took, its output in $work/out.
timed() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >"$work/out" 2>&1 || true
    t1=$(date +%s.%N)
    awk "BEGIN { print $t1 - $t0 }"
}

GiB=$((1 << 30)) TiB=$((1 << 40))
printf '| disk | real end | past it | f3probe says usable | f3probe time | arrayburn says usable | arrayburn time |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for spec in \
    "$GiB alias $((GiB / 2))" \
    "$GiB alias $((700 * (1 << 20) + 3 * 4096))" \
    "$GiB drop $((700 * (1 << 20) + 3 * 4096))" \
    "$((16 * TiB)) alias $((8 * TiB))" \
    "$((16 * TiB)) alias $((3 * TiB + 3 * 4096))" \
    "$((16 * TiB)) drop $((3 * TiB + 3 * 4096))"; do
    read -r size how real <<<"$spec"
    disk "$size" "$how" "$real"
    f3t=$(timed timeout 900 f3probe --destructive --time-ops "$dev")
    # "*Usable* size: 512.00 MB (1048576 blocks)" in blocks of "Physical
    # block size: ... (2^9 Bytes)".
    blocks=$(grep -E 'Usable\* size:' "$work/out" | sed 's/.*(\([0-9]*\) blocks).*/\1/' | head -1 || true)
    order=$(grep -E 'Physical block size:' "$work/out" | sed 's/.*(2^\([0-9]*\) Bytes).*/\1/' | head -1 || true)
    if [ -n "$blocks" ] && [ -n "$order" ]; then
        f3="$((blocks << order)) bytes"
    else
        f3="(no answer: $(grep -v '^$' "$work/out" | tail -1))"
    fi
    cleanup
    disk "$size" "$how" "$real"
    abt=$(timed "$bin" inspect -q --probe --destructive --yes -j "$work/a.json" "$dev")
    ab=$(python3 -c "import json;print(json.load(open('$work/a.json'))['disks'][0]['probe']['usable_bytes'])")
    cleanup
    printf '| %s | %s | %s | %s | %.1f s | %s bytes | %.1f s |\n' \
        "$(numfmt --to=iec "$size")" "$real" "$how" "$f3" "$f3t" "$ab" "$abt"
done

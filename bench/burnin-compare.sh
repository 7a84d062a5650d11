#!/usr/bin/env bash
# One write+verify pass of arrayburn burnin against `badblocks -w -t random`
# (one pattern) and fio's write with crc32c verify, on the same 1 GiB
# memory-backed loop device, 4 MiB I/O, alternating, several rounds: the
# wall time and CPU seconds of each (from /usr/bin/time's format). Needs
# root, badblocks (e2fsprogs) and fio (apt-get install -y fio).
#
#   bench/burnin-compare.sh [--rounds 3] [--size-mib 1024]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 size=1024
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --size-mib) size=$2; shift 2 ;;
        *) echo "usage: $0 [--rounds N] [--size-mib N]" >&2; exit 2 ;;
    esac
done
cargo build --release --quiet
bin=$PWD/target/release/arrayburn
img=$(mktemp /dev/shm/arrayburn-bench-XXXXXX.img)
state=$(mktemp -d)
dev=
cleanup() { [ -n "$dev" ] && losetup -d "$dev"; rm -f "$img"; rm -rf "$state"; }
trap cleanup EXIT
head -c "${size}M" /dev/zero > "$img"
dev=$(losetup -f --show --direct-io=on "$img")
run() { # name, command...: prints "name wall_s cpu_s"
    local name=$1; shift
    local tf; tf=$(mktemp)
    /usr/bin/time -f '%e %U %S' -o "$tf" "$@" >/dev/null 2>&1 || { echo "$name failed" >&2; exit 1; }
    awk -v n="$name" '{printf "%s %.2f %.2f\n", n, $1, $2 + $3}' "$tf"
    rm -f "$tf"
}
echo "| round | tool | wall s | CPU s |"
echo "|---|---|---|---|"
for r in $(seq "$rounds"); do
    tools=(arrayburn badblocks fio)
    [ $((r % 2)) = 0 ] && tools=(fio badblocks arrayburn)
    for tool in "${tools[@]}"; do
        case $tool in
            arrayburn) out=$(run arrayburn "$bin" burnin --destructive --yes --wipe-signatures --smart off --state "$state" --block 4m "$dev") ;;
            badblocks) out=$(run badblocks badblocks -w -t random -b 4096 -c 1024 "$dev") ;;
            fio) out=$(run fio fio --name=v --filename="$dev" --rw=write --bs=4m --direct=1 \
                    --ioengine=psync --verify=crc32c --do_verify=1 --size="${size}M") ;;
        esac
        read -r name wall cpu <<<"$out"
        echo "| $r | $name | $wall | $cpu |"
    done
done

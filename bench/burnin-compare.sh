#!/usr/bin/env bash
# One write+verify pass of arrayburn burnin against `badblocks -w -t random`
# (one pattern) and fio's write with crc32c verify, on the same 1 GiB loop
# device, 4 MiB I/O, alternating the order every round: the wall time and
# CPU seconds (user + system, counted by a cgroup) of each, and CPU seconds per
# GiB written and read back. Devices: memory-backed (a file in /dev/shm:
# the CPU shows) and disk-backed (a file on the root filesystem, direct
# I/O). `--against BIN` runs an older arrayburn beside this one. Needs root,
# badblocks (e2fsprogs); fio runs where it is installed.
#
#   bench/burnin-compare.sh [--rounds 3] [--size-mib 1024] [--backing shm|disk|both] [--against BIN] [--no-fio]
#
# The medians at the end are what to compare; a tool run right after fio
# can cost more than after the others in this VM, so `--no-fio` leaves fio out
# when only arrayburn against badblocks is wanted.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 size=1024 backing=both against= fio=yes
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --size-mib) size=$2; shift 2 ;;
        --backing) backing=$2; shift 2 ;;
        --against) against=$2; shift 2 ;;
        --no-fio) fio=no; shift ;;
        *) echo "usage: $0 [--rounds N] [--size-mib N] [--backing shm|disk|both] [--against BIN] [--no-fio]" >&2; exit 2 ;;
    esac
done
case $backing in
    shm) dirs=(/dev/shm) ;;
    disk) dirs=(/var/tmp) ;;
    both) dirs=(/dev/shm /var/tmp) ;;
    *) echo "$0: --backing is shm, disk or both" >&2; exit 2 ;;
esac
cargo build --release --quiet
bin=$PWD/target/release/arrayburn
state=$(mktemp -d)
imgs=() devs=()
# CPU is counted by a cpuacct cgroup: arrayburn reads and writes in a child
# process that its parent does not wait for (it exits on the child's word),
# which /usr/bin/time would not see.
cg=/sys/fs/cgroup/cpuacct/arrayburn-bench-$$
cleanup() {
    for d in "${devs[@]}"; do losetup -d "$d"; done
    rm -f "${imgs[@]}"; rm -rf "$state"
    if [ -d "$cg" ]; then rmdir "$cg"; fi
}
trap cleanup EXIT
tools=(arrayburn badblocks)
[ -n "$against" ] && tools+=(arrayburn-before)
[ "$fio" = yes ] && command -v fio >/dev/null && tools+=(fio)
mkdir "$cg"
run() { # command...: prints "wall_s cpu_s" (exit 3 is a lone disk not judged: no failure)
    local t0 t1 c0 c1 rc=0
    c0=$(cat "$cg/cpuacct.usage") t0=$(date +%s.%N)
    (echo "$BASHPID" > "$cg/cgroup.procs"; exec "$@" >/dev/null 2>&1) || rc=$?
    t1=$(date +%s.%N)
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "$* failed (exit $rc)" >&2; exit 1; }
    for _ in $(seq 200); do [ -z "$(cat "$cg/cgroup.procs")" ] && break; sleep 0.05; done
    [ -z "$(cat "$cg/cgroup.procs")" ] || echo "$1: still running 10 s after it returned; its CPU is cut there" >&2
    c1=$(cat "$cg/cpuacct.usage")
    awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" 'BEGIN{printf "%.2f %.3f\n", b - a, (d - c) / 1e9}'
}
gib=$(awk -v m="$size" 'BEGIN{print m/1024}')
echo "| backing | round | tool | wall s | CPU s | CPU s/GiB |"
echo "|---|---|---|---|---|---|"
for dir in "${dirs[@]}"; do
    img=$(mktemp "$dir/arrayburn-bench-XXXXXX.img"); imgs+=("$img")
    head -c "${size}M" /dev/urandom > "$img"
    dev=$(losetup -f --show --direct-io=on "$img"); devs+=("$dev")
    kind=memory; [ "$dir" = /dev/shm ] || kind=disk
    for r in $(seq "$rounds"); do
        order=("${tools[@]}")
        if [ $((r % 2)) = 0 ]; then
            order=(); for ((i = ${#tools[@]} - 1; i >= 0; i--)); do order+=("${tools[i]}"); done
        fi
        for tool in "${order[@]}"; do
            case $tool in
                arrayburn | arrayburn-before)
                    b=$bin; [ "$tool" = arrayburn ] || b=$against
                    out=$(run "$b" burnin --destructive --yes --wipe-signatures --smart off \
                        --state "$state" --block 4m "$dev") ;;
                badblocks) out=$(run badblocks -w -t random -b 4096 -c 1024 "$dev") ;;
                fio) out=$(run fio --name=v --filename="$dev" --rw=write --bs=4m --direct=1 \
                        --ioengine=psync --verify=crc32c --do_verify=1 --verify_state_save=0 --size="${size}M") ;;
            esac
            read -r wall cpu <<<"$out"
            per=$(awk -v c="$cpu" -v g="$gib" 'BEGIN{printf "%.3f", c/g}')
            echo "| $kind | $r | $tool | $wall | $cpu | $per |"
            echo "$kind $tool $wall $per" >> "$state/rows"
        done
    done
done
# The medians of every tool on every backing, and each tool's CPU per GiB
# against badblocks' on the same backing (median to median).
echo
echo "| backing | tool | median wall s | median CPU s/GiB | CPU vs badblocks |"
echo "|---|---|---|---|---|"
for kind in memory disk; do
    for tool in "${tools[@]}"; do
        rows=$(awk -v k="$kind" -v t="$tool" '$1 == k && $2 == t' "$state/rows")
        [ -n "$rows" ] || continue
        med() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
        wall=$(awk '{print $3}' <<<"$rows" | med)
        per=$(awk '{print $4}' <<<"$rows" | med)
        bb=$(awk -v k="$kind" '$1 == k && $2 == "badblocks" {print $4}' "$state/rows" | med)
        awk -v k="$kind" -v t="$tool" -v w="$wall" -v p="$per" -v b="$bb" \
            'BEGIN{printf "| %s | %s | %.2f | %.3f | %.2fx |\n", k, t, w, p, p / b}'
    done
done

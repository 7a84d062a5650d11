#!/usr/bin/env bash
# What `arrayburn watch` costs in service: DISKS (default 256) loop devices
# over 1 MiB files in /dev/shm, each read at RATE (default 5) 64 KiB
# requests a second by tests/helpers/load.py (another process: its cost is
# not counted), watched at 1 s windows for WINDOWS (default 120) windows
# with the service's outputs (--metrics every window, --json a window an
# hour and each finding). Prints the watch's CPU time over its wall time
# (per cent of one core) and its peak RSS; then, at 0.1 s windows with a
# --for of 10 s (100 windows kept a disk), its peak RSS after 200 and after
# 2,000 windows: memory that does not grow with time. Needs root (loop
# devices); builds arrayburn --release. Written up in docs/benchmarks.md.
# Touches only the devices and files it makes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench/watch-cost.sh: needs root (loop devices)" >&2; exit 2; }
n=${DISKS:-256}
rate=${RATE:-5}
windows=${WINDOWS:-120}
cargo build --release --quiet
bin=$PWD/target/release/arrayburn
work=$(mktemp -d /tmp/arrayburn-bench-watch.XXXXXX)
devs=()
loader=
cleanup() {
    [ -n "$loader" ] && kill "$loader" 2>/dev/null && wait "$loader" 2>/dev/null || true
    for d in "${devs[@]}"; do losetup -d "$d" 2>/dev/null || true; done
    rm -f /dev/shm/arrayburn-bench-watch-$$-*
    rm -rf "$work"
}
trap cleanup EXIT
for i in $(seq 1 "$n"); do
    f=/dev/shm/arrayburn-bench-watch-$$-$i
    head -c 1048576 /dev/urandom >"$f"
    devs+=("$(losetup -f --show --direct-io=on "$f")")
done
pairs=()
for d in "${devs[@]}"; do pairs+=("$rate:$d"); done
python3 tests/helpers/load.py $((windows + 600)) "${pairs[@]}" &
loader=$!
sleep 2
measure() { # ARGS...: "user_s sys_s peak_kib wall_s"
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S %M" -o "$work/time" "$bin" watch --progress none "$@" "${devs[@]}" \
        2>"$work/said" || [ $? = 1 ]
    t1=$(date +%s.%N)
    echo "$(cat "$work/time") $(echo "$t1 - $t0" | bc)"
}
read -r u s rss wall < <(measure --interval 1s --count "$windows" --metrics "$work/w.prom" \
    --json "$work/w.jsonl" --json-every 1h)
echo "disks $n, $windows windows of 1 s: cpu $(echo "scale=3; 100 * ($u + $s) / $wall" | bc) % of a core (user $u s, sys $s s over $wall s), peak RSS $((rss / 1024)) MiB"
echo "JSON lines: $(wc -l <"$work/w.jsonl"), $(du -k "$work/w.jsonl" | cut -f1) KiB; metrics file $(du -k "$work/w.prom" | cut -f1) KiB, $(grep -vc '^#' "$work/w.prom") samples"
for count in 200 2000; do
    read -r u s rss wall < <(measure --interval 100ms --for 10s --count "$count" --metrics "$work/m.prom")
    echo "0.1 s windows, --for 10s: after $count windows, peak RSS $((rss / 1024)) MiB ($rss KiB)"
done

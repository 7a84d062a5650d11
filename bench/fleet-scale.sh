#!/bin/sh
# How `arrayburn report` scales with disks: one result of 6,000, 12,000 and
# 24,000 disks, and a fleet of HOSTS results of 24 disks, each over MONTHS
# monthly runs (the same disks again: regressions across time). Prints the
# wall seconds and the peak RSS of each. Usage:
#   bench/fleet-scale.sh [HOSTS] [MONTHS]      (default 1000 12)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
hosts=${1:-1000}
months=${2:-12}
bin=${ARRAYBURN:-$here/target/release/arrayburn}
[ -x "$bin" ] || (cd "$here" && cargo build --release --quiet)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fixture=$here/fixtures/report/demo/report.json
measure() {
    /usr/bin/time -f "%e s, %M KB peak RSS" "$bin" report "$@" >/dev/null 2>"$work/time" || true
    tail -1 "$work/time"
}
for n in 6000 12000 24000; do
    python3 "$here/bench/fleet_scale.py" "$fixture" "$work/one-$n" 1 "$n" 1
    printf 'one result of %s disks: %s\n' "$n" "$(measure "$work/one-$n")"
done
python3 "$here/bench/fleet_scale.py" "$fixture" "$work/fleet" "$hosts" 24 "$months"
printf '%s hosts x 24 disks x %s monthly runs: %s\n' "$hosts" "$months" "$(measure "$work/fleet")"

#!/bin/sh
# How `arrayburn report` scales with disks: one result of 6,000, 12,000 and
# 24,000 disks, and a fleet of HOSTS hosts x 24 disks, each over MONTHS
# monthly runs (the same disks again: regressions across time). Prints the
# wall seconds and the peak RSS of each, for each binary in $ARRAYBURN
# (default: this checkout's release build). Usage:
#   bench/fleet-scale.sh [HOSTS] [MONTHS]      (default 1000 12)
#   ARRAYBURN="/old/arrayburn /new/arrayburn" bench/fleet-scale.sh 100 12
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
hosts=${1:-1000}
months=${2:-12}
bins=${ARRAYBURN:-$here/target/release/arrayburn}
[ -n "${ARRAYBURN:-}" ] || [ -x "$bins" ] || (cd "$here" && cargo build --release --quiet)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fixture=$here/fixtures/report/demo/report.json
measure() {
    for bin in $bins; do
        /usr/bin/time -f "%e s, %M KB peak RSS" "$bin" report "$@" >/dev/null 2>"$work/time" || true
        printf '  %s: %s\n' "$bin" "$(tail -1 "$work/time")"
    done
}
for n in 6000 12000 24000; do
    python3 "$here/bench/fleet_scale.py" "$fixture" "$work/one-$n" 1 "$n" 1
    echo "one result of $n disks:"
    measure "$work/one-$n"
done
python3 "$here/bench/fleet_scale.py" "$fixture" "$work/fleet" "$hosts" 24 "$months"
echo "$hosts hosts x 24 disks x $months monthly runs ($(ls "$work/fleet" | wc -l) files, $(du -sh "$work/fleet" | cut -f1)):"
measure "$work/fleet"

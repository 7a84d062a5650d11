#!/usr/bin/env bash
# A burn-in to a deadline (`burnin --deadline`): a 4 GiB disk (a file in
# /dev/shm, filled, under a direct-I/O loop device) held to RATE bytes a
# second each way by a cgroup-v1 blkio throttle (default 50 MB/s: a full
# write-verify takes about 172 s), burned to a DEADLINE (default 60s).
# Prints how long the run took against its deadline, the fraction of the
# surface tested, the stripes and their spread, then resumes without a
# deadline at 4x the rate and prints that the rest was burned. Needs root;
# builds arrayburn --release. Written up in docs/benchmarks.md. Touches
# only the device, file and cgroup it makes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench/deadline.sh: needs root (loop device, blkio)" >&2; exit 2; }
deadline=${DEADLINE:-60s}
rate=${RATE:-50000000}
cargo build --release --quiet
bin=$PWD/target/release/arrayburn
work=$(mktemp -d /tmp/arrayburn-bench-deadline.XXXXXX)
file=/dev/shm/arrayburn-bench-deadline-$$
group=/sys/fs/cgroup/blkio/arrayburn-bench-deadline-$$
dev=
cleanup() {
    [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
    [ -d "$group" ] && rmdir "$group" 2>/dev/null || true
    rm -f "$file"
    rm -rf "$work"
}
trap cleanup EXIT
dd if=/dev/zero of="$file" bs=1M count=4096 status=none
dev=$(losetup -f --show --direct-io=on "$file")
mkdir "$group"
limit() {
    local mm
    mm=$(cat "/sys/block/${dev#/dev/}/dev")
    echo "$mm $1" >"$group/blkio.throttle.read_bps_device"
    echo "$mm $1" >"$group/blkio.throttle.write_bps_device"
}
run() {
    local json=$1
    shift
    local began ended
    began=$(date +%s.%N)
    sh -c 'echo $$ > "$0/cgroup.procs"; shift; exec "$@"' "$group" x "$bin" burnin --state "$work/state" \
        --yes --smart off --smr-probe 0 --progress none --json "$json" "$@" "$dev" >/dev/null 2>"$json.log"
    ended=$(date +%s.%N)
    echo "$ended - $began" | bc
}
limit "$rate"
took=$(run "$work/deadline.json" --destructive --deadline "$deadline")
python3 - "$work/deadline.json" "$took" "$deadline" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
d = doc["disks"][0]
t = d["tested"]
print(f"deadline {sys.argv[3]}: the run took {float(sys.argv[2]):.1f} s")
print(f"  {t['said']}")
print(f"  stripes {t['stripes']} of {t['of']} ({t['stripe_bytes'] >> 20} MiB each), "
      f"tested {t['tested_bytes']} of {t['range_bytes']} bytes ({t['pct']:.1f} %), "
      f"widest untested stretch {t['widest_gap'] >> 20} MiB, "
      f"write {d['write_mb_per_s']:.1f} MB/s, read back {d['verify_mb_per_s']:.1f} MB/s")
print(f"  verdict {d['verdict']}: {doc['summary']['message']}")
PY
limit $((rate * 4))
took=$(run "$work/resume.json" --destructive --resume)
python3 - "$work/resume.json" "$took" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
t = doc["disks"][0]["tested"]
print(f"resumed without a deadline: {float(sys.argv[2]):.1f} s: {t['said']}")
PY

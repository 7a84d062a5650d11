#!/usr/bin/env bash
# What a run costs per disk, and that nothing grows with a disk's size:
# `arrayburn check`, `arrayburn burnin`, `arrayburn inspect` and `arrayburn
# report` (of that check's and burn-in's results) on 8, 64 and 256
# memory-backed loop devices, and at four times the size. For each: wall time, CPU
# seconds (user + system) and peak memory, counted by cgroups around the
# command (a run reads and writes in a child process its parent does not
# wait for, which /usr/bin/time does not see): cpuacct.usage and the memory
# cgroup's max_usage_in_bytes (the anonymous memory the run touches, its
# buffers first, and the page cache of the files it writes). Needs root;
# makes its own devices and cgroups and removes exactly those.
# `--throttle MBPS` holds every disk's reads and writes to MBPS MB/s (a
# blkio cgroup around the run), so that every disk is in its phase at once
# and the peak is the bound (without it, small fast disks finish their
# phases at different moments).
#
#   [ARRAYBURN=BIN] bench/scale.sh [--sizes "32 128"] [--counts "8 64 256"] [--sample 2s]
#       [--runs "check burnin inspect report"] [--throttle MBPS] [--keep DIR]
# `--keep DIR` keeps each run's JSON there (RUN-DISKS-SIZE.json).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="32 128" counts="8 64 256" sample=2s runs="check burnin inspect report" throttle= keep=
while [ $# -gt 0 ]; do
    case $1 in
        --sizes) sizes=$2; shift 2 ;;
        --counts) counts=$2; shift 2 ;;
        --sample) sample=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --throttle) throttle=$2; shift 2 ;;
        --keep) keep=$2; shift 2 ;;
        *) echo "usage: $0 [--sizes \"MiB ...\"] [--counts \"N ...\"] [--sample DUR] [--runs \"check burnin inspect report\"] [--throttle MBPS] [--keep DIR]" >&2; exit 2 ;;
    esac
done
cargo build --release --quiet
bin=${ARRAYBURN:-$PWD/target/release/arrayburn}
devs=() files=()
cpu=/sys/fs/cgroup/cpuacct/arrayburn-scale-$$
mem=/sys/fs/cgroup/memory/arrayburn-scale-$$
blk=/sys/fs/cgroup/blkio/arrayburn-scale-$$
work=$(mktemp -d)
teardown() {
    local d
    for d in "${devs[@]}"; do losetup -d "$d" 2>/dev/null || true; done
    rm -f "${files[@]}"
    devs=() files=()
}
cleanup() { teardown; rm -rf "$work"; rmdir "$cpu" "$mem" "$blk" 2>/dev/null || true; }
trap cleanup EXIT
mkdir "$cpu" "$mem" "$blk"
attach() { # N SIZE_MIB
    local i f
    for i in $(seq "$1"); do
        f=$(mktemp -p /dev/shm arrayburn-scale.XXXXXX.img)
        files+=("$f")
        head -c $(($2 << 20)) /dev/urandom >"$f"
        devs+=("$(losetup -f --show --direct-io=on "$f")")
        if [ -n "$throttle" ]; then
            local mm=$(lsblk -dno MAJ:MIN "${devs[-1]}" | tr -d ' ')
            echo "$mm $((throttle * 1000000))" > "$blk/blkio.throttle.read_bps_device"
            echo "$mm $((throttle * 1000000))" > "$blk/blkio.throttle.write_bps_device"
        fi
    done
}
measure() { # label disks size json command...: one table row
    local label=$1 n=$2 size=$3 json=$4; shift 4
    local t0 t1 c0 c1 rc=0
    echo 0 > "$mem/memory.max_usage_in_bytes"
    c0=$(cat "$cpu/cpuacct.usage") t0=$(date +%s.%N)
    (echo "$BASHPID" > "$cpu/cgroup.procs"; echo "$BASHPID" > "$mem/cgroup.procs"
        echo "$BASHPID" > "$blk/cgroup.procs"
        exec "$@" >/dev/null 2>"$work/err") || rc=$?
    t1=$(date +%s.%N)
    # Exit 0, 1 (a finding) and 3 (not judged) are verdicts; anything else failed.
    case $rc in 0 | 1 | 3) ;; *) cat "$work/err" >&2; echo "$label failed (exit $rc)" >&2; exit 1 ;; esac
    for _ in $(seq 400); do [ -z "$(cat "$cpu/cgroup.procs")" ] && break; sleep 0.05; done
    [ -z "$(cat "$cpu/cgroup.procs")" ] || echo "$label: still running 20 s after it returned; its CPU is cut there" >&2
    c1=$(cat "$cpu/cpuacct.usage")
    awk -v l="$label" -v n="$n" -v s="$size" -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" \
        -v m="$(cat "$mem/memory.max_usage_in_bytes")" 'BEGIN {
            cpu = (d - c) / 1e9; mib = m / 1048576
            printf "| %s | %d | %d MiB | %.1f | %.2f | %.3f | %.0f | %.1f | ", l, n, s, b - a, cpu, cpu / n, mib, mib / n }'
    verdicts "$json"
    if [ -n "$keep" ]; then mkdir -p "$keep"; cp "$json" "$keep/$label-$n-$size.json"; fi
}
verdicts() { # the run's verdict and how many disks got each verdict
    python3 - "$1" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
verdict = d["summary"]["verdict"] if "summary" in d else d.get("verdict", "?")
if d.get("kind") == "check":  # the disks it flags
    print(verdict, f"{len(d['summary']['flagged'])} of {len(d['disks'])} disks flagged", "|")
else:
    disks = collections.Counter(x.get("verdict") for x in d.get("disks", []))
    print(verdict, ", ".join(f"{v} {n}" for v, n in sorted(disks.items())), "|")
PY
}
echo "| run | disks | disk size | wall s | CPU s | CPU s per disk | peak MiB | MiB per disk | verdict, disks by verdict |"
echo "|---|---|---|---|---|---|---|---|---|"
for size in $sizes; do
    for n in $counts; do
        attach "$n" "$size"
        case " $runs " in *" check "*)
            measure check "$n" "$size" "$work/c.json" "$bin" check --sample "$sample" --progress none \
                --json "$work/c.json" "${devs[@]}" ;;
        esac
        case " $runs " in *" burnin "*)
            measure burnin "$n" "$size" "$work/b.json" "$bin" burnin --destructive --yes --wipe-signatures \
                --smart off --state "$work/state-$n-$size" --progress none --json "$work/b.json" "${devs[@]}" ;;
        esac
        case " $runs " in *" inspect "*)
            measure inspect "$n" "$size" "$work/i.json" "$bin" inspect --json "$work/i.json" "${devs[@]}" ;;
        esac
        case " $runs " in *" report "*)
            local_in=()
            for f in c b; do [ -f "$work/$f.json" ] && local_in+=("$work/$f.json"); done
            if [ ${#local_in[@]} -gt 0 ]; then
                measure report "$n" "$size" "$work/r.json" "$bin" report --json "$work/r.json" "${local_in[@]}"
            fi ;;
        esac
        rm -f "$work/c.json" "$work/b.json"
        teardown
    done
done

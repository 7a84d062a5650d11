#!/usr/bin/env python3
"""Makes check results of many disks for `bench/fleet-scale.sh`: from the
demo fixture (fixtures/report/demo/report.json), one result of N disks, or
F results of D disks each (hosts h0..), every disk with its own serial and
path, its serial speed scattered around the demo's."""
import copy
import json
import os
import sys


def result(base, host, n, month):
    r = copy.deepcopy(base)
    r["host"] = host
    r["started_at"] = f"2026-{month:02d}-01T00:00:00Z"
    r["finished_at"] = f"2026-{month:02d}-01T00:10:00Z"
    disks, rows = [], {p["kind"]: [] for p in r["passes"]}
    for i in range(n):
        d = copy.deepcopy(base["disks"][i % len(base["disks"])])
        path = f"/dev/disk/by-id/bench-{i}"
        d.update(path=path, name=f"sd{i}", serial=f"{host}-S{i:06d}", wwn=None)
        disks.append(d)
        for p in base["passes"]:
            row = copy.deepcopy(p["disks"][i % len(p["disks"])])
            row["path"] = path
            # The surface profile is not what the report reads: left
            # empty, so that a fleet of files stays small to make.
            row["surface"] = {k: ([] if isinstance(v, list) else v) for k, v in row["surface"].items()}
            row["window_mb_per_s"] *= 1.0 + ((i * 7919) % 100 - 50) / 1000.0
            rows[p["kind"]].append(row)
    r["disks"] = disks
    for p in r["passes"]:
        p["disks"] = rows[p["kind"]]
        p["slices"] = []
    r["confirmations"] = []
    r["summary"]["flagged"] = []
    r["summary"]["disk_verdicts"] = []
    return r


def main():
    fixture, out, files, disks, months = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    base = json.load(open(fixture))
    os.makedirs(out, exist_ok=True)
    for f in range(files):
        for m in range(1, months + 1):
            with open(os.path.join(out, f"h{f}-{m:02d}.json"), "w") as fh:
                json.dump(result(base, f"h{f}", disks, m), fh)


main()

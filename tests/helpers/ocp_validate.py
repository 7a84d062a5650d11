#!/usr/bin/env python3
"""Validates an OCP Test & Validation diag stream (JSON lines) against the
ocp-diag-core output schema kept in fixtures/ocp-diag/schema (JSON Schema
draft 2020-12, its files referring to each other by $id), with the
date-time format checked. Also checks what the schema cannot say: the
sequence numbers count up from 0, the stream opens with the schema version
and the run's start, and every hardwareInfoId a measurement or diagnosis
names was declared in the run's start.

    ocp_validate.py SCHEMA_DIR STREAM.jsonl

Prints one line per fault and exits 1, or prints a summary and exits 0.
"""
import json
import pathlib
import sys

import jsonschema
import referencing


def main(schema_dir, stream):
    resources = []
    for p in sorted(pathlib.Path(schema_dir).glob("*.json")):
        doc = json.loads(p.read_text())
        resources.append((doc["$id"], referencing.Resource.from_contents(doc)))
    registry = referencing.Registry().with_resources(resources)
    root = json.loads((pathlib.Path(schema_dir) / "root.json").read_text())
    validator = jsonschema.Draft202012Validator(
        root, registry=registry, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    faults = []
    lines = pathlib.Path(stream).read_text().splitlines()
    declared = set()
    kinds = []
    for n, line in enumerate(lines):
        try:
            art = json.loads(line)
        except ValueError as e:
            faults.append(f"line {n + 1}: not JSON ({e})")
            continue
        for e in validator.iter_errors(art):
            faults.append(f"line {n + 1}: {e.message} at {list(e.absolute_path)}")
        if art.get("sequenceNumber") != n:
            faults.append(f"line {n + 1}: sequenceNumber {art.get('sequenceNumber')}, not {n}")
        run = art.get("testRunArtifact", {})
        step = art.get("testStepArtifact", {})
        kinds.append(next(iter(run or step or {"schemaVersion": 0})))
        start = run.get("testRunStart")
        if start:
            for hw in start["dutInfo"].get("hardwareInfos", []):
                declared.add(hw["hardwareInfoId"])
        for key in ("measurement", "diagnosis"):
            hid = step.get(key, {}).get("hardwareInfoId")
            if hid is not None and hid not in declared:
                faults.append(f"line {n + 1}: {key} names {hid}, not declared in testRunStart")
    if kinds[:2] != ["schemaVersion", "testRunStart"]:
        faults.append(f"the stream opens with {kinds[:2]}, not schemaVersion, testRunStart")
    for f in faults:
        print(f)
    if faults:
        return 1
    print(f"valid: {len(lines)} artifacts, {len(declared)} hardwareInfos")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

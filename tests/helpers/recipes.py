#!/usr/bin/env python3
"""Reads the fleet recipes in contrib/ as their engines would, for the
tests (tests/recipes.rs), and prints what a test needs as JSON:

    recipes.py k8s FILE          each container (and init container) that runs
                                 a script: kind, name, script, env (plain values)
    recipes.py nomad FILE [K=V]  the job parsed by an HCL parser (python-hcl2):
                                 its type, constraint, task driver, env and
                                 script, each ${var.NAME} taken from the
                                 variable's default or K=V
    recipes.py maas FILE         the MAAS script's metadata block, as YAML
"""
import json
import re
import sys
import textwrap

import yaml


def k8s(path):
    out = []
    for doc in yaml.safe_load_all(open(path)):
        spec = doc["spec"]["template"]["spec"]
        for key in ("initContainers", "containers"):
            for c in spec.get(key, []):
                if "args" not in c:
                    continue
                env = {e["name"]: e["value"] for e in c.get("env", []) if "value" in e}
                out.append({"kind": doc["kind"], "name": c["name"], "command": c["command"],
                            "script": c["args"][0], "env": env, "spec": spec})
    return out


def unquote(v):
    return v[1:-1] if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] == '"' else v


def heredoc(v):
    m = re.match(r'^"?<<(-?)(\w+)\n(.*)\n\s*\2\s*"?$', v, re.S)
    if not m:
        return unquote(v)
    body = m.group(3) + "\n"
    return textwrap.dedent(body) if m.group(1) else body


def nomad(path, overrides):
    import hcl2
    d = hcl2.load(open(path))
    variables = {}
    for block in d.get("variable", []):
        for name, v in block.items():
            variables[unquote(name)] = unquote(v.get("default", ""))
    variables.update(overrides)

    def value(v):
        v = heredoc(v) if isinstance(v, str) else v
        if isinstance(v, str):
            v = re.sub(r"\$\{var\.(\w+)\}", lambda m: variables[m.group(1)], v)
        return v

    (name, job), = d["job"][0].items()
    (_, group), = job["group"][0].items()
    (_, task), = group["task"][0].items()
    config = task["config"][0]
    args = [value(a) for a in config["args"]]
    return {
        "job": unquote(name),
        "type": unquote(job["type"]),
        "constraint": {k: value(v) for k, v in job["constraint"][0].items() if not k.startswith("__")},
        "driver": unquote(task["driver"]),
        "restart": {k: value(v) for k, v in group["restart"][0].items() if not k.startswith("__")},
        "env": {k: value(v) for k, v in task["env"][0].items() if not k.startswith("__")},
        "command": unquote(config["command"]),
        "args": args,
    }


def maas(path):
    text = open(path).read()
    m = re.search(r"^# --- Start MAAS 1\.0 script metadata ---\n(.*?)^# --- End MAAS 1\.0 script metadata ---$",
                  text, re.S | re.M)
    if not m:
        raise SystemExit(f"{path}: no MAAS 1.0 metadata block")
    lines = [l[2:] if l.startswith("# ") else l.lstrip("#") for l in m.group(1).splitlines()]
    return yaml.safe_load("\n".join(lines))


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    if what == "k8s":
        print(json.dumps(k8s(path)))
    elif what == "nomad":
        print(json.dumps(nomad(path, dict(a.split("=", 1) for a in sys.argv[3:]))))
    elif what == "maas":
        print(json.dumps(maas(path)))
    else:
        raise SystemExit(f"unknown: {what}")

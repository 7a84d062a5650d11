//! Fleets on the engines admins run: the OCP diag stream (`--ocp-diag`) of
//! a check, a burn-in, a verify and an inspection validated against the
//! ocp-diag-core schema kept in fixtures/ocp-diag; and each recipe of
//! contrib/ read offline as its engine reads it (Kubernetes schemas, an HCL
//! parser, NHC's check API, MAAS's metadata), its own script run on loop
//! devices, and what it collects read by `arrayburn report`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::*;

const MIB: u64 = 1 << 20;

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Python with scripts/python-tools.txt installed (scripts/test.sh
/// makes it), or None (skipped; a failure where CI requires it).
fn python() -> Option<PathBuf> {
    let py = root().join("target/tools/py/bin/python");
    if py.exists() {
        return Some(py);
    }
    let why = "no target/tools/py (scripts/test.sh installs scripts/python-tools.txt there)";
    assert!(std::env::var_os("ARRAYBURN_REQUIRE_DEVICES").is_none_or(|v| v != "1"), "{why}");
    eprintln!("skipping: {why}");
    None
}

/// `python tests/helpers/NAME ARGS`, its output; it must succeed.
fn helper(py: &Path, name: &str, args: &[&str]) -> String {
    let out = Command::new(py)
        .arg(root().join("tests/helpers").join(name))
        .args(args)
        .output_within(MINUTE);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Validates the OCP diag stream in `path` against the schema in
/// fixtures/ocp-diag/schema (and its sequence numbers, its opening, each
/// hardwareInfoId declared): its artifacts, one a line.
fn valid_ocp(py: &Path, path: &Path) -> Vec<Value> {
    let schema = root().join("fixtures/ocp-diag/schema");
    let said = helper(py, "ocp_validate.py", &[schema.to_str().unwrap(), path.to_str().unwrap()]);
    assert!(said.starts_with("valid: "), "{said}");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `arrayburn ARGS` on `devs` (a burn-in, a verify or a soak, no SMART,
/// no speed judged) writing its OCP stream to `ocp`: ended with a verdict
/// (0 or 3), the stream valid, its lines.
fn burned_ocp(py: &Path, args: &[&str], devs: &[&str], ocp: &str) -> Vec<Value> {
    let mut a = args.to_vec();
    a.extend(["--smart", "off", "--progress", "none", "--ocp-diag", ocp]);
    a.extend(NO_SPEED_JUDGED);
    a.extend(devs);
    let out = printed(&a);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
    valid_ocp(py, Path::new(ocp))
}

/// The artifacts of `kind` in a stream (`testRunEnd`, `diagnosis`, ...).
fn of<'a>(stream: &'a [Value], kind: &str) -> Vec<&'a Value> {
    let inner = |a: &'a Value| {
        (a.get("testRunArtifact").or(a.get("testStepArtifact"))).and_then(|x| x.get(kind))
    };
    stream.iter().filter_map(inner).collect()
}

/// Each disk's diagnosis, by the path its hardwareInfo gives.
fn diagnoses(stream: &[Value]) -> Vec<(String, String, String)> {
    let start = of(stream, "testRunStart")[0];
    let hw = start["dutInfo"]["hardwareInfos"].as_array().unwrap();
    let path = |id: &Value| {
        let h = hw.iter().find(|h| &h["hardwareInfoId"] == id).unwrap();
        h["location"].as_str().unwrap().to_string()
    };
    (of(stream, "diagnosis").into_iter())
        .map(|d| {
            let kind = d["type"].as_str().unwrap().to_string();
            (path(&d["hardwareInfoId"]), kind, d["verdict"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn a_checks_ocp_diag_stream_validates_and_diagnoses_each_disk_as_its_verdict_does() {
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let d = disks(3, 32 * MIB);
    let bad = crate::faults::FaultyDisk::new(32 * MIB, &[(8 * MIB, 4096)]);
    let dir = tempdir();
    let (ocp, json) = (dir.path().join("check.ocp.jsonl"), dir.path().join("check.json"));
    let mut args = vec!["check", "-s", "1.5s", "--progress", "none"];
    args.extend(["--ocp-diag", ocp.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    args.extend(d.iter().map(|x| x.dev.as_str()));
    args.push(&bad.dev);
    let run = finish(arrayburn(&args), &json);
    assert_eq!(run.code, 1, "the unreadable sector flags the run");
    let stream = valid_ocp(&py, &ocp);
    let start = of(&stream, "testRunStart")[0];
    assert_eq!(start["name"], "arrayburn check");
    assert_eq!(start["dutInfo"]["hardwareInfos"].as_array().unwrap().len(), 4);
    // Each disk's diagnosis is the run's own verdict of it: FAIL for a
    // disk to act on, UNKNOWN for one not decided, PASS for the rest.
    let doc = arrayburn::rundoc::Document::document(run.report.as_ref().unwrap());
    let told = diagnoses(&stream);
    assert_eq!(told.len(), 4, "{told:?}");
    for (path, kind, verdict) in &told {
        let acts = doc.to_act_on.iter().find(|a| &a.path == path);
        let undecided = doc.is_unsure(path) || doc.not_judged.contains(path);
        let want = match (acts, undecided) {
            (Some(a), _) => {
                assert_eq!(verdict, &format!("disk-{}", a.action.replace('_', "-")));
                "FAIL"
            }
            (None, true) => "UNKNOWN",
            (None, false) => "PASS",
        };
        assert_eq!(kind, want, "{path}: {verdict}");
    }
    let failed = told.iter().find(|(p, _, _)| p == &bad.dev).unwrap();
    assert_eq!((failed.1.as_str(), failed.2.as_str()), ("FAIL", "disk-return"), "{failed:?}");
    // Its findings by their codes, beside its diagnosis (and in the JSON).
    let ext: Vec<&Value> = of(&stream, "extension");
    let mut acted: Vec<&str> = doc.to_act_on.iter().map(|a| a.path.as_str()).collect();
    acted.dedup();
    assert_eq!(ext.len(), acted.len(), "one for each disk to act on: {ext:?}");
    assert!(ext.iter().all(|e| e["name"] == "arrayburn.findings"), "{ext:?}");
    let unreadable = |e: &&Value| {
        e["content"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "unreadable_ranges" && f["count"].as_u64() == Some(1))
    };
    assert!(ext.iter().any(unreadable), "{ext:?}");
    let json: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let advice = json["summary"]["disk_verdicts"].as_array().unwrap();
    let bad_one = advice.iter().find(|a| a["path"] == bad.dev.as_str()).unwrap();
    assert_eq!(bad_one["findings"][0]["code"], "unreadable_ranges", "{bad_one}");
    // The unreadable bytes are measured, held to the rule that says none.
    let unreadable = (of(&stream, "measurement").into_iter())
        .find(|m| m["name"] == "serial.unreadable_bytes" && m["value"].as_u64() > Some(0))
        .expect("the bad sector's bytes, measured");
    assert_eq!(unreadable["validators"][0]["type"], "EQUAL");
    assert_eq!(unreadable["unit"], "bytes");
    let end = of(&stream, "testRunEnd")[0];
    assert_eq!((end["status"].as_str(), end["result"].as_str()), (Some("COMPLETE"), Some("FAIL")));
    // The validator is no formality: a stream whose end says another word
    // is refused.
    let broken = dir.path().join("broken.jsonl");
    let text =
        std::fs::read_to_string(&ocp).unwrap().replace("\"result\":\"FAIL\"", "\"result\":\"BAD\"");
    std::fs::write(&broken, text).unwrap();
    let schema = root().join("fixtures/ocp-diag/schema");
    let out = Command::new(&py)
        .arg(root().join("tests/helpers/ocp_validate.py"))
        .args([schema.as_path(), broken.as_path()])
        .output_within(MINUTE);
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn the_ocp_diag_streams_of_a_burn_in_its_verify_and_an_inspection_validate() {
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let d = disks(2, 16 * MIB);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let (state, dir) = (tempdir(), tempdir());
    let st = state.path().to_str().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (burn, verify, inspect) = (at("burn.jsonl"), at("verify.jsonl"), at("inspect.jsonl"));
    let a = ["burnin", "--state", st, "--destructive", "--yes", "--passes", "1"];
    let stream = burned_ocp(&py, &a, &devs, &burn);
    assert_eq!(of(&stream, "testRunStart")[0]["name"], "arrayburn burnin");
    let passes: Vec<_> =
        of(&stream, "measurement").into_iter().filter(|m| m["name"] == "passes_done").collect();
    assert_eq!(passes.len(), 2);
    for p in passes {
        assert_eq!(p["value"], 1);
        assert_eq!(p["validators"][0]["type"], "GREATER_THAN_OR_EQUAL");
    }
    let bad: Vec<_> =
        of(&stream, "measurement").into_iter().filter(|m| m["name"] == "bad_bytes").collect();
    assert!(bad.len() == 2 && bad.iter().all(|m| m["value"] == 0), "{bad:?}");
    assert!(diagnoses(&stream).iter().all(|(_, k, _)| k != "FAIL"));

    let stream = burned_ocp(&py, &["burnin", "--verify", "--state", st], &devs, &verify);
    assert_eq!(of(&stream, "testRunStart")[0]["name"], "arrayburn verify");
    assert_eq!(of(&stream, "testStepStart")[0]["name"], "verify");

    // A soak its --duration ends mid-pass is read whole once: its passes
    // held to that, as the run holds them, not to the passes it could not
    // reach.
    let soak = at("soak.jsonl");
    let a = ["burnin", "--read-only", "--duration", "1s", "--state", st];
    let stream = burned_ocp(&py, &a, &devs, &soak);
    assert_eq!(of(&stream, "testStepStart")[0]["name"], "soak");
    for m in of(&stream, "measurement").into_iter().filter(|m| m["name"] == "passes_done") {
        let floor = &m["validators"][0]["value"];
        assert!(m["value"].as_u64() >= floor.as_u64(), "{m}");
    }
    assert!(diagnoses(&stream).iter().all(|(_, k, _)| k != "FAIL"));

    let mut a = vec!["inspect", "--ocp-diag", &inspect];
    a.extend(&devs);
    let out = printed(&a);
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{out:?}");
    let stream = valid_ocp(&py, Path::new(&inspect));
    let start = of(&stream, "testRunStart")[0];
    assert_eq!(start["name"], "arrayburn inspect");
    let sizes: Vec<_> =
        of(&stream, "measurement").into_iter().filter(|m| m["name"] == "size").collect();
    assert!(sizes.len() == 2 && sizes.iter().all(|m| m["value"] == 16 * MIB), "{sizes:?}");
    assert_eq!(diagnoses(&stream).len(), 2);
}

/// Runs a recipe's own script (`sh -c SCRIPT` as its engine would) with
/// its environment and these overrides: where it writes, which disks,
/// which arrayburn. Its exit status and what it printed.
fn run_script(shell: &str, script: &str, env: &[(String, String)]) -> (i32, String) {
    let mut cmd = Command::new(shell);
    cmd.args(["-c", script]);
    cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output_within(RUN);
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("--- {shell} -c (recipe)\n{said}");
    (out.status.code().unwrap_or(-1), said)
}

/// The env a recipe's own script gets from its manifest, then ours.
fn with_env(base: &Value, ours: &[(&str, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = (base.as_object().unwrap().iter())
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    for (k, v) in ours {
        env.retain(|(x, _)| x != k);
        env.push((k.to_string(), v.clone()));
    }
    env
}

/// `arrayburn report --json - DIR`: its exit status and document.
fn fleet(dir: &Path) -> (i32, Value) {
    let out = arrayburn(&["report", "--json", "-", dir.to_str().unwrap()]).output_within(RUN);
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), doc)
}

/// The result files a fleet report read.
fn sources(doc: &Value) -> Vec<String> {
    let read = doc["sources"].as_array().expect("sources");
    read.iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

#[test]
fn the_kubernetes_job_and_daemonset_validate_offline_and_what_they_collect_the_report_reads() {
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let k8s = root().join("contrib/kubernetes");
    let dir = tempdir();
    // As the Job's own instructions apply it: its node named.
    let job = dir.path().join("job-node-a.yaml");
    let text = std::fs::read_to_string(k8s.join("arrayburn-check-job.yaml")).unwrap();
    assert!(text.contains("REPLACE_WITH_NODE"));
    std::fs::write(&job, text.replace("REPLACE_WITH_NODE", "node-a")).unwrap();
    let daemonset = k8s.join("arrayburn-burnin-daemonset.yaml");
    let validate = py.with_file_name("kubernetes-validate");
    for manifest in [&job, &daemonset] {
        let out = Command::new(&validate).arg("--strict").arg(manifest).output_within(MINUTE);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && said.contains("passed"), "{said}");
    }
    let read = |m: &Path| -> Vec<Value> {
        serde_json::from_str(&helper(&py, "recipes.py", &["k8s", m.to_str().unwrap()])).unwrap()
    };
    let (jobs, burns) = (read(&job), read(&daemonset));
    let (check, burn) = (&jobs[0], &burns[0]);
    assert_eq!((check["kind"].as_str(), burn["kind"].as_str()), (Some("Job"), Some("DaemonSet")));
    for c in [check, burn] {
        // Privileged, with the host's /dev, /sys and udev's links, by id.
        let spec = &c["spec"];
        let mounts: Vec<&str> = (spec["volumes"].as_array().unwrap().iter())
            .filter_map(|v| v["hostPath"]["path"].as_str())
            .collect();
        for want in ["/dev", "/sys", "/run/udev", "/var/lib/arrayburn"] {
            assert!(mounts.contains(&want), "{want} in {mounts:?}");
        }
        assert!(c["env"]["DEVICES"].as_str().unwrap().starts_with("/dev/disk/by-id/"));
        assert!(!c["env"]["DEVICES"].as_str().unwrap().contains("/dev/sd"));
    }
    assert_eq!(burn["spec"]["nodeSelector"]["arrayburn.io/burnin"], "destroy-disks");
    assert!(burn["script"].as_str().unwrap().contains("--resume-or-start"));

    // node-a: three disks; node-b: two and one with an unreadable sector.
    let d = disks(5, 32 * MIB);
    let bad = crate::faults::FaultyDisk::new(32 * MIB, &[(8 * MIB, 4096)]);
    let results = dir.path().join("results");
    let metrics = dir.path().join("textfile/arrayburn.prom");
    let ours = |node: &str, devices: Vec<&str>, args: &str| {
        vec![
            ("NODE_NAME", node.to_string()),
            ("DEVICES", devices.join(" ")),
            ("ARRAYBURN", bin().to_string()),
            ("ARRAYBURN_ARGS", args.to_string()),
            ("RESULTS", results.to_str().unwrap().to_string()),
            ("STATE", dir.path().join("state").to_str().unwrap().to_string()),
            ("METRICS", metrics.to_str().unwrap().to_string()),
        ]
    };
    let quick = "-s 1.5s";
    let node_a = (d[..3].iter()).map(|x| x.dev.as_str()).collect();
    // A disk named twice (two ids of one disk) is read once.
    let node_b = vec![d[3].dev.as_str(), d[4].dev.as_str(), bad.dev.as_str(), d[3].dev.as_str()];
    let script = check["script"].as_str().unwrap();
    for (node, devices) in [("node-a", node_a), ("node-b", node_b)] {
        let env = with_env(&check["env"], &ours(node, devices, quick));
        let (code, said) = run_script("/bin/sh", script, &env);
        assert_eq!(code, 0, "a check's verdict is a result, not the Job's failure: {said}");
    }
    // A pattern matching no disk fails the Job (exit 2), writing nothing.
    let env = with_env(&check["env"], &ours("node-x", vec!["/dev/disk/by-id/none-*"], quick));
    let (code, said) = run_script("/bin/sh", script, &env);
    assert_eq!(code, 2, "{said}");
    // node-c: the DaemonSet's burn-in, then its pod started again.
    let burn_disks: Vec<&str> = vec![d[0].dev.as_str(), d[1].dev.as_str()];
    let args = "--passes 1 --smart off --not-against-peers --stall-ms 60000";
    let env = with_env(&burn["env"], &ours("node-c", burn_disks.clone(), args));
    let (code, said) = run_script("/bin/sh", burn["script"].as_str().unwrap(), &env);
    assert_eq!(code, 0, "{said}");
    let (code, said) = run_script("/bin/sh", burn["script"].as_str().unwrap(), &env);
    assert!(code == 0 && said.contains("not run again"), "{said}");
    let burned: Vec<_> = std::fs::read_dir(results.join("node-c")).unwrap().flatten().collect();
    assert_eq!(
        burned.iter().filter(|e| e.path().extension().is_some_and(|x| x == "json")).count(),
        1
    );
    for node in ["node-a", "node-b", "node-c"] {
        for e in std::fs::read_dir(results.join(node)).unwrap().flatten() {
            if e.path().to_string_lossy().ends_with(".ocp.jsonl") {
                valid_ocp(&py, &e.path());
            }
        }
    }
    assert!(std::fs::read_to_string(&metrics).unwrap().contains("arrayburn_run_verdict"));
    // The nodes' results/ gathered under one directory: the report reads
    // all three and flags node-b's disk.
    let (code, doc) = fleet(&results);
    let read = sources(&doc);
    assert_eq!(read.len(), 3, "{read:?}");
    for node in ["node-a", "node-b", "node-c"] {
        assert!(read.iter().any(|s| s.contains(&format!("/{node}/"))), "{node} in {read:?}");
    }
    assert_eq!(code, 1, "{doc}");
    assert!(doc.to_string().contains(&bad.dev), "the bad disk named: {doc}");
}

#[test]
fn the_nomad_job_parses_as_a_sysbatch_job_and_its_task_collects_what_the_report_reads() {
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let hcl = root().join("contrib/nomad/arrayburn.nomad.hcl");
    let parse = |vars: &[&str]| -> Value {
        let mut args = vec!["nomad", hcl.to_str().unwrap()];
        args.extend(vars);
        serde_json::from_str(&helper(&py, "recipes.py", &args)).unwrap()
    };
    let job = parse(&[]);
    assert_eq!(job["type"], "sysbatch");
    assert_eq!(job["driver"], "raw_exec");
    assert_eq!(job["constraint"]["attribute"], "${meta.arrayburn}");
    assert_eq!(job["constraint"]["value"], "check");
    assert_eq!(job["env"]["NODE_NAME"], "${node.unique.name}");
    assert!(job["env"]["DEVICES"].as_str().unwrap().starts_with("/dev/disk/by-id/"));
    assert_eq!(job["command"], "/bin/sh");
    let script = job["args"][1].as_str().unwrap().to_string();
    let d = disks(3, 32 * MIB);
    let dir = tempdir();
    let results = dir.path().join("results");
    let ours = |node: &str, devices: &[&LoopDisk], args: &str| {
        vec![
            ("NODE_NAME", node.to_string()),
            ("DEVICES", devices.iter().map(|x| x.dev.as_str()).collect::<Vec<_>>().join(" ")),
            ("ARRAYBURN", bin().to_string()),
            ("ARRAYBURN_ARGS", args.to_string()),
            ("RESULTS", results.to_str().unwrap().to_string()),
            ("STATE", dir.path().join("state").to_str().unwrap().to_string()),
            ("METRICS", dir.path().join("textfile/arrayburn.prom").to_str().unwrap().to_string()),
        ]
    };
    let all: Vec<&LoopDisk> = d.iter().collect();
    let env = with_env(&job["env"], &ours("client-1", &all, "-s 1.5s"));
    let (code, said) = run_script("/bin/sh", &script, &env);
    assert_eq!(code, 0, "{said}");
    // A burn-in not asked for in so many words writes nothing.
    let burn = parse(&["mode=burnin"]);
    assert_eq!(burn["constraint"]["value"], "burnin");
    let before = std::fs::read(&d[0].file).unwrap();
    let env = with_env(&burn["env"], &ours("client-2", &all[..2], "--passes 1 --smart off"));
    let (code, said) = run_script("/bin/sh", burn["args"][1].as_str().unwrap(), &env);
    assert!(code == 2 && said.contains("destroy_disks=yes"), "{said}");
    assert!(std::fs::read(&d[0].file).unwrap() == before, "nothing written");
    let burn = parse(&["mode=burnin", "destroy_disks=yes"]);
    let args = "--passes 1 --smart off --not-against-peers --stall-ms 60000";
    let env = with_env(&burn["env"], &ours("client-2", &all[..2], args));
    let (code, said) = run_script("/bin/sh", burn["args"][1].as_str().unwrap(), &env);
    assert_eq!(code, 0, "{said}");
    assert!(results.join("client-2/burnin.done").exists());
    let (_, doc) = fleet(&results);
    let read = sources(&doc);
    assert_eq!(read.len(), 2, "{read:?}");
    assert!(read.iter().any(|s| s.contains("/client-1/check-")), "{read:?}");
    assert!(read.iter().any(|s| s.contains("/client-2/burnin-")), "{read:?}");
}

/// Runs NHC's `check_arrayburn DIR` as NHC does (its functions sourced into
/// bash; `die` hands the reason to the node's drain as NHC's does, through
/// `eval $OFFLINE_NODE "'$HOSTNAME'" "'$*'"`): the reason the drain got, if
/// it died.
fn nhc(dir: &Path) -> Option<String> {
    let check = root().join("contrib/slurm/arrayburn.nhc");
    let harness = format!(
        "offline() {{ echo \"DIE 1 $2\"; }}
         die() {{ local ret=$1; shift; eval offline \"'node1'\" \"'$*'\"; return \"$ret\"; }}
         dbg() {{ :; }}; log() {{ :; }}
         source '{}'; check_arrayburn -b '{}' '{}'; echo \"RET $?\"",
        check.display(),
        bin(),
        dir.display()
    );
    let out = Command::new("bash").args(["-c", &harness]).output_within(MINUTE);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!(
        "--- check_arrayburn {}\n{said}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let ret = said.lines().find_map(|l| l.strip_prefix("RET ")).expect("the check returned");
    let died = said.lines().find_map(|l| l.strip_prefix("DIE 1 ").map(String::from));
    assert_eq!(ret == "0", died.is_none(), "{said}");
    died
}

#[test]
fn the_nhc_check_drains_a_node_as_the_report_of_its_results_judges_it() {
    let dir = tempdir();
    let node = dir.path().join("node1");
    std::fs::create_dir_all(&node).unwrap();
    // No result yet: nothing to judge, the node stays up.
    assert_eq!(nhc(&node), None);
    // Results of one machine (its id: a later run of the same disks
    // supersedes an earlier finding only on the same machine).
    let recorded = |fixture: &str| -> Value {
        let at = root().join("fixtures/report").join(fixture).join("report.json");
        let mut v: Value = serde_json::from_slice(&std::fs::read(at).unwrap()).unwrap();
        v["machine_id"] = "5f1b0c6e2a9d4e8f9a7b3c2d1e0f4a5b".into();
        v
    };
    let put = |v: &Value, name: &str, age_s: u64| {
        let to = node.join(name);
        std::fs::write(&to, v.to_string()).unwrap();
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_s);
        std::fs::File::options().write(true).open(&to).unwrap().set_modified(when).unwrap();
    };
    // The same check of the same disks later, with nothing found: whole
    // (`interrupted` false) or stopped part-way.
    let again = |interrupted: bool| {
        let mut v = recorded("full-with-bad-sectors");
        v["started_at"] = "2026-12-05T03:42:45Z".into();
        v["finished_at"] = "2026-12-05T03:50:00Z".into();
        v["interrupted"] = interrupted.into();
        let s = &mut v["summary"];
        s["verdict"] = if interrupted { "interrupted" } else { "healthy" }.into();
        (s["disk_verdicts"], s["flagged"]) = (Value::Array(vec![]), Value::Array(vec![]));
        for pass in v["passes"].as_array_mut().unwrap() {
            for d in pass["disks"].as_array_mut().unwrap() {
                for k in ["read_errors", "bad_ranges", "bad_bytes"] {
                    d[k] = 0.into();
                }
                (d["verdict"], d["errors"], d["reasons"]) =
                    ("ok".into(), Value::Array(vec![]), Value::Array(vec![]));
            }
        }
        v
    };
    put(&recorded("remeasured"), "check-2.json", 60);
    assert_eq!(nhc(&node), None, "a healthy check");
    // A check that found bad sectors, older than the healthy one (of other
    // disks): the newest file alone passed the node; the report of its
    // results drains it, naming the disk.
    put(&recorded("full-with-bad-sectors"), "check-1.json", 3600);
    let reason = nhc(&node).expect("drained");
    // The headline, then the disk and what was found on it.
    assert!(reason.starts_with("arrayburn: FLAGGED: 1 of 7 disk(s) to act on"), "{reason}");
    assert!(reason.contains("/dev/loop0: 2 unreadable range(s)"), "{reason}");
    assert!(reason.ends_with(&format!("(arrayburn report {})", node.display())), "{reason}");
    // Whole through NHC's quoting: the verdict's apostrophe ("vm's check")
    // does not cut it short.
    assert!(!reason.contains('\''), "{reason}");
    // A newer check of the same disks interrupted part-way (the recipes
    // write partial results) clears nothing.
    put(&again(true), "check-3.json", 0);
    let reason = nhc(&node).expect("still drained");
    assert!(reason.contains("/dev/loop0: 2 unreadable range(s)"), "{reason}");
    // A newer whole check of them that found nothing does.
    put(&again(false), "check-4.json", 0);
    assert_eq!(nhc(&node), None, "measured again whole: cleared");
    // A result arrayburn cannot read is said, not taken for healthy.
    std::fs::write(node.join("check-5.json"), "{\"tool\": \"arrayburn\", \"passes\": 7").unwrap();
    let reason = nhc(&node).expect("drained");
    assert!(reason.contains("failed") && reason.contains("check-5.json"), "{reason}");
}

#[test]
fn the_maas_script_carries_its_metadata_and_its_output_is_a_result_the_report_reads() {
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let script = root().join("contrib/maas/arrayburn-check");
    let meta: Value =
        serde_json::from_str(&helper(&py, "recipes.py", &["maas", script.to_str().unwrap()]))
            .unwrap();
    assert_eq!(meta["name"], "arrayburn-check");
    assert_eq!(meta["script_type"], "testing");
    assert_eq!(meta["hardware_type"], "node");
    assert_eq!(meta["destructive"], false);
    assert!(meta["timeout"].is_string() && meta["results"]["verdict"].is_object(), "{meta}");
    let d = disks(2, 32 * MIB);
    let bad = crate::faults::FaultyDisk::new(32 * MIB, &[(8 * MIB, 4096)]);
    let dir = tempdir();
    let collected = dir.path().join("collected");
    std::fs::create_dir_all(&collected).unwrap();
    let result = dir.path().join("result.yaml");
    let devices = format!("{} {} {}", d[0].dev, d[1].dev, bad.dev);
    // The script as MAAS runs it, with arrayburn's arguments `args`.
    let maas = |args: &str| {
        Command::new("bash")
            .arg(&script)
            .env("ARRAYBURN", bin())
            .env("ARRAYBURN_DEVICES", &devices)
            .env("ARRAYBURN_ARGS", args)
            .env("RESULT_PATH", &result)
            .output_within(RUN)
    };
    let out = maas("-s 1.5s");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "a disk to act on fails the test script");
    // Its standard output, downloaded as MAAS keeps it, is the result.
    std::fs::write(collected.join("machine-1.json"), &out.stdout).unwrap();
    let status = std::fs::read_to_string(&result).unwrap();
    assert!(status.starts_with("status: failed\n"), "{status}");
    assert!(status.contains("exit_status: 1") && status.contains(&bad.dev), "{status}");
    // A refusal fails the script with arrayburn's own line as the verdict.
    let out = maas("-s 1s");
    assert_eq!(out.status.code(), Some(1));
    let status = std::fs::read_to_string(&result).unwrap();
    assert!(status.starts_with("status: failed\n"), "{status}");
    assert!(status.contains("exit_status: 2") && status.contains("--sample"), "{status}");
    let (code, doc) = fleet(&collected);
    assert_eq!(sources(&doc).len(), 1);
    assert_eq!(code, 1);
    assert!(doc.to_string().contains(&bad.dev), "{doc}");
}

/// A burn-in of one pass that says where it is every 0.2 s.
const STOPPABLE: &str =
    "--passes 1 --smart off --not-against-peers --stall-ms 60000 --progress-interval 0.2s";

#[test]
fn a_burn_in_pod_stopped_hands_the_stop_to_arrayburn_and_its_next_start_resumes() {
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let daemonset = root().join("contrib/kubernetes/arrayburn-burnin-daemonset.yaml");
    let burns: Vec<Value> =
        serde_json::from_str(&helper(&py, "recipes.py", &["k8s", daemonset.to_str().unwrap()]))
            .unwrap();
    let script = burns[0]["script"].as_str().unwrap();
    // Writes held to 4 MB/s: the first pass of 32 MiB disks takes 8 s.
    let d = disks(2, 32 * MIB);
    let t = writes_at(&d, 4_000_000);
    let dir = tempdir();
    let results = dir.path().join("results");
    let ours = [
        ("NODE_NAME", "node-d".to_string()),
        ("DEVICES", format!("{} {}", d[0].dev, d[1].dev)),
        ("ARRAYBURN", bin().to_string()),
        ("ARRAYBURN_ARGS", STOPPABLE.to_string()),
        ("RESULTS", results.to_str().unwrap().to_string()),
        ("STATE", dir.path().join("state").to_str().unwrap().to_string()),
        ("METRICS", dir.path().join("textfile/arrayburn.prom").to_str().unwrap().to_string()),
    ];
    let env = with_env(&burns[0]["env"], &ours);
    let mut cmd = t.command_of("/bin/sh", &["-c", script]);
    cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let child = cmd.start();
    child.wait_line("writes under way", MINUTE, |l| l.contains(" write ") && l.contains(" MB/s"));
    // The pod's stop: SIGTERM to the shell alone, as the kubelet sends it
    // to the container's first process.
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let out = child.wait(MINUTE);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "arrayburn stopped, the init container failed");
    let node = results.join("node-d");
    assert!(!node.join("burnin.done").exists());
    let stopped: Vec<Value> = (std::fs::read_dir(&node).unwrap().flatten())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap())
        .collect();
    assert_eq!(stopped.len(), 1, "the stopped run's partial result");
    assert_eq!(stopped[0]["interrupted"], true);
    // The pod started again: the burn-in resumed from its checkpoint,
    // ended, and is marked done.
    let (code, said) = run_script("/bin/sh", script, &env);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("Resumed 1 time"), "{said}");
    assert!(node.join("burnin.done").exists());
}

#[test]
fn a_killed_worker_leaves_its_json_and_its_ocp_stream_marked_killed() {
    // kill -9 of the process that burns the disks (what the out-of-memory
    // killer does), before any pass ends: the process that waited for it
    // marks the result saved as the run began (it left no --json and no
    // --ocp-diag), and the stream ends valid, ERROR.
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let d = disks(2, 64 << 20);
    let t = writes_at(&d, 4_000_000);
    let (state, dir) = (tempdir(), tempdir());
    let (json, ocp) = (dir.path().join("run.json"), dir.path().join("run.ocp.jsonl"));
    let mut args = vec!["burnin", "--state", state.path().to_str().unwrap(), "--destructive"];
    args.extend(["--yes", "--smart", "off", "--progress", "lines", "--progress-interval", "0.2s"]);
    args.extend(["--json", json.to_str().unwrap(), "--ocp-diag", ocp.to_str().unwrap()]);
    args.extend(NO_SPEED_JUDGED);
    args.extend([d[0].dev.as_str(), d[1].dev.as_str()]);
    let child = t.command(&args).start();
    child.wait_line("the write phase", RUN, |l| l.contains("write") && l.contains('%'));
    let worker = family(child.id());
    assert!(worker.len() >= 2, "a parent and its worker: {worker:?}");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(worker[1] as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let out = child.wait(MINUTE);
    assert_eq!(out.status.code(), Some(137), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let killed = doc["killed"].as_str().unwrap_or_default();
    assert!(killed.contains("was killed by SIGKILL"), "{doc}");
    assert_eq!(
        (&doc["interrupted"], &doc["complete"], &doc["exit_status"]),
        (&true.into(), &false.into(), &137.into())
    );
    assert_eq!(doc["summary"]["verdict"], "interrupted", "no health claimed: {}", doc["summary"]);
    let lines = valid_ocp(&py, &ocp);
    let end = &lines.last().unwrap()["testRunArtifact"]["testRunEnd"];
    assert_eq!(end["status"], "ERROR", "{lines:?}");
    let error = &lines[lines.len() - 2]["testRunArtifact"]["error"];
    assert_eq!(error["symptom"], "killed", "{lines:?}");
    // The fleet reads it as a run that did not finish, never as healthy.
    let out = printed(&["report", "--quiet", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}

#[test]
fn the_watch_daemonset_validates_offline_runs_unprivileged_and_the_report_reads_what_it_logs() {
    need_root!();
    let _l = device_lock();
    let Some(py) = python() else { return };
    let daemonset = root().join("contrib/kubernetes/arrayburn-watch-daemonset.yaml");
    let validate = py.with_file_name("kubernetes-validate");
    let out = Command::new(&validate).arg("--strict").arg(&daemonset).output_within(MINUTE);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("passed"), "{said}");
    let read: Vec<Value> =
        serde_json::from_str(&helper(&py, "recipes.py", &["k8s", daemonset.to_str().unwrap()]))
            .unwrap();
    let watch = &read[0];
    assert_eq!(watch["kind"], "DaemonSet");
    // It opens no disk: not privileged, /dev and /sys read-only.
    let spec = &watch["spec"]["containers"][0];
    assert!(spec["securityContext"]["privileged"].is_null(), "{spec}");
    for m in spec["volumeMounts"].as_array().unwrap() {
        if m["mountPath"] == "/dev" || m["mountPath"] == "/sys" {
            assert_eq!(m["readOnly"], true, "{m}");
        }
    }
    // Its script on a node of four one-head FUSE disks under a steady
    // read load, one slow: for a few windows, as its pod would run it.
    let ok: Vec<crate::faults::FaultyDisk> =
        (0..3).map(|_| crate::faults::FaultyDisk::drive(64 * MIB, 1000, 0)).collect();
    let slow = crate::faults::FaultyDisk::drive(64 * MIB, 6000, 0);
    let all: Vec<&crate::faults::FaultyDisk> = ok.iter().chain([&slow]).collect();
    let pairs: Vec<(u32, &str)> = all.iter().map(|d| (20, d.dev.as_str())).collect();
    let reader = crate::watch::load(30, &pairs);
    let dir = tempdir();
    let results = dir.path().join("results");
    let metrics = dir.path().join("textfile/arrayburn-watch.prom");
    let ours = [
        ("NODE_NAME", "node-w".to_string()),
        ("DEVICES", all.iter().map(|d| d.dev.as_str()).collect::<Vec<_>>().join(" ")),
        ("ARRAYBURN", bin().to_string()),
        ("ARRAYBURN_ARGS", "--interval 1s --for 2s --count 6".to_string()),
        ("RESULTS", results.to_str().unwrap().to_string()),
        ("METRICS", metrics.to_str().unwrap().to_string()),
    ];
    let env = with_env(&watch["env"], &ours);
    let (code, said) = run_script("/bin/sh", watch["script"].as_str().unwrap(), &env);
    drop(reader.kill());
    assert_eq!(code, 1, "a disk fail-slow when the watch ended: {said}");
    assert!(said.contains(&format!("{}: FAIL-SLOW", slow.dev)), "{said}");
    let text = std::fs::read_to_string(&metrics).unwrap();
    crate::metrics::accepted(&text, "watch daemonset");
    // The nodes' results/ gathered: the report reads the watch's log.
    let (code, doc) = fleet(&results);
    assert_eq!(sources(&doc).len(), 1, "{doc}");
    assert_eq!(code, 1, "{doc}");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!((runs[0]["kind"].as_str(), runs[0]["host"].is_string()), (Some("watch"), true));
    assert_eq!(runs[0]["disks"], serde_json::json!([slow.dev]), "{doc}");
}

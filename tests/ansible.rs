//! contrib/ansible/arrayburn.yml end to end against localhost: it copies
//! arrayburn, runs the check on loop devices, fetches the JSON and runs
//! `arrayburn report` over what it fetched; then the burn-in, detached and
//! polled.

use std::process::Command;

use crate::util::*;

#[test]
fn the_playbook_checks_the_hosts_fetches_the_results_and_reports() {
    need_root!();
    let _l = device_lock();
    if !installed("ansible-playbook") {
        assert!(
            std::env::var_os("ARRAYBURN_REQUIRE_DEVICES").is_none_or(|v| v != "1"),
            "ansible-playbook is needed (scripts/test.sh installs ansible-core)"
        );
        eprintln!("skipping: no ansible-playbook (scripts/test.sh installs it as root)");
        return;
    }
    let d = disks(3, 32 << 20);
    // The check also reads a disk with an unreadable sector: that run's own
    // finding must reach the closing summary.
    let bad = crate::faults::FaultyDisk::new(32 << 20, &[(8 << 20, 4096)]);
    let mut devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    devs.push(&bad.dev);
    let dir = tempdir();
    let results = dir.path().join("results");
    let remote = dir.path().join("host-bin/arrayburn");
    std::fs::create_dir_all(remote.parent().unwrap()).unwrap();
    let playbook = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/ansible/arrayburn.yml");
    let vars = serde_json::json!({
        "target": "localhost",
        "devices": devs.join(" "),
        "arrayburn_args": "--sample 1.5s",
        "results_dir": results,
        "arrayburn_local_bin": bin(),
        "arrayburn_bin": remote,
        "arrayburn_report_bin": bin(),
        // The Python that runs Ansible, not whatever discovery finds first
        // (shims may point at a Python that is not there).
        "ansible_python_interpreter": ansible_python(),
    });
    let run_with = |vars: &serde_json::Value| {
        let out = Command::new("ansible-playbook")
            .args(["-i", "localhost,", "-c", "local", playbook])
            .arg("-e")
            .arg(vars.to_string())
            .env("ANSIBLE_LOCALHOST_WARNING", "false")
            .env("ANSIBLE_NOCOLOR", "1")
            .output_within(RUN);
        let log = String::from_utf8_lossy(&out.stdout).into_owned();
        eprintln!("{log}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{log}");
        log
    };
    let run = || run_with(&vars);
    run();
    // Run again later: two results of the same host, both reported (the
    // first run's report in the tree is not read as a result).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let log = run();
    assert!(remote.is_file(), "arrayburn copied to the host");
    let mut fetched: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("localhost-check-") && n.ends_with(".json"))
        .collect();
    fetched.sort();
    assert_eq!(fetched.len(), 2, "{fetched:?}");
    let one: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join(&fetched[0])).unwrap()).unwrap();
    assert_schema(&one);
    assert_eq!(one["disks"].as_array().unwrap().len(), 4);
    assert_eq!(one["summary"]["verdict"], "flagged", "{one}");
    let fleet: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("report/report.json")).unwrap())
            .unwrap();
    assert_eq!(fleet["kind"], "fleet");
    assert_eq!(fleet["sources"].as_array().unwrap().len(), 2);
    assert_eq!(fleet["samples"].as_array().unwrap().len(), 8);
    assert!(results.join("report/report.html").is_file());
    assert!(log.contains("fleet report: 2 result(s)"), "{log}");
    // The closing summary: the fleet flagged by the runs' own finding (the
    // first run superseded by the second, which read those disks again).
    assert_eq!(fleet["verdict"], "flagged", "{fleet}");
    assert!(fleet["runs"][0]["superseded_by"].is_string(), "{fleet}");
    // (Memory-backed disks read in a moment may also differ in speed:
    // only the unreadable sector is certain.)
    let verdict = format!(
        "Verdict: FLAGGED: 1 run(s) with findings of their own ({}'s check of {} found something on ",
        fleet["runs"][1]["host"].as_str().unwrap(),
        fleet["runs"][1]["started_at"].as_str().unwrap(),
    );
    let line = log
        .lines()
        .find(|l| l.contains(&verdict) && l.contains("(exit 1)"))
        .unwrap_or_else(|| panic!("{verdict}: {log}"));
    assert!(line.contains(&bad.dev), "{line}");
    // No result left on the host.
    let left: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            fetched.iter().any(|f| f.ends_with(&n.replace("arrayburn-", "")))
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // The burn-in, detached and polled: its result fetched and reported
    // beside the checks.
    let state = dir.path().join("burnin-state");
    let mut burn = vars.clone();
    burn["mode"] = "burnin".into();
    burn["arrayburn_destructive"] = true.into();
    burn["arrayburn_poll"] = 1.into();
    // One disk: a lone disk's speed is never compared, so the burn-in ends
    // not judged (exit 3) however loaded the machine is, and the playbook's
    // handling of an exit that is not 0 is what is tested.
    burn["devices"] = devs[0].into();
    burn["arrayburn_args"] = format!("--state {} --smart off --block 1m", state.display()).into();
    let log = run_with(&burn);
    let burned: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("localhost-burnin-") && n.ends_with(".json"))
        .collect();
    assert_eq!(burned.len(), 1, "{burned:?}");
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join(&burned[0])).unwrap()).unwrap();
    // Nothing found, its speed compared with nothing: not judged (exit 3,
    // a result all the same).
    assert_eq!(
        (&b["kind"], &b["summary"]["verdict"]),
        (&"burnin".into(), &"not_judged".into()),
        "{b}"
    );
    assert_eq!(b["disks"].as_array().unwrap().len(), 1);
    // Polled as an async job (Ansible words any exit but 0 "ASYNC
    // FAILED" before failed_when accepts 3).
    assert!(log.contains("ASYNC FAILED on localhost: jid="), "detached and polled: {log}");
    assert!(log.contains("fleet report: 3 result(s)"), "{log}");
    assert!(log.contains("burn-in of 1 disk"), "{log}");
    assert!(log.contains("could not judge"), "{log}");
}

/// The Python `ansible-playbook` runs on (its `--version` ends its
/// "python version" line with the executable's path).
fn ansible_python() -> String {
    let out = Command::new("ansible-playbook").arg("--version").output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.trim_start().starts_with("python version"))
        .and_then(|l| l.rsplit_once('(').map(|(_, p)| p.trim_end_matches(')').to_string()))
        .expect("ansible-playbook --version names its Python")
}

//! contrib/ansible/arrayburn.yml end to end against two inventory names on
//! this machine: it copies arrayburn, checks each host's loop devices as
//! root, fails the flagged host's Verdict task (the recap shows it),
//! fetches the results into a results_dir taken from where it runs, and
//! reports; then a burn-in started detached and collected once it ended.

use std::path::Path;
use std::process::Command;

use crate::util::*;

#[test]
fn two_hosts_one_flagged_one_healthy_in_the_recap_and_a_burn_in_collected_when_done() {
    need_root!();
    let _l = device_lock();
    if !tools_here(&["ansible-playbook"], "ansible-core") {
        return;
    }
    // Two inventory names on this machine. node1: three disks held alike
    // to 20 MB/s (healthy); node2: two such disks and one with an
    // unreadable sector (flagged, whatever its speeds).
    let d = disks(5, 32 << 20);
    let t = Throttle::new();
    for x in &d {
        t.limit(x, 20_000_000);
    }
    let bad = crate::faults::FaultyDisk::new(32 << 20, &[(8 << 20, 4096)]);
    let node1: Vec<&str> = d[..3].iter().map(|x| x.dev.as_str()).collect();
    let node2 = [d[3].dev.as_str(), d[4].dev.as_str(), bad.dev.as_str()];
    let dir = tempdir();
    let (state1, state2) = (dir.path().join("state1"), dir.path().join("state2"));
    let inventory = dir.path().join("hosts");
    std::fs::write(
        &inventory,
        format!(
            "[arrayburn]\nnode1 ansible_connection=local devices='{}' arrayburn_state={}\nnode2 ansible_connection=local devices='{}' arrayburn_state={}\n",
            node1.join(" "),
            state1.display(),
            node2.join(" "),
            state2.display()
        ),
    )
    .unwrap();
    let remote = dir.path().join("host-bin/arrayburn");
    std::fs::create_dir_all(remote.parent().unwrap()).unwrap();
    let playbook = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/ansible/arrayburn.yml");
    // A relative results_dir: taken from where ansible-playbook runs.
    let vars = serde_json::json!({
        "arrayburn_args": "--sample 1.5s",
        "results_dir": "results",
        "arrayburn_local_bin": bin(),
        "arrayburn_bin": remote,
        "arrayburn_report_bin": bin(),
        // Root already: su asks no password (no sudo on this machine).
        "ansible_become_method": "su",
        // The Python that runs Ansible, not whatever discovery finds first
        // (shims may point at a Python that is not there).
        "ansible_python_interpreter": ansible_python(),
    });
    let run_with = |vars: &serde_json::Value| {
        let args = ["-i", inventory.to_str().unwrap(), playbook, "-e", &vars.to_string()];
        let out = t
            .command_of("ansible-playbook", &args)
            .current_dir(dir.path())
            // As a shell started it there.
            .env("PWD", dir.path())
            .env("ANSIBLE_LOCALHOST_WARNING", "false")
            .env("ANSIBLE_NOCOLOR", "1")
            .output_within(RUN);
        let log = String::from_utf8_lossy(&out.stdout).into_owned();
        eprintln!("{log}\n{}", String::from_utf8_lossy(&out.stderr));
        (out.status.code(), log)
    };
    let (code, log) = run_with(&vars);
    // A host failed (its Verdict): ansible-playbook's exit 2.
    assert_eq!(code, Some(2), "{log}");
    let recap = |host: &str| {
        log.lines()
            .skip_while(|l| !l.starts_with("PLAY RECAP"))
            .find(|l| l.starts_with(host))
            .unwrap_or_else(|| panic!("{host} in the recap: {log}"))
            .to_string()
    };
    assert!(recap("node1").contains("failed=0"), "{}", recap("node1"));
    assert!(recap("node2").contains("failed=1"), "{}", recap("node2"));
    // The check itself changes nothing on a host (copying arrayburn and
    // fetching the result do).
    let check = log.split("TASK [Run the check (read-only)]").nth(1).unwrap_or("");
    assert!(check.lines().nth(1).is_some_and(|l| l.starts_with("ok: ")), "{check}");
    assert!(log.contains("\"msg\": \"node2: Verdict: FLAGGED: "), "{log}");
    assert!(log.contains("\"msg\": \"node1: Verdict: HEALTHY: "), "{log}");
    let results = dir.path().join("results");
    assert!(!Path::new(playbook).parent().unwrap().join("results").exists(), "not in the checkout");
    let fetched = |prefix: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&results)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(prefix) && n.ends_with(".json"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(fetched("node1-check-").len(), 1);
    assert_eq!(fetched("node2-check-").len(), 1);
    let two: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join(&fetched("node2-check-")[0])).unwrap())
            .unwrap();
    assert_schema(&two);
    assert_eq!(two["summary"]["verdict"], "flagged", "{two}");
    let fleet: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("report/report.json")).unwrap())
            .unwrap();
    assert_eq!(fleet["sources"].as_array().unwrap().len(), 2, "{fleet}");
    assert!(log.contains("fleet report: 2 result(s)"), "{log}");
    assert!(remote.is_file(), "arrayburn copied to the host");
    // Each host wrote into a directory of its own, removed once fetched.
    let left: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.path().join("node1-check.json").exists() || e.path().join("node2-check.json").exists()
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // The burn-in on node1, started detached: the play returns while it
    // runs; collect fetches it once it has ended and reports it.
    let mut burn = vars.clone();
    burn["mode"] = "burnin".into();
    burn["arrayburn_destructive"] = true.into();
    burn["target"] = "node1".into();
    burn["arrayburn_args"] = "--smart off --block 1m".into();
    let (code, log) = run_with(&burn);
    assert_eq!(code, Some(0), "{log}");
    assert!(!log.contains("fleet report"), "no report while it runs: {log}");
    let mut collect = vars.clone();
    collect["mode"] = "collect".into();
    let mut last = String::new();
    let collected = wait_for(RUN, || {
        last = run_with(&collect).1;
        !fetched("node1-burnin-").is_empty()
    });
    assert!(collected, "the burn-in was never collected: {last}");
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join(&fetched("node1-burnin-")[0])).unwrap())
            .unwrap();
    assert_eq!(b["kind"], "burnin", "{b}");
    assert_eq!(b["disks"].as_array().unwrap().len(), 3);
    assert!(last.contains("fleet report: 3 result(s)"), "{last}");
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

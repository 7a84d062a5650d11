//! `arrayburn report` over results from several hosts and times (made
//! from a real recorded check, changed per host), its files, its bad-input
//! refusals, and its HTML page rendered by a real headless browser.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::*;

/// The recorded demo check (four loop disks), as host `host`, begun at
/// `when`, each disk given serial `HOST-i` and the serial MB/s `speeds[i]`,
/// and the run's own verdict as the check gives it: a disk under 92 % of
/// the run's median is to recheck, else the run is healthy.
fn result(host: &str, when: &str, speeds: [f64; 4]) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/report/demo/report.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["host"] = host.into();
    v["machine_id"] = format!("{host:0>32}").into();
    v["started_at"] = when.into();
    for (i, d) in v["disks"].as_array_mut().unwrap().iter_mut().enumerate() {
        d["serial"] = format!("{host}-{i}").into();
        d["model"] = "TESTDISK 20TB".into();
    }
    for p in v["passes"].as_array_mut().unwrap() {
        if p["kind"] == "serial" {
            for (i, d) in p["disks"].as_array_mut().unwrap().iter_mut().enumerate() {
                d["window_mb_per_s"] = speeds[i].into();
                d["read_errors"] = 0.into();
            }
        }
    }
    let mut sorted = speeds;
    sorted.sort_by(f64::total_cmp);
    let median = (sorted[1] + sorted[2]) / 2.0;
    let slow: Vec<(usize, f64)> =
        (0..4).map(|i| (i, 100.0 * speeds[i] / median)).filter(|(_, pct)| *pct < 92.0).collect();
    for p in v["passes"].as_array_mut().unwrap() {
        for (i, d) in p["disks"].as_array_mut().unwrap().iter_mut().enumerate() {
            d["verdict"] = if slow.iter().any(|s| s.0 == i) { "slow" } else { "ok" }.into();
        }
    }
    let advice: Vec<Value> = slow
        .iter()
        .map(|(i, pct)| {
            let path = format!("/dev/loop{i}");
            serde_json::json!({"path": path, "action": "recheck",
                "sentence": format!("{path}: {pct:.0}% of its peers' speed, move it to another slot and check again; if it stays slow, return it")})
        })
        .collect();
    let s = &mut v["summary"];
    s["verdict"] = if advice.is_empty() { "healthy" } else { "flagged" }.into();
    s["message"] =
        if advice.is_empty() { "HEALTHY: 4 disk(s)." } else { "FLAGGED: a disk is slow." }.into();
    s["flagged"] = serde_json::json!([]);
    s["disk_verdicts"] = advice.into();
    v
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p
}

fn report(args: &[&str]) -> std::process::Output {
    printed(&[&["report"], args].concat())
}

#[test]
fn a_fleet_of_results_names_the_slow_disk_the_slower_one_and_each_host() {
    let dir = tempdir();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(runs.join("november")).unwrap();
    // Three hosts; node3's disk 1 is slow for the model (70 %); node1's
    // disk 2 was 270 MB/s in November and is 210 now. node1's disk 0 was on
    // a SATA link at 3.0 of 6.0 Gb/s in November (recabled since); node2's
    // HBA runs at x4 of x8 now.
    let linked = |mut v: Value, link: Value| {
        v["summary"]["links"] = serde_json::json!([link]);
        v
    };
    write(
        &runs.join("november"),
        "node1.json",
        &linked(
            result("node1", "2026-11-01T08:00:00Z", [270.0, 268.0, 270.0, 272.0]),
            serde_json::json!({"kind": "sata", "at": "link1", "current": "3.0 Gbps",
                "max": "6.0 Gbps", "carries_mb_per_s": null, "controller": false,
                "disks": ["/dev/loop0"]}),
        ),
    );
    write(
        &runs,
        "node1.json",
        &result("node1", "2026-12-01T08:00:00Z", [271.0, 269.0, 210.0, 270.0]),
    );
    write(
        &runs,
        "node2.json",
        &linked(
            result("node2", "2026-12-01T08:10:00Z", [272.0, 270.0, 268.0, 271.0]),
            serde_json::json!({"kind": "pcie", "at": "0000:05:00.0",
                "current": "8.0 GT/s PCIe x4", "max": "8.0 GT/s PCIe x8", "carries_mb_per_s": 3938.0,
                "controller": true, "switch": false, "disks": ["/dev/loop0", "/dev/loop1"]}),
        ),
    );
    write(
        &runs,
        "node3.json",
        &result("node3", "2026-12-01T08:20:00Z", [269.0, 189.0, 271.0, 270.0]),
    );
    let json = dir.path().join("fleet.json");
    let bundle = dir.path().join("bundle");
    let out = report(&[
        runs.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--out",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "flagged");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let slow: Vec<(&str, &str)> = v["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["verdict"] == "slow")
        .map(|o| (o["host"].as_str().unwrap(), o["serial"].as_str().unwrap()))
        .collect();
    assert_eq!(slow, [("node1", "node1-2"), ("node3", "node3-1")], "{v}");
    let reg = &v["regressions"][0];
    assert_eq!(reg["serial"], "node1-2", "{v}");
    assert_eq!(reg["earlier_runs"], 1);
    assert!(
        reg["what"][0]
            .as_str()
            .unwrap()
            .starts_with("reads at 210 MB/s, 78% of its earlier 270 MB/s")
    );
    assert_eq!(v["regressions"].as_array().unwrap().len(), 1);
    assert_eq!(v["hosts"].as_array().unwrap().len(), 3);
    assert_eq!(v["hosts"][0]["runs"].as_array().unwrap().len(), 2, "node1 twice");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Worse than in earlier runs:"), "{text}");
    // Only the latest result of each host counts for links: node2's HBA,
    // not node1's November cable.
    let links: Vec<(&str, &str)> = v["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["host"].as_str().unwrap(), l["link"]["at"].as_str().unwrap()))
        .collect();
    assert_eq!(links, [("node2", "0000:05:00.0")], "{v}");
    assert!(
        text.contains("Links below their maximum (each host's latest result):\n  node2: the controller 0000:05:00.0's PCIe link runs at 8.0 GT/s PCIe x4"),
        "{text}"
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .ends_with("1 worse than in earlier runs, 1 link(s) below their maximum."),
        "{v}"
    );
    // Each run's own findings count too: node1's and node3's slow disks
    // (each also slow within its run), node2's HBA link; node1's November
    // cable was measured again by its December run, which found that link
    // fine: superseded, listed, not counted.
    let found: Vec<(String, &str, Option<&str>)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let src = r["source"].as_str().unwrap();
            (
                src.strip_prefix(runs.to_str().unwrap()).unwrap().to_string(),
                r["disks"][0].as_str().unwrap(),
                r["superseded_by"].as_str(),
            )
        })
        .collect();
    let dec = runs.join("node1.json");
    assert_eq!(
        found,
        [
            ("/node1.json".to_string(), "/dev/loop2", None),
            ("/node2.json".to_string(), "/dev/loop0", None),
            ("/node3.json".to_string(), "/dev/loop1", None),
            ("/november/node1.json".to_string(), "/dev/loop0", dec.to_str()),
        ],
        "{v}"
    );
    assert!(
        v["message"].as_str().unwrap().starts_with(
            "FLAGGED: 3 run(s) with findings of their own (node1's check of 2026-12-01T08:00:00Z found something on /dev/loop2; node2's check"
        ),
        "{v}"
    );
    assert!(
        text.contains("Runs that found something (their own verdicts):\n  node1's check of 2026-12-01T08:00:00Z"),
        "{text}"
    );
    assert!(text.contains("Superseded (a later run measured those disks again):"), "{text}");
    // node1's four disks are in two results: counted once each.
    assert!(text.contains("fleet report: 4 result(s), 12 disk(s), 3 host(s)"), "{text}");
    for f in ["report.txt", "report.json", "report.md", "report.html"] {
        assert!(bundle.join(f).is_file(), "{f}");
    }
    assert!(
        std::fs::read_to_string(bundle.join("report.md"))
            .unwrap()
            .contains("| node3 | /dev/loop1 |")
    );
    rendered_in_a_browser(&bundle.join("report.html"));

    // A truncated file refuses the report (one line, exit 2); with
    // --keep-going it is skipped and the others are read.
    let full = std::fs::read(runs.join("node2.json")).unwrap();
    std::fs::write(runs.join("cut.json"), &full[..full.len() / 2]).unwrap();
    let out = report(&[runs.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cut.json: truncated") && err.contains("--keep-going"), "{err}");
    let out = report(&[runs.to_str().unwrap(), "--keep-going", "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["skipped"].as_array().unwrap().len(), 1);
    assert_eq!(v["sources"].as_array().unwrap().len(), 4);
    // A healthy fleet exits 0.
    let calm = dir.path().join("calm");
    std::fs::create_dir_all(&calm).unwrap();
    write(&calm, "a.json", &result("a", "2026-12-01T00:00:00Z", [270.0, 271.0, 269.0, 270.0]));
    write(&calm, "b.json", &result("b", "2026-12-01T00:00:00Z", [272.0, 270.0, 268.0, 271.0]));
    assert_eq!(report(&[calm.to_str().unwrap()]).status.code(), Some(0));
}

/// Renders the page in headless Chromium: the verdict and the tables are
/// in the DOM it built, and the chart is drawn (its red bar is on the
/// screenshot).
fn rendered_in_a_browser(page: &Path) {
    // Chromium takes both cores for a while: not beside a timing test.
    let _l = device_lock();
    let Some(browser) = Browser::new() else { return };
    let dom = browser.dom(page);
    assert!(
        dom.contains("class=\"verdict flagged\"")
            && dom.contains("2 disk(s) slow for their model across the fleet"),
        "{dom}"
    );
    // Laid out as the check's page: sections in the run's colours, the
    // slow disks marked in their table, every disk listed.
    assert!(
        dom.contains("<h2 class=\"bad\">Runs that found something (their own verdicts)</h2>"),
        "{dom}"
    );
    assert!(
        dom.contains("<h2 class=\"bad\">Slow or fast for their model across the fleet</h2>"),
        "{dom}"
    );
    assert!(dom.contains("<td class=\"bad\">SLOW</td>"), "{dom}");
    assert!(
        dom.contains(
            "<h2 class=\"bad\">Links below their maximum (each host's latest result)</h2>"
        ),
        "{dom}"
    );
    assert!(dom.contains("<h2>Disks</h2>"), "{dom}");
    assert!(dom.matches("<rect").count() >= 12, "bars drawn in the DOM");
    let (buf, step) = browser.screenshot(page, 1200, 4000);
    let red = buf.chunks(step).filter(|p| p[0] > 200 && p[1] < 60 && p[2] < 60).count();
    assert!(red > 500, "the red bar of a slow disk is on screen: {red} red pixels");
}

#[test]
fn result_files_are_input_escaped_held_to_their_units_and_never_waited_for() {
    let dir = tempdir();
    // A host name and a model that would retitle the admin's terminal and
    // run script in a Markdown renderer.
    let hostile = "evil\u{1b}]0;pwned\u{7}<script>alert(1)</script>";
    let mut v = result(hostile, "2026-12-01T06:00:00Z", [150.0, 151.0, 149.0, 150.0]);
    v["disks"][0]["model"] = "DISK\u{1b}[2J".into();
    let file = write(dir.path(), "evil.json", &v);
    let out_dir = dir.path().join("out");
    let out = report(&[file.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "raw escapes: {stdout:?}");
    assert!(stdout.contains("evil\\x1b]0;pwned\\x07"), "{stdout}");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(!md.contains("<script") && !md.contains('\u{1b}'), "{md}");
    assert!(md.contains("&lt;script&gt;"), "{md}");
    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(!page.contains("<script") && !page.contains('\u{1b}'));
    // Numbers outside their unit's range: refused, naming file and field.
    for (value, says) in [
        (serde_json::json!(-1.0), "window_mb_per_s is -1.0, not a speed"),
        (serde_json::json!(1e308), "not a speed (0 to 1000000 MB/s)"),
    ] {
        let mut bad = result("node1", "2026-12-01T06:00:00Z", [150.0, 151.0, 149.0, 150.0]);
        bad["passes"][0]["disks"][1]["window_mb_per_s"] = value;
        let f = write(dir.path(), "bad.json", &bad);
        let out = report(&[f.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("bad.json: passes[0].disks[1].") && err.contains(says), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // A FIFO as a result, or as ARRAYBURN_TOPOLOGY: refused at once, not
    // waited for without end.
    let fifo = dir.path().join("fifo.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let at_once =
        |mut c: std::process::Command| c.output_within(std::time::Duration::from_secs(10));
    let mut c = arrayburn(&["report"]);
    c.arg(&fifo);
    let out = at_once(c);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a FIFO"), "{err}");
    let mut c = arrayburn(&["list"]);
    c.env("ARRAYBURN_TOPOLOGY", &fifo);
    let out = at_once(c);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ARRAYBURN_TOPOLOGY=") && err.contains("is a FIFO"), "{err}");
}

#[test]
fn a_signal_stops_the_report_with_130_and_nothing_written() {
    need_root!();
    // A result on a file that answers its reads 3 s late (a FUSE file):
    // the signal comes while the report reads it.
    let v = result("node1", "2026-12-01T06:00:00Z", [150.0, 151.0, 149.0, 150.0]);
    let mut bytes = serde_json::to_vec(&v).unwrap();
    let size = (bytes.len() as u64).next_multiple_of(1 << 20);
    bytes.resize(size as usize, b' ');
    let slow = crate::faults::FaultyDisk::slow_file(size, &[(0, size, 3_000_000)]);
    let img = slow.image();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
        .unwrap();
    let dir = tempdir();
    let out_dir = dir.path().join("out");
    let child =
        arrayburn(&["report", img.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]).start();
    let pid = child.id();
    // Signalled once it has the file open.
    let reading = || {
        std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
            fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == img))
        })
    };
    let mut child = child;
    child.wait_until("the result opened", MINUTE, reading);
    let (out, _) = child.interrupt(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted; nothing was written"), "{err}");
    assert!(!out_dir.exists(), "a report was written");
}

#[test]
fn the_fleet_verdict_carries_each_real_runs_own_findings() {
    use crate::faults::FaultyDisk;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let dir = tempdir();
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).unwrap();
    // A check that finds an unreadable sector, at normal speed, beside two
    // good disks.
    let bad = FaultyDisk::new(32 * MIB, &[(8 * MIB, 4096)]);
    let good = disks(2, 32 * MIB);
    let page = dir.path().join("check");
    let check_json = results.join("check.json");
    let out = arrayburn(&[
        "check",
        "--sample",
        "1.5s",
        "--progress",
        "none",
        "--json",
        check_json.to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
        &bad.dev,
        &good[0].dev,
        &good[1].dev,
    ])
    .output_within(RUN);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    // Its own page says what it found, not HEALTHY.
    let own = std::fs::read_to_string(page.join("report.html")).unwrap();
    assert!(own.contains("class=\"verdict flagged\">Verdict: FLAGGED"), "{own}");
    // A burn-in interrupted partway (writes held to 8 MB/s: 4 s).
    let fresh = disks(1, 32 * MIB);
    let t = Throttle::new();
    t.limit_write(&fresh[0], 8_000_000);
    let state = tempdir();
    let burn_json = results.join("burn.json");
    let child = t
        .command(&[
            "burnin",
            "--state",
            state.path().to_str().unwrap(),
            "--destructive",
            "--yes",
            "--smart",
            "off",
            "--progress",
            "none",
            "--checkpoint-every",
            "1",
            "--json",
            burn_json.to_str().unwrap(),
            &fresh[0].dev,
        ])
        .start();
    let checkpoint = state.path().join(format!("burnin-{}.json", fresh[0].name()));
    let written = || {
        std::fs::read(&checkpoint)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|c| c["at"]["done_until"].as_u64() > Some(0))
    };
    let mut child = child;
    child.wait_until("a checkpointed write", MINUTE, written);
    let (out, _) = child.interrupt(MINUTE);
    assert_eq!(out.status.code(), Some(130));
    // Both read together: flagged by the check's own finding, the burn-in
    // named as interrupted, in every form.
    let fleet = dir.path().join("fleet.json");
    let bundle = dir.path().join("bundle");
    let out = report(&[
        results.to_str().unwrap(),
        "--json",
        fleet.to_str().unwrap(),
        "--out",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&std::fs::read(&fleet).unwrap()).unwrap();
    assert_eq!(v["verdict"], "flagged", "{v}");
    let runs: Vec<(&str, &str, &str)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["state"].as_str().unwrap(),
                r["disks"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [("burnin", "interrupted", fresh[0].dev.as_str()), ("check", "flagged", bad.dev.as_str())],
        "{v}"
    );
    let sentence = format!("{}: 1 unreadable range(s)", bad.dev);
    assert!(v["runs"][1]["what"][0].as_str().unwrap().starts_with(&sentence), "{v}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&sentence), "{text}");
    assert!(
        text.contains("Runs not judged whole (interrupted, not finished, or a disk not compared):"),
        "{text}"
    );
    assert!(text.contains("Details: 1 run(s) with findings of their own"), "{text}");
    let md = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(md.contains("**Verdict: FLAGGED: 1 run\\(s\\)") && md.contains("INTERRUPTED"), "{md}");
    let html = std::fs::read_to_string(bundle.join("report.html")).unwrap();
    assert!(html.contains("class=\"verdict flagged\">Verdict: FLAGGED"), "{html}");
    assert!(
        html.contains(
            "<h2>Runs not judged whole (interrupted, not finished, or a disk not compared)</h2>"
        ),
        "{html}"
    );
    // The interrupted burn-in alone is not judged (exit 3), never healthy.
    let out = report(&[burn_json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Verdict: NOT JUDGED: "), "{text}");
    assert!(text.contains(&format!("{}: stopped in pass 1 of 1, write ", fresh[0].dev)), "{text}");
}

#[test]
fn a_later_run_clears_a_finding_only_on_the_same_disk_machine_and_passes() {
    let dir = tempdir();
    // A check that found /dev/loop2 slow, then a healthy check of the same
    // host a day later: superseded, the fleet is healthy.
    let flagged = result("node1", "2026-11-01T00:00:00Z", [100.0, 100.0, 50.0, 100.0]);
    let first = write(dir.path(), "a.json", &flagged);
    let later = result("node1", "2026-11-02T00:00:00Z", [100.0, 100.0, 100.0, 100.0]);
    let code = |later: &Value, extra: &[&str]| {
        let second = write(dir.path(), "b.json", later);
        let args = [&[first.to_str().unwrap(), second.to_str().unwrap()][..], extra].concat();
        report(&args).status.code()
    };
    assert_eq!(code(&later, &[]), Some(0));
    // The same serial on a disk of another size (a USB bridge's serial):
    // another disk, the finding stands.
    let mut other_disk = later.clone();
    other_disk["disks"][2]["size_bytes"] = 2_000_000_000_000u64.into();
    assert_eq!(code(&other_disk, &[]), Some(1));
    // A later result that does not say which machine it ran on.
    let mut unknown = later.clone();
    unknown.as_object_mut().unwrap().remove("machine_id");
    assert_eq!(code(&unknown, &[]), Some(1));
    // A later check of the serial pass only: it cannot clear what only
    // the parallel pass can find.
    let mut serial_only = later.clone();
    serial_only["passes"].as_array_mut().unwrap().retain(|p| p["kind"] == "serial");
    assert_eq!(code(&serial_only, &[]), Some(1));
    // A truncated file skipped with --keep-going: what it found is not
    // known, so the fleet is not healthy.
    let cut = dir.path().join("cut.json");
    let bytes = serde_json::to_vec(&flagged).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let second = write(dir.path(), "b.json", &later);
    let out = report(&[
        first.to_str().unwrap(),
        second.to_str().unwrap(),
        cut.to_str().unwrap(),
        "--keep-going",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn an_acknowledged_finding_is_listed_not_flagging_until_its_value_moves() {
    let dir = tempdir();
    let at = |n: &str| dir.path().join(n);
    let a = write(
        dir.path(),
        "a.json",
        &result("a", "2026-12-01T08:00:00Z", [100.0, 60.0, 100.0, 100.0]),
    );
    let acks = at("acks.json");
    let (acks_s, a_s) = (acks.to_str().unwrap(), a.to_str().unwrap());
    let fleet = |args: &[&str], name: &str| -> (std::process::Output, Value) {
        let json = at(name);
        let out = report(&[args, &["--json", json.to_str().unwrap()]].concat());
        let doc = std::fs::read(&json).map(|b| serde_json::from_slice(&b).unwrap());
        (out, doc.unwrap_or(Value::Null))
    };
    let (out, before) = fleet(&[a_s], "f0.json");
    assert_eq!((out.status.code(), before["verdict"].as_str()), (Some(1), Some("flagged")));
    // Refused, nothing written: a disk with no finding, an --ack-add
    // without why, a file that is not one of ours, one that is missing.
    let refused = |args: &[&str], why: &str| {
        let out = report(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{why}: {err}");
        assert!(!acks.exists(), "{args:?} wrote the file");
    };
    refused(
        &[a_s, "--ack", acks_s, "--ack-add", "a-3", "--why", "x"],
        "no finding stands on that disk",
    );
    refused(&[a_s, "--ack", acks_s, "--ack-add", "a-1"], "--why");
    refused(&[a_s, "--ack", acks_s], "cannot read it");
    std::fs::write(at("bad.json"), "{\"nope\": 1}").unwrap();
    refused(
        &[a_s, "--ack", at("bad.json").to_str().unwrap()],
        "not a file of acknowledged findings",
    );
    // Disk a-1's findings accepted: its run's own and slow for its model.
    let add = [
        a_s,
        "--ack",
        acks_s,
        "--ack-add",
        "a-1",
        "--why",
        "slot 2's backplane, known",
        "--who",
        "ana",
    ];
    let (out, doc) = fleet(&add, "f1.json");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a-1: 2 finding(s) acknowledged"), "{err}");
    assert_eq!((out.status.code(), doc["verdict"].as_str()), (Some(0), Some("healthy")), "{doc}");
    assert!(
        doc["message"].as_str().unwrap().ends_with(
            "2 finding(s) acknowledged, listed apart (each flags again when its value moves)."
        ),
        "{doc}"
    );
    let kept: Value = serde_json::from_slice(&std::fs::read(&acks).unwrap()).unwrap();
    let entries = kept["acknowledged"].as_array().unwrap();
    let kinds: Vec<&str> = entries.iter().map(|e| e["finding"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["run", "slow"], "{kept}");
    assert!(entries.iter().all(|e| e["who"] == "ana" && e["why"] == "slot 2's backplane, known"));
    // The value is the finding's class: its speed figure moves with every
    // re-check, and is not part of it.
    assert!(entries[0]["value"].as_str().unwrap().starts_with("# of its peers' speed"), "{kept}");
    // Read again: still acknowledged, listed apart, in the metrics too.
    let prom = at("f.prom");
    let (out, doc) = fleet(&[a_s, "--ack", acks_s, "--metrics", prom.to_str().unwrap()], "f2.json");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(doc["acknowledged"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["runs"][0]["acknowledged"], true, "{doc}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Acknowledged (listed, not flagging") && text.contains("by ana, "),
        "{text}"
    );
    let metrics = std::fs::read_to_string(&prom).unwrap();
    if crate::metrics::promtool_here() {
        crate::metrics::accepted(&metrics, "acknowledged fleet");
    }
    assert!(metrics.contains("arrayburn_fleet_acknowledged{host=\"a\",device=\"/dev/loop1\",finding=\"run\",who=\"ana\"} 1"), "{metrics}");
    // A re-check a point slower (61 % where 60 % was accepted): the same
    // finding, still acknowledged (it flagged the fleet again before).
    let b = write(
        dir.path(),
        "b.json",
        &result("a", "2026-12-03T08:00:00Z", [100.0, 61.0, 100.0, 100.0]),
    );
    let (out, doc) = fleet(&[a_s, b.to_str().unwrap(), "--ack", acks_s], "f3.json");
    assert_eq!((out.status.code(), doc["verdict"].as_str()), (Some(0), Some("healthy")), "{doc}");
    // A later run: a-1 as before, and a-2 slow too. a-1's finding is
    // listed acknowledged and nowhere else; a-2's is the one to act on,
    // and the verdict names it alone.
    let c = write(
        dir.path(),
        "c.json",
        &result("a", "2026-12-04T08:00:00Z", [100.0, 61.0, 62.0, 100.0]),
    );
    let (out, doc) = fleet(&[a_s, c.to_str().unwrap(), "--ack", acks_s], "f4.json");
    assert_eq!((out.status.code(), doc["verdict"].as_str()), (Some(1), Some("flagged")), "{doc}");
    let text = String::from_utf8_lossy(&out.stdout);
    let act_on = text.split("\nVerdict: ").nth(1).unwrap_or_default();
    let act_on = act_on.split("\nDetails: ").next().unwrap_or_default();
    assert!(act_on.contains("/dev/loop2") && !act_on.contains("/dev/loop1"), "{text}");
    let message = doc["message"].as_str().unwrap();
    assert!(message.contains("/dev/loop2") && !message.contains("/dev/loop1"), "{message}");
    let listed: Vec<&str> = (doc["acknowledged"].as_array().unwrap().iter())
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&"/dev/loop1") && !listed.contains(&"/dev/loop2"), "{doc}");
    // Another kind of finding on a-1 (bad sectors where slowness was
    // accepted): flagged again.
    let mut d = result("a", "2026-12-05T08:00:00Z", [100.0, 61.0, 100.0, 100.0]);
    d["summary"]["disk_verdicts"][0]["action"] = "return".into();
    d["summary"]["disk_verdicts"][0]["sentence"] =
        "/dev/loop1: 2 unreadable range(s) (first at byte 8388608, 8.39 MB), return it".into();
    let d = write(dir.path(), "d.json", &d);
    let (out, doc) = fleet(&[a_s, d.to_str().unwrap(), "--ack", acks_s], "f5.json");
    assert_eq!((out.status.code(), doc["verdict"].as_str()), (Some(1), Some("flagged")), "{doc}");
    let still: Vec<&str> = (doc["acknowledged"].as_array().unwrap().iter())
        .map(|e| e["finding"].as_str().unwrap())
        .collect();
    assert_eq!(still, ["slow"], "{doc}");
    assert!(doc["message"].as_str().unwrap().contains("1 finding(s) acknowledged"), "{doc}");
    // An --ack-add without a reason is refused; so is an ack file that is
    // a FIFO or a link.
    refused_with(&report(&[a_s, "--ack", acks_s, "--ack-add", "a-2", "--why", " "]), "--why");
    let fifo = at("acks.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    refused_with(&report(&[a_s, "--ack", fifo.to_str().unwrap()]), "a FIFO");
    let link = at("acks.link");
    std::os::unix::fs::symlink(&acks, &link).unwrap();
    refused_with(&report(&[a_s, "--ack", link.to_str().unwrap()]), "symbolic link");
}

#[test]
fn a_finding_given_by_its_codes_stays_acknowledged_when_its_sentence_is_reworded() {
    let dir = tempdir();
    let at = |n: &str| dir.path().join(n);
    // A result as today's arrayburn writes it: the slow disk's finding by
    // its code beside its sentence.
    let coded = |when: &str, sentence: &str, findings: Value| {
        let mut v = result("a", when, [100.0, 60.0, 100.0, 100.0]);
        v["summary"]["disk_verdicts"][0]["sentence"] = sentence.into();
        v["summary"]["disk_verdicts"][0]["findings"] = findings;
        v
    };
    let slow = serde_json::json!([{"code": "slower_than_peers"}]);
    let a = write(
        dir.path(),
        "a.json",
        &coded(
            "2026-12-01T08:00:00Z",
            "/dev/loop1: 60% of its peers' speed, move it to another slot and check again; if it stays slow, return it",
            slow.clone(),
        ),
    );
    let acks = at("acks.json");
    let (acks_s, a_s) = (acks.to_str().unwrap(), a.to_str().unwrap());
    let out = report(&[a_s, "--ack", acks_s, "--ack-add", "a-1", "--why", "known", "--who", "ana"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let kept: Value = serde_json::from_slice(&std::fs::read(&acks).unwrap()).unwrap();
    let run =
        (kept["acknowledged"].as_array().unwrap().iter()).find(|e| e["finding"] == "run").unwrap();
    assert_eq!(run["value"], "slower_than_peers", "{kept}");
    // A later release words it otherwise: the same code, still acknowledged.
    let b = write(
        dir.path(),
        "b.json",
        &coded(
            "2026-12-02T08:00:00Z",
            "/dev/loop1: reads at 61 % of what its peers read; try another slot",
            slow,
        ),
    );
    let out = report(&[a_s, b.to_str().unwrap(), "--ack", acks_s]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // Another finding on it (unreadable ranges): flagged again.
    let worse = serde_json::json!([{"code": "slower_than_peers"}, {"code": "unreadable_ranges", "count": 2}]);
    let c = write(
        dir.path(),
        "c.json",
        &coded(
            "2026-12-03T08:00:00Z",
            "/dev/loop1: 60% of its peers' speed, 2 unreadable range(s), return it",
            worse,
        ),
    );
    let out = report(&[a_s, c.to_str().unwrap(), "--ack", acks_s]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
}

/// A refusal: exit 2, one line naming `why`.
fn refused_with(out: &std::process::Output, why: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(why) && err.trim().lines().count() == 1, "{why}: {err}");
}

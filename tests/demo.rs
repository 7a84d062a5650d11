//! `arrayburn demo` end to end: it finds the disk it made slow, exits as
//! documented, and leaves no loop device, backing file or cgroup behind.

use std::process::Command;

use crate::util::*;

/// The demo's process id, from its announcement on stderr.
fn demo_pid(stderr: &str) -> String {
    let at = stderr.find("arrayburn-demo-").expect("the demo names its cgroup");
    stderr[at + 15..].chars().take_while(|c| c.is_ascii_digit()).collect()
}

/// Everything the demo with `pid` could have left behind.
fn leftovers(pid: &str) -> Vec<String> {
    let tag = format!("arrayburn-demo-{pid}");
    let mut left: Vec<String> = Vec::new();
    for dir in ["/dev/shm", "/sys/fs/cgroup/blkio"] {
        let names = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned());
        left.extend(names.filter(|n| n.starts_with(&tag)).map(|n| format!("{dir}/{n}")));
    }
    let loops =
        Command::new("losetup").args(["-l", "-n", "-O", "NAME,BACK-FILE"]).output_within(MINUTE);
    left.extend(
        String::from_utf8_lossy(&loops.stdout)
            .lines()
            .filter(|l| l.contains(&tag))
            .map(String::from),
    );
    left
}

#[test]
fn the_demo_finds_its_slow_disk_and_leaves_nothing_behind() {
    need_root!();
    let _l = device_lock();
    let dir = tempdir();
    let json = dir.path().join("demo.json");
    let out = dir.path().join("demo");
    let r = finish(
        arrayburn(&[
            "demo",
            // Three, the least a median takes (five cost 4 s more).
            "--disks",
            "3",
            "--sample",
            "2s",
            "--progress",
            "lines",
            "--json",
            json.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]),
        &json,
    );
    assert_schema(r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    assert_eq!(r.code, 1, "a check that finds a slow disk exits 1");
    let at = r.stderr.find("the slow one is ").expect("the demo names its slow disk") + 16;
    let slow: String = r.stderr[at..].chars().take_while(|c| !c.is_whitespace()).collect();
    for pass in ["serial", "parallel"] {
        let marked: Vec<(String, Verdict)> =
            verdicts(&v, pass).into_iter().filter(|(_, s)| *s != Verdict::Ok).collect();
        assert_eq!(marked, [(slow.clone(), Verdict::Slow)], "{pass}");
    }
    assert!(r.stderr.contains(&format!("found it: {slow}")));
    // The surface profile of disks held to 150 and 100 MB/s shows those
    // speeds: each bucket holds enough reads to be one, and what is
    // drawn lies near the disk's speed (it spiked from 0 to 6000 MB/s when
    // a bucket held one read, and read half the speed at a queue depth of
    // 2 when a read's wait behind the other counted as its time).
    for p in &v.passes {
        for d in &p.disks {
            let drawn: Vec<f64> = d.surface.mb_per_s.iter().flatten().copied().collect();
            assert!(d.surface.buckets <= 8, "{} buckets on a 256 MiB disk", d.surface.buckets);
            assert!(drawn.len() * 2 >= d.surface.buckets, "{:?}", d.surface);
            for m in &drawn {
                let ratio = m / d.window_mb_per_s;
                assert!(
                    (0.6..1.5).contains(&ratio),
                    "{m} MB/s on a {} MB/s disk",
                    d.window_mb_per_s
                );
            }
        }
    }
    assert_eq!(
        std::fs::read_to_string(out.join("report.txt")).unwrap(),
        r.stdout,
        "--out holds the text report"
    );
    assert!(out.join("charts/speed-serial.png").exists());
    assert_eq!(leftovers(&demo_pid(&r.stderr)), Vec::<String>::new());
}

/// Starts a demo, sends SIGTERM once stderr shows `marker`, and returns
/// (exit code, all of stderr, JSON if written).
fn interrupt_demo_at(marker: &str) -> (Option<i32>, String, Option<serde_json::Value>) {
    let dir = tempdir();
    let json = dir.path().join("demo.json");
    let child = arrayburn(&[
        "demo",
        "--sample",
        "20s",
        "--progress",
        "lines",
        "--json",
        json.to_str().unwrap(),
    ])
    .start();
    child.wait_line(&format!("'{marker}'"), MINUTE, |l| l.contains(marker));
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let out = child.wait(MINUTE);
    let v = std::fs::read(&json).ok().map(|b| serde_json::from_slice(&b).unwrap());
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), v)
}

#[test]
fn a_demo_interrupted_while_checking_writes_its_partial_report_and_removes_everything() {
    need_root!();
    let _l = device_lock();
    let (code, stderr, json) = interrupt_demo_at("serial pass: reading");
    assert_eq!(code, Some(130), "{stderr}");
    let v = json.expect("a partial report");
    assert_schema(&v);
    let v: Report = serde_json::from_value(v).unwrap();
    assert!(v.header.interrupted);
    assert_eq!(leftovers(&demo_pid(&stderr)), Vec::<String>::new());
}

#[test]
fn a_demo_interrupted_while_building_removes_everything() {
    need_root!();
    let _l = device_lock();
    let (code, stderr, _) = interrupt_demo_at("nothing else is touched");
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(leftovers(&demo_pid(&stderr)), Vec::<String>::new());
}

#[test]
fn the_demo_without_root_says_what_it_needs_and_makes_nothing() {
    need_root!(); // to become another user
    let _l = device_lock(); // no other demo's files in /dev/shm meanwhile
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin(), "demo"])
        .output_within(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "arrayburn demo needs root: it creates loop devices and a cgroup; run it as root"
        ),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let shm: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("arrayburn-demo"))
        .collect();
    assert!(shm.is_empty());
}

#[test]
fn without_a_throttle_the_demo_says_so_runs_and_cleans_up() {
    need_root!();
    let _l = device_lock();
    let dir = tempdir();
    let json = dir.path().join("demo.json");
    let args = [
        "demo",
        "--no-throttle",
        "--disks",
        "4",
        "--sample",
        "2s",
        "--json",
        json.to_str().unwrap(),
    ];
    let r = finish(arrayburn(&args), &json);
    assert!(r.stderr.contains("--no-throttle: running without a slow disk"), "{}", r.stderr);
    assert!(!r.stderr.contains("the slow one is"));
    // It ran to a verdict: healthy, flagged, or not judged (a disk's slices
    // at CPU speed straddled the threshold: unsure, exit 3).
    assert!(matches!(r.code, 0 | 1 | 3), "the check ran: {}", r.stderr);
    assert_schema(r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    assert_eq!(v.passes.len(), 2);
    // Memory-backed disks read at CPU speed here, so no verdict is asserted:
    // on this shared VM their solo speeds swing with other tenants' load.
    assert!(disk_rows(&v, "serial").iter().all(|d| d.mb_per_s > 500.0));
    // Without a cgroup the demo does not print its pid: look for any demo's
    // leftovers (the device lock keeps other demos away meanwhile).
    assert_eq!(leftovers(""), Vec::<String>::new());
}

#[test]
fn bad_demo_sizes_are_refused() {
    let out = arrayburn(&["demo", "--disks", "2"]).output_within(MINUTE);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--disks 2: the demo needs 3 to 32 disks")
    );
}

#[test]
fn a_demo_sample_too_short_is_refused_before_a_disk_is_made() {
    let out = arrayburn(&["demo", "--sample", "1s"]).output_within(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--sample 1.0 s: give at least 1.5 s"), "{err}");
    // One line, and nothing built first (it said so before).
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!err.contains("building"), "{err}");
}

//! Where results go: symlinks followed, special files written through and
//! never replaced, `-` for stdout, targets proven writable before the first
//! read, a failed write that does not throw the run away; and a verdict
//! that does not claim health when no disk was compared.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

const MIB: u64 = 1 << 20;

/// A small tmpfs mounted on a temporary directory; unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn new(options: &str) -> Self {
        let dir = tempdir();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "arrayburn-test"])
            .arg(dir.path())
            .output_within(MINUTE)
            .status;
        assert!(st.success(), "mount -t tmpfs -o {options}");
        Self { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).output_within(MINUTE);
    }
}

/// `arrayburn check --mode serial --sample S --progress none ARGS DISKS`.
fn run(disks: &[LoopDisk], sample: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["check", "--mode", "serial", "--sample", sample, "--progress", "none"];
    all.extend_from_slice(args);
    all.extend(disks.iter().map(|d| d.dev.as_str()));
    Throttle::calm(disks).command(&all).output_within(RUN)
}

/// One JSON document, schema-checked, as the crate's `Report`.
fn json_of(bytes: &[u8]) -> Report {
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("one JSON document");
    assert_schema(&v);
    serde_json::from_value(v).unwrap()
}

#[test]
fn outputs_follow_links_write_through_special_files_and_never_replace_them() {
    need_root!();
    let _l = device_lock();
    let d = disks(3, 16 * MIB);
    let dir = tempdir();
    let p = |n: &str| -> PathBuf { dir.path().join(n) };

    // A symlink: its target is written, the link stays a link.
    fs::write(p("target.json"), "stale").unwrap();
    std::os::unix::fs::symlink("target.json", p("link.json")).unwrap();
    // A private character device (the null device's numbers, made here).
    let null = p("null");
    nix::sys::stat::mknod(
        &null,
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o666),
        nix::sys::stat::makedev(1, 3),
    )
    .unwrap();
    // A FIFO with a reader: one document at the end, not one per pass.
    let fifo = p("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // Read on a thread, for at most the run's limit: a tool that never
    // opens the FIFO fails the test, and the thread is let go by opening
    // the FIFO's other end.
    let (tx, document) = std::sync::mpsc::channel();
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || tx.send(fs::read(fifo).unwrap()));
    }
    let out = run(
        &d,
        "1.5s",
        &[
            "--json",
            p("link.json").to_str().unwrap(),
            "--csv",
            null.to_str().unwrap(),
            "--out",
            p("bundle").to_str().unwrap(),
        ],
    );
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{out:?}");
    assert!(fs::symlink_metadata(p("link.json")).unwrap().file_type().is_symlink());
    let v = json_of(&fs::read(p("target.json")).unwrap());
    assert!(v.header.complete);
    assert!(fs::symlink_metadata(&null).unwrap().file_type().is_char_device());
    // The FIFO run: JSON to the FIFO, CSV to stdout (`-`), text to stderr.
    let out = run(&d, "1.5s", &["--json", fifo.to_str().unwrap(), "--csv", "-"]);
    let doc = document.recv_timeout(MINUTE).unwrap_or_else(|_| {
        let _ = fs::OpenOptions::new().write(true).open(&fifo);
        panic!("no JSON document came through the FIFO within a minute")
    });
    json_of(&doc);
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.starts_with("pass,"), "{csv}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Verdict:"));

    // `--json -`: the JSON alone on stdout, once.
    let out = run(&d, "1.5s", &["--json", "-"]);
    let v = json_of(&out.stdout);
    assert!(v.header.complete);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Verdict:"));

    // Nothing was left beside the outputs (no temporary or probe files).
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["bundle", "fifo", "link.json", "null", "target.json"]);
}

#[test]
fn an_unwritable_output_is_refused_before_reading_and_a_full_one_does_not_end_the_run() {
    need_root!();
    let _l = device_lock();
    let d = disks(3, 16 * MIB);
    // Read-only: refused before any read, one line, exit 2.
    let ro = Tmpfs::new("ro,size=1m");
    for flag in ["--json", "--csv", "--out"] {
        let target = ro.path().join("x");
        let out = run(&d, "1.5s", &[flag, target.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains("cannot write in"), "{flag}: {err}");
        assert!(err.contains("Read-only file system"), "{flag}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
    // Full: a 4 KiB filesystem holds no report; the run still ends with
    // its report on stdout, the disks' verdict as exit status, one line per
    // file it could not write, and no file there that claims to be complete.
    let full = Tmpfs::new("size=4k");
    let ok = tempdir();
    let json = ok.path().join("r.json");
    let out = run(
        &d,
        "1.5s",
        &["--out", full.path().join("bundle").to_str().unwrap(), "--json", json.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let v = json_of(&fs::read(&json).unwrap());
    let code = match v.summary.verdict {
        ArrayVerdict::Healthy => 0,
        ArrayVerdict::Flagged => 1,
        ArrayVerdict::NotJudged => 3,
        ArrayVerdict::Interrupted => panic!("no signal was sent: {err}"),
    };
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Verdict:"));
    let failures: Vec<&str> = err.lines().filter(|l| l.contains("could not write --out")).collect();
    assert!(!failures.is_empty(), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(!err.contains("ImageError"), "{err}");
    if let Ok(b) = fs::read(full.path().join("bundle/report.json")) {
        assert!(!json_of(&b).header.complete, "a stale copy says it is partial");
    }
    // Room for the reports but not the charts: the PNG error is a plain
    // I/O error too (it was a raw ImageError(IoError(Custom ...))).
    let some = Tmpfs::new("size=160k");
    let out = run(&d, "1.5s", &["--out", some.path().join("b").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{err}");
    assert!(err.contains("charts: No space left on device"), "{err}");
    assert!(!err.contains("ImageError"), "{err}");
    // One line for it (beside the one naming the run's log, whose own
    // writes failed too).
    let said = err.lines().filter(|l| !l.contains("the run's log"));
    assert_eq!(said.count(), 1, "{err}");
}

#[test]
fn a_sample_too_short_to_compare_any_disk_is_not_called_healthy() {
    need_root!();
    let _l = device_lock();
    let d = disks(3, 16 * MIB);
    let dir = tempdir();
    let json = dir.path().join("r.json");
    // A 1 s sample would leave a 0.9 s window, under the second a disk
    // needs: refused up front, naming the least that is judged.
    let out = run(&d, "1s", &["--json", json.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("give at least 1.5 s"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!json.exists(), "nothing written");
    // Whole 16 MiB disks read in milliseconds: too short to compare, so
    // not judged, never called healthy.
    let out = run(&d, "1.5s", &["--full", "--full-serial", "--json", json.to_str().unwrap()]);
    let v = json_of(&fs::read(&json).unwrap());
    assert_eq!(out.status.code(), Some(3), "{}", v.summary.message);
    assert_eq!(v.summary.verdict, ArrayVerdict::NotJudged);
    let names: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    assert_eq!(v.summary.not_compared, names);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("NOT JUDGED"), "{text}");
    assert!(!text.contains("HEALTHY"), "{text}");

    // Progress lines for a log: each with the local date and time and its
    // offset (ISO 8601), the run's length up front, counted down.
    let mut args =
        vec!["check", "--sample", "1.5s", "--progress", "lines", "--progress-interval", "0.4s"];
    args.extend(names.iter().copied());
    let out = arrayburn(&args).output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].ends_with("arrayburn: 4 read group(s) to run: about 6.0 s left"), "{err}");
    let stamp = |l: &str| {
        let Some((at, _)) = l.split_once(' ') else { return false };
        chrono::DateTime::parse_from_rfc3339(at).is_ok() && at.as_bytes()[10] == b'T'
    };
    assert!(lines.iter().all(|l| stamp(l)), "{err}");
    assert!(err.contains("arrayburn: run: about"), "{err}");
}

/// Runs `cmd` with its standard output and error pipes closed at once (a
/// dropped ssh session, a killed `| tee`): every line it prints fails.
fn closed_outputs(mut cmd: Command) -> std::process::ExitStatus {
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start_as_set(|c| {
            drop(c.stdout.take());
            drop(c.stderr.take());
        })
        .wait(RUN)
        .status
}

#[test]
fn output_that_goes_away_never_stops_a_run_or_loses_its_result() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 16 * MIB);
    let dir = tempdir();
    let json = |n: &str| dir.path().join(format!("{n}.json"));
    let read = |n: &str| -> serde_json::Value {
        serde_json::from_slice(&fs::read(json(n)).unwrap()).unwrap()
    };
    // A check, its progress lines every 0.1 s.
    let calm = Throttle::calm(&d);
    let mut c = calm.command(&["check", "--sample", "1.5s", "--progress", "lines"]);
    c.args(["--progress-interval", "0.1s", "--json"])
        .arg(json("check"))
        .args(d.iter().map(|x| &x.dev));
    let st = closed_outputs(c);
    assert!(matches!(st.code(), Some(0 | 1 | 3)), "{st:?}");
    assert_eq!(read("check")["complete"], true);
    // A burn-in whose writes last 2 s, a progress line every 0.1 s.
    let t = Throttle::new();
    for x in &d {
        t.limit_write(x, 16_000_000);
    }
    let state = tempdir();
    let bjson = json("burnin");
    let mut args = vec!["burnin", "--state", state.path().to_str().unwrap()];
    args.extend(["--destructive", "--yes", "--smart", "off", "--wipe-signatures"]);
    args.extend(["--progress-interval", "0.1s", "--json", bjson.to_str().unwrap()]);
    // No speed judged: what counts here is that the run ended whole.
    args.extend(NO_SPEED_JUDGED);
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let st = closed_outputs(t.command(&args));
    assert_eq!(st.code(), Some(0), "{st:?}");
    let b = read("burnin");
    assert_eq!(b["interrupted"], false);
    assert!(b["disks"].as_array().unwrap().iter().all(|x| x["verified_bytes"] == 16 * MIB));
    // The demo, whole (without its slow disk: its verdict is the demo
    // tests' question, not this one's).
    let mut c = arrayburn(&["demo", "--disks", "3", "--size", "64m", "--sample", "1.5s"]);
    c.arg("--no-throttle").arg("--json").arg(json("demo"));
    let st = closed_outputs(c);
    assert!(matches!(st.code(), Some(0 | 1 | 3)), "{st:?}");
    assert_eq!(read("demo")["complete"], true);
    // iozone with its warnings on a closed stderr (its stdout closed ends
    // it quietly, as `| head` expects).
    let files = tempdir();
    let mut c = arrayburn(&["iozone", "-s", "1m", "-r", "64k", "-i", "0", "-i", "1", "-f"]);
    c.arg(files.path().join("t")).arg("--json").arg(json("iozone"));
    let child = c
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .start_as_set(|c| drop(c.stderr.take()));
    assert_eq!(child.wait(RUN).status.code(), Some(0));
    assert!(read("iozone")["results"].as_array().is_some_and(|r| !r.is_empty()));
}

#[test]
fn a_burn_in_that_cannot_write_its_json_keeps_its_verdicts_exit_status() {
    need_root!();
    let _l = device_lock();
    // A disk whose writes fail at one block: "return it" (exit 1), also
    // when --json lands on a full filesystem (it was exit 2, "could not
    // run", as if nothing had been found). The failure is said.
    let bad = crate::faults::FaultyDisk::writable(8 << 20, &[(4 << 20, 4096)], &[], &[]);
    let full = Tmpfs::new("size=4k");
    std::fs::write(full.path().join("filler"), vec![0u8; 4096]).unwrap();
    let json = full.path().join("b.json");
    let state = tempdir();
    let out = arrayburn(&["burnin", "--state", state.path().to_str().unwrap()])
        .args(["--destructive", "--yes", "--smart", "off", "--block", "1m"])
        .args(["--json", json.to_str().unwrap(), &bad.dev])
        .output_within(RUN);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("failed to write"), "{stdout}");
    let said = stderr.lines().find(|l| l.contains("could not write --json")).unwrap_or_default();
    assert!(
        said.contains(json.to_str().unwrap()) && said.contains("the printed report is complete"),
        "{stderr}"
    );
}

#[test]
fn a_fifo_nobody_reads_does_not_hold_a_stop() {
    need_root!();
    let _l = device_lock();
    // --json names a FIFO no one opens: the result cannot be handed over,
    // but Ctrl-C still ends the run at once (opening the FIFO blocked where
    // no signal reached: INT and TERM were ignored for ever).
    let d = disks(1, 16 << 20);
    let dir = tempdir();
    let fifo = dir.path().join("result.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let child =
        arrayburn(&["check", "--sample", "1.5s", "--mode", "serial", "--progress", "lines"])
            .args(["--json", fifo.to_str().unwrap(), &d[0].dev])
            .start();
    child.wait_line("the serial pass's end", RUN, |l| l.contains(&format!("serial {}:", d[0].dev)));
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (out, _) = child.interrupt(std::time::Duration::from_secs(10));
    let err = String::from_utf8_lossy(&out.stderr);
    // Stopped while saving: the run's own verdict (a lone disk: not
    // judged, 3); while reading: 130.
    assert!(matches!(out.status.code(), Some(3 | 130)), "{err}");
    assert!(err.contains("no reader opened it before the stop; not written"), "{err}");
}

//! `arrayburn burnin --verify` on loop devices: a burn-in's blocks read
//! back later, what was lost, damaged or moved since found at its exact
//! bytes, nothing written (the kernel's own counters and the devices'
//! checksums); what it cannot read back refused; a stopped verify resumed;
//! an interrupted burn-in's written part read back, and only that.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::*;

const MIB: u64 = 1 << 20;

/// `arrayburn burnin ARGS`, what it printed shown.
fn burnin(args: &[&str]) -> std::process::Output {
    printed(&[&["burnin"], args].concat())
}

/// `n` loop disks of `size` bytes, a `--state` directory and one for
/// outputs.
struct Bench {
    d: Vec<LoopDisk>,
    state: tempfile::TempDir,
    dir: tempfile::TempDir,
}

impl Bench {
    fn new(n: usize, size: u64) -> Self {
        Self { d: disks(n, size), state: tempdir(), dir: tempdir() }
    }

    fn devs(&self) -> Vec<&str> {
        self.d.iter().map(|x| x.dev.as_str()).collect()
    }

    fn st(&self) -> &str {
        self.state.path().to_str().unwrap()
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A checksum of a disk's backing file.
fn sum(d: &LoopDisk) -> u64 {
    let bytes = std::fs::read(&d.file).unwrap();
    bytes.chunks(8).enumerate().fold(0u64, |h, (i, c)| h.rotate_left(5) ^ (c[0] as u64 + i as u64))
}

/// Writes `bytes` into disk `d`'s backing file at `at` (under its loop
/// device, as a fault or another writer would).
fn put(d: &LoopDisk, at: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(&d.file).unwrap();
    f.write_all_at(bytes, at).unwrap();
    f.sync_all().unwrap();
}

/// The finding of class `class` on disk `disk`: (offset, len).
fn findings(disk: &Value, class: &str) -> Vec<(u64, u64)> {
    (disk["findings"].as_array().unwrap().iter())
        .filter(|f| f["class"] == class)
        .map(|f| (f["offset"].as_u64().unwrap(), f["len"].as_u64().unwrap()))
        .collect()
}

/// Burns in `devs` whole (`passes`), checkpoints in `st`: its report.
fn burn_in(devs: &[&str], st: &str, passes: &str, json_at: &Path) -> Value {
    let mut a = vec!["--state", st, "--destructive", "--yes", "--passes", passes];
    a.extend(["--smart", "off", "--progress", "none", "--json", json_at.to_str().unwrap()]);
    a.extend(NO_SPEED_JUDGED);
    a.extend(devs);
    let out = burnin(&a);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
    json(json_at)
}

#[test]
fn a_burn_in_read_back_later_finds_what_was_lost_since_and_writes_nothing() {
    need_root!();
    let _l = device_lock();
    let size = 32 * MIB;
    let b = Bench::new(2, size);
    let (d, devs, st, state) = (&b.d, b.devs(), b.st(), &b.state);
    let at = |name: &str| b.dir.path().join(name);
    let burned = burn_in(&devs, st, "2", &at("burn.json"));
    let run = burned["run_id"].as_str().unwrap().to_string();
    for disk in burned["disks"].as_array().unwrap() {
        assert_eq!(disk["verdict"], "healthy", "{disk}");
    }
    let kept = state.path().join(format!("runs/{run}.json"));
    let kept_before = std::fs::read(&kept).unwrap();
    // Since the burn-in: two blocks of disk 0 zeroed, a byte of disk 1
    // flipped, and a block of disk 1 copied one MiB further on.
    put(&d[0], 3 * MIB + 8192, &[0; 8192]);
    let mut b = std::fs::read(&d[1].file).unwrap();
    put(&d[1], 7 * MIB + 100, &[!b[(7 * MIB + 100) as usize]]);
    let moved = b.drain((20 * MIB) as usize..(20 * MIB + 4096) as usize).collect::<Vec<u8>>();
    put(&d[1], 21 * MIB, &moved);
    let sums: Vec<u64> = d.iter().map(sum).collect();
    let written: Vec<u64> = devs.iter().map(|x| sectors_written(x)).collect();
    let (v, out_dir, prom) = (at("v.json"), at("out"), at("v.prom"));
    let mut a = vec!["--verify", "--state", st, "--smart", "off", "--progress", "lines"];
    a.extend(["--json", v.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    a.extend(["--metrics", prom.to_str().unwrap()]);
    a.extend(NO_SPEED_JUDGED);
    a.extend(&devs);
    let out = burnin(&a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "flagged: {err}");
    assert!(err.contains("verifying 2 disk(s): reading back every block"), "{err}");
    // Nothing written: not a sector by the kernel's count, not a byte of
    // the backing files; the burn-in's kept report as it was.
    for (i, x) in devs.iter().enumerate() {
        assert_eq!(sectors_written(x), written[i], "{x}: written to by a verify");
    }
    assert_eq!(d.iter().map(sum).collect::<Vec<_>>(), sums);
    assert_eq!(std::fs::read(&kept).unwrap(), kept_before, "the burn-in's report");
    let doc = json(&v);
    let parsed: Result<arrayburn::report::burnin::BurnReport, _> =
        serde_json::from_value(doc.clone());
    assert!(parsed.is_ok(), "the burn-in report's type reads it: {parsed:?}");
    assert_eq!((doc["kind"].as_str(), doc["verify"].as_bool()), (Some("burnin"), Some(true)));
    let id = doc["run_id"].as_str().unwrap();
    assert_ne!(id, run, "a verify has an id of its own");
    assert!(state.path().join(format!("runs/{id}.json")).exists());
    for (i, disk) in doc["disks"].as_array().unwrap().iter().enumerate() {
        let b = &disk["burned_in"];
        assert_eq!(b["run_id"], run.as_str(), "{disk}");
        assert_eq!((b["passes"].as_u64(), b["finished"].as_bool()), (Some(2), Some(true)));
        assert_eq!(b["verdict"], "healthy", "the burn-in's own, as it kept it");
        assert_eq!(disk["verified_bytes"].as_u64(), Some(size), "read whole once: {disk}");
        assert_eq!(disk["written_bytes"].as_u64(), Some(0));
        assert_eq!(disk["verdict"], "return", "{disk}");
        let all = disk["findings"].as_array().unwrap().len();
        if i == 0 {
            assert_eq!(findings(disk, "zeros"), [(3 * MIB + 8192, 8192)], "{disk}");
            assert_eq!(all, 1, "{disk}");
        } else {
            assert_eq!(findings(disk, "corrupted"), [(7 * MIB, 4096)], "{disk}");
            assert_eq!(findings(disk, "misdirected"), [(21 * MIB, 4096)], "{disk}");
            assert_eq!(all, 2, "{disk}");
        }
    }
    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(page.contains("Verify certificate") && page.contains("Burned in"), "the page");
    assert!(page.contains(&format!("run {run}, 2 pass(es)")), "the page names the burn-in");
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.contains("arrayburn_run_verdict{command=\"verify\""), "{text}");
    // The fleet reads it as a run of its own, beside the burn-in.
    let fleet = at("fleet.json");
    let (b, f) = (at("burn.json"), fleet.to_str().unwrap());
    let out = arrayburn(&["report", b.to_str().unwrap(), v.to_str().unwrap(), "--json", f])
        .output_within(RUN);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let fleet = json(&fleet);
    let kinds = |of: &str| -> Vec<String> {
        (fleet[of].as_array().unwrap().iter())
            .map(|r| r["kind"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let samples = kinds("samples");
    assert!(samples.contains(&"verify".into()) && samples.contains(&"burnin".into()), "{fleet}");
    assert_eq!(kinds("runs"), ["verify"], "the verify's findings, the burn-in healthy: {fleet}");
    let lines = fleet["hosts"][0]["runs"].to_string();
    assert!(lines.contains("verify of 2 disk(s): FLAGGED"), "{lines}");
    // A verify finished is begun again on asking (nothing is refused).
    let again = burnin(&[&["--verify", "--state", st, "--smart", "off"], &devs[..]].concat());
    assert_eq!(again.status.code(), Some(1), "verified again");
}

#[test]
fn a_verify_refuses_what_it_cannot_read_back_and_writes_nothing() {
    need_root!();
    let _l = device_lock();
    let size = 8 * MIB;
    let b = Bench::new(3, size);
    let (d, devs, st, state) = (&b.d, b.devs(), b.st(), &b.state);
    burn_in(&devs[..2], st, "1", &b.dir.path().join("burn.json"));
    let name = |dev: &str| state.path().join(format!("burnin-{}.json", &dev[5..]));
    let refused = |devs: &[&str], why: &str| {
        let sums: Vec<u64> = d.iter().map(sum).collect();
        let out = burnin(&[&["--verify", "--state", st, "--smart", "off"], devs].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{why}: {err}");
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert_eq!(d.iter().map(sum).collect::<Vec<_>>(), sums, "{why}");
    };
    // A disk never burned in.
    refused(&[devs[2]], "has no burn-in checkpoint in");
    // Asked to resume a verify that never began.
    refused(&["--resume", devs[0]], "has no verify to continue");
    // Disk 0's checkpoint under disk 1's name: not that disk.
    let one = std::fs::read(name(devs[1])).unwrap();
    std::fs::copy(name(devs[0]), name(devs[1])).unwrap();
    refused(&[devs[1]], "is not the disk checkpointed in");
    std::fs::write(name(devs[1]), one).unwrap();
    // A damaged checkpoint is named, field and file.
    let kept = std::fs::read(name(devs[1])).unwrap();
    let mut c = json(&name(devs[1]));
    c["end_byte"] = (size + 4096).into();
    std::fs::write(name(devs[1]), serde_json::to_vec(&c).unwrap()).unwrap();
    refused(&[devs[1]], "start_byte..end_byte is 0..");
    std::fs::write(name(devs[1]), kept).unwrap();
    // Disk 0 written over since its burn-in: nothing of the run's to read.
    put(&d[0], 0, &vec![0x5a; size as usize]);
    refused(&[devs[0]], "written since its burn-in");
    // With what a verify cannot take.
    let out = burnin(&["--verify", "--destructive", "--state", st, devs[0]]);
    assert_eq!(out.status.code(), Some(2));
    // Spin cycles with no hdparm to spin the disks down: refused before
    // anything runs, naming the package (it ran as a plain verify, with
    // eight raw "No such file or directory" lines), and so is a burn-in
    // that would verify after spin cycles.
    let bin_dir = tempdir();
    std::os::unix::fs::symlink(which("blkid"), bin_dir.path().join("blkid")).unwrap();
    let path = bin_dir.path().to_str().unwrap();
    let no_hdparm = |args: &[&str]| {
        let sums: Vec<u64> = d.iter().map(sum).collect();
        let out = Command::new(bin()).args(args).env("PATH", path).output_within(RUN);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let want = format!(
            "--cycles: {} is spun down by hdparm, which is not installed: install hdparm (Debian: hdparm, RHEL: hdparm), or leave out --cycles (nothing was written)",
            devs[1]
        );
        assert_eq!(err.trim(), format!("arrayburn: error: {want}"), "{args:?}");
        assert_eq!(d.iter().map(sum).collect::<Vec<_>>(), sums, "{args:?}");
    };
    no_hdparm(&["burnin", "--verify", "--cycles", "2", "--smart", "off", "--state", st, devs[1]]);
    let fresh = b.dir.path().join("fresh-state");
    let fresh = fresh.to_str().unwrap();
    let burn = ["burnin", "--destructive", "--yes", "--cycles", "2", "--smart", "off"];
    no_hdparm(&[&burn[..], &["--state", fresh, devs[1]]].concat());
}

/// Where `program` is on this machine's PATH.
fn which(program: &str) -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not installed"))
}

#[test]
fn a_stopped_verify_resumes_and_an_interrupted_burn_in_is_read_back_where_it_wrote() {
    need_root!();
    let _l = device_lock();
    let size = 32 * MIB;
    let b = Bench::new(2, size);
    let (d, devs, st, state, dir) = (&b.d, b.devs(), b.st(), &b.state, &b.dir);
    let point = |name: String| -> Option<Value> {
        let b = std::fs::read(state.path().join(name)).ok()?;
        serde_json::from_slice(&b).ok()
    };
    let done = |kind: &str, dev: &str| {
        point(format!("{kind}-{}.json", &dev[5..]))
            .and_then(|c| c["at"]["done_until"].as_u64())
            .unwrap_or(0)
    };
    // 1. A burn-in stopped in its write phase, a quarter written or more.
    let t = writes_at(d, 8_000_000);
    let mut a = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    a.extend(["--checkpoint-every", "1s", "--progress", "none"]);
    a.extend(&devs);
    let child = t.command(&a).start();
    let began = wait_for(MINUTE, || devs.iter().all(|x| done("burnin", x) >= 8 * MIB));
    let (out, _) = child.interrupt(MINUTE);
    assert!(began, "no checkpoint named 8 MiB written: {out:?}");
    assert_eq!(out.status.code(), Some(130));
    let wrote: Vec<u64> = devs.iter().map(|x| done("burnin", x)).collect();
    assert!(wrote.iter().all(|w| *w < size), "stopped before the end: {wrote:?}");
    // 2. Its verify, held to 4 MB/s a disk, stopped once a checkpoint
    // names 2 MiB read back.
    let slow = Throttle::new();
    d.iter().for_each(|x| _ = slow.limit(x, 4_000_000));
    let (v1, v2) = (dir.path().join("v1.json"), dir.path().join("v2.json"));
    let mut a = vec!["burnin", "--verify", "--state", st, "--smart", "off"];
    a.extend(["--checkpoint-every", "1s", "--progress", "none", "--json", v1.to_str().unwrap()]);
    a.extend(&devs);
    let child = slow.command(&a).start();
    let began = wait_for(MINUTE, || devs.iter().all(|x| done("verify", x) >= 2 * MIB));
    let (out, _) = child.interrupt(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(began, "no verify checkpoint named 2 MiB: {err}");
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("continue with:\n  arrayburn burnin --verify --resume --state"), "{err}");
    let first = json(&v1);
    assert_eq!(first["summary"]["verdict"], "interrupted");
    // Without --resume it is refused; with it, it goes on to the end.
    let out = Command::new(bin()).args(&a[..]).output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("has an unfinished verify (pass 1 of 1, verify"), "{err}");
    let mut a = vec!["burnin", "--verify", "--resume", "--state", st, "--smart", "off"];
    a.extend(["--progress", "none", "--json", v2.to_str().unwrap()]);
    a.extend(NO_SPEED_JUDGED);
    a.extend(&devs);
    let out = Command::new(bin()).args(&a).output_within(RUN);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let doc = json(&v2);
    assert_eq!(doc["run_id"], first["run_id"], "the same verify, resumed");
    for (i, disk) in doc["disks"].as_array().unwrap().iter().enumerate() {
        let b = &disk["burned_in"];
        assert_eq!(b["finished"], false, "{disk}");
        assert!(b["place"].as_str().unwrap().starts_with("pass 1 of 1, write"), "{b}");
        // What the burn-in wrote, read back once over both runs; not a
        // byte past it.
        assert_eq!(disk["verified_bytes"].as_u64(), Some(wrote[i]), "{disk}");
        assert_eq!(disk["resumes"], 1, "{disk}");
        assert_eq!(disk["findings"].as_array().unwrap().len(), 0, "{disk}");
        assert_ne!(disk["verdict"], "return", "{disk}");
    }
    assert_eq!(out.status.code(), Some(0), "nothing found, no speed judged");
    assert!(
        doc["summary"]["message"]
            .as_str()
            .unwrap()
            .starts_with("HEALTHY: every 4 KiB block their burn-in wrote"),
        "{doc}"
    );
}

/// A fake `hdparm` in a new directory, and a PATH with it first: `-y DEV`
/// is noted, then freezes DEV's FUSE daemon for DIR/NAME.delay seconds (a
/// spin-up), or with DIR/NAME.mode `die` makes its every read fail. Each
/// waits (a few seconds at most) until the daemon is stopped, or its disk
/// fails a read, before it returns: a signal is delivered when the daemon
/// is next scheduled, and on a loaded host a read could come first.
fn fake_hdparm(disks: &[&crate::faults::FaultyDisk]) -> (tempfile::TempDir, String) {
    let fake = tempdir();
    for d in disks {
        let name = &d.dev[5..];
        std::fs::write(fake.path().join(format!("{name}.pid")), d.daemon_id().to_string()).unwrap();
        let img = d.image().to_string_lossy().into_owned();
        std::fs::write(fake.path().join(format!("{name}.img")), img).unwrap();
    }
    let body = format!(
        "d=$(basename \"$2\"); echo \"$1 $2\" >> {0}/calls\npid=$(cat {0}/$d.pid); n=0\ncase $(cat {0}/$d.mode 2>/dev/null) in\n  die) kill -USR1 $pid\n    while dd if=\"$(cat {0}/$d.img)\" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null && [ $n -lt 100 ]; do n=$((n+1)); sleep 0.05; done;;\n  *) kill -STOP $pid\n    while [ \"$(awk '{{print $3}}' /proc/$pid/stat)\" != T ] && [ $n -lt 100 ]; do n=$((n+1)); sleep 0.02; done\n    (sleep $(cat {0}/$d.delay 2>/dev/null || echo 0); kill -CONT $pid) >/dev/null 2>&1 &;;\nesac\nexit 0",
        fake.path().display()
    );
    fake_tool(fake.path(), "hdparm", &body);
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    (fake, path)
}

/// `n` writable FUSE disks of `size` bytes burned in (one pass), their
/// checkpoints in the bench's state.
fn burned_fuse(n: usize, size: u64, st: &str, json_at: &Path) -> Vec<crate::faults::FaultyDisk> {
    let d: Vec<_> =
        (0..n).map(|_| crate::faults::FaultyDisk::writable(size, &[], &[], &[])).collect();
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    burn_in(&devs, st, "1", json_at);
    d
}

/// `arrayburn burnin --verify --cycles N` of `devs` with PATH `path`: its
/// output and report.
fn cycled(
    devs: &[&str],
    (st, path): (&str, &str),
    n: &str,
    json_at: &Path,
) -> (std::process::Output, Value) {
    let mut a = vec!["burnin", "--verify", "--cycles", n, "--spin-up-timeout", "1m", "--state", st];
    a.extend(["--smart", "off", "--progress", "none", "--json", json_at.to_str().unwrap()]);
    a.extend(NO_SPEED_JUDGED);
    a.extend(devs);
    let out = Command::new(bin()).args(&a).env("PATH", path).output_within(RUN);
    eprintln!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out, json(json_at))
}

#[test]
fn spin_ups_are_timed_each_cycle_and_one_late_against_its_peers_is_named() {
    need_root!();
    let _l = device_lock();
    let (state, dir) = (tempdir(), tempdir());
    let st = state.path().to_str().unwrap();
    let d = burned_fuse(3, 8 * MIB, st, &dir.path().join("burn.json"));
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let (fake, path) = fake_hdparm(&d.iter().collect::<Vec<_>>());
    for (x, delay) in devs.iter().zip(["0.1", "0.1", "4"]) {
        std::fs::write(fake.path().join(format!("{}.delay", &x[5..])), delay).unwrap();
    }
    let (out, doc) = cycled(&devs, (st, &path), "2", &dir.path().join("v.json"));
    assert_eq!(out.status.code(), Some(1), "the late one to recheck");
    let calls = std::fs::read_to_string(fake.path().join("calls")).unwrap();
    assert_eq!(calls.lines().count(), 6, "each disk spun down in each cycle: {calls}");
    for (i, disk) in doc["disks"].as_array().unwrap().iter().enumerate() {
        let cycles = disk["cycles"].as_array().unwrap();
        assert_eq!(cycles.len(), 2, "{disk}");
        for c in cycles {
            assert_eq!(c["back"]["state"], "same", "{disk}");
            let s = c["spin_up_s"].as_f64().unwrap();
            assert!(if i == 2 { s >= 3.5 } else { s < 2.0 }, "{i}: {s} s: {disk}");
        }
        // Read back whole in each cycle.
        assert_eq!(disk["verified_bytes"].as_u64(), Some(2 * 8 * MIB), "{disk}");
        assert_eq!(disk["passes_done"], 2, "{disk}");
    }
    assert_eq!(doc["disks"][2]["verdict"], "recheck", "{doc}");
    let said = doc["summary"]["disk_verdicts"][0]["sentence"].as_str().unwrap();
    assert!(said.contains("to answer after spin-down") && said.contains("its peers 0."), "{said}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Spin cycles") && text.contains("cycle 2 back in"), "{text}");
}

#[test]
fn a_drive_that_dies_at_its_spin_down_is_named_and_the_others_go_on() {
    need_root!();
    let _l = device_lock();
    let (state, dir) = (tempdir(), tempdir());
    let st = state.path().to_str().unwrap();
    let d = burned_fuse(2, 8 * MIB, st, &dir.path().join("burn.json"));
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let (fake, path) = fake_hdparm(&d.iter().collect::<Vec<_>>());
    std::fs::write(fake.path().join(format!("{}.mode", &devs[1][5..])), "die").unwrap();
    let (out, doc) = cycled(&devs, (st, &path), "2", &dir.path().join("v.json"));
    assert_eq!(out.status.code(), Some(1));
    let (ok, dead) = (&doc["disks"][0], &doc["disks"][1]);
    assert_eq!(ok["cycles"].as_array().unwrap().len(), 2, "{ok}");
    assert_eq!(ok["verified_bytes"].as_u64(), Some(2 * 8 * MIB), "the other disk went on: {ok}");
    let cycles = dead["cycles"].as_array().unwrap();
    assert_eq!((cycles.len(), &cycles[0]["back"]["state"]), (1, &"gone".into()), "{dead}");
    assert!(
        cycles[0]["back"]["detail"].as_str().unwrap().starts_with("reading it fails"),
        "{dead}"
    );
    assert_eq!(dead["verified_bytes"], 0, "nothing more read: {dead}");
    assert_eq!(dead["verdict"], "return", "{doc}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("after spin-down 1 it did not come back (reading it fails"), "{text}");
    assert!(text.contains(": cycle 1 did NOT come back (reading it fails"), "{text}");
}

#[test]
fn a_drive_that_answers_as_another_after_its_spin_down_is_named() {
    need_root!();
    let _l = device_lock();
    let b = Bench::new(2, 8 * MIB);
    let (devs, st) = (b.devs(), b.st());
    burn_in(&devs, st, "1", &b.dir.path().join("burn.json"));
    // Disk 1's spin-down grows its backing file by 1 MiB and has its loop
    // device take the new size: another drive's capacity under its name.
    let fake = tempdir();
    let file = b.d[1].file.to_str().unwrap().to_string();
    std::fs::write(fake.path().join(format!("{}.file", &devs[1][5..])), file).unwrap();
    let body = format!(
        "f={0}/$(basename \"$2\").file\n[ -f $f ] && truncate -s +1M \"$(cat $f)\" && losetup -c \"$2\"\nexit 0",
        fake.path().display()
    );
    fake_tool(fake.path(), "hdparm", &body);
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    let (out, doc) = cycled(&devs, (st, &path), "1", &b.dir.path().join("v.json"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(doc["disks"][0]["cycles"][0]["back"]["state"], "same", "{doc}");
    let other = &doc["disks"][1];
    let back = &other["cycles"][0]["back"];
    assert_eq!(back["state"], "other", "{other}");
    assert_eq!(back["detail"], format!("{} bytes, was {} bytes", 9 * MIB, 8 * MIB));
    assert_eq!(other["verdict"], "check_path", "{doc}");
    assert_eq!(other["verified_bytes"], 0, "nothing read of another drive: {other}");
}

/// `burnin --destructive` of `devs` with a verify after its passes
/// (`after`: `--idle`, `--cycles`), the fake tools on `path`: reports at
/// `dir`/burn.json and burn-verify.json (where written).
fn burned_then(devs: &[&str], st: &str, after: &[&str], dir: &Path) -> Command {
    let json_at = dir.join("burn.json");
    let mut a = vec!["burnin", "--state", st, "--destructive", "--yes", "--passes", "1"];
    a.extend(["--smart", "off", "--progress", "none", "--json", json_at.to_str().unwrap()]);
    a.extend(NO_SPEED_JUDGED);
    a.extend(after);
    a.extend(devs);
    let mut cmd = Command::new(bin());
    cmd.args(&a);
    cmd
}

#[test]
fn a_burn_in_with_cycles_verifies_after_its_passes_and_finds_a_write_lost_at_a_spin_down() {
    need_root!();
    let _l = device_lock();
    let b = Bench::new(2, 8 * MIB);
    let (devs, st, dir) = (b.devs(), b.st(), b.dir.path());
    // Disk 1 loses two blocks at its spin-down (zeroed in its backing
    // file): written, read back by the burn-in, gone after the cycle.
    let fake = tempdir();
    let file = b.d[1].file.to_str().unwrap().to_string();
    std::fs::write(fake.path().join(format!("{}.file", &devs[1][5..])), file).unwrap();
    let body = format!(
        "echo \"$1 $2\" >> {0}/calls\nf={0}/$(basename \"$2\").file\n[ -f $f ] && dd if=/dev/zero of=\"$(cat $f)\" bs=4096 seek=1280 count=2 conv=notrunc,fsync 2>/dev/null\nexit 0",
        fake.path().display()
    );
    fake_tool(fake.path(), "hdparm", &body);
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    let (out_dir, prom) = (dir.join("out"), dir.join("run.prom"));
    let after = ["--idle", "1s", "--cycles", "1", "--spin-up-timeout", "1m"];
    let outs = ["--out", out_dir.to_str().unwrap(), "--metrics", prom.to_str().unwrap()];
    let out = burned_then(&devs, st, &[&after[..], &outs[..]].concat(), dir)
        .env("PATH", &path)
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert_eq!(out.status.code(), Some(1), "the verify's finding decides");
    assert!(
        err.contains("then every disk that finished: idle 1.0 s, then its blocks verified"),
        "{err}"
    );
    assert!(err.contains("every disk idle 1.0 s before the verify"), "{err}");
    // The burn-in's own report, written when its passes ended: healthy.
    let burned = json(&dir.join("burn.json"));
    assert_ne!(burned["verify"].as_bool(), Some(true), "{burned}");
    for disk in burned["disks"].as_array().unwrap() {
        assert_eq!(disk["verdict"], "healthy", "{disk}");
        assert!(disk["cycles"].as_array().is_none_or(|c| c.is_empty()), "{disk}");
    }
    let calls = std::fs::read_to_string(fake.path().join("calls")).unwrap();
    assert_eq!(calls.lines().count(), 2, "each disk spun down once, after the passes: {calls}");
    // The verify's, beside it: the lost blocks where they were written.
    let v = json(&dir.join("burn-verify.json"));
    assert_eq!(v["verify"].as_bool(), Some(true), "{v}");
    let run = burned["run_id"].as_str().unwrap();
    for (i, disk) in v["disks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(disk["burned_in"]["run_id"], run, "{disk}");
        assert_eq!(disk["burned_in"]["verdict"], "healthy", "{disk}");
        assert_eq!(disk["cycles"][0]["back"]["state"], "same", "{disk}");
        assert_eq!(disk["verified_bytes"].as_u64(), Some(8 * MIB), "{disk}");
        let lost = findings(disk, "zeros");
        if i == 0 {
            assert_eq!((lost.len(), &disk["verdict"]), (0, &"healthy".into()), "{disk}");
        } else {
            assert_eq!(lost, [(5 * MIB, 8192)], "{disk}");
            assert_eq!(disk["verdict"], "return", "{disk}");
        }
    }
    let page = std::fs::read_to_string(dir.join("out-verify/report.html")).unwrap();
    assert!(page.contains("Verify certificate") && page.contains("Burned in"), "the page");
    assert!(out_dir.join("report.html").exists(), "the burn-in's page");
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.contains("arrayburn_run_verdict{command=\"verify\""), "the last run's: {text}");
}

#[test]
fn a_stop_while_idle_after_a_burn_in_leaves_its_verdict_and_the_line_that_verifies_later() {
    need_root!();
    let _l = device_lock();
    let b = Bench::new(2, 8 * MIB);
    let (devs, st, dir) = (b.devs(), b.st(), b.dir.path());
    // A verify after the burn-in can write only where a file takes it.
    let dash = burned_then(&devs, st, &["--idle", "1h"], dir);
    let mut dash_args: Vec<String> =
        dash.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
    let j = dash_args.iter().position(|a| a == "--json").unwrap();
    dash_args[j + 1] = "-".into();
    let out = Command::new(bin()).args(&dash_args).output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--json -: with --idle or --cycles the burn-in and the verify"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(std::fs::read_dir(st).unwrap().next().is_none(), "no checkpoint kept");
    let child = burned_then(&devs, st, &["--idle", "1h"], dir).start();
    child.wait_line("the idle", RUN, |l| l.contains("every disk idle 1 h"));
    let (out, _) = child.interrupt(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let said = err.lines().find(|l| l.contains("interrupted while idle")).unwrap_or_default();
    assert!(said.contains("the burn-in's verdict stands; verify later with: "), "{err}");
    let burned = json(&dir.join("burn.json"));
    assert_eq!(burned["summary"]["verdict"], "healthy", "{burned}");
    assert!(!dir.join("burn-verify.json").exists(), "no verify began");
    // The line it gave verifies, later.
    let line = said.split("verify later with: ").nth(1).unwrap().replacen("arrayburn", bin(), 1);
    let out = Command::new("sh").args(["-c", &line]).output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v = json(&dir.join("burn-verify.json"));
    assert_eq!(v["disks"][1]["burned_in"]["run_id"], burned["run_id"], "{v}");
}

/// Two disks' enclosure slots, as a lab's `ARRAYBURN_TOPOLOGY` places
/// them, each with a `power_status` a watcher acts on as a slot's power
/// does: at `off` the disk's backing file is moved aside (its reads fail,
/// the kernel logging their errors) and 1.5 s on the disk shrinks to
/// nothing; at `on`, where `back` says so, the
/// file comes back on a new loop device and the disk's name (a link, as
/// /dev/disk/by-id's) leads there.
struct Slots {
    topology: std::path::PathBuf,
    slots: Vec<std::path::PathBuf>,
    links: Vec<String>,
    /// Where each disk's file is moved aside while its power is off.
    asides: Vec<std::path::PathBuf>,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    watcher: Option<std::thread::JoinHandle<Vec<LoopDisk>>>,
}

impl Slots {
    fn new(d: &[LoopDisk], back: &[bool], dir: &Path) -> Self {
        let mut map = serde_json::Map::new();
        let (mut slots, mut links) = (Vec::new(), Vec::new());
        for (n, x) in d.iter().enumerate() {
            let slot = dir.join(format!("class/enclosure/0:0:12:0/Slot{n:02}"));
            std::fs::create_dir_all(&slot).unwrap();
            std::fs::write(slot.join("power_status"), "on\n").unwrap();
            map.insert(
                x.name().into(),
                serde_json::json!({"transport": "sas", "enclosure_slot": format!("0:0:12:0 slot {n}"),
                    "enclosure_component": slot.to_string_lossy()}),
            );
            let link = dir.join(format!("wwn-{n}"));
            std::os::unix::fs::symlink(&x.dev, &link).unwrap();
            links.push(link.to_string_lossy().into_owned());
            slots.push(slot);
        }
        let topology = dir.join("topology.json");
        std::fs::write(&topology, Value::Object(map).to_string()).unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watched: Vec<_> = (d.iter().zip(&slots).zip(&links).zip(back))
            .map(|(((x, s), l), b)| (x.dev.clone(), x.file.clone(), s.clone(), l.clone(), *b))
            .collect();
        let stop = done.clone();
        let watcher = std::thread::spawn(move || {
            let mut made = Vec::new();
            let mut was: Vec<String> = vec!["on".into(); watched.len()];
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                for (i, (dev, file, slot, link, back)) in watched.iter().enumerate() {
                    let now = std::fs::read_to_string(slot.join("power_status")).unwrap();
                    let now = now.trim().to_string();
                    if now == was[i] {
                        continue;
                    }
                    let aside = file.with_extension("aside");
                    if now == "off" {
                        std::fs::copy(file, &aside).unwrap();
                        std::fs::OpenOptions::new()
                            .write(true)
                            .open(file)
                            .unwrap()
                            .set_len(0)
                            .unwrap();
                        // As a drive losing its power: its reads fail (the
                        // kernel logs their I/O errors) a while before the
                        // kernel drops it.
                        std::thread::sleep(std::time::Duration::from_millis(1500));
                        Command::new("losetup").args(["-c", dev]).output_within(RUN);
                    } else if *back {
                        let again = LoopDisk::attach(aside, &[]).unwrap();
                        let tmp = format!("{link}.new");
                        std::os::unix::fs::symlink(&again.dev, &tmp).unwrap();
                        std::fs::rename(&tmp, link).unwrap();
                        made.push(again);
                    }
                    was[i] = now;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            made
        });
        let asides = d.iter().map(|x| x.file.with_extension("aside")).collect();
        Slots { topology, slots, links, asides, done, watcher: Some(watcher) }
    }

    fn power(&self, n: usize) -> String {
        std::fs::read_to_string(self.slots[n].join("power_status")).unwrap().trim().to_string()
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        // The loop devices it made are detached as they drop (their files
        // removed); a file no device took back is removed here.
        let _ = self.watcher.take().map(|w| w.join());
        for aside in &self.asides {
            let _ = std::fs::remove_file(aside);
        }
    }
}

#[test]
fn a_power_cycle_through_the_slot_finds_the_drive_again_by_name_and_one_that_stays_off_is_named() {
    need_root!();
    let _l = device_lock();
    let b = Bench::new(2, 8 * MIB);
    let (devs, st, dir) = (b.devs(), b.st(), b.dir.path());
    burn_in(&devs, st, "1", &dir.join("burn.json"));
    let v = dir.join("v.json");
    let verify = |names: &[&str], topology: Option<&Path>| {
        let mut a = vec!["burnin", "--verify", "--cycles", "1", "--power-cycle", "--state", st];
        a.extend(["--spin-up-timeout", "10s", "--smart", "off", "--progress", "none"]);
        a.extend(["--json", v.to_str().unwrap()]);
        a.extend(NO_SPEED_JUDGED);
        a.extend(names);
        let mut cmd = Command::new(bin());
        cmd.args(&a);
        if let Some(t) = topology {
            cmd.env("ARRAYBURN_TOPOLOGY", t);
        }
        let out = cmd.output_within(RUN);
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        out
    };
    // A disk in no slot whose power the kernel switches: refused.
    let out = verify(&devs, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is in no enclosure slot whose power the kernel can switch"), "{err}");
    assert!(!v.exists());
    let slots = Slots::new(&b.d, &[true, false], dir);
    let names: Vec<&str> = slots.links.iter().map(String::as_str).collect();
    let out = verify(&names, Some(&slots.topology));
    assert_eq!(out.status.code(), Some(1), "the one that stayed off");
    assert_eq!((slots.power(0), slots.power(1)), ("on".into(), "on".into()), "power back on");
    let doc = json(&v);
    let (back, off) = (&doc["disks"][0], &doc["disks"][1]);
    let c = &back["cycles"][0];
    assert_eq!((&c["power"], &c["back"]["state"]), (&true.into(), &"same".into()), "{back}");
    assert!(c["spin_up_s"].as_f64().is_some(), "{back}");
    assert_eq!(back["verified_bytes"].as_u64(), Some(8 * MIB), "read whole on its new device");
    assert_eq!(back["verdict"], "healthy", "{back}");
    // The reads that failed while its power was cut were the run's.
    assert!(back["kernel"]["while_cut"].as_u64() >= Some(1), "{back}");
    assert_eq!(back["kernel"]["counts"], serde_json::json!({}), "{back}");
    let c = &off["cycles"][0];
    assert_eq!(c["back"]["state"], "gone", "{off}");
    let why = c["back"]["detail"].as_str().unwrap();
    assert!(why.starts_with("it did not come back within 10.0 s of its slot's power"), "{why}");
    assert_eq!((off["verified_bytes"].as_u64(), &off["verdict"]), (Some(0), &"return".into()));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("power cycle 1 back in"), "{text}");
    assert!(
        text.contains(": power cycle 1 did NOT come back (it did not come back within"),
        "{text}"
    );
    assert!(text.contains("line(s) while the run had cut its power"), "{text}");
    let said = doc["summary"]["disk_verdicts"][0]["sentence"].as_str().unwrap();
    assert!(said.contains("after power cycle 1 it did not come back"), "{said}");
    // The burn-in's blocks are where it wrote them, on the new device too.
    assert!(std::fs::canonicalize(&slots.links[0]).unwrap() != Path::new(&b.d[0].dev));
}

#[test]
fn a_crashed_burn_in_s_next_pass_written_past_its_last_place_is_no_lost_write() {
    need_root!();
    let _l = device_lock();
    let b = Bench::new(1, 8 * MIB);
    let (devs, st, dir) = (b.devs(), b.st(), b.dir.path());
    burn_in(&devs, st, "2", &dir.join("burn.json"));
    // As a crash in pass 2's write leaves it: the disk holds pass 2's
    // blocks everywhere, its checkpoint's last place names 4 MiB.
    let file = b.state.path().join(format!("burnin-{}.json", &devs[0][5..]));
    let mut c: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    c["at"] = serde_json::json!({"pass": 2, "phase": "write", "done_until": 4 * MIB, "interval_from": 4 * MIB});
    std::fs::write(&file, c.to_string()).unwrap();
    // And a block lost where pass 1's are expected: still found.
    put(&b.d[0], 6 * MIB, &[0; 4096]);
    let v = dir.join("v.json");
    let mut a = vec!["--verify", "--state", st, "--smart", "off", "--progress", "none"];
    a.extend(["--json", v.to_str().unwrap()]);
    a.extend(NO_SPEED_JUDGED);
    a.extend(&devs);
    let out = burnin(&a);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let disk = &json(&v)["disks"][0];
    assert_eq!(disk["verified_bytes"].as_u64(), Some(8 * MIB), "{disk}");
    assert_eq!(findings(disk, "zeros"), [(6 * MIB, 4096)], "{disk}");
    assert_eq!(
        disk["findings"].as_array().unwrap().len(),
        1,
        "pass 2's blocks are the run's: {disk}"
    );
}

#[test]
fn a_verify_refuses_a_state_without_the_checkpoint_naming_where_it_is_and_the_readme_runs_as_printed()
 {
    need_root!();
    let _l = device_lock();
    let b = Bench::new(2, 8 * MIB);
    let devs = b.devs();
    // The burn-in's checkpoints where the default keeps them, under a
    // root of the test's own.
    let root = b.dir.path();
    let state = root.join("var/lib/arrayburn/burnin");
    std::fs::create_dir_all(&state).unwrap();
    burn_in(&devs, state.to_str().unwrap(), "1", &root.join("burn.json"));
    // The README's verify commands, as printed: its state directory and
    // disks made the test's.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme.split("**Verify later**").nth(1).unwrap();
    let block = section.split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    let lines: Vec<&str> =
        block.lines().filter(|l| l.starts_with("arrayburn burnin --verify")).collect();
    assert_eq!(lines.len(), 2, "{block}");
    let words = |line: &str| -> Vec<String> {
        let line = line.split(" #").next().unwrap();
        let mut out = Vec::new();
        for w in line.split_whitespace().skip(1) {
            match w {
                "/dev/disk/by-id/ata-NEW{1..24}" => out.extend(devs.iter().map(|d| d.to_string())),
                w if w.starts_with("/var/lib/arrayburn") => {
                    out.push(root.join(&w[1..]).display().to_string())
                }
                w => out.push(w.to_string()),
            }
        }
        out
    };
    // The first, held to 1 MB/s a disk, stopped once it reads; the second
    // ("after a stop") goes on to the end.
    let slow = Throttle::new();
    b.d.iter().for_each(|x| _ = slow.limit(x, 1_000_000));
    let first = words(lines[0]);
    let child = slow
        .command(&first.iter().map(String::as_str).collect::<Vec<_>>())
        .current_dir(root)
        .start();
    child.wait_line("the verify reading", RUN, |l| {
        l.contains("arrayburn burnin: verifying 2 disk(s)")
    });
    let (out, _) = child.interrupt(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{}: {err}", lines[0]);
    assert!(root.join("verify1").is_dir(), "{err}");
    let again = Command::new(bin()).args(words(lines[1])).current_dir(root).output_within(RUN);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(matches!(again.status.code(), Some(0 | 3)), "{}: {err}", lines[1]);
    // Checkpoints edited to say their burn-ins wrote the first MiB: the
    // verify reads that back and claims only that (it said HEALTHY of the
    // whole disks).
    for dev in &devs {
        let at = state.join(format!("burnin-{}.json", &dev[5..]));
        let mut c = json(&at);
        (c["end_byte"], c["at"]["done_until"], c["at"]["interval_from"]) =
            (MIB.into(), MIB.into(), MIB.into());
        (c["burn"]["written_bytes"], c["burn"]["verified_bytes"]) = (MIB.into(), MIB.into());
        c["burn"]["surface"] = Value::Array(vec![]);
        std::fs::write(&at, c.to_string()).unwrap();
    }
    let report = root.join("part.json");
    let st = state.to_str().unwrap();
    let args = ["--verify", "--smart", "off", "--state", st, "--json", report.to_str().unwrap()];
    let out = burnin(&[&args[..], &devs].concat());
    assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
    let said = json(&report)["summary"]["message"].as_str().unwrap().to_string();
    let whole = 2 * 8 * MIB;
    assert!(
        said.contains(&format!(
            "(read {} of {whole} bytes of the disks, 12.5%: the rest is not claimed)",
            2 * MIB
        )),
        "{said}"
    );
    // --state naming the parent of the burn-in's: refused, naming where
    // the disk's checkpoint is.
    let parent = root.join("var/lib/arrayburn");
    let out = burnin(&["--verify", "--state", parent.to_str().unwrap(), devs[0]]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let want = format!(
        "this disk's burn-in checkpoint is in {}: give --state {} (nothing was written)",
        state.display(),
        state.display()
    );
    assert!(err.contains(&want) && err.trim().lines().count() == 1, "{err}");
    // Nowhere to be found: the command that lists them.
    let empty = tempdir();
    let out = burnin(&["--verify", "--state", empty.path().to_str().unwrap(), devs[0]]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lists this disk's checkpoints on this machine"), "{err}");
}

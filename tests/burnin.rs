//! `arrayburn burnin` on loop devices: every refusal writes nothing (the
//! devices' contents are checksummed before and after), a healthy array is
//! written and read back whole (counted from the kernel's own counters),
//! and two disks that alias each other (one backing file under two loop
//! devices) are caught holding each other's blocks.

use std::path::Path;
use std::process::Command;

use crate::util::*;

fn sum(d: &LoopDisk) -> u64 {
    let bytes = std::fs::read(&d.file).unwrap();
    bytes.chunks(8).enumerate().fold(0u64, |h, (i, c)| h.rotate_left(5) ^ (c[0] as u64 + i as u64))
}

/// `arrayburn burnin --state DIR` with its own checkpoint directory, kept
/// as long as the second value is.
fn burnin_cmd() -> (Command, tempfile::TempDir) {
    let state = tempdir();
    let mut c = Command::new(bin());
    c.arg("burnin").arg("--state").arg(state.path());
    (c, state)
}

fn burnin(args: &[&str]) -> std::process::Output {
    let (mut c, _state) = burnin_cmd();
    let out = c.args(args).output_within(RUN);
    eprintln!(
        "--- burnin {}\n{}\n--- stderr\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `arrayburn burnin --destructive --yes ARGS --json FILE`: the output and
/// the JSON document.
fn burn(args: &[&str]) -> (std::process::Output, serde_json::Value) {
    burn_in(None, args)
}

/// [`burn`] inside throttle `t`, where given.
fn burn_in(t: Option<&Throttle>, args: &[&str]) -> (std::process::Output, serde_json::Value) {
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let mut all = vec!["--destructive", "--yes", "--json", json.to_str().unwrap()];
    all.extend(args);
    let out = match t {
        None => burnin(&all),
        Some(t) => {
            let state = tempdir();
            let mut a = vec!["burnin", "--state", state.path().to_str().unwrap()];
            a.extend(&all);
            let out = t.command(&a).output_within(RUN);
            eprintln!("--- burnin (throttled)\n{}", String::from_utf8_lossy(&out.stderr));
            out
        }
    };
    let doc = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (out, doc)
}

fn refused(args: &[&str], why: &str) {
    let out = burnin(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(why), "{args:?}: {err}");
    assert!(err.contains("nothing was written"), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

/// An executable `smartctl` of release 7.5 in `dir` that runs `body` (sh).
fn fake_smartctl(dir: &Path, body: &str) {
    crate::util::fake_smartctl(dir, "7.5", body);
}

#[test]
fn every_refusal_writes_nothing() {
    need_root!();
    let _l = device_lock();
    let d = disks(3, 16 << 20);
    let before: Vec<u64> = d.iter().map(sum).collect();
    let all: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let with = |extra: &[&str]| -> Vec<String> {
        extra.iter().map(|s| s.to_string()).chain(all.iter().map(|s| s.to_string())).collect()
    };
    let run = |v: Vec<String>, why: &str| {
        let a: Vec<&str> = v.iter().map(String::as_str).collect();
        refused(&a, why);
    };
    run(with(&[]), "add --destructive");
    run(with(&["--destructive"]), "standard input is not a terminal");
    run(with(&["--destructive", "--yes", "--range", "1g..2g"]), "--range 1g..2g");
    // An end beyond the disk is refused as a start beyond it is, never cut
    // to the disk's end unsaid.
    run(
        with(&["--destructive", "--yes", "--range", "8m..2g"]),
        "--range 8m..2g: ends beyond the disk, whose last whole 4 KiB block ends at byte 16777216",
    );
    for pct in ["100", "-1", "NaN"] {
        let flag = format!("--slow-pct={pct}");
        run(
            with(&["--destructive", "--yes", &flag]),
            &format!("--slow-pct {pct} must be between 0 and 100"),
        );
    }
    // Two outputs naming one file; a recording on standard output.
    let files = tempdir();
    let same = files.path().join("b.json");
    let same = same.to_str().unwrap();
    run(with(&["--destructive", "--yes", "--json", same, "--record", same]), "name the same file");
    run(with(&["--destructive", "--yes", "--record", "-"]), "--record -: give a file");
    assert_eq!(std::fs::read_dir(files.path()).unwrap().count(), 0, "no file written");
    // A disk with a filesystem, then mounted.
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F", &d[1].dev]).output_within(MINUTE);
    assert!(mkfs.status.success(), "{mkfs:?}");
    let fs_sum = sum(&d[1]);
    run(with(&["--destructive", "--yes"]), "signature (ext4)");
    assert_eq!(sum(&d[1]), fs_sum, "the filesystem disk was never written");
    let mnt = tempdir();
    assert!(
        Command::new("mount")
            .args([&d[1].dev, mnt.path().to_str().unwrap()])
            .output_within(MINUTE)
            .status
            .success()
    );
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).output_within(MINUTE);
        }
    }
    let u = Unmount(mnt.path());
    run(with(&["--destructive", "--yes", "--wipe-signatures"]), "is in use (");
    // An output that cannot be written is refused before any disk is
    // opened: the one in use is not what is said.
    let nowhere = files.path().join("missing").join("m.prom");
    let flags = ["--destructive", "--yes", "--wipe-signatures", "--metrics"];
    run(with(&[&flags[..], &[nowhere.to_str().unwrap()]].concat()), "--metrics ");
    // A recording in the checkpoints' directory is refused as a report
    // there is.
    let state = tempdir();
    let st = state.path().to_str().unwrap();
    let rec = state.path().join("r.json");
    let flags =
        ["burnin", "--destructive", "--yes", "--state", st, "--record", rec.to_str().unwrap()];
    drop(u);
    let out = Command::new(bin()).args(flags).args(&all).output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--record") && err.contains("where the checkpoints are kept"), "{err}");
    assert!(err.contains("nothing was written") && err.trim().lines().count() == 1, "{err}");
    assert_eq!(std::fs::read_dir(state.path()).unwrap().count(), 0, "no checkpoint written");
    // ZFS keeps labels at the end too: one uberblock magic in the last label.
    let size = 16u64 << 20;
    let label = size - (256 << 10) + (128 << 10);
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new().write(true).open(&d[2].file).unwrap(),
        &0x00ba_b10cu64.to_le_bytes(),
        label,
    )
    .unwrap();
    let zfs_sum = sum(&d[2]);
    run(vec!["--destructive".into(), "--yes".into(), d[2].dev.clone()], "ZFS labels");
    assert_eq!(sum(&d[0]), before[0], "the clean disk was never written");
    assert_eq!(sum(&d[2]), zfs_sum, "the ZFS-labelled disk was never written");
    // Mounting changed the filesystem disk itself; no burn-in block is on it.
    for x in &d {
        let bytes = std::fs::read(&x.file).unwrap();
        assert!(
            !bytes.chunks(4096).any(|b| b.starts_with(b"ABRN")),
            "{}: a burn-in block was written",
            x.dev
        );
    }
}

#[test]
fn a_healthy_array_is_written_flushed_and_read_back_whole() {
    need_root!();
    let _l = device_lock();
    let size = 24u64 << 20;
    let d = disks(3, size);
    // Writes at 16 MB/s: each write phase lasts 1.5 s, long enough for the
    // disks' speeds to be compared (a healthy verdict claims that too).
    // Reads too: a memory-backed disk reads back as fast as a core
    // verifies, and a loaded machine's cores do not verify alike.
    let t = writes_at(&d, 16_000_000);
    for x in &d {
        t.limit(x, 16_000_000);
    }
    let written: Vec<u64> = d.iter().map(|x| sectors_written(&x.dev)).collect();
    let bundle = tempdir();
    let out_dir = bundle.path().join("run1");
    // 32 KiB requests: a surface stretch holds 32 of them, 1 MiB.
    let mut args = vec!["--block", "32k", "--passes", "2", "--out", out_dir.to_str().unwrap()];
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let (out, doc) = burn_in(Some(&t), &args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // The result opens with the header every document has, names the
    // machine and where each disk hangs, and says it is whole.
    assert!(doc["machine_id"].is_string() && doc["kernel"].is_string(), "{doc}");
    assert_eq!(
        (&doc["tool"], &doc["kind"], &doc["schema_version"], &doc["complete"]),
        (&"arrayburn".into(), &"burnin".into(), &1.into(), &true.into()),
    );
    assert_eq!(doc["disks"][0]["topology"]["transport"], "virtual");
    // The plan's estimate, on the reads it timed before asking.
    let plan = &doc["plan"];
    assert_eq!(plan["disks"].as_array().map(Vec::len), doc["disks"].as_array().map(Vec::len));
    assert_eq!(plan["disks"][0]["basis"], "read_now", "{plan}");
    let one = plan["disks"][0]["one_pass_s"].as_f64().unwrap_or(0.0);
    assert!(one > 0.0 && plan["all_s"].as_f64() >= Some(one), "{plan}");
    // --out: the same report, and charts of both phases of pass 1 and 2.
    let again: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(again, doc);
    assert_eq!(
        std::fs::read_to_string(out_dir.join("report.txt")).unwrap(),
        String::from_utf8_lossy(&out.stdout)
    );
    // Its own page: the verdict in its words, a certificate per disk,
    // the surface charts inline; and the Markdown with the disks' table.
    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(page.contains("class=\"verdict healthy\">Verdict: HEALTHY"), "{page}");
    assert_eq!(page.matches("<div class=\"certificate\">").count(), 3, "{page}");
    assert!(page.matches("<svg").count() >= 4, "the charts inline");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("| Disk | Model | Serial | Range |"), "{md}");
    // `arrayburn report` reads a burn-in's result too.
    let fleet = bundle.path().join("fleet.json");
    let rep = Command::new(bin())
        .args(["report", out_dir.join("report.json").to_str().unwrap(), "--json"])
        .arg(&fleet)
        .output_within(RUN);
    assert_eq!(rep.status.code(), Some(0), "{rep:?}");
    let f: serde_json::Value = serde_json::from_slice(&std::fs::read(&fleet).unwrap()).unwrap();
    let kinds: Vec<&str> =
        f["samples"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["burnin"; 3]);
    for phase in ["write", "verify"] {
        for pass in [1, 2] {
            for ext in ["svg", "png"] {
                let f = out_dir.join(format!("charts/surface-{phase}-pass{pass}.{ext}"));
                assert!(std::fs::metadata(&f).unwrap().len() > 1000, "{f:?}");
            }
        }
    }
    // The surface points of each phase cover the range in order, each
    // stretch where the one before it ends (timed ones: several at 16
    // MB/s).
    for disk in doc["disks"].as_array().unwrap() {
        for (pass, phase) in [(1, "write"), (2, "verify")] {
            let at: Vec<(u64, u64)> = disk["surface"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["pass"] == pass && p["phase"] == phase)
                .map(|p| (p["offset"].as_u64().unwrap(), p["bytes"].as_u64().unwrap()))
                .collect();
            assert!(at.len() >= 2 && at[0].0 == 0, "{disk}");
            for w in at.windows(2) {
                assert_eq!(w[0].0 + w[0].1, w[1].0, "{disk}");
            }
            assert_eq!(at.last().map(|(o, b)| o + b), Some(size), "{disk}");
        }
    }
    for (i, disk) in doc["disks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(disk["written_bytes"], 2 * size, "{disk}");
        assert_eq!(disk["verified_bytes"], 2 * size, "{disk}");
        assert_eq!(disk["findings"], serde_json::json!([]), "{disk}");
        assert_eq!(disk["verdict"], "healthy");
        // The kernel counted every byte reaching the device, twice.
        let sectors = sectors_written(&d[i].dev) - written[i];
        assert!(sectors >= 2 * size / 512, "{sectors} sectors written");
        // What is on the disk is the second pass's block.
        let bytes = std::fs::read(&d[i].file).unwrap();
        assert_eq!(&bytes[4096 * 7..4096 * 7 + 4], b"ABRN");
        assert_eq!(u16::from_le_bytes([bytes[4096 * 7 + 6], bytes[4096 * 7 + 7]]), 2);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Verdict: HEALTHY"), "{text}");
    // The plan said how long, at the speed it measured.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MB/s"), "{err}");
    // A line per disk under headings: what is left of it (the last
    // column), on the reads timed now; all at once as long as the slowest.
    assert!(err.contains(" 1 pass ") && err.contains(" Left"), "the headings: {err}");
    let each: Vec<&str> = (err.lines())
        .filter(|l| {
            d.iter().any(|x| l.starts_with(&format!("{} ", x.dev))) && l.contains("read now")
        })
        .filter_map(|l| l.split("  ").filter(|c| !c.trim().is_empty()).last())
        .map(str::trim)
        .collect();
    let all = (err.split_once("in all about "))
        .and_then(|x| x.1.split_once(", the disks side by side"))
        .map(|x| x.0);
    assert!(err.contains("the writes taken as fast"), "what it rests on: {err}");
    assert_eq!(each.len(), 3, "{err}");
    assert!(all.is_some_and(|a| each.contains(&a)), "{all:?} of {each:?}: {err}");
}

#[test]
fn a_link_below_its_maximum_is_a_finding_of_the_burn_in_too() {
    need_root!();
    let _l = device_lock();
    // Three new disks, every block of them good, placed by
    // ARRAYBURN_TOPOLOGY: the first came up on a SATA link at 3.0 of 6.0
    // Gb/s, the second sits behind an HBA whose PCIe link trained at x4 of
    // x8, the third is an NVMe drive at full width behind a PCIe switch
    // whose uplink trained at x8 of x16.
    let d = disks(3, 8 << 20);
    let name = |i: usize| d[i].dev.trim_start_matches("/dev/").to_string();
    let pcie = |at: &str, cur: &str, max: &str| {
        serde_json::json!({"kind": "pcie", "at": at, "current": format!("8.0 GT/s PCIe {cur}"),
            "max": format!("8.0 GT/s PCIe {max}"), "degraded": cur != max})
    };
    let topology = serde_json::json!({
        name(0): {"transport": "sata", "links": [{"kind": "sata", "at": "link2",
            "current": "3.0 Gbps", "max": "6.0 Gbps", "degraded": true}]},
        name(1): {"transport": "sas", "controller": {"pci": "0000:05:00.0", "driver": "mpt3sas"},
            "links": [pcie("0000:05:00.0", "x4", "x8")]},
        name(2): {"transport": "nvme", "controller": {"pci": "0000:04:00.0", "driver": "nvme"},
            "links": [pcie("0000:01:00.0", "x8", "x16"), pcie("0000:04:00.0", "x4", "x4")]},
    });
    let dir = tempdir();
    let placed = dir.path().join("topology.json");
    std::fs::write(&placed, topology.to_string()).unwrap();
    let json = dir.path().join("b.json");
    let (mut c, _state) = burnin_cmd();
    let out = c
        .args(["--destructive", "--yes", "--block", "1m", "--json"])
        .arg(&json)
        .args(d.iter().map(|x| &x.dev))
        .env("ARRAYBURN_TOPOLOGY", &placed)
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for disk in doc["disks"].as_array().unwrap() {
        assert_eq!(disk["findings"], serde_json::json!([]), "{disk}");
    }
    let verdicts: Vec<&str> =
        doc["disks"].as_array().unwrap().iter().map(|x| x["verdict"].as_str().unwrap()).collect();
    // Nothing found on the others; 8 MiB disks are written too fast for
    // their speeds to be compared, so their health is not claimed.
    assert_eq!(verdicts, ["check_path", "not_judged", "not_judged"]);
    assert_eq!(doc["summary"]["verdict"], "flagged");
    let links: Vec<(&str, bool, bool)> = doc["summary"]["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let b = |k: &str| l[k].as_bool().unwrap();
            (l["at"].as_str().unwrap(), b("controller"), b("switch"))
        })
        .collect();
    assert_eq!(
        links,
        [("link2", false, false), ("0000:05:00.0", true, false), ("0000:01:00.0", true, true)]
    );
    let msg = doc["summary"]["message"].as_str().unwrap();
    assert_eq!(
        msg,
        format!(
            "FLAGGED: 1 disk(s) to act on ({}); the controller 0000:05:00.0's PCIe link runs at 8.0 GT/s PCIe x4 \
         where 8.0 GT/s PCIe x8 is possible (1 disk(s) behind it, at most 3938 MB/s): reseat the card or \
         move it to a full-width, full-speed slot; the PCIe switch 0000:01:00.0's uplink runs at 8.0 GT/s \
         PCIe x8 where 8.0 GT/s PCIe x16 is possible (1 disk(s) behind it, at most 7877 MB/s): reseat the \
         switch card or its cable, or move it to a full-width, full-speed slot; not judged: {}, {} (speed \
         not compared: no peer of the same model, size and kind, or a phase timed for under 1 s; health \
         not claimed).",
            d[0].dev, d[1].dev, d[2].dev
        )
    );
    assert!(
        text.contains(&format!(
            "{}: its SATA link (link2) runs at 3.0 Gbps where 6.0 Gbps is possible: replace the cable or move the slot",
            d[0].dev
        )),
        "{text}"
    );
}

#[test]
fn two_disks_that_alias_each_other_are_caught_holding_each_others_blocks() {
    need_root!();
    let _l = device_lock();
    let size = 16u64 << 20;
    let ok = disks(1, size);
    // One backing file under two loop devices: every write to one lands on
    // the other, as a misdirected write or a wrong cabling would.
    let file = Path::new("/dev/shm").join(format!("arrayburn-alias-{}.img", std::process::id()));
    arrayburn::testbed::fill_file(&file, size, 7, &arrayburn::stop::StopFlag::default()).unwrap();
    let a = LoopDisk::attach(file.clone(), &["--direct-io=on"]).unwrap();
    let b = LoopDisk::attach(file.clone(), &["--direct-io=on"]).unwrap();
    let (out, doc) = burn(&["--block", "256k", &ok[0].dev, &a.dev, &b.dev]);
    assert_eq!(out.status.code(), Some(1));
    let disks = doc["disks"].as_array().unwrap();
    assert_eq!(disks[0]["verdict"], "not_judged", "the disk of its own: nothing found");
    // Whichever wrote a block last owns it: at least one of the two reads
    // the other's blocks back, and says so.
    let caught: Vec<&serde_json::Value> =
        disks[1..].iter().filter(|d| d["verdict"] == "return").collect();
    assert!(!caught.is_empty(), "{doc}");
    for d in caught {
        let f = &d["findings"][0];
        assert_eq!(f["class"], "other_disk", "{d}");
        assert!(
            f["detail"].as_str().unwrap().contains("another disk's block of this burn-in"),
            "{d}"
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("another disk's: holds another disk's block of this burn-in"), "{text}");
    assert!(text.contains("return it"), "{text}");
    let names = [a.name().to_string(), b.name().to_string()];
    drop((a, b));
    let _ = std::fs::remove_file(&file);
    for n in names {
        let bound = std::fs::read_to_string(format!("/sys/block/{n}/loop/backing_file"))
            .unwrap_or_default();
        assert!(!bound.contains("arrayburn-alias-"), "{n} left attached to {bound}");
    }
}

#[test]
fn a_signal_stops_the_burn_in_and_says_how_far_it_got() {
    need_root!();
    let _l = device_lock();
    // Reads and writes at 16 MB/s on 64 MiB: the plan's speed is measured
    // for 1 s, then 4 s of writing.
    let d = disks(1, 64 << 20);
    let t = Throttle::new();
    t.limit_write(&d[0], 16_000_000);
    t.limit(&d[0], 16_000_000);
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let state = tempdir();
    let start = |after_ms: u64| {
        let child = t
            .command(&[
                "burnin",
                "--state",
                state.path().to_str().unwrap(),
                "--destructive",
                "--yes",
                "--block",
                "1m",
                "--json",
                json.to_str().unwrap(),
                &d[0].dev,
            ])
            .start();
        interrupt_after(child, std::time::Duration::from_millis(after_ms))
    };
    // Stopped while the plan is measured: nothing written, no checkpoint.
    let before = sum(&d[0]);
    let (out, _) = start(300);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(sum(&d[0]), before);
    // No checkpoint (the run's log is kept in runs/).
    let kept: Vec<_> =
        std::fs::read_dir(state.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(kept, ["runs"], "{kept:?}");
    // Stopped while writing: within seconds, the place saved.
    let (out, took) = start(3000);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
    assert!(err.contains("continue with:\n  arrayburn burnin --resume"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let disk = &doc["disks"][0];
    assert_eq!(disk["verdict"], "interrupted", "{disk}");
    let written = disk["written_bytes"].as_u64().unwrap();
    assert!(written > 0 && written < 64 << 20, "{disk}");
    // The report says how far it got (the place its checkpoint saved, the
    // one a resume continues from), and no speed it did not measure.
    assert_eq!(disk["place"]["phase"], "write", "{disk}");
    let saved = std::fs::read_dir(state.path()).unwrap().flatten().find(|e| e.path().is_file());
    let saved = saved.expect("a checkpoint");
    let point: serde_json::Value =
        serde_json::from_slice(&std::fs::read(saved.path()).unwrap()).unwrap();
    assert_eq!(disk["place"], point["at"], "{disk}");
    assert_eq!(disk["verified_bytes"], 0, "{disk}");
    assert!(disk["verify_mb_per_s"].is_null(), "{disk}");
    assert!(disk["write_mb_per_s"].as_f64().is_some_and(|v| v > 0.0), "{disk}");
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().find(|l| l.starts_with(&d[0].dev)).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(!cells.contains(&"0"), "a 0 for what was not measured: {row}");
    assert!(text.contains(&format!("{}: stopped in pass 1 of 1, write ", d[0].dev)), "{text}");
}

#[test]
fn lost_writes_flipped_bits_and_failed_writes_are_found_exactly() {
    use crate::faults::FaultyDisk;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let size = 16 * MIB;
    // Each disk has one fault; the fourth has none.
    let lose = FaultyDisk::writable(size, &[], &[(4 * MIB, 8192)], &[]);
    let flip = FaultyDisk::writable(size, &[], &[], &[(8 * MIB, 3 * 4096)]);
    let bad = FaultyDisk::writable(size, &[(12 * MIB + 4096, 4096)], &[], &[]);
    let clean = FaultyDisk::writable(size, &[], &[], &[]);
    let pages = tempdir();
    let bundle = pages.path().join("out");
    let (out, doc) = burn(&[
        "--passes",
        "2",
        "--block",
        "1m",
        "--out",
        bundle.to_str().unwrap(),
        &lose.dev,
        &flip.dev,
        &bad.dev,
        &clean.dev,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let findings = |i: usize| -> Vec<(u64, u64, u64, String)> {
        doc["disks"][i]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["pass"].as_u64().unwrap(),
                    f["offset"].as_u64().unwrap(),
                    f["len"].as_u64().unwrap(),
                    f["class"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // The second pass's writes there never landed: pass 1's blocks remain.
    assert_eq!(findings(0), [(2, 4 * MIB, 8192, "stale".to_string())]);
    assert!(
        doc["disks"][0]["findings"][0]["detail"].as_str().unwrap().contains("holds pass 1's block"),
        "{doc}"
    );
    // Flipped on every read: three blocks, in both passes.
    assert_eq!(
        findings(1),
        [
            (1, 8 * MIB, 3 * 4096, "corrupted".to_string()),
            (2, 8 * MIB, 3 * 4096, "corrupted".to_string())
        ]
    );
    // The failed write is pinpointed to its 4 KiB; what never landed reads
    // back as zeros, and is called so.
    let f = findings(2);
    assert!(f.contains(&(1, 12 * MIB + 4096, 4096, "write_error".to_string())), "{f:?}");
    assert!(f.contains(&(1, 12 * MIB + 4096, 4096, "zeros".to_string())), "{f:?}");
    assert_eq!(findings(3), []);
    let verdicts: Vec<&str> =
        (0..4).map(|i| doc["disks"][i]["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts[..3], ["return", "return", "return"]);
    // The clean disk is never to act on: not judged where its phases took
    // under the 1 s a speed needs, healthy where a loaded machine made
    // them longer and its speed was compared.
    assert!(["not_judged", "healthy"].contains(&verdicts[3]), "{verdicts:?}");
    // `ARRAYBURN_RECORD=DIR` keeps this run's result as a fixture
    // (fixtures/burnin/failing-disks was recorded so).
    if let Some(to) = std::env::var_os("ARRAYBURN_RECORD") {
        std::fs::create_dir_all(&to).unwrap();
        for f in ["report.json", "report.txt"] {
            std::fs::copy(bundle.join(f), Path::new(&to).join(f)).unwrap();
        }
    }
    // Its page, opened in a browser: every disk, every finding's range and
    // the verdict in the DOM; a certificate per disk; it prints.
    if let Some(browser) = Browser::new() {
        let page = bundle.join("report.html");
        let dom = browser.dom(&page);
        for d in doc["disks"].as_array().unwrap() {
            assert!(dom.contains(d["path"].as_str().unwrap()), "{dom}");
            for f in d["findings"].as_array().unwrap() {
                let (at, len) = (f["offset"].as_u64().unwrap(), f["len"].as_u64().unwrap());
                assert!(dom.contains(&format!("bytes {at}..{} ({len} bytes)", at + len)), "{dom}");
            }
        }
        assert!(dom.contains("class=\"verdict flagged\">Verdict: FLAGGED"), "{dom}");
        assert_eq!(dom.matches("<div class=\"certificate\">").count(), 4);
        // Each certificate's one word: the three with faults FAIL.
        assert_eq!(dom.matches("<th>Result</th><td class=\"bad\">FAIL</td>").count(), 3, "{dom}");
        assert!(browser.pdf(&page).starts_with(b"%PDF"));
    }
    // Writes and reads went through io_uring (the default), two in flight.
    assert_eq!((doc["engine"].as_str(), doc["queue_depth"].as_u64()), (Some("io_uring"), Some(2)));
    // The summary where the check keeps it: one sentence per disk to act on.
    assert_eq!(doc["summary"]["verdict"], "flagged");
    let acts: Vec<(&str, &str)> = doc["summary"]["disk_verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["path"].as_str().unwrap(), a["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        acts,
        [lose.dev.as_str(), flip.dev.as_str(), bad.dev.as_str()].map(|p| (p, "return"))
    );
    // badblocks' four fills on a fresh disk that loses writes, and on the
    // flipping one: the first fill (0xaa) stays where later ones were
    // lost, and reads back as pass 1's; flipped bits are corrupted in
    // every pass.
    let lose = FaultyDisk::writable(size, &[], &[(4 * MIB, 8192)], &[]);
    let (out, doc) = burn(&[
        "--engine",
        "psync",
        "--pattern",
        "badblocks",
        "--block",
        "1m",
        &lose.dev,
        &flip.dev,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!((doc["pattern"].as_str(), doc["passes"].as_u64()), (Some("badblocks"), Some(4)));
    assert_eq!(doc["engine"], "psync", "this run: one write at a time");
    let findings = |i: usize| -> Vec<(u64, u64, String)> {
        doc["disks"][i]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["pass"].as_u64().unwrap(),
                    f["offset"].as_u64().unwrap(),
                    f["class"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let at = |pass, offset, class: &str| (pass, offset, class.to_string());
    assert_eq!(findings(0), [2, 3, 4].map(|p| at(p, 4 * MIB, "stale")), "{doc}");
    assert_eq!(findings(1), [1, 2, 3, 4].map(|p| at(p, 8 * MIB, "corrupted")));
    assert_eq!(doc["disks"][0]["verified_bytes"].as_u64(), Some(4 * size));
}

#[test]
fn a_range_at_the_end_of_a_20_tib_disk_is_burned_at_its_own_offsets() {
    need_root!();
    let _l = device_lock();
    // A sparse 20 TiB file in memory: only what is written takes room.
    // Its last 8 MiB lie past 2^32 blocks of 4 KiB (badblocks' limit).
    let size = 20u64 << 40;
    let file = Path::new("/dev/shm").join(format!("arrayburn-huge-{}.img", std::process::id()));
    let f = std::fs::File::create(&file).unwrap();
    f.set_len(size).unwrap();
    drop(f);
    let disk = LoopDisk::attach(file.clone(), &["--direct-io=on"]).unwrap();
    let start = size - (8 << 20);
    let range = format!("{start}..");
    let (out, doc) = burn(&["--range", &range, &disk.dev]);
    // Every block verified; a lone disk's speed is not judged (exit 3).
    assert_eq!(out.status.code(), Some(3));
    let d = &doc["disks"][0];
    assert_eq!((d["start_byte"].as_u64(), d["end_byte"].as_u64()), (Some(start), Some(size)));
    assert_eq!(d["verified_bytes"], 8 << 20);
    // The last block says where it is: a 64-bit offset.
    let mut head = [0u8; 24];
    std::os::unix::fs::FileExt::read_exact_at(
        &std::fs::File::open(&file).unwrap(),
        &mut head,
        size - 4096,
    )
    .unwrap();
    assert_eq!(&head[..4], b"ABRN");
    assert_eq!(u64::from_le_bytes(head[16..24].try_into().unwrap()), size - 4096);
    drop(disk);
}

#[test]
fn smart_counters_that_rose_during_the_burn_in_are_judged_by_kind() {
    need_root!();
    let _l = device_lock();
    let d = disks(3, 16 << 20);
    // A fake smartctl, first in PATH, serves a real recorded output of a
    // SATA disk for each device: as it was before, then after the run.
    let recorded = recorded_smart("ata");
    let raised = |id: u64, to: u64| {
        let mut v = recorded.clone();
        for a in v["ata_smart_attributes"]["table"].as_array_mut().unwrap() {
            if a["id"] == id {
                a["raw"]["value"] = to.into();
            }
        }
        v
    };
    let afters = [recorded.clone(), raised(197, 8), raised(199, 12)];
    let readings: Vec<Vec<serde_json::Value>> =
        afters.into_iter().map(|after| vec![recorded.clone(), after]).collect();
    let (_fake, path) = smartctl_readings(&d, &readings);
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let (mut c, _state) = burnin_cmd();
    let out = c
        .env("PATH", path)
        .args(["--destructive", "--yes", "--smart", "require", "--json"])
        .arg(&json)
        .args(d.iter().map(|x| &x.dev))
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let verdicts: Vec<&str> =
        (0..3).map(|i| doc["disks"][i]["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, ["not_judged", "return", "check_path"], "{doc}");
    let delta = &doc["disks"][1]["smart"]["deltas"][0];
    assert_eq!(
        (delta["name"].as_str(), delta["before"].as_u64(), delta["after"].as_u64()),
        (Some("ATA 197 Current_Pending_Sector"), Some(0), Some(8))
    );
    assert!(text.contains("SMART ATA 197 Current_Pending_Sector 0 → 8, return it"), "{text}");
    assert!(text.contains("UDMA_CRC_Error_Count 0 → 12 during the burn-in"), "{text}");
    // Without SMART data (a loop device's real answer), --smart require
    // refuses before writing.
    let fake_none = tempdir();
    fake_smartctl(
        fake_none.path(),
        "echo '{\"smartctl\":{\"messages\":[{\"string\":\"Unable to detect device type\"}],\"exit_status\":1}}'",
    );
    let before = sum(&d[0]);
    let (mut c, _state) = burnin_cmd();
    let out = c
        .env("PATH", format!("{}:{}", fake_none.path().display(), std::env::var("PATH").unwrap()))
        .args(["--destructive", "--yes", "--smart", "require", &d[0].dev])
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("smartctl cannot tell what kind of device it is")
            && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(sum(&d[0]), before);
}

#[test]
fn fake_capacity_shows_as_blocks_that_belong_elsewhere() {
    use crate::faults::FaultyDisk;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    // A "16 MiB" disk that stores 8: its upper half is its lower half.
    // Burned whole as asked (--range: no capacity probe first), a remap
    // the probe could not see reads back as blocks from elsewhere.
    let fake = FaultyDisk::aliased(16 * MIB, 8 * MIB, 0);
    let (out, doc) = burn(&["--block", "1m", "--range", "0..16m", &fake.dev]);
    assert_eq!(out.status.code(), Some(1));
    let disk = &doc["disks"][0];
    assert_eq!(disk["verdict"], "return", "{disk}");
    // The upper half was written last: the whole lower half reads back the
    // upper half's blocks, one range 8 MiB away.
    assert_eq!(disk["findings"].as_array().unwrap().len(), 1, "{disk}");
    let f = &disk["findings"][0];
    assert_eq!(
        (f["offset"].as_u64(), f["len"].as_u64(), f["class"].as_str()),
        (Some(0), Some(8 * MIB), Some("misdirected")),
        "{disk}"
    );
    let shift = format!("holds the blocks written {} bytes further on", 8 * MIB);
    assert!(f["detail"].as_str().unwrap().starts_with(&shift), "{f}");
    assert_eq!(disk["bad_bytes"][0], serde_json::json!(["misdirected", 8 * MIB]));
}

#[test]
fn a_fake_disk_is_burned_only_where_it_holds_data_and_returned() {
    use crate::faults::FaultyDisk;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    // The same "16 MiB" disk that stores 8, burned whole: the capacity
    // probe finds it first, and the burn-in never writes past 8 MiB.
    let fake = FaultyDisk::aliased(16 * MIB, 8 * MIB, 0);
    let good = disks(1, 16 * MIB);
    let (out, doc) = burn(&["--block", "1m", &fake.dev, &good[0].dev]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}: fake capacity: only the first 8.39 MB of the 16.78 MB announced hold data",
            fake.dev
        )),
        "{err}"
    );
    assert!(err.contains("burning only bytes 0..8388608"), "{err}");
    let disk = &doc["disks"][0];
    assert_eq!(disk["verdict"], "return", "{disk}");
    assert_eq!(
        (disk["end_byte"].as_u64(), disk["written_bytes"].as_u64()),
        (Some(8 * MIB), Some(8 * MIB))
    );
    assert_eq!(disk["probe"]["usable_bytes"].as_u64(), Some(8 * MIB), "{disk}");
    // What it holds read back right: its one finding is its capacity.
    assert_eq!(disk["findings"].as_array().map(Vec::len), Some(0), "{disk}");
    let advice = doc["summary"]["disk_verdicts"][0]["sentence"].as_str().unwrap();
    assert!(
        advice.contains("fake capacity")
            && advice.contains("only those were burned")
            && advice.contains("return it"),
        "{advice}"
    );
    // The real disk beside it: probed whole, burned whole.
    let other = &doc["disks"][1];
    assert_eq!(other["probe"]["usable_bytes"].as_u64(), Some(16 * MIB), "{other}");
    assert_eq!(other["written_bytes"].as_u64(), Some(16 * MIB), "{other}");
    assert_ne!(other["verdict"], "return", "{other}");
}

/// One disk's checkpoint in `state` (named by its kernel name: loop
/// devices have no serial).
fn checkpoint(state: &Path, dev: &str) -> serde_json::Value {
    let name = dev.trim_start_matches("/dev/");
    let path = state.join(format!("burnin-{name}.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn a_burn_in_killed_or_interrupted_resumes_where_it_stopped() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let size = 48 * MIB;
    let d = disks(2, size);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    // Writes throttled to 16 MB/s: each write phase takes 3 s.
    let t = writes_at(&d, 16_000_000);
    let state = tempdir();
    let st = state.path().to_str().unwrap();
    let dir = tempdir();
    let json = |n: u32| dir.path().join(format!("{n}.json"));
    let args = |n: u32, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["burnin", "--state", st, "--destructive", "--yes"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect();
        a.extend(["--json".into(), json(n).to_str().unwrap().into()]);
        a.extend(devs.iter().map(|s| s.to_string()));
        a
    };
    let written: Vec<u64> = devs.iter().map(|d| sectors_written(d)).collect();
    let written_since = |i: usize| (sectors_written(devs[i]) - written[i]) * 512;
    let spawn = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        t.command(&a).start()
    };
    // 1. Killed as a reboot would: the last checkpoint (at most 1 s old)
    // is where the run stands, and it names only flushed bytes.
    // (Quiet: no progress lines, though they would come every 0.2 s.)
    let child = spawn(args(
        1,
        &[
            "--passes",
            "2",
            "--checkpoint-every",
            "1s",
            "--smart",
            "off",
            "--progress",
            "none",
            "--progress-interval",
            "0.2s",
        ],
    ));
    // Killed once each disk's checkpoint names 8 MiB written (about 1 s
    // into its 3 s write phase): the event, not a fixed sleep, which a
    // loaded machine can outrun or fall behind.
    let saved = |dev: &str| {
        let path = state.path().join(format!("burnin-{}.json", dev.trim_start_matches("/dev/")));
        let c: Option<serde_json::Value> =
            std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok());
        c.is_some_and(|c| c["at"]["done_until"].as_u64().is_some_and(|d| d >= 8 * MIB))
    };
    let began = wait_for(MINUTE, || devs.iter().all(|d| saved(d)));
    let quiet = String::from_utf8_lossy(&child.kill().stderr).into_owned();
    assert!(began, "no checkpoint named 8 MiB written within a minute: {quiet}");
    assert!(quiet.contains("will DESTROY") && !quiet.contains(" burnin: /dev/"), "{quiet}");
    // Writes a killed process had in flight still land (the kernel ends
    // them after the process, and holds the disk open until then): wait
    // until each disk can be opened exclusively again.
    for x in &devs {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !is_free(x) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(is_free(x), "{x}: still held after the kill");
    }
    let killed: Vec<serde_json::Value> = devs.iter().map(|d| checkpoint(state.path(), d)).collect();
    for c in &killed {
        assert_eq!(c["at"]["phase"], "write", "{c}");
        let done = c["at"]["done_until"].as_u64().unwrap();
        assert!(done >= 8 * MIB && done < size, "{c}");
        assert_eq!(c["burn"]["written_bytes"].as_u64(), Some(done), "{c}");
    }
    // Without --resume the unfinished run is refused, nothing written.
    let sums: Vec<u64> = d.iter().map(sum).collect();
    let plain = |a: Vec<String>| {
        let out = Command::new(bin()).args(a).output_within(RUN);
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        out
    };
    let out = plain(args(9, &[]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unfinished burn-in (pass 1 of 2, write"), "{err}");
    assert!(err.contains("add --resume"), "{err}");
    assert_eq!(d.iter().map(sum).collect::<Vec<_>>(), sums);
    // 2. Resumed, then interrupted: exit 130 and the command that goes on.
    // Progress every 0.5 s: each disk's pass, phase and speed, and the ETA.
    let child =
        spawn(args(2, &["--resume", "--checkpoint-every", "1", "--progress-interval", "0.5s"]));
    let (out, took) = interrupt_after(child, std::time::Duration::from_millis(1500));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    for dev in &devs {
        assert!(
            err.lines()
                .any(|l| l.contains(&format!(" burnin: {dev} pass ")) && l.contains(" MB/s")),
            "{err}"
        );
    }
    assert!(err.contains("burnin: whole run ETA "), "{err}");
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
    let again = format!(
        "continue with:\n  arrayburn burnin --resume --destructive --yes --state {st} --json {} --progress-interval 0.5s --checkpoint-every 1s ",
        json(2).display()
    );
    assert!(err.contains(&again), "{err}");
    assert!(err.trim_end().ends_with(&devs.join(" ")), "{err}");
    let stopped: Vec<serde_json::Value> =
        devs.iter().map(|d| checkpoint(state.path(), d)).collect();
    // 3. Resumed to the end: the disks are burned whole, the report covers
    // all three runs, and this run wrote only what was left. Throttled as
    // the runs before: the disks stopped at different points, so had this
    // run written faster, the one with less left to write here would have
    // been slower over the whole burn-in and judged slow against the other.
    let before3: Vec<u64> = (0..2).map(written_since).collect();
    let a = args(3, &["--resume"]);
    let out = t
        .command(&a.iter().map(String::as_str).collect::<Vec<_>>())
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{report}");
    assert_eq!(out.status.code(), Some(0), "{err}\n{report}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(json(3)).unwrap()).unwrap();
    let first: serde_json::Value =
        serde_json::from_slice(&std::fs::read(json(2)).unwrap()).unwrap();
    assert_eq!(doc["run_id"], first["run_id"]);
    assert_eq!(doc["passes"], 2);
    for (i, disk) in doc["disks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(disk["verdict"], "healthy", "{disk}");
        assert_eq!(disk["resumes"], 2, "{disk}");
        assert_eq!(disk["verified_bytes"].as_u64(), Some(2 * size), "{disk}");
        assert_eq!(disk["written_bytes"].as_u64(), Some(2 * size), "{disk}");
        let c = &stopped[i]["at"];
        let (pass, done) = (c["pass"].as_u64().unwrap(), c["done_until"].as_u64().unwrap());
        let left = match (pass, c["phase"].as_str().unwrap()) {
            (1, "write") => 2 * size - done,
            (1, "verify") => size,
            (2, "write") => size - done,
            _ => 0,
        };
        assert_eq!(written_since(i) - before3[i], left, "{c}");
        assert_eq!(checkpoint(state.path(), devs[i])["at"]["phase"], "done");
    }
    // A checkpoint that is not this disk's (another size) is refused.
    let name = devs[0].trim_start_matches("/dev/");
    let path = state.path().join(format!("burnin-{name}.json"));
    let mut c = checkpoint(state.path(), devs[0]);
    c["at"]["phase"] = "write".into();
    c["size_bytes"] = (size * 2).into();
    std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
    let sums: Vec<u64> = d.iter().map(sum).collect();
    let out = plain(args(4, &["--resume"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not the disk checkpointed"), "{err}");
    assert_eq!(d.iter().map(sum).collect::<Vec<_>>(), sums);
    // One whose settings a later arrayburn wrote is refused as that
    // arrayburn's to resume, not as damaged (moving it away would lose it).
    c["size_bytes"] = size.into();
    c["settings"]["version"] = 99.into();
    std::fs::write(&path, serde_json::to_vec(&c).unwrap()).unwrap();
    let out = plain(args(5, &["--resume"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("of version 99") && err.contains("the arrayburn that began it"), "{err}");
    assert!(!err.contains("damaged") && err.trim().lines().count() == 1, "{err}");
    assert_eq!(d.iter().map(sum).collect::<Vec<_>>(), sums);
}

#[test]
fn a_read_only_soak_writes_nothing_and_finds_read_errors_and_a_disk_that_slows() {
    use crate::faults::FaultyDisk;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let size = 8 * MIB;
    // A healthy disk, one holding a filesystem mounted read-only (a soak
    // is for disks in use), one that slows after its first pass, one
    // with a bad range.
    let d = disks(3, size);
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F", &d[1].dev]).output_within(MINUTE);
    assert!(mkfs.status.success(), "{mkfs:?}");
    let mnt = tempdir();
    assert!(
        Command::new("mount")
            .args(["-o", "ro", &d[1].dev, mnt.path().to_str().unwrap()])
            .output_within(MINUTE)
            .status
            .success()
    );
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).output_within(MINUTE);
        }
    }
    let _u = Unmount(mnt.path());
    let bad = FaultyDisk::new(size, &[(5 * MIB, 8192)]);
    let t = Throttle::new();
    t.limit(&d[2], 6_000_000);
    let sums: Vec<u64> = d.iter().map(sum).collect();
    let written: Vec<u64> = d.iter().map(|x| sectors_written(&x.dev)).collect();
    let dir = tempdir();
    let json = dir.path().join("soak.json");
    let child = t
        .command(&[
            "burnin",
            "--read-only",
            "--passes",
            "3",
            "--smart",
            "off",
            // 1 MiB reads: at 2 MB/s each takes half a second, far from the
            // 2 s that would make it a stall (a finding of its own).
            "--block",
            "1m",
            "--json",
            json.to_str().unwrap(),
            "--progress-interval",
            "0.05s",
            &d[0].dev,
            &d[1].dev,
            &d[2].dev,
            &bad.dev,
        ])
        .start();
    // Pass 1 of the throttled disk takes about 1.4 s (over the second a
    // pass must last to be compared); from then on it reads at a third of
    // that. The limit changes when the progress lines show its
    // pass 2 (a fixed sleep raced a slow start under load).
    let marker = format!(" burnin: {} pass 2/3", d[2].dev);
    child.wait_line("the throttled disk's second pass", MINUTE, |l| l.contains(&marker));
    t.limit(&d[2], 2_000_000);
    let out = child.wait(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["read_only"], true);
    let verdicts: Vec<&str> =
        (0..4).map(|i| doc["disks"][i]["verdict"].as_str().unwrap()).collect();
    // The good disks: nothing found, read too fast to compare (8 MiB in
    // milliseconds), so not called healthy.
    assert_eq!(verdicts, ["not_judged", "not_judged", "recheck", "return"], "{doc}");
    for i in 0..3 {
        let disk = &doc["disks"][i];
        assert_eq!(disk["verified_bytes"].as_u64(), Some(3 * size), "{disk}");
        assert_eq!(disk["written_bytes"].as_u64(), Some(0), "{disk}");
        assert_eq!(disk["verify_pass_mb_per_s"].as_array().unwrap().len(), 3);
    }
    let slow = &doc["disks"][2]["verify_pass_mb_per_s"];
    let first = slow[0].as_f64().unwrap();
    // blk-throttle lets 4 MiB reads through in slices: a pass of two
    // blocks measured 77% to 109% of the limit.
    assert!((4.0..7.5).contains(&first), "{slow}");
    assert!(slow[2].as_f64().unwrap() < first * 0.6, "{slow}");
    // The new limit lands as pass 2 begins or partway through it: the
    // slower of passes 2 and 3 is named.
    let (pass, worst) = (1..3)
        .map(|i| (i + 1, slow[i].as_f64().unwrap()))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let said = format!("reads slowed to {worst:.0} MB/s in pass {pass}");
    assert!(text.contains(&said), "{said}: {text}");
    // Each pass finds the bad range, to the byte.
    let found: Vec<(u64, u64, u64, &str)> = doc["disks"][3]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["pass"].as_u64().unwrap(),
                f["offset"].as_u64().unwrap(),
                f["len"].as_u64().unwrap(),
                f["class"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, [1, 2, 3].map(|p| (p, 5 * MIB, 8192, "read_error")), "{doc}");
    // Nothing was written: the kernel's counters and the contents agree.
    for (i, x) in d.iter().enumerate() {
        assert_eq!(sectors_written(&x.dev), written[i], "{}", x.dev);
    }
    assert_eq!(d.iter().map(sum).collect::<Vec<_>>(), sums);
}

#[test]
fn the_drives_self_test_and_its_temperature_during_the_run_are_judged() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 32 << 20);
    // Writes at 16 MB/s: the run lasts over 2 s, so SMART is read during
    // it (--smart-every 1).
    let t = writes_at(&d, 16_000_000);
    let recorded = recorded_smart("ata");
    let with = |status: serde_json::Value, temp: i64| {
        let mut v = recorded.clone();
        v["ata_smart_data"]["self_test"]["status"] = status;
        v["temperature"]["current"] = temp.into();
        v
    };
    let running = serde_json::json!({"value": 241, "string": "in progress, 10% remaining", "remaining_percent": 10});
    let passed =
        serde_json::json!({"value": 0, "string": "completed without error", "passed": true});
    let failed = serde_json::json!({"value": 121, "string": "completed: read failure, 90% remaining", "passed": false});
    // Each device's readings in turn: before, two polls of the self-test,
    // a reading during the run, then the same to the end.
    let fake = tempdir();
    let plan = [(failed.clone(), [35, 35, 35, 36, 36]), (passed.clone(), [35, 35, 35, 66, 41])];
    for (x, (result, temps)) in d.iter().zip(&plan) {
        let name = x.dev.trim_start_matches("/dev/");
        let docs = [
            with(passed.clone(), temps[0]),
            with(running.clone(), temps[1]),
            with(result.clone(), temps[2]),
            with(result.clone(), temps[3]),
            with(result.clone(), temps[4]),
        ];
        for (n, doc) in docs.iter().enumerate() {
            std::fs::write(fake.path().join(format!("{name}.{n}.json")), doc.to_string()).unwrap();
        }
    }
    fake_smartctl(
        fake.path(),
        &format!(
            "case \"$*\" in *farm*) exit 1;; esac\ncase \"$1\" in -t) echo \"$2 $4\" >> {0}/started; exit 0;; -X) exit 0;; esac\nd=$(basename \"$3\"); f={0}/$d.n\nn=$(cat $f 2>/dev/null || echo 0); echo $((n+1)) > $f\n[ $n -gt 4 ] && n=4\ncat {0}/$d.$n.json",
            fake.path().display()
        ),
    );
    let state = tempdir();
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let out = t
        .command(&[
            "burnin",
            "--state",
            state.path().to_str().unwrap(),
            "--destructive",
            "--yes",
            "--smart-test",
            "short",
            "--smart-every",
            "1",
            "--slow-pct",
            "0",
            "--stall-ms",
            "60000",
            "--json",
            json.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
            &d[0].dev,
            &d[1].dev,
        ])
        .env("PATH", format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap()))
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1));
    let started = std::fs::read_to_string(fake.path().join("started")).unwrap();
    assert_eq!(
        started.lines().collect::<Vec<_>>(),
        [format!("short {}", d[0].dev), format!("short {}", d[1].dev)]
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let disk = |i: usize| &doc["disks"][i];
    assert_eq!(disk(0)["verdict"], "return", "{doc}");
    assert_eq!(disk(0)["self_test"]["state"], "failed");
    assert_eq!(disk(1)["self_test"]["state"], "passed");
    assert_eq!(disk(0)["hottest_c"], 36);
    // 66 °C was seen only during the run: before and after say 35 and 41.
    assert_eq!(disk(1)["hottest_c"], 66, "{doc}");
    // Each reading during the run is kept, in time order, and drawn.
    let series = |i: usize| -> Vec<(f64, i64)> {
        (disk(i)["temperatures"].as_array().unwrap().iter())
            .map(|r| (r["elapsed_s"].as_f64().unwrap(), r["celsius"].as_i64().unwrap()))
            .collect()
    };
    let (hot, cool) = (series(1), series(0));
    assert!(hot.iter().any(|r| r.1 == 66) && !cool.iter().any(|r| r.1 > 36), "{doc}");
    assert!(hot.windows(2).all(|w| w[0].0 < w[1].0) && hot[0].0 >= 1.0, "{hot:?}");
    let out_dir = dir.path().join("out");
    let svg = std::fs::read_to_string(out_dir.join("charts/temperature.svg")).unwrap();
    assert!(svg.contains("Temperature over the run"), "{svg}");
    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(page.contains("Temperature over the run"), "the chart inline");
    assert!(page.contains("<h2>SMART before and after</h2>"), "{page}");
    assert!(page.contains("temperature (hottest during the run: 66 °C)"), "{page}");
    assert_eq!(disk(1)["verdict"], "recheck");
    assert!(
        text.contains(
            "its SMART self-test failed (completed: read failure, 90% remaining), return it"
        ),
        "{text}"
    );
    assert!(text.contains("reached 66 °C during the run"), "{text}");
}

/// A fake smartctl in a new directory that serves the recorded SATA disk
/// (`fixtures/smart/ata.json`) as `doc` changes it, runs `extra` (sh)
/// first, and a PATH with it first.
fn recorded_smartctl(
    extra: &str,
    doc: impl Fn(&mut serde_json::Value),
) -> (tempfile::TempDir, String) {
    let fake = tempdir();
    let mut v: serde_json::Value = recorded_smart("ata");
    doc(&mut v);
    let file = fake.path().join("doc.json");
    std::fs::write(&file, v.to_string()).unwrap();
    fake_smartctl(fake.path(), &format!("{extra}\ncat {}", file.display()));
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    (fake, path)
}

/// A fake smartctl in a new directory that serves each disk its readings
/// in turn (the last one again once they run out), and a PATH with it
/// first.
fn smartctl_readings(
    disks: &[LoopDisk],
    readings: &[Vec<serde_json::Value>],
) -> (tempfile::TempDir, String) {
    let fake = tempdir();
    for (x, docs) in disks.iter().zip(readings) {
        let name = x.dev.trim_start_matches("/dev/");
        for (n, doc) in docs.iter().enumerate() {
            std::fs::write(fake.path().join(format!("{name}.{n}.json")), doc.to_string()).unwrap();
        }
        let last = docs.len() - 1;
        std::fs::write(fake.path().join(format!("{name}.last")), last.to_string()).unwrap();
    }
    fake_smartctl(
        fake.path(),
        &format!(
            // The inspection before the run (`-l farm`) is served the first
            // reading and not counted.
            "for a; do d=$a; done; d=$(basename \"$d\")\ncase \"$*\" in *farm*) cat {0}/$d.0.json; exit 0;; esac\nf={0}/$d.n\nn=$(cat $f 2>/dev/null || echo 0); echo $((n+1)) > $f\n[ $n -gt $(cat {0}/$d.last) ] && n=$(cat {0}/$d.last)\ncat {0}/$d.$n.json",
            fake.path().display()
        ),
    );
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    (fake, path)
}

#[test]
fn a_self_test_that_never_finishes_is_not_judged_and_a_limit_under_the_drives_own_is_said_first() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 16 << 20);
    // The drive says "in progress, 10% remaining" for ever; it says its
    // short test takes 2 min (its polling time), and arrayburn is told to
    // wait 2 s: that is said before anything runs, and the test still
    // running then is not a failed self-test ("self-test FAILED ... return
    // it" before): only the drive's own log saying so is.
    let (fake, path) = recorded_smartctl(
        "case \"$1\" in -t) exit 0;; -X) touch \"$(dirname \"$0\")/aborted\"; exit 0;; esac",
        |_| {},
    );
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let (mut c, _state) = burnin_cmd();
    let out = c
        .env("PATH", path)
        .args(["--destructive", "--yes", "--smart-test", "short", "--smart-test-timeout", "2s"])
        .args(NO_SPEED_JUDGED)
        .args(["--progress", "none", "--json"])
        .arg(&json)
        .args(d.iter().map(|x| &x.dev))
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{text}\n{err}");
    let warned = format!(
        "arrayburn burnin: warning: --smart-test-timeout 2.0 s is shorter than the 2 min 0 s {} says its short self-test takes: it will be aborted unfinished and not judged",
        d[0].dev
    );
    let (warning, writing) = (err.find(&warned), err.find("will DESTROY"));
    assert!(warning.is_some() && warning < writing, "not said before the run: {err}");
    assert_eq!(out.status.code(), Some(3), "not judged, not a finding");
    assert!(fake.path().join("aborted").exists(), "smartctl -X was not run");
    assert!(!text.contains("FAILED") && !text.contains("return it"), "{text}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for disk in doc["disks"].as_array().unwrap() {
        assert_eq!(disk["self_test"]["state"], "unfinished", "{disk}");
        let words = disk["self_test"]["detail"].as_str().unwrap_or_default();
        let want = "the short self-test did not finish within 2.0 s (the drive says it needs 2 min 0 s; 10% left): aborted, not judged";
        assert_eq!(words, want, "{disk}");
        assert_eq!(disk["verdict"], "not_judged", "{disk}");
        assert_eq!(disk["verified_bytes"], 16 << 20, "the burn-in went on: {disk}");
    }
}

#[test]
fn a_self_test_after_the_passes_and_the_drives_error_logs_are_judged() {
    need_root!();
    let _l = device_lock();
    let size: u64 = 16 << 20;
    let d = disks(2, size);
    let recorded = recorded_smart("ata");
    let passed =
        serde_json::json!({"value": 0, "string": "completed without error", "passed": true});
    let running = serde_json::json!({"value": 249, "string": "in progress, 90% remaining", "remaining_percent": 90});
    let failed =
        serde_json::json!({"value": 121, "string": "completed: read failure", "passed": false});
    // What a drive says after: its self-test's state, the newest entry of
    // its self-test log, and its error log (count and entries).
    let with = |status: &serde_json::Value, lba: Option<u64>, errors: &[(u64, &str)]| {
        let mut v = recorded.clone();
        v["ata_smart_data"]["self_test"]["status"] = status.clone();
        if let Some(lba) = lba {
            let log = &mut v["ata_smart_self_test_log"]["standard"]["table"][0];
            log["status"] = serde_json::json!({"value": 121, "string": "Completed: read failure", "passed": false});
            log["lba"] = lba.into();
        }
        let table: Vec<serde_json::Value> = (errors.iter().rev())
            .map(|(n, w)| serde_json::json!({"error_number": n, "error_description": w}))
            .collect();
        let count = errors.len();
        v["ata_smart_error_log"] = serde_json::json!({"summary": {"count": count, "table": table}});
        v
    };
    let clean = with(&passed, None, &[]);
    // Disk 0: passes; its log gains an aborted command (listed, not
    // judged). Disk 1: fails at an LBA; its log gains two uncorrectable
    // reads (the recorded Seagate's words).
    let unc = "Error: UNC at LBA = 0x0fffffff = 268435455";
    let ends = [
        with(&passed, None, &[(1, "Error: ABRT")]),
        with(&failed, Some(268435455), &[(1, unc), (2, unc)]),
    ];
    let fake = tempdir();
    for (x, end) in d.iter().zip(&ends) {
        let name = x.dev.trim_start_matches("/dev/");
        let docs = [&clean, &with(&running, None, &[]), end, end];
        for (n, doc) in docs.iter().enumerate() {
            std::fs::write(fake.path().join(format!("{name}.{n}.json")), doc.to_string()).unwrap();
        }
    }
    // Each self-test started is noted with the sectors its disk had had
    // written by then; every other call is served the disk's next reading
    // (the inspection's the first, not counted).
    fake_smartctl(
        fake.path(),
        &format!(
            "for a; do d=$a; done; d=$(basename \"$d\")\ncase \"$*\" in *farm*) cat {0}/$d.0.json; exit 0;; esac\ncase \"$1\" in -t) echo \"$2 $4 $(awk '{{print $7}}' /sys/block/$d/stat)\" >> {0}/started; exit 0;; -X) exit 0;; esac\nf={0}/$d.n\nn=$(cat $f 2>/dev/null || echo 0); echo $((n+1)) > $f\n[ $n -gt 3 ] && n=3\ncat {0}/$d.$n.json",
            fake.path().display()
        ),
    );
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let (mut c, _state) = burnin_cmd();
    let out = c
        .env("PATH", format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap()))
        .args(["--destructive", "--yes", "--smart-test-after", "long", "--progress", "none"])
        .args(NO_SPEED_JUDGED)
        .arg("--json")
        .arg(&json)
        .args(d.iter().map(|x| &x.dev))
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{text}\n{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Started after every block was written, each disk's long test.
    let started = std::fs::read_to_string(fake.path().join("started")).unwrap();
    let lines: Vec<Vec<&str>> = started.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 2, "{started}");
    for (l, x) in lines.iter().zip(&d) {
        assert_eq!((l[0], l[1]), ("long", x.dev.as_str()), "{started}");
        let sectors: u64 = l[2].parse().unwrap();
        assert!(sectors * 512 >= size, "started before the disk was written whole: {started}");
    }
    assert!(
        err.contains("running the drives' long SMART self-test after the burn-in (the drives expect up to 1479 min; waiting at most 30 h 48 min)"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let disk = |i: usize| &doc["disks"][i];
    let log_delta = |i: usize| {
        (disk(i)["smart"]["deltas"].as_array().unwrap().iter())
            .find(|x| x["name"] == "ATA error log entries")
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(disk(0)["self_test_after_kind"], "long");
    assert_eq!(disk(0)["self_test_after"]["state"], "passed", "{doc}");
    assert_eq!(
        (log_delta(0)["kind"].as_str(), log_delta(0)["after"].as_u64()),
        (Some("logged"), Some(1))
    );
    assert_ne!(disk(0)["verdict"], "return", "an aborted command is listed, not judged: {doc}");
    assert_eq!(disk(1)["self_test_after"]["state"], "failed", "{doc}");
    assert_eq!(
        disk(1)["self_test_after"]["detail"],
        "completed: read failure; first error at LBA 268435455"
    );
    assert_eq!(
        (log_delta(1)["kind"].as_str(), log_delta(1)["after"].as_u64()),
        (Some("media"), Some(2))
    );
    assert_eq!(disk(1)["verdict"], "return");
    assert!(
        text.contains("long self-test after the burn-in FAILED: completed: read failure"),
        "{text}"
    );
    assert!(
        text.contains("its SMART self-test failed (long self-test after the burn-in: completed: read failure; first error at LBA 268435455)"),
        "{text}"
    );
    assert!(text.contains("SMART ATA error log entries 0 → 2"), "{text}");
    // Disk 0's aborted command: listed apart, in no fault's words.
    let logged = format!("SMART {}: logged, not judged: ATA error log entries 0 → 1", d[0].dev);
    assert!(text.contains(&logged), "{text}");
    assert!(!text.contains(&format!("SMART {}: rose during", d[0].dev)), "{text}");
}

#[test]
fn a_signal_while_smart_is_read_after_the_burn_in_ends_it_interrupted() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 16 << 20);
    // The reading after the run (the second call) takes 30 s.
    let (fake, path) = recorded_smartctl(
        // The inspection's call (`-l farm`) before the run is not counted.
        "dir=$(dirname \"$0\"); case \"$*\" in *farm*) ;; *) n=$(cat $dir/n 2>/dev/null || echo 0); echo $((n+1)) > $dir/n\n\
         [ $n -ge 1 ] && { touch $dir/after; sleep 30; } ;; esac",
        |_| {},
    );
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let (mut c, _state) = burnin_cmd();
    let child = c
        .env("PATH", path)
        .args(["--destructive", "--yes", "--progress", "none", "--json"])
        .arg(&json)
        .arg(&d[0].dev)
        .start();
    let after = fake.path().join("after");
    let mut child = child;
    child.wait_until("SMART read after the run", MINUTE, || after.exists());
    let (out, took) = child.interrupt(MINUTE);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    assert_eq!(out.status.code(), Some(130));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true, "{doc}");
}

#[test]
fn a_crash_mid_verify_keeps_each_passes_time_whole() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let d = disks(2, 64 * MIB);
    // Reads at 32 MB/s: each verify lasts 2 s, every pass alike; writes
    // at 48 MB/s (the throttle's pace, not a loaded CPU's).
    let t = Throttle::new();
    for x in &d {
        t.limit(x, 32_000_000);
        t.limit_write(x, 48_000_000);
    }
    let state = tempdir();
    let st = state.path().to_str().unwrap();
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let mut args = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    args.extend(["--progress", "none", "--checkpoint-every", "1"]);
    // What it asserts is each pass's time, the disk's own: not judged
    // against peers (a fresh CI run beside the shared tests wrote one disk
    // at 37 MB/s against its peer's 44, re-measured it once and could not
    // decide: exit 3, the machine's doing, not the throttle's).
    args.push("--not-against-peers");
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let first: Vec<&str> =
        args.iter().copied().chain(["--passes", "2"]).chain(devs.iter().copied()).collect();
    let mut child = t.command(&first).start();
    // Killed once both checkpoints are partway through pass 1's verify.
    let mid_verify = |x: &LoopDisk| {
        std::fs::read(state.path().join(format!("burnin-{}.json", x.name())))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|c| {
                c["at"]["pass"] == 1
                    && c["at"]["phase"] == "verify"
                    && c["at"]["done_until"].as_u64() > Some(0)
            })
    };
    child.wait_until("both checkpoints partway through pass 1's verify", MINUTE, || {
        d.iter().all(mid_verify)
    });
    child.kill();
    let resume: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--resume", "--json", json.to_str().unwrap()])
        .chain(devs.iter().copied())
        .collect();
    let out = t.command(&resume).output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
    // Pass 1's time counts from its start, not from the resume: its speed
    // is pass 2's, and no disk "slowed".
    assert_eq!(out.status.code(), Some(0), "{text}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for disk in doc["disks"].as_array().unwrap() {
        let p = disk["verify_pass_mb_per_s"].as_array().unwrap();
        let (p1, p2) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
        assert!(p1 < 1.3 * p2 && p2 < 1.3 * p1, "pass 1 {p1} MB/s, pass 2 {p2}: {disk}");
    }
}

#[test]
fn the_command_printed_at_an_interrupt_goes_on_with_every_output() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 32 << 20);
    // Writes at 8 MB/s: the run lasts 4 s.
    let t = writes_at(&d, 8_000_000);
    let state = tempdir();
    let dir = tempdir();
    let json = dir.path().join("first run.json");
    let out = dir.path().join("bundle");
    let metrics = dir.path().join("burnin.prom");
    let st = state.path().to_str().unwrap();
    let mut first = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    first.extend(["--progress-interval", "0.2s", "--json", json.to_str().unwrap()]);
    first.extend(["--out", out.to_str().unwrap(), "--metrics", metrics.to_str().unwrap()]);
    // How it judges goes on too (a resume that forgot --not-against-peers would
    // judge the speeds the run was told not to).
    first.extend(NO_SPEED_JUDGED);
    first.extend(d.iter().map(|x| x.dev.as_str()));
    // Interrupted once it writes (its first progress line), then again.
    let interrupt_writing = |child: Child| {
        child.wait_line("its first progress line", MINUTE, |l| {
            l.contains(" write ") && l.contains(" burnin: /dev/")
        });
        let (out, _) = child.interrupt(MINUTE);
        let seen = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{seen}");
        (seen.split_once("continue with:\n  ").and_then(|x| x.1.lines().next()))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no command to go on: {seen}"))
    };
    let line = interrupt_writing(t.command(&first).start());
    // Each checkpoint keeps the settings it began with, typed.
    for x in &d {
        let c = checkpoint(state.path(), &x.dev);
        let s = &c["settings"];
        assert_eq!(s["version"], 1, "{c}");
        assert_eq!(s["outputs"]["json"].as_str(), json.to_str(), "{s}");
        assert_eq!(s["outputs"]["metrics"].as_str(), metrics.to_str(), "{s}");
        assert_eq!(
            (&s["smart"], &s["slow_pct"], &s["stall_ms"]),
            (&"off".into(), &0.0.into(), &60000.into()),
            "{s}"
        );
    }
    // Short: the state, how it was watched, the disks; every other
    // setting is the checkpoint's, which the resume takes.
    assert!(line.contains(&format!("--state {st} --progress-interval 0.2s /dev/")), "{line}");
    for flag in ["--json", "--out ", "--metrics ", "--smart", "--not-against-peers", "--stall-ms"] {
        assert!(!line.contains(flag), "{flag} in {line}");
    }
    // The printed command, run as printed (by a shell), goes on; stopped
    // again, it prints the same command.
    let shell = format!("exec '{}' {}", bin(), line.strip_prefix("arrayburn ").unwrap());
    let again = interrupt_writing(t.command_of("sh", &["-c", &shell]).start());
    assert_eq!(again, line);
    // A plain --resume finishes the outputs the first command named, and
    // judges as it said: also from checkpoints as the release before typed
    // settings wrote them (their command line alone).
    std::fs::remove_file(&metrics).unwrap();
    for x in &d {
        let mut c = checkpoint(state.path(), &x.dev);
        assert!(c.as_object_mut().unwrap().remove("settings").is_some());
        std::fs::write(state.path().join(format!("burnin-{}.json", x.name())), c.to_string())
            .unwrap();
    }
    let mut last = vec!["burnin", "--state", st, "--destructive", "--yes", "--resume"];
    last.extend(d.iter().map(|x| x.dev.as_str()));
    let done = t.command(&last).output_within(RUN);
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    for doc in [json.clone(), out.join("report.json")] {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&doc).unwrap()).unwrap();
        assert_eq!(v["interrupted"], false, "{}: {v}", doc.display());
        assert_eq!(
            v["disks"][0]["burn"]["resumes"].as_u64().or(v["disks"][0]["resumes"].as_u64()),
            Some(2)
        );
        let msg = v["summary"]["message"].as_str().unwrap();
        assert!(
            msg.contains("Speeds were not judged against peers (--not-against-peers)."),
            "{msg}"
        );
        // Its plan's estimate rested on this run's own speeds so far.
        let plan = &v["plan"]["disks"][0];
        assert_eq!(plan["basis"], "this_run", "{v}");
        assert!(plan["left_s"].as_f64().is_some_and(|s| s > 0.0), "{plan}");
    }
    assert!(metrics.exists(), "the resume wrote the first command's --metrics");
}

#[test]
fn garbled_never_written_and_torn_blocks_are_told_apart() {
    use crate::faults::FaultyDisk;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    // One disk: bit 0 of every byte flipped on the way back (the header's
    // magic too) at 1 MiB, writes dropped at 2 MiB (a fresh disk keeps its
    // zeros), writes torn after their first sector at 3 MiB.
    let d = FaultyDisk::garbling(8 * MIB, &[(MIB, 4096)], &[(2 * MIB, 8192)], &[(3 * MIB, 4096)]);
    let (out, doc) = burn(&["--smart", "off", &d.dev]);
    assert_eq!(out.status.code(), Some(1));
    let findings: Vec<(u64, u64, String, String)> = doc["disks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["offset"].as_u64().unwrap(),
                f["len"].as_u64().unwrap(),
                f["class"].as_str().unwrap().to_string(),
                f["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let at = |o: u64| {
        findings.iter().find(|f| f.0 == o).unwrap_or_else(|| panic!("nothing at {o}: {findings:?}"))
    };
    let garbled = at(MIB);
    assert_eq!((garbled.1, garbled.2.as_str()), (4096, "corrupted"), "{garbled:?}");
    assert!(garbled.3.starts_with("bit 0 flipped in 4096 byte(s), one bit each"), "{garbled:?}");
    let zeros = at(2 * MIB);
    assert_eq!((zeros.1, zeros.2.as_str()), (8192, "zeros"), "{zeros:?}");
    assert!(zeros.3.contains("never written"), "{zeros:?}");
    let torn = at(3 * MIB);
    assert_eq!((torn.1, torn.2.as_str()), (4096, "corrupted"), "{torn:?}");
    assert!(torn.3.starts_with("torn: its first 1 of 8 sectors"), "{torn:?}");
    assert_eq!(findings.len(), 3, "{findings:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("zeros (never written): reads back as zeros"), "{text}");
}

#[test]
fn a_smartctl_too_old_for_a_drive_s_self_test_is_not_asked_and_what_it_lacks_is_said() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 16 << 20);
    // smartctl 7.3 and an NVMe drive: 7.3 neither starts an NVMe self-test
    // nor gives the drive's own temperature limits.
    let fake = tempdir();
    let doc = fake.path().join("nvme.json");
    std::fs::write(&doc, smart_of_release("nvme", "7.3").to_string()).unwrap();
    let dir = fake.path().display();
    crate::util::fake_smartctl(
        fake.path(),
        "7.3",
        &format!(
            "case \"$1\" in -t) echo \"$*\" >> {dir}/started; exit 0;; esac\ncat {}",
            doc.display()
        ),
    );
    let path = format!("{dir}:{}", std::env::var("PATH").unwrap());
    let out_dir = tempdir();
    let json = out_dir.path().join("b.json");
    let (mut c, _state) = burnin_cmd();
    let out = c
        .env("PATH", path)
        .args(["--destructive", "--yes", "--smart-test", "short", "--progress", "none", "--json"])
        .arg(&json)
        .arg(&d[0].dev)
        .stdin(std::process::Stdio::null())
        .output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!fake.path().join("started").exists(), "a self-test was started");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let disk = &doc["disks"][0];
    let words = disk["self_test"]["detail"].as_str().unwrap_or_default();
    assert!(
        words.contains("NVMe self-tests (`-t short`, `-t long` and their log) need smartctl 7.4 or later; this host has 7.3"),
        "{disk}"
    );
    assert_eq!(disk["findings"], serde_json::json!([]), "what was not asked is no finding: {disk}");
    // Asked and not run: its health is not claimed.
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains(&format!(
            "not decided: {} (the short self-test asked was not run: NVMe self-tests",
            d[0].dev
        )),
        "{text}"
    );
    assert!(
        text.contains("not read: an NVMe drive's own temperature limits need smartctl 7.5 or later; this reading came from smartctl 7.3"),
        "{text}"
    );
    assert!(!text.contains("INVALID ARGUMENT") && !text.contains("smartctl -h"), "{text}");
    // One release is this host's: the one asked of it.
    let all = format!("{text}{doc}");
    let mut hosts: Vec<&str> = all.split("this host has ").skip(1).map(|w| &w[..3]).collect();
    hosts.dedup();
    assert_eq!(hosts, ["7.3"], "{all}");
}

#[test]
fn the_real_smartctl_s_answer_for_a_disk_without_smart_is_one_line_naming_it_once() {
    need_root!();
    if !tools_here(&["smartctl"], "smartmontools") {
        return;
    }
    let _l = device_lock();
    let d = disks(1, 16 << 20);
    let out = burnin(&["--destructive", "--yes", "--progress", "none", &d[0].dev]);
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "burned whole, its health not claimed: {text}");
    assert!(!text.contains("INVALID ARGUMENT") && !text.contains("smartctl -h"), "{text}");
    let lines: Vec<&str> =
        text.lines().filter(|l| l.contains("cannot tell what kind of device")).collect();
    assert!(!lines.is_empty(), "{text}");
    for l in lines {
        assert!(l.matches(&d[0].dev).count() <= 1, "{l}");
    }
}

/// A burn-in of `d` inside throttle `t`, SMART read every second from a
/// fake smartctl that gives each disk its `readings` in turn (the last
/// again from then on): its output and its JSON.
fn burn_with_smart(
    t: &Throttle,
    d: &[LoopDisk],
    readings: &[Vec<serde_json::Value>],
) -> (std::process::Output, serde_json::Value) {
    let (_fake, path) = smartctl_readings(d, readings);
    let state = tempdir();
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let mut args = vec!["burnin", "--state", state.path().to_str().unwrap()];
    args.extend(["--destructive", "--yes", "--wipe-signatures", "--smart-every", "1"]);
    // No speed judged: the temperatures are this helper's tests' question.
    args.extend(NO_SPEED_JUDGED);
    args.extend(["--progress", "none", "--json", json.to_str().unwrap()]);
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let out = t.command(&args).env("PATH", path).output_within(RUN);
    let doc = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (out, doc)
}

#[test]
fn temperatures_are_judged_against_the_drives_own_limits() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 32 << 20);
    // Writes at 16 MB/s: the run lasts over 2 s, so SMART is read during
    // it (--smart-every 1).
    let t = writes_at(&d, 16_000_000);
    // Two recorded NVMe drives that say they warn at 80 °C: both at 72 °C
    // under write load (fine: NVMe drives run so), and the second counts
    // minutes above its warning temperature during the run.
    let recorded = recorded_smart("nvme");
    let reading = |temp: i64, minutes: u64| {
        let mut v = recorded.clone();
        v["temperature"]["current"] = temp.into();
        v["nvme_composite_temperature_threshold"] =
            serde_json::json!({"warning": 80, "critical": 85});
        v["nvme_smart_health_information_log"]["warning_temp_time"] = minutes.into();
        v
    };
    let readings: Vec<Vec<serde_json::Value>> =
        [0, 3].into_iter().map(|later| vec![reading(40, 0), reading(72, later)]).collect();
    let (out, doc) = burn_with_smart(&t, &d, &readings);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{text}");
    let disk = |i: usize| &doc["disks"][i];
    assert_eq!(disk(0)["hottest_c"], 72);
    assert_eq!(disk(0)["temperature_limit"]["warning_c"], 80, "{doc}");
    assert_eq!(disk(0)["verdict"], "healthy", "72 °C under its own 80 °C");
    assert_eq!(disk(1)["verdict"], "recheck", "{doc}");
    assert!(
        text.contains(
            "SMART NVMe minutes above its warning temperature 0 → 3: check the chassis cooling"
        ),
        "{text}"
    );
    assert!(
        text.contains("(its limit: 80 °C, its own warning composite temperature threshold"),
        "{text}"
    );
}

#[test]
fn a_request_that_stalls_is_judged_without_peers() {
    use crate::faults::FaultyDisk;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    // One disk answers a read at 4 MiB after 2.5 s (a sector the drive
    // retried), beside a disk of another size: no peer to compare either
    // with. The stall is the disk's own evidence; the other disk's health
    // is not claimed.
    let slow = FaultyDisk::slow_file(8 * MIB, &[(4 * MIB, 4096, 2_500_000)]);
    let other = disks(1, 16 * MIB);
    let dir = tempdir();
    let record = dir.path().join("recording.json");
    let record = record.to_str().unwrap();
    let args = ["--smart", "off", "--block", "1m", "--record", record, &slow.dev, &other[0].dev];
    let (out, doc) = burn_in(None, &args);
    // What it measured replays to the report it gave.
    crate::replay::assert_burn_replays(Path::new(record), &doc);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let disk = |i: usize| &doc["disks"][i];
    assert_eq!(disk(0)["verdict"], "return", "{doc}");
    assert_eq!(disk(1)["verdict"], "not_judged", "{doc}");
    let s = &disk(0)["slowest"];
    assert_eq!((s["phase"].as_str(), s["offset"].as_u64()), (Some("verify"), Some(4 * MIB)), "{s}");
    // The time it had the disk to itself starts when the read before it
    // ended; the fake's 2.5 s start when the FUSE daemon took the request,
    // which can be a moment before (measured: 2499.75 ms).
    assert!(s["ms"].as_f64().unwrap() >= 2000.0, "{s}");
    assert!(disk(0)["slow_requests"].as_u64() >= Some(1), "{s}");
    assert!(disk(1)["slowest"]["ms"].as_f64().unwrap() < 2000.0, "{doc}");
    assert!(text.contains("a read at byte 4194304 in pass 1 took"), "{text}");
    assert!(text.contains(&format!("not judged: {} (speed not compared", other[0].dev)), "{text}");
    // The burn-in takes --stall-ms as the check does: at 3000, 2.5 s is
    // no stall (the same measurements, judged again).
    let mut again = crate::replay::burn_recording(Path::new(record));
    again.run.thresholds.stall_ms = 3000.0;
    let doc = crate::replay::burn_replayed(&again);
    assert_eq!(doc["exit_status"], 3, "{}", doc["summary"]);
    assert_eq!(doc["disks"][0]["verdict"], "not_judged", "{doc}");
    assert!(doc["disks"][0]["slowest"]["ms"].as_f64().unwrap() >= 2000.0, "{doc}");
}

#[test]
fn a_stop_with_slow_writes_in_flight_is_no_finding_with_either_engine() {
    need_root!();
    let _l = device_lock();
    // Writes held to 2.2 MB/s, four 4 MiB requests in flight per disk:
    // a stop leaves about 8 s of writes to land, longer than it waits for
    // them, and the flush after them cannot be asked for sooner. That is
    // the stop's, not the disks'.
    let d = disks(3, 64 << 20);
    let t = writes_at(&d, 2_200_000);
    for engine in ["io_uring", "psync"] {
        let (state, results) = (tempdir(), tempdir());
        let json = results.path().join("r.json");
        let mut args = vec!["burnin", "--state", state.path().to_str().unwrap()];
        args.extend(["--destructive", "--yes", "--smart", "off", "--wipe-signatures"]);
        args.extend(["--engine", engine, "--queue-depth", "4", "--block", "4m"]);
        args.extend(["--progress-interval", "0.2s", "--json", json.to_str().unwrap()]);
        args.extend(d.iter().map(|x| x.dev.as_str()));
        let child = t.command(&args).start();
        child.wait_line("writes under way", MINUTE, |l| {
            l.contains(" write ") && l.contains(" MB/s")
        });
        child.signal(nix::sys::signal::Signal::SIGTERM);
        let out = child.wait(MINUTE);
        let text = String::from_utf8_lossy(&out.stdout);
        eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(130), "{engine}");
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(doc["interrupted"], true, "{engine}: {doc}");
        assert_ne!(doc["summary"]["verdict"], "flagged", "{engine}: {doc}");
        assert_eq!(doc["summary"]["disk_verdicts"], serde_json::json!([]), "{engine}: {doc}");
        for disk in doc["disks"].as_array().unwrap() {
            assert_eq!(disk["findings"], serde_json::json!([]), "{engine}: {disk}");
            assert_eq!(disk["verdict"], "interrupted", "{engine}: {disk}");
        }
        assert!(!text.contains("return it") && !text.contains("not flushed"), "{engine}: {text}");
        // What a stop left in flight has landed before the next run.
        for x in &d {
            assert!(wait_for(MINUTE, || is_free(&x.dev)), "{}: still held", x.dev);
        }
    }
}

#[test]
fn a_disk_slow_only_while_every_disk_was_written_is_re_measured_alone_and_cleared() {
    need_root!();
    let _l = device_lock();
    // Three disks whose writes are held to 20 MB/s, one of them to 14
    // (70 %) while every disk is written: a limit they share (a busy CPU, a controller) gives them
    // unequal shares the same way. When the run re-measures that disk
    // alone, in turn with a peer, its limit is lifted to its peers': it was
    // the sharing, not the disk, and the disk is not blamed. (The same
    // array without the lift, slow alone too, is blamed with both figures:
    // replay::a_disk_slow_alone_too_is_blamed_with_both_figures, recorded.)
    // 192 MiB: a re-measurement may take the burning's own time (here
    // about 20 s), and two batches of turns at these speeds need 14 s of
    // it. Timed, not paced: beside the shared tests one turn in four read
    // low and the turns straddled the threshold (tests/util/lock.rs).
    let d = disks(3, 192 << 20);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let t = writes_at(&d, 20_000_000);
    t.limit_write(&d[1], 14_000_000);
    // Reads held alike, so that only the writes differ.
    for x in &d {
        t.limit(x, 30_000_000);
    }
    let (child, said, json, _dirs) = burn_until_re_measured(&t, &devs);
    assert!(said.contains(&format!("{}: slower than its peers", devs[1])), "{said}");
    assert!(said.ends_with(&format!("in turn with {}", devs[0])) || said.ends_with(devs[2]));
    t.limit_write(&d[1], 20_000_000);
    let out = child.wait(RUN);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // Slow only while every disk ran: cleared, and the run says why.
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let disk = &doc["disks"][1];
    assert!(disk["write_pct_of_peers"].as_f64().unwrap() < 80.0, "{disk}");
    let again = &disk["remeasured"];
    assert_eq!(again["write"]["verdict"], "ok", "{again}");
    assert!(again["write"]["turns"].as_u64() >= Some(4), "{again}");
    assert_eq!(disk["verdict"], "healthy", "{disk}");
    assert!(doc["disks"][0]["remeasured"].is_null() && doc["disks"][2]["remeasured"].is_null());
    let msg = doc["summary"]["message"].as_str().unwrap();
    assert!(msg.starts_with("HEALTHY"), "{msg}");
    assert!(msg.contains(&format!("only while every disk ran at once, and at their peer's speed re-measured alone in turn: {}", devs[1])), "{msg}");
}

#[test]
fn two_disks_slow_only_while_every_disk_was_written_share_the_rounds_of_one_peer_and_are_cleared() {
    need_root!();
    let _l = device_lock();
    // Four disks whose writes are held to 20 MB/s, two of them to 14 while
    // every disk is written (a shared limit handing out unequal shares),
    // lifted when the re-measurement begins. Both suspects are read alone
    // in the same rounds beside the one peer nearest the median (one peer
    // turn a round serves both), in the time the burning took, and both
    // are cleared. 160 MiB: a batch of turns at these speeds needs about
    // 11 s of the burning's 17.
    let d = disks(4, 160 << 20);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let t = writes_at(&d, 20_000_000);
    t.limit_write(&d[1], 14_000_000).limit_write(&d[2], 14_000_000);
    for x in &d {
        t.limit(x, 30_000_000);
    }
    let (child, said, json, _dirs) = burn_until_re_measured(&t, &devs);
    assert!(said.contains("slower than its peers"), "{said}");
    t.limit_write(&d[1], 20_000_000).limit_write(&d[2], 20_000_000);
    let out = child.wait(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(err.contains("2 disk(s) slower than their peers with every disk at once: re-measuring each alone, in rounds beside a peer, for at most"), "{err}");
    let peers: Vec<&serde_json::Value> =
        [1usize, 2].iter().map(|i| &doc["disks"][*i]["remeasured"]).collect();
    for (i, again) in [1usize, 2].into_iter().zip(&peers) {
        assert!(
            doc["disks"][i]["write_pct_of_peers"].as_f64().unwrap() < 92.0,
            "{}",
            doc["disks"][i]
        );
        assert_eq!(again["write"]["verdict"], "ok", "{again}\n{err}");
        assert!(again["write"]["turns"].as_u64() >= Some(4), "{again}");
        assert_eq!(doc["disks"][i]["verdict"], "healthy", "{text}");
    }
    assert_eq!(peers[0]["beside"], peers[1]["beside"], "one peer for both");
    // The peer read once a round for both: the run says how many turns.
    let turns = |a: &serde_json::Value| a["write"]["turns"].as_u64().unwrap();
    let line = err.lines().find(|l| l.contains("re-measured in")).expect("the closing line");
    let total: u64 = line.split('(').nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(
        total < 2 * (turns(peers[0]) + turns(peers[1])),
        "{line}: fewer than a pair of turns a suspect"
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
}

/// A burn-in of `devs` in 1 MiB blocks inside `t`, under way until it
/// says it re-measures a disk alone: the child, that line, and the JSON it
/// will write (in the directories returned).
fn burn_until_re_measured(
    t: &Throttle,
    devs: &[&str],
) -> (Child, String, std::path::PathBuf, [tempfile::TempDir; 2]) {
    let (dir, state) = (tempdir(), tempdir());
    let json = dir.path().join("b.json");
    let mut a = vec!["burnin", "--state", state.path().to_str().unwrap()];
    a.extend(["--destructive", "--yes", "--smart", "off", "--block", "1m"]);
    a.extend(["--json", json.to_str().unwrap()]);
    a.extend(devs);
    let child = t.command(&a).start();
    let said = child
        .wait_line("the re-measurement to begin", RUN, |l| l.contains("re-measuring it alone"));
    (child, said, json, [dir, state])
}

#[test]
fn two_disks_each_slower_in_one_phase_are_both_re_measured_and_cleared() {
    need_root!();
    let _l = device_lock();
    // Two disks, each slower than the other in one phase while both run:
    // the first's writes held to 14 MB/s against 20, the second's reads to
    // 21 against 30. Neither had a clean peer to be re-measured beside, so
    // both were told to be moved and burned again (a full suite's load once
    // did this to two healthy disks). Now each is re-measured beside the
    // other, with the limits made equal: both cleared. (192 MiB: two
    // batches of turns fit in the burning's own time, about 20 s; beside
    // the shared tests one turn read 87 % and four straddled 92 %.)
    let d = disks(2, 192 << 20);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let t = writes_at(&d, 20_000_000);
    t.limit_write(&d[0], 14_000_000);
    t.limit(&d[0], 30_000_000);
    t.limit(&d[1], 21_000_000);
    let (child, said, json, _dirs) = burn_until_re_measured(&t, &devs);
    assert!(said.contains(&format!("{}: slower than its peers", devs[0])), "{said}");
    assert!(said.ends_with(&format!("in turn with {}", devs[1])), "{said}");
    t.limit_write(&d[0], 20_000_000);
    t.limit(&d[1], 30_000_000);
    let out = child.wait(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let (first, second) = (&doc["disks"][0], &doc["disks"][1]);
    assert!(first["write_pct_of_peers"].as_f64().unwrap() < 92.0, "{first}");
    assert!(second["verify_pct_of_peers"].as_f64().unwrap() < 92.0, "{second}");
    assert_eq!(first["remeasured"]["write"]["verdict"], "ok", "{first}");
    assert_eq!(second["remeasured"]["verify"]["verdict"], "ok", "{second}");
    for disk in [first, second] {
        assert_eq!(disk["verdict"], "healthy", "{disk}");
    }
}

#[test]
fn readings_no_sensor_can_make_are_named_and_not_believed() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 32 << 20);
    let t = writes_at(&d, 16_000_000);
    // Two recorded NVMe drives: the first's sensor reads 300 °C once during
    // the run (a sensor or firmware fault, not a fire: "check the chassis
    // cooling" was said, and the chart scaled to it; now it is named as
    // what it is, with when it came); the second runs at 90 °C while its
    // limits read 1 °C (no drive is rated so: not believed, the NVMe
    // default, 75 °C, applies, and it is too hot).
    let recorded = recorded_smart("nvme");
    let reading = |temp: i64, limit: i64| {
        let mut v = recorded.clone();
        v["temperature"]["current"] = temp.into();
        v["nvme_composite_temperature_threshold"] =
            serde_json::json!({"warning": limit, "critical": limit});
        v
    };
    let readings = [
        vec![reading(40, 80), reading(300, 80), reading(41, 80)],
        vec![reading(90, 1), reading(90, 1)],
    ];
    let (out, doc) = burn_with_smart(&t, &d, &readings);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let disk = |i: usize| &doc["disks"][i];
    assert_eq!(disk(0)["hottest_c"], 41, "{}", disk(0));
    assert_eq!(disk(0)["verdict"], "healthy", "{}", disk(0));
    assert_eq!(disk(1)["temperature_limit"]["warning_c"], 75, "{}", disk(1));
    assert_eq!(disk(1)["verdict"], "recheck", "{}", disk(1));
    assert!(text.contains("not believed: warning limit 1 °C (outside the 40..100 °C"), "{text}");
    let fault = disk(0)["sensor_faults"][0].as_str().unwrap_or_default();
    assert!(
        fault.starts_with("at ") && fault.contains("into the run: temperature 300 °C"),
        "{}",
        disk(0)
    );
    assert!(text.contains(&format!("not believed: {fault}")), "{text}");
    assert_eq!(
        disk(1)["sensor_faults"],
        serde_json::Value::Null,
        "said before the run: {}",
        disk(1)
    );
    // The result is the fleet's too: `report` reads it (it refused the
    // 300 °C as a damaged file).
    let dir = tempdir();
    let json = dir.path().join("b.json");
    std::fs::write(&json, doc.to_string()).unwrap();
    let out = arrayburn(&["report", json.to_str().unwrap()]).output_within(RUN);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_disk_not_judged_is_not_drawn_as_one_to_act_on() {
    use crate::check::{FLAGGED_RED, count_colour, decode_png};
    need_root!();
    let _l = device_lock();
    // A lone disk has no peers: nothing found, its speed not compared, so
    // not judged; its line on the charts is not the red of "to act on".
    let d = disks(1, 16 << 20);
    let dir = tempdir();
    let bundle = dir.path().join("out");
    let (out, doc) = burn(&["--block", "1m", "--out", bundle.to_str().unwrap(), &d[0].dev]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(doc["disks"][0]["verdict"], "not_judged", "{}", doc["disks"][0]);
    let png = decode_png(&bundle.join("charts/surface-write-pass1.png"));
    assert_eq!(count_colour(&png, FLAGGED_RED), 0, "a disk not judged drawn red");
    // On its page: marked as not decided, nothing as a fault.
    let page = std::fs::read_to_string(bundle.join("report.html")).unwrap();
    assert!(page.contains("<td class=\"unsure\">not_judged</td>"), "{page}");
    assert!(!page.contains("class=\"bad\""), "{page}");
}

/// A soak whose --duration ends before a disk is read whole once: nothing
/// found, but "read whole in every pass" is not claimed (it once was,
/// HEALTHY of disks read a quarter through): not judged, exit 3, each
/// disk named as not read whole, and the run not complete.
#[test]
fn a_soak_that_ends_before_a_disk_is_read_whole_claims_no_health() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let d = disks(3, 128 * MIB);
    let t = Throttle::new();
    for x in &d {
        // 128 MiB at 20 MB/s: some 7 s a pass, longer than the soak.
        t.limit(x, 20_000_000);
    }
    let dir = tempdir();
    let (json, state) = (dir.path().join("soak.json"), dir.path().join("state"));
    let mut args = vec!["burnin", "--read-only", "--duration", "3s", "--smart", "off"];
    args.extend(["--progress", "none", "--state", state.to_str().unwrap()]);
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let out = t.command(&args).output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["summary"]["verdict"], "not_judged", "{doc}");
    assert_eq!(doc["complete"], false, "{doc}");
    for (i, x) in d.iter().enumerate() {
        let disk = &doc["disks"][i];
        assert_eq!(
            (disk["passes_done"].as_u64(), disk["verdict"].as_str()),
            (Some(0), Some("interrupted"))
        );
        assert!(disk["verified_bytes"].as_u64().unwrap() > 0, "it read something: {disk}");
        assert!(text.contains(&x.dev), "{text}");
    }
    assert!(text.contains("not read whole: "), "{text}");
    assert!(!text.contains("read whole in every pass"), "{text}");
}

#[test]
fn a_disk_whose_writes_collapse_after_a_burst_is_smr_and_steady_slow_or_slowed_ones_are_not() {
    use crate::faults::{Cache, FaultyDisk};
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let size = 160 * MIB;
    // Spinning disks of 160 MiB, each head 4 ms a seek: one whose media
    // cache of 96 MiB takes writes at 80 MB/s, then at a tenth, and drains
    // at 50 MB/s idle; a steady one at 80 MB/s, a merely slow one at 20.
    // Stretches are timed (at least 0.25 s and 4 requests), so the step
    // shows at any disk size: in 1 MiB requests the slow side's stretches
    // are 4 MiB, half a second each, and 64 MiB after the cache make 16 of
    // them in 8 s. (At 256 MiB with a 48 MiB cache in 4 MiB requests the
    // test took 42 s, most of it 200 MiB written at 8 MB/s; at 192 MiB and
    // 12 MB/s in 4 MiB requests a fresh run measured the fast side at 36
    // MB/s: 48 MiB made two stretches, one of them straddling the step.
    // Here: 54 MB/s over 97 MiB against 7.8, 50 against 7.7 beside
    // stress-ng --cpu 2.)
    let cache = Cache { bytes: 96 * MIB, fast: 80, slow: 8, drain: 50, ..Cache::default() };
    let smr = FaultyDisk::spinning(size, 4000, cache);
    let steady = FaultyDisk::spinning(size, 4000, Cache { slow: 80, ..Cache::default() });
    let slow = FaultyDisk::spinning(size, 4000, Cache { slow: 20, ..Cache::default() });
    // And one slowed by a neighbour: 80 MB/s until 112 MiB are written
    // (the capacity probe's too), then 8 MB/s to the end, the burst after idling too (a step that is
    // no cache's: it does not recover).
    let neighbour = &disks(1, size)[0];
    spins(&neighbour.dev);
    let t = Throttle::new();
    t.limit_write(neighbour, 80_000_000);
    let done = std::sync::atomic::AtomicBool::new(false);
    let (out, doc) = std::thread::scope(|s| {
        // The kernel's count lives as long as the loop device, past a
        // detach: counted from here.
        let (before, t, done) = (sectors_written(&neighbour.dev), &t, &done);
        let cut = s.spawn(move || {
            while (sectors_written(&neighbour.dev) - before) * 512 < 112 * MIB {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            t.limit_write(neighbour, 8_000_000);
        });
        let run = burn_in(
            Some(t),
            &[
                "--smr-probe",
                "0",
                "--smr-idle",
                "3s",
                "--block",
                "1m",
                "--progress",
                "lines",
                &smr.dev,
                &steady.dev,
                &slow.dev,
                &neighbour.dev,
            ],
        );
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        cut.join().unwrap();
        run
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("to see whether they recover"), "{stderr}");
    let disk = |i: usize| &doc["disks"][i];
    let said = doc["summary"]["disk_verdicts"].as_array().unwrap();
    let sentence = |dev: &str| {
        let a = said.iter().find(|a| a["path"] == dev);
        a.map(|a| a["sentence"].as_str().unwrap().to_string()).unwrap_or_default()
    };
    let s = &disk(0)["shingled"];
    // It collapsed once the cache was full: at its size, or sooner where
    // the capacity probe before the run had filled part of it.
    let after = s["collapse"]["after_bytes"].as_u64().unwrap();
    assert!((48 * MIB..=120 * MIB).contains(&after), "{s}");
    let fast_mb = s["collapse"]["fast_mb_per_s"].as_f64().unwrap();
    let slow_mb = s["collapse"]["slow_mb_per_s"].as_f64().unwrap();
    assert!(fast_mb >= 4.0 * slow_mb && slow_mb < 12.0, "{s}");
    let again = s["recovery"]["mb_per_s"].as_f64().unwrap();
    assert!(again >= 0.7 * fast_mb, "recovered idle: {s}");
    assert!(s["recovery"]["idle_s"].as_f64().unwrap() >= 3.0, "{s}");
    assert_eq!(disk(0)["verdict"], "return", "{}", disk(0));
    let words = sentence(&smr.dev);
    assert!(words.contains("behaves as drive-managed SMR: wrote at"), "{words}");
    assert!(words.contains("unsuitable for RAIDZ and resilver-heavy pools"), "{words}");
    // Steady disks, the slow one too, have no collapse and are not called
    // SMR (the slow one is slow against its peers: another matter).
    for (i, dev) in [(1, &steady.dev), (2, &slow.dev)] {
        assert!(disk(i).get("shingled").is_none(), "{i}: {}", disk(i));
        assert!(!sentence(dev).contains("SMR"), "{}", sentence(dev));
    }
    // The slowed one collapsed and stayed slow: told so, not SMR.
    let words = sentence(&neighbour.dev);
    assert!(words.contains("its writes collapsed and stayed slow"), "{words}");
    assert!(!words.contains("SMR"), "{words}");
    assert_eq!(disk(3)["verdict"], "recheck", "{}", disk(3));
    // The surface holds points of every size the clock closed: the steady
    // disk's 160 MiB written at 80 MB/s at most took 2 s, 8 stretches of
    // 0.25 s at least (11 in a fresh run, with its read-back's).
    let points = disk(1)["surface"].as_array().unwrap().len();
    assert!(points >= 8, "{points} points for 160 MiB written and read back");
    assert_eq!(out.status.code(), Some(1), "a disk to return");
}

#[test]
fn scattered_writes_tell_a_cache_that_persists_from_seeks_in_a_burn_in_and_an_inspection() {
    use crate::faults::{Cache, FaultyDisk};
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let size = 64 * MIB;
    // Spinning disks whose heads take 4 ms a seek (250 reads/s): one whose
    // sequential writes go straight to their bands at 60 MB/s but whose
    // scattered ones land in a media cache of 16 MiB without a seek, then
    // wait 200 ms each (a band rewritten) once it is full, the cache
    // draining at 50 MB/s idle; one with no such cache (each scattered
    // write a seek). And a disk that does not spin.
    let cache =
        Cache { bytes: 16 * MIB, fast: 60, slow: 60, drain: 50, band_us: 200_000, direct: true };
    let smr = FaultyDisk::spinning(size, 4000, cache);
    let cmr = FaultyDisk::spinning(size, 4000, Cache { slow: 60, ..Cache::default() });
    let ssd = &disks(1, size)[0];
    // Probes of 5 s: the cache fills in about 1.5 s (3000 writes a second)
    // and 2 s of slow windows end its writes; the disk without a cache
    // writes for all of it, the test's pace (8 s, as it was, cost 6 s).
    let (out, doc) = burn(&[
        "--smr-probe",
        "5s",
        "--smr-idle",
        "2s",
        "--slow-pct",
        "0",
        "--progress",
        "lines",
        &smr.dev,
        &cmr.dev,
        &ssd.dev,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("writing scattered blocks, each flushed, for up to 5.0 s a disk"),
        "{stderr}"
    );
    let disk = |i: usize| &doc["disks"][i];
    let said = doc["summary"]["disk_verdicts"].as_array().unwrap();
    let sentence = |dev: &str| {
        let a = said.iter().find(|a| a["path"] == dev);
        a.map(|a| a["sentence"].as_str().unwrap().to_string()).unwrap_or_default()
    };
    let reads_per_s =
        |s: &serde_json::Value| s["reads"].as_f64().unwrap() / s["read_s"].as_f64().unwrap();
    let windows = |s: &serde_json::Value| -> Vec<u64> {
        s["windows"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).collect()
    };
    // A host with no CPU to spare (under half of one idle while the
    // writes ran: a loaded machine, where the emulated disks' own workers
    // wait for a CPU too) may hold a cache's writes to its seeks' pace:
    // the probe then says it could not tell, and claims no health.
    let untold = |d: &serde_json::Value| {
        let idle = d["scattered"]["idle_cpus"].as_f64().unwrap();
        assert!(idle < 0.5, "a disk not told on a host with {idle} CPUs idle: {d}");
        assert_eq!(d["verdict"], "not_judged", "{d}");
        let words = d["undecided"].as_str().unwrap_or_default();
        assert!(
            words.starts_with("the scattered-write probe could not tell whether it keeps"),
            "{d}"
        );
    };
    // The cache took scattered writes at many times the seeks' rate, then
    // filled (the probe ended early), and took them again after idling.
    let s = &disk(0)["scattered"];
    let (reads, w) = (reads_per_s(s), windows(s));
    assert!((100.0..=300.0).contains(&reads), "reads as the seeks allow: {s}");
    let told = w[..4].iter().sum::<u64>() as f64 >= 4.0 * reads;
    if !told {
        untold(disk(0));
    } else {
        assert!(w.len() < 20, "ended once full, before the probe's 5 s: {s}");
        assert!(s["slowest_write_ms"].as_f64().unwrap() >= 150.0, "{s}");
        assert!(s["again"]["idle_s"].as_f64().unwrap() >= 2.0, "{s}");
        assert_eq!(disk(0)["verdict"], "return", "{}", disk(0));
        let words = sentence(&smr.dev);
        assert!(
            words.contains(
                "behaves as drive-managed SMR: scattered 4 KiB writes that must reach the media landed at"
            ),
            "{words}"
        );
        assert!(words.contains("(the cache full), and after idling 2 s at"), "{words}");
    }
    assert!(disk(0).get("shingled").is_none(), "its sequential writes stayed steady: {}", disk(0));
    // The head without a cache wrote as it read, for all 5 s.
    let s = &disk(1)["scattered"];
    let (reads, w) = (reads_per_s(s), windows(s));
    let writes = w.iter().sum::<u64>() as f64 / (w.len() as f64 * 0.25);
    assert!(w.len() >= 19 && writes < 2.0 * reads, "{reads} reads/s, {writes} writes/s: {s}");
    assert!(s.get("again").is_none(), "{s}");
    if s["idle_cpus"].as_f64().unwrap() < 0.5 {
        untold(disk(1));
    } else {
        assert_eq!(disk(1)["verdict"], "healthy", "{}", disk(1));
        assert!(!sentence(&cmr.dev).contains("SMR"));
    }
    // The solid-state disk was not probed.
    assert!(disk(2).get("scattered").is_none(), "{}", disk(2));
    assert_eq!(disk(2)["verdict"], "healthy", "{}", disk(2));
    let code = if told { 1 } else { 3 };
    assert_eq!(out.status.code(), Some(code), "a disk to return, or one not told");

    // `inspect --probe` tells the same of the same disks.
    let dir = tempdir();
    let json = dir.path().join("i.json");
    let args =
        ["inspect", "--probe", "--destructive", "--yes", "--smr-probe", "5s", "--smr-idle", "2s"];
    let mut cmd = arrayburn(&args);
    let out = cmd
        .args(["--json", json.to_str().unwrap(), &smr.dev, &cmr.dev, &ssd.dev])
        .output_within(RUN);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let disk = |i: usize| &doc["disks"][i];
    let concerns = |i: usize| -> Vec<String> {
        let f = disk(i)["findings"].as_array().unwrap();
        f.iter()
            .map(|f| {
                format!("{}: {}", f["concern"].as_str().unwrap(), f["sentence"].as_str().unwrap())
            })
            .collect()
    };
    let busy = |i: usize| disk(i)["scattered"]["idle_cpus"].as_f64().unwrap() < 0.5;
    let smr_said = concerns(0).join("\n");
    if busy(0) && smr_said.starts_with("smr_untold: the scattered-write probe could not tell") {
        assert_eq!(disk(0)["verdict"], "not_known", "{}", disk(0));
    } else {
        assert!(
            smr_said.contains("drive_managed_smr: behaves as drive-managed SMR: scattered 4 KiB"),
            "{smr_said}\n{stderr}"
        );
        assert_eq!(disk(0)["verdict"], "act_on", "{}", disk(0));
        assert!(disk(0)["scattered"]["again"].is_object(), "{}", disk(0));
    }
    let cmr_said = concerns(1);
    if busy(1) {
        assert!(cmr_said.iter().any(|c| c.starts_with("smr_untold: ")), "{cmr_said:?}");
    } else {
        assert!(!cmr_said.iter().any(|c| c.contains("SMR") || c.contains("cache")), "{cmr_said:?}");
    }
    assert!(!concerns(2).iter().any(|c| c.contains("SMR") || c.contains("cache")), "{doc}");
    assert!(disk(1)["scattered"].is_object() && disk(2).get("scattered").is_none(), "{doc}");
}

#[test]
fn a_stop_while_scattered_writes_are_probed_leaves_an_interrupted_report_of_what_they_found() {
    need_root!();
    let _l = device_lock();
    let d = &disks(1, 64 << 20)[0];
    spins(&d.dev);
    let (dir, state) = (tempdir(), tempdir());
    let json = dir.path().join("b.json");
    let (json_s, state_s) = (json.to_str().unwrap(), state.path().to_str().unwrap());
    // A probe of five minutes (a memory disk never fills a cache): only
    // the stop ends it.
    let args = ["burnin", "--state", state_s, "--destructive", "--yes", "--smr-probe", "5m"];
    let child = arrayburn(&args).args(["--json", json_s, &d.dev]).start();
    // Its reads done (the line says how many), its writes begun.
    child.wait_line("the probe's reads", MINUTE, |l| l.contains("ms each (its seeks)"));
    let (out, _) = child.interrupt(MINUTE);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted while probing scattered writes, before the burn-in began"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true, "{doc}");
    assert_eq!(doc["summary"]["verdict"], "interrupted", "{doc}");
    let disk = &doc["disks"][0];
    assert_eq!(
        (&disk["verdict"], &disk["passes_done"]),
        (&"interrupted".into(), &0.into()),
        "{disk}"
    );
    assert_eq!(disk["scattered"]["incomplete"], "stopped", "{disk}");
    assert!(
        disk["scattered"]["reads"].as_u64().unwrap() > 0,
        "what it read before the stop: {disk}"
    );
}

/// The run's files under `STATE/runs` ending in `ext` (its log, its
/// result), the first one's path and text.
fn kept(state: &Path, ext: &str) -> Option<(std::path::PathBuf, String)> {
    let runs = std::fs::read_dir(state.join("runs")).ok()?;
    let p = runs.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == ext))?;
    let text = std::fs::read_to_string(&p).ok()?;
    Some((p, text))
}

/// A burn-in of two 64 MiB disks written at 4 MB/s, under way (a progress
/// line of its write phase seen, its log kept), with `signal` sent to its
/// worker process (the process the shell started is the parent of it):
/// the disks, their throttle, the state directory and the run.
fn worker_signalled(
    signal: nix::sys::signal::Signal,
) -> (Vec<LoopDisk>, Throttle, tempfile::TempDir, Child) {
    let d = disks(2, 64 << 20);
    let t = writes_at(&d, 4_000_000);
    let state = tempdir();
    let st = state.path().to_str().unwrap();
    let mut args = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    args.extend(NO_SPEED_JUDGED);
    args.extend(["--progress", "lines", "--progress-interval", "0.2s"]);
    args.extend([d[0].dev.as_str(), d[1].dev.as_str()]);
    let mut child = t.command(&args).start();
    child.wait_line("the write phase", RUN, |l| l.contains("write") && l.contains('%'));
    child.wait_until("the log", MINUTE, || kept(state.path(), "log").is_some());
    let worker = family(child.id());
    assert!(worker.len() >= 2, "a parent and its worker: {worker:?}");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(worker[1] as i32), signal);
    (d, t, state, child)
}

#[test]
fn a_killed_worker_is_said_by_the_waiting_process_with_how_to_go_on() {
    need_root!();
    let _l = device_lock();
    // kill -9 of the process that writes the disks (what the out-of-memory
    // killer does): the process the shell waits for says so, on stderr and
    // in the run's log, with the continue command, and exits 128 + 9 (it
    // exited 137 without a word).
    let (_d, _t, state, child) = worker_signalled(nix::sys::signal::Signal::SIGKILL);
    let out = child.wait(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(137), "{err}");
    let said = err.lines().find(|l| l.contains("worker process")).unwrap_or_default();
    assert!(said.contains("was killed by SIGKILL") && said.contains("out-of-memory"), "{err}");
    // The command on the line after it.
    let next = err.lines().skip_while(|l| !l.contains("worker process")).nth(1);
    assert!(said.ends_with("continue with:"), "{said}");
    assert!(next.is_some_and(|l| l.starts_with("  arrayburn burnin --resume")), "{err}");
    let (_, log) = kept(state.path(), "log").unwrap();
    assert!(log.contains(said), "the log says it too:\n{log}");
    let last = log.lines().last().unwrap_or_default();
    assert!(last.ends_with("arrayburn: exit status 137 (ended by a signal)"), "{last}");
}

#[test]
fn a_stopped_worker_still_takes_a_stop() {
    need_root!();
    let _l = device_lock();
    // The worker is stopped (SIGSTOP); TERM to the process the shell
    // started must still end the run, partial results and all (it waited
    // for as long as the worker stayed stopped).
    let (_d, _t, _state, child) = worker_signalled(nix::sys::signal::Signal::SIGSTOP);
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let out = child.wait(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted; each disk's place is saved"), "{err}");
}

#[test]
fn a_fifo_nobody_reads_holds_a_finished_burn_in_a_minute_at_most_and_a_stop_there_ends_nothing() {
    need_root!();
    let _l = device_lock();
    // The result goes to a FIFO no one reads (a resume takes it from the
    // checkpoint): the finished run waits a minute at most for a reader,
    // says so and ends with its verdict (it waited for ever with its disks
    // open). A stop while it waits is not an interruption: every disk was
    // burned and judged, so no "continue with --resume".
    let d = disks(2, 16 << 20);
    let dir = tempdir();
    let fifo = dir.path().join("result.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let start = |state: &Path| {
        let mut c = Command::new(bin());
        c.args(["burnin", "--state", state.to_str().unwrap(), "--destructive", "--yes"])
            .args(["--smart", "off", "--block", "1m", "--progress", "none", "--json"])
            .arg(&fifo)
            .args([&d[0].dev, &d[1].dev]);
        c.start()
    };
    let state = tempdir();
    let began = std::time::Instant::now();
    let out = start(state.path()).wait(std::time::Duration::from_secs(180));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(began.elapsed() < std::time::Duration::from_secs(150), "{:?}", began.elapsed());
    assert!(err.contains("no reader opened it within 60 s; not written"), "{err}");
    let waiting = format!(
        "--json {}: a FIFO: waiting up to 60 s for a reader to take the result",
        fifo.display()
    );
    assert!(err.contains(&waiting), "said before the wait: {err}");
    let (_, doc) = kept(state.path(), "json").expect("the result kept in --state");
    let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
    let verdict = doc["exit_status"].as_i64().map(|c| c as i32);
    assert!(matches!(verdict, Some(0 | 3)), "{}", doc["summary"]);
    assert_eq!(out.status.code(), verdict, "{err}");
    // Again, with a stop while it waits for the reader.
    let state = tempdir();
    let mut child = start(state.path());
    child.wait_until("the kept result", MINUTE, || kept(state.path(), "json").is_some());
    std::thread::sleep(std::time::Duration::from_millis(500));
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let out = child.wait(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no reader opened it before the stop; not written"), "{err}");
    assert!(err.contains("the burn-in had finished and its verdict stands"), "{err}");
    assert!(!err.contains("continue with"), "{err}");
    assert_eq!(out.status.code(), verdict, "{err}");
    // A --resume of that finished run takes the FIFO from its checkpoint:
    // it says that it waits, as a fresh run does, and a stop ends the wait
    // (it waited silently with the disks open).
    let child = Command::new(bin())
        .args(["burnin", "--resume", "--destructive", "--yes", "--smart", "off"])
        .args(["--progress", "none", "--state", state.path().to_str().unwrap()])
        .args([&d[0].dev, &d[1].dev])
        .start();
    child.wait_line("the wait said", MINUTE, |l| l.contains(&waiting));
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let out = child.wait(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no reader opened it before the stop; not written"), "{err}");
    assert_eq!(out.status.code(), verdict, "{err}");
}

#[test]
fn a_disk_left_out_of_a_resume_is_named_in_its_verdict_never_healthy() {
    need_root!();
    let _l = device_lock();
    // Three disks, stopped in their first write phase; the resume takes up
    // two. The run began with three: the third is neither finished nor
    // judged, and the verdict says so (it said HEALTHY on 2 disks, exit 0).
    const MIB: u64 = 1 << 20;
    let d = disks(3, 32 * MIB);
    let t = writes_at(&d, 16_000_000);
    for x in &d {
        t.limit(x, 16_000_000);
    }
    let state = tempdir();
    let st = state.path().to_str().unwrap();
    let mut first = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    // No speed judged (the resume judges as the run it goes on did).
    first.extend(["--checkpoint-every", "1", "--progress", "none"]);
    first.extend(NO_SPEED_JUDGED);
    first.extend(d.iter().map(|x| x.dev.as_str()));
    let mut child = t.command(&first).start();
    let written = |x: &LoopDisk| {
        let path = state.path().join(format!("burnin-{}.json", x.name()));
        std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|c| c["at"]["done_until"].as_u64() >= Some(2 * MIB))
    };
    child.wait_until("checkpoints with writes done", MINUTE, || d.iter().all(&written));
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let out = child.wait(MINUTE);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = tempdir();
    let json = dir.path().join("resumed.json");
    let mut again = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    again.extend(["--progress", "none", "--resume", "--json", json.to_str().unwrap()]);
    again.extend([d[0].dev.as_str(), d[1].dev.as_str()]);
    let out = t.command(&again).output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let s = &doc["summary"];
    assert_eq!(s["left_out"], serde_json::json!([d[2].dev]), "{s}");
    assert_eq!(s["verdict"], "not_judged", "{s}");
    let msg = s["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("{} (left out of this resume at pass 1 of 1, write", d[2].dev)),
        "{msg}"
    );
    assert!(!msg.contains("HEALTHY"), "{msg}");
    assert_eq!(out.status.code(), Some(3), "{text}");
    // The fleet sees the run as not judged whole, the left-out disk named.
    let out = arrayburn(&["report", json.to_str().unwrap()]).output_within(RUN);
    let fleet = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{fleet}");
    assert!(fleet.contains(&d[2].dev), "{fleet}");
}

#[test]
fn a_slow_reader_among_slow_writers_is_re_measured_long_enough_to_tell() {
    need_root!();
    let _l = device_lock();
    // Writes held to 8 MB/s, reads to 30 MB/s, one disk reading at 21:
    // it reads back at 70 % of its peers' and is re-measured in turn with a
    // peer. Each turn's read-back is sized from the read speed (a second's
    // worth), not from the writes' (a fourth of a second, too short to
    // tell: at 4 MB/s, a seventh, it was cleared, healthy), and it is found
    // slow there too. At 81 MB/s in all the test is paced
    // (tests/util/lock.rs). (Writes at 4 MB/s, as it was, took 12 s of it.)
    // 112 MiB: a re-measurement may take the burning's own time, and a
    // batch of turns at 8 MB/s needs about 15 s of it.
    const MIB: u64 = 1 << 20;
    let d = disks(3, 112 * MIB);
    let t = writes_at(&d, 8_000_000);
    for (i, x) in d.iter().enumerate() {
        t.limit(x, if i == 1 { 21_000_000 } else { 30_000_000 });
    }
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let mut args = vec!["--smart", "off", "--block", "1m"];
    args.extend(&devs);
    let (out, doc) = burn_in(Some(&t), &args);
    let text = String::from_utf8_lossy(&out.stdout);
    let disk = &doc["disks"][1];
    assert!(disk["verify_pct_of_peers"].as_f64().unwrap() < 80.0, "{disk}");
    let again = &disk["remeasured"]["verify"];
    assert_eq!(again["verdict"], "slow", "{again}\n{text}");
    assert!((55.0..85.0).contains(&again["pct"].as_f64().unwrap()), "{again}");
    assert_eq!(disk["verdict"], "recheck", "{disk}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}

/// `--deadline`: two disks whose full write-verify takes a minute, given
/// 20 s: stripes spread over each whole surface, the run ended within a
/// tenth of the deadline, the claim exactly what the stripes hold (a
/// verify reads back those bytes and no others); then a resume without a
/// deadline burns the rest, and the disks are said to be burned whole
/// over two runs.
#[test]
fn a_deadline_burns_stripes_over_the_whole_surface_and_a_resume_completes_it() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let size = 256 * MIB;
    let d = disks(2, size);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    // 8 MB/s each way: a full pass takes 67 s.
    let t = Throttle::new();
    for x in &d {
        t.limit(x, 8_000_000).limit_write(x, 8_000_000);
    }
    let state = tempdir();
    let dir = tempdir();
    let st = state.path().to_str().unwrap();
    let run = |n: &str, extra: &[&str]| {
        let json = dir.path().join(format!("{n}.json"));
        let mut a = vec!["burnin", "--state", st, "--yes", "--smart", "off", "--smr-probe", "0"];
        a.extend(extra);
        a.extend(["--progress", "none", "--json", json.to_str().unwrap()]);
        a.extend(&devs);
        let began = std::time::Instant::now();
        let out = t.command(&a).output_within(RUN);
        let took = began.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        eprintln!("--- burnin {n} ({took:.1} s)\n{text}");
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (out, doc, text, took)
    };
    let metrics = dir.path().join("m.prom");
    let m = metrics.to_str().unwrap();
    // Not against peers: what this asserts is the stripes and the resume,
    // and two throttled disks read side by side for seconds can differ by
    // a tenth on a busy host (a resume once re-measured its two disks and
    // could not decide: not judged, exit 3). Its own passes still judge.
    let (out, doc, text, took) = run(
        "deadline",
        &["--destructive", "--deadline", "20s", "--metrics", m, "--not-against-peers"],
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!((18.0..=22.0).contains(&took), "the run took {took:.1} s for a 20 s deadline");
    assert!(text.contains("64 stripes of 4 MiB, coarse first over the whole range"), "{text}");
    let mut tested = 0;
    for disk in doc["disks"].as_array().unwrap() {
        let c = &disk["tested"];
        let (n, of, bytes) = (
            c["stripes"].as_u64().unwrap(),
            c["of"].as_u64().unwrap(),
            c["tested_bytes"].as_u64().unwrap(),
        );
        // About a fifth of the surface, spread over all of it: its first
        // and last stripe, no untested stretch of more than a few.
        assert!((4..of / 2).contains(&n), "{c}");
        assert_eq!(bytes, n * 4 * MIB, "{c}");
        assert_eq!((c["from"].as_u64(), c["to"].as_u64()), (Some(0), Some(size)), "{c}");
        assert!(c["widest_gap"].as_u64().unwrap() <= size / n * 2, "{c}");
        let said = c["said"].as_str().unwrap();
        assert!(
            said.starts_with(&format!(
                "{:.1} % of the surface: {n} stripe(s) of 4 MiB",
                100.0 * n as f64 / 64.0
            )),
            "{said}"
        );
        assert_eq!(disk["written_bytes"].as_u64(), Some(bytes), "{disk}");
        assert_eq!(disk["verified_bytes"].as_u64(), Some(bytes), "{disk}");
        assert_eq!(disk["verdict"], "healthy", "{disk}");
        // The metrics say the share tested, not a whole pass.
        let prom = std::fs::read_to_string(&metrics).unwrap();
        let dev = disk["path"].as_str().unwrap();
        let ratio = (prom.lines())
            .find(|l| {
                l.starts_with("arrayburn_burnin_tested_ratio{") && l.contains(&format!("\"{dev}\""))
            })
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok());
        assert_eq!(ratio, Some(bytes as f64 / size as f64), "{prom}");
        tested += bytes;
    }
    let message = doc["summary"]["message"].as_str().unwrap();
    assert!(
        message.contains("Burned in stripes to the deadline, not whole: ")
            && message.contains("the rest is not claimed"),
        "{message}"
    );
    // The verify reads back exactly the stripes' bytes.
    let (out, v, text, _) = run("verify", &["--verify"]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let said = v["summary"]["message"].as_str().unwrap();
    assert!(said.contains(&format!("(read {tested} of {} bytes of the disks", 2 * size)), "{said}");
    // No deadline: every stripe left, and the disks are burned whole.
    for x in &d {
        t.limit(x, 64_000_000).limit_write(x, 64_000_000);
    }
    let (out, doc, text, _) = run("resume", &["--destructive", "--resume", "--not-against-peers"]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for disk in doc["disks"].as_array().unwrap() {
        let c = &disk["tested"];
        assert_eq!(
            (c["stripes"].as_u64(), c["tested_bytes"].as_u64(), c["runs"].as_u64()),
            (Some(64), Some(size), Some(2)),
            "{c}"
        );
        assert_eq!(c["said"], "all of the surface: 64 stripes of 4 MiB, over 2 runs", "{c}");
        assert_eq!(disk["written_bytes"].as_u64(), Some(size), "{disk}");
    }
    let message = doc["summary"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("HEALTHY: ")
            && message.contains("Burned in stripes: ")
            && !message.contains("not whole"),
        "{message}"
    );
}

/// A solid-state disk's endurance: read before and after from its own
/// counters (the recorded NVMe drive's data units written and percentage
/// used, and the recorded Samsung 860 EVO's device statistics), said in
/// the plan and the report; `--max-wear` refuses a plan that would pass it
/// at the rate the drive's counters show, in one line, nothing written.
#[test]
fn an_ssd_s_endurance_is_said_before_and_after_and_max_wear_refuses_a_plan_past_it() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let d = disks(2, 32 * MIB);
    let t = Throttle::calm(&d);
    // NVMe: 2 % used after 20.48 MB written (10.24 MB a per cent): the
    // 32 MiB pass is 3.3 % more.
    let mut nvme = recorded_smart("nvme");
    nvme["nvme_smart_health_information_log"]["percentage_used"] = 2.into();
    nvme["nvme_smart_health_information_log"]["data_units_written"] = 40.into();
    let mut nvme_after = nvme.clone();
    // The drive counts what the run wrote: 32 MiB is 65.5 units of 512,000.
    nvme_after["nvme_smart_health_information_log"]["data_units_written"] = (40 + 66).into();
    nvme_after["nvme_smart_health_information_log"]["percentage_used"] = 5.into();
    // ATA: the Samsung 860 EVO at 19 %, its sectors written raised by the
    // run's bytes.
    let ata = recorded_smart("versions/ssd-ata-7.5");
    let mut ata_after = ata.clone();
    for p in ata_after["ata_device_statistics"]["pages"].as_array_mut().unwrap() {
        for e in p["table"].as_array_mut().unwrap() {
            if e["name"] == "Logical Sectors Written" {
                e["value"] = (64_777_770_148u64 + 32 * MIB / 512).into();
            }
        }
    }
    let readings = [vec![nvme.clone(), nvme_after], vec![ata.clone(), ata_after]];
    let (fake, path) = smartctl_readings(&d, &readings);
    let state = tempdir();
    let dir = tempdir();
    let json = dir.path().join("b.json");
    let run = |extra: &[&str]| {
        // Each run is served the readings from the first (before) on.
        for x in &d {
            let _ = std::fs::remove_file(
                fake.path().join(format!("{}.n", x.dev.trim_start_matches("/dev/"))),
            );
        }
        let mut a = vec!["burnin", "--state", state.path().to_str().unwrap()];
        a.extend(["--destructive", "--yes", "--wipe-signatures", "--smr-probe", "0"]);
        a.extend(NO_SPEED_JUDGED);
        a.extend(["--progress", "none", "--json", json.to_str().unwrap()]);
        a.extend(extra);
        a.extend(d.iter().map(|x| x.dev.as_str()));
        let out = t.command(&a).env("PATH", &path).output_within(RUN);
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        eprintln!("--- burnin {extra:?}\n{text}");
        (out, text)
    };
    let before: Vec<u64> = d.iter().map(|x| sectors_written(&x.dev)).collect();
    let (out, text) = run(&["--max-wear", "5"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "--max-wear 5: writing 33.55 MB to {} would take it from 2 % to about 5.3 % of its rated endurance"
        , d[0].dev)),
        "{text}"
    );
    assert!(text.trim().lines().count() == 1 && text.contains("nothing was written"), "{text}");
    let after: Vec<u64> = d.iter().map(|x| sectors_written(&x.dev)).collect();
    assert_eq!(before, after, "nothing written");
    assert!(!json.exists());
    // At 10 %: the 860 EVO is at 19 % already.
    let (out, text) = run(&["--max-wear", "10"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "--max-wear 10: {} has used 19 % of its rated endurance already",
            d[1].dev
        )),
        "{text}"
    );
    // Allowed at 25 %: the plan says what each will cost, the report what
    // it did.
    let (out, text) = run(&["--max-wear", "25"]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "{}: a solid-state disk: writes 33.55 MB to it, 2 % used now; about 5.3 % after",
            d[0].dev
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{}: a solid-state disk: writes 33.55 MB to it, 19 % used now; about 19.0 % after",
            d[1].dev
        )),
        "{text}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let e = &doc["disks"][0]["endurance"];
    assert_eq!(
        (e["written_bytes"].as_u64(), e["counted_by_drive"].as_bool()),
        (Some(66 * 512_000), Some(true)),
        "{e}"
    );
    assert_eq!(e["rated_pct"].as_f64(), Some(3.0), "{e}");
    assert_eq!(
        e["said"],
        "this run wrote 33.79 MB (the drive's own count): 3 % of its rated endurance (its percentage used rose by that); percentage used 2 % before, 5 % after"
    );
    let e = &doc["disks"][1]["endurance"];
    assert_eq!(e["written_bytes"].as_u64(), Some(32 * MIB), "{e}");
    assert!(e["said"].as_str().unwrap().starts_with("this run wrote 33.55 MB (the drive's own count): about 0.00 % of its rated endurance, at the rate its own counters show (33.17 TB written for 19 % used)"), "{e}");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(&format!("SMART {}: endurance: this run wrote 33.79 MB", d[0].dev)),
        "{report}"
    );
}

/// A solid-state disk whose writes step down once a burst has filled its
/// write cache (a memory-backed loop device says it does not spin; its
/// writes held to 80 MB/s for the first 48 MiB, 8 MB/s after): named as an
/// SSD's cache with its size and both speeds, never as SMR, no finding, no
/// idle to see it recover.
#[test]
fn a_solid_state_disk_whose_writes_step_down_is_named_by_its_cache_not_smr() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let d = disks(1, 96 * MIB);
    let x = &d[0];
    let t = Throttle::new();
    t.limit_write(x, 80_000_000);
    let done = std::sync::atomic::AtomicBool::new(false);
    let (out, doc) = std::thread::scope(|s| {
        let (before, t, done) = (sectors_written(&x.dev), &t, &done);
        let cut = s.spawn(move || {
            while (sectors_written(&x.dev) - before) * 512 < 48 * MIB {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            t.limit_write(x, 8_000_000);
        });
        let mut args = vec!["--smr-probe", "0", "--smr-idle", "30s", "--block", "1m"];
        args.extend(NO_SPEED_JUDGED);
        args.push(&x.dev);
        let run = burn_in(Some(t), &args);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        cut.join().unwrap();
        run
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = String::from_utf8_lossy(&out.stdout);
    let disk = &doc["disks"][0];
    assert!(disk.get("shingled").is_none(), "{disk}");
    let c = &disk["ssd_cache"];
    let after = c["collapse"]["after_bytes"].as_u64().unwrap();
    // The step where the throttle fell (the capacity probe's writes are
    // among the first 48 MiB).
    assert!((24 * MIB..=56 * MIB).contains(&after), "{c}");
    let (fast, slow) = (
        c["collapse"]["fast_mb_per_s"].as_f64().unwrap(),
        c["collapse"]["slow_mb_per_s"].as_f64().unwrap(),
    );
    assert!(fast >= 4.0 * slow && slow < 12.0, "{c}");
    let said = c["said"].as_str().unwrap();
    assert!(
        said.contains("a solid-state disk's write cache (SLC) of about")
            && said.contains("not SMR"),
        "{said}"
    );
    assert!(report.contains(&format!("{}: its writes ran at", x.dev)), "{report}");
    // No idle to see it recover, no finding, not SMR.
    assert!(!stderr.contains("to see whether they recover"), "{stderr}");
    assert!(doc["summary"]["disk_verdicts"].as_array().unwrap().is_empty(), "{doc}");
    assert!(!report.contains("drive-managed SMR"), "{report}");
    assert_eq!(out.status.code(), Some(0), "{report}");
}

/// `--discard`: after the last read-back each disk is left trimmed (its
/// backing file's blocks freed: the kernel's write zeroes with deallocate
/// over a loop device punches holes) and read back at spread places as
/// zeroes; a disk whose discard keeps its data (faultdisk's TRIM that lies)
/// is found, and one that zeroes is not.
#[test]
fn a_discard_leaves_each_disk_trimmed_and_a_drive_whose_trim_keeps_data_is_found() {
    use crate::faults::FaultyDisk;
    use std::os::unix::fs::MetadataExt;
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let size = 32 * MIB;
    let d = disks(1, size);
    let lies = FaultyDisk::trimming(size, "keep");
    let zeroes = FaultyDisk::trimming(size, "zero");
    let allocated = || std::fs::metadata(&d[0].file).unwrap().blocks() * 512;
    let mut args = vec!["--discard", "--smr-probe", "0", "--block", "1m"];
    args.extend(NO_SPEED_JUDGED);
    args.extend([d[0].dev.as_str(), lies.dev.as_str(), zeroes.dev.as_str()]);
    let (out, doc) = burn(&args);
    let report = String::from_utf8_lossy(&out.stdout);
    let disk = |i: usize| &doc["disks"][i];
    // The memory-backed disk: every byte the burn-in wrote deallocated (its
    // file holds none now), read back as zeroes.
    let x = &disk(0)["discarded"];
    assert_eq!(
        (x["bytes"].as_u64(), x["way"].as_str()),
        (Some(size), Some("zero_deallocate")),
        "{x}"
    );
    assert_eq!(x["promised_by"], "the kernel (write zeroes with deallocate)", "{x}");
    assert!(x["read_bytes"].as_u64().unwrap() >= 8 * MIB && x["not_zero_bytes"] == 0, "{x}");
    assert!(allocated() < MIB, "{} bytes still allocated", allocated());
    assert_eq!(disk(0)["verdict"], "healthy", "{}", disk(0));
    // The drive whose discard keeps the data: found, rechecked.
    let x = &disk(1)["discarded"];
    assert_eq!(x["bytes"].as_u64(), Some(size), "{x}");
    assert_eq!(x["not_zero_bytes"], x["read_bytes"], "every place read back held data: {x}");
    assert_eq!(disk(1)["verdict"], "recheck", "{}", disk(1));
    let said = doc["summary"]["disk_verdicts"].as_array().unwrap();
    let advice = said.iter().find(|a| a["path"] == lies.dev.as_str()).unwrap();
    assert_eq!(advice["findings"][0]["code"], "discard_not_zeroes", "{advice}");
    assert!(
        advice["sentence"].as_str().unwrap().contains("after a discard the kernel (write zeroes with deallocate) promised would read as zeroes"),
        "{advice}"
    );
    // The one that zeroes: nothing found.
    assert_eq!(disk(2)["discarded"]["not_zero_bytes"], 0, "{}", disk(2));
    assert_eq!(disk(2)["verdict"], "healthy", "{}", disk(2));
    assert!(
        report.contains(&format!(
            "{}: 33.55 MB of what the burn-in wrote deallocated with write zeroes",
            d[0].dev
        )),
        "{report}"
    );
    assert_eq!(out.status.code(), Some(1), "{report}");
}

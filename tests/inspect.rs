//! `arrayburn inspect`: what recorded real drives declare of themselves
//! (served by a fake smartctl and hdparm for loop devices, which have no
//! SMART), judged; and the capacity probe on FUSE disks that wrap or drop
//! writes past their real end, at 1 GiB and 16 TiB, found to the block.

use std::path::Path;

use serde_json::Value;

use crate::faults::FaultyDisk;
use crate::util::*;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// A fake smartctl and hdparm in a new directory, serving each disk (by
/// its device's name, the last argument) its recorded `smartctl --json`
/// document and `hdparm -N` text (where given; else hdparm fails as on a
/// disk that does not take the command); and a PATH with them first.
fn recorded_drives(drives: &[(&str, Value, Option<&str>)]) -> (tempfile::TempDir, String) {
    recorded_drives_of("7.5", drives)
}

/// [`recorded_drives`] served by a smartctl of release `release` (it
/// refuses what that release refuses).
fn recorded_drives_of(
    release: &str,
    drives: &[(&str, Value, Option<&str>)],
) -> (tempfile::TempDir, String) {
    let fake = tempdir();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/smart");
    let mut serials = Vec::new();
    for (i, (dev, doc, hdparm)) in drives.iter().enumerate() {
        let name = dev.trim_start_matches("/dev/");
        // One recording served to two disks is two drives: each its own
        // serial (a serial two drives share is a finding of its own).
        let mut doc = doc.clone();
        if let Some(s) = doc["serial_number"].as_str().map(str::to_string) {
            if serials.contains(&s) {
                doc["serial_number"] = format!("{s}-{i}").into();
            }
            serials.push(s);
        }
        std::fs::write(fake.path().join(format!("{name}.json")), doc.to_string()).unwrap();
        if let Some(text) = hdparm {
            std::fs::copy(fixtures.join(text), fake.path().join(format!("{name}.hdparm"))).unwrap();
        }
    }
    // A DCO recorded where asked for (see `dco`).
    let last = "for a; do d=$a; done; d=$(basename \"$d\")";
    let dir = fake.path().display();
    fake_smartctl(fake.path(), release, &format!("{last}\ncat {dir}/$d.json"));
    // `hdparm -N` serves NAME.hdparm, `hdparm --dco-identify` NAME.dco.
    fake_tool(
        fake.path(),
        "hdparm",
        &format!(
            "{last}\ncase \"$1\" in -N) f={dir}/$d.hdparm;; *) f={dir}/$d.dco;; esac\n[ -f $f ] || {{ echo 'HDIO_DRIVE_CMD failed' >&2; exit 22; }}\ncat $f"
        ),
    );
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    (fake, path)
}

/// Loop disks as big as each recorded drive declares itself (sparse: the
/// inspection reads none of it), with its sector size, so that the
/// kernel's size is the drive's as on a real drive (a drive declaring
/// more than the kernel reads is a finding of its own).
fn declared_disks(docs: &[&Value]) -> Vec<LoopDisk> {
    let disk = |v: &&Value| {
        let size = v["user_capacity"]["bytes"].as_u64().unwrap_or(16 * MIB);
        let sector = if v["logical_block_size"] == 4096 { 4096 } else { 512 };
        sparse_disk(size, sector)
    };
    docs.iter().map(disk).collect()
}

/// Serves `dev` the recorded `hdparm --dco-identify` in the fake tools'
/// directory `fake`.
fn dco(fake: &Path, dev: &str) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/smart");
    let name = dev.trim_start_matches("/dev/");
    std::fs::copy(fixtures.join("hdparm-dco.txt"), fake.join(format!("{name}.dco"))).unwrap();
}

/// `arrayburn inspect ARGS` with `path` as PATH (stdin not a terminal):
/// its output and, where it wrote one, its JSON.
fn inspect(args: &[&str], path: &str) -> (std::process::Output, Option<Value>) {
    let dir = tempdir();
    let json = dir.path().join("inspect.json");
    let mut cmd = arrayburn(&["inspect", "-j", json.to_str().unwrap()]);
    let out = cmd.args(args).env("PATH", path).output_within(RUN);
    eprintln!(
        "--- inspect {}\n{}\n--- stderr\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = std::fs::read(&json).ok().map(|b| serde_json::from_slice(&b).unwrap());
    (out, doc)
}

/// Fails naming the first of `said` that `text` does not contain.
fn says_all(text: &str, said: &[&str]) {
    for s in said {
        assert!(text.contains(s), "{s:?} not in:\n{text}");
    }
}

/// Each disk's concerns as the JSON names them.
fn concerns(doc: &Value) -> Vec<Vec<String>> {
    (doc["disks"].as_array().unwrap().iter())
        .map(|d| {
            (d["findings"].as_array().unwrap().iter())
                .map(|f| f["concern"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

/// The recorded SATA disk as a new one: `hours` power-on hours,
/// `firmware`, and `sectors` of 512 bytes shown (the size of the disks
/// whose `hdparm -N` was recorded).
fn new_wd(hours: u64, firmware: &str, sectors: u64) -> Value {
    let mut v = recorded_smart("ata");
    v["power_on_time"]["hours"] = hours.into();
    v["firmware_version"] = firmware.into();
    v["user_capacity"] = serde_json::json!({"blocks": sectors, "bytes": sectors * 512});
    v
}

/// What the recorded `hdparm -N` shows of a disk with an HPA, and whole.
const HPA_SHOWN: u64 = 312_579_695;
const WHOLE: u64 = 312_581_808;

#[test]
fn recorded_drives_are_told_used_reset_locked_hiding_capacity_or_unlike_their_peers() {
    need_root!();
    let _l = device_lock();
    // The recorded locked drive, as big as its peers below.
    let mut locked = recorded_smart("ata-locked");
    locked["user_capacity"] = serde_json::json!({"blocks": WHOLE, "bytes": WHOLE * 512});
    // A Seagate whose SMART and FARM hours agree: used for years; the same
    // drive with SMART's hours reset: FARM tells; three new drives of one
    // model: one hides capacity (an HPA), one runs another firmware.
    let docs = [
        recorded_smart("farm"),
        recorded_smart("farm-reset"),
        locked,
        new_wd(5, "81.00A81", HPA_SHOWN),
        new_wd(5, "81.00A81", WHOLE),
        new_wd(5, "83.00A83", WHOLE),
    ];
    let d = declared_disks(&docs.iter().collect::<Vec<_>>());
    let hdparm = [None, None, Some("hdparm-N-none.txt"), Some("hdparm-N-hpa.txt")];
    let hdparm = [&hdparm[..], &[Some("hdparm-N-none.txt"); 2]].concat();
    let served: Vec<_> =
        (d.iter().zip(docs).zip(hdparm)).map(|((x, v), h)| (x.dev.as_str(), v, h)).collect();
    let (_fake, path) = recorded_drives(&served);
    let before: Vec<u64> = d.iter().map(|x| sectors_written(&x.dev)).collect();
    let dir = tempdir();
    let out_dir = dir.path().join("bundle");
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let mut args = vec!["-o", out_dir.to_str().unwrap()];
    args.extend(&devs);
    let (out, doc) = inspect(&args, &path);
    assert_eq!(out.status.code(), Some(1), "something to act on");
    let doc = doc.expect("the JSON");
    assert_eq!(doc["kind"], "inspect");
    assert_eq!(doc["verdict"], "flagged");
    assert_eq!(
        concerns(&doc),
        [
            vec!["used"],
            vec!["hours_reset"],
            vec!["locked", "used"],
            // Its HPA shows it smaller than its peers too.
            vec!["hidden_capacity", "capacity_differs"],
            vec![],
            vec!["firmware_differs"]
        ]
    );
    let verdicts: Vec<&str> =
        doc["disks"].as_array().unwrap().iter().map(|x| x["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, ["act_on", "act_on", "act_on", "act_on", "clean", "act_on"]);
    // What hdparm could not say of the Seagates is said, not guessed.
    let not_read = doc["disks"][0]["declared"]["not_read"].to_string();
    assert!(not_read.contains("HPA: hdparm -N failed"), "{not_read}");
    let farm = &doc["disks"][1]["declared"];
    assert_eq!(
        (farm["power_on_hours"].as_u64(), farm["farm"]["power_on_hours"].as_u64()),
        (Some(12), Some(31383))
    );
    let text = String::from_utf8_lossy(&out.stdout);
    says_all(
        &text,
        &[
            "used: 31,383 power-on hours (a new drive has at most 100)",
            "hours reset: SMART says 12 h, Seagate's FARM log 31,383 h",
            "unlock it before testing",
            "no fault of its media",
            "hidden capacity: 1.08 MB beyond the 160.04 GB shown",
            "hdparm -N p312581808",
            "firmware 83.00A83 differs from its 3 peers' 81.00A81",
            "capacity 160,040,803,840 bytes differs from its 3 peers' 160,041,885,696",
            "LOCKED",
        ],
    );
    // The bundle: the same report as text, Markdown and the page, whose
    // marked cells carry their mark.
    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(page.contains("<td class=\"bad\">LOCKED</td>"), "{page}");
    assert!(page.contains("class=\"verdict flagged\""), "{page}");
    // In a real browser: the DOM it builds has the table, the locked cell
    // marked, the verdict; and it prints.
    if let Some(b) = Browser::new() {
        let dom = b.dom(&out_dir.join("report.html"));
        assert!(dom.contains("<td class=\"bad\">LOCKED</td>"), "{dom}");
        assert!(dom.contains("Verdict: 5 of 6 disk(s) to act on before use"), "{dom}");
        assert!(b.pdf(&out_dir.join("report.html")).starts_with(b"%PDF"), "no PDF");
    }
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("hours reset"), "{md}");
    // Read-only: not a sector written.
    for (x, b) in d.iter().zip(before) {
        assert_eq!(sectors_written(&x.dev), b, "{} was written", x.dev);
    }
}

#[test]
fn the_inspections_metrics_are_accepted_by_promtool_and_say_what_its_json_says() {
    need_root!();
    if !crate::metrics::promtool_here() {
        return;
    }
    let _l = device_lock();
    let d = disks(2, 16 * MIB);
    let (_fake, path) = recorded_drives(&[
        (&d[0].dev, recorded_smart("farm-reset"), None),
        (&d[1].dev, recorded_smart("farm"), None),
    ]);
    let dir = tempdir();
    let prom = dir.path().join("inspect.prom");
    let (out, doc) = inspect(&["--metrics", prom.to_str().unwrap(), &d[0].dev, &d[1].dev], &path);
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&prom).unwrap();
    crate::metrics::accepted(&text, "inspection");
    let hours = |dev: &str, source: &str| {
        crate::metrics::value(
            &text,
            "arrayburn_inspect_power_on_seconds",
            &[&format!("device=\"{dev}\""), &format!("source=\"{source}\"")],
        )
    };
    assert_eq!(hours(&d[0].dev, "smart"), Some(12.0 * 3600.0), "{text}");
    assert_eq!(hours(&d[0].dev, "farm"), Some(31383.0 * 3600.0), "{text}");
    let finding = crate::metrics::value(
        &text,
        "arrayburn_inspect_finding",
        &[&format!("device=\"{}\"", d[0].dev), "concern=\"hours_reset\""],
    );
    assert_eq!(finding, Some(1.0), "{text}");
    let exit = crate::metrics::value(&text, "arrayburn_run_exit_status", &[]);
    assert_eq!(exit, Some(1.0), "{text}");
    assert_eq!(doc.unwrap()["verdict"], "flagged");
}

#[test]
fn capacity_a_dco_hides_is_told_with_its_restore_and_a_whole_drive_is_clean() {
    need_root!();
    let _l = device_lock();
    // The recorded 750 GB drive (its DCO's real maximum, 1465149168
    // sectors, is what it shows), and the same drive showing and reporting
    // natively 4,000,000 sectors less: capacity only the DCO still names.
    let real = 1_465_149_168;
    let shown = real - 4_000_000;
    let (a, b) = (new_wd(5, "81.00A81", real), new_wd(5, "81.00A81", shown));
    let d = declared_disks(&[&a, &b]);
    let (fake, path) =
        recorded_drives(&[(&d[0].dev, a, Some("hdparm-N-750g.txt")), (&d[1].dev, b, None)]);
    let name = d[1].dev.trim_start_matches("/dev/");
    let hpa = format!("\n/dev/sdb:\n max sectors   = {shown}/{shown}, HPA is disabled\n");
    std::fs::write(fake.path().join(format!("{name}.hdparm")), hpa).unwrap();
    for x in &d {
        dco(fake.path(), &x.dev);
    }
    let (out, doc) = inspect(&[&d[0].dev, &d[1].dev], &path);
    assert_eq!(out.status.code(), Some(1));
    let doc = doc.unwrap();
    assert_eq!(doc["disks"][0]["verdict"], "clean", "{}", doc["disks"][0]);
    // One peer is no majority: its size alone is no finding.
    assert_eq!(concerns(&doc)[1], ["hidden_capacity"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("hidden capacity: 2.05 GB beyond the 748.11 GB shown (a Device Configuration Overlay (hdparm --dco-identify: real maximum 1465149168 sectors)"), "{text}");
    assert!(
        text.contains("its data may be lost): show it with `hdparm --dco-restore` before testing"),
        "{text}"
    );
}

#[test]
fn recorded_nvme_and_sas_drives_are_inspected_and_their_opal_state_said_unread() {
    need_root!();
    let _l = device_lock();
    let (nvme, sas) = (recorded_smart("nvme"), recorded_smart("sas"));
    let d = declared_disks(&[&nvme, &sas]);
    let (_fake, path) = recorded_drives(&[(&d[0].dev, nvme, None), (&d[1].dev, sas, None)]);
    let (out, doc) = inspect(&[&d[0].dev, &d[1].dev], &path);
    assert_eq!(out.status.code(), Some(1), "both used");
    let doc = doc.unwrap();
    assert_eq!(concerns(&doc), [vec!["used"], vec!["used"]]);
    let text = String::from_utf8_lossy(&out.stdout);
    says_all(
        &text,
        &[
            "INTEL SSDPEKNW010T8",
            "used: 2,401 power-on hours",
            "SEAGATE ST1200MM0088",
            "used: 5,675 power-on hours",
            "10,500",
            "a TCG Opal lock is not read here",
        ],
    );
    // Neither is ATA: hdparm is not asked.
    assert!(!doc.to_string().contains("hdparm"), "{doc}");
}

#[test]
fn a_drive_without_smart_data_is_not_judged_new_and_the_verdict_says_so() {
    need_root!();
    let _l = device_lock();
    let none = serde_json::json!({"smartctl": {"messages": [{"string": "Unable to detect device type", "severity": "error"}], "exit_status": 1}});
    let wd = new_wd(3, "81.00A81", WHOLE);
    let d = declared_disks(&[&wd, &none]);
    let (_fake, path) = recorded_drives(&[(&d[0].dev, wd, None), (&d[1].dev, none, None)]);
    let (out, doc) = inspect(&[&d[0].dev, &d[1].dev], &path);
    assert_eq!(out.status.code(), Some(3), "not judged");
    let doc = doc.unwrap();
    assert_eq!(doc["verdict"], "not_judged");
    assert_eq!(doc["disks"][0]["verdict"], "clean");
    assert_eq!(doc["disks"][1]["verdict"], "not_known");
    let msg = doc["message"].as_str().unwrap();
    assert!(msg.contains(&format!("no SMART data came from {}:", d[1].dev)), "{msg}");
    // hdparm failed for the SATA drive: said, not guessed.
    let not_read = doc["disks"][0]["declared"]["not_read"].to_string();
    assert!(not_read.contains("HPA"), "{not_read}");
}

#[test]
fn each_smartctl_release_gives_every_finding_its_data_allows_and_names_what_it_cannot() {
    need_root!();
    let _l = device_lock();
    let kinds = ["ata", "sas", "nvme"].map(|k| smart_of_release(k, "7.5"));
    let d = declared_disks(&kinds.iter().collect::<Vec<_>>());
    for release in ["7.2", "7.3", "7.4", "7.5"] {
        // The ATA drive is the Seagate with a FARM log; each document is
        // what that release writes for it.
        let (_fake, path) = recorded_drives_of(
            release,
            &[
                (&d[0].dev, smart_of_release("ata", release), Some("hdparm-N-none.txt")),
                (&d[1].dev, smart_of_release("sas", release), None),
                (&d[2].dev, smart_of_release("nvme", release), None),
            ],
        );
        let (out, doc) = inspect(&[&d[0].dev, &d[1].dev, &d[2].dev], &path);
        let doc = doc.unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains("INVALID ARGUMENT"), "{release}: {all}");
        let [ata, sas, nvme] = [0, 1, 2].map(|i| &doc["disks"][i]["declared"]);
        let farm = ata["farm"]["power_on_hours"].as_u64();
        let farm_unread = format!(
            "FARM hours (Seagate, `-l farm`) need smartctl 7.4 or later; this host has {release}"
        );
        if release < "7.4" {
            assert_eq!(farm, None, "{release}: {ata}");
            assert!(ata["not_read"].to_string().contains(&farm_unread), "{release}: {ata}");
            assert!(all.contains(&farm_unread), "{release}: said in the table\n{all}");
        } else {
            assert_eq!(farm, Some(31383), "{release}: {ata}");
            assert!(!ata["not_read"].to_string().contains("FARM"), "{release}: {ata}");
        }
        // Every release's SAS model and firmware, under whichever name.
        assert_eq!(sas["model"], "SEAGATE ST1200MM0088", "{release}: {sas}");
        assert_eq!(sas["firmware"], "N004", "{release}: {sas}");
        assert_eq!(sas["power_on_hours"], 5675, "{release}: {sas}");
        let start_stops = sas["not_read"].to_string().contains("SAS start-stop cycles");
        assert_eq!(start_stops, release == "7.2", "{release}: {sas}");
        assert_eq!(nvme["model"], "INTEL SSDPEKNW010T8", "{release}: {nvme}");
        assert_eq!(nvme["power_on_hours"], 2401, "{release}: {nvme}");
        // Every drive was read: each is judged on its hours.
        assert_eq!(concerns(&doc)[1..], [vec!["used"], vec!["used"]], "{release}");
    }
}

#[test]
fn the_real_smartctl_of_this_host_is_asked_only_what_it_takes_and_its_error_said_once() {
    need_root!();
    if !tools_here(&["smartctl"], "smartmontools") {
        return;
    }
    let _l = device_lock();
    let d = disks(1, 16 * MIB);
    let (out, doc) = inspect(&[&d[0].dev], &std::env::var("PATH").unwrap());
    let doc = doc.unwrap();
    let all =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("INVALID ARGUMENT") && !all.contains("smartctl -h"), "{all}");
    let not_read = doc["disks"][0]["declared"]["not_read"].as_array().unwrap();
    let smart: Vec<&str> =
        not_read.iter().filter_map(|n| n.as_str()).filter(|n| n.starts_with("SMART")).collect();
    assert_eq!(smart.len(), 1, "{not_read:?}");
    assert!(smart[0].contains("smartctl cannot tell what kind of device it is"), "{smart:?}");
    assert!(!smart[0].contains(&d[0].dev), "the line names no device; the report does: {smart:?}");
    // The table names the disk once on the line that says it.
    let line = all.lines().find(|l| l.contains("cannot tell what kind")).unwrap();
    assert_eq!(line.matches(&d[0].dev).count(), 1, "{line}");
}

/// `inspect --probe --destructive --yes DISK`: its output and JSON.
fn probe(dev: &str) -> (std::process::Output, Value) {
    let path = std::env::var("PATH").unwrap();
    let (out, doc) = inspect(&["--probe", "--destructive", "--yes", dev], &path);
    (out, doc.expect("the JSON"))
}

#[test]
fn the_probe_is_refused_without_destructive_or_yes_and_writes_nothing() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 16 * MIB);
    let before = sectors_written(&d[0].dev);
    let path = std::env::var("PATH").unwrap();
    for (args, why) in [
        (vec!["--probe", d[0].dev.as_str()], "add --destructive"),
        (vec!["--probe", "--destructive", d[0].dev.as_str()], "add --yes"),
    ] {
        let (out, doc) = inspect(&args, &path);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(why) && err.contains("nothing was written"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(doc.is_none(), "no JSON from a refusal");
    }
    // The scattered-write probe's times mean nothing without --probe.
    for flag in ["--smr-probe", "--smr-idle"] {
        let (out, doc) = inspect(&[flag, "5s", d[0].dev.as_str()], &path);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("not provided: --probe"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(doc.is_none(), "no JSON from a refusal");
    }
    assert_eq!(sectors_written(&d[0].dev), before);
}

#[test]
fn the_probe_finds_the_usable_size_to_the_block_whether_the_rest_wraps_or_keeps_nothing() {
    need_root!();
    let _l = device_lock();
    // A whole disk is whole.
    let whole = disks(1, 64 * MIB);
    let (out, doc) = probe(&whole[0].dev);
    assert_eq!(out.status.code(), Some(3), "whole, but no SMART: not judged");
    let p = &doc["disks"][0]["probe"];
    assert_eq!(p["usable_bytes"], p["announced_bytes"]);
    assert!(p["past"].is_null());
    // 1 GiB whose upper half is the lower half (f3probe's model).
    let wraps = FaultyDisk::aliased(GIB, GIB / 2, 0);
    let (out, doc) = probe(&wraps.dev);
    assert_eq!(out.status.code(), Some(1), "fake capacity is something to act on");
    let p = &doc["disks"][0]["probe"];
    assert_eq!(p["usable_bytes"].as_u64(), Some(GIB / 2), "{p}");
    assert_eq!(p["past"], serde_json::json!({"how": "aliased", "shift_bytes": GIB / 2}));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fake capacity: only the first 536.87 MB of the 1.07 GB announced"),
        "{text}"
    );
    assert!(text.contains("--range 0..536870912"), "{text}");
    // Writes past 700 MiB and 3 blocks kept nowhere (they read back zeros).
    let real = 700 * MIB + 3 * 4096;
    let drops = FaultyDisk::garbling(GIB, &[], &[(real, GIB - real)], &[]);
    let (_, doc) = probe(&drops.dev);
    let p = &doc["disks"][0]["probe"];
    assert_eq!(p["usable_bytes"].as_u64(), Some(real), "{p}");
    assert_eq!(p["past"]["how"], "lost");
}

#[test]
fn on_a_16_tib_disk_a_wrap_at_any_block_is_found_to_the_block() {
    need_root!();
    let _l = device_lock();
    // 16 TiB announced (offsets past 2^32 blocks), 3 TiB and 3 blocks
    // real, the rest the start again: not a power of two, where f3probe
    // looks.
    let size = 16 << 40;
    let real = (3 << 40) + 3 * 4096;
    let fake = FaultyDisk::aliased(size, real, 0);
    let (out, doc) = probe(&fake.dev);
    assert_eq!(out.status.code(), Some(1));
    let p = &doc["disks"][0]["probe"];
    assert_eq!(p["usable_bytes"].as_u64(), Some(real), "{p}");
    assert_eq!(p["past"]["shift_bytes"].as_u64(), Some(real), "{p}");
    // At most the first GiB and a few hundred blocks were written.
    assert!(p["written_bytes"].as_u64().unwrap() < GIB + 4 * MIB, "{p}");
}

#[test]
fn a_check_and_a_burn_in_open_with_the_inspection_refuse_a_locked_drive_and_the_fleet_notes_it() {
    need_root!();
    let _l = device_lock();
    let d = disks(3, 32 * MIB);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let (_fake, path) = recorded_drives(&[
        (&d[0].dev, recorded_smart("farm-reset"), None),
        (&d[1].dev, recorded_smart("farm"), None),
        (&d[2].dev, recorded_smart("farm"), None),
    ]);
    let dir = tempdir();
    let json = dir.path().join("check.json");
    let mut args = vec!["check", "--sample", "2s", "-j", json.to_str().unwrap()];
    args.extend(&devs);
    let calm = Throttle::calm(&d);
    let out = calm.command(&args).env("PATH", &path).output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{text}");
    // The table opens the check; its findings are notes (a check does
    // not judge hours: its disks are in service).
    assert!(text.contains("Inspection: what each drive declares of itself"), "{text}");
    assert!(text.contains("note: hours reset: SMART says 12 h"), "{text}");
    assert!(!text.contains("note: used:"), "{text}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        doc["inspection"][0]["findings"][0]["concern"], "hours_reset",
        "{}",
        doc["inspection"]
    );
    assert!(
        !doc["summary"]["message"].as_str().unwrap().contains("hours reset"),
        "a note, not the verdict"
    );
    // The fleet report notes it, host by host.
    let fleet = arrayburn(&["report", json.to_str().unwrap()]).output_within(RUN);
    let ftext = String::from_utf8_lossy(&fleet.stdout);
    let ferr = String::from_utf8_lossy(&fleet.stderr);
    // (It once printed nothing here in a full run; what it said goes with the failure.)
    assert!(ftext.contains("What the drives declared"), "{:?}: {ftext}{ferr}", fleet.status);
    assert!(ftext.contains(&format!("{}: hours reset: SMART says 12 h", d[0].dev)), "{ftext}");
    // An inspection's own result read with it: its findings are the
    // fleet's (a run that found something), and it is listed with its host.
    let inspected = dir.path().join("inspect.json");
    let mut args = vec!["inspect", "-j", inspected.to_str().unwrap()];
    args.extend(&devs);
    let out = arrayburn(&args).env("PATH", &path).output_within(RUN);
    assert_eq!(out.status.code(), Some(1));
    let fjson = dir.path().join("fleet.json");
    let both = [json.to_str().unwrap(), inspected.to_str().unwrap()];
    let fleet =
        arrayburn(&["report", "-j", fjson.to_str().unwrap(), both[0], both[1]]).output_within(RUN);
    let ftext = String::from_utf8_lossy(&fleet.stdout);
    assert_eq!(fleet.status.code(), Some(1), "{ftext}");
    assert!(ftext.contains("inspection of 3 disk(s): 3 of 3 disk(s) to act on"), "{ftext}");
    let f: Value = serde_json::from_slice(&std::fs::read(&fjson).unwrap()).unwrap();
    let runs = f["runs"].to_string();
    assert!(runs.contains("\"kind\":\"inspect\"") && runs.contains("hours reset"), "{runs}");
    // A locked drive: refused by the check and the burn-in before a
    // sector is read or written, never called bad media.
    let (_fake, path) = recorded_drives(&[
        (&d[0].dev, recorded_smart("farm"), None),
        (&d[1].dev, recorded_smart("ata-locked"), None),
    ]);
    let before = sectors_written(&d[1].dev);
    let state = tempdir();
    for args in [
        vec!["check", &d[0].dev, &d[1].dev],
        vec![
            "burnin",
            "--destructive",
            "--yes",
            "--state",
            state.path().to_str().unwrap(),
            &d[0].dev,
            &d[1].dev,
        ],
    ] {
        let out = arrayburn(&args).env("PATH", &path).output_within(RUN);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let line = err.lines().find(|l| l.contains("error:")).unwrap_or_default();
        assert!(line.contains(&format!("{} is locked", d[1].dev)), "{err}");
        assert!(
            line.contains("unlock it before") && line.contains("no fault of its media"),
            "{err}"
        );
    }
    assert_eq!(sectors_written(&d[1].dev), before);
}

#[test]
fn a_sas_drive_of_520_byte_sectors_or_protection_information_is_named_and_refused() {
    need_root!();
    let _l = device_lock();
    // What smartctl 7.3 writes of an array's drive: 520-byte sectors; and
    // of one formatted with protection information type 2.
    let plain = smart_of_release("sas", "7.3");
    let mut of_520 = smart_of_release("sas", "7.3");
    of_520["logical_block_size"] = 520.into();
    let mut of_pi = smart_of_release("sas", "7.3");
    of_pi["scsi_protection_type"] = 2.into();
    let d = declared_disks(&[&plain, &of_520, &of_pi]);
    let (_fake, path) = recorded_drives_of(
        "7.3",
        &[(&d[0].dev, plain, None), (&d[1].dev, of_520, None), (&d[2].dev, of_pi, None)],
    );
    let devs = [d[0].dev.as_str(), d[1].dev.as_str(), d[2].dev.as_str()];
    let (out, doc) = inspect(&devs, &path);
    assert_eq!(out.status.code(), Some(1), "to act on");
    let doc = doc.unwrap();
    assert_eq!(concerns(&doc)[0], ["used"], "a plain SAS drive has no format finding");
    // The kernel reads the second in 512-byte sectors: what was measured
    // wins over smartctl's claim of 520 (Linux leaves a drive of 520-byte
    // sectors at size 0, and the refusal said so of a disk it read).
    assert_eq!(concerns(&doc)[1], ["used"], "{}", doc["disks"][1]);
    assert_eq!(doc["disks"][1]["declared"]["logical_block"], 512);
    assert_eq!(concerns(&doc)[2][0], "untested_format");
    let text = String::from_utf8_lossy(&out.stdout);
    says_all(
        &text,
        &[
            "formatted with protection information (T10 PI type 2",
            "sg_format --format --size=512 --fmtpinfo=0 /dev/",
            "destroys everything on the drive",
        ],
    );
    assert!(!text.contains("520-byte"), "{text}");
    // The check and the burn-in refuse the one with protection
    // information, before a sector is read or written.
    let before: Vec<u64> = d.iter().map(|x| sectors_written(&x.dev)).collect();
    let state = tempdir();
    for bad in [2] {
        for args in [
            vec!["check", devs[0], devs[bad]],
            vec![
                "burnin",
                "--destructive",
                "--yes",
                "--state",
                state.path().to_str().unwrap(),
                devs[0],
                devs[bad],
            ],
        ] {
            let out = arrayburn(&args).env("PATH", &path).output_within(RUN);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            let lines: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
            assert_eq!(lines.len(), 1, "{err}");
            assert!(lines[0].contains(&format!("{}: formatted with", devs[bad])), "{err}");
            assert!(lines[0].contains("sg_format --format --size=512"), "{err}");
            assert!(lines[0].contains("nothing was read or written"), "{err}");
        }
    }
    let after: Vec<u64> = d.iter().map(|x| sectors_written(&x.dev)).collect();
    assert_eq!(after, before);
}

#[test]
fn a_raid_volume_is_named_as_one_and_its_drives_are_read_through_the_controller() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 16 * MIB);
    // smartctl 7.3 as it answers on a host with a Dell PERC: the volume
    // cannot be opened as a drive, --scan-open lists its drives as
    // sat+megaraid,N, and each answers through the controller; drive 1
    // says its health failed.
    let raid = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/smart/raid");
    let fake = tempdir();
    let mut failing = recorded_smart("raid/megaraid-member-7.3");
    failing["smart_status"]["passed"] = false.into();
    failing["serial_number"] = "S6ESNC0W699999".into();
    let failing_at = fake.path().join("failing.json");
    std::fs::write(&failing_at, failing.to_string()).unwrap();
    // Each drive's answer waits (20 s at most) until all four were asked,
    // and says whether they were asked together: one at a time, a
    // controller of 24 drives that do not answer took 24 minutes.
    let met = fake.path().join("met");
    std::fs::create_dir(&met).unwrap();
    let together = format!(
        "case \"$*\" in *megaraid,*) n=${{*##*megaraid,}}; n=${{n%% *}}; touch {m}/asked.$n; i=0; while [ $(ls {m} | grep -c asked) -lt 4 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done; [ $(ls {m} | grep -c asked) -ge 4 ] && touch {m}/together.$n;; esac",
        m = met.display()
    );
    fake_smartctl(
        fake.path(),
        "7.3",
        &format!(
            "case \"$*\" in *--scan-open*) cat {r}/scan-open-megaraid.txt; exit 0;; esac\n{together}\ncase \"$*\" in *megaraid,1\\ *) cat {f}; exit 8;; *megaraid,*) cat {r}/megaraid-member-7.3.json; exit 0;; esac\ncat {r}/perc-volume-7.3.json; exit 2",
            r = raid.display(),
            f = failing_at.display()
        ),
    );
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    let (out, doc) = inspect(&[&d[0].dev], &path);
    let doc = doc.unwrap();
    assert_eq!(out.status.code(), Some(1), "a drive behind it failed");
    // Three drives answer with one serial (the controller's answer for
    // each): said, not "clean" without a word.
    assert_eq!(concerns(&doc)[0], ["raid_volume", "serial_duplicated", "drive_behind_failing"]);
    let text = String::from_utf8_lossy(&out.stdout);
    says_all(
        &text,
        &[
            "a volume of a Broadcom MegaRAID (Dell PERC, Lenovo ServeRAID) controller, not a drive",
            "a check measures the volume's speed, not any one drive's",
            "set the controller to HBA or JBOD mode",
            "-d sat+megaraid,0 /dev/bus/0: SAMSUNG MZ7L31T9HBLT-00A07, S6ESNC0W622008, 11,464 h, health passed",
            "a drive behind it says its SMART health failed (-d sat+megaraid,1 /dev/bus/0: SAMSUNG MZ7L31T9HBLT-00A07, S6ESNC0W699999",
        ],
    );
    let members = doc["disks"][0]["declared"]["raid"]["members"].as_array().unwrap();
    assert_eq!(members.len(), 4, "{members:?}");
    let mut met: Vec<String> = std::fs::read_dir(&met)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    met.sort();
    assert_eq!(
        met.iter().filter(|m| m.starts_with("together.")).count(),
        4,
        "asked one at a time: {met:?}"
    );
    // The volume's own refusal is not shown as smartctl's error.
    assert!(!text.contains("please try adding"), "{text}");
}

#[test]
fn a_size_the_kernel_contradicts_and_a_serial_two_drives_share_are_findings() {
    need_root!();
    let _l = device_lock();
    // One recording served to three 16 MiB disks as is: each declares the
    // recorded drive's 14 TB and its one serial ("clean" before).
    let mut big = new_wd(5, "81.00A81", 27_344_764_928);
    big["serial_number"] = "9RK1ABCD".into();
    let d = disks(3, 16 * MIB);
    let fake = tempdir();
    let at = fake.path().join("big.json");
    std::fs::write(&at, big.to_string()).unwrap();
    fake_smartctl(fake.path(), "7.5", &format!("cat {}", at.display()));
    fake_tool(fake.path(), "hdparm", "exit 22");
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap());
    let (out, doc) = inspect(&[&d[0].dev], &path);
    let doc = doc.unwrap();
    assert_eq!(out.status.code(), Some(1), "to act on");
    assert_eq!(concerns(&doc)[0], ["declared_size_differs"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("declares 14.00 TB to SMART, but the kernel reads 16.78 MB"), "{text}");
    let (out, doc) = inspect(&[&d[0].dev, &d[1].dev, &d[2].dev], &path);
    assert_eq!(out.status.code(), Some(1));
    let doc = doc.unwrap();
    for (i, c) in concerns(&doc).iter().enumerate() {
        assert!(c.contains(&"serial_duplicated".to_string()), "{i}: {c:?}");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let (b, c) = (d[1].name(), d[2].name());
    assert!(text.contains(&format!("serial 9RK1ABCD is also {b}, {c}'s")), "{text}");
}

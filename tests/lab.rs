//! The lab's tests: arrayburn on Debian 12's own kernel under QEMU, over
//! emulated SATA, NVMe and SAS drives behind the real ahci, nvme,
//! megaraid_sas and mptsas drivers, Debian 12's smartctl 7.3, and scsi_debug disks
//! with medium errors at known blocks (`scripts/lab.sh`, README "The
//! lab"). One boot serves them all: the first test to ask runs
//! tests/lab/scenario.sh in two guests at once, half of it in each (their
//! files come back through /out)
//! and keeps what it wrote under target/lab/runs/KEY (KEY: the scenario,
//! the script and the binary), and each test reads its part. Speeds in the
//! guest are the emulator's: no test here judges one.
//!
//! Each takes the device lock exclusively, as a timed test does: the
//! emulated CPUs and the drive files they fill (gigabytes)
//! cost a paced burn-in beside it its pace, twice in two full runs, even
//! at nice 19; and at nice 19 the tests beside it starved the guest until
//! its kernel timed out an emulated NVMe drive's reads. So it runs at
//! the test's priority, alone among the device tests.
//!
//! Without root, or where the lab cannot start (no QEMU and no way to
//! install it), each test says why and skips; `ARRAYBURN_REQUIRE_LAB=1`
//! (CI) makes that a failure.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use serde_json::Value;

use crate::util::{Start, device_lock};

/// The scenario's drives: scripts/lab.sh's default set, a zoned NVMe
/// namespace, an NVMe controller of two namespaces and a null_blk disk.
const DRIVES: &str = "sata=2:model=LAB HDD 5400:rpm=5400,sata:model=LAB OTHER HDD:rpm=7200,nvme=2,megaraid=2,hba=2,zns,nvme:ns=2:serial=LABNS:size=64,null_blk:gb=1";

/// The most a boot and its scenario may take (the packages installed
/// first on a fresh machine, then about a minute under TCG).
const LAB_LIMIT: Duration = Duration::from_secs(900);

/// What the lab's guest wrote, or None (said why) where no lab can start
/// here and none is required.
fn boot() -> Option<PathBuf> {
    let required = std::env::var_os("ARRAYBURN_REQUIRE_LAB").is_some_and(|v| v == "1");
    let skip = |why: &str| {
        assert!(!required, "ARRAYBURN_REQUIRE_LAB=1 but {why}");
        eprintln!("skipped: {why}");
    };
    if !nix::unistd::Uid::effective().is_root() {
        skip("the lab needs root (it installs QEMU and the kernel, and boots them)");
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario = std::fs::read_to_string(root.join("tests/lab/scenario.sh")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_arrayburn"));
    let runs = root.join("target/lab/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let mut key = std::hash::DefaultHasher::new();
    scenario.hash(&mut key);
    std::fs::read(root.join("scripts/lab.sh")).unwrap().hash(&mut key);
    let meta = std::fs::metadata(bin).unwrap();
    (meta.len(), meta.modified().unwrap()).hash(&mut key);
    let dir = runs.join(format!("{:016x}", key.finish()));
    // One lab at a time; the tests that come later read what it wrote.
    let _booting = take(&runs.join("lock"));
    if dir.join("done").exists() {
        return Some(dir);
    }
    let out = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let began = Instant::now();
    // Two guests at once, each one part of the scenario (its LAB_PART) on
    // the same drives, writing into the same folder (each step's files
    // its own): they wait on the emulator's timers more than they
    // compute, so the two cores take both in the time of the longer.
    // At the test's own priority: the device lock it holds keeps every
    // device test away, and an emulator starved by the tests beside it
    // (at nice 19 a CI run's guest took 612 s, not 180) times out its own
    // drives' commands.
    let parts: Vec<(&str, std::process::Output)> = std::thread::scope(|s| {
        let guests: Vec<_> = ["drives", "faults"]
            .map(|part| {
                let command = format!("LAB_PART={part}\n{scenario}");
                let out = &out;
                s.spawn(move || {
                    let run = Command::new("bash")
                        .arg(root.join("scripts/lab.sh"))
                        .args([
                            "--binary".as_ref(),
                            bin.as_os_str(),
                            "--out".as_ref(),
                            out.as_os_str(),
                        ])
                        .args(["--drives", DRIVES, "--", &command])
                        .env("LAB_TIMEOUT", "840")
                        .output_within(LAB_LIMIT);
                    (part, run)
                })
            })
            .into();
        guests.into_iter().map(|g| g.join().unwrap()).collect()
    });
    let said: String = parts
        .iter()
        .map(|(part, run)| {
            let (o, e) =
                (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
            format!("[the {part} part, exit {:?}]\n{o}{e}", run.status.code())
        })
        .collect();
    eprintln!("the lab ran for {:.0} s:\n{said}", began.elapsed().as_secs_f64());
    // Only a lab that could not start is skipped (no packages, no guest);
    // a guest whose command did not end is a failure, kept for every test.
    let unstarted = ["needs ", "could not install ", "the guest did not boot"]
        .iter()
        .any(|w| said.contains(&format!("scripts/lab.sh: {w}")));
    if parts.iter().any(|(_, run)| run.status.code() == Some(2)) && unstarted {
        skip(&format!("the lab did not start: {}", said.trim()));
        return None;
    }
    // Kept whatever it was: the tests that come later read it, not boot
    // again.
    std::fs::write(out.join("lab.txt"), &said).unwrap();
    // The first part's status that is not 0, else 0.
    let code = (parts.iter().map(|(_, run)| run.status.code().unwrap_or(-1)))
        .find(|&c| c != 0)
        .unwrap_or(0);
    std::fs::write(out.join("done"), format!("{code} {:.1}\n", began.elapsed().as_secs_f64()))
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&out, &dir).unwrap();
    Some(dir)
}

/// What the lab wrote, once its scenario ran to its end.
fn lab() -> Option<PathBuf> {
    let dir = boot()?;
    let done = std::fs::read_to_string(dir.join("done")).unwrap();
    let said = std::fs::read_to_string(dir.join("lab.txt")).unwrap_or_default();
    assert!(
        done.starts_with("0 "),
        "the scenario ended with {done}(its steps never fail it): {said}"
    );
    Some(dir)
}

/// An exclusive `flock` on `path`, waited for at most [`LAB_LIMIT`].
fn take(path: &Path) -> Flock<std::fs::File> {
    let until = Instant::now() + LAB_LIMIT;
    let mut file = std::fs::File::create(path).unwrap();
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(l) => return l,
            Err((f, _)) if Instant::now() < until => {
                file = f;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err((_, e)) => panic!("{} still locked after {LAB_LIMIT:?}: {e}", path.display()),
        }
    }
}

/// A step's outputs: its exit status, its text, its JSON (Null without).
struct Step {
    code: i32,
    text: String,
    json: Value,
}

fn step(dir: &Path, name: &str) -> Step {
    let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}")));
    let text = read("txt").unwrap_or_else(|e| panic!("no {name}.txt from the guest: {e}"));
    let code = read("code").unwrap().trim().parse().unwrap();
    let json = read("json").map_or(Value::Null, |j| serde_json::from_str(&j).unwrap());
    Step { code, text, json }
}

/// Whether a report's SMART lines say `words` of `path` (a line said of
/// several disks names them all: `SMART /dev/sda, /dev/sdb: ...`).
fn smart_says(text: &str, path: &str, words: &str) -> bool {
    text.lines()
        .filter_map(|l| l.strip_prefix("SMART ")?.split_once(": "))
        .any(|(paths, said)| paths.split(", ").any(|p| p == path) && said.starts_with(words))
}

/// The entry of `path` in a report's `disks`.
fn disk<'a>(doc: &'a Value, path: &str) -> &'a Value {
    let all = doc.as_array().or_else(|| doc["disks"].as_array()).unwrap();
    all.iter().find(|d| d["path"] == path).unwrap_or_else(|| panic!("no {path} in {doc}"))
}

#[test]
fn every_kind_is_listed_with_its_transport_driver_link_and_by_id_link() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    let list = step(&lab, "list");
    assert_eq!(list.code, 0, "{}", list.text);
    // (path, transport, driver, link kind, rotational, by-id link)
    let kinds = [
        ("/dev/sda", "sata", "ahci", "sata", true, "ata-LAB_HDD_5400_LABSATA00"),
        ("/dev/sdb", "sata", "ahci", "sata", true, "ata-LAB_HDD_5400_LABSATA01"),
        ("/dev/sdc", "sata", "ahci", "sata", true, "ata-LAB_OTHER_HDD_LABSATA02"),
        ("/dev/nvme0n1", "nvme", "nvme", "pcie", false, "nvme-QEMU_NVMe_Ctrl_LABNVME00"),
        ("/dev/nvme1n1", "nvme", "nvme", "pcie", false, "nvme-QEMU_NVMe_Ctrl_LABNVME01"),
        ("/dev/nvme2n1", "nvme", "nvme", "pcie", false, "nvme-QEMU_NVMe_Ctrl_LABZNS02"),
        ("/dev/sdd", "scsi", "megaraid_sas", "pcie", true, "scsi-0SEAGATE_LAB_SAS_MR_LABMR00"),
        ("/dev/sde", "scsi", "megaraid_sas", "pcie", true, "scsi-0SEAGATE_LAB_SAS_MR_LABMR01"),
        // The HBA's: by their SAS addresses, on a SAS link of their own.
        ("/dev/sdf", "sas", "mptsas", "sas", true, "scsi-35000c50000000001"),
        ("/dev/sdg", "sas", "mptsas", "sas", true, "scsi-35000c50000000002"),
    ];
    let listed = list.json.as_array().unwrap();
    // And the two namespaces of one controller, each by its own link:
    // udev gives the controller's plain one to the namespace it saw last.
    let namespaces = std::fs::read_to_string(lab.join("namespaces.txt")).unwrap();
    let namespaces: Vec<&str> = namespaces.lines().collect();
    assert_eq!(namespaces.len(), 2, "{namespaces:?}");
    for (j, path) in namespaces.iter().enumerate() {
        let link = format!("/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABNS0_{}", j + 1);
        assert_eq!(disk(&list.json, path)["by_id"], link.as_str(), "{}", list.text);
    }
    // And the null_blk disk the lab loaded with its parameters (1 GiB).
    let null = disk(&list.json, "/dev/nullb0");
    assert_eq!(
        (null["topology"]["transport"].as_str(), null["size_bytes"].as_u64()),
        (Some("virtual"), Some(1 << 30)),
        "{null:#}"
    );
    assert_eq!(listed.len(), kinds.len() + namespaces.len() + 1, "{}", list.text);
    for (path, transport, driver, link, spins, by_id) in kinds {
        let d = disk(&list.json, path);
        let t = &d["topology"];
        let seen = (
            t["transport"].as_str(),
            t["controller"]["driver"].as_str(),
            t["links"].as_array().and_then(|l| l.last()).and_then(|l| l["kind"].as_str()),
            d["rotational"].as_bool(),
            d["by_id"].as_str(),
        );
        let by_id = format!("/dev/disk/by-id/{by_id}");
        assert_eq!(
            seen,
            (Some(transport), Some(driver), Some(link), Some(spins), Some(by_id.as_str())),
            "{path}: {d:#}"
        );
    }
    // The SATA link's speed as the kernel gives it, though its port's
    // limit is "<unknown>" (it was "-").
    let sata = &disk(&list.json, "/dev/sda")["topology"]["links"][0];
    assert_eq!(
        (sata["current"].as_str(), sata["max"].as_str()),
        (Some("1.5 Gbps"), Some("unknown"))
    );
    assert_eq!(sata["degraded"], false);
    let table = step(&lab, "list-table").text;
    let row = table.lines().find(|l| l.starts_with("/dev/sda ")).unwrap_or_default();
    assert!(row.contains("sata 1.5 Gbps"), "{table}");
    // The HBA's drive: its phy's negotiated rate, from the SAS transport.
    let sas = &disk(&list.json, "/dev/sdf")["topology"]["links"];
    let sas = sas.as_array().and_then(|l| l.last()).unwrap();
    assert_eq!(
        (sas["current"].as_str(), &sas["degraded"]),
        (Some("3.0 Gbit"), &Value::Bool(false))
    );
    let row = table.lines().find(|l| l.starts_with("/dev/sdf ")).unwrap_or_default();
    assert!(row.contains("mptsas") && row.contains("sas 3.0 Gbit"), "{table}");
    let mut serials: Vec<&str> = listed.iter().filter_map(|d| d["serial"].as_str()).collect();
    serials.sort_unstable();
    serials.dedup();
    // (The two namespaces share their controller's.)
    assert_eq!(serials.len(), kinds.len() + 1, "{}", list.text);
}

#[test]
fn inspect_reads_smart_7_3_of_sata_and_nvme_and_says_what_the_megaraid_and_hba_drives_gave() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    let inspect = step(&lab, "inspect");
    // Two drives without SMART: nothing to act on, their hours not known.
    assert_eq!(inspect.code, 3, "{}", inspect.text);
    assert_eq!(inspect.json["verdict"], "not_judged", "{}", inspect.text);
    let message = inspect.json["message"].as_str().unwrap();
    assert!(
        message.contains("no SMART data came from /dev/sdd, /dev/sde, /dev/sdf, /dev/sdg"),
        "{message}"
    );
    let declared = |path: &str| disk(&inspect.json, path)["declared"].clone();
    for (path, rpm) in [("/dev/sda", 5400), ("/dev/sdc", 7200), ("/dev/nvme0n1", 0)] {
        let d = declared(path);
        assert_eq!(
            (d["smart"].as_bool(), d["rotation_rpm"].as_u64()),
            (Some(true), Some(rpm)),
            "{d:#}"
        );
        assert!(d["power_on_hours"].is_u64(), "{d:#}");
    }
    assert_eq!(disk(&inspect.json, "/dev/sda")["verdict"], "clean");
    // RAID fitness: QEMU's ATA drive has no SCT (so no error recovery
    // control) beside the kernel's real 30 s timer: not fit as it is, a
    // note; NVMe: not applicable.
    let sda = disk(&inspect.json, "/dev/sda");
    assert_eq!(sda["declared"]["kernel_timeout_s"], 30, "{sda:#}");
    assert_eq!(sda["fit"]["fitness"], "unfit", "{sda:#}");
    let why = sda["fit"]["sentence"].as_str().unwrap();
    assert!(
        why.starts_with("cannot limit its retries")
            && why.contains("echo 180 > /sys/block/sda/device/timeout"),
        "{why}"
    );
    assert!(inspect.text.contains("NO: no ERC"), "{}", inspect.text);
    assert_eq!(disk(&inspect.json, "/dev/nvme0n1")["fit"]["fitness"], "not_applicable");
    for path in ["/dev/sdd", "/dev/sde"] {
        let d = declared(path);
        // Its identity through smartctl; no rotation it never reported.
        assert_eq!(
            (d["smart"].as_bool(), d["model"].as_str()),
            (Some(false), Some("SEAGATE LAB SAS MR"))
        );
        assert!(d["rotation_rpm"].is_null() && d["power_on_hours"].is_null(), "{d:#}");
        let why = format!(
            "SMART: smartctl read the drive's identity only, then stopped (exit status 2: a command it needs failed; `smartctl -x {path}` names it): its health, hours and counters are not known"
        );
        assert!(d["not_read"].as_array().unwrap().iter().any(|n| n == why.as_str()), "{d:#}");
        assert_eq!(disk(&inspect.json, path)["verdict"], "not_known");
    }
    // The HBA's drives answer, and say they have no SMART: said so, their
    // 0 rpm and 0 °C not taken for readings.
    for path in ["/dev/sdf", "/dev/sdg"] {
        let d = declared(path);
        assert_eq!(
            (d["smart"].as_bool(), d["model"].as_str()),
            (Some(false), Some("SEAGATE LAB SAS HBA"))
        );
        assert!(d["rotation_rpm"].is_null() && d["power_on_hours"].is_null(), "{d:#}");
        let why = "SMART: the drive says it has no SMART (smartctl: \"device lacks SMART capability\"): its health, hours and counters are not known";
        assert!(d["not_read"].as_array().unwrap().iter().any(|n| n == why), "{d:#}");
        assert_eq!(disk(&inspect.json, path)["verdict"], "not_known");
    }
}

#[test]
fn self_tests_run_around_a_sata_burn_in_and_nvme_megaraid_and_hba_drives_say_why_not_unjudged() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    // QEMU's ATA drive runs a short self-test and logs it: read before and
    // after the passes.
    let sata = step(&lab, "burnin-sata");
    assert_eq!(sata.code, 0, "{}", sata.text);
    for path in ["/dev/sda", "/dev/sdb"] {
        let d = disk(&sata.json, path);
        assert_eq!(
            (d["self_test"]["state"].as_str(), d["self_test_after"]["state"].as_str()),
            (Some("passed"), Some("passed")),
            "{d:#}"
        );
        assert_eq!(d["verdict"], "healthy");
    }
    assert!(
        smart_says(&sata.text, "/dev/sda", "short self-test after the burn-in passed"),
        "{}",
        sata.text
    );
    // Debian 12's smartctl cannot start an NVMe self-test: asked, not run,
    // the disk not judged (never healthy, never failed).
    let nvme = step(&lab, "burnin-nvme");
    assert_eq!(nvme.code, 3, "{}", nvme.text);
    let d = disk(&nvme.json, "/dev/nvme0n1");
    assert_eq!(d["self_test"]["state"], "unknown", "{d:#}");
    // QEMU's NVMe counts what the host wrote (units of 512,000 bytes,
    // rounded up) and promises zeroes after a deallocate: the range left
    // trimmed through the kernel's write zeroes, read back as zeroes.
    for path in ["/dev/nvme0n1", "/dev/nvme1n1"] {
        let d = disk(&nvme.json, path);
        let e = &d["endurance"];
        assert_eq!(e["counted_by_drive"], true, "{e}");
        assert!(e["written_bytes"].as_u64().unwrap() >= 32 << 20, "{e}");
        assert_eq!(e["used_before_pct"], 0, "{e}");
        let x = &d["discarded"];
        assert_eq!(
            (x["bytes"].as_u64(), x["not_zero_bytes"].as_u64()),
            (Some(32 << 20), Some(0)),
            "{x}"
        );
        assert!(x["read_bytes"].as_u64().unwrap() > 0 && x["promised_by"].is_string(), "{x}");
    }
    assert!(smart_says(&nvme.text, "/dev/nvme0n1", "endurance: this run wrote"), "{}", nvme.text);
    assert!(
        nvme.text.contains("not decided: /dev/nvme0n1 (the short self-test asked was not run: NVMe self-tests (`-t short`, `-t long` and their log) need smartctl 7.4 or later; this host has 7.3)"),
        "{}",
        nvme.text
    );
    // The MegaRAID's drives: no SMART, said as smartctl left it; burned
    // whole, not judged.
    let sas = step(&lab, "burnin-sas");
    assert_eq!(sas.code, 3, "{}", sas.text);
    for path in ["/dev/sdd", "/dev/sde"] {
        assert_eq!(disk(&sas.json, path)["verdict"], "not_judged", "{}", sas.text);
        let said = "not compared (no SMART data: smartctl read the drive's identity only, then stopped (exit status 2";
        assert!(smart_says(&sas.text, path, said), "{}", sas.text);
    }
    // The HBA's: the same, in their own words.
    for path in ["/dev/sdf", "/dev/sdg"] {
        assert_eq!(disk(&sas.json, path)["verdict"], "not_judged", "{}", sas.text);
        let said = "not compared (no SMART data: the drive says it has no SMART";
        assert!(smart_says(&sas.text, path, said), "{}", sas.text);
    }
    assert!(!sas.text.contains("return it") && !sas.text.contains("FAILED"), "{}", sas.text);
}

#[test]
fn medium_errors_are_found_exact_to_the_block_by_check_and_burn_in_on_512_byte_and_4kn_disks() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    // (step, logical block, first bad block, how many): as the scenario
    // loads scsi_debug.
    for (name, block, first, count) in
        [("medium-512", 512, 50_000, 8), ("medium-4k", 4096, 6000, 3)]
    {
        let run = step(&lab, name);
        assert_eq!(run.code, 1, "{name}: {}", run.text);
        let dev = std::fs::read_to_string(lab.join(format!("{name}.dev"))).unwrap();
        let pass = &run.json["passes"][0];
        let d = disk(pass, dev.trim());
        let ranges: Vec<(u64, u64, bool)> = (d["errors"].as_array().unwrap().iter())
            .map(|e| {
                (e["offset"].as_u64().unwrap(), e["len"].as_u64().unwrap(), e["exact"] == true)
            })
            .collect();
        assert_eq!(ranges, [(first * block, count * block, true)], "{name}: {}", run.text);
        assert_eq!(d["verdict"], "error");
        let action = &run.json["summary"]["disk_verdicts"][0];
        assert_eq!(action["action"], "return", "{name}: {action}");
        // What the kernel saw of it: its I/O errors at requests over the
        // same blocks (the kernel names a failed request's first sector:
        // a 4 MiB read's, a 64 KiB piece's; 512-byte sectors), no path
        // trouble, the return kept.
        let k = &disk(&run.json, dev.trim())["kernel"];
        assert!(k["counts"]["io_error"].as_u64().is_some_and(|n| n > 0), "{name}: {k:#}");
        let (lo, hi) = (first * block / 512 - (4 << 20) / 512, (first + count) * block / 512);
        let sectors: Vec<u64> =
            k["sectors"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
        assert!(
            !sectors.is_empty() && sectors.iter().all(|s| (lo..hi).contains(s)),
            "{name}: {sectors:?} not in {lo}..{hi}"
        );
        assert!(
            !action["sentence"].as_str().unwrap().contains("check the path"),
            "{name}: {action}"
        );
        // The kernel's own line for the first bad block (its sectors are
        // 512 bytes whatever the disk's).
        let kernel = std::fs::read_to_string(lab.join(format!("{name}.dmesg"))).unwrap();
        let line = format!(
            "critical medium error, dev {}, sector {} op 0x0:(READ)",
            dev.trim().trim_start_matches("/dev/"),
            first * block / 512
        );
        assert!(kernel.contains(&line), "{name}: no '{line}' in:\n{kernel}");
        // Burned: written whole, and the same blocks fail to read back.
        let burn = step(&lab, &format!("{name}-burnin"));
        assert_eq!(burn.code, 1, "{name}: {}", burn.text);
        let d = disk(&burn.json, dev.trim());
        let found: Vec<(u64, u64, &str)> = (d["findings"].as_array().unwrap().iter())
            .map(|f| {
                (
                    f["offset"].as_u64().unwrap(),
                    f["len"].as_u64().unwrap(),
                    f["class"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(found, [(first * block, count * block, "read_error")], "{name}: {}", burn.text);
        assert_eq!(d["verdict"], "return");
    }
}

#[test]
fn commands_that_time_out_are_named_on_their_disk_by_a_check_and_a_burn_in_and_not_on_its_peer() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    let dev = std::fs::read_to_string(lab.join("timeout.dev")).unwrap();
    let dev = dev.trim();
    for name in ["timeout-check", "timeout-burnin"] {
        let run = step(&lab, name);
        let kernel = |path: &str| {
            let all = run.json["disks"].as_array().unwrap();
            let d = all
                .iter()
                .find(|d| d["path"] == path)
                .unwrap_or_else(|| panic!("{name}: no {path}"));
            d["kernel"].clone()
        };
        // The kernel counted the timed-out commands (scsi_debug's
        // ignored ones, each retried after 2 s): they are that disk's.
        let k = kernel(dev);
        assert!(k["not_read"].is_null(), "{name}: {k:#}");
        let timeouts = (k["counters"].as_array().unwrap().iter())
            .find(|c| c["name"] == "iotmo_cnt")
            .map(|c| c["after"].as_u64().unwrap() - c["before"].as_u64().unwrap());
        assert!(timeouts.is_some_and(|n| n > 0), "{name}: {k:#}\n{}", run.text);
        // Its action: the path, never "return it" on that alone.
        let advice = (run.json["summary"]["disk_verdicts"].as_array().unwrap().iter())
            .find(|a| a["path"] == dev)
            .cloned()
            .unwrap_or_else(|| panic!("{name}: {dev} not named: {}", run.text));
        assert_eq!(advice["action"], "check_path", "{name}: {advice:#}");
        let said = advice["sentence"].as_str().unwrap();
        assert!(said.contains("the kernel timed out a command of it"), "{name}: {said}");
        assert!(
            said.contains("not the disk on that alone") && !said.ends_with("return it"),
            "{name}: {said}"
        );
        assert!(run.text.contains("What the kernel saw during the run"), "{name}: {}", run.text);
        if name == "timeout-burnin" {
            continue;
        }
        // The SATA drive the check read beside it: none of that disk's
        // lines or timeouts are its (the emulator's AHCI has aborted a
        // queued read of it now and then: those are its own, and said).
        let peer = kernel("/dev/sdc");
        let short = dev.trim_start_matches("/dev/");
        for line in (peer["first"].as_array().into_iter().flatten())
            .chain(peer["last"].as_array().into_iter().flatten())
        {
            let line = line.as_str().unwrap();
            assert!(!line.contains(short) && !line.contains("scsi_debug"), "{name}: {line}");
        }
        assert_ne!(peer["port"], k["port"], "{name}: {peer:#}");
    }
}

#[test]
fn a_host_managed_zoned_drive_is_read_whole_and_refused_a_burn_in_and_a_host_aware_one_burned() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    let dev = std::fs::read_to_string(lab.join("zoned-hm.dev")).unwrap();
    let dev = dev.trim();
    let inspect = step(&lab, "zoned-hm-inspect");
    assert_eq!(disk(&inspect.json, dev)["declared"]["zoned"], "host_managed", "{}", inspect.text);
    // Read whole, nothing failing: a zone past its write pointer reads.
    let check = step(&lab, "zoned-hm-check");
    let pass = &check.json["passes"][0];
    let d = disk(pass, dev);
    assert_eq!(
        (d["reached_end"].as_bool(), d["read_errors"].as_u64()),
        (Some(true), Some(0)),
        "{}",
        check.text
    );
    assert_ne!(check.code, 1, "{}", check.text);
    // Its burn-in: refused in one line, exit 2 (it was "fake capacity: only
    // the first 4.19 MB ... hold data, return it": the zone rules'
    // refusals of its writes).
    let burn = step(&lab, "zoned-hm-burnin");
    assert_eq!(burn.code, 2, "{}", burn.text);
    assert_eq!(burn.text.trim().lines().count(), 1, "{}", burn.text);
    assert!(
        burn.text.contains(&format!("{dev} is a host-managed zoned drive"))
            && burn.text.contains("(nothing was written)"),
        "{}",
        burn.text
    );
    // A zoned NVMe namespace: named as one (not SMR), refused alike.
    let zns = step(&lab, "zns-inspect");
    let said = disk(&zns.json, "/dev/nvme2n1")["findings"].to_string();
    assert!(
        said.contains("zoned (host_managed): a zoned namespace (NVMe ZNS)")
            && !said.contains("SMR"),
        "{said}"
    );
    let burn = step(&lab, "zns-burnin");
    assert_eq!(burn.code, 2, "{}", burn.text);
    assert!(burn.text.contains("/dev/nvme2n1 is a host-managed zoned drive"), "{}", burn.text);
    let aware = step(&lab, "zoned-ha-burnin");
    let dev = std::fs::read_to_string(lab.join("zoned-ha.dev")).unwrap();
    let d = disk(&aware.json, dev.trim());
    // One disk, no peer: burned whole without a finding, not judged.
    assert_eq!((aware.code, d["verdict"].as_str()), (3, Some("not_judged")), "{}", aware.text);
    assert_eq!(d["bad_bytes"], serde_json::json!([]), "{}", aware.text);
}

#[test]
fn an_nvme_namespace_with_metadata_is_named_and_refused_with_the_command_that_makes_it_plain() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    // 512 + 8 bytes, no protection information (QEMU's LBA format 1).
    let list = step(&lab, "nvme-meta-list");
    let format = &disk(&list.json, "/dev/nvme1n1")["format"];
    assert_eq!(
        (format["nvme"]["bytes"].as_u64(), format["nvme"]["plain_lbaf"].as_u64()),
        (Some(8), Some(0)),
        "{format}"
    );
    for name in ["nvme-meta-burnin", "nvme-meta-check"] {
        let run = step(&lab, name);
        assert_eq!((run.code, run.text.trim().lines().count()), (2, 1), "{name}: {}", run.text);
        assert!(
            run.text.contains("/dev/nvme1n1: formatted with 8 bytes of metadata per 512-byte block (no protection information)")
                && run.text.contains("nvme format /dev/nvme1n1 --lbaf=0 (nvme-cli"),
            "{name}: {}",
            run.text
        );
    }
    // 4096 + 8 with PI type 1: said so, the plain 4096-byte format named.
    let pi = step(&lab, "nvme-pi-burnin");
    assert_eq!(pi.code, 2, "{}", pi.text);
    assert!(
        pi.text.contains("per 4096-byte block holding protection information (T10 PI type 1")
            && pi.text.contains("--lbaf=4 "),
        "{}",
        pi.text
    );
    // A plain 4096-byte format: burned through (one disk: not judged).
    let four = step(&lab, "nvme-4k-burnin");
    let d = disk(&four.json, "/dev/nvme1n1");
    assert_eq!((four.code, d["logical_block_size"].as_u64()), (3, Some(4096)), "{}", four.text);
    assert_eq!(
        (d["verdict"].as_str(), &d["bad_bytes"]),
        (Some("not_judged"), &serde_json::json!([])),
        "{}",
        four.text
    );
}

#[test]
fn the_namespaces_of_one_nvme_controller_are_each_a_drive_of_their_own() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    let names = std::fs::read_to_string(lab.join("namespaces.txt")).unwrap();
    let names: Vec<&str> = names.lines().collect();
    // Inspected together: one serial, by right (it was "two drives cannot
    // share one": to act on).
    let inspect = step(&lab, "ns-inspect");
    for path in &names {
        let d = disk(&inspect.json, path);
        assert_eq!(d["declared"]["serial"], "LABNS0", "{d:#}");
        let concerns: Vec<&Value> = d["findings"].as_array().unwrap().iter().collect();
        assert!(!concerns.iter().any(|f| f["concern"] == "serial_duplicated"), "{}", inspect.text);
    }
    // Burned one at a time: each its own checkpoint (the second was the
    // first's), each read back as written (alone, with no peer to time it
    // against: not judged).
    for (j, path) in names.iter().enumerate() {
        let burn = step(&lab, &format!("ns-burnin-{}", j + 1));
        assert_eq!(burn.code, 3, "{}", burn.text);
        assert_eq!(disk(&burn.json, path)["verdict"], "not_judged", "{}", burn.text);
        assert!(burn.text.contains("read back as written"), "{}", burn.text);
    }
    let state = std::fs::read_to_string(lab.join("ns-state.txt")).unwrap();
    let kept: Vec<&str> = state.lines().filter(|l| l.starts_with("burnin-LABNS0")).collect();
    assert_eq!(kept, ["burnin-LABNS0-ns2.json", "burnin-LABNS0.json"], "{state}");
}

#[test]
fn an_md_raid1_volume_is_named_over_its_members_which_are_refused_a_burn_in_while_it_runs() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    let list = step(&lab, "md-list");
    for member in ["/dev/sda", "/dev/sdb"] {
        let held = disk(&list.json, member)["in_use"].to_string();
        assert!(held.contains("md0"), "{member}: {held}");
    }
    let inspect = step(&lab, "md-inspect");
    let md = disk(&inspect.json, "/dev/md0");
    assert!(
        md["declared"]["not_read"].to_string().contains("SMART: an md raid1 volume has none of its own: inspect its members (arrayburn inspect /dev/sda /dev/sdb)"),
        "{md:#}"
    );
    let member = step(&lab, "md-burnin-member");
    assert_eq!(member.code, 2, "{}", member.text);
    assert!(member.text.contains("/dev/sda is in use (sda held by md0)"), "{}", member.text);
    // Its check: what a volume's reads can tell of its drives, said.
    let check = step(&lab, "md-check");
    let volume = &disk(&check.json, "/dev/md0")["volume"];
    assert_eq!(volume["kind"], "md raid1 volume", "{volume}");
    assert_eq!(volume["members"], serde_json::json!(["/dev/sda", "/dev/sdb"]));
    let message = check.json["summary"]["message"].as_str().unwrap();
    assert!(
        message.contains("VOLUME: /dev/md0 is an md raid1 volume of /dev/sda, /dev/sdb: its reads are spread over them, so its speed is no drive's and a slow or failing read is not placed on one drive; check the members themselves (they read while it runs): arrayburn check /dev/sda /dev/sdb."),
        "{message}"
    );
    assert!(
        check.text.contains("arrayburn: warning: /dev/md0 is an md raid1 volume"),
        "{}",
        check.text
    );
}

#[test]
fn a_dm_delay_disk_is_flagged_slow_and_a_dm_flakey_disks_failures_are_placed() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    // 100 ms on every request: a tenth of its peers' speed or less, far
    // past anything the emulator's own pace moves.
    let delay = step(&lab, "dm-delay");
    assert_eq!(delay.code, 1, "{}", delay.text);
    let flagged: Vec<(&str, &str)> = (delay.json["summary"]["flagged"].as_array().unwrap().iter())
        .map(|f| (f["path"].as_str().unwrap(), f["verdict"].as_str().unwrap()))
        .collect();
    assert!(flagged.contains(&("/dev/mapper/lab-slow", "slow")), "{}", delay.text);
    let slow = disk(&delay.json["passes"][0], "/dev/mapper/lab-slow");
    assert!(slow["pct_of_peers"].as_f64().is_some_and(|p| p < 30.0), "{slow:#}");
    // Every byte of the 8 MiB that never read is accounted for, and no
    // other: an exact range, then what was skipped as failing wholesale.
    // Each is a mapping over one disk, said so (not a volume spread over
    // several).
    let message = delay.json["summary"]["message"].as_str().unwrap();
    assert!(
        message.contains("VOLUME: /dev/mapper/lab-slow is a device-mapper volume (lab-slow) over /dev/sde: its reads go to /dev/sde through it"),
        "{message}"
    );
    let flakey = step(&lab, "dm-flakey");
    assert_eq!(flakey.code, 1, "{}", flakey.text);
    let d = disk(&flakey.json["passes"][0], "/dev/mapper/lab-flaky");
    let mut spans: Vec<(u64, u64)> = (d["errors"].as_array().unwrap().iter())
        .map(|e| {
            let at = e["offset"].as_u64().unwrap();
            (at, at + e["len"].as_u64().unwrap())
        })
        .collect();
    spans.sort_unstable();
    let (first, last) = (spans[0].0, spans.iter().map(|s| s.1).max().unwrap());
    assert_eq!((first, last), (64 << 20, 72 << 20), "{spans:?}: {}", flakey.text);
    assert_eq!(d["verdict"], "error");
    assert!(d["bad_ranges"].as_u64().is_some_and(|n| n >= 1), "{d:#}");
}

/// The JSON lines `NAME.jsonl` a watch wrote in the guest.
fn lines(dir: &Path, name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.jsonl"))).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn in_service_the_watch_names_the_dm_delay_disk_and_sees_the_md_pool_and_scsi_error_counts() {
    let _l = device_lock();
    let Some(lab) = lab() else { return };
    // dm-delay: 100 ms on every request, read at its peers' rate.
    let watch = step(&lab, "dm-watch");
    assert_eq!(watch.code, 1, "{}", watch.text);
    assert!(
        watch.text.contains("/dev/mapper/lab-slow: FAIL-SLOW: its reads took"),
        "{}",
        watch.text
    );
    assert!(!watch.text.contains("lab-a: FAIL") && !watch.text.contains("lab-b: FAIL"));
    let w = lines(&lab, "dm-watch");
    let window = &w[1]["disks"];
    let stood = |p: &str| {
        let d = window.as_array().unwrap().iter().find(|d| d["path"] == p).unwrap();
        (d["window"]["read"]["ms"].as_f64().unwrap(), d["read"].clone())
    };
    let (ms, slow) = stood("/dev/mapper/lab-slow");
    assert!(ms >= 100.0 && slow.get("slow").is_some(), "{ms} {slow}");
    for p in ["/dev/mapper/lab-a", "/dev/mapper/lab-b"] {
        let (ms, s) = stood(p);
        assert!(ms < 50.0 && s.get("compared").is_some(), "{p}: {ms} {s}");
    }
    // md: its members one pool, the other model beside them not; the
    // SATA disks' failed commands counted by the kernel (the emulated
    // drives failed some of the earlier steps' SMART commands): a count,
    // and none new in its window.
    // Idle (nothing reads them): never compared, their health not
    // claimed (exit 3).
    let md = step(&lab, "md-watch");
    assert_eq!(md.code, 3, "{}", md.text);
    let said = "NOT JUDGED: /dev/sda: never compared with its peers: idle";
    assert!(md.text.contains(said), "{}", md.text);
    let w = lines(&lab, "md-watch");
    let pool = |p: &str| {
        let d = w[0]["disks"].as_array().unwrap().iter().find(|d| d["path"] == p).unwrap();
        (d["pool"].as_str().map(String::from), d["group"].as_u64().unwrap())
    };
    let (a, b, c) = (pool("/dev/sda"), pool("/dev/sdb"), pool("/dev/sdc"));
    assert_eq!((a.0.as_deref(), b.0.as_deref(), c.0.as_deref()), (Some("md0"), Some("md0"), None));
    assert!(a.1 == b.1 && a.1 != c.1, "{a:?} {b:?} {c:?}");
    for d in w[1]["disks"].as_array().unwrap() {
        assert!(d["errors"].is_u64(), "{d}");
    }
    assert!(!md.text.contains("ERRORS"), "{}", md.text);
}

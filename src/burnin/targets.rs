//! What a burn-in may write, decided before the first byte: every refusal
//! happens here, with the reason and the way out, and a device refused
//! never has a byte written.
//!
//! Refused: a run without `--destructive`; a partition (whole disks only);
//! a disk in use (mounted, a mounted partition, swap, held by md/dm/LVM, or
//! busy under O_EXCL); a read-only device; a disk that carries a partition
//! table, filesystem, RAID, LVM or ZFS signature (blkid's low-level probe,
//! and ZFS's labels at both ends, which blkid and wipefs can miss) unless
//! `--wipe-signatures`; a range outside the disk. It must not write.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::process::Command;

use thiserror::Error;

use super::block::{BLOCK, disk_hash};
use crate::device::{self, BlockDevice, SystemPaths, lock};
use crate::io::{Bounds, Halt, Probe, Until, open_direct};
use crate::stop::StopFlag;

/// Why a burn-in cannot start. One line each.
#[derive(Debug, Error)]
pub enum Refusal {
    #[error(
        "burnin overwrites every byte of {0}: add --destructive to confirm that their data may be destroyed (nothing was written)"
    )]
    NotConfirmed(String),
    #[error(transparent)]
    Device(#[from] device::DeviceError),
    #[error("{path}: {sentence}; a burn-in is not run on it (nothing was written)")]
    Format { path: String, sentence: String },
    #[error(
        "{path} is in use ({why}); a burn-in writes the whole disk: free it first (nothing was written)"
    )]
    InUse { path: String, why: String },
    #[error("{0} is read-only; a burn-in must write it (nothing was written)")]
    ReadOnly(String),
    #[error(
        "{path} carries {what}: it may hold data; check it is the disk you mean, then add --wipe-signatures to overwrite it (nothing was written)"
    )]
    Signature { path: String, what: String },
    #[error(
        "{path} {what}: check its cable, slot and power, then run it again (nothing was written)"
    )]
    NoAnswer { path: String, what: String },
    #[error("{path}: {detail} (nothing was written)")]
    Open { path: String, detail: String },
    #[error("--range {0} (nothing was written)")]
    Range(String),
    #[error("{0}")]
    Busy(String),
    #[error("{0}: stopped while waiting for the disk to be free (nothing was written)")]
    Stopped(String),
    #[error(
        "{path} is partition {part} of disk {disk}; a burn-in tests whole disks: name /dev/{disk} instead (nothing was written)"
    )]
    Partition { path: String, part: String, disk: String },
    #[error(
        "{0} is a host-managed zoned drive (the kernel's queue/zoned): each zone takes only sequential writes at its write pointer, which arrayburn's writes break (their refusals would read as a bad disk); it is not written: read it whole with `arrayburn check --full`, or write-test it zone by zone with fio --zonemode=zbd (nothing was written)"
    )]
    Zoned(String),
}

/// The devices named, resolved as whole disks (a partition is refused in
/// the burn-in's words: it has no flag to allow one).
fn resolve(devices: &[String]) -> Result<Vec<BlockDevice>, Refusal> {
    let devs = device::resolve_all(&SystemPaths::real(), devices, false).map_err(|e| match e {
        device::DeviceError::Partition { path, part, disk } => {
            Refusal::Partition { path, part, disk }
        }
        e => Refusal::Device(e),
    })?;
    if let Some(d) = devs.iter().find(|d| d.identity.format.is_some()) {
        let f = d.identity.format.as_ref().map(|f| f.sentence(&d.identity.name));
        return Err(Refusal::Format { path: d.given.clone(), sentence: f.unwrap_or_default() });
    }
    Ok(devs)
}

/// A device that was busy (opened exclusively) a moment ago is tried again
/// for this long: right after a burn-in is killed, the kernel holds its
/// disks until the writes in flight have drained.
const BUSY_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);
/// A busy device whose I/O still moves (a killed run's writes draining on
/// a slow disk) is waited for as long as it moves, up to this.
const DRAIN_PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// One disk a burn-in will write.
pub struct Target {
    pub dev: BlockDevice,
    /// Opened read-write, O_DIRECT and O_EXCL.
    pub file: File,
    /// The bytes to burn: whole 4 KiB blocks from `start` to `end`.
    pub start: u64,
    pub end: u64,
    /// The identity hash every block of this disk carries.
    pub disk: u32,
    /// The name of its checkpoint in `--state DIR`.
    pub checkpoint: String,
}

/// The range of a disk to burn, from `--range START..END` (sizes with
/// binary suffixes; END may be omitted for the end of the disk).
pub fn range(spec: Option<&str>, size: u64) -> Result<(u64, u64), Refusal> {
    let whole = size / BLOCK as u64 * BLOCK as u64;
    let Some(spec) = spec else { return Ok((0, whole)) };
    let (a, b) = spec.split_once("..").ok_or_else(|| {
        Refusal::Range(format!("{spec}: write it as START..END, e.g. 0..1g or 17t.."))
    })?;
    let parse = |t: &str, default: u64| -> Result<u64, Refusal> {
        if t.trim().is_empty() {
            return Ok(default);
        }
        crate::units::parse_size(t).map_err(|e| Refusal::Range(format!("{spec}: {e}")))
    };
    let (start, end) = (parse(a, 0)?, parse(b, whole)?);
    if end > whole {
        return Err(Refusal::Range(format!(
            "{spec}: ends beyond the disk, whose last whole 4 KiB block ends at byte {whole} ({}): give an END up to that, or leave END out for the end of the disk",
            crate::units::human_bytes(whole)
        )));
    }
    if !start.is_multiple_of(BLOCK as u64) || !end.is_multiple_of(BLOCK as u64) || start >= end {
        return Err(Refusal::Range(format!(
            "{spec}: give a non-empty range of whole 4 KiB blocks inside the disk ({whole} bytes)"
        )));
    }
    Ok((start, end))
}

/// What `blkid -p` finds on the device (partition table, filesystem, RAID,
/// LVM, ZFS member), in words; None when nothing. Without blkid the check
/// cannot be made, which refuses too.
fn blkid_signature(path: &str) -> Result<Option<String>, Refusal> {
    let mut blkid = Command::new("blkid");
    blkid.args(["-p", "-o", "export", path]);
    let out = device::tool::output(&mut blkid, device::tool::LIMIT, &|| false).map_err(|e| {
        Refusal::Signature {
            path: path.into(),
            what: format!(
                "an unknown content (blkid from util-linux is needed to look for signatures: {e})"
            ),
        }
    })?;
    // blkid -p exits 2 when it finds nothing.
    let text = String::from_utf8_lossy(&out.stdout);
    let found: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| matches!(*k, "TYPE" | "PTTYPE"))
        .map(|(k, v)| match k {
            "PTTYPE" => format!("a partition table ({v})"),
            _ => format!("a signature ({v})"),
        })
        .collect();
    Ok((!found.is_empty()).then(|| found.join(" and ")))
}

/// ZFS keeps four labels, two at the start and two in the last 512 KiB;
/// each has 128 uberblocks from 128 KiB into it, every one starting with
/// the magic 0x00bab10c. Looks at all four (O_DIRECT reads).
/// A disk that does not answer these reads is refused (it may be hung).
fn zfs_label(file: &File, size: u64, bounds: &Bounds) -> Result<bool, Halt> {
    const LABEL: u64 = 256 << 10;
    if size < 4 * LABEL {
        return Ok(false);
    }
    let end = size / LABEL * LABEL;
    let Ok(mut probe) = Probe::of(file, bounds) else { return Ok(false) };
    for at in [0, LABEL, end - 2 * LABEL, end - LABEL] {
        let Ok(b) = probe.read_at(at, LABEL as usize, Until::Stop)? else { continue };
        let uberblocks = b[128 << 10..].chunks(1024).any(|u| {
            let m = u64::from_le_bytes(u[..8].try_into().unwrap_or_default());
            m == 0x00ba_b10c || m.swap_bytes() == 0x00ba_b10c
        });
        if uberblocks {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Opens a disk for the burn-in: read-write, O_DIRECT, O_EXCL (a disk
/// anything holds open exclusively, or mounted, fails here too). A busy
/// disk is tried again for [`BUSY_PATIENCE`], and for as long as its I/O
/// still moves ([`DRAIN_PATIENCE`] at most: a killed run's writes
/// draining), then refused naming what holds it; a stop ends the wait.
/// Mounts and stacked devices were refused before (`targets`).
fn open_for_writing(d: &BlockDevice, stop: &StopFlag) -> Result<File, Refusal> {
    let began = std::time::Instant::now();
    let path = d.given.as_str();
    let counts = || device::sysfs::io_counts(&SystemPaths::real(), &d.identity.name);
    // Requests completing move it; one stuck in flight does not.
    let done = |c: Option<(u64, u64, u64)>| c.map(|(n, sectors, _)| (n, sectors));
    let (mut seen, mut moved) = (done(counts()), began);
    loop {
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nix::libc::O_DIRECT | nix::libc::O_EXCL)
            .open(path);
        let e = match opened {
            Ok(f) => return Ok(f),
            Err(e) => e,
        };
        if e.raw_os_error() != Some(nix::libc::EBUSY) {
            return Err(Refusal::Open {
                path: path.into(),
                detail: format!("cannot open it for writing with O_DIRECT|O_EXCL: {e}"),
            });
        }
        if stop.is_set() {
            return Err(Refusal::Stopped(path.into()));
        }
        let now = counts();
        if done(now) != seen {
            (seen, moved) = (done(now), std::time::Instant::now());
        }
        if began.elapsed() < BUSY_PATIENCE {
            std::thread::sleep(std::time::Duration::from_millis(100));
            continue;
        }
        let openers: Vec<String> =
            device::usage::openers(std::path::Path::new(&d.identity.dev_path))
                .into_iter()
                .map(|p| lock::Holder::of(p).words())
                .collect();
        // No process holds it and its I/O moves: the kernel finishing a
        // gone process's requests.
        let draining = moved.elapsed() < BUSY_PATIENCE && began.elapsed() < DRAIN_PATIENCE;
        if openers.is_empty() && draining {
            std::thread::sleep(std::time::Duration::from_millis(250));
            continue;
        }
        let waited = began.elapsed().as_secs();
        let in_flight = now.map_or(0, |(_, _, n)| n);
        let why = if !openers.is_empty() {
            format!("opened exclusively for {waited} s; open now in {}", openers.join(", "))
        } else if moved.elapsed() < BUSY_PATIENCE {
            format!(
                "still busy after {waited} s with its I/O still moving and nothing mounted or stacked on it: the writes of a run that was stopped or killed still draining (a slow or hung disk); wait for them and run again, or check the disk (dmesg)"
            )
        } else if in_flight > 0 {
            format!(
                "opened exclusively for {waited} s with {in_flight} request(s) in flight that do not complete: a stopped or killed run's request still waiting on a disk that may be hung; check the disk (dmesg)"
            )
        } else {
            format!(
                "opened exclusively for {waited} s, with no I/O moving and nothing mounted or stacked on it: by ZFS (`zpool status`), or by a process in another namespace"
            )
        };
        return Err(Refusal::InUse { path: path.into(), why });
    }
}

/// Refuses a disk that carries a partition table, filesystem, RAID, LVM or
/// ZFS signature: it may hold data (`--wipe-signatures` overrides; a
/// resumed disk that carries its run's blocks needs no such check).
pub fn refuse_signature(d: &BlockDevice, bounds: &Bounds) -> Result<(), Refusal> {
    let zfs = match open_direct(std::path::Path::new(&d.given)) {
        // A disk that does not answer is no signature to wipe: its path
        // first.
        Ok(f) => zfs_label(&f, d.identity.size_bytes, bounds).map_err(|h| Refusal::NoAnswer {
            path: d.given.clone(),
            what: match h {
                Halt::Hung => "did not answer a read of its ZFS labels within --io-timeout (the disk or its path may be hung)".to_string(),
                _ => "was not looked at whole: the look for its ZFS labels was stopped".to_string(),
            },
        })?,
        Err(_) => false,
    };
    let found = blkid_signature(&d.given)?.or_else(|| zfs.then(|| "ZFS labels".to_string()));
    match found {
        Some(what) => Err(Refusal::Signature { path: d.given.clone(), what }),
        None => Ok(()),
    }
}

/// The hash every block of a disk carries: of its serial (its kernel name
/// when it has none), model and size, and its kernel name too where
/// another disk of the run reports the same serial (`shared`), so that
/// neither can pass for the other.
fn identity_hash(id: &device::Identity, shared: bool) -> u32 {
    let own = if shared { format!("|{}", id.name) } else { String::new() };
    let serial = id.unit_serial().unwrap_or_else(|| id.name.clone());
    let model = id.model.as_deref().unwrap_or("");
    disk_hash(&format!("{serial}|{model}|{}{own}", id.size_bytes))
}

/// Resolves, checks and opens every disk, or refuses the whole run (the
/// signatures are looked for by [`refuse_signature`]). The disks' run
/// locks come first, so that another arrayburn run is named as such
/// rather than as something that holds the disk.
pub fn targets(
    devices: &[String],
    destructive: bool,
    (range_spec, ignore_lock): (Option<&str>, Option<u32>),
    stop: &StopFlag,
) -> Result<(Vec<Target>, Vec<lock::DiskLock>), Refusal> {
    if !destructive {
        return Err(Refusal::NotConfirmed(devices.join(" ")));
    }
    let devs = resolve(devices)?;
    let mut locks = Vec::new();
    for d in &devs {
        locks.extend(lock::lock(d.rdev, &d.given, ignore_lock).map_err(Refusal::Busy)?);
    }
    for d in &devs {
        // Opened exclusively by someone: known when it is opened below.
        if let Some(why) = d.in_use.iter().find(|u| **u != device::InUse::Busy) {
            return Err(Refusal::InUse { path: d.given.clone(), why: why.to_string() });
        }
        if d.identity.read_only {
            return Err(Refusal::ReadOnly(d.given.clone()));
        }
        let zoned = device::sysfs::zone_model(&SystemPaths::real().sys, &d.identity.name);
        if zoned.as_deref() == Some("host-managed") {
            return Err(Refusal::Zoned(d.given.clone()));
        }
        range(range_spec, d.identity.size_bytes)?;
    }
    let names = named(&devs);
    let mut out = Vec::new();
    for (d, (disk, checkpoint)) in devs.into_iter().zip(names) {
        let file = open_for_writing(&d, stop)?;
        let (start, end) = range(range_spec, d.identity.size_bytes)?;
        out.push(Target { dev: d, file, start, end, disk, checkpoint });
    }
    Ok((out, locks))
}

/// Each disk's identity hash and checkpoint name: two disks that report
/// one serial (cheap USB bridges) are told apart by their kernel names
/// too, in their blocks and their checkpoints.
fn named(devs: &[BlockDevice]) -> Vec<(u32, String)> {
    let serials: Vec<Option<String>> = devs.iter().map(|d| d.identity.unit_serial()).collect();
    (devs.iter())
        .map(|d| {
            let id = &d.identity;
            let serial = id.unit_serial();
            let shared = serial.is_some() && serials.iter().filter(|s| **s == serial).count() > 1;
            (identity_hash(id, shared), file_name(d, shared))
        })
        .collect()
}

/// The disks a read-only soak reads: no refusal but a bad range and
/// another arrayburn run on the same disk (reading is safe on a disk in
/// use; nothing is written, so no O_EXCL).
pub fn read_targets(
    devices: &[String],
    range_spec: Option<&str>,
    ignore_lock: Option<u32>,
) -> Result<(Vec<Target>, Vec<lock::DiskLock>), Refusal> {
    let devs = resolve(devices)?;
    let names = named(&devs);
    let mut locks = Vec::new();
    let mut out = Vec::new();
    for (d, (disk, checkpoint)) in devs.into_iter().zip(names) {
        let (start, end) = range(range_spec, d.identity.size_bytes)?;
        locks.extend(lock::lock(d.rdev, &d.given, ignore_lock).map_err(Refusal::Busy)?);
        let file = open_direct(std::path::Path::new(&d.given)).map_err(|e| Refusal::Open {
            path: d.given.clone(),
            detail: format!("cannot open it with O_DIRECT: {e}"),
        })?;
        out.push(Target { dev: d, file, start, end, disk, checkpoint });
    }
    Ok((out, locks))
}

/// The name of a disk's checkpoint: by its serial, or its kernel name when
/// it has none (a loop device), so that it is found again after a reboot
/// renames /dev/sdX; `name@kernel` where two disks of one run report the
/// same serial (cheap USB bridges), so that they never share a file.
pub fn file_name(dev: &BlockDevice, shared_serial: bool) -> String {
    let id = &dev.identity;
    let key = match (&id.unit_serial(), shared_serial) {
        (Some(s), false) => s.clone(),
        (Some(s), true) => format!("{s}@{}", id.name),
        (None, _) => id.name.clone(),
    };
    let key: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-@".contains(c) { c } else { '_' })
        .collect();
    format!("burnin-{key}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(name: &str) -> BlockDevice {
        BlockDevice {
            given: format!("/dev/{name}"),
            identity: device::Identity {
                name: name.into(),
                dev_path: format!("/dev/{name}"),
                by_id: None,
                vendor: None,
                model: Some("USB BRIDGE".into()),
                serial: Some("000000000001".into()),
                firmware: None,
                size_bytes: 1 << 40,
                logical_block_size: 512,
                physical_block_size: 4096,
                rotational: true,
                removable: false,
                read_only: false,
                devno: String::new(),
                wwn: None,
                topology: Default::default(),
                format: None,
                volume: None,
                nsid: None,
            },
            partition_of: None,
            in_use: Vec::new(),
            rdev: 0,
        }
    }

    #[test]
    fn two_disks_with_one_serial_get_their_own_blocks_and_checkpoints() {
        let (a, b) = (disk("sdb"), disk("sdc"));
        assert_eq!(identity_hash(&a.identity, false), identity_hash(&b.identity, false));
        assert_ne!(identity_hash(&a.identity, true), identity_hash(&b.identity, true));
        let name = super::file_name;
        assert_eq!(name(&a, false), name(&b, false), "alone, a serial names it");
        assert_eq!(name(&a, true), "burnin-000000000001@sdb.json");
        assert_ne!(name(&a, true), name(&b, true));
    }

    #[test]
    fn the_namespaces_of_one_nvme_controller_are_units_of_their_own_in_any_run() {
        // The controller's serial is each namespace's: burned one at a
        // time, the second namespace is not the first one's checkpoint,
        // nor its blocks.
        let ns = |name: &str, nsid: u32| {
            let mut d = disk(name);
            d.identity.nsid = Some(nsid);
            d
        };
        let (first, second) = (ns("nvme0n1", 1), ns("nvme0n2", 2));
        assert_eq!(file_name(&first, false), "burnin-000000000001.json", "as a drive of one");
        assert_eq!(file_name(&second, false), "burnin-000000000001-ns2.json");
        assert_ne!(identity_hash(&first.identity, false), identity_hash(&second.identity, false));
        assert_eq!(
            identity_hash(&first.identity, false),
            identity_hash(&disk("sdb").identity, false),
            "the first namespace keeps the hash it had"
        );
        // Both in one run: not a serial shared.
        let names = named(&[first, second]);
        assert!(names.iter().all(|(_, n)| !n.contains('@')), "{names:?}");
    }

    #[test]
    fn ranges_are_whole_blocks_inside_the_disk() {
        let size = (20u64 << 40) + 1000;
        let whole = 20u64 << 40;
        assert_eq!(range(None, size).unwrap(), (0, whole), "the odd tail is left");
        assert_eq!(range(Some("0..1g"), size).unwrap(), (0, 1 << 30));
        assert_eq!(range(Some("17t.."), size).unwrap(), (17 << 40, whole));
        assert_eq!(range(Some("..4k"), size).unwrap(), (0, 4096));
        for bad in ["1g", "5..9", "2g..1g", "x..1g", "19t..21t", "21t.."] {
            assert!(range(Some(bad), size).is_err(), "{bad}");
        }
    }
}

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
use crate::io::open_direct;

/// Why a burn-in cannot start. One line each.
#[derive(Debug, Error)]
pub enum Refusal {
    #[error(
        "burnin overwrites every byte of {0}: add --destructive to confirm that their data may be destroyed (nothing was written)"
    )]
    NotConfirmed(String),
    #[error(transparent)]
    Device(#[from] device::DeviceError),
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
    #[error("{path}: {detail} (nothing was written)")]
    Open { path: String, detail: String },
    #[error("--range {0} (nothing was written)")]
    Range(String),
    #[error("{0}")]
    Busy(String),
}

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
}

/// The range of a disk to burn, from `--range START..END` (sizes with
/// binary suffixes; END may be omitted for the end of the disk).
pub fn range(spec: Option<&str>, size: u64) -> Result<(u64, u64), Refusal> {
    let whole = size / BLOCK as u64 * BLOCK as u64;
    let Some(spec) = spec else {
        return Ok((0, whole));
    };
    let (a, b) = spec.split_once("..").ok_or_else(|| {
        Refusal::Range(format!(
            "{spec}: write it as START..END, e.g. 0..1g or 17t.."
        ))
    })?;
    let parse = |t: &str, default: u64| -> Result<u64, Refusal> {
        if t.trim().is_empty() {
            return Ok(default);
        }
        crate::units::parse_size(t).map_err(|e| Refusal::Range(format!("{spec}: {e}")))
    };
    let (start, end) = (parse(a, 0)?, parse(b, whole)?.min(whole));
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
    let out = Command::new("blkid")
        .args(["-p", "-o", "export", path])
        .output()
        .map_err(|e| Refusal::Signature {
            path: path.into(),
            what: format!(
                "an unknown content (blkid from util-linux is needed to look for signatures: {e})"
            ),
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
fn zfs_label(file: &File, size: u64) -> bool {
    use std::os::unix::fs::FileExt;
    const LABEL: u64 = 256 << 10;
    if size < 4 * LABEL {
        return false;
    }
    let end = size / LABEL * LABEL;
    let mut buf = crate::device::buffer::AlignedBuf::new(LABEL as usize);
    [0, LABEL, end - 2 * LABEL, end - LABEL].iter().any(|&at| {
        let b = buf.slice_mut(LABEL as usize);
        file.read_exact_at(b, at).is_ok()
            && b[128 << 10..].chunks(1024).any(|u| {
                let m = u64::from_le_bytes(u[..8].try_into().unwrap_or_default());
                m == 0x00ba_b10c || m.swap_bytes() == 0x00ba_b10c
            })
    })
}

/// Opens a disk for the burn-in: read-write, O_DIRECT, O_EXCL (a disk
/// anything holds open exclusively, or mounted, fails here too).
fn open_for_writing(path: &str) -> Result<File, Refusal> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_DIRECT | nix::libc::O_EXCL)
        .open(path)
        .map_err(|e| Refusal::Open {
            path: path.into(),
            detail: match e.raw_os_error() {
                Some(nix::libc::EBUSY) => {
                    "busy: something holds it open exclusively (a mount, md, ZFS)".into()
                }
                _ => format!("cannot open it for writing with O_DIRECT|O_EXCL: {e}"),
            },
        })
}

/// Resolves, checks and opens every disk, or refuses the whole run.
pub fn targets(
    devices: &[String],
    destructive: bool,
    wipe_signatures: bool,
    range_spec: Option<&str>,
    command_line: &[String],
) -> Result<(Vec<Target>, Vec<lock::DiskLock>), Refusal> {
    if !destructive {
        return Err(Refusal::NotConfirmed(devices.join(" ")));
    }
    let paths = SystemPaths::real();
    let devs = device::resolve_all(&paths, devices, false)?;
    for d in &devs {
        if let Some(why) = d.in_use.first() {
            return Err(Refusal::InUse {
                path: d.given.clone(),
                why: why.to_string(),
            });
        }
        if d.identity.read_only {
            return Err(Refusal::ReadOnly(d.given.clone()));
        }
        range(range_spec, d.identity.size_bytes)?;
        if !wipe_signatures {
            let zfs = open_direct(std::path::Path::new(&d.given))
                .map(|f| zfs_label(&f, d.identity.size_bytes))
                .unwrap_or(false);
            let found =
                blkid_signature(&d.given)?.or_else(|| zfs.then(|| "ZFS labels".to_string()));
            if let Some(what) = found {
                return Err(Refusal::Signature {
                    path: d.given.clone(),
                    what,
                });
            }
        }
    }
    let mut locks = Vec::new();
    let mut out = Vec::new();
    for d in devs {
        locks.extend(lock::lock(d.rdev, &d.given, command_line).map_err(Refusal::Busy)?);
        let file = open_for_writing(&d.given)?;
        let (start, end) = range(range_spec, d.identity.size_bytes)?;
        let id = &d.identity;
        let disk = disk_hash(&format!(
            "{}|{}|{}",
            id.serial.as_deref().unwrap_or(&id.name),
            id.model.as_deref().unwrap_or(""),
            id.size_bytes
        ));
        out.push(Target {
            dev: d,
            file,
            start,
            end,
            disk,
        });
    }
    Ok((out, locks))
}

/// The disks a read-only soak reads: no refusal but a bad range and
/// another arrayburn run on the same disk (reading is safe on a disk in
/// use; nothing is written, so no O_EXCL).
pub fn read_targets(
    devices: &[String],
    range_spec: Option<&str>,
    command_line: &[String],
) -> Result<(Vec<Target>, Vec<lock::DiskLock>), Refusal> {
    let devs = device::resolve_all(&SystemPaths::real(), devices, false)?;
    let mut locks = Vec::new();
    let mut out = Vec::new();
    for d in devs {
        let (start, end) = range(range_spec, d.identity.size_bytes)?;
        locks.extend(lock::lock(d.rdev, &d.given, command_line).map_err(Refusal::Busy)?);
        let file = open_direct(std::path::Path::new(&d.given)).map_err(|e| Refusal::Open {
            path: d.given.clone(),
            detail: format!("cannot open it with O_DIRECT: {e}"),
        })?;
        out.push(Target {
            dev: d,
            file,
            start,
            end,
            disk: 0,
        });
    }
    Ok((out, locks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_whole_blocks_inside_the_disk() {
        let size = (20u64 << 40) + 1000;
        let whole = 20u64 << 40;
        assert_eq!(
            range(None, size).unwrap(),
            (0, whole),
            "the odd tail is left"
        );
        assert_eq!(range(Some("0..1g"), size).unwrap(), (0, 1 << 30));
        assert_eq!(range(Some("17t.."), size).unwrap(), (17 << 40, whole));
        assert_eq!(range(Some("..4k"), size).unwrap(), (0, 4096));
        for bad in ["1g", "5..9", "2g..1g", "x..1g"] {
            assert!(range(Some(bad), size).is_err(), "{bad}");
        }
    }
}

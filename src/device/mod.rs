//! Block devices: turning a path the user typed into a checked disk with its
//! identity, and refusing everything that is not a disk before any I/O.
//! This module reads sysfs and `stat`s paths; it never reads a device.

pub mod buffer;
pub mod discard;
pub mod diskstats;
pub mod format;
pub mod kernel;
pub mod latency_log;
pub mod led;
pub mod lock;
pub mod paths;
pub mod pools;
pub mod raid;
pub mod smartctl;
pub mod sysfs;
pub mod tool;
pub mod topology;
pub mod usage;

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::sys::stat::{major, minor};
use thiserror::Error;

pub use paths::SystemPaths;
pub use sysfs::{Identity, Machine};
pub use usage::InUse;

/// A path the user named, resolved to a block device.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BlockDevice {
    /// The path exactly as given on the command line.
    pub given: String,
    /// Identity read from sysfs.
    pub identity: Identity,
    /// For a partition, the kernel name of its disk.
    pub partition_of: Option<String>,
    /// Why the device is in use (empty when it is idle).
    pub in_use: Vec<InUse>,
    /// The device number (`st_rdev`): equal numbers are the same disk.
    pub rdev: u64,
}

/// Why a path cannot be checked. Each message names the path, the problem
/// and the way out, on one line.
#[derive(Debug, Error)]
pub enum DeviceError {
    #[error("{0}: no such file or device; `arrayburn list` shows the disks on this machine")]
    NotFound(String),
    #[error(
        "{0} is a regular file, not a block device; attach it first with `losetup -f --show --direct-io=on {0}` and check the loop device"
    )]
    RegularFile(String),
    #[error(
        "{0} is a directory, not a block device; name a disk such as /dev/sdb (see `arrayburn list`)"
    )]
    Directory(String),
    #[error(
        "{0} is a character device, not a block device; name a disk such as /dev/sdb (see `arrayburn list`)"
    )]
    CharDevice(String),
    #[error("{0} is not a block device; name a disk such as /dev/sdb (see `arrayburn list`)")]
    NotBlock(String),
    #[error(
        "{path} is partition {part} of disk {disk}; the check reads whole disks: name /dev/{disk} instead (or add --allow-partitions)"
    )]
    Partition { path: String, part: String, disk: String },
    #[error("{0}: permission denied; run arrayburn as root (or as a member of the disk group)")]
    NoPermission(String),
    #[error("{second} is the same disk as {first} (named twice); name each disk once")]
    Duplicate { first: String, second: String },
    #[error("{path}: {detail}")]
    Other { path: String, detail: String },
}

/// Resolves `given` to a block device. `allow_partition` lets a partition
/// through (its identity is then the partition's own).
pub fn resolve(
    paths: &SystemPaths,
    given: &str,
    allow_partition: bool,
) -> Result<BlockDevice, DeviceError> {
    let (dir, queue_dir, rdev) = locate(paths, given)?;
    let is_partition = dir != queue_dir;
    let identity = sysfs::identity(paths, &dir, &queue_dir);
    let partition_of = is_partition.then(|| paths::leaf(&queue_dir));
    if let (Some(disk), false) = (&partition_of, allow_partition) {
        return Err(DeviceError::Partition {
            path: given.into(),
            part: identity.name.clone(),
            disk: disk.clone(),
        });
    }
    let in_use = match &partition_of {
        Some(_) => Vec::new(),
        None => usage::in_use(paths, &identity.name, Path::new(given)),
    };
    Ok(BlockDevice { given: given.into(), identity, partition_of, in_use, rdev })
}

/// Whole disks named by `given`, as `watch` takes them: their identity
/// and what the kernel says holds them (md, device-mapper), from `stat`
/// and sysfs alone: nothing is opened (a disk in service is not touched).
/// The same disk twice, or a partition, is refused.
pub fn resolve_watched(
    paths: &SystemPaths,
    given: &[String],
) -> Result<Vec<BlockDevice>, DeviceError> {
    once_each(given, |g| {
        let (dir, queue_dir, rdev) = locate(paths, g)?;
        let identity = sysfs::identity(paths, &dir, &queue_dir);
        if dir != queue_dir {
            let disk = paths::leaf(&queue_dir);
            return Err(DeviceError::Partition { path: g.into(), part: identity.name, disk });
        }
        let in_use = usage::held_by(paths, &identity.name);
        Ok(BlockDevice { given: g.into(), identity, partition_of: None, in_use, rdev })
    })
}

/// The sysfs directory of the block device `given` names, its disk's
/// (the same for a whole disk), and its device number; `stat` only.
fn locate(paths: &SystemPaths, given: &str) -> Result<(PathBuf, PathBuf, u64), DeviceError> {
    let meta = fs::metadata(given).map_err(|e| match e.kind() {
        ErrorKind::NotFound => DeviceError::NotFound(given.into()),
        ErrorKind::PermissionDenied => DeviceError::NoPermission(given.into()),
        _ => DeviceError::Other { path: given.into(), detail: e.to_string() },
    })?;
    let ft = meta.file_type();
    if !ft.is_block_device() {
        return Err(match () {
            _ if ft.is_file() => DeviceError::RegularFile(given.into()),
            _ if ft.is_dir() => DeviceError::Directory(given.into()),
            _ if ft.is_char_device() => DeviceError::CharDevice(given.into()),
            _ => DeviceError::NotBlock(given.into()),
        });
    }
    let rdev = meta.rdev();
    let link = paths.sys.join(format!("dev/block/{}:{}", major(rdev), minor(rdev)));
    let dir = fs::canonicalize(&link).map_err(|e| DeviceError::Other {
        path: given.into(),
        detail: format!("no sysfs entry {} ({e})", link.display()),
    })?;
    let is_partition = dir.join("partition").exists();
    let queue_dir =
        if is_partition { dir.parent().unwrap_or(&dir).to_path_buf() } else { dir.clone() };
    Ok((dir, queue_dir, rdev))
}

/// Resolves every path and refuses the same disk named twice (also through
/// a symlink or a by-id name).
pub fn resolve_all(
    paths: &SystemPaths,
    given: &[String],
    allow_partition: bool,
) -> Result<Vec<BlockDevice>, DeviceError> {
    once_each(given, |g| resolve(paths, g, allow_partition))
}

/// Each of `given` resolved by `one`, the same disk named twice refused.
fn once_each(
    given: &[String],
    one: impl Fn(&str) -> Result<BlockDevice, DeviceError>,
) -> Result<Vec<BlockDevice>, DeviceError> {
    let mut out: Vec<BlockDevice> = Vec::with_capacity(given.len());
    for g in given {
        let dev = one(g)?;
        if let Some(first) = out.iter().find(|d| d.rdev == dev.rdev) {
            return Err(DeviceError::Duplicate { first: first.given.clone(), second: g.clone() });
        }
        out.push(dev);
    }
    Ok(out)
}

/// Waits at most `within` for every one of `given` to be a block device
/// whose size can be read (at boot, udev makes the by-id links and the
/// kernel reads each drive's capacity after the service may have
/// started), asking every quarter second; `say` is told once what is
/// waited for. Gives up at once when `give_up` says so. Err names each
/// that is still missing and why, once `within` has passed.
pub fn wait_for(
    paths: &SystemPaths,
    given: &[String],
    within: std::time::Duration,
    give_up: &dyn Fn() -> bool,
    say: &dyn Fn(&str),
) -> Result<(), String> {
    let began = std::time::Instant::now();
    let missing = || -> Vec<String> {
        (given.iter())
            .filter_map(|g| match resolve(paths, g, true) {
                // A format Linux cannot use is refused with its cause,
                // not waited for.
                Ok(d) if d.identity.size_bytes > 0 || d.identity.format.is_some() => None,
                Ok(_) => Some(format!("{g} (its size reads 0: not ready yet)")),
                Err(DeviceError::NotFound(_)) => Some(format!("{g} (not present)")),
                Err(e) => Some(e.to_string()),
            })
            .collect()
    };
    let mut said = false;
    loop {
        let now = missing();
        if now.is_empty() {
            return Ok(());
        }
        if give_up() {
            return Err(format!(
                "stopped (a signal) while waiting for its disks; still missing: {}",
                now.join(", ")
            ));
        }
        if began.elapsed() >= within {
            return Err(format!(
                "after waiting {} for its disks, still missing: {}; check that each is seated and powered and that its name is right (ls /dev/disk/by-id)",
                crate::units::human_duration(within),
                now.join(", ")
            ));
        }
        if !said {
            say(&format!(
                "waiting up to {} for {}",
                crate::units::human_duration(within),
                now.join(", ")
            ));
            said = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_block_device() {
        let p = SystemPaths::real();
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("img");
        fs::write(&file, b"x").unwrap();
        let f = file.to_string_lossy().to_string();
        let d = t.path().to_string_lossy().to_string();
        assert!(matches!(resolve(&p, &f, false), Err(DeviceError::RegularFile(_))));
        assert!(matches!(resolve(&p, &d, false), Err(DeviceError::Directory(_))));
        assert!(matches!(resolve(&p, "/dev/null", false), Err(DeviceError::CharDevice(_))));
        assert!(matches!(resolve(&p, "/nonexistent/disk", false), Err(DeviceError::NotFound(_))));
    }
}

//! Is a disk in use? Mounted (itself or a partition), active swap, held by
//! md/LVM/dm (sysfs `holders/`), or opened exclusively by someone else (ZFS,
//! which leaves no holder, shows up only that way).

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::paths::SystemPaths;
use super::sysfs;

/// One reason a disk is in use.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InUse {
    /// The disk or one of its partitions is mounted.
    Mounted {
        /// Kernel name of the mounted device.
        device: String,
        /// Where it is mounted.
        mountpoint: String,
    },
    /// The disk or one of its partitions is active swap.
    Swap {
        /// Kernel name of the swap device.
        device: String,
    },
    /// A device-mapper, md or other stacked device sits on top of it.
    HeldBy {
        /// Kernel name of the disk or partition that is held.
        device: String,
        /// Kernel name of the holder (`md0`, `dm-3`).
        holder: String,
    },
    /// Opening it with O_EXCL failed with EBUSY: someone (ZFS, a mounted
    /// filesystem, a RAID) holds it exclusively.
    Busy,
}

impl std::fmt::Display for InUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InUse::Mounted { device, mountpoint } => write!(f, "{device} mounted on {mountpoint}"),
            InUse::Swap { device } => write!(f, "{device} is swap"),
            InUse::HeldBy { device, holder } => write!(f, "{device} held by {holder}"),
            InUse::Busy => {
                write!(f, "opened exclusively by another user (ZFS, RAID or filesystem)")
            }
        }
    }
}

/// Every reason the disk `name` (with devno `MAJ:MIN`) is in use, looking
/// at the disk itself and its partitions.
pub fn in_use(paths: &SystemPaths, name: &str, dev_node: &Path) -> Vec<InUse> {
    let mut members = vec![name.to_string()];
    members.extend(sysfs::partitions(paths, name));
    let mut found = mounts(paths, name, &members);
    found.extend(swaps(paths, &members));
    found.extend(holders(paths, name, &members));
    if found.is_empty() && exclusively_busy(dev_node) {
        found.push(InUse::Busy);
    }
    found
}

/// What the kernel says holds the disk `name` or its partitions (md,
/// device-mapper, bcache): sysfs `holders/` only, nothing opened.
pub fn held_by(paths: &SystemPaths, name: &str) -> Vec<InUse> {
    let mut members = vec![name.to_string()];
    members.extend(sysfs::partitions(paths, name));
    holders(paths, name, &members)
}

fn devno_of(paths: &SystemPaths, disk: &str, member: &str) -> Option<String> {
    let dir = paths.sys.join("block").join(disk);
    let dir = if member == disk { dir } else { dir.join(member) };
    Some(fs::read_to_string(dir.join("dev")).ok()?.trim().to_string())
}

/// Mounts whose device number or source names one of `members`. (btrfs
/// reports an anonymous device number, hence the source check too.)
fn mounts(paths: &SystemPaths, disk: &str, members: &[String]) -> Vec<InUse> {
    let text = fs::read_to_string(&paths.mountinfo).unwrap_or_default();
    let devnos: Vec<(String, &String)> =
        members.iter().filter_map(|m| Some((devno_of(paths, disk, m)?, m))).collect();
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let source = fields.iter().position(|f| *f == "-").and_then(|i| fields.get(i + 2))?;
            let (devno, mountpoint) = (*fields.get(2)?, fields.get(4)?.to_string());
            let by_no = devnos.iter().find(|(d, _)| d == devno).map(|(_, m)| (*m).clone());
            let by_src =
                members.iter().find(|m| source.rsplit('/').next() == Some(m.as_str())).cloned();
            by_no.or(by_src).map(|device| InUse::Mounted { device, mountpoint })
        })
        .collect()
}

fn swaps(paths: &SystemPaths, members: &[String]) -> Vec<InUse> {
    let text = fs::read_to_string(&paths.swaps).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|dev| members.iter().find(|m| dev.rsplit('/').next() == Some(m.as_str())))
        .map(|m| InUse::Swap { device: m.clone() })
        .collect()
}

fn holders(paths: &SystemPaths, disk: &str, members: &[String]) -> Vec<InUse> {
    let base = paths.sys.join("block").join(disk);
    members
        .iter()
        .flat_map(|m| {
            let dir = if m == disk { base.join("holders") } else { base.join(m).join("holders") };
            let names: Vec<String> = fs::read_dir(dir)
                .map(|rd| {
                    rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()
                })
                .unwrap_or_default();
            names.into_iter().map(move |holder| InUse::HeldBy { device: m.clone(), holder })
        })
        .collect()
}

/// O_EXCL on a block device fails with EBUSY while a filesystem, md, dm or
/// ZFS has it claimed. Opened read-only and closed at once.
fn exclusively_busy(dev_node: &Path) -> bool {
    let r = fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_EXCL).open(dev_node);
    matches!(r, Err(e) if e.raw_os_error() == Some(nix::libc::EBUSY))
}

/// The processes that hold the device node `node` (`/dev/sdb`) open
/// (other than this one): what `fuser` would name. Only the links in
/// `/proc/PID/fd` are read (a stat through them would wait on a hung disk
/// or FUSE file).
pub fn openers(node: &Path) -> Vec<u32> {
    let me = std::process::id().to_string();
    let Ok(procs) = fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let holds = fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
            fds.flatten().any(|fd| fs::read_link(fd.path()).is_ok_and(|l| l == node))
        });
        if holds && let Ok(pid) = pid.parse() {
            out.push(pid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_mounted_partition_swap_and_holder() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let w = |rel: &str, text: &str| {
            let p = r.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        };
        w("sys/block/sdc/dev", "8:32\n");
        w("sys/block/sdc/sdc1/dev", "8:33\n");
        w("sys/block/sdc/sdc1/partition", "1\n");
        w("sys/block/sdc/sdc2/dev", "8:34\n");
        w("sys/block/sdc/sdc2/partition", "2\n");
        w("sys/block/sdc/sdc3/partition", "3\n");
        w("sys/block/sdc/sdc3/holders/md0", "");
        w(
            "mountinfo",
            "36 35 8:33 / /boot rw,noatime - ext4 /dev/sdc1 rw\n40 35 0:51 / /data rw - btrfs /dev/sdd rw\n",
        );
        w("swaps", "Filename Type Size Used Priority\n/dev/sdc2 partition 1 0 -2\n");
        let paths = SystemPaths {
            sys: r.join("sys"),
            mountinfo: r.join("mountinfo"),
            swaps: r.join("swaps"),
            diskstats: r.join("diskstats"),
            by_id: r.join("none"),
            dev: r.join("dev"),
            by_path: r.join("none"),
            pci_ids: r.join("none"),
        };
        let mut found: Vec<String> =
            in_use(&paths, "sdc", &r.join("dev/sdc")).iter().map(|u| u.to_string()).collect();
        found.sort();
        assert_eq!(found, ["sdc1 mounted on /boot", "sdc2 is swap", "sdc3 held by md0"]);
        assert!(
            in_use(&paths, "sdd", &r.join("dev/sdd"))
                .iter()
                .any(|u| matches!(u, InUse::Mounted { .. }))
        );
    }
}

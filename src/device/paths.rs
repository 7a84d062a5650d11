//! Where the kernel's views of the system are (an injectable root, so
//! tests can use a fake tree), and the udev links that name a disk. Only
//! paths: what is read below them belongs to `sysfs` and `topology`.

use std::fs;
use std::path::{Path, PathBuf};

/// Where the kernel's views of the system live; [`SystemPaths::real`] on a
/// live machine, a temporary tree in tests.
#[derive(Debug, Clone)]
pub struct SystemPaths {
    /// sysfs mount (`/sys`).
    pub sys: PathBuf,
    /// `/proc/self/mountinfo`.
    pub mountinfo: PathBuf,
    /// `/proc/swaps`.
    pub swaps: PathBuf,
    /// `/proc/diskstats`: every disk's I/O counters in one file.
    pub diskstats: PathBuf,
    /// `/dev/disk/by-id`.
    pub by_id: PathBuf,
    /// `/dev`.
    pub dev: PathBuf,
    /// `/dev/disk/by-path`.
    pub by_path: PathBuf,
    /// The PCI id database (pciutils' or hwdata's pci.ids), where the
    /// system has one.
    pub pci_ids: PathBuf,
}

impl SystemPaths {
    /// The paths of the running system.
    pub fn real() -> Self {
        Self {
            sys: "/sys".into(),
            mountinfo: "/proc/self/mountinfo".into(),
            swaps: "/proc/swaps".into(),
            diskstats: "/proc/diskstats".into(),
            by_id: "/dev/disk/by-id".into(),
            dev: "/dev".into(),
            by_path: "/dev/disk/by-path".into(),
            pci_ids: ["/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"]
                .into_iter()
                .map(PathBuf::from)
                .find(|p| p.exists())
                .unwrap_or_else(|| "/usr/share/misc/pci.ids".into()),
        }
    }
}

/// The udev links in `dir` (`/dev/disk/by-id`, `by-path`) that point at
/// `/dev/NAME`.
/// The last part of a path (`sda` of `/sys/block/sda`), empty if none.
pub fn leaf(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The paths of the symlinks in `dir` whose target's last part is `name`.
pub fn links_to(dir: &Path, name: &str) -> Vec<String> {
    let Ok(rd) = fs::read_dir(dir) else { return Vec::new() };
    rd.flatten()
        .filter(|e| fs::read_link(e.path()).is_ok_and(|t| t.file_name().is_some_and(|f| f == name)))
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect()
}

//! Reading disk identity from sysfs: no libudev, no ioctls. Everything is
//! read below an injectable root so tests can use a fake tree.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::paths::{SystemPaths, links_to};

/// What sysfs says about one whole disk (or a partition, when named).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Identity {
    /// Kernel name (`sda`, `nvme0n1`, `loop3`).
    pub name: String,
    /// Device node (`/dev/sda`).
    pub dev_path: String,
    /// The `/dev/disk/by-id` name pointing at it, where udev made one.
    pub by_id: Option<String>,
    /// Vendor string (SCSI/SATA), trimmed.
    pub vendor: Option<String>,
    /// Model string, trimmed.
    pub model: Option<String>,
    /// Serial number, trimmed.
    pub serial: Option<String>,
    /// Firmware revision.
    pub firmware: Option<String>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Logical block (sector) size in bytes: the O_DIRECT offset/length unit.
    pub logical_block_size: u32,
    /// Physical block size in bytes.
    pub physical_block_size: u32,
    /// Spinning disk (true) or solid state (false), as the kernel believes.
    pub rotational: bool,
    /// Removable medium (USB sticks, card readers).
    pub removable: bool,
    /// Read-only at the block layer.
    pub read_only: bool,
    /// `MAJ:MIN` device number.
    pub devno: String,
    /// World wide name (`naa.5000c500a1b2c3d4`, `eui.…`), where the disk
    /// has one: the same disk under any name on any host.
    #[serde(default)]
    pub wwn: Option<String>,
    /// Where it hangs: transport, controller, SCSI address, expander,
    /// enclosure slot, by-path (only for whole disks).
    #[serde(default)]
    pub topology: super::topology::Topology,
    /// A low-level format arrayburn does not test (520-byte sectors,
    /// protection information), where the disk has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<super::format::Format>,
    /// A software RAID or device-mapper volume: what kind, over which
    /// disks (sysfs `slaves/`, `md/level`, `dm/name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Volume>,
    /// An NVMe namespace's ID (sysfs `nsid`): the namespaces of one
    /// controller share its serial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nsid: Option<u32>,
}

impl Identity {
    /// Its serial as one unit of storage's: a namespace past the first
    /// of an NVMe controller is `SERIAL-nsN` (the first keeps the
    /// controller's serial, as a drive of one namespace has it).
    pub fn unit_serial(&self) -> Option<String> {
        let serial = self.serial.clone()?;
        Some(match self.nsid {
            Some(n) if n > 1 => format!("{serial}-ns{n}"),
            _ => serial,
        })
    }
}

/// A volume the kernel builds over other block devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Volume {
    /// `md raid1 volume`, `device-mapper volume (NAME)`.
    pub kind: String,
    /// The disks below it (`/dev/sda`; a partition's whole disk).
    pub members: Vec<String>,
}

impl Volume {
    /// What a read of the volume can tell of its drives, in a sentence
    /// for `path`.
    pub fn sentence(&self, path: &str) -> String {
        if let [one] = self.members.as_slice() {
            return format!(
                "{path} is {} over {one}: its reads go to {one} through it, at the volume's offsets, not the drive's; check {one} itself for the drive's own numbers and places: arrayburn check {one}",
                self.a_kind()
            );
        }
        format!(
            "{path} is {} of {}: its reads are spread over them, so its speed is no drive's and a slow or failing read is not placed on one drive; check the members themselves (they read while it runs): arrayburn check {}",
            self.a_kind(),
            self.members.join(", "),
            self.members.join(" ")
        )
    }

    /// Its kind with its article (`an md raid1 volume`).
    pub fn a_kind(&self) -> String {
        let an = if self.kind.starts_with("md") { "an" } else { "a" };
        format!("{an} {}", self.kind)
    }
}

/// The volume whose sysfs directory is `dir`, where it is one.
fn volume(paths: &SystemPaths, dir: &Path) -> Option<Volume> {
    // A partition below it stands for its whole disk (what a check reads).
    let whole = |name: std::ffi::OsString| {
        let at = paths.sys.join("class/block").join(&name);
        let disk = at.join("partition").exists().then(|| fs::canonicalize(&at).ok()).flatten();
        disk.and_then(|d| Some(d.parent()?.file_name()?.to_os_string())).unwrap_or(name)
    };
    let mut members: Vec<String> = fs::read_dir(dir.join("slaves"))
        .ok()?
        .flatten()
        .map(|e| paths.dev.join(whole(e.file_name())).to_string_lossy().into_owned())
        .collect();
    if members.is_empty() {
        return None;
    }
    members.sort();
    members.dedup();
    let kind = match (read_trim(&dir.join("md/level")), read_trim(&dir.join("dm/name"))) {
        (Some(level), _) => format!("md {level} volume"),
        (None, Some(name)) => format!("device-mapper volume ({name})"),
        _ => "volume".into(),
    };
    Some(Volume { kind, members })
}

/// An attribute's text, trimmed, with control characters escaped (a
/// disk's firmware chooses its model and serial strings).
fn read_trim(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| crate::escape::terminal(t))
}

pub(super) fn read_num(p: &Path) -> Option<u64> {
    read_trim(p)?.parse().ok()
}

/// The serial of a SCSI/SATA disk from VPD page 0x80 (4-byte header, then
/// ASCII), used when the driver has no plain `serial` attribute.
fn vpd_serial(p: &Path) -> Option<String> {
    let raw = fs::read(p).ok()?;
    let text = String::from_utf8_lossy(raw.get(4..)?)
        .trim_matches(|c: char| c.is_whitespace() || c == '\0')
        .to_string();
    (!text.is_empty()).then(|| crate::escape::terminal(&text))
}

/// Reads the identity of the block device whose sysfs directory is `dir`
/// (a `/sys/block/NAME` or a partition directory below it). `queue` is the
/// directory holding `queue/` (the parent disk's for partitions).
pub fn identity(paths: &SystemPaths, dir: &Path, queue_dir: &Path) -> Identity {
    let name = super::paths::leaf(dir);
    let dev = queue_dir.join("device");
    let q = queue_dir.join("queue");
    let flag = |p: PathBuf| read_num(&p) == Some(1);
    Identity {
        dev_path: paths.dev.join(&name).to_string_lossy().into_owned(),
        by_id: by_id_name(paths, &name),
        vendor: read_trim(&dev.join("vendor")),
        model: read_trim(&dev.join("model")),
        serial: read_trim(&dev.join("serial")).or_else(|| vpd_serial(&dev.join("vpd_pg80"))),
        firmware: read_trim(&dev.join("firmware_rev")).or_else(|| read_trim(&dev.join("rev"))),
        size_bytes: read_num(&dir.join("size")).unwrap_or(0) * 512,
        logical_block_size: read_num(&q.join("logical_block_size")).unwrap_or(512) as u32,
        physical_block_size: read_num(&q.join("physical_block_size")).unwrap_or(512) as u32,
        rotational: flag(q.join("rotational")),
        removable: flag(queue_dir.join("removable")),
        read_only: flag(dir.join("ro")),
        devno: read_trim(&dir.join("dev")).unwrap_or_default(),
        wwn: read_trim(&dev.join("wwid"))
            .or_else(|| read_trim(&queue_dir.join("wwid")))
            .or_else(|| read_trim(&dev.join("wwn"))),
        topology: if dir == queue_dir {
            super::topology::topology(paths, &name)
        } else {
            super::topology::Topology::default()
        },
        format: (dir == queue_dir)
            .then(|| super::format::read(dir, &name, read_num(&dir.join("size")).unwrap_or(0)))
            .flatten(),
        volume: volume(paths, dir),
        nsid: read_num(&dir.join("nsid")).and_then(|n| u32::try_from(n).ok()),
        name,
    }
}

/// The most descriptive `/dev/disk/by-id` link to `/dev/NAME`: a
/// model-and-serial name (`ata-…`, `nvme-…`, `scsi-…`) before a `wwn-` one,
/// and never one that names a controller of several namespaces: udev
/// points `nvme-MODEL_SERIAL` at whichever of them it saw last, where
/// `nvme-MODEL_SERIAL_NSID` stays.
fn by_id_name(paths: &SystemPaths, name: &str) -> Option<String> {
    let all: Vec<String> = fs::read_dir(&paths.by_id)
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    let shared = |link: &str| {
        let Some(file) = Path::new(link).file_name().and_then(|f| f.to_str()) else {
            return false;
        };
        let namespaces = all.iter().filter(|o| {
            o.strip_prefix(file)
                .and_then(|t| t.strip_prefix('_'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
        namespaces.count() > 1
    };
    let mut found = links_to(&paths.by_id, name);
    found.sort_by_key(|p| (shared(p), p.contains("/wwn-"), p.len()));
    found.into_iter().next()
}

/// The disk `name`'s I/O so far, as `/sys/block/NAME/stat` counts it:
/// (requests completed, sectors moved, requests in flight). It moves while
/// anyone's I/O on the disk goes on, a killed process's included.
pub fn io_counts(paths: &SystemPaths, name: &str) -> Option<(u64, u64, u64)> {
    let c = super::diskstats::read(paths, name)?;
    Some((c.reads + c.writes, c.read_sectors + c.write_sectors, c.in_flight))
}

/// Kernel names of whole disks in `/sys/block`, sorted naturally
/// (`sdb` before `sdaa`, `loop2` before `loop10`).
pub fn disk_names(paths: &SystemPaths) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(paths.sys.join("block"))
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort_by_key(|n| natural_key(n));
    names
}

/// Family (first two letters), then shorter stems first, then the number:
/// `sdb` < `sdaa` as the kernel names them, `loop2` < `loop10`.
fn natural_key(name: &str) -> (String, usize, String, u64) {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let num = name[stem.len()..].parse().unwrap_or(0);
    (name.chars().take(2).collect(), stem.len(), stem.to_string(), num)
}

/// Names of the partitions of disk `name` (child directories with a
/// `partition` file).
pub fn partitions(paths: &SystemPaths, name: &str) -> Vec<String> {
    let Ok(rd) = fs::read_dir(paths.sys.join("block").join(name)) else { return Vec::new() };
    rd.flatten()
        .filter(|e| e.path().join("partition").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The zone model sysfs names for disk `name` below `sys` (`host-aware`,
/// `host-managed`; None: none, or unread).
pub fn zone_model(sys: &Path, name: &str) -> Option<String> {
    let z = fs::read_to_string(sys.join("block").join(name).join("queue/zoned")).ok()?;
    let z = z.trim();
    (!z.is_empty() && z != "none").then(|| z.to_string())
}

/// Disks that are not physical drives (loop, RAM disks, device-mapper, md,
/// optical): hidden from `list` unless asked for.
pub fn is_virtual(name: &str) -> bool {
    ["loop", "ram", "zram", "dm-", "md", "nbd", "sr", "fd"].iter().any(|p| name.starts_with(p))
}

/// A `/proc/meminfo` field (`MemTotal`, `MemAvailable`) in bytes.
pub fn meminfo_bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    #[test]
    fn reads_a_sata_disk_with_vpd_serial() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        write(root, "sys/block/sdb/size", "7814037168\n");
        write(root, "sys/block/sdb/dev", "8:16\n");
        write(root, "sys/block/sdb/removable", "0\n");
        write(root, "sys/block/sdb/ro", "0\n");
        write(root, "sys/block/sdb/queue/logical_block_size", "512\n");
        write(root, "sys/block/sdb/queue/physical_block_size", "4096\n");
        write(root, "sys/block/sdb/queue/rotational", "1\n");
        // A firmware's model string with a terminal escape in it.
        write(root, "sys/block/sdb/device/model", "ST4000NM0033\x1b]0;x\x07\n");
        write(root, "sys/block/sdb/device/rev", "SN06\n");
        fs::write(root.join("sys/block/sdb/device/vpd_pg80"), b"\0\x80\0\x08Z1Z0ABCD").unwrap();
        write(root, "sys/block/sdb/sdb1/partition", "1\n");
        let paths = SystemPaths {
            sys: root.join("sys"),
            mountinfo: root.join("mountinfo"),
            swaps: root.join("swaps"),
            diskstats: root.join("diskstats"),
            by_id: root.join("by-id"),
            dev: "/dev".into(),
            by_path: root.join("by-path"),
            pci_ids: root.join("pci.ids"),
        };
        let dir = paths.sys.join("block/sdb");
        let id = identity(&paths, &dir, &dir);
        assert_eq!(id.size_bytes, 7814037168 * 512);
        assert_eq!(id.serial.as_deref(), Some("Z1Z0ABCD"));
        assert_eq!(id.model.as_deref(), Some("ST4000NM0033\\x1b]0;x\\x07"));
        assert_eq!(id.firmware.as_deref(), Some("SN06"));
        assert_eq!((id.logical_block_size, id.physical_block_size), (512, 4096));
        assert!(id.rotational && !id.removable && !id.read_only);
        assert_eq!(partitions(&paths, "sdb"), vec!["sdb1".to_string()]);
    }

    #[test]
    fn a_namespace_of_a_controller_of_several_is_named_by_its_own_link() {
        // As udev made them in the lab (QEMU, one controller, two
        // namespaces): the plain link went to the namespace seen last.
        let t = tempfile::tempdir().unwrap();
        let by_id = t.path().join("by-id");
        fs::create_dir_all(&by_id).unwrap();
        for (link, to) in [
            ("nvme-QEMU_NVMe_Ctrl_LABNVME00", "nvme0n2"),
            ("nvme-QEMU_NVMe_Ctrl_LABNVME00_1", "nvme0n1"),
            ("nvme-QEMU_NVMe_Ctrl_LABNVME00_2", "nvme0n2"),
            ("nvme-QEMU_NVMe_Ctrl_LABNVME01", "nvme1n1"),
            ("nvme-QEMU_NVMe_Ctrl_LABNVME01_1", "nvme1n1"),
        ] {
            std::os::unix::fs::symlink(format!("../../{to}"), by_id.join(link)).unwrap();
        }
        let paths = SystemPaths { by_id, ..SystemPaths::real() };
        let named =
            |n: &str| by_id_name(&paths, n).unwrap().rsplit('/').next().unwrap().to_string();
        assert_eq!(named("nvme0n1"), "nvme-QEMU_NVMe_Ctrl_LABNVME00_1");
        assert_eq!(named("nvme0n2"), "nvme-QEMU_NVMe_Ctrl_LABNVME00_2");
        // One namespace: the plain link is its own, and the shorter.
        assert_eq!(named("nvme1n1"), "nvme-QEMU_NVMe_Ctrl_LABNVME01");
    }

    #[test]
    fn a_volume_names_the_whole_disks_below_it_and_one_over_a_single_disk_says_so() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        // md0, a RAID1 over two partitions; dm-0, a mapping over one disk.
        for (vol, below) in [("md0", "sda1"), ("md0", "sdb1"), ("dm-0", "sdc")] {
            write(root, &format!("sys/block/{vol}/slaves/{below}"), "");
        }
        write(root, "sys/block/md0/md/level", "raid1\n");
        write(root, "sys/block/dm-0/dm/name", "lab-slow\n");
        fs::create_dir_all(root.join("sys/class/block")).unwrap();
        for (disk, part) in [("sda", "sda1"), ("sdb", "sdb1")] {
            write(root, &format!("sys/block/{disk}/{part}/partition"), "1\n");
            let link = root.join("sys/class/block").join(part);
            std::os::unix::fs::symlink(root.join(format!("sys/block/{disk}/{part}")), link)
                .unwrap();
        }
        let paths =
            SystemPaths { sys: root.join("sys"), dev: "/dev".into(), ..SystemPaths::real() };
        let md = volume(&paths, &paths.sys.join("block/md0")).unwrap();
        assert_eq!(
            (md.kind.as_str(), md.members.as_slice()),
            ("md raid1 volume", &["/dev/sda".to_string(), "/dev/sdb".into()][..])
        );
        assert!(md.sentence("/dev/md0").ends_with("check the members themselves (they read while it runs): arrayburn check /dev/sda /dev/sdb"));
        let dm = volume(&paths, &paths.sys.join("block/dm-0")).unwrap();
        assert_eq!(
            dm.sentence("/dev/mapper/lab-slow"),
            "/dev/mapper/lab-slow is a device-mapper volume (lab-slow) over /dev/sdc: its reads go to /dev/sdc through it, at the volume's offsets, not the drive's; check /dev/sdc itself for the drive's own numbers and places: arrayburn check /dev/sdc"
        );
        assert_eq!(volume(&paths, &paths.sys.join("block/sda")), None);
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["sdaa", "loop10", "sdb", "loop2", "sda"];
        v.sort_by_key(|n| natural_key(n));
        assert_eq!(v, ["loop2", "loop10", "sda", "sdb", "sdaa"]);
    }
}

/// The machine a result was measured on: systemd's machine id (stable
/// across reboots and renames) and the kernel release.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub machine_id: Option<String>,
    pub kernel: Option<String>,
}

impl Machine {
    /// This machine.
    pub fn this() -> Self {
        Self {
            machine_id: read_trim(Path::new("/etc/machine-id")),
            kernel: read_trim(Path::new("/proc/sys/kernel/osrelease")),
        }
    }
}

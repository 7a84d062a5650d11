//! The pool a disk serves, as the system names it: an md array, an LVM
//! volume group (every Ceph OSD's as one pool, `ceph`: Ceph makes a group
//! per OSD), a ZFS pool and the class of its vdevs (`zpool status -P`,
//! where zpool is installed). Disks of two pools carry two workloads:
//! `watch` never compares them. Holders are followed up through layers
//! that are no pool (dm-crypt, multipath), to the pool above them.
//!
//! It must not judge, and runs nothing but `zpool status`.

use std::collections::VecDeque;
use std::fs;
use std::process::Command;
use std::time::Duration;

use super::paths::SystemPaths;
use super::sysfs;
use super::tool::{self, Needed};

/// The pool that holds disk `name` (or one of its partitions), through
/// sysfs holders: `md0`, `vg data`, `ceph`; None where none does.
pub fn of(paths: &SystemPaths, name: &str) -> Option<String> {
    let block = paths.sys.join("block");
    let mut members = vec![name.to_string()];
    members.extend(sysfs::partitions(paths, name));
    let holders_of = |dir: std::path::PathBuf| -> Vec<String> {
        let Ok(rd) = fs::read_dir(dir.join("holders")) else { return Vec::new() };
        rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()
    };
    let mut queue: VecDeque<(String, usize)> = (members.iter())
        .flat_map(|m| {
            let dir = if m == name { block.join(name) } else { block.join(name).join(m) };
            holders_of(dir)
        })
        .map(|h| (h, 0))
        .collect();
    let mut found: Vec<String> = Vec::new();
    while let Some((h, depth)) = queue.pop_front() {
        let dir = block.join(&h);
        let read = |f: &str| fs::read_to_string(dir.join(f)).map(|s| s.trim().to_string()).ok();
        let pool = match (h.starts_with("md"), read("dm/uuid"), read("dm/name")) {
            (true, _, _) => Some(h.clone()),
            (false, Some(uuid), Some(dm)) if uuid.starts_with("LVM-") => volume_group(&dm),
            _ => None,
        };
        match pool {
            Some(p) => found.push(p),
            None if depth < 4 => queue.extend(holders_of(dir).into_iter().map(|n| (n, depth + 1))),
            None => {}
        }
    }
    found.sort();
    found.dedup();
    (!found.is_empty()).then(|| found.join("+"))
}

/// The volume group of a device-mapper name LVM made (`VG-LV`, each `-`
/// within a name doubled): `vg NAME`, or `ceph` for a Ceph OSD's.
fn volume_group(dm: &str) -> Option<String> {
    let mut vg = String::new();
    let mut chars = dm.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('-', Some('-')) => {
                chars.next();
                vg.push('-');
            }
            ('-', _) => break,
            _ => vg.push(c),
        }
    }
    match vg.as_str() {
        "" => None,
        v if v.starts_with("ceph-") => Some("ceph".into()),
        v => Some(format!("vg {v}")),
    }
}

/// `zpool status -P` where zpool is installed: each leaf device's path
/// and its pool (`zfs tank`, `zfs tank logs`); nothing where zpool is
/// missing, fails, takes longer than a few seconds or `give_up` says so
/// (a signal).
pub fn zfs(give_up: &dyn Fn() -> bool) -> Vec<(String, String)> {
    const ZPOOL: Needed = Needed { program: "zpool", debian: "zfsutils-linux", rhel: "zfs" };
    if !ZPOOL.installed() {
        return Vec::new();
    }
    let mut cmd = Command::new("zpool");
    match tool::output(cmd.args(["status", "-P"]), Duration::from_secs(10), give_up) {
        Ok(out) => parse_zpool_status(&String::from_utf8_lossy(&out.stdout)),
        Err(_) => Vec::new(),
    }
}

/// Each leaf of `zpool status -P`'s configs (a path) with its pool and,
/// past the pool's data vdevs, the class its section names (`logs`,
/// `cache`, `spares`, `special`, `dedup`).
pub fn parse_zpool_status(text: &str) -> Vec<(String, String)> {
    const CLASSES: [&str; 5] = ["logs", "cache", "spares", "special", "dedup"];
    let (mut pool, mut class, mut config) = (String::new(), None::<String>, false);
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(p) = t.strip_prefix("pool:") {
            (pool, class, config) = (p.trim().to_string(), None, false);
        } else if t == "config:" {
            config = true;
        } else if t.starts_with("errors:") {
            config = false;
        } else if config {
            let first = t.split_whitespace().next().unwrap_or("");
            if CLASSES.contains(&first) {
                class = Some(first.to_string());
            } else if first.starts_with('/') {
                let mut p = format!("zfs {pool}");
                if let Some(c) = &class {
                    p = format!("{p} {c}");
                }
                out.push((first.to_string(), p));
            }
        }
    }
    out
}

/// The whole disk a path from `zpool status -P` is on (`sdb` for
/// `/dev/disk/by-id/ata-...-part1`), through its link and sysfs.
pub fn disk_of(paths: &SystemPaths, path: &str) -> Option<String> {
    let real = fs::canonicalize(path).ok()?;
    let name = super::paths::leaf(&real);
    let dir = fs::canonicalize(paths.sys.join("class/block").join(&name)).ok()?;
    Some(match dir.join("partition").exists() {
        true => super::paths::leaf(dir.parent()?),
        false => name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lvm_names_are_read_back_to_their_volume_group_and_every_ceph_osd_is_one_pool() {
        assert_eq!(volume_group("data-lv0").as_deref(), Some("vg data"));
        assert_eq!(volume_group("my--vg-my--lv").as_deref(), Some("vg my-vg"));
        let osd = "ceph--7f2c1a9e--2d4b--4c1e--9f0a--1b2c3d4e5f60-osd--block--a1b2c3d4--e5f6";
        assert_eq!(volume_group(osd).as_deref(), Some("ceph"));
        assert_eq!(volume_group("-x"), None);
    }

    /// A sysfs tree: `sdb` and `sdc` under dm-crypt under md0, `sdd`'s
    /// partition in an LVM group, `sde` in a Ceph OSD, `sdf` alone.
    #[test]
    fn a_disk_s_pool_is_found_above_the_layers_that_are_no_pool() {
        let root = tempfile::tempdir().unwrap();
        let block = root.path().join("block");
        let mk = |p: &str| fs::create_dir_all(block.join(p)).unwrap();
        let put = |p: &str, v: &str| fs::write(block.join(p), v).unwrap();
        for (disk, crypt) in [("sdb", "dm-0"), ("sdc", "dm-1")] {
            mk(&format!("{disk}/holders/{crypt}"));
            mk(&format!("{crypt}/holders/md0"));
            mk(&format!("{crypt}/dm"));
            put(&format!("{crypt}/dm/uuid"), "CRYPT-LUKS2-0123-crypt\n");
            put(&format!("{crypt}/dm/name"), "crypt\n");
        }
        mk("sdd/sdd1/holders/dm-2");
        put("sdd/sdd1/partition", "1\n");
        mk("dm-2/dm");
        put(
            "dm-2/dm/uuid",
            "LVM-abcdefabcdefabcdefabcdefabcdef12abcdefabcdefabcdefabcdefabcdef12\n",
        );
        put("dm-2/dm/name", "data-lv0\n");
        mk("sde/holders/dm-3");
        mk("dm-3/dm");
        put("dm-3/dm/uuid", "LVM-0123\n");
        put("dm-3/dm/name", "ceph--11-osd--block--22\n");
        mk("sdf");
        let paths = SystemPaths { sys: root.path().into(), ..SystemPaths::real() };
        let pool = |n: &str| of(&paths, n);
        assert_eq!(pool("sdb").as_deref(), Some("md0"));
        assert_eq!(pool("sdc").as_deref(), Some("md0"));
        assert_eq!(pool("sdd").as_deref(), Some("vg data"));
        assert_eq!(pool("sde").as_deref(), Some("ceph"));
        assert_eq!(pool("sdf"), None);
    }

    #[test]
    fn zpool_status_gives_each_leaf_its_pool_and_class() {
        // OpenZFS 2.1 (Debian 12) `zpool status -P`, two pools.
        let text = "  pool: tank\n state: ONLINE\n  scan: scrub repaired 0B in 07:12:57 with 0 errors on Sun Nov  8 00:36:58 2026\nconfig:\n\n\tNAME                                                   STATE     READ WRITE CKSUM\n\ttank                                                   ONLINE       0     0     0\n\t  raidz2-0                                             ONLINE       0     0     0\n\t    /dev/disk/by-id/ata-ST16000NM001G-2KK103_ZL2A1-part1  ONLINE       0     0     0\n\t    /dev/disk/by-id/ata-ST16000NM001G-2KK103_ZL2A2-part1  ONLINE       0     1     0\n\t    /dev/sdd1                                          ONLINE       0     0     0\n\tlogs\t\n\t  mirror-1                                             ONLINE       0     0     0\n\t    /dev/nvme0n1p1                                     ONLINE       0     0     0\n\t    /dev/nvme1n1p1                                     ONLINE       0     0     0\n\tcache\n\t  /dev/nvme2n1                                         ONLINE       0     0     0\n\nerrors: No known data errors\n\n  pool: rpool\n state: ONLINE\nconfig:\n\n\tNAME                 STATE     READ WRITE CKSUM\n\trpool                ONLINE       0     0     0\n\t  mirror-0           ONLINE       0     0     0\n\t    /dev/sda3        ONLINE       0     0     0\n\t    /dev/sde3        ONLINE       0     0     0\n\nerrors: No known data errors\n";
        let got = parse_zpool_status(text);
        let pool_of = |p: &str| got.iter().find(|(q, _)| q == p).map(|(_, v)| v.as_str());
        assert_eq!(got.len(), 8, "{got:?}");
        assert_eq!(
            pool_of("/dev/disk/by-id/ata-ST16000NM001G-2KK103_ZL2A2-part1"),
            Some("zfs tank")
        );
        assert_eq!(pool_of("/dev/sdd1"), Some("zfs tank"));
        assert_eq!(pool_of("/dev/nvme1n1p1"), Some("zfs tank logs"));
        assert_eq!(pool_of("/dev/nvme2n1"), Some("zfs tank cache"));
        assert_eq!(pool_of("/dev/sde3"), Some("zfs rpool"));
        assert_eq!(parse_zpool_status("no pools available\n"), []);
    }

    #[test]
    fn a_zfs_leaf_by_id_is_its_whole_disk() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for d in ["dev/disk/by-id", "sys/block/sdb/sdb1", "sys/block/nvme0n1", "sys/class/block"] {
            fs::create_dir_all(r.join(d)).unwrap();
        }
        fs::write(r.join("sys/block/sdb/sdb1/partition"), "1\n").unwrap();
        for n in ["sdb1", "nvme0n1"] {
            fs::write(r.join("dev").join(n), "").unwrap();
        }
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, r.join(at)).unwrap();
        link("../../sdb1", "dev/disk/by-id/ata-ST16000NM001G_ZL2A1-part1");
        link("../../block/sdb/sdb1", "sys/class/block/sdb1");
        link("../../block/nvme0n1", "sys/class/block/nvme0n1");
        let paths = SystemPaths { sys: r.join("sys"), ..SystemPaths::real() };
        let by_id = r.join("dev/disk/by-id/ata-ST16000NM001G_ZL2A1-part1");
        assert_eq!(disk_of(&paths, by_id.to_str().unwrap()).as_deref(), Some("sdb"));
        let whole = r.join("dev/nvme0n1");
        assert_eq!(disk_of(&paths, whole.to_str().unwrap()).as_deref(), Some("nvme0n1"));
        assert_eq!(disk_of(&paths, "/dev/arrayburn-no-such-disk"), None);
    }
}

//! One arrayburn run per disk at a time. Two runs on the same disks each
//! steal the other's bandwidth and both "find" a slow disk, so every run
//! takes an advisory lock per whole disk and a second run is refused,
//! naming the first. `check`, `demo`, `burnin` and `iozone` (on the disk
//! under its test files' filesystem) take them.
//!
//! The lock is `flock(LOCK_EX)` on the whole disk's device node itself, the
//! convention of udev and util-linux (`flock /dev/sdb`, `mkfs --lock`,
//! systemd's block device locking): there is no lock file, so no shared,
//! world-writable directory in which another user could plant a symlink
//! for root to follow, and a partitioning tool that honours the convention
//! is kept off the disk too. Only who may open the disk may lock it. Who
//! holds a lock is read from `/proc/locks` (its pid) and `/proc/PID`
//! (user, command line), shown with control characters escaped; a run
//! may go ahead despite it only with `--ignore-lock PID`, naming the pid it
//! was shown. The lock goes when the run's process ends, however it ends.
//!
//! It must not read or write the device: opening it is all.

use std::fs::{self, File};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use nix::sys::stat::{major, makedev, minor};

use crate::escape::terminal;

/// A busy lock is tried again for this long before the run is refused:
/// udev holds a shared lock for a moment while it probes a disk (right
/// after a loop device is attached, say).
const PATIENCE: Duration = Duration::from_secs(3);

/// A disk this run holds; released on drop.
#[derive(Debug)]
pub struct DiskLock(#[allow(dead_code)] Flock<File>);

/// The whole disk `MAJ:MIN` of a device number: a partition's disk, or the
/// device itself.
pub fn whole_disk(rdev: u64) -> (u64, u64) {
    let (ma, mi) = (major(rdev), minor(rdev));
    let sys = format!("/sys/dev/block/{ma}:{mi}");
    if Path::new(&sys).join("partition").exists()
        && let Ok(dev) = fs::read_to_string(format!("{sys}/../dev"))
        && let Some((a, b)) = dev.trim().split_once(':')
        && let (Ok(a), Ok(b)) = (a.parse(), b.parse())
    {
        return (a, b);
    }
    (ma, mi)
}

/// The device the filesystem holding `path` lives on (`st_dev`).
pub fn device_of_path(path: &Path) -> std::io::Result<u64> {
    Ok(fs::metadata(path)?.dev())
}

/// Who holds a lock, as `/proc` tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// The process's user (name, else uid).
    pub user: String,
    /// Its command line, control characters escaped.
    pub command: String,
}

impl Holder {
    /// Reads what `/proc/PID` says of `pid`.
    pub fn of(pid: u32) -> Self {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let command = fs::read(proc.join("cmdline"))
            .map(|b| {
                let words: Vec<String> = b
                    .split(|c| *c == 0)
                    .filter(|w| !w.is_empty())
                    .map(|w| terminal(&String::from_utf8_lossy(w)))
                    .collect();
                words.join(" ")
            })
            .unwrap_or_default();
        let uid = fs::read_to_string(proc.join("status")).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().next()?.parse::<u32>().ok())
        });
        let user = match uid {
            Some(u) => nix::unistd::User::from_uid(u.into())
                .ok()
                .flatten()
                .map_or_else(|| format!("uid {u}"), |x| terminal(&x.name)),
            None => "an unknown user".into(),
        };
        Self { pid, user, command }
    }

    /// `pid 123 (user root: arrayburn check /dev/sdb)`.
    pub fn words(&self) -> String {
        let command = if self.command.is_empty() {
            "its command line unreadable".to_string()
        } else {
            self.command.clone()
        };
        format!("pid {} (user {}: {command})", self.pid, self.user)
    }
}

/// The device node of the whole disk `MAJ:MIN`: `/dev/NAME` from sysfs,
/// proven to be that block device.
fn node_of((ma, mi): (u64, u64)) -> Option<PathBuf> {
    let uevent = fs::read_to_string(format!("/sys/dev/block/{ma}:{mi}/uevent")).ok()?;
    let name = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME="))?;
    let node = Path::new("/dev").join(name);
    let meta = fs::symlink_metadata(&node).ok()?;
    (meta.file_type().is_block_device() && meta.rdev() == makedev(ma, mi)).then_some(node)
}

/// Who holds the lock of `node`: the live pids `/proc/locks` names for the
/// file `(st_dev, st_ino)`; where the one that took it has gone (`flock
/// 9` in a shell takes it for the shell that opened the file), the
/// processes that have the node open.
fn holders(node: &Path, dev: u64, ino: u64) -> Vec<Holder> {
    let me = std::process::id();
    let alive = |p: &u32| *p != me && Path::new(&format!("/proc/{p}")).exists();
    let pids: Vec<u32> = holders_of(dev, ino).into_iter().filter(alive).collect();
    let pids = if pids.is_empty() { super::usage::openers(node) } else { pids };
    pids.into_iter().map(Holder::of).collect()
}

/// Who holds a flock on the file at `path` (a lock file of the test
/// suite's, say), as [`lock`]'s refusal names the holder of a disk's.
pub fn holders_of_file(path: &Path) -> Vec<Holder> {
    match fs::metadata(path) {
        Ok(m) => holders(path, m.dev(), m.ino()),
        Err(_) => Vec::new(),
    }
}

/// The pids holding a flock on the file `(st_dev, st_ino)`, from
/// `/proc/locks` (device numbers in hex there).
fn holders_of(dev: u64, ino: u64) -> Vec<u32> {
    let want = format!("{:02x}:{:02x}:{ino}", major(dev), minor(dev));
    fs::read_to_string("/proc/locks")
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.contains("->"))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            // "1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END"
            (w.get(1) == Some(&"FLOCK") && w.get(5) == Some(&want.as_str()))
                .then(|| w.get(4)?.parse().ok())
                .flatten()
        })
        .collect()
}

/// Takes the lock of the whole disk of `rdev` for this run, `name` being
/// how the user named it. Refused (one line, naming who holds it and the
/// way out) when another process holds it for longer than a moment;
/// `ignore` names the pid the user was shown and goes ahead without the
/// lock (only when that pid is the holder). Where the disk has no node or
/// cannot be opened (iozone on a tmpfs, or run by an ordinary user on
/// their own files; check and burn-in open their disks anyway), the run
/// goes on unlocked: `None`.
pub fn lock(rdev: u64, name: &str, ignore: Option<u32>) -> Result<Option<DiskLock>, String> {
    let Some(node) = node_of(whole_disk(rdev)) else { return Ok(None) };
    let Ok(file) = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(&node)
    else {
        return Ok(None);
    };
    let (dev, ino) = match file.metadata() {
        Ok(m) => (m.dev(), m.ino()),
        Err(e) => return Err(format!("{}: {e}", node.display())),
    };
    let began = Instant::now();
    let mut file = file;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(held) => return Ok(Some(DiskLock(held))),
            Err((back, _)) => file = back,
        }
        let holders = holders(&node, dev, ino);
        if let Some(pid) = ignore
            && let Some(h) = holders.iter().find(|h| h.pid == pid)
        {
            tell!(
                "arrayburn: warning: {} is locked by {}; going ahead as --ignore-lock {pid} says (two runs on one disk slow each other and both misjudge it)",
                terminal(name),
                h.words()
            );
            return Ok(None);
        }
        if began.elapsed() < PATIENCE {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        return Err(match holders.first() {
            Some(h) => format!(
                "{} is in use by {}; two runs on one disk slow each other and both misjudge it: wait for that run to end, or stop it (kill {}); if it is not using the disk, add --ignore-lock {}",
                terminal(name),
                h.words(),
                h.pid,
                h.pid
            ),
            None => format!(
                "{} is locked by a process this one cannot see (another container?); two runs on one disk slow each other and both misjudge it: wait for that run to end",
                terminal(name)
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_of_a_lock_is_found_in_proc_locks() {
        // A file of our own, flocked: /proc/locks names this process.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        fs::write(&p, "").unwrap();
        let f = File::open(&p).unwrap();
        let m = f.metadata().unwrap();
        let _held = Flock::lock(f, FlockArg::LockExclusiveNonblock).unwrap();
        assert_eq!(holders_of(m.dev(), m.ino()), [std::process::id()]);
        let me = Holder::of(std::process::id());
        assert!(!me.command.is_empty() && !me.user.is_empty(), "{me:?}");
    }
}

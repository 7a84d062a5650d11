//! One arrayburn run per disk at a time. Two runs on the same disks each
//! steal the other's bandwidth and both "find" a slow disk, so every run
//! takes an advisory lock per whole disk (`flock` on a small file in
//! `/run/lock/arrayburn`, named by the disk's device number) and a second
//! run is refused, naming the first. `check`, `demo` and `iozone` (on the
//! disk under its test files' filesystem) take them; the burn-in will too.
//!
//! The lock files stay (removing a lock file races with its next taker);
//! they are a few bytes in a tmpfs. The lock goes when the run's process
//! ends, however it ends.

use std::fs::{self, File};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};
use nix::sys::stat::{major, minor};

const DIR: &str = "/run/lock/arrayburn";

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

/// Takes the lock of the whole disk of `rdev` for this run, `name` being
/// how the user named it. Refused (one line, naming the other run and the
/// way out) when another run holds it. Where no lock file can be made (a
/// user without write access to /run/lock, the usual case for iozone runs
/// by ordinary users on their own files), the run goes on unlocked: `None`,
/// after a warning saying so.
pub fn lock(rdev: u64, name: &str, command_line: &[String]) -> Result<Option<DiskLock>, String> {
    let (ma, mi) = whole_disk(rdev);
    let path = format!("{DIR}/disk-{ma}-{mi}.lock");
    let Some(file) = open_lock_file(&path) else {
        eprintln!(
            "arrayburn: warning: cannot create {path}, so another arrayburn run on {name} would not be noticed; run as root to take the disk's lock"
        );
        return Ok(None);
    };
    let mut held = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(held) => held,
        Err((mut file, _)) => {
            let mut who = String::new();
            let _ = file.read_to_string(&mut who);
            let who = who.trim();
            let who = if who.is_empty() {
                "another arrayburn run"
            } else {
                who
            };
            return Err(format!(
                "{name} is in use by {who}; two runs on one disk slow each other and both misjudge it: wait for that run to end, or stop it"
            ));
        }
    };
    let me = format!(
        "arrayburn pid {} ({}) since {}",
        std::process::id(),
        command_line.join(" "),
        crate::units::rfc3339(std::time::SystemTime::now())
    );
    let _ = held.set_len(0);
    let _ = held.rewind();
    let _ = held.write_all(me.as_bytes());
    Ok(Some(DiskLock(held)))
}

/// Opens (creating) a lock file in a directory every user may add to, as
/// /run/lock itself; read-only where another user created the file (a
/// read-only descriptor takes a flock just as well).
fn open_lock_file(path: &str) -> Option<File> {
    if !Path::new(DIR).is_dir() {
        fs::create_dir_all(DIR).ok()?;
        let _ = fs::set_permissions(DIR, std::os::unix::fs::PermissionsExt::from_mode(0o1777));
    }
    let rw = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    match rw {
        Ok(f) => Some(f),
        Err(_) => File::open(path).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_a_disk_is_refused_and_names_the_first() {
        if !nix::unistd::Uid::effective().is_root() {
            eprintln!("skipped: the lock directory is root's");
            return;
        }
        // A device number no disk has here (major 240 is for local use).
        let rdev = nix::sys::stat::makedev(240, 4242);
        let first = lock(rdev, "/dev/x", &["arrayburn".into(), "check".into()]).unwrap();
        assert!(first.is_some(), "root can always take it");
        let err = lock(rdev, "/dev/x", &[]).unwrap_err();
        assert!(err.contains("/dev/x is in use by arrayburn pid"), "{err}");
        assert!(err.contains("(arrayburn check)"), "{err}");
        drop(first);
        lock(rdev, "/dev/x", &[]).expect("free again once the first run ends");
    }
}

//! How much memory a run's I/O buffers may take. A burn-in's are the queue
//! depth and one more, times the block, per disk: `--queue-depth 64 --block
//! 64m` on a 24-disk shelf asks for 100 GiB (a check's reads all land in one
//! block, and each disk holds one more). A run that cannot have them is refused
//! before it starts, with the figure, rather than killed by the OOM killer
//! halfway (the kernel's or a cgroup's: a systemd unit or a container sets
//! one).
//!
//! It must not allocate: it reads /proc and the cgroup files only.

use std::fs;
use std::path::{Path, PathBuf};

use crate::units::human_bytes_binary;

/// The share of what is available a run's buffers may take (the rest is
/// the page cache, the other processes, the run's own bookkeeping).
const SHARE: f64 = 0.8;

/// Bytes this process may still allocate, and what limits it: the
/// system's available memory, or a memory cgroup's limit less its use
/// (the tightest of this process's group and its parents).
pub fn available() -> Option<(u64, &'static str)> {
    let system =
        crate::device::sysfs::meminfo_bytes("MemAvailable").map(|b| (b, "the memory available"));
    let group = cgroup_left().map(|b| (b, "its memory cgroup's limit"));
    system.into_iter().chain(group).min_by_key(|(b, _)| *b)
}

/// A number from a cgroup file (`max`: none).
fn read_u64(p: &Path) -> Option<u64> {
    fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// The least a memory cgroup on this process's path leaves it: limit less
/// usage, from its own group up to the root (v1 `memory.limit_in_bytes`,
/// v2 `memory.max`).
fn cgroup_left() -> Option<u64> {
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut dirs: Vec<(PathBuf, &str, &str)> = Vec::new();
    for line in own.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "memory") {
            let root = Path::new("/sys/fs/cgroup/memory");
            dirs.push((root.join(rel), "memory.limit_in_bytes", "memory.usage_in_bytes"));
        } else if controllers.is_empty() {
            let root = Path::new("/sys/fs/cgroup");
            dirs.push((root.join(rel), "memory.max", "memory.current"));
        }
    }
    let mut least: Option<u64> = None;
    for (dir, limit, usage) in dirs {
        let mut at = Some(dir.as_path());
        while let Some(d) = at {
            if let (Some(l), Some(u)) = (read_u64(&d.join(limit)), read_u64(&d.join(usage))) {
                let left = l.saturating_sub(u);
                least = Some(least.map_or(left, |x| x.min(left)));
            }
            at = d.parent().filter(|p| p.starts_with("/sys/fs/cgroup"));
        }
    }
    least
}

/// Refuses buffers of `need` bytes beyond `SHARE` of what is available,
/// `what` saying how they add up (`65 per disk × 64 MiB × 2 disks`),
/// `flags` the options that set them as given and `lower` the ones to
/// lower.
pub fn refuse_beyond(need: u64, what: &str, (flags, lower): (&str, &str)) -> Result<(), String> {
    let Some((left, by)) = available() else { return Ok(()) };
    if need as f64 <= left as f64 * SHARE {
        return Ok(());
    }
    Err(format!(
        "{flags}: the I/O buffers need {} ({what}), more than {:.0} % of the {} {by} leaves: lower {lower}, or test fewer disks at once",
        human_bytes_binary(need),
        SHARE * 100.0,
        human_bytes_binary(left)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_available_is_known_and_a_huge_ask_is_refused() {
        let (left, _) = available().expect("/proc/meminfo");
        assert!(left > 0);
        let e = refuse_beyond(u64::MAX / 2, "a lot", ("--block 1g", "--block")).unwrap_err();
        assert!(e.starts_with("--block 1g: the I/O buffers need"), "{e}");
        assert!(e.ends_with("lower --block, or test fewer disks at once"), "{e}");
        assert!(refuse_beyond(4096, "a page", ("--block 4k", "--block")).is_ok());
    }
}

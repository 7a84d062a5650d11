//! The test bed: memory-backed loop devices and a cgroup-v1 blkio throttle
//! that arrayburn creates, owns and removes on every exit path (success,
//! error, signal, panic), touching nothing it did not create. The demo's
//! array is built from it, and so are the tests' and benchmarks' disks.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::stop::StopFlag;

/// Where the blkio controller of cgroup v1 is mounted.
pub const BLKIO_ROOT: &str = "/sys/fs/cgroup/blkio";

/// Fills `path` with `size` bytes of a cheap pseudo-random stream: not
/// sparse, not compressible, no two 4 KiB blocks alike, so reads are real
/// reads. 4 MiB of xorshift, then each block of each later 4 MiB marked
/// with its own number (cheap in an unoptimised test build too, where the
/// whole stream in xorshift took a second per 256 MiB). Stops early with
/// `Interrupted` when `stop` is set.
pub fn fill_file(path: &Path, size: u64, seed: u64, stop: &StopFlag) -> io::Result<()> {
    // A new file only: never through a link planted at the name in a
    // shared directory such as /dev/shm.
    let mut out = File::options().write(true).create_new(true).open(path)?;
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut random = vec![0u8; 4 << 20];
    for w in random.chunks_exact_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w.copy_from_slice(&x.to_le_bytes());
    }
    let mut buf = random.clone();
    let (mut left, mut block) = (size, 0u64);
    while left > 0 {
        if stop.is_set() {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "stopped by a signal"));
        }
        buf.copy_from_slice(&random);
        for b in buf.chunks_exact_mut(4096) {
            let head = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
            b[..8]
                .copy_from_slice(&(head ^ block.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes());
            block += 1;
        }
        let n = left.min(buf.len() as u64) as usize;
        out.write_all(&buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// A loop device over a file, both ours: on drop the device is detached
/// (if it is still bound to our file) and the file deleted.
#[derive(Debug)]
pub struct LoopDisk {
    /// `/dev/loopN`.
    pub dev: String,
    /// The backing file.
    pub file: PathBuf,
}

impl LoopDisk {
    /// Attaches `file` to a free loop device with extra `losetup` options
    /// (`--sector-size 4096`, `--direct-io=on`). The file is ours from now
    /// on: it is deleted on drop, or at once if attaching fails.
    pub fn attach(file: PathBuf, options: &[&str]) -> io::Result<Self> {
        let out = Command::new("losetup").args(["-f", "--show"]).args(options).arg(&file).output();
        match out {
            Ok(o) if o.status.success() => {
                Ok(Self { dev: String::from_utf8_lossy(&o.stdout).trim().to_string(), file })
            }
            other => {
                let _ = fs::remove_file(&file);
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                Err(io::Error::other(format!("losetup {}: {why}", file.display())))
            }
        }
    }

    /// Kernel name (`loop3`).
    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// `MAJ:MIN` of the device.
    pub fn devno(&self) -> io::Result<String> {
        Ok(fs::read_to_string(format!("/sys/block/{}/dev", self.name()))?.trim().to_string())
    }
}

impl Drop for LoopDisk {
    fn drop(&mut self) {
        let back = Command::new("losetup").args(["-n", "-O", "BACK-FILE", &self.dev]).output();
        // Bound to our file, also once it is deleted (another device over
        // the same file removed it first): losetup then adds " (deleted)".
        let file = self.file.to_string_lossy();
        let ours = back
            .map(|o| {
                let bound = String::from_utf8_lossy(&o.stdout).trim().to_string();
                bound == file || bound == format!("{file} (deleted)")
            })
            .unwrap_or(false);
        if ours {
            let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        }
        let _ = fs::remove_file(&self.file);
    }
}

/// The demo's disks; each removes itself on drop, and a file still being
/// filled is deleted too.
#[derive(Debug, Default)]
pub struct LoopArray {
    /// The disks, in creation order.
    pub disks: Vec<LoopDisk>,
    pending: Option<PathBuf>,
}

impl LoopArray {
    /// Creates `n` memory-backed disks of `size` bytes in `dir`. What was
    /// made before a failure is removed when the array drops.
    pub fn create(&mut self, dir: &Path, n: usize, size: u64, stop: &StopFlag) -> io::Result<()> {
        for i in 0..n {
            let file = dir.join(format!("arrayburn-demo-{}-{i}.img", std::process::id()));
            self.pending = Some(file.clone());
            fill_file(&file, size, i as u64 + 1, stop)?;
            self.pending = None;
            self.disks.push(LoopDisk::attach(file, &[])?);
        }
        Ok(())
    }
}

impl Drop for LoopArray {
    fn drop(&mut self) {
        if let Some(f) = self.pending.take() {
            let _ = fs::remove_file(f);
        }
    }
}

/// A blkio cgroup holding this process, with read or write limits on chosen
/// devices. On drop the process goes back to the group it came from and the
/// group is removed.
#[derive(Debug)]
pub struct Throttle {
    dir: PathBuf,
    home: PathBuf,
}

impl Throttle {
    /// Creates the group `name` below the blkio root.
    pub fn create(name: &str) -> io::Result<Self> {
        let root = Path::new(BLKIO_ROOT);
        let dir = root.join(name);
        fs::create_dir(&dir)?;
        Ok(Self { dir, home: root.join(own_blkio_group().trim_start_matches('/')) })
    }

    /// Limits reads from the device `devno` (`MAJ:MIN`) to `bytes_per_s`.
    pub fn limit(&self, devno: &str, bytes_per_s: u64) -> io::Result<()> {
        fs::write(self.dir.join("blkio.throttle.read_bps_device"), format!("{devno} {bytes_per_s}"))
    }

    /// Limits reads from the device `devno` (`MAJ:MIN`) to `per_s` requests
    /// a second.
    pub fn limit_iops(&self, devno: &str, per_s: u64) -> io::Result<()> {
        fs::write(self.dir.join("blkio.throttle.read_iops_device"), format!("{devno} {per_s}"))
    }

    /// Limits writes to the device `devno` (`MAJ:MIN`) to `bytes_per_s`.
    pub fn limit_write(&self, devno: &str, bytes_per_s: u64) -> io::Result<()> {
        fs::write(
            self.dir.join("blkio.throttle.write_bps_device"),
            format!("{devno} {bytes_per_s}"),
        )
    }

    /// Moves this whole process (all its threads) into the group.
    pub fn enter(&self) -> io::Result<()> {
        fs::write(self.dir.join("cgroup.procs"), std::process::id().to_string())
    }

    /// `program ARGS` run inside the group (it joins before it starts),
    /// this process staying where it is.
    pub fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "echo $$ > {} && exec \"$0\" \"$@\"",
                self.dir.join("cgroup.procs").display()
            ))
            .arg(program)
            .args(args);
        c
    }

    /// The group's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // Whatever is still in the group (this process, a child that
        // outlived its run) goes back to this process's own group.
        let home = self.home.join("cgroup.procs");
        for pid in fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default().lines() {
            let _ = fs::write(&home, pid);
        }
        let _ = fs::remove_dir(&self.dir);
    }
}

/// This process's group in the blkio hierarchy (`/` when at the root), from
/// `/proc/self/cgroup` lines such as `4:blkio:/user.slice`.
fn own_blkio_group() -> String {
    let text = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    text.lines()
        .find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            controllers.split(',').any(|c| c == "blkio").then(|| path.to_string())
        })
        .unwrap_or_else(|| "/".into())
}

/// Whether cgroup v1's blkio throttling is available here.
pub fn blkio_available() -> bool {
    Path::new(BLKIO_ROOT).join("blkio.throttle.read_bps_device").exists()
}

/// Free bytes in the filesystem holding `dir`.
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    let s = nix::sys::statvfs::statvfs(dir).map_err(io::Error::from)?;
    Ok(s.blocks_available() * s.fragment_size())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_writes_exactly_the_size_and_is_not_sparse() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        fill_file(&p, 5 * 4096 + 512, 7, &StopFlag::default()).unwrap();
        let data = fs::read(&p).unwrap();
        assert_eq!(data.len(), 5 * 4096 + 512);
        assert!(data.chunks(512).all(|c| c.iter().any(|b| *b != 0)));
    }

    #[test]
    fn no_two_blocks_of_a_fill_are_alike() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        fill_file(&p, 12 << 20, 3, &StopFlag::default()).unwrap();
        let data = fs::read(&p).unwrap();
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), 3 * 1024);
    }

    #[test]
    fn fill_stops_on_request() {
        let t = tempfile::tempdir().unwrap();
        let stop = StopFlag::default();
        stop.stop();
        let e = fill_file(&t.path().join("f"), 1 << 30, 1, &stop).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
    }
}

//! Before any file is written: which files a run uses, that their
//! directories exist and are regular files, that the filesystems hold them,
//! that tests reading a file `-i 0` did not write find it whole, and whether
//! reads will be served by the page cache (the warning).

use std::path::PathBuf;

use anyhow::{Context, bail};

use super::args::Config;
use super::{single, throughput};
use crate::device::lock;
use crate::output::{self, Output, parent_dir};
use crate::plan::check_output_path;
use crate::units::human_bytes_binary;

/// The files a run will use and what to warn about, checked before any I/O.
pub struct FilePlan {
    /// The test files, one per process.
    pub files: Vec<PathBuf>,
    /// Lines for the header (and stderr).
    pub warnings: Vec<String>,
    /// `--json` (ours; `-` is standard output, and then iozone's text goes
    /// to stderr).
    pub json: Option<Output>,
    /// `-b` (iozone's spreadsheet; `-` is a file of that name, as in
    /// iozone).
    pub biff: Option<Output>,
}

impl FilePlan {
    /// Checks a configuration against the system.
    pub fn new(c: &Config) -> anyhow::Result<FilePlan> {
        let resolve = |flag: &str, p: &Option<PathBuf>, dash: bool| {
            p.as_deref()
                .map(|p| Output::resolve(flag, p, dash).map_err(anyhow::Error::msg))
                .transpose()
        };
        let json = resolve("--json", &c.json, true)?;
        let biff = resolve("-b", &c.biff, false)?;
        output::refuse_duplicates(json.iter().chain(&biff).map(output::named))
            .map_err(anyhow::Error::msg)?;
        let files: Vec<PathBuf> = if c.throughput() {
            (0..c.max_count()).map(|k| throughput::child_file(c, k)).collect()
        } else {
            vec![c.file.clone().unwrap_or_else(|| PathBuf::from("iozone.tmp"))]
        };
        let flag = if c.throughput() { "-F" } else { "-f" };
        for f in &files {
            check_output_path(flag, f)?;
            if let Ok(m) = std::fs::symlink_metadata(f)
                && !m.is_file()
            {
                bail!(
                    "{}: not a regular file; iozone mode writes and removes test files on a mounted filesystem (to read raw disks, use arrayburn check)",
                    f.display()
                );
            }
        }
        let max_kb = max_file_kb(c);
        if !c.selected(0) {
            for f in &files {
                let len = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
                if len < max_kb * 1024 {
                    bail!(
                        "{}: the tests selected read a file that -i 0 writes, and it is {} (needs {}): add -i 0, or keep files with -w from an earlier run",
                        f.display(),
                        if len == 0 { "missing".to_string() } else { human_bytes_binary(len) },
                        human_bytes_binary(max_kb * 1024)
                    );
                }
            }
        } else {
            check_space(&files, max_kb * 1024)?;
        }
        let mut warnings = Vec::new();
        if !c.direct
            && let Some(ram) = crate::device::sysfs::meminfo_bytes("MemTotal")
            && max_kb * 1024 <= ram
        {
            warnings.push(format!(
                "WARNING: no -I and the file size ({}) is not larger than RAM ({}): reads are served by the page cache; these numbers are memory speed, not disk speed. Use -I, or files larger than RAM.",
                human_bytes_binary(max_kb * 1024),
                human_bytes_binary(ram)
            ));
        }
        Ok(FilePlan { files, warnings, json, biff })
    }
}

impl FilePlan {
    /// Takes the run lock of each disk under the test files' filesystems
    /// (see [`crate::device::lock`]): no two runs time one disk.
    pub fn lock_disks(&self) -> anyhow::Result<Vec<lock::DiskLock>> {
        let mut disks: Vec<(u64, u64)> = Vec::new();
        let mut locks = Vec::new();
        for f in &self.files {
            let dir = parent_dir(f);
            let dev = lock::device_of_path(dir)
                .with_context(|| format!("{}: cannot stat", dir.display()))?;
            if disks.contains(&lock::whole_disk(dev)) {
                continue;
            }
            disks.push(lock::whole_disk(dev));
            let name = format!("the disk under {}", dir.display());
            locks.extend(lock::lock(dev, &name, None).map_err(anyhow::Error::msg)?);
        }
        Ok(locks)
    }
}

/// The largest file a run writes, in kB.
fn max_file_kb(c: &Config) -> u64 {
    if c.auto_mode() {
        single::auto_pairs(c).0.iter().map(|p| p.0).max().unwrap_or(0)
    } else {
        c.sizes_kb.first().copied().unwrap_or(512)
    }
}

/// Refuses to start when a filesystem cannot hold the files it will get.
fn check_space(files: &[PathBuf], each: u64) -> anyhow::Result<()> {
    let mut by_fs: Vec<(u64, PathBuf, u64, u64)> = Vec::new();
    for f in files {
        let dir = parent_dir(f);
        let st = nix::sys::statvfs::statvfs(dir)
            .with_context(|| format!("checking free space in {}", dir.display()))?;
        let free = st.blocks_available() * st.fragment_size();
        let id = st.filesystem_id();
        let have = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        match by_fs.iter_mut().find(|e| e.0 == id) {
            Some(e) => e.3 += each.saturating_sub(have),
            None => by_fs.push((id, dir.to_path_buf(), free, each.saturating_sub(have))),
        }
    }
    for (_, dir, free, need) in by_fs {
        if need > free {
            bail!(
                "{}: the test files need {} but only {} is free; give a smaller -s or another directory",
                dir.display(),
                human_bytes_binary(need),
                human_bytes_binary(free)
            );
        }
    }
    Ok(())
}

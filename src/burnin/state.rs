//! Checkpoints: one small JSON file per disk in `--state DIR`, so that a
//! burn-in survives a reboot, a closed terminal or a Ctrl-C.
//!
//! A checkpoint says which run wrote the disk (run id, the seed of every
//! block), what the disk is (serial, model, size: a resume refuses another
//! disk), what was asked (range, passes, I/O size), where the run is (pass,
//! phase, and the bytes of that phase done, from the range's start), what
//! it has found so far, and SMART as it was before the first byte.
//!
//! ddrescue's rule: the file never claims what is not on the disk. During a
//! write phase the disk's cache is flushed (fdatasync) before a checkpoint
//! names the bytes written; the file is written under a temporary name,
//! synced and renamed, and the directory synced, so a crash leaves the old
//! checkpoint or the new one, never half of one. A checkpoint is saved at
//! least every `--checkpoint-every` seconds (30), at the end of each phase,
//! and when a signal stops the run: a reboot loses at most one interval.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::smart::{SelfTest, Snapshot, TestKind};
use super::worker::DiskBurn;
pub use super::worker::{At, Phase};
use crate::device::BlockDevice;

/// Where checkpoints go unless `--state` says otherwise.
pub const DEFAULT_DIR: &str = "/var/lib/arrayburn/burnin";

/// The format of the file; a resume refuses another.
pub const FORMAT: u32 = 1;

/// One disk's checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    pub format: u32,
    /// The run every block carries (hex), and when it began (RFC 3339).
    pub run_id: String,
    pub started_at: String,
    /// When this checkpoint was saved.
    pub saved_at: String,
    /// The disk: as the user named it, and what identifies it.
    pub device: String,
    pub by_id: Option<String>,
    pub serial: Option<String>,
    pub model: Option<String>,
    pub size_bytes: u64,
    /// What was asked.
    pub start_byte: u64,
    pub end_byte: u64,
    pub passes: u16,
    pub io_bytes: u64,
    pub pattern: String,
    /// The command line that began the run.
    pub command_line: Vec<String>,
    /// Where the run stands, and what it measured and found so far.
    pub at: At,
    pub burn: DiskBurn,
    /// SMART before the first byte was written (the delta at the end is
    /// taken against it), or why there is none.
    pub smart_before: Option<Snapshot>,
    pub smart_note: Option<String>,
    /// The drive's self-test before the run (`--smart-test`): which, and
    /// how it ended.
    #[serde(default)]
    pub self_test: Option<(TestKind, SelfTest)>,
}

impl Checkpoint {
    /// Whether `dev` is the disk this checkpoint was made for; the reason
    /// when not.
    pub fn matches(&self, dev: &BlockDevice) -> Result<(), String> {
        let id = &dev.identity;
        if self.format != FORMAT {
            return Err(format!(
                "its format is {}, this arrayburn reads {FORMAT}",
                self.format
            ));
        }
        if self.size_bytes != id.size_bytes {
            return Err(format!(
                "it was made for a disk of {} bytes, this one has {}",
                self.size_bytes, id.size_bytes
            ));
        }
        for (what, was, is) in [
            ("serial", &self.serial, &id.serial),
            ("model", &self.model, &id.model),
        ] {
            if was != is {
                return Err(format!(
                    "it was made for {what} {}, this disk has {}",
                    was.as_deref().unwrap_or("(none)"),
                    is.as_deref().unwrap_or("(none)")
                ));
            }
        }
        Ok(())
    }
}

/// The checkpoint file of `dev` in `dir`: named by the disk's serial, or
/// its kernel name when it has none (a loop device), so that it is found
/// again after a reboot renames /dev/sdX.
pub fn path_for(dir: &Path, dev: &BlockDevice) -> PathBuf {
    let id = &dev.identity;
    let key = id.serial.as_deref().unwrap_or(&id.name);
    let key: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("burnin-{key}.json"))
}

/// Reads a checkpoint; `Ok(None)` when there is none.
pub fn load(path: &Path) -> Result<Option<Checkpoint>, String> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{}: not a checkpoint ({e})", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Saves a checkpoint whole: a crash leaves the previous one or this one.
pub fn save(path: &Path, c: &Checkpoint) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(c).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    crate::output::write_atomic(path, &bytes)?;
    // The rename is only durable once the directory is.
    fs::File::open(crate::output::parent_dir(path))?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_checkpoint_reads_back_the_same() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("burnin-x.json");
        assert!(load(&p).unwrap().is_none());
        let c = Checkpoint {
            format: FORMAT,
            run_id: "00ff".into(),
            started_at: "2026-12-01T06:00:00Z".into(),
            saved_at: "2026-12-01T06:00:30Z".into(),
            device: "/dev/sdb".into(),
            by_id: None,
            serial: Some("ZL2ABC".into()),
            model: Some("ST20000NM007D".into()),
            size_bytes: 20 << 40,
            start_byte: 0,
            end_byte: 20 << 40,
            passes: 2,
            io_bytes: 4 << 20,
            pattern: "blocks".into(),
            command_line: vec!["arrayburn".into()],
            at: At {
                pass: 2,
                phase: Phase::Verify,
                done_until: 17 << 40,
                interval_from: (17 << 40) - (4 << 30),
            },
            burn: DiskBurn::default(),
            smart_before: None,
            smart_note: Some("--smart off".into()),
            self_test: None,
        };
        save(&p, &c).unwrap();
        let back = load(&p).unwrap().unwrap();
        assert_eq!(back.at, c.at);
        assert_eq!(back.serial, c.serial);
        std::fs::write(&p, "{").unwrap();
        assert!(load(&p).unwrap_err().contains("not a checkpoint"));
    }
}

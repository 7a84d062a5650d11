//! What a `--resume` proves before it writes a byte: that the disk now at
//! the name is the one the checkpoint was made for. Its identity (serial,
//! WWN, model, size) is compared by the checkpoint itself; this reads the
//! disk back where the checkpoint says this run's blocks were written, a
//! few spread blocks per stretch, and accepts the disk only when they are
//! this run's. A replaced disk of the same size (loop, virtio and many USB
//! bridges have no serial), a checkpoint copied to another disk's name,
//! two disks that swapped names: each fails here, before anything is
//! written.
//!
//! It must not write.

use super::block::{BLOCK, Found, Pattern, Stamp};
use super::state::Checkpoint;
use super::targets::Target;
use crate::io::{Bounds, Halt, Probe, Until};

/// Blocks read back per stretch of known content.
const SAMPLES: u64 = 16;

/// Stretches read back at most (spread over those written).
const STRETCHES: usize = 64;

/// What the read-back showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// The checkpoint names nothing written yet: there is nothing of the
    /// run's to find, so the disk is judged as a fresh one (its
    /// signatures).
    NothingWritten,
    /// This many blocks were read back, and (almost) all were the run's.
    Carries { read: usize },
}

/// Block-aligned offsets spread over `from..to`, the last block included.
fn spread(from: u64, to: u64) -> Vec<u64> {
    let blocks = (to - from) / BLOCK as u64;
    let mut at: Vec<u64> = (0..SAMPLES)
        .map(|k| from + blocks * k / SAMPLES * BLOCK as u64)
        .chain([to - BLOCK as u64])
        .collect();
    at.dedup();
    at
}

/// Whether a block found so is one this run wrote on this disk.
fn ours(found: Found, stamp: Stamp) -> bool {
    match found {
        Found::Good | Found::Corrupted(_) | Found::Misdirected { .. } => true,
        Found::Stale { run, .. } => run == stamp.run,
        Found::OtherDisk { .. } | Found::Zeros | Found::Foreign => false,
    }
}

/// What a block that is not the run's holds, in words.
fn what(found: Found) -> &'static str {
    match found {
        Found::Zeros => "reads back as zeros",
        Found::Foreign => "holds data that is not a burn-in block",
        Found::Stale { .. } => "holds an earlier burn-in's block",
        Found::OtherDisk { .. } => {
            "holds another disk's block (two disks may have swapped names: name each by /dev/disk/by-id)"
        }
        Found::Good | Found::Corrupted(_) | Found::Misdirected { .. } => {
            "is not what this run wrote"
        }
    }
}

/// What spread blocks read back where a checkpoint says its run wrote.
struct Sampled {
    read: usize,
    /// Blocks this run wrote on this disk (damaged or misplaced ones too:
    /// those are findings, not another disk's content).
    ours: usize,
    /// Blocks that failed to read.
    unreadable: usize,
    /// The first block that is not the run's, in words.
    first_bad: Option<String>,
}

/// Reads spread blocks back where `c` (its checkpoint, validated) says
/// run `run` wrote, with its pattern's check; Err when the disk cannot be
/// read at all, hangs or a stop came.
fn sample(t: &Target, c: &Checkpoint, run: u64, bounds: &Bounds) -> Result<Sampled, String> {
    let mut probe = Probe::of(&t.file, bounds).map_err(|e| format!("it cannot be read ({e})"))?;
    let mut s = Sampled { read: 0, ours: 0, unreadable: 0, first_bad: None };
    // A burn-in in stripes has thousands of stretches: a spread of them.
    let written = c.written();
    let step = written.len().div_ceil(STRETCHES).max(1);
    for &(from, to, pass) in written.iter().step_by(step) {
        let stamp = Stamp { run, pass, disk: t.disk, version: c.block_version };
        for at in spread(from, to) {
            s.read += 1;
            let verdict = match probe.read_at(at, BLOCK, Until::Stop) {
                Ok(Err(e)) => {
                    s.unreadable += 1;
                    Err(format!("cannot be read ({e})"))
                }
                Ok(Ok(b)) => match c.pattern.check_all(b, at, stamp).first() {
                    None => Ok(()),
                    Some((_, f)) if ours(*f, stamp) => Ok(()),
                    Some((_, f)) => Err(what(*f).to_string()),
                },
                Err(Halt::Hung) => {
                    return Err(format!(
                        "it did not answer a read of byte {at} within --io-timeout (it may be hung)"
                    ));
                }
                Err(_) => return Err("the reading back was stopped".into()),
            };
            match verdict {
                Ok(()) => s.ours += 1,
                Err(why) => {
                    s.first_bad.get_or_insert_with(|| format!("byte {at} {why}"));
                }
            }
        }
    }
    Ok(s)
}

/// The refusal of a disk whose blocks read back are not the run's.
fn not_carried(c: &Checkpoint, s: Sampled) -> String {
    let pattern = match c.pattern {
        Pattern::Blocks => "this run's blocks",
        Pattern::Badblocks => "this run's badblocks fills",
    };
    format!(
        "it does not carry {pattern} where its checkpoint says they were written: {} of {} blocks read back are the run's ({})",
        s.ours,
        s.read,
        s.first_bad.unwrap_or_default()
    )
}

/// Reads the disk back where `c` (its checkpoint, validated) says this
/// run wrote, with `pattern`'s check, and accepts it when at least 90 %
/// of the blocks read are the run's; else the reason, naming the first
/// block that is not.
pub fn prove(t: &Target, c: &Checkpoint, run: u64, bounds: &Bounds) -> Result<Proof, String> {
    if c.written().is_empty() {
        return Ok(Proof::NothingWritten);
    }
    let s = sample(t, c, run, bounds)?;
    if s.ours * 10 >= s.read * 9 {
        return Ok(Proof::Carries { read: s.read });
    }
    Err(not_carried(c, s))
}

/// What a verify proves before it reads the disk whole: that what reads
/// back is mostly the run's (a disk written since, or another disk's
/// checkpoint, is refused). A disk that lost some of its blocks or cannot
/// read them is not refused: the verify is what finds and counts them.
/// The blocks read back.
pub fn carries(t: &Target, c: &Checkpoint, run: u64, bounds: &Bounds) -> Result<usize, String> {
    let s = sample(t, c, run, bounds)?;
    let readable = s.read - s.unreadable;
    if s.ours * 2 > readable || readable == 0 {
        return Ok(s.read);
    }
    Err(not_carried(c, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_whole_blocks_spread_over_the_stretch_to_its_end() {
        let at = spread(8192, 8192 + 100 * 4096);
        assert_eq!(at.first(), Some(&8192));
        assert_eq!(at.last(), Some(&(8192 + 99 * 4096)));
        assert!(at.iter().all(|a| a % 4096 == 0) && at.len() == 17, "{at:?}");
        assert_eq!(spread(0, 4096), [0], "one block: read once");
    }
}

//! Burn-in of new disks (`arrayburn burnin --destructive`): every block of
//! every disk written with self-identifying data, flushed, read back and
//! classified, all disks at once.
//!
//! - `block`: the written format and how a block read back is classified.
//! - `targets`: the disks a burn-in may write, every refusal before a byte is written.
//! - `worker`: one disk's write-flush-verify passes through the disk's
//!   I/O sweep; it only measures and classifies (verdicts are
//!   `judge::burnin`'s).
//! - `record`: what a disk's burn-in found and where its run stands.
//! - `smart`: reading SMART, and what rose.
//! - `health`: SMART around a run: before, self-tests first, after.
//! - `watch`: every disk at once, a thread each, watched while they run.
//! - `state`: the checkpoint per disk that a `--resume` continues from.
//! - `resume`: what a resume proves (the disk's blocks) before it writes.
//! - `probe`: the capacity probe (`inspect --probe`, `burnin --probe`):
//!   a drive's real capacity found by writing blocks of this format where
//!   it says it has them.
//! - `remeasure`: a disk called slow on speed alone, measured again alone
//!   in turn with a peer before it is blamed.
//! - `cycle`: a verify's spin cycles: each disk spun down, timed until it
//!   answers, its identity read again.

pub mod block;
pub mod cycle;
pub mod discard;
pub mod endurance;
pub mod estimate;
pub mod health;
pub mod live;
pub mod probe;
pub mod record;
pub mod remeasure;
pub mod resume;
pub mod scatter;
pub mod settings;
pub mod smart;
pub mod state;
pub mod stripes;
mod surface_timer;
pub mod targets;
pub mod watch;
pub mod worker;

pub use watch::Looks;

/// One disk of a burn-in as planned: where it is burned, and its
/// checkpoint (the run's options for it, its place, SMART before).
pub struct DiskPlan {
    pub target: targets::Target,
    pub point: state::Checkpoint,
}

impl DiskPlan {
    /// The disk as the burn-in's rules and report read it.
    pub fn burned(&self) -> BurnedDisk {
        let t = &self.target;
        BurnedDisk { dev: t.dev.clone(), start: t.start, end: t.end, point: self.point.clone() }
    }
}

/// One disk of a burn-in as its rules and report read it (and a recording
/// keeps it): the device, the bytes burned (whole 4 KiB blocks from
/// `start` to `end`) and its checkpoint as the run began (its options,
/// SMART before, the capacity probe).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BurnedDisk {
    pub dev: crate::device::BlockDevice,
    pub start: u64,
    pub end: u64,
    pub point: state::Checkpoint,
}

//! Measuring: workers read with O_DIRECT and only measure; one aggregator
//! (the calling thread) owns every piece of mutable state and feeds an
//! [`Observer`] (the progress display).
//!
//! It must not judge (no thresholds, no medians: that is `judge`) and must
//! not format text for people (`report`, `export`, `progress`).
//!
//! - `results`: what a pass measured ([`DiskRun`], [`PassRun`]): the
//!   contract between measuring and judging.
//! - `aggregate`: runs a pass or a group of disks and collects the results.
//! - `worker`: one thread reading one disk.
//! - `random`: random reads at a depth, alone and all at once.
//! - `vibration`: each disk's random reads alone and beside its seeking
//!   neighbours.

mod aggregate;
mod random;
mod results;
mod vibration;
mod worker;

use std::time::Duration;

pub use aggregate::{
    DiskProgress, Geometry, GroupRemeasurement, Observer, PassSpec, Remeasurement, SweepFactory,
    remeasure, remeasure_group, round_order, run_group, run_pass,
};
pub use random::{
    RandomDisk, RandomRead, RandomRun, RandomSpec, RandomSweeps, random_pass, random_reads,
    read_disk,
};
pub use results::{
    Beside, DiskRun, GroupRecheck, PassRun, ReadError, Recheck, Resume, Slice, SlowRead, Stopped,
    Surface, keep_slowest,
};
pub use vibration::{LOAD_DEPTH, LOAD_LEAD, ShakeRead, ShakeRun, vibration_pass};
pub use worker::ReadJob;

/// How long each disk is read in a pass.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Window {
    /// For this long from the start of the disk; a disk that ends sooner is
    /// read again from the start until the time is up.
    Sample(Duration),
    /// The whole disk.
    Full,
}

impl Window {
    /// The time each disk is read; None for whole disks.
    pub fn length(self) -> Option<Duration> {
        match self {
            Window::Sample(d) => Some(d),
            Window::Full => None,
        }
    }
}

/// Serial (one disk at a time), parallel (all at once), or seek stress
/// (all at once, several staggered readers per disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    Serial,
    Parallel,
    Seek,
}

impl PassKind {
    /// `"serial"`, `"parallel"` or `"seek"`, as in the JSON and CSV.
    pub fn name(self) -> &'static str {
        match self {
            PassKind::Serial => "serial",
            PassKind::Parallel => "parallel",
            PassKind::Seek => "seek",
        }
    }
}

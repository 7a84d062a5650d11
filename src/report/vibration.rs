//! The neighbour pass in the report: each disk's bay, its random reads
//! alone and beside its seeking neighbours, its loss, and the summary's
//! sentence.

use serde::{Deserialize, Serialize};

use super::random::{RandomFigures, figures};
use crate::judge::vibration::Loss;
use crate::measure::ShakeRead;
use crate::units::human_bytes_binary;

/// The neighbour pass, as measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VibrationSection {
    /// Bytes per read, how long each disk was read alone and again beside
    /// its neighbours (depth 1 both), and the depth each neighbour kept
    /// in flight while it sought.
    pub block_bytes: u64,
    pub seconds_each: f64,
    pub load_depth: usize,
    /// Each disk read, in command-line order.
    pub disks: Vec<VibrationRow>,
}

impl VibrationSection {
    /// How long each disk was read each way, in words.
    pub fn each(&self) -> String {
        crate::units::human_duration(std::time::Duration::from_secs_f64(self.seconds_each))
    }
}

/// One disk in the neighbour pass.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VibrationRow {
    pub path: String,
    /// Its bay (`ENCLOSURE slot N`; null where the kernel knows none).
    pub bay: Option<String>,
    /// The disks that sought beside it: the slots next to it in its
    /// enclosure, or every other disk without a slot map.
    pub neighbours: Vec<String>,
    /// Its depth-1 random reads alone and beside them (null: a stop came
    /// first), as the random reads' figures.
    pub alone: RandomFigures,
    pub loaded: Option<RandomFigures>,
    /// The IOPS it lost beside them, % of alone (null: not read long
    /// enough both ways, or a read failed).
    pub loss_pct: Option<f64>,
}

/// The neighbour pass as the report gives it: `read` of the disks at
/// `paths` in `bays`, with each disk's `losses`.
pub fn section(
    read: &ShakeRead,
    losses: &[Loss],
    (paths, bays): (&[String], &[Option<String>]),
) -> VibrationSection {
    let disks = (read.disks.iter().zip(losses).enumerate())
        .map(|(d, (run, loss))| VibrationRow {
            path: paths[d].clone(),
            bay: bays[d].clone(),
            neighbours: run.neighbours.iter().map(|&n| paths[n].clone()).collect(),
            alone: figures(&run.alone),
            loaded: run.loaded.as_ref().map(figures),
            loss_pct: loss.loss_pct,
        })
        .collect();
    VibrationSection {
        block_bytes: read.spec.block,
        seconds_each: read.spec.length.as_secs_f64(),
        load_depth: crate::measure::LOAD_DEPTH,
        disks,
    }
}

/// The neighbour pass in one sentence: what was read and the range of the
/// losses, with their median.
pub fn sentence(v: &VibrationSection) -> String {
    let losses: Vec<f64> = v.disks.iter().filter_map(|d| d.loss_pct).collect();
    let lo = losses.iter().copied().reduce(f64::min);
    let hi = losses.iter().copied().reduce(f64::max);
    let mid = crate::stats::median(&losses);
    let said = match (lo, hi, mid) {
        (Some(lo), Some(hi), Some(mid)) => {
            format!("{} disks lost {lo:.0}% to {hi:.0}% (median {mid:.0}%)", losses.len())
        }
        _ => "no disk was read long enough both ways".into(),
    };
    format!(
        "Neighbour vibration ({} random reads at depth 1, {} alone and {} while the disks beside each seek): {said}.",
        human_bytes_binary(v.block_bytes),
        v.each(),
        v.each()
    )
}

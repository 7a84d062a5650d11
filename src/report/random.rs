//! The random reads in the report: each disk's figures alone and all at
//! once at each depth, its latency curve, and the summary's sentence.

use serde::{Deserialize, Serialize};

use crate::judge::random::{Figures, RandomFinding};
use crate::measure::{RandomRead, RandomRun};
use crate::units::human_bytes_binary;

/// The random reads, as measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RandomSection {
    /// Bytes per read, how long each disk was read at each depth (alone,
    /// and again all at once), and the depths in order.
    pub block_bytes: u64,
    pub seconds_each: f64,
    pub depths: Vec<usize>,
    /// Each disk, in command-line order.
    pub disks: Vec<RandomRow>,
    /// What one of a disk's two reads (alone, all at once) showed and the
    /// other did not: not claimed (the findings are the summary's
    /// `random`), in the same form.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsure: Vec<RandomFinding>,
    /// What one of a disk's two reads showed, the other did not, and its
    /// read alone again did not either (its figures in `again`): cleared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared: Vec<RandomFinding>,
}

impl RandomSection {
    /// How long each disk was read at each depth, in words.
    pub fn each(&self) -> String {
        crate::units::human_duration(std::time::Duration::from_secs_f64(self.seconds_each))
    }
}

/// One disk's random reads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RandomRow {
    pub path: String,
    /// Its peer group (the disks it is judged against share it).
    pub peer_group: usize,
    /// At each depth, read alone and then with every disk at once.
    pub alone: Vec<RandomFigures>,
    pub together: Vec<RandomFigures>,
    /// Its reads alone again, where one of its two reads showed what the
    /// other did not (what decided it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub again: Vec<RandomFigures>,
    /// An NVMe drive's own latency log (OCP C3h through nvme-cli), read
    /// after its random reads: `log` (`enabled`, `thresholds_ms`,
    /// `static_reads`, `active_reads`, `static_read_latency_ms`) or
    /// `not_read` (why). Beside the measured figures; judged by nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_log: Option<crate::device::latency_log::DriveLog>,
}

/// A run's figures: `depth`, `reads` (whole), `failed`, `iops`,
/// `latency_us` (p50, p99, p999, p9999, max, mean), how long it read,
/// why it ended early (null: it ran its time) or was not read, and its
/// latency curve.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RandomFigures {
    #[serde(flatten)]
    pub figures: Figures,
    pub seconds: f64,
    pub stopped: Option<crate::measure::Stopped>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unopened: Option<String>,
    /// The latency curve: `[percent of reads, at most this many µs]` at
    /// fixed percents (empty: nothing read).
    pub cdf_us: Vec<[f64; 2]>,
}

/// The percents the latency curve is given at.
pub const CDF_PCT: [f64; 12] =
    [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0];

/// A run's figures with its time, its end and its latency curve.
pub fn figures(run: &RandomRun) -> RandomFigures {
    let h = &run.latency_ns;
    let cdf_us = if h.is_empty() {
        Vec::new()
    } else {
        CDF_PCT
            .iter()
            .map(|&p| [p, (h.value_at_quantile(p / 100.0) as f64 / 100.0).round() / 10.0])
            .collect()
    };
    RandomFigures {
        figures: Figures::of(run),
        seconds: run.seconds,
        stopped: run.stopped,
        unopened: run.unopened.clone(),
        cdf_us,
    }
}

/// The random reads as the report gives them: `read` of the disks at
/// `paths` in peer groups `groups`, with what it could not decide
/// (`unsure`) and what a read again cleared.
pub fn section(
    read: &RandomRead,
    (paths, groups): (&[String], &[usize]),
    (unsure, cleared): (Vec<RandomFinding>, Vec<RandomFinding>),
) -> RandomSection {
    let disks = (paths.iter().cloned().zip(&read.disks).zip(groups))
        .map(|((path, d), &peer_group)| RandomRow {
            path,
            peer_group,
            alone: d.alone.iter().map(figures).collect(),
            together: d.together.iter().map(figures).collect(),
            again: d.again.iter().map(figures).collect(),
            drive_log: d.drive_log.clone(),
        })
        .collect();
    RandomSection {
        block_bytes: read.spec.block,
        seconds_each: read.spec.length.as_secs_f64(),
        depths: read.spec.depths.clone(),
        disks,
        unsure,
        cleared,
    }
}

/// The range of a figure over the disks, as "A-B" (or "A" when alike).
fn range(values: impl Iterator<Item = f64>, show: fn(f64) -> String) -> Option<String> {
    let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    let lo = v.iter().copied().reduce(f64::min)?;
    let hi = v.iter().copied().reduce(f64::max)?;
    let (a, b) = (show(lo), show(hi));
    Some(if a == b { a } else { format!("{a} to {b}") })
}

/// " WHAT: a; b." (nothing without items).
fn listed(what: &str, items: Vec<String>) -> String {
    if items.is_empty() { String::new() } else { format!(" {what}: {}.", items.join("; ")) }
}

/// The random reads in one sentence: what was read, the range of each
/// depth's IOPS and depth 1's p99 alone, and the disks not compared.
pub fn sentence(r: &RandomSection) -> String {
    let mut parts = Vec::new();
    for (i, depth) in r.depths.iter().enumerate() {
        let at = || r.disks.iter().filter_map(|d| d.alone.get(i)).filter(|f| f.figures.reads > 0);
        let Some(iops) = range(at().filter_map(|f| f.figures.iops), |x| format!("{x:.0}")) else {
            continue;
        };
        let p99 = range(at().map(|f| f.figures.latency_us.p99 / 1000.0), |x| format!("{x:.1}"));
        let p99 = if *depth == 1 {
            p99.map(|p| format!(", p99 {p} ms")).unwrap_or_default()
        } else {
            String::new()
        };
        parts.push(format!("depth {depth} alone {iops} IOPS{p99}"));
    }
    let lone: Vec<String> = (r.disks.iter())
        .filter(|d| r.disks.iter().filter(|o| o.peer_group == d.peer_group).count() < 2)
        .map(|d| d.path.clone())
        .collect();
    let lone = listed("Not judged against peers (none of their kind)", lone);
    let unsure = listed(
        "Unsure (one of its two random reads showed it, the other not; not claimed)",
        r.unsure.iter().map(|u| format!("{} {}", u.path, u.kind.words())).collect(),
    );
    let cleared = listed(
        "Cleared (one of its two random reads showed it, the other not, nor a read of it alone again)",
        r.cleared.iter().map(|c| format!("{} ({})", c.path, c.kind.words())).collect(),
    );
    format!(
        "Random reads ({} each, {} a disk and depth, alone then all at once): {}.{lone}{unsure}{cleared}",
        human_bytes_binary(r.block_bytes),
        r.each(),
        if parts.is_empty() { "nothing read".to_string() } else { parts.join("; ") }
    )
}

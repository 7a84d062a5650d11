//! A burn-in's disk re-measured alone, in turn with a peer of its group,
//! before its verdict: each phase's speed against the peer's at the same
//! moments, judged as the check judges a disk re-measured beside a peer.
//!
//! It must not read a disk (`burnin::remeasure` does) and must not lay out.

use super::confirm::against_peer;
use super::slices::SliceSpeed;
use super::{Thresholds, Verdict};
use crate::burnin::remeasure::{BATCH, Turn};

/// A disk re-measured alone, in turn with a peer of its group (A-B-A-B),
/// each turn a write and read-back of the same stretch of its last pass:
/// what nothing shared can pace.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Remeasured {
    /// The peer it took turns with.
    pub beside: String,
    /// Its write and read-back speed against the peer's (None: that phase
    /// not re-measured; a soak writes nothing).
    pub write: Option<Against>,
    pub verify: Option<Against>,
}

/// A disk's speed as % of its peer's at the same moments, over its turns.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Against {
    /// The median over its turns, and the interval around it.
    pub pct: f64,
    pub low: f64,
    pub high: f64,
    pub turns: usize,
    /// `slow`, `ok` or `unsure` (the interval straddles the threshold).
    pub verdict: Verdict,
}

impl Remeasured {
    /// The turns (the disk's and its peer's) judged as the check judges a
    /// disk re-measured beside a peer: each of its turns against the
    /// peer's speed at that moment.
    pub fn of(beside: &str, turns: &[Turn], th: &Thresholds) -> Self {
        let phase = |pick: fn(&Turn) -> Option<f64>| {
            let speeds: Vec<SliceSpeed> = (turns.iter())
                .filter_map(|t| {
                    Some(SliceSpeed {
                        disk: t.who,
                        round: t.round,
                        at_s: t.at_s,
                        mb_per_s: pick(t)?,
                    })
                })
                .collect();
            let c = against_peer(&speeds, 0, 1, th);
            // Fewer turns than a batch (the time a re-measurement may take
            // ran out) decide only where every turn was below the
            // threshold, as the pass was (few enough that `high` is the
            // fastest turn): a disk slower in every measurement is slow.
            let verdict = match c.spread {
                Some(s) if s.slices < BATCH && s.high < th.slow_pct => Verdict::Slow,
                Some(s) if s.slices < BATCH => Verdict::Unsure,
                _ => c.verdict,
            };
            c.spread.map(|s| Against {
                pct: s.pct,
                low: s.low,
                high: s.high,
                turns: s.slices,
                verdict,
            })
        };
        Self { beside: beside.into(), write: phase(|t| t.write), verify: phase(|t| t.verify) }
    }

    /// Whether every phase re-measured is decided (slow or ok).
    pub fn decided(&self) -> bool {
        [self.write, self.verify].iter().flatten().all(|a| a.verdict != Verdict::Unsure)
    }
}

/// "71% (69-72% over 8 turns)".
pub(super) fn against_words(a: &Against) -> String {
    format!("{:.0}% ({:.0}-{:.0}% over {} turns)", a.pct, a.low, a.high, a.turns)
}

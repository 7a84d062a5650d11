//! Judging: the one place that decides whether a disk is slow, fast or
//! failing, whether a shared path limited the array, and what to do about a
//! disk. Every rule takes plain numbers (a disk's [`Facts`], per-disk
//! values of a peer group) and returns verdicts, percentages and reasons.
//!
//! It must not read devices, time anything, know the [`Plan`] or the
//! report's layout, or format tables: measuring happens in `measure`,
//! presenting in `report` and `export`.
//!
//! - [`peers`]: a disk against its peer group's median (the outlier rule),
//!   the parallel pass against the serial pass (shared bottleneck), speed
//!   lost alone.
//! - [`surface`]: slow regions of a surface profile.
//! - [`slices`]: a serial pass read in slices, each disk against its peers'
//!   slices read close to its own, its spread, how far conditions moved.
//! - [`confirm`]: which disks are re-measured before their verdict, and
//!   what the re-measurement decides.
//! - [`disk`]: one disk's verdict in one pass from all of the above plus
//!   stalls, latency tails and completion time, with its reasons.
//! - [`pass`]: a whole pass judged (which rules apply to which pass).
//! - [`advice`]: one action per flagged disk over all passes.
//! - [`inspect`]: what a drive declares of itself (hours, security, hidden
//!   or fake capacity) against rules and its peers.
//!
//! [`Plan`]: crate::plan::Plan

pub mod ack;
pub mod advice;
pub mod burn_facts;
pub mod burnin;
pub mod check;
pub mod confirm;
pub mod disk;
pub mod fit;
pub mod fleet;
pub mod groups;
pub mod inspect;
pub mod kernel;
pub mod links;
pub mod pass;
pub mod peers;
pub mod random;
pub mod rated;
pub mod remeasured;
pub mod slices;
pub mod smr;
pub mod stall;
pub mod surface;
pub mod vibration;
pub mod watch;

use serde::{Deserialize, Serialize};

use crate::defaults;
pub use disk::Facts;

/// A disk measured for less than this (seconds of window) is reported but
/// not compared: a few milliseconds of reading (a tiny or very fast device)
/// is mostly noise.
pub const MIN_JUDGED_S: f64 = 1.0;

/// A disk whose p99.99 read latency is more than this many times its peers'
/// median p99.99 has a slow region or retrying sectors...
pub const TAIL_FACTOR: f64 = 4.0;
/// ...provided that tail is also long in absolute terms (ms): a few
/// milliseconds of jitter on a fast disk is not a failing sector.
pub const TAIL_FLOOR_MS: f64 = 100.0;

/// A burn-in disk whose reads in a later pass fell under this % of its own
/// pass 1 slowed. Looser than `--slow-pct`: peers are measured side by
/// side, a disk's passes hours apart, under whatever else the host did
/// meanwhile (2 s passes under blk-throttle alone vary by 10 %).
pub const SLOWED_PCT: f64 = 80.0;

/// A disk's verdict in one pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Within the thresholds (or no peers to compare with).
    #[default]
    Ok,
    /// Below the slow threshold.
    Slow,
    /// Above the fast threshold.
    Fast,
    /// At least one read failed.
    Error,
    /// Its readings straddle the slow threshold: neither called slow nor
    /// cleared (its spread over the serial pass's slices says how far).
    Unsure,
}

impl Verdict {
    /// The word in sentences ("… slow in the parallel pass").
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Slow => "slow",
            Verdict::Fast => "fast",
            Verdict::Error => "failed reads",
            Verdict::Unsure => "unsure",
        }
    }

    /// solnet-array-test's mark in the tables.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Ok => "",
            Verdict::Slow => "--SLOW--",
            Verdict::Fast => "++FAST++",
            Verdict::Error => "!!ERROR!!",
            Verdict::Unsure => "??UNSURE??",
        }
    }

    /// Slow or failing: a fault (a fast disk is marked, not faulty).
    pub fn is_fault(self) -> bool {
        matches!(self, Verdict::Slow | Verdict::Error)
    }
}

/// The verdict over a whole run: a check's, a burn-in's, a fleet's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrayVerdict {
    /// Every disk was compared with its peers and nothing was found (a
    /// fast disk is marked but healthy).
    Healthy,
    /// A disk or link to act on.
    Flagged,
    /// Nothing to act on, but not every disk could be compared (read too
    /// briefly, or no peer of its model and size) or decided: health is
    /// not claimed.
    NotJudged,
    /// A signal stopped the run before it was judged and nothing it had
    /// read was a finding: health is not claimed. (A check stopped after a
    /// finding keeps it: flagged.)
    Interrupted,
}

impl ArrayVerdict {
    /// The run's outcome (its exit status) this verdict gives.
    pub fn outcome(self) -> crate::outcome::Outcome {
        use crate::outcome::Outcome;
        match self {
            ArrayVerdict::Healthy => Outcome::Healthy,
            ArrayVerdict::Flagged => Outcome::Flagged,
            ArrayVerdict::NotJudged => Outcome::NotJudged,
            ArrayVerdict::Interrupted => Outcome::Interrupted,
        }
    }

    /// As the JSON names it.
    pub fn word(self) -> &'static str {
        match self {
            ArrayVerdict::Healthy => "healthy",
            ArrayVerdict::Flagged => "flagged",
            ArrayVerdict::NotJudged => "not_judged",
            ArrayVerdict::Interrupted => "interrupted",
        }
    }

    /// Faults decide first; without one, health needs every disk compared.
    pub fn of(faulty: bool, all_compared: bool) -> Self {
        match (faulty, all_compared) {
            (true, _) => ArrayVerdict::Flagged,
            (false, true) => ArrayVerdict::Healthy,
            (false, false) => ArrayVerdict::NotJudged,
        }
    }

    /// A check's verdict from its disks' verdicts in every pass: a slow or
    /// failing disk, or a link below its maximum, is a fault (a fast disk
    /// is marked, not a fault); without one, health needs disks, every one
    /// compared with peers (`not_compared` none) and none left unsure; a
    /// check stopped before it ended (`interrupted`) claims no health, only
    /// what it found.
    pub fn of_check(
        verdicts: &[Verdict],
        links: bool,
        (disks, not_compared): (usize, usize),
        interrupted: bool,
    ) -> Self {
        let faulty = verdicts.iter().any(|v| v.is_fault()) || links;
        if interrupted && !faulty {
            return ArrayVerdict::Interrupted;
        }
        let unsure = verdicts.contains(&Verdict::Unsure);
        Self::of(faulty, disks > 0 && not_compared == 0 && !unsure)
    }
}

/// The slowest a healthy disk is taken to move a request's bytes at, when
/// its own speed is slower or not known: a big request is allowed the time
/// its size needs, never more than it needs at this speed.
pub const STALL_FLOOR_MB_PER_S: f64 = defaults::SIZE_FLOOR_MB_PER_S;

/// How long a request of `len` bytes may have the disk before it is a
/// stall: `stall_ms` beyond what its size needs at the disk's own speed
/// (`mb_per_s`, taken as at least [`STALL_FLOOR_MB_PER_S`]). A 1 MiB read
/// at 200 MB/s may take 2005 ms; a 256 MiB write at 120 MB/s, 4237 ms.
pub fn stall_allowance_ms(len: u64, mb_per_s: Option<f64>, th: &Thresholds) -> f64 {
    let rate = mb_per_s.unwrap_or(0.0).max(STALL_FLOOR_MB_PER_S);
    th.stall_ms + len as f64 / 1e6 / rate * 1e3
}

/// The thresholds the rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Slow below this percentage of the reference.
    pub slow_pct: f64,
    /// Fast above this percentage of the reference.
    pub fast_pct: f64,
    /// A disk with a read this slow (ms) is slow whatever its speed.
    pub stall_ms: f64,
}

impl Thresholds {
    /// The defaults but for `slow_pct` and `stall_ms` as a run was told.
    pub fn judging((slow_pct, stall_ms): (f64, u64)) -> Self {
        Self { slow_pct, stall_ms: stall_ms as f64, ..Self::default() }
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            slow_pct: defaults::SLOW_PCT,
            fast_pct: defaults::FAST_PCT,
            stall_ms: defaults::STALL_MS as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_array_verdict_table() {
        for (faulty, all_compared, want) in [
            (true, true, ArrayVerdict::Flagged),
            (true, false, ArrayVerdict::Flagged),
            (false, true, ArrayVerdict::Healthy),
            (false, false, ArrayVerdict::NotJudged),
        ] {
            assert_eq!(ArrayVerdict::of(faulty, all_compared), want);
        }
    }

    #[test]
    fn a_stopped_check_claims_no_health_only_what_it_found() {
        let (ok, slow) = ([Verdict::Ok, Verdict::Ok], [Verdict::Ok, Verdict::Slow]);
        assert_eq!(ArrayVerdict::of_check(&ok, false, (2, 0), true), ArrayVerdict::Interrupted);
        assert_eq!(ArrayVerdict::of_check(&ok, false, (2, 0), false), ArrayVerdict::Healthy);
        assert_eq!(ArrayVerdict::of_check(&slow, false, (2, 0), true), ArrayVerdict::Flagged);
        assert_eq!(ArrayVerdict::of_check(&ok, true, (2, 0), true), ArrayVerdict::Flagged);
    }
}

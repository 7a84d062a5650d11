//! Drive-managed SMR told by how a disk writes, not by a model list: a
//! DM-SMR drive takes writes into a media cache at full speed, and once a
//! burst has filled it, writes at a fraction of that (with stalls of
//! seconds while it rewrites whole shingled bands); idle, it cleans the
//! cache and takes the next burst at full speed again. A CMR drive writes
//! steadily: its speed falls gradually from the outer tracks to the inner
//! ones (to about half), never in one step. A WD Red SMR drive passed a
//! 65-hour badblocks run and then could not resilver (openzfs #10214).
//!
//! **Collapse.** One pass's write speed across the disk, in order (the
//! burn-in writes sequentially, so place is time): the split that divides
//! it into the fastest stretch before and the slowest after, by their
//! medians. A collapse is a split where the median after is under
//! 1/[`COLLAPSE`] of the median before, and the step is clean: at least
//! [`CLEAN`] of the stretches before are faster than twice the median
//! after, and at least [`CLEAN`] of those after slower than half the
//! median before. A steady disk, slow or not, and a CMR slope have none.
//!
//! **Recovery.** After idling, a burst at the start of the range: written
//! at [`RECOVERED`] of the fast speed or more, the disk recovered.
//!
//! **Verdict.** A collapse that recovers behaves as drive-managed SMR:
//! unsuitable for RAIDZ and resilver-heavy pools. A collapse that does not
//! recover is a disk whose writes slowed and stayed slow (another slot,
//! again). A collapse whose recovery was not measured says so and claims
//! neither.
//!
//! It must not measure: the speeds come in as numbers.

use serde::{Deserialize, Serialize};

use super::advice::Action;
use crate::stats::median;
use crate::units::human_bytes;

/// The median after the step is under 1/COLLAPSE of the one before.
pub const COLLAPSE: f64 = 2.5;
/// The share of stretches on each side that must be clearly on their side.
pub const CLEAN: f64 = 0.8;
/// A burst after idling at this share of the fast speed or more recovered.
pub const RECOVERED: f64 = 0.7;
/// Stretches a pass needs before its writes are judged (a collapse needs a
/// few on each side).
const FEWEST: usize = 8;
/// A write that had the disk this long is named beside the collapse.
const STALL_MS: f64 = 1000.0;

/// Where a pass's writes collapsed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Collapse {
    /// The pass (from 1).
    pub pass: u16,
    /// The median MB/s before the step and after it.
    pub fast_mb_per_s: f64,
    pub slow_mb_per_s: f64,
    /// Bytes written from the range's start before it.
    pub after_bytes: u64,
}

/// A burst written after idling, to see whether the writes recover.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// Seconds the disk was left idle first, the burst's bytes and MB/s.
    pub idle_s: f64,
    pub bytes: u64,
    pub mb_per_s: f64,
}

/// What the disk's writes showed of a media cache.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Shingled {
    pub collapse: Collapse,
    /// Null when no burst was written after it (a stop).
    pub recovery: Option<Recovery>,
    /// The slowest write, ms, when it had the disk a second or more.
    pub stall_ms: Option<f64>,
}

impl Shingled {
    /// The burst after idling came back to the fast speed.
    pub fn recovered(&self) -> Option<bool> {
        let r = self.recovery?;
        Some(r.mb_per_s >= RECOVERED * self.collapse.fast_mb_per_s)
    }

    /// It behaves as drive-managed SMR (collapsed, and recovered idle).
    pub fn smr(&self) -> bool {
        self.recovered() == Some(true)
    }
}

/// The collapse in one pass's write speeds (`(offset, MB/s)` of each
/// stretch, in the order written; offsets from the range's start), if
/// there is one.
pub fn collapse(pass: u16, points: &[(u64, f64)]) -> Option<Collapse> {
    if points.len() < FEWEST {
        return None;
    }
    let speeds: Vec<f64> = points.iter().map(|(_, v)| *v).collect();
    if speeds.iter().any(|v| *v <= 0.0) {
        return None;
    }
    // The step: the split whose two sides fit their own level best (least
    // squares of the log speeds), each side's level then its median.
    let logs: Vec<f64> = speeds.iter().map(|v| v.ln()).collect();
    let sse = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>()
    };
    let k = (2..=speeds.len() - 2).min_by(|a, b| {
        (sse(&logs[..*a]) + sse(&logs[*a..])).total_cmp(&(sse(&logs[..*b]) + sse(&logs[*b..])))
    })?;
    let (fast, slow) = (median(&speeds[..k])?, median(&speeds[k..])?);
    let share = |v: &[f64], on: &dyn Fn(f64) -> bool| {
        v.iter().filter(|x| on(**x)).count() as f64 / v.len() as f64
    };
    let clean = share(&speeds[..k], &|v| v > 2.0 * slow) >= CLEAN
        && share(&speeds[k..], &|v| v < fast / 2.0) >= CLEAN;
    (fast >= COLLAPSE * slow && clean).then_some(Collapse {
        pass,
        fast_mb_per_s: fast,
        slow_mb_per_s: slow,
        after_bytes: points[k].0,
    })
}

/// The slowest write, when it had the disk long enough to name.
pub fn stall(slowest_write_ms: Option<f64>) -> Option<f64> {
    slowest_write_ms.filter(|ms| *ms >= STALL_MS)
}

/// The verdict on a disk whose writes collapsed: what to do, and why.
pub fn rule(s: &Shingled) -> Option<(Action, String)> {
    let c = s.collapse;
    let seen = format!(
        "wrote at {:.0} MB/s for the first {} of pass {}, then at {:.0} MB/s{}",
        c.fast_mb_per_s,
        human_bytes(c.after_bytes),
        c.pass,
        c.slow_mb_per_s,
        s.stall_ms
            .map(|ms| format!(" with writes stalling up to {:.1} s", ms / 1e3))
            .unwrap_or_default()
    );
    let r = s.recovery?;
    let again = format!(
        "after idling {:.0} s it wrote {} at {:.0} MB/s",
        r.idle_s,
        human_bytes(r.bytes),
        r.mb_per_s
    );
    Some(if s.smr() {
        (
            Action::Return,
            format!(
                "behaves as drive-managed SMR: {seen} (a media cache filled), and {again}: unsuitable for RAIDZ and \
                 resilver-heavy pools; return it if it was bought for one"
            ),
        )
    } else {
        (
            Action::Recheck,
            format!(
                "its writes collapsed and stayed slow: {seen}, and {again}: move it to another slot and burn it in \
                 again; if it stays slow, return it"
            ),
        )
    })
}

/// A collapse whose recovery was not measured, in words (its health is
/// not claimed).
pub fn undecided(s: &Shingled) -> Option<String> {
    let c = s.collapse;
    s.recovery.is_none().then(|| {
        format!(
            "its writes collapsed from {:.0} to {:.0} MB/s after {} in pass {}, as a drive-managed SMR disk's do once \
             its media cache is full; whether they recover after idling was not measured",
            c.fast_mb_per_s,
            c.slow_mb_per_s,
            human_bytes(c.after_bytes),
            c.pass
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stretches of 1 MB: `fast` MB/s for `n_fast`, then `slow` for the
    /// rest of `n`.
    fn step(n: usize, n_fast: usize, fast: f64, slow: f64) -> Vec<(u64, f64)> {
        (0..n).map(|i| ((i as u64) << 20, if i < n_fast { fast } else { slow })).collect()
    }

    #[test]
    fn a_burst_that_fills_a_cache_collapses_and_steady_disks_do_not() {
        // Cache sizes and collapse factors: an eighth at a tenth, a third
        // at a quarter, most of the disk at a third.
        for (n_fast, slow) in [(25, 18.0), (66, 45.0), (150, 60.0)] {
            let c = collapse(1, &step(200, n_fast, 180.0, slow)).unwrap();
            assert_eq!(c.after_bytes, (n_fast as u64) << 20, "{c:?}");
            assert_eq!((c.fast_mb_per_s, c.slow_mb_per_s), (180.0, slow));
        }
        // With scatter, and a few fast stretches in the slow part (the
        // drive draining bits of its cache meanwhile).
        let mut noisy = step(200, 40, 180.0, 20.0);
        for (i, p) in noisy.iter_mut().enumerate() {
            p.1 *= 1.0 + 0.1 * ((i * 7 % 11) as f64 / 11.0 - 0.5);
        }
        noisy[120].1 = 170.0;
        noisy[160].1 = 150.0;
        assert!(collapse(1, &noisy).is_some());
        // Steady, fast or slow: none.
        assert!(collapse(1, &step(200, 200, 180.0, 180.0)).is_none());
        assert!(collapse(1, &step(200, 0, 40.0, 40.0)).is_none());
        // A CMR disk's slope from outer to inner tracks: none.
        let slope: Vec<(u64, f64)> =
            (0..200).map(|i| ((i as u64) << 20, 250.0 - 125.0 * i as f64 / 199.0)).collect();
        assert!(collapse(1, &slope).is_none());
        // A merely slower half (a limit that halved): under the factor.
        assert!(collapse(1, &step(200, 100, 180.0, 90.0)).is_none());
        // Too few stretches to judge.
        assert!(collapse(1, &step(6, 3, 180.0, 10.0)).is_none());
    }

    #[test]
    fn only_a_collapse_that_recovers_idle_is_called_smr() {
        let collapse =
            Collapse { pass: 1, fast_mb_per_s: 180.0, slow_mb_per_s: 18.0, after_bytes: 25 << 30 };
        let burst = |mb_per_s| Some(Recovery { idle_s: 60.0, bytes: 1 << 30, mb_per_s });
        let smr = Shingled { collapse, recovery: burst(176.0), stall_ms: stall(Some(3200.0)) };
        let (action, words) = rule(&smr).unwrap();
        assert_eq!(action, Action::Return);
        assert_eq!(
            words,
            "behaves as drive-managed SMR: wrote at 180 MB/s for the first 26.84 GB of pass 1, then at 18 MB/s with \
             writes stalling up to 3.2 s (a media cache filled), and after idling 60 s it wrote 1.07 GB at 176 MB/s: \
             unsuitable for RAIDZ and resilver-heavy pools; return it if it was bought for one"
        );
        let stuck = Shingled { recovery: burst(20.0), stall_ms: stall(Some(300.0)), ..smr };
        let (action, words) = rule(&stuck).unwrap();
        assert_eq!(action, Action::Recheck);
        assert!(
            words.starts_with("its writes collapsed and stayed slow: wrote at 180 MB/s"),
            "{words}"
        );
        assert!(!words.contains("stalling"), "{words}");
        let unknown = Shingled { recovery: None, ..smr };
        assert_eq!(rule(&unknown), None);
        assert!(
            undecided(&unknown)
                .unwrap()
                .contains("whether they recover after idling was not measured")
        );
        assert_eq!(undecided(&smr), None);
    }
}

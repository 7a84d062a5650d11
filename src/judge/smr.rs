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
use crate::burnin::scatter::Scattered;
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

impl Collapse {
    /// A solid-state disk's: its write cache (SLC) filled, in words, with
    /// its size and both speeds (no shingles, and no finding).
    pub fn ssd_cache(&self) -> String {
        format!(
            "its writes ran at {:.0} MB/s for the first {} of pass {}, then at {:.0} MB/s: as a solid-state disk's \
             write cache (SLC) of about {} does once full (not SMR; nothing to act on)",
            self.fast_mb_per_s,
            human_bytes(self.after_bytes),
            self.pass,
            self.slow_mb_per_s,
            human_bytes(self.after_bytes)
        )
    }
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

/// The collapse in one pass's write speeds (`(offset, bytes, MB/s)` of
/// each stretch, in the order written; offsets from the range's start), if
/// there is one. Stretches count by their bytes (timed stretches differ in
/// size, and merged ones more); bytes 0 (results from before stretches were
/// timed, all of one size) count one each.
pub fn collapse(pass: u16, points: &[(u64, u64, f64)]) -> Option<Collapse> {
    if points.len() < FEWEST || points.iter().any(|p| p.2 <= 0.0) {
        return None;
    }
    let all: Vec<(f64, f64)> = points
        .iter()
        .map(|&(_, bytes, v)| (v, if bytes == 0 { 1.0 } else { bytes as f64 }))
        .collect();
    // The step: the split whose two sides fit their own level best (least
    // squares of the log speeds), each side's level then its median.
    let sse = |v: &[(f64, f64)]| {
        let w: f64 = v.iter().map(|p| p.1).sum();
        let m = v.iter().map(|p| p.0.ln() * p.1).sum::<f64>() / w;
        v.iter().map(|p| (p.0.ln() - m).powi(2) * p.1).sum::<f64>()
    };
    let k = (2..=all.len() - 2).min_by(|a, b| {
        (sse(&all[..*a]) + sse(&all[*a..])).total_cmp(&(sse(&all[..*b]) + sse(&all[*b..])))
    })?;
    let (before, after) = all.split_at(k);
    let (fast, slow) = (weighted_median(before)?, weighted_median(after)?);
    let share = |v: &[(f64, f64)], on: &dyn Fn(f64) -> bool| {
        v.iter().filter(|p| on(p.0)).map(|p| p.1).sum::<f64>() / v.iter().map(|p| p.1).sum::<f64>()
    };
    let clean =
        share(before, &|v| v > 2.0 * slow) >= CLEAN && share(after, &|v| v < fast / 2.0) >= CLEAN;
    (fast >= COLLAPSE * slow && clean).then_some(Collapse {
        pass,
        fast_mb_per_s: fast,
        slow_mb_per_s: slow,
        after_bytes: points[k].0,
    })
}

/// The speed at the middle byte of `(speed, weight)` points.
fn weighted_median(points: &[(f64, f64)]) -> Option<f64> {
    let mut v = points.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = v.iter().map(|p| p.1).sum::<f64>() / 2.0;
    let mut seen = 0.0;
    v.into_iter()
        .find(|p| {
            seen += p.1;
            seen >= half
        })
        .map(|p| p.0)
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

/// Scattered reads a second at or under this are a spinning disk's seeks.
pub const SEEK_BOUND: f64 = 400.0;
/// Scattered writes that must reach the media, at this many times the
/// reads' rate or more, land in a cache that persists.
pub const PERSISTS: f64 = 4.0;
/// Writes that ran while the host's CPUs had fewer than this many idle on
/// average may have waited for the host, not the disk: a probe that saw
/// no cache then could not tell (each write needs a CPU to wake the
/// thread that sends the next; a cache's writes take well under a
/// millisecond, a busy host's wake-ups can take more).
pub const HOST_BOUND_IDLE_CPUS: f64 = 0.5;

/// What is known of a disk's shingles: whether it spins (sysfs), the zone
/// model it declares, its writes' collapse in a pass, and the scattered-write
/// probe.
#[derive(Debug, Clone, Copy)]
pub struct Signs<'a> {
    pub spins: bool,
    pub shingled: Option<&'a Shingled>,
    pub scattered: Option<&'a Scattered>,
}

/// The scattered-write probe's figures, in words and numbers.
struct Probe {
    reads_per_s: f64,
    /// Writes a second while the cache took them (the first second on),
    /// and how many and how long.
    fast_per_s: f64,
    fast_writes: u64,
    fast_s: f64,
    /// Writes a second once it was full (the last windows), and the
    /// slowest write.
    full_per_s: Option<f64>,
    slowest_ms: f64,
    /// The host's CPUs idle while it wrote, where under
    /// [`HOST_BOUND_IDLE_CPUS`].
    host_bound: Option<f64>,
}

impl Probe {
    fn of(s: &Scattered) -> Option<Self> {
        use crate::burnin::scatter::{PER_SECOND, WINDOW_S};
        let reads_per_s = s.reads_per_s()?;
        if s.windows.len() < PER_SECOND {
            return None;
        }
        let fast = s.fast_part();
        let fast_writes: u64 = fast.iter().map(|n| u64::from(*n)).sum();
        let fast_s = fast.len() as f64 * WINDOW_S;
        let rest = &s.windows[fast.len()..];
        let full_per_s = (!rest.is_empty()).then(|| {
            rest.iter().map(|n| f64::from(*n)).sum::<f64>() / (rest.len() as f64 * WINDOW_S)
        });
        Some(Self {
            reads_per_s,
            fast_per_s: fast_writes as f64 / fast_s,
            fast_writes,
            fast_s,
            full_per_s,
            slowest_ms: s.slowest_write_ms,
            host_bound: s.idle_cpus.filter(|i| *i < HOST_BOUND_IDLE_CPUS),
        })
    }

    /// Its writes ran as its seeks allow, on a host with CPUs to spare: it
    /// has no cache that persists.
    fn no_cache(&self) -> bool {
        self.reads_per_s <= SEEK_BOUND && !self.persists() && self.host_bound.is_none()
    }

    /// Why it could not tell a cache from none, where it could not: its
    /// writes were not fast, and the host was busy while they ran.
    fn untold(&self) -> Option<String> {
        let seeks = self.reads_per_s <= SEEK_BOUND;
        let idle = self.host_bound.filter(|_| seeks && !self.persists())?;
        Some(format!(
            "the scattered-write probe could not tell whether it keeps writes in a cache that persists (drive-managed \
             SMR): its writes ran at {:.0}/s against {:.0} reads/s while the host's CPUs had {idle:.1} idle, so the \
             host may have set their pace; probe it again on an idle host (arrayburn inspect --probe --destructive)",
            self.fast_per_s, self.reads_per_s
        ))
    }

    /// Its writes persisted in a cache: a spinning disk's seeks allow its
    /// reads' rate, its writes ran at many times that.
    fn persists(&self) -> bool {
        self.reads_per_s <= SEEK_BOUND && self.fast_per_s >= PERSISTS * self.reads_per_s
    }

    fn words(&self, block: u64) -> String {
        format!(
            "scattered {} KiB writes that must reach the media landed at {:.0}/s where its seeks allow {:.0} reads/s (a \
             cache that persists) for {:.1} s ({} writes)",
            block / 1024,
            self.fast_per_s,
            self.reads_per_s,
            self.fast_s,
            self.fast_writes
        )
    }
}

/// What the signs say of a disk: a verdict, or what could not be decided
/// (its health then not claimed), or nothing.
pub fn judge(signs: Signs) -> (Option<(Action, String)>, Option<String>) {
    if !signs.spins {
        // A solid-state disk's fast (SLC) cache fills and recovers too:
        // not shingles.
        return (None, None);
    }
    if let Some(z) = signs.scattered.and_then(|s| s.zoned.as_deref()) {
        return (
            Some((
                Action::Return,
                format!(
                    "an SMR disk that says so (zoned: {z}): its host must place its writes; unsuitable for RAIDZ and \
                     resilver-heavy pools; return it if it was bought for one"
                ),
            )),
            None,
        );
    }
    let probe = signs.scattered.and_then(|s| Some((s, Probe::of(s)?)));
    let no_cache = probe.as_ref().is_some_and(|(_, p)| p.no_cache());
    let judged = probed(probe.as_ref(), signs.shingled);
    // A collapse in a pass that recovered idle is a media cache's,
    // whatever the scattered-write probe decided (one that saw none is
    // said beside: such a drive takes scattered writes to its bands).
    let Some((action, words)) = signs.shingled.and_then(rule).filter(|r| r.0 == Action::Return)
    else {
        return judged;
    };
    // The probe's own figures where it decided so.
    if judged.0.as_ref().is_some_and(|j| j.0 == Action::Return) && !no_cache {
        return judged;
    }
    let beside = match no_cache {
        true => {
            " (its scattered writes, probed before the run, ran as its seeks allow: only long bursts go to its cache)"
        }
        false => "",
    };
    (Some((action, format!("{words}{beside}"))), None)
}

/// What the scattered-write probe (`probe`: its figures) and a pass's
/// collapse (`shingled`) decide of a spinning disk that declares no zones.
fn probed(
    probe: Option<&(&Scattered, Probe)>,
    shingled: Option<&Shingled>,
) -> (Option<(Action, String)>, Option<String>) {
    let persists = probe.filter(|(_, p)| p.persists());
    let untold = probe.and_then(|(_, p)| p.untold());
    match (persists, shingled) {
        // A cache that persists and filled in the probe: its figures.
        (Some((s, p)), _) if p.full_per_s.is_some() => scattered(s, p),
        // One that did not fill there, but a pass's writes collapsed:
        // the collapse tells.
        (Some(_), Some(sh)) => (rule(sh), undecided(sh)),
        (Some((s, p)), None) => scattered(s, p),
        // A probe that saw no cache, or could not tell, contradicts
        // nothing (`judge` says a recovered collapse beside it).
        (None, Some(sh)) => match rule(sh) {
            Some(told) => (Some(told), None),
            None => (None, undecided(sh).or(untold)),
        },
        (None, None) => (None, untold),
    }
}

/// Whether the probe could not tell a cache that persists from none (the
/// host busy while it wrote): `judge` then says so as not decided.
pub fn untold(s: &Scattered) -> bool {
    Probe::of(s).is_some_and(|p| p.untold().is_some())
}

/// The scattered-write probe found a cache that persists: drive-managed
/// SMR where it filled and recovered idle, else not decided.
fn scattered(s: &Scattered, p: &Probe) -> (Option<(Action, String)>, Option<String>) {
    let seen = p.words(s.block);
    let Some(full) = p.full_per_s else {
        let ended = match &s.incomplete {
            Some(why) => format!("the probe ended early ({why}) before it filled"),
            None => "it did not fill".into(),
        };
        return (
            None,
            Some(format!(
                "{seen}, and {ended}: drive-managed SMR, a hybrid drive or a controller's cache; whether it is SMR \
                 was not decided"
            )),
        );
    };
    let stalls = if p.slowest_ms >= STALL_MS {
        format!(" with writes stalling up to {:.1} s", p.slowest_ms / 1e3)
    } else {
        String::new()
    };
    let filled = format!("{seen}, then at {full:.1}/s{stalls} (the cache full)");
    let Some(a) = s.again else {
        return (
            None,
            Some(format!(
                "{filled}, as a drive-managed SMR disk's; whether they recover after idling was not measured"
            )),
        );
    };
    let again = a.writes as f64 / a.write_s.max(f64::MIN_POSITIVE);
    let after = format!("after idling {:.0} s at {again:.0}/s", a.idle_s);
    if again >= RECOVERED * p.fast_per_s {
        (
            Some((
                Action::Return,
                format!(
                    "behaves as drive-managed SMR: {filled}, and {after}: unsuitable for RAIDZ and resilver-heavy \
                     pools; return it if it was bought for one"
                ),
            )),
            None,
        )
    } else {
        (
            None,
            Some(format!(
                "{filled}, and {after}: a cache that persists and did not clean itself while idle; whether it is \
                 drive-managed SMR was not decided (a longer --smr-idle tells)"
            )),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stretches of 1 MB: `fast` MB/s for `n_fast`, then `slow` for the
    /// rest of `n`.
    fn step(n: usize, n_fast: usize, fast: f64, slow: f64) -> Vec<(u64, u64, f64)> {
        (0..n).map(|i| ((i as u64) << 20, 1 << 20, if i < n_fast { fast } else { slow })).collect()
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
            p.2 *= 1.0 + 0.1 * ((i * 7 % 11) as f64 / 11.0 - 0.5);
        }
        noisy[120].2 = 170.0;
        noisy[160].2 = 150.0;
        assert!(collapse(1, &noisy).is_some());
        // Steady, fast or slow: none.
        assert!(collapse(1, &step(200, 200, 180.0, 180.0)).is_none());
        assert!(collapse(1, &step(200, 0, 40.0, 40.0)).is_none());
        // A CMR disk's slope from outer to inner tracks: none.
        let slope: Vec<(u64, u64, f64)> = (0..200)
            .map(|i| ((i as u64) << 20, 1 << 20, 250.0 - 125.0 * i as f64 / 199.0))
            .collect();
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

    /// A probe: `reads` a second over 2 s, write windows of 0.25 s, the
    /// slowest write, and writes a second after idling 10 s.
    fn probed(reads: f64, windows: Vec<u32>, slowest_ms: f64, again: Option<f64>) -> Scattered {
        Scattered {
            reads: (reads * 2.0) as u64,
            read_s: 2.0,
            windows,
            slowest_write_ms: slowest_ms,
            again: again.map(|w| crate::burnin::scatter::Again {
                idle_s: 10.0,
                writes: w as u64,
                write_s: 1.0,
            }),
            ..Scattered::empty(4096)
        }
    }

    /// Windows of 0.25 s: `fast` writes each for `n_fast`, then `full`
    /// each for 2.5 s (a stall: zeros between).
    fn filling(n_fast: usize, fast: u32, full: u32) -> Vec<u32> {
        let mut w = vec![fast; n_fast];
        w.extend([full, 0, full, 0, full, 0, 0, full, 0, full]);
        w
    }

    fn spinning<'a>(scattered: Option<&'a Scattered>, shingled: Option<&'a Shingled>) -> Signs<'a> {
        Signs { spins: true, shingled, scattered }
    }

    #[test]
    fn scattered_writes_a_cache_took_then_filled_and_recovered_idle_are_smr() {
        // 150 reads/s (seeks); writes at 2000/s for 5 s, then 4/s with a
        // 2.3 s stall, and at 1900/s after idling.
        let smr = probed(150.0, filling(20, 500, 1), 2300.0, Some(1900.0));
        let (verdict, unsure) = judge(spinning(Some(&smr), None));
        let (action, words) = verdict.unwrap();
        assert_eq!(action, Action::Return);
        assert_eq!(unsure, None);
        assert_eq!(
            words,
            "behaves as drive-managed SMR: scattered 4 KiB writes that must reach the media landed at 2000/s where \
             its seeks allow 150 reads/s (a cache that persists) for 5.0 s (10000 writes), then at 2.0/s with writes \
             stalling up to 2.3 s (the cache full), and after idling 10 s at 1900/s: unsuitable for RAIDZ and \
             resilver-heavy pools; return it if it was bought for one"
        );
        // Not back after idling, not idled (a stop), never full: not
        // decided, and said why.
        let stuck = probed(150.0, filling(20, 500, 1), 2300.0, Some(6.0));
        let (verdict, unsure) = judge(spinning(Some(&stuck), None));
        assert!(verdict.is_none());
        assert!(unsure.unwrap().contains("did not clean itself while idle"));
        let stopped = probed(150.0, filling(20, 500, 1), 2300.0, None);
        assert!(judge(spinning(Some(&stopped), None)).1.unwrap().contains("was not measured"));
        let roomy = probed(150.0, vec![500; 80], 3.0, None);
        let (verdict, unsure) = judge(spinning(Some(&roomy), None));
        assert!(verdict.is_none());
        assert!(unsure.unwrap().contains(
            "it did not fill: drive-managed SMR, a hybrid drive or a controller's cache"
        ));
    }

    #[test]
    fn a_cmr_disk_an_ssd_a_slow_disk_and_a_zoned_one_are_told_apart() {
        // CMR: writes flushed to the media run at about its reads' rate.
        let cmr = probed(150.0, vec![45; 80], 40.0, None);
        assert_eq!(judge(spinning(Some(&cmr), None)), (None, None));
        // Slow (or slowed by a neighbour): both slow.
        let slow = probed(30.0, vec![7; 80], 300.0, None);
        assert_eq!(judge(spinning(Some(&slow), None)), (None, None));
        // An SSD: reads far past what seeks allow, or not spinning at all,
        // even with a cache that fills and recovers.
        let ssd = probed(9000.0, filling(20, 5000, 100), 40.0, Some(9000.0));
        assert_eq!(judge(spinning(Some(&ssd), None)), (None, None));
        let not_spinning = Signs { spins: false, ..spinning(Some(&ssd), None) };
        assert_eq!(judge(not_spinning), (None, None));
        // Zoned: it says so.
        let zoned = Scattered { zoned: Some("host-aware".into()), ..Scattered::empty(4096) };
        let (action, words) = judge(spinning(Some(&zoned), None)).0.unwrap();
        assert_eq!(action, Action::Return);
        assert!(words.starts_with("an SMR disk that says so (zoned: host-aware)"), "{words}");
    }

    #[test]
    fn a_collapse_in_a_pass_that_recovers_is_smr_on_a_spinning_disk_whatever_the_probe_said() {
        let collapse =
            Collapse { pass: 1, fast_mb_per_s: 180.0, slow_mb_per_s: 18.0, after_bytes: 25 << 30 };
        let recovery = Some(Recovery { idle_s: 60.0, bytes: 1 << 30, mb_per_s: 176.0 });
        let sh = Shingled { collapse, recovery, stall_ms: None };
        assert_eq!(judge(spinning(None, Some(&sh))).0.unwrap().0, Action::Return);
        // An SSD's SLC cache fills and recovers so: not shingles.
        assert_eq!(judge(Signs { spins: false, ..spinning(None, Some(&sh)) }), (None, None));
        // Scattered writes as its seeks allow: no cache for those, but the
        // burst filled one and it came back idle: SMR, the probe said
        // beside.
        let cmr = probed(150.0, vec![45; 80], 40.0, None);
        let (action, words) = judge(spinning(Some(&cmr), Some(&sh))).0.unwrap();
        assert_eq!(action, Action::Return);
        assert!(words.starts_with("behaves as drive-managed SMR: wrote at 180 MB/s for the first 26.84 GB of pass 1, then at 18 MB/s"), "{words}");
        assert!(words.ends_with("(its scattered writes, probed before the run, ran as its seeks allow: only long bursts go to its cache)"), "{words}");
        assert_eq!(judge(spinning(Some(&cmr), None)), (None, None), "no collapse: nothing said");
        // A probe that filled a cache but was not idled (a stop), and a
        // pass's collapse that recovered: the collapse decides.
        let filled = probed(150.0, [vec![900; 8], vec![4; 16]].concat(), 6.0, None);
        let (action, words) = judge(spinning(Some(&filled), Some(&sh))).0.unwrap();
        assert_eq!(action, Action::Return);
        assert!(words.starts_with("behaves as drive-managed SMR: wrote at 180 MB/s"), "{words}");
        // A probe that measured nothing (a stop) contradicts nothing.
        let cut = Scattered { incomplete: Some("stopped".into()), ..Scattered::empty(4096) };
        assert_eq!(judge(spinning(Some(&cut), Some(&sh))).0.unwrap().0, Action::Return);
    }

    #[test]
    fn a_probe_without_a_cache_drops_only_the_smr_claim_and_one_cut_short_says_so() {
        let collapse =
            Collapse { pass: 1, fast_mb_per_s: 180.0, slow_mb_per_s: 18.0, after_bytes: 25 << 30 };
        let stuck = Shingled {
            collapse,
            recovery: Some(Recovery { idle_s: 60.0, bytes: 1 << 30, mb_per_s: 20.0 }),
            stall_ms: None,
        };
        let cmr = probed(150.0, vec![45; 80], 40.0, None);
        let (action, words) = judge(spinning(Some(&cmr), Some(&stuck))).0.unwrap();
        assert_eq!(action, Action::Recheck);
        assert!(words.starts_with("its writes collapsed and stayed slow"), "{words}");
        // Fast writes, then a stop before the cache filled: not "it did
        // not fill".
        let cut = Scattered {
            incomplete: Some("stopped".into()),
            ..probed(150.0, vec![500; 12], 3.0, None)
        };
        let said = judge(spinning(Some(&cut), None)).1.unwrap();
        assert!(said.contains("and the probe ended early (stopped) before it filled"), "{said}");
        assert!(!said.contains("it did not fill"), "{said}");
    }

    #[test]
    fn a_probe_on_a_busy_host_that_saw_no_cache_could_not_tell_and_contradicts_nothing() {
        let collapse =
            Collapse { pass: 1, fast_mb_per_s: 180.0, slow_mb_per_s: 18.0, after_bytes: 25 << 30 };
        let recovery = Some(Recovery { idle_s: 60.0, bytes: 1 << 30, mb_per_s: 176.0 });
        let sh = Shingled { collapse, recovery, stall_ms: None };
        // Writes as fast as the reads (150/s each) while the CPUs had 0.1
        // idle: a cache's writes held to the host's pace look so.
        let busy = Scattered { idle_cpus: Some(0.1), ..probed(150.0, vec![38; 80], 40.0, None) };
        assert!(untold(&busy));
        let (verdict, unsure) = judge(spinning(Some(&busy), None));
        assert_eq!(verdict, None);
        let unsure = unsure.unwrap();
        assert!(
            unsure.starts_with(
                "the scattered-write probe could not tell whether it keeps writes in a cache that persists \
                 (drive-managed SMR): its writes ran at 152/s against 150 reads/s while the host's CPUs had 0.1 idle"
            ),
            "{unsure}"
        );
        // The collapse in a pass that recovered idle still tells.
        let (action, words) = judge(spinning(Some(&busy), Some(&sh))).0.unwrap();
        assert_eq!(action, Action::Return);
        assert!(words.starts_with("behaves as drive-managed SMR"), "{words}");
        // The same probe with CPUs to spare: no cache for scattered writes,
        // and the collapse that recovered still tells.
        let idle = Scattered { idle_cpus: Some(1.6), ..busy.clone() };
        assert!(!untold(&idle));
        assert_eq!(judge(spinning(Some(&idle), Some(&sh))).0.unwrap().0, Action::Return);
        assert_eq!(judge(spinning(Some(&idle), None)), (None, None));
        // A cache seen on a busy host is seen: a busy host only slows it.
        let smr = Scattered {
            idle_cpus: Some(0.0),
            ..probed(150.0, filling(20, 500, 1), 2300.0, Some(1900.0))
        };
        assert!(!untold(&smr));
        assert_eq!(judge(spinning(Some(&smr), None)).0.unwrap().0, Action::Return);
        // Reads past what seeks allow: not a seeking disk, busy or not.
        let fast = Scattered { idle_cpus: Some(0.0), ..probed(9000.0, vec![900; 80], 3.0, None) };
        assert_eq!(judge(spinning(Some(&fast), None)), (None, None));
    }
}

//! What a burn-in measured, as its rules take it: the run ([`BurnRun`]:
//! each disk's plan, burn, SMART after and temperatures, and what was
//! measured after the run), each disk's facts ([`BurnFacts`]) with its
//! hottest reading and the temperature limit it is judged against, the
//! disks to re-measure before they are judged, and the writes that
//! collapsed. The rules themselves are `judge::burnin`'s and `judge::smr`'s.
//!
//! It must not read a disk, lay out a report or decide a verdict.

use std::time::Duration;

use crate::burnin::BurnedDisk;
use crate::burnin::health::SmartAfter;
use crate::burnin::record::{Class, DiskBurn, Phase, Temps};
use crate::burnin::smart::{CounterKind, DriveKind, SelfTest, SmartChange, TempLimits, TestKind};
use crate::burnin::state::Checkpoint;
use crate::io::EngineKind;
use crate::judge::Thresholds;
use crate::judge::burnin::{BurnFacts, Slowest};
use crate::judge::remeasured::Remeasured;
use crate::units::{human_duration, mb_per_s};

/// What a burn-in measured, as `report::burnin::build` takes it: each disk's, and how
/// the run went.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BurnRun {
    pub disks: Vec<Burned>,
    /// How long the plan said the run would take, and on what.
    pub plan: Option<crate::burnin::estimate::Estimate>,
    pub interrupted: bool,
    pub read_only: bool,
    /// The engine that ran, and how many requests it kept in flight.
    pub engine: (EngineKind, usize),
    /// What the rules apply (`--stall-ms`).
    pub thresholds: Thresholds,
    /// What each drive declared of itself before the run.
    pub inspection: Vec<crate::judge::inspect::Inspected>,
    /// A resume's disks the run began with and did not take up, not
    /// finished: each one's path and place.
    pub left_out: Vec<(String, String)>,
}

/// What a burn-in measured on one disk: its plan (target and checkpoint:
/// its run's options, SMART before), its burn, SMART after (or why not),
/// its temperatures read while it ran, and where it was re-measured alone
/// in turn with a peer, what that found.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Burned {
    pub disk: BurnedDisk,
    pub burn: DiskBurn,
    pub smart: SmartAfter,
    pub temps: Temps,
    pub remeasured: Option<Remeasured>,
    /// Its writes collapsed: the burst written after idling.
    pub recovery: Option<crate::judge::smr::Recovery>,
    /// The drive's self-test after the passes (`--smart-test-after`):
    /// which, and how it ended.
    #[serde(default)]
    pub self_test_after: Option<(crate::burnin::smart::TestKind, SelfTest)>,
    /// What the kernel saw of it while it was burned (`device::kernel`).
    #[serde(default)]
    pub kernel: Option<crate::device::kernel::Seen>,
    /// `--discard`: what was discarded after the last read-back, and read
    /// back where zeroes were promised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discarded: Option<crate::burnin::discard::Discarded>,
}

/// MB/s of `bytes` over `secs`; None when nothing was moved or timed
/// (never a 0 that reads as "measured, and slow").
pub fn speed(bytes: u64, secs: f64) -> Option<f64> {
    (bytes > 0 && secs > 0.0).then(|| mb_per_s(bytes, secs))
}

/// The disks whose writes collapsed partway through a pass, each with
/// where (`judge::smr::collapse`): to idle and write a burst to. A disk
/// that went away or stopped answering is not written again (its own
/// verdict stands).
pub fn collapses(run: &BurnRun) -> Vec<(usize, crate::judge::smr::Collapse)> {
    (run.disks.iter().enumerate())
        .filter(|(_, d)| !d.burn.device_gone && d.burn.hung.is_none())
        .filter_map(|(i, d)| Some((i, collapse(&d.burn, d.disk.start)?)))
        .collect()
}

/// The first pass whose writes collapsed, where they did (a burn-in in
/// stripes writes out of order: its surface is no burst's, and is not
/// searched).
fn collapse(b: &DiskBurn, start: u64) -> Option<crate::judge::smr::Collapse> {
    if b.stripes.is_some() {
        return None;
    }
    let mut passes: Vec<u16> = b.surface.iter().map(|p| p.pass).collect();
    passes.dedup();
    passes.into_iter().find_map(|pass| {
        let points: Vec<(u64, u64, f64)> = (b.surface.iter())
            .filter(|p| p.pass == pass && p.phase == Phase::Write)
            .map(|p| (p.offset.saturating_sub(start), p.bytes, p.mb_per_s))
            .collect();
        crate::judge::smr::collapse(pass, &points)
    })
}

/// The disks to re-measure before they are judged, each with its peer
/// (`judge::burnin::suspects`).
pub fn suspects(run: &BurnRun) -> Vec<(usize, usize)> {
    crate::judge::burnin::suspects(&facts(run).0, &run.thresholds)
}

/// Each disk's burn as the judge takes it, with the hottest reading and
/// the temperature limit it is judged against.
pub fn facts(run: &BurnRun) -> (Vec<BurnFacts>, Vec<Option<i64>>, Vec<TempLimits>) {
    let devices: Vec<_> = run.disks.iter().map(|d| d.disk.dev.clone()).collect();
    let groups = crate::judge::peers::peer_groups(&devices);
    let hottest: Vec<Option<i64>> = run.disks.iter().map(hottest).collect();
    let limits: Vec<TempLimits> = run.disks.iter().map(temp_limits).collect();
    let facts = (run.disks.iter().enumerate())
        .map(|(i, d)| {
            let (disk, burn) = (&d.disk, &d.burn);
            let len = burn.pass_bytes((disk.start, disk.end));
            let smart = d.smart.0.as_ref();
            let (point, hottest_c, limit) = (&disk.point, hottest[i], &limits[i]);
            let again = (d.remeasured.clone(), d.recovery);
            let (start, group, spins) = (disk.start, groups[i], disk.dev.identity.rotational);
            let after = d.self_test_after.as_ref();
            Evidence {
                burn,
                group,
                smart,
                len,
                start,
                point,
                hottest_c,
                limit,
                again,
                spins,
                after,
            }
            .facts(d.discarded.clone())
        })
        .collect();
    (facts, hottest, limits)
}

/// The temperature limits a disk is judged against: its own, read with its
/// SMART before or after the run, else the default for its kind (from its
/// SMART, else from sysfs: rotational, NVMe).
fn temp_limits(d: &Burned) -> TempLimits {
    let change = d.smart.0.as_ref();
    let snaps = [d.disk.point.smart_before.as_ref(), change.map(|ch| &ch.after)];
    if let Some(own) = snaps.iter().flatten().find_map(|s| s.limits.clone()) {
        return own;
    }
    let kind = (snaps.iter().flatten().find_map(|s| s.drive))
        .unwrap_or_else(|| DriveKind::of(&d.disk.dev.identity));
    kind.default_limits()
}

/// Each pass's MB/s and seconds over `len` bytes, from its seconds
/// (`times`, pass 1 first), for the `done` passes done whole.
pub fn pass_speeds(times: &[f64], done: u16, len: u64) -> Vec<(f64, f64)> {
    times.iter().take(usize::from(done)).filter_map(|s| Some((speed(len, *s)?, *s))).collect()
}

/// The hottest reading of each disk: before, during, after the run.
fn hottest(d: &Burned) -> Option<i64> {
    [
        d.disk.point.smart_before.as_ref().and_then(|s| s.temperature_c),
        d.temps.readings.iter().map(|r| r.celsius).max(),
        d.smart.0.as_ref().and_then(|ch| ch.after.temperature_c),
    ]
    .into_iter()
    .flatten()
    .max()
}

/// What one disk's burn-in measured, as `judge::burnin` takes it.
struct Evidence<'a> {
    burn: &'a DiskBurn,
    group: usize,
    smart: Option<&'a SmartChange>,
    len: u64,
    point: &'a Checkpoint,
    hottest_c: Option<i64>,
    limit: &'a TempLimits,
    /// The range's first byte.
    start: u64,
    /// What was measured after the run: alone in turn with a peer, and a
    /// burst after idling.
    again: (Option<Remeasured>, Option<crate::judge::smr::Recovery>),
    /// It spins (sysfs).
    spins: bool,
    /// Its self-test after the passes.
    after: Option<&'a (crate::burnin::smart::TestKind, SelfTest)>,
}

impl Evidence<'_> {
    /// What `pick` takes of its self-test before the passes, else of the
    /// one after them (said as such).
    fn self_test(&self, pick: fn(TestKind, &SelfTest) -> Option<String>) -> Option<String> {
        if let Some(w) = self.point.self_test.as_ref().and_then(|(k, s)| pick(*k, s)) {
            return Some(w);
        }
        let (kind, s) = self.after?;
        pick(*kind, s).map(|w| format!("{} self-test after the burn-in: {w}", kind.word()))
    }

    fn facts(self, discarded: Option<crate::burnin::discard::Discarded>) -> BurnFacts {
        let b = self.burn;
        let words =
            |kind: CounterKind| self.smart.map(|c| smart_words(c, kind)).unwrap_or_default();
        BurnFacts {
            self_test_failed: self.self_test(|_, s| match s {
                SelfTest::Failed(w) => Some(w.clone()),
                _ => None,
            }),
            // A self-test asked and not run, or not finished, tells
            // nothing: the disk's health is not claimed.
            self_test_unfinished: self.self_test(|kind, s| match s {
                SelfTest::Unfinished(w) => Some(w.clone()),
                SelfTest::Unknown(w) => {
                    Some(format!("the {} self-test asked was not run: {w}", kind.word()))
                }
                _ => None,
            }),
            fake_capacity: self.point.probe.as_ref().and_then(crate::judge::inspect::fake_capacity),
            hottest_c: self.hottest_c,
            limit_c: Some(self.limit.warning_c),
            limit_source: self.limit.source.clone(),
            smart_thermal: words(CounterKind::Thermal),
            slowest: slowest(b, self.point.io_bytes),
            smart_media: words(CounterKind::Media),
            smart_transport: words(CounterKind::Transport),
            smart_failed: self.smart.is_some_and(|c| c.after.passed == Some(false)),
            bad: b.bad_bytes.clone(),
            corrupted: b.bad_bytes.iter().any(|(c, _)| *c == Class::Corrupted),
            device_gone: b.device_gone,
            interrupted: b.interrupted,
            hung: b.hung.map(|h| {
                let what = if h.phase == Phase::Write { "write" } else { "read" };
                let within = human_duration(Duration::from_secs_f64(h.timeout_s));
                format!(
                    "a {what} at byte {} in pass {} got no answer within {within}",
                    h.offset, h.pass
                )
            }),
            write_mb_per_s: speed(b.written_bytes, b.write_s),
            verify_mb_per_s: speed(b.verified_bytes, b.verify_s),
            write_s: b.write_s,
            verify_s: b.verify_s,
            pass_mb_per_s: pass_speeds(&b.verify_pass_s, b.passes_done, self.len)
                .into_iter()
                .map(|(v, s)| (s >= crate::judge::MIN_JUDGED_S).then_some(v))
                .collect(),
            group: self.group,
            remeasured: self.again.0,
            shingled: collapse(b, self.start).map(|collapse| crate::judge::smr::Shingled {
                collapse,
                recovery: self.again.1,
                stall_ms: crate::judge::smr::stall(
                    b.slowest.filter(|s| s.phase == Phase::Write).map(|s| s.ms),
                ),
            }),
            spins: self.spins,
            scattered: self.point.scattered.clone(),
            cycles: b.cycles.clone(),
            discarded,
        }
    }
}

/// A burn's slowest request (`len` bytes), with the speed of its phase
/// but for that request (the pace of the others: a disk's stalls do not
/// excuse themselves by slowing it) and where it was, in words.
fn slowest(b: &DiskBurn, len: u64) -> Option<Slowest> {
    let s = b.slowest?;
    let (what, bytes, secs) = if s.phase == Phase::Write {
        ("a write", b.written_bytes, b.write_s)
    } else {
        ("a read", b.verified_bytes, b.verify_s)
    };
    let others = crate::judge::stall::pace_without(bytes, secs, (len, s.ms));
    let mb_per_s = others.or_else(|| speed(bytes, secs));
    let at = format!("{what} at byte {} in pass {}", s.offset, s.pass);
    Some(Slowest { ms: s.ms, len, mb_per_s, at })
}

/// What rose in SMART of one kind, in words ("Reallocated 0 → 8").
fn smart_words(c: &SmartChange, kind: CounterKind) -> Vec<String> {
    c.deltas
        .iter()
        .filter(|d| d.kind == kind)
        .map(|d| format!("{} {} → {}", d.name, d.before, d.after))
        .collect()
}

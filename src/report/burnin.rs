//! The [`BurnReport`]: everything a burn-in found, as one value (its JSON),
//! and how it is built from what the burn-in measured and `judge::burnin`
//! judged. Its text, page and charts are `export::burnin`'s.
//!
//! It must not decide anything (the actions are `judge::burnin`'s) and must
//! not read devices.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::burnin::DiskPlan;
use crate::burnin::health::SmartAfter;
use crate::burnin::record::{Class, DiskBurn, Phase, TempReading, Temps};
use crate::burnin::smart::{CounterKind, DriveKind, SelfTest, SmartChange, TempLimits, TestKind};
use crate::burnin::state::Checkpoint;
use crate::device::Identity;
use crate::header::{self, Header};
use crate::io::EngineKind;
use crate::judge::advice::DiskAdvice;
use crate::judge::burnin::{
    BurnFacts, DiskVerdict, Remeasured, Slowest, burned_whole, run_verdict, verdicts,
};
use crate::judge::{ArrayVerdict, Thresholds};
use crate::units::{human_duration, mb_per_s};

/// What a burn-in measured, as [`build`] takes it: each disk's, and how
/// the run went.
pub struct BurnRun<'a> {
    pub disks: Vec<Burned<'a>>,
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
pub struct Burned<'a> {
    pub plan: &'a DiskPlan,
    pub burn: DiskBurn,
    pub smart: SmartAfter,
    pub temps: Temps,
    pub remeasured: Option<Remeasured>,
    /// Its writes collapsed: the burst written after idling.
    pub recovery: Option<crate::judge::smr::Recovery>,
}

/// One disk's burn-in in the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnDisk {
    /// The path as given.
    pub path: String,
    /// Identity from sysfs (flattened, as in the check's report).
    #[serde(flatten)]
    pub identity: Identity,
    /// The bytes burned: `start_byte` up to `end_byte`.
    pub start_byte: u64,
    pub end_byte: u64,
    /// What the capacity probe found before the run (a fresh burn-in of
    /// whole disks): on a fake disk, `end_byte` is its usable size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::burnin::probe::Probed>,
    /// What was measured and found.
    #[serde(flatten)]
    pub burn: DiskBurn,
    /// Write and verify MB/s (decimal) over all passes; null when nothing
    /// was timed (a soak writes nothing; a run stopped early may not have
    /// verified).
    pub write_mb_per_s: Option<f64>,
    pub verify_mb_per_s: Option<f64>,
    /// Each whole pass's read-back MB/s, pass 1 first (a pass cut short
    /// is left out).
    pub verify_pass_mb_per_s: Vec<f64>,
    /// Each whole pass's write MB/s, pass 1 first (a read-only soak
    /// writes nothing; results before it have none: left out then).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_pass_mb_per_s: Vec<f64>,
    /// Those as % of the peer group's median; null without peers.
    pub write_pct_of_peers: Option<f64>,
    pub verify_pct_of_peers: Option<f64>,
    /// SMART before and after and the counters that rose; null when not
    /// read (`smart_note` says why).
    pub smart: Option<SmartChange>,
    pub smart_note: Option<String>,
    /// The drive's self-test before the run (`--smart-test`): which
    /// (`short`, `long`) and its result (`{"state": "passed"}`, `failed`
    /// with the drive's words, `unknown` with why); null when not run.
    pub self_test_kind: Option<TestKind>,
    pub self_test: Option<SelfTest>,
    /// The hottest the disk was during the run (SMART before, every
    /// `--smart-every` seconds, after), °C.
    pub hottest_c: Option<i64>,
    /// Each temperature read during the run (every `--smart-every`), with
    /// the seconds since the disks started; left out where none was read
    /// (no SMART, or results before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub temperatures: Vec<TempReading>,
    /// Readings taken during the run that no sensor can make (a sensor or
    /// firmware fault, not used), each once with when it first came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensor_faults: Vec<String>,
    /// The limit it was judged against: `warning_c`, `critical_c` (°C) and
    /// `source` (the drive's own, or the default for its kind).
    #[serde(default)]
    pub temperature_limit: Option<TempLimits>,
    /// Called slow against its peers on speed alone, it was re-measured
    /// alone in turn with a peer: the peer, and both disks' MB/s there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remeasured: Option<Remeasured>,
    /// Its writes collapsed partway through a pass (as a drive-managed SMR
    /// disk's do once its media cache is full): `collapse` (`pass`,
    /// `fast_mb_per_s`, `slow_mb_per_s`, `after_bytes`), `recovery` (a burst
    /// after idling: `idle_s`, `bytes`, `mb_per_s`; null if none was
    /// written) and `stall_ms` (its slowest write, a second or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shingled: Option<crate::judge::smr::Shingled>,
    /// Slower than its peers with every disk at once and not decided
    /// re-measured alone: why its health is not claimed, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// `"healthy"`, `"return"`, `"recheck"`, `"check_path"`, `"not_judged"`
    /// (nothing found, speed not compared) or `"interrupted"` (stopped
    /// before it was burned whole, nothing found).
    pub verdict: DiskVerdict,
}

/// The whole burn-in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnReport {
    /// Tool, kind (`"burnin"`, a soak too), host, machine, times, command
    /// line, and whether it is whole ([`Header`], flattened).
    #[serde(flatten)]
    pub header: Header,
    /// The run id every block carries (hex).
    pub run_id: String,
    pub passes: u16,
    /// A read-only soak (nothing written; `written_bytes` 0).
    pub read_only: bool,
    /// What was written: `"blocks"`, `"badblocks"`, or `"read-only"`.
    pub pattern: String,
    /// Bytes per write and read.
    pub io_bytes: u64,
    /// How writes and reads were issued: `"io_uring"` with `queue_depth`
    /// in flight per disk, or `"psync"` (one at a time).
    pub engine: EngineKind,
    pub queue_depth: usize,
    pub disks: Vec<BurnDisk>,
    /// What each drive declared of itself before the run (`arrayburn
    /// inspect`'s table and findings): notes beside the verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inspection: Vec<crate::judge::inspect::Inspected>,
    /// The verdict, where the check's report keeps it.
    pub summary: BurnSummary,
}

/// The burn-in's verdict over all disks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnSummary {
    /// `"healthy"`, `"flagged"` (a disk or link to act on), `"not_judged"`
    /// (nothing to act on, a disk's speed not compared) or `"interrupted"`.
    pub verdict: ArrayVerdict,
    /// One entry per disk to act on (as the check's).
    pub disk_verdicts: Vec<DiskAdvice>,
    /// Links below their maximum (as the check's).
    #[serde(default)]
    pub links: Vec<crate::report::LinkFinding>,
    /// The verdict in one sentence.
    pub message: String,
    /// Disks the run began with that this resume did not take up, their
    /// burn-in not finished (paths as checkpointed): never judged here,
    /// so the run is not judged whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// A fault class in words, as the findings and sentences say it.
pub fn class_words(c: Class) -> &'static str {
    match c {
        Class::WriteError => "failed to write",
        Class::FlushError => "not flushed (the cache flush failed)",
        Class::ReadError => "failed to read back",
        Class::Corrupted => "corrupted",
        Class::Misdirected => "misdirected",
        Class::OtherDisk => "another disk's",
        Class::Stale => "lost (stale on read-back)",
        Class::Zeros => "zeros (never written)",
        Class::Foreign => "foreign (not what was written)",
    }
}

/// MB/s of `bytes` over `secs`; None when nothing was moved or timed
/// (never a 0 that reads as "measured, and slow").
pub fn speed(bytes: u64, secs: f64) -> Option<f64> {
    (bytes > 0 && secs > 0.0).then(|| mb_per_s(bytes, secs))
}

/// Where a disk's burn-in stopped short of its end, in words ("pass 1 of
/// 2, write 70 %"); None when it finished (or for a soak).
pub fn stopped_at(d: &BurnDisk, passes: u16) -> Option<String> {
    let at = d.burn.place.filter(|at| at.phase != Phase::Done)?;
    Some(format!(
        "stopped in pass {} of {passes}, {} {:.0} % (bytes {}..{} of {}..{} done)",
        at.pass,
        at.phase.word(),
        at.percent(d.start_byte, d.end_byte),
        d.start_byte,
        at.done_until,
        d.start_byte,
        d.end_byte
    ))
}

/// The disks whose writes collapsed partway through a pass, each with
/// where (`judge::smr::collapse`): to idle and write a burst to. A disk
/// that went away or stopped answering is not written again (its own
/// verdict stands).
pub fn collapses(run: &BurnRun) -> Vec<(usize, crate::judge::smr::Collapse)> {
    (run.disks.iter().enumerate())
        .filter(|(_, d)| !d.burn.device_gone && d.burn.hung.is_none())
        .filter_map(|(i, d)| Some((i, collapse(&d.burn, d.plan.target.start)?)))
        .collect()
}

/// The first pass whose writes collapsed, where they did.
fn collapse(b: &DiskBurn, start: u64) -> Option<crate::judge::smr::Collapse> {
    let mut passes: Vec<u16> = b.surface.iter().map(|p| p.pass).collect();
    passes.dedup();
    passes.into_iter().find_map(|pass| {
        let points: Vec<(u64, f64)> = (b.surface.iter())
            .filter(|p| p.pass == pass && p.phase == Phase::Write)
            .map(|p| (p.offset.saturating_sub(start), p.mb_per_s))
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
fn facts(run: &BurnRun) -> (Vec<BurnFacts>, Vec<Option<i64>>, Vec<TempLimits>) {
    let devices: Vec<_> = run.disks.iter().map(|d| d.plan.target.dev.clone()).collect();
    let groups = crate::judge::peers::peer_groups(&devices);
    let hottest: Vec<Option<i64>> = run.disks.iter().map(hottest).collect();
    let limits: Vec<TempLimits> = run.disks.iter().map(temp_limits).collect();
    let facts = (run.disks.iter().enumerate())
        .map(|(i, d)| {
            let (plan, burn) = (d.plan, &d.burn);
            let len = plan.target.end - plan.target.start;
            let smart = d.smart.0.as_ref();
            let (point, hottest_c, limit) = (&plan.point, hottest[i], &limits[i]);
            let again = (d.remeasured.clone(), d.recovery);
            let (start, group) = (plan.target.start, groups[i]);
            Evidence { burn, group, smart, len, start, point, hottest_c, limit, again }.facts()
        })
        .collect();
    (facts, hottest, limits)
}

/// Judges the disks and builds the report.
pub fn build(run: BurnRun) -> BurnReport {
    let (facts, hottest, limits) = facts(&run);
    let judged = verdicts(&facts, &run.thresholds);
    let BurnRun {
        disks,
        interrupted,
        read_only,
        engine: (engine, depth),
        inspection,
        left_out,
        ..
    } = run;
    let devices: Vec<_> = disks.iter().map(|d| d.plan.target.dev.clone()).collect();
    let c = &disks[0].plan.point.clone();
    let mut advice = Vec::new();
    let each = disks.into_iter().zip(facts.iter().zip(judged)).zip(hottest.into_iter().zip(limits));
    let mut disks: Vec<BurnDisk> = each
        .map(|((d, (f, judged)), temp)| {
            // A disk with advice is named by its action below, once the
            // links have had their say.
            if let Some((a, sentence)) = &judged.action {
                let path = d.plan.target.dev.given.clone();
                let sentence = format!("{path}: {sentence}");
                advice.push(DiskAdvice { path, action: *a, sentence });
            }
            d.row(f, &judged, temp, read_only)
        })
        .collect();
    let summary = summary(interrupted, read_only, &devices, &mut disks, (advice, &left_out));
    BurnReport {
        header: Header {
            started_at: c.started_at.clone(),
            ..Header::now(header::Kind::Burnin, SystemTime::now(), c.command_line.clone())
        }
        .ended(interrupted, disks.iter().all(|d| burned_whole(&d.burn, read_only))),
        run_id: c.run_id.clone(),
        passes: burns_passes(&disks, c.passes, read_only),
        engine,
        queue_depth: depth,
        read_only,
        pattern: if read_only { "read-only".into() } else { c.pattern.name().into() },
        io_bytes: c.io_bytes,
        disks,
        inspection,
        summary,
    }
}

impl Burned<'_> {
    /// The disk's row: what was measured, its speeds against its peers, and
    /// its verdict before the links have their say.
    fn row(
        self,
        f: &BurnFacts,
        judged: &crate::judge::burnin::BurnVerdict,
        (hottest_c, limit): (Option<i64>, TempLimits),
        read_only: bool,
    ) -> BurnDisk {
        let Burned { plan, burn, smart, temps, .. } = self;
        let (t, c) = (&plan.target, &plan.point);
        let verdict = judged.disk_verdict(burn.interrupted, burned_whole(&burn, read_only));
        let speeds = pass_speeds(&burn.verify_pass_s, burn.passes_done, t.end - t.start);
        let writes = pass_speeds(&burn.write_pass_s, burn.passes_done, t.end - t.start);
        BurnDisk {
            path: t.dev.given.clone(),
            identity: t.dev.identity.clone(),
            start_byte: t.start,
            end_byte: t.end,
            probe: c.probe.clone(),
            burn,
            verify_pass_mb_per_s: speeds.into_iter().map(|(v, _)| v).collect(),
            write_pass_mb_per_s: writes.into_iter().map(|(v, _)| v).collect(),
            write_mb_per_s: f.write_mb_per_s,
            verify_mb_per_s: f.verify_mb_per_s,
            write_pct_of_peers: judged.write_pct,
            verify_pct_of_peers: judged.verify_pct,
            smart: smart.0,
            smart_note: smart.1,
            self_test_kind: c.self_test.as_ref().map(|(k, _)| *k),
            self_test: c.self_test.as_ref().map(|(_, s)| s.clone()),
            hottest_c,
            temperatures: temps.readings,
            sensor_faults: temps.not_believed,
            temperature_limit: Some(limit),
            remeasured: f.remeasured.clone(),
            shingled: f.shingled,
            undecided: judged.undecided.clone(),
            verdict,
        }
    }
}

/// The run's verdict and message, once links below their maximum have had
/// their say: a disk's own is a finding on it (its verdict becomes the
/// action), a controller's is named in the verdict.
fn summary(
    interrupted: bool,
    read_only: bool,
    devices: &[crate::device::BlockDevice],
    disks: &mut [BurnDisk],
    (mut advice, left_out): (Vec<DiskAdvice>, &[(String, String)]),
) -> BurnSummary {
    let links = crate::judge::links::with_links_and_bays(&mut advice, devices);
    for a in &advice {
        if let Some(d) = disks.iter_mut().find(|d| d.path == a.path) {
            d.verdict = a.action.into();
        }
    }
    let controllers: Vec<String> =
        links.iter().filter(|l| l.controller).map(crate::judge::links::sentence).collect();
    // Not judged for want of a comparison, and not decided when
    // re-measured (each with why).
    let (not_judged, unsure) = not_judged(disks);
    let not_judged: Vec<String> = not_judged.iter().map(|d| d.path.clone()).collect();
    let undecided: Vec<String> = (unsure.iter())
        .filter_map(|d| Some(format!("{} ({})", d.path, d.undecided.as_ref()?)))
        .collect();
    // Nothing found, but not burned (a soak: read) whole once: a soak's
    // --duration ended first.
    let short: Vec<String> = (disks.iter())
        .filter(|d| !interrupted && d.verdict == DiskVerdict::Interrupted)
        .map(|d| d.path.clone())
        .collect();
    let n = disks.len();
    let flagged: Vec<&str> = advice.iter().map(|a| a.path.as_str()).collect();
    // Disks the run began with and this resume left out: not finished, not
    // judged, named in its verdict.
    let mut short = short;
    short.extend(
        left_out.iter().map(|(path, place)| format!("{path} (left out of this resume at {place})")),
    );
    let unjudged = (not_judged.as_slice(), undecided.as_slice(), short.as_slice());
    let mut message = message(interrupted, read_only, n, &flagged, controllers, unjudged);
    let cleared: Vec<&str> = (disks.iter())
        .filter(|d| d.remeasured.is_some() && d.verdict == DiskVerdict::Healthy)
        .map(|d| d.path.as_str())
        .collect();
    if !interrupted && !cleared.is_empty() {
        message.push_str(&format!(
            " Slower than their peers only while every disk ran at once, and at their peer's speed re-measured alone in turn: {} (a limit the disks share set the pace, such as the host's CPU or a controller; not the disks).",
            cleared.join(", ")
        ));
    }
    let not_judged = !not_judged.is_empty() || !undecided.is_empty() || !short.is_empty();
    BurnSummary {
        verdict: run_verdict(interrupted, !advice.is_empty() || !links.is_empty(), not_judged),
        disk_verdicts: advice,
        links,
        message,
        left_out: left_out.iter().map(|(path, _)| path.clone()).collect(),
    }
}

/// The temperature limits a disk is judged against: its own, read with its
/// SMART before or after the run, else the default for its kind (from its
/// SMART, else from sysfs: rotational, NVMe).
fn temp_limits(d: &Burned) -> TempLimits {
    let change = d.smart.0.as_ref();
    let snaps = [d.plan.point.smart_before.as_ref(), change.map(|ch| &ch.after)];
    if let Some(own) = snaps.iter().flatten().find_map(|s| s.limits.clone()) {
        return own;
    }
    let kind = snaps.iter().flatten().find_map(|s| s.drive).unwrap_or({
        let id = &d.plan.target.dev.identity;
        match () {
            _ if id.topology.transport == "nvme" => DriveKind::Nvme,
            _ if id.rotational => DriveKind::Hdd,
            _ => DriveKind::Ssd,
        }
    });
    kind.default_limits()
}

/// The passes the report names: as asked, or for a soak run by time, the
/// most any disk began.
fn burns_passes(disks: &[BurnDisk], asked: u16, read_only: bool) -> u16 {
    if read_only && asked == crate::burnin::state::PASSES_BY_TIME {
        disks.iter().map(|d| d.burn.verify_pass_s.len() as u16).max().unwrap_or(0)
    } else {
        asked
    }
}

/// Each pass's MB/s and seconds over `len` bytes, from its seconds
/// (`times`, pass 1 first), for the `done` passes done whole.
fn pass_speeds(times: &[f64], done: u16, len: u64) -> Vec<(f64, f64)> {
    times.iter().take(usize::from(done)).filter_map(|s| Some((speed(len, *s)?, *s))).collect()
}

/// The hottest reading of each disk: before, during, after the run.
fn hottest(d: &Burned) -> Option<i64> {
    [
        d.plan.point.smart_before.as_ref().and_then(|s| s.temperature_c),
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
}

impl Evidence<'_> {
    fn facts(self) -> BurnFacts {
        let b = self.burn;
        let words =
            |kind: CounterKind| self.smart.map(|c| smart_words(c, kind)).unwrap_or_default();
        BurnFacts {
            self_test_failed: match &self.point.self_test {
                Some((_, SelfTest::Failed(w))) => Some(w.clone()),
                _ => None,
            },
            fake_capacity: self.point.probe.as_ref().and_then(crate::judge::inspect::fake_capacity),
            hottest_c: self.hottest_c,
            limit_c: Some(self.limit.warning_c),
            limit_source: self.limit.source.clone(),
            smart_thermal: words(CounterKind::Thermal),
            slowest: slowest(b, self.point.io_bytes),
            smart_media: words(CounterKind::Media),
            smart_transport: words(CounterKind::Transport),
            smart_failed: self.smart.is_some_and(|c| c.after.passed == Some(false)),
            bad: b.bad_bytes.iter().map(|(c, n)| (class_words(*c), *n)).collect(),
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
        }
    }
}

/// A burn's slowest request (`len` bytes), with the speed of its phase
/// and where it was, in words.
fn slowest(b: &DiskBurn, len: u64) -> Option<Slowest> {
    let s = b.slowest?;
    let (what, mb_per_s) = if s.phase == Phase::Write {
        ("a write", speed(b.written_bytes, b.write_s))
    } else {
        ("a read", speed(b.verified_bytes, b.verify_s))
    };
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

/// The verdict in one sentence.
fn message(
    interrupted: bool,
    read_only: bool,
    disks: usize,
    acted_on: &[&str],
    controllers: Vec<String>,
    (not_judged, undecided, short): (&[String], &[String], &[String]),
) -> String {
    let mut unjudged = String::new();
    if !not_judged.is_empty() {
        unjudged = format!(
            "; not judged: {} (speed not compared: no peer of the same model, size and kind, or a phase timed for under {:.0} s; health not claimed)",
            not_judged.join(", "),
            crate::judge::MIN_JUDGED_S
        );
    }
    for u in undecided {
        unjudged.push_str(&format!("; not decided: {u}; health not claimed"));
    }
    if !short.is_empty() {
        let done = if read_only { "read" } else { "burned" };
        unjudged.push_str(&format!(
            "; not {done} whole: {} (the run ended before each was {done} whole once; health not claimed)",
            short.join(", ")
        ));
    }
    match (interrupted, acted_on.len(), controllers.is_empty()) {
        (true, ..) => "INTERRUPTED: partial burn-in.".to_string(),
        // Not every disk was read (or burned) whole: only what was found
        // is said.
        (false, 0, true) if !short.is_empty() => {
            format!("NOT JUDGED: no error found on {disks} disk(s){unjudged}.")
        }
        (false, 0, true) if !unjudged.is_empty() && read_only => format!(
            "NOT JUDGED: {} disk(s) read whole in every pass without an error{unjudged}.",
            disks
        ),
        (false, 0, true) if !unjudged.is_empty() => format!(
            "NOT JUDGED: every 4 KiB block of the ranges burned on {} disk(s) written, flushed and read back as written, no request stalled{unjudged}.",
            disks
        ),
        (false, 0, true) if read_only => format!(
            "HEALTHY: {} disk(s) read whole in every pass without an error; of the passes read for a second or more, none much slower than the disk's first, nor any disk than its peers.",
            disks
        ),
        (false, 0, true) => format!(
            "HEALTHY: every 4 KiB block of the ranges burned on {} disk(s) written, flushed and read back as written.",
            disks
        ),
        (false, n, _) => {
            let mut named = controllers;
            if n > 0 {
                named.insert(0, format!("{n} disk(s) to act on ({})", a_few(acted_on)));
            }
            format!("FLAGGED: {}{unjudged}.", named.join("; "))
        }
    }
}

/// Up to five paths, then how many more: a verdict line names the disks
/// it is about without running on for a shelf of them.
pub fn a_few(paths: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut said = paths.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
    if paths.len() > SHOWN {
        said.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    said
}

/// The disks with nothing found whose health is not claimed: those not
/// compared with peers, and those compared but not decided when
/// re-measured (their readings straddle the threshold).
pub fn not_judged(disks: &[BurnDisk]) -> (Vec<&BurnDisk>, Vec<&BurnDisk>) {
    disks
        .iter()
        .filter(|d| d.verdict == DiskVerdict::NotJudged)
        .partition(|d| d.undecided.is_none())
}

impl crate::document::Document for BurnReport {
    fn document(&self) -> crate::document::RunDoc {
        use crate::document::{Cut, RunDoc};
        use crate::outcome::Outcome;
        let s = &self.summary;
        let disks: Vec<String> = self.disks.iter().map(|d| d.path.clone()).collect();
        let not_judged = not_judged(&self.disks);
        let paths =
            |ds: &[&BurnDisk]| -> Vec<String> { ds.iter().map(|d| d.path.clone()).collect() };
        let cut = if self.header.interrupted {
            let at = (self.disks.iter())
                .filter_map(|d| stopped_at(d, self.passes).map(|w| format!("{}: {w}", d.path)));
            let words = std::iter::once(s.message.clone()).chain(at).collect::<Vec<_>>().join("; ");
            Some(Cut { interrupted: true, words, disks: disks.clone() })
        } else {
            let short: Vec<String> = (self.disks.iter())
                .filter(|d| {
                    d.verdict == DiskVerdict::Interrupted || !burned_whole(&d.burn, self.read_only)
                })
                .map(|d| d.path.clone())
                .collect();
            (!short.is_empty()).then(|| Cut {
                interrupted: false,
                words: format!("{}: not burned whole (its run ended early)", short.join(", ")),
                disks: short,
            })
        };
        let outcome = match s.verdict {
            _ if self.header.interrupted => Outcome::Interrupted,
            v => v.outcome(),
        };
        RunDoc {
            outcome,
            to_act_on: super::document::acts(&s.disk_verdicts),
            links: super::document::link_sentences(&s.links),
            // A disk a resume left out is one of the run's, not judged.
            not_judged: paths(&not_judged.0)
                .into_iter()
                .chain(s.left_out.iter().cloned())
                .collect(),
            unsure: paths(&not_judged.1),
            disks,
            cut,
            message: s.message.clone(),
            notes: super::document::notes(&self.inspection),
        }
    }
}

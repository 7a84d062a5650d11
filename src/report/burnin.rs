//! The [`BurnReport`]: everything a burn-in found, as one value (its JSON),
//! and how it is built from what the burn-in measured and `judge::burnin`
//! judged. Its text, page and charts are `export::burnin`'s.
//!
//! It must not decide anything (the actions are `judge::burnin`'s) and must
//! not read devices.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::burnin::record::{DiskBurn, Phase, TempReading};
use crate::burnin::smart::{SelfTest, SmartChange, TempLimits, TestKind};
use crate::device::Identity;
use crate::header::{self, Header};
use crate::io::EngineKind;
use crate::judge::ArrayVerdict;
use crate::judge::advice::DiskAdvice;
use crate::judge::burn_facts::{BurnRun, Burned, facts, pass_speeds};
use crate::judge::burnin::{BurnFacts, DiskVerdict, burned_whole, run_verdict, verdicts};
use crate::judge::remeasured::Remeasured;

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
    /// What the scattered-write probe measured before the run
    /// (`burnin::scatter`: reads, writes a window, the writes after
    /// idling), where it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scattered: Option<crate::burnin::scatter::Scattered>,
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
    /// The drive's self-test after the passes (`--smart-test-after`):
    /// which, and its result as `self_test`'s; absent when not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_test_after_kind: Option<TestKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_test_after: Option<SelfTest>,
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
    /// A verify's (`burnin --verify`): the burn-in whose blocks it read
    /// back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burned_in: Option<BurnedIn>,
    /// `"healthy"`, `"return"`, `"recheck"`, `"check_path"`, `"not_judged"`
    /// (nothing found, speed not compared) or `"interrupted"` (stopped
    /// before it was burned whole, nothing found).
    pub verdict: DiskVerdict,
    /// What the kernel saw of it during the run (`device::kernel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<crate::device::kernel::Seen>,
    /// A burn-in fitted to a deadline (`--deadline`): what its stripes
    /// tested of the range (the rest is not claimed), in numbers and words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tested: Option<Tested>,
    /// A solid-state disk whose writes stepped down partway through a pass:
    /// its write cache (SLC) filled (said, not a finding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssd_cache: Option<SsdCache>,
    /// A solid-state drive's: what the run cost its endurance, by its own
    /// counters before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endurance: Option<crate::burnin::endurance::Endurance>,
    /// `--discard`: what was discarded after the last read-back (`bytes`,
    /// `way`: `zero_deallocate` or `discard`), who promised zeroes after
    /// it (`promised_by`), what was read back (`read_bytes`,
    /// `not_zero_bytes`, `first_not_zero`) and why it did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discarded: Option<crate::burnin::discard::Discarded>,
}

/// A solid-state disk's write cache, as its writes showed it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SsdCache {
    pub collapse: crate::judge::smr::Collapse,
    pub said: String,
}

/// What a striped burn-in tested of a disk's range.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tested {
    #[serde(flatten)]
    pub coverage: crate::burnin::stripes::Coverage,
    /// In words: "17.0 % of the surface: 1,584 stripe(s) of 2 GiB, ...".
    pub said: String,
}

impl Tested {
    /// What `burn` tested of `start..end` of a disk of `size` bytes.
    fn of(
        burn: &crate::burnin::record::DiskBurn,
        (start, end): (u64, u64),
        size: u64,
    ) -> Option<Self> {
        let coverage = burn.coverage((start, end))?;
        let what = if start == 0 && end + crate::burnin::block::BLOCK as u64 > size {
            "the surface"
        } else {
            "the range"
        };
        Some(Self { coverage, said: coverage.words(what, (start, end)) })
    }
}

/// The burn-in a verify read back, on one disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnedIn {
    /// Its run id (every block carries it), when it began, and when its
    /// checkpoint was last saved (the blocks are at least this old).
    pub run_id: String,
    pub started_at: String,
    pub last_saved_at: String,
    pub passes: u16,
    /// Whether it finished, and where it stood in words ("all 2 pass(es)
    /// done", "pass 1 of 2, write 40%": only what it wrote is read back).
    pub finished: bool,
    pub place: String,
    /// Its verdict on this disk, as the report it kept says it; null
    /// where none was kept.
    pub verdict: Option<String>,
}

impl BurnedIn {
    /// The burn-in a verify's checkpoint `c` reads back.
    fn of(c: &crate::burnin::state::Checkpoint) -> Option<Self> {
        let v = c.verifies.as_ref()?;
        let burned = crate::burnin::state::Checkpoint {
            at: v.burned,
            passes: v.passes,
            verifies: None,
            ..c.clone()
        };
        Some(Self {
            run_id: c.run_id.clone(),
            started_at: v.burned_from.clone(),
            last_saved_at: v.burned_until.clone(),
            passes: v.passes,
            finished: v.burned.phase == Phase::Done,
            place: burned.place(),
            verdict: v.burn_verdict.clone(),
        })
    }
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
    /// A read-only soak (nothing written; `written_bytes` 0), or a verify.
    pub read_only: bool,
    /// A verify (`burnin --verify`): a burn-in's blocks read back, each
    /// disk's burn-in in its `burned_in`; `run_id` is the verify's own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    /// What was written: `"blocks"`, `"badblocks"`, or `"read-only"`.
    pub pattern: String,
    /// Bytes per write and read.
    pub io_bytes: u64,
    /// How writes and reads were issued: `"io_uring"` with `queue_depth`
    /// in flight per disk, or `"psync"` (one at a time).
    pub engine: EngineKind,
    pub queue_depth: usize,
    pub disks: Vec<BurnDisk>,
    /// How long the plan said the run would take, each disk's and all
    /// side by side, and what each estimate rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::burnin::estimate::Estimate>,
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

/// Where a disk's burn-in stopped short of its end, in words ("pass 1 of
/// 2, write 70 %"); None when it finished (or for a soak).
pub fn stopped_at(d: &BurnDisk, passes: u16) -> Option<String> {
    let at = d.burn.place.filter(|at| at.phase != Phase::Done)?;
    if let Some(s) = d.burn.stripes {
        // Burned to its deadline: what it tested is said; a stop, where.
        let of = crate::burnin::stripes::grouped(s.slots);
        return d.burn.interrupted.then(|| {
            format!(
                "stopped in stripe {} of {of}, pass {} of {passes}, {} (at byte {}; {} stripe(s) done)",
                crate::burnin::stripes::grouped(s.done + 1),
                at.pass,
                at.phase.word(),
                at.done_until,
                crate::burnin::stripes::grouped(s.done),
            )
        });
    }
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

/// Judges the disks and builds the report.
pub fn build(run: BurnRun) -> BurnReport {
    let (facts, hottest, limits) = facts(&run);
    let judged = verdicts(&facts, &run.thresholds);
    // `--not-against-peers`: speeds are not judged against peers, as asked.
    let waived = run.thresholds.slow_pct <= 0.0;
    let BurnRun {
        disks,
        interrupted,
        read_only,
        engine: (engine, depth),
        inspection,
        left_out,
        plan,
        ..
    } = run;
    let devices: Vec<_> = disks.iter().map(|d| d.disk.dev.clone()).collect();
    let (c, kind) = (&disks[0].disk.point.clone(), Kind::of(read_only, &disks));
    let mut advice = Vec::new();
    let each = disks.into_iter().zip(facts.iter().zip(judged)).zip(hottest.into_iter().zip(limits));
    let mut disks: Vec<BurnDisk> = each
        .map(|((d, (f, judged)), temp)| {
            // A disk with advice is named by its action below, once the
            // links have had their say.
            if let Some((a, sentence, findings)) = &judged.action {
                let path = d.disk.dev.given.clone();
                let sentence = format!("{path}: {sentence}");
                let findings = findings.clone();
                advice.push(DiskAdvice { path, action: *a, sentence, findings });
            }
            d.row(f, &judged, temp, read_only)
        })
        .collect();
    let summary = summary(interrupted, (&kind, waived), &devices, &mut disks, (advice, &left_out));
    BurnReport {
        header: Header {
            started_at: c.started_at.clone(),
            ..Header::now(header::Kind::Burnin, SystemTime::now(), c.command_line.clone())
        }
        .ended(interrupted, disks.iter().all(|d| burned_whole(&d.burn, read_only))),
        run_id: c.own_id().to_string(),
        passes: burns_passes(&disks, c.passes, read_only),
        verify: c.verifies.is_some(),
        engine,
        queue_depth: depth,
        read_only,
        pattern: if read_only { "read-only".into() } else { c.pattern.name().into() },
        io_bytes: c.io_bytes,
        plan,
        disks,
        inspection,
        summary,
    }
}

impl Burned {
    /// The disk's row: what was measured, its speeds against its peers, and
    /// its verdict before the links have their say.
    fn row(
        self,
        f: &BurnFacts,
        judged: &crate::judge::burnin::BurnVerdict,
        (hottest_c, limit): (Option<i64>, TempLimits),
        read_only: bool,
    ) -> BurnDisk {
        let Burned { disk, burn, smart, temps, self_test_after: after, kernel, discarded, .. } =
            self;
        let (t, c) = (&disk, &disk.point);
        let verdict = judged.disk_verdict(burn.interrupted, burned_whole(&burn, read_only));
        let len = burn.pass_bytes((t.start, t.end));
        let tested = Tested::of(&burn, (t.start, t.end), t.dev.identity.size_bytes);
        let endurance = smart.0.as_ref().filter(|_| !read_only).and_then(|c| c.cost(&burn));
        let speeds = pass_speeds(&burn.verify_pass_s, burn.passes_done, len);
        let writes = pass_speeds(&burn.write_pass_s, burn.passes_done, len);
        BurnDisk {
            path: t.dev.given.clone(),
            identity: t.dev.identity.clone(),
            start_byte: t.start,
            end_byte: t.end,
            probe: c.probe.clone(),
            scattered: c.scattered.clone(),
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
            self_test_after_kind: after.as_ref().map(|(k, _)| *k),
            self_test_after: after.map(|(_, s)| s),
            hottest_c,
            temperatures: temps.readings,
            sensor_faults: temps.not_believed,
            temperature_limit: Some(limit),
            remeasured: f.remeasured.clone(),
            // A solid-state disk's collapse is its write cache's.
            shingled: f.shingled.filter(|_| f.spins),
            ssd_cache: f
                .shingled
                .filter(|_| !f.spins)
                .map(|s| SsdCache { collapse: s.collapse, said: s.collapse.ssd_cache() }),
            undecided: judged.undecided.clone(),
            burned_in: BurnedIn::of(c),
            verdict,
            kernel,
            tested,
            endurance,
            discarded,
        }
    }
}

/// The run's verdict and message, once links below their maximum have had
/// their say: a disk's own is a finding on it (its verdict becomes the
/// action), a controller's is named in the verdict.
fn summary(
    interrupted: bool,
    (kind, waived): (&Kind, bool),
    devices: &[crate::device::BlockDevice],
    disks: &mut [BurnDisk],
    (mut advice, left_out): (Vec<DiskAdvice>, &[(String, String)]),
) -> BurnSummary {
    let links = crate::judge::links::with_links_and_bays(&mut advice, devices);
    let kernel_run = kernel_evidence(devices, disks, &mut advice);
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
    let mut message = message(interrupted, (kind, waived), n, &flagged, controllers, unjudged);
    message.extend(striped(disks).filter(|_| !interrupted).map(|said| format!(" {said}")));
    for sentence in kernel_run {
        message = format!("{message} {sentence}.");
    }
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

/// What the disks burned in stripes to a deadline tested, where any was:
/// exactly that, the rest not claimed.
fn striped(disks: &[BurnDisk]) -> Option<String> {
    let each: Vec<String> = (disks.iter())
        .filter_map(|d| Some(format!("{}: {}", d.path, d.tested.as_ref()?.said)))
        .collect();
    if each.is_empty() {
        return None;
    }
    let all = disks.iter().filter_map(|d| d.tested.as_ref()).all(|t| t.coverage.whole());
    Some(match all {
        true => format!("Burned in stripes: {}.", each.join("; ")),
        false => format!(
            "Burned in stripes to the deadline, not whole: {}; the rest is not claimed (--resume burns it).",
            each.join("; ")
        ),
    })
}

/// What the kernel saw of each disk, judged beside what its run found
/// (`judge::kernel`) and merged into `advice`; the sentences about the
/// run.
fn kernel_evidence(
    devices: &[crate::device::BlockDevice],
    disks: &[BurnDisk],
    advice: &mut Vec<DiskAdvice>,
) -> Vec<String> {
    let judged: Vec<crate::judge::kernel::Disk> = (disks.iter().zip(devices))
        .filter_map(|(d, dev)| {
            let seen = d.kernel.as_ref()?;
            let t = &dev.identity.topology;
            Some(crate::judge::kernel::Disk {
                path: &d.path,
                seen,
                errors: d.burn.findings.iter().map(|f| (f.offset, f.len)).collect(),
                controller: t.controller.as_ref().map(|_| t.controller_words()),
                port: seen.port.clone(),
            })
        })
        .collect();
    let (found, run) = crate::judge::kernel::judge(&judged);
    // The burn-in's message names every disk with advice: these too.
    crate::judge::kernel::advise(found, advice);
    run
}

/// What a run did: wrote and read back (a burn-in), only read (a soak),
/// or read back a burn-in's blocks (a verify, with the least time its
/// blocks had been on the disks, where known).
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Burn,
    Soak,
    /// `read`: the bytes its disks' burn-ins wrote (what it reads back),
    /// and their sizes, where that is less than every disk whole.
    Verify {
        age_s: Option<f64>,
        read: Option<(u64, u64)>,
    },
}

impl Kind {
    fn of(read_only: bool, disks: &[Burned]) -> Self {
        let now = crate::units::rfc3339(SystemTime::now());
        let verifies: Vec<_> =
            disks.iter().filter_map(|d| d.disk.point.verifies.as_ref()).collect();
        if verifies.is_empty() {
            return if read_only { Kind::Soak } else { Kind::Burn };
        }
        let ages = verifies.iter().map(|v| crate::units::seconds_between(&v.burned_until, &now));
        let age_s = ages.collect::<Option<Vec<f64>>>().and_then(|a| a.into_iter().reduce(f64::min));
        let points = disks.iter().map(|d| &d.disk.point);
        let written: u64 = points.clone().flat_map(|c| c.written()).map(|(a, b, _)| b - a).sum();
        // Each disk's whole 4 KiB blocks (a tail under 4 KiB is never
        // burned, so never claimed or missed).
        let block = crate::burnin::block::BLOCK as u64;
        let sizes: u64 = points.map(|c| c.size_bytes / block * block).sum();
        Kind::Verify { age_s, read: (written < sizes).then_some((written, sizes)) }
    }

    /// A verify's words for how much of its disks it read back, where not
    /// every disk whole (a burn-in over a range, one stopped partway, or a
    /// checkpoint that says so): it claims only that.
    fn coverage(&self) -> String {
        match self {
            Kind::Verify { read: Some((n, of)), .. } => format!(
                " (read {n} of {of} bytes of the disks, {:.1}%: the rest is not claimed)",
                100.0 * *n as f64 / (*of).max(1) as f64
            ),
            _ => String::new(),
        }
    }

    /// A verify's words for how long the blocks had been on the disks.
    fn age(&self) -> String {
        match self {
            Kind::Verify { age_s: Some(s), .. } if *s >= 1.0 => format!(
                ", {} or more after it was last written",
                crate::units::human_duration(std::time::Duration::from_secs_f64(*s))
            ),
            _ => String::new(),
        }
    }
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

/// The verdict in one sentence.
fn message(
    interrupted: bool,
    (kind, waived): (&Kind, bool),
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
        let done = match kind {
            Kind::Burn => "burned",
            Kind::Soak => "read",
            Kind::Verify { .. } => "read back",
        };
        unjudged.push_str(&format!(
            "; not {done} whole: {} (the run ended before each was {done} whole once; health not claimed)",
            short.join(", ")
        ));
    }
    let said = match (interrupted, acted_on.len(), controllers.is_empty()) {
        (true, ..) if matches!(kind, Kind::Verify { .. }) => {
            "INTERRUPTED: partial verify.".to_string()
        }
        (true, ..) => "INTERRUPTED: partial burn-in.".to_string(),
        // Not every disk was read (or burned) whole: only what was found
        // is said.
        (false, 0, true) if !short.is_empty() => {
            format!("NOT JUDGED: no error found on {disks} disk(s){unjudged}.")
        }
        (false, 0, true) if let Kind::Verify { .. } = kind => format!(
            "{}: every 4 KiB block their burn-in wrote on {disks} disk(s){} read back as written, where it was written{}{unjudged}.",
            if unjudged.is_empty() { "HEALTHY" } else { "NOT JUDGED" },
            kind.coverage(),
            kind.age()
        ),
        (false, 0, true) if !unjudged.is_empty() && *kind == Kind::Soak => format!(
            "NOT JUDGED: {} disk(s) read whole in every pass without an error{unjudged}.",
            disks
        ),
        (false, 0, true) if !unjudged.is_empty() => format!(
            "NOT JUDGED: every 4 KiB block of the ranges burned on {} disk(s) written, flushed and read back as written, no request stalled beyond its disk's own pace{unjudged}.",
            disks
        ),
        (false, 0, true) if *kind == Kind::Soak => format!(
            "HEALTHY: {} disk(s) read whole in every pass without an error; of the passes read for a second or more, none much slower than the disk's first{}.",
            disks,
            if waived { "" } else { ", nor any disk than its peers" }
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
    };
    if waived && !interrupted {
        return format!("{said} Speeds were not judged against peers (--not-against-peers).");
    }
    said
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

impl BurnDisk {
    /// The disk as one its run could not tell slow or not, with why.
    fn undecided(&self) -> crate::rundoc::Undecided {
        let why = self.undecided.clone().unwrap_or_default();
        crate::rundoc::Undecided { path: self.path.clone(), why }
    }
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

impl crate::rundoc::Document for BurnReport {
    fn document(&self) -> crate::rundoc::RunDoc {
        use crate::outcome::Outcome;
        use crate::rundoc::{Cut, RunDoc};
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
            to_act_on: super::rundoc_of::acts(&s.disk_verdicts),
            links: super::rundoc_of::link_sentences(&s.links),
            // A disk a resume left out is one of the run's, not judged.
            not_judged: paths(&not_judged.0)
                .into_iter()
                .chain(s.left_out.iter().cloned())
                .collect(),
            unsure: not_judged.1.iter().map(|d| d.undecided()).collect(),
            disks,
            cut,
            message: s.message.clone(),
            notes: super::rundoc_of::notes(&self.inspection),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, message};

    #[test]
    fn a_run_that_judged_no_speed_against_peers_says_so_and_claims_no_comparison() {
        let none: &[String] = &[];
        let said = |read_only, waived| {
            let kind = if read_only { Kind::Soak } else { Kind::Burn };
            message(false, (&kind, waived), 3, &[], vec![], (none, none, none))
        };
        assert!(
            said(false, false).starts_with("HEALTHY: every 4 KiB block"),
            "{}",
            said(false, false)
        );
        assert!(!said(false, false).contains("--slow-pct"));
        assert!(
            said(false, true)
                .ends_with("Speeds were not judged against peers (--not-against-peers).")
        );
        assert!(said(true, false).contains("nor any disk than its peers"));
        let soak = said(true, true);
        assert!(!soak.contains("than its peers") && soak.contains("--not-against-peers"), "{soak}");
        // An interrupted run says only that.
        let stopped = message(true, (&Kind::Burn, true), 3, &[], vec![], (none, none, none));
        assert_eq!(stopped, "INTERRUPTED: partial burn-in.");
    }

    #[test]
    fn a_verify_says_what_it_read_back_and_how_long_after_the_burn_in() {
        let none: &[String] = &[];
        let day = Kind::Verify { age_s: Some(86400.0 + 7200.0), read: None };
        let said = message(false, (&day, false), 2, &[], vec![], (none, none, none));
        assert_eq!(
            said,
            "HEALTHY: every 4 KiB block their burn-in wrote on 2 disk(s) read back as written, where it was written, 26 h 0 min or more after it was last written."
        );
        // A checkpoint that says its burn-in wrote an eighth of the disks:
        // that is all the verify claims.
        let part = Kind::Verify { age_s: None, read: Some((8 << 20, 64 << 20)) };
        let said = message(false, (&part, false), 2, &[], vec![], (none, none, none));
        assert_eq!(
            said,
            "HEALTHY: every 4 KiB block their burn-in wrote on 2 disk(s) (read 8388608 of 67108864 bytes of the disks, 12.5%: the rest is not claimed) read back as written, where it was written."
        );
        let unknown = Kind::Verify { age_s: None, read: None };
        let not = ["/dev/sdb".to_string()];
        let said = message(false, (&unknown, false), 2, &[], vec![], (&not, none, none));
        assert!(said.starts_with("NOT JUDGED: every 4 KiB block their burn-in wrote on 2 disk(s) read back as written, where it was written; not judged: /dev/sdb"), "{said}");
        let stopped = message(true, (&day, false), 2, &[], vec![], (none, none, none));
        assert_eq!(stopped, "INTERRUPTED: partial verify.");
        let flagged = message(false, (&day, false), 2, &["/dev/sdc"], vec![], (none, none, none));
        assert!(flagged.starts_with("FLAGGED: 1 disk(s) to act on (/dev/sdc)"), "{flagged}");
    }
}

//! Building the [`Report`] from what was measured and what the judge made
//! of it. No rule lives here: every verdict, percentage, reference and
//! reason comes from `judge`; this file copies numbers into the report's
//! layout and words the summary.

use crate::judge::rated::{AgainstRating, SlowBatch};
use crate::report::{ControllerRow, GroupRow};
use std::collections::BTreeSet;
use std::time::SystemTime;

use super::group_words::{batch_sentence, group_sentences, join_and};
use super::{
    ConditionsRow, ConfirmRow, Disk, Flag, LinkFinding, Options, Pass, PassDisk, Report, SliceRow,
    Summary, SurfaceProfile, WindowKind,
};
use crate::device::BlockDevice;
use crate::header::{Header, Kind};
use crate::io::EngineKind;
use crate::judge::advice::{DiskAdvice, Seen, advise};
use crate::judge::check::{Array, Surfaces};
use crate::judge::confirm::{self, With};
use crate::judge::disk::Judged;
use crate::judge::groups::{self, GroupConfirmed, GroupPath};
use crate::judge::links;
use crate::judge::pass::PassJudgement;
use crate::judge::peers::PathFinding;
use crate::judge::random::RandomFinding;
use crate::judge::{ArrayVerdict, MIN_JUDGED_S, Thresholds, Verdict};
use crate::measure::{Beside, DiskRun, GroupRecheck, PassKind, PassRun, Recheck, Slice, Window};
use crate::plan::Settings;
use crate::stats::{latency_bins, latency_us};
use crate::units::{mb_per_s, rfc3339};

/// What the report needs to know about the run besides its measurements.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunInfo {
    /// When the check started.
    pub started_at: SystemTime,
    /// The command line as typed.
    pub command_line: Vec<String>,
    /// Whether a signal stopped the check.
    pub interrupted: bool,
    /// Whether every pass has run: the final report (false in the copies
    /// saved after each pass).
    pub complete: bool,
}

impl RunInfo {
    /// A check begun now with this command line, neither stopped nor done.
    pub fn begun(command_line: Vec<String>) -> Self {
        Self { started_at: SystemTime::now(), command_line, interrupted: false, complete: false }
    }
}

/// What a check ran on and with: its disks (in command-line order), their
/// peer groups and its settings. [`build`] takes it with what was measured.
#[derive(Debug, Clone, Copy)]
pub struct Checked<'a> {
    pub devices: &'a [BlockDevice],
    /// What each drive declared before the run.
    pub inspection: &'a [crate::judge::inspect::Inspected],
    pub groups: &'a [usize],
    pub settings: &'a Settings,
}

impl<'a> Checked<'a> {
    /// Its disks as the rules see them.
    pub fn array(self) -> Array<'a> {
        Array { devices: self.devices, groups: self.groups, thresholds: &self.settings.thresholds }
    }
}

impl<'a> From<&'a crate::plan::Plan> for Checked<'a> {
    fn from(plan: &'a crate::plan::Plan) -> Self {
        Checked {
            devices: &plan.devices,
            inspection: &plan.inspection,
            groups: &plan.groups,
            settings: &plan.settings,
        }
    }
}

/// What a check measured: its passes, the disks re-measured before their
/// verdict, the groups read again before they are named, the random reads
/// and the neighbour pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct Measured<'a> {
    pub passes: &'a [PassRun],
    pub rechecks: &'a [Recheck],
    pub groups: &'a [GroupRecheck],
    pub random: Option<&'a crate::measure::RandomRead>,
    pub vibration: Option<&'a crate::measure::ShakeRead>,
    /// What the kernel saw of each disk over the run (`device::kernel`),
    /// in the order of the disks.
    pub kernel: Option<&'a [crate::device::kernel::Seen]>,
}

/// Builds the report for what was measured so far.
pub fn build(on: Checked, read: Measured, info: &RunInfo) -> Report {
    let Measured { passes, rechecks, groups, random, vibration, kernel } = read;
    let th = on.settings.thresholds;
    let array = on.array();
    let serial = array.serial_speeds(passes);
    let surfaces = Surfaces::of(passes);
    let confirmations: Vec<(usize, ConfirmRow)> =
        rechecks.iter().map(|r| confirmation(on, r, &th)).collect();
    let again = Again { disks: &confirmations, groups, serial: &serial };
    let (rows, judgements): (Vec<Pass>, Vec<PassJudgement>) = (passes.iter().enumerate())
        .map(|(i, p)| build_pass(on, (p, surfaces.of_pass(i)), again))
        .unzip();
    let finding = judgements.iter().find_map(|j| j.finding);
    let mut advice = advise(&seen(on, (passes, &surfaces), &judgements), &th, finding);
    let passes = rows;
    let (rated, batches) = against_ratings(on, &serial);
    crate::judge::rated::advise(&rated, &mut advice);
    let (mut random_found, random) = random_reads(on, random, &mut advice);
    let (shaken, vibration) = neighbour_pass(on, vibration, (&mut advice, &mut random_found));
    let own_paths = own_paths(&passes);
    for g in &own_paths {
        let alone = g.alone_pct_of_serial.unwrap_or(g.kept_pct_of_serial);
        groups::advise(&g.disks, (g.kept_pct_of_serial, alone), g.behind.as_deref(), &mut advice);
    }
    // Links below their maximum: a finding of their own, or the likely
    // cause of a slow disk.
    let links = crate::judge::links::with_links_and_bays(&mut advice, on.devices);
    let (kernel_named, kernel_run) = kernel_evidence(on, (&passes, kernel), &mut advice);
    let below = !kernel_named.is_empty()
        || !own_paths.is_empty()
        || rated.iter().any(|r| r.below)
        || !random_found.is_empty()
        || !shaken.is_empty();
    let rated = (rated, batches);
    let found = (advice, links, below, (random_found, shaken, kernel_named));
    let stopped = info
        .interrupted
        .then(|| what_was_read(on, &passes, (random.is_some(), vibration.is_some())));
    let mut summary = summarize(&passes, finding, found, (rated, stopped), &th);
    summary.message =
        [summary.message, more_sentences(random.as_ref(), vibration.as_ref())].join("");
    if let Some(note) = shared_link_note(&summary.links, &passes, summary.shared_bottleneck) {
        summary.message = format!("{} {note}", summary.message);
    }
    for sentence in kernel_run {
        summary.message = format!("{} {sentence}.", summary.message);
    }
    // What a volume's check can tell of its drives.
    for d in on.devices {
        if let Some(v) = &d.identity.volume {
            summary.message = format!("{} VOLUME: {}.", summary.message, v.sentence(&d.given));
        }
    }
    Report {
        header: Header::now(Kind::Check, info.started_at, info.command_line.clone())
            .ended(info.interrupted, info.complete),
        options: options(on),
        disks: disks(on, kernel),
        passes,
        confirmations: confirmations.into_iter().map(|(_, c)| c).collect(),
        inspection: on.inspection.to_vec(),
        random,
        vibration,
        summary,
    }
}

/// The random reads judged (their findings added to `advice`), and as
/// the report gives them.
fn random_reads(
    on: Checked,
    random: Option<&crate::measure::RandomRead>,
    advice: &mut Vec<DiskAdvice>,
) -> (Vec<RandomFinding>, Option<super::random::RandomSection>) {
    let Some(read) = random else { return (Vec::new(), None) };
    let paths: Vec<String> = on.devices.iter().map(|d| d.given.clone()).collect();
    let on_disks = (paths.as_slice(), on.groups);
    let judged = crate::judge::random::judge(read, on_disks);
    crate::judge::random::advise(&judged.findings, advice);
    let undecided = (judged.unsure, judged.cleared);
    (judged.findings, Some(super::random::section(read, on_disks, undecided)))
}

/// The random reads' and the neighbour pass's sentences, each after a
/// space.
fn more_sentences(
    random: Option<&super::random::RandomSection>,
    vibration: Option<&super::vibration::VibrationSection>,
) -> String {
    let said = random.map(super::random::sentence).into_iter();
    said.chain(vibration.map(super::vibration::sentence)).map(|s| format!(" {s}")).collect()
}

/// The neighbour pass judged (its findings added to `advice`; a disk
/// whose reads there hung or went away to the random reads' findings,
/// `found`), and as the report gives it.
fn neighbour_pass(
    on: Checked,
    read: Option<&crate::measure::ShakeRead>,
    (advice, found): (&mut Vec<DiskAdvice>, &mut Vec<RandomFinding>),
) -> (Vec<crate::judge::vibration::VibrationFinding>, Option<super::vibration::VibrationSection>) {
    use crate::judge::vibration;
    let Some(read) = read else { return (Vec::new(), None) };
    let paths: Vec<String> = on.devices.iter().map(|d| d.given.clone()).collect();
    let unanswered = vibration::unanswered(read, &paths);
    crate::judge::random::advise(&unanswered, advice);
    found.extend(unanswered);
    let bays: Vec<Option<String>> =
        on.devices.iter().map(|d| d.identity.topology.enclosure_slot.clone()).collect();
    let losses = vibration::losses(read);
    let shaken = vibration::judge(read, &losses, (&paths, &bays));
    vibration::advise(&shaken, advice);
    (shaken, Some(super::vibration::section(read, &losses, (&paths, &bays))))
}

/// What each pass saw of each disk, as the advice reads it.
fn seen<'a>(
    on: Checked<'a>,
    (passes, surfaces): (&'a [PassRun], &'a Surfaces),
    judgements: &'a [PassJudgement],
) -> Vec<Seen<'a>> {
    let array = on.array();
    (passes.iter().enumerate().zip(judgements))
        .flat_map(|((i, p), j)| {
            (p.disks.iter().zip(surfaces.of_pass(i)).zip(&j.disks)).map(
                move |(((d, run), surface), judged)| Seen {
                    path: &on.devices[*d].given,
                    kind: p.kind,
                    facts: array.facts(*d, run, surface),
                    judged,
                },
            )
        })
        .collect()
}

/// What re-measuring a disk decided: the plan's disk and its row.
fn confirmation(on: Checked, r: &Recheck, th: &Thresholds) -> (usize, ConfirmRow) {
    let c = on.array().remeasured((r.disk, r.beside), &r.slices);
    let (peer, pass) = match r.beside {
        Beside::Peer(p) => (Some(on.devices[p].given.clone()), PassKind::Serial),
        Beside::All => (None, PassKind::Parallel),
    };
    let with = peer.as_deref().map_or(With::All, With::Peer);
    let row = ConfirmRow {
        path: on.devices[r.disk].given.clone(),
        sentence: confirm::sentence(&c, with, th),
        peer,
        pass,
        pct_of_peer: c.spread.map(|s| s.pct),
        pct_of_peer_low: c.spread.map(|s| s.low),
        pct_of_peer_high: c.spread.map(|s| s.high),
        slices: c.spread.map_or(0, |s| s.slices),
        verdict: c.verdict,
        measured: r.slices.iter().map(|s| slice_row(on, s)).collect(),
    };
    (r.disk, row)
}

/// A slice as the report shows it.
fn slice_row(on: Checked, s: &Slice) -> SliceRow {
    SliceRow {
        path: on.devices[s.disk].given.clone(),
        round: s.round,
        at_s: s.at.as_secs_f64(),
        elapsed_s: s.elapsed.as_secs_f64(),
        mb_per_s: mb_per_s(s.window.0, s.window.1.as_secs_f64()),
    }
}

fn options(on: Checked) -> Options {
    let s = &on.settings;
    Options {
        block_bytes: s.block,
        sample_s: s.sample.as_secs_f64(),
        serial_full: s.serial_full,
        parallel_full: s.parallel_full,
        slow_pct: s.thresholds.slow_pct,
        fast_pct: s.thresholds.fast_pct,
        engine: match s.engine {
            EngineKind::IoUring => "io_uring",
            _ => "psync",
        }
        .into(),
        queue_depth: s.queue_depth,
        max_errors: s.max_errors,
        buckets: s.buckets,
        slow_read_ms: s.slow_read.as_secs_f64() * 1e3,
        stall_ms: s.thresholds.stall_ms,
        spots: s.spots,
        slices: s.slices,
        seek_readers: s.seek_readers,
    }
}

fn disks(on: Checked, kernel: Option<&[crate::device::kernel::Seen]>) -> Vec<Disk> {
    on.devices
        .iter()
        .zip(on.groups)
        .enumerate()
        .map(|(i, (d, g))| Disk {
            path: d.given.clone(),
            identity: d.identity.clone(),
            in_use: d.in_use.clone(),
            peer_group: *g,
            kernel: kernel.and_then(|k| k.get(i).cloned()),
        })
        .collect()
}

/// What the kernel saw of each disk, judged beside what its reads found
/// (`judge::kernel`), merged into `advice`: the disks it put among those
/// to act on, in words, and the sentences about the run.
fn kernel_evidence(
    on: Checked,
    (passes, kernel): (&[Pass], Option<&[crate::device::kernel::Seen]>),
    advice: &mut Vec<DiskAdvice>,
) -> (Vec<String>, Vec<String>) {
    let Some(kernel) = kernel else { return (Vec::new(), Vec::new()) };
    let disks: Vec<crate::judge::kernel::Disk> = (on.devices.iter().zip(kernel))
        .map(|(d, seen)| {
            let errors = (passes.iter().flat_map(|p| &p.disks))
                .filter(|r| r.path == d.given)
                .flat_map(|r| r.errors.iter().map(|e| (e.offset, e.len)))
                .collect();
            let t = &d.identity.topology;
            crate::judge::kernel::Disk {
                path: &d.given,
                seen,
                errors,
                controller: t.controller.as_ref().map(|_| t.controller_words()),
                port: seen.port.clone(),
            }
        })
        .collect();
    let (found, run) = crate::judge::kernel::judge(&disks);
    (crate::judge::kernel::advise(found, advice), run)
}

/// (bytes, seconds, MB/s) over the sample window.
fn window(run: &DiskRun) -> (u64, f64, f64) {
    let (bytes, elapsed) = run.window;
    (bytes, elapsed.as_secs_f64(), mb_per_s(bytes, elapsed.as_secs_f64()))
}

fn measure_row(on: Checked, disk: usize, (run, surface): (&DiskRun, &[Option<f64>])) -> PassDisk {
    let (window_bytes, window_elapsed_s, window_mb_per_s) = window(run);
    let elapsed_s = run.elapsed.as_secs_f64();
    PassDisk {
        path: on.devices[disk].given.clone(),
        bytes: run.bytes,
        elapsed_s,
        mb_per_s: mb_per_s(run.bytes, elapsed_s),
        window_bytes,
        window_elapsed_s,
        window_mb_per_s,
        reads: run.reads,
        latency_us: latency_us(&run.latency_ns),
        latency_bins: latency_bins(&run.latency_ns),
        slow_read_count: run.slow_read_count,
        slow_reads: run.slow_reads.clone(),
        p9999_pct_of_peers: None,
        peers_median_mb_per_s: None,
        surface: SurfaceProfile {
            buckets: run.surface.bytes.len(),
            bytes: run.surface.bytes.clone(),
            reads: run.surface.reads.clone(),
            // Neither drawn nor judged where too thin to be a speed.
            mb_per_s: surface.to_vec(),
        },
        slow_regions: Vec::new(),
        pct_of_peers: None,
        pct_of_peers_low: None,
        pct_of_peers_high: None,
        slices: None,
        pct_of_serial: None,
        seek_pct_of_peers: None,
        time_pct_of_peers: None,
        reached_end: run.reached_end,
        read_errors: run.failed_reads,
        bad_ranges: run.bad_ranges,
        bad_bytes: run.bad_bytes,
        unread_bytes: run.unread_bytes,
        stopped: run.stopped,
        device_gone: run.gone,
        errors: run.errors.clone(),
        verdict: Verdict::Ok,
        reasons: Vec::new(),
    }
}

/// What was read again before the verdicts: the disks re-measured, the
/// groups read again, and each plan disk's clean serial speed.
#[derive(Clone, Copy)]
struct Again<'a> {
    disks: &'a [(usize, ConfirmRow)],
    groups: &'a [GroupRecheck],
    serial: &'a [Option<f64>],
}

/// One pass: its rows as measured, judged by `judge::pass`; a re-measured
/// disk's speed verdict in the pass re-measured is the re-measurement's.
fn build_pass(
    on: Checked,
    (p, surfaces): (&PassRun, &[Vec<Option<f64>>]),
    again: Again,
) -> (Pass, PassJudgement) {
    let confirmations = again.disks;
    let mut rows: Vec<PassDisk> = (p.disks.iter().zip(surfaces))
        .map(|((d, r), surface)| measure_row(on, *d, (r, surface)))
        .collect();
    let full = p.window == Window::Full;
    let mut judgement = on.array().judge_pass(p, surfaces, again.serial);
    for ((d, _), j) in p.disks.iter().zip(&mut judgement.disks) {
        if let Some((_, c)) = confirmations.iter().find(|(x, c)| x == d && c.pass == p.kind) {
            confirm::settle(j, c.verdict, &c.sentence);
        }
    }
    for (row, j) in rows.iter_mut().zip(&judgement.disks) {
        apply(row, j);
    }
    let pass = Pass {
        kind: p.kind,
        window: if full { WindowKind::Full } else { WindowKind::Sample },
        started_at: rfc3339(p.started_at),
        elapsed_s: p.elapsed.as_secs_f64(),
        aggregate_mb_per_s: rows.iter().map(|r| r.window_mb_per_s).sum(),
        median_mb_per_s: judgement.median_mb_per_s,
        median_elapsed_s: judgement.median_elapsed_s,
        interrupted: p.interrupted,
        controllers: controller_rows(on, p, &judgement, &rows),
        groups: group_rows(on, p, &judgement, again),
        slices: p.slices.iter().map(|s| slice_row(on, s)).collect(),
        conditions: judgement.conditions.map(|c| ConditionsRow {
            low_pct: c.low_pct,
            high_pct: c.high_pct,
            moved: c.moved(),
        }),
        disks: rows,
    };
    (pass, judgement)
}

/// The pass's groups as the report names them, each with what reading it
/// again found (not confirmed where it was not read again).
fn group_rows(on: Checked, p: &PassRun, j: &PassJudgement, again: Again) -> Vec<GroupRow> {
    let plan = |i: &usize| p.disks[*i].0;
    let topology = |d: usize| &on.devices[d].identity.topology;
    (j.groups.iter())
        .map(|g| {
            let disks: Vec<usize> = g.disks.iter().map(plan).collect();
            let read = again.groups.iter().find(|r| r.disks == disks);
            let c = read
                .map(|r| on.array().group_confirmed(&disks, (&r.alone, &r.together), again.serial));
            let c = c.unwrap_or(GroupConfirmed {
                together: None,
                alone: None,
                path: GroupPath::NotConfirmed,
            });
            let others: Vec<_> = p
                .disks
                .iter()
                .map(|(d, _)| *d)
                .filter(|d| !disks.contains(d))
                .map(topology)
                .collect();
            let mine: Vec<_> = disks.iter().map(|d| topology(*d)).collect();
            GroupRow {
                disks: disks.iter().map(|d| on.devices[*d].given.clone()).collect(),
                kept_pct_of_serial: g.kept_pct,
                others: g.others,
                others_kept_pct_of_serial: g.others_kept_pct,
                together_pct_of_others: c.together.map(|s| s.pct),
                together_low: c.together.map(|s| s.low),
                together_high: c.together.map(|s| s.high),
                alone_pct_of_serial: c.alone.map(|s| s.pct),
                alone_low: c.alone.map(|s| s.low),
                alone_high: c.alone.map(|s| s.high),
                rounds: c.alone.map_or(0, |s| s.slices),
                path: c.path,
                behind: groups::shared_element(&mine, &others),
            }
        })
        .collect()
}

/// The groups whose own path limits them (confirmed): advice to act on.
fn own_paths(passes: &[Pass]) -> Vec<GroupRow> {
    let par = passes.iter().filter(|p| p.kind == PassKind::Parallel);
    par.flat_map(|p| &p.groups).filter(|g| g.path == GroupPath::Own).cloned().collect()
}

/// The pass's controllers as the report names them: each one's words
/// (with its expander), disks, and what they kept of their serial speed.
fn controller_rows(
    on: Checked,
    p: &PassRun,
    judgement: &PassJudgement,
    rows: &[PassDisk],
) -> Vec<ControllerRow> {
    let words = |c: &crate::judge::pass::ControllerShare| {
        let first = c.disks.first();
        let controller =
            first.and_then(|i| on.devices[p.disks[*i].0].identity.topology.controller.as_ref());
        controller.map_or_else(
            || c.controller.clone(),
            |x| match c.controller.split_once(' ') {
                Some((_, expander)) => format!("{} {expander}", x.words()),
                None => x.words(),
            },
        )
    };
    (judgement.controllers.iter())
        .map(|c| ControllerRow {
            pci: c.controller.clone(),
            controller: words(c),
            disks: c.disks.iter().map(|i| rows[*i].path.clone()).collect(),
            kept_pct_of_serial: c.kept_pct,
            limited: c.limited,
        })
        .collect()
}

/// The judge's findings copied into a row.
fn apply(row: &mut PassDisk, j: &Judged) {
    row.pct_of_peers = j.pct_of_peers;
    row.pct_of_peers_low = j.spread.map(|s| s.low);
    row.pct_of_peers_high = j.spread.map(|s| s.high);
    row.slices = j.spread.map(|s| s.slices);
    row.pct_of_serial = j.pct_of_serial;
    row.seek_pct_of_peers = j.seek_pct_of_peers;
    row.time_pct_of_peers = j.time_pct_of_peers;
    row.p9999_pct_of_peers = j.p9999_pct_of_peers;
    row.peers_median_mb_per_s = j.peers_median_mb_per_s;
    row.slow_regions = j.slow_regions.clone();
    row.verdict = j.verdict;
    row.reasons = j.reasons.clone();
}

/// What the random reads, the neighbour pass and the kernel's log found
/// (the last: the disks it named, in words).
type Found = (Vec<RandomFinding>, Vec<crate::judge::vibration::VibrationFinding>, Vec<String>);

/// The check's summary: the disks flagged in each pass, those not
/// compared, the verdict over them, the array's speeds and the message.
/// `own_path`: a group's own path limits it, or a disk is below its
/// model's rating (advice to act on, as a link below its maximum is);
/// `rated`: the disks judged against their ratings, and the batches below.
fn summarize(
    passes: &[Pass],
    finding: Option<PathFinding>,
    (advice, links, own_path, (random, vibration, kernel)): (
        Vec<DiskAdvice>,
        Vec<LinkFinding>,
        bool,
        Found,
    ),
    (rated, stopped): ((Vec<AgainstRating>, Vec<SlowBatch>), Option<String>),
    th: &Thresholds,
) -> Summary {
    let flagged: Vec<Flag> = passes
        .iter()
        .flat_map(|p| p.disks.iter().map(move |d| (p.kind, d)))
        .filter(|(_, d)| d.verdict != Verdict::Ok)
        .map(|(pass, d)| Flag {
            path: d.path.clone(),
            pass,
            verdict: d.verdict,
            reasons: d.reasons.clone(),
        })
        .collect();
    let sum = |k: PassKind| passes.iter().find(|p| p.kind == k).map(|p| p.aggregate_mb_per_s);
    let (serial_sum, parallel) = (sum(PassKind::Serial), sum(PassKind::Parallel));
    let n_disks = passes.first().map(|p| p.disks.len()).unwrap_or(0);
    // A disk judged against its model's rating was compared.
    let mut not_compared = not_compared(passes);
    not_compared.retain(|p| !rated.0.iter().any(|r| &r.path == p));
    let verdicts: Vec<Verdict> = flagged.iter().map(|f| f.verdict).collect();
    let mut s = Summary {
        verdict: ArrayVerdict::of_check(
            &verdicts,
            !links.is_empty() || own_path,
            (n_disks, not_compared.len()),
            stopped.is_some(),
        ),
        not_compared,
        shared_bottleneck: finding.is_some_and(|f| f.shared_bottleneck),
        // With both passes, the disks compared in both (clean in each), so
        // that the sums and their ratio describe the same disks.
        serial_sum_mb_per_s: finding.map(|f| f.serial_mb_per_s).or(serial_sum),
        parallel_mb_per_s: finding.map(|f| f.parallel_mb_per_s).or(parallel),
        parallel_pct_of_serial_sum: finding.map(|f| f.aggregate_pct_of_serial),
        median_pct_of_serial: finding.map(|f| f.median_pct_of_serial),
        flagged,
        disk_verdicts: advice,
        links,
        rated: rated.0,
        rated_batches: rated.1,
        random,
        vibration,
        kernel,
        message: String::new(),
    };
    s.message = message(&s, passes, stopped.as_deref(), th);
    s
}

/// What a stopped check had read, in words: the disks read and not, the
/// passes run and not (whether the random reads and the neighbour pass
/// ran).
fn what_was_read(on: Checked, passes: &[Pass], (random, shaken): (bool, bool)) -> String {
    let read: BTreeSet<&str> = (passes.iter().flat_map(|p| &p.disks))
        .filter(|d| d.bytes > 0)
        .map(|d| d.path.as_str())
        .collect();
    let (yes, no): (Vec<String>, Vec<String>) =
        on.devices.iter().map(|d| d.given.clone()).partition(|g| read.contains(g.as_str()));
    let s = on.settings;
    let mut planned: Vec<&str> = match s.passes {
        crate::cli::Passes::Both => vec!["serial", "parallel"],
        crate::cli::Passes::Serial => vec!["serial"],
        crate::cli::Passes::Parallel => vec!["parallel"],
    };
    planned.extend(s.seek_readers.map(|_| "seek"));
    let ran: Vec<&str> = passes.iter().map(|p| p.kind.name()).collect();
    let mut not_run: Vec<String> =
        planned.iter().filter(|k| !ran.contains(k)).map(|k| format!("the {k} pass")).collect();
    not_run.extend((s.random.is_some() && !random).then(|| "the random reads".to_string()));
    not_run.extend((s.vibration.is_some() && !shaken).then(|| "the neighbour pass".to_string()));
    let mut out = match (yes.is_empty(), no.is_empty()) {
        (true, _) => "No disk was read before the stop".to_string(),
        (false, true) => format!("Read before the stop: {} (every disk)", join_and(&yes)),
        (false, false) => {
            format!("Read before the stop: {}; not read: {}", join_and(&yes), join_and(&no))
        }
    };
    if let Some(last) = ran.last() {
        out += &format!("; stopped in or after the {last} pass");
    }
    if !not_run.is_empty() {
        out += &format!("; not run: {}", join_and(&not_run));
    }
    out + "."
}

/// The disks no pass compared with peers (nor flagged), each once.
fn not_compared(passes: &[Pass]) -> Vec<String> {
    let compared: BTreeSet<&str> = (passes.iter().flat_map(|p| &p.disks))
        .filter(|d| d.pct_of_peers.is_some() || d.verdict != Verdict::Ok)
        .map(|d| d.path.as_str())
        .collect();
    let mut out: Vec<String> = Vec::new();
    for d in passes.iter().flat_map(|p| &p.disks) {
        if !compared.contains(d.path.as_str()) && !out.contains(&d.path) {
            out.push(d.path.clone());
        }
    }
    out
}

/// When the array's own speed moved during a sliced serial pass: by how
/// much, and what it means for the numbers.
fn conditions_sentence(passes: &[Pass]) -> Option<String> {
    let c = passes.iter().find_map(|p| p.conditions.filter(|c| c.moved))?;
    Some(format!(
        "CONDITIONS MOVED: the array's own speed changed during the serial pass (its slowest round at {:.0}%, its fastest at {:.0}% of its median); each disk was compared with the slices read close to its own, but re-run at a quieter moment for tighter numbers.",
        c.low_pct, c.high_pct
    ))
}

/// The verdict in sentences: interrupted, the verdict and what made it,
/// the disks not compared and why, those unsure, conditions that moved,
/// the fast ones, and the array's speed in parallel.
fn message(s: &Summary, passes: &[Pass], stopped: Option<&str>, th: &Thresholds) -> String {
    let mut parts = Vec::new();
    if let Some(read) = stopped {
        parts.push(format!("INTERRUPTED: partial results, health not claimed. {read}"));
    }
    let describe = |f: &&Flag| {
        let pass = f.pass.name();
        format!("{} {} in the {pass} pass ({})", f.path, f.verdict.word(), f.reasons.join("; "))
    };
    let of = |v: fn(Verdict) -> bool| -> Vec<String> {
        s.flagged.iter().filter(|f| v(f.verdict)).map(|f| describe(&f)).collect()
    };
    let unsure = of(|v| v == Verdict::Unsure);
    let faults = of(|v| !matches!(v, Verdict::Unsure | Verdict::Fast));
    parts.extend(verdict_sentence(s, passes, (faults, &unsure), th));
    if stopped.is_none() {
        parts.extend(not_compared_sentences(s, passes));
    }
    if !unsure.is_empty() && (s.verdict == ArrayVerdict::Flagged || !s.not_compared.is_empty()) {
        parts.push(format!("Unsure (neither slow nor cleared): {}.", unsure.join("; ")));
    }
    parts.extend(conditions_sentence(passes));
    parts.extend(s.rated_batches.iter().map(batch_sentence));
    let fast = of(|v| v == Verdict::Fast);
    if !fast.is_empty() {
        parts.push(format!(
            "Faster than peers (not a fault, but not identical either): {}.",
            fast.join("; ")
        ));
    }
    parts.extend(parallel_sentence(s, passes));
    parts.join(" ")
}

/// The verdict's own sentence: what made it (`faults` and `unsure`: the
/// flagged disks in words).
fn verdict_sentence(
    s: &Summary,
    passes: &[Pass],
    (faults, unsure): (Vec<String>, &[String]),
    th: &Thresholds,
) -> Option<String> {
    let n_disks = passes.first().map(|p| p.disks.len()).unwrap_or(0);
    Some(match s.verdict {
        ArrayVerdict::Healthy if !s.rated.is_empty() => format!(
            "HEALTHY: no disk below {:.0}% of its peers or {:.0}% of its model's rating, and no read errors ({n_disks} disks, {} judged against their model's rating).",
            th.slow_pct,
            crate::judge::rated::RATED_PCT,
            s.rated.len()
        ),
        ArrayVerdict::Healthy => format!(
            "HEALTHY: no disk below {:.0}% of its peers and no read errors ({n_disks} disks).",
            th.slow_pct
        ),
        ArrayVerdict::NotJudged if s.not_compared.is_empty() => format!(
            "NOT JUDGED: no disk slow and no read errors, but {} could not be told slow or not, so health is not claimed (exit 3).",
            unsure.join("; ")
        ),
        ArrayVerdict::NotJudged => format!(
            "NOT JUDGED: no disk slow and no read errors, but {} of {n_disks} disks could not be compared with peers, so health is not claimed (exit 3).",
            s.not_compared.len()
        ),
        // Said first, with what was read and what was not.
        ArrayVerdict::Interrupted => return None,
        ArrayVerdict::Flagged => {
            format!("FLAGGED: {}.", flagged_names(s, passes, faults).join("; "))
        }
    })
}

/// What flagged the check, each in words: the disks `faults` names, the
/// links below their maximum, the disks below their rating, those the
/// random reads named and the groups held back by a path of their own.
fn flagged_names(s: &Summary, passes: &[Pass], faults: Vec<String>) -> Vec<String> {
    let mut named = faults;
    named.extend(s.links.iter().map(links::sentence));
    named.extend(s.rated.iter().filter(|r| r.below).map(|r| {
        format!(
            "{} reads {:.0}% of its model's rated {:.0} MB/s (see Disks to act on)",
            r.path, r.pct_of_rated, r.rated_mb_per_s
        )
    }));
    // A disk and kind once, whatever the depths that showed it.
    for f in &s.random {
        let said =
            format!("{} {} in the random reads (see Disks to act on)", f.path, f.kind.words());
        if !named.contains(&said) {
            named.push(said);
        }
    }
    named.extend(s.vibration.iter().map(|f| {
        let at = f.bay.as_ref().map(|b| format!(" (bay {b})")).unwrap_or_default();
        format!(
            "{}{at} loses {:.0}% of its random reads while its neighbours seek (see Disks to act on)",
            f.path, f.loss_pct
        )
    }));
    named.extend(s.kernel.iter().cloned());
    named.extend(own_paths(passes).iter().map(|g| {
        format!(
            "{} lose speed together through a path of their own (see SHARED PATH)",
            join_and(&g.disks)
        )
    }));
    named
}

/// The disks not compared with peers, by why: read too briefly, or
/// without a peer of their kind.
fn not_compared_sentences(s: &Summary, passes: &[Pass]) -> Vec<String> {
    let brief = |p: &&String| {
        passes
            .iter()
            .flat_map(|x| &x.disks)
            .any(|d| d.path == **p && d.window_elapsed_s < MIN_JUDGED_S)
    };
    let (short, alone): (Vec<&String>, Vec<&String>) = s.not_compared.iter().partition(brief);
    let join = |v: &[&String]| v.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    if !short.is_empty() {
        out.push(format!(
            "Not compared (read for under {MIN_JUDGED_S:.0} s, too short to judge; use a longer --sample or larger disks): {}.",
            join(&short)
        ));
    }
    if !alone.is_empty() {
        out.push(format!(
            "Not compared (no peer of the same model, size and kind to compare with; check it beside disks like it): {}.",
            join(&alone)
        ));
    }
    out
}

/// What the parallel pass says of the array: a controller or a shared
/// bottleneck that limits it, or none.
fn parallel_sentence(s: &Summary, passes: &[Pass]) -> Option<String> {
    let (f, ss, p) = (s.parallel_pct_of_serial_sum?, s.serial_sum_mb_per_s?, s.parallel_mb_per_s?);
    let med = s.median_pct_of_serial.unwrap_or(0.0);
    if let Some(named) = controller_sentence(passes) {
        return Some(named);
    }
    let groups = group_sentences(passes);
    let array = if s.shared_bottleneck {
        format!(
            "SHARED BOTTLENECK: all disks lose speed together in parallel (median disk keeps {med:.0}% of its solo speed): \
             the array delivers {p:.0} MB/s, {f:.0}% of the {ss:.0} MB/s the disks read alone; the controller, expander, \
             bus or CPU is the limit, not the disks."
        )
    } else {
        format!(
            "No shared bottleneck: in parallel the array delivers {p:.0} MB/s, {f:.0}% of the serial sum."
        )
    };
    Some(match groups {
        Some(g) => format!("{g} {array}"),
        None => array,
    })
}

/// "CONTROLLER BOTTLENECK: the 8 disks on X kept 61% of their serial
/// speed; the 4 on Y kept 99%: ...", when the parallel pass found one.
fn controller_sentence(passes: &[Pass]) -> Option<String> {
    let c = &passes.iter().find(|p| p.kind == PassKind::Parallel)?.controllers;
    if !c.iter().any(|x| x.limited) {
        return None;
    }
    let mut sorted: Vec<&ControllerRow> = c.iter().collect();
    sorted.sort_by_key(|x| !x.limited);
    let each: Vec<String> = sorted
        .iter()
        .enumerate()
        .map(|(i, x)| {
            format!(
                "the {} disk(s) on {} kept {:.0}%{}",
                x.disks.len(),
                x.controller,
                x.kept_pct_of_serial,
                if i == 0 { " of their serial speed" } else { "" }
            )
        })
        .collect();
    let limited: Vec<&str> = sorted.iter().filter(|x| x.limited).map(|x| x.pci.as_str()).collect();
    Some(format!(
        "CONTROLLER BOTTLENECK: {}: {} (or its PCIe link, cabling or firmware) limits the disks behind it, not the disks.",
        each.join("; "),
        limited.join(" and ")
    ))
}

/// Each disk with a rating for its model (its model as sysfs gives it,
/// else as it declared it to smartctl) and a clean serial speed, judged
/// against it; and the peer groups all below theirs, with the ceiling of
/// their first disk's slowest link.
fn against_ratings(on: Checked, serial: &[Option<f64>]) -> (Vec<AgainstRating>, Vec<SlowBatch>) {
    // A rating is the outer zone's: a sample spread over --spots is an
    // average across the disk, not comparable with it.
    if on.settings.spots > 1 {
        return (Vec::new(), Vec::new());
    }
    let model = |d: usize| {
        let dev = &on.devices[d];
        dev.identity.model.clone().or_else(|| {
            let i = on.inspection.iter().find(|i| i.path == dev.given)?;
            i.declared.model.clone()
        })
    };
    let models: Vec<Option<String>> = (0..on.devices.len()).map(model).collect();
    let disks: Vec<(&str, Option<&str>, Option<f64>)> = (0..on.devices.len())
        .map(|d| (on.devices[d].given.as_str(), models[d].as_deref(), serial[d]))
        .collect();
    let rated = crate::judge::rated::judge(&disks, &on.settings.ratings);
    let group = |r: &AgainstRating| {
        let d = on.devices.iter().position(|x| x.given == r.path).unwrap_or(0);
        on.groups[d]
    };
    let groups: Vec<usize> = rated.iter().map(group).collect();
    let ceiling = |path: &str| {
        let d = on.devices.iter().find(|x| x.given == path)?;
        links::ceiling(&d.identity.topology)
    };
    let batches = crate::judge::rated::batches(&rated, &groups, &ceiling);
    (rated, batches)
}

/// When the disks that lost speed together all sit behind one PCIe link
/// that runs below its maximum (their controller's, or a PCIe switch's
/// uplink): that link and what it can carry, and what the disks read
/// through it in the parallel pass.
fn shared_link_note(links: &[LinkFinding], passes: &[Pass], shared: bool) -> Option<String> {
    let par = passes.iter().find(|p| p.kind == PassKind::Parallel)?;
    // The disks limited together: all of them (a shared bottleneck), or
    // those of a limited controller.
    let limited: Vec<&str> = if shared {
        par.disks.iter().map(|d| d.path.as_str()).collect()
    } else {
        par.controllers
            .iter()
            .filter(|c| c.limited)
            .flat_map(|c| c.disks.iter().map(String::as_str))
            .collect()
    };
    // A shared PCIe link below its maximum that they, and only they, are
    // behind: their controller's, or a PCIe switch's uplink.
    let link = links.iter().find(|l| {
        l.controller
            && l.disks.len() == limited.len()
            && l.disks.iter().all(|d| limited.contains(&d.as_str()))
    })?;
    let read: f64 = par
        .disks
        .iter()
        .filter(|d| limited.contains(&d.path.as_str()))
        .map(|d| d.window_mb_per_s)
        .sum();
    let most = link.carries_mb_per_s?;
    let which = if link.switch {
        format!("The PCIe switch {}'s uplink", link.at)
    } else {
        format!("{}'s PCIe link", link.at)
    };
    let note = format!(
        "{which}, at {}, carries at most {most:.0} MB/s; the {} disk(s) behind it read {read:.0} MB/s together.",
        link.current,
        limited.len()
    );
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiting_controller_is_named_with_its_share() {
        let mut r = crate::report::fixture("demo");
        assert_eq!(controller_sentence(&r.passes), None, "no controllers known");
        let row = |pci: &str, disks: &[&str], kept: f64, limited: bool| ControllerRow {
            pci: pci.into(),
            controller: format!("{pci} (drv)"),
            disks: disks.iter().map(|d| d.to_string()).collect(),
            kept_pct_of_serial: kept,
            limited,
        };
        let par = r.passes.iter_mut().find(|p| p.kind == PassKind::Parallel).unwrap();
        par.controllers = vec![
            row("0000:00:17.0", &["/dev/sda", "/dev/sdb"], 99.0, false),
            row("0000:03:00.0", &["/dev/sdc", "/dev/sdd", "/dev/sde"], 61.0, true),
        ];
        assert_eq!(
            controller_sentence(&r.passes).unwrap(),
            "CONTROLLER BOTTLENECK: the 3 disk(s) on 0000:03:00.0 (drv) kept 61% of their serial speed; \
             the 2 disk(s) on 0000:00:17.0 (drv) kept 99%: 0000:03:00.0 (or its PCIe link, cabling or \
             firmware) limits the disks behind it, not the disks."
        );
    }
}

#[cfg(test)]
mod notes_tests {
    use crate::judge::groups::GroupPath;
    use crate::report::GroupRow;
    use crate::rundoc::Document;

    #[test]
    fn a_group_sharing_a_limit_reaches_the_run_document_as_notes() {
        let mut r = crate::report::fixture("demo");
        let par =
            r.passes.iter_mut().find(|p| p.kind == crate::measure::PassKind::Parallel).unwrap();
        let disks: Vec<String> = par.disks.iter().take(2).map(|d| d.path.clone()).collect();
        par.groups = vec![GroupRow {
            disks: disks.clone(),
            kept_pct_of_serial: 50.0,
            others: 2,
            others_kept_pct_of_serial: 99.0,
            together_pct_of_others: Some(51.0),
            together_low: Some(49.0),
            together_high: Some(53.0),
            alone_pct_of_serial: Some(98.0),
            alone_low: Some(96.0),
            alone_high: Some(99.0),
            rounds: 4,
            path: GroupPath::Shared,
            behind: None,
        }];
        let notes = r.document().notes;
        let said: Vec<&(String, String)> =
            notes.iter().filter(|(_, s)| s.starts_with("SHARED LIMIT, UNEVENLY SHARED:")).collect();
        assert_eq!(said.iter().map(|(d, _)| d.clone()).collect::<Vec<_>>(), disks, "{notes:?}");
        assert!(said[0].1.contains("they recover without the others"), "{}", said[0].1);
    }
}

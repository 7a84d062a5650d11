//! From `burnin` flags to a runnable burn-in: the disks resolved and
//! refused or accepted (`burnin::targets`), the checkpoints a `--resume`
//! continues proven to be of these disks, or a new run's made, outputs and
//! memory checked, the engine resolved. Every refusal happens here, before a
//! byte is written, and [`BurnPlan::resolve`] is the one place that reads
//! [`BurninArgs`].
//!
//! It must not write to a disk or run a step of the burn-in (`run::burnin`
//! runs the self-tests, the probes, the burning, SMART after and the
//! re-measurement), and must not judge. It reads only what a refusal rests
//! on: a resume's blocks (this disk's?), signatures (in use?), SMART
//! before the first byte (`--smart require` refuses a disk without it; the
//! checkpoint keeps it, to compare after).

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::{Result, bail};

use crate::burnin::block::{BLOCK, Pattern};
use crate::burnin::live::{Live, OnFile};
use crate::burnin::record::{DiskBurn, Span};
use crate::burnin::resume::Proof;
use crate::burnin::smart::TestKind;
use crate::burnin::state::{self, At, Checkpoint, Phase, Store};
use crate::burnin::targets::{Target, read_targets, refuse_signature, targets};
use crate::burnin::worker::BurnJob;
use crate::burnin::{DiskPlan, Looks, health};
use crate::cli::{BurnProgress, BurninArgs};
use crate::device::lock::DiskLock;
use crate::io::{Bounds, EngineKind};
use crate::stop::StopFlag;
use crate::units::rfc3339;

use super::burn_outputs::{
    RunOutputs, output_flags, outputs, refuse_outputs_in, resume_line, unwritten,
};
use super::settings::{began_with, given_flags, inherit, settings_of};
use super::verify::ThenVerify;
use crate::burnin::settings::Settings;

/// A burn-in ready to run: every disk accepted, its checkpoint (resumed or
/// new), and the options resolved.
pub struct BurnPlan {
    /// `--locate`: light the disks to act on at the end.
    pub locate: bool,
    /// Whether the capacity probe runs first (a fresh burn-in of whole
    /// disks: not a soak, a resume or a --range).
    pub probe_first: bool,
    /// What each drive declared of itself before the run (filled by the
    /// command).
    pub inspection: Vec<crate::judge::inspect::Inspected>,
    /// Each disk: where it is burned, and its checkpoint.
    pub disks: Vec<DiskPlan>,
    /// Held for the whole run: no other arrayburn writes these disks.
    pub locks: Vec<DiskLock>,
    /// Where checkpoints are kept (a soak keeps none).
    pub store: Option<Store>,
    pub state: PathBuf,
    /// Where its results go (`--json`, `--out`, `--metrics` while it runs
    /// and at the end, `--record`, `--ocp-diag`).
    pub outs: RunOutputs,
    pub engine: EngineKind,
    /// Requests in flight per disk.
    pub depth: usize,
    pub bounds_timeout: Duration,
    /// Nothing is written: a soak, or a verify.
    pub read_only: bool,
    /// `--verify`: a burn-in's blocks read back (`read_only` too).
    pub verify: bool,
    pub resume: bool,
    /// `--yes`: the plan is printed, not asked.
    pub yes: bool,
    pub checkpoint_every: Duration,
    /// `--smr-idle`: how long a disk whose writes collapsed idles before
    /// its burst.
    pub smr_idle: Duration,
    /// `--smr-probe`: how long the scattered-write probe writes before the
    /// first pass (zero: not run; a soak or a resume runs none).
    pub smr_probe: Duration,
    /// What the verdict's rules apply (`--stall-ms`).
    pub thresholds: crate::judge::Thresholds,
    /// A soak's `--duration`.
    pub duration: Option<Duration>,
    /// `--discard`: each disk left trimmed after the last read-back.
    pub discard: bool,
    /// A soak's `--passes`, as asked.
    pub passes: Option<u16>,
    /// A soak's read size.
    pub block: u64,
    /// `--smart-test`, and how long it may run.
    pub self_test: Option<(TestKind, Option<Duration>)>,
    /// `--smart-test-after`, and how long it may run.
    pub self_test_after: Option<(TestKind, Option<Duration>)>,
    pub looks: Looks,
    /// How long the run should take, as its plan said (set when it is
    /// shown).
    pub estimate: Option<crate::burnin::estimate::Estimate>,
    /// The command that continues this run where a signal stops it.
    pub resume_line: String,
    /// `--idle`, `--cycles` on a burn-in: a verify of its own after the
    /// passes.
    pub then_verify: Option<ThenVerify>,
    /// A resume's disks the run began with that it does not take up and
    /// that were not finished: each one's path and place.
    pub left_out: Vec<(String, String)>,
    /// Who is told when a disk is found bad, gone or hung, and at the end.
    pub notify: Option<crate::notify::Notifier>,
}

impl BurnPlan {
    /// Where the burn-in's result goes.
    pub fn outputs(&self) -> crate::output::Outputs<'_> {
        let o = &self.outs;
        let (json, metrics, ocp) = (o.json.as_ref(), o.metrics.as_ref(), o.ocp.as_ref());
        crate::output::Outputs { json, csv: None, out: o.out.as_deref(), metrics, ocp }
    }

    /// Resolves `args` into a plan, or refuses (one line, nothing written).
    pub fn resolve(args: &BurninArgs, argv: &[String], stop: &StopFlag) -> Result<Self> {
        check_flags(args).map_err(unwritten)?;
        if let Some(within) = args.wait_for_disks {
            let paths = crate::device::SystemPaths::real();
            let say = |w: &str| tell!("arrayburn burnin: {w}");
            crate::device::wait_for(&paths, &args.devices, within, &|| stop.is_set(), &say)
                .map_err(unwritten)?;
        }
        args.io.engine().map_err(unwritten)?;
        // The outputs given are refused here, before any disk is opened; a
        // resume's are resolved again with those of the run it goes on.
        let mut outs = outputs(output_flags(args, None))?;
        let found = found(args, argv, stop, &mut outs)?;
        // A resume runs as the run it goes on did, but for what its own
        // command line says.
        let told = given_flags(argv);
        let merged = found.first.as_ref().map(|f| inherit(args, &told, f));
        Self::of(merged.as_ref().unwrap_or(args), found, outs, &told)
    }

    /// The plan of `found` as `args` (a resume's merged with its
    /// checkpoint's settings) ask, its outputs `outs`; `told`: the flags
    /// its own command line gave.
    fn of(args: &BurninArgs, found: Found, outs: RunOutputs, told: &Told) -> Result<Self> {
        let Found { mut targets, locks, points, store, first } = found;
        let (engine, depth) = args.io.engine().map_err(unwritten)?;
        let judged = judged(args, first.as_ref());
        check_memory(&points, depth)?;
        crate::judge::links::settle(targets.iter_mut().map(|t| &mut t.dev.identity));
        let outputs = outs.given();
        let resume_line = go_on_line(args, (told, first.is_some()), &outputs, judged, &targets);
        let then_verify = then_verify(args, first.as_ref(), &outputs, judged, &targets)?;
        let resume = points.iter().any(|c| c.burn.resumes > 0);
        let left_out =
            left_out(store.as_ref().filter(|_| resume && !args.verify), &targets, &points);
        let nothing_written = nothing_written(args);
        Ok(Self {
            locate: args.locate,
            probe_first: !nothing_written && !resume && args.range.is_none(),
            inspection: Vec::new(),
            disks: (targets.into_iter().zip(points))
                .map(|(target, point)| DiskPlan { target, point })
                .collect(),
            locks,
            store,
            state: args.state.clone(),
            looks: looks(args, outs.metrics.is_some()),
            outs,
            engine,
            depth,
            bounds_timeout: args.io.io_timeout,
            read_only: nothing_written,
            verify: args.verify,
            resume,
            yes: args.yes,
            checkpoint_every: args.checkpoint_every,
            smr_idle: args.smr_idle,
            smr_probe: if nothing_written || resume { Duration::ZERO } else { args.smr_probe },
            thresholds: crate::judge::Thresholds::judging(judged),
            duration: args.duration,
            discard: args.discard && !nothing_written,
            passes: args.passes,
            block: args.io.block,
            // A resumed run (--resume-or-start) ran its self-test when it began.
            self_test: args.smart_test.filter(|_| !resume).map(|k| (k, args.smart_test_timeout)),
            self_test_after: args.smart_test_after.map(|k| (k, args.smart_test_timeout)),
            estimate: None,
            resume_line,
            then_verify,
            left_out,
            notify: super::notifier(&args.notify),
        })
    }

    /// `--deadline` fitted, once the plan's estimate `e` is known: each
    /// new disk whose full write-verify would outlast it (by the estimate,
    /// or where its speed is not known) is burned in stripes; what the
    /// deadline covers of each disk, a line each (none without a
    /// deadline, nor for a disk resumed whole); the estimate in all is then
    /// the deadline's.
    pub fn fit_deadline(&mut self, e: &mut crate::burnin::estimate::Estimate) -> Vec<String> {
        use crate::burnin::stripes::{Stripes, WHOLE_WITHIN};
        use crate::units::human_secs as took;
        let Some(ends) = self.looks.deadline else { return Vec::new() };
        let left = ends.saturating_duration_since(std::time::Instant::now());
        let mut said = Vec::new();
        for d in &mut self.disks {
            let (c, path) = (&mut d.point, d.target.dev.given.as_str());
            let len = c.end_byte - c.start_byte;
            let full = e.disks.iter().find(|x| x.path == path).map(|x| x.left_s);
            if c.burn.stripes.is_none() {
                if let Some(s) = full.filter(|s| s * WHOLE_WITHIN <= left.as_secs_f64()) {
                    said.push(format!(
                        "{path}: its full write-verify (about {}) fits the deadline ({} left): burned whole",
                        took(s),
                        took(left.as_secs_f64())
                    ));
                    continue;
                }
                let per_byte = full.map(|s| s / len as f64);
                c.burn.stripes = Some(Stripes::planned(len, c.io_bytes, per_byte, left));
            }
            let Some(s) = c.burn.stripes else { continue };
            e.all_s = e.all_s.min(left.as_secs_f64());
            let covers = covers(&s, (c.start_byte, c.end_byte), full, left);
            said.push(format!("{path}: {covers}; the rest with --resume"));
        }
        said
    }

    /// What the burn-in will cost each solid-state disk's endurance, a
    /// line each (by what it has left to write: under a deadline, at most
    /// that).
    pub fn wear_lines(&self) -> Vec<String> {
        let each = self.disks.iter().filter(|_| !self.read_only).filter_map(|d| {
            let c = &d.point;
            let w = c.smart_before.as_ref()?.wear?;
            let bytes = c.left().0;
            let now = w
                .used_pct
                .map_or("its percentage used not said".into(), |u| format!("{u} % used now"));
            let after = match w.after_writing(bytes) {
                Some(a) => format!("about {a:.1} % after, at the rate its own counters show"),
                None => "what that uses of its rated endurance is said after the run".into(),
            };
            let bytes = crate::units::human_bytes(bytes);
            Some(format!(
                "{}: a solid-state disk: writes {bytes} to it, {now}; {after}",
                d.target.dev.given
            ))
        });
        each.collect()
    }

    /// How long a soak reads, in words.
    pub fn soak_length(&self) -> String {
        let human = crate::units::human_duration;
        match (self.duration, self.passes) {
            (Some(d), None) => format!("passes for {}", human(d)),
            (Some(d), Some(n)) => format!("{n} pass(es) or {}, whichever ends first", human(d)),
            (None, _) => format!("{} pass(es)", self.disks[0].point.passes),
        }
    }

    /// The bounds of every wait for a disk: this stop, `--io-timeout`.
    pub fn bounds(&self, stop: &StopFlag) -> Bounds {
        Bounds::new(stop, self.bounds_timeout)
    }

    /// Disk `d`'s job as the plan asks it (`on`: its file and engine): a
    /// burn-in's from its checkpoint, or a soak's (until `deadline`, when
    /// run by time).
    pub fn job<'a>(
        &self,
        (d, on): (&DiskPlan, &'a dyn crate::burnin::live::DiskIo),
        live: &'a Live,
        deadline: Option<std::time::Instant>,
        stop: &'a StopFlag,
    ) -> BurnJob<'a> {
        let (t, c) = (&d.target, &d.point);
        let (io, pattern, run, every) = if self.read_only && !self.verify {
            (self.block as usize, Pattern::Blocks, 0, Duration::MAX)
        } else {
            let run = c.run_number().unwrap_or_default();
            (c.io_bytes as usize, c.pattern, run, self.checkpoint_every)
        };
        BurnJob {
            t: Span::of(t),
            on,
            io,
            passes: c.passes,
            pattern,
            run,
            version: c.block_version,
            stop,
            live,
            every,
            deadline,
            bounds: self.bounds(stop),
        }
    }

    /// After a stop: how the run goes on (a burn-in from each disk's saved
    /// place; a soak's report covers what it read).
    pub fn how_to_go_on(&self) -> String {
        if self.read_only && !self.verify {
            return "the report covers the passes read so far".into();
        }
        // The command on a line of its own: a terminal never breaks it.
        format!(
            "each disk's place is saved in {}; continue with:\n  {}",
            self.state.display(),
            self.resume_line
        )
    }

    /// Disk `d`'s file as the plan reads and writes it.
    pub fn on<'a>(&self, d: &'a DiskPlan) -> OnFile<'a> {
        OnFile { file: &d.target.file, engine: self.engine, depth: self.depth }
    }

    /// The warnings for a `--smart-test-timeout` shorter than a drive's
    /// own stated time for its self-test, before or after the passes.
    pub fn self_test_warnings(&self) -> Vec<String> {
        let tests = [self.self_test, self.self_test_after];
        (tests.iter().flatten())
            .flat_map(|(kind, given)| {
                self.disks.iter().filter_map(|d| health::Drive::of(d).too_short(*kind, *given))
            })
            .collect()
    }
}

/// The flags a command line gave (clap's ids: `progress_interval`).
type Told = HashSet<String>;

/// What a burn-in found to run on: its disks, their locks and
/// checkpoints, where those are kept (a soak keeps none), and the settings
/// of the run a resume goes on.
struct Found {
    targets: Vec<Target>,
    locks: Vec<DiskLock>,
    points: Vec<Checkpoint>,
    store: Option<Store>,
    first: Option<Settings>,
}

/// The disks `args` name and their checkpoints: a soak's new, a verify's
/// (a resumed one's settings read), a burn-in's (`to_write`); `outs`
/// resolved again where a resume takes its run's.
fn found(
    args: &BurninArgs,
    argv: &[String],
    stop: &StopFlag,
    outs: &mut RunOutputs,
) -> Result<Found> {
    if args.read_only {
        let (targets, locks) =
            read_targets(&args.devices, args.range.as_deref(), args.ignore_lock)?;
        let points = fresh(&targets, args, argv, stop)?;
        return Ok(Found { targets, locks, points, store: None, first: None });
    }
    if args.verify {
        let (targets, locks, points, store) = super::verify::to_verify(args, argv, stop)?;
        let first = points.first().filter(|_| args.resume).and_then(began_with);
        if first.is_some() {
            *outs = outputs(output_flags(args, first.as_ref()))?;
        }
        refuse_outputs_in(&args.state, outs)?;
        return Ok(Found { targets, locks, points, store: Some(store), first });
    }
    let (targets, locks, points, store, first) = to_write(args, argv, stop, outs)?;
    Ok(Found { targets, locks, points, store: Some(store), first })
}

/// The command that continues the run: what it must say is only what
/// this run was told (`told`) that the checkpoint's run was not (where
/// `resumed`; a fresh run's checkpoint holds all of its own), and how it
/// was watched, where told.
fn go_on_line(
    args: &BurninArgs,
    (told, resumed): (&Told, bool),
    outputs: &[(&'static str, Option<PathBuf>)],
    judged: (f64, u64),
    targets: &[Target],
) -> String {
    let changed = |flag: &str| {
        let watched = ["progress", "progress-interval"].contains(&flag);
        told.contains(&flag.replace('-', "_")) && (resumed || watched)
    };
    resume_line(args, outputs, judged, targets, &changed)
}

/// How the run judges (`--slow-pct` as asked, `--stall-ms`): as `args`
/// say, else as the run a resume goes on (`first`) did, else the defaults.
fn judged(args: &BurninArgs, first: Option<&Settings>) -> (f64, u64) {
    let slow_pct = (args.slow_pct_asked())
        .or(first.and_then(|f| f.slow_pct))
        .unwrap_or(crate::defaults::SLOW_PCT);
    let stall_ms = (args.stall_ms).or(first.and_then(|f| f.stall_ms));
    (slow_pct, stall_ms.unwrap_or(crate::defaults::STALL_MS))
}

/// The verify that follows the passes, where asked (not after a soak or a
/// verify), refused where its spin-downs need a program a disk lacks.
fn then_verify(
    args: &BurninArgs,
    first: Option<&Settings>,
    outputs: &[(&'static str, Option<PathBuf>)],
    judged: (f64, u64),
    targets: &[Target],
) -> Result<Option<ThenVerify>> {
    if nothing_written(args) {
        return Ok(None);
    }
    let then = ThenVerify::of(args, first, outputs, judged)?;
    if then.as_ref().is_some_and(|v| v.spins) {
        let missing = targets.iter().find_map(|t| crate::burnin::cycle::missing_tool(&t.dev));
        missing.map_or(Ok(()), |why| Err(anyhow::anyhow!(why)))?;
    }
    Ok(then)
}

/// How the run is watched: SMART how often, progress lines or a table (on
/// a terminal, unless quiet), and metrics while it runs where `metrics`
/// are written (also where a resume inherits them).
/// What a deadline `left` from now covers of stripes `s` over `range`
/// (burned before as they say), whose full write-verify takes `full`
/// seconds where known.
fn covers(
    s: &crate::burnin::stripes::Stripes,
    range: (u64, u64),
    full: Option<f64>,
    left: Duration,
) -> String {
    use crate::burnin::stripes::grouped;
    use crate::units::human_secs as took;
    let now = s.coverage(range);
    let from = match now.stripes {
        0 => String::new(),
        n => format!(" from {} ({:.1} % burned)", grouped(n), now.pct),
    };
    let covers = match full.filter(|f| *f > 0.0) {
        Some(f) => format!(
            "about {:.0} % more of it by the deadline, its full write-verify taking about {}",
            (100.0 - now.pct) * (left.as_secs_f64() / f).min(1.0),
            took(f)
        ),
        None => "as many as the deadline allows (its speed is not known)".into(),
    };
    let size = crate::units::human_bytes_binary(s.size);
    format!(
        "{} stripes of {size}{from}, coarse first over the whole range: {covers}",
        grouped(s.slots)
    )
}

/// How the run is watched and shown; `--deadline` counted from now.
fn looks(args: &BurninArgs, metrics: bool) -> Looks {
    let deadline = args.deadline.map(|d| std::time::Instant::now() + d);
    let every = args.progress_interval;
    let progress = match args.progress {
        _ if args.chatter.quiet => None,
        BurnProgress::None => None,
        BurnProgress::Lines => Some((every, false)),
        BurnProgress::Table => Some((every, true)),
        BurnProgress::Auto => Some((every, std::io::stderr().is_terminal())),
    };
    let ticks = metrics.then_some(every);
    Looks { smart_every: args.smart_every, progress, read_mb_per_s: Vec::new(), ticks, deadline }
}

/// Refuses a `--block`, `--passes`, `--stall-ms` or `--slow-pct` the
/// burn-in cannot use, and a bad `--io-timeout`.
fn check_flags(args: &BurninArgs) -> Result<()> {
    let block = args.io.block;
    if block == 0 || !block.is_multiple_of(BLOCK as u64) || block > 1 << 30 {
        bail!("--block {block}: give a multiple of 4 KiB up to 1g (the default is 4m)");
    }
    if args.passes == Some(0) {
        bail!("--passes 0: give at least 1");
    }
    if args.stall_ms == Some(0) {
        bail!("--stall-ms 0: give at least 1 (the default is {})", crate::defaults::STALL_MS);
    }
    // 0: --not-against-peers's old spelling (noted where it is read).
    if let Some(pct) = args.slow_pct.filter(|p| !(*p >= 0.0 && *p < 100.0)) {
        bail!(
            "--slow-pct {pct} must be between 0 and 100 (the default is {}; --not-against-peers judges no speed against peers)",
            crate::defaults::SLOW_PCT
        );
    }
    super::check_io_timeout(args.io.io_timeout).map_err(anyhow::Error::msg)
}

/// A destructive run's disks, their locks, their checkpoints and the
/// checkpoints' store; for a resume, the options of the run it goes on.
type ToWrite = (Vec<Target>, Vec<DiskLock>, Vec<Checkpoint>, Store, Option<Settings>);

/// What a destructive run writes: its disks (locked), their checkpoints
/// (found for a resume, else fresh, a disk with a filesystem or RAID
/// signature refused unless `--wipe-signatures`) and the checkpoints'
/// store. A resume finishes the outputs the run began with, unless told
/// others; no one at a terminal to confirm needs `--yes`.
fn to_write(
    args: &BurninArgs,
    argv: &[String],
    stop: &StopFlag,
    outs: &mut RunOutputs,
) -> Result<ToWrite> {
    let (mut targets, locks) =
        targets(&args.devices, args.destructive, (args.range.as_deref(), args.ignore_lock), stop)?;
    let store = state_store(&args.state)?;
    let found = checkpoints(&store, &mut targets, args, stop)?;
    let first = found.as_ref().and_then(|p| began_with(&p[0]));
    if first.is_some() {
        *outs = outputs(output_flags(args, first.as_ref()))?;
    }
    refuse_outputs_in(&args.state, outs)?;
    if !args.yes && !std::io::stdin().is_terminal() {
        bail!(
            "standard input is not a terminal, so no one can confirm: add --yes to burn in {} disk(s) from a script (nothing was written)",
            targets.len()
        );
    }
    let points = match found {
        Some(points) => points,
        None => {
            if !args.wipe_signatures {
                for t in &targets {
                    refuse_signature(&t.dev, &Bounds::new(stop, args.io.io_timeout))?;
                }
            }
            fresh(&targets, args, argv, stop)?
        }
    };
    check_wear(&points, args.max_wear)?;
    Ok((targets, locks, points, store, first))
}

/// `--max-wear PCT`: a solid-state disk whose percentage used is at PCT
/// already, or that the bytes this run has left to write would take past
/// it at the rate its own counters show, is refused (nothing written).
fn check_wear(points: &[Checkpoint], max: Option<f64>) -> Result<()> {
    let Some(max) = max else { return Ok(()) };
    for c in points {
        let Some(w) = c.smart_before.as_ref().and_then(|s| s.wear) else { continue };
        let bytes = c.left().0;
        if let Some(now) = w.used_pct.filter(|u| *u as f64 >= max) {
            bail!(
                "--max-wear {max}: {} has used {now} % of its rated endurance already (its own percentage used); burn it in only with a higher --max-wear (nothing was written)",
                c.device
            );
        }
        if let Some(after) = w.after_writing(bytes).filter(|a| *a > max) {
            bail!(
                "--max-wear {max}: writing {} to {} would take it from {} % to about {after:.1} % of its rated endurance (at the rate its own counters show); burn fewer --passes or a --range, or raise --max-wear (nothing was written)",
                crate::units::human_bytes(bytes),
                c.device,
                w.used_pct.unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// The disks a resumed run began with, not among `targets`, whose burn-in
/// is not finished: each one's path (as checkpointed) and place (none
/// without `store`: a fresh run, or a verify).
fn left_out(
    store: Option<&Store>,
    targets: &[Target],
    points: &[Checkpoint],
) -> Vec<(String, String)> {
    let (Some(store), Some(run)) = (store, points.first().map(|c| &c.run_id)) else {
        return Vec::new();
    };
    let taken: Vec<&str> = targets.iter().map(|t| t.checkpoint.as_str()).collect();
    (store.all().into_iter())
        .filter(|(name, c)| {
            &c.run_id == run && c.at.phase != Phase::Done && !taken.contains(&name.as_str())
        })
        .map(|(name, c)| {
            (c.device.clone(), format!("{}; checkpoint {}", c.place(), store.path(&name).display()))
        })
        .collect()
}

/// A soak or a verify: nothing is written to the disks (not even a
/// probe's blocks).
fn nothing_written(args: &BurninArgs) -> bool {
    args.read_only || args.verify
}

/// Refuses buffers beyond the memory the run may have: each disk's phase
/// holds its queue depth of blocks and one more (the one being filled or
/// checked), all disks at once. A resume's block is its
/// checkpoint's; the one asked for is checked here (at most the same).
fn check_memory(points: &[Checkpoint], depth: usize) -> Result<()> {
    let (per_disk, disks) = (depth as u64 + 1, points.len() as u64);
    let block = points.first().map_or(0, |c| c.io_bytes);
    let shown = crate::units::human_bytes_binary(block);
    let what = format!("{per_disk} × {shown} per disk, {disks} disk(s)");
    let flags = format!("--block {shown} --queue-depth {depth}");
    let lower = (flags.as_str(), "--block or --queue-depth");
    crate::memory::refuse_beyond(per_disk * block * disks, &what, lower).map_err(unwritten)
}

/// Makes `--state DIR` if it is missing and proves checkpoints can be
/// written there, before anything is written to a disk.
fn state_store(dir: &std::path::Path) -> Result<Store> {
    Store::open(dir).map_err(|e| {
        anyhow::anyhow!(
            "--state {}: cannot keep checkpoints there ({e}); give a writable directory with --state (nothing was written)",
            dir.display()
        )
    })
}

/// The checkpoints a `--resume` continues (every disk must have its own,
/// of one run, valid in every field, made for this disk by what it says
/// of itself and by the run's blocks read back from it); a disk whose
/// checkpoint names nothing written yet is then checked for signatures
/// as a new one. The targets take the checkpoints' ranges and block
/// identities. Without `--resume`, a disk whose burn-in is unfinished is
/// refused rather than started over.
fn checkpoints(
    store: &Store,
    targets: &mut [Target],
    args: &BurninArgs,
    stop: &StopFlag,
) -> Result<Option<Vec<Checkpoint>>> {
    let mut found = Vec::new();
    let resume = args.resume || (args.resume_or_start && any_to_resume(store, targets)?);
    for t in targets.iter_mut() {
        let (name, c) = store.find(t)?;
        let path = store.path(&name);
        match (c, resume) {
            (None, true) => bail!(
                "--resume: {} has no checkpoint in {} (looked for {}); start its burn-in without --resume (nothing was written)",
                t.dev.given,
                args.state.display(),
                path.display()
            ),
            (Some(c), true) => found.push(resumed(c, (t, name, &path), args, stop)?),
            (Some(c), false) if args.resume_or_start => bail!(
                "--resume-or-start: {}'s burn-in (run {}) is done, as checkpointed in {}: nothing is burned twice (its report is in {}); move that file away to burn it in again (nothing was written)",
                t.dev.given,
                c.run_id,
                path.display(),
                args.state.join(crate::burnin::state::RUNS).display()
            ),
            (Some(c), false) if c.at.phase != Phase::Done => bail!(
                "{} has an unfinished burn-in ({}) checkpointed in {}: add --resume to continue it, or move that file away to start over (nothing was written)",
                t.dev.given,
                c.place(),
                path.display()
            ),
            (_, false) => {}
        }
    }
    if !resume {
        return Ok(None);
    }
    if let Some(other) = found.iter().find(|c| c.run_id != found[0].run_id) {
        bail!(
            "--resume: {} and {} were checkpointed by different burn-ins; resume each on its own (nothing was written)",
            found[0].device,
            other.device
        );
    }
    Ok(Some(found))
}

/// A resume's checkpoint `c` of target `t` (its file `name` at `path`),
/// proven to be of this disk (its identity, then its blocks): `t` set to
/// the checkpoint's range and names, the resume counted. Refused, nothing
/// written, where the disk does not answer as it did, the file is damaged,
/// or the disk is another; a disk nothing was written to yet is refused
/// where it holds a signature (not with `--wipe-signatures`).
fn resumed(
    mut c: Checkpoint,
    (t, name, path): (&mut Target, String, &std::path::Path),
    args: &BurninArgs,
    stop: &StopFlag,
) -> Result<Checkpoint> {
    let id = &t.dev.identity;
    if id.size_bytes == 0 {
        bail!(
            "--resume: {} answers with a size of 0 bytes (its checkpoint was made when it had {}): the disk is not answering as it did (dead, not spun up, its link or power down, or formatted to a sector size Linux does not take); check it with `arrayburn list` and the kernel log (dmesg); its checkpoint in {} is kept for when it answers again (nothing was written)",
            t.dev.given,
            c.size_bytes,
            path.display()
        );
    }
    // The file is judged by the disk it was made for: a disk
    // that answers otherwise now is told apart below.
    // A later arrayburn's run is not damaged: that arrayburn resumes it.
    c.check_settings().map_err(|why| unwritten(format!("--resume: {}: {why}", path.display())))?;
    if let Err(why) = c.validate(c.size_bytes, id.logical_block_size) {
        bail!(
            "--resume: {}: {why}; the file is damaged or was edited: move it away and start a new burn-in without --resume (nothing was written)",
            path.display()
        );
    }
    let not_it = |why: String| {
        anyhow::anyhow!(
            "--resume: {} is not the disk checkpointed in {}: {why}; if it is another disk, move that file away and start a new burn-in without --resume (nothing was written)",
            t.dev.given,
            path.display()
        )
    };
    c.matches(&t.dev).map_err(not_it)?;
    begun_whole(&c, &t.dev.given, args)?;
    (t.start, t.end) = (c.start_byte, c.end_byte);
    t.disk = c.disk_hash.unwrap_or(t.disk);
    t.checkpoint = name;
    let run = c.run_number().unwrap_or_default();
    let bounds = Bounds::new(stop, args.io.io_timeout);
    let proof = crate::burnin::resume::prove(t, &c, run, &bounds).map_err(not_it)?;
    if proof == Proof::NothingWritten && !args.wipe_signatures {
        refuse_signature(&t.dev, &bounds)?;
    }
    c.burn.resumes += 1;
    Ok(c)
}

/// A `--deadline` refused on the resume of `c` (of disk `path`), a burn-in
/// begun whole: its order is not the stripes'.
fn begun_whole(c: &Checkpoint, path: &str, args: &BurninArgs) -> Result<()> {
    if args.deadline.is_none() || c.burn.stripes.is_some() {
        return Ok(());
    }
    bail!(
        "--deadline: {path}'s burn-in (run {}) was begun whole, without a deadline, and is at {}: resume it without --deadline (nothing was written)",
        c.run_id,
        c.place()
    )
}

/// Whether any of `targets` has an unfinished burn-in checkpointed in
/// `store` (`--resume-or-start` then resumes; one without is refused).
fn any_to_resume(store: &Store, targets: &[Target]) -> Result<bool> {
    for t in targets {
        if store.find(t)?.1.is_some_and(|c| c.at.phase != Phase::Done) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The checkpoints of a new burn-in: a fresh run id, SMART as it is now.
fn fresh(
    targets: &[Target],
    args: &BurninArgs,
    argv: &[String],
    stop: &StopFlag,
) -> Result<Vec<Checkpoint>> {
    let before = health::smart_before(targets, args.smart, &|| stop.is_set())?;
    let run = state::fresh_id();
    let started = rfc3339(SystemTime::now());
    let passes = passes(args);
    Ok(targets
        .iter()
        .zip(before)
        .map(|(t, smart)| {
            let id = &t.dev.identity;
            let (smart_before, smart_note) = health::split(smart);
            Checkpoint {
                format: state::FORMAT,
                run_id: run.clone(),
                started_at: started.clone(),
                saved_at: started.clone(),
                device: t.dev.given.clone(),
                name: Some(id.name.clone()),
                by_id: id.by_id.clone(),
                serial: id.serial.clone(),
                wwn: id.wwn.clone(),
                model: id.model.clone(),
                size_bytes: id.size_bytes,
                disk_hash: Some(t.disk),
                start_byte: t.start,
                end_byte: t.end,
                passes,
                io_bytes: args.io.block,
                pattern: args.pattern,
                block_version: crate::burnin::block::VERSION,
                command_line: argv.to_vec(),
                settings: Some(settings_of(args)),
                at: At::first(t.start),
                burn: DiskBurn::default(),
                smart_before,
                smart_note,
                self_test: None,
                probe: None,
                scattered: None,
                verifies: None,
            }
        })
        .collect())
}

/// The passes a new run makes: as asked, else a soak by time until its
/// time is up, a soak's default, or the pattern's.
fn passes(args: &BurninArgs) -> u16 {
    args.passes.unwrap_or(match (args.read_only, args.duration) {
        (true, Some(_)) => state::PASSES_BY_TIME,
        (true, None) => crate::defaults::SOAK_PASSES,
        (false, _) => args.pattern.default_passes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> BurninArgs {
        use clap::Parser;
        let words = format!("arrayburn burnin {line} /dev/sdb");
        match crate::cli::Cli::parse_from(words.split(' ')).command {
            crate::cli::Command::Burnin(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_run_judges_as_told_else_as_the_run_it_goes_on_else_by_default() {
        let defaults = (crate::defaults::SLOW_PCT, crate::defaults::STALL_MS);
        assert_eq!(judged(&args(""), None), defaults);
        let first =
            super::super::settings::settings_of(&args("--not-against-peers --stall-ms 9000"));
        assert_eq!(judged(&args("--resume"), Some(&first)), (0.0, 9000), "the run it goes on");
        let own = args("--resume --slow-pct 60");
        assert_eq!(judged(&own, Some(&first)), (60.0, 9000), "its own --slow-pct, the rest kept");
    }

    #[test]
    fn how_a_run_is_watched_follows_its_flags() {
        let quiet = looks(&args("-q --progress lines"), false);
        assert_eq!((quiet.progress, quiet.ticks), (None, None), "-q says no progress");
        let lines = looks(&args("--progress lines --progress-interval 5s"), true);
        let five = std::time::Duration::from_secs(5);
        assert_eq!((lines.progress, lines.ticks), (Some((five, false)), Some(five)));
        assert_eq!(looks(&args("--progress table"), false).progress.map(|p| p.1), Some(true));
    }
}

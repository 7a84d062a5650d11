//! `arrayburn burnin --destructive DEVICE...`: plan (every refusal before a
//! byte is written), confirm, burn every disk at once (one thread each),
//! judge, report.

use std::io::{BufRead, IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use super::Outcome;
use crate::burnin::block::BLOCK;
use crate::burnin::block::Pattern;
use crate::burnin::plan::{Target, read_targets, refuse_signature, targets};
use crate::burnin::report::{BurnDisk, BurnReport, BurnSummary, class_words, render, speed};
use crate::burnin::resume::Proof;
use crate::burnin::smart::{
    self, DriveKind, Kind, SelfTest, SmartChange, Snapshot, TempLimits, TestKind,
};
use crate::burnin::state::{self, At, Checkpoint, Phase, Store};
use crate::burnin::worker::{Class, DiskBurn, Job, Live, Stage, burn, sample_speed, soak};
use crate::cli::{BurnProgress, BurninArgs, SmartMode};
use crate::io::{Bounds, EngineKind};
use crate::judge::Thresholds;
use crate::judge::advice::DiskAdvice;
use crate::judge::burnin::{BurnFacts, verdicts};
use crate::measure::StopFlag;
use crate::output::Output;
use crate::units::{human_bytes, human_duration, rfc3339};

/// Runs the burn-in.
pub fn run(args: &BurninArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    if args.block == 0 || !args.block.is_multiple_of(BLOCK as u64) || args.block > 1 << 30 {
        bail!(
            "--block {}: give a multiple of 4 KiB up to 1g (the default is 4m)",
            args.block
        );
    }
    if args.passes == Some(0) {
        bail!("--passes 0: give at least 1");
    }
    crate::plan::check_io_timeout(args.io_timeout).map_err(anyhow::Error::msg)?;
    let (engine, depth) = engine(args)?;
    let (mut json, mut out) = outputs(args.json.as_deref(), args.out.as_deref())?;
    if args.read_only {
        return soak_run(args, &argv, json, (engine, depth), stop);
    }
    let (mut targets, _locks) = targets(
        &args.devices,
        args.destructive,
        args.range.as_deref(),
        args.ignore_lock,
    )?;
    let store = state_store(&args.state)?;
    let found = checkpoints(&store, &mut targets, args, stop)?;
    // A resume finishes the outputs the run began with, unless told others.
    if let Some(first) = found.as_ref().and_then(|p| began_with(&p[0])) {
        let (j, o) = outputs(
            args.json.as_deref().or(first.json.as_deref()),
            args.out.as_deref().or(first.out.as_deref()),
        )?;
        (json, out) = (j, o);
    }
    refuse_outputs_in(&args.state, json.as_ref(), out.as_deref())?;
    if !args.yes && !std::io::stdin().is_terminal() {
        bail!(
            "standard input is not a terminal, so no one can confirm: add --yes to burn in {} disk(s) from a script (nothing was written)",
            targets.len()
        );
    }
    let points: Vec<Checkpoint> = match found {
        Some(points) => points,
        None => {
            if !args.wipe_signatures {
                for t in &targets {
                    refuse_signature(&t.dev, &Bounds::new(stop, args.io_timeout))?;
                }
            }
            fresh(&targets, args, &argv, stop)?
        }
    };
    check_memory(&points, depth)?;
    if !confirm(&targets, &points, args, stop)? || stop.is_set() {
        tell!("arrayburn burnin: interrupted before the burn-in began; nothing was written");
        return Ok(Outcome::Interrupted);
    }
    let mut points = points;
    if self_tests_first(&targets, &mut points, args, stop) {
        return Ok(self_tests_interrupted());
    }
    for (t, c) in targets.iter().zip(&points) {
        store.save(&t.checkpoint, c).with_context(|| {
            format!(
                "--state {}: cannot save a checkpoint; give a writable directory (nothing was written)",
                args.state.display()
            )
        })?;
    }
    let first = &points[0];
    let run = first.run().unwrap_or_default();
    let pattern = first.pattern;
    let (passes, io) = (first.passes, first.io_bytes as usize);
    let every = Duration::from_secs(args.checkpoint_every);
    let (burns, temps) = run_all(
        &targets,
        &points,
        None,
        Looks::of(args),
        stop,
        |t, live, c| {
            let job = Job {
                t,
                io,
                passes,
                pattern,
                run,
                stop,
                live,
                every,
                deadline: None,
                engine,
                depth,
                bounds: Bounds::new(stop, args.io_timeout),
            };
            let path = store.path(&t.checkpoint);
            let mut warned = false;
            let mut save = |b: &DiskBurn, at: At| {
                let now = Checkpoint {
                    saved_at: rfc3339(SystemTime::now()),
                    at,
                    burn: b.clone(),
                    ..c.clone()
                };
                if let Err(e) = store.save(&t.checkpoint, &now)
                    && !std::mem::replace(&mut warned, true)
                {
                    tell!(
                        "arrayburn burnin: warning: {}: cannot save its checkpoint ({e}); the burn-in goes on, but cannot be resumed from here",
                        path.display()
                    );
                }
            };
            let mut burn_from = c.burn.clone();
            burn_from.interrupted = false;
            burn(&job, c.at, burn_from, &mut save)
        },
    );
    let interrupted = stop.is_set() || burns.iter().any(|b| b.interrupted);
    let smart = smart_after(&targets, &points, interrupted, stop);
    // A signal while SMART was read: the run is not finished either.
    let interrupted = interrupted || stop.is_set();
    let mut report = report(&targets, &points, burns, smart, temps, interrupted, false);
    engine_of(&mut report, (engine, depth));
    let outcome = publish(&report, json.as_ref(), out.as_deref())?;
    if interrupted {
        tell!(
            "arrayburn burnin: interrupted; each disk's place is saved in {}: continue with: {}",
            args.state.display(),
            resume_line(args, json.as_ref(), out.as_deref(), &targets)
        );
    }
    Ok(outcome)
}

/// `--json FILE` and `--out DIR`, resolved and proven writable.
fn outputs(
    json: Option<&std::path::Path>,
    out: Option<&std::path::Path>,
) -> anyhow::Result<(Option<Output>, Option<std::path::PathBuf>)> {
    let json = json
        .map(|p| Output::resolve("--json", p, true))
        .transpose()
        .map_err(|e| anyhow::anyhow!("{e} (nothing was written)"))?;
    if let Some(dir) = out {
        crate::plan::check_output_dir(dir)
            .map_err(|e| anyhow::anyhow!("{e} (nothing was written)"))?;
    }
    Ok((json, out.map(std::path::Path::to_path_buf)))
}

/// The options of the command line that began a checkpointed run.
fn began_with(c: &Checkpoint) -> Option<BurninArgs> {
    use clap::Parser;
    match crate::cli::Cli::try_parse_from(&c.command_line)
        .ok()?
        .command
    {
        crate::cli::Command::Burnin(a) => Some(a),
        _ => None,
    }
}

/// The command that continues an interrupted burn-in as it ran: its state,
/// outputs, progress, checkpoint, SMART, timeout and engine options, and
/// its disks (each shell-quoted).
fn resume_line(
    args: &BurninArgs,
    json: Option<&Output>,
    out: Option<&std::path::Path>,
    targets: &[Target],
) -> String {
    let secs = |d: Duration| {
        let s = d.as_secs_f64();
        if s.fract() == 0.0 {
            format!("{s:.0}s")
        } else {
            format!("{s}s")
        }
    };
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let mut words: Vec<String> = ["arrayburn", "burnin", "--resume", "--destructive", "--yes"]
        .map(String::from)
        .to_vec();
    let mut flag = |name: &str, value: String| words.extend([format!("--{name}"), value]);
    flag("state", path(&args.state));
    if let Some(o) = json {
        flag("json", path(&o.given));
    }
    if let Some(o) = out {
        flag("out", path(o));
    }
    let progress = match args.progress {
        BurnProgress::Lines => "lines",
        BurnProgress::None => "none",
    };
    flag("progress", progress.into());
    flag("progress-interval", secs(args.progress_interval));
    flag("checkpoint-every", args.checkpoint_every.to_string());
    let smart = match args.smart {
        SmartMode::Auto => "auto",
        SmartMode::Require => "require",
        SmartMode::Off => "off",
    };
    flag("smart", smart.into());
    flag("smart-every", args.smart_every.to_string());
    flag("io-timeout", secs(args.io_timeout));
    flag("engine", args.engine.name().into());
    flag("queue-depth", args.queue_depth.to_string());
    words.extend(targets.iter().map(|t| t.dev.given.clone()));
    let quote = |w: &String| {
        if !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+-".contains(c))
        {
            w.clone()
        } else {
            format!("'{}'", w.replace('\'', "'\\''"))
        }
    };
    words.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// Refuses buffers beyond the memory the run may have: each disk's phase
/// holds its queue depth of blocks and two more (the one being filled or
/// checked, the one waiting), all disks at once. A resume's block is its
/// checkpoint's; the one asked for is checked here (at most the same).
fn check_memory(points: &[Checkpoint], depth: usize) -> anyhow::Result<()> {
    let per_disk = depth as u64 + 2;
    let block = points.first().map_or(0, |c| c.io_bytes);
    let disks = points.len() as u64;
    let what = format!(
        "{per_disk} × {} per disk, {disks} disk(s)",
        crate::units::human_bytes_binary(block)
    );
    let flags = format!(
        "--block {} --queue-depth {depth}",
        crate::units::human_bytes_binary(block)
    );
    crate::memory::refuse_beyond(per_disk * block * disks, &what, &flags)
        .map_err(|e| anyhow::anyhow!("{e} (nothing was written)"))
}

/// How writes and reads are issued (resolved, refused where io_uring was
/// asked for and cannot be had) and how many are in flight.
fn engine(args: &BurninArgs) -> anyhow::Result<(EngineKind, usize)> {
    match args.engine.resolved() {
        EngineKind::IoUring if !crate::io::uring_available() => bail!(
            "--engine io_uring: this kernel gives no io_uring (disabled, or too old); use --engine psync or auto (nothing was written)"
        ),
        EngineKind::IoUring => Ok((EngineKind::IoUring, usize::from(args.queue_depth))),
        kind => Ok((kind, 1)),
    }
}

/// Prints the report (to stderr when `--json -` has standard output),
/// writes the JSON and `--out DIR`, and says how the run ends. A file that
/// cannot be written is one line: the disks' verdict stands.
fn publish(
    report: &BurnReport,
    json: Option<&Output>,
    out: Option<&std::path::Path>,
) -> anyhow::Result<Outcome> {
    let text = render(report);
    if json.is_some_and(|o| o.is_stdout()) {
        tell_part!("{text}");
    } else {
        show!("{text}");
    }
    if let Some(dir) = out
        && let Err(e) = bundle(report, &text, dir)
    {
        tell!("arrayburn burnin: --out {}: {e}", dir.display());
    }
    if let Some(o) = json {
        let mut doc = serde_json::to_vec_pretty(report)?;
        doc.push(b'\n');
        o.write(&doc, true)
            .with_context(|| format!("writing --json {}", o.given.display()))?;
    }
    Ok(match report.summary.verdict.as_str() {
        _ if report.interrupted => Outcome::Interrupted,
        "healthy" => Outcome::Healthy,
        "not_judged" => Outcome::NotJudged,
        _ => Outcome::Flagged,
    })
}

/// `--read-only`: every disk read whole, pass after pass, at once.
fn soak_run(
    args: &BurninArgs,
    argv: &[String],
    json: Option<Output>,
    (engine, depth): (EngineKind, usize),
    stop: &StopFlag,
) -> anyhow::Result<Outcome> {
    let (targets, _locks) = read_targets(&args.devices, args.range.as_deref(), args.ignore_lock)?;
    let mut points = fresh(&targets, args, argv, stop)?;
    check_memory(&points, depth)?;
    if self_tests_first(&targets, &mut points, args, stop) {
        return Ok(self_tests_interrupted());
    }
    let deadline = args.duration.map(|d| Instant::now() + d);
    tell!(
        "arrayburn burnin: read-only soak of {} disk(s), {}; nothing is written",
        targets.len(),
        match (args.duration, args.passes) {
            (Some(d), None) => format!("passes for {}", human_duration(d)),
            (Some(d), Some(n)) => format!(
                "{n} pass(es) or {}, whichever ends first",
                human_duration(d)
            ),
            (None, _) => format!("{} pass(es)", points[0].passes),
        }
    );
    let (burns, temps) = run_all(
        &targets,
        &points,
        Some(deadline),
        Looks::of(args),
        stop,
        |t, live, c| {
            soak(&Job {
                t,
                io: args.block as usize,
                passes: c.passes,
                pattern: Pattern::Blocks,
                run: 0,
                stop,
                live,
                every: Duration::MAX,
                deadline,
                engine,
                depth,
                bounds: Bounds::new(stop, args.io_timeout),
            })
        },
    );
    let interrupted = stop.is_set();
    let smart = smart_after(&targets, &points, interrupted, stop);
    let interrupted = interrupted || stop.is_set();
    let mut report = report(&targets, &points, burns, smart, temps, interrupted, true);
    engine_of(&mut report, (engine, depth));
    let outcome = publish(&report, json.as_ref(), args.out.as_deref())?;
    if interrupted {
        tell!("arrayburn burnin: interrupted; the report covers the passes read so far");
    }
    Ok(outcome)
}

/// SMART after the run against SMART before it (not read when a signal
/// stopped the run, or stops this reading: it is read when the run is
/// done).
fn smart_after(
    targets: &[Target],
    points: &[Checkpoint],
    interrupted: bool,
    stop: &StopFlag,
) -> Vec<(Option<SmartChange>, Option<String>)> {
    targets
        .iter()
        .zip(points)
        .map(
            |(t, c)| match (&c.smart_before, interrupted || stop.is_set()) {
                (Some(_), true) => (None, Some("read at the end of the run".into())),
                (Some(b), false) => match smart::read(&t.dev.given, &|| stop.is_set()) {
                    Ok(a) => (Some(SmartChange::of(b.clone(), a)), None),
                    Err(why) => (None, Some(format!("after the run: {why}"))),
                },
                (None, _) => (None, c.smart_note.clone()),
            },
        )
        .collect()
}

/// Makes `--state DIR` if it is missing and proves checkpoints can be
/// written there, before anything is written to a disk.
fn state_store(dir: &std::path::Path) -> anyhow::Result<Store> {
    Store::open(dir).map_err(|e| {
        anyhow::anyhow!(
            "--state {}: cannot keep checkpoints there ({e}); give a writable directory with --state (nothing was written)",
            dir.display()
        )
    })
}

/// Refuses a `--json` file or `--out DIR` in the checkpoints' directory:
/// a report written over a checkpoint loses the place of a run (and the
/// next run is refused).
fn refuse_outputs_in(
    state: &std::path::Path,
    json: Option<&Output>,
    out: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let state = std::fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf());
    let json_dir = json.and_then(|o| match &o.sink {
        crate::output::Sink::File { dir, .. } => Some((
            format!("--json {}", o.given.display()),
            dir.path().to_path_buf(),
        )),
        _ => None,
    });
    let out_dir = out.map(|d| (format!("--out {}", d.display()), d.to_path_buf()));
    for (flag, dir) in json_dir.into_iter().chain(out_dir) {
        if std::fs::canonicalize(&dir).is_ok_and(|d| d == state) {
            bail!(
                "{flag}: is in --state {}, where the checkpoints are kept: write results elsewhere (nothing was written)",
                state.display()
            );
        }
    }
    Ok(())
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
) -> anyhow::Result<Option<Vec<Checkpoint>>> {
    let mut found = Vec::new();
    for t in targets.iter_mut() {
        let (name, c) = find_checkpoint(store, t)?;
        let path = store.path(&name);
        match (c, args.resume) {
            (None, true) => bail!(
                "--resume: {} has no checkpoint in {} (looked for {}); start its burn-in without --resume (nothing was written)",
                t.dev.given,
                args.state.display(),
                path.display()
            ),
            (Some(mut c), true) => {
                let id = &t.dev.identity;
                if let Err(why) = c.validate(id.size_bytes, id.logical_block_size) {
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
                (t.start, t.end) = (c.start_byte, c.end_byte);
                t.disk = c.disk_hash.unwrap_or(t.disk);
                t.checkpoint = name;
                let run = c.run().unwrap_or_default();
                let bounds = Bounds::new(stop, args.io_timeout);
                let proof = crate::burnin::resume::prove(t, &c, run, &bounds).map_err(not_it)?;
                if proof == Proof::NothingWritten && !args.wipe_signatures {
                    refuse_signature(&t.dev, &bounds)?;
                }
                c.burn.resumes += 1;
                found.push(c);
            }
            (Some(c), false) if c.at.phase != Phase::Done => bail!(
                "{} has an unfinished burn-in ({}) checkpointed in {}: add --resume to continue it, or move that file away to start over (nothing was written)",
                t.dev.given,
                place(&c),
                path.display()
            ),
            (_, false) => {}
        }
    }
    if !args.resume {
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

/// Where a checkpointed run stands, in words.
/// The checkpoint of `t` in `store`, under its own name or, where two
/// disks of one run shared a serial, under the other form of it.
fn find_checkpoint(store: &Store, t: &Target) -> anyhow::Result<(String, Option<Checkpoint>)> {
    let other = state::file_name(&t.dev, !t.checkpoint.contains('@'));
    for name in [t.checkpoint.clone(), other] {
        let c = store.load(&name).map_err(|e| {
            anyhow::anyhow!("{e}: move it away to start over (nothing was written)")
        })?;
        if c.is_some() {
            return Ok((name, c));
        }
    }
    Ok((t.checkpoint.clone(), None))
}

fn place(c: &Checkpoint) -> String {
    let len = (c.end_byte - c.start_byte).max(1);
    match c.at.phase {
        Phase::Done => format!("all {} pass(es) done", c.passes),
        Phase::Write | Phase::Verify => format!(
            "pass {} of {}, {} {:.0}%",
            c.at.pass,
            c.passes,
            if c.at.phase == Phase::Write {
                "write"
            } else {
                "verify"
            },
            100.0 * (c.at.done_until - c.start_byte) as f64 / len as f64
        ),
    }
}

/// The checkpoints of a new burn-in: a fresh run id, SMART as it is now.
fn fresh(
    targets: &[Target],
    args: &BurninArgs,
    argv: &[String],
    stop: &StopFlag,
) -> anyhow::Result<Vec<Checkpoint>> {
    let before = smart_before(targets, args.smart, &|| stop.is_set())?;
    let run = format!("{:016x}", rand_run_id());
    let started = rfc3339(SystemTime::now());
    Ok(targets
        .iter()
        .zip(before)
        .map(|(t, smart)| {
            let id = &t.dev.identity;
            let (smart_before, smart_note) = match smart {
                Ok(s) => (Some(s), None),
                Err(why) => (None, Some(why)),
            };
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
                passes: args
                    .passes
                    .unwrap_or(match (args.read_only, args.duration) {
                        (true, Some(_)) => u16::MAX,
                        (true, None) => 2,
                        (false, _) => args.pattern.default_passes(),
                    }),
                io_bytes: args.block,
                pattern: args.pattern,
                command_line: argv.to_vec(),
                at: At::first(t.start),
                burn: DiskBurn::default(),
                smart_before,
                smart_note,
                self_test: None,
            }
        })
        .collect())
}

/// Each disk's SMART before anything is written, or why there is none.
/// `require` refuses a disk without it (nothing written); `auto` says once
/// that smartctl is missing and goes on.
fn smart_before(
    targets: &[Target],
    mode: SmartMode,
    give_up: &dyn Fn() -> bool,
) -> anyhow::Result<Vec<Result<Snapshot, String>>> {
    if mode == SmartMode::Off {
        return Ok(targets.iter().map(|_| Err("--smart off".into())).collect());
    }
    let read: Vec<Result<Snapshot, String>> = targets
        .iter()
        .map(|t| smart::read(&t.dev.given, give_up))
        .collect();
    for (t, r) in targets.iter().zip(&read) {
        if let (SmartMode::Require, Err(why)) = (mode, r) {
            bail!(
                "--smart require: {} has no SMART to read ({why}); use --smart auto to burn it in without (nothing was written)",
                t.dev.given
            );
        }
    }
    if read.iter().any(|r| {
        r.as_ref()
            .is_err_and(|w| w.starts_with("smartctl could not run"))
    }) {
        tell!(
            "arrayburn burnin: smartctl not found: SMART is not compared (install smartmontools, or --smart off to say so)"
        );
    }
    Ok(read)
}

/// A fresh run id (the clock's nanoseconds mixed with the process id; it
/// only has to differ between burn-ins of one disk).
fn rand_run_id() -> u64 {
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::burnin::block::disk_hash(&format!("{t}:{}", std::process::id())) as u64 | (t << 32)
}

/// How long `bytes` take at `mb_per_s`, in words.
fn estimate(bytes: u64, mb_per_s: f64) -> String {
    human_duration(Duration::from_secs_f64(bytes as f64 / (mb_per_s * 1e6)))
}

/// Bytes a checkpointed disk has left to write and read.
fn left(c: &Checkpoint) -> u64 {
    let len = c.end_byte - c.start_byte;
    let phases = u64::from(c.passes) * 2;
    let before =
        u64::from(c.at.pass.saturating_sub(1)) * 2 + u64::from(c.at.phase == Phase::Verify);
    match c.at.phase {
        Phase::Done => 0,
        _ => (phases - before.min(phases)) * len - (c.at.done_until - c.start_byte),
    }
}

/// The plan, before anything is written: each disk, and how long its
/// burn-in takes at the read speed measured now (1 s of reading; writes
/// are often slower).
fn announce(targets: &[Target], points: &[Checkpoint], args: &BurninArgs) {
    let speeds: Vec<Option<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .zip(points)
            .map(|(t, c)| {
                let bounds = Bounds::new(&StopFlag::default(), args.io_timeout);
                s.spawn(move || {
                    sample_speed(t, c.io_bytes as usize, Duration::from_secs(1), &bounds)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    let c = &points[0];
    if args.resume {
        tell!(
            "arrayburn burnin: will CONTINUE burn-in {} (started {}), writing and verifying each disk {} time(s) in all:",
            c.run_id,
            c.started_at,
            c.passes
        );
    } else {
        tell!(
            "arrayburn burnin: will DESTROY all data in these ranges, writing ({} pattern) and verifying each {} time(s):",
            c.pattern.name(),
            c.passes
        );
    }
    for ((t, c), speed) in targets.iter().zip(points).zip(&speeds) {
        let id = &t.dev.identity;
        tell!(
            "  {}  {}  {}  serial {}  {}  bytes {}..{}{}  {}",
            t.dev.given,
            id.by_id.as_deref().unwrap_or("-"),
            id.model.as_deref().unwrap_or("-"),
            id.serial.as_deref().unwrap_or("-"),
            human_bytes(id.size_bytes),
            t.start,
            t.end,
            if args.resume {
                format!("  from {}", place(c))
            } else {
                String::new()
            },
            match speed {
                Some(v) => format!("about {} at {v:.0} MB/s", estimate(left(c), *v)),
                None => "(its speed could not be read)".into(),
            }
        );
    }
    let work: Vec<(u64, f64)> = points
        .iter()
        .zip(&speeds)
        .filter_map(|(c, v)| v.map(|v| (left(c), v)))
        .collect();
    if let Some(all) = all_at_once(&work) {
        tell!(
            "  all disks at once: about {all} (the slowest disk, at the read speed measured now; writes are often slower)"
        );
    }
}

/// How long disks with (bytes left, MB/s) take side by side: as long as
/// the slowest; None when nothing is left.
fn all_at_once(work: &[(u64, f64)]) -> Option<String> {
    work.iter()
        .filter(|(b, v)| *b > 0 && *v > 0.0)
        .max_by(|a, b| (a.0 as f64 / a.1).total_cmp(&(b.0 as f64 / b.1)))
        .map(|(b, v)| estimate(*b, *v))
}

/// A terminal is shown the plan and asked; with `--yes` (a script: `run`
/// refuses one without it) the plan is printed as the record of what was
/// destroyed. False when a signal came while it asked.
fn confirm(
    targets: &[Target],
    points: &[Checkpoint],
    args: &BurninArgs,
    stop: &StopFlag,
) -> anyhow::Result<bool> {
    announce(targets, points, args);
    if args.yes {
        return Ok(true);
    }
    tell_part!(
        "Type yes to destroy the data on these {} disk(s): ",
        targets.len()
    );
    let _ = std::io::stderr().flush();
    // Waited for without blocking, so a signal ends the question at once.
    loop {
        if stop.is_set() {
            tell!();
            return Ok(false);
        }
        let fd = std::io::stdin();
        let mut poll = [nix::poll::PollFd::new(
            fd.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        match nix::poll::poll(&mut poll, nix::poll::PollTimeout::from(100u16)) {
            Ok(0) => continue,
            Err(nix::errno::Errno::EINTR) => continue,
            _ => break,
        }
    }
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed (nothing was written)");
    }
    Ok(true)
}

/// Bytes of a disk's whole run done at `pass`, `stage`, `done` (its
/// phase's bytes), out of `passes` × `phases` (2: write and verify; a
/// soak's 1) × the range.
fn progress_bytes(len: u64, phases: u64, pass: u16, stage: Stage, done: u64) -> u64 {
    let phases_before = u64::from(pass.saturating_sub(1)) * phases
        + u64::from(phases == 2 && matches!(stage, Stage::Verify));
    phases_before * len + done.min(len)
}

/// A line per disk every 10 s while the workers run (with a time stamp:
/// these go to logs), and the whole run's ETA at the speeds seen so far
/// (a soak run by time: its deadline).
fn watch<T>(
    targets: &[Target],
    points: &[Checkpoint],
    lives: &[Live],
    handles: &[std::thread::ScopedJoinHandle<T>],
    soak: Option<Option<Instant>>,
    looks: Looks,
    stop: &StopFlag,
) -> Vec<Option<i64>> {
    let phases = if soak.is_some() { 1 } else { 2 };
    // The hottest each disk was while it ran (SMART read every
    // `smart_every` s, where SMART was read before the run).
    let mut hottest: Vec<Option<i64>> = vec![None; targets.len()];
    let mut sampled = Instant::now();
    let began = Instant::now();
    let mut last = Instant::now();
    let mut seen: Vec<Option<u64>> = vec![None; targets.len()];
    let mut first: Vec<Option<u64>> = vec![None; targets.len()];
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(100));
        if sampled.elapsed() >= looks.smart_every {
            sampled = Instant::now();
            for ((t, c), h) in targets.iter().zip(points).zip(hottest.iter_mut()) {
                if c.smart_before.is_some()
                    && let Some(now) = smart::read(&t.dev.given, &|| stop.is_set())
                        .ok()
                        .and_then(|s| s.temperature_c)
                {
                    *h = Some(h.map_or(now, |h| h.max(now)));
                }
            }
        }
        if looks.progress.is_none_or(|every| last.elapsed() < every) {
            continue;
        }
        let dt = last.elapsed().as_secs_f64();
        last = Instant::now();
        let now = chrono::Local::now().format("%H:%M:%S");
        let mut eta: f64 = 0.0;
        for (i, ((t, c), l)) in targets.iter().zip(points).zip(lives).enumerate() {
            let len = (t.end - t.start).max(1);
            let total = u64::from(c.passes) * phases * len;
            let (pass, stage) = l.stage();
            let done = l.done.load(Ordering::Relaxed);
            let all = if c.at.phase == Phase::Done || handles[i].is_finished() {
                total
            } else {
                progress_bytes(len, phases, pass, stage, done)
            };
            let rate = seen[i].map_or(0.0, |s| all.saturating_sub(s) as f64 / dt);
            seen[i] = Some(all);
            let since = *first[i].get_or_insert(all);
            let mean = all.saturating_sub(since) as f64 / began.elapsed().as_secs_f64();
            if all < total && mean > 0.0 {
                eta = eta.max((total - all) as f64 / mean);
            }
            let what = match stage {
                Stage::Write => "write",
                Stage::Flush => "flush",
                Stage::Verify if soak.is_some() => "read",
                Stage::Verify => "verify",
                Stage::Reverify => "re-verify",
            };
            let of = if c.passes == u16::MAX {
                String::new()
            } else {
                format!("/{}", c.passes)
            };
            tell!(
                "{now} burnin: {} pass {pass}{of} {what} {:.0}% {:.0} MB/s",
                t.dev.given,
                100.0 * done.min(len) as f64 / len as f64,
                rate / 1e6
            );
        }
        if let Some(Some(end)) = soak {
            eta = end.saturating_duration_since(Instant::now()).as_secs_f64();
        }
        if eta > 0.0 {
            let s = eta as u64;
            tell!(
                "{now} burnin: whole run ETA {}:{:02}:{:02}",
                s / 3600,
                s / 60 % 60,
                s % 60
            );
        }
    }
    hottest
}

/// Judges the disks and builds the report.
fn report(
    targets: &[Target],
    points: &[Checkpoint],
    burns: Vec<DiskBurn>,
    smart: Vec<(Option<SmartChange>, Option<String>)>,
    temps: Vec<Option<i64>>,
    interrupted: bool,
    read_only: bool,
) -> BurnReport {
    // The hottest reading: before, during, after.
    let hottest: Vec<Option<i64>> = smart
        .iter()
        .zip(points)
        .enumerate()
        .map(|(i, ((change, _), c))| {
            [
                c.smart_before.as_ref().and_then(|s| s.temperature_c),
                temps.get(i).copied().flatten(),
                change.as_ref().and_then(|ch| ch.after.temperature_c),
            ]
            .into_iter()
            .flatten()
            .max()
        })
        .collect();
    let devices: Vec<_> = targets.iter().map(|t| t.dev.clone()).collect();
    let groups = crate::plan::peer_groups(&devices);
    let limits: Vec<TempLimits> = targets
        .iter()
        .zip(points)
        .zip(&smart)
        .map(|((t, c), (sm, _))| temp_limits(c, sm.as_ref(), &t.dev))
        .collect();
    let words = |c: &SmartChange, kind: Kind| -> Vec<String> {
        c.deltas
            .iter()
            .filter(|d| d.kind == kind)
            .map(|d| format!("{} {} → {}", d.name, d.before, d.after))
            .collect()
    };
    let facts: Vec<BurnFacts> = burns
        .iter()
        .zip(&groups)
        .zip(&smart)
        .zip(targets)
        .zip(points.iter().zip(&hottest))
        .map(|((((b, g), (sm, _)), t), (c, hot))| (b, g, sm, t.end - t.start, c, *hot))
        .zip(&limits)
        .map(|((b, g, sm, len, c, hottest_c), limit)| BurnFacts {
            self_test_failed: match &c.self_test {
                Some((_, SelfTest::Failed(w))) => Some(w.clone()),
                _ => None,
            },
            hottest_c,
            limit_c: Some(limit.warning_c),
            limit_source: limit.source.clone(),
            smart_thermal: sm
                .as_ref()
                .map(|c| words(c, Kind::Thermal))
                .unwrap_or_default(),
            slowest: b.slowest.map(|s| {
                let what = match s.phase {
                    Phase::Write => "a write",
                    _ => "a read",
                };
                (
                    s.ms,
                    format!("{what} at byte {} in pass {}", s.offset, s.pass),
                )
            }),
            smart_media: sm
                .as_ref()
                .map(|c| words(c, Kind::Media))
                .unwrap_or_default(),
            smart_transport: sm
                .as_ref()
                .map(|c| words(c, Kind::Transport))
                .unwrap_or_default(),
            smart_failed: sm.as_ref().is_some_and(|c| c.after.passed == Some(false)),
            bad: b
                .bad_bytes
                .iter()
                .map(|(c, n)| (class_words(*c), *n))
                .collect(),
            corrupted: b.bad_bytes.iter().any(|(c, _)| *c == Class::Corrupted),
            device_gone: b.device_gone,
            hung: b.hung.map(|h| {
                format!(
                    "a {} at byte {} in pass {} got no answer within {}",
                    match h.phase {
                        Phase::Write => "write",
                        _ => "read",
                    },
                    h.offset,
                    h.pass,
                    human_duration(Duration::from_secs_f64(h.timeout_s))
                )
            }),
            write_mb_per_s: speed(b.written_bytes, b.write_s),
            verify_mb_per_s: speed(b.verified_bytes, b.verify_s),
            write_s: b.write_s,
            verify_s: b.verify_s,
            pass_mb_per_s: pass_speeds(b, len)
                .into_iter()
                .map(|(v, s)| (s >= crate::judge::MIN_JUDGED_S).then_some(v))
                .collect(),
            group: *g,
        })
        .collect();
    let judged = verdicts(&facts, &Thresholds::default());
    let mut disk_verdicts = Vec::new();
    let mut disks: Vec<BurnDisk> = targets
        .iter()
        .zip(burns)
        .zip(smart)
        .zip(facts.iter().zip(judged))
        .zip(points.iter().zip(hottest).zip(limits))
        .map(
            |((((t, burn), (smart, smart_note)), (f, judged)), ((c, hot), limit))| {
                // A disk with advice is named by its action below, once
                // the links have had their say.
                if let Some((a, sentence)) = &judged.action {
                    disk_verdicts.push(DiskAdvice {
                        path: t.dev.given.clone(),
                        action: *a,
                        sentence: format!("{}: {sentence}", t.dev.given),
                    });
                }
                // Nothing found: healthy only where its speed was compared
                // with peers too; else its health is not claimed.
                let verdict = match (burn.interrupted, judged.compared()) {
                    (true, _) => "interrupted",
                    (false, true) => "healthy",
                    (false, false) => "not_judged",
                };
                let speeds = pass_speeds(&burn, t.end - t.start)
                    .into_iter()
                    .map(|(v, _)| v)
                    .collect();
                BurnDisk {
                    path: t.dev.given.clone(),
                    identity: t.dev.identity.clone(),
                    start_byte: t.start,
                    end_byte: t.end,
                    burn,
                    verify_pass_mb_per_s: speeds,
                    write_mb_per_s: f.write_mb_per_s,
                    verify_mb_per_s: f.verify_mb_per_s,
                    write_pct_of_peers: judged.write_pct,
                    verify_pct_of_peers: judged.verify_pct,
                    smart,
                    smart_note,
                    self_test_kind: c.self_test.as_ref().map(|(k, _)| *k),
                    self_test: c.self_test.as_ref().map(|(_, s)| s.clone()),
                    hottest_c: hot,
                    temperature_limit: Some(limit),
                    verdict: verdict.into(),
                }
            },
        )
        .collect();
    // Links below their maximum: a disk's own is a finding on it (its
    // verdict becomes the action), a controller's is named in the verdict.
    let links = crate::report::links::degraded(&devices);
    crate::report::links::advise(&links, &mut disk_verdicts);
    for a in &disk_verdicts {
        if let Some(d) = disks.iter_mut().find(|d| d.path == a.path) {
            d.verdict = a.action.word().into();
        }
    }
    let controllers: Vec<String> = links
        .iter()
        .filter(|l| l.controller)
        .map(crate::report::links::sentence)
        .collect();
    let not_judged: Vec<String> = disks
        .iter()
        .filter(|d| d.verdict == "not_judged")
        .map(|d| d.path.clone())
        .collect();
    let unjudged = format!(
        "; not judged: {} (speed not compared: no peer of the same model, size and kind, or a phase timed for under {:.0} s; health not claimed)",
        not_judged.join(", "),
        crate::judge::MIN_JUDGED_S
    );
    let message = match (interrupted, disk_verdicts.len(), controllers.is_empty()) {
        (true, ..) => "INTERRUPTED: partial burn-in.".to_string(),
        (false, 0, true) if !not_judged.is_empty() && read_only => format!(
            "NOT JUDGED: {} disk(s) read whole in every pass without an error{unjudged}.",
            disks.len()
        ),
        (false, 0, true) if !not_judged.is_empty() => format!(
            "NOT JUDGED: every 4 KiB block of the ranges burned on {} disk(s) written, flushed and read back as written, no request stalled{unjudged}.",
            disks.len()
        ),
        (false, 0, true) if read_only => format!(
            "HEALTHY: {} disk(s) read whole in every pass without an error; of the passes read for a second or more, none much slower than the disk's first, nor any disk than its peers.",
            disks.len()
        ),
        (false, 0, true) => format!(
            "HEALTHY: every 4 KiB block of the ranges burned on {} disk(s) written, flushed and read back as written.",
            disks.len()
        ),
        (false, n, _) => {
            let mut named = controllers;
            if n > 0 {
                named.insert(0, format!("{n} disk(s) to act on"));
            }
            let unjudged = if not_judged.is_empty() { "" } else { &unjudged };
            format!("FLAGGED: {}{unjudged}.", named.join("; "))
        }
    };
    let c = &points[0];
    BurnReport {
        kind: "burnin".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        machine: crate::device::Machine::this(),
        host: nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default(),
        started_at: c.started_at.clone(),
        finished_at: rfc3339(SystemTime::now()),
        interrupted,
        command_line: c.command_line.clone(),
        run_id: c.run_id.clone(),
        passes: burns_passes(&disks, c.passes, read_only),
        engine: String::new(),
        queue_depth: 1,
        read_only,
        pattern: if read_only {
            "read-only".into()
        } else {
            c.pattern.name().into()
        },
        io_bytes: c.io_bytes,
        disks,
        summary: BurnSummary {
            verdict: match (interrupted, disk_verdicts.is_empty() && links.is_empty()) {
                (true, _) => "interrupted",
                (false, true) if !not_judged.is_empty() => "not_judged",
                (false, true) => "healthy",
                (false, false) => "flagged",
            }
            .into(),
            disk_verdicts,
            links,
            message,
        },
    }
}

/// The temperature limits a disk is judged against: its own, read with its
/// SMART before or after the run, else the default for its kind (from its
/// SMART, else from sysfs: rotational, NVMe).
fn temp_limits(
    c: &Checkpoint,
    change: Option<&SmartChange>,
    dev: &crate::device::BlockDevice,
) -> TempLimits {
    let snaps = [c.smart_before.as_ref(), change.map(|ch| &ch.after)];
    if let Some(own) = snaps.iter().flatten().find_map(|s| s.limits.clone()) {
        return own;
    }
    let kind = snaps.iter().flatten().find_map(|s| s.drive).unwrap_or({
        let id = &dev.identity;
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
    if read_only && asked == u16::MAX {
        disks
            .iter()
            .map(|d| d.burn.verify_pass_s.len() as u16)
            .max()
            .unwrap_or(0)
    } else {
        asked
    }
}

/// Each pass's read-back MB/s and seconds, for the passes read whole.
fn pass_speeds(b: &DiskBurn, len: u64) -> Vec<(f64, f64)> {
    b.verify_pass_s
        .iter()
        .take(usize::from(b.passes_done))
        .filter_map(|s| Some((speed(len, *s)?, *s)))
        .collect()
}

/// How often the watch looks at the disks while they run.
#[derive(Clone, Copy)]
struct Looks {
    /// Read each disk's temperature this often.
    smart_every: Duration,
    /// Print a progress line per disk this often (None: never).
    progress: Option<Duration>,
}

impl Looks {
    fn of(args: &BurninArgs) -> Self {
        Self {
            smart_every: Duration::from_secs(args.smart_every),
            progress: (args.progress == BurnProgress::Lines).then_some(args.progress_interval),
        }
    }
}

/// Runs `work` on every disk at once (a thread each) while `watch` shows
/// progress: each disk's result, and the hottest it was.
fn run_all(
    targets: &[Target],
    points: &[Checkpoint],
    soak: Option<Option<Instant>>,
    looks: Looks,
    stop: &StopFlag,
    work: impl Fn(&Target, &Live, &Checkpoint) -> DiskBurn + Sync,
) -> (Vec<DiskBurn>, Vec<Option<i64>>) {
    let lives: Vec<Live> = targets.iter().map(|_| Live::default()).collect();
    std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = targets
            .iter()
            .zip(&lives)
            .zip(points)
            .map(|((t, live), c)| s.spawn(move || work(t, live, c)))
            .collect();
        let temps = watch(targets, points, &lives, &handles, soak, looks, stop);
        let burns = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        (burns, temps)
    })
}

/// Runs the drives' self-tests first where `--smart-test` asks; true when
/// a signal stopped them.
fn self_tests_first(
    targets: &[Target],
    points: &mut [Checkpoint],
    args: &BurninArgs,
    stop: &StopFlag,
) -> bool {
    if let Some(kind) = args.smart_test {
        self_tests(targets, points, kind, smart_test_limit(args, kind), stop);
    }
    stop.is_set()
}

/// A signal stopped the self-tests (aborted): nothing was written yet.
fn self_tests_interrupted() -> Outcome {
    tell!(
        "arrayburn burnin: interrupted during the SMART self-tests (they were aborted); nothing was written"
    );
    Outcome::Interrupted
}

/// Runs every disk's self-test at once and waits for them (polled at 1,
/// 3, 7, 15, 31 s, then every 30 s) for at most `limit`: a self-test still
/// running then is aborted and is a finding (a drive stuck at "running
/// 10 %" would otherwise hold the burn-in before any write). A signal
/// aborts them all (`smartctl -X`).
fn self_tests(
    targets: &[Target],
    points: &mut [Checkpoint],
    kind: TestKind,
    limit: Duration,
    stop: &StopFlag,
) {
    let give_up = || stop.is_set();
    let mut state: Vec<SelfTest> = targets
        .iter()
        .map(
            |t| match smart::start_self_test(&t.dev.given, kind, &give_up) {
                Ok(()) => SelfTest::Running(None),
                Err(why) => SelfTest::Unknown(why),
            },
        )
        .collect();
    let running = |s: &[SelfTest]| s.iter().any(|x| matches!(x, SelfTest::Running(_)));
    let which = match kind {
        TestKind::Short => "short",
        TestKind::Long => "long",
    };
    if running(&state) {
        tell!(
            "arrayburn burnin: running the drives' {which} SMART self-test before the burn-in (at most {})",
            human_duration(limit)
        );
    }
    let began = Instant::now();
    let mut wait = Duration::from_secs(1);
    let mut said = Instant::now();
    while running(&state) {
        let until = (Instant::now() + wait).min(began + limit);
        while Instant::now() < until {
            if stop.is_set() {
                abort_self_tests(targets, &state);
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if began.elapsed() >= limit {
            abort_self_tests(targets, &state);
            for s in state.iter_mut() {
                if let SelfTest::Running(left) = s {
                    *s = SelfTest::Failed(format!(
                        "the {which} self-test did not finish within {} ({} left): aborted",
                        human_duration(limit),
                        left.map_or("?".to_string(), |l| format!("{l}%"))
                    ));
                }
            }
            break;
        }
        wait = (wait * 2).min(Duration::from_secs(30));
        for (t, s) in targets.iter().zip(state.iter_mut()) {
            if matches!(s, SelfTest::Running(_)) {
                *s = match smart::poll_self_test(&t.dev.given, &give_up) {
                    // A poll that could not be read keeps it running.
                    SelfTest::Unknown(_) if stop.is_set() => s.clone(),
                    now => now,
                };
            }
        }
        if said.elapsed() >= Duration::from_secs(60) {
            said = Instant::now();
            let now = chrono::Local::now().format("%H:%M:%S");
            for (t, s) in targets.iter().zip(&state) {
                if let SelfTest::Running(left) = s {
                    tell!(
                        "{now} burnin: {} self-test running, {} left",
                        t.dev.given,
                        left.map_or("?".to_string(), |l| format!("{l}%"))
                    );
                }
            }
        }
    }
    for (c, s) in points.iter_mut().zip(state) {
        c.self_test = Some((kind, s));
    }
}

/// Aborts the self-tests still running (`smartctl -X`, each given a few
/// seconds: a hung drive does not hold the run).
fn abort_self_tests(targets: &[Target], state: &[SelfTest]) {
    for (t, s) in targets.iter().zip(state) {
        if matches!(s, SelfTest::Running(_)) {
            let mut abort = std::process::Command::new("smartctl");
            abort.args(["-X", &t.dev.given]);
            let _ = crate::device::tool::output(&mut abort, Duration::from_secs(10), &|| false);
        }
    }
}

/// `--out DIR`: the text, the JSON, and MB/s across each disk's surface
/// for pass 1 and the last pass, each phase.
fn bundle(report: &BurnReport, text: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    use crate::export::chart::{Line, lines};
    let dir = crate::output::Dir::create(dir)?;
    dir.write("report.txt", text.as_bytes())?;
    let mut doc = serde_json::to_vec_pretty(report)?;
    doc.push(b'\n');
    dir.write("report.json", &doc)?;
    let page = crate::fleet::render::page_of(
        crate::fleet::Doc::Burnin(Box::new(report.clone())),
        "report.json",
    );
    dir.write("report.html", page.as_bytes())?;
    let last = report
        .disks
        .iter()
        .flat_map(|d| d.burn.surface.iter().map(|p| p.pass))
        .max()
        .unwrap_or(0);
    let mut passes = vec![1];
    if last > 1 {
        passes.push(last);
    }
    let phases: &[&str] = if report.read_only {
        &["verify"]
    } else {
        &["write", "verify"]
    };
    for pass in passes {
        for phase in phases {
            let series: Vec<Line> = report
                .disks
                .iter()
                .map(|d| {
                    let len = (d.end_byte - d.start_byte).max(1) as f64;
                    Line {
                        label: d.identity.name.clone(),
                        points: d
                            .burn
                            .surface
                            .iter()
                            .filter(|p| p.pass == pass && p.phase == *phase)
                            .map(|p| (100.0 * (p.offset - d.start_byte) as f64 / len, p.mb_per_s))
                            .collect(),
                        flagged: !matches!(d.verdict.as_str(), "healthy" | "interrupted"),
                    }
                })
                .filter(|l| !l.points.is_empty())
                .collect();
            if series.is_empty() {
                continue;
            }
            let word = match (*phase, report.read_only) {
                ("verify", true) => "read",
                (p, _) => p,
            };
            lines(
                &dir,
                &format!("surface-{word}-pass{pass}"),
                &format!("Pass {pass}: {word} MB/s across each disk (red: to act on)"),
                &series,
            )?;
        }
    }
    Ok(())
}

/// How long `--smart-test` may run: as `--smart-test-timeout` says, else
/// [`defaults::SHORT_SELF_TEST`] or [`defaults::LONG_SELF_TEST`].
fn smart_test_limit(args: &BurninArgs, kind: TestKind) -> Duration {
    args.smart_test_timeout.unwrap_or(match kind {
        TestKind::Short => crate::defaults::SHORT_SELF_TEST,
        TestKind::Long => crate::defaults::LONG_SELF_TEST,
    })
}

/// Names the engine the run used in the report.
fn engine_of(report: &mut BurnReport, (engine, depth): (EngineKind, usize)) {
    (report.engine, report.queue_depth) = (engine.name().into(), depth);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_in_words() {
        assert_eq!(estimate(20_000_000_000_000 * 2, 250.0), "44 h 26 min");
        assert_eq!(estimate(130_000_000_000, 1000.0), "2 min 10 s");
        // Side by side, the slowest decides (it said 1e6 times too long).
        assert_eq!(
            all_at_once(&[
                (130_000_000_000, 1000.0),
                (130_000_000_000, 500.0),
                (0, 1.0)
            ])
            .as_deref(),
            Some("4 min 20 s")
        );
        assert_eq!(all_at_once(&[(0, 100.0)]), None);
    }

    #[test]
    fn what_a_checkpoint_has_left() {
        let mut c = fresh_point(2, 1000);
        assert_eq!(left(&c), 4 * 1000, "two passes, each written and read");
        c.at = At {
            pass: 2,
            phase: Phase::Verify,
            done_until: 250,
            interval_from: 0,
        };
        assert_eq!(left(&c), 750);
        c.at.phase = Phase::Done;
        assert_eq!(left(&c), 0);
    }

    fn fresh_point(passes: u16, len: u64) -> Checkpoint {
        Checkpoint {
            format: state::FORMAT,
            run_id: "1".into(),
            started_at: String::new(),
            saved_at: String::new(),
            device: "/dev/x".into(),
            name: None,
            by_id: None,
            serial: None,
            wwn: None,
            model: None,
            size_bytes: len,
            disk_hash: None,
            start_byte: 0,
            end_byte: len,
            passes,
            io_bytes: 4096,
            pattern: Pattern::Blocks,
            command_line: vec![],
            at: At::first(0),
            burn: DiskBurn::default(),
            smart_before: None,
            smart_note: None,
            self_test: None,
        }
    }
}

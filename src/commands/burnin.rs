//! `arrayburn burnin --destructive DEVICE...`: plan (every refusal before a
//! byte is written), confirm, burn every disk at once (one thread each),
//! judge, report.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use super::Outcome;
use crate::burnin::block::BLOCK;
use crate::burnin::plan::{Target, targets};
use crate::burnin::report::{BurnDisk, BurnReport, class_words, render, speed};
use crate::burnin::smart::{self, Kind, SmartChange, Snapshot};
use crate::burnin::worker::{Class, DiskBurn, Live, burn};
use crate::cli::{BurninArgs, SmartMode};
use crate::judge::Thresholds;
use crate::judge::advice::DiskAdvice;
use crate::judge::burnin::{BurnFacts, verdicts};
use crate::measure::StopFlag;
use crate::output::Output;
use crate::units::{human_bytes, rfc3339};

/// Runs the burn-in.
pub fn run(args: &BurninArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    if args.block == 0 || !args.block.is_multiple_of(BLOCK as u64) || args.block > 1 << 30 {
        bail!(
            "--block {}: give a multiple of 4 KiB up to 1g (the default is 4m)",
            args.block
        );
    }
    if args.passes == 0 {
        bail!("--passes 0: give at least 1");
    }
    let json = args
        .json
        .as_deref()
        .map(|p| Output::resolve("--json", p, true))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let (targets, _locks) = targets(
        &args.devices,
        args.destructive,
        args.wipe_signatures,
        args.range.as_deref(),
        &argv,
    )?;
    if !args.yes && !std::io::stdin().is_terminal() {
        bail!(
            "standard input is not a terminal, so no one can confirm: add --yes to burn in {} disk(s) from a script (nothing was written)",
            targets.len()
        );
    }
    let before = smart_before(&targets, args.smart)?;
    confirm(&targets, args)?;
    let run: u64 = rand_run_id();
    let started = SystemTime::now();
    let lives: Vec<Live> = targets.iter().map(|_| Live::default()).collect();
    let burns: Vec<DiskBurn> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .zip(&lives)
            .map(|(t, live)| {
                s.spawn(move || burn(t, args.block as usize, args.passes, run, stop, live))
            })
            .collect();
        watch(&targets, &lives, args.passes, &handles);
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let smart: Vec<(Option<SmartChange>, Option<String>)> = targets
        .iter()
        .zip(before)
        .map(|(t, b)| match b {
            Ok(b) => match smart::read(&t.dev.given) {
                Ok(a) => (Some(SmartChange::of(b, a)), None),
                Err(why) => (None, Some(format!("after the burn-in: {why}"))),
            },
            Err(why) => (None, Some(why)),
        })
        .collect();
    let report = report(
        &targets,
        burns,
        smart,
        args,
        argv,
        run,
        started,
        stop.is_set(),
    );
    // With `--json -` the JSON has standard output; the text goes to stderr.
    if json.as_ref().is_some_and(|o| o.is_stdout()) {
        eprint!("{}", render(&report));
    } else {
        print!("{}", render(&report));
    }
    if let Some(o) = &json {
        let mut doc = serde_json::to_vec_pretty(&report)?;
        doc.push(b'\n');
        o.write(&doc, true)
            .with_context(|| format!("writing --json {}", o.given.display()))?;
    }
    if report.disks.iter().any(|d| d.burn.interrupted) {
        eprintln!(
            "arrayburn burnin: interrupted; the disks hold a partial burn-in, run it again to burn them whole"
        );
        return Ok(Outcome::Interrupted);
    }
    Ok(if report.disk_verdicts.is_empty() {
        Outcome::Healthy
    } else {
        Outcome::Flagged
    })
}

/// Each disk's SMART before anything is written, or why there is none.
/// `require` refuses a disk without it (nothing written); `auto` says once
/// that smartctl is missing and goes on.
fn smart_before(
    targets: &[Target],
    mode: SmartMode,
) -> anyhow::Result<Vec<Result<Snapshot, String>>> {
    if mode == SmartMode::Off {
        return Ok(targets.iter().map(|_| Err("--smart off".into())).collect());
    }
    let read: Vec<Result<Snapshot, String>> =
        targets.iter().map(|t| smart::read(&t.dev.given)).collect();
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
        eprintln!(
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

/// The plan, before anything is written.
fn announce(targets: &[Target], args: &BurninArgs) {
    eprintln!(
        "arrayburn burnin: will DESTROY all data in these ranges, writing and verifying each {} time(s):",
        args.passes
    );
    for t in targets {
        let id = &t.dev.identity;
        eprintln!(
            "  {}  {}  {}  serial {}  {}  bytes {}..{}",
            t.dev.given,
            id.by_id.as_deref().unwrap_or("-"),
            id.model.as_deref().unwrap_or("-"),
            id.serial.as_deref().unwrap_or("-"),
            human_bytes(id.size_bytes),
            t.start,
            t.end
        );
    }
}

/// A terminal is shown the plan and asked; with `--yes` (a script: `run`
/// refuses one without it) the plan is printed as the record of what was
/// destroyed.
fn confirm(targets: &[Target], args: &BurninArgs) -> anyhow::Result<()> {
    if args.yes {
        announce(targets, args);
        return Ok(());
    }
    announce(targets, args);
    eprint!(
        "Type yes to destroy the data on these {} disk(s): ",
        targets.len()
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed (nothing was written)");
    }
    Ok(())
}

/// A line per disk every 10 s while the workers run.
fn watch<T>(
    targets: &[Target],
    lives: &[Live],
    passes: u16,
    handles: &[std::thread::ScopedJoinHandle<T>],
) {
    let mut last = Instant::now();
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(100));
        if last.elapsed() < Duration::from_secs(10) {
            continue;
        }
        last = Instant::now();
        let now = chrono::Local::now().format("%H:%M:%S");
        for (t, l) in targets.iter().zip(lives) {
            let phase = l.phase.load(Ordering::Relaxed);
            let done = l.done.load(Ordering::Relaxed);
            let what = if phase % 2 == 0 { "write" } else { "verify" };
            eprintln!(
                "{now} burnin: {} pass {}/{passes} {what} {:.0}%",
                t.dev.given,
                phase / 2,
                100.0 * done as f64 / (t.end - t.start).max(1) as f64
            );
        }
    }
}

/// Judges the disks and builds the report.
#[allow(clippy::too_many_arguments)]
fn report(
    targets: &[Target],
    burns: Vec<DiskBurn>,
    smart: Vec<(Option<SmartChange>, Option<String>)>,
    args: &BurninArgs,
    argv: Vec<String>,
    run: u64,
    started: SystemTime,
    interrupted: bool,
) -> BurnReport {
    let devices: Vec<_> = targets.iter().map(|t| t.dev.clone()).collect();
    let groups = crate::plan::peer_groups(&devices);
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
        .map(|((b, g), (sm, _))| BurnFacts {
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
            write_mb_per_s: speed(b.written_bytes, b.write_s),
            verify_mb_per_s: speed(b.verified_bytes, b.verify_s),
            write_s: b.write_s,
            verify_s: b.verify_s,
            group: *g,
        })
        .collect();
    let judged = verdicts(&facts, &Thresholds::default());
    let mut disk_verdicts = Vec::new();
    let disks: Vec<BurnDisk> = targets
        .iter()
        .zip(burns)
        .zip(smart)
        .zip(facts.iter().zip(judged))
        .map(|(((t, burn), (smart, smart_note)), (f, judged))| {
            let verdict = match &judged.action {
                None if burn.interrupted => "interrupted".to_string(),
                None => "healthy".to_string(),
                Some((a, sentence)) => {
                    disk_verdicts.push(DiskAdvice {
                        path: t.dev.given.clone(),
                        action: *a,
                        sentence: format!("{}: {sentence}", t.dev.given),
                    });
                    serde_json::to_value(a)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default()
                }
            };
            BurnDisk {
                path: t.dev.given.clone(),
                identity: t.dev.identity.clone(),
                start_byte: t.start,
                end_byte: t.end,
                burn,
                write_mb_per_s: f.write_mb_per_s,
                verify_mb_per_s: f.verify_mb_per_s,
                write_pct_of_peers: judged.write_pct,
                verify_pct_of_peers: judged.verify_pct,
                smart,
                smart_note,
                verdict,
            }
        })
        .collect();
    let message = match (interrupted, disk_verdicts.len()) {
        (true, _) => "INTERRUPTED: partial burn-in.".to_string(),
        (false, 0) => format!(
            "HEALTHY: every 4 KiB block of the ranges burned on {} disk(s) written, flushed and read back as written.",
            disks.len()
        ),
        (false, n) => format!("FLAGGED: {n} disk(s) to act on."),
    };
    BurnReport {
        kind: "burnin".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        host: nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default(),
        started_at: rfc3339(started),
        finished_at: rfc3339(SystemTime::now()),
        interrupted,
        command_line: argv,
        run_id: format!("{run:016x}"),
        passes: args.passes,
        io_bytes: args.block,
        disks,
        disk_verdicts,
        message,
    }
}

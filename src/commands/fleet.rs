//! `arrayburn report FILE|DIR...`: read results, judge them together
//! (`fleet`), and write the report (`fleet::render`).

use anyhow::bail;

use crate::cli::ReportArgs;
use crate::export::publish::{Ending, publish};
use crate::fleet::{Doc, Skipped, files, judge};
use crate::judge::Thresholds;
use crate::outcome::Outcome;
use crate::plan::fleet::FleetPlan;
use crate::stop::StopFlag;

/// Runs the report. A signal stops it before anything is written: it only
/// reads files, so it is simply run again.
pub fn run(args: &ReportArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let interrupted = || {
        tell!("arrayburn report: interrupted; nothing was written (run it again)");
        Ok(Outcome::Interrupted)
    };
    let plan = FleetPlan::resolve(args)?;
    let Some((docs, skipped)) = read(&plan, stop)? else { return interrupted() };
    let mut report = judge(&docs, skipped, &Thresholds::default());
    report.header.command_line = argv;
    if let Some((path, acks)) = &plan.ack {
        let acks = acknowledge(&plan, &report, (path, acks.clone()))?;
        crate::fleet::ack::apply(&mut report, &acks);
    }
    if stop.is_set() {
        return interrupted();
    }
    let end = Ending::of("arrayburn report", "report", plan.notify.as_ref());
    Ok(publish(&mut report, plan.outputs(), &end, stop))
}

/// The findings `--ack FILE` acknowledges, with those `--ack-add` adds
/// (the file then written whole, before any report is).
fn acknowledge(
    plan: &FleetPlan,
    report: &crate::fleet::FleetReport,
    (path, mut acks): (&std::path::Path, Vec<crate::judge::ack::Ack>),
) -> anyhow::Result<Vec<crate::judge::ack::Ack>> {
    if plan.ack_add.is_empty() {
        return Ok(acks);
    }
    let when = crate::units::rfc3339(std::time::SystemTime::now());
    for name in &plan.ack_add {
        let how = (plan.who.as_str(), plan.why.as_str(), when.as_str());
        let n = crate::fleet::ack::add(report, &mut acks, name, how)
            .map_err(|e| anyhow::anyhow!("{e}; nothing was written"))?;
        tell!("arrayburn report: {name}: {n} finding(s) acknowledged, into {}", path.display());
    }
    crate::fleet::ack::write_file(path, &acks).map_err(|e| {
        anyhow::anyhow!("--ack {}: cannot write it ({e}); nothing was written", path.display())
    })?;
    Ok(acks)
}

/// Each file read and cleaned (`fleet::read`), in the order given, on as
/// many threads as there are cores (parsing is what a fleet of thousands
/// of results costs); None for a fleet report of an earlier `report --out`
/// in the same tree (ours, not a result). None at all when a signal
/// stopped it (each thread looks before each file).
fn load_all(
    paths: &[std::path::PathBuf],
    stop: &StopFlag,
) -> Option<Vec<Option<Result<Doc, String>>>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(paths.len());
    let mut got: Vec<(usize, Option<Result<Doc, String>>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= paths.len() || stop.is_set() {
                            return mine;
                        }
                        let p = &paths[i];
                        mine.push((i, crate::fleet::read(p).transpose()));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a loader thread panicked")).collect()
    });
    if stop.is_set() {
        return None;
    }
    got.sort_by_key(|(i, _)| *i);
    Some(got.into_iter().map(|(_, d)| d).collect())
}

/// The results read (each with its file), and the files skipped.
type Read = (Vec<(String, Doc)>, Vec<Skipped>);

/// Reads every result file given (or under the directories given): the
/// results, and those skipped with `--keep-going` (without it, the first
/// that cannot be read refuses the report). None when a signal stopped it.
fn read(plan: &FleetPlan, stop: &StopFlag) -> anyhow::Result<Option<Read>> {
    let paths = files(&plan.inputs);
    if paths.is_empty() {
        bail!(
            "no result files in {}: give check or burnin JSON files, or directories holding them",
            plan.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
        );
    }
    let Some(loaded) = load_all(&paths, stop) else { return Ok(None) };
    let mut docs: Vec<(String, Doc)> = Vec::new();
    let mut skipped = Vec::new();
    for (p, got) in paths.iter().zip(loaded) {
        // A fleet report of an earlier `report --out` in the same tree.
        let Some(got) = got else { continue };
        match got {
            Ok(d) => docs.push((p.display().to_string(), d)),
            Err(why) if plan.keep_going => {
                tell!("arrayburn report: skipped {why}");
                skipped.push(Skipped { path: p.display().to_string(), why });
            }
            Err(why) => bail!("{why} (--keep-going reads the others)"),
        }
    }
    if docs.is_empty() {
        bail!("none of the files could be read (each said why above)");
    }
    Ok(Some((docs, skipped)))
}

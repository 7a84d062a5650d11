//! `arrayburn report FILE|DIR...`: read results, judge them together
//! (`fleet`), and write the report (`fleet::render`).

use anyhow::bail;

use super::Outcome;
use crate::cli::ReportArgs;
use crate::document::Document;
use crate::export::publish::{Outputs, Published, publish};
use crate::fleet::{Doc, Skipped, files, is_fleet, judge, load};
use crate::judge::Thresholds;
use crate::notify::Event;
use crate::output::Output;
use crate::stop::StopFlag;

/// Runs the report. A signal stops it before anything is written: it only
/// reads files, so it is simply run again.
pub fn run(args: &ReportArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let interrupted = || {
        tell!("arrayburn report: interrupted; nothing was written (run it again)");
        Ok(Outcome::Interrupted)
    };
    let resolve = |flag: &str, p: Option<&std::path::Path>| {
        p.map(|p| Output::resolve(flag, p, true)).transpose().map_err(anyhow::Error::msg)
    };
    let json = resolve("--json", args.json.as_deref())?;
    let metrics = resolve("--metrics", args.metrics.as_deref())?;
    if let Some(dir) = &args.out {
        crate::plan::check_output_dir(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let Some((docs, skipped)) = read(args, stop)? else { return interrupted() };
    let mut report = judge(&docs, skipped, &Thresholds::default());
    report.header.command_line = argv;
    if stop.is_set() {
        return interrupted();
    }
    let (json, metrics) = (json.as_ref(), metrics.as_ref());
    let to = Outputs { json, csv: None, out: args.out.as_deref(), metrics };
    let outcome = publish(&report, to, "arrayburn report", stop);
    if let Some(n) = args.notify.notifier() {
        n.send(&Event::end("report", &report.document(), report.json()), stop);
    }
    Ok(outcome)
}

/// The results read (each with its file), and the files skipped.
type Read = (Vec<(String, Doc)>, Vec<Skipped>);

/// Reads every result file given (or under the directories given): the
/// results, and those skipped with `--keep-going` (without it, the first
/// that cannot be read refuses the report). None when a signal stopped it.
fn read(args: &ReportArgs, stop: &StopFlag) -> anyhow::Result<Option<Read>> {
    let paths = files(&args.inputs);
    if paths.is_empty() {
        bail!(
            "no result files in {}: give check or burnin JSON files, or directories holding them",
            args.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
        );
    }
    let mut docs: Vec<(String, Doc)> = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        // A fleet report of an earlier `report --out` in the same tree is
        // ours, not a result (a signal while it is looked at stops).
        let fleet = !stop.is_set() && is_fleet(&p);
        if stop.is_set() {
            return Ok(None);
        }
        if fleet {
            continue;
        }
        match load(&p) {
            Ok(d) => docs.push((p.display().to_string(), d)),
            Err(why) if args.keep_going => {
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

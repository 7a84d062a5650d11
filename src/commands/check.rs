//! `arrayburn check`: plan, run the passes, save after each, report.

use std::io::IsTerminal;
use std::path::Path;
use std::time::SystemTime;

use super::Outcome;
use crate::cli::{CheckArgs, ProgressMode};
use crate::device::SystemPaths;
use crate::document::Document;
use crate::export::publish;
use crate::io::{Bounds, Probe, Sweep, open_sweep};
use crate::measure::{
    Beside, PassKind, PassRun, PassSpec, Recheck, Remeasurement, remeasure, run_pass,
};
use crate::notify::Event;
use crate::output::Dir;
use crate::plan::Plan;
use crate::progress::{Progress, Style};
use crate::report::{self, Report, RunInfo};
use crate::stop::StopFlag;

/// Runs a check.
pub fn run(args: &CheckArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    execute(args, argv, stop).map(|(outcome, _)| outcome)
}

/// Runs a check and also returns its report (the demo reads it).
pub fn execute(
    args: &CheckArgs,
    argv: Vec<String>,
    stop: &StopFlag,
) -> anyhow::Result<(Outcome, Report)> {
    let plan = Plan::resolve(args, &SystemPaths::real())?;
    let _locks = plan.lock_disks()?;
    keep_log(&plan);
    for w in &plan.warnings {
        tell!("arrayburn: warning: {w}");
    }
    let mut info = RunInfo {
        started_at: SystemTime::now(),
        command_line: argv,
        interrupted: false,
        complete: false,
    };
    let labels = plan.devices.iter().map(|d| d.given.clone()).collect();
    let mut progress =
        Progress::new(style(plan.settings.progress), labels, plan.settings.progress_interval);
    progress.announce(schedule(&plan));
    let geometry = plan.geometry();
    // One per disk for the whole check: a disk that hung in one pass is not
    // waited for again in the next.
    let bounds: Vec<Bounds> =
        plan.devices.iter().map(|_| Bounds::new(stop, plan.settings.io_timeout)).collect();
    let sweeps = |d: usize| -> std::io::Result<(Sweep, Probe)> {
        let s = &plan.settings;
        open_sweep(s.engine, &plan.files[d], s.queue_depth, &bounds[d])
    };
    let mut passes: Vec<PassRun> = Vec::new();
    let specs = plan.pass_specs();
    for (i, spec) in specs.iter().enumerate() {
        if stop.is_set() {
            break;
        }
        passes.push(run_pass(*spec, &geometry, &sweeps, stop, &mut progress)?);
        info.interrupted = stop.is_set();
        // After the last pass the final save follows at once.
        if i + 1 < specs.len() {
            save_files(&plan, &report::build(checked(&plan), (&passes, &[]), &info), false, stop);
        }
    }
    let suspects =
        if stop.is_set() { Vec::new() } else { report::to_confirm(checked(&plan), &passes) };
    let mut rechecks = Vec::new();
    if !suspects.is_empty() {
        save_files(&plan, &report::build(checked(&plan), (&passes, &[]), &info), false, stop);
    }
    for (disk, beside) in suspects {
        let Some(spec) = remeasure_spec(&specs, beside) else { continue };
        progress.note(&announce(&plan, (disk, beside)));
        let decided = report::decided(checked(&plan), (disk, beside));
        let Remeasurement { slices, runs } =
            remeasure(spec, (disk, beside), (&geometry, &sweeps), stop, &mut progress, &decided)?;
        // What failed while re-measured is a finding of the pass it
        // re-measures, a stop's cut too.
        if let Some(pass) = passes.iter_mut().find(|p| p.kind == spec.kind) {
            for (d, run) in &runs {
                if let Some((_, row)) = pass.disks.iter_mut().find(|(i, _)| i == d) {
                    row.absorb_faults(run);
                }
            }
        }
        // One a stop cut short decides nothing: the pass's verdict stands,
        // in a report marked interrupted.
        if stop.is_set() {
            break;
        }
        rechecks.push(Recheck { disk, beside, slices, runs });
    }
    info.interrupted = stop.is_set();
    info.complete = true;
    let report = report::build(checked(&plan), (&passes, &rechecks), &info);
    publish::print(&report, outputs(&plan).stdout_taken());
    save_files(&plan, &report, true, stop);
    let run = report.document();
    if let Some(n) = args.output.notify.notifier() {
        n.send(&Event::end("check", &run, publish::Published::json(&report)), stop);
    }
    Ok((run.outcome, report))
}

/// The pass a re-measurement reads as: the serial pass's for a disk read
/// beside a peer; for one read with all, the parallel pass's, in as many
/// rounds as the serial pass has slices.
fn remeasure_spec(specs: &[PassSpec], beside: Beside) -> Option<PassSpec> {
    let of = |kind: PassKind| specs.iter().find(|s| s.kind == kind).copied();
    let serial = of(PassKind::Serial)?;
    match beside {
        Beside::Peer(_) => Some(serial),
        Beside::All => of(PassKind::Parallel).map(|p| PassSpec { slices: serial.slices, ..p }),
    }
}

/// The line that says a disk is being re-measured, and why.
fn announce(plan: &Plan, (disk, beside): (usize, Beside)) -> String {
    let a = &plan.devices[disk].given;
    match beside {
        Beside::Peer(peer) => format!(
            "arrayburn: re-measuring {a} alone, alternating with {}: the serial pass alone called it slow or could not decide",
            plan.devices[peer].given
        ),
        Beside::All => format!(
            "arrayburn: re-measuring {a} with all disks reading together: the parallel pass alone called it slow"
        ),
    }
}

/// How long each group of disks reads, in order (see [`PassSpec::groups`]).
///
/// [`PassSpec::groups`]: crate::measure::PassSpec::groups
fn schedule(plan: &Plan) -> Vec<Option<std::time::Duration>> {
    plan.pass_specs().iter().flat_map(|s| s.groups(plan.devices.len())).collect()
}

fn style(mode: ProgressMode) -> Style {
    match mode {
        ProgressMode::Bars => Style::Bars,
        ProgressMode::Lines => Style::Lines,
        ProgressMode::None => Style::Quiet,
        ProgressMode::Auto if std::io::stderr().is_terminal() => Style::Bars,
        ProgressMode::Auto => Style::Lines,
    }
}

/// Writes the files asked for (JSON, surface CSV, the `--out` directory);
/// called after each pass (`last` false: the copies say they are partial)
/// and at the end, so a crash or a signal loses nothing. A file that cannot
/// be written is one line on stderr, not the end of the check: the report
/// still reaches the terminal and the exit status is still the disks'
/// verdict. A second signal waits for the writing to end.
fn save_files(plan: &Plan, report: &Report, last: bool, stop: &StopFlag) {
    let _hold = stop.hold();
    for f in publish::save(report, outputs(plan), last, stop) {
        let what = if last {
            "the printed report is complete; any JSON copy left from an earlier pass says \"complete\": false"
        } else {
            "the check goes on"
        };
        tell!("arrayburn: error: could not write {f} ({what})");
    }
}

/// Where the check's result goes.
fn outputs(plan: &Plan) -> publish::Outputs<'_> {
    let s = &plan.settings;
    publish::Outputs { json: s.json.as_ref(), csv: s.csv.as_ref(), out: s.out.as_deref() }
}

/// Copies every line of the check to its log, named first: `run.log` in
/// `--out DIR`, else beside a `--json FILE` (`r.json`: `r.log`); none
/// where the results go only to the terminal or a pipe. A log that cannot
/// be kept is one line; the check goes on.
fn keep_log(plan: &Plan) {
    use crate::output::{Output, Sink};
    let s = &plan.settings;
    let at = match (&s.out, &s.json) {
        (Some(dir), _) => Dir::create(dir).map(|d| (d, crate::output::bundle::LOG.to_string())),
        (None, Some(Output { sink: Sink::File { dir, name }, .. })) => {
            // `r.log`, unless that is one of the run's own outputs (`--json
            // r.log`, `--csv r.log`): then `r.log.log`.
            let log = Path::new(name).with_extension("log");
            let output = |p: &Path| s.csv.iter().chain(&s.json).any(|o| o.is(&dir.path().join(p)));
            let log = if output(&log) { Path::new(name).with_extension("log.log") } else { log };
            Ok((dir.clone(), log.to_string_lossy().into_owned()))
        }
        _ => return,
    };
    match at.and_then(|(dir, name)| Ok((dir.append(&name)?, dir.path().join(name)))) {
        Ok((file, path)) => {
            crate::tell::log_to(file);
            tell!("arrayburn: {}: the run's log", path.display());
        }
        Err(e) => tell!("arrayburn: warning: no log is kept ({e}); the check goes on"),
    }
}

/// What the report is built from: the plan's disks, groups and settings.
fn checked(plan: &Plan) -> report::Checked<'_> {
    report::Checked { devices: &plan.devices, groups: &plan.groups, settings: &plan.settings }
}

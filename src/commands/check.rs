//! `arrayburn check`: plan, read the disks down the plan (`run::check`),
//! save after each pass, publish. Glue only: it holds no rule and no format.

use crate::cli::CheckArgs;
use crate::device::SystemPaths;
use crate::export::publish::{Ending, publish, save};
use crate::measure::PassRun;
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::progress::Progress;
use crate::report::replay::Recording;
use crate::report::{self, Report, RunInfo};
use crate::run::check::Read;
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
    let (plan, _locks) = ready(args, stop)?;
    let mut info = RunInfo::begun(argv);
    let labels = plan.devices.iter().map(|d| d.given.clone()).collect();
    let mut progress = Progress::new(plan.style(), labels, plan.settings.progress_interval);
    progress.announce(plan.schedule());
    let save = |passes: &[PassRun]| {
        let info = RunInfo { interrupted: stop.is_set(), ..info.clone() };
        save_files(&plan, passes, &info, stop)
    };
    save(&[]); // before any read too: a killed worker leaves a result to mark
    let (read, kernel) = crate::run::check::read(&plan, &mut progress, &save, stop);
    let Read { passes, groups, rechecks, random, vibration } = read?;
    info.interrupted = stop.is_set();
    info.complete = true;
    let read = report::Measured {
        passes: &passes,
        rechecks: &rechecks,
        groups: &groups,
        random: random.as_ref(),
        vibration: vibration.as_ref(),
        kernel: Some(&kernel),
    };
    let mut report = report::build((&plan).into(), read, &info);
    let topology = |p: &str| Some(&plan.devices.iter().find(|d| d.given == p)?.identity.topology);
    let s = &plan.settings;
    let record = s
        .record
        .as_ref()
        .map(|to| (to, Recording::of((&plan).into(), read, (&info, &report.header)).json()));
    let end = Ending {
        locate: s.locate.then_some(&topology as _),
        saved_before: true,
        record,
        ..Ending::of("arrayburn", "check", s.notify.as_ref())
    };
    let outcome = publish(&mut report, s.outputs(), &end, stop);
    Ok((outcome, report))
}

/// The check's plan, its disks locked (held until the check ends) and
/// inspected, its log begun and its warnings said.
fn ready(
    args: &CheckArgs,
    stop: &StopFlag,
) -> anyhow::Result<(Plan, Vec<crate::device::lock::DiskLock>)> {
    let mut plan = Plan::resolve(args, &SystemPaths::real())?;
    let locks = plan.lock_disks()?;
    // Hours are not judged in a check (its disks are in service).
    let rules = crate::judge::inspect::Rules { new_hours: u64::MAX };
    plan.inspection = crate::run::before_run(&plan.devices, rules, "checking", &|| stop.is_set())?;
    if let Some(at) = plan.log() {
        crate::supervisor::start_log("arrayburn", at);
    }
    for w in &plan.warnings {
        tell!("arrayburn: warning: {w}");
    }
    Ok((plan, locks))
}

/// Writes the files asked for (JSON, surface CSV, the `--out` directory)
/// while the check goes on, after each pass (the copies say they are
/// partial; `publish` writes them whole at the end), so a crash or a
/// signal loses nothing. A file that cannot be written is one line on
/// stderr, not the end of the check. A second signal waits for the writing
/// to end.
fn save_files(plan: &Plan, passes: &[PassRun], info: &RunInfo, stop: &StopFlag) {
    let report =
        report::build(plan.into(), report::Measured { passes, ..Default::default() }, info);
    let _hold = stop.hold();
    for f in save(&report, plan.settings.outputs(), false, stop) {
        tell!("arrayburn: error: could not write {f} (the check goes on)");
    }
}

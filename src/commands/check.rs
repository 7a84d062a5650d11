//! `arrayburn check`: plan, run the passes, save after each, report.

use crate::cli::CheckArgs;
use crate::device::SystemPaths;
use crate::export::publish::{Ending, publish, save};
use crate::io::{Probe, Sweep, open_sweep};
use crate::measure::{
    Beside, Geometry, GroupRecheck, GroupRemeasurement, PassRun, Recheck, Remeasurement,
    SweepFactory, remeasure, remeasure_group, run_pass,
};
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::progress::Progress;
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
    let mut plan = Plan::resolve(args, &SystemPaths::real())?;
    let _locks = plan.lock_disks()?;
    // Hours are not judged in a check (its disks are in service).
    let rules = crate::judge::inspect::Rules { new_hours: u64::MAX };
    plan.inspection = crate::plan::before_run(&plan.devices, rules, "checking", &|| stop.is_set())?;
    if let Some(at) = plan.log() {
        crate::apart::start_log("arrayburn", at);
    }
    for w in &plan.warnings {
        tell!("arrayburn: warning: {w}");
    }
    let mut info = RunInfo::begun(argv);
    let labels = plan.devices.iter().map(|d| d.given.clone()).collect();
    let mut progress = Progress::new(plan.style(), labels, plan.settings.progress_interval);
    progress.announce(plan.schedule());
    let bounds = plan.bounds(stop);
    let sweeps = |d: usize| -> std::io::Result<(Sweep, Probe)> {
        let s = &plan.settings;
        open_sweep(s.engine, &plan.files[d], s.queue_depth, &bounds[d])
    };
    let on = Reading { plan: &plan, geometry: plan.geometry(), sweeps: &sweeps, stop };
    let mut passes = on.passes(&mut info, &mut progress)?;
    let groups = on.read_groups_again(&mut passes, &info, &mut progress)?;
    let rechecks = on.remeasure(&mut passes, &info, &mut progress)?;
    info.interrupted = stop.is_set();
    info.complete = true;
    let mut report = report::build((&plan).into(), (&passes, &rechecks, &groups), &info);
    let topology = |p: &str| Some(&plan.devices.iter().find(|d| d.given == p)?.identity.topology);
    let s = &plan.settings;
    let end = Ending {
        locate: s.locate.then_some(&topology as _),
        saved_before: true,
        ..Ending::of("arrayburn", "check", s.notify.as_ref())
    };
    let outcome = publish(&mut report, s.outputs(), &end, stop);
    Ok((outcome, report))
}

/// What the check reads with: its plan, each disk's geometry and sweep.
struct Reading<'a> {
    plan: &'a Plan,
    geometry: Vec<Geometry>,
    sweeps: &'a SweepFactory<'a>,
    stop: &'a StopFlag,
}

impl Reading<'_> {
    /// The passes, in order, the results saved after each but the last.
    fn passes(&self, info: &mut RunInfo, progress: &mut Progress) -> anyhow::Result<Vec<PassRun>> {
        let (plan, stop) = (self.plan, self.stop);
        let mut passes: Vec<PassRun> = Vec::new();
        let specs = plan.pass_specs();
        for (i, spec) in specs.iter().enumerate() {
            if stop.is_set() {
                break;
            }
            passes.push(run_pass(*spec, &self.geometry, self.sweeps, stop, progress)?);
            info.interrupted = stop.is_set();
            // After the last pass the final save follows at once.
            if i + 1 < specs.len() {
                save_files(plan, &passes, info, stop);
            }
        }
        Ok(passes)
    }

    /// Each group of disks the parallel pass saw lose speed together
    /// while the others did not, read again (alone, then beside all)
    /// before it is named; what failed meanwhile is a finding of the
    /// parallel pass. A group a stop cut short is not confirmed.
    fn read_groups_again(
        &self,
        passes: &mut [PassRun],
        info: &RunInfo,
        progress: &mut Progress,
    ) -> anyhow::Result<Vec<GroupRecheck>> {
        let (plan, stop) = (self.plan, self.stop);
        let groups =
            if stop.is_set() { Vec::new() } else { plan.array().groups_to_confirm(passes) };
        let Some(spec) = plan.remeasure_spec(Beside::All).filter(|_| !groups.is_empty()) else {
            return Ok(Vec::new());
        };
        save_files(plan, passes, info, stop);
        let mut out = Vec::new();
        for disks in groups {
            progress.note(&plan.group_words(&disks));
            let GroupRemeasurement { alone, together, runs } = {
                let array = plan.array();
                let decided = array.group_decided(passes, &disks);
                let on = (self.geometry.as_slice(), self.sweeps);
                remeasure_group(spec, &disks, on, stop, progress, &decided)?
            };
            if let Some(pass) = passes.iter_mut().find(|p| p.kind == spec.kind) {
                pass.absorb_faults(&runs);
            }
            if stop.is_set() {
                break;
            }
            out.push(GroupRecheck { disks, alone, together });
        }
        Ok(out)
    }

    /// Each disk one pass alone called slow (or could not decide)
    /// re-measured before its verdict; what failed meanwhile is a finding
    /// of the pass it re-measures. One a stop cut short decides nothing:
    /// the pass's verdict stands, in a report marked interrupted.
    fn remeasure(
        &self,
        passes: &mut [PassRun],
        info: &RunInfo,
        progress: &mut Progress,
    ) -> anyhow::Result<Vec<Recheck>> {
        let (plan, stop) = (self.plan, self.stop);
        let suspects = if stop.is_set() { Vec::new() } else { plan.array().to_confirm(passes) };
        if !suspects.is_empty() {
            save_files(plan, passes, info, stop);
        }
        let mut rechecks = Vec::new();
        for (disk, beside) in suspects {
            let Some(spec) = plan.remeasure_spec(beside) else { continue };
            progress.note(&plan.remeasure_words((disk, beside)));
            let array = plan.array();
            let decided = array.decided((disk, beside));
            let on = (self.geometry.as_slice(), self.sweeps);
            let Remeasurement { slices, runs } =
                remeasure(spec, (disk, beside), on, stop, progress, &decided)?;
            if let Some(pass) = passes.iter_mut().find(|p| p.kind == spec.kind) {
                pass.absorb_faults(&runs);
            }
            if stop.is_set() {
                break;
            }
            rechecks.push(Recheck { disk, beside, slices, runs });
        }
        Ok(rechecks)
    }
}

/// Writes the files asked for (JSON, surface CSV, the `--out` directory)
/// while the check goes on, after each pass (the copies say they are
/// partial; `publish` writes them whole at the end), so a crash or a
/// signal loses nothing. A file that cannot be written is one line on
/// stderr, not the end of the check. A second signal waits for the writing
/// to end.
fn save_files(plan: &Plan, passes: &[PassRun], info: &RunInfo, stop: &StopFlag) {
    let report = report::build(plan.into(), (passes, &[], &[]), info);
    let _hold = stop.hold();
    for f in save(&report, plan.settings.outputs(), false, stop) {
        tell!("arrayburn: error: could not write {f} (the check goes on)");
    }
}

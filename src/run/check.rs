//! A check run down its plan: the passes in order, then each group of
//! disks that lost speed together read again, then each disk one pass
//! alone called slow re-measured before its verdict; which to read again,
//! and when the rounds read have decided, is asked of `judge::check`.
//!
//! It must not judge, build a report or write a file: the caller saves
//! what was read so far (`Reading::save`).

use crate::device::latency_log::DriveLog;
use crate::io::{Probe, Sweep, open_sweep};
use crate::measure::{
    Beside, Geometry, GroupRecheck, GroupRemeasurement, PassRun, RandomRead, RandomSweeps, Recheck,
    Remeasurement, ShakeRead, SweepFactory, random_pass, read_disk, remeasure, remeasure_group,
    run_pass, vibration_pass,
};
use crate::plan::Plan;
use crate::progress::Progress;
use crate::stop::StopFlag;

/// Reads the disks down `plan`: each disk's sweep opened as the plan
/// asks, the passes and what follows them (`Reading::all`), `save` called
/// with the passes read so far; the kernel's log and counters watched from
/// the first read to the last (and each NVMe drive's error log read again
/// after). What was read, and what the kernel saw of each disk.
pub fn read(
    plan: &Plan,
    progress: &mut Progress,
    save: &dyn Fn(&[PassRun]),
    stop: &StopFlag,
) -> (anyhow::Result<Read>, Vec<crate::device::kernel::Seen>) {
    let bounds = plan.bounds(stop);
    let sweeps = |d: usize| -> std::io::Result<(Sweep, Probe)> {
        let s = &plan.settings;
        open_sweep(s.engine, &plan.files[d], s.queue_depth, &bounds[d])
    };
    let random = |d: usize, depth: usize| -> std::io::Result<Sweep> {
        open_sweep(plan.settings.engine, &plan.files[d], depth, &bounds[d]).map(|(s, _)| s)
    };
    let geometry = plan.geometry();
    let on = Reading { plan, geometry, sweeps: &sweeps, random: &random, stop, save };
    let paths = crate::device::SystemPaths::real();
    let watch = crate::device::kernel::Watch::start(&paths, &plan.devices);
    let read = on.all(progress);
    let mut kernel = watch.finish();
    let declared: Vec<&crate::inspect::Declared> =
        plan.inspection.iter().map(|i| &i.declared).collect();
    crate::inspect::error_logs_after(&plan.devices, &declared, &mut kernel, &|| stop.is_set());
    (read, kernel)
}

/// What the check reads with: its plan, each disk's geometry and sweep,
/// and how the results so far are saved (the caller's: after each pass but
/// the last, and before reading again).
pub struct Reading<'a> {
    pub plan: &'a Plan,
    pub geometry: Vec<Geometry>,
    pub sweeps: &'a SweepFactory<'a>,
    /// Each disk's sweep at a chosen depth (the random reads').
    pub random: &'a RandomSweeps<'a>,
    pub stop: &'a StopFlag,
    pub save: &'a dyn Fn(&[PassRun]),
}

/// What a check read: its passes, the groups read again, the disks
/// re-measured, the random reads.
pub struct Read {
    pub passes: Vec<PassRun>,
    pub groups: Vec<GroupRecheck>,
    pub rechecks: Vec<Recheck>,
    pub random: Option<RandomRead>,
    pub vibration: Option<ShakeRead>,
}

impl Reading<'_> {
    /// The passes, then the groups read again, then the disks
    /// re-measured, then the random reads.
    pub fn all(&self, progress: &mut Progress) -> anyhow::Result<Read> {
        let mut passes = self.passes(progress)?;
        let groups = self.read_groups_again(&mut passes, progress)?;
        let rechecks = self.remeasure(&mut passes, progress)?;
        let random = self.random_reads(&passes, progress);
        let vibration = self.neighbour_pass(&passes, progress);
        Ok(Read { passes, groups, rechecks, random, vibration })
    }

    /// Each disk one of whose two random reads showed a finding the other
    /// did not, read alone once more at that depth (what decides it: a
    /// busy host's hiccup shows once, a drive's fault again).
    fn read_again(&self, read: &mut RandomRead, progress: &mut Progress) {
        let paths: Vec<String> = self.plan.devices.iter().map(|d| d.given.clone()).collect();
        let judged = crate::judge::random::judge(read, (&paths, &self.plan.groups));
        for (path, depth) in judged.to_read_again() {
            let Some(d) = paths.iter().position(|p| *p == path).filter(|_| !self.stop.is_set())
            else {
                continue;
            };
            progress.note(&format!(
                "arrayburn: random reads: {path} alone again at depth {depth}: one of its two reads showed what the other did not"
            ));
            let (spec, size) = (&read.spec, self.geometry[d].size);
            let run =
                read_disk(spec.block, (d, size), (depth, spec.length, 5), self.random, self.stop);
            read.disks[d].again.push(run);
        }
    }

    /// The neighbour pass, when the plan has it and no stop came first.
    fn neighbour_pass(&self, passes: &[PassRun], progress: &mut Progress) -> Option<ShakeRead> {
        let spec = self.plan.settings.vibration.as_ref().filter(|_| !self.stop.is_set())?;
        (self.save)(passes);
        let sizes: Vec<u64> = self.geometry.iter().map(|g| g.size).collect();
        let neighbours = self.plan.neighbours();
        let mut note = |disk| progress.neighbours_started(disk, &neighbours[disk], spec.length);
        Some(vibration_pass(spec, (&sizes, &neighbours), self.random, self.stop, &mut note))
    }

    /// The random reads, when the plan has them and no stop came first.
    fn random_reads(&self, passes: &[PassRun], progress: &mut Progress) -> Option<RandomRead> {
        let spec = self.plan.settings.random.as_ref().filter(|_| !self.stop.is_set())?;
        (self.save)(passes);
        let sizes: Vec<u64> = self.geometry.iter().map(|g| g.size).collect();
        let mut note = |disk, depth| progress.random_started(disk, depth, spec.length);
        let mut read = random_pass(spec, &sizes, self.random, self.stop, &mut note);
        self.read_again(&mut read, progress);
        // An NVMe drive's own latency log, beside what was measured.
        for (d, disk) in self.plan.devices.iter().enumerate() {
            if disk.identity.topology.transport == "nvme" && !self.stop.is_set() {
                let log = DriveLog::of(&disk.given, &|| self.stop.is_set());
                read.disks[d].drive_log = Some(log);
            }
        }
        Some(read)
    }

    /// The passes, in order, the results saved after each but the last.
    fn passes(&self, progress: &mut Progress) -> anyhow::Result<Vec<PassRun>> {
        let (plan, stop) = (self.plan, self.stop);
        let mut passes: Vec<PassRun> = Vec::new();
        let specs = plan.pass_specs();
        for (i, spec) in specs.iter().enumerate() {
            if stop.is_set() {
                break;
            }
            passes.push(run_pass(*spec, &self.geometry, self.sweeps, stop, progress)?);
            // After the last pass the final save follows at once.
            if i + 1 < specs.len() {
                (self.save)(&passes);
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
        progress: &mut Progress,
    ) -> anyhow::Result<Vec<GroupRecheck>> {
        let (plan, stop) = (self.plan, self.stop);
        let groups =
            if stop.is_set() { Vec::new() } else { plan.array().groups_to_confirm(passes) };
        let Some(spec) = plan.remeasure_spec(Beside::All).filter(|_| !groups.is_empty()) else {
            return Ok(Vec::new());
        };
        (self.save)(passes);
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
        progress: &mut Progress,
    ) -> anyhow::Result<Vec<Recheck>> {
        let (plan, stop) = (self.plan, self.stop);
        let suspects = if stop.is_set() { Vec::new() } else { plan.array().to_confirm(passes) };
        if !suspects.is_empty() {
            (self.save)(passes);
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

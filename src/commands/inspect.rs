//! `arrayburn inspect`: glue. The plan resolves and refuses, `inspect`
//! asks each drive (and probes where asked), `judge::inspect` decides, the
//! report is published as every run's is.

use std::time::SystemTime;

use crate::burnin::{probe, scatter};
use crate::cli::InspectArgs;
use crate::device::SystemPaths;
use crate::export::publish::{Ending, publish};
use crate::header::{Header, Kind};
use crate::inspect;
use crate::judge::inspect::run_verdict;
use crate::outcome::Outcome;
use crate::plan::inspect::InspectPlan;
use crate::report::inspect::InspectReport;
use crate::stop::StopFlag;

/// Runs an inspection.
pub fn run(args: &InspectArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let plan = InspectPlan::resolve(args, stop)?;
    let started = SystemTime::now();
    let watch = crate::device::kernel::Watch::start(&SystemPaths::real(), &plan.devices);
    let declared = inspect::ask_all(&SystemPaths::real(), &plan.devices, &|| stop.is_set());
    plan.refuse_locked(&declared)?;
    let (probed, scattered) = if plan.probe.is_empty() || !plan.consent(stop)? {
        (vec![None; declared.len()], vec![None; declared.len()])
    } else {
        let targets: Vec<_> = plan.probe.iter().collect();
        let probed =
            probe::probe_all(&targets, plan.io_timeout, stop).into_iter().map(Some).collect();
        let scattered = if plan.smr.0.is_zero() || stop.is_set() {
            vec![None; declared.len()]
        } else {
            scatter::probe_all(&targets, plan.smr, plan.io_timeout, ("inspect", stop))
        };
        (probed, scattered)
    };
    let interrupted = stop.is_set();
    let paths: Vec<String> = plan.devices.iter().map(|d| d.given.clone()).collect();
    let mut disks =
        crate::judge::inspect::judged(&paths, declared, (probed, scattered), plan.rules);
    crate::judge::inspect::with_kernel(&mut disks, watch.finish());
    let (verdict, message) = run_verdict(&disks, plan.rules, interrupted);
    let probed = disks.iter().any(|d| d.probe.is_some());
    let mut report = InspectReport {
        header: Header::now(Kind::Inspect, started, argv).ended(interrupted, true),
        new_hours: plan.rules.new_hours,
        probed,
        disks,
        verdict,
        message,
    };
    let end = Ending::of("arrayburn inspect", "inspect", None);
    Ok(publish(&mut report, plan.outputs(), &end, stop))
}

//! `arrayburn demo`: a first run without spare disks. It builds a small
//! array the tool owns (memory-backed loop devices, all read at a drive-like
//! speed through a blkio throttle, one held slower), runs the normal check
//! on it, and removes everything it created on every exit path.

use std::path::Path;

use anyhow::{Result, bail};

use crate::cli::DemoArgs;
use crate::judge::Verdict;
use crate::outcome::Outcome;
use crate::plan::demo::{DemoPlan, HEALTHY_BPS, SHM, SLOW_BPS};
use crate::report::Report;
use crate::stop::StopFlag;
use crate::testbed::{LoopArray, Throttle};

/// Runs the demo.
pub fn run(args: &DemoArgs, argv: Vec<String>, stop: &StopFlag) -> Result<Outcome> {
    let plan = DemoPlan::resolve(args)?;
    let hold = stop.hold();
    let outcome = build_and_check(&plan, argv, stop);
    drop(hold);
    tell!("arrayburn demo: removed its loop devices, their files in {SHM} and its cgroup");
    outcome
}

fn build_and_check(plan: &DemoPlan, argv: Vec<String>, stop: &StopFlag) -> Result<Outcome> {
    let mut array = LoopArray::default();
    if let Err(e) = array.create(Path::new(SHM), plan.disks, plan.size, stop) {
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(Outcome::Interrupted);
        }
        bail!("could not build the demo array: {e}");
    }
    let slow = plan.slow;
    // Declared after the array, so dropped before it: the process leaves the
    // cgroup and the cgroup goes before the loop devices are detached.
    let limits = if plan.throttled { throttle(&array, slow) } else { None };
    let devices: Vec<String> = array.disks.iter().map(|d| d.dev.clone()).collect();
    tell!("arrayburn demo: disks {}", devices.join(" "));
    if limits.is_some() {
        tell!("arrayburn demo: the slow one is {} ({} MB/s)", devices[slow], SLOW_BPS / 1_000_000);
    }
    let (outcome, report) = super::check::execute(&plan.check(devices), argv, stop)?;
    if limits.is_some() && outcome != Outcome::Interrupted {
        explain(&report, &array.disks[slow].dev);
    }
    Ok(outcome)
}

/// Says whether the check found the disk the demo made slow, and nothing
/// else.
fn explain(report: &Report, slow: &str) {
    let flagged: Vec<&str> = report
        .summary
        .flagged
        .iter()
        .filter(|f| f.verdict == Verdict::Slow)
        .map(|f| f.path.as_str())
        .collect();
    let others: Vec<&str> = flagged.iter().copied().filter(|p| *p != slow).collect();
    if flagged.contains(&slow) && others.is_empty() {
        tell!(
            "arrayburn demo: found it: {slow}, held to {} MB/s while its peers read at {} MB/s, is the one disk marked SLOW \
             (exit status 1, as a check that finds a slow disk exits)",
            SLOW_BPS / 1_000_000,
            HEALTHY_BPS / 1_000_000
        );
    } else {
        tell!(
            "arrayburn demo: expected exactly {slow} to be marked SLOW, but the check marked: {flagged:?}"
        );
    }
}

/// Puts this process in a new blkio group that limits every disk, the slow
/// one more. On failure the demo goes on without it, saying so.
fn throttle(array: &LoopArray, slow: usize) -> Option<Throttle> {
    let name = format!("arrayburn-demo-{}", std::process::id());
    let setup = || -> std::io::Result<Throttle> {
        let t = Throttle::create(&name)?;
        for (i, d) in array.disks.iter().enumerate() {
            t.limit(&d.devno()?, if i == slow { SLOW_BPS } else { HEALTHY_BPS })?;
        }
        t.enter()?;
        Ok(t)
    };
    setup()
        .inspect_err(|e| {
            tell!(
                "arrayburn demo: could not set up the throttle ({e}): running without a slow disk"
            )
        })
        .ok()
}

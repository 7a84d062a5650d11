//! `arrayburn burnin --destructive DEVICE...`: plan (every refusal before a
//! byte is written: `plan::burnin`), the operator's consent, SMART
//! self-tests where asked, burn every disk at once (`burnin::watch`), SMART
//! after, judge, build (`report::burnin`) and publish (`export::publish`).
//! Glue only: it holds no rule and no format.

use std::time::Instant;

use crate::burnin::DiskPlan;
use crate::burnin::cycle;
use crate::burnin::health::smart_after;
use crate::burnin::record::{DiskBurn, Temps};
use crate::burnin::state::{Phase, Store};
use crate::burnin::watch::{Told, burn_all};
use crate::burnin::worker::{Live, Reopens, burn, soak, verify_written};
use crate::cli::BurninArgs;
use crate::device::kernel::Seen;
use crate::export::metrics;
use crate::export::publish::{Ending, publish};
use crate::judge::burned::{BurnRun, Burned};
use crate::outcome::Outcome;
use crate::plan::burnin::BurnPlan;
use crate::plan::consent::consent;
use crate::plan::verify::ThenVerify;
use crate::report::burnin::build;
use crate::report::replay::BurnRecording;
use crate::stop::StopFlag;

/// Runs the burn-in, or with `--read-only` the soak: every disk read
/// whole, pass after pass, at once; with `--idle` or `--cycles`, the
/// disks that finished the burn-in are verified after it.
pub fn run(args: &BurninArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let (outcome, then) = burn_in(args, argv, stop)?;
    match then {
        Some((then, disks)) if outcome != Outcome::Interrupted && !stop.is_set() => {
            Ok(outcome.and(verify_after(&then, &disks, args, stop)))
        }
        _ => Ok(outcome),
    }
}

/// After the burn-in's report: every disk idle for `--idle`, then the
/// verify `then` names of `disks` (those whose passes all ended), a run of
/// its own. A stop while idle leaves the burn-in's verdict and the line
/// that verifies later; a verify that cannot begin is said, not judged.
fn verify_after(
    then: &ThenVerify,
    disks: &[String],
    args: &BurninArgs,
    stop: &StopFlag,
) -> Outcome {
    let shown = then.shown(disks);
    if disks.is_empty() {
        tell!("arrayburn burnin: no disk finished its passes: none is verified after them");
        return Outcome::NotJudged;
    }
    crate::apart::go_on_with(&format!("the burn-in is done; verify its blocks with: {shown}"));
    if !then.idle.is_zero() {
        let human = crate::units::human_duration;
        tell!("arrayburn burnin: every disk idle {} before the verify", human(then.idle));
        let began = std::time::Instant::now();
        // A line a minute at most: a day idle is not 8,640 lines of log.
        let every = args.progress_interval.max(std::time::Duration::from_secs(60));
        while began.elapsed() < then.idle {
            if !stop.rest(every.min(then.idle.saturating_sub(began.elapsed()))) {
                tell!(
                    "arrayburn burnin: interrupted while idle; the burn-in's verdict stands; verify later with: {shown}"
                );
                return Outcome::Interrupted;
            }
            let left = then.idle.saturating_sub(began.elapsed());
            if !left.is_zero() && args.progress != crate::cli::BurnProgress::None {
                tell!("arrayburn burnin: idle before the verify: {} left", human(left));
            }
        }
    }
    let line = then.line(disks);
    let verify = match <crate::cli::Cli as clap::Parser>::try_parse_from(&line).map(|c| c.command) {
        Ok(crate::cli::Command::Burnin(a)) => a,
        Ok(_) => unreachable!("the verify's words name burnin"),
        Err(e) => {
            let e = e.kind();
            tell!("arrayburn burnin: the verify after the burn-in could not begin ({e}): {shown}");
            return Outcome::NotJudged;
        }
    };
    tell!("arrayburn burnin: verifying the burn-in's blocks: {shown}");
    match run(&verify, line, stop) {
        Ok(outcome) => outcome,
        Err(e) => {
            tell!("arrayburn burnin: the verify after the burn-in could not begin: {e}");
            Outcome::NotJudged
        }
    }
}

/// The verify after a burn-in, and the disks it reads (those whose passes
/// all ended).
type Then = (ThenVerify, Vec<String>);

/// A disk's run as it ended: its burn, its temperatures and what the
/// kernel saw of it.
type Ended = (DiskBurn, Temps, Option<Seen>);

/// The burn-in (or soak, or verify) as `args` ask: how it ended, and
/// where a verify follows, which and of which disks.
fn burn_in(
    args: &BurninArgs,
    argv: Vec<String>,
    stop: &StopFlag,
) -> anyhow::Result<(Outcome, Option<Then>)> {
    let mut plan = BurnPlan::resolve(args, &argv, stop)?;
    plan.inspect(stop)?;
    plan.keep_log();
    for w in plan.self_test_warnings() {
        tell!("arrayburn burnin: warning: {w}");
    }
    if !plan.read_only && (!consent(&mut plan, stop)? || stop.is_set()) {
        tell!("arrayburn burnin: interrupted before the burn-in began; nothing was written");
        return Ok((Outcome::Interrupted, None));
    }
    if plan.self_tests_stopped(stop) {
        return Ok((Outcome::Interrupted, None));
    }
    if !plan.probe(stop) {
        // The probes wrote to the disks: what they found is reported,
        // nothing burned, the run interrupted.
        let mut none = DiskBurn::default();
        none.interrupted = true;
        let burns = plan.disks.iter().map(|_| (none.clone(), Temps::default(), None)).collect();
        finish(&plan, burns, true, stop)?;
        return Ok((Outcome::Interrupted, None));
    }
    let store = plan.ready()?;
    started(&plan, stop);
    let deadline = plan.read_only.then(|| plan.duration.map(|d| Instant::now() + d));
    let devices: Vec<crate::device::BlockDevice> =
        plan.disks.iter().map(|d| d.target.dev.clone()).collect();
    let watch = crate::device::kernel::Watch::start(&crate::device::SystemPaths::real(), &devices);
    let burns = burn_all(
        &plan.disks,
        (deadline, &plan.looks),
        (stop, Told { met: &|d, t| plan.met((d, t), stop), tick: &|t, eta| tick(&plan, t, eta) }),
        |d, live| one(&plan, (d, live), (store, deadline.flatten()), stop),
    );
    let mut kernel = watch.finish();
    // A verify's own cycles take its disks' links down: said, not judged.
    for (seen, d) in kernel.iter_mut().zip(&plan.disks) {
        let Some(v) = &d.point.verifies else { continue };
        seen.planned = match (v.power, v.spin_up_timeout_s) {
            (true, _) => {
                Some("the verify cut its slot's power before each read-back (--power-cycle)".into())
            }
            (false, Some(_)) => {
                Some("the verify spun it down before each read-back (--cycles)".into())
            }
            _ => None,
        };
    }
    let interrupted = stop.is_set() || burns.iter().any(|(b, _)| b.interrupted);
    let then = plan.then_verify.clone().map(|t| (t, finished(&plan, &burns)));
    let burns = burns.into_iter().zip(kernel).map(|((b, t), k)| (b, t, Some(k))).collect();
    let outcome = finish(&plan, burns, interrupted, stop)?;
    if outcome == Outcome::Interrupted {
        tell!("arrayburn burnin: interrupted; {}", plan.how_to_go_on());
    } else if stop.is_set() {
        // Every disk done and judged: nothing to continue.
        tell!(
            "arrayburn burnin: the stop came while the results were written; the burn-in had finished and its verdict stands (nothing to resume)"
        );
    }
    Ok((outcome, then))
}

/// The disks whose passes all ended.
fn finished(plan: &BurnPlan, burns: &[(DiskBurn, Temps)]) -> Vec<String> {
    let done = |b: &DiskBurn| b.place.is_some_and(|p| p.phase == Phase::Done);
    (plan.disks.iter().zip(burns).filter(|(_, (b, _))| done(b)))
        .map(|(d, _)| d.target.dev.given.clone())
        .collect()
}

/// Disk `d`'s run as the plan asks: a soak (no store), a verify, or its
/// burn-in from its checkpoint, its place saved in `store` as it goes.
fn one(
    plan: &BurnPlan,
    (d, live): (&DiskPlan, &Live),
    (store, deadline): (Option<&Store>, Option<Instant>),
    stop: &StopFlag,
) -> DiskBurn {
    let on = plan.on(d);
    let Some(store) = store else { return soak(&plan.job((d, &on), live, deadline, stop)) };
    let (mut warned, c) = (false, &d.point);
    let save =
        &mut |b: &DiskBurn, at| store.save_place((&d.target.checkpoint, c), (b, at), &mut warned);
    if plan.verify {
        return verify(plan, (d, live), save, stop);
    }
    burn(&plan.job((d, &on), live, deadline, stop), c.at, c.burn.clone(), save)
}

/// Disk `d`'s verify; with --cycles, each read-back after a spin cycle, or
/// with --power-cycle after its slot's power was cut (the disk read
/// through its file opened again then).
fn verify(
    plan: &BurnPlan,
    (d, live): (&DiskPlan, &Live),
    save: &mut dyn FnMut(&DiskBurn, crate::burnin::state::At),
    stop: &StopFlag,
) -> DiskBurn {
    let c = &d.point;
    let on = Reopens { first: plan.on(d), now: Default::default() };
    let job = plan.job((d, &on), live, None, stop);
    let v = c.verifies.as_ref();
    let within = v.and_then(|v| v.spin_up_timeout_s).map(std::time::Duration::from_secs_f64);
    let power = cycle::slot_power(&d.target.dev).filter(|_| v.is_some_and(|v| v.power));
    let (on, power) = (&on, &power);
    let spin = within.map(|within| {
        move |n: u16| match power {
            Some(p) => cycle::power(&d.target, (n, p), within, (on.first.file, &on.now), stop),
            None => cycle::spin(&d.target, n, within, stop),
        }
    });
    let spin = spin.as_ref().map(|f| f as &dyn Fn(u16) -> cycle::Cycle);
    verify_written(&job, &c.written(), (c.at, spin), c.burn.clone(), save)
}

/// Where each disk stands, as `--metrics` while the run goes on (a file
/// that cannot be written is said at the end, when it is written last).
fn tick(plan: &BurnPlan, ticks: &[crate::progress::BurnTick], eta: Option<f64>) {
    if let Some(out) = &plan.metrics {
        let text = metrics::burnin_live(&plan.disks, ticks, eta).render();
        let _ = out.write(text.as_bytes(), false, &StopFlag::default());
    }
}

/// Each disk's run as its rules read it: the drives' own self-test after
/// the passes (where asked), then SMART after the run.
fn burned(plan: &BurnPlan, burns: Vec<Ended>, interrupted: bool, stop: &StopFlag) -> Vec<Burned> {
    let (burns, kernel): (Vec<(DiskBurn, Temps)>, Vec<Option<Seen>>) =
        burns.into_iter().map(|(b, t, k)| ((b, t), k)).unzip();
    let after =
        if interrupted { vec![None; burns.len()] } else { plan.self_tests_after(&burns, stop) };
    (plan.disks.iter().zip(burns).zip(after).zip(kernel))
        .map(|(((d, (burn, temps)), self_test_after), kernel)| {
            let smart = smart_after(d, interrupted || stop.is_set(), stop);
            let (remeasured, recovery) = (None, None);
            let disk = d.burned();
            Burned { disk, burn, smart, temps, remeasured, recovery, self_test_after, kernel }
        })
        .collect()
}

/// What the process that waits for this one needs should this one be
/// killed: how the run goes on (not a soak's), and the run's result as it
/// begins (nothing burned yet, `complete: false`) saved where its results
/// go (not its live metrics), for it to mark killed.
fn started(plan: &BurnPlan, stop: &StopFlag) {
    if !plan.read_only || plan.verify {
        crate::apart::go_on_with(&plan.how_to_go_on());
    }
    let burns = plan.disks.iter().map(|_| (DiskBurn::default(), Temps::default(), None)).collect();
    let mut run = run_of(plan, burns, true, stop);
    run.interrupted = false;
    let to = crate::output::Outputs { metrics: None, ..plan.outputs() };
    let mut report = build(run);
    report.header.complete = false;
    // What cannot be written now is said at the end, when it is written
    // whole.
    let _ = crate::export::publish::save(&report, to, false, stop);
}

/// The run as its report is built from it: each disk's burn, SMART after
/// it and its own self-test after the passes (not where `interrupted`).
fn run_of(plan: &BurnPlan, burns: Vec<Ended>, interrupted: bool, stop: &StopFlag) -> BurnRun {
    BurnRun {
        disks: burned(plan, burns, interrupted, stop),
        plan: plan.estimate.clone(),
        interrupted,
        read_only: plan.read_only,
        engine: (plan.engine, plan.depth),
        thresholds: plan.thresholds,
        inspection: plan.inspection.clone(),
        left_out: plan.left_out.clone(),
    }
}

/// SMART after the run, the disks slow on speed alone re-measured, the
/// report built and published.
fn finish(
    plan: &BurnPlan,
    burns: Vec<Ended>,
    interrupted: bool,
    stop: &StopFlag,
) -> anyhow::Result<Outcome> {
    let mut run = run_of(plan, burns, interrupted, stop);
    if !interrupted {
        plan.recover(&mut run, stop);
        plan.remeasure(&mut run, stop);
    }
    // A signal while SMART was read or a disk re-measured: the run is not
    // finished either.
    run.interrupted |= stop.is_set();
    let keep = |document: &[u8]| {
        if let (Some(store), Some(d)) = (&plan.store, plan.disks.first()) {
            store.keep(d.point.own_id(), document);
        }
    };
    let topology = |p: &str| {
        Some(&plan.disks.iter().find(|d| d.target.dev.given == p)?.target.dev.identity.topology)
    };
    let recorded = plan.record.as_ref().map(|to| (to, run.clone()));
    let mut report = build(run);
    let end = Ending {
        keep: Some(&keep),
        locate: plan.locate.then_some(&topology as _),
        record: recorded.map(|(to, run)| (to, BurnRecording::of(run, &report.header).json())),
        ..Ending::of("arrayburn burnin", "burnin", plan.notify.as_ref())
    };
    Ok(publish(&mut report, plan.outputs(), &end, stop))
}

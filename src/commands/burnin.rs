//! `arrayburn burnin --destructive DEVICE...`: plan (every refusal before a
//! byte is written: `plan::burnin`), the operator's consent, the run down
//! its plan (`run::burnin`), build (`report::burnin`) and publish
//! (`export::publish`); then the verify that follows, where asked, as a
//! run of its own. Glue only: it holds no rule and no format.

use crate::burnin::record::{DiskBurn, Temps};
use crate::cli::BurninArgs;
use crate::export::metrics;
use crate::export::publish::{Ending, publish};
use crate::judge::burn_facts::BurnRun;
use crate::outcome::Outcome;
use crate::plan::burnin::BurnPlan;
use crate::plan::consent::consent;
use crate::report::burnin::build;
use crate::report::replay::BurnRecording;
use crate::run::burnin::{Before, before, burn, idle};
use crate::stop::StopFlag;

/// Runs the burn-in, or with `--read-only` the soak: every disk read
/// whole, pass after pass, at once; with `--idle` or `--cycles`, the
/// disks that finished the burn-in are then verified, a run of their own.
pub fn run(args: &BurninArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let (mut args, mut argv, mut before) = (args.clone(), argv, None::<Outcome>);
    loop {
        let (now, then) = match (BurnPlan::resolve(&args, &argv, stop), before) {
            (Ok(plan), _) => burn_in(plan, stop)?,
            (Err(e), None) => return Err(e),
            // The verify that follows, when it cannot begin: said, not judged.
            (Err(e), Some(burnt)) => {
                tell!("arrayburn burnin: the verify after the burn-in could not begin: {e}");
                return Ok(burnt.and(Outcome::NotJudged));
            }
        };
        let outcome = before.map_or(now, |b| b.and(now));
        let Some((then, disks)) = then else { return Ok(outcome) };
        if outcome == Outcome::Interrupted || stop.is_set() {
            return Ok(outcome);
        }
        let shown = then.shown(&disks);
        if disks.is_empty() {
            tell!("arrayburn burnin: no disk finished its passes: none is verified after them");
            return Ok(outcome.and(Outcome::NotJudged));
        }
        crate::supervisor::go_on_with(&format!(
            "the burn-in is done; verify its blocks with: {shown}"
        ));
        let say = args.progress != crate::cli::BurnProgress::None;
        if !then.idle.is_zero() && !idle(then.idle, args.progress_interval, say, stop) {
            tell!(
                "arrayburn burnin: interrupted while idle; the burn-in's verdict stands; verify later with: {shown}"
            );
            return Ok(outcome.and(Outcome::Interrupted));
        }
        tell!("arrayburn burnin: verifying the burn-in's blocks: {shown}");
        (args, argv, before) = (then.args(&disks), then.line(&disks), Some(outcome));
    }
}

/// The verify after a burn-in, and the disks it reads (those whose passes
/// all ended).
type Then = (crate::plan::verify::ThenVerify, Vec<String>);

/// The burn-in (or soak, or verify) `plan` holds: how it ended, and where
/// a verify follows, which and of which disks.
fn burn_in(mut plan: BurnPlan, stop: &StopFlag) -> anyhow::Result<(Outcome, Option<Then>)> {
    plan.inspect(stop)?;
    plan.keep_log();
    for w in plan.self_test_warnings() {
        tell!("arrayburn burnin: warning: {w}");
    }
    if !plan.read_only && (!consent(&mut plan, stop)? || stop.is_set()) {
        tell!("arrayburn burnin: interrupted before the burn-in began; nothing was written");
        return Ok((Outcome::Interrupted, None));
    }
    match before(&mut plan, stop) {
        Before::Ready => {}
        Before::Stopped => return Ok((Outcome::Interrupted, None)),
        Before::Probed(run) => {
            finish(&plan, run, stop);
            return Ok((Outcome::Interrupted, None));
        }
    }
    let (run, finished) =
        burn(&plan, &|| started(&plan, stop), &|t, eta| tick(&plan, t, eta), stop)?;
    let then = plan.then_verify.clone().map(|t| (t, finished));
    let outcome = finish(&plan, run, stop);
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

/// Where each disk stands, as `--metrics` while the run goes on (a file
/// that cannot be written is said at the end, when it is written last).
fn tick(plan: &BurnPlan, ticks: &[crate::progress::BurnTick], eta: Option<f64>) {
    if let Some(out) = &plan.outs.metrics {
        let text = metrics::burnin_live(&plan.disks, ticks, eta).render();
        let _ = out.write(text.as_bytes(), false, &StopFlag::default());
    }
}

/// What the process that waits for this one needs should this one be
/// killed: how the run goes on (not a soak's), and the run's result as it
/// begins (nothing burned yet, `complete: false`) saved where its results
/// go (not its live metrics), for it to mark killed.
fn started(plan: &BurnPlan, stop: &StopFlag) {
    if !plan.read_only || plan.verify {
        crate::supervisor::go_on_with(&plan.how_to_go_on());
    }
    let burns = plan.disks.iter().map(|_| (DiskBurn::default(), Temps::default(), None)).collect();
    let mut run = plan.run_of(burns, true, stop);
    run.interrupted = false;
    let to = crate::output::Outputs { metrics: None, ..plan.outputs() };
    let mut report = build(run);
    report.header.complete = false;
    // What cannot be written now is said at the end, when it is written
    // whole.
    let _ = crate::export::publish::save(&report, to, false, stop);
}

/// The report built from `run` and published.
fn finish(plan: &BurnPlan, run: BurnRun, stop: &StopFlag) -> Outcome {
    let keep = |document: &[u8]| {
        if let (Some(store), Some(d)) = (&plan.store, plan.disks.first()) {
            store.keep(d.point.own_id(), document);
        }
    };
    let topology = |p: &str| {
        Some(&plan.disks.iter().find(|d| d.target.dev.given == p)?.target.dev.identity.topology)
    };
    let recorded = plan.outs.record.as_ref().map(|to| (to, run.clone()));
    let mut report = build(run);
    let end = Ending {
        keep: Some(&keep),
        locate: plan.locate.then_some(&topology as _),
        record: recorded.map(|(to, run)| (to, BurnRecording::of(run, &report.header).json())),
        ..Ending::of("arrayburn burnin", "burnin", plan.notify.as_ref())
    };
    publish(&mut report, plan.outputs(), &end, stop)
}

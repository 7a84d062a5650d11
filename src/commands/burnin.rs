//! `arrayburn burnin --destructive DEVICE...`: plan (every refusal before a
//! byte is written: `plan::burnin`), confirm, SMART self-tests where asked,
//! burn every disk at once (`burnin::watch`), SMART after, judge and build
//! the report (`report::burnin`), print and write it (`export::burnin`).
//! Glue only: it holds no rule and no format.

use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;

use super::Outcome;
use crate::burnin::block::Pattern;
use crate::burnin::health::{self_tests, smart_after};
use crate::burnin::record::{DiskBurn, Span};
use crate::burnin::state::{At, Checkpoint, Store};
use crate::burnin::targets::Target;
use crate::burnin::watch::burn_all;
use crate::burnin::worker::{BurnJob, Live, OnFile, burn, soak};
use crate::cli::BurninArgs;
use crate::export::burnin::{bundle, render};
use crate::judge::burnin::RunVerdict;
use crate::output::Output;
use crate::plan::burnin::BurnPlan;
use crate::plan::confirm::confirm;
use crate::report::burnin::{BurnReport, BurnRun, build};
use crate::stop::StopFlag;
use crate::units::rfc3339;

/// Runs the burn-in.
pub fn run(args: &BurninArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let mut plan = BurnPlan::resolve(args, &argv, stop)?;
    if plan.read_only {
        return soak_run(plan, stop);
    }
    if !confirm(&plan, stop)? || stop.is_set() {
        tell!("arrayburn burnin: interrupted before the burn-in began; nothing was written");
        return Ok(Outcome::Interrupted);
    }
    if self_tests_first(&mut plan, stop) {
        return Ok(self_tests_interrupted());
    }
    let store = plan.store.as_ref().context("a burn-in keeps checkpoints")?;
    for (t, c) in plan.targets.iter().zip(&plan.points) {
        store.save(&t.checkpoint, c).with_context(|| {
            format!(
                "--state {}: cannot save a checkpoint; give a writable directory (nothing was written)",
                plan.state.display()
            )
        })?;
    }
    let (burns, temps) =
        burn_all(&plan.targets, &plan.points, None, plan.looks, stop, |t, live, c| {
            burn_disk(&plan, store, (t, live, c), stop)
        });
    let interrupted = stop.is_set() || burns.iter().any(|b| b.interrupted);
    let outcome = finish(&plan, burns, temps, interrupted, stop)?;
    if interrupted || stop.is_set() {
        tell!(
            "arrayburn burnin: interrupted; each disk's place is saved in {}: continue with: {}",
            plan.state.display(),
            plan.resume_line
        );
    }
    Ok(outcome)
}

/// One disk's write-verify passes from its checkpoint, each place saved
/// (a checkpoint that cannot be saved is said once; the burn-in goes on).
fn burn_disk(
    plan: &BurnPlan,
    store: &Store,
    (t, live, c): (&Target, &Live, &Checkpoint),
    stop: &StopFlag,
) -> DiskBurn {
    let on = OnFile { file: &t.file, engine: plan.engine, depth: plan.depth };
    let job = BurnJob {
        t: Span::of(t),
        on: &on,
        io: c.io_bytes as usize,
        passes: c.passes,
        pattern: c.pattern,
        run: c.run_number().unwrap_or_default(),
        stop,
        live,
        every: plan.checkpoint_every,
        deadline: None,
        bounds: plan.bounds(stop),
    };
    let mut warned = false;
    let mut save = |b: &DiskBurn, at: At| {
        let now =
            Checkpoint { saved_at: rfc3339(SystemTime::now()), at, burn: b.clone(), ..c.clone() };
        if let Err(e) = store.save(&t.checkpoint, &now)
            && !std::mem::replace(&mut warned, true)
        {
            tell!(
                "arrayburn burnin: warning: {}: cannot save its checkpoint ({e}); the burn-in goes on, but cannot be resumed from here",
                store.path(&t.checkpoint).display()
            );
        }
    };
    let mut from = c.burn.clone();
    from.interrupted = false;
    burn(&job, c.at, from, &mut save)
}

/// `--read-only`: every disk read whole, pass after pass, at once.
fn soak_run(mut plan: BurnPlan, stop: &StopFlag) -> anyhow::Result<Outcome> {
    if self_tests_first(&mut plan, stop) {
        return Ok(self_tests_interrupted());
    }
    let deadline = plan.duration.map(|d| Instant::now() + d);
    tell!(
        "arrayburn burnin: read-only soak of {} disk(s), {}; nothing is written",
        plan.targets.len(),
        plan.soak_length()
    );
    let (burns, temps) =
        burn_all(&plan.targets, &plan.points, Some(deadline), plan.looks, stop, |t, live, c| {
            let on = OnFile { file: &t.file, engine: plan.engine, depth: plan.depth };
            soak(&BurnJob {
                t: Span::of(t),
                on: &on,
                io: plan.block as usize,
                passes: c.passes,
                pattern: Pattern::Blocks,
                run: 0,
                stop,
                live,
                every: Duration::MAX,
                deadline,
                bounds: plan.bounds(stop),
            })
        });
    let interrupted = stop.is_set();
    let outcome = finish(&plan, burns, temps, interrupted, stop)?;
    if interrupted || stop.is_set() {
        tell!("arrayburn burnin: interrupted; the report covers the passes read so far");
    }
    Ok(outcome)
}

/// SMART after the run, the report built and published.
fn finish(
    plan: &BurnPlan,
    burns: Vec<DiskBurn>,
    temps: Vec<Vec<crate::burnin::record::TempReading>>,
    interrupted: bool,
    stop: &StopFlag,
) -> anyhow::Result<Outcome> {
    let smart = smart_after(&plan.targets, &plan.points, interrupted, stop);
    // A signal while SMART was read: the run is not finished either.
    let report = build(BurnRun {
        targets: &plan.targets,
        points: &plan.points,
        burns,
        smart,
        temps,
        interrupted: interrupted || stop.is_set(),
        read_only: plan.read_only,
        engine: (plan.engine, plan.depth),
    });
    publish(&report, plan.json.as_ref(), plan.out.as_deref())
}

/// Prints the report (to stderr when `--json -` has standard output),
/// writes the JSON and `--out DIR`, and says how the run ends. A file that
/// cannot be written is one line: the disks' verdict stands.
fn publish(
    report: &BurnReport,
    json: Option<&Output>,
    out: Option<&std::path::Path>,
) -> anyhow::Result<Outcome> {
    let text = render(report);
    if json.is_some_and(|o| o.is_stdout()) {
        tell_part!("{text}");
    } else {
        show!("{text}");
    }
    if let Some(dir) = out
        && let Err(e) = bundle(report, dir)
    {
        tell!("arrayburn burnin: --out {}: {e}", dir.display());
    }
    if let Some(o) = json {
        o.write(&crate::export::burnin::json(report), true)
            .with_context(|| format!("writing --json {}", o.given.display()))?;
    }
    Ok(match report.summary.verdict {
        _ if report.header.interrupted => Outcome::Interrupted,
        RunVerdict::Interrupted => Outcome::Interrupted,
        RunVerdict::Healthy => Outcome::Healthy,
        RunVerdict::NotJudged => Outcome::NotJudged,
        RunVerdict::Flagged => Outcome::Flagged,
    })
}

/// Runs the drives' self-tests first where `--smart-test` asks; true when
/// a signal stopped them.
fn self_tests_first(plan: &mut BurnPlan, stop: &StopFlag) -> bool {
    if let Some((kind, limit)) = plan.self_test {
        self_tests(&plan.targets, &mut plan.points, kind, limit, stop);
    }
    stop.is_set()
}

/// A signal stopped the self-tests (aborted): nothing was written yet.
fn self_tests_interrupted() -> Outcome {
    tell!(
        "arrayburn burnin: interrupted during the SMART self-tests (they were aborted); nothing was written"
    );
    Outcome::Interrupted
}

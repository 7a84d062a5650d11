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
use crate::burnin::remeasure::{Turn, in_turn};
use crate::burnin::state::{At, Checkpoint, Store};
use crate::burnin::targets::Target;
use crate::burnin::watch::burn_all;
use crate::burnin::worker::{BurnJob, Live, OnFile, Trouble, burn, soak};
use crate::cli::BurninArgs;
use crate::document::Document;
use crate::export;
use crate::export::publish::{Outputs, Published};
use crate::judge::burnin::Remeasured;
use crate::notify::Event;
use crate::plan::burnin::BurnPlan;
use crate::plan::confirm::confirm;
use crate::report::burnin::{BurnReport, BurnRun, build, suspects};
use crate::stop::StopFlag;
use crate::units::rfc3339;

/// Runs the burn-in.
pub fn run(args: &BurninArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let mut plan = BurnPlan::resolve(args, &argv, stop)?;
    keep_log(&mut plan);
    if plan.read_only {
        return soak_run(plan, stop);
    }
    if !confirm(&mut plan, stop)? || stop.is_set() {
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
    let (burns, temps) = burn_all(
        &plan.targets,
        &plan.points,
        (None, &plan.looks),
        (stop, &|d, t| met(&plan, (d, t), stop)),
        |t, live, c| burn_disk(&plan, store, (t, live, c), stop),
    );
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

/// Copies every line of the run to `STATE/runs/RUN.log`, named first (a
/// soak opens `--state` for it; where the log cannot be kept, one line
/// says so and the run goes on).
fn keep_log(plan: &mut BurnPlan) {
    if plan.store.is_none() {
        match Store::open(&plan.state) {
            Ok(s) => plan.store = Some(s),
            Err(e) => {
                tell!(
                    "arrayburn burnin: warning: --state {}: no log is kept there ({e}); the run goes on",
                    plan.state.display()
                );
                return;
            }
        }
    }
    let (Some(store), Some(run)) = (&plan.store, plan.points.first()) else { return };
    match store.log(&run.run_id) {
        Ok((file, path)) => {
            crate::tell::log_to(file);
            tell!("arrayburn burnin: {}: the run's log", path.display());
        }
        Err(e) => tell!("arrayburn burnin: warning: no log is kept ({e}); the run goes on"),
    }
}

/// Tells `--notify`, beside the run, that disk `d` met `trouble` (the
/// run goes on; its report says the rest).
fn met(plan: &BurnPlan, (d, trouble): (usize, Trouble), stop: &StopFlag) {
    if let Some(n) = &plan.notify {
        n.send_beside(
            Event::disk(&plan.targets[d].dev.given, trouble, &plan.points[d].run_id),
            stop,
        );
    }
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
    let job = job_of(plan, (t, c, &on), live, None, stop);
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

/// One disk's job as the plan asks it: a burn-in's from its checkpoint,
/// or a soak's (until `deadline`, when run by time).
fn job_of<'a>(
    plan: &BurnPlan,
    (t, c, on): (&Target, &Checkpoint, &'a OnFile<'a>),
    live: &'a Live,
    deadline: Option<Instant>,
    stop: &'a StopFlag,
) -> BurnJob<'a> {
    let (io, pattern, run, every) = if plan.read_only {
        (plan.block as usize, Pattern::Blocks, 0, Duration::MAX)
    } else {
        (c.io_bytes as usize, c.pattern, c.run_number().unwrap_or_default(), plan.checkpoint_every)
    };
    BurnJob {
        t: Span::of(t),
        on,
        io,
        passes: c.passes,
        pattern,
        run,
        stop,
        live,
        every,
        deadline,
        bounds: plan.bounds(stop),
    }
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
    let (burns, temps) = burn_all(
        &plan.targets,
        &plan.points,
        (Some(deadline), &plan.looks),
        (stop, &|d, t| met(&plan, (d, t), stop)),
        |t, live, c| {
            let on = OnFile { file: &t.file, engine: plan.engine, depth: plan.depth };
            soak(&job_of(&plan, (t, c, &on), live, deadline, stop))
        },
    );
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
    let n = burns.len();
    let mut run = BurnRun {
        targets: &plan.targets,
        points: &plan.points,
        burns,
        smart,
        temps,
        interrupted,
        read_only: plan.read_only,
        engine: (plan.engine, plan.depth),
        remeasured: vec![None; n],
        thresholds: plan.thresholds,
    };
    if !interrupted {
        remeasure(plan, &mut run, stop);
    }
    // A signal while SMART was read or a disk re-measured: the run is not
    // finished either.
    run.interrupted |= stop.is_set();
    publish(&build(run), plan, stop)
}

/// Each disk the run called slow on speed alone, re-measured alone in
/// turn with its peer before the verdict (`burnin::remeasure`); what the
/// turns find goes into the disks' burns.
fn remeasure(plan: &BurnPlan, run: &mut BurnRun, stop: &StopFlag) {
    for (d, p) in suspects(run) {
        if stop.is_set() {
            return;
        }
        let (t, u) = (&plan.targets[d], &plan.targets[p]);
        tell!(
            "arrayburn burnin: {}: slower than its peers with every disk at once; re-measuring it alone, in turn with {}",
            t.dev.given,
            u.dev.given
        );
        let ons = [t, u].map(|x| OnFile { file: &x.file, engine: plan.engine, depth: plan.depth });
        let lives = [Live::default(), Live::default()];
        let [a, b] = [0, 1].map(|k| {
            let i = [d, p][k];
            job_of(plan, (&plan.targets[i], &plan.points[i], &ons[k]), &lives[k], None, stop)
        });
        let peer = &run.burns[p];
        let guess = if plan.read_only {
            peer.verified_bytes as f64 / peer.verify_s.max(1e-3)
        } else {
            peer.written_bytes as f64 / peer.write_s.max(1e-3)
        };
        let Ok([x, y]) = run.burns.get_disjoint_mut([d, p]) else { continue };
        let judged = |turns: &[Turn]| Remeasured::of(&u.dev.given, turns, &run.thresholds);
        let decided = |turns: &[Turn]| judged(turns).decided();
        if let Some(turns) = in_turn([&a, &b], plan.read_only, guess, [x, y], &decided) {
            run.remeasured[d] = Some(judged(&turns));
        }
    }
}

/// Keeps the report in `STATE/runs/RUN.json` first (no terminal, pipe or
/// output directory that went away can lose it), then publishes it
/// (`export::publish`: printed, --json, --out; a file that cannot be
/// written is one line, the disks' verdict and exit status stand), and
/// tells `--notify` last.
fn publish(report: &BurnReport, plan: &BurnPlan, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let document = report.json();
    if let (Some(store), Some(run)) = (&plan.store, plan.points.first()) {
        match store.keep_report(&run.run_id, &document) {
            Ok(path) => tell!("arrayburn burnin: {}: the run's report", path.display()),
            Err(e) => {
                tell!("arrayburn burnin: warning: the report cannot be kept in --state ({e})")
            }
        }
    }
    let to = Outputs { json: plan.json.as_ref(), csv: None, out: plan.out.as_deref() };
    let outcome = export::publish::publish(report, to, "arrayburn burnin", stop);
    if let Some(n) = &plan.notify {
        n.send_last(&Event::end("burnin", &report.document(), document), stop);
    }
    Ok(outcome)
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

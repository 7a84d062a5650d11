//! `arrayburn burnin --destructive DEVICE...`: plan (every refusal before a
//! byte is written: `plan::burnin`), the operator's consent, SMART
//! self-tests where asked, burn every disk at once (`burnin::watch`), SMART
//! after, judge, build (`report::burnin`) and publish (`export::publish`).
//! Glue only: it holds no rule and no format.

use std::time::{Duration, Instant};

use crate::burnin::health::smart_after;
use crate::burnin::record::{DiskBurn, Temps};
use crate::burnin::remeasure::{Turn, in_turn};
use crate::burnin::watch::{Told, burn_all};
use crate::burnin::worker::{Live, Trouble, burn, soak};
use crate::cli::BurninArgs;
use crate::export::metrics;
use crate::export::publish::{Ending, publish};
use crate::judge::burnin::Remeasured;
use crate::judge::smr::Recovery;
use crate::notify::Event;
use crate::outcome::Outcome;
use crate::plan::burnin::BurnPlan;
use crate::plan::consent::consent;
use crate::report::burnin::{BurnRun, Burned, build, speed, suspects};
use crate::stop::StopFlag;

/// Runs the burn-in, or with `--read-only` the soak: every disk read
/// whole, pass after pass, at once.
pub fn run(args: &BurninArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    let mut plan = BurnPlan::resolve(args, &argv, stop)?;
    plan.inspect(stop)?;
    plan.keep_log();
    if !plan.read_only && (!consent(&mut plan, stop)? || stop.is_set()) {
        tell!("arrayburn burnin: interrupted before the burn-in began; nothing was written");
        return Ok(Outcome::Interrupted);
    }
    if plan.self_tests_stopped(stop) {
        return Ok(Outcome::Interrupted);
    }
    if !plan.probe(stop) {
        return Ok(Outcome::Interrupted);
    }
    let store = plan.ready()?;
    if !plan.read_only {
        // Said by the waiting process should this one be killed.
        crate::apart::go_on_with(&plan.how_to_go_on());
    }
    let deadline = plan.read_only.then(|| plan.duration.map(|d| Instant::now() + d));
    let burns = burn_all(
        &plan.disks,
        (deadline, &plan.looks),
        (stop, Told { met: &|d, t| met(&plan, (d, t), stop), tick: &|t, eta| tick(&plan, t, eta) }),
        |d, live| {
            let on = plan.on(d);
            let job = plan.job((d, &on), live, deadline.flatten(), stop);
            let Some(store) = store else { return soak(&job) };
            let (mut warned, c) = (false, &d.point);
            burn(&job, c.at, c.burn.clone(), &mut |b, at| {
                store.save_place((&d.target.checkpoint, c), (b, at), &mut warned)
            })
        },
    );
    let interrupted = stop.is_set() || burns.iter().any(|(b, _)| b.interrupted);
    let outcome = finish(&plan, burns, interrupted, stop)?;
    if outcome == Outcome::Interrupted {
        tell!("arrayburn burnin: interrupted; {}", plan.how_to_go_on());
    } else if stop.is_set() {
        // Every disk done and judged: nothing to continue.
        tell!(
            "arrayburn burnin: the stop came while the results were written; the burn-in had finished and its verdict stands (nothing to resume)"
        );
    }
    Ok(outcome)
}

/// Tells `--notify`, beside the run, that disk `d` met `trouble` (the
/// run goes on; its report says the rest).
fn met(plan: &BurnPlan, (d, trouble): (usize, Trouble), stop: &StopFlag) {
    // Said at once, dated, on stderr and in the log: day 2's reader of
    // the log sees what day 1 found, and when.
    let disk = &plan.disks[d].target.dev.given;
    let what = match trouble {
        Trouble::Bad => {
            "a block failed or read back wrong (the run goes on; the report lists each range)"
                .into()
        }
        Trouble::Gone => "the device went away; nothing more is asked of it".into(),
        Trouble::Hung => format!(
            "hung: a request got no answer within --io-timeout ({} s); nothing more is asked of it",
            plan.bounds_timeout.as_secs_f64()
        ),
    };
    let stamp = crate::units::log_stamp();
    tell!("{stamp} arrayburn burnin: {disk}: {what}; the other disks go on");
    if let Some(n) = &plan.notify {
        let d = &plan.disks[d];
        let (disk, run) = (&d.target.dev.given, &d.point.run_id);
        n.send_beside(Event::disk(disk, trouble, run), stop);
    }
}

/// Where each disk stands, as `--metrics` while the run goes on (a file
/// that cannot be written is said at the end, when it is written last).
fn tick(plan: &BurnPlan, ticks: &[crate::progress::BurnTick], eta: Option<f64>) {
    if let Some(out) = &plan.metrics {
        let text = metrics::burnin_live(&plan.disks, ticks, eta).render();
        let _ = out.write(text.as_bytes(), false, &StopFlag::default());
    }
}

/// SMART after the run, the disks slow on speed alone re-measured, the
/// report built and published.
fn finish(
    plan: &BurnPlan,
    burns: Vec<(DiskBurn, Temps)>,
    interrupted: bool,
    stop: &StopFlag,
) -> anyhow::Result<Outcome> {
    let disks = (plan.disks.iter().zip(burns))
        .map(|(d, (burn, temps))| {
            let smart = smart_after(d, interrupted, stop);
            Burned { plan: d, burn, smart, temps, remeasured: None, recovery: None }
        })
        .collect();
    let mut run = BurnRun {
        disks,
        interrupted,
        read_only: plan.read_only,
        engine: (plan.engine, plan.depth),
        thresholds: plan.thresholds,
        inspection: plan.inspection.clone(),
        left_out: plan.left_out.clone(),
    };
    if !interrupted {
        recover(plan, &mut run, stop);
        remeasure(plan, &mut run, stop);
    }
    // A signal while SMART was read or a disk re-measured: the run is not
    // finished either.
    run.interrupted |= stop.is_set();
    let keep = |document: &[u8]| {
        if let (Some(store), Some(d)) = (&plan.store, plan.disks.first()) {
            store.keep(&d.point.run_id, document);
        }
    };
    let topology = |p: &str| {
        Some(&plan.disks.iter().find(|d| d.target.dev.given == p)?.target.dev.identity.topology)
    };
    let end = Ending {
        keep: Some(&keep),
        locate: plan.locate.then_some(&topology as _),
        ..Ending::of("arrayburn burnin", "burnin", plan.notify.as_ref())
    };
    Ok(publish(&mut build(run), plan.outputs(), &end, stop))
}

/// Each disk whose writes collapsed partway through a pass (`judge::smr`):
/// all left idle `--smr-idle`, then each written a burst at its start,
/// alone, to see whether its writes recover. What a burst finds goes into
/// the disk's burn; a stop leaves the recovery not measured.
fn recover(plan: &BurnPlan, run: &mut BurnRun, stop: &StopFlag) {
    let collapsed = crate::report::burnin::collapses(run);
    if collapsed.is_empty() || plan.read_only {
        return;
    }
    for (d, c) in &collapsed {
        tell!(
            "arrayburn burnin: {}: its writes collapsed from {:.0} to {:.0} MB/s after {} in pass {}; idling {} to see whether they recover (as a drive-managed SMR disk's do)",
            plan.disks[*d].target.dev.given,
            c.fast_mb_per_s,
            c.slow_mb_per_s,
            crate::units::human_bytes(c.after_bytes),
            c.pass,
            crate::units::human_duration(plan.smr_idle)
        );
    }
    let began = Instant::now();
    while began.elapsed() < plan.smr_idle {
        if stop.is_set() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100).min(plan.smr_idle));
    }
    for (d, c) in collapsed {
        if stop.is_set() {
            return;
        }
        let idle_s = began.elapsed().as_secs_f64();
        let disk = &plan.disks[d];
        let (on, live) = (plan.on(disk), Live::default());
        let job = plan.job((disk, &on), &live, None, stop);
        let b = crate::burnin::remeasure::burst(&job, (c.after_bytes / 2).min(1 << 30));
        run.disks[d].burn.absorb(&b);
        let clean = b.total_bad() == 0 && b.hung.is_none() && !b.device_gone;
        if let (true, Some(mb_per_s)) = (clean && !stop.is_set(), speed(b.written_bytes, b.write_s))
        {
            let recovery = Recovery { idle_s, bytes: b.written_bytes, mb_per_s };
            run.disks[d].recovery = Some(recovery);
        }
    }
}

/// Each disk the run called slow on speed alone, re-measured alone in
/// turn with its peer before the verdict (`burnin::remeasure`); what the
/// turns find goes into the disks' burns.
fn remeasure(plan: &BurnPlan, run: &mut BurnRun, stop: &StopFlag) {
    for (d, p) in suspects(run) {
        if stop.is_set() {
            return;
        }
        let (disk, peer) = (&plan.disks[d], &plan.disks[p]);
        let (a, b) = (&disk.target.dev.given, &peer.target.dev.given);
        tell!(
            "arrayburn burnin: {a}: slower than its peers with every disk at once; re-measuring it alone, in turn with {b}"
        );
        let ons = [disk, peer].map(|x| plan.on(x));
        let lives = [Live::default(), Live::default()];
        let [ja, jb] = [0, 1].map(|k| plan.job(([disk, peer][k], &ons[k]), &lives[k], None, stop));
        // Each phase's turns sized from that phase's speed in the run.
        let peer = &run.disks[p].burn;
        let guess = (peer.pace(false), peer.pace(true));
        let Ok([x, y]) = run.disks.get_disjoint_mut([d, p]) else { continue };
        let judged = |turns: &[Turn]| Remeasured::of(b, turns, &run.thresholds);
        let decided = |turns: &[Turn]| judged(turns).decided();
        let burns = [&mut x.burn, &mut y.burn];
        if let Some(turns) = in_turn([&ja, &jb], plan.read_only, guess, burns, &decided) {
            x.remeasured = Some(judged(&turns));
        }
    }
}

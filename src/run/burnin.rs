//! A burn-in run down its plan: the drives inspected, the self-tests
//! first, the capacity and scattered-write probes, every disk burned (or
//! soaked, or verified) at once while the watch looks on, the kernel's
//! evidence, the self-tests after, SMART after, a collapse's recovery and
//! the slow disks re-measured; and the idle before a verify that follows.
//! It hands back what it measured ([`BurnRun`]).
//!
//! It must not resolve flags or refuse (`plan::burnin` did), judge (it
//! asks `judge::burned` which disks to read again) or build, save or
//! publish a report (the command does, from what this hands back).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::burnin::DiskPlan;
use crate::burnin::block::BLOCK;
use crate::burnin::cycle;
use crate::burnin::health::{self, smart_after};
use crate::burnin::live::{Live, Reopens, Trouble};
use crate::burnin::record::Span;
use crate::burnin::record::{DiskBurn, Temps};
use crate::burnin::remeasure::{MOST, Turn, clean, in_rounds, of_pair};
use crate::burnin::smart::TestKind;
use crate::burnin::state::{At, Phase, Store};
use crate::burnin::stripes::{Pace, Stripes};
use crate::burnin::targets::Target;
use crate::burnin::watch::{Told, burn_all};
use crate::burnin::worker::{self, BurnJob, soak, verify_written};
use crate::device::kernel::{Cuts, Seen};
use crate::judge::burn_facts::{BurnRun, Burned, collapses, speed, suspects};
use crate::judge::remeasured::Remeasured;
use crate::judge::smr::Recovery;
use crate::notify::Event;
use crate::plan::burnin::BurnPlan;
use crate::progress::BurnTick;
use crate::stop::StopFlag;

/// A disk's run as it ended: its burn, its temperatures and what the
/// kernel saw of it.
pub type Ended = (DiskBurn, Temps, Option<Seen>);

/// How the steps before the burning ended.
pub enum Before {
    /// Ready to burn.
    Ready,
    /// A stop came before anything was written: nothing to report.
    Stopped,
    /// A stop came after the probes wrote: what they found is reported,
    /// nothing burned.
    Probed(BurnRun),
}

/// The steps before the burning, after the operator's consent: the
/// self-tests first where asked, then the probes.
pub fn before(plan: &mut BurnPlan, stop: &StopFlag) -> Before {
    if plan.self_tests_stopped(stop) {
        return Before::Stopped;
    }
    if plan.probe(stop) {
        return Before::Ready;
    }
    let mut none = DiskBurn::default();
    none.interrupted = true;
    let burns = plan.disks.iter().map(|_| (none.clone(), Temps::default(), None)).collect();
    Before::Probed(plan.run_of(burns, true, stop))
}

/// Every disk burned (or soaked, or verified) at once, its place saved as
/// it goes; `started` called once the checkpoints are saved, before the
/// first byte; `tick` with where each disk stands. The run as its rules
/// read it, and the disks whose passes all ended.
pub fn burn(
    plan: &BurnPlan,
    started: &dyn Fn(),
    tick: &dyn Fn(&[BurnTick], Option<f64>),
    stop: &StopFlag,
) -> Result<(BurnRun, Vec<String>)> {
    let store = plan.ready()?;
    started();
    let deadline = plan.read_only.then(|| plan.duration.map(|d| Instant::now() + d));
    let devices: Vec<crate::device::BlockDevice> =
        plan.disks.iter().map(|d| d.target.dev.clone()).collect();
    let watch = crate::device::kernel::Watch::start(&crate::device::SystemPaths::real(), &devices);
    let cuts = watch.cuts();
    let burns = burn_all(
        &plan.disks,
        (deadline, &plan.looks),
        (stop, Told { met: &|d, t| plan.met((d, t), stop), tick }),
        |d, live| one(plan, (d, live, &cuts), (store, deadline.flatten()), stop),
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
    let finished = finished(plan, &burns);
    let burns = burns.into_iter().zip(kernel).map(|((b, t), k)| (b, t, Some(k))).collect();
    let mut run = plan.run_of(burns, interrupted, stop);
    if !interrupted {
        plan.recover(&mut run, stop);
        plan.remeasure(&mut run, stop);
        plan.discard(&mut run, stop);
    }
    // A signal while SMART was read or a disk re-measured: the run is not
    // finished either.
    run.interrupted |= stop.is_set();
    Ok((run, finished))
}

/// The disks whose passes all ended (or whose stripes did, at the
/// deadline): those a verify that follows reads back.
fn finished(plan: &BurnPlan, burns: &[(DiskBurn, Temps)]) -> Vec<String> {
    let done = |b: &DiskBurn| crate::judge::burnin::burned_whole(b, false);
    (plan.disks.iter().zip(burns).filter(|(_, (b, _))| done(b)))
        .map(|(d, _)| d.target.dev.given.clone())
        .collect()
}

/// Disk `d`'s run as the plan asks: a soak (no store), a verify, or its
/// burn-in from its checkpoint, its place saved in `store` as it goes.
fn one(
    plan: &BurnPlan,
    (d, live, cuts): (&DiskPlan, &Live, &Cuts),
    (store, deadline): (Option<&Store>, Option<Instant>),
    stop: &StopFlag,
) -> DiskBurn {
    let on = plan.on(d);
    let Some(store) = store else { return soak(&plan.job((d, &on), live, deadline, stop)) };
    let (mut warned, c) = (false, &d.point);
    let save =
        &mut |b: &DiskBurn, at| store.save_place((&d.target.checkpoint, c), (b, at), &mut warned);
    if plan.verify {
        return verify(plan, (d, live, cuts), save, stop);
    }
    let job = plan.job((d, &on), live, deadline, stop);
    if c.burn.stripes.is_some() {
        let pace = plan.looks.deadline.map(Pace::until);
        return striped(&job, c, (pace, plan.resume), save);
    }
    worker::burn(&job, c.at, c.burn.clone(), save)
}

/// A burn-in fitted to a deadline (`c`: its checkpoint, whose burn names
/// its stripes): each stripe written and verified in turn, coarse first,
/// from where `c` stands, while the next fits the deadline (`pace`; none:
/// every stripe left); `resumed`: this run goes on an earlier one. A stop,
/// a disk gone or hung ends it mid-stripe, its place saved as a burn-in's.
/// The place it ends at is the next stripe's start (a resume goes on
/// there), or done when every stripe is.
fn striped(
    job: &BurnJob,
    c: &crate::burnin::state::Checkpoint,
    (mut pace, resumed): (Option<Pace>, bool),
    save: &mut dyn FnMut(&DiskBurn, At),
) -> DiskBurn {
    let range = (job.t.start, job.t.end);
    let mut out = c.burn.clone();
    let Some(mut s) = out.stripes else { return out };
    let order = crate::burnin::stripes::order(s.slots);
    s.runs += u32::from(resumed && !s.complete());
    // Where the run stands once stripe `done` are burned.
    let place = |s: &Stripes| match s.next(&order) {
        Some(slot) => At::first(s.span(range, slot).0),
        None => At { phase: Phase::Done, ..At::first(range.1) }.with_pass(job.passes),
    };
    let mut at = c.at;
    job.live.stripes.store(s.done, std::sync::atomic::Ordering::Relaxed);
    while let Some(slot) = s.next(&order) {
        let (from, to) = s.span(range, slot);
        let begins = at == At::first(from);
        if job.stop.is_set() || (begins && pace.is_some_and(|p| !p.fits(Instant::now(), to - from)))
        {
            break;
        }
        let began = Instant::now();
        out.stripes = Some(s);
        let burned = Stripes { done: s.done + 1, ..s };
        out = stripe(job, (from, to), (at, out), (burned, place(&burned)), save);
        if out.place.is_none_or(|p| p.phase != Phase::Done) {
            at = out.place.unwrap_or(at);
            break;
        }
        s = burned;
        at = place(&s);
        if let Some(p) = pace.as_mut().filter(|_| begins) {
            p.took(to - from, began.elapsed());
        }
        job.live.stripes.store(s.done, std::sync::atomic::Ordering::Relaxed);
    }
    if s.complete() {
        at = place(&s);
    }
    out.stripes = Some(s);
    out.place = Some(at);
    out.interrupted = job.stop.is_set();
    out
}

/// One stripe `from..to` of a striped burn-in written and verified from
/// `at`, with what was found before in `out`; its end is saved as `next`
/// (the next stripe's start) with `burned` (its count), so that a
/// checkpoint never says "done" of one stripe.
fn stripe(
    job: &BurnJob,
    (from, to): (u64, u64),
    (at, out): (At, DiskBurn),
    (burned, next): (Stripes, At),
    save: &mut dyn FnMut(&DiskBurn, At),
) -> DiskBurn {
    let one = BurnJob { t: Span { start: from, end: to, disk: job.t.disk }, ..job.clone() };
    let mut on = |b: &DiskBurn, now: At| match now.phase {
        Phase::Done => {
            let mut b = b.clone();
            b.stripes = Some(burned);
            save(&b, next);
        }
        _ => save(b, now),
    };
    worker::burn(&one, at, out, &mut on)
}

/// Disk `d`'s verify; with --cycles, each read-back after a spin cycle, or
/// with --power-cycle after its slot's power was cut (the disk read
/// through its file opened again then, the kernel's watch told of each
/// cut in `cuts`).
fn verify(
    plan: &BurnPlan,
    (d, live, cuts): (&DiskPlan, &Live, &Cuts),
    save: &mut dyn FnMut(&DiskBurn, At),
    stop: &StopFlag,
) -> DiskBurn {
    let c = &d.point;
    let on = Reopens { first: plan.on(d), now: Default::default() };
    let job = plan.job((d, &on), live, None, stop);
    let v = c.verifies.as_ref();
    let within = v.and_then(|v| v.spin_up_timeout_s).map(Duration::from_secs_f64);
    let power = cycle::slot_power(&d.target.dev).filter(|_| v.is_some_and(|v| v.power));
    let (on, power) = (&on, &power);
    let spin = within.map(|within| {
        move |n: u16| match power {
            Some(p) => {
                cycle::power(&d.target, (n, p, cuts), within, (on.first.file, &on.now), stop)
            }
            None => cycle::spin(&d.target, n, within, stop),
        }
    });
    let spin = spin.as_ref().map(|f| f as &dyn Fn(u16) -> cycle::Cycle);
    verify_written(&job, &c.written(), (c.at, spin), c.burn.clone(), save)
}

/// Every disk idle `idle` before a verify that follows, a line each
/// `every` (a minute at least) where `say`; false when a stop came.
pub fn idle(idle: Duration, every: Duration, say: bool, stop: &StopFlag) -> bool {
    let human = crate::units::human_duration;
    tell!("arrayburn burnin: every disk idle {} before the verify", human(idle));
    let began = Instant::now();
    // A line a minute at most: a day idle is not 8,640 lines of log.
    let every = every.max(Duration::from_secs(60));
    while began.elapsed() < idle {
        if !stop.rest(every.min(idle.saturating_sub(began.elapsed()))) {
            return false;
        }
        let left = idle.saturating_sub(began.elapsed());
        if !left.is_zero() && say {
            tell!("arrayburn burnin: idle before the verify: {} left", human(left));
        }
    }
    true
}

impl BurnPlan {
    /// `--discard`: each disk burned as far as asked left trimmed, what
    /// the burn-in wrote discarded (all disks at once) and read back where
    /// zeroes were promised; a disk the kernel passes no discards to is
    /// said so.
    pub fn discard(&self, run: &mut BurnRun, stop: &StopFlag) {
        if !self.discard || stop.is_set() {
            return;
        }
        tell!("arrayburn burnin: discarding what the burn-in wrote on each disk (--discard)");
        let paths = crate::device::SystemPaths::real();
        std::thread::scope(|s| {
            for (d, b) in self.disks.iter().zip(run.disks.iter_mut()) {
                let burn = &b.burn;
                if !crate::judge::burnin::burned_whole(burn, false) {
                    continue;
                }
                let (t, bounds) = (&d.target, self.bounds(stop));
                let range = (t.start, t.end);
                let written = burn.stripes.map_or(vec![range], |s| s.tested(range));
                let declared = (d.point.smart_before.as_ref())
                    .and_then(|s| s.zeroes_after_trim)
                    .filter(|z| *z)
                    .map(|_| "its IDENTIFY (TRIM deterministic, zeroed)");
                let name = t.dev.identity.name.clone();
                let paths = &paths;
                let out = &mut b.discarded;
                s.spawn(move || {
                    *out = Some(match crate::device::discard::takes_discards(paths, &name) {
                        true => crate::burnin::discard::discard_written(
                            &t.file, &written, declared, &bounds,
                        ),
                        false => crate::burnin::discard::Discarded::refused(
                            "the kernel passes no discards to it",
                        ),
                    });
                });
            }
        });
    }

    /// The run as its report is built from it: each disk's burn, SMART
    /// after it and its own self-test after the passes (not where
    /// `interrupted`).
    pub fn run_of(&self, burns: Vec<Ended>, interrupted: bool, stop: &StopFlag) -> BurnRun {
        BurnRun {
            disks: self.burned(burns, interrupted, stop),
            plan: self.estimate.clone(),
            interrupted,
            read_only: self.read_only,
            engine: (self.engine, self.depth),
            thresholds: self.thresholds,
            inspection: self.inspection.clone(),
            left_out: self.left_out.clone(),
        }
    }

    /// Each disk's run as its rules read it: the drives' own self-test
    /// after the passes (where asked), then SMART after the run.
    fn burned(&self, burns: Vec<Ended>, interrupted: bool, stop: &StopFlag) -> Vec<Burned> {
        let (burns, kernel): (Vec<(DiskBurn, Temps)>, Vec<Option<Seen>>) =
            burns.into_iter().map(|(b, t, k)| ((b, t), k)).unzip();
        let after =
            if interrupted { vec![None; burns.len()] } else { self.self_tests_after(&burns, stop) };
        (self.disks.iter().zip(burns).zip(after).zip(kernel))
            .map(|(((d, (burn, temps)), self_test_after), kernel)| {
                let smart = smart_after(d, interrupted || stop.is_set(), stop);
                let (remeasured, recovery) = (None, None);
                let disk = d.burned();
                let discarded = None;
                Burned {
                    disk,
                    burn,
                    smart,
                    temps,
                    remeasured,
                    recovery,
                    self_test_after,
                    kernel,
                    discarded,
                }
            })
            .collect()
    }

    /// Tells `--notify`, beside the run, that disk `d` met `trouble` (the
    /// run goes on; its report says the rest).
    pub fn met(&self, (d, trouble): (usize, Trouble), stop: &StopFlag) {
        // Said at once, dated, on stderr and in the log: day 2's reader of
        // the log sees what day 1 found, and when.
        let disk = &self.disks[d].target.dev.given;
        let what = match trouble {
            Trouble::Bad => {
                "a block failed or read back wrong (the run goes on; the report lists each range)"
                    .into()
            }
            Trouble::Gone => "the device went away; nothing more is asked of it".into(),
            Trouble::Hung => format!(
                "hung: a request got no answer within --io-timeout ({} s); nothing more is asked of it",
                self.bounds_timeout.as_secs_f64()
            ),
        };
        let stamp = crate::units::log_stamp();
        tell!("{stamp} arrayburn burnin: {disk}: {what}; the other disks go on");
        if let Some(n) = &self.notify {
            let d = &self.disks[d];
            let (disk, run) = (&d.target.dev.given, &d.point.run_id);
            n.send_beside(Event::disk(disk, trouble, run), stop);
        }
    }

    /// Each disk whose writes collapsed partway through a pass (`judge::smr`):
    /// all left idle `--smr-idle`, then each written a burst at its start,
    /// alone, to see whether its writes recover. What a burst finds goes into
    /// the disk's burn; a stop leaves the recovery not measured.
    pub fn recover(&self, run: &mut BurnRun, stop: &StopFlag) {
        // Only a spinning disk's collapse can be shingles (a solid-state
        // disk's fast cache fills and recovers too).
        let spins = |d: &usize| self.disks[*d].target.dev.identity.rotational;
        let collapsed: Vec<_> = collapses(run).into_iter().filter(|(d, _)| spins(d)).collect();
        if collapsed.is_empty() || self.read_only {
            return;
        }
        for (d, c) in &collapsed {
            tell!(
                "arrayburn burnin: {}: its writes collapsed from {:.0} to {:.0} MB/s after {} in pass {}; idling {} to see whether they recover (as a drive-managed SMR disk's do)",
                self.disks[*d].target.dev.given,
                c.fast_mb_per_s,
                c.slow_mb_per_s,
                crate::units::human_bytes(c.after_bytes),
                c.pass,
                crate::units::human_duration(self.smr_idle)
            );
        }
        let began = Instant::now();
        if !stop.rest(self.smr_idle) {
            return;
        }
        for (d, c) in collapsed {
            if stop.is_set() {
                return;
            }
            let idle_s = began.elapsed().as_secs_f64();
            let disk = &self.disks[d];
            let (on, live) = (self.on(disk), Live::default());
            let job = self.job((disk, &on), &live, None, stop);
            let b = crate::burnin::remeasure::burst(&job, (c.after_bytes / 2).min(1 << 30));
            run.disks[d].burn.absorb(&b);
            if let (true, Some(mb_per_s)) =
                (clean(&b) && !stop.is_set(), speed(b.written_bytes, b.write_s))
            {
                let recovery = Recovery { idle_s, bytes: b.written_bytes, mb_per_s };
                run.disks[d].recovery = Some(recovery);
            }
        }
    }

    /// Each disk the run called slow on speed alone, re-measured alone
    /// beside its peer before the verdict (`burnin::remeasure`: every
    /// suspect and peer alone, in rounds, in at most the burning's own
    /// time and [`MOST`]); what the turns find goes into the
    /// disks' burns.
    pub fn remeasure(&self, run: &mut BurnRun, stop: &StopFlag) {
        let pairs = suspects(run);
        if pairs.is_empty() || stop.is_set() {
            return;
        }
        // The disks read: each suspect and each peer once.
        let mut disks: Vec<usize> = pairs.iter().flat_map(|(d, p)| [*d, *p]).collect();
        disks.sort_unstable();
        disks.dedup();
        let at = |d: usize| disks.binary_search(&d).unwrap_or_default();
        let local: Vec<(usize, usize)> = pairs.iter().map(|(d, p)| (at(*d), at(*p))).collect();
        let burning =
            (run.disks.iter()).map(|d| d.burn.write_s + d.burn.verify_s).fold(0.0, f64::max);
        let budget = Duration::from_secs_f64(burning).min(MOST);
        let name = |d: usize| self.disks[d].target.dev.given.as_str();
        self.say_remeasure(&pairs, (budget, burning));
        let ons: Vec<_> = disks.iter().map(|&d| self.on(&self.disks[d])).collect();
        let lives: Vec<Live> = disks.iter().map(|_| Live::default()).collect();
        let jobs: Vec<BurnJob> = (disks.iter().zip(&ons).zip(&lives))
            .map(|((&d, on), live)| {
                let mut job = self.job((&self.disks[d], on), live, None, stop);
                // A burn-in in stripes holds its blocks where it burned:
                // its turns stay in its first stripe (the first it burns).
                if let Some(s) = run.disks[d].burn.stripes {
                    job.t.end = job.t.end.min(job.t.start + s.size);
                }
                job
            })
            .collect();
        // Each disk's first turn sized from its peer's speed in the run (a
        // peer's from its own).
        let peer_of = |d: usize| pairs.iter().find(|(s, _)| *s == d).map_or(d, |(_, p)| *p);
        let guess: Vec<(f64, f64)> = (disks.iter())
            .map(|&d| {
                let b = &run.disks[peer_of(d)].burn;
                (b.pace(false), b.pace(true))
            })
            .collect();
        let th = run.thresholds;
        let judged = |k: usize, turns: &[Turn]| Remeasured::of(name(pairs[k].1), turns, &th);
        let decided = |k: usize, turns: &[Turn]| judged(k, turns).decided();
        let began = Instant::now();
        let rounds = in_rounds(&jobs, &local, (self.read_only, &guess), budget, &decided);
        tell!(
            "arrayburn burnin: re-measured in {} ({} turn(s) compared, of {} disk(s))",
            crate::units::human_duration(began.elapsed()),
            rounds.turns.len(),
            disks.len()
        );
        for (i, &d) in disks.iter().enumerate() {
            run.disks[d].burn.absorb(&rounds.found[i]);
        }
        for (k, &(d, _)) in pairs.iter().enumerate() {
            if rounds.whole[k] {
                run.disks[d].remeasured = Some(judged(k, &of_pair(&rounds.turns, local[k])));
            } else if clean(&rounds.found[local[k].0]) && !stop.is_set() {
                // Its peer's finding ended its turns: nothing compared, and
                // its speed not blamed (the peer's finding is the peer's).
                run.disks[d].remeasured = Some(judged(k, &[]));
            }
        }
    }

    /// Says which disks are re-measured, beside which peer, and in how
    /// long at most (`budget`; the burning took `burning` seconds).
    fn say_remeasure(&self, pairs: &[(usize, usize)], (budget, burning): (Duration, f64)) {
        let name = |d: usize| self.disks[d].target.dev.given.as_str();
        tell!(
            "arrayburn burnin: {} disk(s) slower than their peers with every disk at once: re-measuring each alone, in rounds beside a peer, for at most {} (the burning took {})",
            pairs.len(),
            crate::units::human_duration(budget),
            crate::units::human_duration(Duration::from_secs_f64(burning))
        );
        for (d, p) in pairs {
            let (a, b) = (name(*d), name(*p));
            tell!(
                "arrayburn burnin: {a}: slower than its peers with every disk at once; re-measuring it alone, in turn with {b}"
            );
        }
    }

    /// Ready to run: a burn-in's checkpoints saved (the store they are in,
    /// where each disk's place is saved as it goes); a soak's plan said (it
    /// has none to save).
    pub fn ready(&self) -> Result<Option<&Store>> {
        if self.verify {
            let n = self.disks.len();
            tell!(
                "arrayburn burnin: verifying {n} disk(s): reading back every block their burn-in wrote; nothing is written"
            );
            return self.save_checkpoints().map(Some);
        }
        if self.read_only {
            let (n, length) = (self.disks.len(), self.soak_length());
            tell!("arrayburn burnin: read-only soak of {n} disk(s), {length}; nothing is written");
            return Ok(None);
        }
        self.save_checkpoints().map(Some)
    }

    /// What each drive declares of itself (`inspect::before_run`): a
    /// locked one refused before anything is read or written.
    pub fn inspect(&mut self, stop: &StopFlag) -> Result<()> {
        let devs: Vec<_> = self.disks.iter().map(|d| d.target.dev.clone()).collect();
        let rules = crate::judge::inspect::Rules { new_hours: crate::defaults::NEW_HOURS };
        let give_up = || stop.is_set();
        self.inspection = crate::run::before_run(&devs, rules, "burning it in", &give_up)?;
        Ok(())
    }

    /// The capacity probe on each disk (`burnin::probe`), before its
    /// checkpoint is saved: a disk whose blocks past some size hold
    /// nothing of their own is burned only up to it (the burn-in never
    /// writes past it), and its finding goes with its checkpoint; then the
    /// scattered-write probe (`scatter`). False when a signal
    /// stopped either.
    pub fn probe(&mut self, stop: &StopFlag) -> bool {
        if !self.probe_first {
            return self.scatter(stop);
        }
        let targets: Vec<&Target> = self.disks.iter().map(|d| &d.target).collect();
        let found = crate::burnin::probe::probe_all(&targets, self.bounds_timeout, stop);
        for (d, p) in self.disks.iter_mut().zip(found) {
            if p.fake() {
                let usable = p.usable_bytes / BLOCK as u64 * BLOCK as u64;
                let end = usable.clamp(d.point.start_byte, d.point.end_byte);
                tell!(
                    "arrayburn burnin: {}: {}; burning only bytes {}..{end}",
                    d.target.dev.given,
                    crate::judge::inspect::fake_capacity(&p).unwrap_or_default(),
                    d.point.start_byte
                );
                (d.target.end, d.point.end_byte) = (end, end);
                // Its stripes, as many of their size as cover what is left.
                if let Some(s) = d.point.burn.stripes.as_mut() {
                    s.slots = (end - d.point.start_byte).div_ceil(s.size).max(1);
                }
            }
            d.point.probe = Some(p);
        }
        if stop.is_set() {
            tell!("arrayburn burnin: interrupted while probing capacity, before the burn-in began");
            return false;
        }
        self.scatter(stop)
    }

    /// The scattered-write probe on each disk (`burnin::scatter`), before
    /// its checkpoint is saved; its finding goes with the checkpoint. False
    /// when a signal stopped it.
    fn scatter(&mut self, stop: &StopFlag) -> bool {
        let spins = self.disks.iter().any(|d| d.target.dev.identity.rotational);
        if self.smr_probe.is_zero() || !spins {
            return true;
        }
        tell!(
            "arrayburn burnin: reading scattered blocks for {}, then writing scattered blocks, each flushed, for up to {} a disk (a cache that persists: drive-managed SMR)",
            crate::units::human_duration(Duration::from_secs_f64(crate::burnin::scatter::READ_S)),
            crate::units::human_duration(self.smr_probe)
        );
        let targets: Vec<&Target> = self.disks.iter().map(|d| &d.target).collect();
        let times = (self.smr_probe, self.smr_idle);
        let found = crate::burnin::scatter::probe_all(
            &targets,
            times,
            self.bounds_timeout,
            ("burnin", stop),
        );
        for (d, s) in self.disks.iter_mut().zip(found) {
            d.point.scattered = s;
        }
        if stop.is_set() {
            tell!(
                "arrayburn burnin: interrupted while probing scattered writes, before the burn-in began"
            );
        }
        !stop.is_set()
    }

    /// Saves each disk's checkpoint before a byte is written (refused,
    /// nothing written, where one cannot be saved); the store they are in.
    fn save_checkpoints(&self) -> Result<&Store> {
        let store = self.store.as_ref().context("a burn-in keeps checkpoints")?;
        for d in &self.disks {
            store.save(&d.target.checkpoint, &d.point).with_context(|| {
                format!(
                    "--state {}: cannot save a checkpoint; give a writable directory (nothing was written)",
                    self.state.display()
                )
            })?;
        }
        Ok(store)
    }

    /// Copies every line of the run to `STATE/runs/RUN.log`, named first
    /// (a soak opens `--state` for it; where the log cannot be kept, one
    /// line says so and the run goes on).
    pub fn keep_log(&mut self) {
        if self.store.is_none() {
            match Store::open(&self.state) {
                Ok(s) => self.store = Some(s),
                Err(e) => {
                    let at = self.state.display();
                    tell!(
                        "arrayburn burnin: warning: --state {at}: no log is kept there ({e}); the run goes on"
                    );
                    return;
                }
            }
        }
        if let (Some(store), Some(d)) = (&self.store, self.disks.first()) {
            crate::supervisor::start_log("arrayburn burnin", store.log(d.point.own_id()));
        }
    }

    /// Runs the drives' self-tests after the passes where
    /// `--smart-test-after` asks, on each disk that still answers (not
    /// gone, not hung): each one's result, None for a disk not tested. A
    /// signal aborts them (none is then judged).
    pub fn self_tests_after(
        &self,
        burns: &[(DiskBurn, crate::burnin::record::Temps)],
        stop: &StopFlag,
    ) -> Vec<Option<(TestKind, crate::burnin::smart::SelfTest)>> {
        let mut out = vec![None; self.disks.len()];
        let Some((kind, limit)) = self.self_test_after.filter(|_| !stop.is_set()) else {
            return out;
        };
        let answers = |b: &DiskBurn| !b.device_gone && b.hung.is_none();
        let tested: Vec<usize> = (0..self.disks.len()).filter(|&i| answers(&burns[i].0)).collect();
        let drives: Vec<health::Drive> =
            tested.iter().map(|&i| health::Drive::of(&self.disks[i])).collect();
        let when = (limit, "after the burn-in");
        if let Some(found) = health::run_self_tests(&drives, kind, when, stop) {
            for (i, s) in tested.into_iter().zip(found) {
                out[i] = Some((kind, s));
            }
        }
        out
    }

    /// Runs the drives' self-tests first where `--smart-test` asks; true
    /// (said in a line) when a signal stopped them: they were aborted, and
    /// nothing was written.
    pub fn self_tests_stopped(&mut self, stop: &StopFlag) -> bool {
        if let Some((kind, limit)) = self.self_test {
            health::self_tests(&mut self.disks, kind, limit, stop);
        }
        if stop.is_set() {
            tell!(
                "arrayburn burnin: interrupted during the SMART self-tests (they were aborted); nothing was written"
            );
        }
        stop.is_set()
    }
}

//! Every disk of a burn-in at once, a thread each, watched while they run:
//! each disk's temperature read every `--smart-every` (each reading kept,
//! for the verdict's hottest and the page's chart), and where each disk is handed to the progress lines
//! (`progress::BurnLines`) every `--progress-interval`.
//!
//! It must not judge and must not print: what it sees is handed on.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::DiskPlan;
use super::live::{Live, Stage, Trouble};
use super::record::{DiskBurn, TempReading, Temps, bytes_done};
use super::smart;
use super::state::Phase;
use crate::progress::{BurnLines, BurnTick, bytes_left};
use crate::stop::StopFlag;

/// How often the watch looks at the disks while they run.
#[derive(Debug, Clone)]
pub struct Looks {
    /// Read each disk's temperature this often.
    pub smart_every: Duration,
    /// Print a progress line per disk this often (None: never), and
    /// whether a live table is drawn instead (the lines then go to the
    /// log only).
    pub progress: Option<(Duration, bool)>,
    /// Each disk's read speed measured before the run (MB/s), for the
    /// ETA until it has read back something itself.
    pub read_mb_per_s: Vec<Option<f64>>,
    /// Hand where each disk stands (and the ETA) on this often, for
    /// `--metrics` (None: never).
    pub ticks: Option<Duration>,
    /// A burn-in's `--deadline`: the ETA of disks burned in stripes.
    pub deadline: Option<Instant>,
}

/// What the watch hands on: disk `d` met trouble (at once), and where
/// each disk stands with the whole run's ETA in seconds (every
/// `Looks::ticks`).
pub struct Told<'a> {
    pub met: &'a dyn Fn(usize, Trouble),
    pub tick: &'a dyn Fn(&[BurnTick], Option<f64>),
}

/// Runs `work` on every disk at once (a thread each) while the watch
/// looks on: each disk's result, and its temperatures while it ran.
/// `soak`: a read-only soak (one phase a pass), and its deadline when run
/// by time.
pub fn burn_all(
    disks: &[DiskPlan],
    (soak, looks): (Option<Option<Instant>>, &Looks),
    (stop, told): (&StopFlag, Told),
    work: impl Fn(&DiskPlan, &Live) -> DiskBurn + Sync,
) -> Vec<(DiskBurn, Temps)> {
    let lives: Vec<Live> = disks.iter().map(|_| Live::default()).collect();
    std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = (disks.iter().zip(&lives))
            .map(|(d, live)| {
                s.spawn(move || {
                    let burn = work(d, live);
                    live.note(&burn);
                    burn
                })
            })
            .collect();
        let finished = || handles.iter().map(|h| h.is_finished()).collect();
        let temps = watch(&Watched { disks, lives: &lives }, finished, (soak, looks), (stop, told));
        let burns = handles.into_iter().map(|h| h.join().unwrap_or_default());
        burns.zip(temps).collect()
    })
}

/// The disks being watched, and what each has done so far.
struct Watched<'a> {
    disks: &'a [DiskPlan],
    lives: &'a [Live],
}

impl Watched<'_> {
    /// Where each disk is now (`finished`: its thread has ended).
    fn ticks(&self, finished: &[bool], phases: u64, soak: bool) -> Vec<BurnTick> {
        let each = self.disks.iter().zip(self.lives);
        each.zip(finished)
            .map(|((d, l), &ended)| {
                let (t, c) = (&d.target, &d.point);
                // A disk burned in stripes: the stripe now, of its surface.
                let striped = c.burn.stripes.filter(|_| c.verifies.is_none());
                let (len, before, stripes) = match striped {
                    Some(s) => (s.size, l.stripes.load(Ordering::Relaxed), s.slots),
                    None => ((t.end - t.start).max(1), 0, 1),
                };
                let each = u64::from(c.passes) * phases * len;
                let total = each * stripes;
                let (pass, stage) = l.stage();
                let done = l.done.load(Ordering::Relaxed);
                let over = c.at.phase == Phase::Done || ended;
                let all = match over {
                    true => total,
                    false => before * each + progress_bytes(len, phases, pass, stage, done),
                };
                let writing = matches!(stage, Stage::Write | Stage::Flush);
                let left = if over {
                    (0, 0)
                } else {
                    let (w, r) = bytes_left(len, (pass, c.passes), (writing, done), phases == 2);
                    let rest = stripes.saturating_sub(before + 1) * len * u64::from(c.passes);
                    (w + rest, r + rest)
                };
                BurnTick {
                    name: t.dev.given.clone(),
                    pass,
                    passes: c.passes_asked(),
                    phase: stage_word(stage, soak && c.verifies.is_none()),
                    phase_pct: 100.0 * done.min(len) as f64 / len as f64,
                    done: all,
                    total,
                    writing,
                    left,
                    ended: l.trouble().filter(|t| *t >= Trouble::Gone).map(Trouble::word),
                    stripe: striped.map(|s| ((before + 1).min(s.slots), s.slots)),
                }
            })
            .collect()
    }

    /// Each disk's SMART now, where it was read before the run.
    fn temperatures(&self, stop: &StopFlag) -> Vec<Option<smart::Snapshot>> {
        (self.disks.iter())
            .map(|d| {
                d.point.smart_before.as_ref()?;
                smart::read(&d.target.dev.given, &|| stop.is_set()).ok()
            })
            .collect()
    }
}

/// A reading taken into a disk's temperatures: a temperature a sensor can
/// mean kept, one it cannot named (once, with when it first came; not
/// where SMART before the run said it already), never dropped without a
/// word.
fn noted(t: &mut Temps, now: Option<smart::Snapshot>, before: &[String], elapsed_s: f64) {
    let Some(now) = now else { return };
    t.readings.extend(now.temperature_c.map(|celsius| TempReading { elapsed_s, celsius }));
    for words in now.not_believed.into_iter().filter(|w| !before.contains(w)) {
        let at = crate::units::human_duration(Duration::from_secs_f64(elapsed_s));
        if !t.not_believed.iter().any(|w| w.ends_with(&words)) {
            t.not_believed.push(format!("at {at} into the run: {words}"));
        }
    }
}

/// A phase in the progress line's words.
fn stage_word(stage: Stage, soak: bool) -> &'static str {
    match stage {
        Stage::Write => "write",
        Stage::Flush => "flush",
        Stage::Verify if soak => "read",
        Stage::Verify => "verify",
        Stage::Reverify => "re-verify",
    }
}

/// Looks at the disks every 100 ms until every thread has ended: each
/// disk's temperature, read every `smart_every`; what a disk met, handed
/// to `met` as soon as it is worse than before.
fn watch(
    disks: &Watched,
    finished: impl Fn() -> Vec<bool>,
    (soak, looks): (Option<Option<Instant>>, &Looks),
    (stop, hand): (&StopFlag, Told),
) -> Vec<Temps> {
    let phases = if soak.is_some() { 1 } else { 2 };
    let mut temps: Vec<Temps> = vec![Temps::default(); disks.disks.len()];
    let mut told: Vec<Option<Trouble>> = vec![None; disks.disks.len()];
    let started = Instant::now();
    let mut sampled = started;
    let guesses = &looks.read_mb_per_s;
    let mut lines = (looks.progress.map(|p| BurnLines::new(p, guesses)))
        .or_else(|| looks.ticks.map(|every| BurnLines::silent(every, guesses)));
    let mut ticked = Instant::now();
    loop {
        let ended = finished();
        for (i, live) in disks.lives.iter().enumerate() {
            let now = live.trouble();
            if now > told[i] {
                told[i] = now;
                now.into_iter().for_each(|t| (hand.met)(i, t));
            }
        }
        if ended.iter().all(|&e| e) {
            lines.iter().for_each(BurnLines::finish);
            return temps;
        }
        std::thread::sleep(Duration::from_millis(100));
        if sampled.elapsed() >= looks.smart_every {
            sampled = Instant::now();
            let elapsed_s = started.elapsed().as_secs_f64();
            let now = disks.temperatures(stop);
            for ((t, now), d) in temps.iter_mut().zip(now).zip(disks.disks) {
                let before = d.point.smart_before.as_ref().map(|s| s.not_believed.as_slice());
                noted(t, now, before.unwrap_or_default(), elapsed_s);
            }
        }
        if let Some(lines) = lines.as_mut().filter(|l| l.due()) {
            let ticks = disks.ticks(&ended, phases, soak.is_some());
            let eta = lines.show(&ticks, soak.flatten().or(looks.deadline));
            // Due with the lines (a little early is on time).
            let due = |every: Duration| ticked.elapsed() + Duration::from_millis(250) >= every;
            if looks.ticks.is_some_and(due) {
                ticked = Instant::now();
                (hand.tick)(&ticks, eta);
            }
        }
    }
}

/// Bytes of a disk's whole run done at `pass`, `stage`, `done` (its
/// phase's bytes), out of `passes` × `phases` (2: write and verify; a
/// soak's 1) × the range.
fn progress_bytes(len: u64, phases: u64, pass: u16, stage: Stage, done: u64) -> u64 {
    bytes_done(len, phases, pass, stage == Stage::Verify, done)
}

//! Re-measuring the disks the burn-in called slow on speed alone, before
//! any is blamed: each alone, so that nothing the disks share (the host's
//! CPU, a controller, an expander) sets its pace, against a peer of its
//! group read alone between them. Every suspect and its peer take turns in
//! rounds, one disk at a time (a peer shared by several suspects reads
//! once a round for all of them), each round in the order the check's
//! slices take (forwards, then backwards), so each suspect's turns are
//! compared with the peer's around them. Many suspects at once (the mark
//! of a shared limit: a CPU or a controller the run shared unevenly) are
//! answered together: a round costs one turn per disk, not a pair of
//! turns per suspect, and after each batch of rounds only the suspects
//! their turns have not decided yet read on. A turn writes and reads back a
//! stretch at the start of the disk's range with its last pass's blocks,
//! which is what that stretch holds already (a soak's turn only reads);
//! where the disk reads faster than it writes, it then reads back a longer
//! stretch, each phase's stretch sized from that phase's own speed: a
//! read-back sized from slow writes would last a fraction of a second, too
//! short to tell. What a turn finds (a failed write, a changed block, a
//! hang) is a finding like any other, in that disk's burn, and that disk
//! takes no more turns.
//!
//! The whole re-measurement takes at most what the run gives it (the
//! burning's own time, a few minutes at most): each phase of a turn is
//! sized so that the sizing round and a batch fit in half of it (where a
//! phase is already as short as a speed allows, there is no sizing round),
//! every disk takes its first counted turn, and no later turn starts that
//! would end past the budget (a disk's turn as long as its last). What it
//! could not decide in that time stays undecided: fewer turns than a batch
//! decide nothing (`judge::burnin`).
//!
//! It must not judge: the speeds go to `judge::burnin`.

use std::time::{Duration, Instant};

use super::live::Live;
use super::record::{At, DiskBurn, Span};
use super::worker::{BurnJob, burn, read_back, soak};
use crate::measure::round_order;
use crate::units::mb_per_s;

/// What each turn's phase aims to take at most: long enough for a speed,
/// short enough that re-measuring a few disks adds a minute to a run of
/// hours.
const TURN: Duration = Duration::from_secs(1);
/// What a phase aims to take at least, however many disks share the
/// time (whole requests: [`MIN_REQUESTS`] set the floor on a fast disk).
const SHORTEST: Duration = Duration::from_millis(20);
/// The sizing round's phases this much shorter than aimed for size that
/// disk's turns again from its own speed.
const SIZING: f64 = 0.5;
/// Requests a turn makes at least (a speed from one or two requests is
/// their buffers' setting up and the flush).
const MIN_REQUESTS: u64 = 8;
/// What a turn may take to make its [`MIN_REQUESTS`].
const LONGEST: Duration = Duration::from_secs(4);
/// Turns over a stretch this many times at most (a small disk).
const MAX_ROUNDS: u64 = 64;
/// The most a re-measurement may take, however long the burning was.
pub const MOST: Duration = Duration::from_secs(180);
/// Rounds (a turn of each disk) between asking whether the turns decide,
/// and batches at most: as the check re-measures.
pub const BATCH: usize = 4;
pub const BATCHES: usize = 3;

/// One turn: whose (its index among the disks re-measured), in which
/// round, when it began (seconds from the first), and its write and
/// read-back MB/s (None: not run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Turn {
    pub who: usize,
    pub round: u32,
    pub at_s: f64,
    pub write: Option<f64>,
    pub verify: Option<f64>,
}

/// The turns of suspect `disk` and its peer `peer`, as a pair: the
/// suspect's as `who` 0, the peer's as 1, no other disk's.
pub fn of_pair(turns: &[Turn], (disk, peer): (usize, usize)) -> Vec<Turn> {
    (turns.iter())
        .filter_map(|t| match t.who {
            w if w == disk => Some(Turn { who: 0, ..*t }),
            w if w == peer => Some(Turn { who: 1, ..*t }),
            _ => None,
        })
        .collect()
}

/// What a re-measurement read: every turn, what the turns found on each
/// disk, and which pairs it measured whole (no stop, nothing found on
/// either disk).
pub struct Rounds {
    pub turns: Vec<Turn>,
    pub found: Vec<DiskBurn>,
    pub whole: Vec<bool>,
}

/// Re-measures suspects beside peers: `jobs` are the disks (each over its
/// whole range, as the run had it), `pairs` each suspect with its peer (as
/// indices into `jobs`); `guess`: bytes/s each disk's run saw writing and
/// reading back, to size its first turn; `budget`: what the whole may take.
/// Rounds of every disk alone, in batches of [`BATCH`] after the first
/// (sizing) round, until `decided` says of every pair (its index, its
/// turns as [`of_pair`] gives them) that its turns are enough, or
/// [`BATCHES`] batches, or the budget is spent.
pub fn in_rounds(
    jobs: &[BurnJob],
    pairs: &[(usize, usize)],
    (read_only, guess): (bool, &[(f64, f64)]),
    budget: Duration,
    decided: &dyn Fn(usize, &[Turn]) -> bool,
) -> Rounds {
    let began = Instant::now();
    let aim = phase_length(budget, jobs.len(), read_only);
    // A pair compares the same stretch on both disks (a throttle's or a
    // cache's burst favours a shorter one): one stretch for all the disks
    // pairs join, kept under the first of them (`joined`), sized from its
    // guess and then from its sizing turn.
    let joined = joined(jobs.len(), pairs);
    let mut stretch: Vec<Stretches> = (jobs.iter().zip(guess))
        .map(|(j, (w, r))| Stretches {
            write: Stretch::of(j, *w, aim),
            read: Stretch::of(j, *r, aim),
        })
        .collect();
    let mut sized = vec![false; jobs.len()];
    let mut found = vec![DiskBurn::default(); jobs.len()];
    let mut open = vec![true; pairs.len()];
    let mut turns = Vec::new();
    let stopped = || jobs.first().is_some_and(|j| j.stop.is_set());
    // Where a phase is as short as a speed allows, there is nothing to
    // size: the first round counts.
    let first = u32::from(aim <= SHORTEST);
    let mut took = vec![Duration::ZERO; jobs.len()];
    'rounds: for round in first..=(BATCH * BATCHES) as u32 {
        let who = readers(pairs, &open, &found);
        if who.is_empty() {
            break;
        }
        for i in round_order(who.len(), round, 2) {
            let p = who[i];
            if stopped() {
                break 'rounds;
            }
            // Every disk's first counted turn is taken; no later one
            // starts that would end past the budget.
            if round > 1 && began.elapsed() + took[p] > budget {
                break 'rounds;
            }
            if !clean(&found[p]) {
                continue;
            }
            let at = began.elapsed();
            let c = joined[p];
            let t = stretch[c].turn(&jobs[p], read_only);
            took[p] = began.elapsed() - at;
            found[p].absorb(&t);
            if round == 0 {
                // The first turn warms the disk up; the first of the
                // joined disks' sizes their stretch.
                if !std::mem::replace(&mut sized[c], true) {
                    stretch[c] = stretch[c].resized(&jobs[p], &t, (read_only, aim));
                }
                continue;
            }
            let speed = |bytes: u64, s: f64| (bytes > 0 && s > 0.0).then(|| mb_per_s(bytes, s));
            let (write, verify) =
                (speed(t.written_bytes, t.write_s), speed(t.verified_bytes, t.verify_s));
            turns.push(Turn { who: p, round, at_s: at.as_secs_f64(), write, verify });
        }
        if round > 0 && (round as usize).is_multiple_of(BATCH) {
            for (k, open) in open.iter_mut().enumerate().filter(|(_, o)| **o) {
                *open = !decided(k, &of_pair(&turns, pairs[k]));
            }
        }
    }
    let whole =
        (pairs.iter()).map(|(a, b)| clean(&found[*a]) && clean(&found[*b]) && !stopped()).collect();
    Rounds { turns, found, whole }
}

/// Each of `n` disks' first disk among those `pairs` join (directly or
/// through a disk they share): the disks that take the same stretch.
fn joined(n: usize, pairs: &[(usize, usize)]) -> Vec<usize> {
    let mut first: Vec<usize> = (0..n).collect();
    let root = |first: &[usize], mut x: usize| {
        while first[x] != x {
            x = first[x];
        }
        x
    };
    for &(a, b) in pairs {
        let (ra, rb) = (root(&first, a), root(&first, b));
        first[ra.max(rb)] = ra.min(rb);
    }
    (0..n).map(|x| root(&first, x)).collect()
}

/// Who reads a round: both disks of every pair still open and measured
/// whole so far, each once.
fn readers(pairs: &[(usize, usize)], open: &[bool], found: &[DiskBurn]) -> Vec<usize> {
    let clean_pair = |(a, b): (usize, usize)| clean(&found[a]) && clean(&found[b]);
    let mut who: Vec<usize> = (pairs.iter().zip(open))
        .filter(|(p, open)| **open && clean_pair(**p))
        .flat_map(|(p, _)| [p.0, p.1])
        .collect();
    who.sort_unstable();
    who.dedup();
    who
}

/// What each phase of a turn aims to take when `disks` disks share a
/// re-measurement that may take `budget`: the sizing round and a batch in
/// half of it, between [`SHORTEST`] and [`TURN`].
fn phase_length(budget: Duration, disks: usize, read_only: bool) -> Duration {
    let phases = if read_only { 1 } else { 2 };
    let planned = ((1 + BATCH) * disks.max(1) * phases) as u32;
    (budget / 2 / planned).clamp(SHORTEST, TURN)
}

/// The stretch each turn covers, and how many times.
#[derive(Debug, Clone, Copy)]
struct Stretch {
    len: u64,
    rounds: u64,
}

/// A turn's stretches: the one written (and read back), and the one read
/// back (longer where the disk reads faster than it writes).
#[derive(Debug, Clone, Copy)]
struct Stretches {
    write: Stretch,
    read: Stretch,
}

impl Stretches {
    /// Each phase sized again from the sizing turn where that phase ran
    /// too short.
    fn resized(self, job: &BurnJob, turn: &DiskBurn, (read_only, aim): (bool, Duration)) -> Self {
        let short = |s: f64| s < SIZING * aim.as_secs_f64();
        let pace = |bytes: u64, s: f64| bytes as f64 / s.max(1e-3);
        let write = match !read_only && short(turn.write_s) {
            true => Stretch::of(job, pace(turn.written_bytes, turn.write_s), aim),
            false => self.write,
        };
        let read = match short(turn.verify_s) {
            true => Stretch::of(job, pace(turn.verified_bytes, turn.verify_s), aim),
            false => self.read,
        };
        Self { write, read }
    }

    /// One disk's turn: its write stretch written and read back, then,
    /// where the read stretch is the longer, that read back again (a
    /// soak's turn only reads its read stretch). The read-back's speed is
    /// the longer read's.
    fn turn(self, job: &BurnJob, read_only: bool) -> DiskBurn {
        if read_only {
            return self.read.turn(job, true);
        }
        let mut out = self.write.turn(job, false);
        let (read, written) =
            (self.read.len * self.read.rounds, self.write.len * self.write.rounds);
        if read <= written || !clean(&out) || job.stop.is_set() {
            return out;
        }
        let mut again = DiskBurn::default();
        let t = Span { end: job.t.start + self.read.len, ..job.t };
        let one = BurnJob { t, ..job.clone() };
        for _ in 0..self.read.rounds {
            let r = read_back(&one, job.passes);
            (again.verified_bytes, again.verify_s) =
                (again.verified_bytes + r.verified_bytes, again.verify_s + r.verify_s);
            again.absorb(&r);
            if !clean(&again) || job.stop.is_set() {
                break;
            }
        }
        (out.verified_bytes, out.verify_s) = (again.verified_bytes, again.verify_s);
        out.absorb(&again);
        out
    }
}

impl Stretch {
    /// `aim` at `bytes_per_s`, in whole requests, at least
    /// [`MIN_REQUESTS`] where they take at most [`LONGEST`] (big
    /// requests to a slow disk), within the range.
    fn of(job: &BurnJob, bytes_per_s: f64, aim: Duration) -> Self {
        let range = job.t.end - job.t.start;
        let io = job.io as u64;
        let at = |d: Duration| (bytes_per_s.max(0.0) * d.as_secs_f64()) as u64;
        let want = at(aim).max((MIN_REQUESTS * io).min(at(LONGEST)));
        if want <= range {
            return Self { len: (want / io * io).clamp(io.min(range), range), rounds: 1 };
        }
        Self { len: range, rounds: want.div_ceil(range.max(1)).clamp(1, MAX_ROUNDS) }
    }

    /// One disk's turn: its stretch written and read back (or read),
    /// `rounds` times.
    fn turn(self, job: &BurnJob, read_only: bool) -> DiskBurn {
        let live = Live::default();
        let t = Span { end: job.t.start + self.len, ..job.t };
        let passes = if read_only { 1 } else { job.passes };
        let one =
            BurnJob { t, passes, live: &live, every: Duration::MAX, deadline: None, ..job.clone() };
        let mut out = DiskBurn::default();
        for _ in 0..self.rounds {
            if read_only {
                let r = soak(&one);
                (out.verified_bytes, out.verify_s) =
                    (out.verified_bytes + r.verified_bytes, out.verify_s + r.verify_s);
                out.absorb(&r);
            } else {
                let at = At::first(t.start).with_pass(passes);
                out = burn(&one, at, out, &mut |_, _| {});
            }
            if !clean(&out) || job.stop.is_set() {
                break;
            }
        }
        out
    }
}

/// A burst at the start of the disk's range: `len` bytes (whole requests,
/// at least one) written and read back with its last pass's blocks, which
/// is what they hold already; after idling, it shows whether the disk's
/// writes recover (`judge::smr`).
pub fn burst(job: &BurnJob, len: u64) -> DiskBurn {
    let io = job.io as u64;
    let range = job.t.end - job.t.start;
    let len = (len / io * io).clamp(io.min(range), range);
    Stretch { len, rounds: 1 }.turn(job, false)
}

/// Nothing found: no bad block, no hang, the device still there.
pub fn clean(b: &DiskBurn) -> bool {
    b.total_bad() == 0 && b.hung.is_none() && !b.device_gone
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_takes_its_own_two_disks_turns_as_the_disk_and_its_peer() {
        let turn = |who: usize, at_s: f64| Turn { who, round: 1, at_s, write: None, verify: None };
        let turns = [turn(3, 0.0), turn(1, 1.0), turn(2, 2.0), turn(1, 3.0)];
        let pair = of_pair(&turns, (2, 1));
        let seen: Vec<(usize, f64)> = pair.iter().map(|t| (t.who, t.at_s)).collect();
        assert_eq!(seen, [(1, 1.0), (0, 2.0), (1, 3.0)]);
    }

    #[test]
    fn the_disks_pairs_join_take_one_stretch() {
        // Suspects 0 and 3 beside peer 1, suspect 2 beside 4, 4 beside 2.
        assert_eq!(joined(6, &[(0, 1), (3, 1), (2, 4), (4, 2)]), [0, 0, 2, 0, 2, 5]);
        assert_eq!(joined(3, &[(2, 1), (1, 0)]), [0, 0, 0]);
    }

    #[test]
    fn a_turn_shares_the_budget_with_every_disk_re_measured() {
        // Two disks and three minutes: a second a phase at most.
        assert_eq!(phase_length(MOST, 2, false), TURN);
        // 14 disks in 20 s: the sizing round and a batch in 10 s, 70 ms a
        // phase of a write and read-back.
        let p = phase_length(Duration::from_secs(20), 14, false);
        assert_eq!(p.as_millis(), 71);
        assert_eq!(phase_length(Duration::from_secs(20), 14, true).as_millis(), 142);
        // Never shorter than a speed allows.
        assert_eq!(phase_length(Duration::from_secs(2), 64, false), SHORTEST);
    }
}

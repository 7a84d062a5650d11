//! Re-measuring a disk the burn-in called slow on speed alone, before it
//! is blamed: alone, in turn with a peer of its group, so that nothing the
//! disks share (the host's CPU, a controller, an expander) sets either
//! one's pace. A turn writes and reads back a stretch at the start of the
//! disk's range with its last pass's blocks, which is what that stretch
//! holds already (a soak's turn only reads); where the disk reads faster
//! than it writes, it then reads back a longer stretch, each phase's
//! stretch sized from that phase's own speed: a read-back sized from
//! slow writes would last a fraction of a second, too short to tell. The
//! turns alternate (A-B-A-B), as the check's re-measurement does, so each
//! of the disk's turns is compared with the peer's around it. What a turn
//! finds (a failed write, a changed block, a hang) is a finding like any
//! other, in that disk's burn.
//!
//! It must not judge: the speeds go to `judge::burnin`.

use std::time::{Duration, Instant};

use super::record::{At, DiskBurn, Span};
use super::worker::{BurnJob, Live, burn, read_back, soak};
use crate::units::mb_per_s;

/// What each turn's phase aims to take: long enough for a speed, short
/// enough that re-measuring a few disks adds a minute to a run of hours.
const TURN: Duration = Duration::from_secs(1);
/// The disk's first turn sizes the others and is not counted (it also
/// warms the disk up); one this much shorter than [`TURN`] sizes them
/// again from its own speed.
const SIZING: f64 = 0.5;
/// Requests a turn makes at least (a speed from one or two requests is
/// their buffers' setting up and the flush).
const MIN_REQUESTS: u64 = 8;
/// What a turn may take to make its [`MIN_REQUESTS`].
const LONGEST: Duration = Duration::from_secs(4);
/// Turns over a stretch this many times at most (a small disk).
const MAX_ROUNDS: u64 = 64;
/// Rounds (a turn of each disk) between asking whether the turns decide,
/// and batches at most: as the check re-measures.
pub const BATCH: usize = 4;
pub const BATCHES: usize = 3;

/// One turn: whose (0 the disk, 1 its peer), when it began (seconds from
/// the first), and its write and read-back MB/s (None: not run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Turn {
    pub who: usize,
    pub round: u32,
    pub at_s: f64,
    pub write: Option<f64>,
    pub verify: Option<f64>,
}

/// Re-measures `jobs[0]` in turn with `jobs[1]` (each over its whole range,
/// as the run had it), A-B-A-B, in batches of [`BATCH`] rounds until
/// `decided` says the turns so far are enough, [`BATCHES`] at most;
/// `guess`: bytes/s the run saw writing and reading back, to size each
/// phase of the turns. What a turn finds goes
/// into that disk's `burns`. The turns; None when a signal stopped them or
/// a turn found something (that finding is the verdict's then).
pub fn in_turn(
    jobs: [&BurnJob; 2],
    read_only: bool,
    (write_guess, read_guess): (f64, f64),
    burns: [&mut DiskBurn; 2],
    decided: &dyn Fn(&[Turn]) -> bool,
) -> Option<Vec<Turn>> {
    let began = Instant::now();
    let mut stretch = Stretches {
        write: Stretch::of(jobs[0], write_guess),
        read: Stretch::of(jobs[0], read_guess),
    };
    let sizing = stretch.turn(jobs[0], read_only);
    let mut found = [sizing, DiskBurn::default()];
    stretch = stretch.resized(jobs[0], &found[0], read_only);
    let mut turns = Vec::new();
    'rounds: for round in 0..(BATCH * BATCHES) as u32 {
        for who in [0, 1] {
            if !clean(&found[0]) || !clean(&found[1]) || jobs[0].stop.is_set() {
                break 'rounds;
            }
            let at_s = began.elapsed().as_secs_f64();
            let t = stretch.turn(jobs[who], read_only);
            let speed = |bytes: u64, s: f64| (bytes > 0 && s > 0.0).then(|| mb_per_s(bytes, s));
            let (write, verify) =
                (speed(t.written_bytes, t.write_s), speed(t.verified_bytes, t.verify_s));
            turns.push(Turn { who, round, at_s, write, verify });
            found[who].absorb(&t);
        }
        if (round as usize + 1).is_multiple_of(BATCH) && decided(&turns) {
            break;
        }
    }
    let [a, b] = burns;
    a.absorb(&found[0]);
    b.absorb(&found[1]);
    let whole = found.iter().all(clean) && !jobs[0].stop.is_set();
    whole.then_some(turns)
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
    fn resized(self, job: &BurnJob, turn: &DiskBurn, read_only: bool) -> Self {
        let short = |s: f64| s < SIZING * TURN.as_secs_f64();
        let pace = |bytes: u64, s: f64| bytes as f64 / s.max(1e-3);
        let write = match !read_only && short(turn.write_s) {
            true => Stretch::of(job, pace(turn.written_bytes, turn.write_s)),
            false => self.write,
        };
        let read = match short(turn.verify_s) {
            true => Stretch::of(job, pace(turn.verified_bytes, turn.verify_s)),
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
    /// [`TURN`] at `bytes_per_s`, in whole requests, at least
    /// [`MIN_REQUESTS`] where they take at most [`LONGEST`] (big
    /// requests to a slow disk), within the range.
    fn of(job: &BurnJob, bytes_per_s: f64) -> Self {
        let range = job.t.end - job.t.start;
        let io = job.io as u64;
        let at = |d: Duration| (bytes_per_s.max(0.0) * d.as_secs_f64()) as u64;
        let want = at(TURN).max((MIN_REQUESTS * io).min(at(LONGEST)));
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
fn clean(b: &DiskBurn) -> bool {
    b.total_bad() == 0 && b.hung.is_none() && !b.device_gone
}

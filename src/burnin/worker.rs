//! One disk's burn-in: for each pass, write every block of the range
//! (self-identifying, see `block`) through the disk's sweep, flush the
//! disk's cache (fdatasync) before the write phase counts as done, then read
//! everything back and classify every block that is not what was written. A
//! failed write or read is pinpointed to its 4 KiB blocks and the disk
//! carries on; a device that goes away ends its run. What it records is
//! `record`'s; it only measures and classifies: verdicts are
//! `judge::burnin`'s.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::block::{BLOCK, Pattern, Stamp};
use super::live::{DiskIo, Live, Stage};
use super::record::{At, Class, DiskBurn, Phase, Span, describe};
use super::surface_timer::SurfaceTimer;
use super::targets::Target;

use crate::device::buffer::{AlignedBuf, Chunk, Chunks};
use crate::io::{Bounds, Direction, Halt, Landed, Probe, Sweep, Until, is_gone, is_hung};
use crate::stop::StopFlag;

/// One disk's burn-in as asked.
#[derive(Clone)]
pub struct BurnJob<'a> {
    /// The range, and the identity its blocks carry.
    pub t: Span,
    /// Where the writes and reads go.
    pub on: &'a dyn DiskIo,
    /// Bytes per write and read (a multiple of 4 KiB).
    pub io: usize,
    pub passes: u16,
    pub pattern: Pattern,
    pub run: u64,
    /// The block format the run writes (`block::VERSION`, or 1 for a
    /// burn-in an older arrayburn began).
    pub version: u16,
    pub stop: &'a StopFlag,
    pub live: &'a Live,
    /// How often a checkpoint is saved.
    pub every: Duration,
    /// A read-only soak stops here (mid-pass too).
    pub deadline: Option<Instant>,
    /// The stop and the I/O timeout every wait is bound by; whether this
    /// disk hung.
    pub bounds: Bounds,
}

impl BurnJob<'_> {
    /// The disk's sweep for a phase and its probe, as asked.
    fn open(&self) -> std::io::Result<(Sweep, Probe)> {
        self.on.open(&self.bounds)
    }

    /// Whether the run must end now: a signal, or the soak's time is up.
    fn over(&self) -> bool {
        self.stop.is_set() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// How long a stop still waits for the writes in flight and for the flush
/// that lets the last checkpoint name them (a healthy disk needs
/// milliseconds; a hung one is left).
const DRAIN: Duration = Duration::from_secs(3);

/// The bound of a wait that a stop must not cut short: until a stop, and
/// after one until [`DRAIN`] past it.
#[derive(Default)]
struct Settle {
    after: Option<Instant>,
}

impl Settle {
    fn until(&mut self, stop: &StopFlag) -> Until {
        if !stop.is_set() {
            return Until::Stop;
        }
        Until::Deadline(*self.after.get_or_insert_with(|| Instant::now() + DRAIN))
    }

    /// Runs `op` with the bound, again with the drain's deadline when a
    /// stop cut it short.
    fn bounded<T>(
        &mut self,
        stop: &StopFlag,
        mut op: impl FnMut(Until) -> Result<T, Halt>,
    ) -> Result<T, Halt> {
        match op(self.until(stop)) {
            Err(Halt::Stopped) => op(self.until(stop)),
            r => r,
        }
    }
}

/// A read-only soak of one disk: up to `job.passes` read passes over its
/// range (until `job.deadline`), read errors pinpointed as the burn-in's;
/// nothing is written and nothing checked but that each block reads.
pub fn soak(job: &BurnJob) -> DiskBurn {
    let mut out = DiskBurn::default();
    for pass in 1..=job.passes {
        if job.over() {
            break;
        }
        let p = BurnPass::of(job, pass);
        let span = (job.t.start, job.t.end);
        if p.verify(span, Check::Read, &mut out, &mut |_, _| {}).is_none() {
            break;
        }
        out.passes_done = pass;
    }
    out.interrupted = job.stop.is_set();
    out
}

/// The blocks of pass `pass` read back again over the job's range, checked
/// as a verify checks them (a re-measurement's read-back, sized apart from
/// its writes); nothing is written.
pub fn read_back(job: &BurnJob, pass: u16) -> DiskBurn {
    let mut out = DiskBurn::default();
    let span = (job.t.start, job.t.end);
    BurnPass::of(job, pass).verify(span, Check::Verify, &mut out, &mut |_, _| {});
    out
}

/// `save`, keeping in `saved` the last place it was given: a report's
/// place is the last one saved (what a resume continues from).
fn keeping<'a>(
    saved: &'a mut At,
    save: &'a mut dyn FnMut(&DiskBurn, At),
) -> impl FnMut(&DiskBurn, At) + 'a {
    move |b: &DiskBurn, now: At| {
        *saved = now;
        save(b, now)
    }
}

/// A finished or interrupted burn-in's blocks read back (`burnin
/// --verify`): each of `written` (from, to, the pass whose blocks it
/// holds; in order over the range), classified as a verify classifies them,
/// once for each of the job's passes from `at` on (with `--cycles`, each
/// pass a cycle, begun by `spin`: a disk that does not come back as itself
/// is read no more), with what was found before in `out` (a resumed
/// verify); `save` as [`burn`]'s. Nothing is written.
pub fn verify_written(
    job: &BurnJob,
    written: &[(u64, u64, u16)],
    (at, spin): (At, Option<&dyn Fn(u16) -> super::cycle::Cycle>),
    mut out: DiskBurn,
    save: &mut dyn FnMut(&DiskBurn, At),
) -> DiskBurn {
    out.interrupted = false;
    let mut saved = at;
    let mut keep = keeping(&mut saved, save);
    let save = &mut keep;
    let (start, end) = (job.t.start, job.t.end);
    let mut at = at;
    while at.phase != Phase::Done && !job.stop.is_set() {
        if let Some(spin) = spin.filter(|_| at.done_until == start) {
            let c = spin(at.pass);
            // A cycle a stop cut short measured nothing: not recorded (its
            // "did not come back" would return a disk for the stop).
            if job.stop.is_set() {
                break;
            }
            let read_on = c.read_on();
            out.cycles.push(c);
            save(&out, at);
            if !read_on || job.stop.is_set() {
                break;
            }
        }
        let mut whole = true;
        for &(from, to, stamp) in written.iter().filter(|s| s.1 > at.done_until) {
            let from = from.max(at.done_until);
            let pass = BurnPass::reading(job, stamp, at.pass);
            whole &= pass.verify((from, to), Check::Verify, &mut out, save).is_some();
            if !whole || job.stop.is_set() {
                break;
            }
        }
        if !whole || job.stop.is_set() {
            break;
        }
        out.passes_done = at.pass;
        at = match at.pass < job.passes {
            true => At { pass: at.pass + 1, phase: Phase::Verify, ..At::first(start) },
            false => At { pass: at.pass, phase: Phase::Done, done_until: end, interval_from: end },
        };
        save(&out, at);
    }
    drop(keep);
    out.place = Some(saved);
    out.interrupted = job.stop.is_set();
    out
}

/// Burns in one disk from `at` (the start, or a checkpoint's place) with
/// what was found before it in `out` (a stop it recorded is behind it); `save` is called with the state at
/// least every `job.every`, at each phase's end and when a signal stops
/// the run, and never names written bytes the disk has not flushed.
pub fn burn(
    job: &BurnJob,
    at: At,
    mut out: DiskBurn,
    save: &mut dyn FnMut(&DiskBurn, At),
) -> DiskBurn {
    // A resumed burn's stop is behind it.
    out.interrupted = false;
    // The report's place is the last one saved (what a resume continues
    // from), mid-phase too; not the start of the phase a signal cut short.
    let mut saved = at;
    let mut keep = keeping(&mut saved, save);
    let save = &mut keep;
    let mut at = at;
    while at.phase != Phase::Done && !job.stop.is_set() {
        let p = BurnPass::of(job, at.pass);
        let go_on = match at.phase {
            Phase::Write => p.resumed_write(at, &mut out, save),
            Phase::Verify => {
                p.verify((at.done_until, job.t.end), Check::Verify, &mut out, save).is_some()
            }
            Phase::Done => unreachable!(),
        };
        if !go_on {
            break;
        }
        if at.phase == Phase::Verify {
            out.passes_done = at.pass;
        }
        at = at.next(job.t, job.passes);
        save(&out, at);
    }
    drop(keep);
    out.place = Some(saved);
    out.interrupted = job.stop.is_set();
    out
}

/// The disk's read speed now (MB/s), from at most `budget` of reading
/// (or 256 MiB) at the range's start: what the plan's time estimate uses.
/// Nothing is written; a disk that does not answer within the budget (and
/// a moment) has no speed.
pub fn sample_speed(t: &Target, io: usize, budget: Duration, bounds: &Bounds) -> Option<f64> {
    let mut probe = Probe::of(&t.file, bounds).ok()?;
    let began = Instant::now();
    let until = Until::Deadline(began + budget + Duration::from_secs(2));
    let mut read = 0u64;
    let end = t.end.min(t.start + (256 << 20));
    for chunk in Chunks::span(t.start, end, io as u64) {
        probe.read(chunk, until).ok()?.ok()?;
        read += chunk.len() as u64;
        if began.elapsed() >= budget {
            break;
        }
    }
    let s = began.elapsed().as_secs_f64();
    (read > 0 && s > 0.0).then(|| crate::units::mb_per_s(read, s))
}

/// Whether a read-back is the pass's verify or a resumed write phase
/// proving its last interval.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    Verify,
    Reverify,
    /// A soak: only whether each block reads.
    Read,
}

/// One pass over one disk.
struct BurnPass<'a> {
    job: &'a BurnJob<'a>,
    /// What the pass's blocks carry.
    stamp: Stamp,
    /// The pass its findings, times and place are recorded under: the
    /// stamp's, or a verify's one read-back of an earlier run's blocks.
    pass: u16,
    /// A verify's: the next pass's blocks are the run's too. A burn-in
    /// stopped mid-write without its last place saved (a crash, a power
    /// loss) wrote them past the place its checkpoint names, where the
    /// previous pass's are expected; a block of the run's next pass at its
    /// own offset was written there by the run, and is no lost write.
    newer: Option<Stamp>,
}

/// Where a write phase stands.
struct Writing {
    /// Where the writes landed so far end (each counted once every write
    /// before it has landed too).
    pos: u64,
    /// Where the interval since the last checkpoint begins, and when that
    /// was saved.
    last: u64,
    saved: Instant,
    began: Instant,
    stretch: SurfaceTimer,
    settle: Settle,
}

impl Writing {
    fn new(size: usize, from: u64, pass: u16) -> Self {
        Self {
            pos: from,
            last: from,
            saved: Instant::now(),
            began: Instant::now(),
            stretch: SurfaceTimer::new(size, from, pass),
            settle: Settle::default(),
        }
    }
}

/// Where a read-back stands.
struct Verifying {
    check: Check,
    /// The span read back, and how far it has been classified.
    until: u64,
    pos: u64,
    last: u64,
    saved: Instant,
    began: Instant,
    stretch: SurfaceTimer,
}

impl Verifying {
    fn new(check: Check, (from, until): (u64, u64), stretch: SurfaceTimer) -> Self {
        Self {
            check,
            until,
            pos: from,
            last: from,
            saved: Instant::now(),
            began: Instant::now(),
            stretch,
        }
    }
}

/// A buffer filled with the blocks of its chunk, to be written.
type Filled = (AlignedBuf, Chunk);
/// A read that landed, or the read the disk gave no answer to.
type Read = Result<Landed, Chunk>;

impl<'a> BurnPass<'a> {
    /// Pass `pass` of `job`.
    fn of(job: &'a BurnJob<'a>, pass: u16) -> Self {
        let stamp = Stamp { run: job.run, pass, disk: job.t.disk, version: job.version };
        Self { job, stamp, pass, newer: None }
    }

    /// The blocks of pass `stamp` read back as a verify's pass `pass`.
    fn reading(job: &'a BurnJob<'a>, stamp: u16, pass: u16) -> Self {
        let of = Self::of(job, stamp);
        let newer = Some(Stamp { pass: stamp + 1, ..of.stamp });
        Self { pass, newer, ..of }
    }

    /// The write phase from `at`: resumed mid-phase, what the last
    /// checkpoint called flushed must be there first; if it is not, it is
    /// written again. Whether the run goes on.
    fn resumed_write(
        &self,
        at: At,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) -> bool {
        let mut from = at.done_until;
        if at.interval_from < at.done_until {
            let bad = out.total_bad();
            let span = (at.interval_from, at.done_until);
            if self.verify(span, Check::Reverify, out, save).is_none() {
                return false;
            }
            if out.total_bad() > bad {
                from = at.interval_from;
            }
        }
        self.write(from, out, save)
    }
}

impl BurnPass<'_> {
    /// Flushes the disk's cache and, if that held, saves a checkpoint
    /// naming everything written up to `w.pos`. False when the flush failed
    /// or did not end (a stop's drain ran out, or the disk hung): nothing
    /// new is then claimed.
    fn checkpoint(
        &self,
        sweep: &mut Sweep,
        w: &mut Writing,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) -> bool {
        let (live, pass) = (self.job.live, self.pass);
        live.set(pass, Stage::Flush);
        // A bound of its own: after a stop, the writes' drain does not
        // use up the flush's time.
        let flushed = Settle::default().bounded(self.job.stop, |u| sweep.sync(u));
        live.set(pass, Stage::Write);
        match flushed {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                out.add(pass, w.last, w.pos - w.last, Class::FlushError, e.to_string());
                return false;
            }
            Err(h) => {
                if h == Halt::Hung {
                    out.hang(pass, Phase::Write, w.pos, &self.job.bounds);
                }
                return false;
            }
        }
        // The time so far, the pass's too: a resume adds only what it
        // takes itself, so each pass's time stays whole across a crash.
        let mut now = out.clone();
        let took = w.began.elapsed().as_secs_f64();
        now.write_s += took;
        DiskBurn::time(&mut now.write_pass_s, pass, took);
        let at = At { pass, phase: Phase::Write, done_until: w.pos, interval_from: w.last };
        save(&now, at);
        w.last = w.pos;
        w.saved = Instant::now();
        true
    }

    /// Writes the pass's blocks from `from` and flushes; false when the
    /// run must end. The blocks of the next buffer are made while the
    /// writes before it are in flight (one at a time with psync, `depth`
    /// through io_uring): at 50 GB/s a core makes 4 MiB in 80 us, less
    /// than a thread of its own costs in handing buffers to and fro.
    fn write(&self, from: u64, out: &mut DiskBurn, save: &mut dyn FnMut(&DiskBurn, At)) -> bool {
        let BurnJob { t, io: size, .. } = *self.job;
        let pass = self.pass;
        self.job.live.set(pass, Stage::Write);
        self.job.live.done.store(from - t.start, Ordering::Relaxed);
        let Some((mut sweep, mut probe)) = self.open((from, t.end), Class::WriteError, out) else {
            return false;
        };
        let mut w = Writing::new(size, from, pass);
        let free = Free::of(&mut sweep, size);
        let writer = self.job.pattern.writer(self.stamp);
        let filled = Chunks::span(from, t.end, size as u64).map(|chunk| {
            let mut b = free.take();
            writer.fill(b.slice_mut(chunk.len()), chunk.offset());
            (b, chunk)
        });
        let mut lands = Lands { probe: &mut probe, free: &free };
        let mut halted = self.feed(&mut sweep, filled, &mut lands, &mut w, out, save);
        if halted != Some(Halt::Hung)
            && let Some(h) = self.drain(&mut sweep, &mut lands, &mut w, out)
        {
            halted.get_or_insert(h);
        }
        if halted == Some(Halt::Hung) {
            out.hang(pass, Phase::Write, w.pos, &self.job.bounds);
        }
        self.end_write(halted.is_none(), &mut sweep, &mut w, out, save)
    }

    /// The phase's sweep and probe over `span`; None (and the span found
    /// `class`, its writes or reads never set up) when they cannot be had.
    fn open(
        &self,
        (from, end): (u64, u64),
        class: Class,
        out: &mut DiskBurn,
    ) -> Option<(Sweep, Probe)> {
        match self.job.open() {
            Ok(opened) => Some(opened),
            Err(e) => {
                let what = if class == Class::WriteError { "writes" } else { "reads" };
                let why = format!("cannot set up {} {what}: {e}", self.job.on.engine());
                out.add(self.pass, from, end - from, class, why);
                None
            }
        }
    }

    /// Writes the buffers `filled` makes: room made for each write (or, a
    /// checkpoint being due, every write in flight landed and counted, the
    /// flush, the save) and the write started. How the feeding ended early,
    /// if it did.
    fn feed(
        &self,
        sweep: &mut Sweep,
        filled: impl Iterator<Item = Filled>,
        lands: &mut Lands,
        w: &mut Writing,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) -> Option<Halt> {
        for (b, chunk) in filled {
            if self.job.stop.is_set() {
                return Some(Halt::Stopped);
            }
            let due = w.saved.elapsed() >= self.job.every;
            while sweep.in_flight() > 0 && (due || !sweep.room()) {
                match sweep.next(Until::Stop) {
                    Ok(Some(l)) => {
                        if let Err(h) = self.landed_write(l, lands, w, out) {
                            return Some(h);
                        }
                    }
                    Ok(None) => break,
                    Err(h) => return Some(h),
                }
            }
            if due && !self.checkpoint(sweep, w, out, save) {
                return Some(Halt::Stopped);
            }
            sweep.start(Direction::Write, b, chunk);
        }
        None
    }

    /// What is in flight lands (and is counted) before the flush; after a
    /// stop for a moment, after a hang not at all.
    fn drain(
        &self,
        sweep: &mut Sweep,
        lands: &mut Lands,
        w: &mut Writing,
        out: &mut DiskBurn,
    ) -> Option<Halt> {
        let mut halted = None;
        loop {
            match w.settle.bounded(self.job.stop, |u| sweep.next(u)) {
                Ok(Some(l)) => {
                    if let Err(h) = self.landed_write(l, lands, w, out) {
                        halted.get_or_insert(h);
                    }
                }
                Ok(None) => return halted,
                Err(h) => return Some(h),
            }
        }
    }

    /// A write landed: a failed one is written again block by block to
    /// find exactly which blocks fail; then it is counted. How the run must
    /// end, if it must.
    fn landed_write(
        &self,
        l: Landed,
        lands: &mut Lands,
        w: &mut Writing,
        out: &mut DiskBurn,
    ) -> Result<(), Halt> {
        let (pass, t) = (self.pass, self.job.t);
        let Landed { chunk, done, service } = l;
        let (at, len) = (chunk.offset(), chunk.len() as u64);
        out.timed(pass, Phase::Write, at, service);
        let whole = done.whole();
        let mut buf = done.buf;
        if let Err(e) = whole {
            if is_gone(&e) {
                out.device_gone = true;
                out.add(pass, at, len, Class::WriteError, e.to_string());
                return Err(Halt::Stopped);
            }
            self.rewrite(lands.probe, buf.slice_mut(chunk.len()), at, out)?;
        }
        lands.free.give(buf);
        w.pos = at + len;
        out.written_bytes += len;
        w.stretch.add(out, pass, Phase::Write, len, w.pos, w.pos == t.end);
        self.job.live.done.store(w.pos - t.start, Ordering::Relaxed);
        self.job.live.note(out);
        Ok(())
    }

    /// The write phase's end: a flush when it went on to the end, else a
    /// checkpoint of what was written so far (kept for a resume). Whether
    /// the run goes on.
    fn end_write(
        &self,
        whole: bool,
        sweep: &mut Sweep,
        w: &mut Writing,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) -> bool {
        let pass = self.pass;
        if whole {
            self.job.live.set(pass, Stage::Flush);
            // What a failed flush leaves unknown: the bytes written since
            // the last one that held.
            match w.settle.bounded(self.job.stop, |u| sweep.sync(u)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    out.add(pass, w.last, w.pos - w.last, Class::FlushError, e.to_string())
                }
                Err(Halt::Hung) => out.hang(pass, Phase::Write, w.pos, &self.job.bounds),
                Err(_) => {}
            }
        } else if !out.device_gone && out.hung.is_none() && w.pos > w.last {
            self.checkpoint(sweep, w, out, save);
        }
        let took = w.began.elapsed().as_secs_f64();
        out.write_s += took;
        DiskBurn::time(&mut out.write_pass_s, pass, took);
        whole && out.hung.is_none() && !self.job.stop.is_set()
    }

    /// Writes `src` (a failed write's data) at `at` again block by block to
    /// find exactly which blocks fail, recording each; how the run must end
    /// if it must (a stop mid-way: not all written, not counted; a hang;
    /// the device gone).
    fn rewrite(
        &self,
        probe: &mut Probe,
        src: &[u8],
        at: u64,
        out: &mut DiskBurn,
    ) -> Result<(), Halt> {
        let pass = self.pass;
        for (i, block) in src.chunks_exact(BLOCK).enumerate() {
            if self.job.stop.is_set() {
                return Err(Halt::Stopped);
            }
            let o = at + (i * BLOCK) as u64;
            if let Err(e) = probe.write(block, o, Until::Stop)? {
                if is_hung(&e) {
                    return Err(Halt::Hung);
                }
                out.device_gone |= is_gone(&e);
                out.add(pass, o, BLOCK as u64, Class::WriteError, e.to_string());
                if out.device_gone {
                    return Err(Halt::Stopped);
                }
            }
        }
        Ok(())
    }

    /// Reads `span` back and classifies it; `None` when the run must end,
    /// else the bytes read. The sweep is kept full, and filled again as
    /// soon as a read lands, before that read is checked: the disk reads
    /// the next chunks while this thread checks the last (a CRC32C over 4
    /// MiB takes about 100 us).
    fn verify(
        &self,
        (from, until): (u64, u64),
        check: Check,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) -> Option<u64> {
        let BurnJob { io: size, .. } = *self.job;
        let pass = self.pass;
        let stage = match check {
            Check::Verify | Check::Read => Stage::Verify,
            Check::Reverify => Stage::Reverify,
        };
        self.job.live.set(pass, stage);
        let (mut sweep, mut probe) = self.open((from, until), Class::ReadError, out)?;
        let mut v = Verifying::new(check, (from, until), SurfaceTimer::new(size, from, pass));
        let free = Free::of(&mut sweep, size);
        let mut chunks = Chunks::span(from, until, size as u64);
        let mut refill = |sweep: &mut Sweep| {
            while sweep.room() && !self.job.over() {
                let Some(chunk) = chunks.next() else { break };
                sweep.start(Direction::Read, free.take(), chunk);
            }
        };
        let mut lands = Lands { probe: &mut probe, free: &free };
        let mut go_on = true;
        loop {
            refill(&mut sweep);
            let read = match sweep.next(Until::Stop) {
                Ok(Some(l)) => Ok(l),
                // The oldest read gave no answer: a finding; the rest are
                // left to the kernel.
                Err(Halt::Hung) => match sweep.oldest() {
                    Some(chunk) => Err(chunk),
                    None => break,
                },
                Ok(None) | Err(_) => break,
            };
            if read.is_ok() {
                refill(&mut sweep);
            }
            if self.job.over() || !self.landed_read(read, &mut lands, &mut v, out, save) {
                go_on = false;
                break;
            }
        }
        self.end_verify(go_on, &v, out, save).then_some(v.pos - from)
    }

    /// A read landed: it is classified (a failed one block by block) and
    /// counted, and a checkpoint saved when one is due. False when the run
    /// must end.
    fn landed_read(
        &self,
        read: Read,
        lands: &mut Lands,
        v: &mut Verifying,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) -> bool {
        let (pass, bounds) = (self.pass, &self.job.bounds);
        let Landed { chunk, done, service } = match read {
            Ok(l) => l,
            Err(chunk) => {
                out.hang(pass, Phase::Verify, chunk.offset(), bounds);
                return false;
            }
        };
        let (at, len) = (chunk.offset(), chunk.len());
        if v.check != Check::Reverify && done.result.is_ok() {
            out.timed(pass, Phase::Verify, at, service);
        }
        let mut buf = done.buf;
        match done.result.map(|n| n == len) {
            Ok(true) => self.found(v.check, out, buf.slice_mut(len), at),
            Err(e) if is_hung(&e) => {
                out.hang(pass, Phase::Verify, at, bounds);
                return false;
            }
            Err(e) if is_gone(&e) => {
                out.device_gone = true;
                out.add(pass, at, len as u64, Class::ReadError, e.to_string());
                return false;
            }
            Ok(false) | Err(_) => {
                if !self.reread(chunk, buf.slice_mut(len), lands.probe, v.check, out) {
                    return false;
                }
            }
        }
        lands.free.give(buf);
        self.counted(chunk, v, out, save);
        true
    }

    /// Reads a chunk whose read failed (or came back short) again block by
    /// block into `dst` and classifies each block that reads; false when
    /// the run must end (a stop, a hang or a vanished device mid-chunk).
    fn reread(
        &self,
        chunk: Chunk,
        dst: &mut [u8],
        probe: &mut Probe,
        check: Check,
        out: &mut DiskBurn,
    ) -> bool {
        let (pass, bounds) = (self.pass, &self.job.bounds);
        let blocks = Chunks::within(chunk, BLOCK as u32, BLOCK as u64);
        for (block, dst) in blocks.zip(dst.chunks_exact_mut(BLOCK)) {
            let o = block.offset();
            if self.job.over() {
                return false;
            }
            match probe.read(block, Until::Stop) {
                Ok(Ok(data)) => {
                    dst.copy_from_slice(data);
                    self.found(check, out, dst, o);
                }
                Ok(Err(e)) if !is_hung(&e) => {
                    out.device_gone |= is_gone(&e);
                    out.add(pass, o, BLOCK as u64, Class::ReadError, e.to_string());
                    if out.device_gone {
                        return false;
                    }
                }
                Ok(Err(_)) | Err(Halt::Hung) => {
                    out.hang(pass, Phase::Verify, o, bounds);
                    return false;
                }
                Err(_) => return false,
            }
        }
        true
    }

    /// Classifies the blocks of `b` read at `o` (a soak only reads them).
    fn found(&self, check: Check, out: &mut DiskBurn, b: &[u8], o: u64) {
        if check == Check::Read {
            return;
        }
        let (stamp, pass, pattern) = (self.stamp, self.pass, self.job.pattern);
        let from = o;
        for (o, found) in pattern.check_all(b, o, stamp) {
            let block = &b[(o - from) as usize..][..BLOCK];
            if self.newer.is_some_and(|n| pattern.check_all(block, o, n).is_empty()) {
                continue;
            }
            let (class, mut detail) = describe(found, stamp, o);
            if check == Check::Reverify {
                detail = format!("flushed before the interruption, not there after it: {detail}");
            }
            out.add(pass, o, BLOCK as u64, class, detail);
        }
    }

    /// Counts a chunk read back and classified; saves a checkpoint when one
    /// is due.
    fn counted(
        &self,
        chunk: Chunk,
        v: &mut Verifying,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) {
        let (pass, len) = (self.pass, chunk.len() as u64);
        v.pos = chunk.offset() + len;
        match v.check {
            Check::Verify | Check::Read => {
                v.stretch.add(out, pass, Phase::Verify, len, v.pos, v.pos == v.until);
                out.verified_bytes += len;
            }
            Check::Reverify => out.reverified_bytes += len,
        }
        self.job.live.done.store(v.pos - self.job.t.start, Ordering::Relaxed);
        self.job.live.note(out);
        if v.check == Check::Verify && v.saved.elapsed() >= self.job.every {
            let mut now = out.clone();
            let took = v.began.elapsed().as_secs_f64();
            now.verify_s += took;
            DiskBurn::time(&mut now.verify_pass_s, pass, took);
            save(&now, self.verified_at(v));
            v.last = v.pos;
            v.saved = Instant::now();
        }
    }

    /// Where a read-back stands, as a checkpoint names it.
    fn verified_at(&self, v: &Verifying) -> At {
        At { pass: self.pass, phase: Phase::Verify, done_until: v.pos, interval_from: v.last }
    }

    /// The read-back's end: its time counted, and where it was cut short
    /// saved for a resume. Whether the run goes on.
    fn end_verify(
        &self,
        go_on: bool,
        v: &Verifying,
        out: &mut DiskBurn,
        save: &mut dyn FnMut(&DiskBurn, At),
    ) -> bool {
        let go_on = go_on && !self.job.over() && out.hung.is_none();
        let took = v.began.elapsed().as_secs_f64();
        if v.check != Check::Reverify {
            out.verify_s += took;
            DiskBurn::time(&mut out.verify_pass_s, self.pass, took);
        }
        if !go_on && v.check == Check::Verify && !out.device_gone && v.pos > v.last {
            save(out, self.verified_at(v));
        }
        go_on
    }
}

/// What a landed request's handling needs beside the sweep: the probe that
/// pinpoints a failure, and where its buffer goes back to.
struct Lands<'a> {
    probe: &'a mut Probe,
    free: &'a Free,
}

/// A phase's free buffers, 1 + depth of them, taken and given back in the
/// disk's own thread. At most `depth` are in flight and one is being
/// filled or checked (a write's buffer is filled before it waits for room;
/// a read is refilled for while the one that landed waits to be checked),
/// so one is free whenever another is taken; a new one if not (never a
/// chunk left out), let go when given back.
struct Free {
    bufs: std::cell::RefCell<Vec<AlignedBuf>>,
    size: usize,
}

impl Free {
    fn of(sweep: &mut Sweep, size: usize) -> Self {
        let bufs = sweep.buffers(1 + sweep.depth(), size);
        Self { bufs: std::cell::RefCell::new(bufs), size }
    }

    fn take(&self) -> AlignedBuf {
        self.bufs.borrow_mut().pop().unwrap_or_else(|| {
            #[cfg(test)]
            tests::BEYOND.with(|n| n.set(n.get() + 1));
            AlignedBuf::new(self.size)
        })
    }

    /// Keeps `b` for the next chunk, without growing (no allocation
    /// between the requests).
    fn give(&self, b: AlignedBuf) {
        let mut bufs = self.bufs.borrow_mut();
        if bufs.len() < bufs.capacity() {
            bufs.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::ops::Range;
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Arc, Mutex};

    use crate::io::{Medium, ThreadIo};

    const MIB: u64 = 1 << 20;

    thread_local! {
        /// Buffers a phase of this thread made beyond its 1 + depth.
        pub(super) static BEYOND: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A disk in memory: what is written is kept, except where a test
    /// makes it fail.
    #[derive(Default)]
    struct Fake {
        data: Mutex<Vec<u8>>,
        /// Writes touching these bytes fail (EIO) and keep nothing.
        fail_write: Option<Range<u64>>,
        /// The 4 KiB block at this offset keeps only the first this many
        /// 512-byte sectors of each write (a write cut short).
        torn: Option<(u64, usize)>,
        /// From this request on, the device is gone (ENXIO).
        gone_from: Option<usize>,
        requests: AtomicUsize,
    }

    impl Fake {
        fn sized(size: u64) -> Self {
            Self { data: Mutex::new(vec![0; size as usize]), ..Self::default() }
        }

        fn request(&self) -> std::io::Result<()> {
            let n = self.requests.fetch_add(1, Ordering::Relaxed);
            match self.gone_from {
                Some(g) if n >= g => Err(std::io::Error::from_raw_os_error(nix::libc::ENXIO)),
                _ => Ok(()),
            }
        }
    }

    impl Medium for Arc<Fake> {
        fn read_at(&self, dst: &mut [u8], offset: u64) -> std::io::Result<usize> {
            self.request()?;
            let data = self.data.lock().unwrap();
            let at = offset as usize;
            let n = dst.len().min(data.len().saturating_sub(at));
            dst[..n].copy_from_slice(&data[at..at + n]);
            Ok(n)
        }

        fn write_all_at(&self, src: &[u8], offset: u64) -> std::io::Result<()> {
            self.request()?;
            let end = offset + src.len() as u64;
            if self.fail_write.as_ref().is_some_and(|f| f.start < end && offset < f.end) {
                return Err(std::io::Error::from_raw_os_error(nix::libc::EIO));
            }
            let mut data = self.data.lock().unwrap();
            for (k, block) in src.chunks(BLOCK).enumerate() {
                let at = offset + (k * BLOCK) as u64;
                let keep = match self.torn {
                    Some((t, sectors)) if t == at => sectors * 512,
                    _ => block.len(),
                };
                data[at as usize..at as usize + keep].copy_from_slice(&block[..keep]);
            }
            Ok(())
        }

        fn sync_data(&self) -> std::io::Result<()> {
            self.request()
        }
    }

    /// The fake disk behind the psync thread, as a real disk is.
    struct OnFake(Arc<Fake>);

    impl DiskIo for OnFake {
        fn open(&self, bounds: &Bounds) -> std::io::Result<(Sweep, Probe)> {
            let io = ThreadIo::on(self.0.clone(), bounds)?;
            Ok((Sweep::new(Box::new(io)), Probe::on(self.0.clone(), bounds)?))
        }

        fn engine(&self) -> &'static str {
            "psync"
        }
    }

    /// One pass of 64 KiB writes and read-backs over a fake disk of `size`.
    fn burn_fake(fake: Fake, size: u64) -> DiskBurn {
        let stop = StopFlag::default();
        let live = Live::default();
        let on = OnFake(Arc::new(fake));
        let job = BurnJob {
            t: Span { start: 0, end: size, disk: 7 },
            on: &on,
            io: 64 << 10,
            passes: 1,
            pattern: Pattern::Blocks,
            run: 1,
            version: crate::burnin::block::VERSION,
            stop: &stop,
            live: &live,
            every: Duration::from_secs(30),
            deadline: None,
            bounds: Bounds::new(&stop, Duration::from_secs(10)),
        };
        burn(&job, At::first(0), DiskBurn::default(), &mut |_, _| {})
    }

    #[test]
    fn a_fake_disk_that_keeps_what_it_is_given_is_burned_whole() {
        let b = burn_fake(Fake::sized(4 * MIB), 4 * MIB);
        assert_eq!((b.written_bytes, b.verified_bytes), (4 * MIB, 4 * MIB));
        assert_eq!((b.passes_done, b.total_bad()), (1, 0), "{:?}", b.findings);
        assert!(!b.device_gone && !b.interrupted);
    }

    #[test]
    fn a_pass_takes_no_buffer_beyond_those_in_flight_and_one() {
        BEYOND.with(|n| n.set(0));
        // A failing write and a torn block too: the rewrite and the reread
        // work in the buffer that landed, not in another.
        let fake = Fake {
            fail_write: Some(MIB..MIB + 4096),
            torn: Some((2 * MIB, 3)),
            ..Fake::sized(4 * MIB)
        };
        let b = burn_fake(fake, 4 * MIB);
        assert_eq!(b.passes_done, 1, "{:?}", b.findings);
        assert_eq!(BEYOND.with(|n| n.get()), 0, "buffers made beyond 1 + depth");
    }

    #[test]
    fn a_failing_write_is_pinpointed_to_its_block() {
        let bad = MIB + 8192;
        let fake = Fake { fail_write: Some(bad..bad + 4096), ..Fake::sized(4 * MIB) };
        let b = burn_fake(fake, 4 * MIB);
        let f: Vec<_> = b.findings.iter().map(|f| (f.class, f.offset, f.len)).collect();
        assert!(f.contains(&(Class::WriteError, bad, 4096)), "{f:?}");
        // Nothing outside that block is bad.
        assert!(
            b.findings.iter().all(|f| f.offset >= bad && f.offset + f.len <= bad + 4096),
            "{f:?}"
        );
        assert_eq!(b.passes_done, 1);
    }

    #[test]
    fn a_torn_block_is_corrupted_and_says_how_far_the_write_landed() {
        let at = 2 * MIB + 4096;
        let fake = Fake { torn: Some((at, 3)), ..Fake::sized(4 * MIB) };
        let b = burn_fake(fake, 4 * MIB);
        assert_eq!(b.findings.len(), 1, "{:?}", b.findings);
        let f = &b.findings[0];
        assert_eq!((f.class, f.offset, f.len), (Class::Corrupted, at, 4096));
        assert!(f.detail.contains("first 3 of 8 sectors"), "{}", f.detail);
    }

    #[test]
    fn a_device_that_goes_away_ends_its_run_there_and_says_so() {
        let fake = Fake { gone_from: Some(20), ..Fake::sized(4 * MIB) };
        let b = burn_fake(fake, 4 * MIB);
        assert!(b.device_gone, "{b:?}");
        assert_eq!(b.passes_done, 0);
        assert!(b.written_bytes < 4 * MIB, "{} {:?}", b.written_bytes, b.findings);
        // The write that met the missing device is named; nothing after it
        // is tried (it was: each block rewritten and failed, to the end).
        assert!(
            b.findings.iter().all(|f| f.class == Class::WriteError && f.len <= 64 << 10),
            "{:?}",
            b.findings
        );
    }
}

//! The hot loop: read a chunk, time it, record it. No formatting, no locks,
//! no allocation, no channel traffic per read: progress is one relaxed atomic
//! store, and the histogram is recorded after the clock has stopped, so the
//! accounting never sits inside a measured interval.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::{DiskRun, ReadError, SlowRead, Stopped, Surface, Window, keep_slowest};
use crate::device::buffer::{Chunk, Chunks};
use crate::io::{Completion, Engine, is_hung};
use crate::stop::StopFlag;
use crate::units::fraction_of;

/// At most this many bad ranges are kept with their offsets (all are
/// counted).
pub const MAX_KEPT_ERRORS: usize = 64;
/// At most this many slow reads are kept with their offsets, the slowest
/// (all are counted).
pub const MAX_KEPT_SLOW: usize = 256;
/// A failed read is re-read in pieces of this size first, then block by
/// block inside the pieces that fail: far fewer reads than going block by
/// block through a whole 4 MiB chunk, the same exact answer.
const PROBE: u64 = 64 << 10;
/// This many bytes failing block after block (and at least 8 blocks) make a
/// region that fails wholesale: the rest of the read is not probed, and the
/// reads after it skip ahead (as ddrescue does) instead of spending a
/// drive's seconds-long retries on every sector of a dead area. One bad
/// 4 KiB physical sector is 8 blocks of 512 bytes: well below it.
const WHOLESALE: u64 = 32 << 10;
/// Why a span was not read: probing was cut short...
const STOPPED: &str = "stopped (sample time over or signal)";
/// ...or the area around it fails wholesale.
const WHOLESALE_SKIPPED: &str = "the area fails wholesale, skipped";
/// The largest skip over a region that fails wholesale.
const MAX_SKIP: u64 = 1 << 30;

/// The faults found on one disk in one pass.
#[derive(Debug, Default)]
struct Faults {
    failed_reads: u64,
    /// Exact bad ranges (unread spans are listed but not counted here).
    bad_ranges: u64,
    /// Ranges listed or not, exact and unread.
    ranges: u64,
    bad_bytes: u64,
    kept: Vec<ReadError>,
    /// Bytes neither read nor proven bad: skipped in a region that fails
    /// wholesale, or left unprobed when time ran out or a stop came.
    unread_bytes: u64,
    /// End, errno and exactness of the last bad range, to join a
    /// continuation.
    last_end: Option<(u64, Option<i32>, bool)>,
    gone: bool,
    /// A read got no answer within the I/O timeout: the disk hung.
    hung: bool,
    /// Spans of this pass already failed or skipped (start, end): a sample
    /// that sweeps the disk again does not read, count or list them again.
    /// One or two per failed read, and failed reads stop at --max-errors.
    known: Vec<(u64, u64)>,
    /// In a region that fails wholesale: how far the next failed read
    /// skips (doubling, as ddrescue's skip does).
    skip: Option<u64>,
    /// The span the last skip passed over unread: (end of the last failed
    /// read, where reading resumed). When the read there succeeds, the
    /// span is read back from its end until a read fails, as ddrescue
    /// trims, so the unread span ends where the failing area does.
    gap: Option<(u64, u64)>,
}

impl Faults {
    /// Counts a bad range, joining it to the previous one when it continues
    /// it (a bad area across a chunk boundary is one range).
    fn record(&mut self, error: ReadError, disk: usize, on_error: &dyn Fn(usize, ReadError)) {
        if error.exact {
            self.bad_bytes += error.len;
        } else {
            self.unread_bytes += error.len;
        }
        let joins = self.last_end == Some((error.offset, error.errno, error.exact));
        self.last_end = Some((error.offset + error.len, error.errno, error.exact));
        if !joins {
            self.ranges += 1;
            self.bad_ranges += u64::from(error.exact);
            if self.kept.len() < MAX_KEPT_ERRORS {
                self.kept.push(error.clone());
            }
        } else if self.ranges as usize <= MAX_KEPT_ERRORS
            && let Some(last) = self.kept.last_mut()
        {
            last.len += error.len;
        }
        on_error(disk, error);
    }

    /// The skipped span ending at `hi` turned out readable from `end` on:
    /// shrink the listed range, the unread count and the known spans.
    fn trimmed(&mut self, end: u64, hi: u64) {
        if end >= hi {
            return;
        }
        self.unread_bytes -= hi - end;
        if let Some(e) = self
            .kept
            .iter_mut()
            .find(|e| !e.exact && e.offset + e.len == hi)
        {
            e.len -= hi - end;
        }
        for k in &mut self.known {
            if k.0 < hi && k.1 > end {
                k.1 = end.max(k.0);
            }
        }
        self.last_end = None;
    }

    /// Where the known-bad span holding `offset` ends, if one does.
    fn known_end(&self, offset: u64) -> Option<u64> {
        self.known
            .iter()
            .find(|(a, b)| (*a..*b).contains(&offset))
            .map(|k| k.1)
    }
}

/// What re-reading a failed chunk found.
struct Probed {
    /// Bytes read after all.
    good: u64,
    /// Exact bad ranges, then any span left unprobed.
    bad: Vec<ReadError>,
    /// The chunk fails wholesale: skip ahead after it.
    wholesale: bool,
    /// A re-read got no answer: the disk hung.
    hung: bool,
}

/// The device itself went away (unplugged, controller reset, removed):
/// unlike a media error, nothing further can be read from it.
fn is_gone(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(nix::libc::ENODEV) | Some(nix::libc::ENXIO)
    )
}

/// One disk's share of a pass.
pub struct ReadJob {
    /// Index of the disk in the plan.
    pub disk: usize,
    /// How to read it.
    pub engine: Box<dyn Engine>,
    /// Device size in bytes.
    pub size: u64,
    /// Logical block size in bytes.
    pub logical_block: u32,
    /// Read size in bytes (a multiple of the logical block size).
    pub block: u64,
    /// How long to read.
    pub window: Window,
    /// The sample length: in a full pass, the bytes and time at this point
    /// are kept too, to compare with a sampled pass over the same zone.
    pub sample: std::time::Duration,
    /// The disk stops its pass after this many failed reads.
    pub max_errors: u64,
    /// Reads that take at least this long are logged with their offset.
    pub slow_read: Duration,
    /// Number of equal position buckets of the surface profile.
    pub buckets: usize,
    /// Where the read starts (a seek-stress reader's stagger), in bytes.
    pub origin: u64,
    /// Sample passes: the window is cut into this many equal slices of time,
    /// and slice `k` reads on from `k / spots` of the disk (1: from the
    /// start only).
    pub spots: u32,
}

/// The reads in flight: the engine's own queue, or for an engine without
/// one (pread) the one chunk to read, read when its result is asked for.
/// Reads finish in any order but are handed over in the order they were
/// submitted, so that faults are handled as reading one at a time would
/// (a good read overtaking a failing one must not end a skip over a bad
/// area, nor be counted again by a read-back).
#[derive(Default)]
struct Flight {
    pending: Option<Chunk>,
    /// Offsets submitted to the queue, oldest first, and reads that
    /// finished before an older one.
    order: std::collections::VecDeque<u64>,
    early: Vec<Completion>,
}

impl Flight {
    /// Whether another read may be submitted.
    fn room(&mut self, engine: &mut dyn Engine) -> bool {
        match engine.queued() {
            Some(q) => self.order.len() < q.depth(),
            None => self.pending.is_none(),
        }
    }

    fn submit(&mut self, engine: &mut dyn Engine, chunk: Chunk) {
        match engine.queued() {
            Some(q) => {
                self.order.push_back(chunk.offset());
                let now = Instant::now();
                if let Err(e) = q.submit(chunk) {
                    // Refused: a failed read like any other.
                    self.early.push(Completion {
                        chunk,
                        result: Err(e),
                        submitted: now,
                        done: now,
                    });
                }
            }
            None => self.pending = Some(chunk),
        }
    }

    /// Gives up the reads in flight (a stop).
    fn abandon(&mut self, engine: &mut dyn Engine) {
        if let Some(q) = engine.queued() {
            q.abandon(Duration::from_millis(200));
        }
        self.order.clear();
        self.early.clear();
        self.pending = None;
    }

    /// The oldest read submitted, once it has finished; None when nothing
    /// is in flight.
    fn complete(&mut self, engine: &mut dyn Engine) -> Option<Completion> {
        match engine.queued() {
            Some(q) => {
                let first = *self.order.front()?;
                loop {
                    if let Some(i) = self.early.iter().position(|c| c.chunk.offset() == first) {
                        self.order.pop_front();
                        return Some(self.early.swap_remove(i));
                    }
                    match q.complete() {
                        Some(c) => self.early.push(c),
                        // A stop woke the wait: the caller abandons them.
                        None if q.in_flight() > 0 => return None,
                        None => {
                            // Nothing in flight yet not returned: cannot
                            // happen; give up on what is missing.
                            self.order.clear();
                            return self.early.pop();
                        }
                    }
                }
            }
            None => self.pending.take().map(|chunk| {
                let submitted = Instant::now();
                let result = engine.read(chunk);
                Completion {
                    chunk,
                    result,
                    submitted,
                    done: Instant::now(),
                }
            }),
        }
    }
}

/// Latency histogram in nanoseconds, 1 ns to 1 h at 3 significant digits.
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds")
}

/// Marks the comparison window in a run: it opens after a warm-up of 10 %
/// of the sample, or of the run when that is shorter (at most 5 s), so
/// start-up effects (a head seeking from idle, a drive's cache, a controller
/// or throttle ramping) stay out of the comparison, as fio's `ramp_time` and
/// solnet's 60 s wait keep them out; it closes at the sample length.
///
/// Because a short run's length is only known at its end, the first
/// [`WARMUP_MAX`] of the run are kept as a trail of (bytes, time) marks, one
/// per [`MARK_EVERY`] at most: bounded by time, never by disk size.
struct WindowMarks {
    sample: Duration,
    trail: Vec<(u64, Duration)>,
    close: Option<(u64, Duration)>,
}

const WARMUP_MAX: Duration = Duration::from_secs(5);
const MARK_EVERY: Duration = Duration::from_millis(10);

impl WindowMarks {
    fn new(sample: Duration) -> Self {
        Self {
            sample,
            trail: Vec::new(),
            close: None,
        }
    }

    /// Notes `bytes` read after `t` of the run.
    fn note(&mut self, bytes: u64, t: Duration) {
        let due = self
            .trail
            .last()
            .is_none_or(|(_, last)| t >= *last + MARK_EVERY);
        if t <= WARMUP_MAX + MARK_EVERY && due {
            self.trail.push((bytes, t));
        }
        if self.close.is_none() && t >= self.sample {
            self.close = Some((bytes, t));
        }
    }

    /// (bytes, elapsed) between the end of the warm-up and the close mark
    /// (or the end of the run); the whole run when nothing was marked
    /// inside it.
    fn window(&self, bytes: u64, elapsed: Duration) -> (u64, Duration) {
        let (cb, ct) = self.close.unwrap_or((bytes, elapsed));
        let warmup = ct.min(self.sample).mul_f64(0.1).min(WARMUP_MAX);
        match self.trail.iter().find(|(_, t)| *t >= warmup) {
            Some(&(ob, ot)) if ot < ct => (cb - ob, ct - ot),
            _ => (cb, ct),
        }
    }
}

impl ReadJob {
    /// Where the reads of slice `spot` of a spread sample begin.
    fn spot_start(&self, spot: u32) -> u64 {
        fraction_of(self.size, spot.into(), self.spots.into())
    }

    /// The next chunk, `elapsed` into the run. In a spread sample, a new
    /// time slice jumps to its spot. In a sample pass a disk that has ended
    /// starts again from the beginning, so every disk is measured for the
    /// whole window and a small fast disk is not judged on milliseconds of
    /// noise.
    fn next_chunk(
        &self,
        chunks: &mut Chunks,
        reached_end: &mut bool,
        spot: &mut u32,
        elapsed: Duration,
    ) -> Option<Chunk> {
        if let Window::Sample(d) = self.window
            && self.spots > 1
        {
            let slice = elapsed.as_secs_f64() / d.as_secs_f64().max(1e-9) * f64::from(self.spots);
            let now = (slice as u32).min(self.spots - 1);
            if now != *spot {
                *spot = now;
                *chunks = Chunks::from_offset(
                    self.size,
                    self.logical_block,
                    self.block,
                    self.spot_start(now),
                );
            }
        }
        if let Some(c) = chunks.next() {
            return Some(c);
        }
        *reached_end = true;
        if self.window == Window::Full {
            return None;
        }
        *chunks = Chunks::new(self.size, self.logical_block, self.block);
        chunks.next()
    }

    /// Re-reads a chunk whose read failed with `first`, to find exactly
    /// which logical blocks cannot be read (as badblocks does): in 64 KiB
    /// pieces, then block by block inside a failing piece. Before every
    /// re-read it asks `give_up` (a stop, the end of the sample window):
    /// what is left is then reported unread. When [`WHOLESALE`] bytes fail
    /// in a row, the rest of the chunk is reported unread and the caller
    /// skips ahead. When every re-read succeeds the failure was transient
    /// and is reported as such.
    fn pinpoint(
        &mut self,
        chunk: Chunk,
        first: &std::io::Error,
        give_up: &dyn Fn() -> bool,
    ) -> Probed {
        let lbs = u64::from(self.logical_block);
        let probe = PROBE.max(lbs) / lbs * lbs;
        let wholesale = WHOLESALE.max(8 * lbs);
        let chunk_end = chunk.offset() + chunk.len() as u64;
        let mut p = Probed {
            good: 0,
            bad: Vec::new(),
            wholesale: false,
            hung: false,
        };
        let mut failing_run = 0u64;
        let unread = |from: u64, why: &str| ReadError::unread(from, chunk_end - from, first, why);
        for part in Chunks::within(chunk, self.logical_block, probe) {
            if give_up() {
                p.bad.push(unread(part.offset(), STOPPED));
                return p;
            }
            if let Ok(n) = self.engine.read(part) {
                p.good += n as u64;
                failing_run = 0;
                continue;
            }
            for block in Chunks::within(part, self.logical_block, lbs) {
                if give_up() {
                    p.bad.push(unread(block.offset(), STOPPED));
                    return p;
                }
                if failing_run >= wholesale {
                    p.bad.push(unread(block.offset(), WHOLESALE_SKIPPED));
                    p.wholesale = true;
                    return p;
                }
                match self.engine.read(block) {
                    Ok(n) => {
                        p.good += n as u64;
                        failing_run = 0;
                    }
                    // A stop abandoned the read (the engine's, io_uring).
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                        p.bad.push(unread(block.offset(), STOPPED));
                        return p;
                    }
                    // No answer: nothing more is read from this disk.
                    Err(e) if is_hung(&e) => {
                        p.bad.push(ReadError::hung(
                            block.offset(),
                            chunk_end - block.offset(),
                            &e,
                        ));
                        p.hung = true;
                        return p;
                    }
                    Err(e) => {
                        failing_run += lbs;
                        match p.bad.last_mut() {
                            Some(last)
                                if last.offset + last.len == block.offset()
                                    && last.errno == e.raw_os_error() =>
                            {
                                last.len += block.len() as u64
                            }
                            _ => p.bad.push(ReadError::at(block, &e, "")),
                        }
                    }
                }
            }
        }
        if p.bad.is_empty() {
            p.bad.push(ReadError::at(
                chunk,
                first,
                "; the re-read succeeded (a transient error)",
            ));
        }
        p
    }

    /// Reads the skipped span `(lo, hi)` back from `hi` in whole reads
    /// until one fails or `give_up`, counting what it reads, and shrinks the
    /// unread span to where reading failed.
    fn trim_back(
        &mut self,
        (lo, hi): (u64, u64),
        faults: &mut Faults,
        tally: &mut Tally,
        give_up: &dyn Fn() -> bool,
    ) {
        let mut end = hi;
        while end >= lo + self.block && !give_up() {
            let Some(chunk) = self.chunks_from(end - self.block).next() else {
                break;
            };
            match self.engine.read(chunk) {
                Ok(n) => {
                    tally.bytes += n as u64;
                    end = chunk.offset();
                }
                Err(_) => break,
            }
        }
        faults.trimmed(end, hi);
    }

    /// Reads the disk from `origin` (0 but for seek-pass readers) for the
    /// window, reporting failed reads through `on_error` as they happen.
    /// The engine's queue is kept full (one read at a time for pread);
    /// reads complete in any order and are counted as they complete.
    pub fn run(
        mut self,
        stop: &StopFlag,
        progress: &AtomicU64,
        on_error: &dyn Fn(usize, ReadError),
    ) -> DiskRun {
        let mut tally = Tally::new(&self);
        let mut faults = Faults::default();
        let deadline = match self.window {
            Window::Sample(d) => Some(d),
            Window::Full => None,
        };
        let mut chunks =
            Chunks::from_offset(self.size, self.logical_block, self.block, self.origin);
        let (mut reached_end, mut spot) = (false, 0);
        let start = Instant::now();
        let mut end = start;
        // Bytes passed over without a read since the last read: a disk that
        // is known bad all over has nothing left to read.
        let mut passed_over = 0u64;
        let mut flight = Flight::default();
        // Where the chunk after the last one submitted begins.
        let mut next_at = self.origin;
        let give_up = || stop.is_set() || deadline.is_some_and(|d| start.elapsed() >= d);
        loop {
            while flight.room(&mut *self.engine)
                && !stop.is_set()
                && deadline.is_none_or(|d| start.elapsed() < d)
                && faults.failed_reads < self.max_errors
                && !faults.gone
                && !faults.hung
                && passed_over < self.size
            {
                let Some(chunk) =
                    self.next_chunk(&mut chunks, &mut reached_end, &mut spot, start.elapsed())
                else {
                    break;
                };
                if let Some(known_end) = faults.known_end(chunk.offset()) {
                    passed_over += known_end - chunk.offset();
                    chunks = self.chunks_from(known_end);
                    continue;
                }
                passed_over = 0;
                next_at = chunk.offset() + chunk.len() as u64;
                flight.submit(&mut *self.engine, chunk);
            }
            if stop.is_set() {
                break;
            }
            // None: nothing in flight, or a stop woke the wait.
            let Some(read) = flight.complete(&mut *self.engine) else {
                break;
            };
            // The time this read had the disk to itself: from its start or
            // the previous read's end, whichever was later. With several
            // reads in flight a read's latency includes its wait behind
            // the others: summed per surface bucket it would halve the
            // speed at a depth of 2.
            let service = read.done - read.submitted.max(end);
            end = read.done;
            let chunk = read.chunk;
            // Submitted before a skip found its span bad (it is already
            // counted unread), or before the disk stopped its pass (at
            // --max-errors, or gone): not counted.
            if faults.known_end(chunk.offset()).is_some()
                || faults.failed_reads >= self.max_errors
                || faults.gone
                || faults.hung
            {
                continue;
            }
            match read.result {
                Ok(n) => {
                    let took = read.done - read.submitted;
                    tally.read(chunk, n as u64, (took, service), end - start);
                    faults.skip = None;
                    if let Some(gap) = faults.gap.take()
                        && gap.1 == chunk.offset()
                    {
                        self.trim_back(gap, &mut faults, &mut tally, &give_up);
                        end = Instant::now();
                    }
                }
                Err(e) if is_gone(&e) => {
                    faults.failed_reads += 1;
                    faults.gone = true;
                    faults.record(ReadError::at(chunk, &e, ""), self.disk, on_error);
                }
                Err(e) if is_hung(&e) => {
                    faults.failed_reads += 1;
                    faults.hung = true;
                    let unread = ReadError::hung(chunk.offset(), chunk.len() as u64, &e);
                    faults.record(unread, self.disk, on_error);
                }
                Err(e) => {
                    faults.failed_reads += 1;
                    let chunk_end = chunk.offset() + chunk.len() as u64;
                    let resume = match faults.skip {
                        // Inside a region that fails wholesale: no probing,
                        // the read and a growing span after it are unread.
                        Some(skip) => {
                            let to = (chunk_end + skip).min(self.size);
                            let gap = ReadError::unread(
                                chunk.offset(),
                                to - chunk.offset(),
                                &e,
                                WHOLESALE_SKIPPED,
                            );
                            faults.record(gap, self.disk, on_error);
                            faults.skip = Some((skip * 2).min(MAX_SKIP.max(self.block)));
                            faults.gap = Some((chunk_end, to));
                            to
                        }
                        None => {
                            let probed = self.pinpoint(chunk, &e, &give_up);
                            tally.bytes += probed.good;
                            for b in probed.bad {
                                faults.record(b, self.disk, on_error);
                            }
                            if probed.wholesale {
                                faults.skip = Some(self.block);
                            }
                            faults.hung |= probed.hung;
                            chunk_end
                        }
                    };
                    faults.known.push((chunk.offset(), resume));
                    // Reads already in flight past the skip go on; the
                    // next submitted starts after them.
                    if resume > next_at {
                        chunks = self.chunks_from(resume);
                        next_at = resume;
                    }
                    end = Instant::now();
                }
            }
            progress.store(tally.bytes, Ordering::Relaxed);
        }
        if stop.is_set() || faults.hung {
            // Stopped, or hung: the reads in flight are not waited for (on
            // a slow disk a deep queue takes seconds to drain; on a hung
            // one they never end).
            flight.abandon(&mut *self.engine);
        }
        // A skip that ran into the end of the disk: read it back too.
        if let Some(gap) = faults.gap.take()
            && gap.1 == self.size
        {
            self.trim_back(gap, &mut faults, &mut tally, &give_up);
            end = Instant::now();
        }
        let done = match self.window {
            Window::Full => reached_end,
            Window::Sample(d) => end - start >= d,
        };
        let stopped = if faults.gone {
            Some(Stopped::DeviceGone)
        } else if faults.hung {
            Some(Stopped::Hung)
        } else if faults.failed_reads >= self.max_errors && !done {
            Some(Stopped::MaxErrors)
        } else if stop.is_set() && !done {
            Some(Stopped::Interrupted)
        } else {
            None
        };
        tally.finish(end - start, faults, reached_end, stopped)
    }

    /// The chunks from `offset` on (a skip past a bad span).
    fn chunks_from(&self, offset: u64) -> Chunks {
        Chunks::from_offset(self.size, self.logical_block, self.block, offset)
    }
}

/// What a run measured from its successful reads, kept up to date read by
/// read (after the clock has stopped) and turned into a [`DiskRun`] at the
/// end.
struct Tally {
    hist: Histogram<u64>,
    surface: Surface,
    marks: WindowMarks,
    slow_read: Duration,
    slow_reads: Vec<SlowRead>,
    slow_count: u64,
    bytes: u64,
    reads: u64,
}

impl Tally {
    fn new(job: &ReadJob) -> Self {
        Self {
            hist: new_histogram(),
            surface: Surface::new(job.buckets, job.size),
            marks: WindowMarks::new(job.sample),
            slow_read: job.slow_read,
            slow_reads: Vec::new(),
            slow_count: 0,
            bytes: 0,
            reads: 0,
        }
    }

    /// Counts a read of `n` bytes of `chunk` with latency `took` that had
    /// the disk for `service` of it, ending `at` into the run.
    fn read(&mut self, chunk: Chunk, n: u64, (took, service): (Duration, Duration), at: Duration) {
        self.hist.saturating_record(took.as_nanos() as u64);
        self.surface.add(chunk.offset(), n, service);
        if took >= self.slow_read {
            self.slow_count += 1;
            self.slow_reads
                .push(SlowRead::at(chunk, took, self.reads + 1));
            // Bounded at twice the kept number, trimmed to the slowest.
            if self.slow_reads.len() == 2 * MAX_KEPT_SLOW {
                keep_slowest(&mut self.slow_reads, MAX_KEPT_SLOW);
            }
        }
        self.bytes += n;
        self.reads += 1;
        self.marks.note(self.bytes, at);
    }

    fn finish(
        mut self,
        elapsed: Duration,
        faults: Faults,
        reached_end: bool,
        stopped: Option<Stopped>,
    ) -> DiskRun {
        keep_slowest(&mut self.slow_reads, MAX_KEPT_SLOW);
        DiskRun {
            bytes: self.bytes,
            elapsed,
            window: self.marks.window(self.bytes, elapsed),
            reads: self.reads,
            latency_ns: self.hist,
            errors: faults.kept,
            failed_reads: faults.failed_reads,
            slow_reads: self.slow_reads,
            slow_read_count: self.slow_count,
            surface: self.surface,
            bad_ranges: faults.bad_ranges,
            bad_bytes: faults.bad_bytes,
            unread_bytes: faults.unread_bytes,
            gone: faults.gone,
            reached_end,
            stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_skips_a_warm_up_scaled_to_its_length() {
        let ms = Duration::from_millis;
        let mut m = WindowMarks::new(Duration::from_secs(60));
        for k in 1..=100u64 {
            m.note(k * 10, ms(k * 13));
        }
        // 1.3 s run: warm-up 130 ms; the mark there holds 100 bytes.
        assert_eq!(m.window(1000, ms(1300)), (900, ms(1170)));
        assert!(m.trail.len() <= 101);
    }

    #[test]
    fn the_window_skips_the_warm_up_and_ends_at_the_sample() {
        let ms = Duration::from_millis;
        let mut m = WindowMarks::new(ms(1000));
        for (b, t) in [(10, 50), (20, 100), (30, 150), (120, 1000), (130, 1050)] {
            m.note(b, ms(t));
        }
        assert_eq!(m.window(130, ms(1050)), (100, ms(900)));
    }

    #[test]
    fn bad_ranges_that_continue_each_other_are_one() {
        let at = |offset, len| ReadError {
            offset,
            len,
            errno: Some(5),
            message: String::new(),
            exact: true,
        };
        let mut f = Faults::default();
        for e in [at(4096, 512), at(4608, 1024), at(8192, 512)] {
            f.record(e, 0, &|_, _| {});
        }
        assert_eq!((f.bad_ranges, f.bad_bytes), (2, 2048));
        assert_eq!(
            f.kept.iter().map(|e| (e.offset, e.len)).collect::<Vec<_>>(),
            [(4096, 1536), (8192, 512)]
        );
    }

    /// A device that reads `ok` chunks, then is gone (ENODEV), as an
    /// unplugged disk. (No loop device can be made to vanish under a
    /// reader here, so this is the worker's half of that case.)
    struct Vanishing {
        ok: u32,
    }

    impl Engine for Vanishing {
        fn read(&mut self, chunk: Chunk) -> std::io::Result<usize> {
            if self.ok == 0 {
                return Err(std::io::Error::from_raw_os_error(nix::libc::ENODEV));
            }
            self.ok -= 1;
            Ok(chunk.len())
        }
    }

    /// A full-pass job over a 64 MiB disk read in 1 MiB chunks.
    fn job(engine: Box<dyn Engine>) -> ReadJob {
        ReadJob {
            disk: 0,
            engine,
            size: 64 << 20,
            logical_block: 512,
            block: 1 << 20,
            window: Window::Full,
            sample: Duration::from_secs(1),
            max_errors: 100,
            slow_read: Duration::from_millis(500),
            buckets: 4,
            origin: 0,
            spots: 1,
        }
    }

    #[test]
    fn the_slowest_reads_are_kept_not_the_first() {
        // A dying disk: 1000 reads of 600 ms, and one stall of 3 s late in
        // the run. The stall must be among the kept reads (the verdict's
        // stall rule reads them), the count must be all of them.
        let job = job(Box::new(Vanishing { ok: 0 }));
        let mut tally = Tally::new(&job);
        let mut chunks = Chunks::new(1 << 40, 512, 1 << 20);
        let ms = Duration::from_millis;
        for i in 0..1001u64 {
            let took = if i == 900 { ms(3000) } else { ms(600) };
            tally.read(chunks.next().unwrap(), 1 << 20, (took, took), ms(i));
            assert!(tally.slow_reads.len() < 2 * MAX_KEPT_SLOW, "bounded");
        }
        let run = tally.finish(ms(1001), Faults::default(), false, None);
        assert_eq!(run.slow_read_count, 1001);
        assert_eq!(run.slow_reads.len(), MAX_KEPT_SLOW);
        let stall: Vec<&SlowRead> = run
            .slow_reads
            .iter()
            .filter(|s| s.latency_ms >= 2000.0)
            .collect();
        assert_eq!(stall.len(), 1);
        assert_eq!((stall[0].offset, stall[0].index), (900 << 20, 901));
        assert!(run.slow_reads.windows(2).all(|w| w[0].offset < w[1].offset));
    }

    #[test]
    fn a_device_that_goes_away_stops_its_read_and_is_reported_gone() {
        let job = job(Box::new(Vanishing { ok: 3 }));
        let seen = std::sync::Mutex::new(Vec::new());
        let run = job.run(&StopFlag::default(), &AtomicU64::new(0), &|_, e| {
            seen.lock().unwrap().push(e)
        });
        assert!(run.gone);
        assert_eq!((run.bytes, run.reads, run.failed_reads), (3 << 20, 3, 1));
        assert!(!run.reached_end, "nothing read after it went");
        assert_eq!(run.errors[0].offset, 3 << 20);
        assert_eq!(run.errors[0].errno, Some(nix::libc::ENODEV));
        assert_eq!(
            seen.lock().unwrap().len(),
            1,
            "reported once, not pinpointed"
        );
    }

    #[test]
    fn a_run_shorter_than_the_warm_up_is_its_own_window() {
        let mut m = WindowMarks::new(Duration::from_secs(60));
        m.note(4096, Duration::from_millis(3));
        assert_eq!(
            m.window(4096, Duration::from_millis(3)),
            (4096, Duration::from_millis(3))
        );
    }
}

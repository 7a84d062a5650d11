//! The check's hot loop: keep the disk's sweep full of reads, count each as
//! it lands, pinpoint the failed ones. No formatting, no locks, no
//! allocation per read: progress is one relaxed atomic store, and the
//! histogram is recorded after the clock has stopped, so the accounting
//! never sits inside a measured interval. The I/O itself (order, the stop,
//! a hang, the time each read had the disk) is the sweep's (`io::Sweep`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::results::{MAX_KEPT_ERRORS, MAX_KEPT_SLOW, latency_histogram};
use super::{DiskRun, ReadError, Resume, SlowRead, Stopped, Surface, Window, keep_slowest};
use crate::device::buffer::{AlignedBuf, Chunk, Chunks};
use crate::io::{Direction, Halt, Landed, Probe, Sweep, Until, is_gone, is_hung};
use crate::stop::StopFlag;
use crate::units::fraction_of;

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
/// The one read of `len` bytes at `from` (both whole logical blocks).
fn piece(from: u64, len: u64) -> Chunk {
    Chunks::span(from, from + len, len).next().expect("a span of one read")
}

/// A span left unread inside a failing area this small (or smaller) is read
/// block by block once its edges are found (ddrescue's scraping): every
/// block then proven bad or read.
const SCRAPE: u64 = 256 << 10;

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
        // Every listed unread range inside the span read back ends at
        // `end` (one that lay wholly in it goes).
        for e in
            self.kept.iter_mut().filter(|e| !e.exact && e.offset < hi && e.offset + e.len > end)
        {
            e.len = end.saturating_sub(e.offset);
        }
        let before = self.kept.len();
        self.kept.retain(|e| e.exact || e.len > 0);
        self.ranges -= (before - self.kept.len()) as u64;
        for k in &mut self.known {
            if k.0 < hi && k.1 > end {
                k.1 = end.max(k.0);
            }
        }
        self.last_end = None;
    }

    /// The unread span from `from` to `to` (the start of a listed unread
    /// range) was read block by block after all: no longer unread.
    fn scraped(&mut self, from: u64, to: u64) {
        if to <= from {
            return;
        }
        self.unread_bytes -= to - from;
        if let Some(i) = self.kept.iter().position(|e| !e.exact && e.offset == from) {
            let e = &mut self.kept[i];
            e.len -= (to - from).min(e.len);
            e.offset = to;
            if e.len == 0 {
                self.kept.remove(i);
                self.ranges -= 1;
            }
        }
        self.last_end = None;
    }

    /// Where the known-bad span holding `offset` ends, if one does.
    fn known_end(&self, offset: u64) -> Option<u64> {
        self.known.iter().find(|(a, b)| (*a..*b).contains(&offset)).map(|k| k.1)
    }
}

/// What re-reading a failed chunk found.
#[derive(Default)]
struct Probed {
    /// Where the chunk ends.
    chunk_end: u64,
    /// Bytes read after all.
    good: u64,
    /// Exact bad ranges, then any span left unprobed.
    bad: Vec<ReadError>,
    /// Bytes failing block after block so far.
    failing_run: u64,
    /// The chunk fails wholesale: skip ahead after it.
    wholesale: bool,
    /// A re-read got no answer: the disk hung.
    hung: bool,
}

impl Probed {
    /// The rest of the chunk from `from` is left unread, for `why`.
    fn unread(&mut self, from: u64, first: &std::io::Error, why: &str) {
        let len = self.chunk_end - from;
        self.bad.push(ReadError::unread(from, len, first, why));
    }

    /// `block` cannot be read: joined to the bad range before it when it
    /// continues it with the same error.
    fn failed(&mut self, block: Chunk, e: &std::io::Error, lbs: u64) {
        self.failing_run += lbs;
        match self.bad.last_mut() {
            Some(last)
                if last.offset + last.len == block.offset() && last.errno == e.raw_os_error() =>
            {
                last.len += block.len() as u64
            }
            _ => self.bad.push(ReadError::at(block, e, "")),
        }
    }
}

/// One disk's share of a pass.
pub struct ReadJob {
    /// Index of the disk in the plan.
    pub disk: usize,
    /// Its reads, through the engine asked for.
    pub sweep: Sweep,
    /// One read at a time beside them: pinpointing a failed read, reading
    /// back a skipped span.
    pub probe: Probe,
    /// The buffers its reads go into, one per read in flight: allocated
    /// (and registered with the kernel) before the pass starts, so that
    /// setting them up is no part of the time measured. Nobody looks at
    /// what a read brings: through either engine they are views of the
    /// one memory every disk's reads land in ([`crate::io::Sweep::discard_buffers`]).
    pub buffers: Vec<AlignedBuf>,
    /// Device size in bytes.
    pub size: u64,
    /// A whole-disk read ends at this offset: the disk's size, or a slice's
    /// end in a full serial pass read in slices (only the disk's size
    /// counts as its end reached).
    pub until: u64,
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
    /// A read this long is logged whatever its size (`--stall-ms`).
    pub stall: Duration,
    /// Number of equal position buckets of the surface profile.
    pub buckets: usize,
    /// Where the read starts (a seek-stress reader's stagger), in bytes.
    pub origin: u64,
    /// Sample passes: the window is cut into this many equal slices of time,
    /// and slice `k` reads on from `k / spots` of the disk (1: from the
    /// start only).
    pub spots: u32,
    /// The spot the read starts in (a serial slice goes on where the disk's
    /// last slice stopped, see [`Resume`]).
    pub spot: u32,
    /// (time this disk was read before this job, the time its spots are
    /// spread over): a serial slice is one part of the disk's sample.
    pub spread: (Duration, Duration),
    /// Spans of the disk already found failing or skipped in this pass (by
    /// the disk's earlier slices): not read, counted or listed again.
    pub known: Vec<(u64, u64)>,
    /// A serial slice: at least this much of its start is its warm-up, left
    /// out of its window and its surface profile (a head seeking back, a
    /// throttle's or a cache's start after the disk idled is not its
    /// speed); zero otherwise.
    pub settle: Duration,
}

/// The warm-up of a run of a `sample` window: what its comparison window
/// leaves out (see [`WindowMarks`]).
pub fn warm_up(sample: Duration) -> Duration {
    sample.mul_f64(0.1).min(WARMUP_MAX)
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
    /// The warm-up lasts at least this long (a serial slice's settling).
    settle: Duration,
    trail: Vec<(u64, Duration)>,
    close: Option<(u64, Duration)>,
}

const WARMUP_MAX: Duration = Duration::from_secs(5);
const MARK_EVERY: Duration = Duration::from_millis(10);

impl WindowMarks {
    fn new(sample: Duration) -> Self {
        Self { sample, settle: Duration::ZERO, trail: Vec::new(), close: None }
    }

    /// Notes `bytes` read after `t` of the run.
    fn note(&mut self, bytes: u64, t: Duration) {
        let due = self.trail.last().is_none_or(|(_, last)| t >= *last + MARK_EVERY);
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
        let warmup = warm_up(ct.min(self.sample)).max(self.settle.min(ct / 2));
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
    /// time slice jumps to its spot, and every spot is read: a read that
    /// outlasted a slice (a loaded host, a throttle's burst) moves on one
    /// spot at a time, a chunk each, until it is back in step (a spot
    /// skipped would be a sample "spread over 4 spots" that read three).
    /// In a sample pass a disk that has ended starts again from the
    /// beginning, so every disk is measured for the whole window and a
    /// small fast disk is not judged on milliseconds of noise.
    fn next_chunk(
        &self,
        chunks: &mut Chunks,
        reached_end: &mut bool,
        spot: &mut u32,
        elapsed: Duration,
    ) -> Option<Chunk> {
        if let Window::Sample(_) = self.window
            && self.spots > 1
        {
            let (before, over) = self.spread;
            let into = (before + elapsed).as_secs_f64() / over.as_secs_f64().max(1e-9);
            let slice = into * f64::from(self.spots);
            let now = (slice as u32).min(self.spots - 1);
            if now > *spot {
                *spot += 1;
                *chunks = Chunks::from_offset(
                    self.size,
                    self.logical_block,
                    self.block,
                    self.spot_start(*spot),
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
        let mut p = Probed { chunk_end: chunk.offset() + chunk.len() as u64, ..Probed::default() };
        for part in Chunks::within(chunk, self.logical_block, PROBE.max(lbs) / lbs * lbs) {
            if give_up() {
                p.unread(part.offset(), first, STOPPED);
                return p;
            }
            if let Ok(Ok(_)) = self.probe.read(part, Until::Stop) {
                p.good += part.len() as u64;
                p.failing_run = 0;
                continue;
            }
            if !self.block_by_block(part, first, give_up, &mut p) {
                return p;
            }
        }
        if p.bad.is_empty() {
            let note = "; the re-read succeeded (a transient error)";
            p.bad.push(ReadError::at(chunk, first, note));
        }
        p
    }

    /// Re-reads a failed piece block by block into `p`; false when the
    /// pinpointing ends here (a stop, a region failing wholesale, a hang).
    fn block_by_block(
        &mut self,
        part: Chunk,
        first: &std::io::Error,
        give_up: &dyn Fn() -> bool,
        p: &mut Probed,
    ) -> bool {
        let lbs = u64::from(self.logical_block);
        for block in Chunks::within(part, self.logical_block, lbs) {
            if give_up() {
                p.unread(block.offset(), first, STOPPED);
                return false;
            }
            if p.failing_run >= WHOLESALE.max(8 * lbs) {
                p.unread(block.offset(), first, WHOLESALE_SKIPPED);
                p.wholesale = true;
                return false;
            }
            let read = match self.probe.read(block, Until::Stop) {
                Ok(r) => r.map(|_| ()),
                Err(Halt::Hung) => Err(self.probe.hung_error()),
                // A stop gave the read up.
                Err(_) => {
                    p.unread(block.offset(), first, STOPPED);
                    return false;
                }
            };
            match read {
                Ok(()) => {
                    p.good += block.len() as u64;
                    p.failing_run = 0;
                }
                // No answer: nothing more is read from this disk.
                Err(e) if is_hung(&e) => {
                    let len = p.chunk_end - block.offset();
                    p.bad.push(ReadError::hung(block.offset(), len, &e));
                    p.hung = true;
                    return false;
                }
                Err(e) => p.failed(block, &e, lbs),
            }
        }
        true
    }

    /// Reads the unread span `(lo, hi)` back from `hi` until a read fails
    /// or the run gives up, counting what it reads: in whole reads, then
    /// 64 KiB pieces, then block by block, so the unread span ends exactly
    /// where the failing area does (ddrescue's trimming). What is left, if
    /// small ([`SCRAPE`]), is then read block by block once: each block
    /// proven bad or read. A read with no answer (a hang) or a stop ends
    /// both there: what is left stays unread.
    fn trim_back(&mut self, (lo, hi): (u64, u64), r: &mut Reading) {
        let lbs = u64::from(self.logical_block);
        let mut end = hi;
        let mut halted = false;
        'steps: for step in [self.block, PROBE.max(lbs) / lbs * lbs, lbs] {
            while end >= lo + step && !r.give_up() {
                match self.probe.read(piece(end - step, step), Until::Stop) {
                    Ok(Ok(_)) => {
                        r.tally.bytes += step;
                        end -= step;
                    }
                    // The failing area's edge: on in smaller steps.
                    Ok(Err(_)) => break,
                    Err(h) => {
                        r.halted(h);
                        halted = true;
                        break 'steps;
                    }
                }
            }
        }
        r.faults.trimmed(end, hi);
        if !halted && end > lo && end - lo <= SCRAPE {
            self.scrape((lo, end), r);
        }
        r.aside(&mut self.sweep);
    }

    /// Reads the unread span `(lo, end)` block by block from `lo`, each
    /// block read or recorded bad, until the run gives up or the disk
    /// stops answering.
    fn scrape(&mut self, (lo, end): (u64, u64), r: &mut Reading) {
        let lbs = u64::from(self.logical_block);
        let mut at = lo;
        let mut bad = Vec::new();
        while at < end && !r.give_up() {
            let block = piece(at, lbs);
            match self.probe.read(block, Until::Stop) {
                Ok(Ok(_)) => r.tally.bytes += lbs,
                Ok(Err(e)) => bad.push(ReadError::at(block, &e, "")),
                Err(h) => {
                    r.halted(h);
                    break;
                }
            }
            at += lbs;
        }
        r.faults.scraped(lo, at);
        // A bad block right after the exact range before the span
        // continues it: one range.
        if let Some(e) = r.faults.kept.iter().find(|e| e.exact && e.offset + e.len == lo) {
            r.faults.last_end = Some((lo, e.errno, true));
        }
        for b in bad {
            r.record(b, self.disk);
        }
    }

    /// Reads the disk from `origin` (0 but for seek-pass readers) for the
    /// window, reporting failed reads through `on_error` as they happen.
    /// The sweep is kept full (one read at a time for psync); reads are
    /// counted in the order they were started.
    pub fn read(
        &mut self,
        stop: &StopFlag,
        progress: &AtomicU64,
        on_error: &dyn Fn(usize, ReadError),
    ) -> DiskRun {
        let mut r = Reading::new(self, stop, on_error);
        loop {
            self.fill(&mut r);
            if stop.is_set() {
                break;
            }
            match self.sweep.next(Until::Stop) {
                Ok(Some(read)) => self.landed(read, &mut r),
                Err(Halt::Hung) => {
                    self.hung(&mut r);
                    break;
                }
                // Nothing in flight, or a stop woke the wait.
                Ok(None) | Err(_) => break,
            }
            progress.store(r.tally.bytes, Ordering::Relaxed);
        }
        if stop.is_set() || r.faults.hung {
            // Stopped, or hung: the reads in flight are not waited for (on
            // a slow disk a deep queue takes seconds to drain; on a hung
            // one they never end).
            self.sweep.abandon(Duration::from_millis(200));
        }
        // A skip that ran into the end of the disk: read it back too.
        if let Some(gap) = r.faults.gap.take()
            && gap.1 == self.until
        {
            self.trim_back(gap, &mut r);
        }
        self.finish(r, stop)
    }

    /// Starts reads while the sweep has room and the disk's pass goes on.
    fn fill(&mut self, r: &mut Reading) {
        while self.sweep.room() && !r.give_up() && r.reads_on(self) {
            let at = r.start.elapsed();
            let Some(chunk) = self.next_chunk(&mut r.chunks, &mut r.reached_end, &mut r.spot, at)
            else {
                break;
            };
            if let Some(known_end) = r.faults.known_end(chunk.offset()) {
                r.passed_over += known_end - chunk.offset();
                r.chunks = self.chunks_from(known_end);
                continue;
            }
            let Some(buf) = r.spare.pop() else { break };
            r.passed_over = 0;
            r.next_at = chunk.offset() + chunk.len() as u64;
            self.sweep.start(Direction::Read, buf, chunk);
        }
    }

    /// Counts a read that landed, or handles its failure.
    fn landed(&mut self, read: Landed, r: &mut Reading) {
        let took = read.took();
        let Landed { chunk, done, service } = read;
        r.end = r.end.max(done.ended);
        r.spare.push(done.buf);
        // Started before a skip found its span bad (it is already counted
        // unread), or before the disk stopped its pass (at --max-errors,
        // gone or hung): not counted.
        if r.faults.known_end(chunk.offset()).is_some() || !r.reads_on(self) {
            return;
        }
        match done.result {
            Ok(n) => {
                r.tally.read(chunk, n as u64, (took, service), r.end - r.start);
                r.faults.skip = None;
                if let Some(gap) = r.faults.gap.take()
                    && gap.1 == chunk.offset()
                {
                    self.trim_back(gap, r);
                }
            }
            Err(e) if is_gone(&e) => {
                r.faults.failed_reads += 1;
                r.faults.gone = true;
                r.record(ReadError::at(chunk, &e, ""), self.disk);
            }
            Err(e) if is_hung(&e) => r.hung_at(chunk, &e, self.disk),
            Err(e) => self.failed(chunk, &e, r),
        }
    }

    /// No answer from the disk within the I/O timeout: the oldest read in
    /// flight is reported hung and nothing more is read.
    fn hung(&mut self, r: &mut Reading) {
        if let Some(chunk) = self.sweep.oldest()
            && r.faults.known_end(chunk.offset()).is_none()
            && r.reads_on(self)
        {
            r.hung_at(chunk, &self.probe.hung_error(), self.disk);
        }
        r.faults.hung = true;
    }

    /// A read failed with `e`: pinpoint its bad blocks, or inside a region
    /// that fails wholesale skip a growing span after it unread; the reads
    /// after it start past what is now known bad.
    fn failed(&mut self, chunk: Chunk, e: &std::io::Error, r: &mut Reading) {
        r.faults.failed_reads += 1;
        let chunk_end = chunk.offset() + chunk.len() as u64;
        let resume = match r.faults.skip {
            // Inside a region that fails wholesale: no probing, the read
            // and a growing span after it are unread.
            Some(skip) => {
                let to = (chunk_end + skip).min(self.until);
                let len = to - chunk.offset();
                let gap = ReadError::unread(chunk.offset(), len, e, WHOLESALE_SKIPPED);
                r.record(gap, self.disk);
                r.faults.skip = Some((skip * 2).min(MAX_SKIP.max(self.block)));
                // One unread span with the one before it, if it continues it.
                let from =
                    r.faults.gap.filter(|g| g.1 == chunk.offset()).map_or(chunk.offset(), |g| g.0);
                r.faults.gap = Some((from, to));
                to
            }
            None => {
                let probed = self.pinpoint(chunk, e, &|| r.give_up());
                r.tally.bytes += probed.good;
                let cut = probed.bad.iter().rev().find(|b| !b.exact).map(|b| b.offset);
                for b in probed.bad {
                    r.record(b, self.disk);
                }
                if probed.wholesale {
                    r.faults.skip = Some(self.block);
                    // The chunk's rest, unread: trimmed back once the
                    // reads after it succeed.
                    r.faults.gap = cut.map(|c| (c, chunk_end));
                }
                r.faults.hung |= probed.hung;
                chunk_end
            }
        };
        r.faults.known.push((chunk.offset(), resume));
        // Reads already in flight past the skip go on; the next started
        // begins after them.
        if resume > r.next_at {
            r.chunks = self.chunks_from(resume);
            r.next_at = resume;
        }
        r.aside(&mut self.sweep);
    }

    /// What the run measured, and why it stopped early if it did.
    fn finish(&mut self, mut r: Reading, stop: &StopFlag) -> DiskRun {
        // The buffers back with the job, for its next slice.
        self.buffers = std::mem::take(&mut r.spare);
        let elapsed = r.end - r.start;
        let done = match self.window {
            Window::Full => r.reached_end,
            Window::Sample(d) => elapsed >= d,
        };
        let f = &r.faults;
        let stopped = if f.gone {
            Some(Stopped::DeviceGone)
        } else if f.hung {
            Some(Stopped::Hung)
        } else if f.failed_reads >= self.max_errors && !done {
            Some(Stopped::MaxErrors)
        } else if stop.is_set() && !done {
            Some(Stopped::Interrupted)
        } else {
            None
        };
        let resume = Resume { offset: r.next_at, spot: r.spot, known: r.faults.known.clone() };
        let disk_end = r.reached_end && self.until == self.size;
        DiskRun { resume, ..r.tally.finish(elapsed, r.faults, disk_end, stopped) }
    }

    /// The chunks from `offset` on (a skip past a bad span), up to where
    /// the read ends.
    fn chunks_from(&self, offset: u64) -> Chunks {
        Chunks::from_offset(self.until, self.logical_block, self.block, offset)
    }
}

/// Where one run stands: what it counted and found, where it reads next,
/// the buffers not in flight.
struct Reading<'a> {
    tally: Tally,
    faults: Faults,
    chunks: Chunks,
    reached_end: bool,
    /// The slice of a spread sample being read.
    spot: u32,
    start: Instant,
    /// When the last read landed, or the last pinpointing ended.
    end: Instant,
    /// The sample's length (None: the whole disk).
    deadline: Option<Duration>,
    /// Bytes passed over without a read since the last read: a disk that
    /// is known bad all over has nothing left to read.
    passed_over: u64,
    /// Where the chunk after the last one started begins.
    next_at: u64,
    spare: Vec<AlignedBuf>,
    stop: &'a StopFlag,
    on_error: &'a dyn Fn(usize, ReadError),
}

impl<'a> Reading<'a> {
    fn new(job: &mut ReadJob, stop: &'a StopFlag, on_error: &'a dyn Fn(usize, ReadError)) -> Self {
        let spare = std::mem::take(&mut job.buffers);
        let start = Instant::now();
        Self {
            tally: Tally::new(job),
            faults: Faults { known: std::mem::take(&mut job.known), ..Faults::default() },
            chunks: job.chunks_from(job.origin),
            reached_end: false,
            spot: job.spot,
            start,
            end: start,
            deadline: job.window.length(),
            passed_over: 0,
            next_at: job.origin,
            spare,
            stop,
            on_error,
        }
    }

    /// Whether to read no more: a stop, or the sample's time is up.
    fn give_up(&self) -> bool {
        self.stop.is_set() || self.deadline.is_some_and(|d| self.start.elapsed() >= d)
    }

    /// Whether the disk's pass goes on: not at --max-errors, not gone, not
    /// hung, not known bad all over.
    fn reads_on(&self, job: &ReadJob) -> bool {
        let f = &self.faults;
        f.failed_reads < job.max_errors && !f.gone && !f.hung && self.passed_over < job.size
    }

    /// A re-read of a span already listed unread got no answer (`Hung`:
    /// the disk hung, nothing more is read from it) or was given up by a
    /// stop; the span stays unread.
    fn halted(&mut self, h: Halt) {
        if h == Halt::Hung {
            self.faults.failed_reads += 1;
            self.faults.hung = true;
        }
    }

    /// The read of `chunk` got no answer (`e`): it is reported unread, and
    /// nothing more is read from this disk.
    fn hung_at(&mut self, chunk: Chunk, e: &std::io::Error, disk: usize) {
        self.faults.failed_reads += 1;
        self.faults.hung = true;
        self.record(ReadError::hung(chunk.offset(), chunk.len() as u64, e), disk);
    }

    /// Counts a bad range and reports it.
    fn record(&mut self, error: ReadError, disk: usize) {
        self.faults.record(error, disk, self.on_error);
    }

    /// Time just spent outside the sweep (re-reads) is no read's.
    fn aside(&mut self, sweep: &mut Sweep) {
        self.end = Instant::now();
        sweep.clock_from(self.end);
    }
}

/// What a run measured from its successful reads, kept up to date read by
/// read (after the clock has stopped) and turned into a [`DiskRun`] at the
/// end.
struct Tally {
    hist: Histogram<u64>,
    surface: Surface,
    marks: WindowMarks,
    surface_after: Duration,
    slow_read: Duration,
    stall: Duration,
    slow_reads: Vec<SlowRead>,
    slow_count: u64,
    bytes: u64,
    reads: u64,
}

impl Tally {
    fn new(job: &ReadJob) -> Self {
        Self {
            hist: latency_histogram(),
            surface: Surface::new(job.buckets, job.size),
            marks: WindowMarks { settle: job.settle, ..WindowMarks::new(job.sample) },
            surface_after: job.settle,
            slow_read: job.slow_read,
            stall: job.stall,
            slow_reads: Vec::new(),
            slow_count: 0,
            bytes: 0,
            reads: 0,
        }
    }

    /// How long a read of `n` bytes takes to be logged as slow:
    /// `slow_read` beyond what its size needs at the size floor, at most
    /// the stall limit.
    fn slow_at(&self, n: u64) -> Duration {
        (self.slow_read + crate::defaults::size_time(n)).min(self.stall.max(self.slow_read))
    }

    /// Counts a read of `n` bytes of `chunk` with latency `took` that had
    /// the disk for `service` of it, ending `at` into the run.
    fn read(&mut self, chunk: Chunk, n: u64, (took, service): (Duration, Duration), at: Duration) {
        self.hist.saturating_record(took.as_nanos() as u64);
        if at >= self.surface_after {
            self.surface.add(chunk.offset(), n, service);
        }
        // Slow beyond what its size needs (a big request's own time is not
        // a slow sector), never beyond the stall limit: the stall rule
        // judges the reads logged here. Reckoned only for a read past
        // `slow_read`.
        if took >= self.slow_read && took >= self.slow_at(n) {
            self.slow_count += 1;
            self.slow_reads.push(SlowRead::at(chunk, (took, service), self.reads + 1));
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
            resume: Resume::default(),
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
    #[derive(Clone)]
    struct Vanishing {
        ok: std::sync::Arc<std::sync::atomic::AtomicU32>,
    }

    impl Vanishing {
        fn after(ok: u32) -> Self {
            Self { ok: std::sync::Arc::new(ok.into()) }
        }
    }

    impl crate::io::Medium for Vanishing {
        fn read_at(&self, dst: &mut [u8], _: u64) -> std::io::Result<usize> {
            let left =
                self.ok.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
            match left {
                Ok(_) => Ok(dst.len()),
                Err(_) => Err(std::io::Error::from_raw_os_error(nix::libc::ENODEV)),
            }
        }
        fn write_all_at(&self, _: &[u8], _: u64) -> std::io::Result<()> {
            Err(std::io::Error::other("read-only"))
        }
        fn sync_data(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A full-pass job over a 64 MiB disk read in 1 MiB chunks, one at a
    /// time through the psync thread, as a real disk is.
    fn job(disk: Vanishing) -> ReadJob {
        let bounds = crate::io::Bounds::new(&StopFlag::default(), Duration::from_secs(60));
        let io = crate::io::ThreadIo::on(disk.clone(), &bounds).unwrap();
        ReadJob {
            disk: 0,
            sweep: Sweep::new(Box::new(io)),
            probe: Probe::on(disk, &bounds).unwrap(),
            buffers: vec![AlignedBuf::new(1 << 20)],
            size: 64 << 20,
            until: 64 << 20,
            logical_block: 512,
            block: 1 << 20,
            window: Window::Full,
            sample: Duration::from_secs(1),
            max_errors: 100,
            slow_read: Duration::from_millis(500),
            stall: Duration::from_millis(2000),
            buckets: 4,
            origin: 0,
            spots: 1,
            spot: 0,
            spread: (Duration::ZERO, Duration::from_secs(1)),
            known: Vec::new(),
            settle: Duration::ZERO,
        }
    }

    #[test]
    fn the_slowest_reads_are_kept_not_the_first() {
        // A dying disk: 1000 reads of 600 ms, and one stall of 3 s late in
        // the run. The stall must be among the kept reads (the verdict's
        // stall rule reads them), the count must be all of them.
        let job = job(Vanishing::after(0));
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
        let stall: Vec<&SlowRead> =
            run.slow_reads.iter().filter(|s| s.latency_ms >= 2000.0).collect();
        assert_eq!(stall.len(), 1);
        assert_eq!((stall[0].offset, stall[0].index), (900 << 20, 901));
        assert!(run.slow_reads.windows(2).all(|w| w[0].offset < w[1].offset));
    }

    #[test]
    fn a_big_read_is_slow_only_beyond_what_its_size_needs() {
        // 64 MiB reads at 100 MB/s take 671 ms each: no slow read (they were
        // "12 slow reads"); 500 ms beyond the 1342 ms its size needs at
        // 50 MB/s is one.
        let job = job(Vanishing::after(0));
        let mut tally = Tally::new(&job);
        let (big, ms) = (64u64 << 20, Duration::from_millis);
        let mut chunks = Chunks::new(1 << 40, 512, big);
        for i in 0..12 {
            tally.read(chunks.next().unwrap(), big, (ms(671), ms(671)), ms(i * 671));
        }
        tally.read(chunks.next().unwrap(), big, (ms(1900), ms(1900)), ms(10_000));
        let run = tally.finish(ms(12_000), Faults::default(), false, None);
        assert_eq!(run.slow_read_count, 1, "{:?}", run.slow_reads);
        assert_eq!(run.slow_reads[0].offset, 12 * big);
        // A 256 MiB read past the stall limit (2 s) is logged, though its
        // size alone needs 5.4 s at 50 MB/s: on a disk that reads 1 GB/s it
        // is a stall, which the stall rule finds among the logged reads.
        let mut tally = Tally::new(&job);
        let huge = 256u64 << 20;
        tally.read(
            Chunks::new(1 << 40, 512, huge).next().unwrap(),
            huge,
            (ms(2100), ms(2100)),
            ms(0),
        );
        let run = tally.finish(ms(3_000), Faults::default(), false, None);
        assert_eq!(run.slow_read_count, 1, "{:?}", run.slow_reads);
    }

    #[test]
    fn a_device_that_goes_away_stops_its_read_and_is_reported_gone() {
        let mut job = job(Vanishing::after(3));
        let seen = std::sync::Mutex::new(Vec::new());
        let run = job
            .read(&StopFlag::default(), &AtomicU64::new(0), &|_, e| seen.lock().unwrap().push(e));
        assert!(run.gone);
        assert_eq!((run.bytes, run.reads, run.failed_reads), (3 << 20, 3, 1));
        assert!(!run.reached_end, "nothing read after it went");
        assert_eq!(run.errors[0].offset, 3 << 20);
        assert_eq!(run.errors[0].errno, Some(nix::libc::ENODEV));
        assert_eq!(seen.lock().unwrap().len(), 1, "reported once, not pinpointed");
    }

    #[test]
    fn a_slice_of_a_full_read_ends_at_its_end_and_only_the_last_reaches_the_disks() {
        let mut job = job(Vanishing::after(1000));
        let mut read = |(origin, until): (u64, u64)| {
            (job.origin, job.until) = (origin, until);
            job.read(&StopFlag::default(), &AtomicU64::new(0), &|_, _| {})
        };
        let first = read((0, 40 << 20));
        assert_eq!((first.bytes, first.reads), (40 << 20, 40));
        assert!(!first.reached_end && first.stopped.is_none(), "{first:?}");
        assert_eq!(first.resume.offset, 40 << 20);
        let last = read((first.resume.offset, 64 << 20));
        assert_eq!(first.bytes + last.bytes, 64 << 20);
        assert!(last.reached_end && last.stopped.is_none(), "{last:?}");
    }

    #[test]
    fn a_run_shorter_than_the_warm_up_is_its_own_window() {
        let mut m = WindowMarks::new(Duration::from_secs(60));
        m.note(4096, Duration::from_millis(3));
        assert_eq!(m.window(4096, Duration::from_millis(3)), (4096, Duration::from_millis(3)));
    }
}

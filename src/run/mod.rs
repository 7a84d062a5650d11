//! Running passes: workers measure, one aggregator (the calling thread) owns
//! every piece of mutable state and feeds an [`Observer`] (the progress
//! display). Nothing here formats text for people.

mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{select, tick, unbounded};
use hdrhistogram::Histogram;

use crate::io::Engine;
use crate::units::fraction_of;
pub use worker::Job;

/// How long each disk is read in a pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Window {
    /// For this long from the start of the disk; a disk that ends sooner is
    /// read again from the start until the time is up.
    Sample(Duration),
    /// The whole disk.
    Full,
}

/// Serial (one disk at a time), parallel (all at once), or seek stress
/// (all at once, several staggered readers per disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    Serial,
    Parallel,
    Seek,
}

impl PassKind {
    /// `"serial"`, `"parallel"` or `"seek"`, as in the JSON and CSV.
    pub fn name(self) -> &'static str {
        match self {
            PassKind::Serial => "serial",
            PassKind::Parallel => "parallel",
            PassKind::Seek => "seek",
        }
    }
}

/// Set by a signal handler (or a test); workers stop at the next read.
/// It also says whether the program is doing what a second signal must not
/// cut short (removing the demo's loop devices and cgroup or iozone's test
/// files, writing a result file), so that the handler waits instead.
#[derive(Debug, Clone, Default)]
pub struct StopFlag {
    stop: Arc<AtomicBool>,
    holds: Arc<AtomicUsize>,
}

/// While it lives, a second signal waits instead of ending the process.
#[must_use]
pub struct Hold(Arc<AtomicUsize>);

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl StopFlag {
    /// Asks every worker to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }
    /// Whether a stop was asked for.
    pub fn is_set(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    /// Holds off a second signal's exit until the returned guard is
    /// dropped (holds nest).
    pub fn hold(&self) -> Hold {
        self.holds.fetch_add(1, Ordering::SeqCst);
        Hold(self.holds.clone())
    }
    /// Whether exiting now would leave resources or a half-written file
    /// behind.
    pub fn cleanup_pending(&self) -> bool {
        self.holds.load(Ordering::SeqCst) > 0
    }
}

/// A range that could not be read.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ReadError {
    /// Byte offset of the failed read on the device.
    pub offset: u64,
    /// Length of the failed read in bytes.
    pub len: u64,
    /// The OS error number (5 = EIO), when there was one.
    pub errno: Option<i32>,
    /// The error as the OS describes it, and what was done about it.
    pub message: String,
    /// True when every logical block of the range was read alone and
    /// failed (or the whole read failed again); false for a span not read:
    /// skipped in an area that fails wholesale, or left unprobed when the
    /// sample time ran out or a stop came.
    #[serde(default = "exact_by_default")]
    pub exact: bool,
}

fn exact_by_default() -> bool {
    true
}

/// Why a disk's read ended before its window did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// `--max-errors` failed reads.
    MaxErrors,
    /// A signal (Ctrl-C, SIGTERM, SIGHUP).
    Interrupted,
    /// The device went away (ENODEV/ENXIO).
    DeviceGone,
}

/// Where on the disk the time went: bytes read and time spent reading, in
/// equal position buckets from the start to the end of the disk. A read
/// counts in the bucket where it starts. Its memory is fixed by the bucket
/// count, never by the disk size.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surface {
    /// Device size in bytes.
    pub size: u64,
    /// Bytes read per bucket.
    pub bytes: Vec<u64>,
    /// Nanoseconds spent in reads per bucket.
    pub busy_ns: Vec<u64>,
    /// Reads per bucket.
    pub reads: Vec<u64>,
}

impl Surface {
    /// `buckets` empty buckets over a disk of `size` bytes.
    pub fn new(buckets: usize, size: u64) -> Self {
        Self {
            size,
            bytes: vec![0; buckets.max(1)],
            busy_ns: vec![0; buckets.max(1)],
            reads: vec![0; buckets.max(1)],
        }
    }

    /// Counts a read of `bytes` at `offset` that took `took`.
    pub fn add(&mut self, offset: u64, bytes: u64, took: Duration) {
        let n = self.bytes.len() as u128;
        let i = (u128::from(offset) * n / u128::from(self.size.max(1))).min(n - 1) as usize;
        self.bytes[i] += bytes;
        self.busy_ns[i] += took.as_nanos() as u64;
        self.reads[i] += 1;
    }

    /// MB/s per bucket (None where nothing was read).
    pub fn mb_per_s(&self) -> Vec<Option<f64>> {
        self.bytes
            .iter()
            .zip(&self.busy_ns)
            .map(|(b, ns)| (*b > 0 && *ns > 0).then(|| *b as f64 / 1e6 / (*ns as f64 / 1e9)))
            .collect()
    }
}

/// A read that took long: the sign of a sector the drive had to retry.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct SlowRead {
    /// Byte offset of the read on the device.
    pub offset: u64,
    /// Length of the read in bytes.
    pub len: u64,
    /// How long it took, in milliseconds.
    pub latency_ms: f64,
    /// Which read of the run it was (1 = the first, which includes any
    /// spin-up).
    pub index: u64,
}

impl SlowRead {
    /// The read of `chunk` that took `took`.
    pub fn at(chunk: crate::device::buffer::Chunk, took: Duration, index: u64) -> Self {
        Self {
            offset: chunk.offset(),
            len: chunk.len() as u64,
            latency_ms: took.as_secs_f64() * 1e3,
            index,
        }
    }
}

/// Keeps the `n` slowest of `reads` (ties: the earlier read), in offset
/// order: the worst reads are the evidence, wherever on the disk they are.
pub fn keep_slowest(reads: &mut Vec<SlowRead>, n: usize) {
    if reads.len() > n {
        reads.sort_by(|a, b| {
            b.latency_ms
                .total_cmp(&a.latency_ms)
                .then(a.index.cmp(&b.index))
        });
        reads.truncate(n);
    }
    reads.sort_by_key(|s| (s.offset, s.index));
}

impl ReadError {
    /// `len` bytes from `offset` not read (`exact` false) after the read
    /// failed with `e`, and `why`.
    pub fn unread(offset: u64, len: u64, e: &std::io::Error, why: &str) -> Self {
        Self {
            offset,
            len,
            errno: e.raw_os_error(),
            message: format!("{e}; not read: {why}"),
            exact: false,
        }
    }

    /// The failure of reading `chunk` with `e`, `note` appended to the
    /// message.
    pub fn at(chunk: crate::device::buffer::Chunk, e: &std::io::Error, note: &str) -> Self {
        Self {
            offset: chunk.offset(),
            len: chunk.len() as u64,
            errno: e.raw_os_error(),
            message: format!("{e}{note}"),
            exact: true,
        }
    }
}

/// What a worker measured on one disk in one pass: the contract between
/// measuring and judging.
#[derive(Debug, Clone)]
pub struct DiskRun {
    /// Bytes read successfully.
    pub bytes: u64,
    /// From the first read's start to the last read's end.
    pub elapsed: Duration,
    /// (bytes, elapsed) over the comparison window: from the end of the
    /// warm-up (10 % of the sample, at most 5 s) to the sample length, or
    /// the whole run when it was shorter.
    pub window: (u64, Duration),
    /// Successful reads.
    pub reads: u64,
    /// Latency of every successful read, in nanoseconds.
    pub latency_ns: Histogram<u64>,
    /// The first bad ranges, exact to the logical block (at most
    /// [`worker::MAX_KEPT_ERRORS`]).
    pub errors: Vec<ReadError>,
    /// Reads that failed (each re-read to find its bad ranges).
    pub failed_reads: u64,
    /// The slowest reads that took at least the slow-read threshold (at
    /// most [`worker::MAX_KEPT_SLOW`]), in offset order.
    pub slow_reads: Vec<SlowRead>,
    /// All reads that took at least the slow-read threshold.
    pub slow_read_count: u64,
    /// Bytes and read time per position bucket across the disk.
    pub surface: Surface,
    /// Exact bad ranges found (all of them; `errors` keeps the first
    /// ranges, exact and unread).
    pub bad_ranges: u64,
    /// Bytes found unreadable.
    pub bad_bytes: u64,
    /// Bytes neither read nor proven bad (skipped in an area that fails
    /// wholesale, or unprobed when time ran out or a stop came).
    pub unread_bytes: u64,
    /// The device went away (ENODEV/ENXIO): the read stopped there.
    pub gone: bool,
    /// Whether the read reached the end of the disk (in a sample pass, at
    /// least once).
    pub reached_end: bool,
    /// Why the read ended before its window did; None when it ran the
    /// whole window (or disk).
    pub stopped: Option<Stopped>,
}

impl DiskRun {
    /// One disk's measurement from its concurrent readers' (the seek pass):
    /// bytes, reads, latencies, surface and faults added up; the window is
    /// all readers' window bytes over the longest of their windows (they
    /// start together and read for the same sample); a bad range two
    /// readers both found counts once.
    pub fn merge(mut runs: Vec<DiskRun>) -> DiskRun {
        let mut all = runs.remove(0);
        for r in runs {
            all.window = (all.window.0 + r.window.0, all.window.1.max(r.window.1));
            all.bytes += r.bytes;
            all.elapsed = all.elapsed.max(r.elapsed);
            all.reads += r.reads;
            let _ = all.latency_ns.add(&r.latency_ns);
            all.failed_reads += r.failed_reads;
            all.bad_ranges += r.bad_ranges;
            all.bad_bytes += r.bad_bytes;
            all.unread_bytes += r.unread_bytes;
            for e in r.errors {
                match all
                    .errors
                    .iter()
                    .find(|k| k.offset == e.offset && k.len == e.len)
                {
                    Some(_) => {
                        if e.exact {
                            all.bad_ranges -= 1;
                            all.bad_bytes -= e.len;
                        } else {
                            all.unread_bytes -= e.len;
                        }
                    }
                    None => all.errors.push(e),
                }
            }
            all.slow_reads.extend(r.slow_reads);
            all.slow_read_count += r.slow_read_count;
            for (i, b) in r.surface.bytes.iter().enumerate() {
                all.surface.bytes[i] += b;
                all.surface.busy_ns[i] += r.surface.busy_ns[i];
                all.surface.reads[i] += r.surface.reads[i];
            }
            all.gone |= r.gone;
            all.reached_end |= r.reached_end;
            all.stopped = all.stopped.or(r.stopped);
        }
        all.errors.sort_by_key(|e| e.offset);
        all.errors.truncate(worker::MAX_KEPT_ERRORS);
        keep_slowest(&mut all.slow_reads, worker::MAX_KEPT_SLOW);
        all
    }
}

/// A live view of one disk for the progress display.
#[derive(Debug, Clone, Copy)]
pub struct DiskProgress {
    /// Index of the disk in the plan.
    pub disk: usize,
    /// Bytes read so far.
    pub bytes: u64,
    /// Bytes this pass will read at most (the disk's size).
    pub size: u64,
    /// Time since the group started.
    pub elapsed: Duration,
    /// The pass's window.
    pub window: Window,
}

/// Worker → aggregator messages.
enum Event {
    ReadError { disk: usize, error: ReadError },
    Done { slot: usize, run: Box<DiskRun> },
}

/// Receives what the aggregator sees while a group of disks runs.
pub trait Observer {
    /// A group of disks (one for serial, all for parallel) is starting.
    fn group_started(&mut self, kind: PassKind, disks: &[usize]);
    /// Periodic progress of every disk in the group.
    fn progress(&mut self, kind: PassKind, disks: &[DiskProgress]);
    /// A read failed; the disk carries on.
    fn read_error(&mut self, disk: usize, error: &ReadError);
    /// The group has finished (or was stopped).
    fn group_finished(&mut self, kind: PassKind, disks: &[usize], runs: &[DiskRun]);
}

/// How often the aggregator polls progress.
const TICK: Duration = Duration::from_millis(250);

/// Runs `jobs` at the same time, one thread each, released together by a
/// barrier, and returns one measurement per disk, in the order the disks
/// first appear among the jobs (several jobs on one disk, the seek pass's
/// readers, are merged into one).
pub fn run_group(
    kind: PassKind,
    jobs: Vec<Job>,
    stop: &StopFlag,
    observer: &mut dyn Observer,
) -> Vec<DiskRun> {
    let mut disks: Vec<usize> = Vec::new();
    for j in &jobs {
        if !disks.contains(&j.disk) {
            disks.push(j.disk);
        }
    }
    let owner: Vec<usize> = jobs
        .iter()
        .map(|j| disks.iter().position(|d| *d == j.disk).unwrap_or(0))
        .collect();
    let counters: Vec<AtomicU64> = jobs.iter().map(|_| AtomicU64::new(0)).collect();
    let mut sizes: Vec<(u64, Window)> = vec![(0, Window::Full); disks.len()];
    for (j, o) in jobs.iter().zip(&owner) {
        sizes[*o] = (j.size, j.window);
    }
    let barrier = Barrier::new(jobs.len() + 1);
    let (tx, rx) = unbounded();
    let mut runs: Vec<Option<DiskRun>> = (0..jobs.len()).map(|_| None).collect();
    observer.group_started(kind, &disks);
    std::thread::scope(|s| {
        for (slot, job) in jobs.into_iter().enumerate() {
            let (tx, counter, barrier) = (tx.clone(), &counters[slot], &barrier);
            s.spawn(move || {
                barrier.wait();
                let run = job.run(stop, counter, &|disk, error| {
                    let _ = tx.send(Event::ReadError { disk, error });
                });
                let _ = tx.send(Event::Done {
                    slot,
                    run: Box::new(run),
                });
            });
        }
        drop(tx);
        barrier.wait();
        let started = Instant::now();
        let ticker = tick(TICK);
        loop {
            select! {
                recv(rx) -> ev => match ev {
                    Ok(Event::Done { slot, run }) => runs[slot] = Some(*run),
                    Ok(Event::ReadError { disk, error }) => observer.read_error(disk, &error),
                    Err(_) => break,
                },
                recv(ticker) -> _ => {
                    let mut snap: Vec<DiskProgress> = disks.iter().enumerate().map(|(i, &disk)| DiskProgress {
                        disk, bytes: 0, size: sizes[i].0, elapsed: started.elapsed(), window: sizes[i].1,
                    }).collect();
                    for (c, o) in counters.iter().zip(&owner) {
                        snap[*o].bytes += c.load(Ordering::Relaxed);
                    }
                    observer.progress(kind, &snap);
                }
            }
        }
    });
    let mut merged: Vec<Vec<DiskRun>> = disks.iter().map(|_| Vec::new()).collect();
    for (r, o) in runs.into_iter().zip(&owner) {
        merged[*o].push(r.expect("a worker ended without reporting"));
    }
    let runs: Vec<DiskRun> = merged.into_iter().map(DiskRun::merge).collect();
    observer.group_finished(kind, &disks, &runs);
    runs
}

/// One pass as measured: which disks ran, and what each measured.
#[derive(Debug)]
pub struct PassRun {
    /// Serial or parallel.
    pub kind: PassKind,
    /// The window each disk was read for.
    pub window: Window,
    /// When the pass started.
    pub started_at: SystemTime,
    /// Wall time of the pass.
    pub elapsed: Duration,
    /// (disk index, measurement), in plan order; disks a stop kept from
    /// starting are absent.
    pub disks: Vec<(usize, DiskRun)>,
    /// Whether a stop request cut the pass short.
    pub interrupted: bool,
}

/// Something that can produce a fresh engine for a disk at each pass.
pub type EngineFactory<'a> = dyn Fn(usize) -> std::io::Result<Box<dyn Engine>> + 'a;

/// The read geometry of one disk.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// Size in bytes.
    pub size: u64,
    /// Logical block size in bytes.
    pub logical_block: u32,
}

/// What a pass reads.
#[derive(Debug, Clone, Copy)]
pub struct PassSpec {
    /// Serial or parallel.
    pub kind: PassKind,
    /// Sampled or whole disks.
    pub window: Window,
    /// The sample length (also the comparison zone of a full pass).
    pub sample: Duration,
    /// A disk stops its pass after this many failed reads.
    pub max_errors: u64,
    /// Reads that take at least this long are logged with their offset.
    pub slow_read: Duration,
    /// Buckets of the surface profile.
    pub buckets: usize,
    /// Read size in bytes.
    pub block: u64,
    /// Concurrent readers per disk, staggered evenly over the disk (1
    /// except in the seek-stress pass).
    pub readers: usize,
    /// Sample passes: spots the window is spread over (1: the start only).
    pub spots: u32,
}

/// Runs one pass over `geometry.len()` disks: one at a time for serial, all
/// together for parallel. Stops early (marked interrupted) on `stop`.
pub fn run_pass(
    spec: PassSpec,
    geometry: &[Geometry],
    engines: &EngineFactory,
    stop: &StopFlag,
    observer: &mut dyn Observer,
) -> std::io::Result<PassRun> {
    let (started_at, t0) = (SystemTime::now(), Instant::now());
    let readers = spec.readers.max(1);
    let make = |disk: usize, reader: usize| -> std::io::Result<Job> {
        let g = geometry[disk];
        let (block, window, sample) = (spec.block, spec.window, spec.sample);
        Ok(Job {
            origin: fraction_of(g.size, reader as u64, readers as u64),
            spots: spec.spots,
            disk,
            engine: engines(disk)?,
            size: g.size,
            logical_block: g.logical_block,
            block,
            window,
            sample,
            max_errors: spec.max_errors,
            slow_read: spec.slow_read,
            buckets: spec.buckets,
        })
    };
    let groups: Vec<Vec<usize>> = match spec.kind {
        PassKind::Serial => (0..geometry.len()).map(|d| vec![d]).collect(),
        PassKind::Parallel | PassKind::Seek => vec![(0..geometry.len()).collect()],
    };
    let mut disks = Vec::new();
    for group in groups {
        if stop.is_set() {
            break;
        }
        let jobs = group
            .iter()
            .flat_map(|&d| (0..readers).map(move |r| (d, r)))
            .map(|(d, r)| make(d, r))
            .collect::<std::io::Result<Vec<_>>>()?;
        disks.extend(
            group
                .into_iter()
                .zip(run_group(spec.kind, jobs, stop, observer)),
        );
    }
    let (kind, window, interrupted) = (spec.kind, spec.window, stop.is_set());
    Ok(PassRun {
        kind,
        window,
        started_at,
        elapsed: t0.elapsed(),
        disks,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_counts_in_the_bucket_where_it_starts() {
        let mut s = Surface::new(4, 1000);
        for (offset, bytes) in [(0, 100), (249, 10), (250, 100), (999, 1)] {
            s.add(offset, bytes, Duration::from_millis(1));
        }
        assert_eq!(s.bytes, [110, 100, 0, 1]);
        let mbps = s.mb_per_s();
        assert_eq!(mbps[2], None);
        assert!(
            (mbps[1].unwrap() - 0.1).abs() < 1e-9,
            "100 bytes in 1 ms = 0.1 MB/s"
        );
    }
}

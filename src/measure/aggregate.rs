//! Running a pass: one thread per job, released together by a barrier;
//! the calling thread aggregates their events and feeds the [`Observer`].

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{select, tick, unbounded};

use super::worker::ReadJob;
use super::{Beside, DiskRun, PassKind, PassRun, ReadError, Slice, Window};
use crate::io::{Probe, Sweep};
use crate::stop::StopFlag;
use crate::units::fraction_of;

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
/// readers, are merged into one). The jobs stay the caller's: a serial
/// slice's disk is read again through the same sweep.
pub fn run_group(
    kind: PassKind,
    jobs: &mut [ReadJob],
    stop: &StopFlag,
    observer: &mut dyn Observer,
) -> Vec<DiskRun> {
    let group = Group::of(jobs);
    let counters: Vec<AtomicU64> = jobs.iter().map(|_| AtomicU64::new(0)).collect();
    let barrier = Barrier::new(jobs.len() + 1);
    let (tx, rx) = unbounded();
    let mut runs: Vec<Option<DiskRun>> = (0..jobs.len()).map(|_| None).collect();
    observer.group_started(kind, &group.disks);
    std::thread::scope(|s| {
        for (slot, job) in jobs.iter_mut().enumerate() {
            let (tx, counter, barrier) = (tx.clone(), &counters[slot], &barrier);
            s.spawn(move || {
                barrier.wait();
                let run = job.read(stop, counter, &|disk, error| {
                    let _ = tx.send(Event::ReadError { disk, error });
                });
                let _ = tx.send(Event::Done { slot, run: Box::new(run) });
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
                recv(ticker) -> _ => observer.progress(kind, &group.snapshot(&counters, started)),
            }
        }
    });
    let runs = group.merge(runs);
    observer.group_finished(kind, &group.disks, &runs);
    runs
}

/// The disks of a group of jobs, and which disk each job reads.
struct Group {
    /// In the order they first appear among the jobs.
    disks: Vec<usize>,
    /// Each job's disk, as an index into `disks`.
    owner: Vec<usize>,
    /// Each disk's size and window.
    sizes: Vec<(u64, Window)>,
}

impl Group {
    fn of(jobs: &[ReadJob]) -> Self {
        let mut disks: Vec<usize> = Vec::new();
        for j in jobs {
            if !disks.contains(&j.disk) {
                disks.push(j.disk);
            }
        }
        let owner: Vec<usize> =
            jobs.iter().map(|j| disks.iter().position(|d| *d == j.disk).unwrap_or(0)).collect();
        let mut sizes = vec![(0, Window::Full); disks.len()];
        for (j, o) in jobs.iter().zip(&owner) {
            sizes[*o] = (j.size, j.window);
        }
        Self { disks, owner, sizes }
    }

    /// Every disk's progress now, from the jobs' byte counters.
    fn snapshot(&self, counters: &[AtomicU64], started: Instant) -> Vec<DiskProgress> {
        let mut snap: Vec<DiskProgress> = (self.disks.iter().zip(&self.sizes))
            .map(|(&disk, &(size, window))| DiskProgress {
                disk,
                bytes: 0,
                size,
                elapsed: started.elapsed(),
                window,
            })
            .collect();
        for (c, o) in counters.iter().zip(&self.owner) {
            snap[*o].bytes += c.load(Ordering::Relaxed);
        }
        snap
    }

    /// The jobs' runs merged into one per disk.
    fn merge(&self, runs: Vec<Option<DiskRun>>) -> Vec<DiskRun> {
        let mut merged: Vec<Vec<DiskRun>> = self.disks.iter().map(|_| Vec::new()).collect();
        for (r, o) in runs.into_iter().zip(&self.owner) {
            merged[*o].push(r.expect("a worker ended without reporting"));
        }
        merged.into_iter().map(DiskRun::merge).collect()
    }
}

/// What opens a fresh sweep of a disk (and its probe) for each reader of
/// each pass.
pub type SweepFactory<'a> = dyn Fn(usize) -> std::io::Result<(Sweep, Probe)> + 'a;

/// The read geometry of one disk.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// Size in bytes.
    pub size: u64,
    /// Logical block size in bytes.
    pub logical_block: u32,
    /// Position buckets of its surface profile.
    pub buckets: usize,
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
    /// The stall limit (`--stall-ms`): a read this long is always logged,
    /// whatever its size (the stall rule reads the logged ones).
    pub stall: Duration,
    /// Read size in bytes.
    pub block: u64,
    /// Concurrent readers per disk, staggered evenly over the disk (1
    /// except in the seek-stress pass).
    pub readers: usize,
    /// Sample passes: spots the window is spread over (1: the start only).
    pub spots: u32,
    /// A sampled serial pass: the slices each disk's sample is read in,
    /// interleaved with the other disks' (1: each disk's sample at once).
    pub slices: u32,
}

impl PassSpec {
    /// How long each group of disks it reads on `n` disks lasts, in order
    /// (None: a whole-disk read): one per disk and slice in a serial pass,
    /// one for a parallel or seek pass.
    pub fn groups(&self, n: usize) -> Vec<Option<Duration>> {
        match (self.kind, self.window) {
            (PassKind::Serial, w) if self.slices > 1 => {
                vec![w.length().map(|d| d / self.slices); n * self.slices as usize]
            }
            (PassKind::Serial, w) => vec![w.length(); n],
            (_, w) => vec![w.length()],
        }
    }

    /// The job of reader `reader` of `readers` on disk `disk` (staggered
    /// evenly over it), through a fresh sweep.
    fn job(
        &self,
        g: Geometry,
        disk: usize,
        (reader, readers): (usize, usize),
        sweeps: &SweepFactory,
    ) -> std::io::Result<ReadJob> {
        let (mut sweep, probe) = sweeps(disk)?;
        let buffers = sweep.discard_buffers(sweep.depth(), self.block as usize);
        Ok(ReadJob {
            origin: fraction_of(g.size, reader as u64, readers as u64),
            spots: self.spots,
            spot: 0,
            spread: (Duration::ZERO, self.window.length().unwrap_or(self.sample)),
            known: Vec::new(),
            settle: Duration::ZERO,
            disk,
            sweep,
            probe,
            buffers,
            size: g.size,
            until: g.size,
            logical_block: g.logical_block,
            block: self.block,
            window: self.window,
            sample: self.sample,
            max_errors: self.max_errors,
            slow_read: self.slow_read,
            stall: self.stall,
            buckets: g.buckets,
        })
    }
}

/// Runs one pass over `geometry.len()` disks: one at a time for serial, all
/// together for parallel. Stops early (marked interrupted) on `stop`.
pub fn run_pass(
    spec: PassSpec,
    geometry: &[Geometry],
    sweeps: &SweepFactory,
    stop: &StopFlag,
    observer: &mut dyn Observer,
) -> std::io::Result<PassRun> {
    if spec.kind == PassKind::Serial && spec.slices > 1 {
        return run_slices(spec, (geometry, sweeps), stop, observer);
    }
    let (started_at, t0) = (SystemTime::now(), Instant::now());
    let readers = spec.readers.max(1);
    let groups: Vec<Vec<usize>> = match spec.kind {
        PassKind::Serial => (0..geometry.len()).map(|d| vec![d]).collect(),
        PassKind::Parallel | PassKind::Seek => vec![(0..geometry.len()).collect()],
    };
    let mut disks = Vec::new();
    for group in groups {
        if stop.is_set() {
            break;
        }
        let mut jobs = group
            .iter()
            .flat_map(|&d| (0..readers).map(move |r| (d, r)))
            .map(|(d, r)| spec.job(geometry[d], d, (r, readers), sweeps))
            .collect::<std::io::Result<Vec<_>>>()?;
        disks.extend(group.into_iter().zip(run_group(spec.kind, &mut jobs, stop, observer)));
    }
    Ok(ended(&spec, (started_at, t0), disks, Vec::new(), stop))
}

/// The pass as measured, now that it ended (a stop cut it short when it is
/// set).
fn ended(
    spec: &PassSpec,
    (started_at, t0): (SystemTime, Instant),
    disks: Vec<(usize, DiskRun)>,
    slices: Vec<Slice>,
    stop: &StopFlag,
) -> PassRun {
    let (kind, window, interrupted, elapsed) =
        (spec.kind, spec.window, stop.is_set(), t0.elapsed());
    PassRun { kind, window, started_at, elapsed, disks, interrupted, slices }
}

/// A serial pass read in `spec.slices` rounds: each round reads every disk
/// alone for its share of the sample (a full pass: of the disk, round `k`
/// its `k`-th part), in the order of [`round_order`], each slice going on
/// where the disk's last one stopped. A slow change of shared conditions
/// (another pool's load, a throttling controller) then falls on every disk
/// alike instead of on the disks read while it lasted. A disk whose read
/// stopped (failed reads, gone, hung) is not read again.
fn run_slices(
    spec: PassSpec,
    (geometry, sweeps): (&[Geometry], &SweepFactory),
    stop: &StopFlag,
    observer: &mut dyn Observer,
) -> std::io::Result<PassRun> {
    let (started_at, t0) = (SystemTime::now(), Instant::now());
    let mut s = Slicer::new(spec, geometry.len(), t0);
    'rounds: for round in 0..spec.slices {
        for d in round_order(geometry.len(), round, spec.slices) {
            if stop.is_set() {
                break 'rounds;
            }
            s.read(&[d], round, (geometry, sweeps), stop, observer)?;
        }
    }
    let disks = s.runs.into_iter().enumerate().filter_map(|(d, r)| Some((d, r?))).collect();
    Ok(ended(&spec, (started_at, t0), disks, s.slices, stop))
}

/// The least of a serial slice's start left out as its warm-up: blk-throttle
/// and a drive's head need about this long after the disk idled (0.5 s
/// slices under a throttle scattered by 20 % with 50 ms left out).
const SETTLE: Duration = Duration::from_millis(150);

/// Reads disks a slice at a time (alone, or several together), each slice
/// going on where the disk's last one stopped, and keeps the slices and
/// each disk's run.
struct Slicer {
    /// The pass, and the spec of one slice.
    spec: PassSpec,
    part: PassSpec,
    t0: Instant,
    runs: Vec<Option<DiskRun>>,
    slices: Vec<Slice>,
    /// Each disk's job, opened at its first slice and read through again
    /// (one ring and one set of registered buffers per disk and pass: a
    /// ring torn down per slice would tear down in the kernel's workers
    /// while the next disk reads).
    jobs: Vec<Option<ReadJob>>,
}

impl Slicer {
    fn new(spec: PassSpec, n: usize, t0: Instant) -> Self {
        let each = spec.sample / spec.slices.max(1);
        let part = match spec.window {
            Window::Full => spec,
            Window::Sample(_) => PassSpec { window: Window::Sample(each), sample: each, ..spec },
        };
        let (runs, jobs) = ((0..n).map(|_| None).collect(), (0..n).map(|_| None).collect());
        Self { spec, part, t0, runs, slices: Vec::new(), jobs }
    }

    /// Reads the slice of round `round` of disks `ds` together (one disk:
    /// alone), leaving out a disk whose read stopped (failed reads, gone,
    /// hung).
    fn read(
        &mut self,
        ds: &[usize],
        round: u32,
        (geometry, sweeps): (&[Geometry], &SweepFactory),
        stop: &StopFlag,
        observer: &mut dyn Observer,
    ) -> std::io::Result<()> {
        let stopped = |d: &usize| self.runs[*d].as_ref().is_some_and(|r| r.stopped.is_some());
        let ds: Vec<usize> = ds.iter().copied().filter(|d| !stopped(d)).collect();
        let mut jobs = Vec::with_capacity(ds.len());
        for &d in &ds {
            jobs.push(self.job(d, round, geometry[d], sweeps)?);
        }
        if jobs.is_empty() {
            return Ok(());
        }
        let at = self.t0.elapsed();
        let runs = run_group(self.spec.kind, &mut jobs, stop, observer);
        for ((d, job), run) in ds.into_iter().zip(jobs).zip(runs) {
            self.jobs[d] = Some(job);
            self.slices.push(Slice {
                disk: d,
                round,
                at,
                elapsed: run.elapsed,
                window: run.window,
            });
            let merged = match self.runs[d].take() {
                Some(b) => self.then(b, run),
                None => run,
            };
            self.runs[d] = Some(merged);
        }
        Ok(())
    }

    /// A disk's run so far followed by its next slice. A full pass's window
    /// is its first `--sample` of reading (as read at once, the zone a
    /// sampled pass compares): later slices add to it only until it is.
    fn then(&self, before: DiskRun, next: DiskRun) -> DiskRun {
        let window = before.window;
        let merged = before.then(next);
        match self.spec.window {
            Window::Full if window.1 >= self.spec.sample => DiskRun { window, ..merged },
            _ => merged,
        }
    }

    /// Disk `d`'s job for its slice of round `round`: opened at its first
    /// slice, then going on where its last slice stopped.
    fn job(
        &mut self,
        d: usize,
        round: u32,
        g: Geometry,
        sweeps: &SweepFactory,
    ) -> std::io::Result<ReadJob> {
        let mut job = match self.jobs[d].take() {
            Some(job) => job,
            None => self.part.job(g, d, (0, 1), sweeps)?,
        };
        let before = self.runs[d].as_ref();
        let resume = before.map(|r| r.resume.clone()).unwrap_or_default();
        // --max-errors counts the disk's failed reads over the whole pass.
        job.max_errors = self.spec.max_errors.saturating_sub(before.map_or(0, |r| r.failed_reads));
        let read_before = self.part.sample * (round % self.spec.slices);
        (job.origin, job.spot, job.spread) =
            (resume.offset, resume.spot, (read_before, self.spec.sample));
        job.known = resume.known;
        job.settle = super::worker::warm_up(self.part.sample).max(SETTLE);
        job.until = self.until(round, g);
        Ok(job)
    }

    /// Where a slice of round `round` ends: a full pass's `round`-th part
    /// of the disk ends on a read's boundary (the last part at its end); a
    /// sample reads on to the disk's end and starts again.
    fn until(&self, round: u32, g: Geometry) -> u64 {
        let n = self.spec.slices;
        if self.spec.window != Window::Full || round + 1 >= n {
            return g.size;
        }
        let part = fraction_of(g.size, u64::from(round + 1), u64::from(n));
        part / self.spec.block * self.spec.block
    }
}

/// What a re-measurement read: its slices, and each disk's run over them.
pub struct Remeasurement {
    pub slices: Vec<Slice>,
    pub runs: Vec<(usize, DiskRun)>,
}

/// Disk `disk` re-measured before its verdict, in batches of
/// `spec.slices` rounds (at least 4) until `decided` says the slices so
/// far are enough, three batches at most. Beside a peer, each round reads
/// the disk alone and then the peer alone (A-B-A-B); beside all, each
/// round reads every disk together, as the parallel pass did. `spec` is
/// the pass whose verdict is checked. Returns the slices, their `at` from
/// the start of the re-measurement, and each disk's run over them (its
/// failed reads, a hang); a disk whose reads stop (failed, hung, gone) is
/// not read again, and a re-measurement where the disk's did ends there.
pub fn remeasure(
    spec: PassSpec,
    (disk, beside): (usize, Beside),
    (geometry, sweeps): (&[Geometry], &SweepFactory),
    stop: &StopFlag,
    observer: &mut dyn Observer,
    decided: &dyn Fn(&[Slice]) -> bool,
) -> std::io::Result<Remeasurement> {
    let steps: Vec<Vec<usize>> = match beside {
        Beside::Peer(peer) => vec![vec![disk], vec![peer]],
        Beside::All => vec![(0..geometry.len()).collect()],
    };
    let batch = spec.slices.max(4);
    // Sampled even after a full pass: the re-measurement compares speeds.
    let spec = PassSpec { slices: batch, window: Window::Sample(spec.sample), ..spec };
    let mut s = Slicer::new(spec, geometry.len(), Instant::now());
    let over = |s: &Slicer| s.runs[disk].as_ref().is_some_and(|r| r.stopped.is_some());
    'rounds: for round in 0..3 * batch {
        for ds in &steps {
            if stop.is_set() || over(&s) {
                break 'rounds;
            }
            s.read(ds, round, (geometry, sweeps), stop, observer)?;
        }
        if (round + 1) % batch == 0 && decided(&s.slices) {
            break;
        }
    }
    let runs = s.runs.into_iter().enumerate().filter_map(|(d, r)| Some((d, r?))).collect();
    Ok(Remeasurement { slices: s.slices, runs })
}

/// What reading a group again read: its rounds alone, its rounds beside
/// every disk, and each disk's run over them.
pub struct GroupRemeasurement {
    pub alone: Vec<Slice>,
    pub together: Vec<Slice>,
    pub runs: Vec<(usize, DiskRun)>,
}

/// A group of disks that lost speed together in the parallel pass read
/// again before it is named (`judge::groups`): each round reads the group
/// alone, then every disk together, as the parallel pass did, in batches
/// of `spec.slices` rounds (at least 4) until `decided` says the rounds so
/// far are enough (alone, together), three batches at most.
pub fn remeasure_group(
    spec: PassSpec,
    group: &[usize],
    (geometry, sweeps): (&[Geometry], &SweepFactory),
    stop: &StopFlag,
    observer: &mut dyn Observer,
    decided: &dyn Fn(&[Slice], &[Slice]) -> bool,
) -> std::io::Result<GroupRemeasurement> {
    let all: Vec<usize> = (0..geometry.len()).collect();
    let batch = spec.slices.max(4);
    let spec = PassSpec { slices: batch, window: Window::Sample(spec.sample), ..spec };
    let mut s = Slicer::new(spec, geometry.len(), Instant::now());
    let (mut alone, mut together) = (Vec::new(), Vec::new());
    'rounds: for round in 0..3 * batch {
        for (ds, into) in [(group, &mut alone), (all.as_slice(), &mut together)] {
            if stop.is_set() {
                break 'rounds;
            }
            let before = s.slices.len();
            s.read(ds, round, (geometry, sweeps), stop, observer)?;
            into.extend(s.slices.drain(before..));
        }
        if (round + 1) % batch == 0 && decided(&alone, &together) {
            break;
        }
    }
    let runs = s.runs.into_iter().enumerate().filter_map(|(d, r)| Some((d, r?))).collect();
    Ok(GroupRemeasurement { alone, together, runs })
}

/// The order the disks are read in round `round` of `rounds`: each pair of
/// rounds reads them forwards, then backwards (so every disk's average
/// place in time is the middle of the round, and a steady drift of shared
/// conditions favours none), each pair starting at another disk.
pub fn round_order(n: usize, round: u32, rounds: u32) -> Vec<usize> {
    let pairs = rounds.div_ceil(2).max(1) as usize;
    let start = (round / 2) as usize * n / pairs;
    let forwards = (0..n).map(|i| (start + i) % n);
    if round.is_multiple_of(2) { forwards.collect() } else { forwards.rev().collect() }
}

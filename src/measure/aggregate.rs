//! Running a pass: one thread per job, released together by a barrier;
//! the calling thread aggregates their events and feeds the [`Observer`].

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{select, tick, unbounded};

use super::worker::ReadJob;
use super::{DiskRun, PassKind, PassRun, ReadError, Window};
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
/// readers, are merged into one).
pub fn run_group(
    kind: PassKind,
    jobs: Vec<ReadJob>,
    stop: &StopFlag,
    observer: &mut dyn Observer,
) -> Vec<DiskRun> {
    let group = Group::of(&jobs);
    let counters: Vec<AtomicU64> = jobs.iter().map(|_| AtomicU64::new(0)).collect();
    let barrier = Barrier::new(jobs.len() + 1);
    let (tx, rx) = unbounded();
    let mut runs: Vec<Option<DiskRun>> = (0..jobs.len()).map(|_| None).collect();
    observer.group_started(kind, &group.disks);
    std::thread::scope(|s| {
        for (slot, job) in jobs.into_iter().enumerate() {
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
    /// Read size in bytes.
    pub block: u64,
    /// Concurrent readers per disk, staggered evenly over the disk (1
    /// except in the seek-stress pass).
    pub readers: usize,
    /// Sample passes: spots the window is spread over (1: the start only).
    pub spots: u32,
}

impl PassSpec {
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
        let buffers = sweep.buffers(sweep.depth(), self.block as usize);
        Ok(ReadJob {
            origin: fraction_of(g.size, reader as u64, readers as u64),
            spots: self.spots,
            disk,
            sweep,
            probe,
            buffers,
            size: g.size,
            logical_block: g.logical_block,
            block: self.block,
            window: self.window,
            sample: self.sample,
            max_errors: self.max_errors,
            slow_read: self.slow_read,
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
        let jobs = group
            .iter()
            .flat_map(|&d| (0..readers).map(move |r| (d, r)))
            .map(|(d, r)| spec.job(geometry[d], d, (r, readers), sweeps))
            .collect::<std::io::Result<Vec<_>>>()?;
        disks.extend(group.into_iter().zip(run_group(spec.kind, jobs, stop, observer)));
    }
    let (kind, window, interrupted) = (spec.kind, spec.window, stop.is_set());
    Ok(PassRun { kind, window, started_at, elapsed: t0.elapsed(), disks, interrupted })
}

//! Random reads (`check --random`): each disk read at random places over
//! its whole surface, `block` bytes each, `depth` requests in flight, for
//! a bounded time; every read's latency kept. Each disk alone at each
//! depth, then every disk at once at each depth: a drive that retries
//! internally answers with a long tail, a drive whose queueing is off
//! gains nothing from the deep queue.
//!
//! It measures; it must not judge (`judge::random`).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand_mt::Mt64;
use serde::{Deserialize, Serialize};

use super::Stopped;
use super::results::latency_histogram;
use crate::device::buffer::Chunks;
use crate::io::{Direction, Halt, Sweep, Until};
use crate::stop::StopFlag;

/// What is read at random, and for how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RandomSpec {
    /// Bytes per read (a multiple of the disks' logical blocks).
    pub block: u64,
    /// The depths each disk is read at, in order (1, then the deep one
    /// where the engine keeps more than one in flight).
    pub depths: Vec<usize>,
    /// How long each disk is read at each depth, alone and together.
    pub length: Duration,
}

/// One disk's random reads at one depth.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RandomRun {
    /// Requests kept in flight (the engine's: psync keeps one).
    pub depth: usize,
    /// Reads that came back whole, and reads that failed.
    pub reads: u64,
    pub failed: u64,
    /// From the first read's start to the last one's end.
    pub seconds: f64,
    /// Latency of every whole read, in nanoseconds.
    #[serde(with = "super::results::recorded_latencies")]
    pub latency_ns: Histogram<u64>,
    /// Why it ended before its time: a stop, a hang, the device gone.
    pub stopped: Option<Stopped>,
    /// Why it was not read at all: its sweep could not be opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unopened: Option<String>,
}

impl RandomRun {
    /// Whole reads per second (None: nothing read).
    pub fn iops(&self) -> Option<f64> {
        (self.reads > 0 && self.seconds > 0.0).then(|| self.reads as f64 / self.seconds)
    }

    /// A read that landed, counted whole (its latency kept) or failed.
    fn count(&mut self, landed: &crate::io::Landed) {
        match landed.done.whole() {
            Ok(()) => {
                self.reads += 1;
                let ns = landed.took().as_nanos().clamp(1, u128::from(u64::MAX)) as u64;
                let _ = self.latency_ns.record(ns);
            }
            Err(e) if crate::io::is_gone(&e) => {
                self.failed += 1;
                self.stopped = Some(Stopped::DeviceGone);
            }
            // Refused because the disk hung before (its bound says so): no
            // media error, a disk not answering.
            Err(e) if crate::io::is_hung(&e) => self.stopped = Some(Stopped::Hung),
            Err(_) => self.failed += 1,
        }
    }

    /// A run at `depth` with nothing read yet.
    pub fn new(depth: usize) -> Self {
        RandomRun {
            depth,
            reads: 0,
            failed: 0,
            seconds: 0.0,
            latency_ns: latency_histogram(),
            stopped: None,
            unopened: None,
        }
    }
}

/// One disk's random reads: alone, then beside every other disk, each at
/// the spec's depths in order (a stop leaves the rest out).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RandomDisk {
    pub alone: Vec<RandomRun>,
    pub together: Vec<RandomRun>,
    /// Reads of it alone again, each at the depth where one of its two
    /// reads showed a finding and the other did not: what decides it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub again: Vec<RandomRun>,
    /// An NVMe drive's own latency log, asked after its reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_log: Option<crate::device::latency_log::DriveLog>,
}

/// What the random reads read: the spec and each disk's runs (in the
/// check's disk order).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RandomRead {
    pub spec: RandomSpec,
    pub disks: Vec<RandomDisk>,
}

/// Opens disk `d`'s sweep with `depth` requests in flight.
pub type RandomSweeps<'a> = dyn Fn(usize, usize) -> std::io::Result<Sweep> + Sync + 'a;

/// Reads each disk of `sizes` (bytes) alone at each depth, then all at
/// once at each depth; `note` says what starts. A stop ends it with what
/// was read.
pub fn random_pass(
    spec: &RandomSpec,
    sizes: &[u64],
    open: &RandomSweeps,
    stop: &StopFlag,
    note: &mut dyn FnMut(Option<usize>, usize),
) -> RandomRead {
    let mut disks: Vec<RandomDisk> = sizes.iter().map(|_| RandomDisk::default()).collect();
    let one = |d: usize, depth: usize, round: u64| {
        read_disk(spec.block, (d, sizes[d]), (depth, spec.length, round), open, stop)
    };
    for d in 0..sizes.len() {
        for &depth in &spec.depths {
            if stop.is_set() {
                return RandomRead { spec: spec.clone(), disks };
            }
            note(Some(d), depth);
            disks[d].alone.push(one(d, depth, 0));
        }
    }
    for &depth in &spec.depths {
        if stop.is_set() || sizes.len() < 2 {
            break;
        }
        note(None, depth);
        let runs: Vec<RandomRun> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..sizes.len())
                .map(|d| {
                    let one = &one;
                    s.spawn(move || one(d, depth, 1))
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a random reader")).collect()
        });
        for (disk, run) in disks.iter_mut().zip(runs) {
            disk.together.push(run);
        }
    }
    RandomRead { spec: spec.clone(), disks }
}

/// Disk `d` of `size` bytes read at random, `block` bytes a read, at
/// `depth` for `length`, its places from `round` (each round of a disk
/// and depth its own places); a disk that cannot be opened is a run not
/// read, saying why.
pub fn read_disk(
    block: u64,
    (d, size): (usize, u64),
    (depth, length, round): (usize, Duration, u64),
    open: &RandomSweeps,
    stop: &StopFlag,
) -> RandomRun {
    match open(d, depth) {
        Ok(mut sweep) => {
            random_reads(&mut sweep, (0, size), (block, length, seed(d, depth, round)), stop)
        }
        Err(e) => RandomRun {
            unopened: Some(format!("it could not be opened at depth {depth}: {e}")),
            ..RandomRun::new(depth)
        },
    }
}

/// The places a disk's reads go: another sequence for each disk, depth
/// and round, the same from run to run.
fn seed(disk: usize, depth: usize, round: u64) -> u64 {
    0x5eed_0000 ^ ((disk as u64) << 32) ^ ((depth as u64) << 8) ^ round
}

/// Reads `sweep`'s disk at random places over `[start, end)` for
/// `length`, `block` bytes each (aligned to `block`), keeping the sweep's
/// depth in flight; `seed` makes the places.
pub fn random_reads(
    sweep: &mut Sweep,
    (start, end): (u64, u64),
    (block, length, seed): (u64, Duration, u64),
    stop: &StopFlag,
) -> RandomRun {
    let depth = sweep.depth();
    let mut rng = Mt64::new(seed);
    let blocks = ((end - start) / block).max(1);
    let mut at = || {
        let from = start + rng.next_u64() % blocks * block;
        Chunks::span(from, from + block, block).next().expect("a block")
    };
    let mut run = RandomRun::new(depth);
    let mut free = sweep.discard_buffers(depth, block as usize);
    let began = Instant::now();
    let mut last = began;
    loop {
        let in_time = began.elapsed() < length && !stop.is_set() && run.stopped.is_none();
        while in_time && sweep.room() {
            let Some(buf) = free.pop() else { break };
            sweep.start(Direction::Read, buf, at());
        }
        let landed = match sweep.next_any(Until::Stop) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(halt) => {
                run.stopped = Some(match halt {
                    Halt::Hung => Stopped::Hung,
                    Halt::Stopped | Halt::Late => Stopped::Interrupted,
                });
                sweep.abandon(Duration::from_secs(1));
                break;
            }
        };
        last = landed.done.ended.max(last);
        run.count(&landed);
        free.push(landed.done.buf);
    }
    if stop.is_set() && run.stopped.is_none() {
        run.stopped = Some(Stopped::Interrupted);
    }
    run.seconds = last.saturating_duration_since(began).as_secs_f64();
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iops_are_whole_reads_over_the_time() {
        let mut run = RandomRun::new(1);
        (run.reads, run.failed, run.seconds) = (500, 3, 2.0);
        assert_eq!(run.iops(), Some(250.0));
        run.reads = 0;
        assert_eq!(run.iops(), None);
    }

    #[test]
    fn seeds_differ_by_disk_depth_and_round() {
        let all = [seed(0, 1, 0), seed(1, 1, 0), seed(0, 32, 0), seed(0, 1, 1)];
        let set: std::collections::BTreeSet<u64> = all.into_iter().collect();
        assert_eq!(set.len(), 4);
    }
}

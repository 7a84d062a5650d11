//! The neighbour pass (`check --vibration`): each disk's random reads at
//! depth 1 alone, then again while its neighbours (the slots beside it;
//! without a slot map, every other disk) read at random too, so their
//! heads seek. A spinning drive in a bay that passes its neighbours'
//! vibration on loses random reads; its own figures alone say what it
//! reads without them.
//!
//! It measures; it must not judge (`judge::vibration`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::random::{RandomRun, RandomSpec, RandomSweeps, read_disk};
use crate::stop::StopFlag;

/// Requests each neighbour keeps in flight while it seeks (the engine's:
/// psync keeps one).
pub const LOAD_DEPTH: usize = 4;
/// The neighbours start this long before the disk's reads, and read this
/// long after them: the disk's whole time is read under their load.
pub const LOAD_LEAD: Duration = Duration::from_millis(500);

/// One disk's reads alone and beside its seeking neighbours.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShakeRun {
    /// The disks that sought meanwhile (indices in the check's order).
    pub neighbours: Vec<usize>,
    pub alone: RandomRun,
    /// None: a stop came first.
    pub loaded: Option<RandomRun>,
}

/// What the neighbour pass read: the spec (its depth-1 reads and time)
/// and each disk's runs, in the check's order (a stop leaves the rest
/// out).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShakeRead {
    pub spec: RandomSpec,
    pub disks: Vec<ShakeRun>,
}

/// Reads each disk of `sizes` alone, then while `neighbours[d]` seek;
/// `note` says which disk starts. A stop ends it with what was read.
pub fn vibration_pass(
    spec: &RandomSpec,
    (sizes, neighbours): (&[u64], &[Vec<usize>]),
    open: &RandomSweeps,
    stop: &StopFlag,
    note: &mut dyn FnMut(usize),
) -> ShakeRead {
    let read = |d: usize, depth: usize, (length, round): (Duration, u64), stop: &StopFlag| {
        read_disk(spec.block, (d, sizes[d]), (depth, length, round), open, stop)
    };
    let mut disks = Vec::new();
    for (d, near) in neighbours.iter().enumerate() {
        if stop.is_set() {
            break;
        }
        note(d);
        let alone = read(d, 1, (spec.length, 2), stop);
        let loaded = (!stop.is_set()).then(|| {
            std::thread::scope(|s| {
                for &n in near {
                    let read = &read;
                    s.spawn(move || read(n, LOAD_DEPTH, (spec.length + LOAD_LEAD * 2, 3), stop));
                }
                stop.rest(LOAD_LEAD);
                read(d, 1, (spec.length, 4), stop)
            })
        });
        disks.push(ShakeRun { neighbours: near.clone(), alone, loaded });
    }
    ShakeRead { spec: spec.clone(), disks }
}

//! `arrayburn watch`: disks in service read through the kernel's own
//! counters every interval (`device::diskstats`; no I/O of its own, no
//! disk opened), each window judged against the disk's peers at a similar
//! load (`judge::watch`), what starts and ends handed to the caller.
//!
//! Peers are disks of one model, size and kind, and of one pool where the
//! kernel says so (the md array or device-mapper volume that holds them):
//! never across pools, whose workloads differ.
//!
//! It must not print or write files (the command does) and must not
//! resolve flags.

use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::device::SystemPaths;
use crate::device::diskstats::{self, Counters, Window};
use crate::judge::watch::{FailSlow, Load, Standing, fail_slow, window};
use crate::stop::StopFlag;

/// A disk watched: as named, its kernel name, its peer group.
#[derive(Debug, Clone, Serialize)]
pub struct Watched {
    pub path: String,
    pub name: String,
    pub group: usize,
    /// The pool that holds it, where the kernel names one (`md0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
}

/// Peer groups of `devices`: model, size and kind, and the holders the
/// kernel names (md, device-mapper): disks of two arrays are never peers.
pub fn groups(devices: &[crate::device::BlockDevice]) -> Vec<(usize, Option<String>)> {
    let pool = |d: &crate::device::BlockDevice| {
        let mut held: Vec<String> = (d.in_use.iter())
            .filter_map(|u| match u {
                crate::device::usage::InUse::HeldBy { holder, .. } => Some(holder.clone()),
                _ => None,
            })
            .collect();
        held.sort();
        held.dedup();
        (!held.is_empty()).then(|| held.join("+"))
    };
    let kinds = crate::judge::peers::peer_groups(devices);
    let mut seen: Vec<(usize, Option<String>)> = Vec::new();
    (devices.iter().zip(kinds))
        .map(|(d, k)| {
            let key = (k, pool(d));
            let g = seen.iter().position(|s| *s == key).unwrap_or_else(|| {
                seen.push(key.clone());
                seen.len() - 1
            });
            (g, key.1)
        })
        .collect()
}

/// One disk in one window.
#[derive(Debug, Clone, Serialize)]
pub struct DiskWindow {
    pub path: String,
    /// Its counters' window; None where the disk is gone.
    pub window: Option<Window>,
    pub read: Standing,
    pub write: Standing,
}

/// What began or ended in a window.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Fail-slow in a direction: since when, how much.
    FailSlow { path: String, direction: &'static str, since: String, found: FailSlow },
    /// It no longer stands out.
    Ended { path: String, direction: &'static str },
    /// The kernel no longer shows it.
    Gone { path: String },
}

/// One window of every disk, and what began or ended in it.
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    /// When it ended (RFC 3339), and its length (s).
    pub at: String,
    pub secs: f64,
    pub disks: Vec<DiskWindow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
}

/// How a watch runs: each window this long, a disk named after `span`
/// windows of standing out, at most `count` windows.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub interval: Duration,
    pub span: usize,
    pub count: Option<u64>,
}

/// The longest history kept per disk and direction (windows): a watch of
/// months keeps what its rule reads, not every window.
const KEEP: usize = 4096;

/// Watches `disks` until a stop or `pace.count` windows, handing each
/// window to `tick` (false from it ends the watch). The disks named
/// fail-slow at the end.
pub fn watch(
    paths: &SystemPaths,
    disks: &[Watched],
    pace: Pace,
    stop: &StopFlag,
    tick: &mut dyn FnMut(&Tick) -> bool,
) -> Vec<String> {
    let groups: Vec<usize> = disks.iter().map(|d| d.group).collect();
    let read = |d: &Watched| diskstats::read(paths, &d.name);
    let mut last: Vec<Option<Counters>> = disks.iter().map(read).collect();
    let mut taken = Instant::now();
    let mut history: Vec<[Vec<Standing>; 2]> = disks.iter().map(|_| Default::default()).collect();
    let mut named: Vec<[Option<FailSlow>; 2]> = vec![[None, None]; disks.len()];
    let mut starts: Vec<SystemTime> = Vec::new();
    let mut n = 0u64;
    while pace.count.is_none_or(|c| n < c) && stop.rest(pace.interval) {
        let now: Vec<Option<Counters>> = disks.iter().map(read).collect();
        let secs = taken.elapsed().as_secs_f64();
        taken = Instant::now();
        starts.push(SystemTime::now() - Duration::from_secs_f64(secs));
        let windows: Vec<Option<Window>> = (last.iter().zip(&now))
            .map(|(a, b)| Some(diskstats::window(a.as_ref()?, b.as_ref()?, secs)))
            .collect();
        let load = |pick: fn(&Window) -> crate::device::diskstats::Flow| -> Vec<Load> {
            (windows.iter())
                .map(|w| {
                    w.map_or(Load::default(), |w| {
                        let f = pick(&w);
                        Load { ops_per_s: f.ops_per_s, ms: f.ms }
                    })
                })
                .collect()
        };
        let standing = [window(&load(|w| w.read), &groups), window(&load(|w| w.write), &groups)];
        let mut events = Vec::new();
        for (i, d) in disks.iter().enumerate() {
            if windows[i].is_none() && last[i].is_some() {
                events.push(Event::Gone { path: d.path.clone() });
            }
            for (k, direction) in ["read", "write"].into_iter().enumerate() {
                let h = &mut history[i][k];
                h.push(standing[k][i]);
                if h.len() > KEEP {
                    h.drain(..h.len() - KEEP);
                }
                let found = fail_slow(h, pace.span);
                match (named[i][k], found) {
                    (None, Some(f)) => {
                        let at = starts.len().saturating_sub(h.len()) + f.since;
                        let since = crate::units::rfc3339(starts[at.min(starts.len() - 1)]);
                        let path = d.path.clone();
                        events.push(Event::FailSlow { path, direction, since, found: f });
                    }
                    (Some(_), None) => {
                        events.push(Event::Ended { path: d.path.clone(), direction })
                    }
                    _ => {}
                }
                named[i][k] = found;
            }
        }
        if starts.len() > KEEP {
            starts.drain(..starts.len() - KEEP);
        }
        let t = Tick {
            at: crate::units::rfc3339(SystemTime::now()),
            secs,
            disks: (disks.iter().zip(&windows).enumerate())
                .map(|(i, (d, w))| DiskWindow {
                    path: d.path.clone(),
                    window: *w,
                    read: standing[0][i],
                    write: standing[1][i],
                })
                .collect(),
            events,
        };
        last = now;
        n += 1;
        if !tick(&t) {
            break;
        }
    }
    (disks.iter().zip(&named))
        .filter(|(_, f)| f.iter().any(Option::is_some))
        .map(|(d, _)| d.path.clone())
        .collect()
}

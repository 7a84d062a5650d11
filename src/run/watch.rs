//! `arrayburn watch`: disks in service read through the kernel's own
//! counters every interval (`device::diskstats`; no I/O of its own, no
//! disk opened), each window judged against the disk's peers at a similar
//! load (`judge::watch`), what starts and ends handed to the caller.
//!
//! Peers are disks of one model, size and kind, and of one pool where the
//! system says so (`device::pools`: md, LVM, Ceph, ZFS): never across
//! pools, whose workloads differ.
//!
//! It must not print or write files (the command does) and must not
//! resolve flags.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::device::SystemPaths;
use crate::device::diskstats::{self, Counters, Flow, Window};
use crate::judge::watch::{Change, DIRECTIONS, FailSlow, Load, Standing, Tracker};
use crate::stop::StopFlag;

/// A disk watched: as named, its peer group.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Watched {
    pub path: String,
    pub group: usize,
    /// The pool that holds it, where the kernel names one (`md0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// What sysfs says of it (its kernel name; model, serial, WWN: the
    /// metrics' labels).
    #[serde(rename = "identity")]
    pub id: crate::device::Identity,
}

/// Peer groups of `devices`: model, size and kind, and the pool that
/// holds each (`device::pools`: md, LVM, Ceph, and ZFS from `zfs`, the
/// leaves `zpool status -P` names with their pools): disks of two pools
/// are never peers.
pub fn groups(
    paths: &SystemPaths,
    devices: &[crate::device::BlockDevice],
    zfs: &[(String, String)],
) -> Vec<(usize, Option<String>)> {
    use crate::device::pools;
    let in_zfs: Vec<(String, &String)> =
        zfs.iter().filter_map(|(leaf, pool)| Some((pools::disk_of(paths, leaf)?, pool))).collect();
    let pool = |d: &crate::device::BlockDevice| {
        let name = &d.identity.name;
        let zfs = in_zfs.iter().find(|(n, _)| n == name).map(|(_, p)| (*p).clone());
        zfs.or_else(|| pools::of(paths, name))
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

/// The first line a watch writes to its JSON lines: the run's header
/// (`kind` `watch`), its pace and its disks with their peer groups.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Start {
    #[serde(flatten)]
    pub header: crate::header::Header,
    pub interval_s: f64,
    pub for_s: f64,
    pub disks: Vec<Watched>,
}

/// One disk in one window.
#[derive(Debug, Clone, Serialize)]
pub struct DiskWindow {
    pub path: String,
    /// Its peer group (disks of one group are compared, no others).
    pub group: usize,
    /// Its counters' window; None where the disk is gone.
    pub window: Option<Window>,
    pub read: Standing,
    pub write: Standing,
    /// The kernel's count of its failed commands since boot, where it
    /// keeps one (`device/ioerr_cnt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// How often in this watch so far it was compared with its peers (a
    /// window compared in both directions counts twice): 0, and its health
    /// is not claimed.
    pub compared: u64,
}

/// What began or ended in a window.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Fail-slow in a direction: since when, how much.
    FailSlow { path: String, direction: &'static str, since: String, found: FailSlow },
    /// It no longer stands out.
    Ended { path: String, direction: &'static str },
    /// A whole group slow together against its own first windows: its
    /// path or its workload, not a disk.
    GroupSlow {
        paths: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pool: Option<String>,
        direction: &'static str,
        since: String,
        found: FailSlow,
        baseline_ms: f64,
        now_ms: f64,
    },
    /// The group is back near its first windows' latency.
    GroupEnded { paths: Vec<String>, direction: &'static str },
    /// The kernel no longer shows it.
    Gone { path: String },
    /// The kernel counted failed commands on it (`device/ioerr_cnt`):
    /// `new` in this window, `errors` since boot.
    Errors { path: String, new: u64, errors: u64 },
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
    /// The findings standing after it (fail-slow, slow together, gone):
    /// what the metrics say, not a line's.
    #[serde(skip)]
    pub open: Vec<Event>,
}

/// How a watch runs: each window this long, a disk named after `span`
/// windows of standing out, at most `count` windows.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub interval: Duration,
    pub span: usize,
    pub count: Option<u64>,
}

/// A disk's counters and its failed commands, as read at one time.
type Reading = (Option<Counters>, Option<u64>);

/// Every disk's counters (one read of `/proc/diskstats`) and failed
/// commands (read only of the disks whose kernel counts them,
/// `counted`), as read now.
fn readings(paths: &SystemPaths, disks: &[Watched], counted: &[bool]) -> Vec<Reading> {
    let all = diskstats::read_all(paths);
    (disks.iter().zip(counted))
        .map(|(d, &counted)| {
            let c = all.get(&d.id.name).copied();
            (c, c.filter(|_| counted).and_then(|_| diskstats::errors(paths, &d.id.name)))
        })
        .collect()
}

/// How a watch ended: the disks fail-slow then, and those never compared
/// with their peers, each with why (their health is not claimed).
#[derive(Debug, Clone, Default)]
pub struct Watch {
    pub named: Vec<String>,
    pub unjudged: Vec<(String, &'static str)>,
}

/// Watches `disks` until a stop or `pace.count` windows, handing each
/// window to `tick` (false from it ends the watch).
pub fn watch(
    paths: &SystemPaths,
    disks: &[Watched],
    pace: Pace,
    stop: &StopFlag,
    tick: &mut dyn FnMut(&Tick) -> bool,
) -> Watch {
    let groups: Vec<usize> = disks.iter().map(|d| d.group).collect();
    let mut tracker = Tracker::new(&groups, pace.span);
    let counted: Vec<bool> =
        disks.iter().map(|d| diskstats::errors(paths, &d.id.name).is_some()).collect();
    let mut last = readings(paths, disks, &counted);
    let mut taken = Instant::now();
    // When each window kept began, for "since".
    let mut starts: VecDeque<SystemTime> = VecDeque::new();
    let mut open: Vec<Event> = Vec::new();
    // How each disk stood, window by window, in both directions (counts
    // by kind: idle, load differs, no peers, compared, slow).
    let mut stood: Vec<[u64; 5]> = vec![[0; 5]; disks.len()];
    let mut n = 0u64;
    while pace.count.is_none_or(|c| n < c) && stop.rest(pace.interval) {
        let now = readings(paths, disks, &counted);
        let secs = taken.elapsed().as_secs_f64();
        taken = Instant::now();
        starts.push_back(SystemTime::now() - Duration::from_secs_f64(secs));
        if starts.len() > 4 * pace.span.max(16) {
            starts.pop_front();
        }
        let windows: Vec<Option<Window>> = (last.iter().zip(&now))
            .map(|(a, b)| Some(diskstats::window(a.0.as_ref()?, b.0.as_ref()?, secs)))
            .collect();
        let (standing, changes) =
            tracker.step(&loads(&windows, |w| w.read), &loads(&windows, |w| w.write));
        let since = |back: usize| {
            let at = starts.len().saturating_sub(back + 1);
            crate::units::rfc3339(starts[at])
        };
        let mut events = kernel_events(disks, &last, &now);
        events.extend(changes.into_iter().map(|c| event_of(c, disks, &since)));
        let back: Vec<&str> = (disks.iter().zip(&windows))
            .filter(|(_, w)| w.is_some())
            .map(|(d, _)| d.path.as_str())
            .collect();
        standing_after(&mut open, &events, &back);
        for (i, counts) in stood.iter_mut().enumerate() {
            for s in [standing[0][i], standing[1][i]] {
                counts[s.index()] += 1;
            }
        }
        let t = Tick {
            at: crate::units::rfc3339(SystemTime::now()),
            secs,
            disks: (disks.iter().zip(&windows).enumerate())
                .map(|(i, (d, w))| DiskWindow {
                    path: d.path.clone(),
                    group: d.group,
                    window: *w,
                    read: standing[0][i],
                    write: standing[1][i],
                    errors: now[i].1,
                    compared: compared(&stood[i]),
                })
                .collect(),
            events,
            open: open.clone(),
        };
        last = now;
        n += 1;
        if !tick(&t) {
            break;
        }
    }
    let mut named: Vec<String> = (open.iter())
        .filter_map(|e| match e {
            Event::FailSlow { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    named.sort();
    named.dedup();
    let unjudged = (disks.iter().zip(&stood))
        .filter(|(_, c)| n > 0 && compared(c) == 0)
        .map(|(d, c)| (d.path.clone(), why_not_compared(c)))
        .collect();
    Watch { named, unjudged }
}

/// How often a disk was compared with its peers, from its counts by
/// standing (a window compared in both directions counts twice): 0, never.
fn compared(counts: &[u64; 5]) -> u64 {
    counts[3] + counts[4]
}

/// Why a disk was never compared: idle where it never carried a load,
/// else how it stood most often when it did.
fn why_not_compared(counts: &[u64; 5]) -> &'static str {
    let most =
        if counts[1] + counts[2] == 0 { 0 } else { (1..3).max_by_key(|&k| counts[k]).unwrap_or(2) };
    [
        "idle (under one request a second) in every window",
        "its load was never within half as much again of its peers'",
        "no peers at its load (fewer than three disks of its model, size, kind and pool carried one)",
    ][most]
}

/// Each disk's load in one direction (`pick`) of a window; a gone disk's
/// none.
fn loads(windows: &[Option<Window>], pick: fn(&Window) -> Flow) -> Vec<Load> {
    (windows.iter())
        .map(|w| {
            w.map_or(Load::default(), |w| Load { ops_per_s: pick(&w).ops_per_s, ms: pick(&w).ms })
        })
        .collect()
}

/// What the kernel said at once: a disk it no longer shows, a disk whose
/// failed commands rose, between readings `last` and `now`.
fn kernel_events(disks: &[Watched], last: &[Reading], now: &[Reading]) -> Vec<Event> {
    let mut events = Vec::new();
    for (i, d) in disks.iter().enumerate() {
        match (last[i], now[i]) {
            ((Some(_), _), (None, _)) => events.push(Event::Gone { path: d.path.clone() }),
            ((_, Some(was)), (_, Some(errors))) if errors > was => {
                events.push(Event::Errors { path: d.path.clone(), new: errors - was, errors })
            }
            _ => {}
        }
    }
    events
}

/// The rule's change `c` as the event said of the disks (`since` the
/// time of a window so many before the last).
fn event_of(c: Change, disks: &[Watched], since: &dyn Fn(usize) -> String) -> Event {
    let members = |g: usize| -> Vec<String> {
        disks.iter().filter(|d| d.group == g).map(|d| d.path.clone()).collect()
    };
    match c {
        Change::FailSlow { disk, dir, found } => Event::FailSlow {
            path: disks[disk].path.clone(),
            direction: DIRECTIONS[dir],
            since: since(found.windows_ago),
            found,
        },
        Change::Ended { disk, dir } => {
            Event::Ended { path: disks[disk].path.clone(), direction: DIRECTIONS[dir] }
        }
        Change::GroupSlow { group, dir, found, baseline_ms, now_ms } => Event::GroupSlow {
            paths: members(group),
            pool: disks.iter().find(|d| d.group == group).and_then(|d| d.pool.clone()),
            direction: DIRECTIONS[dir],
            since: since(found.windows_ago),
            found,
            baseline_ms,
            now_ms,
        },
        Change::GroupEnded { group, dir } => {
            Event::GroupEnded { paths: members(group), direction: DIRECTIONS[dir] }
        }
    }
}

/// The findings standing after a window's `events`: each begun kept
/// until its end (a gone disk until the kernel shows it again).
fn standing_after(open: &mut Vec<Event>, events: &[Event], back: &[&str]) {
    for e in events {
        match e {
            Event::Ended { path, direction } => open.retain(|o| {
                !matches!(o, Event::FailSlow { path: p, direction: d, .. } if p == path && d == direction)
            }),
            Event::GroupEnded { paths, direction } => open.retain(|o| {
                !matches!(o, Event::GroupSlow { paths: p, direction: d, .. } if p == paths && d == direction)
            }),
            Event::FailSlow { .. } | Event::GroupSlow { .. } | Event::Gone { .. } => open.push(e.clone()),
            Event::Errors { .. } => {}
        }
    }
    open.retain(|o| !matches!(o, Event::Gone { path } if back.contains(&path.as_str())));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `/sys/block` whose counters the test moves on each window:
    /// `ms[i]` the time each of disk i's 100 reads of the window took.
    struct Bed {
        dir: tempfile::TempDir,
        totals: Vec<Counters>,
        gone: Vec<usize>,
    }

    impl Bed {
        fn new(n: usize) -> Self {
            let dir = tempfile::tempdir().unwrap();
            let bed = Bed { dir, totals: vec![Counters::default(); n], gone: Vec::new() };
            for i in 0..n {
                std::fs::create_dir_all(bed.dir.path().join(format!("block/d{i}/device"))).unwrap();
            }
            bed.write();
            bed
        }

        /// `/proc/diskstats` as the kernel writes it, of the disks not
        /// gone.
        fn write(&self) {
            let text: String = (self.totals.iter().enumerate())
                .filter(|(i, _)| !self.gone.contains(i))
                .map(|(i, c)| {
                    format!(
                        "   7 {i} d{i} {} 0 {} {} {} 0 {} {} 0 {} 0\n",
                        c.reads,
                        c.read_sectors,
                        c.read_ms,
                        c.writes,
                        c.write_sectors,
                        c.write_ms,
                        c.busy_ms
                    )
                })
                .collect();
            std::fs::write(self.dir.path().join("diskstats"), text).unwrap();
        }

        fn errors(&self, i: usize, n: u64) {
            let p = self.dir.path().join(format!("block/d{i}/device/ioerr_cnt"));
            std::fs::write(p, format!("0x{n:x}\n")).unwrap();
        }

        fn reads(&mut self, ms: &[u64]) {
            for (i, &m) in ms.iter().enumerate() {
                let c = &mut self.totals[i];
                c.reads += 100;
                c.read_sectors += 100 * 128;
                c.read_ms += 100 * m;
            }
            self.write();
        }

        fn paths(&self) -> SystemPaths {
            let diskstats = self.dir.path().join("diskstats");
            SystemPaths { sys: self.dir.path().into(), diskstats, ..SystemPaths::real() }
        }
    }

    fn disks(bed: &Bed) -> Vec<Watched> {
        let dir = |i: usize| bed.dir.path().join(format!("block/d{i}"));
        (0..bed.totals.len())
            .map(|i| Watched {
                path: format!("/dev/d{i}"),
                group: 0,
                pool: Some("md9".into()),
                id: crate::device::sysfs::identity(&bed.paths(), &dir(i), &dir(i)),
            })
            .collect()
    }

    /// Runs `plan.len()` windows, the counters of window k moved by
    /// `plan[k]` before it is read; every event, with its window.
    fn run(bed: &mut Bed, plan: &[&dyn Fn(&mut Bed)]) -> (Vec<(usize, Event)>, Watch) {
        let pace =
            Pace { interval: Duration::from_millis(5), span: 3, count: Some(plan.len() as u64) };
        let mut seen = Vec::new();
        let paths = bed.paths();
        let disks = disks(bed);
        plan[0](bed);
        let bed = std::cell::RefCell::new(bed);
        let mut k = 0;
        let ended = watch(&paths, &disks, pace, &StopFlag::default(), &mut |t: &Tick| {
            seen.extend(t.events.iter().map(|e| (k, e.clone())));
            k += 1;
            if let Some(next) = plan.get(k) {
                next(&mut bed.borrow_mut());
            }
            true
        });
        (seen, ended)
    }

    #[test]
    fn one_disk_slow_is_named_with_since_when_and_a_group_slow_together_is_the_group() {
        let mut bed = Bed::new(5);
        let ok = |b: &mut Bed| b.reads(&[2, 2, 2, 2, 2]);
        let one = |b: &mut Bed| b.reads(&[2, 2, 2, 2, 9]);
        let all = |b: &mut Bed| b.reads(&[8, 8, 9, 8, 8]);
        let plan: Vec<&dyn Fn(&mut Bed)> =
            vec![&ok, &ok, &ok, &ok, &one, &one, &one, &ok, &all, &all, &all, &all];
        let (events, named) = run(&mut bed, &plan);
        let words: Vec<(usize, &str)> = (events.iter())
            .map(|(k, e)| {
                (
                    *k,
                    match e {
                        Event::FailSlow { path, found, .. } => {
                            assert_eq!(
                                (path.as_str(), found.windows_ago, found.slow_windows),
                                ("/dev/d4", 2, 3)
                            );
                            "fail_slow"
                        }
                        Event::Ended { .. } => "ended",
                        Event::GroupSlow { paths, pool, baseline_ms, now_ms, .. } => {
                            assert_eq!((paths.len(), pool.as_deref()), (5, Some("md9")));
                            assert_eq!((*baseline_ms, *now_ms), (2.0, 8.0));
                            "group_slow"
                        }
                        other => panic!("{other:?}"),
                    },
                )
            })
            .collect();
        // Named after three windows standing out, ended at the first
        // window it did not; the group after three windows slow together,
        // and no disk of it.
        assert_eq!(words, [(6, "fail_slow"), (7, "ended"), (10, "group_slow")]);
        assert!(named.named.is_empty() && named.unjudged.is_empty(), "{named:?}");
    }

    #[test]
    fn a_disk_gone_or_with_failed_commands_is_said_at_once() {
        let mut bed = Bed::new(4);
        bed.errors(1, 3);
        let ok = |b: &mut Bed| b.reads(&[2, 2, 2, 2]);
        let err = |b: &mut Bed| {
            b.reads(&[2, 2, 2, 2]);
            b.errors(1, 0x1c);
        };
        let gone = |b: &mut Bed| {
            b.gone.push(2);
            b.reads(&[2, 2, 2, 2]);
        };
        let plan: Vec<&dyn Fn(&mut Bed)> = vec![&ok, &err, &gone, &ok];
        let (events, _) = run(&mut bed, &plan);
        let words: Vec<String> = events.iter().map(|(k, e)| format!("{k} {e:?}")).collect();
        assert_eq!(
            words,
            [
                r#"1 Errors { path: "/dev/d1", new: 25, errors: 28 }"#,
                r#"2 Gone { path: "/dev/d2" }"#
            ]
        );
    }

    #[test]
    fn a_disk_never_compared_is_not_judged_and_says_why() {
        // Three disks at a load and one idle throughout: the idle one's
        // health is not claimed.
        let mut bed = Bed::new(4);
        let w = |b: &mut Bed| {
            b.reads(&[2, 2, 2, 0]);
            b.totals[3].reads -= 100;
            b.write();
        };
        let (_, ended) = run(&mut bed, &[&w, &w, &w]);
        assert_eq!(ended.unjudged.len(), 1, "{ended:?}");
        assert_eq!(ended.unjudged[0].0, "/dev/d3");
        assert!(ended.unjudged[0].1.starts_with("idle"), "{ended:?}");
        // Two disks of a group: no peers for either.
        let mut bed = Bed::new(2);
        let w = |b: &mut Bed| b.reads(&[2, 9]);
        let (events, ended) = run(&mut bed, &[&w, &w, &w]);
        assert!(events.is_empty() && ended.named.is_empty(), "{events:?}");
        let why: Vec<&str> = ended.unjudged.iter().map(|u| u.1).collect();
        assert!(why.iter().all(|w| w.starts_with("no peers")), "{why:?}");
        assert_eq!(why.len(), 2);
    }
}

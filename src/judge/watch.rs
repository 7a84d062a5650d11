//! The fail-slow rule of `arrayburn watch`: a disk in service whose
//! latency, at the load it carries, stands out against its peers' at a
//! similar load, for long enough (after Perseus, FAST '23: each drive
//! against its peer group at the same load, never against a fixed number).
//!
//! In each window and direction (reads, writes) a disk is compared only
//! with the peers of its group (same model, size and kind; never across
//! pools) that carried a similar load: at least [`MIN_OPS`] requests a
//! second (else idle) and within [`LOAD_BAND`] times the group's median
//! (else its load differs). Among at least three such, a disk whose
//! latency per request is [`SLOW_TIMES`] times their median or more, and
//! [`MIN_EXTRA_MS`] above it, is slow in that window. Slow in most windows
//! ([`MOSTLY`]) for `--for` is fail-slow, with since when and how much; a
//! whole group whose median latency rose that much together is its path or
//! its workload, said of the group, never of a disk.
//!
//! It must not read sysfs (`watch` samples) and must not print.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::stats::median;

/// Fewer requests a second than this in a direction: idle there, not
/// judged.
pub const MIN_OPS: f64 = 1.0;
/// A peer's load within this factor of the group's median is similar
/// (a disk at twice its peers' load is not compared with them: its
/// latency may rise with its load).
pub const LOAD_BAND: f64 = 1.5;
/// Latency this many times the comparable peers' median is slow ...
pub const SLOW_TIMES: f64 = 2.0;
/// ... and at least this many milliseconds above it (a 0.1 ms NVMe read
/// at 0.25 ms is not a failing drive).
pub const MIN_EXTRA_MS: f64 = 1.0;
/// Slow in at least this share of the windows over `--for`: fail-slow.
pub const MOSTLY: f64 = 0.8;

/// What a disk did in one window, in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Requests completed a second, and the average time each took (ms,
    /// the kernel's time in queue and on the device over completions).
    pub ops_per_s: f64,
    pub ms: f64,
}

/// How a disk stood in one window and direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Fewer than [`MIN_OPS`] requests a second.
    Idle,
    /// Its load is not within [`LOAD_BAND`] of its peers'.
    LoadDiffers,
    /// Fewer than three disks of its group carried a similar load.
    NoPeers,
    /// Compared: its latency over the peers' median.
    Compared { times: f64 },
    /// Compared and slow.
    Slow { times: f64 },
}

impl Standing {
    /// Its place in counts by kind: idle, load differs, no peers,
    /// compared, slow.
    pub fn index(self) -> usize {
        match self {
            Standing::Idle => 0,
            Standing::LoadDiffers => 1,
            Standing::NoPeers => 2,
            Standing::Compared { .. } => 3,
            Standing::Slow { .. } => 4,
        }
    }

    /// Its kind, as the JSON names it (`"compared"`).
    pub fn kind(self) -> &'static str {
        match self {
            Standing::Idle => "idle",
            Standing::LoadDiffers => "load_differs",
            Standing::NoPeers => "no_peers",
            Standing::Compared { .. } => "compared",
            Standing::Slow { .. } => "slow",
        }
    }

    /// As the table and the JSON say it.
    pub fn word(self) -> String {
        match self {
            Standing::Idle => "idle".into(),
            Standing::LoadDiffers => "load differs".into(),
            Standing::NoPeers => "no peers at its load".into(),
            Standing::Compared { times } => format!("{times:.1}x"),
            Standing::Slow { times } => format!("SLOW {times:.1}x"),
        }
    }
}

/// One window and direction judged: each disk's standing, and each
/// group's reference (the median latency of its disks at a similar load,
/// where at least three carried one), by group number.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub standing: Vec<Standing>,
    pub reference: Vec<Option<f64>>,
}

/// Each disk's standing in one window and direction: `loads[i]` disk
/// i's, `groups[i]` its peer group.
pub fn window(loads: &[Load], groups: &[usize]) -> Vec<Standing> {
    judge(loads, groups).standing
}

/// [`window`] with each group's reference.
pub fn judge(loads: &[Load], groups: &[usize]) -> Judged {
    let n_groups = groups.iter().max().map_or(0, |g| g + 1);
    let mut out =
        Judged { standing: vec![Standing::Idle; loads.len()], reference: vec![None; n_groups] };
    for g in 0..n_groups {
        let members: Vec<usize> = (0..loads.len()).filter(|&i| groups[i] == g).collect();
        let busy: Vec<usize> =
            members.iter().copied().filter(|&i| loads[i].ops_per_s >= MIN_OPS).collect();
        let Some(typical) = median(&busy.iter().map(|&i| loads[i].ops_per_s).collect::<Vec<_>>())
        else {
            continue;
        };
        let similar = |i: usize| {
            let r = loads[i].ops_per_s / typical;
            r > 1.0 / LOAD_BAND && r < LOAD_BAND
        };
        let peers: Vec<usize> = busy.iter().copied().filter(|&i| similar(i)).collect();
        let reference = median(&peers.iter().map(|&i| loads[i].ms).collect::<Vec<_>>())
            .filter(|_| peers.len() >= 3);
        out.reference[g] = reference;
        for &i in &busy {
            out.standing[i] = match (similar(i), reference) {
                (false, _) => Standing::LoadDiffers,
                (true, None) => Standing::NoPeers,
                (true, Some(m)) => stood(loads[i].ms, m),
            };
        }
    }
    out
}

/// `ms` against a reference `m`: slow at [`SLOW_TIMES`] and
/// [`MIN_EXTRA_MS`] above it.
fn stood(ms: f64, m: f64) -> Standing {
    let times = ms / m.max(1e-3);
    match times >= SLOW_TIMES && ms - m >= MIN_EXTRA_MS {
        true => Standing::Slow { times },
        false => Standing::Compared { times },
    }
}

/// A disk (or a group) found fail-slow: since how many windows before the
/// last (0: the last alone), in how many of the windows over `--for`, and
/// how much (the median of its times over its peers, or over its group's
/// own first windows, in the windows it was slow).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FailSlow {
    pub windows_ago: usize,
    pub slow_windows: usize,
    pub windows: usize,
    pub times: f64,
}

/// Whether a disk whose standings (one a window, oldest first) are
/// `history` is fail-slow over the last `span` windows: slow in at least
/// [`MOSTLY`] of those it was compared in, compared in at least half of
/// them, and slow in the last one (the rule a watch applies window by
/// window, [`Tracker`], to the same windows).
pub fn fail_slow(history: &[Standing], span: usize) -> Option<FailSlow> {
    let mut t = Track::default();
    for &s in history {
        t.push(s, span);
    }
    t.named
}

/// The two directions, as the JSON says them.
pub const DIRECTIONS: [&str; 2] = ["read", "write"];

/// The windows a group's first references are taken over for its
/// baseline (at most; fewer where `--for` is shorter).
pub const BASELINE_WINDOWS: usize = 30;

/// What began or ended in a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Disk `disk` fail-slow in direction `dir` (0 reads, 1 writes).
    FailSlow { disk: usize, dir: usize, found: FailSlow },
    /// It no longer stands out.
    Ended { disk: usize, dir: usize },
    /// Group `group` slow together: its reference `now_ms` against the
    /// `baseline_ms` of its first windows.
    GroupSlow { group: usize, dir: usize, found: FailSlow, baseline_ms: f64, now_ms: f64 },
    /// The group is back near its first windows' latency.
    GroupEnded { group: usize, dir: usize },
}

/// One disk's or group's last `span` windows in a direction, counted as
/// they come (a window's cost does not grow with `--for`), and whether it
/// is named.
#[derive(Debug, Clone, Default)]
struct Track {
    last: VecDeque<Standing>,
    compared: usize,
    slow: usize,
    /// Windows since the first slow one after the last it was compared
    /// in and not slow (None: none slow since).
    slow_since: Option<usize>,
    named: Option<FailSlow>,
}

impl Track {
    /// Adds a window; Some(Some(found)) where it is named now, Some(None)
    /// where it no longer is.
    fn push(&mut self, s: Standing, span: usize) -> Option<Option<FailSlow>> {
        let span = span.max(1);
        let count = |s: &Standing| match s {
            Standing::Compared { .. } => (1, 0),
            Standing::Slow { .. } => (1, 1),
            _ => (0, 0),
        };
        if self.last.len() == span
            && let Some(old) = self.last.pop_front()
        {
            let (c, w) = count(&old);
            (self.compared, self.slow) = (self.compared - c, self.slow - w);
        }
        let (c, w) = count(&s);
        (self.compared, self.slow) = (self.compared + c, self.slow + w);
        self.slow_since = match (s, self.slow_since) {
            (Standing::Compared { .. }, _) => None,
            (_, Some(n)) => Some(n + 1),
            (Standing::Slow { .. }, None) => Some(0),
            (_, None) => None,
        };
        self.last.push_back(s);
        let found = self.found(span);
        let changed = match (self.named, found) {
            (None, Some(_)) | (Some(_), None) => Some(found),
            _ => None,
        };
        self.named = found;
        changed
    }

    /// The rule on its last `span` windows.
    fn found(&self, span: usize) -> Option<FailSlow> {
        let enough = self.last.len() == span
            && self.compared * 2 >= span
            && self.slow as f64 >= MOSTLY * self.compared as f64;
        if !enough || !matches!(self.last.back(), Some(Standing::Slow { .. })) {
            return None;
        }
        let slow: Vec<f64> = (self.last.iter())
            .filter_map(|s| match s {
                Standing::Slow { times } => Some(*times),
                _ => None,
            })
            .collect();
        Some(FailSlow {
            // Since the first slow window of the run that ends now.
            windows_ago: self.slow_since.unwrap_or(0),
            slow_windows: self.slow,
            windows: span,
            times: median(&slow).unwrap_or(0.0),
        })
    }
}

/// A group's own first windows (its baseline) and its track against them.
#[derive(Debug, Clone, Default)]
struct GroupTrack {
    first: Vec<f64>,
    baseline: Option<f64>,
    track: Track,
}

/// The rule over time: every disk's and group's history in both
/// directions, bounded (a watch of months keeps what its rule reads). It
/// must not read the clock: windows are handed to it.
#[derive(Debug, Clone)]
pub struct Tracker {
    groups: Vec<usize>,
    span: usize,
    disks: Vec<[Track; 2]>,
    pools: Vec<[GroupTrack; 2]>,
}

impl Tracker {
    /// Disks of groups `groups`, named after `span` windows standing out.
    pub fn new(groups: &[usize], span: usize) -> Self {
        let n_groups = groups.iter().max().map_or(0, |g| g + 1);
        let span = span.max(1);
        Tracker {
            groups: groups.to_vec(),
            span,
            disks: vec![Default::default(); groups.len()],
            pools: vec![Default::default(); n_groups],
        }
    }

    /// One window: each disk's reads and writes (a gone disk's are
    /// idle). Each disk's standing in both directions, and what began or
    /// ended.
    pub fn step(&mut self, reads: &[Load], writes: &[Load]) -> ([Vec<Standing>; 2], Vec<Change>) {
        let judged = [judge(reads, &self.groups), judge(writes, &self.groups)];
        let mut changes = Vec::new();
        for (dir, j) in judged.iter().enumerate() {
            for (disk, &s) in j.standing.iter().enumerate() {
                match self.disks[disk][dir].push(s, self.span) {
                    Some(Some(found)) => changes.push(Change::FailSlow { disk, dir, found }),
                    Some(None) => changes.push(Change::Ended { disk, dir }),
                    None => {}
                }
            }
            for (group, r) in j.reference.iter().enumerate() {
                let g = &mut self.pools[group][dir];
                let s = match (*r, g.baseline) {
                    (None, _) => Standing::NoPeers,
                    (Some(now), Some(base)) => stood(now, base),
                    (Some(now), None) => {
                        g.first.push(now);
                        if g.first.len() >= self.span.min(BASELINE_WINDOWS) {
                            g.baseline = median(&g.first);
                        }
                        Standing::NoPeers
                    }
                };
                match g.track.push(s, self.span) {
                    Some(Some(found)) => changes.push(Change::GroupSlow {
                        group,
                        dir,
                        found,
                        baseline_ms: g.baseline.unwrap_or(0.0),
                        now_ms: r.unwrap_or(0.0),
                    }),
                    Some(None) => changes.push(Change::GroupEnded { group, dir }),
                    None => {}
                }
            }
        }
        (judged.map(|j| j.standing), changes)
    }
}

/// Whether a group's median latency at a similar load rose `SLOW_TIMES`
/// over its first windows' (`baseline`): the group's path or workload.
pub fn group_slow(baseline_ms: f64, now_ms: f64) -> bool {
    matches!(stood(now_ms, baseline_ms), Standing::Slow { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ops: f64, ms: f64) -> Load {
        Load { ops_per_s: ops, ms }
    }

    #[test]
    fn a_disk_slow_at_its_peers_load_is_slow_and_one_at_twice_the_load_is_not_compared() {
        let g = [0, 0, 0, 0, 0];
        let s = window(
            &[at(20.0, 1.0), at(21.0, 1.1), at(19.0, 0.9), at(20.0, 8.0), at(60.0, 4.0)],
            &g,
        );
        // Against the median of the four at a similar load (itself
        // included, as the check's rule: 1.05 ms).
        assert!(
            matches!(s[0], Standing::Compared { times } if (times - 1.0 / 1.05).abs() < 1e-9),
            "{s:?}"
        );
        assert!(
            matches!(s[3], Standing::Slow { times } if (times - 8.0 / 1.05).abs() < 1e-9),
            "{s:?}"
        );
        assert_eq!(s[4], Standing::LoadDiffers, "three times the load: not compared");
        let s = window(&[at(20.0, 1.0), at(20.0, 1.0), at(20.0, 1.0), at(40.0, 3.0)], &[0; 4]);
        assert_eq!(s[3], Standing::LoadDiffers, "twice the load: not compared");
        // Idle disks are idle; two disks at a load are no peers.
        let s = window(&[at(0.2, 50.0), at(20.0, 1.0), at(20.0, 9.0)], &[0, 0, 0]);
        assert_eq!(s, [Standing::Idle, Standing::NoPeers, Standing::NoPeers]);
        // Across groups: never.
        let s =
            window(&[at(20.0, 1.0), at(20.0, 1.0), at(20.0, 1.0), at(20.0, 9.0)], &[0, 0, 0, 1]);
        assert_eq!(s[3], Standing::NoPeers);
        // A fast NVMe read twice as slow but 0.1 ms above: not slow.
        let s = window(&[at(900.0, 0.1), at(900.0, 0.1), at(900.0, 0.1), at(900.0, 0.2)], &[0; 4]);
        assert!(matches!(s[3], Standing::Compared { .. }), "{s:?}");
    }

    #[test]
    fn fail_slow_needs_most_of_the_span_and_the_last_window() {
        let slow = Standing::Slow { times: 6.0 };
        let ok = Standing::Compared { times: 1.0 };
        let mut h = vec![ok; 5];
        h.extend([slow; 4]);
        let f = fail_slow(&h, 4).unwrap();
        assert_eq!((f.windows_ago, f.slow_windows, f.windows, f.times), (3, 4, 4, 6.0));
        assert_eq!(fail_slow(&h, 6), None, "slow in 4 of 6: not most");
        h.push(ok);
        assert_eq!(fail_slow(&h, 4), None, "not slow now");
        // Idle windows in between neither count against it nor for it,
        // but it must be compared in half the span.
        let h = [ok, slow, Standing::Idle, slow, slow];
        assert_eq!(fail_slow(&h, 4).map(|f| f.windows_ago), Some(3));
        // Idle before its first slow window is not its slow run.
        let h = [ok, Standing::Idle, Standing::Idle, slow, slow, slow];
        assert_eq!(fail_slow(&h, 3).map(|f| f.windows_ago), Some(2));
        let h = [ok, Standing::Idle, Standing::Idle, Standing::Idle, slow];
        assert_eq!(fail_slow(&h, 4), None);
        assert!(group_slow(1.0, 2.5) && !group_slow(1.0, 1.5) && !group_slow(0.1, 0.3));
    }

    /// A recorded watch (`tests/fixtures/watch/NAME.jsonl`, JSON lines of
    /// `arrayburn watch -j` on FUSE disks under a steady load): each
    /// window's reads, writes and the disks' groups.
    fn recorded(name: &str) -> (Vec<[Vec<Load>; 2]>, Vec<usize>) {
        let p = format!("{}/tests/fixtures/watch/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
        let mut groups = Vec::new();
        let windows = (std::fs::read_to_string(p).unwrap().lines())
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|t| t["kind"] != "watch")
            .map(|t| {
                let disks = t["disks"].as_array().unwrap();
                groups = disks.iter().map(|d| d["group"].as_u64().unwrap() as usize).collect();
                let flow = |dir: &str| -> Vec<Load> {
                    (disks.iter())
                        .map(|d| serde_json::from_value(d["window"][dir].clone()).unwrap())
                        .collect()
                };
                [flow("read"), flow("write")]
            })
            .collect();
        (windows, groups)
    }

    /// A disk (its place in the kept ones) and what is done to its reads.
    type Edit<'a> = &'a dyn Fn(&mut [Load]);

    /// The changes of a recorded series re-judged (each window's reads of
    /// the disks kept changed by `edit`), with their windows.
    fn replay(name: &str, span: usize, keep: &[usize], edit: Option<Edit>) -> Vec<(usize, Change)> {
        let (windows, groups) = recorded(name);
        let pick = |v: &[Load]| keep.iter().map(|&i| v[i]).collect::<Vec<_>>();
        let mut t = Tracker::new(&keep.iter().map(|&i| groups[i]).collect::<Vec<_>>(), span);
        let mut out = Vec::new();
        for (k, [r, w]) in windows.into_iter().enumerate() {
            let mut r = pick(&r);
            if let Some(f) = edit {
                f(&mut r);
            }
            out.extend(t.step(&r, &pick(&w)).1.into_iter().map(|c| (k, c)));
        }
        out
    }

    #[test]
    fn recorded_one_slow_disk_is_named_at_the_rule_s_edges_and_no_other() {
        let all = [0, 1, 2, 3, 4, 5];
        // As recorded: disk 3 (6 ms at its peers' 1.3 ms) named in the
        // third window; the disk at twice the load (3.3 ms) never.
        let c = replay("one-slow", 3, &all, None);
        assert!(
            matches!(c[..], [(2, Change::FailSlow { disk: 3, dir: 0, found })] if found.windows_ago == 2 && found.times > 4.0),
            "{c:?}"
        );
        // A --for longer than the recording: nothing yet.
        assert_eq!(replay("one-slow", 9, &all, None), []);
        // Its latency just under twice the reference of each window (the
        // median of the four at the load, itself included: the mean of the
        // two slower of its three peers): never; just over: named.
        let times = |k: f64| {
            move |w: &mut [Load]| {
                let mut p = [w[0].ms, w[1].ms, w[2].ms];
                p.sort_by(f64::total_cmp);
                w[3].ms = k * (p[1] + p[2]) / 2.0;
            }
        };
        assert_eq!(replay("one-slow", 3, &all, Some(&times(1.9))), []);
        let c = replay("one-slow", 3, &all, Some(&times(2.05)));
        assert!(matches!(c[..], [(2, Change::FailSlow { disk: 3, .. })]), "{c:?}");
        // The busy disk's load brought within the band (1.4 times its
        // peers'): compared, and its 3.3 ms is slow; at 1.6 times: not.
        let load = |k: f64| move |w: &mut [Load]| w[4].ops_per_s = w[0].ops_per_s * k;
        let c = replay("one-slow", 3, &all, Some(&load(1.4)));
        assert!(c.iter().any(|(_, c)| matches!(c, Change::FailSlow { disk: 4, .. })), "{c:?}");
        let c = replay("one-slow", 3, &all, Some(&load(1.6)));
        assert!(!c.iter().any(|(_, c)| matches!(c, Change::FailSlow { disk: 4, .. })), "{c:?}");
        // Without two of its peers (two at its load): no peers, nothing.
        assert_eq!(replay("one-slow", 3, &[0, 3, 4, 5], None), []);
    }

    #[test]
    fn recorded_disks_slowed_together_are_the_group_and_no_disk() {
        let c = replay("all-slow", 3, &[0, 1, 2, 3], None);
        assert!(
            matches!(c[..], [(8, Change::GroupSlow { group: 0, dir: 0, baseline_ms, now_ms, .. })] if baseline_ms < 1.5 && now_ms > 5.0),
            "{c:?}"
        );
        // One disk that stayed as fast as it was: the group still slowed,
        // and the fast one is never a finding.
        let fast = |w: &mut [Load]| w[0].ms = 1.3;
        let c = replay("all-slow", 3, &[0, 1, 2, 3], Some(&fast));
        assert!(matches!(c[..], [(8, Change::GroupSlow { .. })]), "{c:?}");
        // Two disks are no group to judge.
        assert_eq!(replay("all-slow", 3, &[0, 1], None), []);
        // Its first windows already slow (the watch began after): its
        // baseline is the slow latency, and nothing is claimed.
        let (w, _) = recorded("all-slow");
        let mut t = Tracker::new(&[0; 4], 3);
        let c: Vec<Change> = w[6..].iter().flat_map(|[r, w]| t.step(r, w).1).collect();
        assert_eq!(c, []);
    }
}

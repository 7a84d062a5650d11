//! Groups of disks that lose speed together in the parallel pass while the
//! others keep theirs: a cable, an expander port or an HBA port only some
//! of the disks sit behind, seen from the speeds alone (sysfs need not
//! know; where it names a controller that limits its disks, `pass` names
//! the controller instead).
//!
//! **Found.** Each disk's share of its own serial speed in the parallel
//! pass, in order: where a share is under [`APART`] of the next higher
//! one, the disks split into clusters. The highest cluster is the others,
//! and they must have lost nothing (at least `slow_pct` % of their serial
//! speed): only beside disks that kept their speed is a group's loss its
//! path's. Every lower cluster that kept its speed too joins the others:
//! below a disk that gained (read faster beside the others than alone),
//! disks that kept theirs lost nothing, and a group is disks that lost.
//! Each lower cluster of two or more disks is then a group that
//! lost speed together. A lower cluster of one is a disk that lost speed
//! alone, which its own verdict judges. An evenly shared limit makes one
//! cluster, and a saturated one (every disk lost speed, some more than
//! others: a CPU handing out its time unevenly) no group: both are the
//! shared bottleneck of `peers`.
//!
//! **Confirmed before it is named.** Each group is read again, in rounds:
//! the group alone, then every disk together.
//!
//! - Together, each round's group median share of serial speed against the
//!   others' median share: under `slow_pct` % (the interval around the
//!   median over rounds all under it) reproduces the group; all over it
//!   says the first reading was a passing load, and no group is named.
//! - Alone, each round's group median share of serial speed: under
//!   `slow_pct` % says their own path limits them (check the cable,
//!   expander port or HBA port they share); at or over it says they
//!   recover without the others, so the limit is one they share with the
//!   other disks, which leaves them less than their share.
//!
//! Whatever an interval does not decide is said to be not known, and a
//! group is advice to act on only when its own path is confirmed.
//!
//! It must not measure or read sysfs: shares and slices come in as numbers.

use crate::finding::{Code, Finding};
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::Thresholds;
use super::Verdict;
use super::advice::{Action, DiskAdvice};
use super::confirm::judged;
use super::slices::{SliceSpeed, Spread};
use crate::device::topology::Topology;
use crate::stats::median;

/// Two neighbouring shares of serial speed belong to different clusters
/// when the lower is under this fraction of the higher: farther apart than
/// the scatter of disks that share a limit evenly (63-94 % on a loaded
/// machine of two cores, where the lowest is 0.85 of its neighbour).
pub const APART: f64 = 0.8;

/// A group of disks that lost speed together in the parallel pass.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedGroup {
    /// Its disks (indexes into the pass's disks, in order).
    pub disks: Vec<usize>,
    /// The median share of their serial speed they kept...
    pub kept_pct: f64,
    /// ...and the others did (the highest cluster).
    pub others_kept_pct: f64,
    /// The disks of the highest cluster.
    pub others: usize,
}

/// The groups among the disks' shares of their own serial speed in the
/// parallel pass (`kept`, None where not compared), beside others that
/// lost nothing.
pub fn find(kept: &[Option<f64>], th: &Thresholds) -> Vec<SharedGroup> {
    let mut order: Vec<(usize, f64)> =
        kept.iter().enumerate().filter_map(|(i, k)| Some((i, (*k)?))).collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut clusters: Vec<Vec<(usize, f64)>> = Vec::new();
    for (i, k) in order {
        match clusters.last_mut() {
            Some(c) if c.last().is_some_and(|(_, l)| *l >= APART * k) => c.push((i, k)),
            _ => clusters.push(vec![(i, k)]),
        }
    }
    let shares = |c: &[(usize, f64)]| median(&c.iter().map(|(_, k)| *k).collect::<Vec<_>>());
    let Some(mut others) = clusters.pop() else { return Vec::new() };
    if !shares(&others).is_some_and(|k| k >= th.slow_pct) {
        return Vec::new();
    }
    // Every cluster that kept its speed is of the others: below a disk
    // that gained (read faster beside the others than alone), disks that
    // kept theirs lost nothing, and a group is disks that lost speed.
    while clusters.last().and_then(|c| shares(c)).is_some_and(|k| k >= th.slow_pct) {
        others.extend(clusters.pop().expect("a cluster"));
    }
    let others_kept_pct = shares(&others).expect("disks");
    clusters
        .into_iter()
        .filter(|c| c.len() >= 2)
        .filter_map(|c| {
            let mut disks: Vec<usize> = c.iter().map(|(i, _)| *i).collect();
            disks.sort_unstable();
            Some(SharedGroup {
                disks,
                kept_pct: shares(&c)?,
                others_kept_pct,
                others: others.len(),
            })
        })
        .collect()
}

/// Where the limit a group lost speed to sits, as far as reading it again
/// told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupPath {
    /// Read without the others it still lost: a path of its own.
    Own,
    /// Read without the others it recovered: a limit it shares with them.
    Shared,
    /// It lost speed together again beside all; alone, not decided.
    Either,
    /// Read again beside all it kept what the others kept: a passing load,
    /// not a group.
    NotReproduced,
    /// Not read again (a stop), or the re-reading did not decide.
    NotConfirmed,
}

/// What reading a group again found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupConfirmed {
    /// Beside all: the group's share of serial speed as % of the others'.
    pub together: Option<Spread>,
    /// Alone: the group's share of its serial speed.
    pub alone: Option<Spread>,
    pub path: GroupPath,
}

/// Judges a group read again: `alone` and `together` its rounds' slices
/// (each slice's `disk` as it comes), `group` its disks, `serial` each
/// disk's serial speed (by the same index).
pub fn confirmed(
    (alone, together): (&[SliceSpeed], &[SliceSpeed]),
    group: &[usize],
    serial: &[Option<f64>],
    th: &Thresholds,
) -> GroupConfirmed {
    let kept = |s: &SliceSpeed| {
        let v = serial.get(s.disk).copied().flatten().filter(|v| *v > 0.0)?;
        Some(100.0 * s.mb_per_s / v)
    };
    let round_median = |slices: &[SliceSpeed], r: u32, inside: bool| {
        let of: Vec<f64> = (slices.iter())
            .filter(|s| s.round == r && group.contains(&s.disk) == inside)
            .filter_map(kept)
            .collect();
        median(&of)
    };
    let rounds =
        |slices: &[SliceSpeed]| -> BTreeSet<u32> { slices.iter().map(|s| s.round).collect() };
    let shares: Vec<f64> = (rounds(together).into_iter())
        .filter_map(|r| {
            let (g, o) = (round_median(together, r, true)?, round_median(together, r, false)?);
            (o > 0.0).then(|| 100.0 * g / o)
        })
        .collect();
    let kept_alone: Vec<f64> =
        rounds(alone).into_iter().filter_map(|r| round_median(alone, r, true)).collect();
    let (together, alone) = (judged(shares, th), judged(kept_alone, th));
    let path = match (together.verdict, alone.verdict) {
        (Verdict::Ok, _) => GroupPath::NotReproduced,
        (Verdict::Slow, Verdict::Slow) => GroupPath::Own,
        (Verdict::Slow, Verdict::Ok) => GroupPath::Shared,
        (Verdict::Slow, _) => GroupPath::Either,
        _ => GroupPath::NotConfirmed,
    };
    GroupConfirmed { together: together.spread, alone: alone.spread, path }
}

/// Whether reading a group again so far has decided it (no more rounds
/// are needed).
pub fn decided(c: &GroupConfirmed) -> bool {
    matches!(c.path, GroupPath::Own | GroupPath::Shared | GroupPath::NotReproduced)
}

/// What a group's disks, and no other disk of the run, sit behind: their
/// expander, else their SAS port, else their controller, in the words of
/// sysfs (`expander-6:0`); None when they share none the others lack.
pub fn shared_element(group: &[&Topology], others: &[&Topology]) -> Option<String> {
    let elements: [fn(&Topology) -> Option<String>; 3] = [
        |t| t.expander.clone(),
        |t| t.sas_port.clone(),
        |t| t.controller.as_ref().map(|c| c.words()),
    ];
    elements.iter().find_map(|of| {
        let first = of(group.first()?)?;
        let all = group.iter().all(|t| of(t).as_ref() == Some(&first));
        let apart = others.iter().all(|t| of(t).as_ref() != Some(&first));
        (all && apart).then_some(first)
    })
}

/// A group whose own path was confirmed as the limit: each of its disks
/// is to act on ("check the path they share"). `group`: its disks' paths;
/// `kept` and `alone`: its share of serial speed in the parallel pass and
/// read without the others; `behind`: what they share, where known.
pub fn advise(
    group: &[String],
    (kept, alone): (f64, f64),
    behind: Option<&str>,
    advice: &mut Vec<DiskAdvice>,
) {
    let behind =
        behind.map(|b| format!(" (they sit behind {b}, the others do not)")).unwrap_or_default();
    for path in group {
        let with: Vec<&str> = group.iter().filter(|p| *p != path).map(String::as_str).collect();
        let said = format!(
            "lost speed in parallel only together with {} (kept {kept:.0}% of its serial speed; read without the \
             other disks they still kept {alone:.0}%): the path they share limits them, not the disk{behind}; \
             check the path they share (cable, expander port, HBA port)",
            with.join(", ")
        );
        let group = Finding::of(Code::SlowGroup);
        match advice.iter_mut().find(|a| &a.path == path) {
            Some(a) => {
                a.sentence = format!("{}; it also {said}", a.sentence.trim_end_matches('.'));
                a.findings.push(group);
            }
            None => advice.push(DiskAdvice {
                path: path.clone(),
                action: Action::CheckPath,
                sentence: format!("{path}: {said}."),
                findings: vec![group],
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find_(kept: &[Option<f64>]) -> Vec<SharedGroup> {
        find(kept, &Thresholds::default())
    }

    fn some(v: &[f64]) -> Vec<Option<f64>> {
        v.iter().map(|x| Some(*x)).collect()
    }

    #[test]
    fn groups_are_clusters_of_two_or_more_below_the_others() {
        // Eight disks: four keep all, four behind a halved path keep half.
        let g = find_(&some(&[99.0, 51.0, 100.0, 49.0, 98.0, 50.0, 101.0, 52.0]));
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].disks, [1, 3, 5, 7]);
        assert!((g[0].kept_pct - 50.5).abs() < 1e-9 && (g[0].others_kept_pct - 99.5).abs() < 1e-9);
        assert_eq!(g[0].others, 4);
        // An evenly shared limit, scattered as on a loaded machine: one
        // cluster, no group.
        assert!(find_(&some(&[63.0, 81.0, 74.0, 89.0, 82.0, 77.0, 92.0, 94.0])).is_empty());
        // One disk read faster beside the others than alone: the others
        // kept their speed, they are no group.
        assert!(find_(&some(&[100.0, 99.0, 101.0, 150.0])).is_empty());
        // Beside a disk that gained, disks that lost speed together still
        // are one, against every disk that kept its speed.
        let g = find_(&some(&[50.0, 100.0, 49.0, 140.0, 99.0]));
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!((g[0].disks.as_slice(), g[0].others), ([0, 2].as_slice(), 3));
        assert!((g[0].others_kept_pct - 100.0).abs() < 1e-9, "{g:?}");
        assert!(find_(&some(&[50.0, 51.0, 49.0, 50.0])).is_empty());
        // One disk lost speed alone: its own verdict, not a group.
        assert!(find_(&some(&[99.0, 100.0, 40.0, 98.0])).is_empty());
        // Two groups at two limits, and disks not compared left out.
        let mut v = some(&[100.0, 25.0, 50.0, 26.0, 49.0, 99.0]);
        v.push(None);
        let g = find_(&v);
        let disks: Vec<&[usize]> = g.iter().map(|g| g.disks.as_slice()).collect();
        assert_eq!(disks, [&[1, 3][..], &[2, 4][..]]);
        // Every disk lost speed, two more than the rest (a saturated CPU
        // handing its time out unevenly, as CI saw): no group beside it.
        assert!(find_(&some(&[18.0, 21.0, 29.0, 34.0, 34.0, 31.0, 38.0, 32.0])).is_empty());
        // A gradual slope is not a split.
        assert!(find_(&some(&[50.0, 60.0, 70.0, 80.0, 90.0, 100.0])).is_empty());
        assert!(find_(&[None, Some(50.0)]).is_empty());
    }

    /// Rounds of slices: disks 0 and 1 the group, 2 and 3 the others, at
    /// serial 200 MB/s each; `g` and `o` each round's speeds.
    fn rounds(g: &[f64], o: Option<&[f64]>) -> Vec<SliceSpeed> {
        let mut out = Vec::new();
        for (r, v) in g.iter().enumerate() {
            let mut push = |disk: usize, mb_per_s: f64| {
                out.push(SliceSpeed { disk, round: r as u32, at_s: r as f64, mb_per_s });
            };
            push(0, *v);
            push(1, *v + 2.0);
            if let Some(o) = o {
                push(2, o[r]);
                push(3, o[r] - 2.0);
            }
        }
        out
    }

    #[test]
    fn a_group_read_again_is_named_by_what_it_keeps_alone_and_beside_all() {
        let th = Thresholds::default();
        let serial = [Some(200.0); 4];
        let judge = |alone: &[f64], g: &[f64], o: &[f64]| {
            let (a, t) = (rounds(alone, None), rounds(g, Some(o)));
            confirmed((&a, &t), &[0, 1], &serial, &th)
        };
        let full = [199.0, 200.0, 198.0, 201.0];
        let half = [100.0, 98.0, 101.0, 99.0];
        // Still half alone: its own path.
        let own = judge(&half, &half, &full);
        assert_eq!(own.path, GroupPath::Own, "{own:?}");
        assert!((own.alone.unwrap().pct - 50.25).abs() < 0.5, "{own:?}");
        assert!((own.together.unwrap().pct - 50.5).abs() < 1.0, "{own:?}");
        assert!(decided(&own));
        // Full speed alone: a limit shared with the others.
        assert_eq!(judge(&full, &half, &full).path, GroupPath::Shared);
        // Beside all it kept what the others kept: not reproduced.
        assert_eq!(judge(&half, &full, &full).path, GroupPath::NotReproduced);
        // Alone it scatters across the threshold: either.
        let either = judge(&[100.0, 199.0, 120.0, 200.0], &half, &full);
        assert_eq!(either.path, GroupPath::Either);
        assert!(!decided(&either));
        // Nothing read again: not confirmed.
        let none = confirmed((&[], &[]), &[0, 1], &serial, &th);
        assert_eq!(none.path, GroupPath::NotConfirmed);
        assert!(!decided(&none));
    }

    #[test]
    fn the_element_named_is_one_the_group_shares_and_the_others_lack() {
        let t = |exp: Option<&str>, port: &str| Topology {
            expander: exp.map(String::from),
            sas_port: Some(port.into()),
            ..Topology::default()
        };
        let (a, b, c, d) = (
            t(Some("expander-6:1"), "port-6:1:0"),
            t(Some("expander-6:1"), "port-6:1:1"),
            t(Some("expander-6:0"), "port-6:0:0"),
            t(None, "port-6:2"),
        );
        assert_eq!(shared_element(&[&a, &b], &[&c, &d]).as_deref(), Some("expander-6:1"));
        // The others sit behind it too: not what sets the group apart.
        assert_eq!(shared_element(&[&a, &c], &[&b]), None);
        let p = t(None, "port-6:3");
        assert_eq!(shared_element(&[&p, &p.clone()], &[&d]).as_deref(), Some("port-6:3"));
    }

    #[test]
    fn an_own_path_is_advice_for_each_disk_of_the_group() {
        let mut advice = vec![DiskAdvice {
            path: "/dev/sdb".into(),
            action: Action::Return,
            sentence: "/dev/sdb: 2 unreadable range(s): return it.".into(),
            findings: Vec::new(),
        }];
        let group = ["/dev/sda".to_string(), "/dev/sdb".to_string()];
        advise(&group, (50.0, 49.0), Some("expander-6:1"), &mut advice);
        assert_eq!(advice.len(), 2);
        assert_eq!(advice[0].action, Action::Return, "a finding of its own stays");
        assert!(
            advice[0]
                .sentence
                .contains("return it; it also lost speed in parallel only together with /dev/sda")
        );
        assert_eq!(advice[1].action, Action::CheckPath);
        assert_eq!(
            advice[1].sentence,
            "/dev/sda: lost speed in parallel only together with /dev/sdb (kept 50% of its serial speed; read \
             without the other disks they still kept 49%): the path they share limits them, not the disk (they \
             sit behind expander-6:1, the others do not); check the path they share (cable, expander port, HBA port)."
        );
    }
}

//! A whole pass judged: which rules apply to which pass, and the reference
//! values (medians) every disk was compared with, so that the text and the
//! charts show the same references the verdicts used.
//!
//! - Every pass: speed, latency tail and (full passes) completion time
//!   against the peer group's median.
//! - Parallel and seek passes: speed against the disk's own serial speed;
//!   the parallel pass also decides whether a shared path limited the
//!   array (`peers::shared_path`), and under such a bottleneck only stalls
//!   count and no surface is judged.
//! - Seek pass: the share of its serial speed a disk keeps, against its
//!   peers' share; no surface judged (the seeks set each read's pace).

use super::Thresholds;
use super::disk::{Facts, Judged, verdict};
use super::groups::{self, SharedGroup};
use super::peers::{PathFinding, pct_of_group_median, shared_path};
use super::slices::{Conditions, SliceSpeed, spreads};
use super::surface::{Profile, SlowRegion, slow_regions};
use crate::measure::PassKind;
use crate::stats::median;

/// One controller's share in the parallel pass.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerShare {
    /// Its PCI address, and the disks behind it (indexes, in order).
    pub controller: String,
    pub disks: Vec<usize>,
    /// The median share of their serial speed its disks kept.
    pub kept_pct: f64,
    /// The disks behind it lost speed together while another controller's
    /// did not: this controller (or its link) limited them.
    pub limited: bool,
}

/// What the judge made of a pass.
#[derive(Debug, Clone, Default)]
pub struct PassJudgement {
    /// Per disk, in the order given.
    pub disks: Vec<Judged>,
    /// Parallel pass: what it says about the shared path.
    pub finding: Option<PathFinding>,
    /// Parallel pass, disks behind two or more controllers: each
    /// controller's share.
    pub controllers: Vec<ControllerShare>,
    /// Parallel pass, no controller limiting: the groups of disks that
    /// lost speed together while the others did not (`judge::groups`).
    pub groups: Vec<SharedGroup>,
    /// The median window MB/s over the disks that could be compared (no
    /// failed read, read long enough): the array's typical speed.
    pub median_mb_per_s: Option<f64>,
    /// Full passes: the median completion time (seconds) over the disks
    /// read cleanly to the end.
    pub median_elapsed_s: Option<f64>,
    /// A serial pass read in slices: how the array's speed moved.
    pub conditions: Option<Conditions>,
}

/// Judges a pass. `full`: whole disks were read (completion times count).
/// `serial`: each disk's clean serial speed, None where not measured.
/// `slices`: a serial pass's slices (their `disk` an index into `disks`).
pub fn judge(
    kind: PassKind,
    full: bool,
    disks: &[Facts],
    (serial, slices): (&[Option<f64>], &[SliceSpeed]),
    th: &Thresholds,
) -> PassJudgement {
    let n = Numbers::of(kind, full, disks, serial);
    let (finding, limits) = path(kind, disks, &n, serial, th);
    let path_limited = kind == PassKind::Parallel && finding.is_some_and(|f| f.shared_bottleneck);
    let mut peers = n.against_peers(kind, disks, &limits);
    let compared: Vec<bool> = disks.iter().map(|f| f.clean_speed().is_some()).collect();
    let (spreads, conditions) = spreads(slices, &n.groups, &compared);
    for (pct, s) in peers.speed.iter_mut().zip(&spreads) {
        *pct = s.map(|s| s.pct).or(*pct);
    }
    // Under a shared bottleneck the path sets each read's pace, and under
    // seek stress the seeks do: the serial pass judges the surface.
    let judges_surface = !path_limited && kind != PassKind::Seek;
    let regions = if judges_surface { surfaces(disks) } else { vec![Vec::new(); disks.len()] };
    let array_kept = finding.map(|f| f.median_pct_of_serial);
    let judged = regions
        .into_iter()
        .enumerate()
        .map(|(i, slow_regions)| {
            let mut j = Judged { spread: spreads[i], ..peers.of(i, &n, slow_regions) };
            // Behind a limiting controller, or in a group that lost speed
            // together, a disk is judged against its controller's or
            // group's share: slow only when it lost more than that.
            let (limited, kept) = match limits.share_of(i) {
                Some(kept) => {
                    j.slow_regions.clear();
                    (path_limited, Some(kept))
                }
                None => (path_limited, array_kept),
            };
            (j.verdict, j.reasons) = verdict(kind, &disks[i], &j, limited, kept, th);
            j
        })
        .collect();
    PassJudgement {
        disks: judged,
        finding,
        controllers: limits.controllers,
        groups: limits.groups,
        median_mb_per_s: clean_median(&n.speeds),
        median_elapsed_s: clean_median(&n.elapsed(disks)),
        conditions,
    }
}

/// The median of the values there are.
fn clean_median(v: &[Option<f64>]) -> Option<f64> {
    median(&v.iter().flatten().copied().collect::<Vec<_>>())
}

/// What each disk of a pass is compared on, before any rule.
struct Numbers {
    /// Each disk's peer group.
    groups: Vec<usize>,
    /// Clean window MB/s.
    speeds: Vec<Option<f64>>,
    /// Full passes: seconds per byte of a disk read cleanly to the end.
    times: Vec<Option<f64>>,
    /// Parallel and seek passes: % of the disk's own serial speed.
    pct_of_serial: Vec<Option<f64>>,
}

impl Numbers {
    fn of(kind: PassKind, full: bool, disks: &[Facts], serial: &[Option<f64>]) -> Self {
        let time = |f: &Facts| {
            (full && f.reached_end && f.bytes > 0)
                .then(|| f.elapsed_s / f.bytes as f64)
                .and_then(|t| f.clean(t))
        };
        let of_serial = |(f, s): (&Facts, &Option<f64>)| match kind {
            PassKind::Serial => None,
            _ => s.zip(f.clean_speed()).map(|(s, v)| 100.0 * v / s),
        };
        Self {
            groups: disks.iter().map(|f| f.group).collect(),
            speeds: disks.iter().map(Facts::clean_speed).collect(),
            times: disks.iter().map(time).collect(),
            pct_of_serial: disks.iter().zip(serial).map(of_serial).collect(),
        }
    }

    /// Each disk's share of its peer group's median: speed (disks behind a
    /// limiting controller are not compared with the others: their speed
    /// is the controller's share, not theirs), latency tail, completion
    /// time, and in the seek pass the loss against its own serial speed
    /// (seeking costs every HDD most of its speed).
    fn against_peers(&self, kind: PassKind, disks: &[Facts], limits: &Limits) -> Peers {
        let groups = &self.groups;
        let compared: Vec<Option<f64>> = (self.speeds.iter().enumerate())
            .map(|(i, v)| v.filter(|_| limits.share_of(i).is_none()))
            .collect();
        let tails: Vec<Option<f64>> = disks.iter().map(|f| f.clean(f.p9999_us)).collect();
        let seek = if kind != PassKind::Seek {
            vec![None; disks.len()]
        } else if self.pct_of_serial.iter().any(Option::is_some) {
            pct_of_group_median(&self.pct_of_serial, groups)
        } else {
            pct_of_group_median(&self.speeds, groups)
        };
        Peers {
            speed: pct_of_group_median(&compared, groups),
            tail: pct_of_group_median(&tails, groups),
            time: pct_of_group_median(&self.times, groups),
            seek,
        }
    }

    /// The seconds of the disks whose completion time counts.
    fn elapsed(&self, disks: &[Facts]) -> Vec<Option<f64>> {
        (disks.iter().zip(&self.times)).map(|(f, t)| t.map(|_| f.elapsed_s)).collect()
    }
}

/// Each disk's % of its peers' median, by what is compared.
struct Peers {
    speed: Vec<Option<f64>>,
    tail: Vec<Option<f64>>,
    time: Vec<Option<f64>>,
    seek: Vec<Option<f64>>,
}

impl Peers {
    /// Disk `i`'s comparisons, not yet judged.
    fn of(&self, i: usize, n: &Numbers, slow_regions: Vec<SlowRegion>) -> Judged {
        Judged {
            pct_of_peers: self.speed[i],
            pct_of_serial: n.pct_of_serial[i],
            seek_pct_of_peers: self.seek[i],
            time_pct_of_peers: self.time[i],
            p9999_pct_of_peers: self.tail[i],
            peers_median_mb_per_s: group_median(&n.speeds, &n.groups, n.groups[i]),
            slow_regions,
            ..Judged::default()
        }
    }
}

/// What limited some disks of the parallel pass and not the others: the
/// controllers that did, or else the groups that lost speed together.
#[derive(Default)]
struct Limits {
    controllers: Vec<ControllerShare>,
    groups: Vec<SharedGroup>,
}

impl Limits {
    /// The share of its serial speed disk `i` is judged against when a
    /// controller or a group it is in limited it.
    fn share_of(&self, i: usize) -> Option<f64> {
        let c = self.controllers.iter().find(|c| c.limited && c.disks.contains(&i));
        let g = || self.groups.iter().find(|g| g.disks.contains(&i));
        c.map(|c| c.kept_pct).or_else(|| g().map(|g| g.kept_pct))
    }
}

/// Parallel pass: what it says about the path all disks share, and what
/// limited only some of them. Disks behind one controller lost speed
/// together and the others did not: that controller is the bottleneck, not
/// a path all disks share; where no controller tells them apart, the
/// groups that lost speed together are (`judge::groups`). Either way the
/// array's share is the others'.
fn path(
    kind: PassKind,
    disks: &[Facts],
    n: &Numbers,
    serial: &[Option<f64>],
    th: &Thresholds,
) -> (Option<PathFinding>, Limits) {
    if kind != PassKind::Parallel {
        return (None, Limits::default());
    }
    let pairs: Vec<(f64, f64)> =
        (serial.iter().zip(&n.speeds)).filter_map(|(s, v)| s.zip(*v)).collect();
    let mut finding = shared_path(&pairs, th);
    let controllers = controller_shares(disks, &n.pct_of_serial, th);
    let groups = if controllers.iter().any(|c| c.limited) {
        Vec::new()
    } else {
        groups::find(&n.pct_of_serial, th)
    };
    let limits = Limits { controllers, groups };
    let others_kept = match limits.groups.first() {
        Some(g) => Some(g.others_kept_pct),
        None => {
            let fine: Vec<f64> = (limits.controllers.iter().filter(|c| !c.limited))
                .flat_map(|c| c.disks.iter().filter_map(|i| n.pct_of_serial[*i]))
                .collect();
            limits.controllers.iter().any(|c| c.limited).then(|| median(&fine)).flatten()
        }
    };
    if let (Some(f), Some(kept)) = (finding.as_mut(), others_kept) {
        f.median_pct_of_serial = kept;
        // A controller that limited its disks, or a group's path beside
        // disks that lost nothing, is not a path all share.
        f.shared_bottleneck = false;
    }
    (finding, limits)
}

/// Each disk's slow regions of its surface, against its peers'.
fn surfaces(disks: &[Facts]) -> Vec<Vec<SlowRegion>> {
    let profiles: Vec<Profile> = disks
        .iter()
        .map(|f| Profile {
            mb_per_s: f.surface_mb_per_s,
            reads: f.surface_reads,
            bytes: f.surface_bytes,
            size: f.size_bytes,
            group: f.group,
        })
        .collect();
    slow_regions(&profiles)
}

/// Each controller's median share of serial speed kept in the parallel
/// pass, when the disks sit behind two or more; a controller whose disks
/// kept under `slow_pct` % while another's kept more is limited. Only a
/// controller with two or more disks compared can be: behind one with a
/// single disk (an NVMe drive is its own controller) the controller's loss
/// cannot be told from the disk's, which the disk's own verdict judges.
fn controller_shares(
    disks: &[Facts],
    pct_of_serial: &[Option<f64>],
    th: &Thresholds,
) -> Vec<ControllerShare> {
    let mut out: Vec<ControllerShare> = Vec::new();
    for (i, f) in disks.iter().enumerate() {
        let Some(c) = &f.controller else { continue };
        match out.iter_mut().find(|s| &s.controller == c) {
            Some(s) => s.disks.push(i),
            None => out.push(ControllerShare {
                controller: c.clone(),
                disks: vec![i],
                kept_pct: 0.0,
                limited: false,
            }),
        }
    }
    out.retain_mut(|s| {
        let kept: Vec<f64> = s.disks.iter().filter_map(|i| pct_of_serial[*i]).collect();
        match median(&kept) {
            Some(m) => {
                s.kept_pct = m;
                true
            }
            None => false,
        }
    });
    if out.len() < 2 {
        return Vec::new();
    }
    let any_fine = out.iter().any(|s| s.kept_pct >= th.slow_pct);
    for s in &mut out {
        let compared = s.disks.iter().filter(|i| pct_of_serial[**i].is_some());
        s.limited = any_fine && s.kept_pct < th.slow_pct && compared.count() >= 2;
    }
    out
}

/// The median of group `g`'s values, when it has at least two.
fn group_median(values: &[Option<f64>], groups: &[usize], g: usize) -> Option<f64> {
    let peers: Vec<f64> =
        values.iter().zip(groups).filter(|(_, pg)| **pg == g).filter_map(|(v, _)| *v).collect();
    (peers.len() >= 2).then(|| median(&peers)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Verdict;

    fn disk(speed: f64) -> Facts<'static> {
        Facts {
            window_mb_per_s: speed,
            window_s: 5.0,
            bytes: (speed * 5e6) as u64,
            elapsed_s: 5.0,
            p9999_us: 10_000.0,
            ..Facts::default()
        }
    }

    fn verdicts(j: &PassJudgement) -> Vec<Verdict> {
        j.disks.iter().map(|d| d.verdict).collect()
    }

    #[test]
    fn which_rules_apply_to_which_pass() {
        let th = Thresholds::default();
        let serial = [Some(200.0), Some(200.0), Some(200.0), Some(200.0)];
        // One disk loses speed alone in parallel; the serial pass saw them
        // equal.
        let alone = [disk(199.0), disk(198.0), disk(120.0), disk(200.0)];
        let j = judge(PassKind::Parallel, false, &alone, (&serial, &[]), &th);
        assert_eq!(verdicts(&j), [Verdict::Ok, Verdict::Ok, Verdict::Slow, Verdict::Ok]);
        assert!(!j.finding.unwrap().shared_bottleneck);
        assert_eq!(j.disks[2].pct_of_serial, Some(60.0));
        // All lose together: a shared bottleneck, and the parallel numbers
        // flag nobody, even the one that lost more.
        let together = [disk(100.0), disk(101.0), disk(70.0), disk(99.0)];
        let j = judge(PassKind::Parallel, false, &together, (&serial, &[]), &th);
        assert!(j.finding.unwrap().shared_bottleneck);
        assert_eq!(verdicts(&j), [Verdict::Ok; 4]);
        // The serial pass has no own-serial rule and no path finding.
        let j = judge(PassKind::Serial, false, &together, (&serial, &[]), &th);
        assert!(j.finding.is_none());
        assert!(j.disks.iter().all(|d| d.pct_of_serial.is_none()));
        assert_eq!(verdicts(&j)[2], Verdict::Slow);
        // Seek pass: every disk keeps 20 %; one keeps 10 %.
        let seek = [disk(40.0), disk(40.0), disk(20.0), disk(40.0)];
        let j = judge(PassKind::Seek, false, &seek, (&serial, &[]), &th);
        assert_eq!(verdicts(&j), [Verdict::Ok, Verdict::Ok, Verdict::Slow, Verdict::Ok]);
        assert_eq!(j.disks[2].seek_pct_of_peers, Some(50.0));
    }

    #[test]
    fn a_controller_whose_disks_lose_speed_together_is_named_not_its_disks() {
        let th = Thresholds::default();
        let on = |c: &str, f: Facts<'static>| Facts { controller: Some(c.into()), ..f };
        let serial = [Some(200.0); 6];
        // Four disks on the HBA keep 60 %, two on AHCI keep 99 %; one AHCI
        // disk... all the same model.
        let d = [
            on("0000:03:00.0", disk(120.0)),
            on("0000:03:00.0", disk(122.0)),
            on("0000:03:00.0", disk(118.0)),
            on("0000:03:00.0", disk(121.0)),
            on("0000:00:17.0", disk(198.0)),
            on("0000:00:17.0", disk(199.0)),
        ];
        let j = judge(PassKind::Parallel, false, &d, (&serial, &[]), &th);
        assert!(!j.finding.unwrap().shared_bottleneck, "not a path all disks share: the HBA's");
        let hba = &j.controllers[0];
        assert_eq!((hba.controller.as_str(), hba.disks.len()), ("0000:03:00.0", 4));
        assert!(hba.limited && (hba.kept_pct - 60.25).abs() < 0.5, "{hba:?}");
        assert!(!j.controllers[1].limited);
        assert_eq!(verdicts(&j), [Verdict::Ok; 6], "no disk is blamed");
        // One disk behind the HBA loses more than its controller's share:
        // that one is still slow (against its controller's share).
        let mut worse = d.clone();
        worse[3] = on("0000:03:00.0", disk(60.0));
        let j = judge(PassKind::Parallel, false, &worse, (&serial, &[]), &th);
        assert_eq!(verdicts(&j)[3], Verdict::Slow);
        assert_eq!(&verdicts(&j)[..3], [Verdict::Ok; 3]);
        // Both controllers lose alike: no controller named.
        let alike = [
            on("a", disk(198.0)),
            on("a", disk(199.0)),
            on("b", disk(197.0)),
            on("b", disk(200.0)),
        ];
        let j = judge(PassKind::Parallel, false, &alike, (&[Some(200.0); 4], &[]), &th);
        assert!(j.controllers.iter().all(|c| !c.limited));
        // Eight NVMe drives, each its own controller, sharing the CPU
        // unevenly (63-94 %, as CI saw): a shared bottleneck, no
        // controller named and no drive blamed.
        let kept = [63.0, 81.0, 74.0, 89.0, 82.0, 77.0, 92.0, 94.0];
        let nvme: Vec<Facts> = kept
            .iter()
            .enumerate()
            .map(|(i, k)| on(["a", "b", "c", "d", "e", "f", "g", "h"][i], disk(2.0 * k)))
            .collect();
        let j = judge(PassKind::Parallel, false, &nvme, (&[Some(200.0); 8], &[]), &th);
        assert!(j.controllers.iter().all(|c| !c.limited), "{:?}", j.controllers);
        assert!(j.finding.unwrap().shared_bottleneck);
        assert_eq!(verdicts(&j), [Verdict::Ok; 8]);
    }

    #[test]
    fn half_the_disks_behind_a_halved_path_are_a_group_not_a_shared_bottleneck() {
        let th = Thresholds::default();
        let serial = [Some(150.0); 8];
        // No controller known: four keep all their speed, four keep half.
        let kept = [150.0, 75.0, 149.0, 74.0, 151.0, 76.0, 148.0, 75.0];
        let d: Vec<Facts> = kept.iter().map(|v| disk(*v)).collect();
        let j = judge(PassKind::Parallel, false, &d, (&serial, &[]), &th);
        let f = j.finding.unwrap();
        assert!(!f.shared_bottleneck, "half of them lost nothing: {f:?}");
        assert!((f.median_pct_of_serial - 99.7).abs() < 0.5, "the others' share: {f:?}");
        assert_eq!(j.groups.len(), 1);
        assert_eq!(j.groups[0].disks, [1, 3, 5, 7]);
        assert_eq!(verdicts(&j), [Verdict::Ok; 8], "no disk blamed for its group's path");
        // One of the group lost more than its group: that one is slow.
        let mut worse = d.clone();
        worse[5] = disk(30.0);
        let j = judge(PassKind::Parallel, false, &worse, (&serial, &[]), &th);
        assert_eq!(j.groups[0].disks, [1, 3, 7]);
        assert_eq!(verdicts(&j)[5], Verdict::Slow);
        // Evenly halved: the shared bottleneck it was, and no group.
        let even: Vec<Facts> = kept.iter().map(|_| disk(75.0)).collect();
        let j = judge(PassKind::Parallel, false, &even, (&serial, &[]), &th);
        assert!(j.finding.unwrap().shared_bottleneck && j.groups.is_empty());
    }

    #[test]
    fn the_references_are_the_ones_judged_against() {
        let th = Thresholds::default();
        let mut d = vec![disk(100.0), disk(102.0), disk(98.0), disk(60.0)];
        // A disk with failed reads and one read too briefly are not part
        // of any median.
        d[3].read_errors = 1;
        d.push(Facts { window_s: 0.2, ..disk(1.0) });
        let j = judge(PassKind::Serial, false, &d, (&[None; 5], &[]), &th);
        assert_eq!(j.median_mb_per_s, Some(100.0));
        assert_eq!(j.disks[0].peers_median_mb_per_s, Some(100.0));
        assert_eq!(j.disks[0].pct_of_peers, Some(100.0));
        assert_eq!(j.median_elapsed_s, None, "a sample pass has no completion times");
        // Full pass: times per byte; the slowest to finish is slow.
        let mut full = vec![disk(100.0), disk(100.0), disk(100.0)];
        for f in &mut full {
            f.reached_end = true;
        }
        full[2].elapsed_s = 7.0;
        let j = judge(PassKind::Parallel, true, &full, (&[None; 3], &[]), &th);
        assert_eq!(j.median_elapsed_s, Some(5.0));
        assert_eq!(j.disks[2].verdict, Verdict::Slow);
        assert!(j.disks[2].reasons[0].starts_with("took 140%"), "{:?}", j.disks[2].reasons);
    }

    #[test]
    fn groups_are_judged_apart() {
        let th = Thresholds::default();
        let mut d = vec![disk(180.0), disk(178.0), disk(181.0), disk(520.0), disk(515.0)];
        d[3].group = 1;
        d[4].group = 1;
        let j = judge(PassKind::Serial, false, &d, (&[None; 5], &[]), &th);
        assert_eq!(verdicts(&j), [Verdict::Ok; 5]);
        assert_eq!(j.disks[0].peers_median_mb_per_s, Some(180.0));
        assert_eq!(j.disks[3].peers_median_mb_per_s, Some(517.5));
    }
}

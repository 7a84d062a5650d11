//! A serial pass read in slices, judged: each disk against the slices of
//! its peers read close to its own in time, so that a slow change of the
//! shared conditions (a busy server's other load, a controller or CPU that
//! throttles) is not taken for a slow disk; and how far the array's speed
//! itself moved during the pass.
//!
//! Each slice's speed is taken as the disk's level times the shared
//! condition of its moment. A disk's level is the median of its slices'
//! speeds divided by their conditions; the condition at a slice's moment is
//! read from the peers' slices nearest to it in time (each divided by its
//! own disk's level), fitted with a robust line (Theil-Sen) through them,
//! so a steady drift cancels also at the pass's first and last slices. A
//! disk's speed is then the median of its slices' shares of its group's
//! level at their moments, with the order statistics around the median
//! that hold it at 90 % confidence or better (all of them for fewer than
//! eight slices): the spread an admin reads as "86 % (82-90)".
//!
//! It must not measure or know the report's layout: slices come in as
//! numbers.

use crate::stats::median;

/// One slice as the judge sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliceSpeed {
    /// The disk (index into the pass's disks).
    pub disk: usize,
    /// The round it was read in.
    pub round: u32,
    /// Its middle, in seconds from the start of the pass.
    pub at_s: f64,
    /// Its window speed.
    pub mb_per_s: f64,
}

/// A disk's speed against its peers over its slices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// % of its group's level: the median over its slices...
    pub pct: f64,
    /// ...and the interval around it.
    pub low: f64,
    pub high: f64,
    /// Slices it rests on.
    pub slices: usize,
}

/// How the array's own speed moved during the pass: the lowest and highest
/// round's shared condition, as % of the pass's median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditions {
    pub low_pct: f64,
    pub high_pct: f64,
}

/// The shared conditions moved when the array's speed changed by this
/// many % or more between rounds: enough to blame healthy disks when they
/// are read one after another.
pub const MOVED_PCT: f64 = 5.0;

impl Conditions {
    /// Whether they moved enough to say so.
    pub fn moved(&self) -> bool {
        self.high_pct - self.low_pct >= MOVED_PCT
    }
}

/// Each disk's spread (None for a disk without slices or without a peer in
/// its group with slices), and how the conditions moved (None with fewer
/// than two rounds). `groups`: each disk's peer group; `compared`: whether
/// a disk's slices count (no failed read, read long enough).
pub fn spreads(
    slices: &[SliceSpeed],
    groups: &[usize],
    compared: &[bool],
) -> (Vec<Option<Spread>>, Option<Conditions>) {
    let kept: Vec<SliceSpeed> =
        slices.iter().copied().filter(|s| compared[s.disk] && s.mb_per_s > 0.0).collect();
    let speeds: Vec<f64> = kept.iter().map(|s| s.mb_per_s).collect();
    let mut levels = disk_medians(&kept, &speeds, groups.len());
    let mut conditions = vec![1.0; kept.len()];
    // Twice: the levels first from the raw speeds, then from the speeds
    // with their moments' conditions taken out.
    for _ in 0..2 {
        conditions = (0..kept.len()).map(|i| condition(&kept, i, &levels, groups)).collect();
        let adjusted: Vec<f64> = speeds.iter().zip(&conditions).map(|(v, c)| v / c).collect();
        levels = disk_medians(&kept, &adjusted, groups.len());
    }
    let shares: Vec<f64> = (kept.iter().zip(&conditions))
        .map(|(s, c)| {
            group_level(&levels, groups, groups[s.disk])
                .map_or(f64::NAN, |g| 100.0 * s.mb_per_s / (c * g))
        })
        .collect();
    let spreads = (0..groups.len()).map(|d| spread_of(&kept, &shares, d)).collect();
    (spreads, moved(&kept, &conditions))
}

/// Each of `n` disks' median of `values` (one per slice of `kept`).
fn disk_medians(kept: &[SliceSpeed], values: &[f64], n: usize) -> Vec<Option<f64>> {
    let of = |d: usize| -> Vec<f64> {
        (kept.iter().zip(values)).filter(|(s, _)| s.disk == d).map(|(_, v)| *v).collect()
    };
    (0..n).map(|d| median(&of(d))).collect()
}

/// The level of group `g`: the median of its disks' levels, when it has at
/// least two.
fn group_level(levels: &[Option<f64>], groups: &[usize], g: usize) -> Option<f64> {
    let of_group: Vec<f64> =
        (levels.iter().zip(groups)).filter(|(_, pg)| **pg == g).filter_map(|(l, _)| *l).collect();
    (of_group.len() >= 2).then(|| median(&of_group)).flatten()
}

/// The shared condition at slice `i`'s moment, from the slices of the
/// other disks of its group nearest to it in time (as many as the group
/// has other disks, at least two): each one's speed over its disk's level,
/// a robust line through them read at slice `i`'s moment, held within the
/// conditions those slices showed (a line through two slices on one side
/// of it, say a cache warming, runs on to zero or below: a condition never
/// seen is not one to divide by). 1 where it has no such peer.
fn condition(kept: &[SliceSpeed], i: usize, levels: &[Option<f64>], groups: &[usize]) -> f64 {
    let me = kept[i];
    let mut near: Vec<(f64, f64)> = (kept.iter())
        .filter(|s| s.disk != me.disk && groups[s.disk] == groups[me.disk])
        .filter_map(|s| levels[s.disk].map(|l| (s.at_s - me.at_s, s.mb_per_s / l)))
        .collect();
    let in_group = levels.iter().zip(groups).filter(|(l, g)| l.is_some() && **g == groups[me.disk]);
    let others = in_group.count().saturating_sub(1);
    near.sort_by(|a, b| a.0.abs().total_cmp(&b.0.abs()));
    near.truncate(others.max(2));
    let seen = (near.iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    theil_sen_at_zero(&near).map_or(1.0, |c| c.clamp(seen.0, seen.1))
}

/// The Theil-Sen line through `points` (x, y), read at x = 0: the median of
/// the pairwise slopes, then the median intercept. One point: its y.
pub fn theil_sen_at_zero(points: &[(f64, f64)]) -> Option<f64> {
    let mut slopes = Vec::new();
    for (k, a) in points.iter().enumerate() {
        slopes.extend(
            points[k + 1..].iter().filter(|b| b.0 != a.0).map(|b| (b.1 - a.1) / (b.0 - a.0)),
        );
    }
    let slope = median(&slopes).unwrap_or(0.0);
    median(&points.iter().map(|(x, y)| y - slope * x).collect::<Vec<_>>())
}

/// Disk `d`'s spread over its slices' shares.
fn spread_of(kept: &[SliceSpeed], shares: &[f64], d: usize) -> Option<Spread> {
    let mut own: Vec<f64> = (kept.iter().zip(shares))
        .filter(|(s, p)| s.disk == d && p.is_finite())
        .map(|(_, p)| *p)
        .collect();
    own.sort_by(f64::total_cmp);
    let pct = median(&own)?;
    let j = confidence_rank(own.len());
    Some(Spread { pct, low: own[j], high: own[own.len() - 1 - j], slices: own.len() })
}

/// The rank (from 0) of the order statistics around the median of `k`
/// values that hold it at 90 % confidence or better: the widest such pair
/// is the outermost (0) below eight values.
pub fn confidence_rank(k: usize) -> usize {
    // P(the median lies outside values j..k-1-j) = 2 P(Binomial(k, ½) <= j).
    let tail = |j: usize| (0..=j).map(|i| binomial(k, i)).sum::<f64>() * 2.0 / 2f64.powi(k as i32);
    (0..k / 2).take_while(|&j| tail(j) <= 0.1).last().unwrap_or(0)
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The lowest and highest round's median condition, as % of the median
/// over all slices: None with fewer than two rounds.
fn moved(kept: &[SliceSpeed], conditions: &[f64]) -> Option<Conditions> {
    let all = median(conditions)?;
    let rounds: std::collections::BTreeSet<u32> = kept.iter().map(|s| s.round).collect();
    let of_round = |r: u32| {
        median(
            &kept
                .iter()
                .zip(conditions)
                .filter(|(s, _)| s.round == r)
                .map(|(_, c)| *c)
                .collect::<Vec<_>>(),
        )
    };
    let per: Vec<f64> =
        rounds.iter().filter_map(|r| of_round(*r)).map(|c| 100.0 * c / all).collect();
    (per.len() >= 2).then(|| Conditions {
        low_pct: per.iter().copied().fold(f64::INFINITY, f64::min),
        high_pct: per.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` disks read in `rounds` rounds of `each` seconds per slice (in
    /// plain order), disk `d` at `level(d)` MB/s times the shared
    /// `condition(t)` at its slice's middle.
    fn pass(
        n: usize,
        rounds: u32,
        level: impl Fn(usize) -> f64,
        condition: impl Fn(f64) -> f64,
    ) -> Vec<SliceSpeed> {
        let each = 5.0;
        let mut out = Vec::new();
        for round in 0..rounds {
            let order: Vec<usize> = crate::measure::round_order(n, round, rounds);
            for (k, d) in order.into_iter().enumerate() {
                let at_s = (f64::from(round) * n as f64 + k as f64 + 0.5) * each;
                out.push(SliceSpeed { disk: d, round, at_s, mb_per_s: level(d) * condition(at_s) });
            }
        }
        out
    }

    #[test]
    fn a_drift_shared_by_every_disk_blames_none_and_is_said() {
        // Eight identical disks; the shared speed rises and falls by 15 %
        // over the pass (4 min), as a backup starting and ending would.
        let wave = |t: f64| 1.0 + 0.15 * (t / 240.0 * std::f64::consts::TAU).sin();
        let s = pass(8, 6, |_| 200.0, wave);
        let (spreads, moved) = spreads(&s, &[0; 8], &[true; 8]);
        for (d, sp) in spreads.iter().enumerate() {
            let sp = sp.unwrap();
            assert_eq!(sp.slices, 6);
            assert!(sp.low > 97.0 && sp.high < 103.0, "disk {d}: {sp:?}");
        }
        let moved = moved.unwrap();
        assert!(moved.moved() && moved.high_pct - moved.low_pct > 15.0, "{moved:?}");
    }

    #[test]
    fn a_slow_disk_under_a_drift_is_told_with_its_spread_and_the_others_are_not() {
        let wave = |t: f64| 1.0 + 0.12 * (t / 200.0 * std::f64::consts::TAU).sin();
        let s = pass(8, 6, |d| if d == 3 { 170.0 } else { 200.0 }, wave);
        let (spreads, _) = spreads(&s, &[0; 8], &[true; 8]);
        let slow = spreads[3].unwrap();
        assert!((slow.pct - 85.0).abs() < 1.5 && slow.high < 90.0, "{slow:?}");
        for d in (0..8).filter(|d| *d != 3) {
            let sp = spreads[d].unwrap();
            assert!(sp.low > 96.0, "disk {d}: {sp:?}");
        }
    }

    #[test]
    fn a_drift_faster_than_the_rounds_leaves_healthy_disks_unsure_at_worst() {
        // 15 % up and down every two rounds (80 s): faster than the design
        // can follow; the healthy disks' spreads widen, none falls under.
        for period in [80.0, 120.0, 160.0] {
            let wave = |t: f64| 1.0 + 0.15 * (t / period * std::f64::consts::TAU).sin();
            let (spreads, _) = spreads(&pass(8, 6, |_| 200.0, wave), &[0; 8], &[true; 8]);
            for (d, sp) in spreads.iter().enumerate() {
                let sp = sp.unwrap();
                assert!(
                    sp.high > 95.0 && (sp.pct - 100.0).abs() < 4.0,
                    "{period} s, disk {d}: {sp:?}"
                );
            }
        }
    }

    #[test]
    fn steady_conditions_give_each_disk_its_share_and_say_nothing_moved() {
        let s = pass(4, 4, |d| [100.0, 100.0, 100.0, 88.0][d], |_| 1.0);
        let (spreads, moved) = spreads(&s, &[0; 4], &[true; 4]);
        assert!((spreads[3].unwrap().pct - 88.0).abs() < 1e-9);
        assert!((spreads[0].unwrap().pct - 100.0).abs() < 1e-9);
        assert!(!moved.unwrap().moved());
    }

    #[test]
    fn groups_are_judged_apart_and_a_disk_not_compared_has_no_spread() {
        let s = pass(4, 2, |d| if d < 2 { 100.0 } else { 300.0 }, |_| 1.0);
        let (spreads, _) = spreads(&s, &[0, 0, 1, 1], &[true, true, true, false]);
        assert!((spreads[2].is_none()) && spreads[3].is_none(), "{spreads:?}");
        assert!((spreads[1].unwrap().pct - 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_condition_read_beyond_its_slices_stays_within_what_they_showed() {
        // Two disks read A-B-B-A; B's two slices, both after A's first,
        // at 100 and 300 MB/s (a cache warming): the line through them
        // runs below zero at A's first slice. CI once wrote a
        // pct_of_peers of -425 from this, which the fleet report then
        // refused as a damaged file.
        let slice = |disk, round, at_s, mb_per_s| SliceSpeed { disk, round, at_s, mb_per_s };
        let s = [
            slice(0, 0, 0.5, 200.0),
            slice(1, 0, 1.5, 100.0),
            slice(1, 1, 2.5, 300.0),
            slice(0, 1, 3.5, 200.0),
        ];
        let (spreads, moved) = spreads(&s, &[0, 0], &[true, true]);
        for sp in spreads.iter().map(|sp| sp.unwrap()) {
            for v in [sp.pct, sp.low, sp.high] {
                assert!(v.is_finite() && v > 10.0 && v < 1000.0, "{sp:?}");
            }
        }
        let moved = moved.unwrap();
        assert!(moved.low_pct > 0.0 && moved.high_pct.is_finite(), "{moved:?}");
    }

    #[test]
    fn the_interval_around_the_median_holds_it_at_90_percent() {
        assert_eq!(confidence_rank(1), 0);
        assert_eq!(confidence_rank(6), 0);
        // 8 values: the 2nd to the 7th hold it at 93 %.
        assert_eq!(confidence_rank(8), 1);
        assert_eq!(confidence_rank(12), 2);
    }
}

//! Slow regions on a disk's surface profile: pure functions over per-bucket
//! speeds.
//!
//! **Region rule.** A position bucket is slow when it reads at less than
//! [`REGION_PCT`] % of a reference:
//! - what the disk's peers (same model, size and kind; the disk itself
//!   included, at least two with data) read in the same bucket, at this
//!   disk's own pace: their median there times [`PACE_QUANTILE`] of this
//!   disk's bucket-by-bucket ratios to them. A disk slow all over (a
//!   throttled or slow port) is not a slow region wherever the ripple of
//!   its reads dips under half its faster peers' (that is the speed rule's
//!   finding); a patch that reads at a fraction of the rest is, as long as
//!   the disk reads at its own pace in a quarter of its buckets; or
//! - the median speed of the disk's own neighbourhood: up to
//!   [`NEIGHBOURS`] buckets on each side, the bucket itself left out.
//!
//! An HDD's outer-to-inner slope changes speed by about 1 % from one of 100
//! buckets to the next, so the neighbourhood median tracks it and it is never
//! a region; a failing patch reads at a fraction of its surroundings. A bucket
//! is judged only when it holds at least [`MIN_BUCKET_READS`] reads taking
//! [`MIN_BUCKET_S`] in all, and so are the references: one read's speed, or
//! a few milliseconds of reads, scatters too much (a cache hit, a throttle's
//! burst) to condemn a region on. Adjacent slow buckets are one
//! region.

use serde::{Deserialize, Serialize};

use crate::defaults::MIN_BUCKET_READS;
use crate::stats::{median, quantile};
use crate::units::fraction_of;

/// A bucket below this % of its reference is slow.
pub const REGION_PCT: f64 = 50.0;
/// Buckets with fewer reads than [`MIN_BUCKET_READS`] are neither judged
/// nor used as a reference, nor are buckets whose reads took less time than
/// this (seconds).
pub const MIN_BUCKET_S: f64 = 0.1;
/// Buckets on each side that form a bucket's neighbourhood.
pub const NEIGHBOURS: usize = 5;
/// A disk's pace against its peers: this quantile of its per-bucket ratios
/// to their median (its faster quarter; a region up to three quarters of
/// the disk leaves it).
pub const PACE_QUANTILE: f64 = 0.75;

/// What a slow region was compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Against {
    /// The same region of the peer disks.
    Peers,
    /// The disk's own neighbouring regions.
    Neighbours,
}

/// A run of adjacent slow buckets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowRegion {
    /// First byte of the region.
    pub start_byte: u64,
    /// First byte after the region.
    pub end_byte: u64,
    /// First bucket of the region.
    pub first_bucket: usize,
    /// Last bucket of the region.
    pub last_bucket: usize,
    /// MB/s of the region's slowest bucket.
    pub mb_per_s: f64,
    /// That bucket's reference MB/s.
    pub reference_mb_per_s: f64,
    /// What it was compared with (the peers when both rules apply).
    pub against: Against,
}

/// One disk's profile: MB/s and read count per bucket, and the disk size.
#[derive(Debug, Clone)]
pub struct Profile<'a> {
    /// MB/s per bucket (None where nothing was read).
    pub mb_per_s: &'a [Option<f64>],
    /// Reads per bucket.
    pub reads: &'a [u64],
    /// Bytes read per bucket.
    pub bytes: &'a [u64],
    /// Device size in bytes.
    pub size: u64,
    /// Peer group.
    pub group: usize,
}

impl Profile<'_> {
    /// The bucket's speed when it holds enough reads to be judged.
    fn judged(&self, i: usize) -> Option<f64> {
        let (reads, bytes) = (*self.reads.get(i)?, *self.bytes.get(i)?);
        let v = (*self.mb_per_s.get(i)?).filter(|v| *v > 0.0)?;
        let seconds = bytes as f64 / 1e6 / v;
        (reads >= MIN_BUCKET_READS && seconds >= MIN_BUCKET_S).then_some(v)
    }
}

/// The slow regions of each profile.
pub fn slow_regions(profiles: &[Profile]) -> Vec<Vec<SlowRegion>> {
    profiles
        .iter()
        .map(|p| {
            let n = p.mb_per_s.len();
            // The peers' median in each bucket (None with fewer than two).
            let there: Vec<Option<f64>> = (0..n)
                .map(|i| {
                    let peers: Vec<f64> = profiles
                        .iter()
                        .filter(|q| q.group == p.group && q.mb_per_s.len() == n)
                        .filter_map(|q| q.judged(i))
                        .collect();
                    (peers.len() >= 2).then(|| median(&peers)).flatten()
                })
                .collect();
            let ratios: Vec<f64> = (0..n).filter_map(|i| Some(p.judged(i)? / there[i]?)).collect();
            let pace = quantile(&ratios, PACE_QUANTILE).unwrap_or(1.0).min(1.0);
            let mut slow: Vec<(usize, f64, f64, Against)> = Vec::new();
            for (i, peers) in there.iter().enumerate() {
                let Some(v) = p.judged(i) else { continue };
                let by_peers = peers.map(|m| m * pace);
                let around: Vec<f64> = (i.saturating_sub(NEIGHBOURS)..(i + NEIGHBOURS + 1).min(n))
                    .filter(|&j| j != i)
                    .filter_map(|j| p.judged(j))
                    .collect();
                let by_neighbours = (around.len() >= 2).then(|| median(&around)).flatten();
                let below = |r: Option<f64>| r.filter(|r| v < REGION_PCT / 100.0 * r);
                if let Some(r) = below(by_peers) {
                    slow.push((i, v, r, Against::Peers));
                } else if let Some(r) = below(by_neighbours) {
                    slow.push((i, v, r, Against::Neighbours));
                }
            }
            merge(&slow, n, p.size)
        })
        .collect()
}

/// Joins adjacent slow buckets into regions.
fn merge(slow: &[(usize, f64, f64, Against)], buckets: usize, size: u64) -> Vec<SlowRegion> {
    let edge = |k: usize| fraction_of(size, k as u64, buckets as u64);
    let mut out: Vec<SlowRegion> = Vec::new();
    for &(i, v, r, against) in slow {
        match out.last_mut() {
            Some(last) if last.last_bucket + 1 == i => {
                last.last_bucket = i;
                last.end_byte = edge(i + 1);
                if v / r < last.mb_per_s / last.reference_mb_per_s {
                    (last.mb_per_s, last.reference_mb_per_s) = (v, r);
                }
                if against == Against::Peers {
                    last.against = Against::Peers;
                }
            }
            _ => out.push(SlowRegion {
                start_byte: edge(i),
                end_byte: edge(i + 1),
                first_bucket: i,
                last_bucket: i,
                mb_per_s: v,
                reference_mb_per_s: r,
                against,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn profile(speeds: &[Option<f64>], reads: &[u64], group: usize) -> Vec<SlowRegion> {
        let bytes = vec![1_000_000_000; speeds.len()];
        let p = Profile {
            mb_per_s: speeds,
            reads,
            bytes: &bytes,
            size: speeds.len() as u64 * 1000,
            group,
        };
        slow_regions(&[p]).remove(0)
    }

    /// An HDD: 200 MB/s at the outer edge down to 100 at the inner one.
    fn hdd(n: usize) -> Vec<Option<f64>> {
        (0..n).map(|i| Some(200.0 - 100.0 * i as f64 / (n - 1) as f64)).collect()
    }

    #[test]
    fn the_outer_to_inner_slope_is_not_a_region() {
        let s = hdd(100);
        assert!(profile(&s, &[40; 100], 0).is_empty());
    }

    #[test]
    fn a_dip_on_the_slope_is_one_region_at_its_place() {
        let mut s = hdd(100);
        for b in &mut s[40..43] {
            *b = b.map(|v| v * 0.3);
        }
        let r = profile(&s, &[40; 100], 0);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].first_bucket, r[0].last_bucket), (40, 42));
        assert_eq!((r[0].start_byte, r[0].end_byte), (40_000, 43_000));
        assert_eq!(r[0].against, Against::Neighbours);
    }

    #[test]
    fn buckets_with_few_reads_are_not_judged() {
        let mut s = hdd(20);
        s[10] = Some(1.0);
        let mut reads = [40u64; 20];
        reads[10] = MIN_BUCKET_READS - 1;
        assert!(profile(&s, &reads, 0).is_empty());
        reads[10] = MIN_BUCKET_READS;
        assert_eq!(profile(&s, &reads, 0).len(), 1);
    }

    #[test]
    fn buckets_read_for_a_moment_are_not_judged() {
        let mut s = hdd(20);
        s[10] = Some(1.0);
        let reads = [40u64; 20];
        let mut bytes = [1_000_000_000u64; 20];
        // 1 MB/s for 99 ms, then for 100 ms.
        bytes[10] = 99_000;
        fn judge(s: &[Option<f64>], reads: &[u64], bytes: &[u64]) -> usize {
            let p = Profile { mb_per_s: s, reads, bytes, size: 20_000, group: 0 };
            slow_regions(&[p])[0].len()
        }
        assert_eq!(judge(&s, &reads, &bytes), 0);
        bytes[10] = 100_000;
        assert_eq!(judge(&s, &reads, &bytes), 1);
    }

    #[test]
    fn a_region_slower_than_the_peers_there_is_found_against_them() {
        // Half the disk slow: its own neighbours agree with it in the middle
        // of the half, the peers do not.
        let good = hdd(20);
        let mut bad = good.clone();
        for b in &mut bad[10..] {
            *b = b.map(|v| v * 0.4);
        }
        let (reads, bytes) = ([40u64; 20], [1_000_000_000u64; 20]);
        let mk = |s: &'static [Option<f64>], group| Profile {
            mb_per_s: s,
            reads: &reads,
            bytes: &bytes,
            size: 20_000,
            group,
        };
        let (good, bad) = (good.leak() as &[_], bad.leak() as &[_]);
        let r = slow_regions(&[mk(good, 0), mk(bad, 0), mk(good, 0)]);
        assert!(r[0].is_empty() && r[2].is_empty());
        assert_eq!(r[1].len(), 1, "{:?}", r[1]);
        assert_eq!((r[1][0].first_bucket, r[1][0].last_bucket), (10, 19));
        assert_eq!(r[1][0].against, Against::Peers);
        // Disks of another group are no reference; alone, a step halfway is
        // not a dip against its own neighbourhood (half of it is slow too).
        let r = slow_regions(&[mk(good, 0), mk(bad, 1), mk(good, 0)]);
        assert!(r[1].is_empty(), "{:?}", r[1]);
    }

    #[test]
    fn a_disk_slow_all_over_is_no_region_but_a_patch_on_it_is() {
        // The demo under blk-throttle (MB/s per bucket): peers held to 150
        // read 167 but for the throttle's catch-up, the disk held to 100
        // ripples from 84 to 112; 84 is half of 167, and no region.
        let peer: &'static [Option<f64>] =
            [133.0, 167.0, 167.0, 167.0, 112.0, 164.0, 167.0, 167.0].map(Some).to_vec().leak();
        let slow = [95.0, 110.0, 84.0, 112.0, 112.0, 84.0, 112.0, 112.0].map(Some);
        let (reads, bytes) = ([40u64; 8], [1_000_000_000u64; 8]);
        let mk = |s: &'static [Option<f64>]| Profile {
            mb_per_s: s,
            reads: &reads,
            bytes: &bytes,
            size: 8_000,
            group: 0,
        };
        let r = slow_regions(&[mk(peer), mk(slow.to_vec().leak()), mk(peer)]);
        assert!(r.iter().all(Vec::is_empty), "{r:?}");
        // A patch at a third of its own pace is a region.
        let mut patched = slow;
        patched[6] = Some(35.0);
        let r = slow_regions(&[mk(peer), mk(patched.to_vec().leak()), mk(peer)]);
        assert_eq!(r[1].len(), 1, "{r:?}");
        assert_eq!((r[1][0].first_bucket, r[1][0].against), (6, Against::Peers));
        assert!((r[1][0].reference_mb_per_s - 167.0 * 112.0 / 167.0).abs() < 1.0, "{r:?}");
    }

    proptest! {
        /// Any smooth profile (each bucket within 3 % of the last: four
        /// times an HDD's slope over 100 buckets) with noise of ±20 % has no
        /// slow region.
        #[test]
        fn smooth_noisy_profiles_have_no_region(
            start in 10.0f64..5000.0,
            steps in proptest::collection::vec(0.97f64..1.03, 1..200),
            noise in proptest::collection::vec(0.8f64..1.2, 200),
        ) {
            let mut v = start;
            let s: Vec<Option<f64>> = steps.iter().zip(&noise).map(|(k, e)| { v *= k; Some(v * e) }).collect();
            let reads = vec![MIN_BUCKET_READS; s.len()];
            prop_assert!(profile(&s, &reads, 0).is_empty());
        }
    }
}

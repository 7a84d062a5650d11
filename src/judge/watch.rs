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

/// Each disk's standing in one window and direction: `loads[i]` disk
/// i's, `groups[i]` its peer group.
pub fn window(loads: &[Load], groups: &[usize]) -> Vec<Standing> {
    let mut out = vec![Standing::Idle; loads.len()];
    let mut seen: Vec<usize> = groups.to_vec();
    seen.sort_unstable();
    seen.dedup();
    for g in seen {
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
        let reference = median(&peers.iter().map(|&i| loads[i].ms).collect::<Vec<_>>());
        for &i in &busy {
            out[i] = match (similar(i), reference) {
                (false, _) => Standing::LoadDiffers,
                (true, _) if peers.len() < 3 => Standing::NoPeers,
                (true, Some(m)) => {
                    let times = loads[i].ms / m.max(1e-3);
                    match times >= SLOW_TIMES && loads[i].ms - m >= MIN_EXTRA_MS {
                        true => Standing::Slow { times },
                        false => Standing::Compared { times },
                    }
                }
                (true, None) => Standing::NoPeers,
            };
        }
    }
    out
}

/// A disk found fail-slow: since which window (from 0), in how many of
/// the windows since, and how much (the median of its times over its
/// peers in the windows it was slow).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FailSlow {
    pub since: usize,
    pub slow_windows: usize,
    pub windows: usize,
    pub times: f64,
}

/// Whether a disk whose standings (one a window, oldest first) are
/// `history` is fail-slow over the last `span` windows: slow in at least
/// [`MOSTLY`] of those it was compared in, compared in at least half of
/// them, and slow in the last one.
pub fn fail_slow(history: &[Standing], span: usize) -> Option<FailSlow> {
    let span = span.max(1);
    if history.len() < span {
        return None;
    }
    let last = &history[history.len() - span..];
    let compared: Vec<&Standing> = last
        .iter()
        .filter(|s| matches!(s, Standing::Compared { .. } | Standing::Slow { .. }))
        .collect();
    let slow: Vec<f64> = (compared.iter())
        .filter_map(|s| match s {
            Standing::Slow { times } => Some(*times),
            _ => None,
        })
        .collect();
    let enough = compared.len() * 2 >= span && slow.len() as f64 >= MOSTLY * compared.len() as f64;
    if !enough || !matches!(last.last(), Some(Standing::Slow { .. })) {
        return None;
    }
    // Since the first window of the slow run that ends now.
    let since = (0..history.len())
        .rev()
        .take_while(|&k| !matches!(history[k], Standing::Compared { .. }))
        .last()
        .unwrap_or(history.len() - 1);
    Some(FailSlow {
        since,
        slow_windows: slow.len(),
        windows: span,
        times: median(&slow).unwrap_or(0.0),
    })
}

/// Whether a group's median latency at a similar load rose `SLOW_TIMES`
/// over its first window's (`baseline`): the group's path or workload.
pub fn group_slow(baseline_ms: f64, now_ms: f64) -> bool {
    now_ms >= SLOW_TIMES * baseline_ms && now_ms - baseline_ms >= MIN_EXTRA_MS
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
        assert_eq!((f.since, f.slow_windows, f.windows, f.times), (5, 4, 4, 6.0));
        assert_eq!(fail_slow(&h, 6), None, "slow in 4 of 6: not most");
        h.push(ok);
        assert_eq!(fail_slow(&h, 4), None, "not slow now");
        // Idle windows in between neither count against it nor for it,
        // but it must be compared in half the span.
        let h = [ok, slow, Standing::Idle, slow, slow];
        assert_eq!(fail_slow(&h, 4).map(|f| f.since), Some(1));
        let h = [ok, Standing::Idle, Standing::Idle, Standing::Idle, slow];
        assert_eq!(fail_slow(&h, 4), None);
        assert!(group_slow(1.0, 2.5) && !group_slow(1.0, 1.5) && !group_slow(0.1, 0.3));
    }
}

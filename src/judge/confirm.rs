//! Confirming before blaming: which disks are re-measured before their
//! verdict, beside what, and what the re-measurement decides.
//!
//! One pass alone calling a disk slow on speed alone is doubted:
//!
//! - Slow (or unsure) in the serial pass, while the parallel pass, read at
//!   one moment for every disk, did not find it slow: it is read again
//!   alone, alternating with a peer of its group (A-B-A-B), each of its
//!   slices against the peer's speed at that moment (the peer's slices
//!   before and after it, a line through them).
//! - Slow in the parallel pass (no shared path setting the pace), while
//!   its serial pass found it ok: slow only under load, or slowed by
//!   something else during that one pass (another pool's reads on it). It
//!   is read again with every disk together, in rounds, each round's speed
//!   against its group peers' median in that round.
//!
//! It is flagged only when that agrees. Slowness with other evidence
//! (stalls, latency tails, slow regions, failed reads) is not re-measured:
//! the evidence is its own.
//!
//! It must not measure: slices come in as numbers.

use super::Thresholds;
use super::Verdict;
use super::disk::Judged;
use super::disk::{classify_spread, spread_words};
use super::slices::{SliceSpeed, Spread, confidence_rank, theil_sen_at_zero};
use crate::measure::{Beside, PassKind};
use crate::stats::median;

/// What the passes said of one disk, as far as confirming goes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Calls {
    /// Its peer group.
    pub group: usize,
    /// Its serial verdict, and whether speed alone made it.
    pub serial: Option<Verdict>,
    pub speed_only: bool,
    /// Its serial % of peers.
    pub serial_pct: Option<f64>,
    /// The parallel pass called it slow, and no shared path set the pace;
    /// and whether speed alone made it.
    pub parallel_slow: bool,
    pub parallel_speed_only: bool,
    /// A read of it failed, or it hung or went away, in some pass: its
    /// faults are its verdict, and it is neither re-measured nor a peer.
    pub failed: bool,
}

impl Calls {
    /// What one pass said of the disk: its verdict there (`judged`),
    /// whether a read of it failed, whether evidence besides its speed
    /// made that verdict, and whether a shared path set the pass's pace
    /// (then a parallel call of slow is the path's, not the disk's).
    pub fn record(
        &mut self,
        kind: PassKind,
        judged: &Judged,
        (failed, other): (bool, bool),
        limited: bool,
    ) {
        self.failed |= failed;
        match kind {
            PassKind::Serial => {
                (self.serial, self.serial_pct) = (Some(judged.verdict), judged.pct_of_peers);
                self.speed_only = !other;
            }
            PassKind::Parallel => {
                self.parallel_slow = judged.verdict == Verdict::Slow && !limited;
                self.parallel_speed_only = !other;
            }
            PassKind::Seek => {}
        }
    }
}

/// What re-measuring `disk` beside `beside` says of it, from the slices
/// read (`groups`: each disk's peer group; read with all, it is compared
/// with the others of its group).
pub fn remeasured(
    speeds: &[SliceSpeed],
    (disk, beside): (usize, Beside),
    groups: &[usize],
    th: &Thresholds,
) -> Confirmed {
    match beside {
        Beside::Peer(peer) => against_peer(speeds, disk, peer, th),
        Beside::All => {
            let group = |d: &usize| *d != disk && groups[*d] == groups[disk];
            let peers: Vec<usize> = (0..groups.len()).filter(group).collect();
            against_group(speeds, disk, &peers, th)
        }
    }
}

/// A verdict on speed alone (slow, or unsure) replaced by what
/// re-measuring the disk decided (`verdict`, and in words `sentence`).
pub fn settle(j: &mut Judged, verdict: Verdict, sentence: &str) {
    if !matches!(j.verdict, Verdict::Slow | Verdict::Unsure) {
        return;
    }
    j.verdict = verdict;
    if verdict == Verdict::Ok {
        j.reasons.clear();
    } else {
        j.reasons.push(sentence.to_string());
    }
}

/// The disks to re-measure, each with what to read it beside. A serial
/// call: the peer to alternate with, a disk of its group the serial pass
/// found ok, the one nearest its group's median. A parallel call: all the
/// disks, when its group has another disk the parallel pass did not find
/// slow. A disk without such peers is not re-measured (and keeps its
/// verdict).
pub fn suspects(calls: &[Calls]) -> Vec<(usize, Beside)> {
    (0..calls.len()).filter_map(|d| suspect(calls, d)).collect()
}

fn suspect(calls: &[Calls], d: usize) -> Option<(usize, Beside)> {
    let c = &calls[d];
    if c.failed {
        return None;
    }
    let serial_doubt = matches!(c.serial, Some(Verdict::Slow | Verdict::Unsure))
        && c.speed_only
        && !c.parallel_slow;
    if serial_doubt {
        return Some((d, Beside::Peer(peer_of(calls, d)?)));
    }
    let parallel_doubt = c.parallel_slow
        && c.parallel_speed_only
        && matches!(c.serial, Some(Verdict::Ok | Verdict::Fast));
    let fine_peer = |p: &Calls| p.group == c.group && !p.parallel_slow && !p.failed;
    (parallel_doubt && (0..calls.len()).any(|p| p != d && fine_peer(&calls[p])))
        .then_some((d, Beside::All))
}

/// The ok disk of `d`'s group whose serial % of peers is nearest 100.
fn peer_of(calls: &[Calls], d: usize) -> Option<usize> {
    let ok = |p: &usize| {
        let peer = &calls[*p];
        *p != d && peer.group == calls[d].group && peer.serial == Some(Verdict::Ok) && !peer.failed
    };
    let off = |p: &usize| (calls[*p].serial_pct.unwrap_or(100.0) - 100.0).abs();
    (0..calls.len()).filter(ok).min_by(|a, b| off(a).total_cmp(&off(b)))
}

/// What re-measuring a disk against its peer found.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmed {
    /// Its speed as % of the peer's at the same moments, over its slices.
    pub spread: Option<Spread>,
    /// Slow, unsure, or ok (fast counts as ok).
    pub verdict: Verdict,
}

/// Disk `a`'s slices against peer `b`'s, read alternately: each against
/// the peer's speed at its moment.
pub fn against_peer(slices: &[SliceSpeed], a: usize, b: usize, th: &Thresholds) -> Confirmed {
    let peer: Vec<(f64, f64)> =
        slices.iter().filter(|s| s.disk == b).map(|s| (s.at_s, s.mb_per_s)).collect();
    let shares = (slices.iter().filter(|s| s.disk == a))
        .filter_map(|s| peer_at(&peer, s.at_s).filter(|v| *v > 0.0).map(|v| 100.0 * s.mb_per_s / v))
        .collect();
    judged(shares, th)
}

/// Disk `a`'s slices read together with `peers`' (rounds of every disk at
/// once): each against the median of its peers' slices of the same round.
pub fn against_group(
    slices: &[SliceSpeed],
    a: usize,
    peers: &[usize],
    th: &Thresholds,
) -> Confirmed {
    let at_round = |r: u32| -> Option<f64> {
        let speeds: Vec<f64> = (slices.iter())
            .filter(|s| s.round == r && peers.contains(&s.disk))
            .map(|s| s.mb_per_s)
            .collect();
        median(&speeds).filter(|v| *v > 0.0)
    };
    let shares = (slices.iter().filter(|s| s.disk == a))
        .filter_map(|s| at_round(s.round).map(|v| 100.0 * s.mb_per_s / v))
        .collect();
    judged(shares, th)
}

/// A disk's shares of its peers' speed judged: slow only when the interval
/// around their median is all under the threshold, ok (fast too) when it
/// is all over it, else unsure.
pub(super) fn judged(mut shares: Vec<f64>, th: &Thresholds) -> Confirmed {
    shares.sort_by(f64::total_cmp);
    let spread = median(&shares).map(|pct| {
        let j = confidence_rank(shares.len());
        Spread { pct, low: shares[j], high: shares[shares.len() - 1 - j], slices: shares.len() }
    });
    let verdict = match spread.map(|s| classify_spread(&s, th)) {
        Some(Verdict::Slow) => Verdict::Slow,
        Some(Verdict::Ok | Verdict::Fast) => Verdict::Ok,
        _ => Verdict::Unsure,
    };
    Confirmed { spread, verdict }
}

/// The peer's speed at `t`: a robust line through its [`PEER_SLICES`]
/// slices nearest in time, read at `t` (two before and two after, inside
/// the run), so a steady drift cancels and one slice's scatter does not
/// decide.
fn peer_at(peer: &[(f64, f64)], t: f64) -> Option<f64> {
    let mut near: Vec<(f64, f64)> = peer.iter().map(|(at, v)| (at - t, *v)).collect();
    near.sort_by(|a, b| a.0.abs().total_cmp(&b.0.abs()));
    near.truncate(PEER_SLICES);
    theil_sen_at_zero(&near)
}

/// The peer's slices a disk's slice is compared with.
const PEER_SLICES: usize = 4;

/// Whether the re-measurement has decided (its interval clear of the slow
/// threshold): no more slices are needed.
pub fn decided(c: &Confirmed) -> bool {
    c.verdict != Verdict::Unsure
}

/// What a disk was re-measured beside, for the words.
#[derive(Debug, Clone, Copy)]
pub enum With<'a> {
    /// Alone, in turn with this peer (its path).
    Peer(&'a str),
    /// Together with every disk.
    All,
}

/// What the re-measurement found, in words, for the disk's reasons.
pub fn sentence(c: &Confirmed, with: With, th: &Thresholds) -> String {
    let (how, of) = match with {
        With::Peer(peer) => (format!("alone, alternating with {peer}"), "of its speed"),
        With::All => (
            "with all disks reading together again".to_string(),
            "of its peers' median speed in each round",
        ),
    };
    let Some(s) = c.spread else {
        return format!("re-measured {how}: nothing could be compared");
    };
    let found = match c.verdict {
        Verdict::Slow => "slow".to_string(),
        Verdict::Ok => "not slow".to_string(),
        _ => format!("still unsure (the slices straddle the {:.0}% threshold)", th.slow_pct),
    };
    format!("re-measured {how}: {} {of}, {found}", spread_words(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(serial: Verdict, pct: f64, parallel_slow: bool) -> Calls {
        Calls {
            group: 0,
            serial: Some(serial),
            speed_only: true,
            serial_pct: Some(pct),
            parallel_slow,
            parallel_speed_only: true,
            failed: false,
        }
    }

    #[test]
    fn only_a_speed_call_the_parallel_pass_does_not_back_is_re_measured() {
        let calls = [
            call(Verdict::Ok, 97.0, false),
            call(Verdict::Slow, 88.0, false),
            call(Verdict::Slow, 80.0, true),
            call(Verdict::Ok, 100.5, false),
            call(Verdict::Unsure, 91.0, false),
            Calls { speed_only: false, ..call(Verdict::Slow, 70.0, false) },
            Calls { failed: true, ..call(Verdict::Slow, 80.0, false) },
            Calls { failed: true, ..call(Verdict::Ok, 100.0, false) },
        ];
        // Disk 1 (serial only) and 4 (unsure), each against disk 3, the
        // ok peer nearest the median (7 is nearer, but failed in a pass);
        // not 2 (the parallel pass agrees), 5 (a stall or a region, not
        // speed alone) nor 6 (its failed reads are its verdict).
        assert_eq!(suspects(&calls), [(1, Beside::Peer(3)), (4, Beside::Peer(3))]);
    }

    #[test]
    fn only_a_speed_call_the_serial_pass_does_not_back_is_re_measured_together() {
        let mut calls = [
            call(Verdict::Ok, 99.0, true),
            call(Verdict::Ok, 100.0, false),
            call(Verdict::Fast, 120.0, true),
            Calls { parallel_speed_only: false, ..call(Verdict::Ok, 100.0, true) },
            Calls { group: 1, ..call(Verdict::Ok, 100.0, true) },
            call(Verdict::Slow, 70.0, true),
        ];
        // Disks 0 and 2 (parallel only), beside all; not 3 (a stall, not
        // speed alone), 4 (no peer of its group the parallel pass found
        // fine) nor 5 (both passes agree).
        assert_eq!(suspects(&calls), [(0, Beside::All), (2, Beside::All)]);
        calls[1].parallel_slow = true;
        assert!(suspects(&calls).is_empty(), "every disk slow in the parallel pass");
    }

    /// Rounds of three disks read together, the shared level moving by
    /// `swing` from round to round; disk 0 at `a` of the others'.
    fn together(rounds: u32, a: f64, swing: f64) -> Vec<SliceSpeed> {
        let mut out = Vec::new();
        for round in 0..rounds {
            let level = 300.0 * (1.0 + if round % 2 == 0 { swing } else { -swing });
            for (disk, own) in [(0, a), (1, 1.0), (2, 1.01)] {
                let at_s = f64::from(round) * 5.0;
                out.push(SliceSpeed { disk, round, at_s, mb_per_s: level * own });
            }
        }
        out
    }

    #[test]
    fn a_disk_read_with_all_is_judged_against_its_peers_in_each_round() {
        let th = Thresholds::default();
        let ok = against_group(&together(4, 0.98, 0.2), 0, &[1, 2], &th);
        assert_eq!(ok.verdict, Verdict::Ok, "{ok:?}");
        let slow = against_group(&together(4, 0.6, 0.2), 0, &[1, 2], &th);
        assert_eq!(slow.verdict, Verdict::Slow, "{slow:?}");
        let s = slow.spread.unwrap();
        assert!((s.pct - 60.0).abs() < 1.0 && s.slices == 4, "{s:?}");
        assert!(
            sentence(&slow, With::All, &th)
                .contains("of its peers' median speed in each round, slow")
        );
        // One round where it kept up, of four: its interval straddles.
        let mut mixed = together(4, 0.6, 0.0);
        mixed[0].mb_per_s = 300.0;
        assert_eq!(against_group(&mixed, 0, &[1, 2], &th).verdict, Verdict::Unsure);
    }

    /// A then B, alternating, `rounds` times, each 5 s, with a shared
    /// drift; A at `a` of B's level.
    fn alternating(rounds: u32, a: f64, drift: f64) -> Vec<SliceSpeed> {
        let mut out = Vec::new();
        for r in 0..rounds {
            for (k, disk) in [(0, 0), (1, 1)] {
                let at_s = (f64::from(r) * 2.0 + f64::from(k) + 0.5) * 5.0;
                let level = if disk == 0 { a } else { 1.0 };
                out.push(SliceSpeed {
                    disk,
                    round: r,
                    at_s,
                    mb_per_s: 200.0 * level * (1.0 + drift * at_s),
                });
            }
        }
        out
    }

    #[test]
    fn a_drift_does_not_make_a_healthy_disk_slow_against_its_peer() {
        let th = Thresholds::default();
        let c = against_peer(&alternating(6, 1.0, 0.004), 0, 1, &th);
        assert_eq!(c.verdict, Verdict::Ok, "{c:?}");
        assert!((c.spread.unwrap().pct - 100.0).abs() < 1.0, "{c:?}");
        let slow = against_peer(&alternating(6, 0.85, -0.003), 0, 1, &th);
        assert_eq!(slow.verdict, Verdict::Slow, "{slow:?}");
        assert!(sentence(&slow, With::Peer("/dev/sdc"), &th).contains("of its speed, slow"));
    }
}

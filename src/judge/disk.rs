//! One disk in one pass: its verdict and the reasons for it, from its own
//! numbers ([`Facts`]) and what the peer rules made of them ([`Judged`]).
//!
//! - **Failed reads** make it `error`, whatever else holds.
//! - **Stall**: a read that had the disk `stall_ms` or more beyond what
//!   its size needs at the pace of the disk's other reads, taken as at
//!   least 50 MB/s (`judge::stall`; the first read of a run left out: a
//!   spun-down drive takes seconds to spin up) makes it slow, also under a
//!   shared bottleneck. One beyond what 50 MB/s needs but within the pace
//!   of a disk slower than that: unsure, said why.
//! - **Latency tail**: p99.99 over [`TAIL_FACTOR`]× its peers' median and
//!   at least [`TAIL_FLOOR_MS`], and its second-slowest read too: slow,
//!   unless a shared path set the pace. In a sample of fewer than 10 000
//!   reads p99.99 is the slowest read: one read held up (a loaded host's
//!   moment) is no tail; one held past the stall limit is a stall.
//! - **Slow regions** (see `surface`): slow.
//! - **Speed**: under `slow_pct` % of its peers' median slow, over
//!   `fast_pct` % fast; in the seek pass the same for the share of its
//!   serial speed it keeps, against its peers' share.
//! - **Lost alone** (parallel and seek passes): see `peers::lost_alone`.
//! - **Time** (full passes): completion time per byte over 100/`slow_pct`
//!   of its peers' median slow, under 100/`fast_pct` fast.

use super::peers::{classify, lost_alone};
use super::slices::Spread;
use super::stall::{Allowance, pace_without, untold_words};
use super::surface::{Against, SlowRegion};
use super::{MIN_JUDGED_S, TAIL_FACTOR, TAIL_FLOOR_MS, Thresholds, Verdict};
use crate::measure::{PassKind, ReadError, SlowRead, Stopped};
use crate::units::human_bytes_binary;

/// What the judge needs of one disk in one pass: measured numbers only.
#[derive(Debug, Clone, Default)]
pub struct Facts<'a> {
    /// Peer group: disks are compared only within it.
    pub group: usize,
    /// The controller the disk sits behind (its PCI address), when it has
    /// one: the parallel pass compares the controllers' shares.
    pub controller: Option<String>,
    /// Device size in bytes.
    pub size_bytes: u64,
    /// MB/s over the sample window, and its length in seconds.
    pub window_mb_per_s: f64,
    pub window_s: f64,
    /// Bytes read in the pass and the seconds it took.
    pub bytes: u64,
    pub elapsed_s: f64,
    /// Whether the disk was read to its last byte.
    pub reached_end: bool,
    /// p99.99 read latency (µs), and the second-slowest read's (0 with
    /// fewer than two reads).
    pub p9999_us: f64,
    pub second_slowest_us: f64,
    /// The slowest reads logged, and how many reads were slow.
    pub slow_reads: &'a [SlowRead],
    pub slow_read_count: u64,
    /// Failed reads, exact bad ranges, their bytes, bytes left unread.
    pub read_errors: u64,
    pub bad_ranges: u64,
    pub bad_bytes: u64,
    pub unread_bytes: u64,
    /// Why the read ended early, if it did, and whether the device went
    /// away.
    pub stopped: Option<Stopped>,
    pub device_gone: bool,
    /// The first bad ranges.
    pub errors: &'a [ReadError],
    /// The surface profile: MB/s, reads and bytes per bucket.
    pub surface_mb_per_s: &'a [Option<f64>],
    pub surface_reads: &'a [u64],
    pub surface_bytes: &'a [u64],
}

impl Facts<'_> {
    /// `v` when the disk's numbers can be compared: no failed read, and
    /// read for at least [`MIN_JUDGED_S`].
    pub fn clean(&self, v: f64) -> Option<f64> {
        (self.read_errors == 0 && self.window_s >= MIN_JUDGED_S).then_some(v)
    }

    /// The window speed, when clean.
    pub fn clean_speed(&self) -> Option<f64> {
        self.clean(self.window_mb_per_s)
    }
}

/// What the judge made of one disk in one pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Judged {
    /// Window MB/s as % of the peer group's median.
    pub pct_of_peers: Option<f64>,
    /// Window MB/s as % of the disk's own serial speed.
    pub pct_of_serial: Option<f64>,
    /// Seek pass: `pct_of_serial` as % of the peers' median of it.
    pub seek_pct_of_peers: Option<f64>,
    /// Full passes: time per byte as % of the peers' median.
    pub time_pct_of_peers: Option<f64>,
    /// p99.99 latency as % of the peers' median.
    pub p9999_pct_of_peers: Option<f64>,
    /// The MB/s the disk was compared with: its peer group's median.
    pub peers_median_mb_per_s: Option<f64>,
    /// Slow regions of its surface.
    pub slow_regions: Vec<SlowRegion>,
    /// A serial pass read in slices: `pct_of_peers` over them, with its
    /// interval.
    pub spread: Option<Spread>,
    /// The verdict, and why when not ok.
    pub verdict: Verdict,
    pub reasons: Vec<String>,
}

/// The slowest read that stalled: had the disk for its stall allowance or
/// more (what its size needs at the disk's speed in the pass, plus
/// `stall_ms`); the run's first read left out (a spun-down drive takes
/// seconds to spin up).
pub fn stall<'a>(f: &Facts<'a>, th: &Thresholds) -> Option<&'a SlowRead> {
    (f.slow_reads.iter())
        .filter(|s| s.index > 1 && allowance(f, s, th).1.stalled(s.had_disk_ms()))
        .max_by(|a, b| a.had_disk_ms().total_cmp(&b.had_disk_ms()))
}

/// The pace of the disk's other reads in the pass (MB/s), and how long
/// read `s` may have it before it is a stall.
fn allowance(f: &Facts, s: &SlowRead, th: &Thresholds) -> (Option<f64>, Allowance) {
    let speed = (f.elapsed_s > 0.0 && f.bytes > 0).then(|| f.bytes as f64 / 1e6 / f.elapsed_s);
    let pace = pace_without(f.bytes, f.elapsed_s, (s.len, s.had_disk_ms())).or(speed);
    (pace, Allowance::of(s.len, pace, th))
}

/// The slowest read that would be a stall at the speed a healthy disk is
/// taken to move at, but not at the pace of the disk's other reads
/// (slower than that), in words: whether it stalled cannot be told.
fn untold_stall(f: &Facts, th: &Thresholds) -> Option<String> {
    let (s, (pace, a)) = (f.slow_reads.iter())
        .filter(|s| s.index > 1)
        .map(|s| (s, allowance(f, s, th)))
        .filter(|(s, (_, a))| a.untold(s.had_disk_ms()))
        .max_by(|a, b| a.0.had_disk_ms().total_cmp(&b.0.had_disk_ms()))?;
    Some(format!(
        "a read took {:.0} ms at byte {} ({:.0} ms is a stall for {}), {}",
        s.had_disk_ms(),
        s.offset,
        a.floor_ms,
        human_bytes_binary(s.len),
        untold_words("reads", pace)
    ))
}

/// How many times its peers' median p99.99 the disk's p99.99 is, when that
/// marks it slow: over [`TAIL_FACTOR`], at least [`TAIL_FLOOR_MS`], its
/// second-slowest read (`second_us`) beyond both too (one read is a
/// moment, not a tail), and not decided by a shared path.
pub fn tail_factor(
    (p9999_us, second_us): (f64, f64),
    p9999_pct_of_peers: Option<f64>,
    path_limited: bool,
) -> Option<f64> {
    let beyond = |us: f64, p: f64| {
        let peers_us = p9999_us / (p / 100.0);
        us > TAIL_FACTOR * peers_us && us / 1e3 >= TAIL_FLOOR_MS
    };
    p9999_pct_of_peers
        .filter(|p| !path_limited && beyond(p9999_us, *p) && beyond(second_us, *p))
        .map(|p| p / 100.0)
}

/// Whether a completion time per byte, as % of the peers', is slow: time
/// is the inverse of speed, so over 100/slow_pct of the median time.
pub fn slow_time(time_pct: f64, th: &Thresholds) -> bool {
    time_pct > 10_000.0 / th.slow_pct
}

/// Whether it is fast: under 100/fast_pct of the median time.
pub fn fast_time(time_pct: f64, th: &Thresholds) -> bool {
    time_pct < 10_000.0 / th.fast_pct
}

/// The verdict of one disk. `j` holds the peer comparisons already made;
/// under a shared bottleneck (`path_limited`) the parallel numbers say
/// nothing about single disks (the path decided each one's share).
/// `array_kept`: the % of its serial speed the array's median disk keeps
/// in the parallel pass.
pub fn verdict(
    kind: PassKind,
    f: &Facts,
    j: &Judged,
    path_limited: bool,
    array_kept: Option<f64>,
    th: &Thresholds,
) -> (Verdict, Vec<String>) {
    if f.read_errors > 0 {
        return (Verdict::Error, vec![fault_reason(f)]);
    }
    // A stalled read is a disk problem whatever the path does.
    let stall = latency_reasons(f, j, path_limited, th);
    let untold = untold_stall(f, th).filter(|_| stall.is_empty());
    if path_limited {
        return match (stall.is_empty(), untold) {
            (false, _) => (Verdict::Slow, stall),
            (true, Some(why)) => (Verdict::Unsure, vec![why]),
            (true, None) => (Verdict::Ok, Vec::new()),
        };
    }
    let mut slow = stall;
    slow.extend(j.slow_regions.iter().take(3).map(region_reason));
    if j.slow_regions.len() > 3 {
        slow.push(format!("{} more slow regions", j.slow_regions.len() - 3));
    }
    let (mut fast, mut unsure) = (Vec::new(), Vec::from_iter(untold));
    if kind == PassKind::Seek {
        // Seeking costs every disk speed: only a loss beyond its peers'
        // counts.
        let pct = j.seek_pct_of_peers.unwrap_or(100.0);
        let what = match j.pct_of_serial {
            Some(s) => format!(
                "under seek stress it keeps {s:.0}% of its serial speed, {pct:.0}% of what its peers keep"
            ),
            None => format!("under seek stress {pct:.0}% of its peers' median speed"),
        };
        match classify(j.seek_pct_of_peers, th) {
            Verdict::Slow => slow.push(what),
            Verdict::Fast => fast.push(what),
            _ => {}
        }
    } else {
        let pct = j.pct_of_peers.unwrap_or(100.0);
        let said = match j.spread {
            Some(s) => format!("{} of its peers' median speed", spread_words(&s)),
            None => format!("{pct:.0}% of its peers' median speed"),
        };
        match j.spread.map_or_else(|| classify(j.pct_of_peers, th), |s| classify_spread(&s, th)) {
            Verdict::Slow => slow.push(said),
            Verdict::Fast => fast.push(said),
            Verdict::Unsure => unsure
                .push(format!("{said}: its slices straddle the {:.0}% threshold", th.slow_pct)),
            _ => {}
        }
        if let Some(s) = j.pct_of_serial.filter(|s| lost_alone(*s, array_kept, th)) {
            let median = array_kept
                .map(|m| format!(" while the array's median disk keeps {m:.0}%"))
                .unwrap_or_default();
            slow.push(format!("{s:.0}% of its own serial speed{median}"));
        }
    }
    if let Some(t) = j.time_pct_of_peers {
        if slow_time(t, th) {
            slow.push(format!("took {t:.0}% of its peers' median time"));
        } else if fast_time(t, th) {
            fast.push(format!("took {t:.0}% of its peers' median time"));
        }
    }
    match (slow.is_empty(), unsure.is_empty(), fast.is_empty()) {
        (false, _, _) => (Verdict::Slow, slow),
        (true, false, _) => (Verdict::Unsure, unsure),
        (true, true, false) => (Verdict::Fast, fast),
        _ => (Verdict::Ok, Vec::new()),
    }
}

/// Whether a disk's pass has evidence of slowness other than its speed: a
/// stall, a latency tail, a slow region, a slow completion time.
pub fn other_evidence(f: &Facts, j: &Judged, th: &Thresholds) -> bool {
    !latency_reasons(f, j, false, th).is_empty()
        || !j.slow_regions.is_empty()
        || j.time_pct_of_peers.is_some_and(|t| slow_time(t, th))
}

/// A spread's verdict: slow only when all of its interval is under the
/// slow threshold, fast only when all of it is over the fast one; unsure
/// when it straddles the slow threshold.
pub fn classify_spread(s: &Spread, th: &Thresholds) -> Verdict {
    if s.high < th.slow_pct {
        Verdict::Slow
    } else if s.low < th.slow_pct {
        Verdict::Unsure
    } else if s.low > th.fast_pct {
        Verdict::Fast
    } else {
        Verdict::Ok
    }
}

/// "86% (82-90% over 6 slices)" of a spread (one slice: "86%").
pub fn spread_words(s: &Spread) -> String {
    if s.slices < 2 {
        return format!("{:.0}%", s.pct);
    }
    format!("{:.0}% ({:.0}-{:.0}% over {} slices)", s.pct, s.low, s.high, s.slices)
}

/// Slow-sector evidence: a stalled read, and, unless a shared path decided
/// the numbers, a p99.99 latency far above the peers'.
fn latency_reasons(f: &Facts, j: &Judged, path_limited: bool, th: &Thresholds) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(w) = stall(f, th) {
        out.push(format!(
            "a read took {:.0} ms at byte {} (stall threshold {:.0} ms beyond what its {} needs); {} slow read(s) logged",
            w.had_disk_ms(),
            w.offset,
            th.stall_ms,
            human_bytes_binary(w.len),
            f.slow_read_count
        ));
    }
    if let Some(x) =
        tail_factor((f.p9999_us, f.second_slowest_us), j.p9999_pct_of_peers, path_limited)
    {
        out.push(format!(
            "p99.99 read latency {:.0} ms is {x:.1}x its peers' median",
            f.p9999_us / 1e3
        ));
    }
    out
}

/// A slow region in words: where, how slow, against what.
fn region_reason(r: &SlowRegion) -> String {
    let against = match r.against {
        Against::Peers => "its peers in the same region (at its own pace elsewhere)",
        Against::Neighbours => "its neighbouring regions",
    };
    format!(
        "slow region from byte {} to {} ({} to {}): {:.1} MB/s, {:.0}% of the {:.1} MB/s of {against}",
        r.start_byte,
        r.end_byte,
        human_bytes_binary(r.start_byte),
        human_bytes_binary(r.end_byte),
        r.mb_per_s,
        100.0 * r.mb_per_s / r.reference_mb_per_s,
        r.reference_mb_per_s
    )
}

/// The evidence for an "error" verdict in one sentence: a device that went
/// away, or media errors with their exact extent.
fn fault_reason(f: &Facts) -> String {
    let first = f.errors.first();
    let at = first.map(|e| format!(" at byte {} ({})", e.offset, e.message)).unwrap_or_default();
    if f.device_gone {
        return format!("the device went away{at}; nothing more could be read");
    }
    if f.stopped == Some(Stopped::Hung) {
        let at = f
            .errors
            .iter()
            .rfind(|e| !e.exact)
            .map(|e| format!(" at byte {} ({})", e.offset, e.message))
            .unwrap_or_default();
        return format!("the disk stopped answering{at}; nothing more was read from it");
    }
    let stopped = match f.stopped {
        Some(Stopped::MaxErrors) => "; stopped early at --max-errors",
        Some(Stopped::Interrupted) => "; stopped early by a signal",
        Some(Stopped::DeviceGone | Stopped::Hung) | None => "",
    };
    let unread = if f.unread_bytes > 0 {
        format!(
            "; {} bytes not read (the area fails wholesale and was skipped, or time ran out)",
            f.unread_bytes
        )
    } else {
        String::new()
    };
    let first =
        first.map(|e| format!(", first at byte {} ({})", e.offset, e.message)).unwrap_or_default();
    format!(
        "{} unreadable range(s), {} bytes{first}; {} failed read(s){unread}{stopped}",
        f.bad_ranges, f.bad_bytes, f.read_errors
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_read(index: u64, latency_ms: f64) -> SlowRead {
        SlowRead { offset: 4096 * index, len: 4096, latency_ms, service_ms: None, index }
    }

    fn facts() -> Facts<'static> {
        Facts {
            window_mb_per_s: 100.0,
            window_s: 10.0,
            bytes: 1 << 30,
            elapsed_s: 10.0,
            p9999_us: 20_000.0,
            ..Facts::default()
        }
    }

    #[test]
    fn stall_table() {
        let th = Thresholds::default();
        for (reads, want) in [
            (vec![], None),
            // The first read is a spin-up, not a stall.
            (vec![slow_read(1, 9000.0)], None),
            (vec![slow_read(2, 2000.0)], None),
            (vec![slow_read(2, 2001.0)], Some(2001.0)),
            (vec![slow_read(5, 2500.0), slow_read(9, 4000.0)], Some(4000.0)),
        ] {
            let f = Facts { slow_reads: &reads, ..facts() };
            assert_eq!(stall(&f, &th).map(|s| s.latency_ms), want, "{reads:?}");
        }
        // A big read is allowed what its size needs at the pace of the
        // disk's other reads (111 MB/s beside the first, 149 beside the
        // second): 256 MiB, 2417 ms, then the threshold; with two in
        // flight it had the disk for half its 5435 ms.
        let big = |latency_ms: f64, service_ms: f64| SlowRead {
            len: 256 << 20,
            service_ms: Some(service_ms),
            ..slow_read(3, latency_ms)
        };
        for (read, want) in [(big(5435.0, 2750.0), None), (big(9000.0, 4600.0), Some(4600.0))] {
            let reads = [read];
            let f = Facts { slow_reads: &reads, ..facts() };
            assert_eq!(stall(&f, &th).map(|s| s.had_disk_ms()), want, "{reads:?}");
        }
    }

    #[test]
    fn a_read_within_the_pace_of_a_disk_slower_than_a_healthy_one_is_no_stall_and_unsure() {
        let th = Thresholds::default();
        // 64 MiB in 20 s: its other reads at 3.6 MB/s need 1165 ms for
        // 4 MiB; 50 MB/s would need 84.
        let read = |ms: f64| SlowRead { len: 4 << 20, ..slow_read(3, ms) };
        let slow = Facts { bytes: 64 << 20, elapsed_s: 20.0, ..facts() };
        let reads = [read(2500.0)];
        let f = Facts { slow_reads: &reads, ..slow.clone() };
        assert_eq!(stall(&f, &th), None);
        let why = untold_stall(&f, &th).unwrap();
        assert!(
            why.starts_with("a read took 2500 ms at byte 12288 (2084 ms is a stall for 4 MiB), but its other reads ran at 3.6 MB/s, under the 50 MB/s"),
            "{why}"
        );
        let (v, said) = verdict(PassKind::Serial, &f, &Judged::default(), true, None, &th);
        assert_eq!((v, said), (Verdict::Unsure, vec![why]));
        // Beyond even its pace: a stall, nothing left untold.
        let reads = [read(3500.0)];
        let f = Facts { slow_reads: &reads, ..slow };
        assert_eq!(stall(&f, &th).map(|s| s.latency_ms), Some(3500.0));
        assert_eq!(untold_stall(&f, &th), None);
        // At a healthy pace the floor is the pace: nothing untold.
        let reads = [read(1900.0)];
        assert_eq!(untold_stall(&Facts { slow_reads: &reads, ..facts() }, &th), None);
    }

    #[test]
    fn tail_table() {
        for (p9999_ms, second_ms, pct, path_limited, want) in [
            (500.0, 450.0, Some(500.0), false, Some(5.0)),
            // Not far enough above the peers.
            (500.0, 500.0, Some(400.0), false, None),
            // Far above, but short in absolute terms.
            (50.0, 50.0, Some(900.0), false, None),
            // A shared path set the pace.
            (500.0, 500.0, Some(900.0), true, None),
            (500.0, 500.0, None, false, None),
            // One read held 773 ms on a loaded host, 6.5 times its peers'
            // p99.99 (a 2 s sample: p99.99 is the slowest read), the next
            // at the peers' pace: a moment, not a tail.
            (773.0, 110.0, Some(650.0), false, None),
            // The next one far beyond too, but under the floor.
            (773.0, 99.0, Some(650.0), false, None),
            (773.0, 480.0, Some(650.0), false, Some(6.5)),
            // No second read.
            (773.0, 0.0, Some(650.0), false, None),
        ] {
            assert_eq!(
                tail_factor((p9999_ms * 1e3, second_ms * 1e3), pct, path_limited),
                want,
                "{p9999_ms} ms (next {second_ms}) at {pct:?}%, path limited {path_limited}"
            );
        }
    }

    #[test]
    fn time_table() {
        let th = Thresholds::default();
        for (pct, slow, fast) in [
            (100.0, false, false),
            (108.0, false, false),
            (109.0, true, false),
            (94.0, false, false),
            (93.0, false, true),
        ] {
            assert_eq!((slow_time(pct, &th), fast_time(pct, &th)), (slow, fast), "{pct}");
        }
    }

    /// (pass, facts, judged, path limited, array kept) → verdict and the
    /// start of its first reason.
    #[test]
    fn verdict_table() {
        let th = Thresholds::default();
        let stalled = [slow_read(3, 3000.0)];
        let err = [ReadError {
            offset: 8192,
            len: 4096,
            errno: Some(5),
            message: "Input/output error".into(),
            exact: true,
        }];
        let region = SlowRegion {
            start_byte: 0,
            end_byte: 1 << 20,
            first_bucket: 0,
            last_bucket: 0,
            mb_per_s: 10.0,
            reference_mb_per_s: 100.0,
            against: Against::Peers,
        };
        let peers = |p: f64| Judged { pct_of_peers: Some(p), ..Judged::default() };
        /// What, pass, facts, judged so far, path limited, array kept →
        /// verdict and the start of the first reason.
        type Case<'a> = (&'a str, PassKind, Facts<'a>, Judged, bool, Option<f64>, Verdict, &'a str);
        let cases: Vec<Case> = vec![
            (
                "at the median",
                PassKind::Serial,
                facts(),
                peers(100.0),
                false,
                None,
                Verdict::Ok,
                "",
            ),
            (
                "peer rule, slow",
                PassKind::Serial,
                facts(),
                peers(80.0),
                false,
                None,
                Verdict::Slow,
                "80% of its peers' median speed",
            ),
            (
                "peer rule, fast",
                PassKind::Serial,
                facts(),
                peers(120.0),
                false,
                None,
                Verdict::Fast,
                "120% of its peers' median speed",
            ),
            (
                "no peers",
                PassKind::Serial,
                facts(),
                Judged::default(),
                false,
                None,
                Verdict::Ok,
                "",
            ),
            (
                "failed reads win",
                PassKind::Serial,
                Facts { read_errors: 1, bad_ranges: 1, bad_bytes: 4096, errors: &err, ..facts() },
                peers(50.0),
                false,
                None,
                Verdict::Error,
                "1 unreadable range(s), 4096 bytes, first at byte 8192",
            ),
            (
                "gone",
                PassKind::Parallel,
                Facts { read_errors: 1, device_gone: true, errors: &err, ..facts() },
                peers(100.0),
                false,
                None,
                Verdict::Error,
                "the device went away at byte 8192",
            ),
            (
                "stall, also under a bottleneck",
                PassKind::Parallel,
                Facts { slow_reads: &stalled, slow_read_count: 1, ..facts() },
                peers(100.0),
                true,
                Some(50.0),
                Verdict::Slow,
                "a read took 3000 ms",
            ),
            (
                "shared bottleneck: parallel numbers say nothing",
                PassKind::Parallel,
                facts(),
                peers(50.0),
                true,
                Some(50.0),
                Verdict::Ok,
                "",
            ),
            (
                "own serial: lost alone",
                PassKind::Parallel,
                facts(),
                Judged { pct_of_serial: Some(60.0), ..peers(100.0) },
                false,
                Some(98.0),
                Verdict::Slow,
                "60% of its own serial speed while the array's median disk keeps 98%",
            ),
            (
                "own serial: lost what all lost",
                PassKind::Parallel,
                facts(),
                Judged { pct_of_serial: Some(91.0), ..peers(100.0) },
                false,
                Some(93.0),
                Verdict::Ok,
                "",
            ),
            (
                "tail",
                PassKind::Serial,
                Facts { p9999_us: 600_000.0, second_slowest_us: 550_000.0, ..facts() },
                Judged { p9999_pct_of_peers: Some(600.0), ..peers(100.0) },
                false,
                None,
                Verdict::Slow,
                "p99.99 read latency 600 ms is 6.0x",
            ),
            (
                "region",
                PassKind::Serial,
                facts(),
                Judged { slow_regions: vec![region.clone()], ..peers(100.0) },
                false,
                None,
                Verdict::Slow,
                "slow region from byte 0 to 1048576",
            ),
            (
                "seek: loses more than its peers",
                PassKind::Seek,
                facts(),
                Judged { pct_of_serial: Some(20.0), seek_pct_of_peers: Some(50.0), ..peers(100.0) },
                false,
                None,
                Verdict::Slow,
                "under seek stress it keeps 20% of its serial speed, 50% of what its peers keep",
            ),
            (
                "seek: loses what its peers lose",
                PassKind::Seek,
                facts(),
                Judged { pct_of_serial: Some(20.0), seek_pct_of_peers: Some(100.0), ..peers(40.0) },
                false,
                None,
                Verdict::Ok,
                "",
            ),
            (
                "time",
                PassKind::Parallel,
                facts(),
                Judged { time_pct_of_peers: Some(130.0), ..peers(100.0) },
                false,
                None,
                Verdict::Slow,
                "took 130% of its peers' median time",
            ),
            (
                "slow beats fast",
                PassKind::Parallel,
                facts(),
                Judged { time_pct_of_peers: Some(130.0), ..peers(120.0) },
                false,
                None,
                Verdict::Slow,
                "took 130%",
            ),
        ];
        for (what, kind, f, j, limited, kept, want, reason) in cases {
            let (v, reasons) = verdict(kind, &f, &j, limited, kept, &th);
            assert_eq!(v, want, "{what}: {reasons:?}");
            assert_eq!(reasons.is_empty(), want == Verdict::Ok, "{what}: {reasons:?}");
            if !reason.is_empty() {
                assert!(reasons[0].starts_with(reason), "{what}: {reasons:?}");
            }
        }
    }
}

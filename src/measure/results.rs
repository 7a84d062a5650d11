//! What a pass measured: per disk ([`DiskRun`]) and per pass ([`PassRun`]).
//! Plain data, the contract between measuring and judging.

use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;

use super::{PassKind, Window};

/// At most this many bad ranges are kept with their offsets (all are
/// counted).
pub const MAX_KEPT_ERRORS: usize = 64;
/// At most this many slow reads are kept with their offsets, the slowest
/// (all are counted).
pub const MAX_KEPT_SLOW: usize = 256;

/// Latency histogram in nanoseconds, 1 ns to 1 h at 3 significant digits.
pub(super) fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds")
}

/// A latency histogram as a recording keeps it: each bucket that holds
/// reads as (its highest value, its count). Read back, every quantile,
/// the mean, least and most are those of the histogram written.
pub(super) mod recorded_latencies {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(h: &Histogram<u64>, to: S) -> Result<S::Ok, S::Error> {
        let buckets: Vec<(u64, u64)> =
            h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect();
        buckets.serialize(to)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<Histogram<u64>, D::Error> {
        let mut h = super::latency_histogram();
        for (value, count) in Vec::<(u64, u64)>::deserialize(from)? {
            h.record_n(value, count).map_err(serde::de::Error::custom)?;
        }
        Ok(h)
    }
}

/// A range that could not be read.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ReadError {
    /// Byte offset of the failed read on the device.
    pub offset: u64,
    /// Length of the failed read in bytes.
    pub len: u64,
    /// The OS error number (5 = EIO), when there was one.
    pub errno: Option<i32>,
    /// The error as the OS describes it, and what was done about it.
    pub message: String,
    /// True when every logical block of the range was read alone and
    /// failed (or the whole read failed again); false for a span not read:
    /// skipped in an area that fails wholesale, or left unprobed when the
    /// sample time ran out or a stop came.
    #[serde(default = "exact_by_default")]
    pub exact: bool,
}

fn exact_by_default() -> bool {
    true
}

/// Why a disk's read ended before its window did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// `--max-errors` failed reads.
    MaxErrors,
    /// A signal (Ctrl-C, SIGTERM, SIGHUP).
    Interrupted,
    /// The device went away (ENODEV/ENXIO).
    DeviceGone,
    /// A read got no answer within the I/O timeout (`--io-timeout`): the
    /// disk, or its path, hung.
    Hung,
}

/// Where on the disk the time went: bytes read and time spent reading, in
/// equal position buckets from the start to the end of the disk. A read
/// counts in the bucket where it starts. Its memory is fixed by the bucket
/// count, never by the disk size.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Surface {
    /// Device size in bytes.
    pub size: u64,
    /// Bytes read per bucket.
    pub bytes: Vec<u64>,
    /// Nanoseconds spent in reads per bucket.
    pub busy_ns: Vec<u64>,
    /// Reads per bucket.
    pub reads: Vec<u64>,
}

impl Surface {
    /// `buckets` empty buckets over a disk of `size` bytes.
    pub fn new(buckets: usize, size: u64) -> Self {
        Self {
            size,
            bytes: vec![0; buckets.max(1)],
            busy_ns: vec![0; buckets.max(1)],
            reads: vec![0; buckets.max(1)],
        }
    }

    /// Counts a read of `bytes` at `offset` that took `took`.
    pub fn add(&mut self, offset: u64, bytes: u64, took: Duration) {
        let n = self.bytes.len() as u128;
        let i = (u128::from(offset) * n / u128::from(self.size.max(1))).min(n - 1) as usize;
        self.bytes[i] += bytes;
        self.busy_ns[i] += took.as_nanos() as u64;
        self.reads[i] += 1;
    }

    /// Adds another profile of the same disk, bucket by bucket.
    pub fn add_all(&mut self, other: &Surface) {
        for (i, b) in other.bytes.iter().enumerate() {
            self.bytes[i] += b;
            self.busy_ns[i] += other.busy_ns[i];
            self.reads[i] += other.reads[i];
        }
    }

    /// MB/s per bucket where it holds at least `min_reads` reads taking
    /// `min_s` seconds in all (None elsewhere: one read through a cache or
    /// a throttle's burst is not a speed).
    pub fn mb_per_s(&self, min_reads: u64, min_s: f64) -> Vec<Option<f64>> {
        self.bytes
            .iter()
            .zip(&self.busy_ns)
            .zip(&self.reads)
            .map(|((b, ns), r)| {
                let s = *ns as f64 / 1e9;
                (*b > 0 && *r >= min_reads && s >= min_s && s > 0.0).then(|| *b as f64 / 1e6 / s)
            })
            .collect()
    }
}

/// A read that took long: the sign of a sector the drive had to retry.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct SlowRead {
    /// Byte offset of the read on the device.
    pub offset: u64,
    /// Length of the read in bytes.
    pub len: u64,
    /// How long it took, in milliseconds.
    pub latency_ms: f64,
    /// How long of that it had the disk (with several reads in flight,
    /// from the previous one's end), in milliseconds; null in results from
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_ms: Option<f64>,
    /// Which read of the run it was (1 = the first, which includes any
    /// spin-up).
    pub index: u64,
}

impl SlowRead {
    /// The read of `chunk` that took `took`, `service` of it with the disk.
    pub fn at(
        chunk: crate::device::buffer::Chunk,
        (took, service): (Duration, Duration),
        index: u64,
    ) -> Self {
        Self {
            offset: chunk.offset(),
            len: chunk.len() as u64,
            latency_ms: took.as_secs_f64() * 1e3,
            service_ms: Some(service.as_secs_f64() * 1e3),
            index,
        }
    }

    /// How long it had the disk (its latency where that was not kept).
    pub fn had_disk_ms(&self) -> f64 {
        self.service_ms.unwrap_or(self.latency_ms)
    }
}

/// Keeps the `n` slowest of `reads` (ties: the earlier read), in offset
/// order: the worst reads are the evidence, wherever on the disk they are.
pub fn keep_slowest(reads: &mut Vec<SlowRead>, n: usize) {
    if reads.len() > n {
        reads.sort_by(|a, b| b.latency_ms.total_cmp(&a.latency_ms).then(a.index.cmp(&b.index)));
        reads.truncate(n);
    }
    reads.sort_by_key(|s| (s.offset, s.index));
}

impl ReadError {
    /// `len` bytes from `offset` not read (`exact` false) after the read
    /// failed with `e`, and `why`.
    pub fn unread(offset: u64, len: u64, e: &std::io::Error, why: &str) -> Self {
        Self::of(offset, len, e, format!("{e}; not read: {why}"), false)
    }

    /// `len` bytes from `offset` not read because the disk stopped
    /// answering (`e` says how long it was given).
    pub fn hung(offset: u64, len: u64, e: &std::io::Error) -> Self {
        Self::of(offset, len, e, e.to_string(), false)
    }

    /// The failure of reading `chunk` with `e`, `note` appended to the
    /// message.
    pub fn at(chunk: crate::device::buffer::Chunk, e: &std::io::Error, note: &str) -> Self {
        Self::of(chunk.offset(), chunk.len() as u64, e, format!("{e}{note}"), true)
    }

    /// `len` bytes from `offset` that failed with `e`, said in `message`.
    fn of(offset: u64, len: u64, e: &std::io::Error, message: String, exact: bool) -> Self {
        Self { offset, len, errno: e.raw_os_error(), message, exact }
    }
}

/// What a worker measured on one disk in one pass: the contract between
/// measuring and judging.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DiskRun {
    /// Bytes read successfully.
    pub bytes: u64,
    /// From the first read's start to the last read's end.
    pub elapsed: Duration,
    /// (bytes, elapsed) over the comparison window: from the end of the
    /// warm-up (10 % of the sample, at most 5 s) to the sample length, or
    /// the whole run when it was shorter.
    pub window: (u64, Duration),
    /// Successful reads.
    pub reads: u64,
    /// Latency of every successful read, in nanoseconds.
    #[serde(with = "recorded_latencies")]
    pub latency_ns: Histogram<u64>,
    /// The first bad ranges, exact to the logical block (at most
    /// `MAX_KEPT_ERRORS`).
    pub errors: Vec<ReadError>,
    /// Reads that failed (each re-read to find its bad ranges).
    pub failed_reads: u64,
    /// The slowest reads that took at least the slow-read threshold (at
    /// most `MAX_KEPT_SLOW`), in offset order.
    pub slow_reads: Vec<SlowRead>,
    /// All reads that took at least the slow-read threshold.
    pub slow_read_count: u64,
    /// Bytes and read time per position bucket across the disk.
    pub surface: Surface,
    /// Exact bad ranges found (all of them; `errors` keeps the first
    /// ranges, exact and unread).
    pub bad_ranges: u64,
    /// Bytes found unreadable.
    pub bad_bytes: u64,
    /// Bytes neither read nor proven bad (skipped in an area that fails
    /// wholesale, or unprobed when time ran out or a stop came).
    pub unread_bytes: u64,
    /// The device went away (ENODEV/ENXIO): the read stopped there.
    pub gone: bool,
    /// Whether the read reached the end of the disk (in a sample pass, at
    /// least once).
    pub reached_end: bool,
    /// Why the read ended before its window did; None when it ran the
    /// whole window (or disk).
    pub stopped: Option<Stopped>,
    /// Where a later read of the disk goes on from.
    pub resume: Resume,
}

/// Where a disk's read stopped, for the next slice of its sample to go on
/// from: the byte after the last read started, the spot it was in, and
/// the spans found failing or skipped (not read, counted or listed again).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Resume {
    pub offset: u64,
    pub spot: u32,
    pub known: Vec<(u64, u64)>,
}

/// One slice of a disk's serial sample: the disk read alone for a part of
/// its sample, at one moment of the pass.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Slice {
    /// The disk (index in the plan).
    pub disk: usize,
    /// The round of the pass it was read in (every disk once a round).
    pub round: u32,
    /// When it began, from the start of the pass, and how long it read.
    pub at: Duration,
    pub elapsed: Duration,
    /// (bytes, elapsed) over its comparison window (its warm-up left out).
    pub window: (u64, Duration),
}

impl DiskRun {
    /// One disk's measurement from its concurrent readers' (the seek pass):
    /// bytes, reads, latencies, surface and faults added up; the window is
    /// all readers' window bytes over the longest of their windows (they
    /// start together and read for the same sample); a bad range two
    /// readers both found counts once.
    pub fn merge(mut runs: Vec<DiskRun>) -> DiskRun {
        let mut all = runs.remove(0);
        for mut r in runs {
            all.window = (all.window.0 + r.window.0, all.window.1.max(r.window.1));
            all.elapsed = all.elapsed.max(r.elapsed);
            all.slow_reads.append(&mut r.slow_reads);
            all.add(r);
        }
        all.errors.sort_by_key(|e| e.offset);
        all.errors.truncate(MAX_KEPT_ERRORS);
        keep_slowest(&mut all.slow_reads, MAX_KEPT_SLOW);
        all
    }

    /// Adds another run of this disk's counts (bytes, reads, latencies,
    /// faults, surface) and its bad ranges; its window, time and slow reads
    /// are the caller's to join.
    fn add(&mut self, r: DiskRun) {
        self.bytes += r.bytes;
        self.reads += r.reads;
        let _ = self.latency_ns.add(&r.latency_ns);
        self.failed_reads += r.failed_reads;
        self.bad_ranges += r.bad_ranges;
        self.bad_bytes += r.bad_bytes;
        self.unread_bytes += r.unread_bytes;
        self.add_errors(r.errors);
        self.slow_read_count += r.slow_read_count;
        self.surface.add_all(&r.surface);
        self.gone |= r.gone;
        self.reached_end |= r.reached_end;
        self.stopped = self.stopped.or(r.stopped);
    }

    /// Lists another run's bad ranges of this disk (their counts already
    /// added): the bytes a listed range already holds count once (a
    /// re-measurement that failed over a span the pass had skipped does
    /// not add it twice), a range wholly listed already is not listed
    /// again, and the list stays in order of offset (its first is the
    /// first on the disk, as every sentence says).
    fn add_errors(&mut self, errors: Vec<ReadError>) {
        for e in errors {
            let both = self.listed(&e);
            if e.exact {
                self.bad_bytes -= both.min(self.bad_bytes);
            } else {
                self.unread_bytes -= both.min(self.unread_bytes);
            }
            if both < e.len {
                self.errors.push(e);
            } else if e.exact {
                self.bad_ranges = self.bad_ranges.saturating_sub(1);
            }
        }
        self.errors.sort_by_key(|e| e.offset);
    }

    /// How many of `e`'s bytes this run lists already (bad or unread).
    fn listed(&self, e: &ReadError) -> u64 {
        let (from, to) = (e.offset, e.offset + e.len);
        let both: u64 = (self.errors.iter())
            .map(|k| to.min(k.offset + k.len).saturating_sub(from.max(k.offset)))
            .sum();
        both.min(e.len)
    }

    /// This run followed by `next`, a later slice of the same disk's
    /// sample: bytes, times, windows, reads, latencies, surface and faults
    /// added up; `next`'s reads numbered on after this run's (only the
    /// pass's first read is the one a spin-up may excuse).
    pub fn then(mut self, mut next: DiskRun) -> DiskRun {
        self.window = (self.window.0 + next.window.0, self.window.1 + next.window.1);
        self.elapsed += next.elapsed;
        let first = self.reads;
        let later = std::mem::take(&mut next.slow_reads);
        self.slow_reads.extend(later.into_iter().map(|s| SlowRead { index: s.index + first, ..s }));
        keep_slowest(&mut self.slow_reads, MAX_KEPT_SLOW);
        let resume = next.resume.clone();
        self.add(next);
        self.errors.truncate(MAX_KEPT_ERRORS);
        DiskRun { resume, ..self }
    }
}

impl DiskRun {
    /// What went wrong in `other`, a re-measurement of this disk, added to
    /// this run: its failed reads and bad ranges, why it stopped (hung,
    /// gone), its slow reads; not its bytes or times (the speeds stay this
    /// run's). A failure while re-measured is a finding like any other.
    pub fn absorb_faults(&mut self, other: &DiskRun) {
        // Reads that failed again over ranges this run found already are
        // no new failed reads (a disk re-measured reads its bad sectors
        // again): counted only where the re-measurement found more.
        let more = other.errors.is_empty() || other.errors.iter().any(|e| self.listed(e) < e.len);
        if more {
            self.failed_reads += other.failed_reads;
        }
        self.bad_ranges += other.bad_ranges;
        self.bad_bytes += other.bad_bytes;
        self.unread_bytes += other.unread_bytes;
        self.add_errors(other.errors.clone());
        self.errors.truncate(MAX_KEPT_ERRORS);
        self.gone |= other.gone;
        self.stopped = match other.stopped {
            Some(Stopped::Interrupted) | None => self.stopped,
            Some(s) => self.stopped.or(Some(s)),
        };
        self.slow_read_count += other.slow_read_count;
        self.slow_reads.extend(other.slow_reads.iter().cloned());
        keep_slowest(&mut self.slow_reads, MAX_KEPT_SLOW);
    }

    /// Whether a read failed, or the disk hung or went away.
    pub fn failed(&self) -> bool {
        self.failed_reads > 0
            || self.gone
            || matches!(
                self.stopped,
                Some(Stopped::Hung | Stopped::DeviceGone | Stopped::MaxErrors)
            )
    }
}

/// What a disk is re-measured beside, before its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Beside {
    /// Alone, in turn with this peer (an index in the plan): A-B-A-B. A
    /// serial verdict's re-measurement.
    Peer(usize),
    /// Together with every disk, in rounds, as the parallel pass read
    /// them: a parallel verdict's re-measurement.
    All,
}

/// A disk re-measured before its verdict.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Recheck {
    /// The disk (an index in the plan), and what it was read beside.
    pub disk: usize,
    pub beside: Beside,
    /// The slices read, in order (every disk's of a round of `All`).
    pub slices: Vec<Slice>,
    /// Each disk read, and what its reads found (its faults are findings
    /// of the pass re-measured).
    pub runs: Vec<(usize, DiskRun)>,
}

/// A group of disks that lost speed together in the parallel pass, read
/// again before it is named: its rounds alone and beside every disk.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GroupRecheck {
    /// The group's disks (indexes in the plan).
    pub disks: Vec<usize>,
    pub alone: Vec<Slice>,
    pub together: Vec<Slice>,
}

/// One pass as measured: which disks ran, and what each measured.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PassRun {
    /// Serial or parallel.
    pub kind: PassKind,
    /// The window each disk was read for.
    pub window: Window,
    /// When the pass started.
    pub started_at: SystemTime,
    /// Wall time of the pass.
    pub elapsed: Duration,
    /// (disk index, measurement), in plan order; disks a stop kept from
    /// starting are absent.
    pub disks: Vec<(usize, DiskRun)>,
    /// Whether a stop request cut the pass short.
    pub interrupted: bool,
    /// A serial pass read in slices: each slice, in the order read (empty
    /// otherwise).
    pub slices: Vec<Slice>,
}

impl PassRun {
    /// What failed on its disks while they were re-measured (`runs`: each
    /// disk's run then): a finding of this pass, a stop's cut too.
    pub fn absorb_faults(&mut self, runs: &[(usize, DiskRun)]) {
        for (d, run) in runs {
            if let Some((_, row)) = self.disks.iter_mut().find(|(i, _)| i == d) {
                row.absorb_faults(run);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_counts_in_the_bucket_where_it_starts() {
        let mut s = Surface::new(4, 1000);
        for (offset, bytes) in [(0, 100), (249, 10), (250, 100), (999, 1)] {
            s.add(offset, bytes, Duration::from_millis(1));
        }
        assert_eq!(s.bytes, [110, 100, 0, 1]);
        let mbps = s.mb_per_s(1, 0.0);
        assert_eq!(mbps[2], None);
        assert!((mbps[1].unwrap() - 0.1).abs() < 1e-9, "100 bytes in 1 ms = 0.1 MB/s");
    }

    #[test]
    fn a_recorded_run_reads_back_with_the_same_latencies() {
        let mut run = faults(vec![failed(4096, 512, true)]);
        run.latency_ns = latency_histogram();
        // From 3 µs to a 40 s stall, in uneven counts.
        for (i, ns) in [3_000u64, 3_071, 250_000, 1_999_999, 40_000_000_000].iter().enumerate() {
            run.latency_ns.record_n(*ns, i as u64 * 7 + 1).unwrap();
        }
        let again: DiskRun = serde_json::from_slice(&serde_json::to_vec(&run).unwrap()).unwrap();
        let (a, b) = (&run.latency_ns, &again.latency_ns);
        assert_eq!((a.len(), a.min(), a.max(), a.mean()), (b.len(), b.min(), b.max(), b.mean()));
        for q in [0.0, 0.5, 0.9, 0.99, 0.9999, 1.0] {
            assert_eq!(a.value_at_quantile(q), b.value_at_quantile(q), "{q}");
        }
        assert_eq!(again.errors, run.errors);
    }

    fn failed(offset: u64, len: u64, exact: bool) -> ReadError {
        ReadError { offset, len, errno: Some(5), message: "EIO".into(), exact }
    }

    fn faults(errors: Vec<ReadError>) -> DiskRun {
        DiskRun {
            bytes: 0,
            elapsed: Duration::ZERO,
            window: (0, Duration::ZERO),
            reads: 0,
            latency_ns: Histogram::new(3).unwrap(),
            failed_reads: errors.len() as u64,
            slow_reads: Vec::new(),
            slow_read_count: 0,
            surface: Surface::default(),
            bad_ranges: errors.iter().filter(|e| e.exact).count() as u64,
            bad_bytes: errors.iter().filter(|e| e.exact).map(|e| e.len).sum(),
            unread_bytes: errors.iter().filter(|e| !e.exact).map(|e| e.len).sum(),
            gone: false,
            reached_end: false,
            stopped: None,
            resume: Resume::default(),
            errors,
        }
    }

    #[test]
    fn a_re_measurement_that_fails_over_a_skipped_span_counts_its_bytes_once() {
        const MB: u64 = 1_000_000;
        // A 200 MB disk: the pass found 1 MB bad at 150 MB and skipped
        // the rest; re-measured, it failed whole from byte 0, skipping
        // all but its first MB. Unread and bad add up to the disk at most,
        // and the first range is the first on the disk.
        let mut pass = faults(vec![failed(150 * MB, MB, true), failed(151 * MB, 49 * MB, false)]);
        let again = faults(vec![failed(0, MB, true), failed(MB, 199 * MB, false)]);
        pass.absorb_faults(&again);
        assert!(pass.bad_bytes + pass.unread_bytes <= 200 * MB, "{pass:?}");
        assert_eq!((pass.bad_bytes, pass.bad_ranges), (2 * MB, 2));
        // 49 MB the pass skipped, 199 MB the re-measurement skipped, of
        // which 50 MB the pass had listed (bad or skipped) already.
        assert_eq!(pass.unread_bytes, 49 * MB + 199 * MB - 50 * MB, "{pass:?}");
        assert_eq!(pass.bad_bytes + pass.unread_bytes, 200 * MB);
        assert_eq!(pass.errors[0].offset, 0, "{:?}", pass.errors);
        // The same range found twice counts once.
        let mut pass = faults(vec![failed(150 * MB, MB, true)]);
        pass.absorb_faults(&faults(vec![failed(150 * MB, MB, true)]));
        assert_eq!((pass.bad_bytes, pass.bad_ranges, pass.errors.len()), (MB, 1, 1));
        // And its failed read once: read again, it found nothing new.
        assert_eq!(pass.failed_reads, 1);
        // A re-measurement that found another range adds its failed reads.
        pass.absorb_faults(&faults(vec![failed(150 * MB, MB, true), failed(160 * MB, MB, true)]));
        assert_eq!((pass.failed_reads, pass.bad_ranges), (3, 2));
    }
}

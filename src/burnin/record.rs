//! What a burn-in records about one disk: where its run stands ([`At`]),
//! every range found bad and how ([`Finding`], [`Class`], in words an admin
//! acts on), its speeds across the surface, its slowest request and where
//! it hung ([`DiskBurn`]). The worker fills it in; checkpoints save it; the
//! report reads it.
//!
//! It must not do I/O and must not judge (the verdicts are
//! `judge::burnin`'s).

use crate::finding::Code;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::block::{Damage, Found, Shape, Stamp};
use super::targets::Target;
use crate::io::Bounds;

/// Which half of a pass a disk is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Write,
    Verify,
    /// Every pass written and verified.
    Done,
}

impl Phase {
    /// `"write"`, `"verify"` or `"done"`, as reports say it.
    pub fn word(self) -> &'static str {
        match self {
            Phase::Write => "write",
            Phase::Verify => "verify",
            Phase::Done => "done",
        }
    }
}

/// Bytes done of a whole run over a range of `len` bytes with `phases`
/// phases a pass (a write and a read-back: 2; a soak's reads: 1): every
/// phase of the passes before `pass`, this pass's write when `verifying`,
/// and `done` bytes of the phase now.
pub fn bytes_done(len: u64, phases: u64, pass: u16, verifying: bool, done: u64) -> u64 {
    let before = u64::from(pass.saturating_sub(1)) * phases + u64::from(phases == 2 && verifying);
    before * len + done.min(len)
}

/// Where a disk's run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct At {
    /// The pass (from 1).
    pub pass: u16,
    pub phase: Phase,
    /// The phase's bytes done: from the range's start up to here (written
    /// and flushed, or read back and classified).
    pub done_until: u64,
    /// Where the interval before this checkpoint began: a resumed write
    /// phase reads `interval_from..done_until` back first, to prove that
    /// what the disk acknowledged as flushed survived the interruption.
    pub interval_from: u64,
}

impl At {
    /// The start of pass 1.
    pub fn first(start: u64) -> Self {
        Self { pass: 1, phase: Phase::Write, done_until: start, interval_from: start }
    }

    /// Where the run stands once this phase of this pass is done, over
    /// `span` with `passes` passes asked.
    pub fn next(self, span: Span, passes: u16) -> Self {
        let (pass, start, end) = (self.pass, span.start, span.end);
        match self.phase {
            Phase::Write => At { phase: Phase::Verify, ..At::first(start) }.with_pass(pass),
            Phase::Verify if pass < passes => At::first(start).with_pass(pass + 1),
            _ => At { phase: Phase::Done, ..At::first(end) }.with_pass(pass),
        }
    }

    /// How far into its phase this is over `start..end`, in per cent.
    pub fn percent(&self, start: u64, end: u64) -> f64 {
        100.0 * self.done_until.saturating_sub(start) as f64 / (end - start).max(1) as f64
    }

    /// The same place in pass `pass`.
    pub fn with_pass(self, pass: u16) -> Self {
        Self { pass, ..self }
    }
}

/// At most this many findings are kept per disk (all are counted).
pub const MAX_FINDINGS: usize = 64;

/// What went wrong with a range of blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The write failed (an I/O error).
    WriteError,
    /// Flushing the disk's cache failed: what it holds is not known.
    FlushError,
    /// The read-back failed (an I/O error).
    ReadError,
    /// Our block with bits changed (media, cable, memory).
    Corrupted,
    /// A valid block of this disk that belongs elsewhere on it (a
    /// misdirected write, fake capacity wrapping around).
    Misdirected,
    /// A valid block of another disk.
    OtherDisk,
    /// A valid block from an earlier pass or run: the write was lost.
    Stale,
    /// Zeros where data was written: never written.
    Zeros,
    /// Data that is neither what was written nor a burn-in block.
    Foreign,
}

/// One range of blocks with one fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Pass (from 1).
    pub pass: u16,
    /// First byte, and length in bytes.
    pub offset: u64,
    pub len: u64,
    pub class: Class,
    /// What was found, in words.
    pub detail: String,
}

/// The speed of one stretch of the surface in one phase of one pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurfacePoint {
    pub pass: u16,
    /// `"write"` or `"verify"` (a soak's reads are `"verify"`).
    pub phase: Phase,
    /// Where the stretch begins (bytes), and its MB/s.
    pub offset: u64,
    pub mb_per_s: f64,
    /// Its bytes (0, and not written, in results from before stretches
    /// were timed: then each was 1/200 of the range).
    #[serde(default, skip_serializing_if = "not_known")]
    pub bytes: u64,
}

/// A stretch's bytes not known (results from before they were timed).
fn not_known(bytes: &u64) -> bool {
    *bytes == 0
}

impl SurfacePoint {
    /// Its seconds, from its bytes and speed (0 when its bytes are not
    /// known).
    fn secs(&self) -> f64 {
        if self.mb_per_s > 0.0 { self.bytes as f64 / (self.mb_per_s * 1e6) } else { 0.0 }
    }
}

/// Points one pass's phase keeps of its surface: past this many, the
/// neighbours nearest in speed merge (a point merged holds both
/// stretches' bytes and seconds) until [`SURFACE_MERGED`] are left. A step
/// costs more to merge than any steady run of points around it (the cost
/// is the pair's seconds times how far their speeds are apart, as a
/// ratio), so a pass of days keeps its steps and stalls at the resolution
/// they were timed at and its steady stretches as a few long points.
pub const SURFACE_KEEP: usize = 400;
/// What merging leaves of a pass's phase.
pub const SURFACE_MERGED: usize = 300;

/// Merges neighbours of `points[from..]` (one pass's phase, in order)
/// until `keep` are left there, the cheapest pair first (above), in place:
/// it runs where a stretch closes, beside the disk's requests. Points whose
/// bytes are not known are never merged.
fn merge_steady(points: &mut Vec<SurfacePoint>, from: usize, keep: usize) {
    let cost = |a: &SurfacePoint, b: &SurfacePoint| {
        if a.bytes == 0 || b.bytes == 0 || a.mb_per_s <= 0.0 || b.mb_per_s <= 0.0 {
            return f64::INFINITY;
        }
        (a.secs() + b.secs()) * ((a.mb_per_s / b.mb_per_s).ln().abs() + 0.05)
    };
    while points.len() - from > keep {
        let Some((i, c)) = (points[from..].windows(2).map(|w| cost(&w[0], &w[1])).enumerate())
            .min_by(|a, b| a.1.total_cmp(&b.1))
        else {
            return;
        };
        let i = from + i;
        if !c.is_finite() {
            return;
        }
        let b = points.remove(i + 1);
        let a = &mut points[i];
        let secs = a.secs() + b.secs();
        a.bytes += b.bytes;
        a.mb_per_s = crate::units::mb_per_s(a.bytes, secs);
    }
}

/// What one disk's burn-in measured and found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DiskBurn {
    /// Bytes written (and flushed), and the seconds that took.
    pub written_bytes: u64,
    pub write_s: f64,
    /// Bytes read back, and the seconds that took.
    pub verified_bytes: u64,
    pub verify_s: f64,
    /// Seconds of each pass's write and read-back (index 0: pass 1),
    /// for the speed of each pass.
    #[serde(default)]
    pub write_pass_s: Vec<f64>,
    #[serde(default)]
    pub verify_pass_s: Vec<f64>,
    /// MB/s across the surface, per pass and phase (the first
    /// `SURFACE_PASSES` passes).
    #[serde(default)]
    pub surface: Vec<SurfacePoint>,
    /// Bytes a resumed write phase read back to prove its last interval
    /// (not counted in `verified_bytes`).
    #[serde(default)]
    pub reverified_bytes: u64,
    /// Bytes per fault class.
    pub bad_bytes: Vec<(Class, u64)>,
    /// The first ranges found (at most [`MAX_FINDINGS`]).
    pub findings: Vec<Finding>,
    /// Passes completed.
    pub passes_done: u16,
    /// The device went away: its run ended there.
    pub device_gone: bool,
    /// A signal stopped the run.
    pub interrupted: bool,
    /// Times the run was resumed from a checkpoint.
    #[serde(default)]
    pub resumes: u32,
    /// The disk stopped answering: a request got no answer within the I/O
    /// timeout; its run ended there.
    #[serde(default)]
    pub hung: Option<HungAt>,
    /// Where the burn-in stands at the end of this run (`phase` "done"
    /// when every pass was written and verified); null for a soak.
    #[serde(default)]
    pub place: Option<At>,
    /// The slowest write or read: the time it had the disk (with several
    /// in flight, from the previous one's end), and where.
    #[serde(default)]
    pub slowest: Option<SlowIo>,
    /// Writes and reads that had the disk for at least 500 ms.
    #[serde(default)]
    pub slow_requests: u64,
    /// A verify's spin cycles (`--cycles`), each before its read-back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycles: Vec<super::cycle::Cycle>,
    /// A burn-in fitted to a deadline (`--deadline`): its range in
    /// stripes, and how many are burned; None: burned whole, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripes: Option<super::stripes::Stripes>,
    /// Whether a request was timed since this process began.
    #[serde(skip)]
    warm: bool,
}

impl DiskBurn {
    /// Adds a timed stretch to the surface, in its place by pass, phase
    /// and offset (a striped burn-in times its stretches out of order);
    /// past [`SURFACE_KEEP`] points in its pass's phase, the steady ones
    /// merge.
    pub fn add_point(&mut self, p: SurfacePoint) {
        let group = |q: &SurfacePoint| (q.pass, q.phase as u8);
        let key = group(&p);
        let at = self.surface.partition_point(|q| (group(q), q.offset) <= (key, p.offset));
        self.surface.insert(at, p);
        let from = self.surface.partition_point(|q| group(q) < key);
        let to = self.surface.partition_point(|q| group(q) <= key);
        if to - from > SURFACE_KEEP {
            let rest = self.surface.split_off(to);
            merge_steady(&mut self.surface, from, SURFACE_MERGED);
            self.surface.extend(rest);
        }
    }

    /// The bytes of `range` each pass burns: all of it, or where burned
    /// in stripes to a deadline, the stripes burned.
    pub fn pass_bytes(&self, range: (u64, u64)) -> u64 {
        self.stripes.map_or(range.1 - range.0, |s| s.tested_bytes(range))
    }

    /// What a burn-in fitted to a deadline tested of `range`.
    pub fn coverage(&self, range: (u64, u64)) -> Option<super::stripes::Coverage> {
        self.stripes.map(|s| s.coverage(range))
    }

    /// Its pace in bytes a second over the run: the read-back's (`reads`),
    /// else the writes' (a guess of how long a turn's phase takes).
    pub fn pace(&self, reads: bool) -> f64 {
        if reads {
            self.verified_bytes as f64 / self.verify_s.max(1e-3)
        } else {
            self.written_bytes as f64 / self.write_s.max(1e-3)
        }
    }
}

/// A disk's temperatures read during the run, and the readings no sensor
/// can make (a sensor or firmware fault), each named once, with when it
/// first came.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Temps {
    pub readings: Vec<TempReading>,
    pub not_believed: Vec<String>,
}

/// A disk's temperature read during the run, and when (seconds since the
/// disks started).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TempReading {
    pub elapsed_s: f64,
    pub celsius: i64,
}

/// One slow write or read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SlowIo {
    pub pass: u16,
    pub phase: Phase,
    /// Its first byte, and how long it had the disk (ms).
    pub offset: u64,
    pub ms: f64,
}

/// A request that had the disk this long is counted as slow (the check's
/// `--slow-read-ms` default).
const SLOW_IO: Duration = Duration::from_millis(500);

/// Where a disk stopped answering.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HungAt {
    /// The pass (from 1) and phase (`write` or `verify`).
    pub pass: u16,
    pub phase: Phase,
    /// The first byte of the request that got no answer.
    pub offset: u64,
    /// The I/O timeout it exceeded, in seconds.
    pub timeout_s: f64,
}

impl DiskBurn {
    /// Records `len` bad bytes at `offset`, merging with the last range
    /// when it continues it.
    pub(super) fn add(&mut self, pass: u16, offset: u64, len: u64, class: Class, detail: String) {
        match self.bad_bytes.iter_mut().find(|(c, _)| *c == class) {
            Some((_, n)) => *n += len,
            None => self.bad_bytes.push((class, len)),
        }
        if let Some(last) = self.findings.last_mut()
            && last.class == class
            && last.pass == pass
            && last.offset + last.len == offset
            && last.detail == detail
        {
            last.len += len;
            return;
        }
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(Finding { pass, offset, len, class, detail });
        }
    }

    /// What `other` found (a re-measurement's turns on this disk) added to
    /// what this found: its bad bytes, ranges, hang, slow requests.
    pub(crate) fn absorb(&mut self, other: &DiskBurn) {
        for (class, n) in &other.bad_bytes {
            match self.bad_bytes.iter_mut().find(|(c, _)| c == class) {
                Some((_, m)) => *m += n,
                None => self.bad_bytes.push((*class, *n)),
            }
        }
        let room = MAX_FINDINGS.saturating_sub(self.findings.len());
        self.findings.extend(other.findings.iter().take(room).cloned());
        self.device_gone |= other.device_gone;
        if self.hung.is_none() {
            self.hung = other.hung;
        }
        self.slow_requests += other.slow_requests;
        if let Some(s) = other.slowest
            && self.slowest.is_none_or(|m| s.ms > m.ms)
        {
            self.slowest = Some(s);
        }
    }

    /// Adds `s` seconds to pass `pass`'s entry of `times`.
    pub(super) fn time(times: &mut Vec<f64>, pass: u16, s: f64) {
        let i = usize::from(pass.max(1) - 1);
        if times.len() <= i {
            times.resize(i + 1, 0.0);
        }
        times[i] += s;
    }

    /// Bytes found bad, all classes.
    pub fn total_bad(&self) -> u64 {
        self.bad_bytes.iter().map(|(_, n)| n).sum()
    }

    /// Counts a request of pass `pass`'s `phase` at `offset` that had the
    /// disk for `service`; the first since the process began is left out
    /// (a spun-down drive takes seconds to spin up).
    pub(super) fn timed(&mut self, pass: u16, phase: Phase, offset: u64, service: Duration) {
        if !std::mem::replace(&mut self.warm, true) {
            return;
        }
        if service >= SLOW_IO {
            self.slow_requests += 1;
        }
        let ms = service.as_secs_f64() * 1e3;
        if self.slowest.is_none_or(|s| ms > s.ms) {
            self.slowest = Some(SlowIo { pass, phase, offset, ms });
        }
    }

    /// Notes that the disk hung at `offset` of pass `pass`'s `phase`.
    pub(super) fn hang(&mut self, pass: u16, phase: Phase, offset: u64, bounds: &Bounds) {
        self.hung.get_or_insert(HungAt {
            pass,
            phase,
            offset,
            timeout_s: bounds.timeout.as_secs_f64(),
        });
    }
}

impl Class {
    /// A fault class in words, as the findings and sentences say it.
    pub fn words(self) -> &'static str {
        match self {
            Class::WriteError => "failed to write",
            Class::FlushError => "not flushed (the cache flush failed)",
            Class::ReadError => "failed to read back",
            Class::Corrupted => "corrupted",
            Class::Misdirected => "misdirected",
            Class::OtherDisk => "another disk's",
            Class::Stale => "lost (stale on read-back)",
            Class::Zeros => "zeros (never written)",
            Class::Foreign => "foreign (not what was written)",
        }
    }

    /// The code of bytes found bad in this way.
    pub fn code(self) -> Code {
        match self {
            Class::WriteError => Code::WriteFailed,
            Class::FlushError => Code::FlushFailed,
            Class::ReadError => Code::ReadBackFailed,
            Class::Corrupted => Code::Corrupted,
            Class::Misdirected => Code::Misdirected,
            Class::OtherDisk => Code::OtherDisksBlocks,
            Class::Stale => Code::LostWrites,
            Class::Zeros => Code::NeverWritten,
            Class::Foreign => Code::Foreign,
        }
    }
}

/// Words for a block that is not what was written, in words an admin acts
/// on. `at`: where the block was read. A misdirected block is described by
/// how far away it belongs, so that a run of them (fake capacity wrapping
/// around) is one range.
pub(super) fn describe(found: Found, stamp: Stamp, at: u64) -> (Class, String) {
    match found {
        Found::Good => unreachable!("good blocks are not findings"),
        Found::Corrupted(d) => (Class::Corrupted, damage_words(d)),
        Found::Zeros => (
            Class::Zeros,
            "reads back as zeros: never written (a lost write, or a write cache that reported it done)"
                .into(),
        ),
        Found::Misdirected { offset } => (Class::Misdirected, misdirected_words(offset, at)),
        Found::OtherDisk {
            offset,
            this_run: true,
            ..
        } => (
            Class::OtherDisk,
            format!(
                "holds another disk's block of this burn-in (that disk's byte {offset}): writes land on the wrong disk (a controller, expander or USB bridge mixes them up)"
            ),
        ),
        Found::OtherDisk { offset, .. } => (
            Class::OtherDisk,
            format!("holds another disk's block from an earlier burn-in (its byte {offset})"),
        ),
        Found::Stale { run, pass } if run == stamp.run => (
            Class::Stale,
            format!(
                "holds pass {pass}'s block: the write of pass {} was lost",
                stamp.pass
            ),
        ),
        Found::Stale { .. } => (
            Class::Stale,
            "holds an earlier burn-in's block: the write was lost".into(),
        ),
        Found::Foreign => (
            Class::Foreign,
            "holds data that is neither what was written nor any burn-in block".into(),
        ),
    }
}

/// Words for a block read at `at` that belongs at `offset` of this disk.
fn misdirected_words(offset: u64, at: u64) -> String {
    let (by, way) =
        if offset > at { (offset - at, "further on") } else { (at - offset, "earlier") };
    format!(
        "holds the blocks written {by} bytes {way} (the disk wraps around, or writes land elsewhere)"
    )
}

/// How a corrupted block differs, in words.
fn damage_words(d: Damage) -> String {
    let (bits, bytes) = (d.bits, d.bytes);
    match d.shape {
        Shape::OneBitPerByte { bit: Some(b) } => format!(
            "bit {b} flipped in {bytes} byte(s), one bit each: garbled on the way (cable, controller or memory) more likely than on the media"
        ),
        Shape::OneBitPerByte { bit: None } => {
            format!("{bits} bit(s) flipped, one in each of {bytes} byte(s)")
        }
        Shape::StuckBit { bit, value } => format!(
            "bit {b} reads {v} in all {bytes} byte(s) that differ: a stuck data line (cable, controller or memory)",
            b = bit,
            v = u8::from(value)
        ),
        Shape::Torn { landed } => format!(
            "torn: its first {landed} of 8 sectors hold what was written, the rest do not (a write cut short)"
        ),
        Shape::Scattered => format!("{bits} bit(s) differ in {bytes} byte(s)"),
    }
}

/// The range a job burns, and the identity its blocks carry.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Whole 4 KiB blocks from `start` to `end`.
    pub start: u64,
    pub end: u64,
    /// The identity hash every block of this disk carries.
    pub disk: u32,
}

impl Span {
    /// A target's range and identity.
    pub fn of(t: &Target) -> Self {
        Self { start: t.start, end: t.end, disk: t.disk }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_blocks_of_one_fault_are_one_range() {
        let mut d = DiskBurn::default();
        for k in 0..3 {
            d.add(1, 8192 + k * 4096, 4096, Class::Corrupted, "x".into());
        }
        d.add(1, 8192 + 3 * 4096, 4096, Class::Stale, "y".into());
        d.add(1, 65536, 4096, Class::Corrupted, "x".into());
        assert_eq!(d.findings.len(), 3);
        assert_eq!((d.findings[0].offset, d.findings[0].len), (8192, 3 * 4096));
        assert_eq!(d.total_bad(), 5 * 4096);
        assert_eq!(d.bad_bytes, [(Class::Corrupted, 4 * 4096), (Class::Stale, 4096)]);
    }

    #[test]
    fn a_days_long_pass_keeps_a_bounded_surface_with_its_step_and_its_stall() {
        // A pass of a 20 TB disk timed four times a second: 180 MB/s with
        // scatter, a media cache full after 30 GB (18 MB/s from there), and
        // one stall of seconds at 2 TB.
        let mut b = DiskBurn::default();
        let (mut at, mut i) = (0u64, 0u64);
        let step = 30_000_000_000;
        let (mut stall_at, mut bytes) = (None, 0);
        while at < 20_000_000_000_000 / 40 {
            let base = if at < step { 180.0 } else { 18.0 };
            let mut v = base * (1.0 + 0.06 * ((i * 7 % 13) as f64 / 13.0 - 0.5));
            if stall_at.is_none() && at >= 200_000_000_000 {
                (v, stall_at) = (0.5, Some(at));
            }
            let len = (v * 1e6 * 0.25) as u64;
            b.add_point(SurfacePoint {
                pass: 1,
                phase: Phase::Write,
                offset: at,
                mb_per_s: v,
                bytes: len,
            });
            (at, i, bytes) = (at + len, i + 1, bytes + len);
        }
        assert!(i > 20 * SURFACE_KEEP as u64, "{i} points timed");
        assert!(b.surface.len() <= SURFACE_KEEP, "{} kept", b.surface.len());
        assert_eq!(b.surface.iter().map(|p| p.bytes).sum::<u64>(), bytes, "every byte kept");
        // Offsets stay in order, each point where the one before ends.
        for w in b.surface.windows(2) {
            assert_eq!(w[0].offset + w[0].bytes, w[1].offset);
        }
        // The step is kept where it was, the stall as its own point.
        let points: Vec<_> = b.surface.iter().map(|p| (p.offset, p.bytes, p.mb_per_s)).collect();
        let c = crate::judge::smr::collapse(1, &points).unwrap();
        assert!((c.after_bytes as f64 - step as f64).abs() < 0.01 * step as f64, "{c:?}");
        assert!(
            (170.0..190.0).contains(&c.fast_mb_per_s) && (17.0..19.0).contains(&c.slow_mb_per_s),
            "{c:?}"
        );
        assert!(b.surface.iter().any(|p| p.offset == stall_at.unwrap() && p.mb_per_s < 1.0));
        // Another phase's points are not merged into these.
        b.add_point(SurfacePoint {
            pass: 1,
            phase: Phase::Verify,
            offset: 0,
            mb_per_s: 150.0,
            bytes: 1,
        });
        assert_eq!(b.surface.last().unwrap().phase, Phase::Verify);
    }
}

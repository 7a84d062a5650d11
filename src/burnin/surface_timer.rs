//! The surface of a burn-in's phase, timed in stretches: each closed by
//! time or by bytes, so a step in speed after a burst of any size shows,
//! and a days-long pass keeps a bounded surface.
//!
//! It must not read or write a disk (`worker` hands it each request as it
//! lands) and must not judge.

use std::time::Instant;

use super::record::{DiskBurn, Phase, SurfacePoint};

/// Passes whose surface is kept (a soak run for days has hundreds).
const SURFACE_PASSES: u16 = 8;

/// A stretch of the surface closes once it has been timed this long and
/// holds [`STRETCH_REQUESTS`] requests: a step in speed after a burst of
/// any size shows (a drive-managed SMR disk's media cache filled after
/// 48 MiB of a 256 MiB disk, or after 40 GB of an 8 TB one) ...
const STRETCH_S: f64 = 0.25;
/// ... in at least this many requests (a stretch of one request times
/// whatever burst its completion came in: a real run's soak recorded
/// 6.6 million MB/s, which `report` then refused as damaged) ...
const STRETCH_REQUESTS: u64 = 4;
/// ... or once it holds this many bytes (and the check's
/// `MIN_BUCKET_READS` requests), whichever comes first.
const STRETCH_BYTES: u64 = 256 << 20;

/// Times stretches of a phase, each closed by time or by bytes (above),
/// into the disk's surface, which merges the steady ones
/// (`DiskBurn::add_point`): a days-long pass keeps a bounded surface.
pub(super) struct SurfaceTimer {
    io: u64,
    from: u64,
    bytes: u64,
    began: Instant,
    keep: bool,
    /// No stretch of this phase closed yet.
    first: bool,
}

impl SurfaceTimer {
    pub(super) fn new(io: usize, at: u64, pass: u16) -> Self {
        Self {
            io: io as u64,
            from: at,
            bytes: 0,
            began: Instant::now(),
            keep: pass <= SURFACE_PASSES,
            first: true,
        }
    }

    /// Counts `len` bytes done ending at `end`; a stretch full (or the
    /// range's end) becomes a point.
    pub(super) fn add(
        &mut self,
        out: &mut DiskBurn,
        pass: u16,
        phase: Phase,
        len: u64,
        end: u64,
        last: bool,
    ) {
        self.bytes += len;
        if !self.keep {
            return;
        }
        let s = self.began.elapsed().as_secs_f64();
        let timed = s >= STRETCH_S && self.bytes >= STRETCH_REQUESTS * self.io;
        let full = self.bytes >= STRETCH_BYTES.max(self.io * crate::defaults::MIN_BUCKET_READS);
        if !(timed || full || last) {
            return;
        }
        // The phase's last few requests after a stretch just closed are
        // timed over the instant since (64 memory-backed disks: a last
        // 4 MiB at 27 million MB/s, which `report` refuses as damaged):
        // no point of their own, unless they are the whole phase.
        let few = !timed && !full && self.bytes < STRETCH_REQUESTS * self.io;
        if s > 0.0 && (self.first || !few) {
            out.add_point(SurfacePoint {
                pass,
                phase,
                offset: self.from,
                mb_per_s: crate::units::mb_per_s(self.bytes, s),
                bytes: self.bytes,
            });
        }
        *self = Self { from: end, bytes: 0, began: Instant::now(), first: false, ..*self };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Duration;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_last_few_requests_after_a_stretch_closed_make_no_point_of_their_own() {
        let mut out = DiskBurn::default();
        let mut s = SurfaceTimer::new(MIB as usize, 0, 1);
        // A stretch closed by time, then one last request at once after it:
        // timed over an instant, it would be millions of MB/s.
        s.began = Instant::now() - Duration::from_secs_f64(STRETCH_S * 2.0);
        for k in 1..=STRETCH_REQUESTS {
            s.add(&mut out, 1, Phase::Write, MIB, k * MIB, false);
        }
        assert_eq!(out.surface.len(), 1, "the timed stretch");
        s.add(&mut out, 1, Phase::Write, MIB, (STRETCH_REQUESTS + 1) * MIB, true);
        assert_eq!(out.surface.len(), 1, "{:?}", out.surface);
        assert!(out.surface.iter().all(|p| p.mb_per_s < 1e6));
        // A phase of one request is its own point, however short.
        let mut small = DiskBurn::default();
        let mut one = SurfaceTimer::new(MIB as usize, 0, 1);
        std::thread::sleep(Duration::from_millis(1));
        one.add(&mut small, 1, Phase::Write, MIB, MIB, true);
        assert_eq!(small.surface.len(), 1);
    }
}

//! A burn-in's slowest request against the time its size needs: at the
//! pace of the disk's other requests (its phase's speed but for it), and
//! at least at the speed a healthy disk is taken to move at
//! ([`super::STALL_FLOOR_MB_PER_S`]). Beyond both by `stall_ms`: a stall,
//! a drive retrying a weak sector. Beyond the floor's but within the
//! disk's own pace, on a disk slower than the floor: a stall cannot be
//! told from a disk, path or host this slow everywhere, and is said so,
//! never called one.

use super::{STALL_FLOOR_MB_PER_S, Thresholds, stall_allowance_ms};

/// A disk's slowest write or read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slowest {
    /// How long it had the disk (ms), and its bytes.
    pub ms: f64,
    pub len: u64,
    /// The speed of the disk's other requests in that phase (MB/s), where
    /// timed.
    pub mb_per_s: Option<f64>,
    /// Where, in words ("a read at byte 8388608 in pass 1").
    pub at: String,
}

impl Slowest {
    /// How long it may have the disk at the pace of the disk's other
    /// requests, with no floor (none where that pace is not known).
    fn own_pace_ms(&self, th: &Thresholds) -> f64 {
        let pace = self.mb_per_s.filter(|r| *r > 0.0);
        pace.map_or(0.0, |r| th.stall_ms + self.len as f64 / 1e6 / r * 1e3)
    }

    /// It stalled, in words.
    pub fn stalled(&self, th: &Thresholds) -> Option<String> {
        let allowed = stall_allowance_ms(self.len, self.mb_per_s, th).max(self.own_pace_ms(th));
        (self.ms >= allowed).then(|| {
            format!(
                "{} took {:.0} ms ({allowed:.0} ms or more is a stall for {}: a drive retrying a weak sector does this)",
                self.at,
                self.ms,
                crate::units::human_bytes_binary(self.len)
            )
        })
    }

    /// It would be a stall at the speed a healthy disk is taken to move
    /// at, but not at the disk's own pace (slower than that): whether it
    /// stalled cannot be told, in words.
    pub fn too_slow_to_tell(&self, th: &Thresholds) -> Option<String> {
        let floor = stall_allowance_ms(self.len, self.mb_per_s, th);
        (self.ms >= floor && self.ms < self.own_pace_ms(th)).then(|| {
            format!(
                "{} took {:.0} ms ({floor:.0} ms or more is a stall for {}), but its other requests ran at {:.1} MB/s, under the {STALL_FLOOR_MB_PER_S:.0} MB/s a healthy disk moves: a stall cannot be told from a disk, path or host this slow everywhere; burn it in again on another port or host",
                self.at,
                self.ms,
                crate::units::human_bytes_binary(self.len),
                self.mb_per_s.unwrap_or_default(),
            )
        })
    }
}

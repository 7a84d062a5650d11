//! A slow request against the time its size needs (the burn-in's slowest
//! request, the check's slow reads): at the pace of the disk's other
//! requests (its phase's or pass's speed but for it), and
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

/// How long a request may have a disk before it is a stall: at the pace
/// of the disk's other requests and at least at the floor's speed
/// (`ms`), and at the floor's speed alone (`floor_ms`: the same where the
/// disk is at least that fast).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowance {
    pub floor_ms: f64,
    pub ms: f64,
}

impl Allowance {
    /// For a request of `len` bytes on a disk whose other requests ran at
    /// `pace` MB/s (where known).
    pub fn of(len: u64, pace: Option<f64>, th: &Thresholds) -> Allowance {
        let floor_ms = stall_allowance_ms(len, pace, th);
        let own =
            pace.filter(|r| *r > 0.0).map_or(0.0, |r| th.stall_ms + len as f64 / 1e6 / r * 1e3);
        Allowance { floor_ms, ms: floor_ms.max(own) }
    }

    /// A request that had the disk `ms` stalled.
    pub fn stalled(&self, ms: f64) -> bool {
        ms >= self.ms
    }

    /// A request that had the disk `ms` would be a stall at the floor's
    /// speed but not at the disk's own pace: whether it stalled cannot be
    /// told.
    pub fn untold(&self, ms: f64) -> bool {
        ms >= self.floor_ms && ms < self.ms
    }
}

/// The pace (MB/s) of `bytes` moved in `secs`, but for one request of
/// `len` bytes that had the disk `ms`; None where it was all of them.
pub fn pace_without(bytes: u64, secs: f64, (len, ms): (u64, f64)) -> Option<f64> {
    let (bytes, secs) = (bytes.checked_sub(len)?, secs - ms / 1e3);
    (bytes > 0 && secs > 0.0).then(|| bytes as f64 / 1e6 / secs)
}

/// Why a request that `untold` is not called a stall, in words.
pub fn untold_words(what: &str, pace: Option<f64>) -> String {
    format!(
        "but its other {what} ran at {:.1} MB/s, under the {STALL_FLOOR_MB_PER_S:.0} MB/s a healthy disk moves: a stall cannot be told from a disk, path or host this slow everywhere",
        pace.unwrap_or_default()
    )
}

impl Slowest {
    /// It stalled, in words.
    pub fn stalled(&self, th: &Thresholds) -> Option<String> {
        let allowed = Allowance::of(self.len, self.mb_per_s, th);
        allowed.stalled(self.ms).then(|| {
            format!(
                "{} took {:.0} ms ({:.0} ms or more is a stall for {}: a drive retrying a weak sector does this)",
                self.at,
                self.ms,
                allowed.ms,
                crate::units::human_bytes_binary(self.len)
            )
        })
    }

    /// It would be a stall at the speed a healthy disk is taken to move
    /// at, but not at the disk's own pace (slower than that): whether it
    /// stalled cannot be told, in words.
    pub fn too_slow_to_tell(&self, th: &Thresholds) -> Option<String> {
        let allowed = Allowance::of(self.len, self.mb_per_s, th);
        allowed.untold(self.ms).then(|| {
            format!(
                "{} took {:.0} ms ({:.0} ms or more is a stall for {}), {}; burn it in again on another port or host",
                self.at,
                self.ms,
                allowed.floor_ms,
                crate::units::human_bytes_binary(self.len),
                untold_words("requests", self.mb_per_s)
            )
        })
    }
}

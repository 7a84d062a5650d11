//! How long a burn-in should take, said before it starts: each disk's
//! bytes left to write and to read back over the speeds known before a
//! byte is written, and what those speeds rest on (this run's own passes
//! on a resume, a few seconds of reads now, the model's rated speed).
//!
//! It must not read a disk: the speeds come in.

use serde::{Deserialize, Serialize};

/// What a disk's estimate rests on, the best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The speeds this run's own writes and read-backs kept (a resume).
    ThisRun,
    /// Seconds of reads of the disk before asking; its writes taken as
    /// fast.
    ReadNow,
    /// The model's rated sustained speed, for writes and reads alike.
    Rated,
}

impl Basis {
    /// In a plan's column.
    pub fn word(self) -> &'static str {
        match self {
            Basis::ThisRun => "this run",
            Basis::ReadNow => "read now",
            Basis::Rated => "rated",
        }
    }
}

/// What one disk's estimate knows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Speeds {
    /// This run's write and read-back speeds so far (MB/s).
    pub this_run: (Option<f64>, Option<f64>),
    /// Its read speed measured now.
    pub read_now: Option<f64>,
    /// Its model's rating.
    pub rated: Option<f64>,
}

/// One disk's estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskEstimate {
    pub path: String,
    /// The speeds used (MB/s): writes, reads.
    pub write_mb_per_s: f64,
    pub read_mb_per_s: f64,
    pub basis: Basis,
    /// One pass of its range: written, then read back.
    pub one_pass_s: f64,
    /// What this run has left of it.
    pub left_s: f64,
}

/// The plan's estimate: each disk's, and the disks side by side (as long
/// as the slowest); None where no speed of a disk is known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub disks: Vec<DiskEstimate>,
    /// Paths whose speed is not known (not in `disks`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
    /// All of them side by side: the longest disk's `left_s`.
    pub all_s: f64,
}

/// A usable speed.
fn speed(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

/// One disk's estimate: `range` bytes a pass, (`write_left`, `read_left`)
/// bytes left, writes counted only where `writes` (a soak reads only).
pub fn disk(
    path: &str,
    s: &Speeds,
    range: u64,
    (write_left, read_left): (u64, u64),
    writes: bool,
) -> Option<DiskEstimate> {
    let (w, r) = (speed(s.this_run.0), speed(s.this_run.1));
    let (write, read, basis) = match (w, r, speed(s.read_now), speed(s.rated)) {
        (Some(w), Some(r), ..) => (w, r, Basis::ThisRun),
        (Some(w), None, Some(now), _) => (w, now, Basis::ThisRun),
        (_, _, Some(now), _) => (w.unwrap_or(now), r.unwrap_or(now), Basis::ReadNow),
        (_, _, None, Some(rated)) => (rated, rated, Basis::Rated),
        _ => return None,
    };
    let secs = |bytes: u64, mb: f64| bytes as f64 / (mb * 1e6);
    let one_pass_s = if writes { secs(range, write) } else { 0.0 } + secs(range, read);
    let left_s = if writes { secs(write_left, write) } else { 0.0 } + secs(read_left, read);
    Some(DiskEstimate {
        path: path.to_string(),
        write_mb_per_s: write,
        read_mb_per_s: read,
        basis,
        one_pass_s,
        left_s,
    })
}

/// The disks' estimates together (each None: its speed not known).
pub fn all(disks: Vec<(String, Option<DiskEstimate>)>) -> Estimate {
    let mut out = Estimate { disks: Vec::new(), unknown: Vec::new(), all_s: 0.0 };
    for (path, e) in disks {
        match e {
            Some(e) => {
                out.all_s = out.all_s.max(e.left_s);
                out.disks.push(e);
            }
            None => out.unknown.push(path),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TB20: u64 = 20_000_000_000_000;

    #[test]
    fn a_20_tb_disk_read_at_250_mb_s_takes_44_h_a_pass_written_and_read_back() {
        let s = Speeds { read_now: Some(250.0), ..Speeds::default() };
        let e = disk("/dev/sda", &s, TB20, (2 * TB20, 2 * TB20), true).unwrap();
        assert_eq!(e.basis, Basis::ReadNow);
        assert_eq!((e.one_pass_s / 3600.0).round(), 44.0);
        assert_eq!((e.left_s / 3600.0).round(), 89.0);
        // A soak reads only.
        let soak = disk("/dev/sda", &s, TB20, (0, TB20), false).unwrap();
        assert_eq!((soak.one_pass_s / 3600.0).round(), 22.0);
    }

    #[test]
    fn the_best_known_speeds_are_used_and_said() {
        let range = 1_000_000_000;
        let resumed =
            Speeds { this_run: (Some(100.0), None), read_now: Some(200.0), rated: Some(300.0) };
        let e = disk("/dev/a", &resumed, range, (0, range), true).unwrap();
        assert_eq!((e.basis, e.write_mb_per_s, e.read_mb_per_s), (Basis::ThisRun, 100.0, 200.0));
        assert_eq!(e.left_s, 5.0);
        let rated = Speeds { rated: Some(250.0), ..Speeds::default() };
        assert_eq!(
            disk("/dev/b", &rated, range, (range, range), true).unwrap().basis,
            Basis::Rated
        );
        let none = Speeds { read_now: Some(0.0), ..Speeds::default() };
        assert_eq!(disk("/dev/c", &none, range, (range, range), true), None);
        let a = all(vec![
            ("/dev/a".into(), disk("/dev/a", &resumed, range, (0, range), true)),
            ("/dev/b".into(), disk("/dev/b", &rated, range, (range, range), true)),
            ("/dev/c".into(), None),
        ]);
        assert_eq!((a.all_s, a.unknown.as_slice()), (8.0, ["/dev/c".to_string()].as_slice()));
    }
}

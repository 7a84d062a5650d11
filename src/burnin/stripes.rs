//! A burn-in that fits a deadline (`burnin --deadline`): where one full
//! write-verify of a disk would outlast it, the range is cut into stripes
//! of one size, and the stripes are burned coarse first (the range's first
//! and last, then the middle, then the middle of each half...: every
//! region gets a stripe before any region gets a second), each a normal
//! write-verify of self-identifying blocks. Whatever the deadline allows
//! is spread over the whole range; the checkpoint keeps how many of the
//! order are done, so a resume (or a later run) burns the rest, and a
//! range burned over several runs is burned whole.
//!
//! It must not do I/O (the run burns each stripe through the worker) and
//! must not judge: it says what was tested, in numbers and in words.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::units::human_bytes_binary;

/// The largest stripe: long enough to time a disk's sequential speed
/// over it, short enough to spread a day's deadline over a 20 TB disk.
pub const LARGEST: u64 = 2 << 30;

/// At most this many stripes over a range (the order of them is held in
/// memory while a run goes on: 4 MiB).
pub const MOST_SLOTS: u64 = 1 << 20;

/// At least this many stripes over a range larger than a few of them
/// (fewer would leave whole regions to one stripe).
const FEWEST_SLOTS: u64 = 64;

/// A stripe is sized to take about this share of the deadline, so that
/// the last one ends near it.
const SHARE_OF_DEADLINE: f64 = 1.0 / 50.0;

/// A deadline at least this many times a full pass's estimate is met by
/// burning the range whole, as without one.
pub const WHOLE_WITHIN: f64 = 1.0 / 0.8;

/// A range burned in stripes, and how far the burning has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stripes {
    /// Bytes a stripe (a multiple of the run's request size; the range's
    /// last may be shorter).
    pub size: u64,
    /// How many stripes cover the range.
    pub slots: u64,
    /// How many stripes of [`order`] are written and verified in every
    /// pass.
    pub done: u64,
    /// How many runs burned stripes of it (the first, and each resume).
    pub runs: u32,
}

/// The order in which `slots` stripes are burned: the first and the last,
/// then the middle of each gap left, the widest gaps first. Any prefix of
/// it is spread over the whole range; all of it is every stripe once.
pub fn order(slots: u64) -> Vec<u64> {
    let slots = slots.min(MOST_SLOTS);
    let mut out = Vec::with_capacity(slots as usize);
    if slots == 0 {
        return out;
    }
    out.push(0);
    if slots > 1 {
        out.push(slots - 1);
    }
    let mut gaps = VecDeque::from([(0, slots - 1)]);
    while let Some((a, b)) = gaps.pop_front() {
        if b - a < 2 {
            continue;
        }
        let mid = a + (b - a) / 2;
        out.push(mid);
        gaps.push_back((a, mid));
        gaps.push_back((mid, b));
    }
    out
}

impl Stripes {
    /// The stripes a deadline of `deadline` asks of a range of `range`
    /// bytes, burned in requests of `align` bytes, where every pass of a
    /// byte (written and read back) takes `secs_per_byte` (None: not
    /// known): each about a fiftieth of the deadline, at most [`LARGEST`],
    /// at least `FEWEST_SLOTS` over the range and at most
    /// [`MOST_SLOTS`].
    pub fn planned(range: u64, align: u64, secs_per_byte: Option<f64>, deadline: Duration) -> Self {
        let align = align.max(4096);
        let by_time = match secs_per_byte.filter(|s| s.is_finite() && *s > 0.0) {
            Some(s) => (deadline.as_secs_f64() * SHARE_OF_DEADLINE / s) as u64,
            None => range / 1024,
        };
        let size = by_time.min(LARGEST).min(range / FEWEST_SLOTS).max(range.div_ceil(MOST_SLOTS));
        let size = (size / align).max(1) * align;
        Self { size, slots: range.div_ceil(size).max(1), done: 0, runs: 1 }
    }

    /// Stripe `slot`'s bytes over `start..end`.
    pub fn span(&self, (start, end): (u64, u64), slot: u64) -> (u64, u64) {
        let from = start + slot * self.size;
        (from, (from + self.size).min(end))
    }

    /// Whether every stripe is burned: the range is, whole.
    pub fn complete(&self) -> bool {
        self.done >= self.slots
    }

    /// The stripe burned next, where one is left.
    pub fn next(&self, order: &[u64]) -> Option<u64> {
        order.get(self.done as usize).copied()
    }

    /// The stretches burned, in order over the range, touching ones as
    /// one.
    pub fn tested(&self, range: (u64, u64)) -> Vec<(u64, u64)> {
        let mut slots = order(self.slots);
        slots.truncate(self.done as usize);
        slots.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for s in slots {
            let (from, to) = self.span(range, s);
            match out.last_mut() {
                Some(last) if last.1 == from => last.1 = to,
                _ => out.push((from, to)),
            }
        }
        out
    }

    /// Bytes burned.
    pub fn tested_bytes(&self, range: (u64, u64)) -> u64 {
        self.tested(range).iter().map(|(a, b)| b - a).sum()
    }

    /// What was tested, in numbers.
    pub fn coverage(&self, range: (u64, u64)) -> Coverage {
        let tested = self.tested(range);
        let bytes: u64 = tested.iter().map(|(a, b)| b - a).sum();
        let (start, end) = range;
        let mut gap = 0;
        let mut at = start;
        for &(a, b) in &tested {
            gap = gap.max(a - at);
            at = b;
        }
        gap = gap.max(end - at);
        Coverage {
            stripes: self.done.min(self.slots),
            of: self.slots,
            stripe_bytes: self.size,
            tested_bytes: bytes,
            range_bytes: end - start,
            pct: 100.0 * bytes as f64 / (end - start).max(1) as f64,
            widest_gap: gap,
            from: tested.first().map_or(start, |t| t.0),
            to: tested.last().map_or(start, |t| t.1),
            runs: self.runs,
        }
    }
}

/// What a striped burn-in tested of its range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Stripes burned, of how many, of how many bytes each.
    pub stripes: u64,
    pub of: u64,
    pub stripe_bytes: u64,
    /// Bytes burned, of the range's.
    pub tested_bytes: u64,
    pub range_bytes: u64,
    pub pct: f64,
    /// The longest stretch of the range not burned.
    pub widest_gap: u64,
    /// Where the stretches burned begin and end.
    pub from: u64,
    pub to: u64,
    /// Runs that burned stripes.
    pub runs: u32,
}

impl Coverage {
    /// Whether all of the range was burned.
    pub fn whole(&self) -> bool {
        self.stripes >= self.of
    }

    /// In words, of `what` ("the surface", "the range"): "18.2 % of the
    /// surface: 1,820 stripes of 2 GiB, one in every 11 GiB, from its
    /// first 2 GiB to its last; no stretch untested longer than 12 GiB",
    /// never more than was burned.
    pub fn words(&self, what: &str, range: (u64, u64)) -> String {
        let size = human_bytes_binary(self.stripe_bytes);
        let over = match self.runs {
            0 | 1 => String::new(),
            n => format!(", over {n} runs"),
        };
        if self.whole() {
            return format!("all of {what}: {} stripes of {size}{over}", grouped(self.of));
        }
        if self.stripes == 0 {
            return format!("none of {what}: no stripe was burned");
        }
        let every = human_bytes_binary(self.range_bytes / self.stripes);
        let ends = match (self.from == range.0, self.to == range.1) {
            (true, true) => format!("from its first {size} to its last"),
            (true, false) if self.to - range.0 <= self.stripe_bytes => {
                format!("its first {size} only")
            }
            (true, false) => {
                format!("from its first {size} to {}", human_bytes_binary(self.to - range.0))
            }
            _ => format!(
                "from {} to {}",
                human_bytes_binary(self.from - range.0),
                human_bytes_binary(self.to - range.0)
            ),
        };
        format!(
            "{} of {what}: {} stripe(s) of {size}, one in every {every}, {ends}; no stretch untested longer than {}{over}",
            pct(self.pct),
            grouped(self.stripes),
            human_bytes_binary(self.widest_gap),
        )
    }
}

/// A share in per cent, to a tenth (never 100 % for less than all of it,
/// never 0 % for some).
fn pct(p: f64) -> String {
    let shown = if p < 0.1 {
        "under 0.1".to_string()
    } else if p > 99.9 && p < 100.0 {
        "over 99.9".to_string()
    } else {
        format!("{p:.1}")
    };
    format!("{shown} %")
}

/// `1820` as `1,820`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// When the next stripe may begin: only where, at the pace the stripes of
/// this run have gone (the slower of their mean and the last one's), it
/// ends before the deadline. The first always begins.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub deadline: Instant,
    /// Seconds a byte took, all stripes of this run, and the last one.
    bytes: u64,
    secs: f64,
    last: Option<f64>,
}

impl Pace {
    pub fn until(deadline: Instant) -> Self {
        Self { deadline, bytes: 0, secs: 0.0, last: None }
    }

    /// A stripe of `bytes` burned in `took`.
    pub fn took(&mut self, bytes: u64, took: Duration) {
        self.bytes += bytes;
        self.secs += took.as_secs_f64();
        self.last = Some(took.as_secs_f64() / bytes.max(1) as f64);
    }

    /// Whether a stripe of `bytes` begun at `now` ends by the deadline.
    pub fn fits(&self, now: Instant, bytes: u64) -> bool {
        let Some(last) = self.last else { return now < self.deadline };
        let mean = self.secs / self.bytes.max(1) as f64;
        let need = Duration::from_secs_f64(mean.max(last) * bytes as f64);
        now + need <= self.deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TB20: u64 = 20_000_000_000_000;
    const GIB: u64 = 1 << 30;

    #[test]
    fn the_order_is_every_stripe_once_and_coarse_first() {
        for slots in [1, 2, 3, 7, 64, 100, 9_314] {
            let o = order(slots);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..slots).collect::<Vec<_>>(), "{slots}");
        }
        let o = order(9);
        assert_eq!(&o[..5], &[0, 8, 4, 2, 6]);
        // Any prefix is spread: cut the range in k equal regions; after
        // the first k + 1 stripes, none of them holds two before another
        // holds none.
        let slots = 1000;
        let o = order(slots);
        for k in [2u64, 4, 8, 16, 32, 64] {
            let mut per = vec![0; k as usize];
            for &s in &o[..(k + 1) as usize] {
                per[(s * k / slots).min(k - 1) as usize] += 1;
            }
            assert!(per.iter().all(|&n| n >= 1), "{k}: {per:?}");
        }
    }

    #[test]
    fn a_20_tb_disk_to_an_8_h_deadline_has_stripes_of_2_gib() {
        // 250 MB/s written and read back: 8 ns a byte, a pass.
        let s = Stripes::planned(TB20, 1 << 20, Some(2.0 / 250e6), Duration::from_secs(8 * 3600));
        assert_eq!((s.size, s.slots), (2 * GIB, TB20.div_ceil(2 * GIB)));
        // A small disk to a short deadline: stripes of a fiftieth of it.
        let small = Stripes::planned(4 * GIB, 1 << 20, Some(2.0 / 20e6), Duration::from_secs(60));
        // (60 s / 50 at 10 MB/s a pass: 12 MB, 11 whole MiB.)
        assert_eq!(small.size, 11 << 20);
        assert_eq!(small.slots, (4 * GIB).div_ceil(11 << 20));
        // Speed unknown: a thousandth of the range, 64 stripes at least.
        let unknown = Stripes::planned(4 * GIB, 1 << 20, None, Duration::from_secs(60));
        assert_eq!(unknown.size, 4 << 20);
        let tiny = Stripes::planned(1 << 20, 1 << 20, None, Duration::from_secs(1));
        assert_eq!((tiny.size, tiny.slots), (1 << 20, 1));
        let huge = Stripes::planned(1 << 50, 1 << 20, Some(1e-12), Duration::from_secs(1));
        assert!(huge.slots <= MOST_SLOTS && huge.size.is_multiple_of(1 << 20));
    }

    /// A replay of a 20 TB disk burned to an 8 h deadline at recorded
    /// speeds: each stripe's write and read-back as the throttled disks of
    /// the device tests took them, scaled, a second's jitter each.
    #[test]
    fn a_20_tb_plan_replayed_to_its_deadline_says_exactly_what_it_tested() {
        let deadline = Duration::from_secs(8 * 3600);
        let mut s = Stripes::planned(TB20, 1 << 20, Some(2.0 / 250e6), deadline);
        let began = Instant::now();
        let mut pace = Pace::until(began + deadline);
        let o = order(s.slots);
        let range = (0, TB20);
        let mut now = began;
        let jitter = [0.9, 1.1, 1.0, 1.2, 0.8];
        while let Some(slot) = s.next(&o) {
            let (a, b) = s.span(range, slot);
            if !pace.fits(now, b - a) {
                break;
            }
            // Written at 250 MB/s and read back at 250: 17.2 s a stripe, 18.2
            // with its jitter: 8 h hold 1,584 of them, the last short stripe
            // (20 TB is not whole GiB) among those left.
            let took = Duration::from_secs_f64(
                2.0 * (b - a) as f64 / 250e6 + jitter[s.done as usize % jitter.len()],
            );
            now += took;
            pace.took(b - a, took);
            s.done += 1;
        }
        let ended = now.duration_since(began).as_secs_f64();
        assert!(ended <= deadline.as_secs_f64(), "{ended}");
        assert!(ended >= 0.97 * deadline.as_secs_f64(), "{ended}");
        let c = s.coverage(range);
        assert_eq!(c.stripes, 1_584);
        let said = c.words("the surface", range);
        assert_eq!(
            said,
            "17.0 % of the surface: 1,584 stripe(s) of 2 GiB, one in every 11.76 GiB, from its first 2 GiB to its last; no stretch untested longer than 18 GiB"
        );
        // Resumed until every stripe is burned: all of it, over two runs.
        s.done = s.slots;
        s.runs = 2;
        assert_eq!(
            s.coverage(range).words("the surface", range),
            "all of the surface: 9,314 stripes of 2 GiB, over 2 runs"
        );
        assert_eq!(s.tested(range), vec![(0, TB20)]);
    }

    #[test]
    fn the_claim_never_rounds_up_to_all_or_down_to_none() {
        let s = Stripes { size: 1 << 20, slots: 1001, done: 1000, runs: 1 };
        let range = (0, 1001 << 20);
        let said = s.coverage(range).words("the range", range);
        assert!(said.starts_with("over 99.9 % of the range: 1,000 stripe(s)"), "{said}");
        let one = Stripes { done: 1, ..s };
        let said = one.coverage(range).words("the range", range);
        assert!(said.starts_with("under 0.1 % of the range: 1 stripe(s) of 1 MiB"), "{said}");
        assert!(said.contains(", its first 1 MiB only;"), "{said}");
        let none = Stripes { done: 0, ..s };
        assert_eq!(
            none.coverage(range).words("the range", range),
            "none of the range: no stripe was burned"
        );
        assert_eq!(grouped(9_314), "9,314");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000_000), "1,000,000");
    }

    #[test]
    fn the_next_stripe_begins_only_where_it_ends_by_the_deadline() {
        let t0 = Instant::now();
        let mut p = Pace::until(t0 + Duration::from_secs(100));
        assert!(p.fits(t0, 1 << 30), "the first always begins");
        p.took(1000, Duration::from_secs(10));
        assert!(p.fits(t0 + Duration::from_secs(89), 1000));
        assert!(!p.fits(t0 + Duration::from_secs(91), 1000));
        // A stripe slower than the mean: the pace is the slower.
        p.took(1000, Duration::from_secs(30));
        assert!(!p.fits(t0 + Duration::from_secs(71), 1000));
        assert!(p.fits(t0 + Duration::from_secs(69), 1000));
    }
}

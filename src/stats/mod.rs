//! Statistics over measurements: percentiles, latency bins, the median.
//! Pure functions; no I/O, no formatting, and no rule that calls a disk
//! slow (that is `judge`).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency percentiles of one disk in one pass, in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyUs {
    /// Median read latency (µs).
    pub p50: f64,
    /// 99th percentile (µs).
    pub p99: f64,
    /// 99.9th percentile (µs).
    pub p999: f64,
    /// 99.99th percentile (µs).
    pub p9999: f64,
    /// Slowest read (µs).
    pub max: f64,
    /// Mean (µs).
    pub mean: f64,
}

/// Summarises a nanosecond histogram in microseconds (0 when empty).
pub fn latency_us(h: &Histogram<u64>) -> LatencyUs {
    if h.is_empty() {
        return LatencyUs::default();
    }
    let us = |ns: u64| (ns as f64 / 100.0).round() / 10.0;
    LatencyUs {
        p50: us(h.value_at_quantile(0.50)),
        p99: us(h.value_at_quantile(0.99)),
        p999: us(h.value_at_quantile(0.999)),
        p9999: us(h.value_at_quantile(0.9999)),
        max: us(h.max()),
        mean: (h.mean() / 100.0).round() / 10.0,
    }
}

/// The second-slowest latency a nanosecond histogram holds, in
/// microseconds (0 with fewer than two values): with the slowest, it says
/// whether a tail is more than one moment.
pub fn second_slowest_us(h: &Histogram<u64>) -> f64 {
    let n = h.len();
    if n < 2 {
        return 0.0;
    }
    // Half a value below the second-slowest's rank: the quantile's count,
    // rounded either way, lands on it.
    let ns = h.value_at_quantile((n as f64 - 1.5) / n as f64);
    (ns as f64 / 100.0).round() / 10.0
}

/// Reads counted by latency in MHDD's bins (read size as configured).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyBins {
    /// Reads under 3 ms.
    pub under_3ms: u64,
    /// Reads from 3 to under 10 ms.
    pub under_10ms: u64,
    /// Reads from 10 to under 50 ms.
    pub under_50ms: u64,
    /// Reads from 50 to under 150 ms.
    pub under_150ms: u64,
    /// Reads from 150 to under 500 ms.
    pub under_500ms: u64,
    /// Reads of 500 ms or more.
    pub over_500ms: u64,
}

impl LatencyBins {
    /// The counts from the fastest bin to the slowest.
    pub fn counts(&self) -> [u64; 6] {
        [
            self.under_3ms,
            self.under_10ms,
            self.under_50ms,
            self.under_150ms,
            self.under_500ms,
            self.over_500ms,
        ]
    }
}

/// Counts a nanosecond histogram into [`LatencyBins`].
pub fn latency_bins(h: &Histogram<u64>) -> LatencyBins {
    const MS: u64 = 1_000_000;
    let edges = [0, 3 * MS, 10 * MS, 50 * MS, 150 * MS, 500 * MS, u64::MAX];
    let mut n = [0u64; 6];
    for v in h.iter_recorded() {
        let i = edges.windows(2).position(|w| v.value_iterated_to() < w[1]).unwrap_or(5);
        n[i] += v.count_at_value();
    }
    LatencyBins {
        under_3ms: n[0],
        under_10ms: n[1],
        under_50ms: n[2],
        under_150ms: n[3],
        under_500ms: n[4],
        over_500ms: n[5],
    }
}

/// The finite values in ascending order; None when there are none.
fn sorted_finite(values: &[f64]) -> Option<Vec<f64>> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then_some(v)
}

/// The median of the values (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let v = sorted_finite(values)?;
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// The `q` quantile (0 to 1) of the values, the nearest rank below.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let v = sorted_finite(values)?;
    let i = ((v.len() - 1) as f64 * q.clamp(0.0, 1.0)).floor() as usize;
    Some(v[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        assert_eq!(quantile(&[], 0.75), None);
        assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0, 5.0], 0.75), Some(4.0));
        assert_eq!(quantile(&[2.0, 1.0], 0.75), Some(1.0));
        assert_eq!(quantile(&[2.0, 1.0], 1.0), Some(2.0));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn bins_count_every_read_once() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for ms in [1u64, 2, 5, 40, 49, 120, 300, 499, 500, 2500] {
            h.record(ms * 1_000_000).unwrap();
        }
        assert_eq!(latency_bins(&h).counts(), [2, 1, 2, 1, 2, 2]);
    }

    #[test]
    fn latency_in_microseconds() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for ns in [1_000_000u64, 2_000_000, 3_000_000] {
            h.record(ns).unwrap();
        }
        let l = latency_us(&h);
        assert!((l.p50 - 2000.0).abs() < 2.0, "{l:?}");
        assert!((l.max - 3000.0).abs() < 3.0, "{l:?}");
    }

    #[test]
    fn the_second_slowest_is_the_next_value_down_from_the_slowest() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        assert_eq!(second_slowest_us(&h), 0.0);
        h.record(773_000_000).unwrap();
        assert_eq!(second_slowest_us(&h), 0.0, "one value has no second");
        for _ in 0..30_000 {
            h.record(5_000_000).unwrap();
        }
        assert!((second_slowest_us(&h) - 5000.0).abs() < 5.0, "{}", second_slowest_us(&h));
        h.record(700_000_000).unwrap();
        assert!((second_slowest_us(&h) - 700_000.0).abs() < 700.0, "{}", second_slowest_us(&h));
        // Any count: two to a thousand values, the second-slowest each time.
        for n in 2..1000u64 {
            let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
            for i in 1..=n {
                h.record(i * 1_000_000).unwrap();
            }
            let want = (n - 1) as f64 * 1000.0;
            let got = second_slowest_us(&h);
            assert!((got - want).abs() <= want / 500.0, "{n} values: {got} for {want}");
        }
    }
}

//! Statistics over measurements: pure functions, no I/O, no formatting.

pub mod verdict;

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
        max: us(h.max()),
        mean: (h.mean() / 100.0).round() / 10.0,
    }
}

/// The median of the values (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
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
}

//! What the worker's per-read accounting costs, outside the timed interval:
//! two clock reads, one histogram record, one surface bucket, the slow-read
//! check, one relaxed atomic store. Compare
//! with a read's duration (a 4 MiB O_DIRECT read takes ≥ 0.6 ms even from
//! memory-backed loop devices). Run: `cargo bench --bench accounting`.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arrayburn::measure::Surface;

use hdrhistogram::Histogram;

const N: u64 = 10_000_000;

fn per_op(label: &str, f: impl Fn(u64)) {
    let t = Instant::now();
    for i in 0..N {
        f(black_box(i));
    }
    println!("{label:<40} {:6.1} ns/op", t.elapsed().as_nanos() as f64 / N as f64);
}

fn main() {
    let hist = std::cell::RefCell::new(
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap(),
    );
    let counter = AtomicU64::new(0);
    per_op("Instant::now() pair (timing one read)", |_| {
        let a = Instant::now();
        black_box(a.elapsed());
    });
    per_op("histogram saturating_record (ns value)", |i| {
        hist.borrow_mut().saturating_record(500_000 + (i % 4096) * 97)
    });
    per_op("progress: relaxed atomic store", |i| counter.store(i, Ordering::Relaxed));
    let surface = std::cell::RefCell::new(Surface::new(100, 1 << 40));
    per_op("surface: bucket add (100 buckets)", |i| {
        surface.borrow_mut().add((i * 4_194_304) % (1 << 40), 4_194_304, Duration::from_micros(600))
    });
    let slow = Duration::from_millis(500);
    per_op("all of it (one read's accounting)", |i| {
        let a = Instant::now();
        let took = a.elapsed() + Duration::from_nanos(500_000 + i % 4096);
        hist.borrow_mut().saturating_record(took.as_nanos() as u64);
        surface.borrow_mut().add((i * 4_194_304) % (1 << 40), 4_194_304, took);
        black_box(took >= slow);
        counter.store(i, Ordering::Relaxed);
    });
}

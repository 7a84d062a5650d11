//! The burn-in's pattern at full speed, one core: generating blocks (what
//! every write costs) and verifying them (what every read-back costs), in
//! GB/s over 4 MiB buffers. Targets: 3 GB/s each, so that even an NVMe
//! disk is not held back by the CPU. Run: `cargo bench --bench pattern`.

use std::hint::black_box;
use std::time::Instant;

use arrayburn::burnin::block::{Stamp, check_all, fill};

const BUF: usize = 4 << 20;
const ROUNDS: u64 = 512;

fn main() {
    let stamp = Stamp { run: 0x5eed, pass: 1, disk: 0xd15c };
    let mut buf = vec![0u8; BUF];
    let gbps = |t: Instant| (ROUNDS * BUF as u64) as f64 / t.elapsed().as_secs_f64() / 1e9;
    let t = Instant::now();
    for i in 0..ROUNDS {
        fill(black_box(&mut buf), i * BUF as u64, stamp);
    }
    println!("generate (header, xorshift payload, CRC32C)  {:5.2} GB/s", gbps(t));
    let t = Instant::now();
    let mut bad = 0;
    for _ in 0..ROUNDS {
        bad += check_all(black_box(&buf), (ROUNDS - 1) * BUF as u64, stamp).len();
    }
    println!("verify (CRC32C, header)                      {:5.2} GB/s", gbps(t));
    assert_eq!(bad, 0, "the last buffer verifies");
}

//! The burn-in's pattern at full speed, one core: generating blocks (what
//! every write costs) and verifying them (what every read-back costs), in
//! GB/s over 4 MiB buffers, for the format a burn-in writes and for the
//! version 1 an older arrayburn wrote (still written by the runs it began).
//! Targets (issue 46): 10 GB/s generating, 25 GB/s verifying, so that one
//! Gen5 NVMe drive (13-14 GB/s) needs under two cores. Run: `cargo bench
//! --bench pattern`.

use std::hint::black_box;
use std::time::Instant;

use arrayburn::burnin::block::{Stamp, VERSION, VERSION_1, Writer, check_all};

const BUF: usize = 4 << 20;
const ROUNDS: u64 = 1024;

fn main() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpu.lines().find_map(|l| l.strip_prefix("model name")).unwrap_or(": ?");
    println!("CPU{model}, one core, {} MiB buffers", BUF >> 20);
    for version in [VERSION, VERSION_1] {
        let stamp = Stamp { run: 0x5eed, pass: 1, disk: 0xd15c, version };
        let mut buf = vec![0u8; BUF];
        let gbps = |t: Instant| (ROUNDS * BUF as u64) as f64 / t.elapsed().as_secs_f64() / 1e9;
        // What a pass makes once (the table, the CRC's parts), then fills.
        let t = Instant::now();
        let writer = Writer::new(stamp);
        let setup = t.elapsed();
        for i in 0..ROUNDS {
            writer.fill(black_box(&mut buf), i * BUF as u64);
        }
        println!(
            "version {version}: generate (header, payload, CRC32C)  {:5.2} GB/s (made once per pass: {:.0} us)",
            gbps(t),
            setup.as_secs_f64() * 1e6
        );
        let t = Instant::now();
        let mut bad = 0;
        for _ in 0..ROUNDS {
            bad += check_all(black_box(&buf), (ROUNDS - 1) * BUF as u64, stamp).len();
        }
        println!("version {version}: verify (CRC32C, header)             {:5.2} GB/s", gbps(t));
        assert_eq!(bad, 0, "the last buffer verifies");
    }
}

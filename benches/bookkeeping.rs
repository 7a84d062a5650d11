//! Does the per-read bookkeeping (latency histogram, MHDD bins, surface
//! buckets, slow-read log, window marks, progress), and the psync
//! engine's I/O thread (which lets a hung disk's read be left behind),
//! cost throughput? The real worker (`measure::run_pass`, one whole-disk
//! serial pass through the psync engine) against a bare `pread` loop into
//! the same kind of aligned buffer, on the same memory-backed loop device
//! (the fastest device here, so where per-read overhead would show most),
//! alternating which runs first.
//!
//! Run as root: `cargo bench --bench bookkeeping [-- ROUNDS SIZE_MIB]`.
//! It makes one loop device over a file in /dev/shm and removes both.

use std::time::{Duration, Instant};

use arrayburn::device::buffer::{AlignedBuf, Chunks};
use arrayburn::io::{Bounds, EngineKind, Probe, Sweep, open_direct, open_sweep};
use arrayburn::measure::{
    DiskProgress, DiskRun, Geometry, Observer, PassKind, PassSpec, ReadError, Window, run_pass,
};
use arrayburn::stop::StopFlag;
use arrayburn::testbed::{LoopDisk, fill_file};

struct Silent;
impl Observer for Silent {
    fn group_started(&mut self, _: PassKind, _: &[usize]) {}
    fn progress(&mut self, _: PassKind, _: &[DiskProgress]) {}
    fn read_error(&mut self, _: usize, _: &ReadError) {}
    fn group_finished(&mut self, _: PassKind, _: &[usize], _: &[DiskRun]) {}
}

/// MB/s of a bare pread loop over the whole device.
fn plain(dev: &str, size: u64, block: u64) -> f64 {
    use std::os::unix::fs::FileExt;
    let file = open_direct(dev.as_ref()).unwrap();
    let mut buf = AlignedBuf::new(block as usize);
    let t = Instant::now();
    let mut bytes = 0;
    for chunk in Chunks::new(size, 512, block) {
        let b = buf.slice_mut(chunk.len());
        file.read_exact_at(b, chunk.offset()).unwrap();
        bytes += chunk.len() as u64;
    }
    bytes as f64 / 1e6 / t.elapsed().as_secs_f64()
}

/// MB/s of the real worker reading the whole device.
fn worker(dev: &str, size: u64, block: u64) -> f64 {
    let spec = PassSpec {
        kind: PassKind::Serial,
        window: Window::Full,
        sample: Duration::from_secs(60),
        max_errors: 100,
        slow_read: Duration::from_millis(500),
        stall: Duration::from_millis(2000),
        block,
        readers: 1,
        spots: 1,
        slices: 1,
    };
    let geometry = [Geometry { size, logical_block: 512, buckets: 100 }];
    let stop = StopFlag::default();
    let bounds = Bounds::new(&stop, Duration::from_secs(120));
    let sweeps = |_: usize| -> std::io::Result<(Sweep, Probe)> {
        let file = open_direct(dev.as_ref())?;
        open_sweep(EngineKind::Psync, &file, 1, &bounds)
    };
    let pass = run_pass(spec, &geometry, &sweeps, &stop, &mut Silent).unwrap();
    let run = &pass.disks[0].1;
    assert_eq!(run.bytes, size);
    run.bytes as f64 / 1e6 / run.elapsed.as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(9);
    let size: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1024) << 20;
    if !nix::unistd::geteuid().is_root() {
        eprintln!("bookkeeping bench: needs root (it makes a loop device); skipped");
        return;
    }
    let file =
        std::path::PathBuf::from(format!("/dev/shm/arrayburn-bench-{}.img", std::process::id()));
    fill_file(&file, size, 7, &StopFlag::default()).unwrap();
    let disk = LoopDisk::attach(file, &[]).unwrap();
    println!(
        "{} of {} MiB memory-backed, {rounds} rounds, alternating order",
        disk.dev,
        size >> 20
    );
    println!("block   plain MB/s   worker MB/s   worker/plain (min-max)");
    for block in [4u64 << 20, 1 << 20, 64 << 10] {
        let (mut p, mut w, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let (a, b) = if round % 2 == 0 {
                let a = plain(&disk.dev, size, block);
                (a, worker(&disk.dev, size, block))
            } else {
                let b = worker(&disk.dev, size, block);
                (plain(&disk.dev, size, block), b)
            };
            p.push(a);
            w.push(b);
            ratio.push(b / a);
        }
        let (lo, hi) = ratio.iter().fold((f64::MAX, 0.0f64), |(l, h), r| (l.min(*r), h.max(*r)));
        println!(
            "{:>5}   {:>10.0}   {:>11.0}   {:.3} ({lo:.3}-{hi:.3})",
            format!("{}k", block >> 10),
            median(p),
            median(w),
            median(ratio)
        );
    }
}

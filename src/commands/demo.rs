//! `arrayburn demo`: a first run without spare disks. It builds a small
//! array the tool owns (memory-backed loop devices, all read at a drive-like
//! speed through a blkio throttle, one held slower), runs the normal check
//! on it, and removes everything it created on every exit path.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

use crate::cli::{CheckArgs, DemoArgs};
use crate::judge::Verdict;
use crate::outcome::Outcome;
use crate::report::Report;
use crate::stop::StopFlag;
use crate::testbed::{self, LoopArray, Throttle};
use crate::units::human_bytes_binary;

/// What a healthy demo disk reads at (a typical 7200 rpm drive's outer zone).
const HEALTHY_BPS: u64 = 150_000_000;
/// The slow disk: two thirds of its peers, well past the 92 % threshold.
const SLOW_BPS: u64 = 100_000_000;
/// Smallest disk worth timing.
const MIN_SIZE: u64 = 64 << 20;
const SHM: &str = "/dev/shm";
/// The demo check's read size.
const DEMO_BLOCK: u64 = 1 << 20;

/// Runs the demo.
pub fn run(args: &DemoArgs, argv: Vec<String>, stop: &StopFlag) -> Result<Outcome> {
    let size = preflight(args)?;
    let throttled = !args.no_throttle && testbed::blkio_available();
    announce(args, size, throttled);
    let hold = stop.hold();
    let outcome = build_and_check(args, size, throttled, argv, stop);
    drop(hold);
    tell!("arrayburn demo: removed its loop devices, their files in {SHM} and its cgroup");
    outcome
}

/// Checks what the demo needs; returns the disk size to use (smaller than
/// asked when /dev/shm is short of space).
fn preflight(args: &DemoArgs) -> Result<u64> {
    if !(3..=32).contains(&args.disks) {
        bail!(
            "--disks {}: the demo needs 3 to 32 disks (a median needs at least three)",
            args.disks
        );
    }
    if args.size < MIN_SIZE {
        bail!("--size {}: the demo needs disks of at least 64m to time them", args.size);
    }
    if !nix::unistd::Uid::effective().is_root() {
        bail!(
            "arrayburn demo needs root: it creates loop devices and a cgroup; run it as root (sudo arrayburn demo)"
        );
    }
    if !Path::new("/dev/loop-control").exists() {
        bail!(
            "no loop device support (/dev/loop-control is missing); load it with `modprobe loop` and run the demo again"
        );
    }
    if Command::new("losetup").arg("--version").output().is_err() {
        bail!(
            "losetup was not found; install util-linux (apt-get install util-linux) and run the demo again"
        );
    }
    fit_in_shm(args.disks, args.size - args.size % (1 << 20))
}

fn fit_in_shm(disks: usize, size: u64) -> Result<u64> {
    let Ok(free) = testbed::free_bytes(Path::new(SHM)) else {
        bail!(
            "{SHM} is not available; mount a tmpfs there (mount -t tmpfs tmpfs {SHM}) and run the demo again"
        );
    };
    let available = crate::device::sysfs::meminfo_bytes("MemAvailable").unwrap_or(free);
    let fitted = fit(disks, size, free, available)?;
    if fitted < size {
        tell!(
            "arrayburn demo: {} disks of {} would take too much memory ({} free in {SHM}, {} available): \
             using disks of {} each, at most a quarter of what is available",
            disks,
            human_bytes_binary(size),
            human_bytes_binary(free),
            human_bytes_binary(available),
            human_bytes_binary(fitted)
        );
    }
    Ok(fitted)
}

/// The disk size that keeps the demo's array within 80 % of the free space
/// in /dev/shm and a quarter of the memory available (the disks live in
/// RAM): `size` when it fits, smaller (whole MiB) when not; an error when
/// even 64 MiB disks do not fit.
fn fit(disks: usize, size: u64, shm_free: u64, mem_available: u64) -> Result<u64> {
    let budget = (shm_free / 10 * 8).min(mem_available / 4);
    if disks as u64 * size <= budget {
        return Ok(size);
    }
    let fitted = (budget / disks as u64) & !((1 << 20) - 1);
    if fitted < MIN_SIZE {
        bail!(
            "not enough memory for the demo: {} free in {SHM} and {} available, the demo needs {} disks of at least 64 MiB; free some memory or pass --disks 3",
            human_bytes_binary(shm_free),
            human_bytes_binary(mem_available),
            disks
        );
    }
    Ok(fitted)
}

fn announce(args: &DemoArgs, size: u64, throttled: bool) {
    let disks = args.disks;
    tell!(
        "arrayburn demo: building a throwaway array of {disks} memory-backed loop devices, {} each ({} of memory, in {SHM}).",
        human_bytes_binary(size),
        human_bytes_binary(size * disks as u64)
    );
    if throttled {
        tell!(
            "arrayburn demo: a cgroup-v1 blkio group (arrayburn-demo-{}) reads them at a drive-like {} MB/s, one of them at {} MB/s: the slow disk the check should find.",
            std::process::id(),
            HEALTHY_BPS / 1_000_000,
            SLOW_BPS / 1_000_000
        );
    } else {
        let why = if args.no_throttle {
            "--no-throttle: running without a slow disk".to_string()
        } else {
            format!(
                "no cgroup-v1 blkio controller at {}, so no disk can be made slow: running without a slow disk \
                 (on a cgroup-v1 system the demo also shows one being found)",
                testbed::BLKIO_ROOT
            )
        };
        tell!(
            "arrayburn demo: {why}. The disks then read at memory speed, so the parallel pass is likely to show \
             the CPU as the shared bottleneck."
        );
    }
    tell!(
        "arrayburn demo: nothing else is touched, and all of it is removed when the demo ends (also on Ctrl-C)."
    );
}

fn build_and_check(
    args: &DemoArgs,
    size: u64,
    throttled: bool,
    argv: Vec<String>,
    stop: &StopFlag,
) -> Result<Outcome> {
    let mut array = LoopArray::default();
    if let Err(e) = array.create(Path::new(SHM), args.disks, size, stop) {
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(Outcome::Interrupted);
        }
        bail!("could not build the demo array: {e}");
    }
    let slow = args.disks / 2;
    // Declared after the array, so dropped before it: the process leaves the
    // cgroup and the cgroup goes before the loop devices are detached.
    let limits = if throttled { throttle(&array, slow) } else { None };
    let devices: Vec<String> = array.disks.iter().map(|d| d.dev.clone()).collect();
    tell!("arrayburn demo: disks {}", devices.join(" "));
    if limits.is_some() {
        tell!("arrayburn demo: the slow one is {} ({} MB/s)", devices[slow], SLOW_BPS / 1_000_000);
    }
    // 1 MiB reads: the small disks' surface profiles get buckets of 32
    // reads each (4 MiB ones would leave two per disk).
    let mut check = CheckArgs {
        sample: args.sample,
        output: args.output.clone(),
        ..CheckArgs::for_devices(devices)
    };
    check.io.block = DEMO_BLOCK;
    let (outcome, report) = super::check::execute(&check, argv, stop)?;
    if limits.is_some() && outcome != Outcome::Interrupted {
        explain(&report, &array.disks[slow].dev);
    }
    Ok(outcome)
}

/// Says whether the check found the disk the demo made slow, and nothing
/// else.
fn explain(report: &Report, slow: &str) {
    let flagged: Vec<&str> = report
        .summary
        .flagged
        .iter()
        .filter(|f| f.verdict == Verdict::Slow)
        .map(|f| f.path.as_str())
        .collect();
    let others: Vec<&str> = flagged.iter().copied().filter(|p| *p != slow).collect();
    if flagged.contains(&slow) && others.is_empty() {
        tell!(
            "arrayburn demo: found it: {slow}, held to {} MB/s while its peers read at {} MB/s, is the one disk marked SLOW \
             (exit status 1, as a check that finds a slow disk exits)",
            SLOW_BPS / 1_000_000,
            HEALTHY_BPS / 1_000_000
        );
    } else {
        tell!(
            "arrayburn demo: expected exactly {slow} to be marked SLOW, but the check marked: {flagged:?}"
        );
    }
}

/// Puts this process in a new blkio group that limits every disk, the slow
/// one more. On failure the demo goes on without it, saying so.
fn throttle(array: &LoopArray, slow: usize) -> Option<Throttle> {
    let name = format!("arrayburn-demo-{}", std::process::id());
    let setup = || -> std::io::Result<Throttle> {
        let t = Throttle::create(&name)?;
        for (i, d) in array.disks.iter().enumerate() {
            t.limit(&d.devno()?, if i == slow { SLOW_BPS } else { HEALTHY_BPS })?;
        }
        t.enter()?;
        Ok(t)
    };
    setup()
        .inspect_err(|e| {
            tell!(
                "arrayburn demo: could not set up the throttle ({e}): running without a slow disk"
            )
        })
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_demo_takes_at_most_a_quarter_of_available_memory() {
        // 1 TiB asked for on a 23 GiB host with 11.7 GiB in /dev/shm.
        let size = fit(6, 1 << 40, 11 * GIB + (700 << 20), 22 * GIB).unwrap();
        assert!(6 * size <= 22 * GIB / 4, "{size}");
        assert!(size >= 900 << 20, "not needlessly small: {size}");
        assert_eq!(size % (1 << 20), 0);
        // What fits is kept as asked.
        assert_eq!(fit(6, 256 << 20, 11 * GIB, 22 * GIB).unwrap(), 256 << 20);
        // /dev/shm smaller than a quarter of the memory: it decides.
        assert!(6 * fit(6, GIB, GIB, 22 * GIB).unwrap() <= GIB / 10 * 8);
        let e = fit(32, GIB, GIB, GIB).unwrap_err().to_string();
        assert!(e.contains("not enough memory for the demo"), "{e}");
    }
}

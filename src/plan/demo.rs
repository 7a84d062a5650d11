//! The demo's plan (`arrayburn demo`): every refusal before anything is
//! built (disks, size, root, loop devices, losetup), the size of its disks
//! fitted to the memory there is, and the plan said before it runs.
//!
//! It must not create a device or a cgroup (`testbed` does, for the demo
//! command).

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

use crate::cli::DemoArgs;
use crate::testbed;
use crate::units::human_bytes_binary;

/// What a healthy demo disk reads at (a typical 7200 rpm drive's outer zone).
pub const HEALTHY_BPS: u64 = 150_000_000;
/// The slow disk: two thirds of its peers, well past the 92 % threshold.
pub const SLOW_BPS: u64 = 100_000_000;
/// Smallest disk worth timing.
const MIN_SIZE: u64 = 64 << 20;
/// Where the demo's disks' files live (memory).
pub const SHM: &str = "/dev/shm";
/// The demo check's read size: the small disks' surface profiles get
/// buckets of 32 reads each (4 MiB ones would leave two per disk).
const DEMO_BLOCK: u64 = 1 << 20;

/// A demo ready to build its array.
pub struct DemoPlan {
    /// Its disks, and each one's size (fitted to the memory there is).
    pub disks: usize,
    pub size: u64,
    /// One disk is held slower through a blkio group (where there is one,
    /// and `--no-throttle` is not given); the index of that disk.
    pub throttled: bool,
    pub slow: usize,
    sample: std::time::Duration,
    output: crate::cli::OutputArgs,
}

impl DemoPlan {
    /// Every refusal before anything is built, the size fitted, and the
    /// plan said.
    pub fn resolve(args: &DemoArgs) -> Result<DemoPlan> {
        let size = preflight(args)?;
        let throttled = !args.no_throttle && testbed::blkio_available();
        announce(args, size, throttled);
        let (sample, output) = (args.sample, args.output.clone());
        Ok(DemoPlan { disks: args.disks, size, throttled, slow: args.disks / 2, sample, output })
    }

    /// The check the demo runs on its `devices`.
    pub fn check(&self, devices: Vec<String>) -> crate::cli::CheckArgs {
        let mut check = crate::cli::CheckArgs {
            sample: self.sample,
            output: self.output.clone(),
            ..crate::cli::CheckArgs::for_devices(devices)
        };
        check.io.block = DEMO_BLOCK;
        check
    }
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
    // Refused before a loop device is made, as its check would refuse it.
    super::check_sample(args.sample).map_err(anyhow::Error::msg)?;
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

/// Says what the demo builds and does, before it does.
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

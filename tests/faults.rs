//! A disk with bad sectors (a loop device over the `faultdisk` FUSE file):
//! the error is recorded with its offset, the disk is marked "error", and
//! the other disks finish undisturbed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::util::*;

const MIB: u64 = 1 << 20;

/// Builds the helper (needs gcc and libfuse3-dev) where it is not built
/// from this source yet; tests in other processes may build it at the
/// same moment, so each builds its own and renames it into place.
fn helper() -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("faultdisk");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/helpers/faultdisk.c");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&out).is_some_and(|built| Some(built) >= modified(&src)) {
        return out;
    }
    let flags =
        Command::new("pkg-config").args(["--cflags", "--libs", "fuse3"]).output_within(MINUTE);
    assert!(
        flags.status.success(),
        "libfuse3-dev is missing: apt-get install -y libfuse3-dev fuse3 (the README's test command does)"
    );
    let flags = String::from_utf8_lossy(&flags.stdout).to_string();
    let mine = out.with_extension(std::process::id().to_string());
    let mut gcc = Command::new("gcc");
    gcc.args(["-O2", "-Wall", "-o"]).arg(&mine).arg(&src).args(flags.split_whitespace());
    let built = gcc.output_within(MINUTE);
    assert!(built.status.success(), "building faultdisk failed: {built:?}");
    std::fs::rename(&mine, &out).unwrap();
    out
}

/// Byte ranges: (start, length).
type Ranges<'a> = &'a [(u64, u64)];

/// A writable in-memory disk's silent faults.
#[derive(Default)]
pub(crate) struct Writable<'a> {
    /// Re-writes dropped here.
    lose: Ranges<'a>,
    /// A bit flipped on each read here.
    flip: Ranges<'a>,
    /// (start, length, target): these bytes are the target's.
    alias: Option<(u64, u64, u64)>,
    /// Every byte read back here has a bit flipped.
    flip_every: Ranges<'a>,
    /// Every write here is dropped (a fresh disk reads zeros).
    drop: Ranges<'a>,
    /// Writes here keep only each 4 KiB block's first sector.
    tear: Ranges<'a>,
    /// A media cache.
    cache: Option<Cache>,
    /// A punched hole (a discard): `"zero"` zeroes it, `"keep"` keeps the
    /// data (a TRIM that does not do what it says).
    trim: Option<&'static str>,
}

/// A drive-managed SMR disk's media cache, as faultdisk paces it
/// (`FAULTDISK_CACHE`): `bytes` taken at `fast` MB/s, then `slow` MB/s,
/// drained at `drain` MB/s while idle; scattered writes land in it too
/// and, once it is full, each waits `band_us` (0: the head's seek);
/// `direct`: sequential writes skip it at `fast` MB/s.
#[derive(Clone, Copy, Default)]
pub(crate) struct Cache {
    pub(crate) bytes: u64,
    pub(crate) fast: u64,
    pub(crate) slow: u64,
    pub(crate) drain: u64,
    pub(crate) band_us: u64,
    pub(crate) direct: bool,
}

/// A mounted faultdisk with a direct-I/O loop device over it (read-only,
/// or writable in memory for the burn-in's tests); detached, unmounted and
/// reaped on drop.
pub(crate) struct FaultyDisk {
    pub(crate) dev: String,
    mnt: tempfile::TempDir,
    daemon: crate::util::Child,
}

impl FaultyDisk {
    pub(crate) fn new(size: u64, bad: &[(u64, u64)]) -> Self {
        Self::with_slow(size, bad, &[])
    }

    /// `slow`: (start, len, delay in µs) ranges.
    fn with_slow(size: u64, bad: &[(u64, u64)], slow: &[(u64, u64, u64)]) -> Self {
        Self::spawn(size, bad, slow, None, None)
    }

    /// A writable disk in memory: writes to `bad` fail (EIO), writes to
    /// `lose` after the first are dropped, reads of `flip` come back with a
    /// bit flipped in each 4 KiB block.
    pub(crate) fn writable(
        size: u64,
        bad: &[(u64, u64)],
        lose: &[(u64, u64)],
        flip: &[(u64, u64)],
    ) -> Self {
        let rw = Writable { lose, flip, ..Writable::default() };
        Self::spawn(size, bad, &[], None, Some(rw))
    }

    /// A writable disk in memory that garbles every byte read back from
    /// `flip_every`, drops every write to `drop` and tears every write to
    /// `tear` (its first 512 bytes of each 4 KiB kept).
    pub(crate) fn garbling(
        size: u64,
        flip_every: &[(u64, u64)],
        drop: &[(u64, u64)],
        tear: &[(u64, u64)],
    ) -> Self {
        let rw = Writable { flip_every, drop, tear, ..Writable::default() };
        Self::spawn(size, &[], &[], None, Some(rw))
    }

    /// A writable disk in memory that takes discards: zeroing them
    /// (`"zero"`) or keeping the data (`"keep"`).
    pub(crate) fn trimming(size: u64, trim: &'static str) -> Self {
        let rw = Writable { trim: Some(trim), ..Writable::default() };
        Self::spawn(size, &[], &[], None, Some(rw))
    }

    /// A writable file in memory whose reads of `slow` ranges (start, len,
    /// µs) wait: a file that answers late (`image()`).
    pub(crate) fn slow_file(size: u64, slow: &[(u64, u64, u64)]) -> Self {
        Self::spawn(size, &[], slow, None, Some(Writable::default()))
    }

    /// A writable spinning disk in memory: a head that takes `seek` µs to
    /// go elsewhere (one request at a time), writes paced by `cache`; the
    /// loop device says it spins.
    pub(crate) fn spinning(size: u64, seek: u64, cache: Cache) -> Self {
        let rw = Writable { cache: Some(cache), ..Writable::default() };
        let d = Self::spawn(size, &[], &[], Some(seek), Some(rw));
        crate::util::spins(&d.dev);
        d
    }

    /// Holds every read of the disk for `d` (the daemon stopped, then
    /// continued: a host too busy to answer for a moment).
    pub(crate) fn hiccup(&self, d: Duration) {
        self.daemon.signal(nix::sys::signal::Signal::SIGSTOP);
        std::thread::sleep(d);
        self.daemon.signal(nix::sys::signal::Signal::SIGCONT);
    }

    /// The FUSE file under the loop device.
    pub(crate) fn image(&self) -> PathBuf {
        self.mnt.path().join("disk.img")
    }

    /// A writable disk in memory whose bytes from `at` on are the bytes from
    /// `to` on (fake capacity wrapping around).
    pub(crate) fn aliased(size: u64, at: u64, to: u64) -> Self {
        let rw = Writable { alias: Some((at, size - at, to)), ..Writable::default() };
        Self::spawn(size, &[], &[], None, Some(rw))
    }

    /// A one-head drive: requests one at a time, each read taking `pace`
    /// µs, and `seek` µs more when it does not continue the previous one.
    pub(crate) fn drive(size: u64, pace: u64, seek: u64) -> Self {
        Self::spawn(size, &[], &[(0, size, pace)], Some(seek), None)
    }

    /// A one-head drive (as [`Self::drive`]) whose reads touching `tail`
    /// (start, len) wait `usec` more: a drive that retries there.
    pub(crate) fn retrying(
        size: u64,
        (pace, seek): (u64, u64),
        tail: &[(u64, u64)],
        usec: u64,
    ) -> Self {
        let mut slow = vec![(0, size, pace)];
        slow.extend(tail.iter().map(|&(at, len)| (at, len, usec)));
        Self::spawn(size, &[], &slow, Some(seek), None)
    }

    fn spawn(
        size: u64,
        bad: &[(u64, u64)],
        slow: &[(u64, u64, u64)],
        seek: Option<u64>,
        rw: Option<Writable>,
    ) -> Self {
        let mnt = tempdir();
        let list = |v: Vec<String>| {
            if v.is_empty() { "-".to_string() } else { v.join(",") }
        };
        let bad = list(bad.iter().map(|(s, l)| format!("{s}:{l}")).collect());
        let slow = list(slow.iter().map(|(s, l, u)| format!("{s}:{l}:{u}")).collect());
        let mut daemon = Command::new(helper());
        daemon.args([
            size.to_string(),
            bad,
            slow,
            mnt.path().to_string_lossy().into(),
            "-f".into(),
        ]);
        if let Some(usec) = seek {
            daemon.arg("-s").env("FAULTDISK_SEEK_USEC", usec.to_string());
        }
        if let Some(rw) = &rw {
            let env = |v: &[(u64, u64)]| list(v.iter().map(|(s, l)| format!("{s}:{l}")).collect());
            daemon
                .env("FAULTDISK_RW", "1")
                .env("FAULTDISK_LOSE", env(rw.lose))
                .env("FAULTDISK_FLIP", env(rw.flip))
                .env("FAULTDISK_FLIP_EVERY", env(rw.flip_every))
                .env("FAULTDISK_DROP", env(rw.drop))
                .env("FAULTDISK_TEAR", env(rw.tear));
            if let Some(t) = rw.trim {
                daemon.env("FAULTDISK_TRIM", t);
            }
            if let Some(c) = rw.cache {
                let Cache { bytes, fast, slow, drain, band_us, direct } = c;
                let direct = u8::from(direct);
                daemon.env(
                    "FAULTDISK_CACHE",
                    format!("{bytes}:{fast}:{slow}:{drain}:{band_us}:{direct}"),
                );
            }
            if let Some((at, len, to)) = rw.alias {
                daemon.env("FAULTDISK_ALIAS", format!("{at}:{len}:{to}"));
            }
        }
        let mut daemon = daemon.start();
        let img = mnt.path().join("disk.img");
        daemon.wait_until("the FUSE file", MINUTE, || img.exists());
        let mut losetup = Command::new("losetup");
        losetup.args(["-f", "--show", "--direct-io=on"]);
        if rw.is_none() {
            losetup.arg("-r");
        }
        let out = losetup.arg(&img).output_within(RUN);
        let mut me = Self { dev: String::new(), mnt, daemon };
        assert!(
            out.status.success(),
            "losetup over FUSE: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        me.dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        me
    }
}

impl FaultyDisk {
    /// Freezes the FUSE daemon (SIGSTOP): every read and write of the disk
    /// then waits without end, as a dead USB bridge's or a drive's in
    /// endless retries do. Thawed (SIGCONT) when the guard goes.
    pub(crate) fn freeze(&self) -> Frozen {
        self.daemon.signal(nix::sys::signal::Signal::SIGSTOP);
        Frozen(self.daemon.pid())
    }

    /// The FUSE daemon's process id (a fake tool that freezes or kills
    /// the disk signals it).
    pub(crate) fn daemon_id(&self) -> u32 {
        self.daemon.id()
    }

    /// Every read from now on fails (EIO): the drive died.
    pub(crate) fn die(&self) {
        self.daemon.signal(nix::sys::signal::Signal::SIGUSR1);
    }
}

/// A frozen FUSE daemon, thawed on drop.
pub(crate) struct Frozen(nix::unistd::Pid);

impl Drop for Frozen {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGCONT);
    }
}

impl Drop for FaultyDisk {
    fn drop(&mut self) {
        // Never left frozen: its disk could not be detached.
        self.daemon.signal(nix::sys::signal::Signal::SIGCONT);
        if !self.dev.is_empty() {
            let _ = Command::new("losetup").args(["-d", &self.dev]).output_within(MINUTE);
            // Detach is deferred while the device is open: wait for it.
            let sys = format!("/sys/block/{}/loop", self.dev.trim_start_matches("/dev/"));
            for _ in 0..100 {
                if !Path::new(&sys).exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // The loop driver lets go of the file a moment after the detach:
        // until then the mount is busy. Retry, then unmount lazily and end
        // the daemon rather than wait for it forever.
        let unmounted = (0..100).any(|_| {
            let ok =
                Command::new("umount").arg(self.mnt.path()).output_within(MINUTE).status.success();
            if !ok {
                std::thread::sleep(Duration::from_millis(50));
            }
            ok
        });
        if !unmounted {
            let _ = Command::new("umount").arg("-l").arg(self.mnt.path()).output_within(MINUTE);
        }
        // The daemon ends with its mount; the `Child` kills it if not.
        wait_for(Duration::from_secs(5), || self.daemon.has_exited());
    }
}

/// Checks `good` and `bad`, all throttled to a drive-like 40 MB/s, with
/// whole-disk reads; returns the result. A 64 MiB disk is then read for
/// 1.7 s, its window (the run less its warm-up) well over the second a
/// disk needs to be compared: at 50 MB/s the throttle's opening burst
/// brought a good disk's window under it once, leaving two disks to
/// compare, the slow one and a good one then called fast.
fn check_with_faulty(good: &[LoopDisk], bad: &FaultyDisk, extra: &[&str]) -> Run {
    let t = Throttle::new();
    for g in good {
        t.limit(g, 40_000_000);
    }
    t.limit_dev(&bad.dev, 40_000_000);
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut args = vec![
        "check",
        "--full",
        "--full-serial",
        "--progress",
        "lines",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut cmd = t.command(&args);
    cmd.args([&good[0].dev, &bad.dev, &good[1].dev]);
    let r = finish(cmd, &json);
    assert_schema(r.json.as_ref().unwrap());
    r
}

/// The (offset, len) of each bad range a row reports.
fn ranges(row: &PassDisk) -> Vec<(u64, u64)> {
    row.errors.iter().map(|e| (e.offset, e.len)).collect()
}

#[test]
fn bad_sectors_are_pinpointed_exactly_and_the_other_disks_finish() {
    need_root!();
    let _l = device_lock();
    // Disks of 48 MiB read whole at 40 MB/s (64 MiB cost 2 s more).
    let size = 48 * MIB;
    // One bad 4 KiB, three bad sectors inside a chunk, and a bad area that
    // crosses the 4 MiB read boundary at 40 MiB (two failed reads, one range).
    let bad_ranges = [(20 * MIB + 4096, 4096), (33 * MIB + 512, 1536), (40 * MIB - 1024, 2048)];
    let bad = FaultyDisk::new(size, &bad_ranges);
    let good = disks(2, size);
    let r = check_with_faulty(&good, &bad, &[]);
    let v = r.report.unwrap();
    assert_eq!(r.code, 1);
    let bad_bytes: u64 = bad_ranges.iter().map(|(_, l)| l).sum();
    for pass in ["serial", "parallel"] {
        let rows = disk_rows(&v, pass);
        assert_eq!(rows[1].verdict, Verdict::Error, "{pass}");
        assert_eq!(ranges(&rows[1]), bad_ranges, "{pass}: every bad sector, exactly");
        assert!(rows[1].errors.iter().all(|e| e.errno == Some(5)), "{pass}: EIO");
        assert_eq!(rows[1].read_errors, 4, "{pass}: failed 4 MiB reads");
        assert_eq!(rows[1].bad_ranges, 3, "{pass}");
        assert_eq!(rows[1].bad_bytes, bad_bytes, "{pass}");
        assert_eq!(rows[1].bytes, size - bad_bytes, "{pass}: everything else was read");
        assert!(rows[1].reached_end, "{pass}");
        assert!(!rows[1].device_gone, "{pass}");
        for i in [0, 2] {
            // Two identical throttled disks still differ by a few percent
            // in time: one may be marked fast against the other, never slow.
            assert!(
                matches!(rows[i].verdict, Verdict::Ok | Verdict::Fast),
                "{pass}: a good disk: {:?}",
                rows[i].reasons
            );
            assert_eq!(rows[i].bytes, size, "{pass}: a good disk read to the end");
            let mbps = rows[i].mb_per_s;
            assert!(
                (34.0..46.0).contains(&mbps),
                "{pass}: a good disk's speed undisturbed: {mbps}"
            );
        }
    }
    let live = format!("read error on {} at byte {} (+4096 bytes)", bad.dev, 20 * MIB + 4096);
    assert!(r.stderr.contains(&live), "{}", r.stderr);
    let said = disk_verdicts(&v);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!((said[0].0.as_str(), said[0].1), (bad.dev.as_str(), Action::Return));
    let sentence = format!(
        "{}: 3 unreadable range(s) (first at byte {}, 20.98 MB), return it",
        bad.dev,
        20 * MIB + 4096
    );
    assert_eq!(said[0].2, sentence);
    assert!(r.stdout.contains(&format!(")\n  {sentence}\nDetails: ")), "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!("unreadable: bytes {}..{}", 33 * MIB + 512, 33 * MIB + 2048)),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("3 unreadable range(s), 7680 bytes, first at byte 20975616"),
        "{}",
        r.stdout
    );
}

#[test]
fn max_errors_stops_only_the_failing_disk() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    let bad_ranges: Vec<(u64, u64)> = (0..6).map(|i| (i * 8 * MIB + 4 * MIB, 512)).collect();
    let bad = FaultyDisk::new(size, &bad_ranges);
    let good = disks(2, size);
    let r = check_with_faulty(&good, &bad, &["--max-errors", "2"]);
    let v = r.report.unwrap();
    assert_eq!(v.options.max_errors, 2);
    for pass in ["serial", "parallel"] {
        let rows = disk_rows(&v, pass);
        assert_eq!(rows[1].read_errors, 2, "{pass}");
        assert_eq!(ranges(&rows[1]), &bad_ranges[..2], "{pass}");
        assert!(!rows[1].reached_end, "{pass}: stopped");
        assert_eq!(rows[1].stopped, Some(Stopped::MaxErrors), "{pass}");
        assert!(rows[1].reasons[0].contains("stopped early at --max-errors"), "{pass}");
        for i in [0, 2] {
            assert_eq!(rows[i].bytes, size, "{pass}: the good disks read to the end");
        }
    }
}

#[test]
fn slow_sectors_are_logged_with_their_offset_and_flag_the_disk() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    // Every read touching 64 KiB at 30 MiB takes an extra 700 ms: a sector
    // the drive retries.
    let bad = FaultyDisk::with_slow(size, &[], &[(30 * MIB, 64 << 10, 700_000)]);
    let good = disks(2, size);
    // 1 MiB reads: 64 per pass, fine enough to compare 1.3 s runs.
    let r = check_with_faulty(&good, &bad, &["--stall-ms", "650", "--block", "1m"]);
    let v = r.report.unwrap();
    assert_eq!(r.code, 1, "{}", v.summary.message);
    for pass in ["serial", "parallel"] {
        let rows = disk_rows(&v, pass);
        let slow = &rows[1];
        assert_eq!(slow.verdict, Verdict::Slow, "{pass}: {:?}", slow.reasons);
        let logged: Vec<u64> = slow.slow_reads.iter().map(|s| s.offset).collect();
        assert_eq!(logged, [30 * MIB], "{pass}: the 1 MiB read holding the slow sector");
        assert!(slow.slow_reads[0].latency_ms >= 650.0, "{pass}");
        assert_eq!(slow.latency_bins.over_500ms, 1, "{pass}");
        assert_eq!(slow.read_errors, 0, "{pass}: slow, not failed");
        let reasons = slow.reasons.join("; ");
        assert!(reasons.contains(&format!("at byte {}", 30 * MIB)), "{pass}: {reasons}");
        // One read held is a stall (past --stall-ms), never a latency tail:
        // one read is a moment.
        assert!(reasons.contains("stall threshold 650 ms"), "{pass}: {reasons}");
        assert!(!reasons.contains("p99.99"), "{pass}: one read is no tail: {reasons}");
        for i in [0, 2] {
            // Two identical throttled disks still differ by a few percent
            // in time: one may be marked fast against the other, never slow.
            assert!(
                matches!(rows[i].verdict, Verdict::Ok | Verdict::Fast),
                "{pass}: a good disk: {:?}",
                rows[i].reasons
            );
            assert_eq!(rows[i].slow_read_count, 0, "{pass}");
        }
    }
    let said = disk_verdicts(&v);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].1, Action::Return, "a stalled read is the disk's: {said:?}");
    assert!(
        said[0].2.starts_with(&format!("{}: 1 slow read(s), a read stalled ", bad.dev)),
        "{said:?}"
    );
    assert!(r.stdout.contains(&format!("1 slow read(s): byte {}", 30 * MIB)), "{}", r.stdout);
}

#[test]
fn a_slow_region_is_reported_where_it_is() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    // Three disks whose every read takes 10 ms more (a steady drive-like
    // pace; the blkio throttle releases reads in bursts, too uneven for
    // 4 MiB buckets); on the middle one reads touching 24..32 MiB take
    // 30 ms more: a patch it reads at a third of its speed, no single read
    // slow enough to log.
    let pace = (0, size, 10_000);
    let disks = [
        FaultyDisk::with_slow(size, &[], &[pace]),
        FaultyDisk::with_slow(size, &[], &[pace, (24 * MIB, 8 * MIB, 30_000)]),
        FaultyDisk::with_slow(size, &[], &[pace]),
    ];
    let dir = tempdir();
    let json = dir.path().join("r.json");
    // 8 buckets of 8 MiB, 32 reads of 256 KiB in each: 0.16 s of the
    // disk's time at its pace (FUSE answers the 2 in flight at once), over
    // the 0.1 s a bucket must be read for to be a speed.
    let mut cmd = arrayburn(&["check", "--full", "--full-serial", "--progress", "none"]);
    cmd.args(["--block", "256k", "--buckets", "8", "--json"]).arg(&json);
    cmd.args(disks.iter().map(|d| &d.dev));
    let r = finish(cmd, &json);
    assert_schema(r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    assert_eq!(r.code, 1, "{}", v.summary.message);
    for pass in ["serial", "parallel"] {
        let rows = disk_rows(&v, pass);
        let regions = &rows[1].slow_regions;
        assert_eq!(regions.len(), 1, "{pass}: {regions:?}");
        let g = &regions[0];
        assert_eq!((g.start_byte, g.end_byte), (24 * MIB, 32 * MIB), "{pass}: {g:?}");
        assert_eq!(g.against, Against::Peers, "{pass}");
        assert!(g.mb_per_s < 0.5 * g.reference_mb_per_s, "{pass}: {g:?}");
        assert_eq!(rows[1].slow_read_count, 0, "{pass}: no read over 500 ms");
        assert_eq!(rows[1].verdict, Verdict::Slow, "{pass}");
        let reasons = rows[1].reasons.join("; ");
        assert!(
            reasons.contains(&format!("slow region from byte {} to {}", 24 * MIB, 32 * MIB)),
            "{pass}: {reasons}"
        );
        for i in [0, 2] {
            assert_eq!(rows[i].slow_regions, [], "{pass}: a good disk");
        }
    }
    let said = disk_verdicts(&v);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].1, Action::Return, "{said:?}");
    assert!(said[0].2.contains("1 slow region(s) (first at 25.17 MB)"), "{said:?}");
    assert!(
        r.stdout.contains(&format!("slow region bytes {}..{}", 24 * MIB, 32 * MIB)),
        "{}",
        r.stdout
    );
}

#[test]
fn the_seek_pass_runs_staggered_readers_and_finds_the_disk_that_seeks_badly() {
    need_root!();
    let _l = device_lock();
    // Large enough that a 2 s sample never wraps around (a wrap is a seek).
    let size = 256 * MIB;
    // Three one-head drives at 2 ms a read; the middle one's seeks take
    // 20 ms instead of 2: equal in sequential reads, far worse when six
    // readers make it seek.
    let disks = [
        FaultyDisk::drive(size, 2_000, 2_000),
        FaultyDisk::drive(size, 2_000, 20_000),
        FaultyDisk::drive(size, 2_000, 2_000),
    ];
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut cmd = arrayburn(&["check", "--seek", "--sample", "2s", "--block", "256k"]);
    cmd.args(["--buckets", "12", "--progress", "none", "--json"]).arg(&json);
    cmd.args(disks.iter().map(|d| &d.dev));
    let r = finish(cmd, &json);
    assert_schema(r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    assert_eq!(v.options.seek_readers, Some(6));
    assert_eq!(flagged(&v, "serial"), Vec::<String>::new(), "{}", v.summary.message);
    assert_eq!(flagged(&v, "parallel"), Vec::<String>::new());
    // The good disks are not slow. Under seek stress the share of a
    // disk's reads that happen to follow each other depends on how its six
    // readers are scheduled, so the two good disks differ by up to ~10%
    // here: one may be marked fast against the other (a mark, not a fault).
    let seek: Vec<String> =
        flagged(&v, "seek").into_iter().filter(|f| !f.ends_with("=fast")).collect();
    assert_eq!(seek, [format!("{}=slow", disks[1].dev)]);
    assert_eq!(r.code, 1);
    let rows = disk_rows(&v, "seek");
    for (i, row) in rows.iter().enumerate() {
        let kept = row.pct_of_serial.unwrap();
        assert!(kept < 90.0, "disk {i}: seeking costs speed ({kept}%)");
        // Six readers, started a sixth of the disk apart: six of the 12
        // buckets (every other one) hold the reads' starts.
        let used: Vec<usize> =
            row.surface.reads.iter().enumerate().filter(|(_, n)| **n > 0).map(|(b, _)| b).collect();
        assert!(
            [0, 2, 4, 6, 8, 10].iter().all(|b| used.contains(b)),
            "disk {i}: readers at every sixth of the disk: {used:?}"
        );
    }
    let reasons = rows[1].reasons.join("; ");
    assert!(reasons.contains("under seek stress"), "{reasons}");
    let said = disk_verdicts(&v);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].0, disks[1].dev);
    assert!(said[0].2.contains("under seek stress"), "{said:?}");
    assert_eq!(rows[1].slow_regions, [], "the seek pass does not judge the surface");
    assert!(r.stdout.contains("Seek-stress pass: all disks at once, 6 staggered readers per disk"));
}

/// `arrayburn check ARGS... --json J DISKS...` unthrottled; the result.
fn check_plain(args: &[&str], disks: &[&str]) -> Run {
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut all = vec!["check", "--progress", "none", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(disks);
    let r = finish(arrayburn(&all), &json);
    assert_schema(r.json.as_ref().unwrap());
    r
}

#[test]
fn a_sample_that_sweeps_a_small_disk_again_counts_each_bad_range_once() {
    need_root!();
    let _l = device_lock();
    let size = 16 * MIB;
    let bad_ranges = [(3 * MIB, 4096), (9 * MIB + 512, 512)];
    let bad = FaultyDisk::new(size, &bad_ranges);
    let good = disks(2, size);
    // 2 s of a 16 MiB disk is many sweeps; each used to count both ranges
    // again and hit --max-errors 5. In 256 KiB reads the first sweep's
    // pinpointing (512 reads of a sector) ends well inside the window even
    // on a loaded host (in 4 MiB reads, 8192 of them once outlasted it
    // there, and the rest of that read was rightly left unprobed).
    let r = check_plain(
        &["--sample", "2s", "--max-errors", "5", "--block", "256k"],
        &[&good[0].dev, &bad.dev, &good[1].dev],
    );
    let v = r.report.unwrap();
    for pass in ["serial", "parallel"] {
        let row = &disk_rows(&v, pass)[1];
        assert_eq!(ranges(row), bad_ranges, "{pass}: each range once");
        assert_eq!(row.bad_ranges, 2, "{pass}");
        assert_eq!(row.read_errors, 2, "{pass}: distinct failed reads");
        assert_eq!(row.bad_bytes, 4096 + 512, "{pass}");
        assert_eq!(row.stopped, None, "{pass}");
        assert!(row.bytes > 2 * size, "{pass}: swept the disk more than once");
        let reasons = &row.reasons[0];
        assert!(reasons.starts_with("2 unreadable range(s)"), "{reasons}");
        assert!(!reasons.contains("stopped early"), "{pass}: {reasons}");
    }
    assert_eq!(r.stdout.matches("  unreadable: bytes").count(), 4, "{}", r.stdout);
    // (The good disks are unthrottled memory: their speeds are the CPU's,
    // not this test's question.)
    let said = disk_verdicts(&v);
    let of_bad = said.iter().find(|s| s.0 == bad.dev).map(|s| s.2.as_str()).unwrap_or_default();
    assert!(of_bad.contains("2 unreadable range(s)"), "{said:?}");
}

#[test]
fn an_area_that_fails_wholesale_is_skipped_not_probed_sector_by_sector() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    // 32 MiB that fail, each failing request taking 2 ms: probing each of
    // its 65536 sectors would take over two minutes.
    let bad = FaultyDisk::with_slow(size, &[(8 * MIB, 32 * MIB)], &[(8 * MIB, 32 * MIB, 2000)]);
    // And one whose failing area runs to 8 MiB before its end: the skips
    // overshoot to the end, and reading back from there finds the area's end.
    let tail = FaultyDisk::with_slow(size, &[(40 * MIB, 16 * MIB)], &[(40 * MIB, 16 * MIB, 2000)]);
    let good = disks(2, size);
    let r = check_plain(
        &["--mode", "serial", "--full-serial"],
        &[&good[0].dev, &bad.dev, &good[1].dev, &tail.dev],
    );
    let tail_row = &disk_rows(r.report.as_ref().unwrap(), "serial")[3];
    let spans: Vec<(u64, u64)> = ranges(tail_row);
    assert_eq!(spans[0].0, 40 * MIB, "{spans:?}");
    let last = spans.last().unwrap();
    assert_eq!(last.0 + last.1, 56 * MIB, "{spans:?}");
    assert_eq!(tail_row.bytes + tail_row.bad_bytes + tail_row.unread_bytes, size);
    let row = &disk_rows(r.report.as_ref().unwrap(), "serial")[1];
    let errors = &row.errors;
    let bad_bytes = row.bad_bytes;
    let unread = row.unread_bytes;
    let read = row.bytes;
    assert_eq!(errors[0].offset, 8 * MIB, "the first bad sector, exactly");
    assert!(errors[0].exact);
    assert!(bad_bytes <= 64 << 10, "probed only until it failed wholesale: {bad_bytes}");
    assert!(unread >= 32 * MIB - bad_bytes, "the rest reported unread: {unread}");
    assert_eq!(
        read + bad_bytes + unread,
        size,
        "every byte read, bad or unread: {read} {bad_bytes} {unread} {:?}",
        errors
    );
    assert!(errors[1..].iter().all(|e| !e.exact));
    // The unread spans cover the failing area without a gap.
    let mut end = 8 * MIB;
    for e in errors {
        assert_eq!(e.offset, end, "{errors:?}");
        end += e.len;
    }
    // Skipping ahead overshot the area; reading back from where reading
    // resumed finds its end (to the read size).
    assert_eq!(end, 40 * MIB, "{errors:?}");
    assert!(row.read_errors <= 5, "{row:?}");
    assert!(row.reached_end, "read on after the area");
    assert!(r.stdout.contains("  not read: bytes"), "{}", r.stdout);
    assert!(row.reasons[0].contains("bytes not read"), "{row:?}");
}

#[test]
fn pinpointing_honours_the_sample_window_and_a_signal() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    // One bad sector every 128 KiB of the first 4 MiB, every request 2 ms:
    // pinpointing that chunk is ~4000 reads, over 8 s, and never wholesale.
    let bad_ranges: Vec<(u64, u64)> = (0..32).map(|k| (k * (128 << 10) + 4096, 512)).collect();
    let bad = FaultyDisk::with_slow(size, &bad_ranges, &[(0, size, 2000)]);
    let unprobed =
        |row: &PassDisk| row.errors.iter().any(|e| !e.exact && e.message.contains("stopped"));

    // A 1 s sample ends the probing at 1 s.
    let r = check_plain(&["--mode", "serial", "--sample", "1.5s"], &[&bad.dev]);
    let row = &disk_rows(r.report.as_ref().unwrap(), "serial")[0];
    assert!(unprobed(row), "{row:?}");
    assert!(row.elapsed_s < 2.0, "{row:?}");
    assert!(row.bad_ranges < 32, "cut short: {row:?}");

    // A signal mid-probe stops it at the next re-read.
    let dir = tempdir();
    let json = dir.path().join("r.json");
    // Checks `dev` serially with io_uring, signalled `after` in: the time
    // from the signal to the exit, and the disk's row of the partial report.
    let interrupted = |dev: &str, after: u64| {
        let child = arrayburn(&[
            "check",
            "--engine",
            "io_uring",
            "--passes",
            "serial",
            "--full-serial",
            "--progress",
            "none",
            "--json",
            json.to_str().unwrap(),
            dev,
        ])
        .start();
        let (out, took) = interrupt_after(child, Duration::from_millis(after));
        assert_eq!(out.status.code(), Some(130));
        let v: Report = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let row = disk_rows(&v, "serial")[0].clone();
        assert_eq!(row.stopped, Some(Stopped::Interrupted));
        (took, row)
    };
    let (took, row) = interrupted(&bad.dev, 1500);
    assert!(took < Duration::from_secs(3), "stopped {took:?} after the signal");
    assert!(unprobed(&row), "{row:?}");
    assert!(row.reasons[0].contains("stopped early by a signal"), "{row:?}");

    // A signal while a re-read is in flight that takes the drive 4 s (its
    // retries, the kernel's timeout): io_uring leaves that read to the
    // kernel and stops at once. 4 MiB reads: the one at 8 MiB fails at
    // 4 s, its first 64 KiB re-read is then in flight until 8 s; the
    // signal comes at 6 s.
    let retrying =
        FaultyDisk::with_slow(16 * MIB, &[(8 * MIB, 512)], &[(8 * MIB, 64 << 10, 4_000_000)]);
    let (took, row) = interrupted(&retrying.dev, 6000);
    assert!(took < Duration::from_secs(1), "stopped {took:?} after the signal");
    // The chunk being probed is reported unread from where the probing
    // was, not the abandoned re-read as a bad sector.
    assert_eq!(
        row.errors.iter().map(|e| (e.offset, e.len, e.exact)).collect::<Vec<_>>(),
        [(8 * MIB, 4 * MIB, false)],
        "{row:?}"
    );
    assert!(row.errors[0].message.contains("stopped"), "{row:?}");
}

#[test]
fn both_engines_find_the_same_bad_sectors_and_read_the_same_bytes() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    // Bad sectors in several 4 MiB reads, two in one read, one in the
    // last: with 8 reads in flight several fail at once.
    let bad_ranges = [
        (4 * MIB + 512, 512),
        (9 * MIB, 4096),
        (11 * MIB, 512),
        (13 * MIB + 4096, 8192),
        (size - 512, 512),
    ];
    let bad = FaultyDisk::new(size, &bad_ranges);
    let mut seen = Vec::new();
    for engine in [&["--engine", "psync"][..], &["--engine", "io_uring", "--queue-depth", "8"]] {
        let mut args = vec!["--mode", "serial", "--full-serial"];
        args.extend_from_slice(engine);
        let r = check_plain(&args, &[&bad.dev]);
        let v = r.report.unwrap();
        let row = &disk_rows(&v, "serial")[0];
        assert!(row.reached_end, "{engine:?}");
        assert_eq!(row.bytes + row.bad_bytes, size, "{engine:?}");
        assert_eq!(ranges(row), bad_ranges, "{engine:?}");
        seen.push((v.options.engine.clone(), row.read_errors, row.bad_bytes));
    }
    assert_eq!(seen[0].0, "psync");
    assert_eq!(seen[1].0, "io_uring");
    assert_eq!((seen[0].1, seen[0].2), (seen[1].1, seen[1].2), "{seen:?}");
}

#[test]
fn disks_that_share_a_controllers_limit_name_the_controller_not_the_disks() {
    need_root!();
    let _l = device_lock();
    let size = 32 * MIB;
    // Every read request waits 20 ms in its FUSE daemon, one at a time: a
    // slow disk that costs no CPU. The two disks "behind 0000:04:00.0" are two loop
    // devices over one daemon, so read together they share its pace (a
    // controller's limit); the two "behind 0000:03:00.0" have a daemon each.
    let a1 = FaultyDisk::drive(size, 20_000, 0);
    let a2 = FaultyDisk::drive(size, 20_000, 0);
    let b1 = FaultyDisk::drive(size, 20_000, 0);
    let b2 = arrayburn::testbed::LoopDisk::attach(
        b1.mnt.path().join("disk.img"),
        &["-r", "--direct-io=on"],
    )
    .unwrap();
    let dir = tempdir();
    // The second controller's PCIe link trained at x4 of x8; one disk of
    // the first came up at 3.0 of 6.0 Gb/s.
    let pcie = |pci: &str, width: u32| {
        serde_json::json!({"kind": "pcie", "at": pci, "current": format!("8.0 GT/s PCIe x{width}"),
            "max": "8.0 GT/s PCIe x8", "degraded": width < 8})
    };
    let on = |pci: &str| {
        let width = if pci == "0000:04:00.0" { 4 } else { 8 };
        serde_json::json!({"transport": "sas", "controller": {"pci": pci, "driver": "mpt3sas"},
            "links": [pcie(pci, width)]})
    };
    let mut slow_sata = on("0000:03:00.0");
    slow_sata["links"].as_array_mut().unwrap().push(serde_json::json!({"kind": "sata",
        "at": "link3", "current": "3.0 Gbps", "max": "6.0 Gbps", "degraded": true}));
    let name = |d: &str| d.trim_start_matches("/dev/").to_string();
    let topo = dir.path().join("topology.json");
    let map: serde_json::Map<String, serde_json::Value> = [
        (name(&a1.dev), on("0000:03:00.0")),
        (name(&a2.dev), slow_sata),
        (name(&b1.dev), on("0000:04:00.0")),
        (name(&b2.dev), on("0000:04:00.0")),
    ]
    .into_iter()
    .collect();
    std::fs::write(&topo, serde_json::Value::Object(map).to_string()).unwrap();
    let json = dir.path().join("r.json");
    let mut cmd = arrayburn(&[
        "check",
        "--sample",
        "1500ms",
        "--progress",
        "none",
        "--json",
        json.to_str().unwrap(),
        &a1.dev,
        &a2.dev,
        &b1.dev,
        &b2.dev,
    ]);
    cmd.env("ARRAYBURN_TOPOLOGY", &topo);
    let r = finish(cmd, &json);
    let v = r.report.unwrap();
    let par = v.passes.iter().find(|p| p.kind.name() == "parallel").unwrap();
    let shares: Vec<(&str, usize, bool)> =
        par.controllers.iter().map(|c| (c.pci.as_str(), c.disks.len(), c.limited)).collect();
    assert_eq!(
        shares,
        [("0000:03:00.0", 2, false), ("0000:04:00.0", 2, true)],
        "{:?}",
        par.controllers
    );
    let b = &par.controllers[1];
    assert!((35.0..70.0).contains(&b.kept_pct_of_serial), "{b:?}");
    assert!(par.controllers[0].kept_pct_of_serial > 85.0, "{:?}", par.controllers[0]);
    assert!(!v.summary.shared_bottleneck);
    assert!(flagged(&v, "parallel").is_empty(), "no disk blamed: {:?}", flagged(&v, "parallel"));
    assert!(
        r.stdout.contains("CONTROLLER BOTTLENECK: the 2 disk(s) on 0000:04:00.0 (mpt3sas) kept"),
        "{}",
        r.stdout
    );
    // The HBA's narrow link is named with what it can carry, and the
    // disk on a slow SATA link is a finding of its own.
    assert!(
        r.stdout.contains("limits the disks behind it, not the disks. 0000:04:00.0's PCIe link, at 8.0 GT/s PCIe x4, carries at most 3938 MB/s; the 2 disk(s) behind it read"),
        "{}",
        r.stdout
    );
    let acts = disk_verdicts(&v);
    assert_eq!(acts.len(), 1, "{acts:?}");
    assert_eq!((acts[0].0.as_str(), acts[0].1), (a2.dev.as_str(), Action::CheckPath));
    assert!(
        acts[0].2.contains(
            "its SATA link (link3) runs at 3.0 Gbps where 6.0 Gbps is possible: replace the cable"
        ),
        "{acts:?}"
    );
    assert_eq!(r.code, 1, "a link below its maximum is a finding");
    // Each link below its maximum is named once in the verdict and listed
    // in the summary: the HBA's with the disks behind it, the disk's own.
    let links: Vec<(&str, bool, Vec<&str>)> = v
        .summary
        .links
        .iter()
        .map(|l| {
            let disks = l.disks.iter().map(String::as_str).collect();
            (l.at.as_str(), l.controller, disks)
        })
        .collect();
    assert_eq!(
        links,
        [
            ("link3", false, vec![a2.dev.as_str()]),
            ("0000:04:00.0", true, vec![b1.dev.as_str(), b2.dev.as_str()])
        ]
    );
    assert_eq!(v.summary.links[1].carries_mb_per_s.map(f64::round), Some(3938.0));
    let msg = &v.summary.message;
    assert!(
        msg.starts_with(&format!(
            "FLAGGED: {}'s SATA link (link3) runs at 3.0 Gbps where 6.0 Gbps is possible (see Disks to act on); \
             the controller 0000:04:00.0's PCIe link runs at 8.0 GT/s PCIe x4 where 8.0 GT/s PCIe x8 is possible \
             (2 disk(s) behind it, at most 3938 MB/s): reseat the card",
            a2.dev
        )),
        "{msg}"
    );
    let j = r.json.as_ref().unwrap();
    let disk =
        j["disks"].as_array().unwrap().iter().find(|d| d["path"] == a2.dev.as_str()).unwrap();
    assert_eq!(disk["topology"]["links"][1]["degraded"], true, "{disk}");
    drop(b2);
}

/// A check of two good disks and a FUSE one (64 MiB each, read at 40
/// MB/s), the FUSE disk at 70 % of that in the serial pass only, so that
/// it is re-measured alone beside a peer: the disks, their throttle, and
/// the run, its JSON's path and directory, once the re-measurement began.
fn re_measuring_a_faulty_disk(
    io_timeout: &str,
) -> (Vec<LoopDisk>, FaultyDisk, Throttle, (Child, PathBuf, tempfile::TempDir)) {
    let good = disks(2, 64 * MIB);
    let bad = FaultyDisk::new(64 * MIB, &[]);
    let t = Throttle::new();
    for g in &good {
        t.limit(g, 40_000_000);
    }
    t.limit_dev(&bad.dev, 28_000_000);
    let dir = tempdir();
    let json = dir.path().join("r.json");
    // Samples of 1.5 s, the least a check takes (2 s cost 2 s a test more).
    let mut args = vec!["check", "--sample", "1.5s", "--block", "1m", "--io-timeout", io_timeout];
    args.extend(["--progress", "lines", "--json", json.to_str().unwrap()]);
    args.extend([good[0].dev.as_str(), bad.dev.as_str(), good[1].dev.as_str()]);
    let child = t.command(&args).start();
    child.wait_line("the parallel pass", RUN, |l| l.contains("parallel pass: reading"));
    t.limit_dev(&bad.dev, 40_000_000);
    let line = child.wait_line("the re-measurement", RUN, |l| l.contains("re-measuring"));
    assert!(line.contains(&format!("re-measuring {} alone", bad.dev)), "{line}");
    (good, bad, t, (child, json, dir))
}

#[test]
fn a_disk_that_hangs_while_re_measured_is_a_finding_not_unsure() {
    need_root!();
    let _l = device_lock();
    // Disk 1 reads at 70 % of its peers' while the serial pass runs and at
    // their speed in the parallel pass, so it is re-measured alone beside a
    // peer; there it stops answering. That is the finding (check its path),
    // in the serial pass it re-measured; not "still unsure".
    let (_good, bad, _t, (child, json, _dir)) = re_measuring_a_faulty_disk("2s");
    let frozen = bad.freeze();
    // The result is written and the run exits while the disk is frozen
    // (its stuck read is left in the child process the check split into).
    let out = child.wait(MINUTE);
    drop(frozen);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let said = &v["summary"]["disk_verdicts"];
    assert_eq!(said.as_array().unwrap().len(), 1, "{said}");
    assert_eq!(said[0]["path"], bad.dev.as_str(), "{said}");
    assert_eq!(said[0]["action"], "check_path", "{said}");
    assert!(said[0]["sentence"].as_str().unwrap().contains("stopped answering"), "{said}");
    let serial = &v["passes"][0];
    assert_eq!(serial["kind"], "serial");
    assert_eq!(serial["disks"][1]["stopped"], "hung", "{}", serial["disks"][1]);
    assert!(!v["summary"]["message"].as_str().unwrap().contains("unsure"), "{}", v["summary"]);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
}

#[test]
fn a_disk_that_dies_while_re_measured_is_summed_and_placed_as_its_row_says() {
    need_root!();
    let _l = device_lock();
    // As above, but re-measured the disk fails every read: what it found
    // there is its serial row's, its bad and unread bytes add up to its
    // size at most, its ranges in order, and the verdict's "first at
    // byte" is the row's first range. (The merge's double count is held
    // by the unit test in measure/results.rs: a disk with errors in the
    // pass is not re-measured, so a live run cannot overlap the two.)
    let size = 64 * MIB;
    let (_good, bad, _t, (child, json, _dir)) = re_measuring_a_faulty_disk("5s");
    bad.die();
    let out = child.wait(MINUTE);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: arrayburn::report::Report =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for p in &v.passes {
        for row in p.disks.iter().filter(|r| r.path == bad.dev) {
            assert!(row.bad_bytes + row.unread_bytes <= size, "{:?}: {row:?}", p.kind);
            let offsets: Vec<u64> = row.errors.iter().map(|e| e.offset).collect();
            assert!(offsets.is_sorted(), "{offsets:?}");
        }
    }
    let serial = &disk_rows(&v, "serial")[1];
    assert!(!serial.errors.is_empty(), "the failures while re-measured are its: {serial:?}");
    let first = serial.errors[0].offset;
    let said = v.summary.disk_verdicts.iter().find(|d| d.path == bad.dev).expect("a verdict");
    assert!(
        said.sentence.contains(&format!("first at byte {first},")),
        "{} (row's first: {first})",
        said.sentence
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
}

#[test]
fn a_small_bad_patch_is_trimmed_back_to_its_sectors() {
    need_root!();
    let _l = device_lock();
    // 64 KiB that fail inside one 4 MiB read: the first 32 KiB failing in a
    // row make it "wholesale" and the rest is skipped; reading on succeeds,
    // so the skipped span is read back to the patch's far edge, sector by
    // sector at the end, and the few sectors left between are read one by
    // one. Every byte is then read or proven bad: 65536 bad, none unread
    // (before: 32 KiB unreadable and 4,161,536 bytes "not read").
    let size = 32 * MIB;
    let at = 8 * MIB + 12 * 1024;
    let bad = FaultyDisk::new(size, &[(at, 64 << 10)]);
    let r = check_plain(&["--mode", "serial", "--full-serial", "--block", "4m"], &[&bad.dev]);
    let row = &disk_rows(r.report.as_ref().unwrap(), "serial")[0];
    assert_eq!(ranges(row), [(at, 64 << 10)], "{:?}", row.errors);
    assert!(row.errors[0].exact, "{:?}", row.errors);
    assert_eq!((row.bad_bytes, row.unread_bytes), (64 << 10, 0), "{row:?}");
    assert_eq!(row.bytes + row.bad_bytes, size, "{row:?}");
}

#[test]
fn a_disk_that_does_not_answer_its_signature_look_is_refused_as_its_path_not_its_data() {
    need_root!();
    let _l = device_lock();
    // Frozen before the burn-in: its ZFS labels cannot be read. The refusal
    // sends the admin to the cable and slot, not to --wipe-signatures (it
    // did: "carries an unknown content ... add --wipe-signatures").
    let rw = FaultyDisk::writable(16 * MIB, &[], &[], &[]);
    let frozen = rw.freeze();
    let state = tempdir();
    let child = arrayburn(&["burnin", "--state", state.path().to_str().unwrap()])
        .args(["--destructive", "--yes", "--smart", "off", "--io-timeout", "2s", &rw.dev])
        .start();
    let said = child.wait_line("the refusal", MINUTE, |l| l.contains("nothing was written"));
    // It exits while the disk is still frozen: its stuck read is left in
    // the child process the burn-in split into.
    let out = child.wait(MINUTE);
    drop(frozen);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("did not answer a read of its ZFS labels within --io-timeout"), "{said}");
    assert!(
        said.contains("check its cable, slot and power") && !said.contains("--wipe-signatures"),
        "{said}"
    );
}

#[test]
fn a_frozen_disk_never_holds_the_exit_with_either_engine() {
    need_root!();
    let _l = device_lock();
    // A disk that stops answering mid-run: with psync its read is stuck in
    // a thread, in the kernel, for as long as the disk is frozen (618 s
    // measured before), and a process exits only with its last thread.
    // The result, the exit status and the end of the output all come
    // while it is still frozen, with either engine.
    let good = disks(1, 64 * MIB);
    let bad = FaultyDisk::new(64 * MIB, &[]);
    for engine in ["psync", "io_uring"] {
        let dir = tempdir();
        let json = dir.path().join("r.json");
        // Samples of 1.5 s, the least a check takes (3 s cost 6 s more).
        let mut args = vec!["check", "--engine", engine, "--sample", "1.5s", "--io-timeout", "2s"];
        args.extend(["--progress", "lines", "--json", json.to_str().unwrap()]);
        args.extend([bad.dev.as_str(), good[0].dev.as_str()]);
        let child = arrayburn(&args).start();
        // Frozen while the serial pass reads it (or, on a loaded machine,
        // just after: then the parallel pass finds it hung).
        let reading = format!("serial pass: reading {}", bad.dev);
        child.wait_line("the frozen disk read", RUN, |l| l.contains(&reading));
        let frozen = bad.freeze();
        let out = child.wait(MINUTE);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(v["complete"], true, "{engine}: {stdout}");
        let said = &v["summary"]["disk_verdicts"];
        assert_eq!(said[0]["path"], bad.dev.as_str(), "{engine}: {said}");
        assert_eq!(said[0]["action"], "check_path", "{engine}: {said}");
        assert_eq!(out.status.code(), Some(1), "{engine}: {stdout}");
        assert!(stdout.contains("Verdict: FLAGGED"), "{engine}: {stdout}");
        drop(frozen);
    }
}

#[test]
fn four_disks_behind_a_halved_path_are_named_as_that_group_and_an_even_limit_stays_shared() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    // Every disk is held to 45 MB/s (a drive's own speed). Four are loop
    // devices over one FUSE daemon that serves a request at a time, 10 ms
    // each (about 93 MB/s in all as the check reads): alone each reads its
    // 45 MB/s, the four together share the daemon's pace, half each (a cable or expander
    // port only they sit behind). The other four are memory-backed, each
    // its own path. No topology says any of it.
    let shared = FaultyDisk::drive(size, 10_000, 0);
    let image = shared.image();
    let more: Vec<arrayburn::testbed::LoopDisk> = (0..3)
        .map(|_| {
            arrayburn::testbed::LoopDisk::attach(image.clone(), &["-r", "--direct-io=on"]).unwrap()
        })
        .collect();
    let behind: Vec<&str> =
        std::iter::once(shared.dev.as_str()).chain(more.iter().map(|d| d.dev.as_str())).collect();
    let own = disks(4, size);
    let t = Throttle::new();
    for d in &behind {
        t.limit_dev(d, 45_000_000);
    }
    for d in &own {
        t.limit(d, 45_000_000);
    }
    // In the order an admin lists a shelf: the two kinds interleaved.
    let order: Vec<&str> =
        own.iter().zip(&behind).flat_map(|(o, b)| [o.dev.as_str(), *b]).collect();
    let dir = tempdir();
    let (json, record) = (dir.path().join("r.json"), dir.path().join("recording.json"));
    // Samples of 1.5 s, the least a check takes (2 s cost 5 s more).
    let mut args = vec!["check", "--sample", "1.5s", "--block", "1m", "--progress", "lines"];
    args.extend(["--json", json.to_str().unwrap(), "--record", record.to_str().unwrap()]);
    args.extend(&order);
    let r = finish(t.command(&args), &json);
    // What it measured replays to the report it gave.
    crate::replay::assert_replays(&record, r.json.as_ref().unwrap());
    let v = r.report.as_ref().unwrap();
    let par = v.passes.iter().find(|p| p.kind.name() == "parallel").unwrap();
    assert_eq!(par.groups.len(), 1, "{:?}\n{}", par.groups, r.stdout);
    let g = &par.groups[0];
    assert_eq!(g.disks, behind, "{g:?}");
    assert!((30.0..72.0).contains(&g.kept_pct_of_serial), "{g:?}");
    assert!(g.others_kept_pct_of_serial > 85.0 && g.others == 4, "{g:?}");
    // Read again: beside all they lost it again, and without the others
    // they still kept about half: their own path.
    assert_eq!(g.path, arrayburn::judge::groups::GroupPath::Own, "{g:?}\n{}", r.stdout);
    assert!(g.alone_pct_of_serial.unwrap() < 80.0, "{g:?}");
    assert!(g.together_pct_of_others.unwrap() < 80.0, "{g:?}");
    assert!(r.stderr.contains("again, alone and then beside all"), "{}", r.stderr);
    assert!(!v.summary.shared_bottleneck, "half of them lost nothing: {}", v.summary.message);
    assert!(flagged(v, "parallel").is_empty(), "no disk blamed: {:?}", flagged(v, "parallel"));
    let acts = disk_verdicts(v);
    let named: Vec<&str> = acts.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(named, behind, "{acts:?}");
    assert!(
        acts.iter().all(|a| a.1 == Action::CheckPath && a.2.contains("check the path they share"))
    );
    let msg = &v.summary.message;
    let four = format!("{} and {}", behind[..3].join(", "), behind[3]);
    assert!(msg.contains(&format!("SHARED PATH: {four} lost speed together")), "{msg}");
    assert!(msg.starts_with(&format!("FLAGGED: {four} lose speed together through a path")));
    assert!(!msg.contains("all disks lose speed together"), "{msg}");
    assert_eq!(r.code, 1, "a path to check is a finding");

    // The four behind the daemon judged alone (their measurements, the
    // others left out; no group is read again where every disk lost
    // speed): an evenly shared limit, the shared bottleneck it always
    // was, and no group.
    let mut four = crate::replay::only(&crate::replay::recording(&record), &[1, 3, 5, 7]);
    four.groups_read_again.clear();
    let v = &crate::replay::replayed(&four);
    let par = v.passes.iter().find(|p| p.kind.name() == "parallel").unwrap();
    assert!(par.groups.is_empty(), "{:?}", par.groups);
    assert!(v.summary.shared_bottleneck, "{}", v.summary.message);
    assert!(v.summary.message.contains("SHARED BOTTLENECK: all disks lose speed together"));
    assert!(disk_verdicts(v).is_empty(), "{:?}", disk_verdicts(v));
    drop(more);
}

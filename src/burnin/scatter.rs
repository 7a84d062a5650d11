//! The scattered-write probe (`burnin` before its first pass, `inspect
//! --probe --destructive`): whether a disk keeps small writes scattered
//! over it in a cache that persists, as a drive-managed SMR disk does, in
//! seconds rather than the days of a full pass (Aghayev and Desnoyers,
//! "Skylight", FAST '15).
//!
//! Three steps, one request at a time, each of one 4 KiB block (or the
//! disk's logical block) at a random place in the range:
//!
//! 1. **Reads** for [`READ_S`]: what the disk's seeks allow (a spinning
//!    disk, 100-250 a second).
//! 2. **Writes**, each followed by a flush of the disk's cache (the write
//!    must be on the media before the next one: a volatile cache does not
//!    count), for up to the probe's time, counted in windows of
//!    [`WINDOW_S`]. A spinning disk without a persistent cache writes at
//!    about its read rate; one with a media cache at many times that, until
//!    the cache is full; then a few a second, with stalls of seconds while
//!    it rewrites bands. The writes end early once [`FULL_S`] of windows
//!    in a row ran at under a tenth of the first second's rate (the cache
//!    is full: more writes would only take longer).
//! 3. **After idling**, where the writes slowed so: writes again, half as
//!    many as went in before they slowed (or for [`AGAIN_S`], whichever
//!    ends first: a cleaned cache takes them all at its speed, as the
//!    capacity probe's burst after a collapse stays inside the cache), to
//!    see whether the drive cleaned its cache.
//!
//! It destroys the data in the blocks it writes (the burn-in writes them
//! all again); it must not be run without consent, nor decide what its
//! result means (`judge::smr` does).

use std::time::{Duration, Instant};

use rand_mt::Mt64;
use serde::{Deserialize, Serialize};

use crate::burnin::targets::Target;
use crate::io::{Bounds, Halt, Probe as BlockIo, Until};
use crate::stop::StopFlag;

/// Seconds of scattered reads.
pub const READ_S: f64 = 2.0;
/// The windows the writes are counted in (seconds).
pub const WINDOW_S: f64 = 0.25;
/// Windows in a row this long under a tenth of the first second's rate
/// end the writes.
pub const FULL_S: f64 = 2.0;
/// Seconds of writes after idling.
pub const AGAIN_S: f64 = 2.0;

/// What the probe measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scattered {
    /// Bytes of each read and write.
    pub block: u64,
    /// Reads done, and their seconds.
    pub reads: u64,
    pub read_s: f64,
    /// Writes completed in each [`WINDOW_S`] of the writes, in order (a
    /// write that stalls leaves windows of 0).
    pub windows: Vec<u32>,
    /// The slowest write (with its flush), ms.
    pub slowest_write_ms: f64,
    /// The host's CPUs idle on average while the writes ran (`host`):
    /// under half of one, a woken thread waited for a CPU, and the writes'
    /// rate may be the host's rather than the disk's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_cpus: Option<f64>,
    /// After idling: the seconds idle, then writes done and their seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub again: Option<Again>,
    /// The zone model the disk declares (sysfs `queue/zoned`: host-aware,
    /// host-managed): an SMR disk that says so is not probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<String>,
    /// Why the probe did not finish, where it did not (a stop, an error, a
    /// disk that hung): what it has is then all there is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// The writes after idling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Again {
    pub idle_s: f64,
    pub writes: u64,
    pub write_s: f64,
}

impl Scattered {
    /// A probe with nothing measured yet, of blocks of `block` bytes.
    pub fn empty(block: u64) -> Self {
        Self { block, ..Self::default() }
    }

    /// Reads a second.
    pub fn reads_per_s(&self) -> Option<f64> {
        (self.reads > 0 && self.read_s > 0.0).then(|| self.reads as f64 / self.read_s)
    }

    /// Whether the writes slowed as a full cache's do: the windows of the
    /// last [`FULL_S`] each under a tenth of the first second's rate.
    pub fn slowed(&self) -> bool {
        slowed(&self.windows)
    }

    /// The windows before the writes slowed: up to the last one at a
    /// tenth of the first second's rate or more (all of them where they
    /// did not slow). The rest ran as a full cache's do.
    pub fn fast_part(&self) -> &[u32] {
        let w = &self.windows;
        if !self.slowed() {
            return w;
        }
        let at_speed = |n: &u32| f64::from(*n) >= first_second(w) / 10.0;
        &w[..w.iter().rposition(at_speed).map_or(PER_SECOND, |i| i + 1)]
    }
}

/// Windows in a second.
pub const PER_SECOND: usize = (1.0 / WINDOW_S) as usize;

/// Writes a window in the first second.
fn first_second(windows: &[u32]) -> f64 {
    let first = &windows[..PER_SECOND.min(windows.len())];
    first.iter().map(|n| f64::from(*n)).sum::<f64>() / PER_SECOND as f64
}

/// The last [`FULL_S`] of `windows` each under a tenth of the first
/// second's writes a window.
fn slowed(windows: &[u32]) -> bool {
    let full = (FULL_S / WINDOW_S).round() as usize;
    if windows.len() < PER_SECOND + full {
        return false;
    }
    let fast = first_second(windows);
    fast > 0.0 && windows[windows.len() - full..].iter().all(|w| f64::from(*w) < fast / 10.0)
}

/// One disk's probe: `io` on disk `name` whose range is `[start, end)`,
/// with blocks of `block` bytes, writes for up to `write_for`, and `idle`
/// before the writes again where the first ones slowed; `who` names the
/// command in the line said when the reads end.
pub struct Job<'a> {
    pub who: &'a str,
    pub name: &'a str,
    pub io: &'a mut BlockIo,
    pub range: (u64, u64),
    pub block: u64,
    pub write_for: Duration,
    pub idle: Duration,
    pub stop: &'a StopFlag,
}

/// Why the probe ended early.
struct Cut(String);

impl From<Halt> for Cut {
    fn from(h: Halt) -> Self {
        Cut(match h {
            Halt::Hung => "the disk stopped answering".into(),
            _ => "stopped".into(),
        })
    }
}

/// Runs the probe (module doc).
pub fn probe(job: Job) -> Scattered {
    let mut s = Scattered::empty(job.block);
    let mut w = Work::new(job);
    if let Err(Cut(why)) = steps(&mut w, &mut s) {
        s.incomplete = Some(why);
    }
    s
}

fn steps(w: &mut Work, s: &mut Scattered) -> Result<(), Cut> {
    let began = Instant::now();
    while began.elapsed().as_secs_f64() < READ_S {
        w.read()?;
        s.reads += 1;
    }
    s.read_s = began.elapsed().as_secs_f64();
    tell!(
        "arrayburn {}: {}: {} scattered {} reads in {:.1} s, {:.1} ms each (its seeks); writing scattered blocks",
        w.job.who,
        w.job.name,
        s.reads,
        crate::units::human_bytes_binary(s.block),
        s.read_s,
        s.read_s * 1e3 / s.reads.max(1) as f64
    );
    // Every window the writes can fill, before they are timed: nothing is
    // allocated between two of them.
    let windows = (w.job.write_for.as_secs_f64() / WINDOW_S).ceil() as usize + 1;
    s.windows.reserve(windows);
    let cpus = crate::host::CpuTimes::now();
    let began = Instant::now();
    let mut count = 0u32;
    let mut window = began;
    while began.elapsed() < w.job.write_for && !slowed(&s.windows) {
        let ms = w.write()?;
        s.slowest_write_ms = s.slowest_write_ms.max(ms);
        count += 1;
        // A write that took several windows closes each of them.
        while window.elapsed().as_secs_f64() >= WINDOW_S {
            s.windows.push(count);
            count = 0;
            window += Duration::from_secs_f64(WINDOW_S);
        }
    }
    s.idle_cpus = cpus.and_then(|then| crate::host::CpuTimes::now()?.idle_cpus_since(&then));
    if !s.slowed() {
        return Ok(());
    }
    let idle = Instant::now();
    while idle.elapsed() < w.job.idle {
        if w.job.stop.is_set() {
            return Err(Cut("stopped".into()));
        }
        std::thread::sleep(Duration::from_millis(100).min(w.job.idle));
    }
    let idle_s = idle.elapsed().as_secs_f64();
    let before: u64 = s.fast_part().iter().map(|n| u64::from(*n)).sum();
    let began = Instant::now();
    let mut writes = 0;
    while writes < (before / 2).max(1) && began.elapsed().as_secs_f64() < AGAIN_S {
        w.write()?;
        writes += 1;
    }
    s.again = Some(Again { idle_s, writes, write_s: began.elapsed().as_secs_f64() });
    Ok(())
}

/// The probe's requests.
struct Work<'a> {
    job: Job<'a>,
    rng: Mt64,
    data: Vec<u8>,
    blocks: u64,
}

impl<'a> Work<'a> {
    fn new(job: Job<'a>) -> Self {
        let mut rng = Mt64::new(crate::burnin::probe::salt());
        // Data no drive compresses away.
        let data = (0..job.block / 8).flat_map(|_| rng.next_u64().to_le_bytes()).collect();
        let blocks = (job.range.1 - job.range.0) / job.block;
        Self { job, rng, data, blocks }
    }

    /// A random block's offset.
    fn at(&mut self) -> u64 {
        self.job.range.0 + self.rng.next_u64() % self.blocks.max(1) * self.job.block
    }

    fn read(&mut self) -> Result<(), Cut> {
        let at = self.at();
        let len = self.job.block as usize;
        match self.job.io.read_at(at, len, Until::Stop)? {
            Ok(_) => Ok(()),
            Err(e) => Err(Cut(format!("a read at byte {at} failed: {e}"))),
        }
    }

    /// A write and its flush; how long both took, ms.
    fn write(&mut self) -> Result<f64, Cut> {
        let at = self.at();
        let t = Instant::now();
        let until = Until::Stop;
        if let Err(e) = self.job.io.write(&self.data, at, until)? {
            return Err(Cut(format!("a write at byte {at} failed: {e}")));
        }
        if let Err(e) = self.job.io.sync(until)? {
            return Err(Cut(format!("a flush failed: {e}")));
        }
        Ok(t.elapsed().as_secs_f64() * 1e3)
    }
}

/// Probes each spinning disk at once over its range (writes for up to
/// `write_for`, `idle` before the writes again), each bound by `timeout` (a
/// hung disk) and `stop`, for command `who` (in its lines); a disk that
/// cannot be probed says why in its result. A solid-state disk is not
/// probed (None): its caches are not shingles, and it has no seeks to
/// compare its writes with.
pub fn probe_all(
    disks: &[&Target],
    (write_for, idle): (Duration, Duration),
    timeout: Duration,
    (who, stop): (&str, &StopFlag),
) -> Vec<Option<Scattered>> {
    let sys = crate::device::paths::SystemPaths::real().sys;
    std::thread::scope(|s| {
        let each: Vec<_> = (disks.iter())
            .map(|&t| {
                let sys = &sys;
                s.spawn(move || {
                    let id = &t.dev.identity;
                    if !id.rotational {
                        return None;
                    }
                    let block = 4096u64.max(u64::from(id.logical_block_size));
                    // A disk that declares zones is not probed: its
                    // scattered writes could fail (a host-managed disk takes
                    // them only in order).
                    if let Some(model) = crate::device::sysfs::zone_model(sys, &id.name) {
                        return Some(Scattered { zoned: Some(model), ..Scattered::empty(block) });
                    }
                    let bounds = Bounds::new(stop, timeout);
                    let mut io = match BlockIo::of(&t.file, &bounds) {
                        Ok(io) => io,
                        Err(e) => {
                            let why = Some(format!("could not start: {e}"));
                            return Some(Scattered { incomplete: why, ..Scattered::empty(block) });
                        }
                    };
                    let range = (t.start, t.end);
                    let name = &id.name;
                    Some(probe(Job { who, name, io: &mut io, range, block, write_for, idle, stop }))
                })
            })
            .collect();
        each.into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Some(Scattered {
                        incomplete: Some("the probe failed".into()),
                        ..Scattered::empty(4096)
                    })
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_slowed_only_when_the_last_two_seconds_ran_under_a_tenth_of_the_first() {
        let fast = vec![500u32; 4];
        let full = [fast.clone(), vec![500; 8], vec![0, 1, 0, 2, 0, 0, 1, 0]].concat();
        assert!(slowed(&full));
        // One window back at speed: not yet.
        let mut back = full.clone();
        back[14] = 400;
        assert!(!slowed(&back));
        // Steady, or too short to tell.
        assert!(!slowed(&[fast.clone(), vec![480; 20]].concat()));
        assert!(!slowed(&[500, 500, 500, 500, 0, 0, 0]));
        assert!(!slowed(&[0; 20]), "nothing in the first second is no rate to fall from");
    }

    #[test]
    fn a_zone_model_is_read_from_sysfs_and_none_is_none() {
        let root = tempfile::tempdir().unwrap();
        let at = |name: &str, z: &str| {
            let q = root.path().join("block").join(name).join("queue");
            std::fs::create_dir_all(&q).unwrap();
            std::fs::write(q.join("zoned"), z).unwrap();
        };
        at("sdb", "host-aware\n");
        at("sdc", "none\n");
        assert_eq!(
            crate::device::sysfs::zone_model(root.path(), "sdb").as_deref(),
            Some("host-aware")
        );
        assert_eq!(crate::device::sysfs::zone_model(root.path(), "sdc"), None);
        assert_eq!(crate::device::sysfs::zone_model(root.path(), "sdd"), None, "not said: none");
    }
}

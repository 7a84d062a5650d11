//! The kernel's own counters of a disk's I/O (`/proc/diskstats`, every
//! disk in one read; `/sys/block/NAME/stat` holds the same fields for one),
//! as `arrayburn watch` reads them in service: requests completed,
//! sectors, the milliseconds they took, what is in flight. Reading them
//! issues no I/O and opens no disk.
//!
//! It must not judge (`judge::watch`) and must not print.

use serde::{Deserialize, Serialize};

use super::paths::SystemPaths;

/// One reading of a disk's counters (the kernel's, since boot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub reads: u64,
    pub read_sectors: u64,
    /// Milliseconds reads spent, summed over requests.
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    /// Requests in flight now.
    pub in_flight: u64,
    /// Milliseconds the disk had a request in flight (its busy time).
    pub busy_ms: u64,
}

/// `/sys/block/NAME/stat` of disk `name`; None where the disk is gone or
/// the file reads otherwise than the kernel writes it.
pub fn read(paths: &SystemPaths, name: &str) -> Option<Counters> {
    let text = std::fs::read_to_string(paths.sys.join("block").join(name).join("stat")).ok()?;
    parse(&text)
}

/// The commands that failed on disk `name` since boot, as its SCSI layer
/// counts them (`device/ioerr_cnt`, hexadecimal: SATA and SAS disks);
/// None where the kernel keeps no such count (NVMe, loop, virtio).
pub fn errors(paths: &SystemPaths, name: &str) -> Option<u64> {
    let p = paths.sys.join("block").join(name).join("device/ioerr_cnt");
    let text = std::fs::read_to_string(p).ok()?;
    let t = text.trim();
    u64::from_str_radix(t.trim_start_matches("0x"), if t.starts_with("0x") { 16 } else { 10 }).ok()
}

/// Every disk's counters from one read of `/proc/diskstats` (`MAJ MIN
/// NAME` then the fields of a `stat` file), by kernel name; empty where
/// it cannot be read.
pub fn read_all(paths: &SystemPaths) -> std::collections::HashMap<String, Counters> {
    let text = std::fs::read_to_string(&paths.diskstats).unwrap_or_default();
    (text.lines())
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let name = words.nth(2)?;
            let rest: Vec<&str> = words.collect();
            Some((name.to_string(), parse(&rest.join(" "))?))
        })
        .collect()
}

/// The fields of a `stat` file (Documentation/block/stat.rst: reads,
/// read merges, read sectors, read ticks, writes, write merges, write
/// sectors, write ticks, in flight, io ticks, ...).
pub fn parse(text: &str) -> Option<Counters> {
    let f: Vec<u64> = text.split_whitespace().map(|w| w.parse().ok()).collect::<Option<_>>()?;
    (f.len() >= 11).then(|| Counters {
        reads: f[0],
        read_sectors: f[2],
        read_ms: f[3],
        writes: f[4],
        write_sectors: f[6],
        write_ms: f[7],
        in_flight: f[8],
        busy_ms: f[9],
    })
}

/// What a disk did between two readings `secs` apart, in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    /// Requests completed a second, MB/s, and the average time a request
    /// took (ms; 0 where none completed).
    pub ops_per_s: f64,
    pub mb_per_s: f64,
    pub ms: f64,
}

/// A disk's window: each direction, how busy it was (per cent of the
/// window with a request in flight) and what was in flight at its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub read: Flow,
    pub write: Flow,
    pub util_pct: f64,
    pub in_flight: u64,
}

/// The window between readings `a` and `b` taken `secs` apart (counters
/// that went backwards, a disk replaced under its name, count as none).
pub fn window(a: &Counters, b: &Counters, secs: f64) -> Window {
    let secs = secs.max(1e-3);
    let flow = |n: u64, sectors: u64, ms: u64| {
        let done = n as f64;
        Flow {
            ops_per_s: done / secs,
            mb_per_s: sectors as f64 * 512.0 / 1e6 / secs,
            ms: if n > 0 { ms as f64 / done } else { 0.0 },
        }
    };
    let d = |x: u64, y: u64| y.saturating_sub(x);
    Window {
        read: flow(d(a.reads, b.reads), d(a.read_sectors, b.read_sectors), d(a.read_ms, b.read_ms)),
        write: flow(
            d(a.writes, b.writes),
            d(a.write_sectors, b.write_sectors),
            d(a.write_ms, b.write_ms),
        ),
        util_pct: (100.0 * d(a.busy_ms, b.busy_ms) as f64 / (secs * 1e3)).min(100.0),
        in_flight: b.in_flight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_the_difference_of_two_readings_of_the_kernel_s_stat() {
        // Linux 6.x writes 17 fields (discards and flushes after the 11).
        let a = parse("  100 0 8000 200 50 0 4000 100 0 300 400 0 0 0 0 0 0\n").unwrap();
        let b = parse("  300 0 24000 1000 50 0 4000 100 2 1300 1400 0 0 0 0 0 0\n").unwrap();
        let w = window(&a, &b, 2.0);
        assert_eq!(w.read, Flow { ops_per_s: 100.0, mb_per_s: 4.096, ms: 4.0 });
        assert_eq!(w.write, Flow::default());
        assert_eq!((w.util_pct, w.in_flight), (50.0, 2));
        assert_eq!(parse("1 2 3"), None);
        // /proc/diskstats: the same fields after MAJ MIN NAME.
        let dir = tempfile::tempdir().unwrap();
        let text = "   7       0 loop0 300 0 24000 1000 50 0 4000 100 2 1300 1400 0 0 0 0 0 0\n 259       0 nvme0n1 1 0 8 0 0 0 0 0 0 0 0\n   8      16 sdb 1 2\n";
        std::fs::write(dir.path().join("diskstats"), text).unwrap();
        let paths = SystemPaths { diskstats: dir.path().join("diskstats"), ..SystemPaths::real() };
        let all = read_all(&paths);
        assert_eq!((all.len(), all["loop0"]), (2, b));
        assert_eq!(parse("x 0 0 0 0 0 0 0 0 0 0"), None);
    }
}

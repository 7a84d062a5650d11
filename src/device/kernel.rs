//! What the kernel saw of each disk during a run: the lines of its log
//! (`/dev/kmsg`, from the run's start: never cleared, never the whole
//! ring) that name the disk, its SCSI address, its ATA port or its NVMe
//! controller, sorted into kinds (I/O errors with their sectors, command
//! timeouts, aborts, resets, the link going down and coming back at a
//! speed, failed commands, a device taken offline), and the counters the
//! kernel keeps of it read before and after: SCSI `ioerr_cnt`,
//! `iotmo_cnt`, `iodone_cnt`; PCIe AER of its controller's function and of
//! the port above it.
//!
//! It must not judge what the lines mean for the disk (`judge::kernel`
//! does). Memory is bounded: each disk keeps its first and last
//! [`KEEP`] lines, at most [`SECTORS`] error sectors, and counts.

use std::collections::BTreeMap;
use std::fs;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{BlockDevice, SystemPaths};

/// Lines kept of each disk at either end of the run.
pub const KEEP: usize = 10;
/// Error sectors kept of each disk.
pub const SECTORS: usize = 64;
/// How often the log is read while the run goes on (its ring must not
/// wrap past what was not read yet).
const POLL: Duration = Duration::from_millis(250);

/// What a kernel line says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An I/O error or a medium error, with its sector where it says one.
    IoError,
    /// A command that timed out.
    Timeout,
    /// A command aborted.
    Abort,
    /// A device, target, bus, host, link or controller reset.
    Reset,
    /// The link went down (or was slow to come back).
    LinkDown,
    /// The link came (back) up, at a speed.
    LinkUp,
    /// libata's "failed command" (after an error or a timeout).
    FailedCommand,
    /// The kernel took the device offline, or rejects I/O to it.
    Offline,
}

impl Kind {
    /// As the JSON and the metrics name it (`io_error`, `link_up`).
    pub fn word(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// A line's kind, the sector it names (512-byte units, as the block
/// layer counts) and a link's speed, where it is one the kernel prints
/// about a disk's trouble.
pub fn classify(text: &str) -> Option<(Kind, Option<u64>, Option<String>)> {
    let t = text.to_ascii_lowercase();
    let has = |w: &str| t.contains(w);
    let sector = || {
        let at = t.find("sector ")? + "sector ".len();
        t[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    if has("sata link up") || has("link up ") && has("gbps") {
        let speed = text.split_whitespace().skip_while(|w| !w.eq_ignore_ascii_case("up"));
        let words: Vec<&str> = speed.skip(1).take(2).collect();
        return Some((Kind::LinkUp, None, (words.len() == 2).then(|| words.join(" "))));
    }
    let kind = if has("i/o error") || has("medium error") || has("unrecovered read error") {
        Kind::IoError
    } else if has("offlined") || has("offline device") || has("rejecting i/o") {
        Kind::Offline
    } else if has("link down") || has("link is slow to respond") || has("comreset failed") {
        Kind::LinkDown
    } else if has("failed command:") {
        Kind::FailedCommand
    } else if has("timeout") || has("timed out") || has("did_time_out") {
        Kind::Timeout
    } else if has("abort") {
        Kind::Abort
    } else if has("resetting")
        || has("reset controller")
        || has("reset occurred")
        || has("did_reset")
        || has(" reset")
    {
        Kind::Reset
    } else {
        return None;
    };
    Some((kind, (kind == Kind::IoError).then(sector).flatten(), None))
}

/// The names a disk goes by in the kernel's lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// `sdb`, `nvme0n1`.
    pub name: String,
    /// `MAJ:MIN`, as kmsg's `DEVICE=bMAJ:MIN` gives a block device.
    pub devno: String,
    /// `H:C:T:L`.
    pub scsi: Option<String>,
    /// `ata3` (its device is `ata3.00`).
    pub ata: Option<String>,
    /// `nvme0`, the controller of `nvme0n1`: every controller of its
    /// subsystem where the namespace is shared (native multipath puts it
    /// under `nvme-subsys0`, whose controllers are `nvme0`, `nvme1`).
    pub nvme: Vec<String>,
}

impl Names {
    /// Those of `dev`, from sysfs below `paths`.
    pub fn of(paths: &SystemPaths, dev: &BlockDevice) -> Names {
        let id = &dev.identity;
        let device = fs::canonicalize(paths.sys.join("block").join(&id.name).join("device"))
            .unwrap_or_default();
        let parts: Vec<String> = device.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let ata = parts
            .iter()
            .find(|p| p.strip_prefix("ata").is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
            .cloned();
        let controller = |p: &str| {
            p.strip_prefix("nvme")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        let nvme = match parts.last() {
            Some(last) if id.name.starts_with("nvme") && controller(last) => vec![last.clone()],
            Some(last) if id.name.starts_with("nvme") && last.starts_with("nvme-subsys") => {
                let mut all: Vec<String> = fs::read_dir(&device)
                    .map(|rd| {
                        rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()
                    })
                    .unwrap_or_default();
                all.retain(|n| controller(n));
                all.sort();
                all
            }
            _ => Vec::new(),
        };
        Names {
            name: id.name.clone(),
            devno: id.devno.clone(),
            scsi: id.topology.scsi_address.clone(),
            ata,
            nvme,
        }
    }

    /// Whether a kernel line (its text and kmsg's `DEVICE=` field) is
    /// about this disk.
    pub fn named_in(&self, text: &str, device: Option<&str>) -> bool {
        if let Some(d) = device
            && (d.strip_prefix('b') == Some(self.devno.as_str())
                || self.scsi.as_deref().is_some_and(|s| d == format!("+scsi:{s}")))
        {
            return true;
        }
        let word = |w: &str, after: &[char]| {
            text.match_indices(w).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let next = text[i + w.len()..].chars().next();
                before.is_none_or(|c| !c.is_ascii_alphanumeric())
                    && next.is_none_or(|c| after.contains(&c) || !c.is_ascii_alphanumeric())
            })
        };
        // Its partitions' lines too (`sdb1`, `nvme0n1p2`).
        let part: &[char] = if self.name.ends_with(|c: char| c.is_ascii_digit()) {
            &['p']
        } else {
            &['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
        };
        word(&self.name, part)
            || self.scsi.as_deref().is_some_and(|s| word(&format!("{s}:"), &[]))
            || self.ata.as_deref().is_some_and(|a| {
                text.starts_with(&format!("{a}:")) || text.starts_with(&format!("{a}."))
            })
            || self.nvme.iter().any(|n| word(n, &[]))
    }
}

/// A counter the kernel keeps of the disk or its path, before and after
/// the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    /// `iotmo_cnt`, `aer correctable (0000:03:00.0)`.
    pub name: String,
    pub before: u64,
    pub after: u64,
}

impl Counter {
    pub fn rose(&self) -> u64 {
        self.after.saturating_sub(self.before)
    }
}

/// What the kernel saw of one disk during the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    /// Why its log was not read (not root under `dmesg_restrict`, a
    /// container without `/dev/kmsg`): nothing below is then from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_read: Option<String>,
    /// Its lines of each kind.
    pub counts: BTreeMap<Kind, u64>,
    /// The first and the last lines about it (each at most [`KEEP`]).
    pub first: Vec<String>,
    pub last: Vec<String>,
    /// Lines about it in all (of a kind or not).
    pub lines: u64,
    /// The sectors its I/O errors named (512-byte units; at most
    /// [`SECTORS`]).
    pub sectors: Vec<u64>,
    /// The speed its link last came back at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_up_at: Option<String>,
    /// The kernel's counters that moved, or were read, over the run.
    pub counters: Vec<Counter>,
    /// Its ATA port (`ata3`), whose lines are its link's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// What the run itself did to its link (a verify's `--power-cycle`
    /// cuts its slot's power, `--cycles` spins it down): its resets and
    /// link going down are then the run's, not a fault's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<String>,
    /// Lines the log dropped before they were read (its ring wrapped).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost: u64,
    /// Its lines of a kind while the run had its slot's power cut
    /// ([`Cuts`]): kept among its first and last, counted in no kind (the
    /// reads that reach a drive without power fail by the run's doing).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub while_cut: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Seen {
    /// Adds one line about the disk, logged while the run had its power
    /// `cut` or not.
    fn add(&mut self, text: &str, cut: bool) {
        self.lines += 1;
        let Some((kind, sector, speed)) = classify(text) else { return };
        if cut {
            self.while_cut += 1;
            self.keep(text);
            return;
        }
        *self.counts.entry(kind).or_default() += 1;
        if let Some(s) =
            sector.filter(|s| self.sectors.len() < SECTORS && !self.sectors.contains(s))
        {
            self.sectors.push(s);
        }
        if speed.is_some() {
            self.link_up_at = speed;
        }
        self.keep(text);
    }

    /// Keeps `text` among the first or the last lines.
    fn keep(&mut self, text: &str) {
        if self.first.len() < KEEP {
            self.first.push(text.to_string());
        } else {
            if self.last.len() == KEEP {
                self.last.remove(0);
            }
            self.last.push(text.to_string());
        }
    }

    /// How many lines of `kind`.
    pub fn count(&self, kind: Kind) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    /// The counters that rose over the run, but `iodone_cnt` (the
    /// commands done: it rises with every read).
    pub fn risen(&self) -> impl Iterator<Item = &Counter> {
        self.counters.iter().filter(|c| c.rose() > 0 && c.name != "iodone_cnt")
    }

    /// How much the counter named `name` rose.
    pub fn rose(&self, name: &str) -> u64 {
        self.counters.iter().filter(|c| c.name.starts_with(name)).map(Counter::rose).sum()
    }

    /// Timeouts: the lines, or the kernel's count where it is higher (it
    /// prints nothing for a timeout it recovers from).
    pub fn timeouts(&self) -> u64 {
        self.count(Kind::Timeout).max(self.rose("iotmo_cnt"))
    }

    /// Events of its path, not its media: resets, the link down,
    /// timeouts, aborts, failed commands, offline; none where the run
    /// made them itself (`planned`).
    pub fn path_events(&self) -> u64 {
        if self.planned.is_some() {
            return 0;
        }
        [Kind::Reset, Kind::LinkDown, Kind::Abort, Kind::FailedCommand, Kind::Offline]
            .iter()
            .map(|k| self.count(*k))
            .sum::<u64>()
            + self.timeouts()
    }
}

/// One record of `/dev/kmsg`: its text and the device it names
/// (`DEVICE=b8:16`, `+scsi:6:0:0:0`), where it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub text: String,
    pub device: Option<String>,
}

/// A record as `/dev/kmsg` gives it: `PRIO,SEQ,USEC,FLAGS;TEXT` then
/// ` KEY=VALUE` lines; its text up to its first escaped newline (`\x0a`:
/// the kernel escapes control characters as `\xNN`, and they stay so).
pub fn parse_record(raw: &str) -> Option<Record> {
    let mut lines = raw.lines();
    let (_, text) = lines.next()?.split_once(';')?;
    let device = lines
        .filter_map(|l| l.strip_prefix(' ')?.strip_prefix("DEVICE="))
        .map(str::to_string)
        .next();
    let text = text.split("\\x0a").next().unwrap_or(text).trim_end().to_string();
    Some(Record { text, device })
}

/// The kernel's counters of one disk and its path, as read now.
fn counters(paths: &SystemPaths, dev: &BlockDevice) -> Vec<(String, u64)> {
    let hex = |p: &Path| {
        let t = fs::read_to_string(p).ok()?;
        u64::from_str_radix(t.trim().trim_start_matches("0x"), 16).ok()
    };
    let device = paths.sys.join("block").join(&dev.identity.name).join("device");
    let mut out: Vec<(String, u64)> = ["ioerr_cnt", "iotmo_cnt", "iodone_cnt"]
        .into_iter()
        .filter_map(|c| Some((c.to_string(), hex(&device.join(c))?)))
        .collect();
    // PCIe AER of the controller's function and of the port above it.
    let Some(c) = &dev.identity.topology.controller else { return out };
    let function = paths.sys.join("bus/pci/devices").join(&c.pci);
    let port = fs::canonicalize(&function).ok().and_then(|f| f.parent().map(Path::to_path_buf));
    for (at, dir) in [(c.pci.clone(), Some(function)), ("port above".into(), port)] {
        let Some(dir) = dir else { continue };
        for (file, total, words) in [
            ("aer_dev_correctable", "TOTAL_ERR_COR", "aer correctable"),
            ("aer_dev_nonfatal", "TOTAL_ERR_NONFATAL", "aer nonfatal"),
            ("aer_dev_fatal", "TOTAL_ERR_FATAL", "aer fatal"),
        ] {
            let Ok(text) = fs::read_to_string(dir.join(file)) else { continue };
            let n = text.lines().find_map(|l| l.strip_prefix(total)?.trim().parse().ok());
            out.extend(n.map(|n| (format!("{words} ({at})"), n)));
        }
    }
    out
}

/// One disk as the watch follows it: the names its lines go by now,
/// what they said, and whether the run has its power cut.
struct Watched {
    /// Its device number as the run began (how the run names it when it
    /// tells of a cut).
    was: u64,
    device: BlockDevice,
    names: Names,
    /// Its counters when the watch began or the disk came back (none
    /// while its power is cut: what they do then is the run's).
    before: Vec<(String, u64)>,
    seen: Seen,
    cut: bool,
}

/// The log as it is being read, and the disks it is read for: one lock,
/// so that a line is taken under the names and the cut it was logged in.
struct Log {
    file: Option<Box<dyn Read + Send>>,
    disks: Vec<Watched>,
}

impl Log {
    /// Reads what the log holds now, each record about a disk added to its
    /// [`Seen`]; false where there is no log (an error reading it is tried
    /// again at the next look, never taken for a quiet log's end).
    fn read_now(&mut self, buf: &mut [u8]) -> bool {
        let Some(file) = self.file.as_mut() else { return false };
        loop {
            match file.read(buf) {
                Ok(0) => return true,
                Ok(n) => {
                    let Some(r) = parse_record(&String::from_utf8_lossy(&buf[..n])) else {
                        continue;
                    };
                    for d in &mut self.disks {
                        if d.names.named_in(&r.text, r.device.as_deref()) {
                            d.seen.add(&r.text, d.cut);
                        }
                    }
                }
                // The ring wrapped past what was not read: said, and on.
                Err(e) if e.raw_os_error() == Some(nix::libc::EPIPE) => {
                    self.disks.iter_mut().for_each(|d| d.seen.lost += 1);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }
}

/// The kernel's log, read from the run's start on a thread of its own,
/// and each disk's counters: [`Watch::finish`] says what it saw of each.
pub struct Watch {
    log: Arc<Mutex<Log>>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    not_read: Option<String>,
    paths: SystemPaths,
}

/// What the run itself does to its disks, told to their [`Watch`] as it
/// does it (a verify's `--power-cycle`): from the moment a disk's slot
/// power is cut until it is found again, its lines are the run's (a
/// drive losing its power fails the reads that reach it), kept and
/// counted but not sorted into kinds; once back, it is followed under the
/// names it came back with (another disk may take its old ones).
#[derive(Clone)]
pub struct Cuts {
    log: Arc<Mutex<Log>>,
    paths: SystemPaths,
}

impl Cuts {
    /// The disk whose device number was `was` as the run began has its
    /// power cut now: its lines logged before are taken as they were, and
    /// what its counters rose by until now.
    pub fn cut(&self, was: u64) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.read_now(&mut [0u8; 8192]);
        for d in log.disks.iter_mut().filter(|d| d.was == was) {
            d.cut = true;
            let now = counters(&self.paths, &d.device);
            add_counted(&mut d.seen, &std::mem::take(&mut d.before), &now);
        }
    }

    /// That disk answers again, as the device `now` (where its name could
    /// be resolved): its lines logged until now were of the cut; from now
    /// on it goes by the names of `now`, its counters counted from here
    /// (a drive back from its power starts them again).
    pub fn back(&self, was: u64, now: Option<&BlockDevice>) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.read_now(&mut [0u8; 8192]);
        for d in log.disks.iter_mut().filter(|d| d.was == was) {
            d.cut = false;
            if let Some(now) = now {
                d.names = Names::of(&self.paths, now);
                d.device = now.clone();
            }
            d.before = counters(&self.paths, &d.device);
        }
    }
}

/// What the counters of `before` rose by as read again (`after`), added
/// to `seen`'s: one entry a counter, however many times it was counted
/// (its `before` the first reading, its `after` that plus all it rose).
fn add_counted(seen: &mut Seen, before: &[(String, u64)], after: &[(String, u64)]) {
    for (name, b) in before {
        let Some(a) = after.iter().find(|(n, _)| n == name).map(|(_, a)| *a) else { continue };
        match seen.counters.iter_mut().find(|c| c.name == *name) {
            Some(c) => c.after += a.saturating_sub(*b),
            None => seen.counters.push(Counter { name: name.clone(), before: *b, after: a }),
        }
    }
}

/// Why `/dev/kmsg` could not be opened, in words.
fn why_unread(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::PermissionDenied => format!(
            "kernel log not read (/dev/kmsg: {e}: kernel.dmesg_restrict keeps it from all but root; run as root)"
        ),
        ErrorKind::NotFound => {
            "kernel log not read (no /dev/kmsg: a container without the host's kernel log)".into()
        }
        _ => format!("kernel log not read (/dev/kmsg: {e})"),
    }
}

impl Watch {
    /// Starts watching `devices`: the log from now on, their counters as
    /// they are now.
    pub fn start(paths: &SystemPaths, devices: &[BlockDevice]) -> Watch {
        Watch::start_at(paths, devices, Path::new("/dev/kmsg"))
    }

    /// [`Watch::start`] reading the log at `kmsg`.
    pub fn start_at(paths: &SystemPaths, devices: &[BlockDevice], kmsg: &Path) -> Watch {
        let opened = fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(kmsg)
            .and_then(|mut f| f.seek(SeekFrom::End(0)).map(|_| f));
        let opened = opened.map(|f| Box::new(f) as Box<dyn Read + Send>);
        Watch::reading(paths, devices, opened.map_err(|e| why_unread(&e)))
    }

    /// Starts watching `devices` in `log` (a record each read, as
    /// `/dev/kmsg` gives them; WouldBlock when none is new), or says why
    /// there is none.
    fn reading(
        paths: &SystemPaths,
        devices: &[BlockDevice],
        log: Result<Box<dyn Read + Send>, String>,
    ) -> Watch {
        let disks = devices
            .iter()
            .map(|d| {
                let names = Names::of(paths, d);
                let seen = Seen { port: names.ata.clone(), ..Seen::default() };
                let before = counters(paths, d);
                Watched { was: d.rdev, device: d.clone(), names, before, seen, cut: false }
            })
            .collect();
        let (file, not_read) = match log {
            Ok(file) => (Some(file), None),
            Err(why) => (None, Some(why)),
        };
        let reading = file.is_some();
        let log = Arc::new(Mutex::new(Log { file, disks }));
        let done = Arc::new(AtomicBool::new(false));
        let thread = reading
            .then(|| {
                let (log, done) = (log.clone(), done.clone());
                std::thread::Builder::new()
                    .name("kernel log".into())
                    .spawn(move || follow(&log, &done))
                    .ok()
            })
            .flatten();
        Watch { log, done, thread, not_read, paths: paths.clone() }
    }

    /// Where the run tells what it does to its disks.
    pub fn cuts(&self) -> Cuts {
        Cuts { log: self.log.clone(), paths: self.paths.clone() }
    }

    /// What the kernel saw of each disk (in the order given), its log
    /// read to now and its counters read again.
    pub fn finish(mut self) -> Vec<Seen> {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let disks = std::mem::take(&mut self.log.lock().unwrap_or_else(|e| e.into_inner()).disks);
        disks
            .into_iter()
            .map(|mut d| {
                d.seen.not_read.clone_from(&self.not_read);
                let after = counters(&self.paths, &d.device);
                add_counted(&mut d.seen, &d.before, &after);
                d.seen
            })
            .collect()
    }
}

impl Drop for Watch {
    /// A watch left unfinished (a run refused after it began) stops its
    /// thread at its next look.
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// Reads the log until `done`: every [`POLL`] while nothing is new, and
/// once more at the end.
fn follow(log: &Mutex<Log>, done: &AtomicBool) {
    let mut buf = vec![0u8; 8192];
    loop {
        let last = done.load(Ordering::SeqCst);
        if !log.lock().unwrap_or_else(|e| e.into_inner()).read_now(&mut buf) || last {
            return;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `fixtures/kernel/NAME` about the disk of `names`,
    /// added as the watch adds them.
    fn seen(name: &str, names: &Names) -> Seen {
        let p = format!("{}/fixtures/kernel/{name}", env!("CARGO_MANIFEST_DIR"));
        let mut s = Seen::default();
        for line in std::fs::read_to_string(p).unwrap().lines() {
            if names.named_in(line, None) {
                s.add(line, false);
            }
        }
        s
    }

    fn disk(name: &str, scsi: &str, ata: Option<&str>) -> Names {
        Names {
            name: name.into(),
            devno: "8:0".into(),
            scsi: Some(scsi.into()),
            ata: ata.map(str::to_string),
            nvme: Vec::new(),
        }
    }

    #[test]
    fn a_sata_link_reset_is_the_disks_with_the_speed_it_came_back_at() {
        let s = seen("sata-link-reset.txt", &disk("sda", "0:0:0:0", Some("ata1")));
        assert_eq!((s.count(Kind::Reset), s.count(Kind::LinkUp)), (1, 1), "{s:#?}");
        assert_eq!(s.link_up_at.as_deref(), Some("3.0 Gbps"));
        assert_eq!(s.lines, 7);
        // Another port's disk: none of it.
        assert_eq!(seen("sata-link-reset.txt", &disk("sdb", "1:0:0:0", Some("ata2"))).lines, 0);
        let s = seen("sata-bus-error.txt", &disk("sda", "1:0:0:0", Some("ata1")));
        assert_eq!(s.link_up_at.as_deref(), Some("1.5 Gbps"));
        assert_eq!(s.count(Kind::Reset), 1);
        assert_eq!(s.lines, 6, "its own sd lines too");
    }

    #[test]
    fn timeouts_behind_an_hba_go_to_each_disk_and_none_to_its_neighbour() {
        let a = seen("libsas-timeout.txt", &disk("sda", "6:0:0:0", Some("ata7")));
        assert_eq!(
            (a.count(Kind::Timeout), a.count(Kind::FailedCommand), a.count(Kind::Reset)),
            (1, 1, 1),
            "{a:#?}"
        );
        let b = seen("libsas-timeout.txt", &disk("sdb", "6:0:1:0", Some("ata8")));
        assert_eq!(
            (b.count(Kind::Timeout), b.count(Kind::FailedCommand), b.count(Kind::Reset)),
            (1, 1, 0)
        );
        // A disk of another host whose address ends alike: nothing.
        assert_eq!(seen("libsas-timeout.txt", &disk("sdq", "16:0:0:0", None)).lines, 0);
    }

    #[test]
    fn an_nvme_controllers_timeouts_and_reset_are_its_namespaces() {
        let names =
            Names { name: "nvme0n1".into(), nvme: vec!["nvme0".into()], ..Names::default() };
        let s = seen("nvme-timeout.txt", &names);
        assert_eq!((s.count(Kind::Timeout), s.count(Kind::Abort)), (3, 1), "{s:#?}");
        let other =
            Names { name: "nvme1n1".into(), nvme: vec!["nvme1".into()], ..Names::default() };
        assert_eq!(seen("nvme-timeout.txt", &other).lines, 0);
        // A partition's line is its disk's; nvme0n10's is not nvme0n1's.
        assert!(names.named_in("Buffer I/O error on dev nvme0n1p2, logical block 0", None));
        assert!(!names.named_in("I/O error, dev nvme0n10, sector 8", None));
        assert!(
            disk("sdc", "1:0:0:0", None)
                .named_in("Buffer I/O error on dev sdc1, logical block 0", None)
        );
        assert!(!disk("sdc", "1:0:0:0", None).named_in("I/O error, dev sdca, sector 8", None));
    }

    #[test]
    fn a_shared_namespaces_controllers_are_found_under_its_subsystem() {
        // As the lab's kernel lays out one controller's namespace, and as
        // native multipath lays out a namespace two controllers share.
        let t = tempfile::tempdir().unwrap();
        let sys = t.path().join("sys");
        let make = |block: &str, device: &str, children: &[&str]| {
            let dir = sys.join("devices").join(device);
            for c in children {
                fs::create_dir_all(dir.join(c)).unwrap();
            }
            fs::create_dir_all(sys.join("block").join(block)).unwrap();
            std::os::unix::fs::symlink(&dir, sys.join("block").join(block).join("device")).unwrap();
        };
        make("nvme0n1", "pci0000:00/0000:00:03.0/nvme/nvme0", &["nvme0n1"]);
        make("nvme1n1", "virtual/nvme-subsystem/nvme-subsys1", &["nvme1", "nvme2", "nvme1n1"]);
        let paths = SystemPaths { sys, ..SystemPaths::real() };
        let of = |name: &str| {
            let dev = crate::device::BlockDevice {
                given: format!("/dev/{name}"),
                identity: serde_json::from_value(serde_json::json!({
                    "name": name, "dev_path": format!("/dev/{name}"), "by_id": null, "vendor": null,
                    "model": null, "serial": null, "firmware": null, "size_bytes": 0,
                    "logical_block_size": 512, "physical_block_size": 512, "rotational": false,
                    "removable": false, "read_only": false, "devno": "259:0"
                }))
                .unwrap(),
                partition_of: None,
                in_use: Vec::new(),
                rdev: 0,
            };
            Names::of(&paths, &dev)
        };
        assert_eq!(of("nvme0n1").nvme, ["nvme0"]);
        let shared = of("nvme1n1");
        assert_eq!(shared.nvme, ["nvme1", "nvme2"]);
        assert!(shared.named_in("nvme nvme2: I/O 12 QID 3 timeout, aborting", None));
        assert!(!shared.named_in("nvme nvme0: I/O 12 QID 3 timeout, aborting", None));
    }

    #[test]
    fn a_reset_by_the_hba_and_a_timeout_that_failed_the_read_are_told_with_its_sector() {
        let s = seen("mpt3sas-reset.txt", &disk("sdc", "18:0:0:0", None));
        assert_eq!((s.count(Kind::Reset), s.lines), (1, 2), "{s:#?}");
        let s = seen("lab-scsi-debug-timeout.txt", &disk("sdb", "6:0:0:0", None));
        assert_eq!((s.count(Kind::Timeout), s.count(Kind::IoError)), (1, 1), "{s:#?}");
        assert_eq!(s.sectors, [130_480]);
        // By kmsg's own device field, whatever the text.
        let by = Names { devno: "8:16".into(), ..disk("sdb", "6:0:0:0", None) };
        assert!(by.named_in("critical medium error", Some("b8:16")));
        assert!(by.named_in("Power-on or device reset occurred", Some("+scsi:6:0:0:0")));
        assert!(!by.named_in("Power-on or device reset occurred", Some("+scsi:6:0:1:0")));
    }

    #[test]
    fn a_megaraid_volume_reset_until_offline_is_its_own() {
        let s = seen("megaraid-reset.txt", &disk("sda", "0:2:0:0", None));
        assert_eq!(
            (s.count(Kind::Reset), s.count(Kind::Offline), s.count(Kind::IoError)),
            (2, 1, 1),
            "{s:#?}"
        );
        assert_eq!((s.sectors.as_slice(), s.path_events()), (&[115_180][..], 3));
        // The controller's own lines name no disk: another volume's run
        // takes none of them.
        assert_eq!(seen("megaraid-reset.txt", &disk("sdb", "0:2:1:0", None)).lines, 0);
    }

    #[test]
    fn a_disk_keeps_its_first_and_last_lines_only() {
        let mut s = Seen::default();
        for i in 0..1000 {
            s.add(&format!("I/O error, dev sdb, sector {i} op 0x0:(READ)"), false);
        }
        assert_eq!((s.first.len(), s.last.len(), s.lines), (KEEP, KEEP, 1000));
        assert!(s.last[KEEP - 1].contains("sector 999"));
        assert_eq!((s.sectors.len(), s.count(Kind::IoError)), (SECTORS, 1000));
    }

    #[test]
    fn an_unreadable_log_is_said_with_why() {
        let t = tempfile::tempdir().unwrap();
        let w = Watch::start_at(&SystemPaths::real(), &[], &t.path().join("kmsg"));
        assert!(
            w.not_read
                .as_deref()
                .is_some_and(|w| w.starts_with("kernel log not read (no /dev/kmsg"))
        );
        assert!(w.finish().is_empty());
    }

    /// A log as `/dev/kmsg` reads: a record a read, WouldBlock when none
    /// is new; `put` logs one.
    #[derive(Clone, Default)]
    struct Kmsg(Arc<Mutex<std::collections::VecDeque<String>>>);

    impl Kmsg {
        fn put(&self, text: &str) {
            self.0.lock().unwrap().push_back(format!("3,1,1,-;{text}\n"));
        }
    }

    impl Read for Kmsg {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some(r) = self.0.lock().unwrap().pop_front() else {
                return Err(ErrorKind::WouldBlock.into());
            };
            buf[..r.len()].copy_from_slice(r.as_bytes());
            Ok(r.len())
        }
    }

    fn loop_disk(n: u64) -> BlockDevice {
        let name = format!("loop{n}");
        BlockDevice {
            given: "/dev/disk/by-id/wwn-0x5000".into(),
            identity: serde_json::from_value(serde_json::json!({
                "name": name, "dev_path": format!("/dev/{name}"), "by_id": null, "vendor": null,
                "model": null, "serial": null, "firmware": null, "size_bytes": 0,
                "logical_block_size": 512, "physical_block_size": 512, "rotational": false,
                "removable": false, "read_only": false, "devno": format!("7:{n}")
            }))
            .unwrap(),
            partition_of: None,
            in_use: Vec::new(),
            rdev: 7 << 8 | n,
        }
    }

    #[test]
    fn what_the_log_says_while_the_run_cut_a_disks_power_is_the_runs_and_it_is_followed_where_it_comes_back()
     {
        let t = tempfile::tempdir().unwrap();
        let paths = SystemPaths { sys: t.path().to_path_buf(), ..SystemPaths::real() };
        let (kmsg, was, now) = (Kmsg::default(), loop_disk(6), loop_disk(8));
        let ioerr = |name: &str, n: u64| {
            let dir = t.path().join("block").join(name).join("device");
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("ioerr_cnt"), format!("{n:#x}\n")).unwrap();
        };
        ioerr("loop6", 1);
        let w = Watch::reading(&paths, std::slice::from_ref(&was), Ok(Box::new(kmsg.clone())));
        let cuts = w.cuts();
        // Its failed commands: 2 before the cut, 6 more while its power is
        // cut (the run's), 1 on the device it came back as.
        ioerr("loop6", 3);
        let error = |dev: &str, at: u64| {
            format!("I/O error, dev {dev}, sector {at} op 0x0:(READ) flags 0x800 phys_seg 1")
        };
        // Before the cut: the disk's, whenever the watch reads it.
        kmsg.put(&error("loop6", 100));
        cuts.cut(was.rdev);
        // Its reads failing while it has no power, and the kernel dropping
        // it: the run's.
        kmsg.put(&error("loop6", 0));
        kmsg.put("sd 0:0:12:0: rejecting I/O to offline device, dev loop6");
        ioerr("loop6", 9);
        ioerr("loop8", 0);
        cuts.back(was.rdev, Some(&now));
        ioerr("loop8", 1);
        // Back as loop8: loop6 is another disk's now; loop8's are its own.
        kmsg.put(&error("loop6", 4));
        kmsg.put(&error("loop8", 200));
        let s = w.finish().pop().unwrap();
        assert_eq!((s.count(Kind::IoError), s.count(Kind::Offline)), (2, 0), "{s:#?}");
        assert_eq!((s.sectors.as_slice(), s.while_cut, s.lines), (&[100, 200][..], 2, 4), "{s:#?}");
        assert!(s.first[1].contains("sector 0") && s.first[2].contains("rejecting"), "{s:#?}");
        assert_eq!((s.rose("ioerr_cnt"), s.counters.len()), (3, 1), "{s:#?}");
        // Cut and never back: nothing after the cut is judged.
        let kmsg = Kmsg::default();
        let w = Watch::reading(&paths, std::slice::from_ref(&was), Ok(Box::new(kmsg.clone())));
        w.cuts().cut(was.rdev);
        kmsg.put(&error("loop6", 0));
        let s = w.finish().pop().unwrap();
        assert_eq!((s.count(Kind::IoError), s.while_cut), (0, 1), "{s:#?}");
    }

    #[test]
    fn a_kmsg_record_gives_its_text_and_device() {
        let raw = "6,417,38233115,-;sd 6:0:0:0: [sdb] tag#155 FAILED Result: hostbyte=DID_TIME_OUT driverbyte=DRIVER_OK cmd_age=31s\n SUBSYSTEM=scsi\n DEVICE=+scsi:6:0:0:0\n";
        let r = parse_record(raw).unwrap();
        assert!(r.text.starts_with("sd 6:0:0:0: [sdb] tag#155 FAILED"));
        assert_eq!(r.device.as_deref(), Some("+scsi:6:0:0:0"));
        let r = parse_record("6,406,6228792,-;scsi host6: scsi_debug: version 0191 [20210520]\\x0a  dev_size_mb=64\n").unwrap();
        assert_eq!(
            (r.text.as_str(), r.device),
            ("scsi host6: scsi_debug: version 0191 [20210520]", None)
        );
    }
}

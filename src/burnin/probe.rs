//! The capacity probe (`inspect --probe --destructive`): how much of what
//! a drive announces holds what is written to it, in seconds at any size,
//! as f3probe does and with more models of fake capacity caught.
//!
//! Every block it writes is one of the burn-in's self-identifying blocks
//! (`burnin::block`: this probe's run, a round as its pass, its own
//! offset, a CRC), so a block read back says whether it is its own,
//! another block's (the drive maps two addresses onto one place: wrapped
//! or aliased capacity), or nothing of ours (the write was lost, a read
//! error, a damaged block). Three steps:
//!
//! 1. **Writes**: a run of blocks from the start ([`run_blocks`]: about
//!    √(size × 2 MB), at most 1 GiB), 64 blocks spread over the rest and
//!    the announced last block; then a flush.
//! 2. **Reads**: the spread blocks and three of the run, and, unwritten,
//!    every run's length across the disk. A drive that maps an address
//!    past its real end onto the start by a fixed shift (a wrap at a power
//!    of two, as f3probe assumes, or any other shift onto the first run)
//!    answers one of these reads with a run block's data; a drive that
//!    drops writes past its end answers a spread block with nothing of
//!    ours. The lowest such block bounds the real end (the reads across
//!    stop there).
//! 3. **Bisection** between the highest block that held its own data and
//!    that bound: a fresh block written, flushed and read back, and read
//!    at its shift where one was seen, about 30 rounds at any size.
//!
//! What it cannot see, said in its result: a remap onto a place past the
//! first run, a drive that returns the written data from a cache while
//! dropping it (the flush is asked for; a cache that ignores it is not
//! overwhelmed). The burn-in's full write-verify finds those.
//!
//! It destroys the data in the blocks it writes; it must not be run
//! without `--destructive` (the plan refuses it), nor decide what its
//! result means (`judge::inspect` does).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::burnin::block::{BLOCK, Stamp, VERSION, fill, stamp_of};
use crate::burnin::targets::Target;
use crate::io::{Bounds, Halt, Probe as BlockIo, Until};
use crate::stop::StopFlag;

/// How blocks past the usable size fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "how")]
pub enum Past {
    /// They are the same place as blocks `shift_bytes` lower (a wrap).
    Aliased { shift_bytes: u64 },
    /// They keep nothing written to them (or fail to read).
    Lost,
}

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probed {
    /// The capacity the drive announces.
    pub announced_bytes: u64,
    /// Bytes from the start that hold what was written to them: exact to
    /// one `block` where `past` says how the rest fails; the announced
    /// size where nothing failed.
    pub usable_bytes: u64,
    /// The probe's block (bytes).
    pub block: u64,
    /// How the blocks past the usable size fail; None where none failed.
    pub past: Option<Past>,
    pub written_bytes: u64,
    pub reads: u64,
    pub seconds: f64,
    /// Why the probe did not finish, where it did not (a stop, a disk
    /// that hung or failed): the usable size is then a bound only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

impl Probed {
    /// A probe of a disk of `size` bytes that did not run, and why: its
    /// usable size is not known (the announced one, as a bound).
    fn not_run(size: u64, why: String) -> Self {
        Probed {
            announced_bytes: size,
            usable_bytes: size,
            block: 4096,
            past: None,
            written_bytes: 0,
            reads: 0,
            seconds: 0.0,
            incomplete: Some(why),
        }
    }

    /// Whether blocks past the usable size were found.
    pub fn fake(&self) -> bool {
        self.past.is_some()
    }
}

/// What a block read back holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A block of this probe: its place (in probe blocks) and round.
    Ours { block: u64, round: u16 },
    /// Nothing of this probe (old data, zeros, a lost write, a damaged
    /// block), or a read error.
    Nothing,
}

/// The disk field of the probe's blocks (the burn-in's carry a hash of
/// the disk's identity; a probe's blocks are told by their run alone).
const PROBE_DISK: u32 = 0x5052_4f42;

/// The stamp of this probe's round `round`.
fn stamp(salt: u64, round: u16) -> Stamp {
    Stamp { run: salt, pass: round, disk: PROBE_DISK, version: VERSION }
}

/// Whose block `buf` is, in blocks of `size` bytes: its first 4 KiB is one
/// of the burn-in's self-identifying blocks (`burnin::block`), whole, of
/// this probe's run.
fn held(buf: &[u8], size: u64, salt: u64) -> Held {
    match stamp_of(&buf[..BLOCK]) {
        Some((s, offset)) if s.run == salt && s.disk == PROBE_DISK => {
            Held::Ours { block: offset / size, round: s.pass }
        }
        _ => Held::Nothing,
    }
}

/// The first run's length in blocks: about √(size × 2 MB) (its write
/// time and the reads across the disk balanced for a disk that seeks in
/// 10 ms at 200 MB/s), at least 16 blocks, at most 1 GiB and a sixteenth
/// of the disk.
pub fn run_blocks(size: u64, block: u64) -> u64 {
    let ideal = ((size as f64) * 2e6).sqrt() as u64 / block;
    let most = ((1u64 << 30) / block).min(size / block / 16);
    ideal.clamp(16.min(most), most.max(1))
}

/// The probe at work on one disk.
struct Work<'a> {
    io: &'a mut BlockIo,
    block: u64,
    salt: u64,
    round: u16,
    written: u64,
    reads: u64,
}

/// Why the probe stopped early.
#[derive(Debug)]
struct Cut(String);

impl From<Halt> for Cut {
    fn from(h: Halt) -> Self {
        Cut(match h {
            Halt::Stopped => "stopped by a signal".into(),
            Halt::Hung => "the disk did not answer within --io-timeout".into(),
            Halt::Late => "out of time".into(),
        })
    }
}

impl Work<'_> {
    /// Writes `count` consecutive blocks from `first` (this round's), in
    /// requests of at most 1 MiB.
    fn write(&mut self, first: u64, count: u64) -> Result<(), Cut> {
        let per = ((1u64 << 20) / self.block).max(1);
        let mut buf = vec![0u8; (per.min(count) * self.block) as usize];
        let mut at = first;
        while at < first + count {
            let n = per.min(first + count - at);
            let len = (n * self.block) as usize;
            fill(&mut buf[..len], at * self.block, stamp(self.salt, self.round));
            // A write that fails is found when the block is read.
            let _ = self.io.write(&buf[..len], at * self.block, Until::Stop)?;
            self.written += len as u64;
            at += n;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Cut> {
        let _ = self.io.sync(Until::Stop)?;
        Ok(())
    }

    fn read(&mut self, block: u64) -> Result<Held, Cut> {
        self.reads += 1;
        let (size, salt) = (self.block, self.salt);
        Ok(match self.io.read_at(block * size, size as usize, Until::Stop)? {
            Ok(buf) => held(buf, size, salt),
            Err(_) => Held::Nothing,
        })
    }
}

/// What the reads of step 2 showed: the lowest block found bad, and the
/// shift of an alias where one was seen.
#[derive(Debug, Default)]
struct Seen {
    bad: Option<u64>,
    shift: Option<u64>,
}

impl Seen {
    fn bad_at(&mut self, block: u64) {
        self.bad = Some(self.bad.map_or(block, |b| b.min(block)));
    }

    /// Block `at` (written in round 0 where `written`) read back `h`.
    fn saw(&mut self, at: u64, written: bool, h: Held) {
        match h {
            Held::Ours { block, round: 0 } if block == at => {}
            // Another block's data: the higher of the two is the same place
            // as the lower.
            Held::Ours { block, .. } if block != at => {
                let (hi, lo) = (at.max(block), at.min(block));
                if self.bad.is_none_or(|b| hi < b) {
                    self.shift = Some(hi - lo);
                }
                self.bad_at(hi);
            }
            Held::Nothing if written => self.bad_at(at),
            Held::Ours { .. } | Held::Nothing => {}
        }
    }
}

/// Probes a disk of `size` bytes through `io` in blocks of `block` bytes
/// (a multiple of its logical block size), with this run's `salt`.
pub fn probe(io: &mut BlockIo, size: u64, block: u64, salt: u64) -> Probed {
    let began = Instant::now();
    let mut w = Work { io, block, salt, round: 0, written: 0, reads: 0 };
    let blocks = size / block;
    let found = search(&mut w, blocks);
    let (usable, past, incomplete) = match found {
        Ok((usable, past)) => (usable, past, None),
        Err((usable, past, Cut(why))) => (usable, past, Some(why)),
    };
    Probed {
        announced_bytes: size,
        usable_bytes: if past.is_some() { usable * block } else { size },
        block,
        past,
        written_bytes: w.written,
        reads: w.reads,
        seconds: began.elapsed().as_secs_f64(),
        incomplete,
    }
}

type Found = (u64, Option<Past>);

/// Steps 1 to 3: the first block that failed and how, or the whole disk.
fn search(w: &mut Work, blocks: u64) -> Result<Found, (u64, Option<Past>, Cut)> {
    let whole = |c: Cut| (blocks, None, c);
    if blocks < 2 {
        return Ok((blocks, None));
    }
    let run = run_blocks(blocks * w.block, w.block).min(blocks);
    w.write(0, run).map_err(whole)?;
    let spread: Vec<u64> = {
        let rest = blocks - run;
        let mut s: Vec<u64> =
            (0..64).map(|i| run + i * rest / 64).filter(|b| *b < blocks).collect();
        s.push(blocks - 1);
        s.dedup();
        s
    };
    for &b in &spread {
        w.write(b, 1).map_err(whole)?;
    }
    w.flush().map_err(whole)?;
    let mut seen = Seen::default();
    let mut first_lost = false;
    for b in [0, run / 2, run - 1].into_iter().chain(spread.iter().copied()) {
        let h = w.read(b).map_err(whole)?;
        first_lost |= b == 0 && h == Held::Nothing;
        seen.saw(b, true, h);
    }
    // Reads past a block already found bad can only find a higher bound.
    let mut at = run;
    while at < blocks && seen.bad.is_none_or(|b| at < b) {
        if !spread.contains(&at) {
            let h = w.read(at).map_err(whole)?;
            seen.saw(at, false, h);
        }
        at += run;
    }
    let Some(hi) = seen.bad else {
        return Ok((blocks, None));
    };
    let past = match seen.shift {
        Some(s) => Past::Aliased { shift_bytes: s * w.block },
        None => Past::Lost,
    };
    // Block 0 is a place of its own unless it kept nothing (a block read
    // back as its own may be another's place: only the bisection, knowing
    // the shift, tells).
    let lo = (seen.bad != Some(0) && !first_lost).then_some(0);
    bisect(w, lo, hi, seen.shift).map(|b| (b, Some(past))).map_err(|(b, c)| (b, Some(past), c))
}

/// The first block in (lo, hi] that does not keep its own data (`hi` does
/// not; `lo` does, where known): each round writes a fresh block, flushes
/// it, reads it back and, where a shift was seen, reads where it would
/// land.
fn bisect(
    w: &mut Work,
    lo: Option<u64>,
    mut hi: u64,
    shift: Option<u64>,
) -> Result<u64, (u64, Cut)> {
    let Some(mut lo) = lo else {
        return Ok(0);
    };
    while hi - lo > 1 {
        let m = lo + (hi - lo) / 2;
        w.round += 1;
        let round = w.round;
        let bad = (|| -> Result<bool, Cut> {
            w.write(m, 1)?;
            w.flush()?;
            if w.read(m)? != (Held::Ours { block: m, round }) {
                return Ok(true);
            }
            match shift.filter(|s| m >= *s) {
                Some(s) => Ok(w.read(m - s)? == Held::Ours { block: m, round }),
                None => Ok(false),
            }
        })()
        .map_err(|c| (hi, c))?;
        if bad { hi = m } else { lo = m }
    }
    Ok(hi)
}

/// Probes each disk at once, each bound by `timeout` (a hung disk) and
/// `stop`; a disk that cannot be probed says why in its result.
pub fn probe_all(disks: &[&Target], timeout: Duration, stop: &StopFlag) -> Vec<Probed> {
    let salt = salt();
    std::thread::scope(|s| {
        let each: Vec<_> = (disks.iter())
            .map(|&t| {
                s.spawn(move || {
                    let id = &t.dev.identity;
                    let block = 4096u64
                        .max(u64::from(id.logical_block_size))
                        .max(u64::from(id.physical_block_size));
                    let bounds = Bounds::new(stop, timeout);
                    match BlockIo::of(&t.file, &bounds) {
                        Ok(mut io) => probe(&mut io, id.size_bytes, block, salt),
                        Err(e) => Probed::not_run(id.size_bytes, format!("could not start: {e}")),
                    }
                })
            })
            .collect();
        each.into_iter()
            .zip(disks)
            .map(|(h, t)| {
                h.join().unwrap_or_else(|_| {
                    Probed::not_run(t.dev.identity.size_bytes, "the probe failed".into())
                })
            })
            .collect()
    })
}

/// A salt of this run: its time and pid.
pub fn salt() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    (t.as_nanos() as u64) ^ (u64::from(std::process::id()) << 40) ^ 0x5DEE_CE66_D1CE_4E5B
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Medium;
    use std::sync::{Arc, Mutex};

    /// A drive in memory that keeps `real` bytes: an address past them is
    /// the place `shift` lower (a wrap), or keeps nothing and reads zeros.
    #[derive(Clone)]
    struct Fake {
        mem: Arc<Mutex<std::collections::HashMap<u64, Vec<u8>>>>,
        real: u64,
        shift: Option<u64>,
    }

    impl Fake {
        fn place(&self, off: u64) -> Option<u64> {
            if off < self.real {
                return Some(off);
            }
            self.shift.map(|s| off - s)
        }
    }

    impl Medium for Fake {
        fn read_at(&self, dst: &mut [u8], offset: u64) -> std::io::Result<usize> {
            let mem = self.mem.lock().unwrap();
            for (i, s) in dst.chunks_mut(512).enumerate() {
                let at = offset + i as u64 * 512;
                match self.place(at).and_then(|p| mem.get(&p)) {
                    Some(b) => s.copy_from_slice(b),
                    None => s.fill(0),
                }
            }
            Ok(dst.len())
        }
        fn write_all_at(&self, src: &[u8], offset: u64) -> std::io::Result<()> {
            let mut mem = self.mem.lock().unwrap();
            for (i, s) in src.chunks(512).enumerate() {
                if let Some(p) = self.place(offset + i as u64 * 512) {
                    mem.insert(p, s.to_vec());
                }
            }
            Ok(())
        }
        fn sync_data(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn run(size: u64, real: u64, shift: Option<u64>) -> Probed {
        let fake = Fake { mem: Arc::default(), real, shift };
        let bounds = Bounds::new(&StopFlag::default(), Duration::from_secs(30));
        let mut io = BlockIo::on(fake, &bounds).unwrap();
        probe(&mut io, size, 4096, 42)
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_whole_drive_is_usable_to_its_end() {
        let p = run(GIB, GIB, None);
        assert_eq!((p.usable_bytes, p.past, p.incomplete.clone()), (GIB, None, None));
    }

    #[test]
    fn a_wrap_at_a_power_of_two_is_found_to_the_block() {
        let p = run(GIB, GIB / 2, Some(GIB / 2));
        assert_eq!(p.usable_bytes, GIB / 2);
        assert_eq!(p.past, Some(Past::Aliased { shift_bytes: GIB / 2 }));
    }

    #[test]
    fn any_shift_onto_the_start_and_lost_writes_are_found_to_the_block() {
        // 700 MiB and three blocks real, the rest wrapping onto the start.
        let real = 700 * (1 << 20) + 3 * 4096;
        let p = run(GIB, real, Some(real));
        assert_eq!(p.usable_bytes, real, "{p:?}");
        // Writes past the real end kept nowhere.
        let real = 300 * (1 << 20) + 5 * 4096;
        let p = run(GIB, real, None);
        assert_eq!((p.usable_bytes, p.past), (real, Some(Past::Lost)), "{p:?}");
    }

    #[test]
    fn a_drive_that_keeps_nothing_has_no_usable_bytes() {
        let p = run(GIB, 0, None);
        assert_eq!(p.usable_bytes, 0, "{p:?}");
    }

    #[test]
    fn the_first_run_is_balanced_and_bounded() {
        assert_eq!(run_blocks(GIB, 4096), (GIB as f64 * 2e6).sqrt() as u64 / 4096);
        assert_eq!(run_blocks(16 << 40, 4096), (1 << 30) / 4096);
        assert_eq!(run_blocks(64 * 4096, 4096), 4);
    }

    #[test]
    fn a_block_is_told_by_its_own_content() {
        let mut b = vec![0u8; 4096];
        fill(&mut b, 123 * 4096, stamp(7, 2));
        assert_eq!(held(&b, 4096, 7), Held::Ours { block: 123, round: 2 });
        assert_eq!(held(&b, 4096, 8), Held::Nothing);
        b[4000] ^= 1;
        assert_eq!(held(&b, 4096, 7), Held::Nothing);
        // A burn-in's block of the same run number is not the probe's.
        fill(&mut b, 123 * 4096, Stamp { run: 7, pass: 2, disk: 1, version: VERSION });
        assert_eq!(held(&b, 4096, 7), Held::Nothing);
    }
}

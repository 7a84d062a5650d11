//! One disk's burn-in: for each pass, write every block of the range
//! (self-identifying, see `block`), flush the disk's cache (fdatasync)
//! before the write phase counts as done, then read everything back and
//! classify every block that is not what was written. A failed write or
//! read is pinpointed to its 4 KiB blocks and the disk carries on; a device
//! that goes away ends its run. It only measures and classifies: verdicts
//! are `judge::burnin`'s.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::block::{BLOCK, Found, Stamp, check_all, fill};
use super::plan::Target;
use crossbeam_channel::bounded;

use crate::device::buffer::AlignedBuf;
use crate::measure::StopFlag;

/// At most this many findings are kept per disk (all are counted).
pub const MAX_FINDINGS: usize = 64;

/// What went wrong with a range of blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The write failed (an I/O error).
    WriteError,
    /// Flushing the disk's cache failed: what it holds is not known.
    FlushError,
    /// The read-back failed (an I/O error).
    ReadError,
    /// Our block with bits changed (media, cable, memory).
    Corrupted,
    /// A valid block that belongs elsewhere (a misdirected write, fake
    /// capacity wrapping around, or another disk's block).
    Misdirected,
    /// A valid block from an earlier pass or run: the write was lost.
    Stale,
    /// Zeros or data that is not a burn-in block.
    Foreign,
}

/// One range of blocks with one fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Pass (from 1).
    pub pass: u16,
    /// First byte, and length in bytes.
    pub offset: u64,
    pub len: u64,
    pub class: Class,
    /// What was found, in words.
    pub detail: String,
}

/// What one disk's burn-in measured and found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DiskBurn {
    /// Bytes written (and flushed), and the seconds that took.
    pub written_bytes: u64,
    pub write_s: f64,
    /// Bytes read back, and the seconds that took.
    pub verified_bytes: u64,
    pub verify_s: f64,
    /// Bytes per fault class.
    pub bad_bytes: Vec<(Class, u64)>,
    /// The first ranges found (at most [`MAX_FINDINGS`]).
    pub findings: Vec<Finding>,
    /// Passes completed.
    pub passes_done: u16,
    /// The device went away: its run ended there.
    pub device_gone: bool,
    /// A signal stopped the run.
    pub interrupted: bool,
}

impl DiskBurn {
    /// Records `len` bad bytes at `offset`, merging with the last range
    /// when it continues it.
    fn add(&mut self, pass: u16, offset: u64, len: u64, class: Class, detail: String) {
        match self.bad_bytes.iter_mut().find(|(c, _)| *c == class) {
            Some((_, n)) => *n += len,
            None => self.bad_bytes.push((class, len)),
        }
        if let Some(last) = self.findings.last_mut()
            && last.class == class
            && last.pass == pass
            && last.offset + last.len == offset
            && last.detail == detail
        {
            last.len += len;
            return;
        }
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(Finding {
                pass,
                offset,
                len,
                class,
                detail,
            });
        }
    }

    /// Bytes found bad, all classes.
    pub fn total_bad(&self) -> u64 {
        self.bad_bytes.iter().map(|(_, n)| n).sum()
    }
}

/// Live progress of one disk for the display: bytes done in the current
/// phase, and the phase (pass × 2, + 1 while verifying).
#[derive(Debug, Default)]
pub struct Live {
    pub done: AtomicU64,
    pub phase: AtomicU64,
}

/// Whether an I/O error means the device itself is gone.
fn gone(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(nix::libc::ENODEV | nix::libc::ENXIO))
}

/// Words for a block that is not what was written.
/// `at`: where the block was read. A misdirected block is described by how
/// far away it belongs, so that a run of them (fake capacity wrapping
/// around) is one range.
fn describe(found: Found, stamp: Stamp, at: u64) -> (Class, String) {
    match found {
        Found::Good => unreachable!("good blocks are not findings"),
        Found::Corrupted => (Class::Corrupted, "bits changed (CRC32C fails)".into()),
        Found::Misdirected { offset, disk } if disk == stamp.disk => {
            let (by, way) = if offset > at {
                (offset - at, "further on")
            } else {
                (at - offset, "earlier")
            };
            (
                Class::Misdirected,
                format!(
                    "holds the blocks written {by} bytes {way} (the disk wraps around, or writes land elsewhere)"
                ),
            )
        }
        Found::Misdirected { offset, .. } => (
            Class::Misdirected,
            format!("holds another disk's block (its byte {offset})"),
        ),
        Found::Stale { run, pass } if run == stamp.run => (
            Class::Stale,
            format!(
                "holds pass {pass}'s block: the write of pass {} was lost",
                stamp.pass
            ),
        ),
        Found::Stale { .. } => (
            Class::Stale,
            "holds an earlier burn-in's block: the write was lost".into(),
        ),
        Found::Foreign { zeros: true } => (Class::Foreign, "reads back as zeros".into()),
        Found::Foreign { zeros: false } => (
            Class::Foreign,
            "holds data that is not a burn-in block".into(),
        ),
    }
}

/// Burns in one disk: `passes` write-flush-verify rounds over its range in
/// I/O of `io` bytes (a multiple of 4 KiB).
pub fn burn(
    t: &Target,
    io: usize,
    passes: u16,
    run: u64,
    stop: &StopFlag,
    live: &Live,
) -> DiskBurn {
    let mut out = DiskBurn::default();
    let mut buf = AlignedBuf::new(io);
    for pass in 1..=passes {
        let stamp = Stamp {
            run,
            pass,
            disk: t.disk,
        };
        let p = Pass {
            t,
            io,
            stamp,
            stop,
            live,
        };
        live.phase.store(u64::from(pass) * 2, Ordering::Relaxed);
        if !p.write(&mut out) {
            break;
        }
        live.phase.store(u64::from(pass) * 2 + 1, Ordering::Relaxed);
        if !p.verify(&mut buf, &mut out) {
            break;
        }
        out.passes_done = pass;
    }
    out.interrupted = stop.is_set();
    out
}

/// The chunks of the range: (offset, length).
fn chunks(t: &Target, io: usize) -> impl Iterator<Item = (u64, usize)> {
    let (start, end) = (t.start, t.end);
    (start..end)
        .step_by(io)
        .map(move |at| (at, (end - at).min(io as u64) as usize))
}

/// One pass over one disk.
struct Pass<'a> {
    t: &'a Target,
    io: usize,
    stamp: Stamp,
    stop: &'a StopFlag,
    live: &'a Live,
}

impl Pass<'_> {
    /// Writes the pass's blocks and flushes; false when the run must end.
    fn write(&self, out: &mut DiskBurn) -> bool {
        let (t, io, stamp, stop, live) = (self.t, self.io, self.stamp, self.stop, self.live);
        let f: &File = &t.file;
        let began = Instant::now();
        let (written, go_on) = std::thread::scope(|s| {
            // A second thread generates the next buffer's blocks while this
            // one writes the last: two buffers go round.
            let (empty_tx, empty_rx) = bounded::<AlignedBuf>(2);
            let (full_tx, full_rx) = bounded::<(AlignedBuf, u64, usize)>(2);
            for _ in 0..2 {
                let _ = empty_tx.send(AlignedBuf::new(io));
            }
            s.spawn(move || {
                for (at, len) in chunks(t, io) {
                    let Ok(mut b) = empty_rx.recv() else { return };
                    fill(b.slice_mut(len), at, stamp);
                    if full_tx.send((b, at, len)).is_err() {
                        return;
                    }
                }
            });
            let mut written = 0;
            let mut go_on = true;
            'chunks: for (mut b, at, len) in full_rx.iter() {
                if stop.is_set() {
                    go_on = false;
                    break;
                }
                let chunk = b.slice_mut(len);
                if let Err(e) = f.write_all_at(chunk, at) {
                    if gone(&e) {
                        out.device_gone = true;
                        out.add(stamp.pass, at, len as u64, Class::WriteError, e.to_string());
                        go_on = false;
                        break;
                    }
                    // Block by block, to find exactly which ones fail (a
                    // signal or a vanished device ends it mid-chunk).
                    for (i, one) in chunk.chunks_exact(BLOCK).enumerate() {
                        if stop.is_set() {
                            go_on = false;
                            break 'chunks;
                        }
                        let o = at + (i * BLOCK) as u64;
                        if let Err(e) = f.write_all_at(one, o) {
                            out.device_gone |= gone(&e);
                            out.add(
                                stamp.pass,
                                o,
                                BLOCK as u64,
                                Class::WriteError,
                                e.to_string(),
                            );
                            if out.device_gone {
                                go_on = false;
                                break 'chunks;
                            }
                        }
                    }
                }
                written += len as u64;
                live.done.store(written, Ordering::Relaxed);
                let _ = empty_tx.send(b);
            }
            // Unblocks the generator wherever it waits, so the scope ends.
            drop(full_rx);
            drop(empty_tx);
            (written, go_on)
        });
        out.written_bytes += written;
        if go_on && let Err(e) = f.sync_data() {
            out.add(stamp.pass, t.start, 0, Class::FlushError, e.to_string());
        }
        out.write_s += began.elapsed().as_secs_f64();
        go_on
    }

    /// Reads the pass's blocks back and classifies them; false when the run
    /// must end.
    fn verify(&self, buf: &mut AlignedBuf, out: &mut DiskBurn) -> bool {
        let (t, io, stamp, stop, live) = (self.t, self.io, self.stamp, self.stop, self.live);
        let f: &File = &t.file;
        let began = Instant::now();
        let mut read = 0;
        let mut go_on = true;
        'chunks: for (at, len) in chunks(t, io) {
            if stop.is_set() {
                go_on = false;
                break;
            }
            let b = buf.slice_mut(len);
            match f.read_exact_at(b, at) {
                Ok(()) => {
                    for (o, found) in check_all(b, at, stamp) {
                        let (class, detail) = describe(found, stamp, o);
                        out.add(stamp.pass, o, BLOCK as u64, class, detail);
                    }
                }
                Err(e) if gone(&e) => {
                    out.device_gone = true;
                    out.add(stamp.pass, at, len as u64, Class::ReadError, e.to_string());
                    go_on = false;
                    break;
                }
                Err(_) => {
                    // Block by block, as the writes (a signal or a vanished
                    // device ends it mid-chunk).
                    for (i, one) in b.chunks_exact_mut(BLOCK).enumerate() {
                        if stop.is_set() {
                            go_on = false;
                            break 'chunks;
                        }
                        let o = at + (i * BLOCK) as u64;
                        match f.read_exact_at(one, o) {
                            Err(e) => {
                                out.device_gone |= gone(&e);
                                out.add(
                                    stamp.pass,
                                    o,
                                    BLOCK as u64,
                                    Class::ReadError,
                                    e.to_string(),
                                );
                                if out.device_gone {
                                    go_on = false;
                                    break 'chunks;
                                }
                            }
                            Ok(()) => {
                                for (o, found) in check_all(one, o, stamp) {
                                    let (class, detail) = describe(found, stamp, o);
                                    out.add(stamp.pass, o, BLOCK as u64, class, detail);
                                }
                            }
                        }
                    }
                }
            }
            read += len as u64;
            live.done.store(read, Ordering::Relaxed);
        }
        out.verified_bytes += read;
        out.verify_s += began.elapsed().as_secs_f64();
        go_on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_blocks_of_one_fault_are_one_range() {
        let mut d = DiskBurn::default();
        for k in 0..3 {
            d.add(1, 8192 + k * 4096, 4096, Class::Corrupted, "x".into());
        }
        d.add(1, 8192 + 3 * 4096, 4096, Class::Stale, "y".into());
        d.add(1, 65536, 4096, Class::Corrupted, "x".into());
        assert_eq!(d.findings.len(), 3);
        assert_eq!((d.findings[0].offset, d.findings[0].len), (8192, 3 * 4096));
        assert_eq!(d.total_bad(), 5 * 4096);
        assert_eq!(
            d.bad_bytes,
            [(Class::Corrupted, 4 * 4096), (Class::Stale, 4096)]
        );
    }
}

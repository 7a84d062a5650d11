//! The I/O of iozone's tests: opening files as iozone does (O_DIRECT with
//! `-I`, O_SYNC with `-o`), its buffer (the pattern of spec §9, aligned for
//! O_DIRECT), its record orders (sequential, backward, the MT19937-64
//! permutation of §10, the stride walk of §11), and a timed interval that
//! includes fsync with `-e` and close with `-c` (§5).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

use rand_mt::Mt64;

use super::args::Config;
use crate::device::buffer::AlignedBuf;
use crate::stop::StopFlag;

pub use super::args::PATTERN;
/// The `-m` work area.
const WORK_AREA: usize = 16 << 20;
/// iozone aligns its buffers to its processor cache size (1 MiB, `-S`).
const IOZONE_ALIGN: usize = 1 << 20;

/// What one timed loop did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measure {
    /// Bytes moved.
    pub bytes: u64,
    /// Operations (records).
    pub ops: u64,
    /// Seconds timed.
    pub secs: f64,
}

/// How results are shown: kB/s, ops/s (`-O`) or µs/op (`-N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    KbPerS,
    OpsPerS,
    UsecPerOp,
}

impl Unit {
    /// The unit a configuration asks for.
    pub fn of(c: &Config) -> Self {
        if c.ops {
            Unit::OpsPerS
        } else if c.usec {
            Unit::UsecPerOp
        } else {
            Unit::KbPerS
        }
    }

    /// The single/auto-mode integer of §6.2: floor(floor(bytes/s)/1024),
    /// floor(ops/s) or floor(1e6·s/ops). An interval too short to time
    /// counts as 1 µs, as iozone's clock resolution does.
    pub fn integer(self, m: &Measure) -> u64 {
        let secs = m.secs.max(1e-6);
        match self {
            Unit::KbPerS => ((m.bytes as f64 / secs) as u64) >> 10,
            Unit::OpsPerS => (m.ops as f64 / secs) as u64,
            Unit::UsecPerOp => (1e6 * secs / m.ops.max(1) as f64) as u64,
        }
    }
}

/// What every record written holds, and what each read back is checked
/// against (spec §9; iozone's `sverify` 1 and 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// iozone's default: the pattern byte in the first 8 bytes of each
    /// 4 KiB page, zeros elsewhere; a read checks those 8 bytes per page.
    Light,
    /// `-V`: every byte is this byte; a read checks every byte.
    Every(u8),
}

impl Fill {
    /// The fill a command line asks for.
    pub fn of(c: &Config) -> Self {
        c.verify_byte.map_or(Fill::Light, Fill::Every)
    }

    /// Fills one record as iozone does.
    fn record(self, rec: &mut [u8]) {
        match self {
            Fill::Every(b) => rec.fill(b),
            Fill::Light => light(rec),
        }
    }

    /// Checks a record read back from `offset` of the file: the bytes
    /// this fill puts there hold what was written.
    pub fn check(self, rec: &[u8], offset: u64) -> io::Result<()> {
        let (byte, checked) = match self {
            Fill::Light => (PATTERN, 8),
            Fill::Every(b) => (b, 4096),
        };
        for (k, page) in rec.chunks(4096).enumerate() {
            let head = &page[..page.len().min(checked)];
            let Some(bad) = head.iter().position(|&b| b != byte) else { continue };
            let at = offset + (k * 4096 + bad) as u64;
            // The 8 bytes checked (default), or 8 from the first that
            // differs (-V).
            let shown = match self {
                Fill::Light => head,
                Fill::Every(_) => &page[bad..page.len().min(bad + 8)],
            };
            let found: String = shown.iter().map(|b| format!("{b:02x}")).collect();
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "data read back is not what was written: byte {at} (record {}, of {} kB) holds {found}, expected {}; the file changed after it was written, or the storage returned wrong data",
                    offset / rec.len() as u64,
                    rec.len() / 1024,
                    format!("{byte:02x}").repeat(shown.len()),
                ),
            ));
        }
        Ok(())
    }
}

/// The I/O buffer: one record, or the 16 MiB work area with `-m`.
pub struct Buffer {
    buf: AlignedBuf,
    reclen: usize,
    multi: bool,
    next: usize,
    fill: Fill,
}

impl Buffer {
    /// A buffer for records of `reclen` bytes, filled with the pattern. By
    /// default its memory is iozone's: ordinary 4 KiB pages aligned to
    /// 1 MiB, as iozone mallocs and aligns its buffers (main, per-child and
    /// `-m`). With `huge` (`--huge-pages`), 2 MiB pages where the kernel
    /// allows: an O_DIRECT request then needs far fewer scatter-gather
    /// segments, which on fast storage moves data several times faster
    /// than iozone can (see docs/benchmarks.md), so it is never the default.
    pub fn new(reclen: u64, multi: bool, huge: bool, fill: Fill) -> Self {
        let reclen = reclen as usize;
        let len = if multi { WORK_AREA.max(reclen) } else { reclen };
        let mut buf =
            if huge { AlignedBuf::new(len) } else { AlignedBuf::plain(len, IOZONE_ALIGN) };
        // Per record, as iozone fills each one: with -m the records are
        // the work area's slices of `reclen` bytes.
        for rec in buf.slice_mut(len).chunks_mut(reclen) {
            fill.record(rec);
        }
        Self { buf, reclen, multi, next: reclen, fill }
    }

    /// What its records hold, and reads are checked against.
    pub fn fill(&self) -> Fill {
        self.fill
    }

    /// The record to use for the next I/O: the same one, or with `-m` the
    /// next slice of the work area (from offset `reclen`, wrapping to 0).
    pub fn record(&mut self) -> &mut [u8] {
        let len = self.reclen;
        if !self.multi {
            return self.buf.slice_mut(len);
        }
        if self.next + len > self.buf.len() {
            self.next = 0;
        }
        let at = self.next;
        self.next += len;
        &mut self.buf.slice_mut(at + len)[at..]
    }
}

/// A light record: zeros, the first 8 bytes of each 4 KiB page `PATTERN`.
fn light(rec: &mut [u8]) {
    rec.fill(0);
    for page in rec.chunks_mut(4096) {
        let n = page.len().min(8);
        page[..n].fill(PATTERN);
    }
}

/// How a test opens its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading (O_RDONLY; O_DIRECT with -I).
    Read,
    /// Writing an existing or new file (O_RDWR|O_CREAT; O_SYNC with -o,
    /// O_DIRECT with -I).
    Write,
}

/// Opens `path` as iozone's tests do. `sync_reads`: O_SYNC on reads too
/// (throughput mode with -o).
pub fn open(path: &Path, access: Access, c: &Config, sync_reads: bool) -> io::Result<File> {
    // A test file is never written through a link: one planted at its
    // name in a shared directory would make root's run overwrite its
    // target.
    let mut flags = nix::libc::O_NOFOLLOW;
    if c.direct {
        flags |= nix::libc::O_DIRECT;
    }
    if c.osync && (access == Access::Write || sync_reads) {
        flags |= nix::libc::O_SYNC;
    }
    let mut o = OpenOptions::new();
    o.read(true).custom_flags(flags);
    if access == Access::Write {
        o.write(true).create(true).mode(0o640);
    }
    o.open(path).map_err(|e| explain_open(path, c, e))
}

/// Options for opening a test file without following a link at its name
/// (the stdio tests' opens; [`open`] for the others).
pub fn no_follow() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.custom_flags(nix::libc::O_NOFOLLOW);
    o
}

/// An open that fails because the filesystem refuses O_DIRECT, or because
/// the name is a link, said so.
fn explain_open(path: &Path, c: &Config, e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(nix::libc::ELOOP) {
        return io::Error::new(
            e.kind(),
            format!(
                "{}: is a symbolic link; test files are never written through one: name the real path",
                path.display()
            ),
        );
    }
    if c.direct && e.raw_os_error() == Some(nix::libc::EINVAL) {
        return io::Error::new(
            e.kind(),
            format!(
                "{}: the filesystem refuses O_DIRECT (-I): test on a filesystem that supports it (ext4, xfs), or drop -I",
                path.display()
            ),
        );
    }
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Record indices in the order of each access pattern.
pub mod order {
    use super::Mt64;

    /// The fixed permutation of iozone's random tests (spec §10).
    pub fn random(n: u64) -> Vec<u64> {
        let mut rng = Mt64::new_with_key([0x12345u64, 0x23456, 0x34567, 0x45678]);
        let mut p: Vec<u64> = (0..n).collect();
        for i in 0..n as usize {
            let j = (rng.next_u64() % n) as usize;
            p.swap(i, j);
        }
        p
    }

    /// iozone's stride walk (spec §11): `n` reads, `stride` records apart,
    /// each pass starting one record later.
    pub fn stride(n: u64, stride: u64) -> Vec<u64> {
        let (mut p, mut wraps) = (0u64, 0u64);
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            out.push(p);
            if p + 1 + stride >= n.saturating_sub(1) {
                wraps += 1;
                p = if n <= stride { 0 } else { wraps % n };
            } else {
                p += stride;
            }
        }
        out
    }
}

/// Evicts the CPU cache (`-p`): reads through a buffer the size of the
/// processor cache (`-S`, 1 MiB), a byte per cache line.
pub fn purge_cpu_cache(scratch: &mut [u8]) {
    let mut sum = 0u8;
    for line in scratch.chunks(32) {
        sum = sum.wrapping_add(line[0]);
    }
    std::hint::black_box(sum);
}

/// Runs a timed loop over an open file: `body` does the I/O; with `-e` the
/// fsync, with `-c` the close are inside the timing, otherwise they follow
/// it untimed. Returns the seconds timed.
pub fn timed(
    c: &Config,
    file: File,
    stop: &StopFlag,
    body: impl FnOnce(&File, &StopFlag) -> io::Result<()>,
) -> io::Result<f64> {
    let t = Instant::now();
    body(&file, stop)?;
    if c.fsync_timed {
        file.sync_all()?;
    }
    if c.close_timed {
        drop(file);
        return Ok(t.elapsed().as_secs_f64());
    }
    let secs = t.elapsed().as_secs_f64();
    file.sync_all()?;
    drop(file);
    Ok(secs)
}

/// Stops a loop when a signal came.
pub fn check_stop(stop: &StopFlag) -> io::Result<()> {
    if stop.is_set() {
        Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"))
    } else {
        Ok(())
    }
}

/// A read that met the end of the file: the file is shorter than `-s`.
pub fn short_file(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        io::Error::new(e.kind(), "the test file is shorter than -s: write it first (-i 0)")
    } else {
        e
    }
}

/// How a test reaches its records: with the system calls iozone makes
/// (spec's strace patterns). In a cached run each call's cost is part of
/// the number: an lseek per record is what iozone's random, backward,
/// stride and record-rewrite numbers include.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// read()/write() through the file position: the sequential tests.
    Sequential,
    /// lseek() to the record, then read()/write(): random, backward,
    /// stride, record rewrite, the mixed workload.
    Seek,
    /// pread()/pwrite() at the record: tests 9 and 10, the pwrite and
    /// pread phases.
    Positional,
}

/// Reads or writes one record `rec` at `offset` (ignored when
/// `Sequential`) as `reach` says, a read checked against `fill`; a short
/// file is an error.
pub fn record_io(
    f: &File,
    reach: Reach,
    access: Access,
    rec: &mut [u8],
    offset: u64,
    fill: Fill,
) -> io::Result<()> {
    let mut pos = f;
    match (reach, access) {
        (Reach::Sequential, Access::Write) => pos.write_all(rec),
        (Reach::Sequential, Access::Read) => {
            pos.read_exact(rec).map_err(short_file)?;
            fill.check(rec, offset)
        }
        (Reach::Seek, access) => {
            pos.seek(SeekFrom::Start(offset))?;
            record_io(f, Reach::Sequential, access, rec, offset, fill)
        }
        (Reach::Positional, Access::Write) => f.write_all_at(rec, offset),
        (Reach::Positional, Access::Read) => {
            f.read_exact_at(rec, offset).map_err(short_file)?;
            fill.check(rec, offset)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_random_order_is_iozones_permutation() {
        assert_eq!(order::random(16), [3, 15, 8, 1, 12, 9, 7, 2, 5, 0, 6, 10, 14, 13, 4, 11]);
        assert_eq!(
            order::random(40),
            [
                37, 33, 5, 0, 8, 35, 23, 18, 28, 19, 14, 2, 22, 15, 12, 16, 9, 4, 13, 6, 39, 29,
                10, 36, 1, 20, 25, 32, 27, 26, 7, 31, 30, 24, 3, 38, 21, 34, 11, 17
            ]
        );
    }

    #[test]
    fn the_stride_walk_is_iozones() {
        assert_eq!(
            order::stride(40, 17),
            [
                0, 17, 34, 1, 18, 35, 2, 19, 36, 3, 20, 37, 4, 21, 5, 22, 6, 23, 7, 24, 8, 25, 9,
                26, 10, 27, 11, 28, 12, 29, 13, 30, 14, 31, 15, 32, 16, 33, 17, 34
            ]
        );
        assert_eq!(order::stride(10, 17), [0; 10]);
        let distinct: std::collections::BTreeSet<u64> =
            order::stride(1024, 17).into_iter().collect();
        assert_eq!(distinct.len(), 1022);
    }

    #[test]
    fn units_are_iozones_integers() {
        let m = Measure { bytes: 16 << 20, ops: 256, secs: 0.5 };
        assert_eq!(Unit::KbPerS.integer(&m), 32768);
        assert_eq!(Unit::OpsPerS.integer(&m), 512);
        assert_eq!(Unit::UsecPerOp.integer(&m), 1953);
    }

    #[test]
    fn the_buffer_carries_the_pattern_on_every_page() {
        let mut b = Buffer::new(8192, false, false, Fill::Light);
        let r = b.record();
        assert_eq!(&r[..8], &[PATTERN; 8]);
        assert_eq!(&r[4096..4104], &[PATTERN; 8]);
        assert_eq!(r[8], 0);
        Fill::Light.check(r, 0).unwrap();
        // -V: every byte, every byte checked.
        let mut v = Buffer::new(8192, true, false, Fill::Every(0xa5));
        let r = v.record();
        assert!(r.iter().all(|&b| b == 0xa5));
        Fill::Every(0xa5).check(r, 0).unwrap();
        r[5000] = 0xa4;
        let e = Fill::Every(0xa5).check(r, 8192).unwrap_err().to_string();
        assert!(
            e.contains(
                "byte 13192 (record 1, of 8 kB) holds a4a5a5a5a5a5a5a5, expected a5a5a5a5a5a5a5a5"
            ),
            "{e}"
        );
        // The default check does not look there.
        r.iter_mut().for_each(|b| *b = 0);
        r[..8].fill(PATTERN);
        r[4096..4104].fill(PATTERN);
        Fill::Light.check(r, 0).unwrap();
        assert!(Fill::Every(PATTERN).check(r, 0).is_err());
        let mut m = Buffer::new(1 << 20, true, false, Fill::Light);
        let first = m.record().as_ptr() as usize;
        let second = m.record().as_ptr() as usize;
        assert_eq!(second - first, 1 << 20, "-m walks the work area");
    }
}

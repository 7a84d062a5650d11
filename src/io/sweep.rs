//! One sweep over a disk: what the check's reads and the burn-in's writes
//! and read-backs are all driven through.
//!
//! A [`Sweep`] keeps up to its engine's depth of requests in flight and
//! hands them back in the order they were started, so that a failure is
//! seen where doing one request at a time would see it (a good read
//! overtaking a failing one must not end a skip over a bad area; a write
//! counts as landed only once every write before it has), each with the
//! time it had the disk to itself. A request the engine refused comes back
//! as a failed one; a stop or a hang ends a wait ([`Halt`]) and what is in
//! flight is then given up ([`Sweep::abandon`]). Beside it a [`Probe`] makes
//! one request at a time: the re-reads and rewrites that pinpoint a failed
//! range to its blocks.
//!
//! It moves data and keeps order; it does not count, classify or judge
//! what it moved: that is the workers'.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::time::{Duration, Instant};

use super::owned::{Bounds, Direction, Done, Halt, Medium, OwnedIo, ThreadIo, Until};
use super::{EngineKind, OwnedRing};
use crate::device::buffer::{AlignedBuf, Chunk};

/// A request that ended, handed back in the order it was started.
#[derive(Debug)]
pub struct Landed {
    pub chunk: Chunk,
    /// The buffer, the result and when it began and ended.
    pub done: Done,
    /// The time it had the disk to itself: from its start or the end of
    /// the request before it, whichever was later. With several requests
    /// in flight a request's latency includes its wait behind the others:
    /// summed over a stretch of the disk it would halve the speed at a
    /// depth of 2.
    pub service: Duration,
}

impl Landed {
    /// Its latency: from its start to when it was seen to end.
    pub fn took(&self) -> Duration {
        self.done.ended - self.done.began
    }
}

/// The requests of one pass over a disk, in flight through one engine.
pub struct Sweep {
    io: Box<dyn OwnedIo>,
    /// What was started, oldest first.
    order: VecDeque<Chunk>,
    /// Requests that ended before an older one (and refused ones).
    early: Vec<Done>,
    /// When the requests handed back so far ended, the latest.
    last_end: Option<Instant>,
}

impl Sweep {
    /// A sweep through `io`.
    pub fn new(io: Box<dyn OwnedIo>) -> Self {
        Self { io, order: VecDeque::new(), early: Vec::new(), last_end: None }
    }

    /// Requests it keeps in flight at most.
    pub fn depth(&self) -> usize {
        self.io.depth()
    }

    /// `count` buffers of `len` bytes for its requests, registered with
    /// the kernel where the engine can ([`OwnedIo::lend`]).
    pub fn buffers(&mut self, count: usize, len: usize) -> Vec<AlignedBuf> {
        self.io.lend(count, len)
    }

    /// `count` buffers of `len` bytes for reads whose data nobody looks
    /// at: through io_uring or psync, views of one memory every such read
    /// of the process lands in ([`OwnedIo::lend_discard`]).
    pub fn discard_buffers(&mut self, count: usize, len: usize) -> Vec<AlignedBuf> {
        self.io.lend_discard(count, len)
    }

    /// Requests started and not yet handed back.
    pub fn in_flight(&self) -> usize {
        self.order.len()
    }

    /// Whether another request may be started.
    pub fn room(&self) -> bool {
        self.order.len() < self.io.depth()
    }

    /// Starts moving `chunk` (into or out of the first `chunk.len()` bytes
    /// of `buf`). One the engine refuses is handed back failed, in its turn.
    pub fn start(&mut self, dir: Direction, buf: AlignedBuf, chunk: Chunk) {
        let (len, offset) = (chunk.len(), chunk.offset());
        self.order.push_back(chunk);
        if let Err(refused) = self.io.start(dir, buf, len, offset) {
            self.early.push(Done::refused(refused, offset, len));
        }
    }

    /// The oldest request started, once it has ended; `Ok(None)` when none
    /// is in flight. A stop ([`Until::Stop`]), the deadline or a hang ends
    /// the wait: the requests stay in flight (see [`Self::oldest`] and
    /// [`Self::abandon`]).
    pub fn next(&mut self, until: Until) -> Result<Option<Landed>, Halt> {
        let Some(&first) = self.order.front() else { return Ok(None) };
        loop {
            if let Some(i) = self.early.iter().position(|d| d.offset == first.offset()) {
                self.order.pop_front();
                let done = self.early.swap_remove(i);
                return Ok(Some(self.landed(first, done)));
            }
            match self.io.wait(until)? {
                Some(d) => self.early.push(d),
                // The engine has nothing left that was not handed back:
                // what is missing is not coming.
                None => {
                    self.order.clear();
                    return Ok(None);
                }
            }
        }
    }

    /// Whichever request started has ended first (not the oldest: a
    /// drive that reorders its queue answers out of order, and waiting
    /// for the oldest would drain its queue); `Ok(None)` when none is in
    /// flight. Ends as [`Self::next`] does.
    pub fn next_any(&mut self, until: Until) -> Result<Option<Landed>, Halt> {
        if self.order.is_empty() {
            return Ok(None);
        }
        let done = match self.early.pop() {
            Some(d) => d,
            None => match self.io.wait(until)? {
                Some(d) => d,
                None => {
                    self.order.clear();
                    return Ok(None);
                }
            },
        };
        let at = self.order.iter().position(|c| c.offset() == done.offset);
        let chunk = at.and_then(|i| self.order.remove(i)).expect("a request ends that was started");
        Ok(Some(self.landed(chunk, done)))
    }

    fn landed(&mut self, chunk: Chunk, done: Done) -> Landed {
        let from = self.last_end.map_or(done.began, |e| e.max(done.began));
        self.clock_from(done.ended);
        Landed { chunk, service: done.ended.saturating_duration_since(from), done }
    }

    /// Time spent outside the sweep from now on (a pinpointing's re-reads)
    /// is no request's: the next request's time with the disk starts here
    /// at the earliest.
    pub fn clock_from(&mut self, now: Instant) {
        self.last_end = Some(self.last_end.map_or(now, |e| e.max(now)));
    }

    /// The oldest request still in flight: where a hang is reported.
    pub fn oldest(&self) -> Option<Chunk> {
        self.order.front().copied()
    }

    /// A stop or a hang: what is in flight is waited for at most `within`
    /// (cancelled where the engine can), then given up; its buffers stay
    /// with the kernel.
    pub fn abandon(&mut self, within: Duration) {
        self.io.abandon(within);
        self.order.clear();
        self.early.clear();
    }

    /// Flushes the disk's write cache with nothing in flight (see
    /// [`OwnedIo::sync`]).
    pub fn sync(&mut self, until: Until) -> Result<io::Result<()>, Halt> {
        self.io.sync(until)
    }
}

/// One request at a time beside a sweep's own, into a buffer of its own:
/// the re-reads and rewrites that pinpoint a failed range to its blocks,
/// a label's read. Through the sweep's kind of engine, bound as the
/// sweep's requests are: a request a stop gives up is left to the kernel
/// (through io_uring the process can then exit at once; a psync thread
/// stuck in the kernel holds the exit until its request ends).
pub struct Probe {
    io: Box<dyn OwnedIo>,
    /// With the engine while a request is in flight; lost with it when the
    /// disk hangs or a stop gives the request up.
    buf: Option<AlignedBuf>,
    bounds: Bounds,
}

impl Probe {
    /// A psync probe of `file`, bound by `bounds`.
    pub fn of(file: &File, bounds: &Bounds) -> io::Result<Self> {
        Self::on(file.try_clone()?, bounds)
    }

    /// A psync probe of `medium` (a file, or in tests a disk made up to
    /// fail).
    pub fn on(medium: impl Medium, bounds: &Bounds) -> io::Result<Self> {
        Ok(Self::through(Box::new(ThreadIo::on(medium, bounds)?), bounds))
    }

    /// A probe through `io` (one request at a time whatever its depth).
    pub fn through(io: Box<dyn OwnedIo>, bounds: &Bounds) -> Self {
        Self { io, buf: None, bounds: bounds.clone() }
    }

    /// The error of a request on a disk that hung ([`Halt::Hung`]).
    pub fn hung_error(&self) -> io::Error {
        self.bounds.hung_error()
    }

    /// A buffer of at least `len` bytes, the probe's own.
    fn buffer(&mut self, len: usize) -> AlignedBuf {
        match self.buf.take() {
            Some(b) if b.len() >= len => b,
            _ => AlignedBuf::new(len),
        }
    }

    /// Reads all of `chunk`: its bytes, or why not (a short read is an
    /// error too); a stop, the deadline or a hang as [`Halt`].
    pub fn read(&mut self, chunk: Chunk, until: Until) -> Result<io::Result<&mut [u8]>, Halt> {
        self.read_at(chunk.offset(), chunk.len(), until)
    }

    /// Reads `len` bytes at `offset` (both multiples of the logical block
    /// size), as [`Self::read`].
    pub fn read_at(
        &mut self,
        offset: u64,
        len: usize,
        until: Until,
    ) -> Result<io::Result<&mut [u8]>, Halt> {
        let buf = self.buffer(len);
        let d = self.io.now(Direction::Read, buf, len, offset, until)?;
        let whole = d.whole();
        let buf = self.buf.insert(d.buf);
        Ok(whole.map(|()| buf.slice_mut(len)))
    }

    /// Writes `src` at `offset`, all of it or why not; a stop, the deadline
    /// or a hang as [`Halt`].
    pub fn write(&mut self, src: &[u8], offset: u64, until: Until) -> Result<io::Result<()>, Halt> {
        let mut buf = self.buffer(src.len());
        buf.slice_mut(src.len()).copy_from_slice(src);
        let d = self.io.now(Direction::Write, buf, src.len(), offset, until)?;
        let whole = d.whole();
        self.buf = Some(d.buf);
        Ok(whole)
    }
}

impl Probe {
    /// Flushes the disk's write cache (see [`OwnedIo::sync`]).
    pub fn sync(&mut self, until: Until) -> Result<io::Result<()>, Halt> {
        self.io.sync(until)
    }

    /// A request still in flight was given up (a stop, a hang): it is left
    /// to the kernel, not waited for.
    pub fn abandon(&mut self) {
        if self.io.in_flight() > 0 {
            self.io.abandon(Duration::ZERO);
        }
    }
}

impl Drop for Probe {
    /// Never waits: a re-read of a failing sector can take the drive half
    /// a minute (its retries, the kernel's timeout).
    fn drop(&mut self) {
        self.abandon();
    }
}

/// Opens a sweep on `file` through `kind` (resolved; `auto` is resolved
/// here too) with `depth` requests in flight, and its probe, bound by
/// `bounds`. An engine asked for that cannot be had is an error, never
/// silently another.
pub fn open_sweep(
    kind: EngineKind,
    file: &File,
    depth: usize,
    bounds: &Bounds,
) -> io::Result<(Sweep, Probe)> {
    let open = |depth| -> io::Result<Box<dyn OwnedIo>> {
        Ok(match kind.resolved() {
            EngineKind::IoUring => Box::new(OwnedRing::new(file, depth, bounds)?),
            _ => Box::new(ThreadIo::new(file, bounds)?),
        })
    };
    Ok((Sweep::new(open(depth)?), Probe::through(open(1)?, bounds)))
}

/// Whether an I/O error says the device itself went away (unplugged, a
/// controller reset, removed): unlike a media error, nothing further can
/// be read from or written to it.
pub fn is_gone(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(nix::libc::ENODEV | nix::libc::ENXIO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::buffer::Chunks;
    use crate::io::Refused;
    use crate::stop::StopFlag;
    use std::sync::{Arc, Mutex};

    /// A disk in memory whose writes at byte 8192 fail (EIO).
    #[derive(Clone, Default)]
    struct Mem(Arc<Mutex<Vec<u8>>>);

    impl Medium for Mem {
        fn read_at(&self, dst: &mut [u8], offset: u64) -> io::Result<usize> {
            let m = self.0.lock().map_err(|_| io::Error::other("poisoned"))?;
            let from = (offset as usize).min(m.len());
            let n = dst.len().min(m.len() - from);
            dst[..n].copy_from_slice(&m[from..from + n]);
            Ok(n)
        }
        fn write_all_at(&self, src: &[u8], offset: u64) -> io::Result<()> {
            if offset == 8192 {
                return Err(io::Error::from_raw_os_error(nix::libc::EIO));
            }
            let mut m = self.0.lock().map_err(|_| io::Error::other("poisoned"))?;
            let end = offset as usize + src.len();
            if m.len() < end {
                m.resize(end, 0);
            }
            m[offset as usize..end].copy_from_slice(src);
            Ok(())
        }
        fn sync_data(&self) -> io::Result<()> {
            Ok(())
        }
    }

    /// An engine of depth 4 over a disk in memory that finishes its
    /// requests newest first, as a deep queue on a disk that reorders may.
    struct Backwards {
        mem: Mem,
        flying: Vec<(AlignedBuf, usize, u64, Direction)>,
    }

    impl OwnedIo for Backwards {
        fn depth(&self) -> usize {
            4
        }
        fn in_flight(&self) -> usize {
            self.flying.len()
        }
        fn start(
            &mut self,
            dir: Direction,
            buf: AlignedBuf,
            len: usize,
            offset: u64,
        ) -> Result<(), Refused> {
            if dir == Direction::Read && offset == 12288 {
                return Err((buf, io::Error::other("refused")));
            }
            self.flying.push((buf, len, offset, dir));
            Ok(())
        }
        fn wait(&mut self, _: Until) -> Result<Option<Done>, Halt> {
            let Some((mut buf, len, offset, dir)) = self.flying.pop() else { return Ok(None) };
            let began = Instant::now();
            let result = match dir {
                Direction::Read => self.mem.read_at(buf.slice_mut(len), offset),
                Direction::Write => self.mem.write_all_at(buf.slice_mut(len), offset).map(|()| len),
            };
            let ended = Instant::now();
            Ok(Some(Done { buf, offset, len, result, began, ended }))
        }
        fn sync(&mut self, _: Until) -> Result<io::Result<()>, Halt> {
            Ok(Ok(()))
        }
    }

    /// Runs `dir` over the first 32 KiB through `sweep`, keeping it full:
    /// where each request landed, and whether all of it moved.
    fn sweep_over(sweep: &mut Sweep, dir: Direction) -> Vec<(u64, bool)> {
        let mut landed = Vec::new();
        for chunk in Chunks::new(32768, 4096, 4096) {
            if !sweep.room() {
                landed.push(sweep.next(Until::Stop).unwrap().unwrap());
            }
            let mut b = AlignedBuf::new(4096);
            b.slice_mut(4096).fill((chunk.offset() >> 12) as u8 + 1);
            sweep.start(dir, b, chunk);
        }
        while let Some(l) = sweep.next(Until::Stop).unwrap() {
            landed.push(l);
        }
        assert!(landed.iter().all(|l| l.service <= l.took()));
        landed.iter().map(|l| (l.chunk.offset(), l.done.whole().is_ok())).collect()
    }

    #[test]
    fn requests_come_back_in_the_order_they_were_started_with_their_failures() {
        let mem = Mem::default();
        let mut sweep = Sweep::new(Box::new(Backwards { mem: mem.clone(), flying: Vec::new() }));
        let offsets = |bad: u64| -> Vec<(u64, bool)> {
            (0..8).map(|k| (k * 4096, k * 4096 != bad)).collect()
        };
        // The write at 8192 fails; the read at 12288 is refused.
        assert_eq!(sweep_over(&mut sweep, Direction::Write), offsets(8192));
        assert_eq!(sweep_over(&mut sweep, Direction::Read), offsets(12288));
        // What was written is there (but the failed write's block).
        let bounds = Bounds::new(&StopFlag::default(), Duration::from_secs(60));
        let mut probe = Probe::on(mem.clone(), &bounds).unwrap();
        let fifth = Chunks::new(32768, 4096, 4096).nth(5).unwrap();
        assert!(probe.read(fifth, Until::Stop).unwrap().unwrap().iter().all(|b| *b == 6));
        let e = probe.write(&[0; 4096], 8192, Until::Stop).unwrap();
        assert_eq!(e.unwrap_err().raw_os_error(), Some(nix::libc::EIO));
        // The psync thread, one at a time, in order too.
        let mut psync = Sweep::new(Box::new(ThreadIo::on(mem, &bounds).unwrap()));
        assert_eq!(sweep_over(&mut psync, Direction::Write), offsets(8192));
    }
}

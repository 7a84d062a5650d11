//! Writes, reads and flushes that own their buffers while in flight, bound
//! by a stop and an I/O timeout: what every sweep ([`super::Sweep`]) and
//! probe ([`super::Probe`]) moves data through.
//!
//! A request takes its buffer and hands it back with its completion, so
//! nothing here lets a buffer go while the kernel may still fill it. Every
//! wait ends: when the request completes, when a stop is asked for (the
//! caller then gives up what is in flight), at a deadline the caller
//! names, or when a request has been outstanding longer than the I/O
//! timeout. A disk that stops answering (a dead USB bridge, a drive in
//! endless retries, a frozen FUSE daemon under a loop device) is then
//! *hung*: the request is left to the kernel, every later one fails at
//! once, and the run carries on with the other disks.
//!
//! Two kinds: [`ThreadIo`] (psync: one request at a time, made by a thread
//! of its own, so that a request stuck in the kernel holds that thread and
//! never the caller) and the io_uring [`super::OwnedRing`].

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};

use crate::device::buffer::AlignedBuf;
use crate::stop::StopFlag;

/// What every wait for a disk is bound by.
#[derive(Debug, Clone)]
pub struct Bounds {
    /// A stop ends a wait at once (`Until::Stop`).
    pub stop: StopFlag,
    /// A request outstanding this long means the disk hung.
    pub timeout: Duration,
    /// Set once the disk hung: shared by every engine of that disk, so a
    /// later pass does not wait for it again.
    pub hung: Arc<AtomicBool>,
}

impl Bounds {
    /// Bounds with a fresh hung flag.
    pub fn new(stop: &StopFlag, timeout: Duration) -> Self {
        Self { stop: stop.clone(), timeout, hung: Arc::default() }
    }

    /// Whether the disk hung.
    pub fn is_hung(&self) -> bool {
        self.hung.load(Ordering::Relaxed)
    }

    /// Marks the disk hung.
    pub fn set_hung(&self) {
        self.hung.store(true, Ordering::Relaxed);
    }

    /// Until when to wait for a request in flight since `since`, as
    /// `until` bounds it, the one rule of both engines: a request
    /// outstanding `timeout` means the disk hung (marked); with
    /// `Until::Stop` a stop (`stopped`: the flag, or a waker that saw it)
    /// ends the wait, looked at every `poll` where the waiter is not woken
    /// by it; past a deadline the wait is late.
    pub fn wait_until(
        &self,
        since: Instant,
        until: Until,
        (stopped, poll): (bool, Option<Duration>),
    ) -> Result<Instant, Halt> {
        let now = Instant::now();
        let hung_at = since + self.timeout;
        if now >= hung_at {
            self.set_hung();
            return Err(Halt::Hung);
        }
        match until {
            Until::Stop if stopped => Err(Halt::Stopped),
            Until::Stop => Ok(poll.map_or(hung_at, |p| hung_at.min(now + p))),
            Until::Deadline(d) if now >= d => Err(Halt::Late),
            Until::Deadline(d) => Ok(hung_at.min(d)),
        }
    }

    /// The error of a request on a disk that hung.
    pub fn hung_error(&self) -> io::Error {
        let limit = crate::units::human_duration(self.timeout);
        io::Error::new(io::ErrorKind::TimedOut, format!("no answer within {limit} (--io-timeout)"))
    }
}

/// Whether an error says the disk hung (see [`Bounds::hung_error`]).
pub fn is_hung(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::TimedOut
}

/// How long a wait may last beside the I/O timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Until a stop is asked for.
    Stop,
    /// Until this moment, a stop or not (what a stop still waits for: the
    /// writes in flight, the flush before the last checkpoint).
    Deadline(Instant),
}

/// Why a wait ended without a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    /// A stop was asked for.
    Stopped,
    /// The deadline passed.
    Late,
    /// A request outstanding longer than the I/O timeout: the disk hung.
    Hung,
}

/// A write or read that finished, with its buffer back.
#[derive(Debug)]
pub struct Done {
    pub buf: AlignedBuf,
    pub offset: u64,
    pub len: usize,
    /// Bytes moved (fewer than `len` only at the end of the device), or
    /// why not.
    pub result: io::Result<usize>,
    /// When the request was started and when it was seen to end: its
    /// latency.
    pub began: Instant,
    pub ended: Instant,
}

impl Done {
    /// The result as "all of it or an error": a short transfer is an
    /// error too (the burn-in redoes it block by block).
    pub fn whole(&self) -> io::Result<()> {
        match &self.result {
            Ok(n) if *n == self.len => Ok(()),
            Ok(n) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("short transfer: {n} of {} bytes", self.len),
            )),
            // The OS's own error where there is one: whether the device
            // went away (ENODEV, ENXIO) is told by its code.
            Err(e) => Err(match e.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(e.kind(), e.to_string()),
            }),
        }
    }
}

impl Done {
    /// A request refused before it started, as a failed one.
    pub fn refused((buf, e): Refused, offset: u64, len: usize) -> Self {
        let now = Instant::now();
        Self { buf, offset, len, result: Err(e), began: now, ended: now }
    }
}

/// A request refused before it started, with its buffer back.
pub type Refused = (AlignedBuf, io::Error);

/// Which way a request moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

/// Owned-buffer I/O on one disk.
pub trait OwnedIo: Send {
    /// Requests it keeps in flight at most.
    fn depth(&self) -> usize;
    /// Requests in flight now.
    fn in_flight(&self) -> usize;
    /// Whether another request may be started.
    fn room(&self) -> bool {
        self.in_flight() < self.depth()
    }
    /// Starts moving `len` bytes at `offset` into (`Direction::Read`) or out of
    /// (`Direction::Write`) the start of `buf`.
    fn start(
        &mut self,
        dir: Direction,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> Result<(), Refused>;
    /// Waits for a request to finish (any of those in flight); `Ok(None)`
    /// when none is in flight.
    fn wait(&mut self, until: Until) -> Result<Option<Done>, Halt>;
    /// Flushes the disk's write cache (fdatasync), with nothing else in
    /// flight: what was written before is then on the media, or the
    /// error says it may not be. With requests still in flight (their
    /// wait given up) it asks for nothing: [`Halt::Late`], no error of the
    /// disk's.
    fn sync(&mut self, until: Until) -> Result<io::Result<()>, Halt>;
    /// `count` buffers of `len` bytes for its requests: where the engine
    /// can, registered with the kernel once, so that a request on one
    /// costs no page pinning (any buffer may still be used).
    fn lend(&mut self, count: usize, len: usize) -> Vec<AlignedBuf> {
        (0..count).map(|_| AlignedBuf::new(len)).collect()
    }

    /// `count` buffers of `len` bytes for reads whose data nobody looks
    /// at. An engine that hands the kernel each request's address
    /// (io_uring, the psync thread) lends views of one memory
    /// ([`AlignedBuf::discard`]); one that would read through a slice of
    /// the buffer lends buffers of their own, as [`Self::lend`] does.
    fn lend_discard(&mut self, count: usize, len: usize) -> Vec<AlignedBuf> {
        self.lend(count, len)
    }

    /// A stop or a hang: waits at most `within` for what is in flight; what
    /// is still in flight then is left to the kernel (its buffers are never
    /// handed back) and no later request starts before it ends.
    fn abandon(&mut self, within: Duration) {
        let until = Until::Deadline(Instant::now() + within);
        while self.in_flight() > 0 {
            if !matches!(self.wait(until), Ok(Some(_))) {
                break;
            }
        }
    }

    /// Moves `len` bytes at `offset` (into or out of `buf`) with nothing
    /// else in flight, and waits for it.
    fn now(
        &mut self,
        dir: Direction,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
        until: Until,
    ) -> Result<Done, Halt> {
        if let Err(refused) = self.start(dir, buf, len, offset) {
            return Ok(Done::refused(refused, offset, len));
        }
        loop {
            match self.wait(until)? {
                Some(d) if d.offset == offset => return Ok(d),
                // Not ours (the caller had nothing else in flight).
                Some(_) => continue,
                None => return Err(Halt::Hung),
            }
        }
    }
}

/// What the I/O thread is asked to do.
enum Op {
    Read,
    Write,
    Sync,
}

struct Request {
    op: Op,
    buf: Option<AlignedBuf>,
    len: usize,
    offset: u64,
}

struct Reply {
    buf: Option<AlignedBuf>,
    offset: u64,
    len: usize,
    result: io::Result<usize>,
    began: Instant,
    ended: Instant,
}

/// psync: one `pread`/`pwrite`/`fdatasync` at a time on an O_DIRECT file,
/// made by a thread of its own. A request the kernel never completes holds
/// that thread (and the request's buffer, which it owns) and never the
/// caller: the caller's wait ends at the I/O timeout or a stop. The thread
/// ends when this is dropped and its request has ended.
pub struct ThreadIo {
    to: Sender<Request>,
    from: Receiver<Reply>,
    /// The request in flight: its offset and when it was sent.
    flying: Option<(u64, Instant)>,
    bounds: Bounds,
}

/// How often a wait for the I/O thread looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);
/// The offset a flush is filed under.
const SYNC_AT: u64 = u64::MAX;

/// What the psync thread works on: a file, or in tests a disk made up to
/// misbehave (a failing write, a device that goes away, a torn block).
pub trait Medium: Send + 'static {
    fn read_at(&self, dst: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Reads into `buf`, a discard view too ([`AlignedBuf::discard`]): a
    /// file through the buffer's address (every disk's psync thread into
    /// the one memory, as io_uring reads); elsewhere (tests' made-up
    /// disks) a discard read lands in a scratch copy of its own.
    fn read_into(&self, buf: &mut AlignedBuf, len: usize, offset: u64) -> io::Result<usize> {
        if buf.is_discard() {
            return self.read_at(&mut vec![0; len.min(buf.len())], offset);
        }
        self.read_at(buf.slice_mut(len), offset)
    }
    fn write_all_at(&self, src: &[u8], offset: u64) -> io::Result<()>;
    fn sync_data(&self) -> io::Result<()>;
}

impl Medium for File {
    fn read_at(&self, dst: &mut [u8], offset: u64) -> io::Result<usize> {
        read_at(self, dst, offset)
    }
    fn read_into(&self, buf: &mut AlignedBuf, len: usize, offset: u64) -> io::Result<usize> {
        buf.pread_from(self, len, offset)
    }
    fn write_all_at(&self, src: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(self, src, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }
}

impl ThreadIo {
    /// I/O on `file` (a clone of it is the thread's), bound by `bounds`.
    pub fn new(file: &File, bounds: &Bounds) -> io::Result<Self> {
        Self::on(file.try_clone()?, bounds)
    }

    /// I/O on `file` through a thread of its own, bound by `bounds`.
    pub fn on(file: impl Medium, bounds: &Bounds) -> io::Result<Self> {
        let (to, requests) = bounded::<Request>(1);
        let (replies, from) = bounded::<Reply>(1);
        std::thread::Builder::new().name("arrayburn-io".into()).spawn(move || {
            for r in requests {
                let began = Instant::now();
                let mut buf = r.buf;
                let result = match (r.op, buf.as_mut()) {
                    (Op::Read, Some(b)) => file.read_into(b, r.len, r.offset),
                    (Op::Write, Some(b)) => {
                        file.write_all_at(&b.slice_mut(r.len)[..], r.offset).map(|()| r.len)
                    }
                    (Op::Sync, _) => file.sync_data().map(|()| 0),
                    (_, None) => Err(io::Error::other("no buffer")),
                };
                let reply = Reply {
                    buf,
                    offset: r.offset,
                    len: r.len,
                    result,
                    began,
                    ended: Instant::now(),
                };
                if replies.send(reply).is_err() {
                    return;
                }
            }
        })?;
        Ok(Self { to, from, flying: None, bounds: bounds.clone() })
    }

    /// Hands the thread a request (it takes one at a time).
    fn send(&mut self, op: Op, buf: AlignedBuf, len: usize, offset: u64) -> Result<(), Refused> {
        if self.bounds.is_hung() {
            return Err((buf, self.bounds.hung_error()));
        }
        if self.flying.is_some() {
            return Err((buf, io::Error::other("psync: a request is in flight")));
        }
        let len = len.min(buf.len());
        let request = Request { op, buf: Some(buf), len, offset };
        match self.to.try_send(request) {
            Ok(()) => {
                self.flying = Some((offset, Instant::now()));
                Ok(())
            }
            Err(e) => {
                let buf = e.into_inner().buf.unwrap_or_else(|| AlignedBuf::new(len));
                Err((buf, io::Error::other("psync: the I/O thread is gone")))
            }
        }
    }

    /// Waits for the reply to the request in flight.
    fn reply(&mut self, until: Until) -> Result<Option<Reply>, Halt> {
        let Some((_, since)) = self.flying else { return Ok(None) };
        loop {
            let stopped = self.bounds.stop.is_set();
            let next = self.bounds.wait_until(since, until, (stopped, Some(STOP_POLL)))?;
            match self.from.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(r) => {
                    self.flying = None;
                    return Ok(Some(r));
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.bounds.set_hung();
                    return Err(Halt::Hung);
                }
            }
        }
    }
}

/// `pread` until `dst` is full or the device ends (a block device returns
/// short only at its end): the bytes read.
fn read_at(file: &File, dst: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < dst.len() {
        match FileExt::read_at(file, &mut dst[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

impl OwnedIo for ThreadIo {
    fn depth(&self) -> usize {
        1
    }

    fn in_flight(&self) -> usize {
        usize::from(self.flying.is_some())
    }

    /// Views of the one memory every disk's reads land in, as io_uring's.
    fn lend_discard(&mut self, count: usize, len: usize) -> Vec<AlignedBuf> {
        (0..count).map(|_| AlignedBuf::discard(len)).collect()
    }

    fn start(
        &mut self,
        dir: Direction,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> Result<(), Refused> {
        let op = match dir {
            Direction::Read => Op::Read,
            Direction::Write => Op::Write,
        };
        self.send(op, buf, len, offset)
    }

    fn wait(&mut self, until: Until) -> Result<Option<Done>, Halt> {
        Ok(self.reply(until)?.map(|r| Done {
            buf: r.buf.unwrap_or_else(|| AlignedBuf::new(r.len.max(1))),
            offset: r.offset,
            len: r.len,
            result: r.result,
            began: r.began,
            ended: r.ended,
        }))
    }

    fn sync(&mut self, until: Until) -> Result<io::Result<()>, Halt> {
        match self.flying {
            // A flush a stop interrupted: waited for again.
            Some((SYNC_AT, _)) => {}
            // A request the caller stopped waiting for (a stop's drain
            // ran out): no flush yet, and nothing said of the disk.
            Some(_) => return Err(Halt::Late),
            None if self.bounds.is_hung() => return Ok(Err(self.bounds.hung_error())),
            None => {
                let request = Request { op: Op::Sync, buf: None, len: 0, offset: SYNC_AT };
                if self.to.try_send(request).is_err() {
                    return Ok(Err(io::Error::other("psync: the I/O thread is gone")));
                }
                self.flying = Some((SYNC_AT, Instant::now()));
            }
        }
        Ok(self.reply(until)?.map_or(Ok(()), |r| r.result.map(|_| ())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk whose every request blocks until the test ends (a frozen
    /// FUSE daemon's loop device does so in the kernel).
    struct Frozen(std::sync::Mutex<crossbeam_channel::Receiver<()>>);

    impl Medium for Frozen {
        fn read_at(&self, _: &mut [u8], _: u64) -> io::Result<usize> {
            let _ = self.0.lock().map(|r| r.recv());
            Ok(0)
        }
        fn write_all_at(&self, _: &[u8], _: u64) -> io::Result<()> {
            let _ = self.0.lock().map(|r| r.recv());
            Ok(())
        }
        fn sync_data(&self) -> io::Result<()> {
            let _ = self.0.lock().map(|r| r.recv());
            Ok(())
        }
    }

    #[test]
    fn a_request_that_never_ends_is_left_behind_at_the_timeout_or_a_stop() {
        let (_thaw, frozen) = bounded::<()>(0);
        let open = || Frozen(std::sync::Mutex::new(frozen.clone()));
        let stop = StopFlag::default();
        let bounds = Bounds::new(&stop, Duration::from_millis(300));
        let mut io = ThreadIo::on(open(), &bounds).unwrap();
        io.start(Direction::Read, AlignedBuf::new(4096), 4096, 0).unwrap();
        let began = Instant::now();
        assert_eq!(io.wait(Until::Stop).unwrap_err(), Halt::Hung);
        assert!(began.elapsed() >= Duration::from_millis(300));
        assert!(bounds.is_hung());
        let (_, e) = io.start(Direction::Read, AlignedBuf::new(4096), 4096, 0).unwrap_err();
        assert!(is_hung(&e), "{e}");
        // A stop ends a wait at once; a deadline ends one that ignores it.
        let bounds = Bounds::new(&stop, Duration::from_secs(60));
        let mut io = ThreadIo::on(open(), &bounds).unwrap();
        io.start(Direction::Read, AlignedBuf::new(4096), 4096, 0).unwrap();
        let soon = Instant::now() + Duration::from_millis(100);
        assert_eq!(io.wait(Until::Deadline(soon)).unwrap_err(), Halt::Late);
        stop.stop();
        assert_eq!(io.wait(Until::Stop).unwrap_err(), Halt::Stopped);
    }

    #[test]
    fn writes_reads_and_a_flush_go_through_the_thread() {
        let d = tempfile::tempdir().unwrap();
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.path().join("x"))
            .unwrap();
        let bounds = Bounds::new(&StopFlag::default(), Duration::from_secs(60));
        let mut io = ThreadIo::new(&f, &bounds).unwrap();
        let mut b = AlignedBuf::new(4096);
        b.slice_mut(4096).fill(7);
        let done = io.now(Direction::Write, b, 4096, 8192, Until::Stop).unwrap();
        assert_eq!(done.result.unwrap(), 4096);
        assert!(io.sync(Until::Stop).unwrap().is_ok());
        let mut back = io.now(Direction::Read, done.buf, 4096, 8192, Until::Stop).unwrap();
        assert_eq!(back.whole().unwrap(), ());
        assert!(back.buf.slice_mut(4096).iter().all(|x| *x == 7));
        // Past the end: short, and `whole` says so.
        let past = io.now(Direction::Read, back.buf, 4096, 10000, Until::Stop).unwrap();
        assert_eq!(past.result.as_ref().unwrap(), &2288);
        assert!(past.whole().is_err());
    }

    #[test]
    fn psync_threads_read_into_the_one_discard_memory_as_io_uring_does() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("x");
        std::fs::write(&path, vec![5u8; 3 << 20]).unwrap();
        let bounds = Bounds::new(&StopFlag::default(), Duration::from_secs(60));
        let len = 1 << 20;
        let open = || ThreadIo::new(&File::open(&path).unwrap(), &bounds).unwrap();
        let (mut a, mut b) = (open(), open());
        let (mine, theirs) = (a.lend_discard(1, len).remove(0), b.lend_discard(1, len).remove(0));
        assert!(mine.is_discard() && mine.as_ptr() == theirs.as_ptr(), "one memory");
        // Both disks' threads read into it at once, whole and short alike.
        a.start(Direction::Read, mine, len, 0).unwrap();
        b.start(Direction::Read, theirs, len, (3 << 20) - 4096).unwrap();
        let (first, second) =
            (a.wait(Until::Stop).unwrap().unwrap(), b.wait(Until::Stop).unwrap().unwrap());
        assert_eq!(first.whole().unwrap(), ());
        assert_eq!(second.result.unwrap(), 4096);
        assert!(first.buf.is_discard() && second.buf.is_discard());
    }
}

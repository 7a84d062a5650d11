//! The io_uring engine: up to `depth` requests in flight per disk, each
//! with a buffer it owns for as long as the kernel may fill or read it, on
//! a file registered with the ring once (a request then costs one
//! submission queue entry and no file lookup), into buffers it registered
//! once where it lent them ([`OwnedIo::lend`]: no page pinning per request). A stop wakes its waits (the
//! ring polls the stop flag's waker beside the requests) and a request
//! outstanding past the I/O timeout makes the disk hung.
//!
//! Nothing here lets a buffer go while a request on it is in flight: it
//! lives in the request's slot until its completion is reaped, and a
//! request given up (a stop, a hang, a failed ring) keeps its buffer
//! allocated until the process ends.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, squeue, types};

use super::owned::{Bounds, Direction, Done, Halt, OwnedIo, Refused, Until};
use crate::device::buffer::AlignedBuf;

/// The user data of the flush, of the wait for a stop and of the
/// cancellations of an abandon (the slots are numbered from 0).
const SYNC: u64 = u64::MAX;
const WAKE: u64 = u64::MAX - 1;
const CANCEL: u64 = u64::MAX - 2;

/// A request in flight: its buffer, where, which way, since when.
struct Flying {
    buf: AlignedBuf,
    offset: u64,
    len: usize,
    dir: Direction,
    began: Instant,
}

/// A ring that takes each request's buffer for as long as the request is
/// in flight and hands it back with the completion: safe to use from code
/// without `unsafe`. Its waits are bound as [`OwnedIo`] says.
pub struct OwnedRing {
    ring: IoUring,
    file: File,
    /// Whether the file is registered with the ring (else its descriptor
    /// is passed with every request).
    fixed_file: bool,
    /// The ids of the buffers registered with the ring, in their index
    /// order (see [`OwnedIo::lend`]).
    registered: Vec<u64>,
    slots: Vec<Option<Flying>>,
    /// The flush in flight (since when), and its result once reaped.
    sync: Option<Instant>,
    synced: Option<i32>,
    bounds: Bounds,
    /// A stop was seen.
    woken: bool,
    /// Requests were given up in flight (a stop, a hang, a failed ring):
    /// their buffers are never freed, and nothing more is started.
    leak: bool,
}

impl OwnedRing {
    /// A ring for `depth` requests on `file`, bound by `bounds`. Fails
    /// where the kernel has no io_uring (or it is disabled).
    pub fn new(file: &File, depth: usize, bounds: &Bounds) -> io::Result<Self> {
        let depth = depth.clamp(1, 256);
        // Room for the slots, a flush, the wait for a stop, and the
        // cancellations of an abandon.
        let ring = IoUring::new((2 * depth as u32 + 2).next_power_of_two())?;
        let fixed_file = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        let mut ring = Self {
            ring,
            file: file.try_clone()?,
            fixed_file,
            registered: Vec::new(),
            slots: (0..depth).map(|_| None).collect(),
            sync: None,
            synced: None,
            bounds: bounds.clone(),
            woken: false,
            leak: false,
        };
        if let Some(fd) = bounds.stop.waker() {
            let entry = opcode::PollAdd::new(types::Fd(fd.as_raw_fd()), nix::libc::POLLIN as u32)
                .build()
                .user_data(WAKE);
            // SAFETY: a poll carries no buffer; the kernel holds its own
            // reference to the file polled.
            unsafe { ring.push(&entry) }?;
        }
        Ok(ring)
    }

    /// Registers `bufs` with the ring, unless it has registered some
    /// already (once per ring).
    fn register(&mut self, bufs: &[AlignedBuf]) {
        if !self.registered.is_empty() || bufs.is_empty() {
            return;
        }
        let iovecs: Vec<nix::libc::iovec> = bufs
            .iter()
            .map(|b| nix::libc::iovec { iov_base: b.as_ptr().cast(), iov_len: b.len() })
            .collect();
        // SAFETY: the kernel pins the buffers' pages and holds them until
        // the ring unregisters them (or is torn down), whatever becomes of
        // the allocations; a registered buffer is written or read only by
        // a request on that very buffer, alive in its slot (a discard
        // buffer's memory is the process's for its life, and only the
        // kernel writes it).
        if unsafe { self.ring.submitter().register_buffers(&iovecs) }.is_ok() {
            self.registered = bufs.iter().map(AlignedBuf::id).collect();
        }
    }

    /// Pushes `entry` and submits it.
    ///
    /// SAFETY: any buffer `entry` names must stay valid until its
    /// completion has been reaped.
    unsafe fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        // SAFETY: as the caller promises; the queue is sized for every
        // entry that can be outstanding at once.
        unsafe { self.ring.submission().push(entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.ring.submit()?;
        Ok(())
    }

    /// The read or write of `f`, for slot `slot`: on the registered file
    /// where there is one, into or out of a registered buffer where `f`'s is
    /// one.
    fn entry(&self, slot: usize, f: &Flying) -> squeue::Entry {
        let (ptr, len, at) = (f.buf.as_ptr(), f.len as u32, f.offset);
        let index = self.registered.iter().position(|id| *id == f.buf.id());
        let index = index.map(|i| i as u16);
        macro_rules! request {
            ($target:expr) => {
                match (index, f.dir) {
                    (Some(i), Direction::Write) => {
                        opcode::WriteFixed::new($target, ptr, len, i).offset(at).build()
                    }
                    (Some(i), Direction::Read) => {
                        opcode::ReadFixed::new($target, ptr, len, i).offset(at).build()
                    }
                    (None, Direction::Write) => {
                        opcode::Write::new($target, ptr, len).offset(at).build()
                    }
                    (None, Direction::Read) => {
                        opcode::Read::new($target, ptr, len).offset(at).build()
                    }
                }
            };
        }
        let entry = if self.fixed_file {
            request!(types::Fixed(0))
        } else {
            request!(types::Fd(self.file.as_raw_fd()))
        };
        // Straight to the kernel's io workers, not first tried without
        // blocking: a request tried that way and retried is charged twice
        // by blk-throttle (cgroup I/O limits), measured as 25 MB/s under a
        // 50 MB/s limit (50 with this flag), and it is no slower on
        // memory-backed loops (docs/benchmarks.md).
        entry.user_data(slot as u64).flags(squeue::Flags::ASYNC)
    }

    /// Submits the request in `slot` (again, when the kernel interrupted
    /// it); on failure the slot's buffer stays with the ring.
    fn submit(&mut self, slot: usize) -> io::Result<()> {
        let Some(f) = self.slots[slot].as_ref() else {
            return Err(io::Error::other("io_uring: an empty slot"));
        };
        let entry = self.entry(slot, f);
        // SAFETY: the buffer stays in its slot, unmoved (its memory is a
        // fixed heap allocation), until the request's completion is
        // reaped; dropping the ring first waits for every request (or
        // leaks their buffers).
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            return Err(io::Error::other("io_uring submission queue full"));
        }
        if let Err(e) = self.ring.submit() {
            // The entry is queued and may still be carried out.
            self.leak = true;
            return Err(e);
        }
        Ok(())
    }

    /// Starts `dir` on `buf` in a free slot.
    fn begin(
        &mut self,
        dir: Direction,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> Result<(), Refused> {
        if self.bounds.is_hung() || self.leak {
            return Err((buf, self.bounds.hung_error()));
        }
        let Some(slot) = self.slots.iter().position(Option::is_none) else {
            return Err((buf, io::Error::other("io_uring: no free slot")));
        };
        let len = len.min(buf.len());
        self.slots[slot] = Some(Flying { buf, offset, len, dir, began: Instant::now() });
        match self.submit(slot) {
            Ok(()) => Ok(()),
            // Never queued: the buffer goes back.
            Err(e) if !self.leak => match self.slots[slot].take() {
                Some(f) => Err((f.buf, e)),
                None => Err((AlignedBuf::new(len), e)),
            },
            // Queued and perhaps carried out: its buffer stays in its slot
            // (and is never freed); the caller gets a fresh one.
            Err(e) => Err((AlignedBuf::new(len), e)),
        }
    }

    /// When the oldest request in flight (a flush included) was started.
    fn oldest(&self) -> Option<Instant> {
        self.slots.iter().flatten().map(|f| f.began).chain(self.sync).min()
    }

    /// Files one completion: a slot's request as done (or submitted again
    /// when the kernel interrupted it), a flush's result in `synced`.
    fn file(&mut self, user: u64, res: i32) -> Option<Done> {
        match user {
            WAKE => self.woken = true,
            CANCEL => {}
            SYNC => {
                self.sync = None;
                self.synced = Some(res);
            }
            slot => {
                let slot = slot as usize;
                let interrupted = res == -nix::libc::EINTR || res == -nix::libc::EAGAIN;
                if interrupted && !self.leak && self.slots.get(slot).is_some_and(Option::is_some) {
                    match self.submit(slot) {
                        Ok(()) => return None,
                        // Queued and perhaps carried out: still in flight.
                        Err(_) if self.leak => return None,
                        // Never queued: handed back failed.
                        Err(_) => {}
                    }
                }
                let f = self.slots.get_mut(slot).and_then(Option::take)?;
                return Some(Done {
                    buf: f.buf,
                    offset: f.offset,
                    len: f.len,
                    result: if res < 0 {
                        Err(io::Error::from_raw_os_error(-res))
                    } else {
                        Ok(res as usize)
                    },
                    began: f.began,
                    ended: Instant::now(),
                });
            }
        }
        None
    }

    /// Waits for one completion, as [`OwnedIo::wait`] bounds it: a slot's
    /// request returned; `Ok(None)` once a flush's result is in `synced`,
    /// or when nothing is in flight.
    fn reap(&mut self, until: Until) -> Result<Option<Done>, Halt> {
        loop {
            let reaped = self.ring.completion().next();
            if let Some((user, res)) = reaped.map(|c| (c.user_data(), c.result())) {
                let sync = user == SYNC;
                if let Some(d) = self.file(user, res) {
                    return Ok(Some(d));
                }
                if sync {
                    return Ok(None);
                }
                continue;
            }
            let Some(oldest) = self.oldest() else { return Ok(None) };
            let stopped = self.woken || self.bounds.stop.is_set();
            let next = self.bounds.wait_until(oldest, until, (stopped, None)).inspect_err(|h| {
                // What is in flight on a hung disk is never waited for.
                self.leak |= *h == Halt::Hung;
            })?;
            self.await_one(next.saturating_duration_since(Instant::now()))?;
        }
    }

    /// Waits at most `within` for a completion to arrive.
    fn await_one(&mut self, within: Duration) -> Result<(), Halt> {
        let ts = types::Timespec::from(within);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(nix::libc::ETIME | nix::libc::EINTR)) => {
                Ok(())
            }
            Err(_) => {
                // The ring itself failed: what is in flight cannot be
                // waited for.
                self.leak = true;
                self.bounds.set_hung();
                Err(Halt::Hung)
            }
        }
    }
}

impl OwnedIo for OwnedRing {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn in_flight(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    fn start(
        &mut self,
        dir: Direction,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> Result<(), Refused> {
        self.begin(dir, buf, len, offset)
    }

    fn wait(&mut self, until: Until) -> Result<Option<Done>, Halt> {
        if self.in_flight() == 0 {
            return Ok(None);
        }
        self.reap(until)
    }

    fn sync(&mut self, until: Until) -> Result<io::Result<()>, Halt> {
        if self.bounds.is_hung() || self.leak {
            return Ok(Err(self.bounds.hung_error()));
        }
        // Writes still in flight when the caller stopped waiting for them
        // (a stop's drain ran out): no flush can be asked for yet, and
        // that says nothing of the disk.
        if self.in_flight() > 0 {
            return Err(Halt::Late);
        }
        if self.sync.is_none() {
            let target = types::Fd(self.file.as_raw_fd());
            let entry = opcode::Fsync::new(target)
                .flags(types::FsyncFlags::DATASYNC)
                .build()
                .user_data(SYNC);
            // SAFETY: a flush carries no buffer.
            if let Err(e) = unsafe { self.push(&entry) } {
                return Ok(Err(e));
            }
            self.sync = Some(Instant::now());
            self.synced = None;
        }
        while self.synced.is_none() {
            self.reap(until)?;
        }
        Ok(match self.synced.take() {
            Some(r) if r < 0 => Err(io::Error::from_raw_os_error(-r)),
            _ => Ok(()),
        })
    }

    /// Registers the buffers it lends (once per ring): a request on one
    /// then needs no pinning of its pages. The kernel holds the pages of a
    /// registered buffer until the ring unregisters them, and a buffer is
    /// used as registered only while it is the very allocation registered
    /// (its id), so a buffer dropped meanwhile is never written through.
    fn lend(&mut self, count: usize, len: usize) -> Vec<AlignedBuf> {
        let bufs: Vec<AlignedBuf> = (0..count).map(|_| AlignedBuf::new(len)).collect();
        self.register(&bufs);
        bufs
    }

    /// Views of one memory, registered once as one buffer: every read in
    /// flight lands in it.
    fn lend_discard(&mut self, count: usize, len: usize) -> Vec<AlignedBuf> {
        let bufs: Vec<AlignedBuf> = (0..count).map(|_| AlignedBuf::discard(len)).collect();
        self.register(&bufs[..bufs.len().min(1)]);
        bufs
    }

    /// Cancels what is in flight and waits for it at most `within`; what
    /// is still in flight then keeps its buffer for good.
    fn abandon(&mut self, within: Duration) {
        self.leak = true;
        let flying: Vec<u64> =
            (0..self.slots.len()).filter(|i| self.slots[*i].is_some()).map(|i| i as u64).collect();
        for user in flying {
            let entry = opcode::AsyncCancel::new(user).build().user_data(CANCEL);
            // SAFETY: a cancellation carries no buffer.
            let _ = unsafe { self.ring.submission().push(&entry) };
        }
        let _ = self.ring.submit();
        let until = Until::Deadline(Instant::now() + within);
        while self.in_flight() > 0 && matches!(self.reap(until), Ok(Some(_))) {}
        if self.in_flight() == 0 && self.sync.is_none() {
            // Nothing of the kernel's is left: the ring can be used (and
            // dropped) as any other.
            self.leak = self.bounds.is_hung();
        }
    }
}

impl Drop for OwnedRing {
    /// Waits a moment for what is in flight (a write drains in
    /// milliseconds on a healthy disk); what is still in flight then is
    /// left to the kernel and its buffers are never freed.
    fn drop(&mut self) {
        let until = Until::Deadline(Instant::now() + Duration::from_secs(1));
        while !self.leak && (self.in_flight() > 0 || self.sync.is_some()) {
            if self.reap(until).is_err() {
                self.leak = true;
            }
        }
        if self.leak {
            std::mem::forget(std::mem::take(&mut self.slots));
        } else {
            // Let go of the device (and the buffers' pages) now, not when
            // the kernel gets round to tearing the ring down after the
            // process: a disk released by arrayburn can be unplugged,
            // detached or given to ZFS at once.
            if self.fixed_file {
                let _ = self.ring.submitter().unregister_files();
            }
            if !self.registered.is_empty() {
                let _ = self.ring.submitter().unregister_buffers();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stop::StopFlag;

    #[test]
    fn registered_and_ordinary_buffers_both_carry_their_data() {
        if !super::super::uring_available() {
            eprintln!("no io_uring in this kernel: skipped");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let f = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(d.path().join("disk"))
            .unwrap();
        let bounds = Bounds::new(&StopFlag::default(), Duration::from_secs(60));
        let mut ring = OwnedRing::new(&f, 2, &bounds).unwrap();
        let mut lent = ring.lend(2, 8192);
        assert_eq!(ring.registered.len(), 2, "this kernel registers buffers");
        // A buffer dropped and one allocated after it (perhaps at the same
        // address) is an ordinary one.
        drop(lent.pop());
        let fresh = AlignedBuf::new(8192);
        for (k, mut b) in [lent.remove(0), fresh].into_iter().enumerate() {
            b.slice_mut(8192).fill(k as u8 + 1);
            let at = k as u64 * 8192;
            let done = ring.now(Direction::Write, b, 8192, at, Until::Stop).unwrap();
            assert_eq!(done.result.unwrap(), 8192);
            let mut back = ring.now(Direction::Read, done.buf, 8192, at, Until::Stop).unwrap();
            assert_eq!(back.whole().unwrap(), ());
            assert!(back.buf.slice_mut(8192).iter().all(|x| *x == k as u8 + 1));
        }
        assert!(ring.sync(Until::Stop).unwrap().is_ok());
        let mut plain = vec![0u8; 16384];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut plain, 0).unwrap();
        assert!(plain[..8192].iter().all(|x| *x == 1) && plain[8192..].iter().all(|x| *x == 2));
    }

    #[test]
    fn every_read_on_discard_buffers_lands_in_one_registered_memory() {
        if !super::super::uring_available() {
            eprintln!("no io_uring in this kernel: skipped");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("disk");
        std::fs::write(&path, vec![9u8; 4 * 8192]).unwrap();
        let f = File::open(&path).unwrap();
        let bounds = Bounds::new(&StopFlag::default(), Duration::from_secs(60));
        let mut ring = OwnedRing::new(&f, 4, &bounds).unwrap();
        let lent = ring.lend_discard(4, 8192);
        assert_eq!(ring.registered, vec![lent[0].id()], "one memory, registered once");
        assert!(lent.iter().all(|b| b.as_ptr() == lent[0].as_ptr()));
        // Four reads in flight at once, each at its own offset, all into it.
        for (k, b) in lent.into_iter().enumerate() {
            ring.start(Direction::Read, b, 8192, k as u64 * 8192).unwrap();
        }
        let mut landed = Vec::new();
        while let Some(done) = ring.wait(Until::Stop).unwrap() {
            landed.push((done.offset, done.result.unwrap()));
        }
        landed.sort_unstable();
        assert_eq!(landed, (0..4).map(|k| (k * 8192, 8192)).collect::<Vec<_>>());
    }
}

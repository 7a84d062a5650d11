//! The io_uring engine: up to `depth` reads in flight per disk, into
//! buffers registered with the kernel once (huge-page backed, as the pread
//! engine's) on a file registered once, so a read costs one submission
//! queue entry and no page pinning. Each read's latency is its completion
//! (when it was reaped) minus its submission.
//!
//! The kernel writes into a registered buffer until the request completes,
//! so nothing here lets a buffer go while a request on it is in flight:
//! the buffers live as long as the engine, and dropping the engine first
//! waits for every request it submitted.
#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, types};

use super::owned::{Bounds, Done, Halt, OwnedIo, Refused, Until};
use super::{Completion, Engine, Queued};
use crate::device::buffer::{AlignedBuf, Chunk};

/// The user data of the one synchronous read (pinpointing) at a time, of
/// the cancellations when a run is stopped, and of the wait for a stop.
const SYNC: u64 = u64::MAX;
const CANCEL: u64 = u64::MAX - 1;
const WAKE: u64 = u64::MAX - 2;

/// Reads of one device through its own ring.
pub struct UringEngine {
    ring: IoUring,
    /// Kept open as long as the ring may read it.
    file: File,
    /// Whether the file and the buffers are registered (else plain
    /// descriptors and pointers are used).
    fixed_file: bool,
    fixed_bufs: bool,
    bufs: Vec<AlignedBuf>,
    free: Vec<usize>,
    /// What each slot is reading, and since when.
    flying: Vec<Option<(Chunk, Instant)>>,
    /// Completions reaped while waiting for something else.
    ready: VecDeque<Completion>,
    /// The buffer of the synchronous read, the engine's own (allocated at
    /// the first), so that a stop can abandon that read too; and whether
    /// that read is in flight.
    sync_buf: Option<AlignedBuf>,
    sync_flying: Option<Instant>,
    /// Requests were abandoned still in flight: their buffers are never
    /// freed (the kernel may still fill them after this engine is gone).
    leak: bool,
    /// A stop was asked for (see [`Self::wake_on`]).
    woken: bool,
    /// The stop and the I/O timeout; whether this disk hung.
    bounds: Bounds,
    /// The reads in flight when the disk hung were reported as failed.
    hung_reported: bool,
}

impl UringEngine {
    /// A ring of `depth` reads of up to `block` bytes on `file` (opened
    /// with [`super::open_direct`]). Fails where the kernel has no io_uring
    /// (or it is disabled): the caller falls back to pread.
    pub fn new(file: File, depth: usize, block: usize, bounds: &Bounds) -> io::Result<Self> {
        let depth = depth.clamp(1, 256);
        // One entry more for the synchronous read of a pinpointing.
        let ring = IoUring::new((depth as u32 + 1).next_power_of_two())?;
        let bufs: Vec<AlignedBuf> = (0..depth).map(|_| AlignedBuf::new(block)).collect();
        let iovecs: Vec<nix::libc::iovec> = bufs
            .iter()
            .map(|b| nix::libc::iovec {
                iov_base: b.as_ptr() as *mut _,
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: the buffers outlive the registration (both belong to the
        // engine; the ring, dropped with it, unregisters them) and are not
        // moved: an AlignedBuf's memory is a fixed heap allocation.
        let fixed_bufs = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let fixed_file = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        Ok(Self {
            ring,
            file,
            fixed_file,
            fixed_bufs,
            bufs,
            free: (0..depth).rev().collect(),
            flying: vec![None; depth],
            ready: VecDeque::new(),
            sync_buf: None,
            sync_flying: None,
            leak: false,
            woken: false,
            bounds: bounds.clone(),
            hung_reported: false,
        })
    }

    /// When the disk hangs if nothing completes: the oldest read in
    /// flight's start plus the I/O timeout.
    fn hung_at(&self) -> Option<Instant> {
        self.flying
            .iter()
            .flatten()
            .map(|f| f.1)
            .chain(self.sync_flying)
            .min()
            .map(|t| t + self.bounds.timeout)
    }

    /// The disk hung: nothing in flight is waited for again (the buffers
    /// stay with the kernel), and every later read fails at once.
    fn hang(&mut self) {
        self.bounds.set_hung();
        self.leak = true;
    }

    /// Stops waiting for reads once `fd` becomes readable (the stop
    /// flag's waker): the ring polls it beside the reads, so a wait for a
    /// read queued behind others on a slow disk ends at a stop, not seconds
    /// later when the read does.
    pub fn wake_on(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        let entry = opcode::PollAdd::new(types::Fd(fd.as_raw_fd()), nix::libc::POLLIN as u32)
            .build()
            .user_data(WAKE);
        // SAFETY: a poll carries no buffer; the kernel holds its own
        // reference to the file polled.
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.ring.submit()?;
        Ok(())
    }

    /// Pushes a read of `len` bytes at `offset` into `ptr` (slot `index`
    /// of the registered buffers when `fixed`).
    ///
    /// SAFETY: `ptr` must stay valid for `len` bytes until the request's
    /// completion has been reaped.
    unsafe fn push(
        &mut self,
        ptr: *mut u8,
        len: usize,
        offset: u64,
        index: Option<u16>,
        user_data: u64,
    ) -> io::Result<()> {
        let len = len as u32;
        let fd = self.file.as_raw_fd();
        let entry = match (index, self.fixed_file) {
            (Some(i), true) => opcode::ReadFixed::new(types::Fixed(0), ptr, len, i)
                .offset(offset)
                .build(),
            (Some(i), false) => opcode::ReadFixed::new(types::Fd(fd), ptr, len, i)
                .offset(offset)
                .build(),
            (None, true) => opcode::Read::new(types::Fixed(0), ptr, len)
                .offset(offset)
                .build(),
            (None, false) => opcode::Read::new(types::Fd(fd), ptr, len)
                .offset(offset)
                .build(),
        }
        .user_data(user_data)
        // Straight to the kernel's io workers, not first tried without
        // blocking: a read tried that way and retried is charged twice by
        // blk-throttle (cgroup I/O limits), measured here as 25 MB/s under
        // a 50 MB/s limit (50 with this flag), and it is no slower on
        // memory-backed loops (docs/benchmarks.md).
        .flags(io_uring::squeue::Flags::ASYNC);
        // SAFETY: the caller keeps the buffer alive until completion; the
        // queue has room (at most depth + 1 entries are ever outstanding).
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.ring.submit()?;
        Ok(())
    }

    /// Submits a read of `chunk` into a free slot's buffer.
    fn start(&mut self, slot: usize, chunk: Chunk) -> io::Result<()> {
        let ptr = self.bufs[slot].as_ptr();
        let index = self.fixed_bufs.then_some(slot as u16);
        // SAFETY: slot buffers live as long as the engine, and the engine
        // reaps every request before it is dropped.
        unsafe { self.push(ptr, chunk.len(), chunk.offset(), index, slot as u64) }?;
        self.flying[slot] = Some((chunk, Instant::now()));
        Ok(())
    }

    /// Waits for at least one completion (at most until the disk would
    /// count as hung) and files each reaped one: a slot's read into
    /// `ready` (or submitted again when interrupted), the synchronous
    /// read's result returned.
    fn reap(&mut self) -> io::Result<Option<i32>> {
        let left = self.hung_at().map(|t| {
            t.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        });
        self.reap_within(left)
    }

    /// As [`Self::reap`], waiting at most `limit` (then nothing is reaped).
    fn reap_within(&mut self, limit: Option<std::time::Duration>) -> io::Result<Option<i32>> {
        match limit {
            None => {
                self.ring.submit_and_wait(1)?;
            }
            Some(d) => {
                let ts = types::Timespec::from(d);
                let args = types::SubmitArgs::new().timespec(&ts);
                match self.ring.submitter().submit_with_args(1, &args) {
                    Ok(_) => {}
                    Err(e) if e.raw_os_error() == Some(nix::libc::ETIME) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let done: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        let mut sync = None;
        for (user, res) in done {
            if user == SYNC {
                self.sync_flying = None;
                sync = Some(res);
                continue;
            }
            if user == CANCEL {
                continue;
            }
            if user == WAKE {
                self.woken = true;
                continue;
            }
            let slot = user as usize;
            let Some((chunk, submitted)) = self.flying[slot].take() else {
                continue;
            };
            if (res == -nix::libc::EINTR || res == -nix::libc::EAGAIN) && !self.leak {
                self.start(slot, chunk)?;
                self.flying[slot] = Some((chunk, submitted));
                continue;
            }
            self.free.push(slot);
            self.ready.push_back(Completion {
                chunk,
                result: if res < 0 {
                    Err(io::Error::from_raw_os_error(-res))
                } else {
                    Ok(res as usize)
                },
                submitted,
                done: Instant::now(),
            });
        }
        Ok(sync)
    }
}

impl Engine for UringEngine {
    /// One read on its own (pinpointing a failed read), beside any in
    /// flight: their completions wait in `ready`. It reads into the
    /// engine's own buffer, so a stop need not wait for it: a read of a
    /// failing sector can take the drive half a minute (its retries, the
    /// kernel's timeout). Stopped, it returns `Interrupted` and leaves the
    /// read in flight; past the I/O timeout, the disk hung.
    fn read(&mut self, chunk: Chunk) -> io::Result<usize> {
        let stopped = || io::Error::new(io::ErrorKind::Interrupted, "stopped");
        if self.woken {
            return Err(stopped());
        }
        if self.bounds.is_hung() {
            return Err(self.bounds.hung_error());
        }
        if self.sync_flying.is_some() {
            // The ring failed while waiting for the last one: its buffer
            // may still be written.
            return Err(io::Error::other(
                "io_uring: an earlier read is still in flight",
            ));
        }
        if self
            .sync_buf
            .as_ref()
            .is_some_and(|b| b.len() < chunk.len())
        {
            self.sync_buf = None;
        }
        let dst = self
            .sync_buf
            .get_or_insert_with(|| AlignedBuf::new(chunk.len()))
            .as_ptr();
        let mut done = 0usize;
        while done < chunk.len() {
            // SAFETY: the buffer is the engine's: it is replaced only when
            // no synchronous read is in flight, and leaked with the engine
            // when one was abandoned.
            unsafe {
                self.push(
                    dst.add(done),
                    chunk.len() - done,
                    chunk.offset() + done as u64,
                    None,
                    SYNC,
                )
            }?;
            self.sync_flying = Some(Instant::now());
            let res = loop {
                if let Some(res) = self.reap()? {
                    break res;
                }
                if self.woken {
                    return Err(stopped());
                }
                if self.hung_at().is_some_and(|t| Instant::now() >= t) {
                    self.hang();
                    return Err(self.bounds.hung_error());
                }
            };
            match res {
                0 => break,
                r if r == -nix::libc::EINTR || r == -nix::libc::EAGAIN => continue,
                r if r < 0 => return Err(io::Error::from_raw_os_error(-r)),
                n => done += n as usize,
            }
        }
        Ok(done)
    }

    fn queued(&mut self) -> Option<&mut dyn Queued> {
        Some(self)
    }

    fn name(&self) -> &'static str {
        "io_uring"
    }
}

impl Queued for UringEngine {
    fn depth(&self) -> usize {
        self.bufs.len()
    }

    fn in_flight(&self) -> usize {
        self.bufs.len() - self.free.len()
    }

    fn submit(&mut self, chunk: Chunk) -> io::Result<()> {
        if self.bounds.is_hung() {
            return Err(self.bounds.hung_error());
        }
        let slot = self
            .free
            .pop()
            .ok_or_else(|| io::Error::other("io_uring: no free slot"))?;
        if let Err(e) = self.start(slot, chunk) {
            self.free.push(slot);
            return Err(e);
        }
        Ok(())
    }

    fn abandon(&mut self, within: std::time::Duration) {
        let flying: Vec<u64> = (0..self.flying.len())
            .filter(|i| self.flying[*i].is_some())
            .map(|i| i as u64)
            .chain(self.sync_flying.map(|_| SYNC))
            .collect();
        // No retry of an interrupted read from here on.
        self.leak = true;
        for user in flying {
            let entry = opcode::AsyncCancel::new(user).build().user_data(CANCEL);
            // SAFETY: a cancellation carries no buffer.
            let _ = unsafe { self.ring.submission().push(&entry) };
        }
        let _ = self.ring.submit();
        let until = Instant::now() + within;
        while self.in_flight() > 0 || self.sync_flying.is_some() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || self.reap_within(Some(left)).is_err() {
                break;
            }
        }
        self.ready.clear();
        self.leak = self.in_flight() > 0 || self.sync_flying.is_some();
    }

    fn complete(&mut self) -> Option<Completion> {
        while self.ready.is_empty() {
            if self.in_flight() == 0 || self.woken || self.hung_reported {
                return None;
            }
            if self.hung_at().is_some_and(|t| Instant::now() >= t) {
                // Hung: every read in flight fails as timed out, oldest
                // first; they stay the kernel's.
                self.hang();
                self.hung_reported = true;
                let mut failed: Vec<(Chunk, Instant)> =
                    self.flying.iter().flatten().copied().collect();
                failed.sort_by_key(|f| f.1);
                for (chunk, submitted) in failed {
                    self.ready.push_back(Completion {
                        chunk,
                        result: Err(self.bounds.hung_error()),
                        submitted,
                        done: Instant::now(),
                    });
                }
                break;
            }
            if let Err(e) = self.reap() {
                // The ring itself failed: what is in flight cannot be
                // waited for one by one; report each as failed.
                let failed: Vec<(Chunk, Instant)> =
                    self.flying.iter_mut().filter_map(Option::take).collect();
                self.free = (0..self.bufs.len()).rev().collect();
                for (chunk, submitted) in failed {
                    self.ready.push_back(Completion {
                        chunk,
                        result: Err(io::Error::new(e.kind(), e.to_string())),
                        submitted,
                        done: Instant::now(),
                    });
                }
            }
        }
        self.ready.pop_front()
    }
}

impl Drop for UringEngine {
    /// Waits for every request still in flight: the kernel may write into
    /// their buffers until then.
    fn drop(&mut self) {
        while !self.leak && (self.in_flight() > 0 || self.sync_flying.is_some()) {
            let hung = self.hung_at().is_some_and(|t| Instant::now() >= t);
            if hung || self.reap().is_err() {
                self.leak = true;
            }
        }
        if self.leak {
            // The kernel may still write into them: they stay allocated
            // until the process ends (a run stopped by a signal ends it).
            std::mem::forget(std::mem::take(&mut self.bufs));
            std::mem::forget(self.sync_buf.take());
        } else {
            // Let go of the device now, not when the kernel gets round to
            // tearing the ring down after the process: a disk released by
            // arrayburn can be unplugged, detached or given to ZFS at once.
            let _ = self.ring.submitter().unregister_files();
            let _ = self.ring.submitter().unregister_buffers();
        }
    }
}

/// The user data of an [`OwnedRing`]'s flush and of its wait for a stop
/// (its slots are numbered from 0).
const RING_SYNC: u64 = u64::MAX;
const RING_WAKE: u64 = u64::MAX - 1;

/// A ring that takes each request's buffer for as long as the request is
/// in flight and hands it back with the completion: safe to use from code
/// without `unsafe` (the burn-in's writes and read-backs). Its waits are
/// bound as [`OwnedIo`] says: a stop wakes them (the ring polls the stop
/// flag's waker beside the requests), and a request outstanding longer
/// than the I/O timeout makes the disk hung.
pub struct OwnedRing {
    ring: IoUring,
    file: File,
    /// Each slot's request: buffer, offset, length, when it was submitted.
    slots: Vec<Option<(AlignedBuf, u64, usize, Instant)>>,
    /// The flush in flight (since when), and its result once reaped.
    sync: Option<Instant>,
    synced: Option<i32>,
    bounds: Bounds,
    /// A stop was seen.
    woken: bool,
    /// Requests were given up in flight (a stop, a hang, a failed ring):
    /// their buffers are never freed.
    leak: bool,
}

impl OwnedRing {
    /// A ring for `depth` requests on `file`, bound by `bounds`.
    pub fn new(file: &File, depth: usize, bounds: &Bounds) -> io::Result<Self> {
        let depth = depth.clamp(1, 256);
        let mut ring = Self {
            // Room for the slots, a flush and the wait for a stop.
            ring: IoUring::new((depth as u32 + 2).next_power_of_two())?,
            file: file.try_clone()?,
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
                .user_data(RING_WAKE);
            // SAFETY: a poll carries no buffer; the kernel holds its own
            // reference to the file polled.
            unsafe { ring.ring.submission().push(&entry) }
                .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            ring.ring.submit()?;
        }
        Ok(ring)
    }

    fn start(
        &mut self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
        write: bool,
    ) -> Result<(), Refused> {
        if self.bounds.is_hung() || self.leak {
            return Err((buf, self.bounds.hung_error()));
        }
        let Some(slot) = self.slots.iter().position(Option::is_none) else {
            return Err((buf, io::Error::other("io_uring: no free slot")));
        };
        let len = len.min(buf.len());
        let fd = types::Fd(self.file.as_raw_fd());
        let ptr = buf.as_ptr();
        let entry = if write {
            opcode::Write::new(fd, ptr, len as u32)
                .offset(offset)
                .build()
        } else {
            opcode::Read::new(fd, ptr, len as u32)
                .offset(offset)
                .build()
        }
        .user_data(slot as u64)
        .flags(io_uring::squeue::Flags::ASYNC);
        // SAFETY: the buffer is moved into the slot below and stays there,
        // unmoved (its memory is a fixed heap allocation), until the
        // request's completion is reaped; dropping the ring first waits
        // for every request (or leaks their buffers).
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return Err((buf, io::Error::other("io_uring submission queue full")));
        }
        self.slots[slot] = Some((buf, offset, len, Instant::now()));
        if let Err(e) = self.ring.submit() {
            // The entry is in the queue and may still be carried out: its
            // buffer stays in its slot (and is never freed); the caller
            // gets a fresh one in its place.
            self.leak = true;
            return Err((AlignedBuf::new(len), e));
        }
        Ok(())
    }

    /// When the oldest request in flight (a flush included) was started.
    fn oldest(&self) -> Option<Instant> {
        self.slots
            .iter()
            .flatten()
            .map(|s| s.3)
            .chain(self.sync)
            .min()
    }

    /// Waits for one completion, as [`OwnedIo::wait`] bounds it: a slot's
    /// request returned, a flush's result kept in `synced`.
    fn reap(&mut self, until: Until) -> Result<Option<Done>, Halt> {
        loop {
            if let Some(c) = self.ring.completion().next() {
                let (user, res) = (c.user_data(), c.result());
                match user {
                    RING_WAKE => self.woken = true,
                    RING_SYNC => {
                        self.sync = None;
                        self.synced = Some(res);
                        return Ok(None);
                    }
                    slot => {
                        let Some((buf, offset, len, began)) =
                            self.slots.get_mut(slot as usize).and_then(Option::take)
                        else {
                            continue;
                        };
                        return Ok(Some(Done {
                            buf,
                            offset,
                            len,
                            result: if res < 0 {
                                Err(io::Error::from_raw_os_error(-res))
                            } else {
                                Ok(res as usize)
                            },
                            began,
                            ended: Instant::now(),
                        }));
                    }
                }
                continue;
            }
            let Some(oldest) = self.oldest() else {
                return Ok(None);
            };
            if until == Until::Stop && (self.woken || self.bounds.stop.is_set()) {
                return Err(Halt::Stopped);
            }
            let now = Instant::now();
            let hung_at = oldest + self.bounds.timeout;
            if now >= hung_at {
                self.bounds.set_hung();
                self.leak = true;
                return Err(Halt::Hung);
            }
            let next = match until {
                Until::Deadline(d) if now >= d => return Err(Halt::Late),
                Until::Deadline(d) => hung_at.min(d),
                Until::Stop => hung_at,
            };
            let ts = types::Timespec::from(next - now);
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(nix::libc::ETIME | nix::libc::EINTR)) => {
                }
                Err(_) => {
                    // The ring itself failed: what is in flight cannot be
                    // waited for.
                    self.leak = true;
                    self.bounds.set_hung();
                    return Err(Halt::Hung);
                }
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

    fn write(&mut self, buf: AlignedBuf, len: usize, offset: u64) -> Result<(), Refused> {
        self.start(buf, len, offset, true)
    }

    fn read(&mut self, buf: AlignedBuf, len: usize, offset: u64) -> Result<(), Refused> {
        self.start(buf, len, offset, false)
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
        if self.in_flight() > 0 {
            return Ok(Err(io::Error::other("io_uring: requests are in flight")));
        }
        if self.sync.is_none() {
            let entry = opcode::Fsync::new(types::Fd(self.file.as_raw_fd()))
                .flags(types::FsyncFlags::DATASYNC)
                .build()
                .user_data(RING_SYNC);
            // SAFETY: a flush carries no buffer.
            if unsafe { self.ring.submission().push(&entry) }.is_err() {
                return Ok(Err(io::Error::other("io_uring submission queue full")));
            }
            if let Err(e) = self.ring.submit() {
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

    fn name(&self) -> &'static str {
        "io_uring"
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
        }
    }
}

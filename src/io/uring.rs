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
use std::time::Instant;

use io_uring::{IoUring, opcode, types};

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
    sync_flying: bool,
    /// Requests were abandoned still in flight: their buffers are never
    /// freed (the kernel may still fill them after this engine is gone).
    leak: bool,
    /// A stop was asked for (see [`Self::wake_on`]).
    woken: bool,
}

impl UringEngine {
    /// A ring of `depth` reads of up to `block` bytes on `file` (opened
    /// with [`super::open_direct`]). Fails where the kernel has no io_uring
    /// (or it is disabled): the caller falls back to pread.
    pub fn new(file: File, depth: usize, block: usize) -> io::Result<Self> {
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
            sync_flying: false,
            leak: false,
            woken: false,
        })
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

    /// Waits for at least one completion and files each reaped one: a
    /// slot's read into `ready` (or submitted again when interrupted), the
    /// synchronous read's result returned.
    fn reap(&mut self) -> io::Result<Option<i32>> {
        self.reap_within(None)
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
                self.sync_flying = false;
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
    /// engine's own buffer and copies into `buf`, so a stop need not wait
    /// for it: a read of a failing sector can take the drive half a minute
    /// (its retries, the kernel's timeout). Stopped, it returns
    /// `Interrupted` and leaves the read in flight.
    fn read(&mut self, buf: &mut AlignedBuf, chunk: Chunk) -> io::Result<usize> {
        let stopped = || io::Error::new(io::ErrorKind::Interrupted, "stopped");
        if self.woken {
            return Err(stopped());
        }
        if self.sync_flying {
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
            self.sync_flying = true;
            let res = loop {
                if let Some(res) = self.reap()? {
                    break res;
                }
                if self.woken {
                    return Err(stopped());
                }
            };
            match res {
                0 => break,
                r if r == -nix::libc::EINTR || r == -nix::libc::EAGAIN => continue,
                r if r < 0 => return Err(io::Error::from_raw_os_error(-r)),
                n => done += n as usize,
            }
        }
        if let Some(own) = &mut self.sync_buf {
            buf.slice_mut(done).copy_from_slice(own.slice_mut(done));
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
            .chain(self.sync_flying.then_some(SYNC))
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
        while self.in_flight() > 0 || self.sync_flying {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || self.reap_within(Some(left)).is_err() {
                break;
            }
        }
        self.ready.clear();
        self.leak = self.in_flight() > 0 || self.sync_flying;
    }

    fn complete(&mut self) -> Option<Completion> {
        while self.ready.is_empty() {
            if self.in_flight() == 0 || self.woken {
                return None;
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
        while !self.leak && (self.in_flight() > 0 || self.sync_flying) {
            if self.reap().is_err() {
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

/// A write or read that finished on an [`OwnedRing`], with its buffer
/// back.
pub struct Done {
    pub buf: AlignedBuf,
    pub offset: u64,
    pub len: usize,
    /// Bytes moved (all of `len`, or an error; a short transfer is an
    /// error too: the caller redoes it block by block).
    pub result: io::Result<()>,
}

/// A ring that takes each request's buffer for as long as the request is
/// in flight and hands it back with the completion: safe to use from code
/// without `unsafe` (the burn-in's writes and read-backs).
pub struct OwnedRing {
    ring: IoUring,
    file: File,
    slots: Vec<Option<(AlignedBuf, u64, usize)>>,
    leak: bool,
}

impl OwnedRing {
    /// A ring for `depth` requests on `file`.
    pub fn new(file: &File, depth: usize) -> io::Result<Self> {
        let depth = depth.clamp(1, 256);
        Ok(Self {
            ring: IoUring::new((depth as u32).next_power_of_two())?,
            file: file.try_clone()?,
            slots: (0..depth).map(|_| None).collect(),
            leak: false,
        })
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether another request may be started.
    pub fn room(&self) -> bool {
        self.slots.iter().any(Option::is_none)
    }

    /// Starts writing the first `len` bytes of `buf` at `offset`.
    pub fn write(
        &mut self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> Result<(), (AlignedBuf, io::Error)> {
        self.start(buf, len, offset, true)
    }

    /// Starts reading `len` bytes at `offset` into `buf`.
    pub fn read(
        &mut self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
    ) -> Result<(), (AlignedBuf, io::Error)> {
        self.start(buf, len, offset, false)
    }

    fn start(
        &mut self,
        buf: AlignedBuf,
        len: usize,
        offset: u64,
        write: bool,
    ) -> Result<(), (AlignedBuf, io::Error)> {
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
        self.slots[slot] = Some((buf, offset, len));
        if let Err(e) = self.ring.submit() {
            // The entry is in the queue and may still be carried out: its
            // buffer stays in its slot (and is never freed); the caller
            // gets a fresh one in its place.
            self.leak = true;
            return Err((AlignedBuf::new(len), e));
        }
        Ok(())
    }

    /// Waits for one request to finish; None when none is in flight.
    pub fn wait(&mut self) -> Option<Done> {
        loop {
            if self.in_flight() == 0 {
                return None;
            }
            if let Some(c) = self.ring.completion().next() {
                let slot = c.user_data() as usize;
                let res = c.result();
                let (buf, offset, len) = self.slots.get_mut(slot)?.take()?;
                let result = match res {
                    r if r < 0 => Err(io::Error::from_raw_os_error(-r)),
                    r if (r as usize) < len => Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("short transfer: {r} of {len} bytes"),
                    )),
                    _ => Ok(()),
                };
                return Some(Done {
                    buf,
                    offset,
                    len,
                    result,
                });
            }
            if self.ring.submit_and_wait(1).is_err() {
                self.leak = true;
                return None;
            }
        }
    }
}

impl Drop for OwnedRing {
    /// Waits for what is in flight; if the ring fails, the buffers are
    /// never freed (the kernel may still use them).
    fn drop(&mut self) {
        while !self.leak && self.wait().is_some() {}
        if self.leak {
            std::mem::forget(std::mem::take(&mut self.slots));
        }
    }
}

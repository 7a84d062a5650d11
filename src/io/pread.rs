//! The synchronous engine: one `pread(2)` per chunk on an O_DIRECT file
//! (queue depth 1, like `fio --ioengine=psync`, dd and solnet-array-test).
//! The pread is made by an I/O thread of the disk's own ([`ThreadIo`]), so
//! that a read the kernel never completes holds that thread, not the
//! worker: the worker's wait ends at a stop or the I/O timeout. Each read's
//! latency is timed around the pread itself, in that thread.

use std::fs::File;
use std::io;
use std::time::{Duration, Instant};

use super::owned::{Bounds, Halt, OwnedIo, ThreadIo, Until};
use super::{Completion, Engine, Queued};
use crate::device::buffer::{AlignedBuf, Chunk};

/// pread on an O_DIRECT descriptor, through the disk's I/O thread.
pub struct PreadEngine {
    io: ThreadIo,
    /// The buffer reads go into (with the I/O thread while one is in
    /// flight; lost with it when the disk hangs).
    buf: Option<AlignedBuf>,
    /// The chunk in flight.
    flying: Option<Chunk>,
    bounds: Bounds,
}

impl PreadEngine {
    /// Reads of up to `block` bytes from `file` (opened with
    /// [`super::open_direct`]), bound by `bounds`.
    pub fn new(file: &File, block: usize, bounds: &Bounds) -> io::Result<Self> {
        Ok(Self {
            io: ThreadIo::new(file, bounds)?,
            buf: Some(AlignedBuf::new(block)),
            flying: None,
            bounds: bounds.clone(),
        })
    }

    /// Waits for the read in flight: its completion, `Err(Stopped)` at a
    /// stop (the read is left to the I/O thread), or a completion that
    /// failed as timed out when the disk hung.
    fn finish(&mut self, until: Until) -> Result<Option<Completion>, Halt> {
        let Some(chunk) = self.flying else {
            return Ok(None);
        };
        match self.io.wait(until) {
            Ok(Some(d)) => {
                self.flying = None;
                self.buf = Some(d.buf);
                Ok(Some(Completion {
                    chunk,
                    result: d.result,
                    submitted: d.began,
                    done: d.ended,
                }))
            }
            Ok(None) => Ok(None),
            Err(Halt::Hung) => {
                self.flying = None;
                let now = Instant::now();
                Ok(Some(Completion {
                    chunk,
                    result: Err(self.bounds.hung_error()),
                    submitted: now,
                    done: now,
                }))
            }
            Err(h) => Err(h),
        }
    }
}

impl Engine for PreadEngine {
    fn read(&mut self, chunk: Chunk) -> io::Result<usize> {
        self.submit(chunk)?;
        match self.finish(Until::Stop) {
            Ok(Some(c)) => c.result,
            Ok(None) => Err(io::Error::other("psync: no read in flight")),
            Err(_) => Err(io::Error::new(io::ErrorKind::Interrupted, "stopped")),
        }
    }

    fn queued(&mut self) -> Option<&mut dyn Queued> {
        Some(self)
    }
}

impl Queued for PreadEngine {
    fn depth(&self) -> usize {
        1
    }

    fn in_flight(&self) -> usize {
        usize::from(self.flying.is_some())
    }

    fn submit(&mut self, chunk: Chunk) -> io::Result<()> {
        if self.bounds.is_hung() {
            return Err(self.bounds.hung_error());
        }
        let Some(buf) = self.buf.take() else {
            return Err(io::Error::other("psync: a read is in flight"));
        };
        match self.io.read(buf, chunk.len(), chunk.offset()) {
            Ok(()) => {
                self.flying = Some(chunk);
                Ok(())
            }
            Err((buf, e)) => {
                self.buf = Some(buf);
                Err(e)
            }
        }
    }

    fn complete(&mut self) -> Option<Completion> {
        self.finish(Until::Stop).ok().flatten()
    }

    fn abandon(&mut self, within: Duration) {
        let _ = self.finish(Until::Deadline(Instant::now() + within));
        // Still in flight: the I/O thread keeps the buffer until it ends.
        self.flying = None;
    }
}

//! The hot loop: read a chunk, time it, record it. No formatting, no locks,
//! no allocation, no channel traffic per read: progress is one relaxed atomic
//! store, and the histogram is recorded after the clock has stopped, so the
//! accounting never sits inside a measured interval.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hdrhistogram::Histogram;

use super::{DiskRun, ReadError, StopFlag, Window};
use crate::device::buffer::{AlignedBuf, Chunks};
use crate::io::Engine;

/// At most this many failed reads are kept with their offsets (all are
/// counted).
pub const MAX_KEPT_ERRORS: usize = 64;
/// A disk stops its pass after this many failed reads: a dying disk that
/// answers every read with EIO after a long timeout would otherwise hold the
/// whole check for hours.
pub const MAX_ERRORS: u64 = 256;

/// One disk's share of a pass.
pub struct Job {
    /// Index of the disk in the plan.
    pub disk: usize,
    /// How to read it.
    pub engine: Box<dyn Engine>,
    /// Device size in bytes.
    pub size: u64,
    /// Logical block size in bytes.
    pub logical_block: u32,
    /// Read size in bytes (a multiple of the logical block size).
    pub block: u64,
    /// How long to read.
    pub window: Window,
    /// The sample length: in a full pass, the bytes and time at this point
    /// are kept too, to compare with a sampled pass over the same zone.
    pub sample: std::time::Duration,
}

/// Latency histogram in nanoseconds, 1 ns to 1 h at 3 significant digits.
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds")
}

impl Job {
    /// Reads the disk from offset 0 for the window, reporting failed reads
    /// through `on_error` as they happen.
    pub fn run(
        mut self,
        stop: &StopFlag,
        progress: &AtomicU64,
        on_error: &dyn Fn(usize, ReadError),
    ) -> DiskRun {
        let mut buf = AlignedBuf::new(self.block as usize);
        let mut hist = new_histogram();
        let (mut bytes, mut reads, mut error_count) = (0u64, 0u64, 0u64);
        let mut errors = Vec::new();
        let deadline = match self.window {
            Window::Sample(d) => Some(d),
            Window::Full => None,
        };
        let mut window = None;
        let mut chunks = Chunks::new(self.size, self.logical_block, self.block);
        let start = Instant::now();
        let mut end = start;
        let mut reached_end = false;
        loop {
            if stop.is_set()
                || deadline.is_some_and(|d| end - start >= d)
                || error_count >= MAX_ERRORS
            {
                break;
            }
            let Some(chunk) = chunks.next() else {
                reached_end = true;
                break;
            };
            let t0 = Instant::now();
            let result = self.engine.read(&mut buf, chunk);
            end = Instant::now();
            match result {
                Ok(n) => {
                    hist.saturating_record((end - t0).as_nanos() as u64);
                    bytes += n as u64;
                    reads += 1;
                    progress.store(bytes, Ordering::Relaxed);
                    if window.is_none() && end - start >= self.sample {
                        window = Some((bytes, end - start));
                    }
                }
                Err(e) => {
                    error_count += 1;
                    let error = ReadError {
                        offset: chunk.offset(),
                        len: chunk.len() as u64,
                        errno: e.raw_os_error(),
                        message: e.to_string(),
                    };
                    if errors.len() < MAX_KEPT_ERRORS {
                        errors.push(error.clone());
                    }
                    on_error(self.disk, error);
                }
            }
        }
        DiskRun {
            bytes,
            elapsed: end - start,
            window: window.filter(|_| self.window == Window::Full),
            reads,
            latency_ns: hist,
            errors,
            error_count,
            reached_end,
            interrupted: stop.is_set() && !reached_end,
        }
    }
}

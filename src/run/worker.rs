//! The hot loop: read a chunk, time it, record it. No formatting, no locks,
//! no allocation, no channel traffic per read: progress is one relaxed atomic
//! store, and the histogram is recorded after the clock has stopped, so the
//! accounting never sits inside a measured interval.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::{DiskRun, ReadError, StopFlag, Window};
use crate::device::buffer::{AlignedBuf, Chunk, Chunks};
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

/// Marks the comparison window in a run: it opens after a warm-up of 10 %
/// of the sample (at most 5 s), so start-up effects (a head seeking from
/// idle, a drive's cache, a controller or throttle ramping) stay out of the
/// comparison, as fio's `ramp_time` and solnet's 60 s wait keep them out;
/// it closes at the sample length.
struct WindowMarks {
    warmup: Duration,
    sample: Duration,
    open: Option<(u64, Duration)>,
    close: Option<(u64, Duration)>,
}

impl WindowMarks {
    fn new(sample: Duration) -> Self {
        Self {
            warmup: sample.mul_f64(0.1).min(Duration::from_secs(5)),
            sample,
            open: None,
            close: None,
        }
    }

    /// Notes `bytes` read after `t` of the run.
    fn note(&mut self, bytes: u64, t: Duration) {
        if self.open.is_none() && t >= self.warmup {
            self.open = Some((bytes, t));
        }
        if self.close.is_none() && t >= self.sample {
            self.close = Some((bytes, t));
        }
    }

    /// (bytes, elapsed) between the marks; the whole run when it was too
    /// short to have both.
    fn window(&self, bytes: u64, elapsed: Duration) -> (u64, Duration) {
        let (cb, ct) = self.close.unwrap_or((bytes, elapsed));
        match self.open {
            Some((ob, ot)) if ot < ct => (cb - ob, ct - ot),
            _ => (cb, ct),
        }
    }
}

impl Job {
    /// The next chunk; in a sample pass a disk that has ended starts again
    /// from the beginning, so every disk is measured for the whole window
    /// and a small fast disk is not judged on milliseconds of noise.
    fn next_chunk(&self, chunks: &mut Chunks, reached_end: &mut bool) -> Option<Chunk> {
        if let Some(c) = chunks.next() {
            return Some(c);
        }
        *reached_end = true;
        if self.window == Window::Full {
            return None;
        }
        *chunks = Chunks::new(self.size, self.logical_block, self.block);
        chunks.next()
    }

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
        let mut marks = WindowMarks::new(self.sample);
        let mut chunks = Chunks::new(self.size, self.logical_block, self.block);
        let mut reached_end = false;
        let start = Instant::now();
        let mut end = start;
        while !stop.is_set() && deadline.is_none_or(|d| end - start < d) && error_count < MAX_ERRORS
        {
            let Some(chunk) = self.next_chunk(&mut chunks, &mut reached_end) else {
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
                    marks.note(bytes, end - start);
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
        let elapsed = end - start;
        DiskRun {
            bytes,
            elapsed,
            window: marks.window(bytes, elapsed),
            reads,
            latency_ns: hist,
            errors,
            error_count,
            reached_end,
            interrupted: stop.is_set() && !reached_end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_skips_the_warm_up_and_ends_at_the_sample() {
        let ms = Duration::from_millis;
        let mut m = WindowMarks::new(ms(1000));
        for (b, t) in [(10, 50), (20, 100), (30, 150), (120, 1000), (130, 1050)] {
            m.note(b, ms(t));
        }
        assert_eq!(m.window(130, ms(1050)), (100, ms(900)));
    }

    #[test]
    fn a_run_shorter_than_the_warm_up_is_its_own_window() {
        let mut m = WindowMarks::new(Duration::from_secs(60));
        m.note(4096, Duration::from_millis(3));
        assert_eq!(
            m.window(4096, Duration::from_millis(3)),
            (4096, Duration::from_millis(3))
        );
    }
}

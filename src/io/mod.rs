//! I/O engines: how aligned chunks are read from a device. The engine only
//! reads; timing, histograms and progress belong to the worker. `pread`
//! reads one chunk at a time; `io_uring` keeps a queue of them in flight.

mod pread;
mod uring;

use std::fs::File;
use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::device::buffer::{AlignedBuf, Chunk};

pub use pread::PreadEngine;
pub use uring::{Done, OwnedRing, UringEngine};

/// Reads chunks of one device into an aligned buffer.
pub trait Engine: Send {
    /// Reads `chunk` into the start of `buf`, returning the bytes read (the
    /// chunk's length unless the device ended early). An engine with reads
    /// in flight keeps them: this one is read on its own.
    fn read(&mut self, buf: &mut AlignedBuf, chunk: Chunk) -> io::Result<usize>;

    /// The queue of reads in flight, for an engine that keeps one.
    fn queued(&mut self) -> Option<&mut dyn Queued> {
        None
    }

    /// How it reads, as the report names it.
    fn name(&self) -> &'static str {
        "psync"
    }
}

/// An engine with several reads in flight, into buffers of its own (the
/// data is measured, not used).
pub trait Queued {
    /// Reads it keeps in flight at most.
    fn depth(&self) -> usize;
    /// Reads in flight now.
    fn in_flight(&self) -> usize;
    /// Starts reading `chunk` (only while `in_flight() < depth()`).
    fn submit(&mut self, chunk: Chunk) -> io::Result<()>;
    /// Waits for a read to finish; None when none is in flight, or when a
    /// stop woke the wait (reads are still in flight: see `abandon`).
    fn complete(&mut self) -> Option<Completion>;
    /// A stop: cancels what is in flight and waits for it at most
    /// `within`; reads still in flight then are given up (their results
    /// are not wanted, their buffers are never freed).
    fn abandon(&mut self, within: std::time::Duration);
}

/// A read that finished.
#[derive(Debug)]
pub struct Completion {
    pub chunk: Chunk,
    /// Bytes read, or why not.
    pub result: io::Result<usize>,
    /// When it was submitted and when its completion was seen: its latency.
    pub submitted: std::time::Instant,
    pub done: std::time::Instant,
}

/// How the check reads (`--engine`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring where the kernel allows it, else psync.
    Auto,
    /// io_uring with `--queue-depth` reads in flight per disk.
    #[value(name = "io_uring")]
    #[serde(rename = "io_uring")]
    IoUring,
    /// One pread at a time per disk (queue depth 1).
    Psync,
}

/// Opens the engine for `file`: io_uring with `depth` reads of `block`
/// bytes in flight where asked for (and, with `auto`, where the kernel
/// allows it), else pread. A queued engine stops waiting for its reads
/// when `wake` (the stop flag's waker) becomes readable.
pub fn open_engine(
    kind: EngineKind,
    file: File,
    depth: usize,
    block: usize,
    wake: Option<BorrowedFd<'_>>,
) -> io::Result<Box<dyn Engine>> {
    let ring = |file| -> io::Result<UringEngine> {
        let mut e = UringEngine::new(file, depth, block)?;
        if let Some(fd) = wake {
            e.wake_on(fd)?;
        }
        Ok(e)
    };
    match kind {
        EngineKind::Psync => Ok(Box::new(PreadEngine::new(file))),
        EngineKind::IoUring => Ok(Box::new(ring(file)?)),
        EngineKind::Auto => {
            let fallback = file.try_clone()?;
            match ring(file) {
                Ok(e) => Ok(Box::new(e)),
                Err(_) => Ok(Box::new(PreadEngine::new(fallback))),
            }
        }
    }
}

/// Whether io_uring works here (a ring can be made): what `auto` picks.
pub fn uring_available() -> bool {
    io_uring::IoUring::new(2).is_ok()
}

/// Opens a device read-only with O_DIRECT, so reads bypass the page cache
/// and measure the disk, not memory. Never opened for writing.
pub fn open_direct(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_DIRECT)
        .open(path)
}

//! I/O engines: how aligned chunks are read from a device (the check), and
//! owned-buffer writes, reads and flushes (the burn-in). The engine only
//! moves data; timing, histograms and progress belong to the worker.
//! `pread` reads one chunk at a time; `io_uring` keeps a queue of them in
//! flight. Every wait is bound by a stop and by the I/O timeout
//! ([`Bounds`]): a disk that stops answering is reported hung, never
//! waited for without end.

mod owned;
mod pread;
mod uring;

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::device::buffer::Chunk;

pub use owned::{Bounds, Done, Halt, Medium, OwnedIo, Refused, ThreadIo, Until, is_hung};
pub use pread::PreadEngine;
pub use uring::{OwnedRing, UringEngine};

/// Reads chunks of one device into buffers of its own (the check only
/// times the reads; it never looks at the data).
pub trait Engine: Send {
    /// Reads `chunk`, returning the bytes read (the chunk's length unless
    /// the device ended early). An engine with reads in flight keeps them:
    /// this one is read on its own. A stop ends it with `Interrupted`, a
    /// disk that hangs with `TimedOut` ([`is_hung`]).
    fn read(&mut self, chunk: Chunk) -> io::Result<usize>;

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

impl EngineKind {
    /// What `auto` means here: io_uring where the kernel allows it, else
    /// psync. The one place it is decided.
    pub fn resolved(self) -> EngineKind {
        match self {
            EngineKind::Auto if uring_available() => EngineKind::IoUring,
            EngineKind::Auto => EngineKind::Psync,
            kind => kind,
        }
    }

    /// `"io_uring"` or `"psync"` (`"auto"` before it is resolved), as
    /// reports name it.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
        }
    }
}

/// Opens the check's engine for `file`: io_uring with `depth` reads of
/// `block` bytes in flight, or pread (`kind` resolved; `auto` is resolved
/// here too). Its waits are bound by `bounds`: a stop wakes them, and a
/// read outstanding past the I/O timeout makes the disk hung.
pub fn open_engine(
    kind: EngineKind,
    file: File,
    depth: usize,
    block: usize,
    bounds: &Bounds,
) -> io::Result<Box<dyn Engine>> {
    match kind.resolved() {
        EngineKind::IoUring => {
            let mut e = UringEngine::new(file, depth, block, bounds)?;
            if let Some(fd) = bounds.stop.waker() {
                e.wake_on(fd)?;
            }
            Ok(Box::new(e))
        }
        _ => Ok(Box::new(PreadEngine::new(&file, block, bounds)?)),
    }
}

/// Opens owned-buffer I/O on `file` (the burn-in's): an io_uring ring of
/// `depth` requests, or psync one at a time (`kind` resolved; `auto` is
/// resolved here too). An engine asked for that cannot be had is an
/// error, never silently another.
pub fn open_owned(
    kind: EngineKind,
    file: &File,
    depth: usize,
    bounds: &Bounds,
) -> io::Result<Box<dyn OwnedIo>> {
    match kind.resolved() {
        EngineKind::IoUring => Ok(Box::new(OwnedRing::new(file, depth, bounds)?)),
        _ => Ok(Box::new(ThreadIo::new(file, bounds)?)),
    }
}

/// `--engine` and `--queue-depth` resolved: the engine that runs and the
/// requests it keeps in flight (psync: one). `auto` is io_uring where the
/// kernel allows it; io_uring asked for where it does not is refused, never
/// silently swapped. The one place either is decided.
pub fn resolve_engine(kind: EngineKind, depth: u16) -> Result<(EngineKind, usize), String> {
    match kind.resolved() {
        EngineKind::IoUring if !uring_available() => Err(
            "--engine io_uring: this kernel gives no io_uring (disabled, or too old); use --engine psync or auto".into(),
        ),
        EngineKind::IoUring => Ok((EngineKind::IoUring, usize::from(depth))),
        kind => Ok((kind, 1)),
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

//! I/O: how the check's reads and the burn-in's writes and read-backs
//! reach a device. One [`Sweep`] drives both over an engine that owns each
//! request's buffer while it is in flight ([`OwnedIo`]): psync, one
//! request at a time through a thread of its own ([`ThreadIo`]), or
//! io_uring with a queue of them ([`OwnedRing`]); a [`Probe`] beside it
//! pinpoints failures one request at a time. Every wait is bound by a stop
//! and by the I/O timeout ([`Bounds`]): a disk that stops answering is
//! reported hung, never waited for without end. It moves data; timing
//! histograms, counts and verdicts belong to the workers above it.

mod owned;
mod sweep;
mod uring;

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub use owned::{
    Bounds, Direction, Done, Halt, Medium, OwnedIo, Refused, ThreadIo, Until, is_hung,
};
pub use sweep::{Landed, Probe, Sweep, is_gone, open_sweep};
pub use uring::OwnedRing;

/// How the check and the burn-in do I/O (`--engine`).
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

/// The refusal of `--engine io_uring` where the kernel gives none.
const NO_URING: &str = "--engine io_uring: this kernel gives no io_uring (disabled, or too old); use --engine psync or auto";

/// `--engine` and `--queue-depth` resolved: the engine that runs and the
/// requests it keeps in flight (psync: one). `auto` is io_uring where the
/// kernel allows it; io_uring asked for where it does not is refused, never
/// silently swapped. The one place either is decided.
pub fn resolve_engine(kind: EngineKind, depth: u16) -> Result<(EngineKind, usize), String> {
    match kind.resolved() {
        EngineKind::IoUring if !uring_available() => Err(NO_URING.into()),
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
    std::fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_DIRECT).open(path)
}

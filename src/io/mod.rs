//! I/O engines: how one aligned chunk is read from a device. The engine only
//! reads; timing, histograms and progress belong to the worker. An io_uring
//! engine with a queue depth plugs in behind the same trait later.

mod pread;

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::device::buffer::{AlignedBuf, Chunk};

pub use pread::PreadEngine;

/// Reads chunks of one device into an aligned buffer.
pub trait Engine: Send {
    /// Reads `chunk` into the start of `buf`, returning the bytes read (the
    /// chunk's length unless the device ended early).
    fn read(&mut self, buf: &mut AlignedBuf, chunk: Chunk) -> io::Result<usize>;
}

/// Opens a device read-only with O_DIRECT, so reads bypass the page cache
/// and measure the disk, not memory. Never opened for writing.
pub fn open_direct(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_DIRECT)
        .open(path)
}

//! The synchronous engine: one `pread(2)` per chunk on an O_DIRECT file
//! (queue depth 1, like `fio --ioengine=psync`, dd and solnet-array-test).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::Engine;
use crate::device::buffer::{AlignedBuf, Chunk};

/// pread on an O_DIRECT descriptor.
pub struct PreadEngine {
    file: File,
}

impl PreadEngine {
    /// Wraps a file opened with [`super::open_direct`].
    pub fn new(file: File) -> Self {
        Self { file }
    }
}

impl Engine for PreadEngine {
    fn read(&mut self, buf: &mut AlignedBuf, chunk: Chunk) -> io::Result<usize> {
        let dst = buf.slice_mut(chunk.len());
        let mut done = 0;
        // A block device returns short only at its end; keep going otherwise
        // (the remainder stays block-aligned because `done` is a multiple of
        // the logical block size).
        while done < dst.len() {
            match self
                .file
                .read_at(&mut dst[done..], chunk.offset() + done as u64)
            {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

//! Telling a drive that a range of it holds nothing any more: write
//! zeroes with deallocate (`fallocate(PUNCH_HOLE)` on the block device:
//! the kernel issues it only where the drive's stack guarantees that the
//! range then reads as zeroes: an NVMe drive whose namespace says so, a
//! SATA SSD that declares deterministic zeroes after TRIM and is not on
//! libata's list of those that lie, a loop device over a file), else a
//! plain discard (`BLKDISCARD`: TRIM, deallocate, UNMAP; what the range
//! reads as afterwards is the drive's to say).
//!
//! It must not decide what to discard (`burnin::discard` does) and
//! must not judge.

#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use nix::fcntl::{FallocateFlags, fallocate};

// BLKDISCARD, `_IO(0x12, 119)` in <linux/fs.h>: its argument is a pointer
// to two u64s, the range's first byte and its length.
nix::ioctl_write_ptr_bad!(blkdiscard, 0x1277, [u64; 2]);

/// Deallocates `len` bytes at `offset` so that they read as zeroes, where
/// the kernel can promise it; `Unsupported` (EOPNOTSUPP) where it cannot.
pub fn zero_deallocate(file: &File, offset: u64, len: u64) -> io::Result<()> {
    let how = FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE;
    fallocate(file, how, offset as i64, len as i64).map_err(io::Error::from)
}

/// Discards `len` bytes at `offset` (TRIM, deallocate, UNMAP).
pub fn discard(file: &File, offset: u64, len: u64) -> io::Result<()> {
    let range = [offset, len];
    // SAFETY: BLKDISCARD reads the two u64s `range` holds, which outlive
    // the call, from an open block device's descriptor; it writes nothing
    // back to user memory.
    unsafe { blkdiscard(file.as_raw_fd(), &range) }.map(|_| ()).map_err(io::Error::from)
}

/// Whether the kernel passes discards to the disk `name` (sysfs
/// `queue/discard_max_bytes` above 0).
pub fn takes_discards(paths: &super::SystemPaths, name: &str) -> bool {
    let at = paths.sys.join("block").join(name).join("queue/discard_max_bytes");
    super::sysfs::read_num(&at).is_some_and(|n| n > 0)
}

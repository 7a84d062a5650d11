//! Aligned I/O buffers and aligned read extents: the two things O_DIRECT
//! demands. A plain `Vec<u8>` is only byte-aligned, and O_DIRECT with it fails
//! with EINVAL or, on some filesystems, silently falls back to buffered I/O.
//! Here misalignment cannot be expressed: buffers come from `Layout` with the
//! alignment asked for, and extents only from [`Chunks`], which steps in
//! multiples of the logical block size.
//!
//! Buffers of 1 MiB or more are also aligned to 2 MiB and advised as
//! transparent huge pages. A buffer of scattered 4 KiB pages needs one
//! scatter-gather segment per page, so the block layer splits a 4 MiB read
//! into many small requests; physically contiguous 2 MiB pages let it build
//! requests as large as the device allows. Measured on a disk-backed loop
//! device: 3.3–3.8 GB/s against 0.6–0.7 GB/s with 4 KiB pages (and with fio),
//! see docs/benchmarks.md. Where THP is off the advice is ignored and the
//! buffer is simply aligned.
#![allow(unsafe_code)]

use std::alloc::{Layout, alloc, dealloc};
use std::ptr::NonNull;

use nix::sys::mman::{MmapAdvise, madvise};

/// The smallest memory alignment of a buffer. The kernel needs the queue's
/// `dma_alignment + 1` (512 on most devices); a page is safe everywhere.
pub const BUFFER_ALIGN: usize = 4096;

/// Transparent huge page size on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// A heap buffer aligned to [`BUFFER_ALIGN`], allocated once per worker and
/// reused for every read.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
    /// Advised as huge pages (and kept as a spare when dropped).
    huge: bool,
    /// A view of the process's one buffer of its size for reads nobody
    /// looks at ([`Self::discard`]): never freed, never reached as a slice.
    discard: bool,
    /// Which allocation this is: never given to another, so a buffer
    /// registered with the kernel is told from a later one at the same
    /// address.
    id: u64,
}

/// The next buffer's id.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

// SAFETY: the buffer owns its allocation exclusively, like a Box<[u8]>;
// a discard view owns none, and no Rust code reaches its bytes.
unsafe impl Send for AlignedBuf {}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.layout.size())
    }
}

impl AlignedBuf {
    /// Allocates at least `len` zeroed bytes aligned to [`BUFFER_ALIGN`],
    /// or, when `len` is 1 MiB or more, aligned to 2 MiB, rounded up to whole
    /// huge pages and backed by them where the kernel allows.
    pub fn new(len: usize) -> Self {
        if len >= 1 << 20 {
            Self::alloc(len, HUGE_PAGE, true)
        } else {
            Self::alloc(len, BUFFER_ALIGN, false)
        }
    }

    /// Allocates at least `len` zeroed bytes aligned to `align` (a power of
    /// two, at least [`BUFFER_ALIGN`]) in the ordinary pages the allocator
    /// gives, with no huge-page advice: the memory iozone moves its data
    /// through (malloc, aligned to its 1 MiB cache size), so that
    /// `arrayburn iozone` reports the numbers iozone would.
    pub fn plain(len: usize, align: usize) -> Self {
        Self::alloc(len, align.max(BUFFER_ALIGN), false)
    }

    fn alloc(len: usize, align: usize, huge: bool) -> Self {
        let layout =
            Layout::from_size_align(len.max(1), align).expect("buffer layout").pad_to_align();
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if huge && let Some(ptr) = Spares::take(layout) {
            // SAFETY: a spare is a live allocation of this layout that no
            // buffer owns any more.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, layout.size()) };
            return Self { ptr, layout, huge, discard: false, id };
        }
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        if huge {
            // SAFETY: the range is our own live allocation. The advice only
            // changes how its pages are backed; failure (THP off) is harmless.
            let _ = unsafe { madvise(ptr.cast(), layout.size(), MmapAdvise::MADV_HUGEPAGE) };
        }
        // SAFETY: ptr is valid for layout.size() writable bytes. Zeroing after
        // the advice makes the first touch fault in huge pages.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, layout.size()) };
        Self { ptr, layout, huge, discard: false, id }
    }

    /// A buffer for reads whose data nobody looks at (the check's: it
    /// counts their bytes and times them, and never reads what they
    /// brought): every discard buffer of a size is the same memory, one
    /// allocation made on the first ask and kept for the life of the
    /// process. The reads in flight on every disk then land in the same few
    /// huge pages, which stay in the CPU's caches: on an array the CPU's
    /// copies bound (eight memory-backed loops here), 4 MiB reads at depth
    /// 2 read 9 % more (the median of four runs against the build before,
    /// -4 to +18 %), and a check's buffers no longer grow with its disks
    /// and depth (docs/benchmarks.md). Only the kernel writes it,
    /// through a request that carries its address (io_uring):
    /// [`Self::slice_mut`] on one panics.
    pub fn discard(len: usize) -> Self {
        let mut sinks = SINKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let sink = match sinks.0.iter().find(|s| s.layout.size() >= len.max(1)) {
            Some(s) => *s,
            None => {
                let own = Self::new(len);
                let sink = Sink { ptr: own.ptr, layout: own.layout, id: own.id };
                // Kept for the life of the process: every discard buffer
                // of its size is a view of it.
                std::mem::forget(own);
                sinks.0.push(sink);
                sink
            }
        };
        Self { ptr: sink.ptr, layout: sink.layout, huge: false, discard: true, id: sink.id }
    }

    /// Which allocation this is (unique for the life of the process).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The buffer's start, for a request the kernel fills in the
    /// background (io_uring); the buffer must outlive the request.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The first `len` bytes of the buffer (at most its size).
    pub fn slice_mut(&mut self, len: usize) -> &mut [u8] {
        assert!(
            !self.discard,
            "a discard buffer's bytes are nobody's: only the kernel writes them"
        );
        let len = len.min(self.layout.size());
        // SAFETY: ptr is valid for layout.size() bytes, initialised (zeroed)
        // at allocation, and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), len) }
    }

    /// Reads up to `len` bytes (at most the buffer's size) of `f` at
    /// `offset` into the buffer, pread(2) after pread(2) until they are all
    /// there or the file ends: the bytes read. Through the buffer's address,
    /// never a slice, so a discard buffer other threads read into at the
    /// same moment is filled as io_uring fills it (the psync thread's reads).
    pub fn pread_from(
        &mut self,
        f: &std::fs::File,
        len: usize,
        offset: u64,
    ) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let len = len.min(self.layout.size());
        let mut done = 0;
        while done < len {
            let at = i64::try_from(offset + done as u64).map_err(std::io::Error::other)?;
            // SAFETY: [ptr + done, ptr + len) lies inside the live allocation
            // (len ≤ its size), borrowed through &mut self; a discard
            // buffer's bytes are only ever written by the kernel (`discard`).
            let n = unsafe {
                nix::libc::pread(f.as_raw_fd(), self.ptr.as_ptr().add(done).cast(), len - done, at)
            };
            match n {
                0 => break,
                n if n > 0 => done += n as usize,
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
        Ok(done)
    }

    /// Whether the buffer is a discard view ([`Self::discard`]).
    pub fn is_discard(&self) -> bool {
        self.discard
    }

    /// The buffer's size in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Whether the buffer is empty (never, in practice).
    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }
}

/// One buffer several threads read into at once, as iozone's thread-mode
/// fread children all read into its one global buffer (each fwrite thread
/// sets the global to its own buffer; the last one wins): the cache lines
/// the kernel copies into bounce between cores, and that is part of
/// iozone's freaders number with `-T`. The bytes are written only by the
/// kernel, through [`SharedBuf::read_exact_from`], and never read or
/// written by Rust code, so no reference to them exists while threads read.
pub struct SharedBuf(AlignedBuf);

// SAFETY: the bytes are reached only as a raw pointer handed to read(2);
// no Rust reference to them is ever created, so concurrent reads into them
// race only in the kernel's copies, which is what this type is for.
unsafe impl Sync for SharedBuf {}

impl SharedBuf {
    /// `len` bytes in iozone's kind of memory (4 KiB pages, 1 MiB aligned).
    pub fn new(len: usize) -> Self {
        Self(AlignedBuf::plain(len, 1 << 20))
    }

    /// Reads `len` bytes (at most the buffer's size) from `f`'s position
    /// into the buffer, read(2) after read(2) until they are all there; a
    /// file that ends first is `UnexpectedEof`.
    pub fn read_exact_from(&self, f: &std::fs::File, len: usize) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let len = len.min(self.0.len());
        let mut done = 0;
        while done < len {
            // SAFETY: [ptr + done, ptr + len) lies inside the live allocation
            // (len ≤ its size); only the kernel writes it (see the type).
            let n = unsafe {
                nix::libc::read(f.as_raw_fd(), self.0.ptr.as_ptr().add(done).cast(), len - done)
            };
            match n {
                n if n > 0 => done += n as usize,
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.discard {
            // A view: the memory is the process's (see `discard`).
            return;
        }
        if self.huge && Spares::keep(self.ptr, self.layout) {
            return;
        }
        // SAFETY: allocated in `new` with exactly this layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Huge-page buffers dropped, kept for the next buffer of their size (up
/// to [`SPARE_BYTES`] together): a phase's buffers serve the next phase's
/// (the burn-in's write then its read-back, the check's serial pass then
/// its parallel one). A new buffer's first touch is the kernel zeroing its
/// pages, which in a VM whose host has not backed them yet costs far more
/// than the copy itself (a tenth of a burn-in's CPU, a fifth of a check's
/// of eight memory-backed disks, docs/benchmarks.md); zeroing a spare again
/// is a memset of memory already there.
struct Spares(Vec<(NonNull<u8>, Layout)>);

// SAFETY: the spares are allocations no buffer owns; they are reached only
// under the mutex, to be handed out whole or freed.
unsafe impl Send for Spares {}

static SPARES: std::sync::Mutex<Spares> = std::sync::Mutex::new(Spares(Vec::new()));

/// The most memory kept in spares.
const SPARE_BYTES: usize = 256 << 20;

impl Spares {
    fn take(layout: Layout) -> Option<NonNull<u8>> {
        let mut s = SPARES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let i = s.0.iter().position(|(_, l)| *l == layout)?;
        Some(s.0.swap_remove(i).0)
    }

    /// Whether the allocation was kept (else the caller frees it).
    fn keep(ptr: NonNull<u8>, layout: Layout) -> bool {
        let mut s = SPARES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let held: usize = s.0.iter().map(|(_, l)| l.size()).sum();
        if held + layout.size() > SPARE_BYTES {
            return false;
        }
        s.0.push((ptr, layout));
        true
    }
}

/// The memory discard buffers are views of, one per size asked for (a
/// check asks for its block, and its random reads' block).
struct Sinks(Vec<Sink>);

#[derive(Clone, Copy)]
struct Sink {
    ptr: NonNull<u8>,
    layout: Layout,
    id: u64,
}

// SAFETY: the sinks are allocations kept for the life of the process whose
// bytes no Rust code reads or writes; only their addresses are handed out.
unsafe impl Send for Sinks {}

static SINKS: std::sync::Mutex<Sinks> = std::sync::Mutex::new(Sinks(Vec::new()));

/// One read: an offset and a length, both multiples of the device's logical
/// block size. Only [`Chunks`] makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    offset: u64,
    len: usize,
}

impl Chunk {
    /// Byte offset on the device.
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the chunk is empty (never produced by [`Chunks`]).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The sequential reads that cover `[0, readable)` of a device in steps of
/// `block` bytes; the last one is shorter when the size is not a multiple of
/// `block` (but always a multiple of the logical block size).
#[derive(Debug, Clone)]
pub struct Chunks {
    next: u64,
    end: u64,
    block: u64,
}

impl Chunks {
    /// `block` must be a non-zero multiple of `logical_block`. The device
    /// size is rounded down to whole logical blocks: O_DIRECT cannot read a
    /// partial sector (the kernel never makes such devices).
    pub fn new(size: u64, logical_block: u32, block: u64) -> Self {
        let lbs = u64::from(logical_block.max(1));
        assert!(
            block > 0 && block.is_multiple_of(lbs),
            "read size must be a multiple of the logical block size"
        );
        Self { next: 0, end: size - size % lbs, block }
    }
}

impl Chunks {
    /// Like [`Chunks::new`], but starting at `start` rounded down to a
    /// multiple of `block` (the reads a whole-disk pass makes from there on).
    pub fn from_offset(size: u64, logical_block: u32, block: u64, start: u64) -> Self {
        let mut c = Self::new(size, logical_block, block);
        c.next = (start / block * block).min(c.end);
        c
    }

    /// The requests that cover `from..end` of a device in steps of
    /// `block` bytes (both ends and `block` multiples of the logical block
    /// size): a burn-in's range.
    pub fn span(from: u64, end: u64, block: u64) -> Self {
        assert!(block > 0, "request size must not be zero");
        Self { next: from, end, block }
    }

    /// The reads that cover `chunk` in steps of `step` bytes (a non-zero
    /// multiple of `logical_block`): for re-reading a failed chunk in
    /// smaller pieces, still aligned.
    pub fn within(chunk: Chunk, logical_block: u32, step: u64) -> Self {
        let lbs = u64::from(logical_block.max(1));
        assert!(
            step > 0 && step.is_multiple_of(lbs),
            "step must be a multiple of the logical block size"
        );
        Self { next: chunk.offset, end: chunk.offset + chunk.len as u64, block: step }
    }
}

impl Iterator for Chunks {
    type Item = Chunk;
    fn next(&mut self) -> Option<Chunk> {
        if self.next >= self.end {
            return None;
        }
        let len = self.block.min(self.end - self.next);
        let chunk = Chunk { offset: self.next, len: len as usize };
        self.next += len;
        Some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn discard_buffers_of_a_size_are_one_memory_the_process_keeps() {
        // Sizes no other test asks for (a sink serves any size up to its own).
        let len = (5 << 20) + 4096 * 3;
        let (a, b) = (AlignedBuf::discard(len), AlignedBuf::discard(len));
        assert_eq!((a.as_ptr(), a.id()), (b.as_ptr(), b.id()), "one memory, one registration");
        assert!(
            a.len() >= len && (a.as_ptr() as usize).is_multiple_of(HUGE_PAGE),
            "huge-page aligned"
        );
        let (at, id) = (a.as_ptr(), a.id());
        drop(a);
        drop(b);
        // Not freed, not a spare: an owned buffer of its size is other memory.
        let own = AlignedBuf::new(len);
        assert_ne!(own.as_ptr(), at);
        let again = AlignedBuf::discard(len - 4096);
        assert_eq!((again.as_ptr(), again.id()), (at, id), "a smaller ask is served by it");
        let larger = AlignedBuf::discard(len + HUGE_PAGE);
        assert_ne!(larger.as_ptr(), at, "a larger one needs memory of its own");
    }

    #[test]
    #[should_panic(expected = "only the kernel writes them")]
    fn a_discard_buffer_is_never_a_slice() {
        let mut d = AlignedBuf::discard(7 * 4096);
        let _ = d.slice_mut(4096);
    }

    #[test]
    fn a_dropped_huge_buffer_serves_the_next_of_its_size_zeroed_under_an_id_of_its_own() {
        // A size no other test asks for, so none takes the spare between.
        let len = (3 << 20) + 4096 * 7;
        let mut a = AlignedBuf::new(len);
        a.slice_mut(len).fill(0x5a);
        let (at, id) = (a.as_ptr(), a.id());
        drop(a);
        let mut b = AlignedBuf::new(len);
        assert_eq!(b.as_ptr(), at, "the spare, not a new allocation");
        assert_ne!(b.id(), id, "registered with a ring, it is another buffer");
        assert!(b.slice_mut(len).iter().all(|x| *x == 0), "zeroed again");
        // Small buffers are not kept; spares stop at their bound.
        assert!(!AlignedBuf::new(4096).huge);
        let layout = Layout::from_size_align(SPARE_BYTES + HUGE_PAGE, HUGE_PAGE).unwrap();
        assert!(!Spares::keep(NonNull::dangling(), layout), "more than the bound");
    }

    #[test]
    fn buffer_is_aligned_and_reusable() {
        let mut b = AlignedBuf::new(4 << 20);
        assert_eq!(b.slice_mut(10).as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(AlignedBuf::new(8192).slice_mut(1).as_ptr() as usize % BUFFER_ALIGN, 0);
        assert_eq!(b.len(), 4 << 20);
        b.slice_mut(4 << 20)[(4 << 20) - 1] = 7;
    }

    /// AnonHugePages (kB) of the mapping holding `addr`, from smaps.
    fn huge_kb_at(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((a, b)) = range.split_once('-')
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = (a..b).contains(&addr);
            } else if inside && let Some(kb) = line.strip_prefix("AnonHugePages:") {
                return kb.trim().trim_end_matches(" kB").trim().parse().unwrap();
            }
        }
        panic!("no mapping holds {addr:#x}");
    }

    #[test]
    fn a_plain_buffer_is_aligned_in_small_pages_and_a_large_one_in_huge_pages() {
        let mut plain = AlignedBuf::plain(4 << 20, 1 << 20);
        let at = plain.slice_mut(1).as_ptr() as usize;
        assert_eq!(at % (1 << 20), 0, "iozone's 1 MiB alignment");
        assert_eq!(huge_kb_at(at), 0, "4 KiB pages, as iozone's malloc gives");
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if thp.contains("[never]") || thp.is_empty() {
            eprintln!("transparent huge pages are off here: only the plain half is checked");
            return;
        }
        let mut huge = AlignedBuf::new(4 << 20);
        let at = huge.slice_mut(1).as_ptr() as usize;
        assert!(huge_kb_at(at) >= 2048, "huge pages where the kernel allows");
    }

    #[test]
    fn last_chunk_is_the_remainder() {
        let v: Vec<_> = Chunks::new(10 * 4096 + 3 * 4096, 4096, 8 * 4096).collect();
        assert_eq!(v.len(), 2);
        assert_eq!((v[1].offset(), v[1].len()), (8 * 4096, 5 * 4096));
    }

    #[test]
    fn a_chunk_splits_into_aligned_steps() {
        let c = Chunks::new(1 << 20, 512, 1 << 20).next().unwrap();
        let parts: Vec<_> = Chunks::within(c, 512, 64 << 10).collect();
        assert_eq!(parts.len(), 16);
        assert_eq!((parts[15].offset(), parts[15].len()), (15 << 16, 1 << 16));
        let last = Chunks::new(4096 + 1024, 512, 4096).nth(1).unwrap();
        let blocks: Vec<_> = Chunks::within(last, 512, 512).map(|b| b.offset()).collect();
        assert_eq!(blocks, [4096, 4608]);
    }

    #[test]
    fn chunks_can_start_inside_the_disk() {
        let v: Vec<_> = Chunks::from_offset(10 * 4096, 4096, 4 * 4096, 5 * 4096 + 7)
            .map(|c| (c.offset(), c.len()))
            .collect();
        assert_eq!(v, [(4 * 4096, 4 * 4096), (8 * 4096, 2 * 4096)]);
        assert_eq!(Chunks::from_offset(4096, 512, 4096, 1 << 40).next(), None);
    }

    proptest! {
        #[test]
        fn chunks_tile_the_device_aligned(sectors in 0u64..100_000, lbs_4k in any::<bool>(), mult in 1u64..2048) {
            let lbs: u32 = if lbs_4k { 4096 } else { 512 };
            let size = sectors * u64::from(lbs);
            let block = mult * u64::from(lbs);
            let mut expect = 0;
            for c in Chunks::new(size, lbs, block) {
                prop_assert_eq!(c.offset(), expect);
                prop_assert_eq!(c.offset() % u64::from(lbs), 0);
                prop_assert_eq!(c.len() as u64 % u64::from(lbs), 0);
                prop_assert!(!c.is_empty() && c.len() as u64 <= block);
                expect += c.len() as u64;
            }
            prop_assert_eq!(expect, size);
        }
    }
}

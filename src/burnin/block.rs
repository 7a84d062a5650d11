//! The burn-in's self-identifying blocks: every 4 KiB of what a burn-in
//! writes says which run, pass, disk and byte offset it belongs to, and
//! carries a CRC32C of itself, so a block read back is classified without
//! any stored state (after f3's and fio's verify formats; see
//! `../shared/reference/burnin-users.md` §2).
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic `ABRN` |
//! | 4..6 | format version (2) |
//! | 6..8 | pass (1, 2, …) |
//! | 8..16 | run id (random per burn-in) |
//! | 16..24 | byte offset of the block on the disk |
//! | 24..28 | hash of the disk's identity (serial, size) |
//! | 28..4092 | payload: the pass's 4 KiB table (a xorshift64* stream seeded by run and pass), turned by some words and XORed with a 64-bit key, both from (run, pass, offset) |
//! | 4092..4096 | CRC32C of bytes 0..4092 |
//!
//! With the CRC last, a block is checked by one CRC over all of it (a
//! whole block's CRC32C is a constant), and a block's payload is a copy the
//! compiler vectorises, not a stream of its own. Version 1 (an older arrayburn's, still
//! read and, by a burn-in it began, still written) kept its CRC in bytes
//! 28..32, taken as zero, and one xorshift64* stream from byte 32.
//!
//! A block read back is **good** (its CRC holds and it names this run, pass,
//! disk and offset), **corrupted** (close to what was written there, which
//! is regenerated from the run, pass, offset and disk: how many bits in how
//! many bytes, and their shape: one bit in every byte, a stuck bit, a torn
//! write whose first sectors landed and the rest did not), **zeros** (never
//! written: a lost write, or a write cache that said done and kept
//! nothing), **misdirected** (a valid block of this disk carrying another
//! offset: a write that landed elsewhere, or fake capacity wrapping
//! around), **another disk's** (a valid block of another disk), **stale** (a
//! valid block of this disk and offset from an earlier pass or run: a lost
//! write), or **foreign** (data that is none of these). Verifying a good
//! block needs the CRC only: a block whose CRC holds and whose header
//! matches can only be the one this run wrote.

/// Bytes per self-identifying block.
pub const BLOCK: usize = 4096;
/// The header's size (the fields both versions share).
const HEADER: usize = 28;
const MAGIC: [u8; 4] = *b"ABRN";
/// The block format a new burn-in writes.
pub const VERSION: u16 = 2;
/// The format an older arrayburn wrote (a checkpoint without one).
pub const VERSION_1: u16 = 1;
/// Where version 2 keeps its CRC: the last 4 bytes.
const CRC_AT: usize = BLOCK - 4;
/// The CRC32C of any message followed by its own CRC32C (little-endian):
/// what a whole version-2 block's CRC is.
const RESIDUE: u32 = 0x4867_4bc7;
/// 8-byte words in a block.
const WORDS: usize = BLOCK / 8;

/// Whose blocks these are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Random per burn-in (kept in the checkpoint across a resume).
    pub run: u64,
    /// Pass number, from 1.
    pub pass: u16,
    /// Hash of the disk's identity.
    pub disk: u32,
    /// The block format written ([`VERSION`], or [`VERSION_1`] for a
    /// burn-in an older arrayburn began).
    pub version: u16,
}

/// What a block read back turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// What was written there.
    Good,
    /// Close to what was written there: how it differs.
    Corrupted(Damage),
    /// All zeros where data was written.
    Zeros,
    /// A valid block of this disk that belongs at `offset`.
    Misdirected { offset: u64 },
    /// A valid block of another disk (`disk`, its byte `offset`); of this
    /// run or another burn-in.
    OtherDisk { offset: u64, disk: u32, this_run: bool },
    /// A valid block of this disk and offset from pass `pass` of run `run`.
    Stale { run: u64, pass: u16 },
    /// Data that is none of these.
    Foreign,
}

/// How a corrupted block differs from what was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    /// Bits and bytes that differ.
    pub bits: u32,
    pub bytes: u32,
    pub shape: Shape,
}

/// The shape of a block's damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One bit in each differing byte (the same one, `bit`, where it is),
    /// flipped either way.
    OneBitPerByte { bit: Option<u8> },
    /// The same bit of every differing byte, each stuck at `value`.
    StuckBit { bit: u8, value: bool },
    /// The first `landed` 512-byte sectors are what was written, the rest
    /// is not (of 8): a write cut short.
    Torn { landed: u8 },
    /// None of these.
    Scattered,
}

/// A block differing from what was written in at most this share of its
/// bits is that block, damaged; random data differs in half.
const CORRUPT_SHARE: f64 = 0.25;
/// The sector size torn writes are told by.
const SECTOR: usize = 512;
/// A bit read the same way in at least this many bytes is stuck.
const STUCK_BYTES: u32 = 8;

/// A hash of a disk's identity for the header (FNV-1a over the text).
pub fn disk_hash(identity: &str) -> u32 {
    identity.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// The payload stream's seed for one block (SplitMix64 of the fields, so
/// neighbouring offsets give unrelated streams).
fn seed(stamp: Stamp, offset: u64) -> u64 {
    let z = stamp.run ^ (u64::from(stamp.pass) << 48) ^ offset.rotate_left(17);
    mix(z.wrapping_add(0x9e37_79b9_7f4a_7c15)) | 1
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `buf` (a whole number of blocks) with the blocks of `stamp` that
/// start at byte `offset` of the disk, each CRC computed over the block
/// (what a block regenerated for a comparison needs; a pass's writes go
/// through a [`Writer`]).
pub fn fill(buf: &mut [u8], offset: u64, stamp: Stamp) {
    debug_assert_eq!(buf.len() % BLOCK, 0);
    let table = (stamp.version != VERSION_1).then(|| table(stamp));
    for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
        let block: &mut [u8; BLOCK] = block.try_into().expect("a whole block");
        let at = offset + (i * BLOCK) as u64;
        match &table {
            Some(table) => {
                compose(block, at, stamp, table);
                let crc = crc(&block[..CRC_AT]);
                block[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
            }
            None => fill_v1(block, at, stamp),
        }
    }
}

/// What writing one pass's blocks needs, made once for the pass: each
/// version-2 block's CRC is then put together from precomputed parts
/// instead of read over its 4 KiB. CRC32C is affine in the message: for
/// messages of one length, `crc(a ^ b) = crc(a) ^ crc(b) ^ crc(0)`. A
/// block's first 4,092 bytes are the XOR of the header with its offset
/// taken as zero (one CRC per pass), the offset (the same for every pass:
/// `Parts`), the pass's table turned by `r` words with the header's bytes
/// taken as zero (one CRC per turn, 512 per pass) and the key repeated in
/// every word (bit by bit, `Parts`). The bytes written are the same as
/// [`fill`]'s (a unit test holds it), at the cost of the copy alone.
pub struct Writer {
    stamp: Stamp,
    how: How,
}

enum How {
    /// Version 2: the table, and the CRC parts that depend on the pass.
    Blocks(Box<PassParts>),
    /// Version 1, each CRC over its block.
    BlocksV1,
    /// One of badblocks' fills.
    Byte(u8),
}

struct PassParts {
    table: [u64; WORDS],
    /// The CRC32C of the header (offset zero) followed by zeros.
    head: u32,
    /// `lin` of the table turned by each number of words, its header's bytes zero.
    turned: [u32; WORDS],
}

impl Writer {
    /// The self-identifying blocks of `stamp`.
    pub fn new(stamp: Stamp) -> Self {
        if stamp.version == VERSION_1 {
            return Self { stamp, how: How::BlocksV1 };
        }
        let table = table(stamp);
        let mut m = [0u8; BLOCK];
        head_into(&mut m, 0, stamp);
        let head = crc(&m[..CRC_AT]);
        let turned = std::array::from_fn(|r| {
            turn(&mut m, &table, r, 0);
            m[..HEADER].fill(0);
            lin(&m)
        });
        Self { stamp, how: How::Blocks(Box::new(PassParts { table, head, turned })) }
    }

    /// Fills `buf` (a whole number of blocks) with the blocks that start at
    /// byte `offset` of the disk.
    #[allow(unsafe_code)]
    pub fn fill(&self, buf: &mut [u8], offset: u64) {
        debug_assert_eq!(buf.len() % BLOCK, 0);
        let p = match &self.how {
            How::Byte(b) => return buf.fill(*b),
            How::BlocksV1 => return fill(buf, offset, self.stamp),
            How::Blocks(p) => p,
        };
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has the instructions (asked just above).
                return unsafe { fill_avx512(p, buf, offset, self.stamp) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: as above.
                return unsafe { fill_avx2(p, buf, offset, self.stamp) };
            }
        }
        fill_blocks(p, buf, offset, self.stamp);
    }
}

/// [`Writer::fill`]'s blocks of version 2, compiled as well for the wider
/// vectors of the CPUs that have them (the copy of the table is most of the
/// work: 30-40 GB/s with x86-64's SSE2, 56 with AVX-512 on this machine's
/// EPYC, `cargo bench --bench pattern`).
#[inline(always)]
fn fill_blocks(p: &PassParts, buf: &mut [u8], offset: u64, stamp: Stamp) {
    let parts = parts();
    for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
        let block: &mut [u8; BLOCK] = block.try_into().expect("a whole block");
        let at = offset + (i * BLOCK) as u64;
        let (r, key) = compose(block, at, stamp, &p.table);
        let crc = p.head ^ parts.offset.of(at) ^ p.turned[r] ^ parts.key.of(key);
        block[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fill_avx512(p: &PassParts, buf: &mut [u8], offset: u64, stamp: Stamp) {
    fill_blocks(p, buf, offset, stamp);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_avx2(p: &PassParts, buf: &mut [u8], offset: u64, stamp: Stamp) {
    fill_blocks(p, buf, offset, stamp);
}

/// Writes a version-2 block's payload and header (not its CRC); the turn
/// and key its payload was made with.
#[inline(always)]
fn compose(block: &mut [u8; BLOCK], at: u64, stamp: Stamp, table: &[u64; WORDS]) -> (usize, u64) {
    let seed = seed(stamp, at);
    let r = (seed >> 55) as usize % WORDS;
    let key = mix(seed ^ 0x5851_f42d_4c95_7f2d);
    turn(block, table, r, key);
    head_into(block, at, stamp);
    (r, key)
}

/// A version-1 block, its CRC in bytes 28..32 (taken as zero for it).
fn fill_v1(block: &mut [u8; BLOCK], at: u64, stamp: Stamp) {
    payload_v1(&mut block[32..], seed(stamp, at));
    head_into(block, at, stamp);
    block[28..32].fill(0);
    let crc = crc(block);
    block[28..32].copy_from_slice(&crc.to_le_bytes());
}

fn head_into(block: &mut [u8; BLOCK], at: u64, stamp: Stamp) {
    let head = &mut block[..HEADER];
    head[0..4].copy_from_slice(&MAGIC);
    head[4..6].copy_from_slice(&stamp.version.to_le_bytes());
    head[6..8].copy_from_slice(&stamp.pass.to_le_bytes());
    head[8..16].copy_from_slice(&stamp.run.to_le_bytes());
    head[16..24].copy_from_slice(&at.to_le_bytes());
    head[24..28].copy_from_slice(&stamp.disk.to_le_bytes());
}

/// The CRC32C of a block's first 4,092 bytes less that of as many zeros:
/// linear in them.
fn lin(m: &[u8; BLOCK]) -> u32 {
    crc(&m[..CRC_AT]) ^ zeros_crc()
}

fn zeros_crc() -> u32 {
    static Z: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *Z.get_or_init(|| crc(&[0; CRC_AT]))
}

/// The parts of a block's CRC that are the same for every pass: `lin` of a
/// 64-bit value placed at one byte of each word (the key: every word from
/// byte 28; the offset: bytes 16..24), a table per byte of it.
struct Parts {
    offset: ByteTables,
    key: ByteTables,
}

/// `lin` of a 64-bit value's contribution, one table of 256 per byte.
struct ByteTables([[u32; 256]; 8]);

impl ByteTables {
    /// From `lin` of each of the 64 bits alone, `place` writing a value
    /// into a zeroed block.
    fn new(place: impl Fn(&mut [u8; BLOCK], u64)) -> Self {
        let bit: [u32; 64] = std::array::from_fn(|i| {
            let mut m = [0u8; BLOCK];
            place(&mut m, 1 << i);
            lin(&m)
        });
        Self(std::array::from_fn(|byte| {
            std::array::from_fn(|v| {
                (0..8).filter(|b| v >> b & 1 == 1).fold(0, |x, b| x ^ bit[byte * 8 + b])
            })
        }))
    }

    fn of(&self, v: u64) -> u32 {
        let b = v.to_le_bytes();
        (0..8).fold(0, |x, i| x ^ self.0[i][usize::from(b[i])])
    }
}

fn parts() -> &'static Parts {
    static P: std::sync::OnceLock<Parts> = std::sync::OnceLock::new();
    P.get_or_init(|| Parts {
        offset: ByteTables::new(|m, v| m[16..24].copy_from_slice(&v.to_le_bytes())),
        key: ByteTables::new(|m, v| {
            for word in m.chunks_exact_mut(8) {
                word.copy_from_slice(&v.to_le_bytes());
            }
            m[..HEADER].fill(0);
        }),
    })
}

/// Version 2's table: one block's worth of a xorshift64* stream seeded by
/// the run and pass alone, made once per pass's writer (and per block
/// regenerated for a comparison).
fn table(stamp: Stamp) -> [u64; WORDS] {
    let mut bytes = [0u8; BLOCK];
    payload_v1(&mut bytes, mix(stamp.run ^ (u64::from(stamp.pass) << 48)) | 1);
    std::array::from_fn(|w| le_u64(&bytes[w * 8..]))
}

/// Version 2's payload: the whole block (the header and CRC are written
/// over it after) is the pass's table turned by `r` words and XORed with
/// `key`, both from the block's own seed: every block differs in every word
/// from every other and none compresses, at the cost of a copy (where a
/// stream of its own per block made 3.8 GB/s, `cargo bench --bench
/// pattern`).
#[inline(always)]
fn turn(block: &mut [u8; BLOCK], table: &[u64; WORDS], r: usize, key: u64) {
    let (head, tail) = block.split_at_mut((WORDS - r) * 8);
    for (word, t) in head.chunks_exact_mut(8).zip(&table[r..]) {
        word.copy_from_slice(&(t ^ key).to_le_bytes());
    }
    for (word, t) in tail.chunks_exact_mut(8).zip(&table[..r]) {
        word.copy_from_slice(&(t ^ key).to_le_bytes());
    }
}

/// Version 1's payload: one xorshift64* stream.
fn payload_v1(payload: &mut [u8], mut x: u64) {
    for word in payload.chunks_exact_mut(8) {
        // xorshift64*: one multiply per 8 bytes.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        word.copy_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
}

fn crc(data: &[u8]) -> u32 {
    crc_fast::crc32_iscsi(data)
}

/// Whether `block` is one of these blocks whole: its magic, a version
/// known, and its CRC.
fn sealed(block: &[u8]) -> bool {
    if block[0..4] != MAGIC {
        return false;
    }
    match le_u16(&block[4..6]) {
        VERSION => crc(block) == RESIDUE,
        VERSION_1 => {
            // The CRC of the block with its CRC field taken as zero.
            let mut d = crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi);
            d.update(&block[..28]);
            d.update(&[0; 4]);
            d.update(&block[32..]);
            d.finalize() as u32 == le_u32(&block[28..32])
        }
        _ => false,
    }
}

fn le_u16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// How `got` differs from `want` (same length, whole sectors), if it is
/// close enough to be `want` damaged: a torn write when its first sectors
/// are exactly `want` and the rest are not, else by its bits.
pub fn damage(got: &[u8], want: &[u8]) -> Option<Damage> {
    let (mut bits, mut bytes) = (0u32, 0u32);
    let (mut any_pos, mut one_bit) = (0u8, true);
    let mut stuck_set = true;
    let mut stuck_clear = true;
    for (g, w) in got.iter().zip(want) {
        let x = g ^ w;
        if x == 0 {
            continue;
        }
        bits += x.count_ones();
        bytes += 1;
        any_pos |= x;
        one_bit &= x.count_ones() == 1;
        stuck_set &= g & x == x;
        stuck_clear &= g & x == 0;
    }
    if bits == 0 {
        return None;
    }
    // Sector by sector, without a buffer: this runs for every bad block.
    let intact = |k: usize| got[k * SECTOR..][..SECTOR] == want[k * SECTOR..][..SECTOR];
    let sectors = got.len() / SECTOR;
    let landed = (0..sectors).take_while(|&k| intact(k)).count();
    if landed > 0 && (landed..sectors).all(|k| !intact(k)) {
        return Some(Damage { bits, bytes, shape: Shape::Torn { landed: landed as u8 } });
    }
    if f64::from(bits) > CORRUPT_SHARE * (got.len() * 8) as f64 {
        return None;
    }
    let same = (any_pos.count_ones() == 1).then(|| any_pos.trailing_zeros() as u8);
    // A bit is stuck only where many bytes show it one way (one flipped
    // byte shows nothing of the kind).
    let stuck = bytes >= STUCK_BYTES && (stuck_set || stuck_clear);
    let shape = match (one_bit, same) {
        (true, Some(bit)) if stuck => Shape::StuckBit { bit, value: stuck_set },
        (true, bit) => Shape::OneBitPerByte { bit },
        (false, _) => Shape::Scattered,
    };
    Some(Damage { bits, bytes, shape })
}

/// The stamp and byte offset a block read back carries, where it is one
/// of these blocks whole (its magic, version and CRC hold).
pub fn stamp_of(block: &[u8]) -> Option<(Stamp, u64)> {
    let stamp = Stamp {
        pass: le_u16(&block[6..8]),
        run: le_u64(&block[8..16]),
        disk: le_u32(&block[24..28]),
        version: le_u16(&block[4..6]),
    };
    sealed(block).then(|| (stamp, le_u64(&block[16..24])))
}

/// Classifies one block read back from byte `offset`, expected from
/// `stamp`.
pub fn check(block: &[u8], offset: u64, stamp: Stamp) -> Found {
    if let Some((Stamp { run, pass, disk, .. }, at)) = stamp_of(block) {
        return match () {
            _ if disk != stamp.disk => {
                Found::OtherDisk { offset: at, disk, this_run: run == stamp.run }
            }
            _ if at != offset => Found::Misdirected { offset: at },
            _ if run != stamp.run || pass != stamp.pass => Found::Stale { run, pass },
            _ => Found::Good,
        };
    }
    if block.iter().all(|b| *b == 0) {
        return Found::Zeros;
    }
    // What should be there, regenerated: how far is this from it?
    let mut want = [0u8; BLOCK];
    fill(&mut want, offset, stamp);
    match damage(block, &want) {
        Some(d) => Found::Corrupted(d),
        None => Found::Foreign,
    }
}

/// Classifies every block of `buf`, read from byte `offset`: the blocks
/// that are not good, with their offsets.
pub fn check_all(buf: &[u8], offset: u64, stamp: Stamp) -> Vec<(u64, Found)> {
    not_good(buf, offset, |b, at| check(b, at, stamp))
}

/// The blocks of `buf` (read from byte `offset`) that `classify` does not
/// find good, with their offsets.
fn not_good(buf: &[u8], offset: u64, classify: impl Fn(&[u8], u64) -> Found) -> Vec<(u64, Found)> {
    let at = |i: usize| offset + (i * BLOCK) as u64;
    let found = buf.chunks_exact(BLOCK).enumerate().map(|(i, b)| (at(i), classify(b, at(i))));
    found.filter(|(_, f)| *f != Found::Good).collect()
}

/// What a burn-in writes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Self-identifying blocks (the format above): every fault classified.
    #[default]
    Blocks,
    /// badblocks' four classic fills, one per pass (0xaa, 0x55, 0xff,
    /// 0x00), for procedures that name them. A fill cannot say where it
    /// belongs: a block is good, stale (an earlier pass's fill: a lost
    /// write), foreign (zeros or another fill) or corrupted (anything
    /// else); a misdirected write of a fill cannot be seen.
    Badblocks,
}

/// badblocks' fills, in its order.
pub const FILLS: [u8; 4] = [0xaa, 0x55, 0xff, 0x00];

impl Pattern {
    /// How it is named (`--pattern`, the JSON and the checkpoint).
    pub fn name(self) -> &'static str {
        match self {
            Self::Blocks => "blocks",
            Self::Badblocks => "badblocks",
        }
    }

    /// The passes a burn-in makes unless `--passes` says: one for blocks,
    /// all four fills for badblocks.
    pub fn default_passes(self) -> u16 {
        match self {
            Self::Blocks => 1,
            Self::Badblocks => FILLS.len() as u16,
        }
    }

    /// What fills the buffers pass `stamp.pass` writes: made once per
    /// pass.
    pub fn writer(self, stamp: Stamp) -> Writer {
        match self {
            Self::Blocks => Writer::new(stamp),
            Self::Badblocks => Writer { stamp, how: How::Byte(fill_of(stamp.pass)) },
        }
    }

    /// The blocks of `buf`, read from `offset`, that are not what pass
    /// `stamp.pass` wrote.
    pub fn check_all(self, buf: &[u8], offset: u64, stamp: Stamp) -> Vec<(u64, Found)> {
        match self {
            Self::Blocks => check_all(buf, offset, stamp),
            Self::Badblocks => not_good(buf, offset, |b, _| check_fill(b, stamp)),
        }
    }
}

/// The byte pass `pass` (from 1) fills with.
fn fill_of(pass: u16) -> u8 {
    FILLS[usize::from(pass.max(1) - 1) % FILLS.len()]
}

/// Classifies one block of a badblocks fill.
fn check_fill(block: &[u8], stamp: Stamp) -> Found {
    let want = fill_of(stamp.pass);
    let first = block[0];
    if block.iter().all(|b| *b == first) {
        if first == want {
            return Found::Good;
        }
        // The latest earlier pass that wrote this byte: its write stands,
        // so this pass's was lost.
        if let Some(pass) = (1..stamp.pass).rev().find(|p| fill_of(*p) == first) {
            return Found::Stale { run: stamp.run, pass };
        }
        if first == 0 {
            return Found::Zeros;
        }
        if FILLS.contains(&first) {
            return Found::Foreign;
        }
    }
    match damage(block, &[want; BLOCK]) {
        Some(d) => Found::Corrupted(d),
        None => Found::Foreign,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Stamp =
        Stamp { run: 0x1234_5678_9abc_def0, pass: 1, disk: 0xfeed_beef, version: VERSION };

    fn blocks(n: usize, offset: u64, stamp: Stamp) -> Vec<u8> {
        let mut b = vec![0u8; n * BLOCK];
        fill(&mut b, offset, stamp);
        b
    }

    #[test]
    fn what_was_written_reads_back_good_and_at_64_bit_offsets() {
        for offset in [0, 4096, 1 << 40, (20u64 << 40) - 4 * BLOCK as u64] {
            assert!(check_all(&blocks(4, offset, S), offset, S).is_empty(), "{offset}");
        }
    }

    #[test]
    fn a_pass_writes_the_blocks_a_regeneration_makes_its_crc_put_together() {
        // Offsets whose bytes set every bit of the offset's tables, runs
        // and passes that turn the table every way: the CRC made of parts
        // is the one read over the block, byte for byte.
        let offsets =
            [0, BLOCK as u64, 1 << 40, u64::MAX - 8 * BLOCK as u64 + 1, 0x0123_4567_89ab_c000];
        for (run, pass) in [(S.run, 1), (0, 2), (u64::MAX, 7), (0x5eed, 65535)] {
            let s = Stamp { run, pass, ..S };
            let w = Writer::new(s);
            for at in offsets {
                let mut got = vec![0xeeu8; 8 * BLOCK];
                w.fill(&mut got, at);
                assert_eq!(got, blocks(8, at, s), "run {run:#x} pass {pass} at {at:#x}");
                assert!(check_all(&got, at, s).is_empty());
            }
        }
        let v1 = Stamp { version: VERSION_1, ..S };
        let mut got = vec![0u8; 2 * BLOCK];
        Writer::new(v1).fill(&mut got, 1 << 30);
        assert_eq!(got, blocks(2, 1 << 30, v1), "version 1");
    }

    #[test]
    fn a_whole_version_2_block_has_the_crc32c_residue() {
        for len in [0, 1, 28, 4092] {
            let mut m: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let c = crc(&m);
            m.extend_from_slice(&c.to_le_bytes());
            assert_eq!(crc(&m), RESIDUE, "{len} bytes");
        }
        assert_eq!(crc(b"123456789"), 0xe306_9283, "CRC-32C's check value");
    }

    #[test]
    fn version_1_blocks_an_older_arrayburn_wrote_still_read_good() {
        // The block an older arrayburn (version 1) wrote: its CRC and first
        // payload word, as computed outside this code (a table CRC-32C).
        let v1 = Stamp { version: VERSION_1, ..S };
        let b = blocks(1, 1 << 30, v1);
        assert_eq!(le_u32(&b[28..32]), 0xf45e_d771);
        assert_eq!(b[32..40], [0x52, 0xe3, 0x45, 0x1e, 0x93, 0xfc, 0xc6, 0xbc]);
        assert!(check_all(&b, 1 << 30, v1).is_empty());
        assert_eq!(stamp_of(&b), Some((v1, 1 << 30)));
        // Read by a version-2 stamp: its own where run, pass and place
        // match, stale from an earlier pass; never foreign.
        assert_eq!(check(&b, 1 << 30, S), Found::Good, "same run, pass and place");
        assert_eq!(
            check(&b, 1 << 30, Stamp { pass: 2, ..S }),
            Found::Stale { run: S.run, pass: 1 }
        );
    }

    #[test]
    fn every_fault_is_told_apart() {
        for version in [VERSION, VERSION_1] {
            faults_told_apart(Stamp { version, ..S });
        }
    }

    fn faults_told_apart(s: Stamp) {
        let at = 1 << 30;
        let good = blocks(1, at, s);
        // A flipped bit anywhere: payload, header, CRC, magic.
        for bit in [0, 7, 100, 29 * 8, 2000 * 8, BLOCK * 8 - 1] {
            let mut b = good.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            let Found::Corrupted(d) = check(&b, at, s) else {
                panic!("bit {bit}: {:?}", check(&b, at, s));
            };
            assert_eq!((d.bits, d.bytes), (1, 1), "bit {bit}");
        }
        // Bit 0 flipped in every byte, the magic's included: still ours.
        let every: Vec<u8> = good.iter().map(|b| b ^ 1).collect();
        let d = Damage {
            bits: BLOCK as u32,
            bytes: BLOCK as u32,
            shape: Shape::OneBitPerByte { bit: Some(0) },
        };
        assert_eq!(check(&every, at, s), Found::Corrupted(d));
        // Bit 6 stuck at 1.
        let stuck: Vec<u8> = good.iter().map(|b| b | 0x40).collect();
        let Found::Corrupted(d) = check(&stuck, at, s) else { panic!() };
        assert_eq!(d.shape, Shape::StuckBit { bit: 6, value: true });
        // A torn write: the first sector landed, the rest are zeros.
        let mut torn = good.clone();
        torn[512..].fill(0);
        let Found::Corrupted(d) = check(&torn, at, s) else { panic!() };
        assert_eq!(d.shape, Shape::Torn { landed: 1 });
        // Written elsewhere: the block of another offset, or of another
        // disk at this offset.
        let other = blocks(1, at + (1 << 20), s);
        assert_eq!(check(&other, at, s), Found::Misdirected { offset: at + (1 << 20) });
        let twin = blocks(1, at, Stamp { disk: 7, ..s });
        assert_eq!(check(&twin, at, s), Found::OtherDisk { offset: at, disk: 7, this_run: true });
        // A lost write: last pass's block, or an earlier run's.
        let before = blocks(1, at, Stamp { pass: 1, ..s });
        let now = Stamp { pass: 2, ..s };
        assert_eq!(check(&before, at, now), Found::Stale { run: s.run, pass: 1 });
        let old = blocks(1, at, Stamp { run: 99, ..s });
        assert_eq!(check(&old, at, s), Found::Stale { run: 99, pass: 1 });
        // Never written, and not ours at all.
        assert_eq!(check(&[0; BLOCK], at, s), Found::Zeros);
        assert_eq!(check(&[0; BLOCK], 0, s), Found::Zeros, "at 0 too");
        assert_eq!(check(&[0x5a; BLOCK], at, s), Found::Foreign);
        let random = blocks(1, 12345 * 4096, Stamp { run: 5, ..s });
        let mut garbled = random.clone();
        garbled[28] ^= 1;
        assert_eq!(check(&garbled, at, s), Found::Foreign, "random data");
    }

    #[test]
    fn payloads_differ_by_offset_pass_and_run() {
        let a = blocks(2, 0, S);
        assert_ne!(a[HEADER..BLOCK], a[BLOCK + HEADER..], "neighbouring blocks");
        let b = blocks(1, 0, Stamp { pass: 2, ..S });
        assert_ne!(a[HEADER..BLOCK], b[HEADER..], "passes");
        let c = blocks(1, 0, Stamp { run: 1, ..S });
        assert_ne!(a[HEADER..BLOCK], c[HEADER..], "runs");
    }

    #[test]
    fn badblocks_fills_tell_lost_writes_from_flipped_bits() {
        let p = Pattern::Badblocks;
        let mut b = vec![0u8; 2 * BLOCK];
        for pass in 1..=4 {
            let s = Stamp { pass, ..S };
            p.writer(s).fill(&mut b, 0);
            assert!(p.check_all(&b, 0, s).is_empty(), "pass {pass}");
        }
        assert_eq!(b[0], 0x00, "the fourth fill");
        let third = Stamp { pass: 3, ..S };
        p.writer(Stamp { pass: 2, ..S }).fill(&mut b[BLOCK..], BLOCK as u64);
        b[..BLOCK].fill(0xff);
        b[17] ^= 0x04;
        let flipped = Found::Corrupted(Damage {
            bits: 1,
            bytes: 1,
            shape: Shape::OneBitPerByte { bit: Some(2) },
        });
        assert_eq!(
            p.check_all(&b, 0, third),
            [(0, flipped), (BLOCK as u64, Found::Stale { run: S.run, pass: 2 })]
        );
        assert_eq!(check_fill(&[0; BLOCK], S), Found::Zeros, "pass 1 reads zeros");
    }
}

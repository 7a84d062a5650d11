//! The burn-in's self-identifying blocks: every 4 KiB of what a burn-in
//! writes says which run, pass, disk and byte offset it belongs to, and
//! carries a CRC32C of itself, so a block read back is classified without
//! any stored state (after f3's and fio's verify formats; see
//! `../shared/reference/burnin-users.md` §2).
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic `ABRN` |
//! | 4..6 | format version (1) |
//! | 6..8 | pass (1, 2, …) |
//! | 8..16 | run id (random per burn-in) |
//! | 16..24 | byte offset of the block on the disk |
//! | 24..28 | hash of the disk's identity (serial, size) |
//! | 28..32 | CRC32C of the block, this field taken as zero |
//! | 32..4096 | payload: a xorshift stream seeded by (run, pass, offset) |
//!
//! A block read back is **good** (its CRC holds and it names this run, pass,
//! disk and offset), **corrupted** (the CRC fails on what is still our
//! block: flipped bits on the media, the cable or in memory), **misdirected**
//! (a valid block of this run carrying another offset or another disk: a
//! write that landed elsewhere, or fake capacity wrapping around), **stale**
//! (a valid block of this disk and offset from an earlier pass or run: a
//! lost write), or **foreign** (zeros, or data that is not ours at all).
//! Verifying needs the CRC only: a block whose CRC holds and whose header
//! matches can only be the one this run wrote.

/// Bytes per self-identifying block.
pub const BLOCK: usize = 4096;
/// The header's size; the payload follows.
const HEADER: usize = 32;
const MAGIC: [u8; 4] = *b"ABRN";
const VERSION: u16 = 1;

/// Whose blocks these are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Random per burn-in (kept in the checkpoint across a resume).
    pub run: u64,
    /// Pass number, from 1.
    pub pass: u16,
    /// Hash of the disk's identity.
    pub disk: u32,
}

/// What a block read back turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// What was written there.
    Good,
    /// Our block with bits changed.
    Corrupted,
    /// A valid block that belongs at `offset` (of disk `disk`).
    Misdirected { offset: u64, disk: u32 },
    /// A valid block of this disk and offset from pass `pass` of run `run`.
    Stale { run: u64, pass: u16 },
    /// Zeros (`zeros`) or data that is not a burn-in block.
    Foreign { zeros: bool },
}

/// A hash of a disk's identity for the header (FNV-1a over the text).
pub fn disk_hash(identity: &str) -> u32 {
    identity.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// The payload stream's seed for one block (SplitMix64 of the fields, so
/// neighbouring offsets give unrelated streams).
fn seed(stamp: Stamp, offset: u64) -> u64 {
    let mut z = stamp.run ^ (u64::from(stamp.pass) << 48) ^ offset.rotate_left(17);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1
}

/// Fills `buf` (a whole number of blocks) with the blocks of `stamp` that
/// start at byte `offset` of the disk.
pub fn fill(buf: &mut [u8], offset: u64, stamp: Stamp) {
    debug_assert_eq!(buf.len() % BLOCK, 0);
    for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
        let at = offset + (i * BLOCK) as u64;
        let (head, payload) = block.split_at_mut(HEADER);
        let mut x = seed(stamp, at);
        for word in payload.chunks_exact_mut(8) {
            // xorshift64*: one multiply per 8 bytes.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            word.copy_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
        }
        head[0..4].copy_from_slice(&MAGIC);
        head[4..6].copy_from_slice(&VERSION.to_le_bytes());
        head[6..8].copy_from_slice(&stamp.pass.to_le_bytes());
        head[8..16].copy_from_slice(&stamp.run.to_le_bytes());
        head[16..24].copy_from_slice(&at.to_le_bytes());
        head[24..28].copy_from_slice(&stamp.disk.to_le_bytes());
        head[28..32].fill(0);
        let crc = crc32c::crc32c(block);
        block[28..32].copy_from_slice(&crc.to_le_bytes());
    }
}

/// The CRC32C of a block with its CRC field taken as zero.
fn block_crc(block: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&block[..28]);
    let crc = crc32c::crc32c_append(crc, &[0; 4]);
    crc32c::crc32c_append(crc, &block[32..])
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

/// Classifies one block read back from byte `offset`, expected from
/// `stamp`.
pub fn check(block: &[u8], offset: u64, stamp: Stamp) -> Found {
    let ours = block[0..4] == MAGIC;
    if block_crc(block) != le_u32(&block[28..32]) {
        if block.iter().all(|b| *b == 0) {
            return Found::Foreign { zeros: true };
        }
        // A flipped bit in the magic still leaves the offset: ours.
        if ours || le_u64(&block[16..24]) == offset {
            return Found::Corrupted;
        }
        return Found::Foreign { zeros: false };
    }
    if !ours || le_u16(&block[4..6]) != VERSION {
        return Found::Foreign { zeros: false };
    }
    let (pass, run) = (le_u16(&block[6..8]), le_u64(&block[8..16]));
    let (at, disk) = (le_u64(&block[16..24]), le_u32(&block[24..28]));
    if at != offset || disk != stamp.disk {
        return Found::Misdirected { offset: at, disk };
    }
    if run != stamp.run || pass != stamp.pass {
        return Found::Stale { run, pass };
    }
    Found::Good
}

/// Classifies every block of `buf`, read from byte `offset`: the blocks
/// that are not good, with their offsets.
pub fn check_all(buf: &[u8], offset: u64, stamp: Stamp) -> Vec<(u64, Found)> {
    buf.chunks_exact(BLOCK)
        .enumerate()
        .map(|(i, b)| (offset + (i * BLOCK) as u64, b))
        .map(|(at, b)| (at, check(b, at, stamp)))
        .filter(|(_, f)| *f != Found::Good)
        .collect()
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

    /// Fills `buf` with what pass `stamp.pass` writes at `offset`.
    pub fn fill(self, buf: &mut [u8], offset: u64, stamp: Stamp) {
        match self {
            Self::Blocks => fill(buf, offset, stamp),
            Self::Badblocks => buf.fill(fill_of(stamp.pass)),
        }
    }

    /// The blocks of `buf`, read from `offset`, that are not what pass
    /// `stamp.pass` wrote.
    pub fn check_all(self, buf: &[u8], offset: u64, stamp: Stamp) -> Vec<(u64, Found)> {
        match self {
            Self::Blocks => check_all(buf, offset, stamp),
            Self::Badblocks => buf
                .chunks_exact(BLOCK)
                .enumerate()
                .map(|(i, b)| (offset + (i * BLOCK) as u64, check_fill(b, stamp)))
                .filter(|(_, f)| *f != Found::Good)
                .collect(),
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
    if !block.iter().all(|b| *b == first) {
        return Found::Corrupted;
    }
    if first == want {
        return Found::Good;
    }
    // The latest earlier pass that wrote this byte: its write stands, so
    // this pass's was lost.
    if let Some(pass) = (1..stamp.pass).rev().find(|p| fill_of(*p) == first) {
        return Found::Stale {
            run: stamp.run,
            pass,
        };
    }
    if first == 0 || FILLS.contains(&first) {
        return Found::Foreign { zeros: first == 0 };
    }
    Found::Corrupted
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Stamp = Stamp {
        run: 0x1234_5678_9abc_def0,
        pass: 1,
        disk: 0xfeed_beef,
    };

    fn blocks(n: usize, offset: u64, stamp: Stamp) -> Vec<u8> {
        let mut b = vec![0u8; n * BLOCK];
        fill(&mut b, offset, stamp);
        b
    }

    #[test]
    fn what_was_written_reads_back_good_and_at_64_bit_offsets() {
        for offset in [0, 4096, 1 << 40, (20u64 << 40) - 4 * BLOCK as u64] {
            assert!(
                check_all(&blocks(4, offset, S), offset, S).is_empty(),
                "{offset}"
            );
        }
    }

    #[test]
    fn every_fault_is_told_apart() {
        let at = 1 << 30;
        let good = blocks(1, at, S);
        // A flipped bit anywhere: payload, header, CRC, magic.
        for bit in [0, 7, 100, 29 * 8, 2000 * 8, BLOCK * 8 - 1] {
            let mut b = good.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(check(&b, at, S), Found::Corrupted, "bit {bit}");
        }
        // Written elsewhere: the block of another offset, or of another
        // disk at this offset.
        let other = blocks(1, at + (1 << 20), S);
        assert_eq!(
            check(&other, at, S),
            Found::Misdirected {
                offset: at + (1 << 20),
                disk: S.disk
            }
        );
        let twin = blocks(1, at, Stamp { disk: 7, ..S });
        assert_eq!(
            check(&twin, at, S),
            Found::Misdirected {
                offset: at,
                disk: 7
            }
        );
        // A lost write: last pass's block, or an earlier run's.
        let before = blocks(1, at, Stamp { pass: 1, ..S });
        let now = Stamp { pass: 2, ..S };
        assert_eq!(
            check(&before, at, now),
            Found::Stale {
                run: S.run,
                pass: 1
            }
        );
        let old = blocks(1, at, Stamp { run: 99, ..S });
        assert_eq!(check(&old, at, S), Found::Stale { run: 99, pass: 1 });
        // Not ours.
        assert_eq!(check(&[0; BLOCK], at, S), Found::Foreign { zeros: true });
        assert_eq!(
            check(&[0; BLOCK], 0, S),
            Found::Foreign { zeros: true },
            "at 0 too"
        );
        assert_eq!(
            check(&[0x5a; BLOCK], at, S),
            Found::Foreign { zeros: false }
        );
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
            p.fill(&mut b, 0, s);
            assert!(p.check_all(&b, 0, s).is_empty(), "pass {pass}");
        }
        assert_eq!(b[0], 0x00, "the fourth fill");
        let third = Stamp { pass: 3, ..S };
        p.fill(&mut b[BLOCK..], BLOCK as u64, Stamp { pass: 2, ..S });
        b[..BLOCK].fill(0xff);
        b[17] ^= 0x04;
        assert_eq!(
            p.check_all(&b, 0, third),
            [
                (0, Found::Corrupted),
                (
                    BLOCK as u64,
                    Found::Stale {
                        run: S.run,
                        pass: 2
                    }
                )
            ]
        );
        assert_eq!(
            check_fill(&[0; BLOCK], S),
            Found::Foreign { zeros: true },
            "pass 1 reads zeros"
        );
    }
}

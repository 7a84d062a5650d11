//! A burning disk as the others see it while it runs ([`Live`]: its
//! place, its stage and the worst trouble met, read by the watch and the
//! progress lines), and the file it is burned through ([`DiskIo`]: opened
//! once, or again after each power cycle).
//!
//! It must not read or write a block (`worker` does) and must not judge.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use super::record::DiskBurn;

use crate::io::{Bounds, EngineKind, Probe, Sweep, open_sweep};

/// What a disk is doing, for the display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Write,
    /// The cache flush at the end of a write phase or before a
    /// checkpoint.
    Flush,
    Verify,
    /// A resumed write phase reading back its last interval.
    Reverify,
}

impl Stage {
    /// Every stage, in the order of their numbers (`stage as u64`).
    const ALL: [Stage; 4] = [Stage::Write, Stage::Flush, Stage::Verify, Stage::Reverify];
}

/// Live progress of one disk for the display: the pass, the stage, and
/// the bytes of the current phase done (from the range's start); and the
/// worst it has met so far, for whoever is told at once.
#[derive(Debug, Default)]
pub struct Live {
    pub done: AtomicU64,
    /// A striped burn-in's stripes done (the current phase's bytes are
    /// the stripe's).
    pub stripes: AtomicU64,
    /// `pass << 2 | stage`.
    state: AtomicU64,
    /// A [`Trouble`] as its number (0: none yet); it only rises.
    trouble: AtomicU8,
}

/// What a disk met during its run that someone should hear of at once,
/// least to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Trouble {
    /// A block failed or read back wrong.
    Bad = 1,
    /// The device went away.
    Gone = 2,
    /// It stopped answering.
    Hung = 3,
}

impl Trouble {
    /// As `--notify` names it.
    pub fn word(self) -> &'static str {
        match self {
            Trouble::Bad => "BAD",
            Trouble::Gone => "GONE",
            Trouble::Hung => "HUNG",
        }
    }
}

impl Live {
    /// Takes in what `out` has met so far.
    pub fn note(&self, out: &DiskBurn) {
        let worst = if out.hung.is_some() {
            Some(Trouble::Hung)
        } else if out.device_gone {
            Some(Trouble::Gone)
        } else if out.bad_bytes.iter().any(|&(_, n)| n > 0) {
            Some(Trouble::Bad)
        } else {
            None
        };
        if let Some(t) = worst {
            self.trouble.fetch_max(t as u8, Ordering::Relaxed);
        }
    }

    /// The worst the disk has met so far.
    pub fn trouble(&self) -> Option<Trouble> {
        match self.trouble.load(Ordering::Relaxed) {
            1 => Some(Trouble::Bad),
            2 => Some(Trouble::Gone),
            3 => Some(Trouble::Hung),
            _ => None,
        }
    }

    pub(super) fn set(&self, pass: u16, stage: Stage) {
        self.state.store(u64::from(pass) << 2 | stage as u64, Ordering::Relaxed);
    }

    /// The pass and stage now.
    pub fn stage(&self) -> (u16, Stage) {
        let s = self.state.load(Ordering::Relaxed);
        ((s >> 2) as u16, Stage::ALL[(s & 3) as usize])
    }
}

/// Where a job's writes and reads go: a disk's file through the engine the
/// plan resolved, or in tests a disk made up to fail as a test asks.
pub trait DiskIo: Sync {
    /// A phase's sweep, through the engine asked for (never silently
    /// another), and the probe beside it that pinpoints a failure block by
    /// block.
    fn open(&self, bounds: &Bounds) -> std::io::Result<(Sweep, Probe)>;
    /// The engine's name, as messages say it.
    fn engine(&self) -> &'static str;
}

/// A real disk: its file (O_DIRECT, O_EXCL), through `engine` with `depth`
/// requests in flight (resolved: io_uring or psync).
pub struct OnFile<'a> {
    pub file: &'a std::fs::File,
    pub engine: EngineKind,
    pub depth: usize,
}

impl DiskIo for OnFile<'_> {
    fn open(&self, bounds: &Bounds) -> std::io::Result<(Sweep, Probe)> {
        open_sweep(self.engine, self.file, self.depth, bounds)
    }

    fn engine(&self) -> &'static str {
        self.engine.name()
    }
}

/// A disk read through the file it was opened with, until a power cycle
/// opens it again under its name.
pub struct Reopens<'a> {
    pub first: OnFile<'a>,
    pub now: std::sync::Mutex<Option<std::fs::File>>,
}

impl DiskIo for Reopens<'_> {
    fn open(&self, bounds: &Bounds) -> std::io::Result<(Sweep, Probe)> {
        match &*self.now.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(f) => open_sweep(self.first.engine, f, self.first.depth, bounds),
            None => self.first.open(bounds),
        }
    }

    fn engine(&self) -> &'static str {
        self.first.engine()
    }
}

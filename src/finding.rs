//! What a run found on a disk, as a stable code: each finding in a verdict
//! carries one ([`Finding`]), an inspection's concern is one, and the JSON
//! (`findings` beside each disk to act on), the metrics
//! (`arrayburn_disk_finding`), the OCP stream and the fleet's
//! acknowledgements use it. A sentence may be reworded; a code is
//! never renamed (a new kind of finding gets a new code), so an
//! acknowledged finding stays acknowledged until what it counts moves.
//!
//! It must not judge (the rules choose the code) and must not lay out (the
//! sentence is the rule's; docs/json-schema.md describes each code).

use serde::{Deserialize, Serialize};

/// A kind of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// Ranges no read could get back.
    UnreadableRanges,
    /// Reads that failed, none narrowed to its sectors.
    FailedReads,
    /// Reads slower than `--slow-read`.
    SlowReads,
    /// A read or write that had the disk past the stall allowance.
    Stalled,
    /// Regions of the surface slower than the rest.
    SlowRegions,
    /// A read latency tail beyond its peers'.
    LatencyTail,
    /// Slower than its peers (reading, writing or reading back).
    SlowerThanPeers,
    /// Took longer than its peers to read whole.
    SlowerReadingWhole,
    /// Lost speed when every disk read at once, where its peers kept theirs.
    LostSpeedTogether,
    /// Kept less than its peers under seek stress.
    SlowUnderSeek,
    /// Slow only together with the others: its path.
    SlowOnlyTogether,
    /// Slowing from pass to pass.
    Slowing,
    /// Slower at random reads than its peers.
    SlowRandomReads,
    /// A long random-read tail with a normal median: it retries reads.
    RetryingReads,
    /// A deep queue gains it nothing where it gains its peers much.
    NoQueueing,
    /// Slowed by its neighbours' seeks (vibration).
    Vibration,
    /// Slower than its model's rating.
    BelowRating,
    /// Slow with the disks behind one path (a group).
    SlowGroup,
    /// The device went away.
    DeviceGone,
    /// It stopped answering (a request outlived `--io-timeout`).
    Hung,
    /// It did not come back after a spin-down or a power cycle.
    NotBack,
    /// It spun up slower than its peers.
    SpunUpLate,
    /// Bytes whose write failed.
    WriteFailed,
    /// Bytes whose cache flush failed.
    FlushFailed,
    /// Bytes whose read-back failed.
    ReadBackFailed,
    /// Bytes read back with bits changed.
    Corrupted,
    /// Bytes of this disk read back from another place on it.
    Misdirected,
    /// Bytes of another disk read back.
    OtherDisksBlocks,
    /// Bytes of an earlier pass read back: the write was lost.
    LostWrites,
    /// Zeros where data was written: never written.
    NeverWritten,
    /// Data that is neither what was written nor a burn-in block.
    Foreign,
    /// A SMART media counter rose.
    SmartMedia,
    /// A SMART transport counter (CRC) rose.
    SmartTransport,
    /// A SMART thermal counter rose.
    SmartThermal,
    /// The SMART health check failed.
    SmartFailed,
    /// The drive's own self-test failed.
    SelfTestFailed,
    /// Fewer bytes hold data than the disk says it has.
    FakeCapacity,
    /// Hotter than its limit.
    TooHot,
    /// Drive-managed SMR: writes that collapse and recover after idling,
    /// or a cache that persists and fills.
    DriveManagedSmr,
    /// Writes that collapsed and stayed slow after idling.
    WritesCollapsed,
    /// The kernel reset, timed out or aborted its commands.
    KernelPath,
    /// The kernel logged I/O errors the reads did not meet.
    KernelErrors,
    /// PCIe errors rose on its controller's path.
    PcieErrors,
    /// Its link runs below its maximum.
    LinkDegraded,
    /// ATA security has it locked: its reads fail until it is unlocked.
    Locked,
    /// A format the burn-in cannot test as it is (metadata, protection
    /// information, a sector size Linux does not take).
    UntestedFormat,
    /// Its power-on hours were reset (FARM and SMART disagree).
    HoursReset,
    /// More power-on hours than a new drive's factory test.
    Used,
    /// Capacity hidden from the host (HPA or DCO).
    HiddenCapacity,
    /// Its capacity differs from its peers' of the same model.
    CapacityDiffers,
    /// Its firmware differs from its peers' of the same model.
    FirmwareDiffers,
    /// Its sector format differs from its peers' of the same model.
    SectorFormatDiffers,
    /// It declares zones (host-aware or host-managed).
    Zoned,
    /// A spinning disk that says it takes TRIM.
    TrimOnSpinningDisk,
    /// A RAID controller's volume: its drives are read through it.
    RaidVolume,
    /// A drive behind a RAID controller reported failing.
    DriveBehindFailing,
    /// A cache that persists, its kind not decided.
    PersistentCache,
    /// Shingled, but it does not say so.
    SmrUntold,
    /// The size the drive declares (SMART) is not the one the kernel reads.
    DeclaredSizeDiffers,
    /// Another drive of the run reports the same serial.
    SerialDuplicated,
    /// It may retry a bad sector longer than the kernel waits for it.
    RetriesOutlastKernel,
    /// The kernel reset it, timed out or failed a command of it while it
    /// was inspected (a note).
    KernelSaw,
    /// After a discard whose zeroes it (or the kernel for it) promised,
    /// data read back.
    DiscardNotZeroes,
    /// In service (`watch`), its latency at its peers' load stood out for
    /// `--for`.
    FailSlow,
}

/// Every code, in the order of the enum (and of the JSON's documentation,
/// which describes each): `ALL[code as usize]` is the code.
pub const ALL: [Code; 64] = [
    Code::UnreadableRanges,
    Code::FailedReads,
    Code::SlowReads,
    Code::Stalled,
    Code::SlowRegions,
    Code::LatencyTail,
    Code::SlowerThanPeers,
    Code::SlowerReadingWhole,
    Code::LostSpeedTogether,
    Code::SlowUnderSeek,
    Code::SlowOnlyTogether,
    Code::Slowing,
    Code::SlowRandomReads,
    Code::RetryingReads,
    Code::NoQueueing,
    Code::Vibration,
    Code::BelowRating,
    Code::SlowGroup,
    Code::DeviceGone,
    Code::Hung,
    Code::NotBack,
    Code::SpunUpLate,
    Code::WriteFailed,
    Code::FlushFailed,
    Code::ReadBackFailed,
    Code::Corrupted,
    Code::Misdirected,
    Code::OtherDisksBlocks,
    Code::LostWrites,
    Code::NeverWritten,
    Code::Foreign,
    Code::SmartMedia,
    Code::SmartTransport,
    Code::SmartThermal,
    Code::SmartFailed,
    Code::SelfTestFailed,
    Code::FakeCapacity,
    Code::TooHot,
    Code::DriveManagedSmr,
    Code::WritesCollapsed,
    Code::KernelPath,
    Code::KernelErrors,
    Code::PcieErrors,
    Code::LinkDegraded,
    Code::Locked,
    Code::UntestedFormat,
    Code::HoursReset,
    Code::Used,
    Code::HiddenCapacity,
    Code::CapacityDiffers,
    Code::FirmwareDiffers,
    Code::SectorFormatDiffers,
    Code::Zoned,
    Code::TrimOnSpinningDisk,
    Code::RaidVolume,
    Code::DriveBehindFailing,
    Code::PersistentCache,
    Code::SmrUntold,
    Code::DeclaredSizeDiffers,
    Code::SerialDuplicated,
    Code::RetriesOutlastKernel,
    Code::KernelSaw,
    Code::DiscardNotZeroes,
    Code::FailSlow,
];

const _: () = assert!(Code::FailSlow as usize + 1 == ALL.len());

impl Code {
    /// Whether an inspection's finding of this code is something to act on
    /// before the disk is used (else a note: what it is, or a setting).
    pub fn acts(self) -> bool {
        !matches!(
            self,
            Code::Zoned
                | Code::TrimOnSpinningDisk
                | Code::RaidVolume
                | Code::PersistentCache
                | Code::SmrUntold
                | Code::RetriesOutlastKernel
                | Code::KernelSaw
        )
    }

    /// As the JSON, the metrics and the acknowledgements name it.
    pub fn word(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    }
}

/// One finding on a disk: its code, and what it counts where it counts
/// something that a re-measurement does not move (bad bytes, unreadable
/// ranges, failed reads); where a drive's counter rose, the counter's own
/// words (its name and values, as smartctl gives them). A figure every
/// re-measurement moves (a speed, a percentage, a time, a temperature, how
/// many reads were slow or how many lines the kernel logged) is never kept:
/// 65 % where 64 % was acknowledged is the same finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub code: Code,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<String>,
}

impl Finding {
    /// A finding that counts nothing.
    pub fn of(code: Code) -> Self {
        Self { code, count: None, counter: None }
    }

    /// A finding counting `n`.
    pub fn counting(code: Code, n: u64) -> Self {
        Self { code, count: Some(n), counter: None }
    }

    /// A finding of a drive's counter, in its own words.
    pub fn counter(code: Code, words: &str) -> Self {
        Self { code, count: None, counter: Some(words.to_string()) }
    }

    /// A disk's findings as one value, the same for the same findings
    /// whatever their order or their sentence: `never_written=8192;
    /// slower_than_peers`.
    pub fn value(findings: &[Finding]) -> String {
        let mut each: Vec<String> = (findings.iter())
            .map(|f| {
                let mut v = f.code.word();
                if let Some(n) = f.count {
                    v += &format!("={n}");
                }
                if let Some(c) = &f.counter {
                    v += &format!(" ({c})");
                }
                v
            })
            .collect();
        each.sort();
        each.dedup();
        each.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_keeps_codes_and_counts_and_never_a_moving_figure() {
        let a = [Finding::counting(Code::NeverWritten, 8192), Finding::of(Code::SlowerThanPeers)];
        let b = [Finding::of(Code::SlowerThanPeers), Finding::counting(Code::NeverWritten, 8192)];
        assert_eq!(Finding::value(&a), "never_written=8192; slower_than_peers");
        assert_eq!(Finding::value(&a), Finding::value(&b), "the order is not the value");
        let more = [Finding::counting(Code::NeverWritten, 16384)];
        assert_ne!(Finding::value(&a[..1]), Finding::value(&more));
        let smart = |w: &str| [Finding::counter(Code::SmartMedia, w)];
        assert_ne!(
            Finding::value(&smart("Reallocated_Sector_Ct 0 → 8")),
            Finding::value(&smart("Reallocated_Sector_Ct 0 → 9"))
        );
    }

    #[test]
    fn every_code_has_a_word_of_its_own_and_is_documented() {
        use std::collections::BTreeSet;
        for (i, code) in ALL.iter().enumerate() {
            assert_eq!(*code as usize, i, "{code:?} out of the enum's order");
        }
        let words: BTreeSet<String> = ALL.iter().map(|c| c.word()).collect();
        assert_eq!(words.len(), ALL.len());
        assert_eq!(Code::UnreadableRanges.word(), "unreadable_ranges");
        let docs = include_str!("../docs/json-schema.md");
        for w in &words {
            assert!(docs.contains(&format!("| `{w}` |")), "docs/json-schema.md lacks `{w}`");
        }
    }
}

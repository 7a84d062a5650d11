//! The incoming inspection's rules: what a drive declares of itself (and,
//! where asked, what the capacity probe found) against simple rules and
//! against its peers of the same model in the run.
//!
//! | concern | rule | acts |
//! |---|---|---|
//! | locked | ATA security enabled and locked: every read fails until it is unlocked (never bad media) | yes |
//! | untested format | 520- or 528-byte sectors, or protection information (`device::format`) | yes |
//! | hours reset | FARM's power-on hours above SMART's by more than a day and 2 % | yes |
//! | used | SMART's power-on hours above `--new-hours` | yes |
//! | hidden capacity | an HPA, or NVMe capacity in no namespace | yes |
//! | fake capacity | the probe found blocks past the usable size that store nothing of their own | yes |
//! | capacity differs | the announced size differs from most peers of its model | yes |
//! | firmware differs | the firmware differs from most peers of its model (two or more agreeing) | yes |
//! | sector format differs | logical/physical size differs from most disks of the run | yes |
//! | drive behind failing | a drive behind the RAID controller whose volume this is says its SMART health failed | yes |
//! | zoned | the drive or the kernel names a zone model (SMR) | no: a note |
//! | raid volume | a volume of a hardware RAID controller (`device::raid`): a check measures the volume, not a drive | no: a note |
//! | TRIM on a spinning disk | a hard disk that supports TRIM: likely drive-managed SMR | no: a note |
//! | drive-managed SMR | with --probe, a spinning disk's scattered writes, each flushed, ran at many times its reads' rate, then slowed as a full cache's do and recovered idle (`judge::smr`) | yes |
//! | persistent cache | the same, but the cache did not fill, or not recover idle: SMR not decided | no: a note |
//! | retries outlast the kernel | its error recovery control is off, lacking, or not below the kernel's command timer (`judge::fit`) | no: a note |
//! | kernel saw | the kernel reset it, timed out or failed a command of it while it was inspected ([`with_kernel`]) | no: a note |
//!
//! A drive without SMART data is not judged new, unlocked or whole: its
//! verdict says what was not known. It must not read devices or format
//! tables.

use crate::finding::Code;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::burnin::probe::{Past, Probed};
use crate::burnin::scatter::Scattered;
use crate::inspect::Declared;
use crate::judge::ArrayVerdict;
use crate::units::human_bytes;

/// One disk inspected: what it declared, what the probe found, and what
/// that means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inspected {
    /// The disk's path as given.
    pub path: String,
    pub declared: Declared,
    /// The capacity probe's result, where it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probed>,
    /// The scattered-write probe's, where it ran (`burnin::scatter`: a
    /// spinning disk, with --probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scattered: Option<Scattered>,
    pub findings: Vec<Concern>,
    pub verdict: InspectVerdict,
    /// Whether it gives up on a bad sector before the kernel gives up on
    /// it: fit for a RAID or a pool (`judge::fit`).
    #[serde(default)]
    pub fit: super::fit::Fit,
    /// What the kernel saw of it while it was inspected
    /// (`device::kernel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<crate::device::kernel::Seen>,
}

/// What the kernel saw of each disk while it was inspected, kept, and
/// its path's events a note: smartctl's own commands can draw a failed
/// command from a drive that rejects a log, so it is no verdict here.
pub fn with_kernel(disks: &mut [Inspected], kernel: Vec<crate::device::kernel::Seen>) {
    for (d, k) in disks.iter_mut().zip(kernel) {
        let n = k.path_events();
        if n > 0 && k.not_read.is_none() {
            let first = k.first.first().map(|l| format!(": {}", crate::escape::terminal(l)));
            d.findings.push(Concern {
                concern: Code::KernelSaw,
                sentence: format!(
                    "the kernel logged {n} reset, timeout or failed command(s) about it while it was inspected{} (smartctl's own commands draw one from a drive that rejects a log; a reset or timeout is its path's: check it before use)",
                    first.unwrap_or_default()
                ),
            });
        }
        d.kernel = Some(k);
    }
}

impl Inspected {
    /// The findings to act on.
    pub fn to_act_on(&self) -> impl Iterator<Item = &Concern> {
        self.findings.iter().filter(|f| f.concern.acts())
    }

    /// Whether the drive says it is locked.
    pub fn locked(&self) -> bool {
        self.declared.security.as_ref().is_some_and(|s| s.locked)
    }
}

/// Each disk with its findings and verdict: `declared[i]` and the
/// probes' `[i]` (capacity, scattered writes) are of `paths[i]`.
pub fn judged(
    paths: &[String],
    declared: Vec<Declared>,
    (probes, scattered): (Vec<Option<Probed>>, Vec<Option<Scattered>>),
    rules: Rules,
) -> Vec<Inspected> {
    let refs: Vec<&Declared> = declared.iter().collect();
    let found = judge(&refs, rules);
    (paths.iter().zip(declared).zip(probes.into_iter().zip(scattered)).zip(found))
        .map(|(((path, declared), (probe, scattered)), mut findings)| {
            findings.extend(probe.as_ref().and_then(probed));
            findings.extend(scattered.as_ref().and_then(shingles));
            let fit = super::fit::judge(path, &declared);
            if fit.fitness == super::fit::Fitness::Unfit {
                let sentence = format!("not fit for a RAID or a pool as it is: {}", fit.sentence);
                findings.push(Concern { concern: Code::RetriesOutlastKernel, sentence });
            }
            let verdict = verdict(&declared, &findings);
            let kernel = None;
            Inspected {
                path: path.clone(),
                declared,
                probe,
                scattered,
                findings,
                verdict,
                fit,
                kernel,
            }
        })
        .collect()
}

/// What the scattered-write probe says of a spinning disk's shingles
/// (`judge::smr`): drive-managed SMR to act on, or a cache that persists
/// whose kind was not decided, as a note. A disk that declares zones is
/// noted as zoned already.
fn shingles(s: &Scattered) -> Option<Concern> {
    if s.zoned.is_some() {
        return None;
    }
    let signs = super::smr::Signs { spins: true, shingled: None, scattered: Some(s) };
    match super::smr::judge(signs) {
        (Some((_, sentence)), _) => Some(Concern { concern: Code::DriveManagedSmr, sentence }),
        (None, Some(sentence)) if super::smr::untold(s) => {
            Some(Concern { concern: Code::SmrUntold, sentence })
        }
        (None, Some(sentence)) => Some(Concern { concern: Code::PersistentCache, sentence }),
        (None, None) => None,
    }
}

/// One concern an inspection found: its code and its sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concern {
    pub concern: Code,
    pub sentence: String,
}

/// A disk's inspection verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InspectVerdict {
    /// Nothing to act on, and SMART answered.
    Clean,
    /// Something to act on.
    ActOn,
    /// Nothing found, but without SMART its hours and security are not
    /// known.
    NotKnown,
}

/// The rules' one setting.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Power-on hours a new drive may have (its factory test).
    pub new_hours: u64,
}

/// The most power-on hours FARM may be ahead of SMART on a drive whose
/// counts were never reset: a day, or 2 % (they are kept apart).
fn reset_slack(smart: u64) -> u64 {
    24.max(smart / 50)
}

/// A count with thousands separated (31,383).
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Two sizes in words that tell them apart: in bytes where the rounded
/// words are the same.
fn sizes_apart(a: u64, b: u64) -> (String, String) {
    let (x, y) = (human_bytes(a), human_bytes(b));
    if x == y { (format!("{} bytes", grouped(a)), grouped(b)) } else { (x, y) }
}

/// A finding of `concern` in `sentence`.
fn found(concern: Code, sentence: String) -> Option<Concern> {
    Some(Concern { concern, sentence })
}

/// Locked by ATA security: unlock, never return.
fn locked(d: &Declared) -> Option<Concern> {
    let s = d.security.as_ref().filter(|s| s.locked)?;
    let more =
        if s.attempts_exceeded { " (too many wrong passwords: power-cycle it first)" } else { "" };
    found(
        Code::Locked,
        format!(
            "locked (ATA security: {}): unlock it before testing{more}; its reads fail until then, which is no fault of its media",
            s.words
        ),
    )
}

/// FARM's hours far ahead of SMART's (a reset), else SMART's above what a
/// new drive has.
fn hours(d: &Declared, rules: Rules) -> Option<Concern> {
    let h = d.power_on_hours?;
    match &d.farm {
        Some(f) if f.power_on_hours > h + reset_slack(h) => found(
            Code::HoursReset,
            format!(
                "hours reset: SMART says {} h, Seagate's FARM log {} h (FARM keeps the hours a reset of SMART cannot hide): a used drive",
                grouped(h),
                grouped(f.power_on_hours)
            ),
        ),
        _ if h > rules.new_hours => found(
            Code::Used,
            format!(
                "used: {} power-on hours (a new drive has at most {})",
                grouped(h),
                rules.new_hours
            ),
        ),
        _ => None,
    }
}

/// Capacity the drive has but does not show.
fn hidden(d: &Declared) -> Option<Concern> {
    let h = d.hidden.as_ref()?;
    let restore = h.restore.as_ref().map(|c| format!(": show it with `{c}`")).unwrap_or_default();
    found(
        Code::HiddenCapacity,
        format!(
            "hidden capacity: {} beyond the {} shown ({}){restore} before testing, or the hidden part is never tested",
            human_bytes(h.native_bytes.saturating_sub(h.shown_bytes)),
            human_bytes(h.shown_bytes),
            h.how
        ),
    )
}

/// A zone model named, or TRIM on a spinning disk: SMR, as notes.
fn shingled(d: &Declared) -> Option<Concern> {
    if let Some(z) = &d.zoned {
        // A zoned NVMe namespace (ZNS) is flash, not shingled: named as
        // what it is.
        let what = if d.name.starts_with("nvme") {
            "a zoned namespace (NVMe ZNS): its zones take writes only in order, and arrayburn does not write it"
        } else {
            "an SMR drive; a sequential write-verify does not show its rewrite stalls"
        };
        return found(Code::Zoned, format!("zoned ({z}): {what}"));
    }
    let spins = d.rotation_rpm.is_some_and(|r| r > 0);
    (d.trim == Some(true) && spins).then(|| Concern {
        concern: Code::TrimOnSpinningDisk,
        sentence: "supports TRIM though it spins: most likely drive-managed SMR".into(),
    })
}

/// A size the drive declares that the kernel's contradicts (more than a
/// logical block apart): a bridge or controller that misreports, a fake,
/// or another drive than the kernel sees.
fn declared_size(d: &Declared) -> Option<Concern> {
    let block = u64::from(d.logical_block.max(512));
    if !d.smart || d.kernel_bytes == 0 || d.size_bytes.abs_diff(d.kernel_bytes) <= block {
        return None;
    }
    let (said, read) = sizes_apart(d.size_bytes, d.kernel_bytes);
    found(
        Code::DeclaredSizeDiffers,
        format!(
            "declares {said} to SMART, but the kernel reads {read}: a bridge or controller that misreports, a fake, or not the drive the kernel sees; only the {read} are tested (`arrayburn inspect --probe --destructive` finds what it really holds)"
        ),
    )
}

/// One disk's own findings (nothing of its peers), in the table's order.
fn own(d: &Declared, rules: Rules) -> Vec<Concern> {
    let format = (d.format.as_ref()).and_then(|f| found(Code::UntestedFormat, f.sentence(&d.name)));
    [format, locked(d), hours(d, rules), hidden(d), shingled(d), declared_size(d)]
        .into_iter()
        .flatten()
        .chain(raid(d))
        .collect()
}

/// A RAID controller's volume: what a check of it can and cannot tell,
/// its drives as read through the controller, and any that says its
/// health failed.
fn raid(d: &Declared) -> Vec<Concern> {
    let Some(r) = &d.raid else { return Vec::new() };
    let c = &r.controller;
    let drive = |m: &crate::inspect::declared::Member| {
        let said: Vec<String> = [
            m.model.clone(),
            m.serial.clone(),
            m.power_on_hours.map(|h| format!("{} h", grouped(h))),
            m.passed.map(|p| format!("health {}", if p { "passed" } else { "FAILED" })),
            m.not_read.as_ref().map(|w| format!("not read: {w}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!("{}: {}", m.asked, said.join(", "))
    };
    let drives = if r.members.is_empty() {
        format!(
            "smartctl --scan-open lists no drive behind it (as root, smartctl -d {},N reads each)",
            c.passthrough
        )
    } else {
        format!(
            "the drives behind {} controllers, read through it (smartctl cannot tell which are this volume's): {}",
            c.passthrough,
            r.members.iter().map(drive).collect::<Vec<_>>().join("; ")
        )
    };
    let mut out = vec![Concern {
        concern: Code::RaidVolume,
        sentence: format!("{}; {drives}", c.volume_words()),
    }];
    out.extend(members_of_one_serial(r));
    for m in r.members.iter().filter(|m| m.passed == Some(false)) {
        out.push(Concern {
            concern: Code::DriveBehindFailing,
            sentence: format!(
                "a drive behind it says its SMART health failed ({}): replace it",
                drive(m)
            ),
        });
    }
    out
}

/// Drives behind a volume that report one serial (each serial two or
/// more share, however many such): the controller answers for them (or
/// they are clones), so what each says is not its own.
fn members_of_one_serial(r: &crate::inspect::declared::Raid) -> Vec<Concern> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in r.members.iter().filter_map(|m| m.serial.as_deref()) {
        *counts.entry(s).or_default() += 1;
    }
    (counts.into_iter().filter(|(_, n)| *n >= 2))
        .map(|(serial, n)| Concern {
            concern: Code::SerialDuplicated,
            sentence: format!(
                "{n} drives behind it report one serial, {}: the controller answers for them (or they are clones), so what each says is not known to be its own",
                crate::escape::terminal(serial)
            ),
        })
        .collect()
}

/// The value most of `values` share, and how many share it, where at
/// least two do and more than any other value.
fn most<T: Ord + Clone>(values: impl Iterator<Item = T>) -> Option<(T, usize)> {
    let mut counts: BTreeMap<T, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    let mut by: Vec<(T, usize)> = counts.into_iter().collect();
    by.sort_by_key(|v| std::cmp::Reverse(v.1));
    match by.as_slice() {
        [(v, n), rest @ ..] if *n >= 2 && rest.first().is_none_or(|r| r.1 < *n) => {
            Some((v.clone(), *n))
        }
        _ => None,
    }
}

/// Findings of each disk against its peers: the same model's size and
/// firmware, and every disk's sector format.
fn against_peers(disks: &[&Declared]) -> Vec<Vec<Concern>> {
    let mut out = vec![Vec::new(); disks.len()];
    let formats = most(disks.iter().map(|d| d.sector_format()));
    for (i, d) in disks.iter().enumerate() {
        let peers: Vec<&&Declared> = (disks.iter().enumerate())
            .filter(|(j, p)| *j != i && p.model.is_some() && p.model == d.model)
            .map(|(_, p)| p)
            .collect();
        let mut say = |concern, sentence: String| out[i].push(Concern { concern, sentence });
        if let Some((size, n)) = most(peers.iter().map(|p| p.size_bytes))
            && size != d.size_bytes
        {
            say(Code::CapacityDiffers, {
                let (mine, theirs) = sizes_apart(d.size_bytes, size);
                format!("capacity {mine} differs from its {n} peers' {theirs} of the same model")
            });
        }
        if let (Some(fw), Some((theirs, n))) =
            (&d.firmware, most(peers.iter().filter_map(|p| p.firmware.clone())))
            && *fw != theirs
        {
            say(
                Code::FirmwareDiffers,
                format!("firmware {fw} differs from its {n} peers' {theirs}"),
            );
        }
        if let Some((f, n)) = &formats
            && *f != d.sector_format()
        {
            say(
                Code::SectorFormatDiffers,
                format!("{} sectors among {n} {f} disks", d.sector_format()),
            );
        }
    }
    out
}

/// Every disk's findings: its own, then against its peers, then a serial
/// it shares with another.
pub fn judge(disks: &[&Declared], rules: Rules) -> Vec<Vec<Concern>> {
    let peers = against_peers(disks);
    (disks.iter().enumerate().zip(peers))
        .map(|((i, d), p)| {
            own(d, rules).into_iter().chain(p).chain(shared_serial(disks, i)).collect()
        })
        .collect()
}

/// Disk `i`'s serial where another disk of the run reports it too: two
/// drives cannot share one, so one of them (a bridge or controller that
/// reports its own, a clone) is not what it says, or it is one drive
/// reached by two paths. Namespaces of one NVMe controller (their IDs
/// differ) share it by right.
fn shared_serial(disks: &[&Declared], i: usize) -> Option<Concern> {
    let serial = disks[i].serial.as_deref().filter(|s| !s.is_empty())?;
    let others: Vec<&str> = (disks.iter().enumerate())
        .filter(|(j, d)| *j != i && d.serial.as_deref() == Some(serial))
        .filter(|(_, d)| d.nsid.is_none() || d.nsid == disks[i].nsid)
        .map(|(_, d)| d.name.as_str())
        .collect();
    if others.is_empty() {
        return None;
    }
    found(
        Code::SerialDuplicated,
        format!(
            "serial {} is also {}'s: two drives cannot share one, so one is not what it says (a bridge or controller that reports its own serial, a clone) or both are one drive by two paths; tell them apart before trusting either's results",
            crate::escape::terminal(serial),
            others.join(", ")
        ),
    )
}

/// What the capacity probe found, in words, where it found blocks past
/// the usable size.
pub fn fake_capacity(p: &Probed) -> Option<String> {
    let how = match p.past? {
        Past::Aliased { shift_bytes } => format!(
            "blocks past it are the same places as blocks {} lower",
            human_bytes(shift_bytes)
        ),
        Past::Lost => "blocks past it keep nothing written to them".into(),
    };
    Some(format!(
        "fake capacity: only the first {} of the {} announced hold data ({how})",
        human_bytes(p.usable_bytes),
        human_bytes(p.announced_bytes),
    ))
}

/// The capacity probe's finding, where it found blocks past the usable
/// size.
pub fn probed(p: &Probed) -> Option<Concern> {
    Some(Concern {
        concern: Code::FakeCapacity,
        sentence: format!(
            "{}: return it, or use it only with --range 0..{}",
            fake_capacity(p)?,
            p.usable_bytes
        ),
    })
}

/// A disk's verdict from its findings.
pub fn verdict(d: &Declared, findings: &[Concern]) -> InspectVerdict {
    if findings.iter().any(|f| f.concern.acts()) {
        InspectVerdict::ActOn
    } else if d.smart {
        InspectVerdict::Clean
    } else {
        InspectVerdict::NotKnown
    }
}

/// The run's verdict over its disks and its sentence: something to act
/// on (flagged), or nothing but disks that gave no SMART data (not
/// judged: their hours and security are not known), or nothing.
/// `interrupted`: a signal stopped the probe.
pub fn run_verdict(disks: &[Inspected], rules: Rules, interrupted: bool) -> (ArrayVerdict, String) {
    let paths = |v: InspectVerdict| -> Vec<&str> {
        disks.iter().filter(|d| d.verdict == v).map(|d| d.path.as_str()).collect()
    };
    let (act, unknown) = (paths(InspectVerdict::ActOn), paths(InspectVerdict::NotKnown));
    let not_read: Vec<String> = (disks.iter())
        .flat_map(|d| d.declared.not_read.iter().map(move |n| (d, n)))
        .filter(|(d, _)| d.declared.smart)
        .map(|(d, n)| format!("{}: {n}", d.path))
        .collect();
    // Said where health is claimed: what it does not rest on.
    let caveat = if not_read.is_empty() {
        String::new()
    } else {
        format!("; not read: {}", not_read.join("; "))
    };
    if interrupted {
        return (
            ArrayVerdict::Interrupted,
            "interrupted: a signal stopped the inspection; what was read and probed until then is shown"
                .into(),
        );
    }
    if !act.is_empty() {
        let sentence = format!(
            "{} of {} disk(s) to act on before use: {}",
            act.len(),
            disks.len(),
            act.join(", ")
        );
        return (ArrayVerdict::Flagged, sentence);
    }
    if !unknown.is_empty() {
        let sentence = format!(
            "nothing to act on in what was read, but no SMART data came from {}: hours, security and hidden capacity not known",
            unknown.join(", ")
        );
        return (ArrayVerdict::NotJudged, sentence);
    }
    let sentence = format!(
        "nothing to act on: {} disk(s), each with at most {} power-on hours, none reporting a lock or hidden capacity, each like its peers",
        disks.len(),
        rules.new_hours
    );
    (ArrayVerdict::Healthy, sentence + &caveat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::declared::{Farm, Security};

    const RULES: Rules = Rules { new_hours: 100 };

    fn disk(model: &str, fw: &str, hours: u64) -> Declared {
        Declared {
            model: Some(model.into()),
            firmware: Some(fw.into()),
            size_bytes: 4_000_787_030_016,
            kernel_bytes: 4_000_787_030_016,
            logical_block: 512,
            physical_block: 4096,
            power_on_hours: Some(hours),
            smart: true,
            ..Declared::default()
        }
    }

    fn concerns(f: &[Concern]) -> Vec<Code> {
        f.iter().map(|f| f.concern).collect()
    }

    #[test]
    fn what_the_kernel_saw_during_an_inspection_is_kept_and_its_path_events_are_a_note() {
        use crate::device::kernel::{Kind, Seen};
        let paths = vec!["/dev/sdb".to_string(), "/dev/sdc".to_string()];
        let d = disk("ST4000VN006", "SC60", 12);
        let mut disks =
            judged(&paths, vec![d.clone(), d], (vec![None, None], vec![None, None]), RULES);
        let failed = Seen {
            counts: [(Kind::FailedCommand, 1)].into_iter().collect(),
            first: vec!["ata2.00: failed command: READ LOG DMA EXT".into()],
            ..Seen::default()
        };
        with_kernel(&mut disks, vec![failed, Seen::default()]);
        let note = disks[0].findings.iter().find(|f| f.concern == Code::KernelSaw).unwrap();
        assert!(
            note.sentence.contains("1 reset, timeout or failed command(s)"),
            "{}",
            note.sentence
        );
        assert!(note.sentence.contains(": ata2.00: failed command: READ LOG DMA EXT"));
        // A note: the verdict stands; the quiet disk has none, and both keep
        // what the kernel saw.
        assert_eq!(disks[0].verdict, InspectVerdict::Clean);
        assert!(disks[1].findings.iter().all(|f| f.concern != Code::KernelSaw));
        assert!(disks.iter().all(|d| d.kernel.is_some()));
    }

    #[test]
    fn a_reset_of_smart_hours_is_told_by_farm_and_a_genuine_count_is_not() {
        let mut d = disk("ST4000VN006", "SC60", 12);
        d.farm = Some(Farm { power_on_hours: 31_383, power_cycles: None, serial: None });
        let f = judge(&[&d], RULES);
        assert_eq!(concerns(&f[0]), [Code::HoursReset]);
        assert!(f[0][0].sentence.contains("SMART says 12 h, Seagate's FARM log 31,383 h"));
        // FARM a few hours ahead (kept apart): one used drive, not a reset.
        d.power_on_hours = Some(31_378);
        let f = judge(&[&d], RULES);
        assert_eq!(concerns(&f[0]), [Code::Used]);
        assert!(f[0][0].sentence.contains("31,378 power-on hours"), "{}", f[0][0].sentence);
    }

    #[test]
    fn a_size_the_kernel_contradicts_and_a_shared_serial_are_findings() {
        // A lone drive declaring 14 TB on a device the kernel reads as
        // 64 MiB: "clean" before.
        let mut big = disk("M", "1", 8);
        (big.size_bytes, big.kernel_bytes) = (14_000_519_643_136, 64 << 20);
        let f = judge(&[&big], RULES);
        assert_eq!(concerns(&f[0]), [Code::DeclaredSizeDiffers]);
        assert!(
            f[0][0]
                .sentence
                .starts_with("declares 14.00 TB to SMART, but the kernel reads 67.11 MB"),
            "{}",
            f[0][0].sentence
        );
        assert_eq!(verdict(&big, &f[0]), InspectVerdict::ActOn);
        // The same size, or a block apart: nothing.
        big.size_bytes = (64 << 20) + 512;
        assert!(judge(&[&big], RULES)[0].is_empty());
        // Two drives with one serial: each names the other.
        let (mut a, mut b, mut c) = (disk("M", "1", 8), disk("M", "1", 8), disk("M", "1", 8));
        (a.name, b.name, c.name) = ("sdb".into(), "sdc".into(), "sdd".into());
        (a.serial, b.serial, c.serial) =
            (Some("ZL2ABC".into()), Some("ZL2ABC".into()), Some("ZL2XYZ".into()));
        let f = judge(&[&a, &b, &c], RULES);
        assert_eq!((concerns(&f[0]), concerns(&f[2])), (vec![Code::SerialDuplicated], vec![]));
        assert!(
            f[0][0].sentence.starts_with("serial ZL2ABC is also sdc's"),
            "{}",
            f[0][0].sentence
        );
        assert!(f[1][0].sentence.starts_with("serial ZL2ABC is also sdb's"));
        // Two namespaces of one NVMe controller share it by right; the
        // same namespace ID twice is still two drives of one serial.
        (a.nsid, b.nsid) = (Some(1), Some(2));
        assert!(judge(&[&a, &b], RULES).iter().all(Vec::is_empty));
        b.nsid = Some(1);
        assert_eq!(concerns(&judge(&[&a, &b], RULES)[0]), [Code::SerialDuplicated]);
        // Drives behind a volume in two pairs of one serial each: both
        // said (a tie named neither).
        let member = |serial: &str| crate::inspect::declared::Member {
            asked: "-d megaraid,0 /dev/bus/0".into(),
            model: None,
            serial: Some(serial.into()),
            power_on_hours: None,
            passed: Some(true),
            not_read: None,
        };
        let controller = crate::device::raid::Controller {
            driver: None,
            family: "Broadcom MegaRAID".into(),
            passthrough: "megaraid".into(),
        };
        let members = ["A", "A", "B", "B"].map(member).to_vec();
        let mut volume = disk("PERC H730P", "1", 0);
        volume.raid = Some(crate::inspect::declared::Raid { controller, members });
        let said = concerns(&judge(&[&volume], RULES)[0]);
        let shared = said.iter().filter(|c| **c == Code::SerialDuplicated).count();
        assert_eq!(shared, 2, "{said:?}");
    }

    #[test]
    fn a_new_drive_is_clean_and_one_without_smart_is_not_known() {
        let d = disk("M", "1", 8);
        let f = judge(&[&d], RULES);
        assert!(f[0].is_empty());
        assert_eq!(verdict(&d, &f[0]), InspectVerdict::Clean);
        let loop_dev = Declared { smart: false, ..Declared::default() };
        assert_eq!(verdict(&loop_dev, &[]), InspectVerdict::NotKnown);
    }

    #[test]
    fn a_locked_drive_is_told_to_be_unlocked_not_returned() {
        let mut d = disk("M", "1", 0);
        d.security = Some(Security {
            enabled: true,
            locked: true,
            frozen: None,
            attempts_exceeded: false,
            words: "ENABLED, PW level HIGH, **LOCKED** [SEC4]".into(),
        });
        let f = judge(&[&d], RULES);
        assert_eq!(concerns(&f[0]), [Code::Locked]);
        assert!(f[0][0].sentence.contains("unlock it before testing"));
        assert!(f[0][0].sentence.contains("no fault of its media"));
        assert_eq!(verdict(&d, &f[0]), InspectVerdict::ActOn);
    }

    #[test]
    fn firmware_capacity_and_format_are_judged_against_peers_that_agree() {
        let a = disk("WD140EDFZ", "81.00A81", 5);
        let mut b = disk("WD140EDFZ", "83.00A83", 5);
        b.logical_block = 4096;
        let c = disk("WD140EDFZ", "81.00A81", 5);
        let mut d = disk("WD140EDFZ", "81.00A81", 5);
        d.size_bytes -= 1_000_000;
        d.kernel_bytes = d.size_bytes;
        let f = judge(&[&a, &b, &c, &d], RULES);
        assert!(f[0].is_empty() && f[2].is_empty(), "{f:?}");
        assert_eq!(concerns(&f[1]), [Code::FirmwareDiffers, Code::SectorFormatDiffers]);
        assert_eq!(f[1][0].sentence, "firmware 83.00A83 differs from its 3 peers' 81.00A81");
        assert_eq!(f[1][1].sentence, "4Kn sectors among 3 512e disks");
        assert_eq!(concerns(&f[3]), [Code::CapacityDiffers]);
        // Two disks that differ from each other: neither is the odd one.
        let f = judge(&[&a, &b], RULES);
        assert!(f.iter().all(|f| f.is_empty()), "{f:?}");
    }

    #[test]
    fn zones_and_trim_on_a_spinning_disk_are_notes() {
        let mut d = disk("M", "1", 0);
        d.trim = Some(true);
        d.rotation_rpm = Some(5400);
        let f = judge(&[&d], RULES);
        assert_eq!(concerns(&f[0]), [Code::TrimOnSpinningDisk]);
        assert_eq!(verdict(&d, &f[0]), InspectVerdict::Clean);
        d.zoned = Some("host_aware".into());
        assert_eq!(concerns(&judge(&[&d], RULES)[0]), [Code::Zoned]);
        // A zoned NVMe namespace is flash: not called SMR.
        let zns =
            Declared { name: "nvme2n1".into(), zoned: Some("host_managed".into()), ..d.clone() };
        let said = &judge(&[&zns], RULES)[0][0].sentence;
        assert!(
            said.starts_with("zoned (host_managed): a zoned namespace (NVMe ZNS)")
                && !said.contains("SMR"),
            "{said}"
        );
    }

    #[test]
    fn counts_are_grouped() {
        assert_eq!(grouped(31383), "31,383");
        assert_eq!(grouped(12), "12");
        assert_eq!(grouped(1_000_000), "1,000,000");
    }
}

//! One plain sentence per disk that needs action: the evidence from every
//! pass, and what to do about it. "Return it" is said only for evidence a
//! slot or cable cannot explain (unreadable sectors, stalled reads, slow
//! regions); a disk that is merely slower is to be moved and re-checked
//! first, because a slow port looks the same.

use serde::{Deserialize, Serialize};

use super::disk::{Facts, Judged, slow_time, stall, tail_factor};
use super::peers::{PathFinding, lost_alone};
use super::{Thresholds, Verdict};
use crate::finding::{Code, Finding};
use crate::measure::PassKind;
use crate::units::human_bytes;

/// What to do with a disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Media evidence: return or replace the disk.
    Return,
    /// Slower than its peers: move it to another slot and check again; if
    /// the slowness follows the disk, return it.
    Recheck,
    /// Slow only together with the others, or gone: check the path (slot,
    /// cable, expander port, power).
    CheckPath,
}

impl Action {
    /// As the JSON names it (`return`, `recheck`, `check_path`).
    pub fn word(self) -> &'static str {
        match self {
            Action::Return => "return",
            Action::Recheck => "recheck",
            Action::CheckPath => "check_path",
        }
    }
}

/// The verdict on one disk, over all passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskAdvice {
    /// The disk's path as given.
    pub path: String,
    /// What to do.
    pub action: Action,
    /// The evidence and the action in one sentence.
    pub sentence: String,
    /// Each finding the sentence says, by its code (none in a result
    /// written before findings had codes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

/// Evidence about one disk gathered over the passes.
#[derive(Default)]
struct Evidence {
    bad_ranges: u64,
    /// Failed reads, counted where none was narrowed to its sectors (the
    /// area failed wholesale, or time ran out before it was probed).
    failed_reads: u64,
    first_bad: Option<u64>,
    gone: bool,
    hung: bool,
    slow_reads: u64,
    stall_ms: Option<f64>,
    regions: usize,
    first_region: Option<u64>,
    tail_x: Option<f64>,
    pct_of_peers: Option<f64>,
    pct_of_serial: Option<f64>,
    seek_pct: Option<f64>,
    time_pct: Option<f64>,
}

/// The larger of two optional numbers.
fn larger(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => a.or(b),
    }
}

impl Evidence {
    /// `finding`: what the parallel pass said about the shared path.
    fn add(&mut self, seen: &Seen, th: &Thresholds, finding: Option<PathFinding>) {
        let (kind, f, d) = (seen.kind, &seen.facts, seen.judged);
        let path_limited =
            kind == PassKind::Parallel && finding.is_some_and(|f| f.shared_bottleneck);
        self.bad_ranges = self.bad_ranges.max(f.bad_ranges);
        self.failed_reads = self.failed_reads.max(f.read_errors);
        if let Some(e) = f.errors.first() {
            self.first_bad = Some(self.first_bad.map_or(e.offset, |f| f.min(e.offset)));
        }
        self.gone |= f.device_gone;
        self.hung |= f.stopped == Some(crate::measure::Stopped::Hung);
        self.slow_reads = self.slow_reads.max(f.slow_read_count);
        self.stall_ms = larger(self.stall_ms, stall(f, th).map(|s| s.had_disk_ms()));
        if d.slow_regions.len() > self.regions {
            self.regions = d.slow_regions.len();
            self.first_region = d.slow_regions.first().map(|r| r.start_byte);
        }
        if d.verdict != Verdict::Slow {
            return;
        }
        // The relative numbers count only where they made the disk slow.
        let low = |p: Option<f64>| p.filter(|p| *p < th.slow_pct);
        match kind {
            PassKind::Seek => self.seek_pct = self.seek_pct.or(low(d.seek_pct_of_peers)),
            _ => {
                self.pct_of_peers = self.pct_of_peers.or(low(d.pct_of_peers));
                if kind == PassKind::Parallel {
                    let array_kept = finding.map(|f| f.median_pct_of_serial);
                    self.pct_of_serial = d.pct_of_serial.filter(|p| lost_alone(*p, array_kept, th));
                }
                let slow = d.time_pct_of_peers.filter(|t| slow_time(*t, th));
                self.time_pct = larger(self.time_pct, slow);
            }
        }
        self.tail_x = larger(
            self.tail_x,
            tail_factor((f.p9999_us, f.second_slowest_us), d.p9999_pct_of_peers, path_limited),
        );
    }

    /// Each finding of the evidence, by its code and in words, in the
    /// order the sentence says them.
    fn said(&self) -> Vec<(Finding, String)> {
        let mut said: Vec<(Finding, String)> = Vec::new();
        let first = |at: Option<u64>| {
            at.map(|o| format!(" (first at byte {o}, {})", human_bytes(o))).unwrap_or_default()
        };
        if self.bad_ranges > 0 {
            let f = Finding::counting(Code::UnreadableRanges, self.bad_ranges);
            said.push((
                f,
                format!("{} unreadable range(s){}", self.bad_ranges, first(self.first_bad)),
            ));
        } else if self.failed_reads > 0 {
            let n = self.failed_reads;
            let words = format!(
                "{n} failed read(s){}, none narrowed to its sectors",
                first(self.first_bad)
            );
            said.push((Finding::counting(Code::FailedReads, n), words));
        }
        // How many reads were slow, and where the surface was, is timing:
        // it moves with every re-check, so it is in the words, not the finding.
        if self.slow_reads > 0 {
            let f = Finding::of(Code::SlowReads);
            said.push((f, format!("{} slow read(s)", self.slow_reads)));
        }
        if let Some(ms) = self.stall_ms {
            said.push((Finding::of(Code::Stalled), format!("a read stalled {ms:.0} ms")));
        }
        if self.regions > 0 {
            let at = self
                .first_region
                .map(|o| format!(" (first at {})", human_bytes(o)))
                .unwrap_or_default();
            let f = Finding::of(Code::SlowRegions);
            said.push((f, format!("{} slow region(s){at}", self.regions)));
        }
        said.extend(self.moving());
        said
    }

    /// The findings whose figures every re-measurement moves: the figure
    /// in the words, not in the finding.
    fn moving(&self) -> Vec<(Finding, String)> {
        let moving = [
            (
                Code::LatencyTail,
                self.tail_x.map(|x| format!("read latency tail {x:.1}x its peers'")),
            ),
            (
                Code::SlowerThanPeers,
                self.pct_of_peers.map(|p| format!("{p:.0}% of its peers' speed")),
            ),
            (
                Code::SlowerReadingWhole,
                self.time_pct.map(|t| format!("took {t:.0}% of its peers' time to read whole")),
            ),
            (
                Code::LostSpeedTogether,
                self.pct_of_serial.map(|p| format!("{p:.0}% of its own speed when all disks read")),
            ),
            (
                Code::SlowUnderSeek,
                self.seek_pct.map(|p| format!("under seek stress {p:.0}% of what its peers keep")),
            ),
        ];
        moving.into_iter().filter_map(|(c, words)| Some((Finding::of(c), words?))).collect()
    }

    /// What to do, the evidence and the action in one sentence, and each
    /// finding by its code.
    fn sentence(&self) -> (Action, String, Vec<Finding>) {
        let mut said = self.said();
        let media = self.bad_ranges > 0
            || self.failed_reads > 0
            || self.stall_ms.is_some()
            || self.regions > 0
            || self.tail_x.is_some();
        // The path's own finding where only being slow together is left.
        let together = Some(Finding::of(Code::SlowOnlyTogether));
        let (action, what, path) = if self.gone {
            let words = "the device went away during the check".to_string();
            said.insert(0, (Finding::of(Code::DeviceGone), words));
            (Action::CheckPath, "check its cable, slot and power, then check it again", None)
        } else if self.hung {
            let words =
                "it stopped answering during the check (a read got no answer within --io-timeout)";
            said.insert(0, (Finding::of(Code::Hung), words.into()));
            let what = "check its cable, slot and power, then check it again; if it hangs again, return it";
            (Action::CheckPath, what, None)
        } else if media {
            (Action::Return, "return it", None)
        } else if self.pct_of_peers.is_some() || self.seek_pct.is_some() || self.time_pct.is_some()
        {
            let what = "move it to another slot and check again; if it stays slow, return it";
            (Action::Recheck, what, None)
        } else {
            let what = "slow only alongside the others: check its slot, cable and expander port";
            (Action::CheckPath, what, together)
        };
        let (mut findings, mut words): (Vec<Finding>, Vec<String>) = said.into_iter().unzip();
        findings.extend(path);
        if words.is_empty() {
            words.push("flagged".into());
        }
        (action, format!("{}, {what}", words.join(", ")), findings)
    }
}

/// One disk in one pass, as the advice reads it.
pub struct Seen<'a> {
    /// The disk's path as given.
    pub path: &'a str,
    /// The pass.
    pub kind: PassKind,
    /// Its numbers, and what the judge made of them.
    pub facts: Facts<'a>,
    pub judged: &'a Judged,
}

/// A sentence for every disk that is slow or failed reads in any pass, in
/// the order the disks were first seen.
/// `finding`: what the parallel pass said about the shared path.
pub fn advise(seen: &[Seen], th: &Thresholds, finding: Option<PathFinding>) -> Vec<DiskAdvice> {
    let mut paths: Vec<&str> = Vec::new();
    for s in seen {
        if s.judged.verdict.is_fault() && !paths.contains(&s.path) {
            paths.push(s.path);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let mut e = Evidence::default();
            for s in seen.iter().filter(|s| s.path == path) {
                e.add(s, th, finding);
            }
            let (action, sentence, findings) = e.sentence();
            let sentence = format!("{path}: {sentence}");
            DiskAdvice { path: path.to_string(), action, sentence, findings }
        })
        .collect()
}

/// Names each disk's bay in its sentence where the kernel knows its
/// enclosure slot (`devices` by the path given): "/dev/sde (enclosure
/// 0:0:12:0 slot 4): …".
pub fn name_bays(advice: &mut [DiskAdvice], devices: &[crate::device::BlockDevice]) {
    let bay = |path: &str| {
        let d = devices.iter().find(|d| d.given == path)?;
        d.identity.topology.enclosure_slot.clone()
    };
    for a in advice {
        let Some(b) = bay(&a.path) else { continue };
        if let Some(rest) = a.sentence.strip_prefix(&format!("{}: ", a.path)) {
            a.sentence = format!("{} (enclosure {b}): {rest}", a.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{ReadError, SlowRead};

    fn slow(pct: f64) -> Judged {
        Judged { verdict: Verdict::Slow, pct_of_peers: Some(pct), ..Judged::default() }
    }

    #[test]
    fn action_table() {
        let th = Thresholds::default();
        let err = [ReadError {
            offset: 1 << 30,
            len: 4096,
            errno: Some(5),
            message: "Input/output error".into(),
            exact: true,
        }];
        let wholesale = [ReadError {
            offset: 0,
            len: 8 << 20,
            errno: Some(5),
            message: "Input/output error".into(),
            exact: false,
        }];
        let stalled =
            [SlowRead { offset: 0, len: 4096, latency_ms: 3000.0, service_ms: None, index: 7 }];
        let failed = Judged { verdict: Verdict::Error, ..Judged::default() };
        let lost =
            Judged { verdict: Verdict::Slow, pct_of_serial: Some(60.0), ..Judged::default() };
        /// What, the disk in each pass → action, sentence and the codes of
        /// its findings.
        type Case<'a> = (&'a str, Vec<(PassKind, Facts<'a>, Judged)>, Action, &'a str, &'a [Code]);
        let cases: Vec<Case> = vec![
            (
                "unreadable sectors",
                vec![(
                    PassKind::Serial,
                    Facts { bad_ranges: 2, errors: &err, ..Facts::default() },
                    failed.clone(),
                )],
                Action::Return,
                "2 unreadable range(s) (first at byte 1073741824, 1.07 GB), return it",
                &[Code::UnreadableRanges],
            ),
            (
                "reads that failed wholesale, none narrowed",
                vec![
                    (
                        PassKind::Serial,
                        Facts { read_errors: 3, errors: &wholesale, ..Facts::default() },
                        failed.clone(),
                    ),
                    (PassKind::Parallel, Facts::default(), lost.clone()),
                ],
                Action::Return,
                "3 failed read(s) (first at byte 0, 0 B), none narrowed to its sectors, \
                 60% of its own speed when all disks read, return it",
                &[Code::FailedReads, Code::LostSpeedTogether],
            ),
            (
                "a stall",
                vec![(
                    PassKind::Serial,
                    Facts { slow_reads: &stalled, slow_read_count: 1, ..Facts::default() },
                    slow(100.0),
                )],
                Action::Return,
                "1 slow read(s), a read stalled 3000 ms, return it",
                &[Code::SlowReads, Code::Stalled],
            ),
            (
                "only slower, in two passes",
                vec![
                    (PassKind::Serial, Facts::default(), slow(80.0)),
                    (PassKind::Parallel, Facts::default(), slow(85.0)),
                ],
                Action::Recheck,
                "80% of its peers' speed, move it to another slot and check again; if it stays slow, return it",
                &[Code::SlowerThanPeers],
            ),
            (
                "gone",
                vec![(
                    PassKind::Parallel,
                    Facts { device_gone: true, ..Facts::default() },
                    failed.clone(),
                )],
                Action::CheckPath,
                "the device went away during the check, check its cable, slot and power, then check it again",
                &[Code::DeviceGone],
            ),
            (
                "slow only against its own serial speed",
                vec![(PassKind::Parallel, Facts::default(), lost)],
                Action::CheckPath,
                "60% of its own speed when all disks read, slow only alongside the others",
                &[Code::LostSpeedTogether, Code::SlowOnlyTogether],
            ),
        ];
        for (what, passes, action, sentence, codes) in cases {
            let seen: Vec<Seen> = passes
                .iter()
                .map(|(kind, facts, judged)| Seen {
                    path: "/dev/x",
                    kind: *kind,
                    facts: facts.clone(),
                    judged,
                })
                .collect();
            // The array's median disk kept its speed in the parallel pass.
            let kept = PathFinding {
                shared_bottleneck: false,
                median_pct_of_serial: 100.0,
                aggregate_pct_of_serial: 100.0,
                serial_mb_per_s: 400.0,
                parallel_mb_per_s: 400.0,
            };
            let got = advise(&seen, &th, Some(kept));
            assert_eq!(got.len(), 1, "{what}");
            assert_eq!(got[0].action, action, "{what}: {}", got[0].sentence);
            assert!(
                got[0].sentence.starts_with(&format!("/dev/x: {sentence}")),
                "{what}: {}",
                got[0].sentence
            );
            let got: Vec<Code> = got[0].findings.iter().map(|f| f.code).collect();
            assert_eq!(got, codes, "{what}");
        }
        // An ok or fast disk gets no advice.
        let fine = Judged::default();
        let seen = [Seen {
            path: "/dev/y",
            kind: PassKind::Serial,
            facts: Facts::default(),
            judged: &fine,
        }];
        assert!(advise(&seen, &th, None).is_empty());
    }
}

/// A link on a disk's path that runs below what both ends allow, as the
/// judge reads it: its kind (`SATA`, `SAS`, `PCIe`), and its rate now and
/// at most, in the kernel's words.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowLink {
    pub kind: String,
    pub at: String,
    pub current: String,
    pub max: String,
}

/// Adds what degraded links say to a disk's advice: a link alone is a
/// finding of its own (check_path: reseat, cable, slot); with a slow disk
/// the link is named as the likely cause (check_path instead of moving or
/// returning a disk that may be fine); with media evidence the disk is
/// still returned, and the link named too.
pub fn with_links(
    path: &str,
    links: &[SlowLink],
    advice: Option<DiskAdvice>,
) -> Option<DiskAdvice> {
    if links.is_empty() {
        return advice;
    }
    let said = |l: &SlowLink| {
        format!("its {} link ({}) runs at {} where {} is possible", l.kind, l.at, l.current, l.max)
    };
    let said = links.iter().map(said).collect::<Vec<_>>().join("; ");
    // A drive on its own PCIe link (NVMe) is reseated or moved; a SATA or
    // SAS disk's link is a cable, backplane or slot.
    let pcie = links.iter().any(|l| l.kind == "PCIe");
    let fix = if pcie {
        "reseat the drive or move it to another slot"
    } else {
        "replace the cable or move the slot"
    };
    let mut a = match advice {
        Some(a) if a.action == Action::Return => DiskAdvice {
            sentence: format!(
                "{}; also, {said}: reseat or recable it",
                a.sentence.trim_end_matches('.')
            ),
            ..a
        },
        Some(a) => DiskAdvice {
            action: Action::CheckPath,
            sentence: format!(
                "{}; but {said}: the link is the likely cause, {fix}, then check again",
                a.sentence.trim_end_matches('.')
            ),
            ..a
        },
        None => DiskAdvice {
            path: path.into(),
            action: Action::CheckPath,
            sentence: if pcie {
                format!("{path}: {said}: {fix} (check the slot's width and generation)")
            } else {
                format!("{path}: {said}: {fix}")
            },
            findings: Vec::new(),
        },
    };
    a.findings.push(Finding::of(Code::LinkDegraded));
    Some(a)
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn each_action_is_named_as_the_json_names_it() {
        for a in [Action::Return, Action::Recheck, Action::CheckPath] {
            assert_eq!(serde_json::to_value(a).unwrap(), a.word());
        }
    }

    #[test]
    fn a_degraded_link_is_a_finding_and_the_likely_cause_of_a_slow_disk() {
        let sata = SlowLink {
            kind: "SATA".into(),
            at: "link3".into(),
            current: "3.0 Gbps".into(),
            max: "6.0 Gbps".into(),
        };
        let alone = with_links("/dev/sdf", std::slice::from_ref(&sata), None).unwrap();
        assert_eq!(alone.action, Action::CheckPath);
        assert_eq!(
            alone.sentence,
            "/dev/sdf: its SATA link (link3) runs at 3.0 Gbps where 6.0 Gbps is possible: replace the cable or move the slot"
        );
        let nvme = SlowLink {
            kind: "PCIe".into(),
            at: "0000:3d:00.0".into(),
            current: "8.0 GT/s PCIe x2".into(),
            max: "8.0 GT/s PCIe x4".into(),
        };
        let slow_nvme = DiskAdvice {
            path: "/dev/nvme0n1".into(),
            action: Action::Recheck,
            sentence: "/dev/nvme0n1: slow in the serial pass (50% of its peers' median speed), move it to another slot".into(),
            findings: Vec::new(),
        };
        assert!(
            with_links("/dev/nvme0n1", std::slice::from_ref(&nvme), Some(slow_nvme))
                .unwrap()
                .sentence
                .ends_with("the link is the likely cause, reseat the drive or move it to another slot, then check again")
        );
        assert_eq!(
            with_links("/dev/nvme0n1", &[nvme], None).unwrap().sentence,
            "/dev/nvme0n1: its PCIe link (0000:3d:00.0) runs at 8.0 GT/s PCIe x2 where 8.0 GT/s PCIe x4 is possible: reseat the drive or move it to another slot (check the slot's width and generation)"
        );
        let slow = DiskAdvice {
            path: "/dev/sdf".into(),
            action: Action::Recheck,
            sentence: "/dev/sdf: slow in the serial pass (61% of its peers' median speed), move it to another slot".into(),
            findings: Vec::new(),
        };
        let both = with_links("/dev/sdf", std::slice::from_ref(&sata), Some(slow)).unwrap();
        assert_eq!(both.action, Action::CheckPath);
        assert!(both.sentence.contains("the link is the likely cause"), "{}", both.sentence);
        let bad = DiskAdvice { action: Action::Return, ..both.clone() };
        assert_eq!(with_links("/dev/sdf", &[sata], Some(bad)).unwrap().action, Action::Return);
        assert_eq!(with_links("/dev/sdf", &[], None), None);
    }
}

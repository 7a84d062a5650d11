//! What the kernel saw of each disk (`device::kernel`), in its verdict.
//!
//! | the kernel saw | and the reads | action |
//! |---|---|---|
//! | resets, link down, timeouts (lines or `iotmo_cnt`), aborts, failed commands, offline | read well | check the path (its port, the speed its link came back at; cable, backplane, HBA), never "return it" on that alone |
//! | the same | found media errors | return it as the reads say; the kernel's evidence added |
//! | I/O errors at sectors | found errors there | the same ranges, said once |
//! | I/O errors the reads did not see | read well | named as such: retried and recovered, or another process's I/O: read those sectors again |
//! | PCIe AER correctable errors rising on its controller or the port above | | the PCIe path (slot, riser, cable) |
//! | path trouble on two or more disks behind one controller | | that controller's path, named once |
//!
//! A log that could not be read is said ("kernel log not read (why)"),
//! never taken for a quiet one. It must not read the log.

use super::advice::{Action, DiskAdvice};
use crate::device::kernel::{Kind, Seen};
use crate::finding::{Code, Finding};

/// One disk as the kernel saw it, beside what its reads found.
pub struct Disk<'a> {
    pub path: &'a str,
    pub seen: &'a Seen,
    /// The byte ranges its reads found unreadable.
    pub errors: Vec<(u64, u64)>,
    /// Its controller's PCI address and driver, in words.
    pub controller: Option<String>,
    /// Its ATA port (`ata3`), where it has one.
    pub port: Option<String>,
}

/// The kernel's path evidence of one disk in words (`the kernel reset
/// its link 3 times, timed out 2 commands`), None where it has none.
fn path_words(d: &Disk) -> Option<String> {
    let s = d.seen;
    // None, or the run's own power or spin cycles: not a path's fault.
    if s.path_events() == 0 {
        return None;
    }
    let timeouts = s.timeouts();
    let said: Vec<String> = [
        (s.count(Kind::Reset), "reset it or its link"),
        (s.count(Kind::LinkDown), "saw its link go down"),
        (timeouts, "timed out a command of it"),
        (s.count(Kind::Abort), "aborted a command of it"),
        (s.count(Kind::FailedCommand), "failed a command of it"),
        (s.count(Kind::Offline), "took it offline"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| if n == 1 { what.to_string() } else { format!("{what} ({n} times)") })
    .collect();
    let mut words = format!("the kernel {}", said.join(", "));
    if let Some(speed) = &s.link_up_at {
        words += &format!("; its link came back at {speed}");
    }
    Some(words)
}

/// Where to look for a path's fault, for disk `d`.
fn where_to_look(d: &Disk) -> String {
    let port = d.port.as_ref().map(|p| format!("port {p}, ")).unwrap_or_default();
    let hba = d.controller.as_ref().map(|c| format!(", {c}")).unwrap_or_default();
    format!("{port}its cable, backplane slot and power{hba}")
}

/// How far before a bad range the request that failed on it may begin:
/// the kernel's I/O error line names the failed request's first sector
/// (a 4 MiB read's, or a split of it), not the bad one.
pub const REQUEST_REACH: u64 = 16 << 20;

/// Whether the request failed at sector `s` (512-byte units) may be one
/// over a range of `ranges` (bytes): it begins inside one, or at most
/// [`REQUEST_REACH`] before one.
fn within(s: u64, ranges: &[(u64, u64)]) -> bool {
    let b = s * 512;
    ranges.iter().any(|(o, l)| b < o + l && b + REQUEST_REACH > *o)
}

/// The PCIe path's correctable errors that rose, in words.
fn aer_words(s: &Seen) -> Option<String> {
    let rose: Vec<String> = (s.counters.iter())
        .filter(|c| c.name.starts_with("aer ") && c.rose() > 0)
        .map(|c| format!("{} +{}", c.name, c.rose()))
        .collect();
    (!rose.is_empty()).then(|| rose.join(", "))
}

/// One disk's finding from the kernel's evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub path: String,
    pub action: Action,
    pub sentence: String,
    /// Its reads found no unreadable range: a stall of its reads is the
    /// kernel waiting on a command it then timed out or reset.
    pub no_bad_range: bool,
    /// The disk and what the kernel saw, short, for the run's verdict
    /// (`/dev/sdb reset or timed out by the kernel`).
    pub named: String,
    /// What it found, by code.
    pub findings: Vec<Finding>,
}

/// One disk's finding from the kernel's evidence, if any: its path (resets,
/// timeouts, aborts), its I/O errors against the ranges its reads found,
/// PCIe errors on its controller's path.
fn one(d: &Disk) -> Option<Found> {
    let (mut said, mut findings) = (Vec::new(), Vec::new());
    let mut action = None;
    let path = path_words(d);
    if let Some(words) = &path {
        said.push(words.clone());
        findings.push(Finding::of(Code::KernelPath));
        action = Some(Action::CheckPath);
    }
    let io = d.seen.count(Kind::IoError);
    if io > 0 {
        findings.push(Finding::of(Code::KernelErrors));
        let sectors = &d.seen.sectors;
        if !d.errors.is_empty() && sectors.iter().all(|s| within(*s, &d.errors)) {
            said.push(format!(
                "its {io} I/O error line(s) name requests over the ranges the reads found"
            ));
        } else if d.errors.is_empty() {
            let at = sectors.iter().take(5).map(u64::to_string).collect::<Vec<_>>().join(", ");
            said.push(format!(
                "the kernel logged {io} I/O error(s) on it (sector {at}) that its reads did not see: retried and recovered, or another process's I/O; read them again (check --full)"
            ));
            action = action.or(Some(Action::Recheck));
        } else {
            said.push(format!(
                "the kernel logged {io} I/O error(s) on it, some outside the ranges the reads found"
            ));
        }
    }
    if let Some(aer) = aer_words(d.seen) {
        said.push(format!(
            "PCIe errors rose on its controller's path ({aer}): check the slot, riser and cable of the PCIe path"
        ));
        findings.push(Finding::of(Code::PcieErrors));
        action = Some(Action::CheckPath);
    }
    let action = action?;
    let what = if path.is_some() {
        "reset or timed out by the kernel"
    } else if action == Action::CheckPath {
        "with PCIe errors rising on its path"
    } else {
        "with kernel I/O errors its reads did not see"
    };
    let fix = if action == Action::CheckPath {
        format!(": check the path ({}), not the disk on that alone", where_to_look(d))
    } else {
        String::new()
    };
    Some(Found {
        path: d.path.to_string(),
        action,
        sentence: format!("{}{fix}", said.join("; ")),
        no_bad_range: d.errors.is_empty(),
        named: format!("{} {what} (see Disks to act on)", d.path),
        findings,
    })
}

/// Each disk's finding from the kernel's evidence, and the sentences
/// about the run (an unread log, one controller behind several disks'
/// trouble).
pub fn judge(disks: &[Disk]) -> (Vec<Found>, Vec<String>) {
    let mut found = Vec::new();
    let mut run = Vec::new();
    if let Some(why) = disks.iter().find_map(|d| d.seen.not_read.clone()) {
        return (found, vec![why]);
    }
    found.extend(disks.iter().filter_map(one));
    // The ring wrapped before it was read (one log, counted alike on
    // every disk): said of the run, a quiet disk's too.
    if let Some(lost) = disks.iter().map(|d| d.seen.lost).max().filter(|n| *n > 0) {
        run.push(format!(
            "the kernel's log wrapped {lost} time(s) before it was read: some of its lines are missing, and a disk it says nothing of may have had some"
        ));
    }
    // Path trouble on two or more disks behind one controller: its path.
    let mut by: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for d in disks.iter().filter(|d| path_words(d).is_some()) {
        if let Some(c) = &d.controller {
            by.entry(c.as_str()).or_default().push(d.path);
        }
    }
    for (c, paths) in by.into_iter().filter(|(_, p)| p.len() > 1) {
        run.push(format!(
            "KERNEL: {} disks behind {c} were reset or timed out ({}): that controller's path (the HBA, its cables, expander and power) before any one disk",
            paths.len(),
            paths.join(", ")
        ));
    }
    (found, run)
}

/// The kernel's findings merged into `advice`: a disk returned for
/// unreadable ranges keeps that, the kernel's evidence added; one
/// returned for stalls or slow stretches alone, while the kernel timed
/// out or reset its commands, is a path to check first (the kernel's
/// wait is the stall); any other disk takes the kernel's action. Each
/// finding's disk named for the run's verdict (each one is to act on).
pub fn advise(found: Vec<Found>, advice: &mut Vec<DiskAdvice>) -> Vec<String> {
    let mut named = Vec::new();
    for Found { path: p, action, sentence, no_bad_range, named: words, findings } in found {
        named.push(words);
        let Some(i) = advice.iter().position(|a| a.path == p) else {
            let sentence = format!("{p}: {sentence}");
            advice.push(DiskAdvice { path: p, action, sentence, findings });
            continue;
        };
        let a = &mut advice[i];
        a.findings.extend(findings);
        if a.action == Action::Return && no_bad_range && action == Action::CheckPath {
            a.action = Action::CheckPath;
            let before = a.sentence.trim_end_matches('.');
            let before = before.strip_suffix(", return it").unwrap_or(before);
            let before = before.strip_suffix(": return it").unwrap_or(before);
            a.sentence = format!(
                "{before}; but {sentence}, and the kernel's wait on those commands is what a stall of its reads shows: return it only if the stall follows it to another port"
            );
        } else {
            a.sentence = format!("{}; {sentence}", a.sentence);
            // Media evidence stays a return; else the path comes first.
            if a.action != Action::Return && action == Action::CheckPath {
                a.action = action;
            }
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::kernel::Counter;

    fn seen(kinds: &[(Kind, u64)]) -> Seen {
        Seen { counts: kinds.iter().copied().collect(), ..Seen::default() }
    }

    fn disk<'a>(path: &'a str, seen: &'a Seen, errors: Vec<(u64, u64)>) -> Disk<'a> {
        Disk { path, seen, errors, controller: Some("0000:03:00.0 mpt3sas".into()), port: None }
    }

    #[test]
    fn a_disk_that_read_well_while_its_link_was_reset_is_a_path_to_check() {
        let mut reset = seen(&[(Kind::Reset, 3), (Kind::LinkUp, 3)]);
        reset.link_up_at = Some("1.5 Gbps".into());
        let quiet = Seen::default();
        let (found, run) = judge(&[
            Disk { port: Some("ata3".into()), ..disk("/dev/sdb", &reset, vec![]) },
            disk("/dev/sdc", &quiet, vec![]),
        ]);
        assert!(run.is_empty());
        assert_eq!(found.len(), 1, "{found:?}");
        let Found { path, action, sentence, .. } = &found[0];
        assert_eq!((path.as_str(), *action), ("/dev/sdb", Action::CheckPath));
        assert!(
            sentence.starts_with("the kernel reset it or its link (3 times); its link came back at 1.5 Gbps: check the path (port ata3, "),
            "{sentence}"
        );
        assert!(sentence.ends_with("not the disk on that alone"), "{sentence}");
        let mut advice = Vec::new();
        assert_eq!(
            advise(found, &mut advice),
            ["/dev/sdb reset or timed out by the kernel (see Disks to act on)"]
        );
        assert_eq!(advice[0].action, Action::CheckPath);
        assert!(!advice[0].sentence.contains("return"), "{}", advice[0].sentence);
    }

    #[test]
    fn timeouts_counted_by_the_kernel_are_a_path_even_without_a_line() {
        let mut s = Seen::default();
        s.counters.push(Counter { name: "iotmo_cnt".into(), before: 0, after: 2 });
        let (found, _) = judge(&[disk("/dev/sdb", &s, vec![])]);
        assert!(
            found[0].sentence.starts_with("the kernel timed out a command of it (2 times)"),
            "{found:?}"
        );
    }

    #[test]
    fn media_errors_stay_a_return_and_the_kernels_lines_at_the_same_ranges_are_said_once() {
        let mut s = seen(&[(Kind::IoError, 2)]);
        s.sectors = vec![100_000, 100_008];
        let (found, _) = judge(&[disk("/dev/sdb", &s, vec![(100_000 * 512, 8192)])]);
        // No path trouble: nothing to change, the line says it agrees.
        assert_eq!(found.len(), 0, "{found:?}");
        // As the lab's kernel said it: a 4 MiB read's first sector (49152)
        // and its 64 KiB piece's (49920) for bad blocks 50000..50008.
        let lab = vec![(50_000 * 512, 8 * 512)];
        assert!(within(49_152, &lab) && within(49_920, &lab) && within(50_007, &lab));
        assert!(!within(50_008, &lab) && !within(1_000, &lab));
        let both = seen(&[(Kind::IoError, 2), (Kind::Timeout, 1)]);
        let (found, _) = judge(&[disk("/dev/sdb", &both, vec![(0, 1 << 20)])]);
        let mut advice = vec![DiskAdvice {
            path: "/dev/sdb".into(),
            action: Action::Return,
            sentence: "/dev/sdb: 1 unreadable range: return it".into(),
            findings: Vec::new(),
        }];
        advise(found, &mut advice);
        assert_eq!(advice[0].action, Action::Return);
        assert!(
            advice[0].sentence.contains("return it; the kernel timed out"),
            "{}",
            advice[0].sentence
        );
    }

    #[test]
    fn a_stall_while_the_kernel_timed_out_the_disks_commands_is_a_path_to_check_first() {
        let t = seen(&[(Kind::Timeout, 1), (Kind::Reset, 1)]);
        let (found, _) = judge(&[disk("/dev/sdb", &t, vec![])]);
        let mut advice = vec![DiskAdvice {
            path: "/dev/sdb".into(),
            action: Action::Return,
            sentence: "/dev/sdb: a read stalled 31000 ms: return it".into(),
            findings: Vec::new(),
        }];
        advise(found, &mut advice);
        assert_eq!(advice[0].action, Action::CheckPath);
        assert!(
            advice[0].sentence.contains("return it only if the stall follows it to another port"),
            "{}",
            advice[0].sentence
        );
    }

    #[test]
    fn kernel_errors_the_reads_did_not_see_are_named_so() {
        let mut s = seen(&[(Kind::IoError, 1)]);
        s.sectors = vec![4242];
        let (found, _) = judge(&[disk("/dev/sdb", &s, vec![])]);
        assert_eq!(found[0].action, Action::Recheck);
        assert!(
            found[0]
                .sentence
                .contains("(sector 4242) that its reads did not see: retried and recovered")
        );
    }

    #[test]
    fn trouble_on_several_disks_behind_one_controller_is_that_paths_and_an_unread_log_is_said() {
        let t = seen(&[(Kind::Timeout, 1)]);
        let (found, run) = judge(&[disk("/dev/sdb", &t, vec![]), disk("/dev/sdc", &t, vec![])]);
        assert_eq!(found.len(), 2);
        assert_eq!(run.len(), 1);
        assert!(run[0].starts_with("KERNEL: 2 disks behind 0000:03:00.0 mpt3sas were reset or timed out (/dev/sdb, /dev/sdc)"), "{run:?}");
        let unread =
            Seen { not_read: Some("kernel log not read (no /dev/kmsg)".into()), ..t.clone() };
        let (found, run) = judge(&[disk("/dev/sdb", &unread, vec![])]);
        assert!(found.is_empty());
        assert_eq!(run, ["kernel log not read (no /dev/kmsg)"]);
    }

    #[test]
    fn a_log_that_wrapped_before_it_was_read_is_said_of_the_run_though_every_disk_is_quiet() {
        let wrapped = Seen { lost: 2, ..Seen::default() };
        let (found, run) = judge(&[disk("/dev/sdb", &wrapped, vec![])]);
        assert!(found.is_empty());
        assert_eq!(run.len(), 1, "{run:?}");
        assert!(
            run[0].starts_with("the kernel's log wrapped 2 time(s) before it was read"),
            "{run:?}"
        );
    }

    #[test]
    fn resets_the_run_made_itself_by_cutting_the_power_are_no_path_to_check() {
        let mut cut = seen(&[(Kind::Reset, 3), (Kind::LinkDown, 3), (Kind::Offline, 1)]);
        cut.planned = Some("the verify cut its slot's power 3 times (--power-cycle)".into());
        let (found, run) = judge(&[disk("/dev/sdb", &cut, vec![])]);
        assert!(found.is_empty() && run.is_empty(), "{found:?} {run:?}");
        // Its I/O errors the reads did not see are still said.
        cut.counts.insert(Kind::IoError, 1);
        let (found, _) = judge(&[disk("/dev/sdb", &cut, vec![])]);
        assert_eq!(found[0].action, Action::Recheck, "{found:?}");
    }

    #[test]
    fn aer_errors_rising_name_the_pcie_path() {
        let mut s = Seen::default();
        s.counters.push(Counter {
            name: "aer correctable (0000:03:00.0)".into(),
            before: 4,
            after: 9,
        });
        let (found, _) = judge(&[disk("/dev/nvme0n1", &s, vec![])]);
        assert_eq!(found[0].action, Action::CheckPath);
        assert!(found[0].sentence.contains("aer correctable (0000:03:00.0) +5"), "{found:?}");
    }
}

//! What a check's report says of itself as a run document
//! ([`crate::rundoc::RunDoc`]): its outcome, the disks to act on, the
//! links, the disks not judged or unsure, where it is cut, and the notes
//! beside the verdict.
//!
//! It must not decide anything: the report's verdicts are carried.

use super::Report;
use super::group_words::{batch_sentence, group_sentence};

impl crate::rundoc::Document for Report {
    fn document(&self) -> crate::rundoc::RunDoc {
        use crate::rundoc::{Cut, RunDoc};
        let s = &self.summary;
        let disks: Vec<String> = self.disks.iter().map(|d| d.path.clone()).collect();
        let cut = if self.header.interrupted {
            Some(Cut { interrupted: true, words: s.message.clone(), disks: disks.clone() })
        } else if !self.header.complete {
            Some(Cut {
                interrupted: false,
                words: "the file is a copy saved while the check went on: it never finished (killed, or still running)".into(),
                disks: disks.clone(),
            })
        } else {
            None
        };
        let mut unsure: Vec<crate::rundoc::Undecided> = Vec::new();
        for f in s.flagged.iter().filter(|f| f.verdict == crate::judge::Verdict::Unsure) {
            if !unsure.iter().any(|u| u.path == f.path) {
                let why = f.reasons.join("; ");
                unsure.push(crate::rundoc::Undecided { path: f.path.clone(), why });
            }
        }
        RunDoc {
            outcome: if self.header.interrupted {
                crate::outcome::Outcome::Interrupted
            } else {
                s.verdict.outcome()
            },
            to_act_on: acts(&s.disk_verdicts),
            links: link_sentences(&s.links),
            not_judged: s.not_compared.clone(),
            unsure,
            disks,
            cut,
            message: s.message.clone(),
            notes: self.notes(),
        }
    }
}

impl Report {
    /// What the run document carries beside the verdict, a disk and a
    /// sentence each: what the drives declared of themselves, the groups
    /// that lost speed together where they are not to act on (a limit
    /// shared unevenly, or not told which), and the batches below their
    /// model's rating.
    fn notes(&self) -> Vec<(String, String)> {
        use crate::judge::groups::GroupPath;
        let mut out = notes(&self.inspection);
        let groups = (self.passes.iter().flat_map(|p| &p.groups))
            .filter(|g| matches!(g.path, GroupPath::Shared | GroupPath::Either));
        for g in groups {
            let said = group_sentence(g);
            out.extend(g.disks.iter().map(|d| (d.clone(), said.clone())));
        }
        for b in &self.summary.rated_batches {
            let said = batch_sentence(b);
            out.extend(b.disks.iter().map(|d| (d.clone(), said.clone())));
        }
        out
    }
}

/// The disks to act on, from a run's per-disk advice.
pub(super) fn acts(advice: &[crate::judge::advice::DiskAdvice]) -> Vec<crate::rundoc::ActOn> {
    (advice.iter())
        .map(|a| crate::rundoc::ActOn {
            path: a.path.clone(),
            action: a.action.word().into(),
            sentence: a.sentence.clone(),
            findings: a.findings.clone(),
        })
        .collect()
}

/// The inspection's findings as notes: each disk's path and sentence.
pub(super) fn notes(inspection: &[crate::judge::inspect::Inspected]) -> Vec<(String, String)> {
    (inspection.iter())
        .flat_map(|d| d.findings.iter().map(|f| (d.path.clone(), f.sentence.clone())))
        .collect()
}

/// Links below their maximum: a sentence each, and the disks behind them.
pub(super) fn link_sentences(
    links: &[crate::judge::links::LinkFinding],
) -> Vec<(String, Vec<String>)> {
    links.iter().map(|l| (crate::judge::links::sentence(l), l.disks.clone())).collect()
}

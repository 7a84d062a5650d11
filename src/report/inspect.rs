//! The result of `arrayburn inspect`: each disk as it declared itself,
//! the probe's finding where it ran, and the verdicts `judge::inspect`
//! gave. The `///` docs on these fields are its JSON's documentation.
//!
//! It must not decide anything and must not read devices.

use serde::{Deserialize, Serialize};

use crate::header::Header;
use crate::judge::ArrayVerdict;
use crate::judge::inspect::InspectVerdict;
use crate::judge::inspect::Inspected;
use crate::outcome::Outcome;
use crate::rundoc::{ActOn, Cut, Document, RunDoc};

/// The whole result of `arrayburn inspect`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InspectReport {
    /// Tool, kind (`"inspect"`), host, machine, times, command line.
    #[serde(flatten)]
    pub header: Header,
    /// The power-on hours a new drive may have (`--new-hours`).
    pub new_hours: u64,
    /// Whether the capacity probe ran (`--probe --destructive`).
    pub probed: bool,
    /// Each disk, in command-line order.
    pub disks: Vec<Inspected>,
    /// `healthy` (nothing to act on), `flagged`, `not_judged` (a disk gave
    /// no SMART data) or `interrupted`.
    pub verdict: ArrayVerdict,
    /// The verdict in one sentence.
    pub message: String,
}

impl Document for InspectReport {
    fn document(&self) -> RunDoc {
        let to_act_on = (self.disks.iter())
            .flat_map(|d| {
                d.to_act_on().map(|f| ActOn {
                    path: d.path.clone(),
                    action: f.concern.word(),
                    sentence: format!("{}: {}", d.path, f.sentence),
                    findings: vec![crate::finding::Finding::of(f.concern)],
                })
            })
            .collect();
        let disks: Vec<String> = self.disks.iter().map(|d| d.path.clone()).collect();
        let not_judged = (self.disks.iter())
            .filter(|d| d.verdict == InspectVerdict::NotKnown)
            .map(|d| d.path.clone())
            .collect();
        let cut = self.header.interrupted.then(|| Cut {
            interrupted: true,
            words: self.message.clone(),
            disks: disks.clone(),
        });
        RunDoc {
            outcome: if self.header.interrupted {
                Outcome::Interrupted
            } else {
                self.verdict.outcome()
            },
            to_act_on,
            links: Vec::new(),
            not_judged,
            unsure: Vec::new(),
            disks,
            cut,
            message: self.message.clone(),
            notes: Vec::new(),
        }
    }
}

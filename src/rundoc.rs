//! The run document: what every run's result says of itself, the check's,
//! the burn-in's (and soak's) and the fleet report's alike. Each report
//! fills one ([`Document`]); everything downstream reads only this: the
//! exit status, `--notify`, the fleet's reading of earlier results (and
//! the metrics to come).
//!
//! It must not decide anything: each report's own verdicts are carried.

use crate::outcome::Outcome;

/// A disk (or, in a fleet report, a host's disk) to act on.
#[derive(Debug, Clone, PartialEq)]
pub struct ActOn {
    /// The disk's path as its run gave it (`host:path` in a fleet).
    pub path: String,
    /// What to do, as the JSON names it (`return`, `recheck`,
    /// `check_path`; a fleet's `slow`, `worse`, `finding`).
    pub action: String,
    /// The evidence and the action in one sentence.
    pub sentence: String,
    /// Each finding it says, by its code (none where the run's result
    /// predates codes, and for a fleet's own findings and inspections).
    pub findings: Vec<crate::finding::Finding>,
}

/// Why a run is not whole, where it is not.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// A signal stopped it (else the file is a copy saved while the run
    /// went on, or a disk's run ended early).
    pub interrupted: bool,
    /// Why, in words.
    pub words: String,
    /// The disks not measured whole.
    pub disks: Vec<String>,
}

/// A disk a run could not tell slow or not, and the run's own words for
/// why.
#[derive(Debug, Clone, PartialEq)]
pub struct Undecided {
    pub path: String,
    pub why: String,
}

impl RunDoc {
    /// Whether `path` is one of the disks it could not decide.
    pub fn is_unsure(&self, path: &str) -> bool {
        self.unsure.iter().any(|u| u.path == path)
    }
}

/// What a run says of itself.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDoc {
    /// The run's verdict, as its exit status says it.
    pub outcome: Outcome,
    /// The disks to act on, each with its action and sentence.
    pub to_act_on: Vec<ActOn>,
    /// Links below their maximum, a sentence each, and the disks behind
    /// them.
    pub links: Vec<(String, Vec<String>)>,
    /// Disks with nothing found that could not be compared with peers.
    pub not_judged: Vec<String>,
    /// Disks neither blamed nor cleared (readings straddling the
    /// threshold, even after re-measuring, or too few), each with the
    /// run's own reason.
    pub unsure: Vec<Undecided>,
    /// Every disk the run measured.
    pub disks: Vec<String>,
    /// Where the run is not whole.
    pub cut: Option<Cut>,
    /// What the drives declared of themselves before the run (`inspect`'s
    /// findings: hours reset, hidden capacity, firmware unlike its peers):
    /// a disk's path and a sentence each, beside the verdict.
    pub notes: Vec<(String, String)>,
    /// The verdict in one sentence.
    pub message: String,
}

impl RunDoc {
    /// The paths of the disks to act on, each once.
    pub fn paths_to_act_on(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.to_act_on.iter().map(|a| a.path.clone()).collect();
        let mut seen = std::collections::HashSet::new();
        paths.retain(|p| seen.insert(p.clone()));
        paths
    }
}

/// A run's result that says what it is as a [`RunDoc`].
pub trait Document {
    /// The run document.
    fn document(&self) -> RunDoc;
}

//! A check's measurements as recorded (`--record FILE`): what it ran on
//! and with, and everything it read (passes, slices, groups read again,
//! disks re-measured), as read. Replayed, a recording gives the report
//! the run gave; with its settings edited (a threshold), the report those
//! settings would have given the same measurements. No disk is read.
//!
//! What it cannot replay: which disks the run chose to read again. Those
//! choices were the judge's while the disks were there; a recording
//! judged with other thresholds keeps the re-measurements it holds and
//! reads no new ones.

use serde::{Deserialize, Serialize};

use super::{Checked, Report, RunInfo, build};
use crate::device::BlockDevice;
use crate::header::Header;
use crate::judge::inspect::Inspected;
use crate::measure::{GroupRecheck, PassRun, Recheck};
use crate::plan::Settings;

/// What a recording says it is, and the layout it has: a file whose
/// `recording` or `version` differ is refused.
pub const WHAT: &str = "arrayburn check measurements";
pub const VERSION: u32 = 1;

/// A check, recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recording {
    /// [`WHAT`] and [`VERSION`].
    pub recording: String,
    pub version: u32,
    /// The header of the report the run gave (host, machine, times,
    /// command line).
    pub header: Header,
    /// The disks in command-line order, each disk's peer group, what the
    /// drives declared before the run, and the settings (but outputs and
    /// notifier).
    pub devices: Vec<BlockDevice>,
    pub groups: Vec<usize>,
    pub inspection: Vec<Inspected>,
    pub settings: Settings,
    /// Everything read, as `plan::run` read it.
    pub passes: Vec<PassRun>,
    pub groups_read_again: Vec<GroupRecheck>,
    pub rechecks: Vec<Recheck>,
    /// Whether a signal stopped it and whether every pass ran.
    pub info: RunInfo,
}

impl Recording {
    /// What `on` measured (`read`: its passes, re-measurements and groups
    /// read again), as the report `header` ended it.
    pub fn of(
        on: Checked,
        (passes, rechecks, groups): (&[PassRun], &[Recheck], &[GroupRecheck]),
        (info, header): (&RunInfo, &Header),
    ) -> Self {
        Recording {
            recording: WHAT.into(),
            version: VERSION,
            header: header.clone(),
            devices: on.devices.to_vec(),
            groups: on.groups.to_vec(),
            inspection: on.inspection.to_vec(),
            settings: on.settings.clone(),
            passes: passes.to_vec(),
            groups_read_again: groups.to_vec(),
            rechecks: rechecks.to_vec(),
            info: info.clone(),
        }
    }

    /// A recording from its JSON; an error names what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let r: Recording = serde_json::from_slice(bytes).map_err(|e| {
            format!(
                "not a recording of a check ({e}): give a file `arrayburn check --record` wrote"
            )
        })?;
        if r.recording != WHAT || r.version != VERSION {
            return Err(format!(
                "a recording of \"{}\" version {}, not of \"{WHAT}\" version {VERSION}: \
                 replay it with the arrayburn that wrote it",
                r.recording, r.version
            ));
        }
        Ok(r)
    }

    /// The JSON document.
    pub fn json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).expect("a recording serializes");
        bytes.push(b'\n');
        bytes
    }

    /// What the recorded check ran on and with.
    pub fn checked(&self) -> Checked<'_> {
        Checked {
            devices: &self.devices,
            inspection: &self.inspection,
            groups: &self.groups,
            settings: &self.settings,
        }
    }

    /// The report these measurements give under the recording's settings,
    /// under the recorded header (its exit status left to the run's end
    /// to mark, as a live report's is).
    pub fn report(&self) -> Report {
        let read = (self.passes.as_slice(), self.rechecks.as_slice(), &self.groups_read_again[..]);
        let mut report = build(self.checked(), read, &self.info);
        let (interrupted, complete) = (report.header.interrupted, report.header.complete);
        report.header = Header { interrupted, complete, exit_status: None, ..self.header.clone() };
        report
    }
}

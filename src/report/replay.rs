//! A run's measurements as recorded (`--record FILE`). A check's: what it
//! ran on and with, and everything it read (passes, slices, groups read
//! again, disks re-measured), as read. A burn-in's: each disk's burn,
//! SMART after, temperatures and re-measurement, with the disks and how
//! they are judged. Replayed, a recording gives the report the run gave;
//! with its settings edited (a threshold), the report those settings
//! would have given the same measurements. No disk is read.
//!
//! What it cannot replay: which disks the run chose to read again. Those
//! choices were the judge's while the disks were there; a recording
//! judged with other thresholds keeps the re-measurements it holds and
//! reads no new ones.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::burnin::BurnReport;
use super::{Checked, Report, RunInfo, build};
use crate::device::BlockDevice;
use crate::header::Header;
use crate::judge::burn_facts::BurnRun;
use crate::judge::inspect::Inspected;
use crate::measure::{GroupRecheck, PassRun, RandomRead, Recheck, ShakeRead};
use crate::plan::Settings;

/// What a recording says it is, and the layout it has: a file whose
/// `recording` or `version` differ is refused.
pub const WHAT: &str = "arrayburn check measurements";
pub const BURN_WHAT: &str = "arrayburn burnin measurements";
pub const VERSION: u32 = 1;

/// A recording of `what` from its JSON; an error names what is wrong with
/// it and what to give instead.
fn parse_as<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, String> {
    #[derive(Deserialize)]
    struct Says {
        recording: String,
        version: u32,
    }
    let says: Says = serde_json::from_slice(bytes).map_err(|e| {
        format!("not a recording of arrayburn's measurements ({e}): give a file --record wrote")
    })?;
    if says.recording != what || says.version != VERSION {
        return Err(format!(
            "a recording of \"{}\" version {}, not of \"{what}\" version {VERSION}: \
             replay it as what it is, with the arrayburn that wrote it",
            says.recording, says.version
        ));
    }
    serde_json::from_slice(bytes)
        .map_err(|e| format!("a damaged recording of \"{what}\" ({e}): record the run again"))
}

/// A recording's JSON document.
fn document(r: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(r).expect("a recording serializes");
    bytes.push(b'\n');
    bytes
}

/// `recorded`, as a replayed report carries it: the recorded run's host,
/// machine, times and command line, how the report ended, its exit
/// status left to the run's end to mark (as a live report's is).
fn replayed_header(recorded: &Header, (interrupted, complete): (bool, bool)) -> Header {
    Header { interrupted, complete, exit_status: None, ..recorded.clone() }
}

/// A burn-in, recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnRecording {
    /// [`BURN_WHAT`] and [`VERSION`].
    pub recording: String,
    pub version: u32,
    /// The header of the report the run gave.
    pub header: Header,
    /// Everything the burn-in's report is built from.
    pub run: BurnRun,
}

impl BurnRecording {
    /// `run`, as the report `header` ended it.
    pub fn of(run: BurnRun, header: &Header) -> Self {
        let (recording, version, header) = (BURN_WHAT.into(), VERSION, header.clone());
        BurnRecording { recording, version, header, run }
    }

    /// A recording from its JSON; an error names what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        parse_as(bytes, BURN_WHAT)
    }

    /// The JSON document.
    pub fn json(&self) -> Vec<u8> {
        document(self)
    }

    /// The report these measurements give under the recorded thresholds.
    pub fn report(&self) -> BurnReport {
        let mut report = super::burnin::build(self.run.clone());
        let ended = (report.header.interrupted, report.header.complete);
        report.header = replayed_header(&self.header, ended);
        report
    }
}

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
    /// Everything read, as `run::check` read it.
    pub passes: Vec<PassRun>,
    pub groups_read_again: Vec<GroupRecheck>,
    pub rechecks: Vec<Recheck>,
    /// The random reads, when they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random: Option<RandomRead>,
    /// The neighbour pass, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vibration: Option<ShakeRead>,
    /// What the kernel saw of each disk, where it was watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<Vec<crate::device::kernel::Seen>>,
    /// Whether a signal stopped it and whether every pass ran.
    pub info: RunInfo,
}

impl Recording {
    /// What `on` measured (`read`: its passes, re-measurements and groups
    /// read again), as the report `header` ended it.
    pub fn of(on: Checked, read: super::Measured, (info, header): (&RunInfo, &Header)) -> Self {
        Recording {
            recording: WHAT.into(),
            version: VERSION,
            header: header.clone(),
            devices: on.devices.to_vec(),
            groups: on.groups.to_vec(),
            inspection: on.inspection.to_vec(),
            settings: on.settings.clone(),
            passes: read.passes.to_vec(),
            groups_read_again: read.groups.to_vec(),
            rechecks: read.rechecks.to_vec(),
            random: read.random.cloned(),
            vibration: read.vibration.cloned(),
            kernel: read.kernel.map(<[_]>::to_vec),
            info: info.clone(),
        }
    }

    /// A recording from its JSON; an error names what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        parse_as(bytes, WHAT)
    }

    /// The JSON document.
    pub fn json(&self) -> Vec<u8> {
        document(self)
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
        let read = super::Measured {
            passes: &self.passes,
            rechecks: &self.rechecks,
            groups: &self.groups_read_again,
            random: self.random.as_ref(),
            vibration: self.vibration.as_ref(),
            kernel: self.kernel.as_deref(),
        };
        let mut report = build(self.checked(), read, &self.info);
        let ended = (report.header.interrupted, report.header.complete);
        report.header = replayed_header(&self.header, ended);
        report
    }
}

//! The settings a burn-in runs with, as its checkpoint keeps them: a
//! typed, versioned value that a resume, the line that continues a run and
//! the verify that follows read, never a command line parsed again.
//! (Checkpoints written before it keep only their command line:
//! `plan::burnin` reads that once, where no settings are kept.)
//!
//! It must not read flags (`plan::burnin` makes these from them) and must
//! not decide a default (`defaults` and the flags do).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::burnin::smart::{SmartMode, TestKind};
use crate::io::EngineKind;

/// The version of [`Settings`] this build writes; a checkpoint whose
/// settings are of a later one is refused (its run is resumed by the
/// arrayburn that began it, or a later one).
pub const VERSION: u32 = 1;

/// What a burn-in was told, each as it ran with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub version: u32,
    /// Where its results go.
    pub outputs: Outputs,
    /// How often each disk's place is saved.
    pub checkpoint_every: Duration,
    /// How long a disk whose writes collapsed idles before its burst.
    pub smr_idle: Duration,
    /// Whether SMART is read, how often, and the self-test after the
    /// passes (and how long it may run).
    pub smart: SmartMode,
    pub smart_every: Duration,
    pub smart_test_after: Option<TestKind>,
    pub smart_test_timeout: Option<Duration>,
    /// The I/O: when a disk counts as hung, the engine and its depth.
    pub io_timeout: Duration,
    pub engine: EngineKind,
    pub queue_depth: u16,
    /// Who is told (`--notify`), and how long the command may run.
    pub notify: Option<String>,
    pub notify_timeout: Duration,
    /// How it judges, as asked (`None`: the default; a `slow_pct` of 0: not
    /// against its peers).
    pub slow_pct: Option<f64>,
    pub stall_ms: Option<u64>,
    /// The verify that follows the passes: idle first, spin or power cycles
    /// before each read-back.
    pub idle: Option<Duration>,
    pub cycles: Option<u16>,
    pub spin_up_timeout: Duration,
    pub power_cycle: bool,
    /// `--discard`: each disk left trimmed after the last read-back (a
    /// checkpoint written before it keeps none: not asked).
    #[serde(default)]
    pub discard: bool,
}

/// Where a burn-in's results go, as given (`--json`, `--out`, `--metrics`,
/// `--record`, `--ocp-diag`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub metrics: Option<PathBuf>,
    pub record: Option<PathBuf>,
    pub ocp_diag: Option<PathBuf>,
}

impl Settings {
    /// Refuses settings this build cannot take as they are: of a later
    /// version.
    pub fn check(&self) -> Result<(), String> {
        if self.version > VERSION {
            return Err(format!(
                "its settings are of version {}, and this arrayburn reads {VERSION} at most: resume it with the arrayburn that began it, or a later one",
                self.version
            ));
        }
        Ok(())
    }
}

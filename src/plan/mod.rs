//! From flags to a runnable plan, one file per command: the check's
//! (`check.rs`), the burn-in's (`burnin.rs`, and its verify: `verify.rs`),
//! the demo's, the fleet report's and `inspect`'s; the plan shown and
//! asked (`consent.rs`); the output rules every command follows
//! (`outputs.rs`). Every refusal happens here, before the first read or
//! write.
//!
//! It must not run a step that reads or writes a disk (`run/` does: the
//! plan opens devices, and reads only what a refusal needs, a resume's
//! blocks and a disk's signatures) and must not judge.

mod burn_outputs;
pub mod burnin;
pub mod check;
pub mod consent;
pub mod demo;
pub mod fleet;
pub mod inspect;
pub mod outputs;
mod settings;
pub mod verify;

use thiserror::Error;

use crate::device::DeviceError;

pub use burn_outputs::RunOutputs;
pub use check::{Plan, Settings, check_io_timeout, check_sample};
pub use outputs::{check_output_dir, check_output_path, record_output, refuse_shared};

/// Why a check cannot run. One line each, naming the problem and the way out.
#[derive(Debug, Error)]
pub enum PlanError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("{path}: cannot open for O_DIRECT reading: {detail}")]
    Open { path: String, detail: String },
    /// A flag's value outside what it takes.
    #[error("{0}")]
    BadValue(String),
    /// Flags that cannot go together.
    #[error("{0}")]
    Conflict(&'static str),
    /// An output (or iozone test file) the run could not write, or two
    /// flags naming one file.
    #[error("{0}")]
    Output(String),
    /// A device unfit for the read asked of it.
    #[error("{0}")]
    Unfit(String),
    /// Another run holds the disk.
    #[error("{0}")]
    Busy(String),
}

/// The notifier `--notify` asks for, if any.
pub fn notifier(args: &crate::cli::NotifyArgs) -> Option<crate::notify::Notifier> {
    let command = args.notify.clone()?;
    Some(crate::notify::Notifier { command, timeout: args.notify_timeout })
}

//! One file per subcommand: thin glue between plan, run and report.

pub mod check;
pub mod demo;
pub mod list;

use crate::cli::{Cli, Command};
use crate::run::StopFlag;
use crate::stats::verdict::ArrayVerdict;

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything healthy (exit 0).
    Healthy,
    /// A disk was flagged or failed reads (exit 1).
    Flagged,
    /// Nothing found, but not every disk could be compared: health is not
    /// claimed (exit 3).
    NotJudged,
    /// A signal stopped the run (exit 130).
    Interrupted,
}

impl Outcome {
    /// The outcome of a check's verdict.
    pub fn of(v: ArrayVerdict) -> Self {
        match v {
            ArrayVerdict::Healthy => Outcome::Healthy,
            ArrayVerdict::Flagged => Outcome::Flagged,
            ArrayVerdict::NotJudged => Outcome::NotJudged,
        }
    }

    /// The process exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Healthy => 0,
            Outcome::Flagged => 1,
            Outcome::NotJudged => 3,
            Outcome::Interrupted => 130,
        }
    }
}

/// Runs the parsed command. An `Err` means the command could not run
/// (exit 2); findings about disks are in the `Outcome`.
pub fn run(cli: Cli, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::List(args) => list::run(&args),
        Command::Check(args) => check::run(&args, argv, stop),
        Command::Demo(args) => demo::run(&args, argv, stop),
        Command::Iozone(args) => crate::iozone::run(&args.args, stop),
    }
}

//! `arrayburn iozone ARGS`: iozone's command lines, handed to the iozone
//! runner (`crate::iozone`), which parses them itself (iozone's flags are
//! not clap's).

use crate::outcome::Outcome;
use crate::stop::StopFlag;

/// Runs iozone's workloads as ARGS ask.
pub fn run(args: &[String], stop: &StopFlag) -> anyhow::Result<Outcome> {
    crate::iozone::run(args, stop)
}

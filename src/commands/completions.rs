//! `arrayburn completions SHELL`: shell completions from the CLI's
//! definitions.

use clap::CommandFactory;

use crate::cli::Cli;
use crate::outcome::Outcome;

/// Prints the completion script for `shell`.
pub fn run(shell: clap_complete::Shell) -> anyhow::Result<Outcome> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "arrayburn", &mut std::io::stdout());
    Ok(Outcome::Healthy)
}

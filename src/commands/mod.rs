//! One file per subcommand: thin glue between plan, run and report.

pub mod check;
pub mod demo;
pub mod list;

use clap::CommandFactory;

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
        Command::Completions(args) => {
            let mut cmd = Cli::command();
            clap_complete::generate(args.shell, &mut cmd, "arrayburn", &mut std::io::stdout());
            Ok(Outcome::Healthy)
        }
        Command::Man(args) => man(args.subcommand.as_deref()),
    }
}

/// Prints arrayburn's man page, or a subcommand's (`arrayburn-check(1)`).
fn man(subcommand: Option<&str>) -> anyhow::Result<Outcome> {
    let top = Cli::command();
    let cmd = match subcommand {
        None => top,
        Some(name) => {
            let names: Vec<String> = top
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let Some(sub) = top.find_subcommand(name) else {
                anyhow::bail!(
                    "man {name}: no such subcommand; give one of {}",
                    names.join(", ")
                );
            };
            sub.clone()
                .name(format!("arrayburn-{name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let has_options = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subcommands = cmd.has_subcommands();
    let man = clap_mangen::Man::new(cmd);
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    if has_options {
        man.render_options_section(&mut page)?;
    }
    if has_subcommands {
        man.render_subcommands_section(&mut page)?;
    }
    page.extend_from_slice(exit_and_examples_roff().as_bytes());
    man.render_version_section(&mut page)?;
    use std::io::Write;
    std::io::stdout().lock().write_all(&page)?;
    Ok(Outcome::Healthy)
}

/// EXIT STATUS and EXAMPLES sections in roff, from the tables `--help`
/// prints.
fn exit_and_examples_roff() -> String {
    let esc = |t: &str| t.replace('\\', "\\\\").replace('-', "\\-");
    let mut s = String::from(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in crate::cli::EXIT_CODES {
        s += &format!(".TP\n\\fB{code}\\fR\n{}\n", esc(meaning));
    }
    s += ".SH EXAMPLES\n.nf\n";
    for e in crate::cli::EXAMPLES {
        s += &format!("{}\n", esc(e));
    }
    s + ".fi\n"
}

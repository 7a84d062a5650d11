//! One file per subcommand: thin glue between the stages (plan, measure,
//! judge, report, export) or iozone's runner. A command must not hold a
//! rule or a format of its own.

pub mod burnin;
pub mod check;
pub mod completions;
pub mod demo;
pub mod fleet;
pub mod inspect;
pub mod iozone;
pub mod list;
pub mod locate;
pub mod man;
pub mod watch;

use crate::cli::{Cli, Command};
pub use crate::outcome::Outcome;
use crate::stop::StopFlag;

/// Runs the parsed command. An `Err` means the command could not run
/// (exit 2); findings about disks are in the `Outcome`.
pub fn run(cli: Cli, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    // A placement file that cannot be used is refused before anything runs
    // (not silently ignored, leaving disks where sysfs says).
    crate::device::topology::given_all().map_err(anyhow::Error::msg)?;
    let chatter = match &cli.command {
        Command::Check(a) => Some(&a.output.chatter),
        Command::Demo(a) => Some(&a.output.chatter),
        Command::Burnin(a) => Some(&a.chatter),
        Command::Report(a) => Some(&a.chatter),
        Command::Inspect(a) => Some(&a.chatter),
        Command::Watch(a) => Some(&a.chatter),
        _ => None,
    };
    if let Some(c) = chatter {
        crate::tell::set_chatter(c.quiet, c.verbose, c.color.forced());
    }
    for note in old_spellings(&cli.command, &argv) {
        tell!("arrayburn: note: {note}");
    }
    match cli.command {
        Command::List(args) => list::run(&args, stop),
        Command::Locate(args) => locate::run(&args),
        Command::Check(args) => check::run(&args, argv, stop),
        Command::Demo(args) => demo::run(&args, argv, stop),
        Command::Burnin(args) => burnin::run(&args, argv, stop),
        Command::Inspect(args) => inspect::run(&args, argv, stop),
        Command::Iozone(args) => iozone::run(&args.args, stop),
        Command::Completions(args) => completions::run(args.shell),
        Command::Man(args) => man::run(&args),
        Command::Report(args) => fleet::run(&args, argv, stop),
        Command::Watch(args) => watch::run(&args, stop),
    }
}

/// A line for each old spelling given, naming the new one (each works for
/// a release): one flag name, one meaning, across the commands.
fn old_spellings(command: &Command, argv: &[String]) -> Vec<&'static str> {
    let mut notes = Vec::new();
    let given = |flag: &str, value: &str| {
        let joined = format!("{flag}={value}");
        argv.windows(2).any(|w| w[0] == flag && w[1] == value) || argv.contains(&joined)
    };
    if given("--progress", "bars") {
        notes.push("--progress bars is now --progress table (as the burn-in's)");
    }
    match command {
        Command::Check(a) if a.old_passes.is_some() => notes.push(
            "check's --passes is now --mode (serial, parallel, both); a burn-in's --passes is a count",
        ),
        Command::Burnin(a) if a.slow_pct == Some(0.0) => notes.push(
            "--slow-pct 0 is now --not-against-peers (--slow-pct is a threshold above 0, as the check's)",
        ),
        _ => {}
    }
    notes
}

//! Parses the command line, runs the command, maps the outcome to an exit
//! code: 0 healthy, 1 a disk flagged or failed, 2 could not run, 130
//! interrupted.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use arrayburn::cli::{Cli, Command};
use arrayburn::commands;
use arrayburn::stop::StopFlag;
use clap::Parser;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    // Paths are bytes on Linux: a non-UTF-8 argument is kept (lossily) for
    // the record, and clap refuses it with exit 2 where it needs text.
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    // One child process of iozone's throughput mode (run by `iozone`, not
    // by people: it is no subcommand, so neither --help, completions nor
    // the man pages show it).
    let iozone_child =
        argv.get(1).map(String::as_str) == Some(arrayburn::iozone::children::SUBCOMMAND);
    let cli = match (!iozone_child).then(Cli::try_parse) {
        None => None,
        Some(Ok(cli)) => Some(cli),
        Some(Err(e)) => return refused(e),
    };
    // A command that reads disks runs in a child process, so that a read
    // stuck in the kernel on a frozen disk never holds its exit status.
    let reads_disks = matches!(
        cli.as_ref().map(|c| &c.command),
        Some(Command::Check(_) | Command::Burnin(_) | Command::Demo(_) | Command::Inspect(_))
    );
    if reads_disks {
        arrayburn::supervisor::split();
    }
    let stop = StopFlag::default();
    let handler_stop = stop.clone();
    // SIGINT, SIGTERM and SIGHUP (ctrlc's "termination" feature; SIGHUP
    // only for the commands that do not read disks, see below): the first
    // asks the workers to stop after their current read, so the partial
    // report is written; a second one ends the process at once (unless the
    // demo is still removing its loop devices and cgroup, or iozone its test
    // files). One within a second of the first is the same stop: a kill of
    // the process group or of every `arrayburn` reaches both processes of a
    // split run, the child once directly and once passed on.
    // An iozone child process leaves signals to its parent, which tells it
    // to stop (or is gone, which ends the child's input: the same).
    let mut first: Option<Instant> = None;
    let _ = ctrlc::set_handler(move || {
        if iozone_child || first.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return;
        }
        if handler_stop.is_set() {
            if handler_stop.cleanup_pending() {
                arrayburn::tell!(
                    "arrayburn: still removing what this run created or writing its results; one moment"
                );
                return;
            }
            arrayburn::supervisor::exit(130);
        }
        first = Some(Instant::now());
        arrayburn::tell!(
            "arrayburn: stopping (signal received); writing partial results; signal again to quit at once"
        );
        handler_stop.stop();
    });
    // A check, a burn-in or the demo goes on when its terminal goes away
    // (SIGHUP): its results and log are still written.
    if reads_disks {
        arrayburn::supervisor::outlive_terminal();
    }
    let ran = match cli {
        Some(cli) => commands::run(cli, argv, &stop),
        None => arrayburn::iozone::children::child_main(&argv[2..], &stop),
    };
    match ran {
        Ok(outcome) => arrayburn::supervisor::exit(outcome.exit_code()),
        Err(e) => {
            arrayburn::tell!("arrayburn: error: {e:#}");
            arrayburn::supervisor::exit(2)
        }
    }
}

/// A command line clap could not take, in one line naming the problem and
/// the way out (clap's own tips joined in), exit 2; `--help` and
/// `--version` as clap prints them, exit 0.
fn refused(e: clap::Error) -> ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
    }
    let text = e.render().to_string();
    let mut said = String::new();
    for l in text.lines().map(str::trim).filter(|l| {
        !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
    }) {
        if !said.is_empty() {
            said.push_str(if said.ends_with(':') { " " } else { "; " });
        }
        said.push_str(l.strip_prefix("error: ").unwrap_or(l));
    }
    arrayburn::tell!("arrayburn: error: {said}; see --help");
    ExitCode::from(2)
}

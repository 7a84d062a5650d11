//! A burn-in's settings between its command line and its checkpoint:
//! made once from the flags of the run that begins (`settings_of`), read
//! back by a resume (`began_with`), and a resume's own flags laid over
//! them (`inherit`: clap says which it was given).
//!
//! It must not read a device or write a file.

use std::collections::HashSet;

use crate::burnin::settings::{Outputs, Settings, VERSION};
use crate::burnin::state::Checkpoint;
use crate::cli::BurninArgs;

/// The options of the command line that began a checkpointed run.
/// The flags `argv` gives itself (on its command line or in its
/// environment), by clap's id (`progress_interval`): not those left to
/// their defaults.
pub fn given_flags(argv: &[String]) -> HashSet<String> {
    use clap::CommandFactory;
    use clap::parser::ValueSource;
    let Ok(m) = crate::cli::Cli::command().try_get_matches_from(argv) else {
        return Default::default();
    };
    let Some(m) = m.subcommand_matches("burnin") else { return Default::default() };
    (m.ids())
        .filter(|id| m.value_source(id.as_str()).is_some_and(|s| s != ValueSource::DefaultValue))
        .map(|id| id.to_string())
        .collect()
}

/// A resume's settings: each that its own command line (`given`) leaves
/// out, as the run it goes on (`first`) had it: checkpoints, SMART, the
/// I/O timeout and engine, who is told. (Its outputs, its --slow-pct and
/// --stall-ms are taken the same way where they are read.) How progress
/// is shown is each command's own (a terminal, a log): not taken.
pub fn inherit(args: &BurninArgs, given: &HashSet<String>, first: &Settings) -> BurninArgs {
    let own = |id: &str| given.contains(id);
    let mut a = args.clone();
    if !own("checkpoint_every") {
        a.checkpoint_every = first.checkpoint_every;
    }
    if !own("smr_idle") {
        a.smr_idle = first.smr_idle;
    }
    if !own("smart") {
        a.smart = first.smart;
    }
    if !own("smart_every") {
        a.smart_every = first.smart_every;
    }
    if !own("smart_test_after") && !own("smart_test_timeout") {
        (a.smart_test_after, a.smart_test_timeout) =
            (first.smart_test_after, first.smart_test_timeout);
    }
    if !own("io_timeout") {
        a.io.io_timeout = first.io_timeout;
    }
    if !own("engine") && !own("queue_depth") {
        (a.io.engine, a.io.queue_depth) = (first.engine, first.queue_depth);
    }
    if !own("notify") && !own("notify_timeout") {
        (a.notify.notify, a.notify.notify_timeout) = (first.notify.clone(), first.notify_timeout);
    }
    a
}

/// The settings a checkpointed run began with: those it keeps, or for a
/// checkpoint written before they were kept, those of the command line
/// that began it (read once, here).
pub fn began_with(c: &Checkpoint) -> Option<Settings> {
    use clap::Parser;
    if let Some(s) = &c.settings {
        return Some(s.clone());
    }
    match crate::cli::Cli::try_parse_from(&c.command_line).ok()?.command {
        crate::cli::Command::Burnin(a) => Some(settings_of(&a)),
        _ => None,
    }
}

/// The settings `args` give a run, as its checkpoint keeps them.
pub fn settings_of(args: &BurninArgs) -> Settings {
    let outputs = Outputs {
        json: args.json.clone(),
        out: args.out.clone(),
        metrics: args.metrics.clone(),
        record: args.record.clone(),
        ocp_diag: args.ocp_diag.clone(),
    };
    Settings {
        version: VERSION,
        outputs,
        checkpoint_every: args.checkpoint_every,
        smr_idle: args.smr_idle,
        smart: args.smart,
        smart_every: args.smart_every,
        smart_test_after: args.smart_test_after,
        smart_test_timeout: args.smart_test_timeout,
        io_timeout: args.io.io_timeout,
        engine: args.io.engine,
        queue_depth: args.io.queue_depth,
        notify: args.notify.notify.clone(),
        notify_timeout: args.notify.notify_timeout,
        slow_pct: args.slow_pct_asked(),
        stall_ms: args.stall_ms,
        idle: args.idle,
        cycles: args.cycles,
        spin_up_timeout: args.spin_up_timeout,
        power_cycle: args.power_cycle,
    }
}

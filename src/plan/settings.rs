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
    a.discard |= first.discard;
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
        discard: args.discard,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::burnin::smart::SmartMode;
    use crate::io::EngineKind;

    fn fixture(name: &str) -> Checkpoint {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/burnin/checkpoint-before-settings");
        serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap()).unwrap()
    }

    #[test]
    fn a_checkpoint_of_the_release_before_typed_settings_resumes_with_its_command_line_s() {
        let c = fixture("burnin-loop0.json");
        assert!(c.settings.is_none());
        c.validate(16 << 20, 512).unwrap();
        let s = began_with(&c).unwrap();
        let p = |s: &str| Some(std::path::PathBuf::from(s));
        assert_eq!(s.version, VERSION);
        assert_eq!(s.outputs.json, p("/tmp/fx2/reports/burn.json"));
        assert_eq!(s.outputs.out, p("/tmp/fx2/reports/bundle"));
        assert_eq!((s.outputs.metrics.clone(), s.outputs.record.clone()), (None, None));
        assert_eq!((s.slow_pct, s.stall_ms), (Some(0.0), Some(5000)), "--not-against-peers");
        assert_eq!((s.engine, s.queue_depth), (EngineKind::Psync, 4));
        assert_eq!(s.smart, SmartMode::Off);
        assert_eq!(s.checkpoint_every, Duration::from_secs(30));
        assert_eq!(s.smr_idle, Duration::from_secs(120));
        assert_eq!((s.idle, s.cycles), (Some(Duration::from_secs(1)), None));
        assert_eq!(s.notify.as_deref(), Some("true"));
        // The verify that release made of it: its own line's settings.
        let v = began_with(&fixture("verify-loop0.json")).unwrap();
        assert_eq!(v.outputs.json, p("/tmp/fx2/reports/burn-verify.json"));
        assert_eq!((v.slow_pct, v.stall_ms, v.idle), (Some(0.0), Some(5000), None));
    }

    #[test]
    fn kept_settings_are_read_as_kept_and_a_later_version_is_refused() {
        let mut c = fixture("burnin-loop0.json");
        let mut s = began_with(&c).unwrap();
        s.stall_ms = Some(1234);
        c.settings = Some(s.clone());
        // Kept settings win over the command line, through a save and a load.
        let again: Checkpoint = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(began_with(&again), Some(s.clone()));
        again.validate(16 << 20, 512).unwrap();
        c.settings = Some(Settings { version: VERSION + 1, ..s });
        let e = c.validate(16 << 20, 512).unwrap_err();
        assert!(e.contains("of version 2") && e.contains("the arrayburn that began it"), "{e}");
    }

    #[test]
    fn a_resume_takes_the_kept_settings_but_for_what_its_own_line_gives() {
        use clap::Parser;
        let parse = |line: &str| match crate::cli::Cli::parse_from(line.split(' ')).command {
            crate::cli::Command::Burnin(a) => a,
            _ => unreachable!(),
        };
        let first = began_with(&fixture("burnin-loop0.json")).unwrap();
        let line = "arrayburn burnin --resume --destructive --yes --queue-depth 8 /dev/sdb";
        let args = parse(line);
        let given = given_flags(&line.split(' ').map(String::from).collect::<Vec<_>>());
        let a = inherit(&args, &given, &first);
        // Its own queue depth (the engine goes with it: its own); the rest kept.
        assert_eq!((a.io.engine, a.io.queue_depth), (args.io.engine, 8));
        assert_eq!((a.smart, a.checkpoint_every), (SmartMode::Off, Duration::from_secs(30)));
        assert_eq!(a.notify.notify.as_deref(), Some("true"));
    }
}

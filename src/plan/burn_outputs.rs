//! A burn-in's outputs resolved (`--json`, `--out`, `--metrics`,
//! `--record`, a resume's inherited), and the command lines that run it
//! again (its resume, the verify after it): shared by `plan::burnin` and
//! `plan::verify`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

use crate::burnin::targets::Target;
use crate::cli::BurninArgs;
use crate::output::Output;

/// A burn-in's outputs, resolved and proven writable.
pub(super) struct RunOutputs {
    pub(super) json: Option<Output>,
    pub(super) out: Option<PathBuf>,
    pub(super) metrics: Option<Output>,
    pub(super) record: Option<Output>,
    pub(super) ocp: Option<Output>,
}

/// `--json`, `--out`, `--metrics`, `--record` and `--ocp-diag` as given,
/// each else as the run a resume goes on (`first`) gave it.
pub(super) fn output_flags<'a>(
    args: &'a BurninArgs,
    first: Option<&'a BurninArgs>,
) -> [Option<&'a Path>; 5] {
    let or = |flag: fn(&BurninArgs) -> Option<&Path>| flag(args).or(first.and_then(flag));
    [
        or(|a| a.json.as_deref()),
        or(|a| a.out.as_deref()),
        or(|a| a.metrics.as_deref()),
        or(|a| a.record.as_deref()),
        or(|a| a.ocp_diag.as_deref()),
    ]
}

/// The outputs `output_flags` names, resolved and proven writable; two
/// that name one file are refused.
pub(super) fn outputs([json, out, metrics, record, ocp]: [Option<&Path>; 5]) -> Result<RunOutputs> {
    let resolve = |flag, p: Option<&Path>| {
        p.map(|p| Output::resolve(flag, p, true)).transpose().map_err(unwritten)
    };
    let (json, metrics) = (resolve("--json", json)?, resolve("--metrics", metrics)?);
    if let Some(dir) = out {
        super::check_output_dir(dir).map_err(unwritten)?;
    }
    let record = super::record_output(record).map_err(unwritten)?;
    let ocp = resolve("--ocp-diag", ocp)?;
    super::refuse_shared([&json, &metrics, &record, &ocp].into_iter().flatten(), out)
        .map_err(unwritten)?;
    Ok(RunOutputs { json, out: out.map(Path::to_path_buf), metrics, record, ocp })
}

/// A refusal, saying that nothing was written.
pub(super) fn unwritten(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{e} (nothing was written)")
}

/// The command that continues an interrupted burn-in as it ran: its state,
/// outputs (each flag's name and path, where given), progress,
/// checkpoint, SMART, judging, timeout and engine options, and its disks
/// (each shell-quoted).
pub(super) fn resume_line(
    args: &BurninArgs,
    outputs: &[(&str, Option<PathBuf>)],
    judged: (f64, u64),
    targets: &[Target],
) -> String {
    let how = if args.verify { "--verify --resume" } else { "--resume --destructive --yes" };
    let mut words = run_words(args, how, outputs, judged);
    words.extend(targets.iter().map(|t| t.dev.given.clone()));
    words.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" ")
}

/// `arrayburn burnin HOW` and the options that run it as `args` ran (its
/// state, the outputs given, progress, checkpoint, SMART, judging,
/// timeout, engine and notify options), its disks left to the caller.
pub(super) fn run_words(
    args: &BurninArgs,
    how: &str,
    outputs: &[(&str, Option<PathBuf>)],
    (slow_pct, stall_ms): (f64, u64),
) -> Vec<String> {
    let secs = |d: Duration| format!("{}s", d.as_secs_f64());
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let mut words: Vec<String> =
        format!("arrayburn burnin {how}").split(' ').map(String::from).collect();
    let mut flag = |name: &str, value: String| words.extend([format!("--{name}"), value]);
    flag("state", path(&args.state));
    for (name, given) in outputs {
        if let Some(p) = given {
            flag(name, path(p));
        }
    }
    flag("progress", value_word(&args.progress));
    flag("progress-interval", secs(args.progress_interval));
    flag("checkpoint-every", secs(args.checkpoint_every));
    flag("smr-idle", secs(args.smr_idle));
    flag("smart", value_word(&args.smart));
    flag("smart-every", secs(args.smart_every));
    // A verify after a burn-in runs no self-test of its own.
    if let Some(k) = args.smart_test_after.filter(|_| !how.contains("--verify")) {
        flag("smart-test-after", k.word().into());
        if let Some(t) = args.smart_test_timeout {
            flag("smart-test-timeout", secs(t));
        }
    }
    flag("io-timeout", secs(args.io.io_timeout));
    flag("stall-ms", stall_ms.to_string());
    if slow_pct > 0.0 {
        flag("slow-pct", slow_pct.to_string());
    }
    flag("engine", args.io.engine.name().into());
    flag("queue-depth", args.io.queue_depth.to_string());
    if let Some(cmd) = &args.notify.notify {
        flag("notify", cmd.clone());
        flag("notify-timeout", secs(args.notify.notify_timeout));
    }
    if slow_pct <= 0.0 {
        words.push("--not-against-peers".into());
    }
    words
}

/// A flag's value as the command line gives it (`auto`, `lines`).
fn value_word(v: &impl clap::ValueEnum) -> String {
    v.to_possible_value().map(|p| p.get_name().to_string()).unwrap_or_default()
}

/// `w` as one word a shell reads back as it is (quoted unless it is plain).
pub(super) fn shell_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+-".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Refuses an output file (`--json`, `--metrics`, `--record`,
/// `--ocp-diag`) or `--out
/// DIR` in the checkpoints' directory: a report written over a checkpoint
/// loses the place of a run (and the next run is refused).
pub(super) fn refuse_outputs_in(state: &std::path::Path, outs: &RunOutputs) -> Result<()> {
    let state = std::fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf());
    let files = [&outs.json, &outs.metrics, &outs.record, &outs.ocp].into_iter().flatten();
    let file_dirs = files.filter_map(|o| match &o.sink {
        crate::output::Sink::File { dir, .. } => {
            Some((format!("{} {}", o.flag, o.given.display()), dir.path().to_path_buf()))
        }
        _ => None,
    });
    let out_dir = outs.out.as_ref().map(|d| (format!("--out {}", d.display()), d.clone()));
    for (flag, dir) in file_dirs.chain(out_dir) {
        if std::fs::canonicalize(&dir).is_ok_and(|d| d == state) {
            bail!(
                "{flag}: is in --state {}, where the checkpoints are kept: write results elsewhere (nothing was written)",
                state.display()
            );
        }
    }
    Ok(())
}

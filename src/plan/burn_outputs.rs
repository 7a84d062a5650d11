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
pub struct RunOutputs {
    pub json: Option<Output>,
    pub out: Option<PathBuf>,
    pub metrics: Option<Output>,
    pub record: Option<Output>,
    pub ocp: Option<Output>,
}

impl RunOutputs {
    /// Each output as given, by its flag's name (`ocp-diag`).
    pub(super) fn given(&self) -> [(&'static str, Option<PathBuf>); 5] {
        let given = |o: &Option<Output>| o.as_ref().map(|o| o.given.clone());
        [
            ("json", given(&self.json)),
            ("out", self.out.clone()),
            ("metrics", given(&self.metrics)),
            ("record", given(&self.record)),
            ("ocp-diag", given(&self.ocp)),
        ]
    }
}

/// `--json`, `--out`, `--metrics`, `--record` and `--ocp-diag` as given,
/// each else as the run a resume goes on (`first`) gave it.
pub(super) fn output_flags<'a>(
    args: &'a BurninArgs,
    first: Option<&'a crate::burnin::settings::Settings>,
) -> [Option<&'a Path>; 5] {
    let first = first.map(|f| &f.outputs);
    let given = [&args.json, &args.out, &args.metrics, &args.record, &args.ocp_diag];
    let kept = first.map(|f| [&f.json, &f.out, &f.metrics, &f.record, &f.ocp_diag]);
    std::array::from_fn(|i| given[i].as_deref().or(kept.and_then(|k| k[i].as_deref())))
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

/// The command that continues an interrupted burn-in: its state (where
/// not the default), its disks (a run of names that differ in their last letter or digit as one
/// glob: `/dev/sd[b-y]`), and only the settings this run was given that
/// the run it goes on did not have (`changed`, by flag name): a resume
/// takes every other from the checkpoint, as this run did.
pub(super) fn resume_line(
    args: &BurninArgs,
    outputs: &[(&'static str, Option<PathBuf>)],
    judged: (f64, u64),
    targets: &[Target],
    changed: &dyn Fn(&str) -> bool,
) -> String {
    let how = if args.verify { "--verify --resume" } else { "--resume --destructive --yes" };
    let mut words: Vec<String> =
        format!("arrayburn burnin {how}").split(' ').map(String::from).collect();
    // The state directory where it is not the default.
    if args.state != std::path::Path::new(crate::defaults::STATE_DIR) {
        words.extend(["--state".into(), args.state.to_string_lossy().into_owned()]);
    }
    let settings = settings(args, outputs, judged, args.verify);
    for (flag, value) in settings.into_iter().filter(|(f, _)| changed(f)) {
        words.push(format!("--{flag}"));
        words.extend(value);
    }
    let mut line: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
    let paths: Vec<&str> = targets.iter().map(|t| t.dev.given.as_str()).collect();
    line.extend(globbed(&paths));
    line.join(" ")
}

/// `paths` for a shell: a run of three or more that differ only in their
/// last character, each of the run there and in order (`b`, `c`, `d`), as
/// one glob that names exactly them (`/dev/sd[b-d]`); the others
/// shell-quoted.
pub(super) fn globbed(paths: &[&str]) -> Vec<String> {
    let last = |s: &str| s.chars().last().filter(char::is_ascii_alphanumeric);
    let stem = |s: &str| s.get(..s.len().saturating_sub(1)).map(str::to_string);
    let plain = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || "_./:=@%+-".contains(c));
    let mut out = Vec::new();
    let mut i = 0;
    while i < paths.len() {
        let p = paths[i];
        if let (Some(c), Some(prefix)) = (last(p), stem(p)) {
            let mut j = i + 1;
            let mut want = c as u32 + 1;
            while j < paths.len()
                && stem(paths[j]).as_deref() == Some(prefix.as_str())
                && last(paths[j]).map(u32::from) == Some(want)
            {
                want += 1;
                j += 1;
            }
            if j - i >= 3 && plain(&prefix) {
                let end = last(paths[j - 1]).unwrap_or(c);
                out.push(format!("{prefix}[{c}-{end}]"));
                i = j;
                continue;
            }
        }
        out.push(shell_word(p));
        i += 1;
    }
    out
}

/// `arrayburn burnin HOW` and the options that run it as `args` ran (its
/// state, the outputs given, progress, checkpoint, SMART, judging,
/// timeout, engine and notify options), its disks left to the caller.
pub(super) fn run_words(
    args: &BurninArgs,
    how: &str,
    outputs: &[(&'static str, Option<PathBuf>)],
    judged: (f64, u64),
) -> Vec<String> {
    let mut words: Vec<String> =
        format!("arrayburn burnin {how}").split(' ').map(String::from).collect();
    words.extend(["--state".into(), args.state.to_string_lossy().into_owned()]);
    for (flag, value) in settings(args, outputs, judged, how.contains("--verify")) {
        words.push(format!("--{flag}"));
        words.extend(value);
    }
    words
}

/// Each setting a burn-in runs with, as its flag and value (none for a
/// switch): the outputs given, progress, then its typed settings
/// (`plan::settings`: checkpoint, SMART, timeout, engine and notify); how
/// it judges as resolved (`judged`). A verify (`verify`) runs no self-test
/// of its own after.
fn settings(
    args: &BurninArgs,
    outputs: &[(&'static str, Option<PathBuf>)],
    (slow_pct, stall_ms): (f64, u64),
    verify: bool,
) -> Vec<(&'static str, Option<String>)> {
    let s = super::settings::settings_of(args);
    let secs = |d: Duration| Some(format!("{}s", d.as_secs_f64()));
    let mut out: Vec<(&'static str, Option<String>)> = Vec::new();
    for (name, given) in outputs {
        if let Some(p) = given {
            out.push((*name, Some(p.to_string_lossy().into_owned())));
        }
    }
    out.push(("progress", Some(value_word(&args.progress))));
    out.push(("progress-interval", secs(args.progress_interval)));
    out.push(("checkpoint-every", secs(s.checkpoint_every)));
    out.push(("smr-idle", secs(s.smr_idle)));
    out.push(("smart", Some(value_word(&s.smart))));
    out.push(("smart-every", secs(s.smart_every)));
    if let Some(k) = s.smart_test_after.filter(|_| !verify) {
        out.push(("smart-test-after", Some(k.word().into())));
        if let Some(t) = s.smart_test_timeout {
            out.push(("smart-test-timeout", secs(t)));
        }
    }
    out.push(("io-timeout", secs(s.io_timeout)));
    if s.discard && !verify {
        out.push(("discard", None));
    }
    out.push(("stall-ms", Some(stall_ms.to_string())));
    match slow_pct > 0.0 {
        true => out.push(("slow-pct", Some(slow_pct.to_string()))),
        false => out.push(("not-against-peers", None)),
    }
    out.push(("engine", Some(s.engine.name().into())));
    out.push(("queue-depth", Some(s.queue_depth.to_string())));
    if let Some(cmd) = &s.notify {
        out.push(("notify", Some(cmd.clone())));
        out.push(("notify-timeout", secs(s.notify_timeout)));
    }
    out
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

#[cfg(test)]
mod tests {
    use super::globbed;

    #[test]
    fn a_run_of_disks_is_one_glob_that_names_exactly_them() {
        let sd: Vec<String> = (b'b'..=b'y').map(|c| format!("/dev/sd{}", c as char)).collect();
        let sd: Vec<&str> = sd.iter().map(String::as_str).collect();
        assert_eq!(globbed(&sd), ["/dev/sd[b-y]"]);
        // 24 disks, the default state: the command fits 80 columns.
        let line = format!("arrayburn burnin --resume --destructive --yes {}", globbed(&sd)[0]);
        assert!(line.len() < 80, "{line}");
        // A gap, fewer than three, another stem: named one by one.
        assert_eq!(
            globbed(&[
                "/dev/sdb",
                "/dev/sdd",
                "/dev/sde",
                "/dev/loop3",
                "/dev/loop4",
                "/dev/loop5"
            ]),
            ["/dev/sdb", "/dev/sdd", "/dev/sde", "/dev/loop[3-5]"]
        );
        // A name a shell would read otherwise is quoted, never globbed.
        assert_eq!(
            globbed(&["/dev/x y1", "/dev/x y2", "/dev/x y3"]),
            ["'/dev/x y1'", "'/dev/x y2'", "'/dev/x y3'"]
        );
    }
}

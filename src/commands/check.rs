//! `arrayburn check`: plan, run the passes, save after each, report.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::SystemTime;

use anyhow::Context;

use super::Outcome;
use crate::cli::{CheckArgs, ProgressMode};
use crate::device::SystemPaths;
use crate::io::{Engine, PreadEngine};
use crate::plan::Plan;
use crate::report::progress::{Progress, Style};
use crate::report::{self, Report, RunInfo};
use crate::run::{PassRun, StopFlag, run_pass};

/// Runs a check.
pub fn run(args: &CheckArgs, argv: Vec<String>, stop: &StopFlag) -> anyhow::Result<Outcome> {
    execute(args, argv, stop).map(|(outcome, _)| outcome)
}

/// Runs a check and also returns its report (the demo reads it).
pub fn execute(
    args: &CheckArgs,
    argv: Vec<String>,
    stop: &StopFlag,
) -> anyhow::Result<(Outcome, Report)> {
    let plan = Plan::resolve(args, &SystemPaths::real())?;
    for w in &plan.warnings {
        eprintln!("arrayburn: warning: {w}");
    }
    let mut info = RunInfo {
        started_at: SystemTime::now(),
        command_line: argv,
        interrupted: false,
    };
    let labels = plan.devices.iter().map(|d| d.given.clone()).collect();
    let mut progress = Progress::new(
        style(plan.settings.progress),
        labels,
        plan.settings.progress_interval,
    );
    let geometry = plan.geometry();
    let engines = |d: usize| -> std::io::Result<Box<dyn Engine>> {
        Ok(Box::new(PreadEngine::new(plan.files[d].try_clone()?)))
    };
    let mut passes: Vec<PassRun> = Vec::new();
    for spec in plan.pass_specs() {
        if stop.is_set() {
            break;
        }
        passes.push(run_pass(spec, &geometry, &engines, stop, &mut progress)?);
        info.interrupted = stop.is_set();
        save_files(&plan, &report::build(&plan, &passes, &info), false)?;
    }
    info.interrupted = stop.is_set();
    let report = report::build(&plan, &passes, &info);
    finish(&plan, &report)?;
    let outcome = if info.interrupted {
        Outcome::Interrupted
    } else if report.summary.verdict == "healthy" {
        Outcome::Healthy
    } else {
        Outcome::Flagged
    };
    Ok((outcome, report))
}

fn style(mode: ProgressMode) -> Style {
    match mode {
        ProgressMode::Bars => Style::Bars,
        ProgressMode::Lines => Style::Lines,
        ProgressMode::None => Style::Quiet,
        ProgressMode::Auto if std::io::stderr().is_terminal() => Style::Bars,
        ProgressMode::Auto => Style::Lines,
    }
}

/// Writes the files asked for (JSON, surface CSV, the `--out` directory);
/// called after each pass and at the end, so a crash or a signal loses
/// nothing.
fn save_files(plan: &Plan, report: &Report, charts: bool) -> anyhow::Result<()> {
    if let Some(dir) = &plan.settings.out {
        save_bundle(dir, report, charts)
            .with_context(|| format!("writing --out {}", dir.display()))?;
    }
    if let Some(path) = &plan.settings.json {
        report::write_atomic(path, &report::json::render(report))
            .with_context(|| format!("writing --json {}", path.display()))?;
    }
    if let Some(path) = &plan.settings.csv {
        report::write_atomic(path, &report::csv::render(report))
            .with_context(|| format!("writing --csv {}", path.display()))?;
    }
    Ok(())
}

/// Prints the report, then writes the files, charts included (also when
/// interrupted).
fn finish(plan: &Plan, report: &Report) -> anyhow::Result<()> {
    let text = report::text::render(report);
    // A closed pipe (`| head`) is not a failure of the check.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    save_files(plan, report, true)
}

/// The `--out` directory: the text report, the JSON, the surface CSV and,
/// at the end, the charts (SVG and PNG), all of one report.
fn save_bundle(dir: &Path, report: &Report, charts: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    report::write_atomic(
        &dir.join("report.txt"),
        report::text::render(report).as_bytes(),
    )?;
    report::write_atomic(&dir.join("report.json"), &report::json::render(report))?;
    report::write_atomic(&dir.join("surface.csv"), &report::csv::render(report))?;
    if charts {
        report::chart::write_all(report, &dir.join("charts"))
            .map_err(|e| anyhow::anyhow!("charts: {e}"))?;
    }
    Ok(())
}

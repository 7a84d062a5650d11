//! `arrayburn iozone`: iozone 3.487's command lines, tests and text output
//! (docs/iozone.md lists every deviation), and what iozone lacks: JSON, a
//! page-cache warning, a free-space check, test files removed on every
//! exit, and a failing child that ends the run instead of hanging it.
//!
//! Parsing (`args`) → planning (`plan`: paths, space, warnings) → running
//! (`single`, `throughput`, on `io`) → printing (`output`, `biff`, `json`).

pub mod args;
pub mod biff;
pub mod children;
pub mod io;
pub mod json;
pub mod output;
pub mod plan;
pub mod single;
pub mod throughput;

use std::io::Write;
use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::Context;

use crate::outcome::Outcome;
use crate::stop::StopFlag;
use crate::units::ctime;
use args::Config;
use output::Results;
use plan::FilePlan;
use throughput::{PhaseResult, ThroughputTest};

/// Removes the test files on drop (success, error, signal, panic) unless
/// `-w`.
struct Cleanup {
    paths: Vec<PathBuf>,
    keep: bool,
    /// A second signal waits for the removal (none with -w).
    _hold: Option<crate::stop::Hold>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.keep {
            for p in &self.paths {
                // Only the regular files the run made (the plan refuses any
                // other kind of path).
                if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }
}

/// Runs `arrayburn iozone ARGS`.
pub fn run(args: &[String], stop: &StopFlag) -> anyhow::Result<Outcome> {
    let c = args::parse("arrayburn iozone", args)?;
    if c.help {
        show!("{}", output::HELP);
        return Ok(Outcome::Healthy);
    }
    let plan = FilePlan::new(&c)?;
    let _locks = plan.lock_disks()?;
    // A second signal must not leave test files behind (workers stop at
    // the next record, so the wait is short).
    let _cleanup =
        Cleanup { paths: plan.files.clone(), keep: c.keep, _hold: (!c.keep).then(|| stop.hold()) };
    let began_at = SystemTime::now();
    let began = ctime(began_at);
    for w in &plan.warnings {
        tell!("arrayburn iozone: {}", w.replacen("WARNING: ", "warning: ", 1));
    }
    // With `--json -` the JSON has standard output; iozone's text goes to
    // stderr.
    let to_stdout = plan.json.as_ref().is_none_or(|o| !o.is_stdout());
    let mut out: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(std::io::stderr().lock())
    };
    let header = emit(&mut out, output::header(&c, &began, &plan.warnings));
    let mut results = Results { warnings: plan.warnings.clone(), ..Results::default() };
    let ran = header.and_then(|()| {
        if c.throughput() {
            run_throughput(&c, stop, &mut out, &mut results)
        } else {
            run_single(&c, &plan, stop, &mut out, &mut results)
        }
    });
    results.interrupted = stop.is_set();
    if let Err(e) = &ran {
        results.error = Some(format!("{e:#}"));
    }
    drop(out);
    if let Some(o) = &plan.json {
        let doc = json::render(&c, &results, began_at);
        o.write(&doc, true, stop)
            .with_context(|| format!("writing --json {}", o.given.display()))?;
    }
    if results.interrupted {
        let files = if c.keep { "kept (-w)" } else { "removed" };
        tell!("arrayburn iozone: interrupted; partial results kept, test files {files}");
        return Ok(Outcome::Interrupted);
    }
    if ran.as_ref().is_err_and(|e| e.is::<OutputClosed>()) {
        // `| head` took what it wanted: end quietly, as a pipeline expects.
        return Ok(Outcome::Healthy);
    }
    if let Err(e) = &ran
        && let Some(fault) = e.downcast_ref::<StorageFault>()
    {
        // A finding about the storage, not a tool error: exit 1.
        tell!("arrayburn iozone: {fault}");
        return Ok(Outcome::Flagged);
    }
    ran?;
    if let Some(o) = &plan.biff {
        o.write(&biff::render(&c, &results), true, stop)
            .with_context(|| format!("writing -b {}", o.given.display()))?;
    }
    Ok(Outcome::Healthy)
}

fn run_single(
    c: &Config,
    plan: &FilePlan,
    stop: &StopFlag,
    out: &mut impl Write,
    results: &mut Results,
) -> anyhow::Result<()> {
    let path = &plan.files[0];
    let (pairs, recs) = if c.auto_mode() {
        single::auto_pairs(c)
    } else {
        let (kb, rec) = c.size_and_record();
        (vec![(kb, rec)], vec![rec])
    };
    results.recs = recs;
    if c.auto2 {
        emit(
            out,
            format!(
                "{}\n{:>16}{:>8}{:>9}{:>9}{:>8}{:>10}\n",
                " ".repeat(60),
                "kB",
                "reclen",
                "write",
                "rewrite",
                "read",
                "reread"
            ),
        )?;
    } else {
        emit(out, output::table_header(c))?;
    }
    for (kb, rec) in pairs {
        nix::unistd::sync();
        let row = match single::run_pair(c, path, kb, rec, stop) {
            Ok(r) => r,
            Err(_) if stop.is_set() => return Ok(()),
            Err(e) => {
                return Err(fault_or_error(
                    &e,
                    format!("{}: {}", path.display(), explain(c, rec, &e)),
                ));
            }
        };
        let line = if c.auto2 { output::auto2_row(c, &row) } else { output::table_row(c, &row) };
        emit(out, line)?;
        results.rows.push(row);
    }
    emit(out, "\niozone test complete.\n")?;
    if c.excel {
        emit(out, output::excel(c, &results.rows, &results.recs))?;
    }
    Ok(())
}

fn run_throughput(
    c: &Config,
    stop: &StopFlag,
    out: &mut impl Write,
    results: &mut Results,
) -> anyhow::Result<()> {
    let (kb, reclen) = c.size_and_record();
    (results.kb, results.reclen) = (kb, reclen);
    let phases = throughput::phases(c);
    let counts = c.process_counts();
    for (i, &count) in counts.iter().enumerate() {
        if i > 0 {
            emit(out, "\n")?;
        }
        emit(out, output::each_line(c, kb, reclen))?;
        for &phase in &phases {
            let block = if phase.is_retest() && c.no_retest {
                // Not run and not printed; the -R report shows it as 0.00.
                results.blocks.push(PhaseResult::zero(phase, count));
                continue;
            } else {
                throughput::settle(c, stop);
                match run_phase(c, phase, count, kb, reclen, stop) {
                    Ok(b) => b,
                    Err(_) if stop.is_set() => return Ok(()),
                    Err(e) => {
                        let msg = format!(
                            "{} phase with {count} {}: {}",
                            phase.label(),
                            if c.threads { "threads" } else { "processes" },
                            explain(c, reclen, &e)
                        );
                        return Err(fault_or_error(&e, msg));
                    }
                }
            };
            emit(out, output::block(c, &block))?;
            results.blocks.push(block);
        }
        emit(out, "\n")?;
    }
    emit(out, "\n")?;
    if c.excel {
        let rows = report_rows(&phases, &counts, &results.blocks);
        emit(out, output::throughput_report(c, reclen, &rows))?;
    }
    emit(out, "\niozone test complete.\n")?;
    Ok(())
}

/// Runs one phase with `count` children (processes, or threads with -T)
/// and returns its block.
fn run_phase(
    c: &Config,
    phase: ThroughputTest,
    count: usize,
    kb: u64,
    reclen: u64,
    stop: &StopFlag,
) -> std::io::Result<PhaseResult> {
    let run = throughput::PhaseRun { c, phase, count, kb, reclen };
    let (children, parent_secs) = if c.threads {
        throughput::run_threads(&run, stop)?
    } else {
        children::run_processes(&run, stop)?
    };
    Ok(PhaseResult::new(phase, children, parent_secs))
}

/// Standard output went away (a reader such as `head` closed the pipe).
#[derive(Debug, thiserror::Error)]
#[error("standard output closed: the run stopped there")]
struct OutputClosed;

/// Writes a piece of iozone's text and flushes it, so each row shows as it
/// is measured. A closed pipe is [`OutputClosed`]; any other failure ends
/// the run with its error.
fn emit(out: &mut impl Write, text: impl AsRef<str>) -> anyhow::Result<()> {
    match out.write_all(text.as_ref().as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(OutputClosed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("writing iozone's results")),
    }
}

/// The storage failed the test: an I/O error (EIO) or data read back that
/// is not what was written. A finding about the disk (exit 1), not a tool
/// error (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct StorageFault(String);

/// `msg` as a StorageFault when `e` is the storage's fault, else as an
/// error of the run.
fn fault_or_error(e: &std::io::Error, msg: String) -> anyhow::Error {
    if storage_fault(e) { StorageFault(msg).into() } else { anyhow::anyhow!(msg) }
}

/// Whether `e`, or the error of the child it wraps, is the storage's.
fn storage_fault(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::InvalidData
        || e.raw_os_error() == Some(nix::libc::EIO)
        || e.get_ref()
            .and_then(|r| r.downcast_ref::<throughput::ChildError>())
            .is_some_and(|c| storage_fault(&c.source))
}

/// An I/O error in words; EINVAL under `-I` is O_DIRECT refusing the
/// record's size or alignment.
fn explain(c: &Config, reclen: u64, e: &std::io::Error) -> String {
    if c.direct && e.raw_os_error() == Some(nix::libc::EINVAL) {
        return format!(
            "{e}: O_DIRECT (-I) refused a {reclen}-byte record; use a record size that is a multiple of the filesystem's block size (e.g. -r 4k or more), or drop -I"
        );
    }
    e.to_string()
}

/// The throughput report's rows: per phase, the Children-see figure of
/// each process count.
pub fn report_rows(
    phases: &[ThroughputTest],
    counts: &[usize],
    blocks: &[PhaseResult],
) -> Vec<(ThroughputTest, Vec<f64>)> {
    phases
        .iter()
        .map(|&p| {
            let values = counts
                .iter()
                .map(|&n| {
                    blocks
                        .iter()
                        .find(|b| b.phase == p && b.count == n)
                        .map_or(0.0, |b| b.children_see)
                })
                .collect();
            (p, values)
        })
        .collect()
}

//! Reading result files for the fleet report: check and burn-in JSON
//! ([`Doc`]), old or new schema, with their header; a fleet report's own
//! JSON or an iozone result is refused by name, a damaged file skipped with
//! why. It must not judge what it reads (the fleet's rules are in
//! `fleet`'s other files).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::sane;
use crate::device::Identity;
use crate::header::Header;
use crate::judge::Verdict;
use crate::judge::burnin::DiskVerdict;
use crate::judge::fleet::Measured;
use crate::judge::fleet::{RunKind, Sample};
use crate::measure::PassKind;
use crate::report::burnin::BurnReport;
use crate::report::inspect::InspectReport;
use crate::report::{LinkFinding, PassDisk, Report, SCHEMA_VERSION};

/// One result file, read.
#[derive(Debug, Clone)]
pub enum Doc {
    Check(Box<Report>),
    Burnin(Box<BurnReport>),
    /// An incoming inspection: no speeds, its findings its own; never
    /// superseded (a drive used, reset or hiding capacity stays so).
    Inspect(Box<InspectReport>),
    /// A watch's JSON lines: its findings in service, no speeds.
    Watch(Box<super::watch::WatchLog>),
}

impl Doc {
    /// The header it opens with.
    pub(super) fn header(&self) -> &Header {
        match self {
            Doc::Check(r) => &r.header,
            Doc::Burnin(r) => &r.header,
            Doc::Inspect(r) => &r.header,
            Doc::Watch(w) => &w.header,
        }
    }

    /// The host it ran on, and that machine's id where known.
    pub(super) fn host(&self) -> (&str, Option<&str>) {
        let h = self.header();
        (&h.host, h.machine.machine_id.as_deref())
    }

    /// When the run began (RFC 3339).
    pub(super) fn started_at(&self) -> &str {
        &self.header().started_at
    }

    /// When its result was written (RFC 3339): a resumed burn-in keeps its
    /// `started_at`, its later result is later by this.
    pub(super) fn finished_at(&self) -> &str {
        &self.header().finished_at
    }

    /// Whether the run ended by itself, every pass done (not stopped by a
    /// signal; for a check, not a copy saved while it went on). A burn-in
    /// writes its result once, at its end: one written before the shared
    /// header has no `complete`, and is whole unless interrupted.
    pub(super) fn finished(&self) -> bool {
        let h = self.header();
        !h.interrupted && (h.complete || matches!(self, Doc::Burnin(_)))
    }

    /// A check, a burn-in or a read-only soak.
    pub(super) fn kind(&self) -> RunKind {
        match self {
            Doc::Check(_) => RunKind::Check,
            Doc::Burnin(r) if r.verify => RunKind::Verify,
            Doc::Burnin(r) if r.read_only => RunKind::Soak,
            Doc::Burnin(_) => RunKind::Burnin,
            Doc::Inspect(_) => RunKind::Inspect,
            Doc::Watch(_) => RunKind::Watch,
        }
    }

    /// Every disk it measured, as the fleet's samples.
    pub(super) fn samples(&self, source: &str) -> Vec<Sample> {
        let mut out = Vec::new();
        match self {
            Doc::Check(r) => out = check_samples(r, source),
            Doc::Burnin(r) => {
                // A soak's samples are a burn-in's (as before soaks had a
                // kind of their own); a verify's are its own.
                let kind = if r.verify { RunKind::Verify } else { RunKind::Burnin };
                for d in &r.disks {
                    out.push(Sample {
                        errors: d.burn.total_bad(),
                        smart_rose: d
                            .smart
                            .as_ref()
                            .map(|c| {
                                // A log's rise its run listed, not judged, is
                                // no regression of the fleet's either.
                                (c.deltas.iter())
                                    .filter(|x| x.kind != crate::burnin::smart::CounterKind::Logged)
                                    .map(|x| format!("{} {} → {}", x.name, x.before, x.after))
                                    .collect()
                            })
                            .unwrap_or_default(),
                        verdict: d.verdict.word().into(),
                        ..sample(&r.header, (&d.path, &d.identity), source, kind)
                    });
                }
            }
            // Nothing measured: what the drives declared (what the kernel
            // counted in service) is its finding.
            Doc::Inspect(_) | Doc::Watch(_) => {}
        }
        out
    }

    /// The run's verdict in a line, for its host's list.
    pub(super) fn line(&self) -> String {
        match self {
            Doc::Check(r) => {
                let mut line = format!("check of {} disk(s): {}", r.disks.len(), r.summary.message);
                if r.header.interrupted {
                    line = format!("{line} (interrupted)");
                }
                line
            }
            Doc::Burnin(r) => format!(
                "{} of {} disk(s): {}",
                match self.kind() {
                    RunKind::Verify => "verify",
                    RunKind::Soak => "read-only soak",
                    _ => "burn-in",
                },
                r.disks.len(),
                r.summary.message
            ),
            Doc::Inspect(r) => format!("inspection of {} disk(s): {}", r.disks.len(), r.message),
            Doc::Watch(w) => {
                use crate::rundoc::Document;
                format!("watch of {} disk(s) in service: {}", w.disks.len(), w.document().message)
            }
        }
    }

    /// How much of disk `path` it measured (None: not that disk).
    #[cfg(test)]
    pub(super) fn measured(&self, path: &str) -> Option<Measured> {
        self.measured_all().remove(path)
    }

    /// How much of each disk it measured, by path: each pass's rows read
    /// once (linear in rows, for results of thousands of disks).
    pub(super) fn measured_all(&self) -> HashMap<String, Measured> {
        let mut out = HashMap::new();
        match self {
            Doc::Check(r) => {
                for p in &r.passes {
                    for d in &p.disks {
                        let m = out.entry(d.path.clone()).or_insert(Measured::Read {
                            whole: false,
                            sample_s: r.options.sample_s,
                            passes: 0,
                        });
                        if let Measured::Read { whole, passes, .. } = m {
                            *whole |= d.reached_end;
                            *passes |= Measured::pass_bit(p.kind);
                        }
                    }
                }
            }
            Doc::Burnin(r) => {
                for d in &r.disks {
                    out.entry(d.path.clone()).or_insert(Measured::Burned {
                        start: d.start_byte,
                        end: d.end_byte,
                        whole: !r.header.interrupted
                            && d.verdict != DiskVerdict::Interrupted
                            && crate::judge::burnin::burned_whole(&d.burn, r.read_only),
                    });
                }
            }
            Doc::Inspect(_) | Doc::Watch(_) => {}
        }
        out
    }

    /// What the run says of itself.
    pub(super) fn document(&self) -> crate::rundoc::RunDoc {
        use crate::rundoc::Document;
        match self {
            Doc::Check(r) => r.document(),
            Doc::Burnin(r) => r.document(),
            Doc::Inspect(r) => r.document(),
            Doc::Watch(w) => w.document(),
        }
    }

    /// The links below their maximum it found.
    /// Each disk whose kernel log was read in this run, with its path's
    /// events (resets, link down, timeouts, aborts, failed commands).
    pub(super) fn kernel(&self) -> Vec<(String, u64)> {
        let seen = |path: &str, k: Option<&crate::device::kernel::Seen>| {
            let k = k.filter(|k| k.not_read.is_none())?;
            Some((path.to_string(), k.path_events()))
        };
        match self {
            Doc::Check(r) => {
                r.disks.iter().filter_map(|d| seen(&d.path, d.kernel.as_ref())).collect()
            }
            Doc::Burnin(r) => {
                r.disks.iter().filter_map(|d| seen(&d.path, d.kernel.as_ref())).collect()
            }
            Doc::Inspect(_) | Doc::Watch(_) => Vec::new(),
        }
    }

    pub(super) fn links(&self) -> &[LinkFinding] {
        match self {
            Doc::Check(r) => &r.summary.links,
            Doc::Burnin(r) => &r.summary.links,
            Doc::Inspect(_) | Doc::Watch(_) => &[],
        }
    }
}

/// Whether two results ran on one host: the same machine id where both
/// know it, else the same host name.
pub(super) fn same_host(a: (&str, Option<&str>), b: (&str, Option<&str>)) -> bool {
    match (a.1, b.1) {
        (Some(x), Some(y)) => x == y,
        _ => a.0 == b.0,
    }
}

/// A sample of the disk at `path`, as the run with `header` measured it:
/// what every kind of run fills (no speed, errors or verdict yet).
fn sample(header: &Header, (path, id): (&str, &Identity), source: &str, kind: RunKind) -> Sample {
    Sample {
        host: header.host.clone(),
        machine_id: header.machine.machine_id.clone(),
        path: path.to_string(),
        model: id.model.clone(),
        serial: id.serial.clone(),
        wwn: id.wwn.clone(),
        size_bytes: id.size_bytes,
        started_at: header.started_at.clone(),
        source: source.to_string(),
        kind,
        mb_per_s: None,
        errors: 0,
        smart_rose: Vec::new(),
        verdict: String::new(),
        random: None,
    }
}

/// Whether `a` and `b` are surely one machine: both carry a machine id and
/// it is the same (a name alone is reused: a result without an id is never
/// taken for another machine's later run).
pub(super) fn surely_same_host(a: (&str, Option<&str>), b: (&str, Option<&str>)) -> bool {
    matches!((a.1, b.1), (Some(x), Some(y)) if x == y)
}

/// Reads one result file; why not, in one line.
pub fn load(path: &Path) -> Result<Doc, String> {
    read(path)?.ok_or_else(|| another_document(path, "fleet"))
}

/// Why an arrayburn document of another kind (`what`) is not a result.
fn another_document(path: &Path, what: &str) -> String {
    format!(
        "{}: an arrayburn {what} document, not a check's, burn-in's or inspection's result; give the results of check, burnin or inspect",
        path.display()
    )
}

/// The few fields that say what a file is, read before the rest.
#[derive(serde::Deserialize)]
struct Head {
    kind: Option<Value>,
    tool: Option<Value>,
    schema_version: Option<Value>,
}

/// Reads one result file (None: a fleet report, `report --out`'s own, to
/// pass over in a tree of results); why not, in one line. Parsed straight
/// into the typed result, each string cleaned and each number checked on
/// the way (`fleet::sane::from_slice`).
pub fn read(path: &Path) -> Result<Option<Doc>, String> {
    let bytes = crate::input::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if super::watch::is_watch(&bytes) {
        let log = super::watch::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(Some(Doc::Watch(Box::new(log))));
    }
    let Some(kind) = kind_of(path, &bytes)? else { return Ok(None) };
    let why = |e: sane::Unread| match e {
        sane::Unread::OutOfRange(e) => format!(
            "{}: {e}: the file is damaged or was edited; remove it from the inputs",
            path.display()
        ),
        sane::Unread::Json(e) => {
            format!("{}: an arrayburn result this version cannot read ({e})", path.display())
        }
    };
    Ok(Some(match kind {
        RunKind::Burnin => Doc::Burnin(Box::new(sane::from_slice(&bytes).map_err(why)?)),
        RunKind::Inspect => Doc::Inspect(Box::new(sane::from_slice(&bytes).map_err(why)?)),
        _ => Doc::Check(Box::new(lean(sane::from_slice(&bytes).map_err(why)?))),
    }))
}

/// What a file holds, from its few fields that say so: a check's, a
/// burn-in's (or soak's) or an inspection's result; None for a fleet
/// report; why not a result, in one line.
fn kind_of(path: &Path, bytes: &[u8]) -> Result<Option<RunKind>, String> {
    let head = match serde_json::from_slice::<Head>(bytes) {
        Ok(h) => h,
        // JSON, but not an object: no kind, no tool.
        Err(e) if e.is_data() => Head { kind: None, tool: None, schema_version: None },
        Err(e) if e.is_eof() => {
            return Err(format!(
                "{}: truncated (the JSON ends early; was the run or the copy cut short?)",
                path.display()
            ));
        }
        Err(e) => return Err(format!("{}: not JSON ({e})", path.display())),
    };
    let kind = head.kind.unwrap_or(Value::Null);
    let version = head.schema_version.and_then(|v| v.as_u64()).unwrap_or(1);
    // Before the shared header a check had no kind, a burn-in no tool.
    let is_check =
        kind == "check" || (kind.is_null() && head.tool.is_some_and(|t| t == "arrayburn"));
    let found = match () {
        _ if kind == "fleet" => return Ok(None),
        _ if kind == "burnin" => RunKind::Burnin,
        _ if kind == "inspect" => RunKind::Inspect,
        _ if is_check => RunKind::Check,
        _ if kind == "iozone" => return Err(another_document(path, "iozone")),
        _ => {
            return Err(format!(
                "{}: not an arrayburn result (no \"tool\": \"arrayburn\" or \"kind\": \"burnin\")",
                path.display()
            ));
        }
    };
    if version > u64::from(SCHEMA_VERSION) {
        return Err(format!(
            "{}: schema_version {version} is newer than this arrayburn reads ({SCHEMA_VERSION}); use a newer arrayburn",
            path.display()
        ));
    }
    Ok(Some(found))
}

/// A check's result without what the fleet never reads (each row's
/// surface profile and slow reads, each pass's slices: most of a result's
/// bytes), so that thousands of results fit in memory.
fn lean(mut r: Report) -> Report {
    for p in &mut r.passes {
        p.slices = Vec::new();
        for d in &mut p.disks {
            d.slow_reads = Vec::new();
            d.surface.mb_per_s = Vec::new();
            d.surface.reads = Vec::new();
            d.surface.bytes = Vec::new();
        }
    }
    r
}

/// The files named: a file as given, a directory searched (not through
/// symlinks) for `*.json` and watches' `*.jsonl` (not the OCP streams
/// beside them), sorted.
pub fn files(given: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for g in given {
        if g.is_dir() {
            let mut stack = vec![g.clone()];
            while let Some(dir) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&dir) else { continue };
                for e in rd.flatten() {
                    let Ok(ft) = e.file_type() else { continue };
                    if ft.is_dir() {
                        stack.push(e.path());
                    } else if ft.is_file()
                        && (e.path().extension().is_some_and(|x| x == "json")
                            || super::watch::is_watch_file(&e.path()))
                    {
                        out.push(e.path());
                    }
                }
            }
        } else {
            out.push(g.clone());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A check's disks as the fleet's samples.
/// Disk `path`'s own speed in the check's re-measurement of its serial
/// verdict (read alone, alternating with a peer): the median of its
/// slices; None where its serial verdict was not re-measured.
fn remeasured(r: &Report, path: &str) -> Option<f64> {
    let c = (r.confirmations.iter()).find(|c| c.path == path && c.pass == PassKind::Serial)?;
    let own: Vec<f64> = (c.measured.iter())
        .filter(|s| s.path == path && s.mb_per_s > 0.0)
        .map(|s| s.mb_per_s)
        .collect();
    crate::stats::median(&own)
}

/// A disk's random reads at depth 1, alone, in a check that read them
/// whole (none failed).
fn fingerprint(r: &Report, path: &str) -> Option<crate::judge::fleet::Fingerprint> {
    let row = r.random.as_ref()?.disks.iter().find(|d| d.path == path)?;
    let f = &row.alone.iter().find(|f| f.figures.depth == 1)?.figures;
    (f.failed == 0 && f.reads > 0).then_some(crate::judge::fleet::Fingerprint {
        reads: f.reads,
        iops: f.iops?,
        p50_us: f.latency_us.p50,
        p99_us: f.latency_us.p99,
    })
}

fn check_samples(r: &Report, source: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    // Each disk's rows in every pass, found once (a result of
    // thousands of disks is read in linear time).
    let mut rows: HashMap<&str, Vec<(PassKind, &PassDisk)>> = HashMap::new();
    for p in &r.passes {
        for x in &p.disks {
            rows.entry(x.path.as_str()).or_default().push((p.kind, x));
        }
    }
    for d in &r.disks {
        let rows = rows.get(d.path.as_str()).map(Vec::as_slice).unwrap_or_default();
        let errors = rows.iter().map(|(_, x)| x.read_errors).sum();
        let serial = (rows.iter()).find(|(k, _)| *k == PassKind::Serial).filter(|(_, x)| {
            x.read_errors == 0 && x.window_elapsed_s >= crate::judge::MIN_JUDGED_S
        });
        // A serial figure the check re-measured is judged by what the
        // re-measurement settled, never by the reading it overruled.
        let speed = serial.map(|(_, x)| remeasured(r, &d.path).unwrap_or(x.window_mb_per_s));
        let worst = rows.iter().map(|(_, x)| x.verdict).find(|v| *v != Verdict::Ok);
        out.push(Sample {
            mb_per_s: speed,
            random: fingerprint(r, &d.path),
            errors,
            verdict: worst.map_or("ok".into(), |v| v.word().into()),
            ..sample(&r.header, (&d.path, &d.identity), source, RunKind::Check)
        });
    }
    out
}

//! Turning measurements into the [`Report`]: numbers per disk, the peer
//! comparisons and verdicts of `stats::verdict`, and the summary sentence.

use std::collections::BTreeSet;
use std::time::SystemTime;

use super::{Disk, Flag, Options, Pass, PassDisk, Report, SCHEMA_VERSION, Summary, SurfaceProfile};
use crate::plan::Plan;
use crate::run::{DiskRun, PassKind, PassRun, SlowRead, Stopped, Window};
use crate::stats::surface::{Against, Profile, SlowRegion, slow_regions};
use crate::stats::verdict::{
    ArrayVerdict, PathFinding, TAIL_FACTOR, TAIL_FLOOR_MS, Thresholds, Verdict, classify,
    lost_alone, pct_of_group_median, shared_path,
};
use crate::stats::{latency_bins, latency_us};
use crate::units::{human_bytes_binary, mb_per_s, rfc3339};

/// A disk measured for less than this is reported but not compared: a few
/// milliseconds of reading (a tiny or very fast device) is mostly noise.
pub const MIN_JUDGED_S: f64 = 1.0;

/// What the report needs to know about the run besides its measurements.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// When the check started.
    pub started_at: SystemTime,
    /// The command line as typed.
    pub command_line: Vec<String>,
    /// Whether a signal stopped the check.
    pub interrupted: bool,
    /// Whether every pass has run: the final report (false in the copies
    /// saved after each pass).
    pub complete: bool,
}

/// Builds the report for the passes measured so far.
pub fn build(plan: &Plan, passes: &[PassRun], info: &RunInfo) -> Report {
    let th = plan.settings.thresholds;
    let serial_speed = serial_speeds(plan, passes);
    let mut finding = None;
    let passes: Vec<Pass> = passes
        .iter()
        .map(|p| {
            let (pass, f) = judge_pass(plan, p, &serial_speed, &th);
            finding = finding.or(f);
            pass
        })
        .collect();
    let summary = summarize(&passes, finding, info.interrupted, &th);
    Report {
        schema_version: SCHEMA_VERSION,
        tool: "arrayburn".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        host: nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default(),
        started_at: rfc3339(info.started_at),
        finished_at: rfc3339(SystemTime::now()),
        interrupted: info.interrupted,
        complete: info.complete && !info.interrupted,
        command_line: info.command_line.clone(),
        options: options(plan),
        disks: disks(plan),
        passes,
        summary,
    }
}

fn options(plan: &Plan) -> Options {
    let s = &plan.settings;
    Options {
        block_bytes: s.block,
        sample_s: s.sample.as_secs_f64(),
        serial_full: s.serial_full,
        parallel_full: s.parallel_full,
        slow_pct: s.thresholds.slow_pct,
        fast_pct: s.thresholds.fast_pct,
        engine: "pread".into(),
        max_errors: s.max_errors,
        buckets: s.buckets,
        slow_read_ms: s.slow_read.as_secs_f64() * 1e3,
        stall_ms: s.thresholds.stall_ms,
        spots: s.spots,
        seek_readers: s.seek_readers,
    }
}

fn disks(plan: &Plan) -> Vec<Disk> {
    plan.devices
        .iter()
        .zip(&plan.groups)
        .map(|(d, g)| Disk {
            path: d.given.clone(),
            identity: d.identity.clone(),
            in_use: d.in_use.clone(),
            peer_group: *g,
        })
        .collect()
}

/// Each disk's clean serial window speed (None: not measured, errors, or
/// measured too briefly to judge).
fn serial_speeds(plan: &Plan, passes: &[PassRun]) -> Vec<Option<f64>> {
    let mut out = vec![None; plan.devices.len()];
    for (disk, run) in passes
        .iter()
        .filter(|p| p.kind == PassKind::Serial)
        .flat_map(|p| &p.disks)
    {
        let (_, secs, speed) = window(run);
        out[*disk] = (run.failed_reads == 0 && secs >= MIN_JUDGED_S).then_some(speed);
    }
    out
}

/// (bytes, seconds, MB/s) over the sample window.
fn window(run: &DiskRun) -> (u64, f64, f64) {
    let (bytes, elapsed) = run.window;
    (
        bytes,
        elapsed.as_secs_f64(),
        mb_per_s(bytes, elapsed.as_secs_f64()),
    )
}

fn measure_row(plan: &Plan, disk: usize, run: &DiskRun) -> PassDisk {
    let (window_bytes, window_elapsed_s, window_mb_per_s) = window(run);
    let elapsed_s = run.elapsed.as_secs_f64();
    PassDisk {
        path: plan.devices[disk].given.clone(),
        bytes: run.bytes,
        elapsed_s,
        mb_per_s: mb_per_s(run.bytes, elapsed_s),
        window_bytes,
        window_elapsed_s,
        window_mb_per_s,
        reads: run.reads,
        latency_us: latency_us(&run.latency_ns),
        latency_bins: latency_bins(&run.latency_ns),
        slow_read_count: run.slow_read_count,
        slow_reads: run.slow_reads.clone(),
        p9999_pct_of_peers: None,
        surface: SurfaceProfile {
            buckets: run.surface.bytes.len(),
            bytes: run.surface.bytes.clone(),
            reads: run.surface.reads.clone(),
            mb_per_s: run.surface.mb_per_s(),
        },
        slow_regions: Vec::new(),
        pct_of_peers: None,
        pct_of_serial: None,
        seek_pct_of_peers: None,
        time_pct_of_peers: None,
        reached_end: run.reached_end,
        read_errors: run.failed_reads,
        bad_ranges: run.bad_ranges,
        bad_bytes: run.bad_bytes,
        unread_bytes: run.unread_bytes,
        stopped: run.stopped,
        device_gone: run.gone,
        errors: run.errors.clone(),
        verdict: Verdict::Ok,
        reasons: Vec::new(),
    }
}

fn judge_pass(
    plan: &Plan,
    p: &PassRun,
    serial: &[Option<f64>],
    th: &Thresholds,
) -> (Pass, Option<PathFinding>) {
    let mut rows: Vec<PassDisk> = p
        .disks
        .iter()
        .map(|(d, r)| measure_row(plan, *d, r))
        .collect();
    let groups: Vec<usize> = p.disks.iter().map(|(d, _)| plan.groups[*d]).collect();
    let clean = |r: &PassDisk, v: f64| {
        (r.read_errors == 0 && r.window_elapsed_s >= MIN_JUDGED_S).then_some(v)
    };
    let speeds: Vec<Option<f64>> = rows.iter().map(|r| clean(r, r.window_mb_per_s)).collect();
    let full = p.window == Window::Full;
    let times: Vec<Option<f64>> = rows
        .iter()
        .map(|r| {
            (full && r.reached_end && r.bytes > 0)
                .then(|| r.elapsed_s / r.bytes as f64)
                .and_then(|t| clean(r, t))
        })
        .collect();
    let time_pct = pct_of_group_median(&times, &groups);
    let mut finding = None;
    if p.kind != PassKind::Serial {
        for (row, (d, _)) in rows.iter_mut().zip(&p.disks) {
            row.pct_of_serial = serial[*d]
                .zip(clean(row, row.window_mb_per_s))
                .map(|(s, v)| 100.0 * v / s);
        }
    }
    if p.kind == PassKind::Parallel {
        let pairs: Vec<(f64, f64)> = rows
            .iter()
            .zip(&p.disks)
            .filter_map(|(r, (d, _))| serial[*d].zip(clean(r, r.window_mb_per_s)))
            .collect();
        finding = shared_path(&pairs, th);
    }
    let bottleneck = finding.is_some_and(|f| f.shared_bottleneck);
    let path_limited = p.kind == PassKind::Parallel && bottleneck;
    let tails: Vec<Option<f64>> = rows.iter().map(|r| clean(r, r.latency_us.p9999)).collect();
    let pct = pct_of_group_median(&speeds, &groups);
    let tail_pct = pct_of_group_median(&tails, &groups);
    // Under a shared bottleneck the path sets each read's pace, and under
    // seek stress the seeks do: the serial pass judges the surface.
    let regions = if path_limited || p.kind == PassKind::Seek {
        vec![Vec::new(); rows.len()]
    } else {
        let profiles: Vec<Profile> = rows
            .iter()
            .zip(&p.disks)
            .map(|(r, (d, _))| Profile {
                mb_per_s: &r.surface.mb_per_s,
                reads: &r.surface.reads,
                bytes: &r.surface.bytes,
                size: plan.devices[*d].identity.size_bytes,
                group: plan.groups[*d],
            })
            .collect();
        slow_regions(&profiles)
    };
    // Seek pass: each disk's loss against its own serial speed, compared
    // with its peers' loss (seeking costs every HDD most of its speed).
    let kept: Vec<Option<f64>> = rows.iter().map(|r| r.pct_of_serial).collect();
    let seek_pct = if kept.iter().any(Option::is_some) {
        pct_of_group_median(&kept, &groups)
    } else {
        pct_of_group_median(&speeds, &groups)
    };
    let array_kept = finding.map(|f| f.median_pct_of_serial);
    for ((i, row), regions) in rows.iter_mut().enumerate().zip(regions) {
        row.slow_regions = regions;
        if p.kind == PassKind::Seek {
            row.seek_pct_of_peers = seek_pct[i];
        }
        (
            row.pct_of_peers,
            row.time_pct_of_peers,
            row.p9999_pct_of_peers,
        ) = (pct[i], time_pct[i], tail_pct[i]);
        (row.verdict, row.reasons) = verdict_for(p.kind, row, path_limited, array_kept, th);
    }
    let pass = Pass {
        kind: p.kind,
        window: if full { "full" } else { "sample" }.into(),
        started_at: rfc3339(p.started_at),
        elapsed_s: p.elapsed.as_secs_f64(),
        aggregate_mb_per_s: rows.iter().map(|r| r.window_mb_per_s).sum(),
        interrupted: p.interrupted,
        disks: rows,
    };
    (pass, finding)
}

/// Slow-sector evidence: a read over the stall threshold (the first read
/// of a run is left out: a spun-down drive takes seconds to spin up), and,
/// unless a shared path decided the numbers, a p99.99 latency far above
/// the peers'.
fn latency_reasons(row: &PassDisk, path_limited: bool, th: &Thresholds) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(w) = stall(row, th) {
        out.push(format!(
            "a read took {:.0} ms at byte {} (stall threshold {:.0} ms); {} slow read(s) logged",
            w.latency_ms, w.offset, th.stall_ms, row.slow_read_count
        ));
    }
    if let Some(x) = tail_factor(row, path_limited) {
        out.push(format!(
            "p99.99 read latency {:.0} ms is {x:.1}x its peers' median",
            row.latency_us.p9999 / 1e3
        ));
    }
    out
}

/// The slowest read at or over the stall threshold, the run's first read
/// left out (a spun-down drive takes seconds to spin up).
pub(super) fn stall<'a>(row: &'a PassDisk, th: &Thresholds) -> Option<&'a SlowRead> {
    row.slow_reads
        .iter()
        .filter(|s| s.index > 1)
        .max_by(|a, b| a.latency_ms.total_cmp(&b.latency_ms))
        .filter(|w| w.latency_ms >= th.stall_ms)
}

/// How many times its peers' median p99.99 the disk's p99.99 is, when that
/// marks it slow: over [`TAIL_FACTOR`], at least [`TAIL_FLOOR_MS`], and not
/// decided by a shared path.
pub(super) fn tail_factor(row: &PassDisk, path_limited: bool) -> Option<f64> {
    let tail_ms = row.latency_us.p9999 / 1e3;
    row.p9999_pct_of_peers
        .filter(|p| !path_limited && *p > TAIL_FACTOR * 100.0 && tail_ms >= TAIL_FLOOR_MS)
        .map(|p| p / 100.0)
}

/// Whether a completion time per byte, as % of the peers', is slow: time
/// is the inverse of speed, so over 100/slow_pct of the median time.
pub(super) fn slow_time(time_pct: f64, th: &Thresholds) -> bool {
    time_pct > 10_000.0 / th.slow_pct
}

/// A slow region in words: where, how slow, against what.
fn region_reason(r: &SlowRegion) -> String {
    let against = match r.against {
        Against::Peers => "the same region of its peers",
        Against::Neighbours => "its neighbouring regions",
    };
    format!(
        "slow region from byte {} to {} ({} to {}): {:.1} MB/s, {:.0}% of the {:.1} MB/s of {against}",
        r.start_byte,
        r.end_byte,
        human_bytes_binary(r.start_byte),
        human_bytes_binary(r.end_byte),
        r.mb_per_s,
        100.0 * r.mb_per_s / r.reference_mb_per_s,
        r.reference_mb_per_s
    )
}

/// The evidence for an "error" verdict in one sentence: a device that went
/// away, or media errors with their exact extent.
fn fault_reason(row: &PassDisk) -> String {
    let first = row.errors.first();
    let at = first
        .map(|e| format!(" at byte {} ({})", e.offset, e.message))
        .unwrap_or_default();
    if row.device_gone {
        return format!("the device went away{at}; nothing more could be read");
    }
    let stopped = match row.stopped {
        Some(Stopped::MaxErrors) => "; stopped early at --max-errors",
        Some(Stopped::Interrupted) => "; stopped early by a signal",
        Some(Stopped::DeviceGone) | None => "",
    };
    let unread = if row.unread_bytes > 0 {
        format!(
            "; {} bytes not read (the area fails wholesale and was skipped, or time ran out)",
            row.unread_bytes
        )
    } else {
        String::new()
    };
    let first = first
        .map(|e| format!(", first at byte {} ({})", e.offset, e.message))
        .unwrap_or_default();
    format!(
        "{} unreadable range(s), {} bytes{first}; {} failed read(s){unread}{stopped}",
        row.bad_ranges, row.bad_bytes, row.read_errors
    )
}

/// The verdict of one row. Under a shared bottleneck the parallel numbers
/// say nothing about single disks (the path decided each one's share).
/// `array_kept`: the % of its serial speed the array's median disk keeps in
/// the parallel pass.
fn verdict_for(
    kind: PassKind,
    row: &PassDisk,
    path_limited: bool,
    array_kept: Option<f64>,
    th: &Thresholds,
) -> (Verdict, Vec<String>) {
    if row.read_errors > 0 {
        return (Verdict::Error, vec![fault_reason(row)]);
    }
    // A stalled read is a disk problem whatever the path does.
    let stall = latency_reasons(row, path_limited, th);
    if path_limited {
        return if stall.is_empty() {
            (Verdict::Ok, Vec::new())
        } else {
            (Verdict::Slow, stall)
        };
    }
    let mut slow = stall;
    slow.extend(row.slow_regions.iter().take(3).map(region_reason));
    if row.slow_regions.len() > 3 {
        slow.push(format!("{} more slow regions", row.slow_regions.len() - 3));
    }
    let mut fast = Vec::new();
    if kind == PassKind::Seek {
        // Seeking costs every disk speed: only a loss beyond its peers'
        // counts.
        let pct = row.seek_pct_of_peers.unwrap_or(100.0);
        let what = match row.pct_of_serial {
            Some(s) => format!(
                "under seek stress it keeps {s:.0}% of its serial speed, {pct:.0}% of what its peers keep"
            ),
            None => format!("under seek stress {pct:.0}% of its peers' median speed"),
        };
        match classify(row.seek_pct_of_peers, th) {
            Verdict::Slow => slow.push(what),
            Verdict::Fast => fast.push(what),
            _ => {}
        }
    } else {
        let pct = row.pct_of_peers.unwrap_or(100.0);
        match classify(row.pct_of_peers, th) {
            Verdict::Slow => slow.push(format!("{pct:.0}% of its peers' median speed")),
            Verdict::Fast => fast.push(format!("{pct:.0}% of its peers' median speed")),
            _ => {}
        }
        if let Some(s) = row.pct_of_serial.filter(|s| lost_alone(*s, array_kept, th)) {
            let median = array_kept
                .map(|m| format!(" while the array's median disk keeps {m:.0}%"))
                .unwrap_or_default();
            slow.push(format!("{s:.0}% of its own serial speed{median}"));
        }
    }
    if let Some(t) = row.time_pct_of_peers {
        if slow_time(t, th) {
            slow.push(format!("took {t:.0}% of its peers' median time"));
        } else if t < 10_000.0 / th.fast_pct {
            fast.push(format!("took {t:.0}% of its peers' median time"));
        }
    }
    match (slow.is_empty(), fast.is_empty()) {
        (false, _) => (Verdict::Slow, slow),
        (true, false) => (Verdict::Fast, fast),
        _ => (Verdict::Ok, Vec::new()),
    }
}

fn summarize(
    passes: &[Pass],
    finding: Option<PathFinding>,
    interrupted: bool,
    th: &Thresholds,
) -> Summary {
    let flagged: Vec<Flag> = passes
        .iter()
        .flat_map(|p| p.disks.iter().map(move |d| (p.kind, d)))
        .filter(|(_, d)| d.verdict != Verdict::Ok)
        .map(|(pass, d)| Flag {
            path: d.path.clone(),
            pass,
            verdict: d.verdict,
            reasons: d.reasons.clone(),
        })
        .collect();
    let sum = |k: PassKind| {
        passes
            .iter()
            .find(|p| p.kind == k)
            .map(|p| p.aggregate_mb_per_s)
    };
    let (serial_sum, parallel) = (sum(PassKind::Serial), sum(PassKind::Parallel));
    // A fast disk is marked, but only a slow or failing one is a fault.
    let faulty = flagged
        .iter()
        .any(|f| matches!(f.verdict, Verdict::Slow | Verdict::Error));
    let n_disks = passes.first().map(|p| p.disks.len()).unwrap_or(0);
    let compared: BTreeSet<&str> = passes
        .iter()
        .flat_map(|p| &p.disks)
        .filter(|d| d.pct_of_peers.is_some() || d.verdict != Verdict::Ok)
        .map(|d| d.path.as_str())
        .collect();
    let mut not_compared: Vec<String> = Vec::new();
    for d in passes.iter().flat_map(|p| &p.disks) {
        if !compared.contains(d.path.as_str()) && !not_compared.contains(&d.path) {
            not_compared.push(d.path.clone());
        }
    }
    let mut s = Summary {
        verdict: ArrayVerdict::of(faulty, n_disks > 0 && not_compared.is_empty()),
        not_compared,
        shared_bottleneck: finding.is_some_and(|f| f.shared_bottleneck),
        // With both passes, the disks compared in both (clean in each), so
        // that the sums and their ratio describe the same disks.
        serial_sum_mb_per_s: finding.map(|f| f.serial_mb_per_s).or(serial_sum),
        parallel_mb_per_s: finding.map(|f| f.parallel_mb_per_s).or(parallel),
        parallel_pct_of_serial_sum: finding.map(|f| f.aggregate_pct_of_serial),
        median_pct_of_serial: finding.map(|f| f.median_pct_of_serial),
        flagged,
        disk_verdicts: super::advice::advise(passes, th, finding),
        message: String::new(),
    };
    s.message = message(&s, passes, interrupted, th);
    s
}

fn message(s: &Summary, passes: &[Pass], interrupted: bool, th: &Thresholds) -> String {
    let mut parts = Vec::new();
    if interrupted {
        parts.push("INTERRUPTED: partial results.".to_string());
    }
    let describe = |f: &Flag| {
        let pass = f.pass.name();
        format!(
            "{} {} in the {pass} pass ({})",
            f.path,
            verdict_word(f.verdict),
            f.reasons.join("; ")
        )
    };
    let (fast, faults): (Vec<&Flag>, Vec<&Flag>) =
        s.flagged.iter().partition(|f| f.verdict == Verdict::Fast);
    let n_disks = passes.first().map(|p| p.disks.len()).unwrap_or(0);
    match s.verdict {
        ArrayVerdict::Healthy => parts.push(format!(
            "HEALTHY: no disk below {:.0}% of its peers and no read errors ({n_disks} disks).",
            th.slow_pct
        )),
        ArrayVerdict::NotJudged => parts.push(format!(
            "NOT JUDGED: no disk slow and no read errors, but {} of {n_disks} disks could not be compared with peers, so health is not claimed (exit 3).",
            s.not_compared.len()
        )),
        ArrayVerdict::Flagged => {
            let named: Vec<String> = faults.iter().map(|f| describe(f)).collect();
            parts.push(format!("FLAGGED: {}.", named.join("; ")));
        }
    }
    let short: Vec<&str> = s
        .not_compared
        .iter()
        .filter(|p| {
            passes
                .iter()
                .flat_map(|x| &x.disks)
                .any(|d| d.path == **p && d.window_elapsed_s < MIN_JUDGED_S)
        })
        .map(String::as_str)
        .collect();
    let alone: Vec<&str> = s
        .not_compared
        .iter()
        .map(String::as_str)
        .filter(|p| !short.contains(p))
        .collect();
    if !short.is_empty() {
        parts.push(format!(
            "Not compared (read for under {MIN_JUDGED_S:.0} s, too short to judge; use a longer --sample or larger disks): {}.",
            short.join(", ")
        ));
    }
    if !alone.is_empty() {
        parts.push(format!(
            "Not compared (no peer of the same model, size and kind to compare with; check it beside disks like it): {}.",
            alone.join(", ")
        ));
    }
    if !fast.is_empty() {
        let named: Vec<String> = fast.iter().map(|f| describe(f)).collect();
        parts.push(format!(
            "Faster than peers (not a fault, but not identical either): {}.",
            named.join("; ")
        ));
    }
    if let (Some(f), Some(ss), Some(p)) = (
        s.parallel_pct_of_serial_sum,
        s.serial_sum_mb_per_s,
        s.parallel_mb_per_s,
    ) {
        let med = s.median_pct_of_serial.unwrap_or(0.0);
        if s.shared_bottleneck {
            parts.push(format!(
                "SHARED BOTTLENECK: all disks lose speed together in parallel (median disk keeps {med:.0}% of its solo speed): \
                 the array delivers {p:.0} MB/s, {f:.0}% of the {ss:.0} MB/s the disks read alone; the controller, expander, \
                 bus or CPU is the limit, not the disks."
            ));
        } else {
            parts.push(format!("No shared bottleneck: in parallel the array delivers {p:.0} MB/s, {f:.0}% of the serial sum."));
        }
    }
    parts.join(" ")
}

/// The word for a verdict in sentences.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "ok",
        Verdict::Slow => "slow",
        Verdict::Fast => "fast",
        Verdict::Error => "failed reads",
    }
}

//! A run as Prometheus metrics (`--metrics FILE`), in the text format
//! node_exporter's textfile collector reads: a `# HELP` and `# TYPE` line
//! per family, every value a gauge, stable labels (`host`, `device`,
//! `model`, `serial`, `wwn`; a fleet's by the host each disk was on),
//! label values escaped. The file is written beside and renamed over
//! (`output`), as the collector expects, after each pass of a check,
//! every `--progress-interval` while a burn-in runs, and at the end.
//!
//! What is said of the run (its verdict, the disks to act on) is its run
//! document's; the figures are the report's. It must not judge.

use std::fmt::Write as _;

use crate::header::Header;
use crate::judge::{ArrayVerdict, Verdict};
use crate::rundoc::{Document, RunDoc};

/// Labels of one sample: name and value, in order.
pub type Labels = Vec<(&'static str, String)>;

/// One metric family: its name, help, and samples.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Labels, f64)>,
}

/// Metrics being gathered, in the order first named.
#[derive(Default)]
pub struct Metrics {
    families: Vec<Family>,
}

impl Metrics {
    /// Adds a sample of the gauge `name` (its help said once).
    pub fn gauge(&mut self, (name, help): (&'static str, &'static str), labels: Labels, v: f64) {
        let at = match self.families.iter().position(|f| f.name == name) {
            Some(i) => i,
            None => {
                self.families.push(Family { name, help, samples: Vec::new() });
                self.families.len() - 1
            }
        };
        self.families[at].samples.push((labels, v));
    }

    /// The text format, each family whole: HELP, TYPE, its samples.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in &self.families {
            let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
            let _ = writeln!(out, "# TYPE {} gauge", f.name);
            for (labels, v) in &f.samples {
                let _ = writeln!(out, "{}{} {}", f.name, labels_text(labels), number(*v));
            }
        }
        out
    }
}

/// `{a="x",b="y"}`, or nothing without labels.
fn labels_text(labels: &Labels) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let each: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
    format!("{{{}}}", each.join(","))
}

/// A label value as the text format takes it: backslash, double quote and
/// line feed escaped (a model string or a host name is text).
pub fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A value as the text format writes it (`NaN` and the infinities by
/// their names).
fn number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".into(),
        v if v == f64::INFINITY => "+Inf".into(),
        v if v == f64::NEG_INFINITY => "-Inf".into(),
        v => format!("{v}"),
    }
}

/// A disk's labels: the host it is on, its path, model, serial, WWN.
pub fn disk(host: &str, path: &str, id: &crate::device::Identity) -> Labels {
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    vec![
        ("host", host.to_string()),
        ("device", path.to_string()),
        ("model", opt(&id.model)),
        ("serial", opt(&id.serial)),
        ("wwn", opt(&id.wwn)),
    ]
}

/// `labels` with one more.
pub fn with(mut labels: Labels, key: &'static str, value: impl Into<String>) -> Labels {
    labels.push((key, value.into()));
    labels
}

const RUN_VERDICT: (&str, &str) = (
    "arrayburn_run_verdict",
    "The run's verdict, one series per verdict: 1 for the run's own (healthy, flagged, not_judged, interrupted).",
);
const RUN_EXIT: (&str, &str) = (
    "arrayburn_run_exit_status",
    "The exit status the run's verdict gives: 0 healthy, 1 flagged, 3 not judged, 130 interrupted.",
);
const RUN_COMPLETE: (&str, &str) = (
    "arrayburn_run_complete",
    "1 when the run has ended whole; 0 while it runs, or for a partial result.",
);
const RUN_TIME: (&str, &str) = (
    "arrayburn_run_last_written_timestamp_seconds",
    "When this file was written (Unix time); a stale one means the run stopped writing it.",
);
const RUN_START: (&str, &str) =
    ("arrayburn_run_start_timestamp_seconds", "When the run began (Unix time).");
const ACT_ON: (&str, &str) = (
    "arrayburn_disk_to_act_on",
    "1 for each disk the run's verdict says to act on, with the action (return, recheck, check_path; a fleet's slow, worse, finding).",
);
const FINDING: (&str, &str) = (
    "arrayburn_disk_finding",
    "1 for each finding on a disk to act on, by its stable code (crate::finding: never_written, slower_than_peers, kernel_path...).",
);
const NOT_JUDGED: (&str, &str) = (
    "arrayburn_disk_not_judged",
    "1 for each disk whose health the run does not claim: not compared with peers, or not decided (reason).",
);

/// What every run says of itself: its verdict (a series per verdict, 1
/// for its own), exit status, whether whole, when, and the disks to act on
/// and not judged, each once (`command`: check, burnin, report).
pub fn run(m: &mut Metrics, command: &str, header: &Header, doc: &RunDoc) {
    let run = || vec![("command", command.to_string()), ("host", header.host.clone())];
    // A fleet's disks are `host:path`: labelled by the host they are on.
    let on = |path: &str| match path.split_once(":/").filter(|_| command == "report") {
        Some((host, rest)) => {
            vec![
                ("command", command.to_string()),
                ("host", host.into()),
                ("device", format!("/{rest}")),
            ]
        }
        None => with(run(), "device", path),
    };
    let own = match doc.outcome {
        crate::outcome::Outcome::Healthy => ArrayVerdict::Healthy,
        crate::outcome::Outcome::Flagged => ArrayVerdict::Flagged,
        crate::outcome::Outcome::NotJudged => ArrayVerdict::NotJudged,
        crate::outcome::Outcome::Interrupted => ArrayVerdict::Interrupted,
    };
    use ArrayVerdict::*;
    for v in [Healthy, Flagged, NotJudged, Interrupted] {
        m.gauge(RUN_VERDICT, with(run(), "verdict", v.word()), f64::from(u8::from(v == own)));
    }
    m.gauge(RUN_EXIT, run(), f64::from(doc.outcome.exit_code()));
    m.gauge(RUN_COMPLETE, run(), f64::from(u8::from(header.complete && !header.interrupted)));
    m.gauge(RUN_START, run(), unix(&header.started_at));
    m.gauge(RUN_TIME, run(), now());
    let mut said: Vec<(&str, &str)> = Vec::new();
    for a in &doc.to_act_on {
        if !said.contains(&(a.path.as_str(), a.action.as_str())) {
            said.push((&a.path, &a.action));
            m.gauge(ACT_ON, with(on(&a.path), "action", a.action.clone()), 1.0);
        }
    }
    findings(m, doc, &on);
    let why = |p: &String, reason: &str| with(on(p), "reason", reason);
    for p in &doc.not_judged {
        m.gauge(NOT_JUDGED, why(p, "not_compared"), 1.0);
    }
    for u in &doc.unsure {
        m.gauge(NOT_JUDGED, why(&u.path, "not_decided"), 1.0);
    }
}

/// Each finding on a disk to act on, once per disk and code.
fn findings(m: &mut Metrics, doc: &RunDoc, on: &dyn Fn(&str) -> Vec<(&'static str, String)>) {
    let mut coded: Vec<(&str, crate::finding::Code)> = Vec::new();
    for a in &doc.to_act_on {
        for f in &a.findings {
            if !coded.contains(&(a.path.as_str(), f.code)) {
                coded.push((&a.path, f.code));
                m.gauge(FINDING, with(on(&a.path), "code", f.code.word()), 1.0);
            }
        }
    }
}

/// An RFC 3339 time as Unix seconds (NaN where it does not parse).
fn unix(rfc3339: &str) -> f64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339).map_or(f64::NAN, |t| t.timestamp() as f64)
}

/// Now, in Unix seconds.
fn now() -> f64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    t.map_or(0.0, |d| d.as_secs_f64())
}

const CHECK_MB: (&str, &str) = (
    "arrayburn_check_read_bytes_per_second",
    "Bytes a second each disk read over its sample window, per pass.",
);
const CHECK_PCT: (&str, &str) = (
    "arrayburn_check_percent_of_peers",
    "Each disk's speed as % of its peers' median, per pass (where it was compared).",
);
const CHECK_FAILED: (&str, &str) =
    ("arrayburn_check_failed_reads", "Reads that failed on each disk, per pass.");
const CHECK_SLOW_READS: (&str, &str) = (
    "arrayburn_check_slow_reads",
    "Reads that took the slow-read time or more on each disk, per pass.",
);
const CHECK_VERDICT: (&str, &str) = (
    "arrayburn_check_disk_verdict",
    "1 for each disk's verdict in each pass (ok, slow, fast, failed_reads, unsure; not_compared: nothing found, no peer to compare it with).",
);

const RANDOM_IOPS: (&str, &str) = (
    "arrayburn_check_random_reads_per_second",
    "Whole random reads a second on each disk, per depth, read alone or together (with every disk).",
);
const RANDOM_LATENCY: (&str, &str) = (
    "arrayburn_check_random_read_latency_seconds",
    "Random read latency on each disk at each depth, read alone or together, at percentile 50, 99, 99.9 and 100 (the slowest).",
);
const RANDOM_FOUND: (&str, &str) = (
    "arrayburn_check_random_finding",
    "1 for each kind of finding the random reads made of a disk (kind: retrying, slow, no_queueing, failed, unanswered).",
);
const VIBRATION_LOSS: (&str, &str) = (
    "arrayburn_check_vibration_loss_ratio",
    "Share of its random reads each disk lost while its neighbours sought (0 to 1), with its bay.",
);
const VIBRATION_NAMED: (&str, &str) = (
    "arrayburn_check_vibration_named",
    "1 for each disk the neighbour pass named (it lost far more than the others), with its bay.",
);

/// The random reads' and the neighbour pass's metrics of a check.
fn check_random(m: &mut Metrics, r: &crate::report::Report) {
    let labels = |path: &str| Some(disk(&r.header.host, path, &r.disk(path)?.identity));
    for row in r.random.iter().flat_map(|x| &x.disks) {
        let Some(on) = labels(&row.path) else { continue };
        let runs = (row.alone.iter().map(|f| ("alone", f)))
            .chain(row.together.iter().map(|f| ("together", f)));
        for (when, f) in runs {
            let at = || with(with(on.clone(), "depth", f.figures.depth.to_string()), "when", when);
            m.gauge(RANDOM_IOPS, at(), f.figures.iops.unwrap_or(f64::NAN));
            // Nothing read, no latency measured (not one of 0 s).
            if f.figures.reads == 0 {
                continue;
            }
            let l = &f.figures.latency_us;
            for (q, us) in [("50", l.p50), ("99", l.p99), ("99.9", l.p999), ("100", l.max)] {
                m.gauge(RANDOM_LATENCY, with(at(), "percentile", q), us / 1e6);
            }
        }
    }
    // A disk and kind once, however many depths or reads showed it.
    let mut found: Vec<(&str, String)> =
        r.summary.random.iter().map(|f| (f.path.as_str(), word(&f.kind))).collect();
    found.sort();
    found.dedup();
    for (path, kind) in found {
        let Some(on) = labels(path) else { continue };
        m.gauge(RANDOM_FOUND, with(on, "kind", kind), 1.0);
    }
    for row in r.vibration.iter().flat_map(|x| &x.disks) {
        let Some(on) = labels(&row.path) else { continue };
        let at = with(on, "bay", row.bay.clone().unwrap_or_default());
        m.gauge(VIBRATION_LOSS, at.clone(), row.loss_pct.map_or(f64::NAN, |p| p / 100.0));
        if r.summary.vibration.iter().any(|f| f.path == row.path) {
            m.gauge(VIBRATION_NAMED, at, 1.0);
        }
    }
}

/// A check's metrics: the run's, and per disk and pass its speed, % of
/// peers, failed and slow reads, and verdict; the random reads' and the
/// neighbour pass's.
pub fn check(r: &crate::report::Report) -> Metrics {
    let mut m = Metrics::default();
    run(&mut m, "check", &r.header, &r.document());
    for p in &r.passes {
        for d in &p.disks {
            let Some(id) = r.disk(&d.path).map(|x| &x.identity) else { continue };
            let at = || with(disk(&r.header.host, &d.path, id), "pass", p.kind.name());
            m.gauge(CHECK_MB, at(), d.window_mb_per_s * 1e6);
            if let Some(pct) = d.pct_of_peers {
                m.gauge(CHECK_PCT, at(), pct);
            }
            m.gauge(CHECK_FAILED, at(), d.read_errors as f64);
            m.gauge(CHECK_SLOW_READS, at(), d.slow_read_count as f64);
            // Ok without a comparison is no verdict on speed: said so.
            let word = match d.verdict {
                Verdict::Ok if d.pct_of_peers.is_none() => "not_compared",
                v => verdict_word(v),
            };
            m.gauge(CHECK_VERDICT, with(at(), "verdict", word), 1.0);
        }
    }
    check_random(&mut m, r);
    for d in &r.disks {
        if let Some(k) = &d.kernel {
            kernel_events(&mut m, &|| disk(&r.header.host, &d.path, &d.identity), k);
        }
    }
    m
}

const KERNEL_EVENTS: (&str, &str) = (
    "arrayburn_kernel_events",
    "Lines the kernel logged about each disk during the run, by kind (io_error, timeout, abort, reset, link_down, link_up, failed_command, offline), and the timeouts it counted without a line (kind timeout_counted).",
);

/// What the kernel saw of a disk, as series (none where its log was not
/// read: no zero that reads as "quiet").
fn kernel_events(m: &mut Metrics, labels: &dyn Fn() -> Labels, k: &crate::device::kernel::Seen) {
    if k.not_read.is_some() {
        return;
    }
    use crate::device::kernel::Kind;
    let kinds = [
        Kind::IoError,
        Kind::Timeout,
        Kind::Abort,
        Kind::Reset,
        Kind::LinkDown,
        Kind::LinkUp,
        Kind::FailedCommand,
        Kind::Offline,
    ];
    for kind in kinds {
        m.gauge(KERNEL_EVENTS, with(labels(), "kind", kind.word()), k.count(kind) as f64);
    }
    m.gauge(KERNEL_EVENTS, with(labels(), "kind", "timeout_counted"), k.rose("iotmo_cnt") as f64);
}

/// A pass verdict as a label value (one word).
fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Error => "failed_reads",
        v => v.word(),
    }
}

const BURN_MB: (&str, &str) = (
    "arrayburn_burnin_bytes_per_second",
    "Bytes a second each disk wrote or read back over the run, by phase (write, verify).",
);
const BURN_PCT: (&str, &str) = (
    "arrayburn_burnin_percent_of_peers",
    "Each disk's write or verify speed as % of its peers' median, by phase (where compared).",
);
const BURN_BAD: (&str, &str) = (
    "arrayburn_burnin_bad_bytes",
    "Bytes found bad on each disk, by class (write_error, corrupted, misdirected, zeros, ...).",
);
const BURN_DONE: (&str, &str) =
    ("arrayburn_burnin_bytes_done", "Bytes of each disk's whole run done (every pass and phase).");
const BURN_TOTAL: (&str, &str) = (
    "arrayburn_burnin_bytes_planned",
    "Bytes of each disk's whole run in all (every pass and phase).",
);
const BURN_PASSES: (&str, &str) = (
    "arrayburn_burnin_passes_done",
    "Passes each disk has written and verified (whole, or over the share arrayburn_burnin_tested_ratio gives).",
);
const BURN_TESTED: (&str, &str) = (
    "arrayburn_burnin_tested_ratio",
    "Share of each disk's range a burn-in fitted to a --deadline wrote and verified, in stripes (1: all of it).",
);
const BURN_VERDICT: (&str, &str) = (
    "arrayburn_burnin_disk_verdict",
    "1 for each disk's verdict (healthy, return, recheck, check_path, not_judged, interrupted).",
);
const BURN_SMART: (&str, &str) = (
    "arrayburn_burnin_smart_rise",
    "How much each SMART counter rose on each disk over the run (after minus before), by counter and kind.",
);
const BURN_HOT: (&str, &str) =
    ("arrayburn_burnin_hottest_celsius", "The hottest each disk was during the run (SMART), °C.");

/// A burn-in's metrics at its end: the run's, and per disk its speeds,
/// bad bytes by class, bytes and passes done, SMART rises, hottest
/// temperature and verdict.
pub fn burnin(r: &crate::report::burnin::BurnReport) -> Metrics {
    let mut m = Metrics::default();
    // A verify's series are its own: a dashboard tells it from the burn-in.
    let command = if r.verify { "verify" } else { "burnin" };
    run(&mut m, command, &r.header, &r.document());
    for d in &r.disks {
        let at = || disk(&r.header.host, &d.path, &d.identity);
        let phases = [("write", d.write_mb_per_s, d.write_pct_of_peers)];
        for (phase, mb, pct) in
            phases.into_iter().chain([("verify", d.verify_mb_per_s, d.verify_pct_of_peers)])
        {
            mb.into_iter().for_each(|v| m.gauge(BURN_MB, with(at(), "phase", phase), v * 1e6));
            pct.into_iter().for_each(|v| m.gauge(BURN_PCT, with(at(), "phase", phase), v));
        }
        for (class, n) in &d.burn.bad_bytes {
            m.gauge(BURN_BAD, with(at(), "class", word(class)), *n as f64);
        }
        let len = d.end_byte - d.start_byte;
        let phases = if r.read_only { 1 } else { 2 };
        let total = u64::from(r.passes) * phases * len;
        m.gauge(BURN_DONE, at(), (d.burn.written_bytes + d.burn.verified_bytes).min(total) as f64);
        m.gauge(BURN_TOTAL, at(), total as f64);
        m.gauge(BURN_PASSES, at(), f64::from(d.burn.passes_done));
        if let Some(t) = &d.tested {
            m.gauge(
                BURN_TESTED,
                at(),
                t.coverage.tested_bytes as f64 / t.coverage.range_bytes.max(1) as f64,
            );
        }
        m.gauge(BURN_VERDICT, with(at(), "verdict", d.verdict.word()), 1.0);
        for x in d.smart.iter().flat_map(|c| &c.deltas) {
            let labels = with(with(at(), "counter", x.name.clone()), "kind", word(&x.kind));
            m.gauge(BURN_SMART, labels, x.after.saturating_sub(x.before) as f64);
        }
        if let Some(c) = d.hottest_c {
            m.gauge(BURN_HOT, at(), c as f64);
        }
        if let Some(k) = &d.kernel {
            kernel_events(&mut m, &at, k);
        }
    }
    m
}

/// A value's name as the JSON gives it (`"write_error"`).
pub fn word<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

const LIVE_RATIO: (&str, &str) = (
    "arrayburn_burnin_progress_ratio",
    "How far each disk's whole run is, 0 to 1 (every pass and phase).",
);
const LIVE_PASS: (&str, &str) =
    ("arrayburn_burnin_pass", "The pass each disk is in now (from 1), by phase.");
const LIVE_ETA: (&str, &str) = (
    "arrayburn_burnin_eta_seconds",
    "Seconds until the whole run ends, at the speeds seen so far (absent while not known).",
);

/// What a burn-in says while it runs (every `--progress-interval`): the
/// run not complete yet, and per disk its bytes done and in all, how far,
/// its pass and phase; the whole run's ETA where known.
pub fn burnin_live(
    plan: &[crate::burnin::DiskPlan],
    ticks: &[crate::progress::BurnTick],
    eta_s: Option<f64>,
) -> Metrics {
    let host = nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned());
    let host = host.unwrap_or_default();
    let started_at = plan.first().map_or("", |d| d.point.started_at.as_str());
    let verify = plan.first().is_some_and(|d| d.point.verifies.is_some());
    let command = if verify { "verify" } else { "burnin" };
    let disks = (plan.iter().zip(ticks)).map(|(d, t)| {
        let dev = &d.target.dev;
        (disk(&host, &dev.given, &dev.identity), t)
    });
    let mut m = Metrics::default();
    let run = || vec![("command", command.to_string()), ("host", host.clone())];
    m.gauge(RUN_COMPLETE, run(), 0.0);
    m.gauge(RUN_START, run(), unix(started_at));
    m.gauge(RUN_TIME, run(), now());
    for (labels, t) in disks {
        m.gauge(BURN_DONE, labels.clone(), t.done as f64);
        m.gauge(BURN_TOTAL, labels.clone(), t.total as f64);
        m.gauge(LIVE_RATIO, labels.clone(), t.done as f64 / t.total.max(1) as f64);
        m.gauge(LIVE_PASS, with(labels.clone(), "phase", t.phase), f64::from(t.pass));
    }
    if let Some(e) = eta_s {
        m.gauge(LIVE_ETA, run(), e);
    }
    m
}

const FLEET_RESULTS: (&str, &str) =
    ("arrayburn_fleet_results", "Result files the fleet report read (and skipped).");
const FLEET_DISKS: (&str, &str) = ("arrayburn_fleet_disks", "Distinct disks across the results.");
const FLEET_RUN: (&str, &str) = (
    "arrayburn_fleet_run_state",
    "1 for each run whose own verdict is not healthy and not superseded: its state (flagged, not_judged, interrupted, incomplete).",
);
const FLEET_MB: (&str, &str) = (
    "arrayburn_fleet_disk_read_bytes_per_second",
    "Each disk's serial read speed (bytes a second) in its latest check, by the host it was on.",
);
const FLEET_OUT: (&str, &str) = (
    "arrayburn_fleet_disk_percent_of_model",
    "A disk slow or fast for its model and size across the fleet: its % of their median (verdict slow or fast).",
);
const FLEET_ACKED: (&str, &str) = (
    "arrayburn_fleet_acknowledged",
    "Findings acknowledged (report --ack): listed, not flagging, until their value moves.",
);
const FLEET_WORSE: (&str, &str) =
    ("arrayburn_fleet_disk_worse", "1 for each disk worse than in its earlier runs.");
const FLEET_TAIL: (&str, &str) = (
    "arrayburn_fleet_random_p99_seconds",
    "Latest depth-1 random read p99 of each disk whose tail is long against its model's across the fleet.",
);

/// A fleet report's metrics: the run's, what was read, each standing run
/// finding, each disk's latest speed, those slow or fast for their model
/// and those worse than before.
pub fn fleet(r: &crate::fleet::FleetReport) -> Metrics {
    let mut m = Metrics::default();
    run(&mut m, "report", &r.header, &r.document());
    m.gauge(FLEET_RESULTS, vec![("read", "read".into())], r.sources.len() as f64);
    m.gauge(FLEET_RESULTS, vec![("read", "skipped".into())], r.skipped.len() as f64);
    m.gauge(FLEET_DISKS, Vec::new(), r.disks() as f64);
    for f in r.standing() {
        let labels = vec![
            ("host", f.host.clone()),
            ("kind", f.kind.word().into()),
            ("started", f.started_at.clone()),
            ("state", f.state.word().into()),
        ];
        m.gauge(FLEET_RUN, labels, 1.0);
    }
    let labels = |host: &str, path: &str, model: &Option<String>, serial: &Option<String>| {
        let opt = |v: &Option<String>| v.clone().unwrap_or_default();
        vec![
            ("host", host.into()),
            ("device", path.into()),
            ("model", opt(model)),
            ("serial", opt(serial)),
        ]
    };
    for s in crate::judge::fleet::latest_speeds(r.samples.iter()) {
        let at = with(
            labels(&s.host, &s.path, &s.model, &s.serial),
            "wwn",
            s.wwn.clone().unwrap_or_default(),
        );
        m.gauge(FLEET_MB, at, s.mb_per_s.map_or(f64::NAN, |v| v * 1e6));
    }
    for o in &r.outliers {
        let at = with(labels(&o.host, &o.path, &o.model, &o.serial), "verdict", o.verdict.word());
        m.gauge(FLEET_OUT, at, o.pct_of_model);
    }
    for g in r.regressions.iter().filter(|g| !g.acknowledged) {
        m.gauge(FLEET_WORSE, labels(&g.host, &g.path, &g.model, &g.serial), 1.0);
    }
    for t in &r.tails {
        m.gauge(FLEET_TAIL, labels(&t.host, &t.path, &t.model, &t.serial), t.p99_us / 1e6);
    }
    for a in &r.acknowledged {
        let at = vec![
            ("host", a.host.clone()),
            ("device", a.path.clone()),
            ("finding", a.ack.finding.clone()),
            ("who", a.ack.who.clone()),
        ];
        m.gauge(FLEET_ACKED, at, 1.0);
    }
    m
}

const WATCH_WINDOW: (&str, &str) =
    ("arrayburn_watch_window_seconds", "The length of the last window watched (seconds).");
const WATCH_OPS: (&str, &str) = (
    "arrayburn_watch_requests_per_second",
    "Requests each disk completed a second in the last window, by direction (the kernel's counters).",
);
const WATCH_BYTES: (&str, &str) = (
    "arrayburn_watch_bytes_per_second",
    "Bytes each disk moved a second in the last window, by direction.",
);
const WATCH_LATENCY: (&str, &str) = (
    "arrayburn_watch_request_latency_seconds",
    "The kernel's mean time per completed request in the last window (in queue and on the disk), by direction.",
);
const WATCH_UTIL: (&str, &str) = (
    "arrayburn_watch_utilisation_ratio",
    "The share of the last window each disk had a request in flight (0-1).",
);
const WATCH_PEERS: (&str, &str) = (
    "arrayburn_watch_latency_over_peers_ratio",
    "Each disk's latency over its peers' median at a similar load in the last window, by direction (absent where not compared).",
);
const WATCH_STANDING: (&str, &str) = (
    "arrayburn_watch_standing",
    "1 for how each disk stood against its peers in the last window, by direction (idle, load_differs, no_peers, compared, slow).",
);
const WATCH_FAIL_SLOW: (&str, &str) = (
    "arrayburn_watch_fail_slow_since_timestamp_seconds",
    "Each disk named fail-slow now, by direction: since when (Unix time).",
);
const WATCH_GROUP_SLOW: (&str, &str) = (
    "arrayburn_watch_group_slow_since_timestamp_seconds",
    "Each peer group slow together now (its path or workload, not a disk), by direction: since when (Unix time).",
);
const WATCH_GONE: (&str, &str) =
    ("arrayburn_watch_gone", "1 for each disk the kernel no longer shows.");
const WATCH_ERRORS: (&str, &str) = (
    "arrayburn_watch_command_errors",
    "The kernel's count of each disk's failed commands since boot (device/ioerr_cnt; absent where it keeps none).",
);

/// One disk's figures and standing in a watch's window.
fn watched_disk(m: &mut Metrics, l: Labels, d: &crate::run::watch::DiskWindow) {
    let dir = |k: &str| with(l.clone(), "direction", k);
    if let Some(w) = &d.window {
        for (k, f) in [("read", w.read), ("write", w.write)] {
            m.gauge(WATCH_OPS, dir(k), f.ops_per_s);
            m.gauge(WATCH_BYTES, dir(k), f.mb_per_s * 1e6);
            m.gauge(WATCH_LATENCY, dir(k), f.ms / 1e3);
        }
        m.gauge(WATCH_UTIL, l.clone(), w.util_pct / 100.0);
    }
    for (k, s) in [("read", d.read), ("write", d.write)] {
        use crate::judge::watch::Standing;
        if let Standing::Compared { times } | Standing::Slow { times } = s {
            m.gauge(WATCH_PEERS, dir(k), times);
        }
        m.gauge(WATCH_STANDING, with(dir(k), "standing", s.kind()), 1.0);
    }
    if let Some(n) = d.errors {
        m.gauge(WATCH_ERRORS, l.clone(), n as f64);
    }
}

/// A watch's metrics after a window: the run's (not complete until its
/// end), each disk's figures and standing, and the findings standing.
pub fn watch(
    host: &str,
    started_at: &str,
    disks: &[crate::run::watch::Watched],
    t: &crate::run::watch::Tick,
    complete: bool,
) -> Metrics {
    use crate::run::watch::Event;
    let mut m = Metrics::default();
    let run = || vec![("command", "watch".to_string()), ("host", host.to_string())];
    m.gauge(RUN_COMPLETE, run(), if complete { 1.0 } else { 0.0 });
    m.gauge(RUN_START, run(), unix(started_at));
    m.gauge(RUN_TIME, run(), now());
    m.gauge(WATCH_WINDOW, run(), t.secs);
    let labels = |path: &str| {
        let d = disks.iter().find(|d| d.path == path);
        d.map_or_else(
            || vec![("host", host.to_string()), ("device", path.to_string())],
            |d| disk(host, &d.path, &d.id),
        )
    };
    for d in &t.disks {
        watched_disk(&mut m, labels(&d.path), d);
    }
    for e in &t.open {
        match e {
            Event::FailSlow { path, direction, since, .. } => {
                m.gauge(WATCH_FAIL_SLOW, with(labels(path), "direction", *direction), unix(since))
            }
            Event::GroupSlow { paths, pool, direction, since, .. } => {
                let l = vec![
                    ("host", host.to_string()),
                    ("pool", pool.clone().unwrap_or_default()),
                    ("devices", paths.join(",")),
                    ("direction", direction.to_string()),
                ];
                m.gauge(WATCH_GROUP_SLOW, l, unix(since))
            }
            Event::Gone { path } => m.gauge(WATCH_GONE, labels(path), 1.0),
            _ => {}
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_not_compared_is_not_called_ok() {
        let mut r = crate::report::fixture("demo");
        r.passes[0].disks[0].pct_of_peers = None;
        let text = check(&r).render();
        let serial = "device=\"/dev/loop0\",model=\"\",serial=\"\",wwn=\"\",pass=\"serial\"";
        let line = |v: &str| {
            format!("arrayburn_check_disk_verdict{{host=\"vm\",{serial},verdict=\"{v}\"}} 1")
        };
        assert!(text.contains(&line("not_compared")), "{text}");
        assert!(!text.contains(&line("ok")), "{text}");
    }

    #[test]
    fn a_run_that_read_nothing_has_no_latency_and_a_finding_is_one_series() {
        use crate::judge::random::{Figures, When, unanswered};
        use crate::measure::{RandomDisk, RandomRead, RandomRun, RandomSpec, Stopped};
        let mut r = crate::report::fixture("demo");
        let path = r.disks[0].path.clone();
        let hung = RandomRun { stopped: Some(Stopped::Hung), ..RandomRun::new(1) };
        let disk = RandomDisk { alone: vec![hung.clone()], ..RandomDisk::default() };
        let spec =
            RandomSpec { block: 4096, depths: vec![1], length: std::time::Duration::from_secs(1) };
        let read = RandomRead { spec, disks: vec![disk] };
        let section = crate::report::random::section(
            &read,
            (std::slice::from_ref(&path), &[0]),
            Default::default(),
        );
        r.random = Some(section);
        // Unanswered in the random reads and again in the neighbour pass.
        let f = |when| unanswered(&path, &Figures::of(&hung), when).unwrap();
        r.summary.random = vec![f(When::Alone), f(When::Beside)];
        let text = check(&r).render();
        assert!(!text.contains("arrayburn_check_random_read_latency_seconds{"), "{text}");
        let found =
            text.lines().filter(|l| l.starts_with("arrayburn_check_random_finding{")).count();
        assert_eq!(found, 1, "{text}");
        assert!(text.contains("arrayburn_check_random_reads_per_second{"), "{text}");
    }

    #[test]
    fn a_fleet_disk_is_labelled_by_the_host_it_is_on() {
        let r = crate::report::fixture("demo");
        let docs = [("a.json".to_string(), crate::fleet::Doc::Check(Box::new(r)))];
        let f = crate::fleet::judge(&docs, Vec::new(), &Default::default());
        let text = fleet(&f).render();
        let act: Vec<&str> =
            text.lines().filter(|l| l.starts_with("arrayburn_disk_to_act_on{")).collect();
        assert!(!act.is_empty(), "{text}");
        for l in act {
            assert!(l.contains("host=\"vm\",device=\"/dev/loop2\""), "{l}");
        }
    }

    #[test]
    fn label_values_are_escaped_and_each_family_has_help_and_type() {
        let mut m = Metrics::default();
        let labels = vec![("model", "a\"b\\c\nd".to_string())];
        m.gauge(("x_one", "One."), labels, 1.5);
        m.gauge(("x_two", "Two."), Vec::new(), f64::NAN);
        m.gauge(("x_one", "One."), vec![("model", "e".to_string())], 2.0);
        let text = m.render();
        assert_eq!(
            text,
            "# HELP x_one One.\n# TYPE x_one gauge\nx_one{model=\"a\\\"b\\\\c\\nd\"} 1.5\nx_one{model=\"e\"} 2\n\
             # HELP x_two Two.\n# TYPE x_two gauge\nx_two NaN\n"
        );
    }

    #[test]
    fn a_recorded_check_says_its_verdict_once_and_each_disk_per_pass() {
        let r = crate::report::fixture("demo");
        let text = check(&r).render();
        let verdicts: Vec<&str> =
            text.lines().filter(|l| l.starts_with("arrayburn_run_verdict{")).collect();
        assert_eq!(verdicts.len(), 4, "{text}");
        assert!(text.contains(
            "arrayburn_run_verdict{command=\"check\",host=\"vm\",verdict=\"flagged\"} 1"
        ));
        assert!(text.contains("arrayburn_run_exit_status{command=\"check\",host=\"vm\"} 1"));
        assert!(text.contains(
            "arrayburn_check_disk_verdict{host=\"vm\",device=\"/dev/loop2\",model=\"\",serial=\"\",wwn=\"\",pass=\"serial\",verdict=\"slow\"} 1"
        ));
        let act: Vec<&str> =
            text.lines().filter(|l| l.starts_with("arrayburn_disk_to_act_on{")).collect();
        assert_eq!(act.len(), 1, "{text}");
        assert!(act[0].contains("device=\"/dev/loop2\",action=\""), "{text}");
        assert_eq!(text.matches("# TYPE arrayburn_check_read_bytes_per_second gauge").count(), 1);
    }

    #[test]
    fn each_finding_on_a_disk_to_act_on_is_a_series_by_its_code() {
        use crate::finding::{Code, Finding};
        let mut r = crate::report::fixture("demo");
        // A result written before codes: no finding series.
        assert!(!check(&r).render().contains("arrayburn_disk_finding{"));
        r.summary.disk_verdicts[0].findings = vec![
            Finding::of(Code::SlowerThanPeers),
            Finding::counting(Code::SlowReads, 3),
            Finding::of(Code::SlowerThanPeers),
        ];
        let text = check(&r).render();
        let found: Vec<&str> =
            text.lines().filter(|l| l.starts_with("arrayburn_disk_finding{")).collect();
        assert_eq!(found.len(), 2, "once per code: {text}");
        assert!(
            found[0].contains("device=\"/dev/loop2\"")
                && found[0].ends_with("code=\"slower_than_peers\"} 1"),
            "{text}"
        );
        assert!(found[1].ends_with("code=\"slow_reads\"} 1"), "{text}");
    }
}

//! A run as an OCP Test & Validation diag stream (`--ocp-diag FILE`): JSON
//! lines of the ocp-diag-core output schema 2.0, which hardware-validation
//! suites collect one stream per test run. The stream opens with the schema
//! version and the run's start (the machine as the device under test, each
//! disk a `hardwareInfo`), then a step per part of the run (a check's
//! passes, its random reads, its neighbour pass; a burn-in's or a verify's
//! burn; an inspection), each with its measurements, their units and, where
//! one of the run's own rules is a plain bound, that bound as a validator;
//! then the step `verdict`, a diagnosis per disk (`PASS`, `FAIL`, or
//! `UNKNOWN` where the run did not decide), and the run's end with its
//! status. A copy saved while the run goes on has no end (the stream is not
//! over).
//!
//! A pure function of the report: the diagnoses are the run document's
//! verdicts, never decided here. A validator is written only where it says
//! exactly what the rule says (a failed read, a bad byte, a SMART counter
//! that rose, hours above a new drive's); a speed's judgement against its
//! peers (intervals, re-measurement) is the diagnosis's, and its measurement
//! carries the threshold as metadata, not as a validator that could
//! contradict the verdict.

use serde_json::{Value, json};

use crate::device::Identity;
use crate::header::Header;
use crate::rundoc::{Document, RunDoc};

/// The schema version this stream follows (ocp-diag-core, `output/root.json`).
const SCHEMA: (u32, u32) = (2, 0);

/// One measurement of a disk (or of the run, without one).
struct Measure {
    name: String,
    value: Value,
    unit: &'static str,
    disk: Option<usize>,
    /// `(type, value, name)`: the rule the value is held to.
    validators: Vec<(&'static str, Value, String)>,
    metadata: Option<Value>,
}

impl Measure {
    fn of(name: impl Into<String>, value: impl Into<Value>, unit: &'static str) -> Self {
        let (name, value) = (name.into(), value.into());
        Measure { name, value, unit, disk: None, validators: Vec::new(), metadata: None }
    }
    fn on(mut self, disk: usize) -> Self {
        self.disk = Some(disk);
        self
    }
    fn held(mut self, kind: &'static str, value: impl Into<Value>, rule: &str) -> Self {
        self.validators.push((kind, value.into(), rule.to_string()));
        self
    }
    fn noted(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }
}

/// A part of the run: its name, when it began, what it measured, and
/// what it says in words.
struct Step {
    name: String,
    started_at: String,
    measures: Vec<Measure>,
    logs: Vec<(&'static str, String)>,
}

impl Step {
    fn new(name: impl Into<String>, started_at: &str) -> Self {
        let (name, started_at) = (name.into(), started_at.to_string());
        Step { name, started_at, measures: Vec::new(), logs: Vec::new() }
    }
}

/// A run as the stream takes it.
struct Diag<'a> {
    header: &'a Header,
    /// `arrayburn check`, `arrayburn burnin`, ...
    name: &'static str,
    parameters: Value,
    /// Each disk's path and what the kernel says of it (model, serial,
    /// firmware); its index is its `hardwareInfoId`'s.
    disks: Vec<(String, Hardware)>,
    steps: Vec<Step>,
    doc: RunDoc,
}

/// What a disk is, as far as the run knows.
#[derive(Default)]
struct Hardware {
    vendor: Option<String>,
    model: Option<String>,
    serial: Option<String>,
    firmware: Option<String>,
    kind: Option<&'static str>,
}

impl From<&Identity> for Hardware {
    fn from(id: &Identity) -> Self {
        use crate::burnin::smart::DriveKind;
        let kind = match DriveKind::of(id) {
            DriveKind::Nvme => "NVMe drive",
            DriveKind::Hdd => "hard disk",
            DriveKind::Ssd => "solid-state drive",
        };
        Hardware {
            vendor: id.vendor.clone(),
            model: id.model.clone(),
            serial: id.serial.clone(),
            firmware: id.firmware.clone(),
            kind: Some(kind),
        }
    }
}

/// A disk's `hardwareInfoId`.
fn hw_id(i: usize) -> String {
    format!("disk{i}")
}

impl Diag<'_> {
    fn disk(&self, path: &str) -> Option<usize> {
        self.disks.iter().position(|(p, _)| p == path)
    }

    fn render(&self) -> Vec<u8> {
        let mut out = Lines { bytes: Vec::new(), seq: 0 };
        let h = self.header;
        out.push(&h.started_at, json!({"schemaVersion": {"major": SCHEMA.0, "minor": SCHEMA.1}}));
        out.run(&h.started_at, json!({"testRunStart": self.start()}));
        for (i, step) in self.steps.iter().enumerate() {
            self.step(&mut out, &format!("step{i}"), step);
        }
        self.verdicts(&mut out, &format!("step{}", self.steps.len()));
        // A copy saved while the run goes on: the stream is not over.
        if h.exit_status.is_none() {
            return out.bytes;
        }
        // Why the run did not complete: stopped, or a disk not measured
        // whole (gone, hung).
        let why = match &self.doc.cut {
            _ if h.interrupted => Some(("interrupted", self.doc.message.clone())),
            Some(c) if !h.complete => Some(("not-measured-whole", c.words.clone())),
            _ if !h.complete => Some(("not-measured-whole", self.doc.message.clone())),
            _ => None,
        };
        if let Some((symptom, message)) = why {
            let error = json!({"symptom": symptom, "message": message});
            out.run(&h.finished_at, json!({"error": error}));
        }
        let status = if h.complete && !h.interrupted { "COMPLETE" } else { "ERROR" };
        let result = match self.doc.outcome {
            _ if !self.doc.to_act_on.is_empty() => "FAIL",
            crate::outcome::Outcome::Healthy => "PASS",
            _ => "NOT_APPLICABLE",
        };
        out.run(&h.finished_at, json!({"testRunEnd": {"status": status, "result": result}}));
        out.bytes
    }

    fn start(&self) -> Value {
        let h = self.header;
        let kernel = h.machine.kernel.clone().unwrap_or_default();
        let hardware: Vec<Value> = (self.disks.iter().enumerate())
            .map(|(i, (path, hw))| {
                let mut v = json!({"hardwareInfoId": hw_id(i), "name": hw.model.clone().unwrap_or_else(|| path.clone()), "location": path});
                let fields = [
                    ("serialNumber", &hw.serial),
                    ("manufacturer", &hw.vendor),
                    ("manufacturerPartNumber", &hw.model),
                    ("version", &hw.firmware),
                ];
                for (key, value) in fields {
                    if let Some(x) = value {
                        v[key] = json!(x);
                    }
                }
                if let Some(k) = hw.kind {
                    v["partType"] = json!(k);
                }
                v
            })
            .collect();
        let dut = json!({
            "dutInfoId": h.machine.machine_id.clone().unwrap_or_else(|| h.host.clone()),
            "name": h.host,
            "platformInfos": [{"info": format!("Linux {kernel}")}],
            "softwareInfos": [
                {"softwareInfoId": "arrayburn", "name": "arrayburn", "version": h.tool_version, "softwareType": "APPLICATION"},
                {"softwareInfoId": "kernel", "name": "linux", "version": kernel, "softwareType": "SYSTEM"},
            ],
            "hardwareInfos": hardware,
        });
        json!({
            "name": self.name,
            "version": h.tool_version,
            "commandLine": h.command_line.join(" "),
            "parameters": self.parameters,
            "dutInfo": dut,
        })
    }

    fn step(&self, out: &mut Lines, id: &str, step: &Step) {
        out.step(&step.started_at, id, json!({"testStepStart": {"name": step.name}}));
        let at = &self.header.finished_at;
        for m in &step.measures {
            let mut v = json!({"name": m.name, "value": m.value});
            if !m.unit.is_empty() {
                v["unit"] = json!(m.unit);
            }
            if let Some(i) = m.disk {
                v["hardwareInfoId"] = json!(hw_id(i));
            }
            if !m.validators.is_empty() {
                let each = m
                    .validators
                    .iter()
                    .map(|(kind, value, name)| json!({"type": kind, "value": value, "name": name}));
                v["validators"] = Value::Array(each.collect());
            }
            if let Some(meta) = &m.metadata {
                v["metadata"] = meta.clone();
            }
            out.step(at, id, json!({"measurement": v}));
        }
        for (severity, message) in &step.logs {
            out.step(at, id, json!({"log": {"severity": severity, "message": message}}));
        }
        out.step(at, id, json!({"testStepEnd": {"status": "COMPLETE"}}));
    }

    /// The step `verdict`: a diagnosis per disk, the run's own verdict.
    fn verdicts(&self, out: &mut Lines, id: &str) {
        let at = &self.header.finished_at;
        out.step(at, id, json!({"testStepStart": {"name": "verdict"}}));
        let doc = &self.doc;
        let cut = doc.cut.as_ref().map(|c| (c.disks.as_slice(), c.words.as_str()));
        for (i, (path, _)) in self.disks.iter().enumerate() {
            let acts: Vec<_> = doc.to_act_on.iter().filter(|a| &a.path == path).collect();
            let notes: Vec<&str> =
                doc.notes.iter().filter(|(p, _)| p == path).map(|(_, s)| s.as_str()).collect();
            let (kind, verdict, message) = if !acts.is_empty() {
                let words: Vec<&str> = acts.iter().map(|a| a.sentence.as_str()).collect();
                ("FAIL", format!("disk-{}", acts[0].action.replace('_', "-")), words.join(" "))
            } else if doc.is_unsure(path) {
                (
                    "UNKNOWN",
                    "disk-unsure".into(),
                    "neither blamed nor cleared: read it again".into(),
                )
            } else if doc.not_judged.contains(path) {
                (
                    "UNKNOWN",
                    "disk-not-judged".into(),
                    "nothing found, but its health is not claimed (not compared with peers, or not read)".into(),
                )
            } else if let Some((_, words)) = cut.filter(|(d, _)| d.contains(path)) {
                ("UNKNOWN", "disk-not-measured-whole".into(), words.to_string())
            } else if doc.outcome == crate::outcome::Outcome::Interrupted {
                ("UNKNOWN", "disk-interrupted".into(), doc.message.clone())
            } else {
                ("PASS", "disk-healthy".into(), "nothing found".into())
            };
            let message = match notes.is_empty() {
                true => message,
                false => format!("{message} ({})", notes.join("; ")),
            };
            let d = json!({"verdict": verdict, "type": kind, "message": message, "hardwareInfoId": hw_id(i)});
            out.step(at, id, json!({"diagnosis": d}));
            // Its findings by their stable codes, beside the diagnosis.
            let found: Vec<&crate::finding::Finding> =
                acts.iter().flat_map(|a| &a.findings).collect();
            if !found.is_empty() {
                let content = json!({"hardwareInfoId": hw_id(i), "findings": found});
                let ext = json!({"name": "arrayburn.findings", "content": content});
                out.step(at, id, json!({"extension": ext}));
            }
        }
        out.step(at, id, json!({"log": {"severity": "INFO", "message": doc.message}}));
        out.step(at, id, json!({"testStepEnd": {"status": "COMPLETE"}}));
    }
}

/// The lines that end a stream of `seq` lines whose run's worker was
/// killed before its end: an error, and `testRunEnd` ERROR. `SIGNAL`, and
/// the timestamp `"AT"`, are put in by the process that saw it die.
pub fn killed_tail(seq: u64) -> Vec<u8> {
    let mut out = Lines { bytes: Vec::new(), seq };
    let message = "the run's worker process was killed by SIGNAL before its end: the stream holds what it had saved";
    out.run("AT", json!({"error": {"symptom": "killed", "message": message}}));
    out.run("AT", json!({"testRunEnd": {"status": "ERROR", "result": "NOT_APPLICABLE"}}));
    out.bytes
}

/// The stream being written: one artifact a line, each numbered.
struct Lines {
    bytes: Vec<u8>,
    seq: u64,
}

impl Lines {
    fn push(&mut self, at: &str, mut artifact: Value) {
        artifact["sequenceNumber"] = json!(self.seq);
        artifact["timestamp"] = json!(at);
        self.seq += 1;
        // A Value always serializes.
        serde_json::to_writer(&mut self.bytes, &artifact).expect("a JSON value writes");
        self.bytes.push(b'\n');
    }
    fn run(&mut self, at: &str, artifact: Value) {
        self.push(at, json!({"testRunArtifact": artifact}));
    }
    fn step(&mut self, at: &str, id: &str, mut artifact: Value) {
        artifact["testStepId"] = json!(id);
        self.push(at, json!({"testStepArtifact": artifact}));
    }
}

/// What the kernel saw during the run as a step: each watched disk's
/// path events (resets, link down, timeouts, aborts, failed commands;
/// none allowed, each a path to check), its lines by kind as metadata; a
/// log not read is the step's log line, not a measurement. None where no
/// disk was watched.
fn kernel_step<'a>(
    disks: impl Iterator<Item = (usize, Option<&'a crate::device::kernel::Seen>)>,
    at: &str,
) -> Option<Step> {
    let mut step = Step::new("kernel log", at);
    let mut watched = false;
    for (i, k) in disks {
        let Some(k) = k else { continue };
        watched = true;
        if let Some(why) = &k.not_read {
            step.logs.push(("WARNING", why.clone()));
            continue;
        }
        let counts: serde_json::Map<String, Value> =
            k.counts.iter().map(|(kind, n)| (kind.word(), json!(n))).collect();
        let m = Measure::of("kernel.path_events", k.path_events(), "events").on(i);
        step.measures
            .push(none_allowed(m, "a reset or timeout is a path to check").noted(json!(counts)));
    }
    step.logs.dedup();
    watched.then_some(step)
}

/// A count that must be 0 (the rule: any is a finding).
fn none_allowed(m: Measure, rule: &str) -> Measure {
    m.held("EQUAL", 0, rule)
}

/// A check's stream: a step per pass (each disk's speed, % of its peers,
/// failed and slow reads, unreadable bytes), the random reads (reads a
/// second and latency by depth, alone and together), the neighbour pass
/// (each disk's loss), and the verdicts.
pub fn check(r: &crate::report::Report) -> Vec<u8> {
    let disks: Vec<(String, Hardware)> =
        r.disks.iter().map(|d| (d.path.clone(), (&d.identity).into())).collect();
    let mut diag = Diag {
        header: &r.header,
        name: "arrayburn check",
        parameters: serde_json::to_value(&r.options).unwrap_or_else(|_| json!({})),
        disks,
        steps: Vec::new(),
        doc: r.document(),
    };
    for p in &r.passes {
        let step = pass_step(p, r.options.slow_pct, &|path| diag.disk(path));
        diag.steps.push(step);
    }
    if let Some(x) = &r.random {
        let step = random_step(x, &r.summary.random, &r.header, &|path| diag.disk(path));
        diag.steps.push(step);
    }
    if let Some(v) = &r.vibration {
        let mut step = Step::new("neighbour pass", &r.header.finished_at);
        for row in &v.disks {
            let (Some(i), Some(loss)) = (diag.disk(&row.path), row.loss_pct) else { continue };
            let bay = json!({"bay": row.bay, "neighbours": row.neighbours});
            step.measures.push(Measure::of("vibration.loss", loss, "%").on(i).noted(bay));
        }
        diag.steps.push(step);
    }
    let seen = r.disks.iter().enumerate().map(|(i, d)| (i, d.kernel.as_ref()));
    diag.steps.extend(kernel_step(seen, &r.header.finished_at));
    diag.render()
}

/// A disk's index by its path.
type Index<'a> = dyn Fn(&str) -> Option<usize> + 'a;

/// A pass of a check as a step: each disk's speed, % of its peers (the
/// threshold as metadata), failed reads and unreadable bytes (none
/// allowed), slow reads.
fn pass_step(p: &crate::report::Pass, slow_pct: f64, index: &Index) -> Step {
    let mut step = Step::new(format!("{} pass", p.kind.name()), &p.started_at);
    for d in &p.disks {
        let Some(i) = index(&d.path) else { continue };
        let name = |what: &str| format!("{}.{what}", p.kind.name());
        let m = &mut step.measures;
        m.push(Measure::of(name("read_speed"), d.window_mb_per_s, "MB/s").on(i));
        if let Some(pct) = d.pct_of_peers {
            let rule = json!({"slow_below_pct_of_peers": slow_pct, "judged_by": "the diagnosis (its interval and any re-measurement)"});
            m.push(Measure::of(name("percent_of_peers"), pct, "%").on(i).noted(rule));
        }
        let failed = Measure::of(name("failed_reads"), d.read_errors, "reads").on(i);
        m.push(none_allowed(failed, "a failed read is a finding"));
        let bad = Measure::of(name("unreadable_bytes"), d.bad_bytes, "bytes").on(i);
        m.push(none_allowed(bad, "an unreadable byte is a finding"));
        m.push(Measure::of(name("slow_reads"), d.slow_read_count, "reads").on(i));
    }
    if p.interrupted {
        step.logs.push(("WARNING", "the pass was cut short by a stop".into()));
    }
    step
}

/// The random reads as a step: each disk's reads a second and latency
/// (p50, p99, p99.9, the slowest) by depth, alone and together; each
/// finding in words.
fn random_step(
    x: &crate::report::random::RandomSection,
    found: &[crate::judge::random::RandomFinding],
    header: &Header,
    index: &Index,
) -> Step {
    let mut step = Step::new("random reads", &header.finished_at);
    for row in &x.disks {
        let Some(i) = index(&row.path) else { continue };
        let runs = (row.alone.iter().map(|f| ("alone", f)))
            .chain(row.together.iter().map(|f| ("together", f)));
        for (when, f) in runs {
            let name = |what: &str| format!("random.{when}.depth{}.{what}", f.figures.depth);
            if let Some(iops) = f.figures.iops {
                step.measures.push(Measure::of(name("reads_per_second"), iops, "IOPS").on(i));
            }
            // Nothing read: no latency measured (not one of 0 ms).
            if f.figures.reads == 0 {
                continue;
            }
            let l = &f.figures.latency_us;
            for (q, us) in [("p50", l.p50), ("p99", l.p99), ("p99.9", l.p999), ("max", l.max)] {
                let m = Measure::of(name(&format!("latency_{q}")), us / 1e3, "ms");
                step.measures.push(m.on(i));
            }
        }
    }
    for f in found {
        step.logs.push(("WARNING", format!("{}: {}", f.path, f.sentence)));
    }
    step
}

/// A burn-in's (or a verify's, a soak's) stream: the burn step (each
/// disk's write and read-back speeds, bad bytes by class, passes done,
/// SMART rises, hottest temperature), and the verdicts.
pub fn burnin(r: &crate::report::burnin::BurnReport) -> Vec<u8> {
    let disks = r.disks.iter().map(|d| (d.path.clone(), (&d.identity).into())).collect();
    let (name, step_name) = match (r.verify, r.read_only) {
        (true, _) => ("arrayburn verify", "verify"),
        (false, true) => ("arrayburn burnin", "soak"),
        (false, false) => ("arrayburn burnin", "burn-in"),
    };
    let parameters = json!({
        "run_id": r.run_id,
        "passes": r.passes,
        "read_only": r.read_only,
        "verify": r.verify,
        "pattern": r.pattern,
        "io_bytes": r.io_bytes,
        "engine": r.engine,
        "queue_depth": r.queue_depth,
    });
    let mut diag =
        Diag { header: &r.header, name, parameters, disks, steps: Vec::new(), doc: r.document() };
    let mut step = Step::new(step_name, &r.header.started_at);
    for (i, d) in r.disks.iter().enumerate() {
        let burned = burn_measures(d, (r.passes, r.read_only));
        step.measures.extend(burned.into_iter().map(|m| m.on(i)));
    }
    diag.steps.push(step);
    let seen = r.disks.iter().enumerate().map(|(i, d)| (i, d.kernel.as_ref()));
    diag.steps.extend(kernel_step(seen, &r.header.finished_at));
    diag.render()
}

/// A disk's burn: its write and read-back speeds, bad bytes (none allowed;
/// by class as metadata), passes done (every one; a soak or verify: one),
/// each SMART counter's rise (none allowed where a rise is a finding), its
/// hottest.
fn burn_measures(
    d: &crate::report::burnin::BurnDisk,
    (passes, read_only): (u16, bool),
) -> Vec<Measure> {
    let mut m = Vec::new();
    for (phase, mb) in [("write", d.write_mb_per_s), ("verify", d.verify_mb_per_s)] {
        if let Some(v) = mb {
            m.push(Measure::of(format!("{phase}_speed"), v, "MB/s"));
        }
    }
    let bad: u64 = d.burn.bad_bytes.iter().map(|(_, n)| n).sum();
    let classes: serde_json::Map<String, Value> =
        (d.burn.bad_bytes.iter()).map(|(c, n)| (super::metrics::word(c), json!(n))).collect();
    let bad = Measure::of("bad_bytes", bad, "bytes").noted(Value::Object(classes));
    m.push(none_allowed(bad, "a byte not read back as written is a finding"));
    // The run's own rule of a disk burned whole: a soak read whole once
    // (its --duration may end it in any pass), a burn-in every pass.
    let done = Measure::of("passes_done", d.burn.passes_done, "passes");
    m.push(match read_only {
        true => done.held("GREATER_THAN_OR_EQUAL", 1, "read whole at least once"),
        false => done.held("GREATER_THAN_OR_EQUAL", passes, "every pass written and read back"),
    });
    for x in d.smart.iter().flat_map(|c| &c.deltas) {
        let rise =
            Measure::of(format!("smart.{}.rise", x.name), x.after.saturating_sub(x.before), "");
        let rise = rise.noted(json!({"before": x.before, "after": x.after}));
        m.push(match x.kind {
            // Listed, not judged (an aborted command, a host's request).
            crate::burnin::smart::CounterKind::Logged => rise,
            _ => none_allowed(rise, "a rise of this counter is a finding"),
        });
    }
    if let Some(c) = d.hottest_c {
        m.push(Measure::of("hottest", c, "°C"));
    }
    m
}

/// An inspection's stream: what each drive declares (size, hours, power
/// cycles), its findings in words, and the verdicts.
pub fn inspect(r: &crate::report::inspect::InspectReport) -> Vec<u8> {
    let disks = (r.disks.iter())
        .map(|d| {
            let hw = Hardware {
                model: d.declared.model.clone(),
                serial: d.declared.serial.clone(),
                firmware: d.declared.firmware.clone(),
                ..Default::default()
            };
            (d.path.clone(), hw)
        })
        .collect();
    let parameters = json!({"new_hours": r.new_hours, "probed": r.probed});
    let mut diag = Diag {
        header: &r.header,
        name: "arrayburn inspect",
        parameters,
        disks,
        steps: Vec::new(),
        doc: r.document(),
    };
    let mut step = Step::new("inspection", &r.header.started_at);
    for (i, d) in r.disks.iter().enumerate() {
        let m = &mut step.measures;
        m.push(Measure::of("size", d.declared.size_bytes, "bytes").on(i));
        if let Some(h) = d.declared.power_on_hours {
            let hours = Measure::of("power_on_hours", h, "hours").on(i);
            let rule = "a new drive has at most --new-hours";
            m.push(hours.held("LESS_THAN_OR_EQUAL", r.new_hours, rule));
        }
        if let Some(c) = d.declared.power_cycles {
            m.push(Measure::of("power_cycles", c, "cycles").on(i));
        }
        for f in &d.findings {
            let severity = if f.concern.acts() { "WARNING" } else { "INFO" };
            step.logs.push((severity, format!("{}: {}", d.path, f.sentence)));
        }
        for what in &d.declared.not_read {
            step.logs.push(("INFO", format!("{}: not read: {what}", d.path)));
        }
    }
    diag.steps.push(step);
    diag.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Report;

    fn flagged() -> Report {
        crate::report::fixture("full-with-bad-sectors")
    }

    fn lines(bytes: &[u8]) -> Vec<Value> {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    fn run_artifacts(stream: &[Value], key: &str) -> Vec<Value> {
        let inner = |a: &Value| a.get("testRunArtifact").and_then(|x| x.get(key)).cloned();
        stream.iter().filter_map(inner).collect()
    }

    #[test]
    fn a_copy_saved_while_the_run_goes_on_has_no_end_and_a_stopped_run_ends_in_error() {
        let mut r = flagged();
        r.header.exit_status = None;
        let partial = lines(&check(&r));
        assert!(run_artifacts(&partial, "testRunEnd").is_empty());
        let numbers: Vec<u64> =
            partial.iter().map(|a| a["sequenceNumber"].as_u64().unwrap()).collect();
        assert_eq!(numbers, (0..partial.len() as u64).collect::<Vec<_>>());

        r.header.exit_status = Some(1);
        let whole = lines(&check(&r));
        let end = &run_artifacts(&whole, "testRunEnd")[0];
        assert_eq!(
            (end["status"].as_str(), end["result"].as_str()),
            (Some("COMPLETE"), Some("FAIL"))
        );
        assert!(run_artifacts(&whole, "error").is_empty());

        // Ended, but not measured whole: said why, not called complete.
        r.header.complete = false;
        let short = lines(&check(&r));
        assert_eq!(run_artifacts(&short, "error")[0]["symptom"], "not-measured-whole");
        assert_eq!(run_artifacts(&short, "testRunEnd")[0]["status"], "ERROR");

        r.header.interrupted = true;
        r.header.exit_status = Some(130);
        let stopped = lines(&check(&r));
        assert_eq!(run_artifacts(&stopped, "error")[0]["symptom"], "interrupted");
        let end = &run_artifacts(&stopped, "testRunEnd")[0];
        assert_eq!(end["status"], "ERROR");
    }

    #[test]
    fn each_disk_is_diagnosed_as_the_run_judged_it_and_nothing_more() {
        let mut r = flagged();
        r.header.exit_status = Some(1);
        let doc = r.document();
        let stream = lines(&check(&r));
        let diagnoses: Vec<&Value> = (stream.iter())
            .filter_map(|a| a.get("testStepArtifact").and_then(|s| s.get("diagnosis")))
            .collect();
        assert_eq!(diagnoses.len(), r.disks.len());
        for (i, d) in r.disks.iter().enumerate() {
            let said = diagnoses.iter().find(|x| x["hardwareInfoId"] == hw_id(i)).unwrap();
            let acts = doc.to_act_on.iter().any(|a| a.path == d.path);
            let undecided = doc.is_unsure(&d.path) || doc.not_judged.contains(&d.path);
            let want = if acts {
                "FAIL"
            } else if undecided {
                "UNKNOWN"
            } else {
                "PASS"
            };
            assert_eq!(said["type"], want, "{}: {said}", d.path);
        }
        assert!(diagnoses.iter().any(|x| x["type"] == "FAIL"));
        // A speed is measured, and judged only by the diagnosis: no
        // validator that could say otherwise.
        let measures: Vec<&Value> = (stream.iter())
            .filter_map(|a| a.get("testStepArtifact").and_then(|s| s.get("measurement")))
            .collect();
        for m in &measures {
            let name = m["name"].as_str().unwrap();
            if name.ends_with("read_speed") || name.ends_with("percent_of_peers") {
                assert!(m.get("validators").is_none(), "{m}");
            }
        }
    }
}

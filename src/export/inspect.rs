//! The inspection laid out: a table of what each drive declares of itself
//! (its cells marked where a finding is about them), the probe's table
//! where it ran, each disk's findings and what could not be read, and the
//! verdict; its page and its metrics. The same table opens `check` and
//! `burnin` ([`table`]). A pure function of the report: it must not judge.

use crate::burnin::probe::Past;
use crate::export::doc::{Block, Cell, Grid, Mark, Tone};
use crate::export::metrics::{self, Labels, Metrics};
use crate::export::page;
use crate::finding::Code;
use crate::judge::inspect::Inspected;
use crate::judge::inspect::{InspectVerdict, grouped};
use crate::report::inspect::InspectReport;
use crate::units::{human_bytes, human_duration};

/// `-` for nothing.
fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".into())
}

/// The table of what each drive declares: one row per disk, a cell marked
/// where a finding is about it.
pub fn table(disks: &[Inspected]) -> Grid {
    let mut g = Grid::new(&[
        "Disk",
        "Model",
        "Serial",
        "Firmware",
        "Size",
        "Sector",
        "RPM",
        "Hours",
        "FARM h",
        "Cycles",
        "Start/stop",
        "Security",
        "Hidden",
        "TRIM",
        "Zoned",
        "RAID fit",
        "Inspection",
    ])
    .numbers(6..11)
    .optional(&[8, 10, 9, 3, 13, 14, 5, 6, 12, 11, 2, 4, 15, 7]);
    for d in disks {
        g.row(row(d));
    }
    g
}

/// One disk's row.
fn row(d: &Inspected) -> Vec<Cell> {
    let x = &d.declared;
    let about = |c: &[Code]| d.findings.iter().any(|f| c.contains(&f.concern)).then_some(Mark::Bad);
    let count = |v: Option<u64>| or_dash(v.map(grouped));
    let security = x.security.as_ref().map(|s| match (s.locked, s.enabled) {
        (true, _) => "LOCKED",
        (false, true) => "enabled",
        (false, false) => "off",
    });
    let hidden =
        x.hidden.as_ref().map(|h| human_bytes(h.native_bytes.saturating_sub(h.shown_bytes)));
    let yes_no = |b: Option<bool>| or_dash(b.map(|b| if b { "yes" } else { "no" }.into()));
    let verdict = match d.verdict {
        InspectVerdict::Clean => Cell::from("clean"),
        InspectVerdict::ActOn => Cell::marked("ACT ON", Some(Mark::Bad)),
        InspectVerdict::NotKnown => Cell::marked("no SMART", Some(Mark::Unsure)),
    };
    let size = [Code::CapacityDiffers, Code::FakeCapacity];
    vec![
        Cell::from(d.path.as_str()),
        or_dash(x.model.clone()).into(),
        or_dash(x.serial.clone()).into(),
        Cell::marked(or_dash(x.firmware.clone()), about(&[Code::FirmwareDiffers])),
        Cell::marked(human_bytes(x.size_bytes), about(&size)),
        Cell::marked(x.sector_format(), about(&[Code::SectorFormatDiffers])),
        count(x.rotation_rpm).into(),
        Cell::marked(count(x.power_on_hours), about(&[Code::Used, Code::HoursReset])),
        Cell::marked(count(x.farm.as_ref().map(|f| f.power_on_hours)), about(&[Code::HoursReset])),
        count(x.power_cycles).into(),
        count(x.start_stops).into(),
        Cell::marked(or_dash(security.map(str::to_string)), about(&[Code::Locked])),
        Cell::marked(or_dash(hidden), about(&[Code::HiddenCapacity])),
        yes_no(x.trim).into(),
        or_dash(x.zoned.clone()).into(),
        fitness(d),
        verdict,
    ]
}

/// Its fitness for a RAID or a pool, in a cell: its retry limit against
/// the kernel's timer where both were read.
fn fitness(d: &Inspected) -> Cell {
    use crate::judge::fit::Fitness;
    let x = &d.declared;
    let limit = x.recovery.and_then(|r| Some(r.read_ds?.max(r.write_ds?)));
    let figures = match (limit, x.kernel_timeout_s) {
        (Some(ds), Some(t)) => format!(" {:.1}/{t} s", f64::from(ds) / 10.0),
        _ => String::new(),
    };
    match d.fit.fitness {
        Fitness::Fit => Cell::from(format!("yes{figures}")),
        Fitness::Unfit if x.recovery.is_some_and(|r| !r.supported) => {
            Cell::marked("NO: no ERC", Some(Mark::Unsure))
        }
        Fitness::Unfit if limit.is_none() => Cell::marked("NO: ERC off", Some(Mark::Unsure)),
        Fitness::Unfit => Cell::marked(format!("NO{figures}"), Some(Mark::Unsure)),
        Fitness::NotApplicable => Cell::from("n/a"),
        Fitness::NotKnown => Cell::from("-"),
    }
}

/// The probe's table, where it ran on any disk.
fn probes(out: &mut Vec<Block>, disks: &[Inspected]) {
    let probed: Vec<&Inspected> = disks.iter().filter(|d| d.probe.is_some()).collect();
    if probed.is_empty() {
        return;
    }
    out.push(Block::Heading("Capacity probe (blocks written and read back)".into(), Tone::Plain));
    let mut g = Grid::new(&["Disk", "Announced", "Usable", "Past it", "Written", "Reads", "Time"])
        .numbers(1..3);
    for d in probed {
        let Some(p) = &d.probe else { continue };
        let past = match p.past {
            None if p.incomplete.is_some() => Cell::marked("not finished", Some(Mark::Unsure)),
            None => Cell::from("-"),
            Some(Past::Aliased { shift_bytes }) => {
                Cell::marked(format!("wraps {} lower", human_bytes(shift_bytes)), Some(Mark::Bad))
            }
            Some(Past::Lost) => Cell::marked("keeps nothing", Some(Mark::Bad)),
        };
        g.row(vec![
            Cell::from(d.path.as_str()),
            human_bytes(p.announced_bytes).into(),
            Cell::marked(human_bytes(p.usable_bytes), p.fake().then_some(Mark::Bad)),
            past,
            human_bytes(p.written_bytes).into(),
            p.reads.to_string().into(),
            human_duration(std::time::Duration::from_secs_f64(p.seconds)).into(),
        ]);
    }
    out.push(Block::Tight(g));
    for d in disks {
        if let Some(why) = d.probe.as_ref().and_then(|p| p.incomplete.as_ref()) {
            out.push(Block::Item(format!(
                "{}: the probe did not finish ({why}): its usable size is a bound only",
                d.path
            )));
        }
    }
}

/// Each disk's findings (acts and notes) and what could not be read.
fn findings(out: &mut Vec<Block>, disks: &[Inspected]) {
    if disks.iter().any(|d| !d.findings.is_empty()) {
        out.push(Block::Heading("Findings".into(), Tone::Plain));
        for d in disks.iter().filter(|d| !d.findings.is_empty()) {
            out.push(Block::Item(d.path.clone()));
            for f in &d.findings {
                let note = if f.concern.acts() { "" } else { "note: " };
                out.push(Block::Sub(format!("{note}{}", f.sentence)));
            }
        }
    }
    if disks.iter().any(|d| !d.declared.not_read.is_empty()) {
        out.push(Block::Heading("Not read".into(), Tone::Plain));
        // A sentence said of many disks is said once, naming them.
        let mut said: Vec<(Vec<&str>, &str)> = Vec::new();
        for d in disks {
            for n in &d.declared.not_read {
                match said.iter_mut().find(|(_, w)| *w == n.as_str()) {
                    Some((paths, _)) => paths.push(&d.path),
                    None => said.push((vec![&d.path], n)),
                }
            }
        }
        for (paths, n) in said {
            out.push(Block::Item(format!("{}: {n}", paths.join(", "))));
        }
    }
}

/// The inspection that opens a check or a burn-in: the table and each
/// disk's findings, as notes beside the run's verdict; one line where no
/// drive gave SMART data (a loop device, a bridge that hides it).
pub fn opening(out: &mut Vec<Block>, disks: &[Inspected]) {
    if disks.is_empty() {
        return;
    }
    let found = disks.iter().any(|d| !d.findings.is_empty());
    if !found && disks.iter().all(|d| !d.declared.smart) {
        out.push(Block::Heading(
            "Inspection: no drive gave SMART data (hours, security and hidden capacity not known)"
                .into(),
            Tone::Plain,
        ));
        return;
    }
    out.push(Block::Heading("Inspection: what each drive declares of itself".into(), Tone::Plain));
    out.push(Block::Tight(table(disks)));
    for d in disks.iter().filter(|d| !d.findings.is_empty()) {
        out.push(Block::Item(d.path.clone()));
        for f in &d.findings {
            out.push(Block::Sub(format!("note: {}", f.sentence)));
        }
    }
}

/// The report as blocks.
pub fn blocks(r: &InspectReport) -> Vec<Block> {
    let what = if r.probed {
        "incoming inspection and capacity probe"
    } else {
        "incoming inspection (read-only)"
    };
    let mut out = vec![
        Block::Title(format!(
            "arrayburn {} {what} of {} disk(s) on {}, {}",
            r.header.tool_version,
            r.disks.len(),
            r.header.host,
            r.header.started_at
        )),
        Block::Table(table(&r.disks)),
    ];
    probes(&mut out, &r.disks);
    findings(&mut out, &r.disks);
    let doc = crate::rundoc::Document::document(r);
    out.push(Block::Verdict {
        headline: super::doc::headline(&doc),
        to_act_on: doc.to_act_on.iter().map(|a| a.sentence.clone()).collect(),
        message: r.message.clone(),
    });
    out
}

/// The page.
pub fn page(r: &InspectReport, blocks: &[Block]) -> String {
    page::render(&page::Page {
        blocks,
        verdict: if r.header.interrupted { "interrupted" } else { r.verdict.word() },
        header: &r.header,
        figures: &[],
        extra: maud::html! {},
    })
}

const POWER_ON: (&str, &str) = (
    "arrayburn_inspect_power_on_seconds",
    "Power-on time a disk declares (its hours, in seconds): SMART's (source=\"smart\") and Seagate's FARM log's (source=\"farm\").",
);
const FINDING: (&str, &str) = (
    "arrayburn_inspect_finding",
    "A finding of the incoming inspection, one series per disk and concern: 1 where found.",
);
const USABLE: (&str, &str) = (
    "arrayburn_inspect_usable_bytes",
    "Bytes from a disk's start that hold what is written to them, as the capacity probe found.",
);

/// The inspection's metrics.
pub fn metrics(r: &InspectReport) -> Metrics {
    let mut m = Metrics::default();
    crate::export::metrics::run(
        &mut m,
        "inspect",
        &r.header,
        &crate::rundoc::Document::document(r),
    );
    for d in &r.disks {
        let x = &d.declared;
        let opt = |v: &Option<String>| v.clone().unwrap_or_default();
        let labels: Labels = vec![
            ("host", r.header.host.clone()),
            ("device", d.path.clone()),
            ("model", opt(&x.model)),
            ("serial", opt(&x.serial)),
        ];
        let with = |k: &'static str, v: &str| metrics::with(labels.clone(), k, v);
        if let Some(h) = x.power_on_hours {
            m.gauge(POWER_ON, with("source", "smart"), h as f64 * 3600.0);
        }
        if let Some(f) = &x.farm {
            m.gauge(POWER_ON, with("source", "farm"), f.power_on_hours as f64 * 3600.0);
        }
        for f in &d.findings {
            m.gauge(FINDING, with("concern", &f.concern.word()), 1.0);
        }
        if let Some(p) = &d.probe {
            m.gauge(USABLE, labels.clone(), p.usable_bytes as f64);
        }
    }
    m
}

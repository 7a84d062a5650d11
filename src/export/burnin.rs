//! The burn-in's text: a table per disk (identity, bytes, write and verify
//! MB/s, against its peers, bad bytes by class), the ranges found, and one
//! sentence per disk to act on; and its `--out DIR` bundle. A pure function
//! of the [`BurnReport`]: it must not judge and must not read devices.

use std::fmt::Write as _;

use crate::burnin::record::{Class, DiskBurn};
use crate::burnin::smart::{SelfTest, TestKind};
use crate::export::text::{show, table, verdict};
use crate::judge::burnin::DiskVerdict;
use crate::report::burnin::{BurnDisk, BurnReport, class_words, stopped_at};
use crate::units::{human_bytes, human_bytes_binary, human_duration};

/// The bytes found bad, by class, in short words (`-` for none).
fn errors(b: &DiskBurn) -> String {
    let short = |c: Class| match c {
        Class::WriteError => "write err",
        Class::FlushError => "flush err",
        Class::ReadError => "read err",
        Class::Corrupted => "corrupted",
        Class::Misdirected => "misdirected",
        Class::OtherDisk => "other disk",
        Class::Stale => "lost",
        Class::Zeros => "zeros",
        Class::Foreign => "foreign",
    };
    let each: Vec<String> = b
        .bad_bytes
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{} {}", short(*c), human_bytes_binary(*n)))
        .collect();
    if each.is_empty() { "-".into() } else { each.join(", ") }
}

/// The engine in words for the header.
fn engine_words(r: &BurnReport) -> String {
    match r.engine.as_str() {
        "io_uring" => format!("io_uring, {} in flight per disk", r.queue_depth),
        other => format!("{other}, one at a time"),
    }
}

/// The text report.
pub fn render(r: &BurnReport) -> String {
    let mut out = String::new();
    for section in [title, disks, stopped, pass_speeds, smart, findings] {
        section(&mut out, r);
    }
    verdict(&mut out, &r.summary.disk_verdicts, &r.summary.message);
    out
}

/// What ran, where and when.
fn title(out: &mut String, r: &BurnReport) {
    if r.read_only {
        let _ = writeln!(
            out,
            "arrayburn {} read-only soak (O_DIRECT, {} reads, {}, nothing written), {} pass(es), on {}, started {}\n",
            r.header.tool_version,
            human_bytes(r.io_bytes),
            engine_words(r),
            r.passes,
            r.header.host,
            r.header.started_at
        );
    } else {
        let _ = writeln!(
            out,
            "arrayburn {} burn-in (destructive write-verify, {} pattern, O_DIRECT, {} writes, {}), run {}, {} pass(es), on {}, started {}\n",
            r.header.tool_version,
            r.pattern,
            human_bytes(r.io_bytes),
            engine_words(r),
            r.run_id,
            r.passes,
            r.header.host,
            r.header.started_at
        );
    }
}

/// The table: a row per disk.
fn disks(out: &mut String, r: &BurnReport) {
    let mut t = table(&[
        "Disk",
        "Model",
        "Serial",
        "Range",
        "Written",
        if r.read_only { "Read" } else { "Verified" },
        "Write MB/s",
        "%ofAvg",
        if r.read_only { "Read MB/s" } else { "Verify MB/s" },
        "%ofAvg",
        "Time",
        "Errors",
        "Verdict",
    ]);
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.0}"));
    let bytes = |b: u64| if b == 0 { "-".into() } else { human_bytes(b) };
    for d in &r.disks {
        t.add_row(vec![
            d.path.clone(),
            d.identity.model.clone().unwrap_or_else(|| "-".into()),
            d.identity.serial.clone().unwrap_or_else(|| "-".into()),
            human_bytes(d.end_byte - d.start_byte),
            bytes(d.burn.written_bytes),
            bytes(d.burn.verified_bytes),
            pct(d.write_mb_per_s),
            pct(d.write_pct_of_peers),
            pct(d.verify_mb_per_s),
            pct(d.verify_pct_of_peers),
            human_duration(std::time::Duration::from_secs_f64(d.burn.write_s + d.burn.verify_s)),
            errors(&d.burn),
            d.verdict.word().to_string(),
        ]);
    }
    let _ = writeln!(out, "{}", show(&t));
}

/// Where each disk stopped short of its end.
fn stopped(out: &mut String, r: &BurnReport) {
    for d in &r.disks {
        if let Some(words) = stopped_at(d, r.passes) {
            let _ = writeln!(out, "{}: {words}", d.path);
        }
    }
}

/// The read-back speed of each pass, where there were several.
fn pass_speeds(out: &mut String, r: &BurnReport) {
    for d in r.disks.iter().filter(|d| d.verify_pass_mb_per_s.len() > 1) {
        let v = &d.verify_pass_mb_per_s;
        let one = |i: usize| format!("{} {:.0}", i + 1, v[i]);
        let each: Vec<String> = if v.len() <= 8 {
            (0..v.len()).map(one).collect()
        } else {
            // Many passes (a soak run by time): the first, the slowest,
            // the fastest and the last.
            let by = |f: fn(f64, f64) -> bool| {
                (0..v.len()).reduce(|a, b| if f(v[b], v[a]) { b } else { a }).unwrap_or(0)
            };
            let (lo, hi) = (by(|a, b| a < b), by(|a, b| a > b));
            vec![
                one(0),
                format!("slowest {}", one(lo)),
                format!("fastest {}", one(hi)),
                format!("last {}", one(v.len() - 1)),
            ]
        };
        let _ = writeln!(out, "{} read-back MB/s by pass: {}", d.path, each.join(", "));
    }
}

/// SMART: what rose, what was not compared, self-tests, temperatures.
fn smart(out: &mut String, r: &BurnReport) {
    for d in &r.disks {
        match (&d.smart, &d.smart_note) {
            (Some(c), _) if !c.deltas.is_empty() => {
                let rose: Vec<String> = c
                    .deltas
                    .iter()
                    .map(|x| format!("{} {} → {}", x.name, x.before, x.after))
                    .collect();
                let _ = writeln!(
                    out,
                    "\nSMART {}: rose during the burn-in: {}",
                    d.path,
                    rose.join(", ")
                );
            }
            (None, Some(note)) => {
                let _ = writeln!(out, "\nSMART {}: not compared ({note})", d.path);
            }
            _ => {}
        }
    }
    for d in &r.disks {
        let kind = match d.self_test_kind {
            Some(TestKind::Long) => "long",
            _ => "short",
        };
        let said = match &d.self_test {
            Some(SelfTest::Passed) => Some("passed".to_string()),
            Some(SelfTest::Failed(w)) => Some(format!("FAILED: {w}")),
            Some(SelfTest::Unknown(w)) => Some(format!("not run: {w}")),
            Some(SelfTest::Running(_)) | None => None,
        };
        if let Some(said) = said {
            let _ = writeln!(out, "SMART {}: {kind} self-test {said}", d.path);
        }
        if let Some(c) = d.hottest_c {
            let limit = d
                .temperature_limit
                .as_ref()
                .map(|l| format!(" (its limit: {} °C, {})", l.warning_c, l.source))
                .unwrap_or_default();
            let _ = writeln!(out, "SMART {}: hottest {c} °C during the run{limit}", d.path);
        }
    }
}

/// The ranges found bad, per disk.
fn findings(out: &mut String, r: &BurnReport) {
    for d in r.disks.iter().filter(|d| !d.burn.findings.is_empty()) {
        let _ = writeln!(out, "\n{}:", d.path);
        for f in &d.burn.findings {
            let _ = writeln!(
                out,
                "  pass {}: bytes {}..{} ({} bytes) {}: {}",
                f.pass,
                f.offset,
                f.offset + f.len,
                f.len,
                class_words(f.class),
                f.detail
            );
        }
    }
}

/// The JSON document (`--json`, `--out DIR/report.json`).
pub fn json(report: &BurnReport) -> Vec<u8> {
    let mut doc = serde_json::to_vec_pretty(report).unwrap_or_default();
    doc.push(b'\n');
    doc
}

/// `--out DIR`: the text, the JSON, the page (`fleet`'s, given), and MB/s
/// across each disk's surface for pass 1 and the last pass, each phase.
pub fn bundle(
    report: &BurnReport,
    text: &str,
    page: &str,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    let dir = crate::output::Dir::create(dir)?;
    dir.write("report.txt", text.as_bytes())?;
    dir.write("report.json", &json(report))?;
    dir.write("report.html", page.as_bytes())?;
    let last = (report.disks.iter())
        .flat_map(|d| d.burn.surface.iter().map(|p| p.pass))
        .max()
        .unwrap_or(0);
    let mut passes = vec![1];
    if last > 1 {
        passes.push(last);
    }
    let phases: &[&str] = if report.read_only { &["verify"] } else { &["write", "verify"] };
    for pass in passes {
        for phase in phases {
            let series = surface_lines(report, pass, phase);
            if series.is_empty() {
                continue;
            }
            let word = match (*phase, report.read_only) {
                ("verify", true) => "read",
                (p, _) => p,
            };
            crate::export::chart::lines(
                &dir,
                &format!("surface-{word}-pass{pass}"),
                &format!("Pass {pass}: {word} MB/s across each disk (red: to act on)"),
                &series,
            )?;
        }
    }
    Ok(())
}

/// Each disk's MB/s across its range in pass `pass`'s `phase`, as chart
/// lines (a disk to act on in red); disks with no point left out.
fn surface_lines(report: &BurnReport, pass: u16, phase: &str) -> Vec<crate::export::chart::Line> {
    let line = |d: &BurnDisk| {
        let len = (d.end_byte - d.start_byte).max(1) as f64;
        let points = (d.burn.surface.iter())
            .filter(|p| p.pass == pass && p.phase == phase)
            .map(|p| (100.0 * (p.offset - d.start_byte) as f64 / len, p.mb_per_s))
            .collect();
        crate::export::chart::Line {
            label: d.identity.name.clone(),
            points,
            flagged: !matches!(d.verdict, DiskVerdict::Healthy | DiskVerdict::Interrupted),
        }
    };
    report.disks.iter().map(line).filter(|l| !l.points.is_empty()).collect()
}

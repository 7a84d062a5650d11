//! The burn-in's text: a table per disk (identity, bytes, write and verify
//! MB/s, against its peers, bad bytes by class), the ranges found, and one
//! sentence per disk to act on; and its `--out DIR` bundle. A pure function
//! of the [`BurnReport`]: it must not judge and must not read devices.

use crate::burnin::record::{Class, DiskBurn, Phase};
use crate::burnin::smart::{CounterKind, SelfTest, TestKind};
use crate::export::chart::{self, Drawn};
use crate::export::doc::{self, Block, Cell, Grid, Mark, Tone};
use crate::export::page;
use crate::export::text::verdict;
use crate::io::EngineKind;
use crate::judge::burnin::DiskVerdict;
use crate::report::burnin::{BurnDisk, BurnReport, stopped_at};
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
    match r.engine {
        EngineKind::IoUring => format!("io_uring, {} in flight per disk", r.queue_depth),
        other => format!("{}, one at a time", other.name()),
    }
}

/// The text report.
pub fn render(r: &BurnReport) -> String {
    doc::text(&blocks(r))
}

/// The report as blocks, for the text, the Markdown and the page.
pub fn blocks(r: &BurnReport) -> Vec<Block> {
    let mut out = vec![Block::Title(title(r)), Block::Table(disks(r))];
    super::inspect::opening(&mut out, &r.inspection);
    for section in [resumed_run, stopped, pass_speeds, cycles, smart, findings] {
        section(&mut out, r);
    }
    let seen = r.disks.iter().filter_map(|d| Some((d.path.as_str(), d.kernel.as_ref()?)));
    super::text::kernel_section(&mut out, seen);
    out.push(verdict(r, &r.summary.disk_verdicts, &r.summary.message));
    out
}

/// What ran, where and when.
pub fn title(r: &BurnReport) -> String {
    if r.verify {
        let mut runs: Vec<&str> =
            (r.disks.iter()).filter_map(|d| Some(d.burned_in.as_ref()?.run_id.as_str())).collect();
        runs.dedup();
        format!(
            "arrayburn {} verify of burn-in run {} (its blocks read back, O_DIRECT, {} reads, {}, nothing written), verify {}, on {}, started {}",
            r.header.tool_version,
            runs.join(", "),
            human_bytes(r.io_bytes),
            engine_words(r),
            r.run_id,
            r.header.host,
            r.header.started_at
        )
    } else if r.read_only {
        format!(
            "arrayburn {} read-only soak (O_DIRECT, {} reads, {}, nothing written), {} pass(es), on {}, started {}",
            r.header.tool_version,
            human_bytes(r.io_bytes),
            engine_words(r),
            r.passes,
            r.header.host,
            r.header.started_at
        )
    } else {
        format!(
            "arrayburn {} burn-in (destructive write-verify, {} pattern, O_DIRECT, {} writes, {}), run {}, {} pass(es), on {}, started {}",
            r.header.tool_version,
            r.pattern,
            human_bytes(r.io_bytes),
            engine_words(r),
            r.run_id,
            r.passes,
            r.header.host,
            r.header.started_at
        )
    }
}

/// The table: a row per disk.
fn disks(r: &BurnReport) -> Grid {
    let mut t = Grid::new(&[
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
    ])
    .optional(&[2, 9, 7, 3, 8, 6, 1, 10]);
    let bytes = |b: u64| if b == 0 { "-".into() } else { human_bytes(b) };
    for d in &r.disks {
        let cells: Vec<Cell> = [
            d.path.clone(),
            d.identity.model.clone().unwrap_or_else(|| "-".into()),
            d.identity.serial.clone().unwrap_or_else(|| "-".into()),
            human_bytes(d.end_byte - d.start_byte),
            bytes(d.burn.written_bytes),
            bytes(d.burn.verified_bytes),
            whole(d.write_mb_per_s),
            whole(d.write_pct_of_peers),
            whole(d.verify_mb_per_s),
            whole(d.verify_pct_of_peers),
            human_duration(std::time::Duration::from_secs_f64(d.burn.write_s + d.burn.verify_s)),
            errors(&d.burn),
        ]
        .into_iter()
        .map(Cell::from)
        .chain([Cell::marked(d.verdict.word(), verdict_mark(d.verdict))])
        .collect();
        t.row(cells);
    }
    t
}

/// A number rounded to whole units, `-` for none.
fn whole(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |p| format!("{p:.0}"))
}

/// Where each disk stopped short of its end, and the write cache a
/// solid-state disk's writes showed.
fn stopped(out: &mut Vec<Block>, r: &BurnReport) {
    for d in &r.disks {
        if let Some(words) = stopped_at(d, r.passes) {
            out.push(Block::Note(format!("{}: {words}", d.path)));
        }
        if let Some(c) = &d.ssd_cache {
            out.push(Block::Note(format!("{}: {}", d.path, c.said)));
        }
        if let Some(x) = &d.discarded {
            out.push(Block::Note(format!("{}: {}", d.path, x.words())));
        }
    }
}

/// The read-back speed of each pass, where there were several.
fn pass_speeds(out: &mut Vec<Block>, r: &BurnReport) {
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
        out.push(Block::Note(format!("{} read-back MB/s by pass: {}", d.path, each.join(", "))));
    }
}

/// That the run was resumed, where it was: the report covers the whole
/// burn-in, its earlier runs' writes and reads included.
fn resumed_run(out: &mut Vec<Block>, r: &BurnReport) {
    let most = r.disks.iter().map(|d| d.burn.resumes).max().unwrap_or(0);
    if most > 0 {
        out.push(Block::Note(format!(
            "Resumed {most} time(s) from its checkpoints; this report covers the whole burn-in."
        )));
    }
}

/// What the run was: "the burn-in", "the soak", "the verify".
fn run_word(r: &BurnReport) -> &'static str {
    match (r.verify, r.read_only) {
        (true, _) => "the verify",
        (false, true) => "the soak",
        (false, false) => "the burn-in",
    }
}

/// SMART: what rose, what was not compared, self-tests, temperatures; one
/// heading (a fault's tone where a counter rose), a line each under it.
fn smart(out: &mut Vec<Block>, r: &BurnReport) {
    let mut lines: Vec<(&str, String)> = Vec::new();
    let mut rose_any = false;
    for d in &r.disks {
        match (&d.smart, &d.smart_note) {
            (Some(c), _) if !c.deltas.is_empty() => {
                // A log's rise that points at neither media nor path is
                // listed, not judged: no fault's tone for it.
                let words = |logged: bool| -> Vec<String> {
                    (c.deltas.iter())
                        .filter(|x| (x.kind == CounterKind::Logged) == logged)
                        .map(|x| format!("{} {} → {}", x.name, x.before, x.after))
                        .collect()
                };
                let (rose, logged) = (words(false), words(true));
                rose_any |= !rose.is_empty();
                if !rose.is_empty() {
                    let rose = rose.join(", ");
                    lines.push((&d.path, format!("rose during {}: {rose}", run_word(r))));
                }
                if !logged.is_empty() {
                    let logged = logged.join(", ");
                    lines.push((&d.path, format!("logged, not judged: {logged}")));
                }
            }
            (None, Some(note)) => lines.push((&d.path, format!("not compared ({note})"))),
            _ => {}
        }
    }
    for d in &r.disks {
        if let Some(said) = self_test_words(d) {
            lines.push((&d.path, said));
        }
        if let Some(said) = self_test_after_words(d) {
            lines.push((&d.path, said));
        }
        if let Some(c) = d.hottest_c {
            lines.push((&d.path, format!("hottest {c} °C during the run{}", limit_words(d))));
        }
        if let Some(e) = &d.endurance {
            lines.push((&d.path, format!("endurance: {}", e.said)));
        }
        for words in not_believed(d) {
            lines.push((&d.path, format!("not believed: {words}")));
        }
        for words in d.smart.iter().flat_map(|c| &c.before.not_read) {
            lines.push((&d.path, format!("not read: {words}")));
        }
    }
    if !lines.is_empty() {
        out.push(Block::Heading("SMART".into(), if rose_any { Tone::Bad } else { Tone::Plain }));
        // A sentence said of many disks is said once, naming them.
        let mut said: Vec<(Vec<&str>, String)> = Vec::new();
        for (path, words) in lines {
            match said.iter_mut().find(|(_, w)| *w == words) {
                Some((paths, _)) => paths.push(path),
                None => said.push((vec![path], words)),
            }
        }
        let said = said.into_iter().map(|(p, w)| format!("SMART {}: {w}", p.join(", ")));
        out.extend(said.map(Block::Note));
    }
}

/// What the disk's SMART said that no sensor can mean, before and after
/// the run, each once.
fn not_believed(d: &BurnDisk) -> Vec<&String> {
    let Some(c) = &d.smart else { return d.sensor_faults.iter().collect() };
    let mut said: Vec<&String> = c.before.not_believed.iter().collect();
    said.extend(d.sensor_faults.iter());
    said.extend(c.after.not_believed.iter().filter(|w| !c.before.not_believed.contains(w)));
    said
}

/// "long self-test passed", or none where none ended.
pub fn self_test_words(d: &BurnDisk) -> Option<String> {
    test_words(d.self_test_kind.unwrap_or(TestKind::Short), d.self_test.as_ref()?)
}

/// "long self-test after the burn-in passed", or none where none ran.
pub fn self_test_after_words(d: &BurnDisk) -> Option<String> {
    let said = test_words(d.self_test_after_kind?, d.self_test_after.as_ref()?)?;
    Some(said.replacen(" self-test ", " self-test after the burn-in ", 1))
}

fn test_words(kind: TestKind, result: &SelfTest) -> Option<String> {
    let said = match result {
        SelfTest::Passed => "passed".to_string(),
        SelfTest::Failed(w) => format!("FAILED: {w}"),
        SelfTest::Unknown(w) => format!("not run: {w}"),
        SelfTest::Unfinished(w) => format!("not judged: {w}"),
        SelfTest::Running(_) => return None,
    };
    Some(format!("{} self-test {said}", kind.word()))
}

/// " (its limit: 60 °C, SMART)" where the disk's warning limit is known.
fn limit_words(d: &BurnDisk) -> String {
    (d.temperature_limit.as_ref())
        .map(|l| format!(" (its limit: {} °C, {})", l.warning_c, l.source))
        .unwrap_or_default()
}

/// The ranges found bad, per disk.
fn findings(out: &mut Vec<Block>, r: &BurnReport) {
    for d in r.disks.iter().filter(|d| !d.burn.findings.is_empty()) {
        out.push(Block::Heading(format!("{}:", d.path), Tone::Bad));
        for f in &d.burn.findings {
            out.push(Block::Item(format!(
                "pass {}: bytes {}..{} ({} bytes) {}: {}",
                f.pass,
                f.offset,
                f.offset + f.len,
                f.len,
                f.class.words(),
                f.detail
            )));
        }
    }
}

/// The JSON document (`--json`, `--out DIR/report.json`).
pub fn json(report: &BurnReport) -> Vec<u8> {
    super::json::document(report)
}

/// MB/s across each disk's surface, pass 1 and the last pass, each phase.
pub fn charts(report: &BurnReport) -> anyhow::Result<Vec<Drawn>> {
    let last = (report.disks.iter())
        .flat_map(|d| d.burn.surface.iter().map(|p| p.pass))
        .max()
        .unwrap_or(0);
    let mut passes = vec![1];
    if last > 1 {
        passes.push(last);
    }
    let phases: &[Phase] =
        if report.read_only { &[Phase::Verify] } else { &[Phase::Write, Phase::Verify] };
    let mut out = Vec::new();
    for pass in passes {
        for phase in phases {
            let series = surface_lines(report, pass, *phase);
            if series.is_empty() {
                continue;
            }
            let word = match (*phase, report.read_only) {
                (Phase::Verify, true) => "read",
                (p, _) => p.word(),
            };
            out.push(chart::lines(
                &format!("surface-{word}-pass{pass}"),
                &format!("Pass {pass}: {word} MB/s across each disk (red: to act on)"),
                &chart::Axes::surface(),
                &series,
            )?);
        }
    }
    out.extend(temperatures(report)?);
    Ok(out)
}

/// Each disk's temperature over the run, where SMART was read during it.
fn temperatures(report: &BurnReport) -> anyhow::Result<Option<Drawn>> {
    let series: Vec<chart::Line> = (report.disks.iter())
        .filter(|d| !d.temperatures.is_empty())
        .map(|d| chart::Line {
            label: d.identity.name.clone(),
            points: d.temperatures.iter().map(|t| (t.elapsed_s / 60.0, t.celsius as f64)).collect(),
            flagged: d.verdict.to_act_on(),
        })
        .collect();
    let end = series.iter().flat_map(|l| l.points.iter().map(|p| p.0)).fold(0.0, f64::max);
    if series.is_empty() {
        return Ok(None);
    }
    let axes = chart::Axes {
        x: "minutes since the disks started".into(),
        y: "°C",
        x_max: end * 1.02,
        cut: false,
    };
    let caption = "Temperature over the run, read every --smart-every (red: to act on)";
    Ok(Some(chart::lines("temperature", caption, &axes, &series)?))
}

/// The run's page: the report, then what only a page shows (each pass's
/// speeds, SMART side by side, a certificate per disk), then the charts.
pub fn page(r: &BurnReport, blocks: &[Block], charts: &[Drawn]) -> String {
    let verdict = if r.header.interrupted { "interrupted" } else { r.summary.verdict.word() };
    let (passes, smart) = (passes(r), smart_table(r));
    let extra = maud::html! {
        @if !passes.rows.is_empty() {
            h2 { "Each pass" }
            (page::grid(&passes))
        }
        @if !smart.rows.is_empty() {
            h2 { "SMART before and after" }
            (page::grid(&smart))
        }
        @for d in &r.disks { (certificate(r, d)) }
    };
    page::render(&page::Page {
        blocks,
        verdict,
        header: &r.header,
        figures: &page::figures(charts),
        extra,
    })
}

/// A row per disk and pass: MB/s written and read back.
fn passes(r: &BurnReport) -> Grid {
    let read = if r.read_only { "Read MB/s" } else { "Verify MB/s" };
    let mut t = Grid::new(&["Disk", "Pass", "Write MB/s", read]).numbers(1..4);
    for d in &r.disks {
        let n = d.verify_pass_mb_per_s.len().max(d.write_pass_mb_per_s.len());
        for i in 0..n {
            t.row(vec![
                d.path.clone(),
                (i + 1).to_string(),
                whole(d.write_pass_mb_per_s.get(i).copied()),
                whole(d.verify_pass_mb_per_s.get(i).copied()),
            ]);
        }
    }
    t
}

/// Every counter read before and after, a row each; "rose" where it did.
fn smart_table(r: &BurnReport) -> Grid {
    let mut t = Grid::new(&["Disk", "Reading", "Before", "After", "Change"]).numbers(2..4);
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    for d in &r.disks {
        let Some(c) = &d.smart else { continue };
        let health = |p: Option<bool>| match p {
            Some(false) => Cell::marked("FAILED", Some(Mark::Bad)),
            p => Cell::from(opt(p.map(|_| "passed".into()))),
        };
        let temp = |t: Option<i64>| opt(t.map(|t| format!("{t} °C")));
        t.row(vec![
            d.path.clone().into(),
            "health self-assessment".into(),
            health(c.before.passed),
            health(c.after.passed),
            if c.after.passed == Some(false) { health(Some(false)) } else { "-".into() },
        ]);
        t.row(vec![
            d.path.clone(),
            format!(
                "temperature (hottest during the run: {}){}",
                temp(d.hottest_c),
                limit_words(d)
            ),
            temp(c.before.temperature_c),
            temp(c.after.temperature_c),
            "-".into(),
        ]);
        let said = not_believed(d).into_iter().map(|w| format!("not believed: {w}"));
        for words in said.chain(c.before.not_read.iter().map(|w| format!("not read: {w}"))) {
            t.row(vec![d.path.clone(), words, "-".into(), "-".into(), "-".into()]);
        }
        counter_rows(&mut t, d, c);
    }
    t
}

/// Each SMART counter of a disk read after the run, before and after.
fn counter_rows(t: &mut Grid, d: &BurnDisk, c: &crate::burnin::smart::SmartChange) {
    for a in &c.after.counters {
        let before = c.before.counters.iter().find(|b| b.name == a.name).map(|b| b.value);
        let rose = c.deltas.iter().any(|x| x.name == a.name && x.kind != CounterKind::Logged);
        t.row(vec![
            d.path.clone().into(),
            a.name.clone().into(),
            before.map_or_else(|| "-".into(), |v| v.to_string()).into(),
            a.value.to_string().into(),
            if rose { Cell::marked("--ROSE--", Some(Mark::Bad)) } else { "-".into() },
        ]);
    }
}

/// The disk's certificate: who it is, what was done to it, what it said,
/// the verdict; on the host it ran on, when.
fn certificate(r: &BurnReport, d: &BurnDisk) -> maud::Markup {
    let id = &d.identity;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let mut rows: Vec<(&str, String)> = vec![
        ("Model", opt(&id.model)),
        ("Serial", opt(&id.serial)),
        ("WWN", opt(&id.wwn)),
        ("Firmware", opt(&id.firmware)),
        ("Capacity", format!("{} ({} bytes)", human_bytes(id.size_bytes), id.size_bytes)),
        ("Device", d.path.clone()),
        (
            "Range",
            format!(
                "bytes {}..{} ({})",
                d.start_byte,
                d.end_byte,
                human_bytes(d.end_byte - d.start_byte)
            ),
        ),
        ("Passes done", format!("{} of {}", d.burn.passes_done, r.passes)),
        ("Bytes written", d.burn.written_bytes.to_string()),
        ("Bytes verified", d.burn.verified_bytes.to_string()),
        // By class: one range can be two (a failed write reads back zeros);
        // none found in what was read back is a measured 0.
        ("Bad bytes found", bad_bytes(&d.burn)),
        ("SMART", smart_words(d)),
        ("Self-test", self_test_words(d).unwrap_or_else(|| "none".into())),
        ("Hottest", d.hottest_c.map_or("-".into(), |c| format!("{c} °C{}", limit_words(d)))),
        ("Resumed", resumed(d.burn.resumes)),
        ("Verdict", d.verdict.word().into()),
        ("Result", result(d.verdict).into()),
        ("Date", r.header.finished_at.clone()),
        ("Host", r.header.host.clone()),
        ("Machine id", opt(&r.header.machine.machine_id)),
        ("arrayburn", r.header.tool_version.clone()),
    ];
    let tested =
        d.tested.as_ref().map(|t| ("Passes done", ("Tested (in stripes)", t.said.clone())));
    let after = self_test_after_words(d).map(|w| ("Self-test", ("Self-test after", w)));
    for (behind, row) in tested.into_iter().chain(after) {
        let at = rows.iter().position(|(k, _)| *k == behind).map_or(rows.len(), |i| i + 1);
        rows.insert(at, row);
    }
    if let Some(b) = &d.burned_in {
        // What the blocks read back are, then this verify's own rows.
        rows.insert(7, ("Burned in", burned_in_words(b)));
        if !d.burn.cycles.is_empty() {
            rows.insert(8, ("Spin cycles", cycles_words(&d.burn.cycles)));
        }
        rows.retain(|(k, _)| *k != "Passes done" && *k != "Bytes written");
    }
    let what = match (r.verify, r.read_only) {
        (true, _) => "Verify certificate",
        (false, true) => "Soak record",
        (false, false) => "Burn-in certificate",
    };
    maud::html! {
        div.certificate {
            h2 { (what) ": " (d.path) (named(id)) }
            table {
                @for (k, v) in rows {
                    tr {
                        th { (k) }
                        @if k == "Verdict" || k == "Result" {
                            td class=[verdict_class(d.verdict)] { (v) }
                        } @else {
                            td { (v) }
                        }
                    }
                }
            }
        }
    }
}

/// A verify's spin cycles, a line per disk.
fn cycles(out: &mut Vec<Block>, r: &BurnReport) {
    let lines: Vec<String> = (r.disks.iter())
        .filter(|d| !d.burn.cycles.is_empty())
        .map(|d| format!("{}: {}", d.path, cycles_words(&d.burn.cycles)))
        .collect();
    if lines.is_empty() {
        return;
    }
    let bad = r.disks.iter().flat_map(|d| &d.burn.cycles).any(|c| !c.read_on());
    out.push(Block::Heading("Spin cycles".into(), if bad { Tone::Bad } else { Tone::Plain }));
    out.extend(lines.into_iter().map(Block::Note));
}

/// Each spin cycle in words: "cycle 1 back in 7.2 s; cycle 2 did not come
/// back (…)".
pub fn cycles_words(cycles: &[crate::burnin::cycle::Cycle]) -> String {
    use crate::burnin::cycle::Back;
    let each = cycles.iter().map(|c| {
        let n = match c.power {
            true => format!("power cycle {}", c.cycle),
            false => format!("cycle {}", c.cycle),
        };
        match (&c.back, c.spin_up_s) {
            (Back::Same, Some(s)) => format!("{n} back in {s:.1} s"),
            (Back::Same, None) => format!("{n} back"),
            (Back::NotSpun(why), _) if c.power => format!("{n} not made ({why})"),
            (Back::NotSpun(why), _) => format!("{n} not spun down ({why})"),
            (Back::Gone(why), _) => format!("{n} did NOT come back ({why})"),
            (Back::Other(what), _) => format!("{n} came back as ANOTHER drive ({what})"),
        }
    });
    each.collect::<Vec<_>>().join("; ")
}

/// The burn-in a verify read back, in a certificate's words.
pub fn burned_in_words(b: &crate::report::burnin::BurnedIn) -> String {
    let verdict = b.verdict.as_deref().map_or("its report not kept".into(), |v| {
        format!("its verdict {}", v.to_uppercase().replace('_', " "))
    });
    let ended = if b.finished { "finished" } else { "stopped" };
    format!(
        "run {}, {} pass(es), began {}, last written {}, {ended} ({}), {verdict}",
        b.run_id, b.passes, b.started_at, b.last_saved_at, b.place
    )
}

/// What SMART said over the run, in a certificate's words.
fn smart_words(d: &BurnDisk) -> String {
    match (&d.smart, &d.smart_note) {
        (Some(c), _) if c.deltas.is_empty() => "no counter rose".to_string(),
        (Some(c), _) => {
            let rose: Vec<String> =
                c.deltas.iter().map(|x| format!("{} {} → {}", x.name, x.before, x.after)).collect();
            format!("rose: {}", rose.join(", "))
        }
        (None, Some(note)) => format!("not compared ({note})"),
        (None, None) => "not read".into(),
    }
}

/// A disk's model and serial after its path, where known.
fn named(id: &crate::device::Identity) -> String {
    match (&id.model, &id.serial) {
        (Some(m), Some(s)) => format!(", {m}, serial {s}"),
        (Some(m), None) => format!(", {m}"),
        (None, Some(s)) => format!(", serial {s}"),
        (None, None) => String::new(),
    }
}

/// The bad bytes of a certificate: by class, or 0 where the disk was read
/// back and none was found ("-" where nothing was read back).
fn bad_bytes(b: &DiskBurn) -> String {
    match errors(b).as_str() {
        "-" if b.verified_bytes > 0 => "0".into(),
        said => said.into(),
    }
}

/// How often a run was resumed, for its certificate.
fn resumed(n: u32) -> String {
    if n == 0 { "no".into() } else { format!("{n} time(s), each from its checkpoint") }
}

/// A certificate's one word: PASS only for a healthy disk, FAIL for one to
/// act on; a disk not judged or interrupted is neither.
fn result(v: DiskVerdict) -> &'static str {
    match v {
        DiskVerdict::Healthy => "PASS",
        v if v.to_act_on() => "FAIL",
        DiskVerdict::NotJudged => "NOT JUDGED",
        _ => "INTERRUPTED",
    }
}

/// How a disk's verdict stands out: to act on, or not decided.
fn verdict_mark(v: DiskVerdict) -> Option<Mark> {
    match v {
        DiskVerdict::Healthy => None,
        v if v.to_act_on() => Some(Mark::Bad),
        _ => Some(Mark::Unsure),
    }
}

/// The colour of a disk's verdict on its certificate.
fn verdict_class(v: DiskVerdict) -> Option<&'static str> {
    verdict_mark(v).map(|m| match m {
        Mark::Bad => "bad",
        Mark::Unsure | Mark::Fast => "unsure",
    })
}

/// Each disk's MB/s across its range in pass `pass`'s `phase`, as chart
/// lines (a disk to act on in red); disks with no point left out. Each
/// stretch measured is a step across it, to the next one's start (the last
/// to the range's end): one stretch is a level line, two never a slope.
fn surface_lines(report: &BurnReport, pass: u16, phase: Phase) -> Vec<chart::Line> {
    let line = |d: &BurnDisk| {
        let len = (d.end_byte - d.start_byte).max(1) as f64;
        let at = |offset: u64| 100.0 * offset.saturating_sub(d.start_byte) as f64 / len;
        let mut points: Vec<_> =
            d.burn.surface.iter().filter(|p| p.pass == pass && p.phase == phase).collect();
        points.sort_by_key(|p| p.offset);
        let ends = points.iter().skip(1).map(|p| at(p.offset)).chain([100.0]);
        let spans: Vec<_> =
            points.iter().zip(ends).map(|(p, end)| (at(p.offset), end, p.mb_per_s)).collect();
        let points = chart::steps(&spans);
        chart::Line { label: d.identity.name.clone(), points, flagged: d.verdict.to_act_on() }
    };
    report.disks.iter().map(line).filter(|l| !l.points.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::burnin::record::SurfacePoint;

    fn recorded() -> BurnReport {
        let at = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/burnin/failing-disks/report.json");
        serde_json::from_slice(&std::fs::read(at).unwrap()).unwrap()
    }

    #[test]
    fn one_stretch_is_a_level_line_and_two_never_a_slope() {
        let mut r = recorded();
        let point = |offset, mb_per_s| SurfacePoint {
            pass: 1,
            phase: Phase::Write,
            offset,
            mb_per_s,
            bytes: 0,
        };
        let (a, b) = (&r.disks[0], &r.disks[1]);
        let half = a.start_byte + (a.end_byte - a.start_byte) / 2;
        let (first, second) =
            ([point(half, 80.0), point(a.start_byte, 100.0)], point(b.start_byte, 90.0));
        r.disks[0].burn.surface = first.to_vec();
        r.disks[1].burn.surface = vec![second];
        let lines = surface_lines(&r, 1, Phase::Write);
        assert_eq!(lines[0].points, [(0.0, 100.0), (50.0, 100.0), (50.0, 80.0), (100.0, 80.0)]);
        assert_eq!(lines[1].points, [(0.0, 90.0), (100.0, 90.0)], "drawn across, not a dot");
    }
}

//! The human report: solnet-array-test's tables ("Disk / Disk Size /
//! MB/sec / %ofAvg", "Serial / Parall / % of Serial", "Bytes Transferred /
//! Seconds / %ofAvg") with latency columns, SLOW/FAST marks, and a one-line
//! verdict. A pure function of the [`Report`]; laid out as
//! [`Block`]s, which the Markdown and the page render too.

use crate::judge::advice::DiskAdvice;

use crate::export::doc::{self, Block, Cell, Grid, Mark, Tone};
use crate::judge::Verdict;
use crate::judge::random::Figures;
use crate::judge::surface::Against;
use crate::measure::{PassKind, keep_slowest};
use crate::report::{ConfirmRow, Pass, PassDisk, Report, WindowKind};
use crate::units::{human_bytes, human_bytes_binary, human_duration};

/// Renders the whole report.
pub fn render(r: &Report) -> String {
    doc::text(&blocks(r))
}

/// The report with more (`-v`): before its verdict, each serial slice's
/// and each re-measured round's MB/s, a table a pass.
pub fn verbose_blocks(r: &Report) -> Vec<Block> {
    let mut out = blocks(r);
    let verdict = out.pop();
    for p in r.passes.iter().filter(|p| !p.slices.is_empty()) {
        let title = format!("{}: each slice (MB/s over its window)", pass_title(r, p));
        out.push(Block::Heading(title, Tone::Plain));
        out.push(Block::Tight(slice_table(&p.slices)));
    }
    for c in r.confirmations.iter().filter(|c| !c.measured.is_empty()) {
        out.push(Block::Heading(format!("Re-measured {}: each round", c.path), Tone::Plain));
        out.push(Block::Tight(slice_table(&c.measured)));
    }
    out.extend(verdict);
    out
}

/// Slices as a table: disk, round, when, how long, MB/s.
fn slice_table(slices: &[crate::report::SliceRow]) -> Grid {
    let mut g = Grid::new(&["Disk", "Round", "At s", "For s", "MB/sec"]).numbers(1..5);
    for s in slices {
        let (at, len, mb) =
            (format!("{:.1}", s.at_s), format!("{:.1}", s.elapsed_s), format!("{:.0}", s.mb_per_s));
        g.row(vec![s.path.clone(), (s.round + 1).to_string(), at, len, mb]);
    }
    g
}

/// The report as blocks, for the text, the Markdown and the page.
pub fn blocks(r: &Report) -> Vec<Block> {
    let mut out = Vec::new();
    header(&mut out, r);
    super::inspect::opening(&mut out, &r.inspection);
    for p in &r.passes {
        match p.kind {
            PassKind::Serial => serial(&mut out, r, p),
            PassKind::Parallel => parallel(&mut out, r, p),
            PassKind::Seek => seek(&mut out, r, p),
        }
    }
    confirmations(&mut out, r);
    random(&mut out, r);
    vibration(&mut out, r);
    errors(&mut out, r);
    kernel(&mut out, r);
    out.push(verdict(r, &r.summary.disk_verdicts, &r.summary.message));
    out
}

/// The check's disks as the kernel saw them.
fn kernel(out: &mut Vec<Block>, r: &Report) {
    kernel_section(out, r.disks.iter().filter_map(|d| Some((d.path.as_str(), d.kernel.as_ref()?))));
}

/// What the kernel saw of each disk that it said anything of: its lines
/// by kind, the counters that rose, its first and last lines (the check's
/// and the burn-in's reports).
pub fn kernel_section<'a>(
    out: &mut Vec<Block>,
    disks: impl Iterator<Item = (&'a str, &'a crate::device::kernel::Seen)>,
) {
    let spoke: Vec<(&str, &crate::device::kernel::Seen)> = disks
        .filter(|(_, k)| {
            k.not_read.is_none()
                && (!k.counts.is_empty() || k.risen().next().is_some() || k.while_cut > 0)
        })
        .collect();
    if spoke.is_empty() {
        return;
    }
    out.push(Block::Heading(
        "What the kernel saw during the run (its log and counters)".into(),
        Tone::Plain,
    ));
    for (path, k) in spoke {
        let mut said: Vec<String> =
            k.counts.iter().map(|(kind, n)| format!("{} {n}", kind.word())).collect();
        said.extend(k.risen().map(|c| format!("{} +{}", c.name, c.rose())));
        if !k.sectors.is_empty() {
            let at: Vec<String> = k.sectors.iter().take(5).map(u64::to_string).collect();
            said.push(format!("sectors {}", at.join(", ")));
        }
        if k.while_cut > 0 {
            said.push(format!("{} line(s) while the run had cut its power", k.while_cut));
        }
        let planned = k.planned.as_ref().map(|p| format!(" ({p}: not judged)")).unwrap_or_default();
        out.push(Block::Item(format!("{path}{planned}: {}", said.join(", "))));
        for line in k.first.iter().chain(&k.last) {
            out.push(Block::Sub(crate::escape::terminal(line)));
        }
    }
}

/// The closing lines of a report, the check's and the burn-in's: a
/// sentence per disk to act on, then the verdict.
pub fn verdict(
    run: &impl crate::rundoc::Document,
    to_act_on: &[DiskAdvice],
    message: &str,
) -> Block {
    Block::Verdict {
        headline: doc::headline(&run.document()),
        to_act_on: to_act_on.iter().map(|a| a.sentence.clone()).collect(),
        message: message.to_string(),
    }
}

/// The check's first line: what ran, on which host, when.
pub fn title(r: &Report) -> String {
    let o = &r.options;
    format!(
        "arrayburn {} array read check (read-only, O_DIRECT, {} reads, {}) on {}, started {}",
        r.header.tool_version,
        human_bytes_binary(o.block_bytes),
        match o.engine.as_str() {
            "io_uring" => format!("io_uring, {} in flight per disk", o.queue_depth),
            other => format!("{other}, one at a time"),
        },
        r.header.host,
        r.header.started_at
    )
}

/// The line that says a document is not a run's final report, if any.
pub fn partial(interrupted: bool, complete: bool) -> Option<&'static str> {
    if interrupted {
        Some("*** INTERRUPTED: the check was stopped; these are partial results ***")
    } else if !complete {
        Some("*** PARTIAL: saved after a pass while the check went on; not its final report ***")
    } else {
        None
    }
}

fn header(out: &mut Vec<Block>, r: &Report) {
    out.push(Block::Title(title(r)));
    if let Some(a) = partial(r.header.interrupted, r.header.complete) {
        out.push(Block::Alert(a.into()));
    }
    let mut t = Grid::new(&[
        "Disk",
        "Name",
        "Model",
        "Serial",
        "Size",
        "Sector",
        "Group",
        "Controller",
        "Link",
        "In use",
    ])
    .optional(&[1, 6, 7, 9, 5, 8, 3]);
    for d in &r.disks {
        let in_use = if d.in_use.is_empty() {
            Cell::from("-")
        } else {
            Cell::marked("IN USE", Some(Mark::Bad))
        };
        t.row(vec![
            d.path.clone().into(),
            d.identity.name.clone().into(),
            d.identity.model.clone().unwrap_or_else(|| "-".into()).into(),
            d.identity.serial.clone().unwrap_or_else(|| "-".into()).into(),
            human_bytes(d.identity.size_bytes).into(),
            format!("{}/{}", d.identity.logical_block_size, d.identity.physical_block_size).into(),
            d.peer_group.to_string().into(),
            d.identity.topology.controller_words().into(),
            d.identity.topology.link_words().into(),
            in_use,
        ]);
    }
    out.push(Block::Table(t));
}

/// The disks re-measured before their verdict, and what it decided.
fn confirmations(out: &mut Vec<Block>, r: &Report) {
    if r.confirmations.is_empty() {
        return;
    }
    out.push(Block::Heading(
        "Re-measured before the verdict (one pass alone called them slow or could not decide):"
            .into(),
        Tone::Plain,
    ));
    for c in &r.confirmations {
        out.push(Block::Item(format!("{}: {}", c.path, c.sentence)));
    }
}

fn window_text(r: &Report, p: &Pass) -> String {
    let sample = human_duration(std::time::Duration::from_secs_f64(r.options.sample_s));
    if p.window == WindowKind::Full {
        format!("whole disks{}", slices_text(r, p))
    } else if p.kind == PassKind::Seek {
        format!("{sample} per disk")
    } else if r.options.spots > 1 {
        format!("{sample} per disk spread over {} spots{}", r.options.spots, slices_text(r, p))
    } else if p.kind == PassKind::Serial && r.options.slices > 1 {
        format!("{sample} from the start of each disk{}", slices_text(r, p))
    } else {
        format!("{sample} from the start of each disk")
    }
}

/// ", in 6 slices interleaved with the other disks'" of a sliced serial pass.
fn slices_text(r: &Report, p: &Pass) -> String {
    if p.kind != PassKind::Serial || r.options.slices < 2 {
        return String::new();
    }
    format!(", read in {} slices interleaved with the other disks'", r.options.slices)
}

/// A pass's heading: "Serial pass: one disk at a time, 30 s …".
pub fn pass_title(r: &Report, p: &Pass) -> String {
    match p.kind {
        PassKind::Serial => format!("Serial pass: one disk at a time, {}", window_text(r, p)),
        PassKind::Parallel => format!("Parallel pass: all disks at once, {}", window_text(r, p)),
        PassKind::Seek => format!(
            "Seek-stress pass: all disks at once, {} staggered readers per disk, {}",
            r.options.seek_readers.unwrap_or(0),
            window_text(r, p)
        ),
    }
}

fn serial(out: &mut Vec<Block>, r: &Report, p: &Pass) {
    out.push(Block::Heading(pass_title(r, p), Tone::Plain));
    if let Some(m) = p.median_mb_per_s {
        out.push(Block::Note(format!("Array's typical speed (median) is {m:.1} MB/sec per disk")));
    }
    if let Some(c) = p.conditions {
        let moved = if c.moved { "shared conditions changed" } else { "steady" };
        out.push(Block::Note(format!(
            "Array's own speed over the rounds: {:.0}% to {:.0}% of its median ({moved}); %ofAvg compares each slice with its peers' read close to it, (low-high) the spread over its slices",
            c.low_pct, c.high_pct
        )));
    }
    let mut t = Grid::new(&[
        "Disk",
        "Disk Size",
        "MB/sec",
        "%ofAvg",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "Flag",
    ])
    .numbers(1..8)
    .optional(&[6, 4, 7, 5]);
    for d in &p.disks {
        let row =
            vec![d.path.clone(), size_mb(r, d), format!("{:.0}", d.window_mb_per_s), pct_spread(d)];
        add_measured_row(&mut t, row, d, flag(r, p, d));
    }
    out.push(Block::Table(t));
    latency_table(out, r, p);
}

/// "86 (82-90)" where a disk has a spread over slices, its % alone else.
fn pct_spread(d: &PassDisk) -> String {
    match (d.pct_of_peers, d.pct_of_peers_low, d.pct_of_peers_high, d.slices) {
        (Some(p), Some(lo), Some(hi), Some(n)) if n > 1 => format!("{p:.0} ({lo:.0}-{hi:.0})"),
        _ => pct(d.pct_of_peers),
    }
}

/// A disk's flag in a pass: its verdict's mark, or "re-measured: ok" where
/// re-measuring it cleared the pass's call.
fn flag(r: &Report, p: &Pass, d: &PassDisk) -> Cell {
    let cleared = |c: &&ConfirmRow| c.path == d.path && c.pass == p.kind;
    match r.confirmations.iter().find(cleared) {
        Some(c) if c.verdict == Verdict::Ok => Cell::from("re-measured: ok"),
        _ => verdict_cell(d.verdict),
    }
}

/// A verdict's mark as a cell, coloured by what it is.
fn verdict_cell(v: Verdict) -> Cell {
    Cell::marked(v.mark(), verdict_mark(v))
}

/// How a verdict stands out on the page.
pub fn verdict_mark(v: Verdict) -> Option<Mark> {
    match v {
        Verdict::Ok => None,
        Verdict::Slow | Verdict::Error => Some(Mark::Bad),
        Verdict::Unsure => Some(Mark::Unsure),
        Verdict::Fast => Some(Mark::Fast),
    }
}

fn parallel(out: &mut Vec<Block>, r: &Report, p: &Pass) {
    out.push(Block::Heading(pass_title(r, p), Tone::Plain));
    out.push(Block::Note(format!("Array reads {:.1} MB/sec in parallel", p.aggregate_mb_per_s)));
    if r.summary.shared_bottleneck {
        out.push(Block::Note(
            "(shared bottleneck: per-disk numbers show each disk's share of the path, not the disk)"
                .into(),
        ));
    }
    vs_serial_table(out, r, p, "Parall MB/sec", "%ofAvg", |d| d.pct_of_peers);
    latency_table(out, r, p);
    if p.window == WindowKind::Full {
        completion(out, p);
    }
}

fn seek(out: &mut Vec<Block>, r: &Report, p: &Pass) {
    out.push(Block::Heading(pass_title(r, p), Tone::Plain));
    out.push(Block::Note(format!(
        "Array reads {:.1} MB/sec under seek stress; %ofPeers compares each disk's % of Serial with its peers'",
        p.aggregate_mb_per_s
    )));
    vs_serial_table(out, r, p, "Seek MB/sec", "%ofPeers", |d| d.seek_pct_of_peers);
    latency_table(out, r, p);
}

/// The table of a pass compared with the serial pass: serial and this
/// pass's MB/s, % of serial, a % against the peers, latency and flag.
fn vs_serial_table(
    out: &mut Vec<Block>,
    r: &Report,
    p: &Pass,
    speed: &str,
    peers: &str,
    peer_pct: fn(&PassDisk) -> Option<f64>,
) {
    let mut t = Grid::new(&[
        "Disk",
        "Disk Size",
        "Serial MB/sec",
        speed,
        "% of Serial",
        peers,
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "Flag",
    ])
    .numbers(1..10)
    .optional(&[8, 6, 9, 7, 2]);
    let serial = r.passes.iter().find(|x| x.kind == PassKind::Serial);
    for d in &p.disks {
        let s = serial
            .and_then(|s| s.disks.iter().find(|x| x.path == d.path))
            .map(|x| format!("{:.0}", x.window_mb_per_s));
        let row = vec![
            d.path.clone(),
            size_mb(r, d),
            s.unwrap_or_else(|| "-".into()),
            format!("{:.0}", d.window_mb_per_s),
            pct(d.pct_of_serial),
            pct(peer_pct(d)),
        ];
        add_measured_row(&mut t, row, d, flag(r, p, d));
    }
    out.push(Block::Table(t));
}

/// The random reads: each disk at each depth, alone (IOPS and latency)
/// and all at once, with what they found.
fn random(out: &mut Vec<Block>, r: &Report) {
    let Some(x) = &r.random else { return };
    out.push(Block::Heading(
        format!(
            "Random reads ({} at random over each whole disk, {} a disk and depth, alone then all at once)",
            human_bytes_binary(x.block_bytes),
            x.each()
        ),
        Tone::Plain,
    ));
    let mut t = Grid::new(&[
        "Disk",
        "Depth",
        "IOPS",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "Together IOPS",
        "p99 ms",
        "Flag",
    ])
    .numbers(1..9)
    .optional(&[5, 3, 6, 4, 8]);
    for d in &x.disks {
        for (i, a) in d.alone.iter().enumerate() {
            t.row(random_row(r, d, (&a.figures, d.together.get(i).map(|t| &t.figures))));
        }
    }
    out.push(Block::Table(t));
    for d in &x.disks {
        if let Some(log) = &d.drive_log {
            out.push(Block::Note(format!("{}'s own latency log: {}.", d.path, log.words())));
        }
    }
}

/// The neighbour pass: each disk's bay, its random reads alone and beside
/// its seeking neighbours, its loss, and whether it was named.
fn vibration(out: &mut Vec<Block>, r: &Report) {
    let Some(x) = &r.vibration else { return };
    out.push(Block::Heading(
        format!(
            "Neighbour vibration ({} random reads at depth 1, {} alone, then {} while the disks beside it seek at depth {})",
            human_bytes_binary(x.block_bytes),
            x.each(),
            x.each(),
            x.load_depth
        ),
        Tone::Plain,
    ));
    let mut t = Grid::new(&[
        "Disk",
        "Bay",
        "IOPS alone",
        "IOPS beside",
        "Loss %",
        "p99 ms alone",
        "p99 ms beside",
        "Flag",
    ])
    .numbers(2..7)
    .optional(&[1, 5, 6]);
    let ms = p99_ms;
    let iops = |f: &Figures| f.iops.map_or("-".into(), |x| format!("{x:.0}"));
    for d in &x.disks {
        let named = r.summary.vibration.iter().any(|f| f.path == d.path);
        let loaded = d.loaded.as_ref().map(|l| &l.figures);
        t.row(vec![
            d.path.clone().into(),
            d.bay.clone().unwrap_or_else(|| "-".into()).into(),
            iops(&d.alone.figures).into(),
            loaded.map_or("-".into(), iops).into(),
            pct(d.loss_pct).into(),
            ms(&d.alone.figures).into(),
            loaded.map_or("-".into(), ms).into(),
            Cell::marked(if named { "shaken" } else { "" }, named.then_some(Mark::Bad)),
        ]);
    }
    out.push(Block::Table(t));
}

/// A run's p99 in ms, or "-" where it read nothing.
fn p99_ms(f: &Figures) -> String {
    if f.reads == 0 { "-".into() } else { format!("{:.2}", f.latency_us.p99 / 1000.0) }
}

/// One disk's row at one depth: alone, together, and what was found.
fn random_row(
    r: &Report,
    d: &crate::report::random::RandomRow,
    (f, together): (&Figures, Option<&Figures>),
) -> Vec<Cell> {
    let iops = |f: &Figures| f.iops.map_or("-".into(), |x| format!("{x:.0}"));
    let l = &f.latency_us;
    let ms = |us: f64| if f.reads == 0 { "-".into() } else { format!("{:.2}", us / 1000.0) };
    let found: Vec<&str> = (r.summary.random.iter())
        .filter(|g| g.path == d.path && g.depth == f.depth)
        .map(|g| g.kind.words())
        .collect();
    let mark = (!found.is_empty()).then_some(Mark::Bad);
    vec![
        d.path.clone().into(),
        f.depth.to_string().into(),
        iops(f).into(),
        ms(l.p50).into(),
        ms(l.p99).into(),
        ms(l.p999).into(),
        ms(l.max).into(),
        together.map_or("-".into(), iops).into(),
        together.map_or("-".into(), p99_ms).into(),
        Cell::marked(found.join(", "), mark),
    ]
}

/// solnet's completion-time table, normalised for disk size.
fn completion(out: &mut Vec<Block>, p: &Pass) {
    if let Some(m) = p.median_elapsed_s {
        out.push(Block::Heading(
            format!(
                "Disk's typical time (median) is {m:.0} seconds per disk; %ofAvg compares time per byte"
            ),
            Tone::Plain,
        ));
    }
    let mut t = Grid::new(&["Disk", "Bytes Transferred", "Seconds", "%ofAvg", "Complete", "Flag"])
        .numbers(1..4);
    for d in &p.disks {
        let complete = if d.reached_end { "yes" } else { "no" };
        t.row(vec![
            d.path.clone().into(),
            d.bytes.to_string().into(),
            format!("{:.0}", d.elapsed_s).into(),
            pct(d.time_pct_of_peers).into(),
            complete.into(),
            verdict_cell(d.verdict),
        ]);
    }
    out.push(Block::Table(t));
}

/// MHDD's latency bins per disk, and the slow reads with their offsets.
/// The pass's reads per latency bin, and each disk's slow spots.
fn latency_table(out: &mut Vec<Block>, r: &Report, p: &Pass) {
    let o = &r.options;
    let mut t =
        Grid::new(&["Disk", "<3ms", "<10ms", "<50ms", "<150ms", "<500ms", ">=500ms", "slow reads"])
            .numbers(1..8);
    for d in &p.disks {
        let mut row = vec![d.path.clone()];
        let counts = d.latency_bins.counts().into_iter().chain([d.slow_read_count]);
        row.extend(counts.map(|c| c.to_string()));
        t.row(row);
    }
    out.push(Block::Heading(
        format!(
            "Read latency ({} reads; slow = {:.0} ms or more)",
            human_bytes_binary(o.block_bytes),
            (o.slow_read_ms + crate::defaults::size_time(o.block_bytes).as_secs_f64() * 1e3)
                .min(o.stall_ms.max(o.slow_read_ms))
        ),
        Tone::Plain,
    ));
    out.push(Block::Tight(t));
    slow_spots(out, p);
}

/// Each disk's slowest reads and its slow regions, a line each.
fn slow_spots(out: &mut Vec<Block>, p: &Pass) {
    for d in p.disks.iter().filter(|d| d.slow_read_count > 0) {
        let mut worst = d.slow_reads.clone();
        keep_slowest(&mut worst, 5);
        let shown: Vec<String> =
            worst.iter().map(|s| format!("byte {} ({:.0} ms)", s.offset, s.latency_ms)).collect();
        let more = if d.slow_read_count > 5 { ", …" } else { "" };
        out.push(Block::Item(format!(
            "{}: {} slow read(s): {}{more}",
            d.path,
            d.slow_read_count,
            shown.join(", ")
        )));
    }
    for d in &p.disks {
        for g in &d.slow_regions {
            out.push(Block::Item(format!(
                "{}: slow region bytes {}..{} ({} to {}): {:.1} MB/s against {:.1} MB/s ({})",
                d.path,
                g.start_byte,
                g.end_byte,
                human_bytes_binary(g.start_byte),
                human_bytes_binary(g.end_byte),
                g.mb_per_s,
                g.reference_mb_per_s,
                match g.against {
                    Against::Peers => "its peers there",
                    Against::Neighbours => "its neighbouring regions",
                }
            )));
        }
    }
}

fn errors(out: &mut Vec<Block>, r: &Report) {
    for p in &r.passes {
        for d in p.disks.iter().filter(|d| d.read_errors > 0) {
            out.push(Block::Heading(
                format!("!!ERROR!! {} ({} pass): {}", d.path, p.kind.name(), d.reasons.join("; ")),
                Tone::Bad,
            ));
            for e in &d.errors {
                let what = if e.exact { "unreadable" } else { "not read" };
                out.push(Block::Item(format!(
                    "{what}: bytes {}..{} ({} bytes): {}",
                    e.offset,
                    e.offset + e.len,
                    e.len,
                    e.message
                )));
            }
            if d.bad_ranges > d.errors.len() as u64 {
                out.push(Block::Item(format!(
                    "… and {} more range(s) (the first 64 are listed)",
                    d.bad_ranges - d.errors.len() as u64
                )));
            }
        }
    }
}

/// Disk size in decimal MB, as solnet prints it (`4000787MB`).
fn size_mb(r: &Report, d: &PassDisk) -> String {
    let bytes = r.disk(&d.path).map_or(0, |x| x.identity.size_bytes);
    format!("{}MB", bytes / 1_000_000)
}

fn pct(v: Option<f64>) -> String {
    v.map(|p| format!("{p:.0}")).unwrap_or_else(|| "-".into())
}

/// Appends the latency columns (ms) and the mark to `row` and adds it.
fn add_measured_row(t: &mut Grid, row: Vec<String>, d: &PassDisk, mark: Cell) {
    let l = &d.latency_us;
    let mut row: Vec<Cell> = row.into_iter().map(Cell::from).collect();
    row.extend([l.p50, l.p99, l.p999, l.max].iter().map(|us| format!("{:.1}", us / 1000.0).into()));
    row.push(mark);
    t.row(row);
}

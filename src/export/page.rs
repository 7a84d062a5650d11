//! The page of one run (`check --out`, `burnin --out`: report.html): the
//! verdict and the disks to act on first, in the run's own words and
//! colour, then the host, every table the text report has, and the charts
//! inline as SVG. Self-contained (no file, font or script to fetch) and
//! built with maud, which escapes every string it is given: a model string
//! or a host name is text, never markup. Printable: a print stylesheet
//! keeps tables whole where they fit and repeats their headers where not.
//!
//! A pure function of the blocks and the charts it is handed: it must not
//! judge, read devices or lay a report out anew.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::export::chart::Drawn;
use crate::export::doc::{Block, Cell, Grid, Mark, Tone};
use crate::header::Header;

/// A chart to show inline: its caption and its SVG document.
pub struct Figure {
    pub caption: String,
    pub svg: String,
}

/// What a page shows.
pub struct Page<'a> {
    /// The report laid out (its title, verdict, tables and lines).
    pub blocks: &'a [Block],
    /// The run's verdict as the JSON names it: the banner's colour.
    pub verdict: &'a str,
    pub header: &'a Header,
    pub figures: &'a [Figure],
    /// What only the page shows (a burn-in's certificates, its SMART
    /// counters side by side), after the report and before the charts.
    pub extra: Markup,
}

const CSS: &str = "\
body{font-family:sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#111}\
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}\
td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left;vertical-align:top}\
th{background:#eee}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.verdict{font-weight:bold;padding:.6em;border-radius:4px;font-size:1.1em}\
.flagged,.interrupted{background:#fdd}.healthy{background:#dfd}.not_judged{background:#ffe8b0}\
td.bad,.bad{color:#b00;font-weight:bold}td.unsure{color:#a60;font-weight:bold}td.fast{color:#06c}\
td.bad,td.unsure,td.fast{white-space:nowrap}tr.fault td{background:#fff0f0}\
.alert{background:#fdd;padding:.4em;font-weight:bold}\
#to-act-on li{margin:.3em 0}figure{margin:1em 0}figure svg{max-width:100%;height:auto}\
.certificate{border:2px solid #444;padding:1em;margin:1em 0}\
@media print{body{margin:0;max-width:none;font-size:10pt}\
h2{break-after:avoid}table{break-inside:auto}tr,figure,.certificate{break-inside:avoid}\
thead{display:table-header-group}.verdict,.alert,th,tr.fault td{-webkit-print-color-adjust:exact;print-color-adjust:exact}\
.certificate{break-before:page}}";

/// A check's page: its report's blocks, its verdict's colour, every chart.
pub fn check(r: &crate::report::Report, blocks: &[Block], charts: &[Drawn]) -> String {
    render(&Page {
        blocks,
        verdict: if r.header.interrupted { "interrupted" } else { r.summary.verdict.word() },
        header: &r.header,
        figures: &figures(charts),
        extra: html! { h2 { "Options" } (grid(&options(&r.options))) },
    })
}

/// The check's settings as it ran with them (defaults included).
fn options(o: &crate::report::Options) -> Grid {
    let mut g = Grid::new(&["Setting", "Value"]);
    let yes = |b: bool| if b { "whole disks" } else { "sampled" }.to_string();
    for (k, v) in [
        ("Read size", crate::units::human_bytes_binary(o.block_bytes)),
        ("Engine", format!("{}, {} in flight per disk", o.engine, o.queue_depth)),
        ("Sample per disk", format!("{} s", o.sample_s)),
        ("Serial slices", o.slices.to_string()),
        ("Spots", o.spots.to_string()),
        ("Serial pass", yes(o.serial_full)),
        ("Parallel pass", yes(o.parallel_full)),
        ("Slow below", format!("{} % of peers", o.slow_pct)),
        ("Fast above", format!("{} % of peers", o.fast_pct)),
        (
            "Slow read",
            format!(
                "{} ms or more beyond what its size needs at 50 MB/s (never more than the stall limit)",
                o.slow_read_ms
            ),
        ),
        ("Stall", format!("{} ms or more", o.stall_ms)),
        ("Max failed reads per disk", o.max_errors.to_string()),
        ("Surface buckets", o.buckets.to_string()),
        ("Seek readers", o.seek_readers.map_or("no seek pass".into(), |n| n.to_string())),
    ] {
        g.row(vec![k.into(), v]);
    }
    g
}

/// The charts as figures, each captioned with where its PNG is.
pub fn figures(charts: &[Drawn]) -> Vec<Figure> {
    let each = |c: &Drawn| Figure {
        caption: format!("{} (also charts/{}.png and .svg)", c.stem, c.stem),
        svg: c.svg.clone(),
    };
    charts.iter().map(each).collect()
}

/// The page as one HTML document.
pub fn render(p: &Page) -> String {
    let title = p.blocks.iter().find_map(|b| match b {
        Block::Title(t) => Some(t.as_str()),
        _ => None,
    });
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width";
                title { (title.unwrap_or("arrayburn report")) }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { (title.unwrap_or("arrayburn report")) }
                (verdict(p))
                (facts(p.header))
                (flow(p.blocks))
                (p.extra)
                @if !p.figures.is_empty() {
                    h2 { "Charts" }
                    @for f in p.figures {
                        figure {
                            // The SVG document's own XML declaration has
                            // no place inline.
                            (PreEscaped(f.svg.find("<svg").map_or(f.svg.as_str(), |i| &f.svg[i..])))
                            figcaption { (f.caption) }
                        }
                    }
                }
            }
        }
    };
    // Control characters (a host name's, a device path's) as escapes.
    crate::escape::lines(&page.into_string())
}

/// The verdict and the disks to act on, in the run's colour.
fn verdict(p: &Page) -> Markup {
    html! {
        @for b in p.blocks {
            @if let Block::Verdict { to_act_on, message, .. } = b {
                p #verdict class={ "verdict " (p.verdict) } { "Verdict: " (message) }
                @if !to_act_on.is_empty() {
                    h2 { "Disks to act on" }
                    ul #to-act-on { @for a in to_act_on { li { (a) } } }
                }
            }
        }
    }
}

/// The run: host, machine, kernel, version, command line, when.
fn facts(h: &Header) -> Markup {
    let state = match (h.interrupted, h.complete, h.kind) {
        (true, ..) => "interrupted: partial results",
        (false, true, _) => "complete",
        // A burn-in's report is written once, at its end.
        (false, false, crate::header::Kind::Burnin) => "ended early: not every disk burned whole",
        (false, false, _) => "partial: saved while the run went on",
    };
    let rows: [(&str, String); 8] = [
        ("Host", h.host.clone()),
        ("Machine id", h.machine.machine_id.clone().unwrap_or_else(|| "-".into())),
        ("Kernel", h.machine.kernel.clone().unwrap_or_else(|| "-".into())),
        ("arrayburn", h.tool_version.clone()),
        ("Command line", h.command_line.join(" ")),
        ("Started", h.started_at.clone()),
        ("Finished", h.finished_at.clone()),
        ("State", state.into()),
    ];
    html! {
        h2 { "The run" }
        table #run { @for (k, v) in rows { tr { th { (k) } td { (v) } } } }
    }
}

/// The report's blocks after its title and verdict: headings, notes,
/// tables, lists (an item's sub-items a list inside it).
fn flow(blocks: &[Block]) -> Markup {
    // Consecutive items make one list.
    let mut parts: Vec<Part> = Vec::new();
    for b in blocks {
        match (b, parts.last_mut()) {
            (Block::Item(s), Some(Part::List(items))) => items.push((s, Vec::new())),
            (Block::Item(s), _) => parts.push(Part::List(vec![(s, Vec::new())])),
            (Block::Sub(s), Some(Part::List(items))) => {
                if let Some((_, subs)) = items.last_mut() {
                    subs.push(s)
                }
            }
            (Block::Sub(s), _) => parts.push(Part::List(vec![(s, Vec::new())])),
            _ => parts.push(Part::One(b)),
        }
    }
    // The table before any heading is the disks'.
    let disks =
        parts.iter().position(|p| matches!(p, Part::One(Block::Table(_) | Block::Heading(..))));
    let disks = disks.filter(|i| matches!(parts[*i], Part::One(Block::Table(_))));
    html! {
        @for (i, part) in parts.iter().enumerate() {
            @if Some(i) == disks { h2 { "Disks" } }
            @match part {
                Part::List(items) => ul {
                    @for (item, subs) in items {
                        li {
                            (item)
                            @if !subs.is_empty() { ul { @for s in subs { li { (s) } } } }
                        }
                    }
                }
                Part::One(b) => (one(b))
            }
        }
    }
}

/// A block of the flow, or a list of items with their sub-items.
enum Part<'a> {
    One(&'a Block),
    List(Vec<(&'a str, Vec<&'a str>)>),
}

/// One block that is not a list.
fn one(b: &Block) -> Markup {
    html! {
        @match b {
            Block::Title(_) | Block::Verdict { .. } | Block::Item(_) | Block::Sub(_) => {}
            Block::Alert(s) => p.alert { (s) }
            Block::Heading(s, Tone::Plain) => h2 { (heading(s)) }
            Block::Heading(s, Tone::Bad) => h2.bad { (heading(s)) }
            Block::Note(s) => p { (s) }
            Block::Table(g) | Block::Tight(g) => (grid(g))
        }
    }
}

/// A heading as the page shows it: without the colon that leads the text
/// report's eye to the lines under it.
fn heading(s: &str) -> &str {
    s.strip_suffix(':').unwrap_or(s)
}

/// A table: numbers aligned right, marks coloured.
pub fn grid(g: &Grid) -> Markup {
    html! {
        table {
            thead { tr { @for h in &g.header { th { (h) } } } }
            tbody {
                @for r in &g.rows {
                    // A row with a fault in it stands out whole.
                    tr class=[r.iter().any(|c| c.mark == Some(Mark::Bad)).then_some("fault")] {
                        @for (i, c) in r.iter().enumerate() {
                            td class=[cell_class(g, i, c)] { (c.text) }
                        }
                    }
                }
            }
        }
    }
}

/// A cell's class: its mark's colour, or a number's alignment.
fn cell_class(g: &Grid, i: usize, c: &Cell) -> Option<&'static str> {
    match c.mark {
        Some(Mark::Bad) => Some("bad"),
        Some(Mark::Unsure) => Some("unsure"),
        Some(Mark::Fast) => Some("fast"),
        None => g.numbers.contains(&i).then_some("num"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_string_is_text_and_nothing_is_fetched() {
        let mut g = Grid::new(&["Disk", "Model"]).numbers(1..2);
        g.row(vec!["/dev/sda", "<script>alert(1)</script>"]);
        g.row(vec![Cell::from("/dev/sdb"), Cell::marked("--SLOW--", Some(Mark::Bad))]);
        let blocks = [
            Block::Title("t <b>".into()),
            Block::Table(g),
            Block::Item("a & b".into()),
            Block::Sub("c < d".into()),
            Block::Verdict {
                headline: "Verdict: FLAGGED".into(),
                to_act_on: vec!["<img src=x>".into()],
                message: "m".into(),
            },
        ];
        let mut header =
            Header::now(crate::header::Kind::Check, std::time::SystemTime::now(), Vec::new());
        header.host = "<evil & host>".into();
        let page = render(&Page {
            blocks: &blocks,
            verdict: "flagged",
            header: &header,
            figures: &[],
            extra: html! {},
        });
        assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{page}");
        assert!(page.contains("&lt;evil &amp; host&gt;") && page.contains("&lt;img src=x&gt;"));
        assert!(!page.contains("<script") && !page.contains("<img") && !page.contains("<evil"));
        assert!(!page.contains("src=\"") && !page.contains("href="), "nothing to fetch");
        assert!(page.contains(r#"<p id="verdict" class="verdict flagged">Verdict: m</p>"#));
        assert!(page.contains("<li>a &amp; b<ul><li>c &lt; d</li></ul></li>"), "{page}");
        // The row with a fault stands out, not the others.
        assert!(
            page.contains(r#"<tr class="fault"><td>/dev/sdb</td><td class="bad">--SLOW--</td>"#)
        );
        assert_eq!(page.matches("<tr class=\"fault\">").count(), 1, "{page}");
    }
}

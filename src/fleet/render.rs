//! A [`FleetReport`] in words (its own renderer: `export` renders a
//! check's `Report`): text for the terminal, Markdown for a
//! ticket, and one self-contained HTML page (tables, the verdict
//! sentences, a chart per disk model embedded as SVG; no script, no file
//! beside it, opens offline in any browser).

use std::fmt::Write as _;

use super::{FleetReport, Outlying, RunFinding, RunState, run_name};
use crate::export::chart::bars_svg;
use crate::export::doc::{show, table};
use crate::judge::links::sentence;
use crate::stats::median;

/// The text report.
pub fn text(r: &FleetReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "arrayburn {} fleet report: {} result(s), {} disk(s), {} host(s)\n",
        r.header.tool_version,
        r.sources.len(),
        r.disks(),
        r.hosts.len()
    );
    for s in &r.skipped {
        let _ = writeln!(out, "skipped: {}", s.why);
    }
    for (_, title, rs) in run_sections(r) {
        let _ = writeln!(out, "{title}:");
        for run in rs {
            let _ = writeln!(out, "  {} [{}]: {}", run_name(run), run.source, state_words(run));
            for w in &run.what {
                let _ = writeln!(out, "    {w}");
            }
        }
        let _ = writeln!(out);
    }
    if !r.outliers.is_empty() {
        let _ = writeln!(out, "Slow or fast for their model across the fleet:");
        let mut t =
            table(&["Host", "Disk", "Model", "Serial", "MB/s", "% of model", "Of", "Verdict"]);
        for o in &r.outliers {
            t.add_row(vec![
                o.host.clone(),
                o.path.clone(),
                o.model.clone().unwrap_or_else(|| "-".into()),
                o.serial.clone().unwrap_or_else(|| "-".into()),
                format!("{:.0}", o.mb_per_s),
                format!("{:.0}", o.pct_of_model),
                o.of.to_string(),
                o.verdict.word().to_uppercase(),
            ]);
        }
        let _ = writeln!(out, "{}\n", show(&t));
    }
    if !r.regressions.is_empty() {
        let _ = writeln!(out, "Worse than in earlier runs:");
        for g in &r.regressions {
            let _ = writeln!(
                out,
                "  {} {} ({} serial {}): {}",
                g.host,
                g.path,
                g.model.as_deref().unwrap_or("-"),
                g.serial.as_deref().unwrap_or("-"),
                g.what.join("; ")
            );
        }
        let _ = writeln!(out);
    }
    if !r.links.is_empty() {
        let _ = writeln!(out, "Links below their maximum (each host's latest result):");
        for l in &r.links {
            let _ = writeln!(out, "  {}: {}", l.host, sentence(&l.link));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "Per host:");
    for h in &r.hosts {
        let _ = writeln!(
            out,
            "  {}{}",
            h.host,
            h.machine_id.as_deref().map(|m| format!(" (machine {m})")).unwrap_or_default()
        );
        for run in &h.runs {
            let _ = writeln!(out, "    {run}");
        }
    }
    let _ = writeln!(out, "\nVerdict: {}", r.message);
    out
}

/// The run findings in sections: those that count (to act on; not
/// judged whole), then those a later run superseded.
/// Each: its HTML id, title and runs.
fn run_sections(r: &FleetReport) -> Vec<(&'static str, &'static str, Vec<&RunFinding>)> {
    let of = |f: &dyn Fn(&RunFinding) -> bool| r.runs.iter().filter(|x| f(x)).collect::<Vec<_>>();
    [
        (
            "runs-found",
            "Runs that found something (their own verdicts)",
            of(&|x| x.superseded_by.is_none() && x.state == RunState::Flagged),
        ),
        (
            "runs-open",
            "Runs not judged whole (interrupted, not finished, or a disk not compared)",
            of(&|x| x.superseded_by.is_none() && x.state != RunState::Flagged),
        ),
        (
            "runs-superseded",
            "Superseded (a later run measured those disks again)",
            of(&|x| x.superseded_by.is_some()),
        ),
    ]
    .into_iter()
    .filter(|(.., v)| !v.is_empty())
    .collect()
}

/// A run finding's state in words.
fn state_words(r: &RunFinding) -> String {
    let state = r.state.word().replace('_', " ").to_uppercase();
    match &r.superseded_by {
        Some(by) => format!("{state}, superseded by {by}"),
        None => state,
    }
}

/// The report as Markdown, for a ticket.
pub fn markdown(r: &FleetReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# arrayburn report\n\n{} result(s), {} disk(s), {} host(s); arrayburn {}, {}.\n\n**{}**\n",
        r.sources.len(),
        r.disks(),
        r.hosts.len(),
        md(&r.header.tool_version),
        md(&r.header.finished_at),
        md(&r.message)
    );
    for (_, title, rs) in run_sections(r) {
        let _ = writeln!(out, "## {title}\n");
        for run in rs {
            let _ = writeln!(
                out,
                "- **{}** ({}): {}",
                md(&run_name(run)),
                md(&run.source),
                md(&state_words(run))
            );
            for w in &run.what {
                let _ = writeln!(out, "  - {}", md(w));
            }
        }
        let _ = writeln!(out);
    }
    if !r.outliers.is_empty() {
        let _ = writeln!(
            out,
            "## Slow or fast for their model\n\n| Host | Disk | Model | Serial | MB/s | % of model | Verdict |\n|---|---|---|---|---|---|---|"
        );
        for o in &r.outliers {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.0} | {:.0} | {} |",
                md(&o.host),
                md(&o.path),
                md(o.model.as_deref().unwrap_or("-")),
                md(o.serial.as_deref().unwrap_or("-")),
                o.mb_per_s,
                o.pct_of_model,
                o.verdict.word()
            );
        }
        let _ = writeln!(out);
    }
    if !r.regressions.is_empty() {
        let _ = writeln!(out, "## Worse than before\n");
        for g in &r.regressions {
            let _ = writeln!(
                out,
                "- {} {} (serial {}): {}",
                md(&g.host),
                md(&g.path),
                md(g.serial.as_deref().unwrap_or("-")),
                md(&g.what.join("; "))
            );
        }
        let _ = writeln!(out);
    }
    if !r.links.is_empty() {
        let _ = writeln!(out, "## Links below their maximum\n");
        for l in &r.links {
            let _ = writeln!(out, "- **{}**: {}", md(&l.host), md(&sentence(&l.link)));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "## Hosts\n");
    for h in &r.hosts {
        let _ = writeln!(out, "- **{}**", md(&h.host));
        for run in &h.runs {
            let _ = writeln!(out, "  - {}", md(run));
        }
    }
    out
}

/// Text as literal Markdown: no markup, no HTML, no control characters.
fn md(s: &str) -> String {
    crate::escape::markdown(s)
}

/// One chart per disk model: each disk's latest serial MB/s, flagged ones
/// red, the model's median across.
fn charts(r: &FleetReport) -> Vec<String> {
    let mut models: Vec<(Option<String>, u64)> = Vec::new();
    for s in r.samples.iter().filter(|s| s.mb_per_s.is_some()) {
        let m = (s.model.clone(), s.size_bytes);
        if !models.contains(&m) {
            models.push(m);
        }
    }
    models
        .iter()
        .filter_map(|(model, size)| {
            let latest = super::latest_speeds(
                r.samples.iter().filter(|s| &s.model == model && s.size_bytes == *size),
            );
            let items: Vec<(String, f64, bool)> = latest
                .iter()
                .map(|s| {
                    let flagged = r.outliers.iter().any(|o| {
                        o.verdict == Outlying::Slow && o.host == s.host && o.path == s.path
                    });
                    let name = s.path.trim_start_matches("/dev/");
                    (format!("{}:{name}", s.host), s.mb_per_s.unwrap_or(0.0), flagged)
                })
                .collect();
            let values: Vec<f64> = items.iter().map(|i| i.1).collect();
            bars_svg(
                &format!(
                    "{}: serial MB/s per disk (red: slow for its model)",
                    model.as_deref().unwrap_or("unknown model")
                ),
                &items,
                median(&values),
            )
            .map_err(|e| tell!("arrayburn: a chart of the report was not drawn: {e}"))
            .ok()
        })
        .collect()
}

/// One self-contained HTML page, built with maud (every string escaped).
pub fn html(r: &FleetReport) -> String {
    use maud::{DOCTYPE, PreEscaped, html};
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "arrayburn report" }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "arrayburn report" }
                p {
                    (r.sources.len()) " result(s), " (r.disks()) " disk(s), " (r.hosts.len())
                    " host(s); arrayburn " (r.header.tool_version) ", " (r.header.finished_at) "."
                }
                p #verdict class={ "verdict " (r.verdict.word()) } { (r.message) }
                @if !r.skipped.is_empty() {
                    h2 { "Skipped" }
                    ul { @for s in &r.skipped { li { (s.why) } } }
                }
                @for (id, title, rs) in run_sections(r) {
                    h2 { (title) }
                    ul.runs id=(id) {
                        @for run in rs {
                            li {
                                b { (run_name(run)) } " (" (run.source) "): " (state_words(run))
                                ul { @for w in &run.what { li { (w) } } }
                            }
                        }
                    }
                }
                @if !r.outliers.is_empty() {
                    h2 { "Slow or fast for their model" }
                    table #outliers {
                        tr {
                            @for h in ["Host", "Disk", "Model", "Serial", "MB/s", "% of model", "Of", "Verdict"] {
                                th { (h) }
                            }
                        }
                        @for o in &r.outliers {
                            tr {
                                td { (o.host) } td { (o.path) } td { (opt(&o.model)) } td { (opt(&o.serial)) }
                                td { (format!("{:.0}", o.mb_per_s)) } td { (format!("{:.0}", o.pct_of_model)) }
                                td { (o.of) } td class=(o.verdict.word()) { (o.verdict.word()) }
                            }
                        }
                    }
                }
                @if !r.regressions.is_empty() {
                    h2 { "Worse than before" }
                    ul #regressions {
                        @for g in &r.regressions {
                            li {
                                b { (g.host) " " (g.path) }
                                " (" (opt(&g.model)) " serial " (opt(&g.serial)) "): " (g.what.join("; "))
                            }
                        }
                    }
                }
                @if !r.links.is_empty() {
                    h2 { "Links below their maximum" }
                    ul #links { @for l in &r.links { li { b { (l.host) } ": " (sentence(&l.link)) } } }
                }
                @let svgs = charts(r);
                @if !svgs.is_empty() {
                    h2 { "Speed per disk, by model" }
                    @for svg in &svgs {
                        // The SVG document's own XML declaration has no place inline.
                        figure.chart { (PreEscaped(svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]))) }
                    }
                }
                h2 { "Hosts" }
                @for h in &r.hosts {
                    h3 { (h.host) }
                    ul { @for x in &h.runs { li { (x) } } }
                }
                h2 { "Disks" }
                table #disks {
                    tr {
                        @for h in ["Host", "Disk", "Model", "Serial", "Run", "Kind", "MB/s", "Errors", "Verdict"] {
                            th { (h) }
                        }
                    }
                    @for s in &r.samples {
                        tr {
                            td { (s.host) } td { (s.path) } td { (opt(&s.model)) } td { (opt(&s.serial)) }
                            td { (s.started_at) } td { (s.kind.word()) }
                            td { (s.mb_per_s.map_or("-".into(), |v| format!("{v:.0}"))) }
                            td { (s.errors) } td { (s.verdict) }
                        }
                    }
                }
            }
        }
    };
    page.into_string()
}

const CSS: &str = "body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}\
td,th{border:1px solid #bbb;padding:.25em .6em;text-align:left}th{background:#eee}\
.verdict{font-weight:bold;padding:.5em;border-radius:4px}.flagged{background:#fdd}.healthy{background:#dfd}.not_judged{background:#ffe8b0}\
.slow{color:#b00;font-weight:bold}figure{margin:1em 0}\
@media print{body{margin:0;max-width:none}tr,figure{break-inside:avoid}.verdict{print-color-adjust:exact}}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{Doc, judge, load};

    #[test]
    fn the_page_stands_alone_and_escapes_what_it_shows() {
        let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/report/demo/report.json");
        let Doc::Check(mut r) = load(&demo).unwrap() else { panic!("a check") };
        r.header.host = "<evil & host>".into();
        let f = judge(&[("demo.json".into(), Doc::Check(r))], Vec::new(), &Default::default());
        let page = html(&f);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("&lt;evil &amp; host&gt;") && !page.contains("<evil"));
        assert!(page.contains("<svg"), "a chart embedded");
        assert!(!page.contains("<script") && !page.contains("src=\"http"), "nothing to fetch");
        assert!(page.contains(&maud::html! { (f.message) }.into_string()));
        let md = markdown(&f);
        assert!(md.contains("&lt;evil &amp; host&gt;") && !md.contains("<evil"), "{md}");
        assert!(text(&f).contains("Verdict: "));
    }
}

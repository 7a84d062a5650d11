//! A [`FleetReport`] in words (its own renderer: `export` renders a
//! check's `Report`): text for the terminal, Markdown for a
//! ticket, and one self-contained HTML page (tables, the verdict
//! sentences, a chart per disk model embedded as SVG; no script, no file
//! beside it, opens offline in any browser).

use std::fmt::Write as _;

use super::{FleetReport, Outlying, RunFinding, RunState, run_name};
use crate::export::chart::bars_svg;
use crate::export::text::{show, table};
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

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
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

/// One self-contained HTML page.
pub fn html(r: &FleetReport) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>arrayburn report</title>\n<style>\
body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}}\
td,th{{border:1px solid #bbb;padding:.25em .6em;text-align:left}}th{{background:#eee}}\
.verdict{{font-weight:bold;padding:.5em;border-radius:4px}}.flagged{{background:#fdd}}.healthy{{background:#dfd}}.not_judged{{background:#ffe8b0}}\
.slow{{color:#b00;font-weight:bold}}figure{{margin:1em 0}}\
</style></head><body>\n<h1>arrayburn report</h1>\n<p>{} result(s), {} disk(s), {} host(s); arrayburn {}, {}.</p>\n<p id=\"verdict\" class=\"verdict {}\">{}</p>\n",
        r.sources.len(),
        r.disks(),
        r.hosts.len(),
        esc(&r.header.tool_version),
        esc(&r.header.finished_at),
        r.verdict.word(),
        esc(&r.message)
    );
    if !r.skipped.is_empty() {
        let _ = writeln!(out, "<h2>Skipped</h2><ul>");
        for s in &r.skipped {
            let _ = writeln!(out, "<li>{}</li>", esc(&s.why));
        }
        let _ = writeln!(out, "</ul>");
    }
    for (id, title, rs) in run_sections(r) {
        let _ = writeln!(out, "<h2>{}</h2>\n<ul class=\"runs\" id=\"{id}\">", esc(title));
        for run in rs {
            let _ = writeln!(
                out,
                "<li><b>{}</b> ({}): {}<ul>{}</ul></li>",
                esc(&run_name(run)),
                esc(&run.source),
                esc(&state_words(run)),
                run.what.iter().map(|w| format!("<li>{}</li>", esc(w))).collect::<String>()
            );
        }
        let _ = writeln!(out, "</ul>");
    }
    if !r.outliers.is_empty() {
        let _ = writeln!(
            out,
            "<h2>Slow or fast for their model</h2>\n<table id=\"outliers\"><tr><th>Host</th><th>Disk</th><th>Model</th><th>Serial</th><th>MB/s</th><th>% of model</th><th>Of</th><th>Verdict</th></tr>"
        );
        for o in &r.outliers {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
                esc(&o.host),
                esc(&o.path),
                esc(o.model.as_deref().unwrap_or("-")),
                esc(o.serial.as_deref().unwrap_or("-")),
                o.mb_per_s,
                o.pct_of_model,
                o.of,
                esc(o.verdict.word()),
                esc(o.verdict.word())
            );
        }
        let _ = writeln!(out, "</table>");
    }
    if !r.regressions.is_empty() {
        let _ = writeln!(out, "<h2>Worse than before</h2>\n<ul id=\"regressions\">");
        for g in &r.regressions {
            let _ = writeln!(
                out,
                "<li><b>{} {}</b> ({} serial {}): {}</li>",
                esc(&g.host),
                esc(&g.path),
                esc(g.model.as_deref().unwrap_or("-")),
                esc(g.serial.as_deref().unwrap_or("-")),
                esc(&g.what.join("; "))
            );
        }
        let _ = writeln!(out, "</ul>");
    }
    if !r.links.is_empty() {
        let _ = writeln!(out, "<h2>Links below their maximum</h2>\n<ul id=\"links\">");
        for l in &r.links {
            let _ = writeln!(out, "<li><b>{}</b>: {}</li>", esc(&l.host), esc(&sentence(&l.link)));
        }
        let _ = writeln!(out, "</ul>");
    }
    let svgs = charts(r);
    if !svgs.is_empty() {
        let _ = writeln!(out, "<h2>Speed per disk, by model</h2>");
        for svg in svgs {
            // The SVG document's own XML declaration has no place inline.
            let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
            let _ = writeln!(out, "<figure class=\"chart\">{body}</figure>");
        }
    }
    let _ = writeln!(out, "<h2>Hosts</h2>");
    for h in &r.hosts {
        let _ = writeln!(
            out,
            "<h3>{}</h3><ul>{}</ul>",
            esc(&h.host),
            h.runs.iter().map(|x| format!("<li>{}</li>", esc(x))).collect::<String>()
        );
    }
    let _ = writeln!(
        out,
        "<h2>Disks</h2>\n<table id=\"disks\"><tr><th>Host</th><th>Disk</th><th>Model</th><th>Serial</th><th>Run</th><th>Kind</th><th>MB/s</th><th>Errors</th><th>Verdict</th></tr>"
    );
    for s in &r.samples {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.host),
            esc(&s.path),
            esc(s.model.as_deref().unwrap_or("-")),
            esc(s.serial.as_deref().unwrap_or("-")),
            esc(&s.started_at),
            esc(s.kind.word()),
            s.mb_per_s.map_or("-".into(), |v| format!("{v:.0}")),
            s.errors,
            esc(&s.verdict)
        );
    }
    let _ = writeln!(out, "</table>\n</body></html>");
    out
}

/// The page of one run (`check --out`, `burnin --out`): its report.html.
pub fn page_of(doc: super::Doc, source: &str) -> String {
    html(&super::judge(&[(source.into(), doc)], Vec::new(), &crate::judge::Thresholds::default()))
}

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
        assert!(page.contains(&esc(&f.message)));
        let md = markdown(&f);
        assert!(md.contains("&lt;evil &amp; host&gt;") && !md.contains("<evil"), "{md}");
        assert!(text(&f).contains("Verdict: "));
    }
}

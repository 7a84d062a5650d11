//! A [`FleetReport`] laid out as blocks, like the check's and the burn-in's
//! (`doc` renders them as text and Markdown, `page` as the page): the
//! runs that found something or are not whole, the disks slow or fast for
//! their model, those worse than before, the links, each host's runs,
//! every disk, and a chart per disk model.

use super::chart::{self, Bar, Drawn};
use super::doc::{Block, Cell, Grid, Mark, Tone};
use crate::fleet::FleetReport;
use crate::judge::Verdict;
use crate::judge::fleet::{RunFinding, RunState, run_name};
use crate::judge::links::sentence;
use crate::stats::median;

/// The report's blocks.
pub fn blocks(r: &FleetReport) -> Vec<Block> {
    let mut out = vec![Block::Title(title(r))];
    out.extend(r.skipped.iter().map(|s| Block::Alert(format!("skipped: {}", s.why))));
    runs(&mut out, r);
    outliers(&mut out, r);
    tails(&mut out, r);
    let worse: Vec<_> = r.regressions.iter().filter(|g| !g.acknowledged).collect();
    if !worse.is_empty() {
        out.push(Block::Heading("Worse than in earlier runs:".into(), Tone::Bad));
        for g in worse {
            out.push(Block::Item(format!(
                "{} {} ({} serial {}): {}",
                g.host,
                g.path,
                opt(&g.model),
                opt(&g.serial),
                g.what.join("; ")
            )));
        }
    }
    let links: Vec<_> = r.links.iter().filter(|l| !l.acknowledged).collect();
    if !links.is_empty() {
        let heading = "Links below their maximum (each host's latest result):";
        out.push(Block::Heading(heading.into(), Tone::Bad));
        out.extend(links.iter().map(|l| Block::Item(format!("{}: {}", l.host, sentence(&l.link)))));
    }
    acknowledged(&mut out, r);
    if !r.notes.is_empty() {
        let heading = "What the drives declared (each host's latest result's inspection):";
        out.push(Block::Heading(heading.into(), Tone::Plain));
        out.extend(
            r.notes.iter().map(|n| Block::Item(format!("{} {}: {}", n.host, n.path, n.sentence))),
        );
    }
    out.push(Block::Heading("Per host:".into(), Tone::Plain));
    for h in &r.hosts {
        let machine = h.machine_id.as_deref().map(|m| format!(" (machine {m})"));
        out.push(Block::Item(format!("{}{}", h.host, machine.unwrap_or_default())));
        out.extend(h.runs.iter().map(|x| Block::Sub(x.clone())));
    }
    out.push(Block::Heading("Disks:".into(), Tone::Plain));
    out.push(Block::Tight(disks(r)));
    out.push(verdict(r));
    out
}

/// The first line: what was read.
fn title(r: &FleetReport) -> String {
    let (version, results, hosts) = (&r.header.tool_version, r.sources.len(), r.hosts.len());
    let disks = r.disks();
    format!(
        "arrayburn {version} fleet report: {results} result(s), {disks} disk(s), {hosts} host(s)"
    )
}

/// The closing lines: what to act on (each sentence, naming its host and
/// disk, once), the verdict.
fn verdict(r: &FleetReport) -> Block {
    use crate::rundoc::Document;
    let mut to_act_on: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let run = r.document();
    let headline = super::doc::headline(&run);
    for a in run.to_act_on {
        if seen.insert(a.sentence.clone()) {
            to_act_on.push(a.sentence);
        }
    }
    Block::Verdict { headline, to_act_on, message: r.message.clone() }
}

/// The run findings in sections: those that count (to act on; not
/// judged whole), then those a later run superseded.
fn runs(out: &mut Vec<Block>, r: &FleetReport) {
    let of = |f: &dyn Fn(&RunFinding) -> bool| r.runs.iter().filter(|x| f(x)).collect::<Vec<_>>();
    let sections = [
        (
            "Runs that found something (their own verdicts):",
            Tone::Bad,
            of(&|x| x.superseded_by.is_none() && x.state == RunState::Flagged && !x.acknowledged),
        ),
        (
            "Runs not judged whole (interrupted, not finished, or a disk not compared):",
            Tone::Plain,
            of(&|x| x.superseded_by.is_none() && x.state != RunState::Flagged),
        ),
        (
            "Superseded (a later run measured those disks again):",
            Tone::Plain,
            of(&|x| x.superseded_by.is_some()),
        ),
    ];
    for (title, tone, rs) in sections.into_iter().filter(|(.., v)| !v.is_empty()) {
        out.push(Block::Heading(title.into(), tone));
        for run in rs {
            out.push(Block::Item(format!("{} [{}]: {}", run_name(run), run.source, state(run))));
            out.extend(run.what.iter().map(|w| Block::Sub(w.clone())));
        }
    }
}

/// The findings acknowledged: each with who accepted it, when and why.
fn acknowledged(out: &mut Vec<Block>, r: &FleetReport) {
    if r.acknowledged.is_empty() {
        return;
    }
    let heading = "Acknowledged (listed, not flagging; each flags again when its value moves):";
    out.push(Block::Heading(heading.into(), Tone::Plain));
    for a in &r.acknowledged {
        let (where_, x) = (format!("{} {}", a.host, a.path), &a.ack);
        out.push(Block::Item(format!("{}: {}: {}", where_.trim_end(), x.finding, x.value)));
        out.push(Block::Sub(format!("by {}, {}: {}", x.who, x.when, x.why)));
    }
}

/// A run finding's state in words.
fn state(r: &RunFinding) -> String {
    let state = r.state.word().replace('_', " ").to_uppercase();
    match &r.superseded_by {
        Some(by) => format!("{state}, superseded by {by}"),
        None => state,
    }
}

/// The disks slow or fast for their model.
fn outliers(out: &mut Vec<Block>, r: &FleetReport) {
    if r.outliers.is_empty() {
        return;
    }
    let slow = r.outliers.iter().any(|o| o.verdict == Verdict::Slow);
    let heading = "Slow or fast for their model across the fleet:";
    out.push(Block::Heading(heading.into(), if slow { Tone::Bad } else { Tone::Plain }));
    let header = ["Host", "Disk", "Model", "Serial", "MB/s", "% of model", "Of", "Verdict"];
    let mut g = Grid::new(&header).numbers(4..7).optional(&[3, 6, 2]);
    for o in &r.outliers {
        g.row(vec![
            Cell::from(o.host.as_str()),
            o.path.as_str().into(),
            opt(&o.model).into(),
            opt(&o.serial).into(),
            format!("{:.0}", o.mb_per_s).into(),
            format!("{:.0}", o.pct_of_model).into(),
            o.of.to_string().into(),
            Cell::marked(
                match (o.acknowledged, o.fleet_only) {
                    (true, _) => format!("{} (acknowledged)", o.verdict.word().to_uppercase()),
                    (false, true) => format!("{} (fleet only)", o.verdict.word().to_uppercase()),
                    (false, false) => o.verdict.word().to_uppercase(),
                },
                super::text::verdict_mark(o.verdict).filter(|_| !o.acknowledged),
            ),
        ]);
    }
    out.push(Block::Tight(g));
}

/// The disks whose random reads have a long tail against their model's.
fn tails(out: &mut Vec<Block>, r: &FleetReport) {
    if r.tails.is_empty() {
        return;
    }
    let heading =
        "Random reads with a long tail against their model across the fleet (depth 1, alone):";
    out.push(Block::Heading(heading.into(), Tone::Bad));
    let header =
        ["Host", "Disk", "Model", "Serial", "p50 ms", "p99 ms", "Model p50", "Model p99", "Of"];
    let mut g = Grid::new(&header).numbers(4..9).optional(&[3, 6, 7, 2, 8]);
    let ms = |us: f64| format!("{:.2}", us / 1000.0);
    for t in &r.tails {
        g.row(vec![
            Cell::from(t.host.as_str()),
            t.path.as_str().into(),
            opt(&t.model).into(),
            opt(&t.serial).into(),
            ms(t.p50_us).into(),
            Cell::marked(ms(t.p99_us), Some(super::doc::Mark::Bad)),
            ms(t.model_p50_us).into(),
            ms(t.model_p99_us).into(),
            t.of.to_string().into(),
        ]);
    }
    out.push(Block::Tight(g));
}

/// Every disk of every result: its run, speed, errors and verdict there.
fn disks(r: &FleetReport) -> Grid {
    let header = ["Host", "Disk", "Model", "Serial", "Run", "Kind", "MB/s", "Errors", "Verdict"];
    let mut g = Grid::new(&header).numbers(6..8).optional(&[3, 5, 2, 4]);
    // The slow ones, found once (a fleet of thousands of disks).
    let slow: std::collections::HashSet<(&str, &str, &str)> = (r.outliers.iter())
        .filter(|o| o.verdict == Verdict::Slow)
        .map(|o| (o.host.as_str(), o.path.as_str(), o.source.as_str()))
        .collect();
    for s in &r.samples {
        let slow = slow.contains(&(s.host.as_str(), s.path.as_str(), s.source.as_str()));
        let mb = s.mb_per_s.map_or("-".into(), |v| format!("{v:.0}"));
        let bad = |b: bool| b.then_some(Mark::Bad);
        g.row(vec![
            Cell::from(s.host.as_str()),
            s.path.as_str().into(),
            opt(&s.model).into(),
            opt(&s.serial).into(),
            s.started_at.as_str().into(),
            s.kind.word().into(),
            Cell::marked(mb, bad(slow)),
            Cell::marked(s.errors.to_string(), bad(s.errors > 0)),
            s.verdict.as_str().into(),
        ]);
    }
    g
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

/// The page: the blocks, the verdict's colour, the charts.
pub fn page(r: &FleetReport, blocks: &[Block], charts: &[Drawn]) -> String {
    let (verdict, header, figures) = (r.verdict.word(), &r.header, super::page::figures(charts));
    let extra = maud::html! {};
    super::page::render(&super::page::Page { blocks, verdict, header, figures: &figures, extra })
}

/// One chart per disk model and size: each disk's latest serial MB/s,
/// those slow for their model red, the model's median across. Bars run
/// across, one row per disk, so 24 or 96 disks keep their labels apart.
pub fn charts(r: &FleetReport) -> chart::Result<Vec<Drawn>> {
    let mut models: Vec<(Option<String>, u64)> = Vec::new();
    for s in r.samples.iter().filter(|s| s.mb_per_s.is_some()) {
        let m = (s.model.clone(), s.size_bytes);
        if !models.contains(&m) {
            models.push(m);
        }
    }
    let mut out = Vec::new();
    for (i, (model, size)) in models.iter().enumerate() {
        let of_model = r.samples.iter().filter(|s| &s.model == model && s.size_bytes == *size);
        let items: Vec<Bar> = crate::judge::fleet::latest_speeds(of_model)
            .iter()
            .map(|s| {
                let slow = r
                    .outliers
                    .iter()
                    .any(|o| o.verdict == Verdict::Slow && o.host == s.host && o.path == s.path);
                let name = s.path.trim_start_matches("/dev/");
                (format!("{}:{name}", s.host), s.mb_per_s.unwrap_or(0.0), slow)
            })
            .collect();
        let values: Vec<f64> = items.iter().map(|i| i.1).collect();
        let caption = format!(
            "{}, {}: latest serial MB/s per disk (red: slow for its model)",
            model.as_deref().unwrap_or("unknown model"),
            crate::units::human_bytes(*size)
        );
        out.push(chart::bars(&format!("model-{}", i + 1), &caption, &items, median(&values))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{Doc, judge, load};

    fn demo() -> crate::report::Report {
        let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/report/demo/report.json");
        let Doc::Check(r) = load(&demo).unwrap() else { panic!("a check") };
        *r
    }

    #[test]
    fn the_page_stands_alone_and_escapes_what_it_shows() {
        let mut r = demo();
        r.header.host = "<evil & host>".into();
        let f = judge(
            &[("demo.json".into(), Doc::Check(Box::new(r)))],
            Vec::new(),
            &Default::default(),
        );
        let blocks = blocks(&f);
        let page = page(&f, &blocks, &charts(&f).unwrap());
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("&lt;evil &amp; host&gt;") && !page.contains("<evil"));
        assert!(page.contains("<svg"), "a chart embedded");
        assert!(!page.contains("<script") && !page.contains("src=\"http"), "nothing to fetch");
        assert!(page.contains(&maud::html! { (f.message) }.into_string()));
        let md = crate::export::doc::markdown(&blocks);
        assert!(md.contains("&lt;evil &amp; host&gt;") && !md.contains("<evil"), "{md}");
        // Every disk in the Markdown too, the slow one's speed marked on
        // the page.
        assert!(md.contains("### Disks\n") && md.contains("| /dev/loop2 |"), "{md}");
        assert!(page.contains(r#"<td class="bad">100</td>"#), "{page}");
        assert!(crate::export::doc::text(&blocks).contains("Verdict: "));
    }

    #[test]
    fn each_model_and_size_has_its_own_chart_with_every_disk_named() {
        let r = demo();
        let mut small = demo();
        small.header.host = "other".into();
        for d in &mut small.disks {
            d.identity.size_bytes /= 2;
        }
        let docs = [
            ("a.json".into(), Doc::Check(Box::new(r))),
            ("b.json".into(), Doc::Check(Box::new(small))),
        ];
        let f = judge(&docs, Vec::new(), &Default::default());
        let charts = charts(&f).unwrap();
        assert_eq!(charts.len(), 2);
        assert_ne!(
            charts[0].svg.split("MB/s per disk").next(),
            charts[1].svg.split("MB/s per disk").next(),
            "two captions alike"
        );
        assert!(charts[0].svg.contains("vm:loop3"), "{}", charts[0].svg);
    }
}

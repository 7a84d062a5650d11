//! The exporters as pure functions of a `Report`, without devices: each
//! fixture under `fixtures/report/` is the `--out` bundle of a real check
//! (report.json, report.txt, surface.csv as the run wrote them). Rendering
//! the JSON again must give the same text, CSV and JSON byte for byte: the
//! JSON holds everything the text shows, and a change to the presentation
//! shows here as a diff. After a deliberate change, regenerate the
//! snapshots with `ARRAYBURN_UPDATE_SNAPSHOTS=1 cargo test exporters`.
//! The burn-in's bundles (`fixtures/burnin/`: `--out DIR` of real burn-ins
//! and soaks) are held to the same: its text and JSON from its JSON.

use std::path::{Path, PathBuf};

use arrayburn::export;
use arrayburn::export::doc::Block;
use arrayburn::report::Report;
use arrayburn::report::burnin::BurnReport;

fn fixtures() -> Vec<PathBuf> {
    fixtures_of("report")
}

/// The recorded bundles under `fixtures/KIND/`.
fn fixtures_of(kind: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(kind);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("report.json").is_file())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no fixture in {}", root.display());
    dirs
}

/// Compares `got` with the snapshot `file` (or rewrites it on request),
/// showing the first differing line.
fn snapshot(file: &Path, got: &[u8]) {
    if std::env::var_os("ARRAYBURN_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(file, got).unwrap();
        return;
    }
    let want = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    if got != want {
        let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(&want));
        let line = g
            .lines()
            .zip(w.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(g.lines().count().min(w.lines().count()));
        panic!(
            "{} differs at line {}:\n  got:  {:?}\n  want: {:?}",
            file.display(),
            line + 1,
            g.lines().nth(line),
            w.lines().nth(line)
        );
    }
}

#[test]
fn exporters_reproduce_each_bundle_from_its_json() {
    for dir in fixtures() {
        let json = std::fs::read(dir.join("report.json")).unwrap();
        let report: Report =
            serde_json::from_slice(&json).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        snapshot(&dir.join("report.txt"), export::text::render(&report).as_bytes());
        snapshot(&dir.join("surface.csv"), &export::csv::render(&report));
        snapshot(&dir.join("report.json"), &export::json::render(&report));
    }
}

#[test]
fn exporters_reproduce_each_burn_in_bundle_from_its_json() {
    for dir in fixtures_of("burnin") {
        let json = std::fs::read(dir.join("report.json")).unwrap();
        let report: BurnReport =
            serde_json::from_slice(&json).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        snapshot(&dir.join("report.txt"), export::burnin::render(&report).as_bytes());
        snapshot(&dir.join("report.json"), &export::burnin::json(&report));
        // What a burn-in records, `report` reads (it refuses numbers out of
        // their unit's range: a surface stretch of one request once
        // recorded 6.6 million MB/s).
        arrayburn::fleet::load(&dir.join("report.json")).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn the_text_shows_the_judges_references() {
    for dir in fixtures() {
        let report: Report =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
        let text = export::text::render(&report);
        for p in &report.passes {
            if let Some(m) = p.median_mb_per_s.filter(|_| p.kind.name() == "serial") {
                let line = format!("Array's typical speed (median) is {m:.1} MB/sec per disk");
                assert!(text.contains(&line), "{}: {line}", dir.display());
            }
            for d in &p.disks {
                let mark = d.verdict.mark();
                if !mark.is_empty() {
                    assert!(
                        text.lines().any(|l| l.contains(&d.path) && l.contains(mark)),
                        "{}: {} marked {mark}",
                        dir.display(),
                        d.path
                    );
                }
            }
        }
    }
}

/// Each text a block holds, as the page must show it (escaped).
fn texts(blocks: &[Block]) -> Vec<String> {
    let mut out = Vec::new();
    for b in blocks {
        match b {
            Block::Title(s) | Block::Alert(s) | Block::Note(s) => out.push(s.clone()),
            // A heading's closing colon is the text report's.
            Block::Heading(s, _) => out.push(s.strip_suffix(':').unwrap_or(s).to_string()),
            Block::Item(s) | Block::Sub(s) => out.push(s.clone()),
            Block::Table(g) | Block::Tight(g) => {
                out.extend(g.header.iter().cloned());
                out.extend(g.rows.iter().flatten().map(|c| c.text.clone()));
            }
            Block::Verdict { to_act_on, message, .. } => {
                out.extend(to_act_on.iter().cloned());
                out.push(message.clone());
            }
        }
    }
    out.into_iter().map(|s| maud::html! { (s) }.into_string()).collect()
}

/// The page and the Markdown of each recorded bundle: snapshots, and the
/// page holds every line and cell of the text report, and more.
#[test]
fn pages_and_markdown_of_each_bundle_carry_the_whole_report() {
    let check = fixtures().into_iter().map(|dir| {
        let report: Report =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
        let blocks = export::text::blocks(&report);
        let page = export::page::check(&report, &blocks, &[]);
        (dir, blocks, page)
    });
    let burnin = fixtures_of("burnin").into_iter().map(|dir| {
        let report: BurnReport =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
        let blocks = export::burnin::blocks(&report);
        let page = export::burnin::page(&report, &blocks, &[]);
        assert_eq!(
            page.matches("<div class=\"certificate\">").count(),
            report.disks.len(),
            "{}: a certificate per disk",
            dir.display()
        );
        (dir, blocks, page)
    });
    for (dir, blocks, page) in check.chain(burnin) {
        for t in texts(&blocks) {
            assert!(page.contains(&t), "{}: the page lacks {t:?}", dir.display());
        }
        let first = page.find("id=\"verdict\"").unwrap();
        assert!(first < page.find("<h2>The run</h2>").unwrap(), "the verdict comes first");
        for fact in ["Machine id", "Kernel", "Command line"] {
            assert!(page.contains(&format!("<th>{fact}</th>")), "{}: {fact}", dir.display());
        }
        snapshot(&dir.join("page.html"), page.as_bytes());
        snapshot(&dir.join("report.md"), export::doc::markdown(&blocks).as_bytes());
    }
}

/// A model string that would run script in a page that took it as markup.
const HOSTILE: &str =
    "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>";

/// A page as a user opens it: in headless Chromium the DOM holds what
/// `must` names, the hostile model is text (no script ran, no element
/// made of it), the screenshot is not blank and shows the verdict's
/// colour, and printing to PDF gives a document.
fn opened(
    browser: &crate::util::Browser,
    page: &std::path::Path,
    must: &[String],
    (banner, fault_row): ([u8; 3], bool),
) {
    let dom = browser.dom(page);
    for m in must {
        let m = maud::html! { (m) }.into_string();
        assert!(dom.contains(&m), "{}: the DOM lacks {m:?}", page.display());
    }
    assert!(!dom.contains("<script") && !dom.contains("<img") && !dom.contains("pwned</title>"));
    assert!(dom.contains("&lt;script&gt;"), "the hostile model shown as text");
    let (pixels, step) = browser.screenshot(page, 1200, 1600);
    let inked = pixels.chunks(step).filter(|p| p[..3].iter().any(|c| *c < 128)).count();
    assert!(inked > 5_000, "{}: text on screen ({inked} dark pixels)", page.display());
    let colour = pixels.chunks(step).filter(|p| p[..3] == banner).count();
    assert!(colour > 5_000, "{}: the verdict's colour ({colour} pixels)", page.display());
    if fault_row {
        // The row of a disk with a fault stands out whole, its mark in
        // one piece.
        assert!(dom.contains("<tr class=\"fault\">"), "{dom}");
        let row = pixels.chunks(step).filter(|p| p[..3] == [0xff, 0xf0, 0xf0]).count();
        assert!(row > 2_000, "{}: the faulty rows' colour ({row} pixels)", page.display());
    }
    let pdf = browser.pdf(page);
    assert!(pdf.starts_with(b"%PDF") && pdf.len() > 10_000, "{}: a PDF", page.display());
}

/// The check with a bad disk and the soak, rendered from their recorded
/// results with every chart, as `--out` writes them.
#[test]
fn the_pages_of_a_check_with_a_bad_disk_and_of_a_soak_open_and_print_in_a_browser() {
    // Chromium takes both cores for a while: not beside a timing test.
    let _l = crate::util::device_lock();
    let Some(browser) = crate::util::Browser::new() else { return };
    let tmp = crate::util::tempdir();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut check: Report = serde_json::from_slice(
        &std::fs::read(root.join("report/full-with-bad-sectors/report.json")).unwrap(),
    )
    .unwrap();
    check.disks[0].identity.model = Some(HOSTILE.into());
    let blocks = export::text::blocks(&check);
    let charts = export::chart::draw_all(&check).unwrap();
    let page = tmp.path().join("check.html");
    std::fs::write(&page, export::page::check(&check, &blocks, &charts)).unwrap();
    let mut must: Vec<String> = check.disks.iter().map(|d| d.path.clone()).collect();
    must.push(format!("Verdict: {}", check.summary.message));
    for p in &check.passes {
        for d in &p.disks {
            for e in &d.errors {
                must.push(format!("bytes {}..{} ({} bytes)", e.offset, e.offset + e.len, e.len));
            }
        }
    }
    assert!(must.len() > 5, "the bad disk's ranges are named");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), charts.len(), "every chart inline");
    opened(&browser, &page, &must, ([0xff, 0xdd, 0xdd], true));

    let mut soak: BurnReport = serde_json::from_slice(
        &std::fs::read(root.join("burnin/soak-not-judged/report.json")).unwrap(),
    )
    .unwrap();
    soak.disks[0].identity.model = Some(HOSTILE.into());
    let blocks = export::burnin::blocks(&soak);
    let page = tmp.path().join("soak.html");
    std::fs::write(&page, export::burnin::page(&soak, &blocks, &[])).unwrap();
    let mut must: Vec<String> = soak.disks.iter().map(|d| d.path.clone()).collect();
    must.push(format!("Verdict: {}", soak.summary.message));
    must.push("Soak record".into());
    opened(&browser, &page, &must, ([0xff, 0xe8, 0xb0], false));
}

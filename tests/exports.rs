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

//! Acknowledged findings in a fleet report (`arrayburn report --ack
//! FILE`, `--ack-add DISK`): the file read and written whole, each finding
//! that flags the fleet named as an entry names it, those an entry
//! acknowledges marked and listed apart, and the verdict judged again on
//! the rest. The rule (disk, kind and value, exactly) is `judge::ack`'s.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::FleetReport;
use crate::finding::Finding;
use crate::judge::ack::{Ack, AckFile, Flag, SLOW, run_value, worse_value};
use crate::judge::fleet::{RunState, Sample};

/// A finding acknowledged, as the report lists it: where, and the entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Acknowledged {
    pub host: String,
    pub path: String,
    #[serde(flatten)]
    pub ack: Ack,
}

/// Which item of the report a flag is of.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Item {
    Run(usize),
    Slow(usize),
    Worse(usize),
    Link(usize),
}

/// Every finding that flags the fleet, by disk, with the item it is of.
fn flags(r: &FleetReport) -> Vec<(Item, Flag)> {
    // Each disk's latest sample, looked up once (a fleet of thousands).
    let latest: std::collections::HashMap<(&str, &str), &Sample> =
        r.samples.iter().map(|s| ((s.host.as_str(), s.path.as_str()), s)).collect();
    let sample = |host: &str, path: &str| latest.get(&(host, path)).copied();
    let flag = |host: &str, path: &str, finding, value: String| {
        let s = sample(host, path);
        Flag {
            host: host.into(),
            path: path.into(),
            disk: s.map_or_else(|| format!("{host}:{path}"), Sample::key),
            serial: s.and_then(|s| s.serial.clone()),
            wwn: s.and_then(|s| s.wwn.clone()),
            finding,
            value,
            worded: None,
        }
    };
    let mut out = Vec::new();
    let standing = |x: &&crate::judge::fleet::RunFinding| {
        x.superseded_by.is_none() && x.state == RunState::Flagged
    };
    for (i, x) in r.runs.iter().enumerate().filter(|(_, x)| standing(x)) {
        for d in &x.disks {
            // By its codes where the run gave them; an entry made from its
            // sentence (before codes) still acknowledges it.
            let (value, worded) = run_values(x, d);
            out.push((Item::Run(i), Flag { worded, ..flag(&x.host, d, "run", value) }));
        }
    }
    for (i, o) in r.outliers.iter().enumerate() {
        if o.verdict == crate::judge::Verdict::Slow {
            out.push((Item::Slow(i), flag(&o.host, &o.path, "slow", SLOW.into())));
        }
    }
    for (i, g) in r.regressions.iter().enumerate() {
        out.push((Item::Worse(i), flag(&g.host, &g.path, "worse", worse_value(&g.what))));
    }
    for (i, l) in r.links.iter().enumerate() {
        let (host, words) = (l.host.clone(), crate::judge::links::sentence(&l.link));
        let f = Flag { disk: format!("host:{host}"), ..flag(&host, "", "link", words) };
        out.push((Item::Link(i), Flag { path: String::new(), ..f }));
    }
    out
}

/// The value of run `x`'s finding on disk `d`: by its codes where the run
/// gave them (and its words' value, which an entry made before codes
/// holds), else by its words.
fn run_values(x: &crate::judge::fleet::RunFinding, d: &str) -> (String, Option<String>) {
    let worded = run_value(&x.what, d);
    match x.findings.iter().find(|(p, _)| p == d) {
        Some((_, codes)) => (Finding::value(codes), Some(worded)),
        None => (worded, None),
    }
}

/// Marks each finding an entry of `acks` acknowledges, lists them, and
/// judges the fleet again on the rest. A run's finding on one disk
/// acknowledged leaves its findings on its other disks standing: the
/// acknowledged disk and its lines leave the run's (so that the disks to
/// act on and the verdict name only what stands), and the run is
/// acknowledged when each of its disks' is.
pub fn apply(r: &mut FleetReport, acks: &[Ack]) {
    let all = flags(r);
    let by = |f: &Flag| acks.iter().find(|a| f.acknowledged_by(a));
    let mut listed = Vec::new();
    let mut run_acked: Vec<Vec<String>> = vec![Vec::new(); r.runs.len()];
    let mut run_open = vec![false; r.runs.len()];
    for (item, f) in &all {
        let Some(a) = by(f) else {
            if let Item::Run(i) = item {
                run_open[*i] = true;
            }
            continue;
        };
        listed.push(Acknowledged { host: f.host.clone(), path: f.path.clone(), ack: a.clone() });
        match *item {
            Item::Run(i) => run_acked[i].push(f.path.clone()),
            Item::Slow(i) => r.outliers[i].acknowledged = true,
            Item::Worse(i) => r.regressions[i].acknowledged = true,
            Item::Link(i) => r.links[i].acknowledged = true,
        }
    }
    for (i, x) in r.runs.iter_mut().enumerate() {
        let has = all.iter().any(|(item, _)| *item == Item::Run(i));
        x.acknowledged = has && !run_open[i];
        if run_open[i] {
            set_apart(x, &run_acked[i]);
        }
    }
    r.acknowledged = listed;
    rejudge(r);
}

/// Takes the disks `acked` (and the lines naming only them) out of a run
/// finding that still stands on its other disks.
fn set_apart(x: &mut crate::judge::fleet::RunFinding, acked: &[String]) {
    if acked.is_empty() {
        return;
    }
    x.disks.retain(|d| !acked.contains(d));
    x.findings.retain(|(d, _)| !acked.contains(d));
    x.what.retain(|w| !acked.iter().any(|d| w.starts_with(&format!("{d}: "))));
}

/// The fleet's verdict on what is not acknowledged, saying how many are.
fn rejudge(r: &mut FleetReport) {
    let outliers: Vec<_> = r.outliers.iter().filter(|o| !o.acknowledged).cloned().collect();
    let regressions: Vec<_> = r.regressions.iter().filter(|g| !g.acknowledged).cloned().collect();
    let links: Vec<_> = r.links.iter().filter(|l| !l.acknowledged).cloned().collect();
    let runs: Vec<_> = r.runs.iter().filter(|x| !x.acknowledged).cloned().collect();
    let (verdict, mut message) = crate::judge::fleet::verdict(
        (r.sources.len(), r.skipped.len(), r.disks()),
        (&outliers, &regressions, &links, &r.tails),
        &runs,
    );
    if !r.acknowledged.is_empty() {
        message.push_str(&format!(
            " {} finding(s) acknowledged, listed apart (each flags again when its value moves).",
            r.acknowledged.len()
        ));
    }
    (r.verdict, r.message) = (verdict, message);
}

/// Adds an entry for each finding standing on the disk `name` names (its
/// key, serial, WWN, `host:path` or path) not acknowledged yet, with its
/// value now; how many. Err (in words) where no finding stands on it.
pub fn add(
    r: &FleetReport,
    acks: &mut Vec<Ack>,
    name: &str,
    (who, why, when): (&str, &str, &str),
) -> Result<usize, String> {
    let named: Vec<Flag> = flags(r).into_iter().map(|(_, f)| f).filter(|f| f.named(name)).collect();
    if named.is_empty() {
        return Err(format!(
            "--ack-add {name}: no finding stands on that disk in these results (name it by its serial, WWN, HOST:PATH or path as the report lists it; a link by host:HOST)"
        ));
    }
    let mut added = 0;
    for f in named {
        if !acks.iter().any(|a| f.acknowledged_by(a)) {
            let (who, why, when) = (who.into(), why.into(), when.into());
            acks.push(Ack {
                disk: f.disk,
                finding: f.finding.into(),
                value: f.value,
                who,
                why,
                when,
            });
            added += 1;
        }
    }
    Ok(added)
}

/// Writes the file whole (beside, synced, renamed over: a crash leaves
/// the old file or the new one).
pub fn write_file(path: &Path, acks: &[Ack]) -> std::io::Result<()> {
    let file = AckFile { acknowledged: acks.to_vec() };
    let mut bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| std::io::Error::other("names no file"))?;
    let dir = crate::output::Dir::open(parent)?;
    dir.write(&name.to_string_lossy(), &bytes)?;
    dir.sync()
}

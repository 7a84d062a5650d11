//! Results of many runs read together (`arrayburn report`): check and
//! burn-in JSON from one host or forty, old or new. Each disk is compared
//! with every disk of its model across all the results (the check's robust
//! rule and thresholds, on serial speeds), with its own earlier runs
//! (slower than before, new errors, SMART counters that rose), and each
//! host's verdicts are listed. It reads and judges; `render` words it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::burnin::report::BurnReport;
use crate::judge::peers::{classify, pct_of_group_median};
use crate::judge::{Thresholds, Verdict};
use crate::measure::PassKind;
use crate::report::{LinkFinding, Report, SCHEMA_VERSION};
use crate::stats::median;

pub mod render;
mod sane;

/// One result file, read.
#[derive(Debug, Clone)]
pub enum Doc {
    Check(Box<Report>),
    Burnin(Box<BurnReport>),
}

impl Doc {
    /// The host it ran on, and that machine's id where known.
    fn host(&self) -> (&str, Option<&str>) {
        let (host, machine) = match self {
            Doc::Check(r) => (&r.host, &r.machine),
            Doc::Burnin(r) => (&r.host, &r.machine),
        };
        (host, machine.machine_id.as_deref())
    }

    /// When the run began (RFC 3339).
    fn started_at(&self) -> &str {
        match self {
            Doc::Check(r) => &r.started_at,
            Doc::Burnin(r) => &r.started_at,
        }
    }

    /// The links below their maximum it found.
    fn links(&self) -> &[LinkFinding] {
        match self {
            Doc::Check(r) => &r.summary.links,
            Doc::Burnin(r) => &r.summary.links,
        }
    }
}

/// Whether two results ran on one host: the same machine id where both
/// know it, else the same host name.
fn same_host(a: (&str, Option<&str>), b: (&str, Option<&str>)) -> bool {
    match (a.1, b.1) {
        (Some(x), Some(y)) => x == y,
        _ => a.0 == b.0,
    }
}

/// Reads one result file; why not, in one line.
pub fn load(path: &Path) -> Result<Doc, String> {
    let bytes = crate::input::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut v: Value = serde_json::from_slice(&bytes).map_err(|e| {
        if e.is_eof() {
            format!(
                "{}: truncated (the JSON ends early; was the run or the copy cut short?)",
                path.display()
            )
        } else {
            format!("{}: not JSON ({e})", path.display())
        }
    })?;
    let version = v["schema_version"].as_u64().unwrap_or(1);
    let is_check = v["tool"] == "arrayburn";
    let is_burnin = v["kind"] == "burnin";
    if !is_check && !is_burnin {
        return Err(format!(
            "{}: not an arrayburn result (no \"tool\": \"arrayburn\" or \"kind\": \"burnin\")",
            path.display()
        ));
    }
    if version > u64::from(SCHEMA_VERSION) {
        return Err(format!(
            "{}: schema_version {version} is newer than this arrayburn reads ({SCHEMA_VERSION}); use a newer arrayburn",
            path.display()
        ));
    }
    sane::clean(&mut v).map_err(|e| {
        format!(
            "{}: {e}: the file is damaged or was edited; remove it from the inputs",
            path.display()
        )
    })?;
    let typed = |e: serde_json::Error| {
        format!(
            "{}: an arrayburn result this version cannot read ({e})",
            path.display()
        )
    };
    if is_burnin {
        serde_json::from_value(v)
            .map(|r| Doc::Burnin(Box::new(r)))
            .map_err(typed)
    } else {
        serde_json::from_value(v)
            .map(|r| Doc::Check(Box::new(r)))
            .map_err(typed)
    }
}

/// Whether `path` is a fleet report (`report --out` wrote it), not a run's
/// result.
pub fn is_fleet(path: &Path) -> bool {
    crate::input::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| v["kind"] == "fleet")
}

/// The files named: a file as given, a directory searched (not through
/// symlinks) for `*.json`, sorted.
pub fn files(given: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for g in given {
        if g.is_dir() {
            let mut stack = vec![g.clone()];
            while let Some(dir) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for e in rd.flatten() {
                    let Ok(ft) = e.file_type() else { continue };
                    if ft.is_dir() {
                        stack.push(e.path());
                    } else if ft.is_file() && e.path().extension().is_some_and(|x| x == "json") {
                        out.push(e.path());
                    }
                }
            }
        } else {
            out.push(g.clone());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// One disk in one result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    pub host: String,
    pub machine_id: Option<String>,
    pub path: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub size_bytes: u64,
    /// When the run began (RFC 3339), and the file it came from.
    pub started_at: String,
    pub source: String,
    /// `"check"` or `"burnin"`.
    pub kind: String,
    /// The check's serial speed over its window (MB/s); None for a burn-in
    /// or a check without a clean serial pass.
    pub mb_per_s: Option<f64>,
    /// Failed reads (check) or bad bytes (burn-in) in that run.
    pub errors: u64,
    /// Burn-in: SMART counters that rose, and its verdict.
    pub smart_rose: Vec<String>,
    pub verdict: String,
}

impl Sample {
    /// The disk, whatever it is called where: WWN, else serial, else the
    /// host and path.
    pub fn key(&self) -> String {
        self.wwn
            .clone()
            .or_else(|| self.serial.clone())
            .unwrap_or_else(|| format!("{}:{}", self.host, self.path))
    }
}

/// Every disk of every result.
pub fn samples(docs: &[(String, Doc)]) -> Vec<Sample> {
    let mut out = Vec::new();
    for (source, doc) in docs {
        match doc {
            Doc::Check(r) => {
                let serial = r.passes.iter().find(|p| p.kind == PassKind::Serial);
                for d in &r.disks {
                    let rows = r
                        .passes
                        .iter()
                        .flat_map(|p| p.disks.iter().filter(|x| x.path == d.path));
                    let errors = rows.clone().map(|x| x.read_errors).sum();
                    let speed = serial
                        .and_then(|p| p.disks.iter().find(|x| x.path == d.path))
                        .filter(|x| {
                            x.read_errors == 0 && x.window_elapsed_s >= crate::judge::MIN_JUDGED_S
                        })
                        .map(|x| x.window_mb_per_s);
                    let worst = rows.map(|x| x.verdict).find(|v| *v != Verdict::Ok);
                    out.push(Sample {
                        host: r.host.clone(),
                        machine_id: r.machine.machine_id.clone(),
                        path: d.path.clone(),
                        model: d.identity.model.clone(),
                        serial: d.identity.serial.clone(),
                        wwn: d.identity.wwn.clone(),
                        size_bytes: d.identity.size_bytes,
                        started_at: r.started_at.clone(),
                        source: source.clone(),
                        kind: "check".into(),
                        mb_per_s: speed,
                        errors,
                        smart_rose: Vec::new(),
                        verdict: worst.map_or("ok".into(), |v| v.word().into()),
                    });
                }
            }
            Doc::Burnin(r) => {
                for d in &r.disks {
                    out.push(Sample {
                        host: r.host.clone(),
                        machine_id: r.machine.machine_id.clone(),
                        path: d.path.clone(),
                        model: d.identity.model.clone(),
                        serial: d.identity.serial.clone(),
                        wwn: d.identity.wwn.clone(),
                        size_bytes: d.identity.size_bytes,
                        started_at: r.started_at.clone(),
                        source: source.clone(),
                        kind: "burnin".into(),
                        mb_per_s: None,
                        errors: d.burn.total_bad(),
                        smart_rose: d
                            .smart
                            .as_ref()
                            .map(|c| {
                                c.deltas
                                    .iter()
                                    .map(|x| format!("{} {} → {}", x.name, x.before, x.after))
                                    .collect()
                            })
                            .unwrap_or_default(),
                        verdict: d.verdict.clone(),
                    });
                }
            }
        }
    }
    out
}

/// Each disk's latest sample with a speed, in the order first seen.
pub fn latest_speeds<'a>(samples: impl Iterator<Item = &'a Sample>) -> Vec<&'a Sample> {
    let mut latest: Vec<&Sample> = Vec::new();
    for s in samples.filter(|s| s.mb_per_s.is_some()) {
        match latest.iter_mut().find(|l| l.key() == s.key()) {
            Some(l) if l.started_at < s.started_at => *l = s,
            Some(_) => {}
            None => latest.push(s),
        }
    }
    latest
}

/// A disk slow or fast for its model across the fleet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Outlier {
    pub host: String,
    pub path: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub mb_per_s: f64,
    /// % of the median of all disks of its model and size in the fleet.
    pub pct_of_model: f64,
    /// Disks of its model it was compared with (itself included).
    pub of: usize,
    /// `"slow"` or `"fast"`.
    pub verdict: String,
    pub source: String,
}

/// Each disk's latest check compared with every other disk of its model
/// and size, across all hosts: the check's rule and thresholds.
pub fn outliers(samples: &[Sample], th: &Thresholds) -> Vec<Outlier> {
    let latest = latest_speeds(samples.iter());
    let mut models: Vec<(Option<String>, u64)> = Vec::new();
    let groups: Vec<usize> = latest
        .iter()
        .map(|s| {
            let m = (s.model.clone(), s.size_bytes);
            models.iter().position(|x| *x == m).unwrap_or_else(|| {
                models.push(m);
                models.len() - 1
            })
        })
        .collect();
    let speeds: Vec<Option<f64>> = latest.iter().map(|s| s.mb_per_s).collect();
    let pct = pct_of_group_median(&speeds, &groups);
    latest
        .iter()
        .zip(pct)
        .zip(&groups)
        .filter_map(|((s, p), g)| {
            let p = p?;
            let verdict = match classify(Some(p), th) {
                Verdict::Slow => "slow",
                Verdict::Fast => "fast",
                _ => return None,
            };
            Some(Outlier {
                host: s.host.clone(),
                path: s.path.clone(),
                model: s.model.clone(),
                serial: s.serial.clone(),
                mb_per_s: s.mb_per_s.unwrap_or(0.0),
                pct_of_model: p,
                of: groups.iter().filter(|x| *x == g).count(),
                verdict: verdict.into(),
                source: s.source.clone(),
            })
        })
        .collect()
}

/// The same disk worse than in its earlier runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Regression {
    pub host: String,
    pub path: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    /// When the latest run began, and how many runs came before it.
    pub latest: String,
    pub earlier_runs: usize,
    /// What got worse, in words.
    pub what: Vec<String>,
    pub source: String,
}

/// Each disk's latest run against its earlier ones (the same disk by WWN
/// or serial, on whatever host): slower than their median by more than
/// the check's slow threshold, errors where there were none, SMART
/// counters that rose in a burn-in.
pub fn regressions(samples: &[Sample], th: &Thresholds) -> Vec<Regression> {
    let mut keys: Vec<String> = samples.iter().map(Sample::key).collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for k in keys {
        let mut runs: Vec<&Sample> = samples.iter().filter(|s| s.key() == k).collect();
        if runs.len() < 2 {
            continue;
        }
        runs.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        let (last, before) = runs.split_last().expect("two or more");
        let mut what = Vec::new();
        let earlier: Vec<f64> = before.iter().filter_map(|s| s.mb_per_s).collect();
        if let (Some(now), Some(then)) = (last.mb_per_s, median(&earlier)) {
            let pct = 100.0 * now / then;
            if pct < th.slow_pct {
                what.push(format!(
                    "reads at {now:.0} MB/s, {pct:.0}% of its earlier {then:.0} MB/s ({} run(s))",
                    earlier.len()
                ));
            }
        }
        if last.errors > 0 && before.iter().all(|s| s.errors == 0) {
            what.push(match last.kind.as_str() {
                "burnin" => format!("{} bad bytes in its burn-in, none before", last.errors),
                _ => format!("{} failed read(s), none before", last.errors),
            });
        }
        if !last.smart_rose.is_empty() {
            what.push(format!(
                "SMART rose during its burn-in: {}",
                last.smart_rose.join(", ")
            ));
        }
        if !what.is_empty() {
            out.push(Regression {
                host: last.host.clone(),
                path: last.path.clone(),
                model: last.model.clone(),
                serial: last.serial.clone(),
                latest: last.started_at.clone(),
                earlier_runs: before.len(),
                what,
                source: last.source.clone(),
            });
        }
    }
    out
}

/// One host's runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostRuns {
    pub host: String,
    pub machine_id: Option<String>,
    /// One line per run: when, what, its verdict, in words.
    pub runs: Vec<String>,
}

/// Per host (by machine id where known), each run's verdict in a line.
pub fn hosts(docs: &[(String, Doc)]) -> Vec<HostRuns> {
    let mut out: Vec<HostRuns> = Vec::new();
    for (source, doc) in docs {
        let line = match doc {
            Doc::Check(r) => {
                let mut line = format!("check of {} disk(s): {}", r.disks.len(), r.summary.message);
                if r.interrupted {
                    line = format!("{line} (interrupted)");
                }
                line
            }
            Doc::Burnin(r) => format!(
                "{} of {} disk(s): {}",
                if r.read_only {
                    "read-only soak"
                } else {
                    "burn-in"
                },
                r.disks.len(),
                r.summary.message
            ),
        };
        let line = format!("{} {line} [{source}]", doc.started_at());
        let (host, machine_id) = doc.host();
        match out
            .iter_mut()
            .find(|h| same_host((&h.host, h.machine_id.as_deref()), doc.host()))
        {
            Some(h) => h.runs.push(line),
            None => out.push(HostRuns {
                host: host.into(),
                machine_id: machine_id.map(String::from),
                runs: vec![line],
            }),
        }
    }
    for h in &mut out {
        h.runs.sort();
    }
    out
}

/// A file that could not be read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Skipped {
    pub path: String,
    pub why: String,
}

/// What `arrayburn report` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetReport {
    /// `"fleet"`.
    pub kind: String,
    pub tool_version: String,
    pub generated_at: String,
    /// The results read, and the files skipped (`--keep-going`).
    pub sources: Vec<String>,
    pub skipped: Vec<Skipped>,
    /// Every disk of every result.
    pub samples: Vec<Sample>,
    pub outliers: Vec<Outlier>,
    pub regressions: Vec<Regression>,
    pub hosts: Vec<HostRuns>,
    /// Links below their maximum in each host's latest result.
    #[serde(default)]
    pub links: Vec<HostLink>,
    /// The verdict in one sentence.
    pub message: String,
}

/// A link below its maximum (see the check's `summary.links`) in a host's
/// latest result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostLink {
    pub host: String,
    /// The result it was found in, and when that run began (RFC 3339).
    pub source: String,
    pub started_at: String,
    pub link: LinkFinding,
}

/// The links below their maximum that each host's latest result found (an
/// earlier result's may have been fixed since), hosts in the order first
/// read.
pub fn links(docs: &[(String, Doc)]) -> Vec<HostLink> {
    // Each host's latest result, as an index into `docs`.
    let mut latest: Vec<usize> = Vec::new();
    for (i, (_, doc)) in docs.iter().enumerate() {
        match latest
            .iter_mut()
            .find(|j| same_host(docs[**j].1.host(), doc.host()))
        {
            Some(j) if docs[*j].1.started_at() >= doc.started_at() => {}
            Some(j) => *j = i,
            None => latest.push(i),
        }
    }
    latest
        .into_iter()
        .flat_map(|i| {
            let (source, doc) = &docs[i];
            doc.links().iter().map(move |link| HostLink {
                host: doc.host().0.into(),
                source: source.clone(),
                started_at: doc.started_at().into(),
                link: link.clone(),
            })
        })
        .collect()
}

impl FleetReport {
    /// The disks the results hold, each counted once however many runs
    /// it is in (by [`Sample::key`]).
    pub fn disks(&self) -> usize {
        distinct_disks(&self.samples)
    }

    /// Whether anything is to act on: a disk slow for its model, one worse
    /// than before, a link below its maximum.
    pub fn flagged(&self) -> bool {
        self.outliers.iter().any(|o| o.verdict == "slow")
            || !self.regressions.is_empty()
            || !self.links.is_empty()
    }
}

fn distinct_disks(samples: &[Sample]) -> usize {
    samples
        .iter()
        .map(Sample::key)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// Judges the results read.
pub fn judge(docs: &[(String, Doc)], skipped: Vec<Skipped>, th: &Thresholds) -> FleetReport {
    let samples = samples(docs);
    let outliers = outliers(&samples, th);
    let regressions = regressions(&samples, th);
    let links = links(docs);
    let slow = outliers.iter().filter(|o| o.verdict == "slow").count();
    let message = if slow == 0 && regressions.is_empty() && links.is_empty() {
        format!(
            "HEALTHY: {} disk(s) in {} result(s): none slow for its model across them, none worse than before.",
            distinct_disks(&samples),
            docs.len()
        )
    } else {
        format!(
            "FLAGGED: {slow} disk(s) slow for their model across the fleet, {} worse than in earlier runs{}.",
            regressions.len(),
            match links.len() {
                0 => String::new(),
                n => format!(", {n} link(s) below their maximum"),
            }
        )
    };
    FleetReport {
        kind: "fleet".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        generated_at: crate::units::rfc3339(std::time::SystemTime::now()),
        sources: docs.iter().map(|(s, _)| s.clone()).collect(),
        skipped,
        hosts: hosts(docs),
        samples,
        outliers,
        regressions,
        links,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(host: &str, serial: &str, when: &str, mb: Option<f64>, errors: u64) -> Sample {
        Sample {
            host: host.into(),
            machine_id: None,
            path: "/dev/sdb".into(),
            model: Some("ST20000NM007D".into()),
            serial: Some(serial.into()),
            wwn: None,
            size_bytes: 20 << 40,
            started_at: when.into(),
            source: format!("{host}.json"),
            kind: "check".into(),
            mb_per_s: mb,
            errors,
            smart_rose: Vec::new(),
            verdict: "ok".into(),
        }
    }

    #[test]
    fn a_disk_slow_for_its_model_across_hosts_and_one_slower_than_before() {
        let th = Thresholds::default();
        let mut s = Vec::new();
        // Ten disks of one model on five hosts; one reads at 70 %.
        for i in 0..10 {
            let mb = if i == 7 { 190.0 } else { 270.0 + i as f64 };
            s.push(sample(
                &format!("node{}", i / 2),
                &format!("ZL{i}"),
                "2026-11-01T00:00:00Z",
                Some(mb),
                0,
            ));
        }
        let o = outliers(&s, &th);
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(
            (o[0].host.as_str(), o[0].serial.as_deref(), o[0].of),
            ("node3", Some("ZL7"), 10)
        );
        // Later: ZL2 slows to 80 % of its earlier runs and ZL4 fails reads.
        s.push(sample(
            "node1",
            "ZL2",
            "2026-12-01T00:00:00Z",
            Some(218.0),
            0,
        ));
        s.push(sample(
            "node2",
            "ZL4",
            "2026-12-01T00:00:00Z",
            Some(274.0),
            3,
        ));
        let r = regressions(&s, &th);
        let got: Vec<(&str, &str)> = r
            .iter()
            .map(|x| (x.serial.as_deref().unwrap(), x.what[0].as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "ZL2",
                    "reads at 218 MB/s, 80% of its earlier 272 MB/s (1 run(s))"
                ),
                ("ZL4", "3 failed read(s), none before")
            ]
        );
        // The fleet compares each disk's latest run: ZL2 at 218 is slow now.
        assert!(
            outliers(&s, &th)
                .iter()
                .any(|x| x.serial.as_deref() == Some("ZL2"))
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong_in_one_line() {
        let d = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| {
            let p = d.path().join(n);
            std::fs::write(&p, t).unwrap();
            p
        };
        let e = |p: PathBuf| load(&p).unwrap_err();
        assert!(e(w("a.json", "{\"tool\": \"arrayburn\", \"passes\": [")).contains("truncated"));
        assert!(e(w("b.json", "hello")).contains("not JSON"));
        assert!(e(w("c.json", "{\"name\": \"fio\"}")).contains("not an arrayburn result"));
        assert!(
            e(w(
                "d.json",
                "{\"tool\": \"arrayburn\", \"schema_version\": 9}"
            ))
            .contains("newer than this arrayburn reads")
        );
        assert!(e(w("e.json", "{\"tool\": \"arrayburn\"}")).contains("cannot read"));
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/report/demo/report.json");
        assert!(matches!(load(&demo), Ok(Doc::Check(_))));
        assert!(!e(w("f.json", "{")).contains('\n'));
    }
}

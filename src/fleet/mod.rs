//! Results of many runs read together (`arrayburn report`): check and
//! burn-in JSON from one host or forty, old or new. Each disk is compared
//! with every disk of its model across all the results (the check's robust
//! rule and thresholds, on serial speeds), with its own earlier runs
//! (slower than before, new errors, SMART counters that rose), and each
//! host's verdicts are listed. It reads (`load`: the files; `sane`: every
//! string cleaned, every number held to its unit), gathers (here: samples,
//! hosts; `runs`: what each run said of itself) and hands the judging to
//! `judge::fleet` (outliers, regressions, the verdict); `export::fleet`
//! lays it out.

use serde::{Deserialize, Serialize};

use crate::header::Header;
use crate::judge::ArrayVerdict;
use crate::judge::fleet::{HostLink, Outlier, Regression, RunFinding, RunState, Sample, run_name};
use crate::judge::{Thresholds, Verdict};
pub use ack::Acknowledged;

pub mod ack;
mod load;
mod runs;
mod sane;
pub mod watch;

use load::same_host;
pub use load::{Doc, files, load, read};
pub use runs::run_findings;

/// Every disk of every result.
pub fn samples(docs: &[(String, Doc)]) -> Vec<Sample> {
    docs.iter().flat_map(|(source, doc)| doc.samples(source)).collect()
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
        let line = doc.line();
        let line = format!("{} {line} [{source}]", doc.started_at());
        let (host, machine_id) = doc.host();
        match out.iter_mut().find(|h| same_host((&h.host, h.machine_id.as_deref()), doc.host())) {
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
    /// Tool, kind (`"fleet"`), the host that made it, when, the command
    /// line ([`Header`], flattened).
    #[serde(flatten)]
    pub header: Header,
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
    /// Disks whose latest random reads (`check --random`) have a long tail
    /// against the other disks of their model and size across the fleet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tails: Vec<crate::judge::fleet::Tail>,
    /// Each run whose own verdict is not healthy (what it found, could not
    /// judge, or that it did not finish), superseded ones included.
    #[serde(default)]
    pub runs: Vec<RunFinding>,
    /// What each host's latest result noted of its drives at its start
    /// (its inspection's findings): notes, not verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<HostNote>,
    /// Hosts whose latest result saw the kernel reset or time out every
    /// disk: the host's path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel: Vec<HostKernel>,
    /// The findings acknowledged (`--ack FILE`): each with its host and
    /// disk, its kind and value, who acknowledged it, why and when. They
    /// are listed and do not flag the fleet, until their value moves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acknowledged: Vec<Acknowledged>,
    /// `"healthy"`, `"flagged"` (something to act on: a run's own finding,
    /// a disk slow for its model, worse than before, a link) or
    /// `"not_judged"` (nothing to act on, but a run could not judge a disk,
    /// was interrupted or did not finish).
    pub verdict: ArrayVerdict,
    /// The verdict in one sentence.
    pub message: String,
}

/// A note the inspection at the start of a host's latest result made of a
/// drive (hours reset, hidden capacity, firmware unlike its peers).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostNote {
    pub host: String,
    /// The result it was made in, and when that run began (RFC 3339).
    pub source: String,
    pub started_at: String,
    /// The disk's path on that host, and the note.
    pub path: String,
    pub sentence: String,
}

/// Each host's latest result, as indices into `docs`, hosts in the order
/// first read.
fn latest(docs: &[(String, Doc)]) -> Vec<usize> {
    let mut latest: Vec<usize> = Vec::new();
    for (i, (_, doc)) in docs.iter().enumerate() {
        match latest.iter_mut().find(|j| same_host(docs[**j].1.host(), doc.host())) {
            Some(j) if docs[*j].1.started_at() >= doc.started_at() => {}
            Some(j) => *j = i,
            None => latest.push(i),
        }
    }
    latest
}

/// What each host's latest result noted of its drives at its start.
pub fn notes(docs: &[(String, Doc)]) -> Vec<HostNote> {
    latest(docs)
        .into_iter()
        .flat_map(|i| {
            let (source, doc) = &docs[i];
            doc.document().notes.into_iter().map(move |(path, sentence)| HostNote {
                host: doc.host().0.into(),
                source: source.clone(),
                started_at: doc.started_at().into(),
                path,
                sentence,
            })
        })
        .collect()
}

/// The links below their maximum that each host's latest result found (an
/// earlier result's may have been fixed since), hosts in the order first
/// read.
/// A host whose latest result saw the kernel reset or time out every
/// disk it watched (two or more): that host's path before its disks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostKernel {
    pub host: String,
    pub source: String,
    pub started_at: String,
    /// Each disk and its path's events in that run.
    pub disks: Vec<(String, u64)>,
}

impl HostKernel {
    /// In words, for the verdict.
    pub fn sentence(&self) -> String {
        let each: Vec<String> = self.disks.iter().map(|(p, n)| format!("{p} {n}")).collect();
        format!(
            "KERNEL: every disk of {} was reset or timed out in its latest run ({}; {}): that host's path (its HBA, backplane, cabling, power or firmware) before its disks",
            self.host,
            self.started_at,
            each.join(", ")
        )
    }
}

/// Each host whose latest result's disks all showed path events.
pub fn kernel(docs: &[(String, Doc)]) -> Vec<HostKernel> {
    latest(docs)
        .into_iter()
        .filter_map(|i| {
            let (source, doc) = &docs[i];
            let disks = doc.kernel();
            (disks.len() >= 2 && disks.iter().all(|(_, n)| *n > 0)).then(|| HostKernel {
                host: doc.host().0.into(),
                source: source.clone(),
                started_at: doc.started_at().into(),
                disks,
            })
        })
        .collect()
}

pub fn links(docs: &[(String, Doc)]) -> Vec<HostLink> {
    latest(docs)
        .into_iter()
        .flat_map(|i| {
            let (source, doc) = &docs[i];
            doc.links().iter().map(move |link| HostLink {
                host: doc.host().0.into(),
                source: source.clone(),
                started_at: doc.started_at().into(),
                link: link.clone(),
                acknowledged: false,
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

    /// Whether anything is to act on: a run's own finding, a disk slow for
    /// its model, one worse than before, a link below its maximum.
    pub fn flagged(&self) -> bool {
        self.verdict == ArrayVerdict::Flagged
    }

    /// The run findings that count (not superseded by a later run).
    pub fn standing(&self) -> impl Iterator<Item = &RunFinding> {
        self.runs.iter().filter(|r| r.superseded_by.is_none())
    }
}

fn distinct_disks(samples: &[Sample]) -> usize {
    samples.iter().map(Sample::key).collect::<std::collections::BTreeSet<_>>().len()
}

/// Judges the results read.
pub fn judge(docs: &[(String, Doc)], skipped: Vec<Skipped>, th: &Thresholds) -> FleetReport {
    let samples = samples(docs);
    let outliers = crate::judge::fleet::outliers(&samples, th);
    let regressions = crate::judge::fleet::regressions(&samples, th);
    let links = links(docs);
    let runs = run_findings(docs, &samples);
    let tails = crate::judge::fleet::tails(&samples);
    let (verdict, mut message) = crate::judge::fleet::verdict(
        (docs.len(), skipped.len(), distinct_disks(&samples)),
        (&outliers, &regressions, &links, &tails),
        &runs,
    );
    let kernel = kernel(docs);
    for k in &kernel {
        message = format!("{message} {}.", k.sentence());
    }
    FleetReport {
        header: Header::now(crate::header::Kind::Fleet, std::time::SystemTime::now(), vec![])
            .ended(false, true),
        sources: docs.iter().map(|(s, _)| s.clone()).collect(),
        skipped,
        hosts: hosts(docs),
        samples,
        outliers,
        regressions,
        links,
        tails,
        runs,
        notes: notes(docs),
        kernel,
        acknowledged: Vec::new(),
        verdict,
        message,
    }
}

impl crate::rundoc::Document for FleetReport {
    fn document(&self) -> crate::rundoc::RunDoc {
        use crate::rundoc::{ActOn, RunDoc};
        let on = |host: &str, path: &str| format!("{host}:{path}");
        let mut to_act_on: Vec<ActOn> = Vec::new();
        for r in self.standing().filter(|r| r.state == RunState::Flagged && !r.acknowledged) {
            let sentence = format!("{}: {}", run_name(r), r.what.join("; "));
            to_act_on.extend(r.disks.iter().map(|d| ActOn {
                path: on(&r.host, d),
                action: "finding".into(),
                sentence: sentence.clone(),
                findings: Vec::new(),
            }));
        }
        for o in self.outliers.iter().filter(|o| o.verdict == Verdict::Slow && !o.acknowledged) {
            let only = match o.fleet_only {
                true => " (across the fleet only: its own run judged it ok)",
                false => "",
            };
            let sentence = format!(
                "{} on {}: {:.0} MB/s, {:.0} % of its model's{only}",
                o.path, o.host, o.mb_per_s, o.pct_of_model
            );
            to_act_on.push(ActOn {
                path: on(&o.host, &o.path),
                action: "slow".into(),
                sentence,
                findings: Vec::new(),
            });
        }
        for t in &self.tails {
            let sentence = format!(
                "{} on {}: random reads at depth 1 with p99 {:.1} ms against its model's {:.1} ms ({} disks), its median theirs: a drive retrying",
                t.path,
                t.host,
                t.p99_us / 1000.0,
                t.model_p99_us / 1000.0,
                t.of
            );
            to_act_on.push(ActOn {
                path: on(&t.host, &t.path),
                action: "retrying".into(),
                sentence,
                findings: Vec::new(),
            });
        }
        for r in self.regressions.iter().filter(|r| !r.acknowledged) {
            let sentence = format!("{} on {}: {}", r.path, r.host, r.what.join("; "));
            to_act_on.push(ActOn {
                path: on(&r.host, &r.path),
                action: "worse".into(),
                sentence,
                findings: Vec::new(),
            });
        }
        let not_judged = (self.standing())
            .filter(|r| r.state == RunState::NotJudged)
            .flat_map(|r| r.disks.iter().map(|d| on(&r.host, d)))
            .collect();
        RunDoc {
            outcome: self.verdict.outcome(),
            to_act_on,
            links: (self.links.iter())
                .filter(|l| !l.acknowledged)
                .map(|l| {
                    let sentence =
                        format!("{}: {}", l.host, crate::judge::links::sentence(&l.link));
                    (sentence, l.link.disks.iter().map(|d| on(&l.host, d)).collect())
                })
                .collect(),
            not_judged,
            unsure: Vec::new(),
            disks: self.samples.iter().map(|s| on(&s.host, &s.path)).collect(),
            cut: None,
            notes: (self.notes.iter())
                .map(|n| (on(&n.host, &n.path), format!("{}: {}", n.path, n.sentence)))
                .collect(),
            message: self.message.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::fleet::{Measured, RunKind};
    use crate::judge::fleet::{outliers, regressions};
    use crate::report::Report;
    use crate::report::burnin::BurnReport;
    use std::path::{Path, PathBuf};

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
            kind: RunKind::Check,
            mb_per_s: mb,
            errors,
            smart_rose: Vec::new(),
            verdict: "ok".into(),
            random: None,
        }
    }

    /// A sample with random reads at depth 1: 1000 reads, `p50` and `p99` ms.
    fn printed(host: &str, serial: &str, when: &str, (p50, p99): (f64, f64)) -> Sample {
        let random = Some(crate::judge::fleet::Fingerprint {
            reads: 1000,
            iops: 1000.0 / p50,
            p50_us: p50 * 1000.0,
            p99_us: p99 * 1000.0,
        });
        Sample { random, ..sample(host, serial, when, Some(250.0), 0) }
    }

    #[test]
    fn a_drive_with_a_long_tail_against_its_model_across_hosts_is_named_and_a_grown_tail_too() {
        use crate::judge::fleet::tails;
        // Six drives of one model on three hosts; C's tail is 5x theirs.
        let mut all: Vec<Sample> = ["A", "B", "C", "D", "E", "F"]
            .iter()
            .enumerate()
            .map(|(i, s)| printed(["h1", "h2", "h3"][i % 3], s, "2026-12-01", (8.0, 14.0)))
            .collect();
        all[2].random.as_mut().unwrap().p99_us = 70_000.0;
        let t = tails(&all);
        assert_eq!(t.len(), 1, "{t:#?}");
        assert_eq!((t[0].serial.as_deref(), t[0].host.as_str(), t[0].of), (Some("C"), "h3", 5));
        assert_eq!((t[0].model_p50_us, t[0].model_p99_us), (8000.0, 14000.0));
        // Two others are too few to judge against; a slower median is not a tail.
        assert!(tails(&all[..2]).is_empty());
        let mut slower = all.clone();
        slower[2].random.as_mut().unwrap().p50_us = 30_000.0;
        assert!(tails(&slower).is_empty());
        // Its own earlier run: the tail grew 5x with the median the same.
        let earlier = printed("h3", "C", "2026-11-01", (8.0, 14.0));
        let grown = regressions(&[earlier, all[2].clone()], &Thresholds::default());
        assert_eq!(grown.len(), 1, "{grown:#?}");
        assert!(
            grown[0].what[0].contains("p99 70.0 ms at depth 1, 5.0x its earlier 14.0 ms"),
            "{:?}",
            grown[0].what
        );
        let r = judge(&[], Vec::new(), &Thresholds::default());
        assert!(r.tails.is_empty());
    }

    #[test]
    fn a_run_that_cleared_its_disk_is_not_contradicted_by_its_own_peers() {
        let th = Thresholds::default();
        // One check of four disks: one reads at 70 % and its run judged
        // it ok (re-measured, say): the fleet has nothing of its own.
        let one_run = |verdict: &str| -> Vec<Sample> {
            (0..4)
                .map(|i| Sample {
                    verdict: if i == 3 { verdict.into() } else { "ok".into() },
                    ..sample(
                        "node1",
                        &format!("ZL{i}"),
                        "2026-11-01",
                        Some(if i == 3 { 190.0 } else { 272.0 }),
                        0,
                    )
                })
                .collect()
        };
        assert!(outliers(&one_run("ok"), &th).is_empty());
        // The run called it slow itself: the fleet says so too.
        let o = outliers(&one_run("slow"), &th);
        assert_eq!((o.len(), o[0].fleet_only), (1, false), "{o:?}");
        // Against disks of another host as well: a finding of the fleet
        // only, said as such.
        let mut s = one_run("ok");
        s.extend((4..8).map(|i| sample("node2", &format!("ZL{i}"), "2026-11-01", Some(270.0), 0)));
        let o = outliers(&s, &th);
        assert_eq!((o.len(), o[0].fleet_only), (1, true), "{o:?}");
        let (v, words) = crate::judge::fleet::verdict((2, 0, 8), (&o, &[], &[], &[]), &[]);
        assert_eq!(v, crate::judge::ArrayVerdict::Flagged);
        assert!(words.contains("1 of them only there: its own run"), "{words}");
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
        s.push(sample("node1", "ZL2", "2026-12-01T00:00:00Z", Some(218.0), 0));
        s.push(sample("node2", "ZL4", "2026-12-01T00:00:00Z", Some(274.0), 3));
        let r = regressions(&s, &th);
        let got: Vec<(&str, &str)> =
            r.iter().map(|x| (x.serial.as_deref().unwrap(), x.what[0].as_str())).collect();
        assert_eq!(
            got,
            [
                ("ZL2", "reads at 218 MB/s, 80% of its earlier 272 MB/s (1 run(s))"),
                ("ZL4", "3 failed read(s), none before")
            ]
        );
        // The fleet compares each disk's latest run: ZL2 at 218 is slow now.
        assert!(outliers(&s, &th).iter().any(|x| x.serial.as_deref() == Some("ZL2")));
    }

    /// The recorded check of three disks, one with two unreadable ranges
    /// (found at normal speed), as run `when`.
    fn bad_sectors(when: &str) -> Report {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/report/full-with-bad-sectors/report.json");
        let Ok(Doc::Check(mut r)) = load(&p) else { panic!("a check") };
        r.header.started_at = when.into();
        r.header.finished_at = when.into();
        r.header.machine.machine_id = Some("a".repeat(32));
        *r
    }

    /// The same check, its disks read whole without an error.
    fn clean(when: &str) -> Report {
        let mut r = bad_sectors(when);
        r.summary.verdict = crate::judge::ArrayVerdict::Healthy;
        r.summary.disk_verdicts.clear();
        r.summary.not_compared.clear();
        r.summary.message = "HEALTHY".into();
        for p in &mut r.passes {
            for d in &mut p.disks {
                d.bytes = d.bytes.max(33554432);
            }
        }
        r
    }

    fn fleet(runs: Vec<Report>) -> FleetReport {
        let docs: Vec<(String, Doc)> = runs
            .into_iter()
            .enumerate()
            .map(|(i, r)| (format!("run{i}.json"), Doc::Check(Box::new(r))))
            .collect();
        judge(&docs, Vec::new(), &Thresholds::default())
    }

    #[test]
    fn a_host_whose_every_disk_the_kernel_reset_is_that_hosts_path() {
        use crate::device::kernel::{Kind, Seen};
        let reset = Seen { counts: [(Kind::Reset, 2)].into_iter().collect(), ..Seen::default() };
        let mut r = clean("2026-11-03T00:00:00Z");
        for d in &mut r.disks {
            d.kernel = Some(reset.clone());
        }
        let f = fleet(vec![r.clone()]);
        assert_eq!(f.kernel.len(), 1, "{}", f.message);
        assert!(
            f.message.contains(&format!(
                "KERNEL: every disk of {} was reset or timed out",
                r.header.host
            )),
            "{}",
            f.message
        );
        assert!(f.message.contains("that host's path"), "{}", f.message);
        // One disk quiet: no host's path (its disks' own runs say theirs).
        r.disks[0].kernel = Some(Seen::default());
        assert!(fleet(vec![r.clone()]).kernel.is_empty());
        // Its log not read: never taken for quiet, nor for trouble.
        r.disks[0].kernel = Some(Seen { not_read: Some("kernel log not read".into()), ..reset });
        assert_eq!(fleet(vec![r]).kernel.len(), 1);
    }

    #[test]
    fn a_skipped_file_keeps_the_fleet_from_healthy_and_a_shared_serial_is_not_one_disk() {
        let docs =
            vec![("run0.json".to_string(), Doc::Check(Box::new(clean("2026-11-02T00:00:00Z"))))];
        let th = Thresholds::default();
        assert_eq!(judge(&docs, Vec::new(), &th).verdict.word(), "healthy");
        let skipped = vec![Skipped { path: "cut.json".into(), why: "cut.json: truncated".into() }];
        let f = judge(&docs, skipped, &th);
        assert_eq!(f.verdict.word(), "not_judged", "{}", f.message);
        assert!(
            f.message.contains("1 file(s) could not be read and were skipped"),
            "{}",
            f.message
        );
        // One serial (a USB bridge's) on a 2 TB and a 64 MiB disk: two disks.
        let small = Sample { size_bytes: 64 << 20, ..sample("a", "BRIDGE", "2026-11-01", None, 0) };
        let big = Sample { size_bytes: 2_000_000_000_000, ..small.clone() };
        assert_ne!(small.key(), big.key());
        assert_eq!(small.key(), small.clone().key());
    }

    #[test]
    fn each_runs_own_verdict_counts_until_a_later_run_measures_those_disks_again() {
        // A run that found unreadable sectors at normal speed: the fleet is
        // flagged by it, naming the run, the disk and what.
        let f = fleet(vec![bad_sectors("2026-11-01T00:00:00Z")]);
        assert_eq!(f.verdict.word(), "flagged", "{}", f.message);
        assert_eq!(f.runs.len(), 1);
        let r = &f.runs[0];
        assert_eq!((r.state.word(), &r.disks[..]), ("flagged", &["/dev/loop0".to_string()][..]));
        assert!(r.what[0].starts_with("/dev/loop0: 2 unreadable range(s)"), "{r:?}");
        assert!(
            f.message.starts_with("FLAGGED: 1 run(s) with findings of their own (vm's check of 2026-11-01T00:00:00Z found something on /dev/loop0)"),
            "{}",
            f.message
        );
        // A later check of the host that read those disks whole, clean:
        // the finding is superseded, listed, not counted.
        let f = fleet(vec![bad_sectors("2026-11-01T00:00:00Z"), clean("2026-11-02T00:00:00Z")]);
        assert_eq!(f.runs[0].superseded_by.as_deref(), Some("run1.json"));
        assert_eq!(f.verdict.word(), "healthy", "{}", f.message);
        // One that only sampled what was read whole, or ran earlier, or
        // on another host, or was interrupted, does not supersede it.
        let mut brief = clean("2026-11-02T00:00:00Z");
        for p in &mut brief.passes {
            for d in &mut p.disks {
                d.bytes = 1 << 20;
                d.reached_end = false;
            }
        }
        let mut elsewhere = clean("2026-11-02T00:00:00Z");
        elsewhere.header.host = "other".into();
        elsewhere.header.machine.machine_id = Some("f".repeat(32));
        let mut stopped = clean("2026-11-02T00:00:00Z");
        stopped.header.interrupted = true;
        // Nor one whose machine is not known (a host name is reused), nor
        // one without the parallel pass (it cannot clear what only that
        // pass finds).
        let mut unknown = clean("2026-11-02T00:00:00Z");
        unknown.header.machine.machine_id = None;
        let mut serial_only = clean("2026-11-02T00:00:00Z");
        serial_only.passes.retain(|p| p.kind == crate::measure::PassKind::Serial);
        let later =
            [brief, clean("2026-10-01T00:00:00Z"), elsewhere, stopped, unknown, serial_only];
        for later in later {
            let f = fleet(vec![bad_sectors("2026-11-01T00:00:00Z"), later]);
            let first = f.runs.iter().find(|r| r.source == "run0.json").unwrap();
            assert_eq!(first.superseded_by, None, "{first:?}");
            assert_eq!(f.verdict.word(), "flagged", "{}", f.message);
        }
        // An interrupted run, a copy saved while a check went on, a run that
        // could not compare a disk: named, never healthy (exit 3).
        let mut stopped = clean("2026-11-02T00:00:00Z");
        stopped.header.interrupted = true;
        let mut partial = clean("2026-11-02T00:00:00Z");
        partial.header.complete = false;
        let mut alone = clean("2026-11-02T00:00:00Z");
        alone.summary.verdict = crate::judge::ArrayVerdict::NotJudged;
        alone.summary.not_compared = vec!["/dev/loop2".into()];
        for (run, state) in
            [(stopped, "interrupted"), (partial, "incomplete"), (alone, "not_judged")]
        {
            let f = fleet(vec![run]);
            assert_eq!((f.verdict.word(), f.runs[0].state.word()), ("not_judged", state), "{f:?}");
            assert!(f.message.starts_with("NOT JUDGED: "), "{}", f.message);
        }
        // A finding of an interrupted run is still a finding.
        let mut cut = bad_sectors("2026-11-01T00:00:00Z");
        cut.header.interrupted = true;
        let f = fleet(vec![cut]);
        assert_eq!((f.verdict.word(), f.runs[0].state.word()), ("flagged", "flagged"));
        assert!(f.runs[0].what[0].starts_with("interrupted: "), "{:?}", f.runs[0]);
    }

    #[test]
    fn a_disk_a_check_could_not_tell_slow_or_not_is_named_as_such() {
        // Nothing found; /dev/loop1's slices straddled the threshold even
        // after re-measuring (flagged "unsure" in the serial pass), and
        // /dev/loop2 had no peer.
        let unsure = |p: &str| crate::report::Flag {
            path: p.into(),
            pass: crate::measure::PassKind::Serial,
            verdict: crate::judge::Verdict::Unsure,
            reasons: vec!["90% (88-95% over 6 slices) of its peers' median speed".into()],
        };
        let mut r = clean("2026-11-02T00:00:00Z");
        r.summary.verdict = crate::judge::ArrayVerdict::NotJudged;
        r.summary.not_compared = vec!["/dev/loop2".into()];
        r.summary.flagged = vec![unsure("/dev/loop1")];
        let f = fleet(vec![r.clone()]);
        assert_eq!((f.verdict.word(), f.runs[0].state.word()), ("not_judged", "not_judged"));
        assert_eq!(f.runs[0].disks, ["/dev/loop2", "/dev/loop1"], "{:?}", f.runs[0]);
        let what = &f.runs[0].what;
        assert!(what[0].starts_with("/dev/loop2: nothing found, but not compared with peers"));
        assert_eq!(
            what[1],
            "/dev/loop1: nothing found, but could not be told slow or not (90% (88-95% over 6 slices) of its peers' median speed)"
        );
        // Beside a finding of the same run, it is still named as unsure,
        // not as one of the disks to act on.
        let mut found = bad_sectors("2026-11-01T00:00:00Z");
        found.summary.flagged.push(unsure("/dev/loop1"));
        let f = fleet(vec![found]);
        let run = &f.runs[0];
        assert_eq!(
            (run.state.word(), &run.disks[..]),
            ("flagged", &["/dev/loop0".to_string()][..])
        );
        assert!(
            run.what
                .iter()
                .any(|w| w.starts_with("/dev/loop1: nothing found, but could not be told")),
            "{run:?}"
        );
    }

    #[test]
    fn a_soak_whose_disk_went_away_or_hung_did_not_read_it_whole() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/burnin/soak-not-judged/report.json");
        let r = match load(&p) {
            Ok(Doc::Burnin(r)) => r,
            other => panic!("{}: {other:?}", p.display()),
        };
        assert!(r.header.complete);
        let path = r.disks[0].path.clone();
        let whole = |r: &BurnReport| match Doc::Burnin(Box::new(r.clone())).measured(&path) {
            Some(Measured::Burned { whole, .. }) => whole,
            m => panic!("{m:?}"),
        };
        assert!(whole(&r), "both passes read");
        let mut gone = (*r).clone();
        gone.disks[0].burn.device_gone = true;
        assert!(!whole(&gone), "went away");
        let mut none = (*r).clone();
        none.disks[0].burn.passes_done = 0;
        assert!(!whole(&none), "no pass read whole");
    }

    #[test]
    fn a_burn_in_disk_not_decided_when_re_measured_is_unsure_not_uncompared() {
        use crate::rundoc::Document;
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/burnin/soak-not-judged/report.json");
        let Ok(Doc::Burnin(mut r)) = load(&p) else { panic!("a burn-in") };
        let path = r.disks[0].path.clone();
        assert_eq!(r.disks[0].verdict, crate::judge::burnin::DiskVerdict::NotJudged);
        assert!(r.document().not_judged.contains(&path), "not compared");
        // The same disk compared with its peers, and not decided when
        // re-measured: the run's own reason is the fleet's (it said "its
        // readings straddle the threshold" of a run that had too few
        // turns).
        let why = "write speed 80% of its peers' with every disk at once, 90% (70-101% over 2 turns) of /dev/sdz's re-measured alone in turn, too few to decide in the time a re-measurement may take (the burning's own, at most 3 min)";
        r.disks[0].undecided = Some(why.into());
        let run = r.document();
        assert!(!run.not_judged.contains(&path) && run.is_unsure(&path), "{run:?}");
        let (_, what, _) = crate::judge::fleet::own_verdict(&run).unwrap();
        let said = format!("{path}: nothing found, but could not be told slow or not ({why})");
        assert!(what.contains(&said), "{what:?}");
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
            e(w("d.json", "{\"tool\": \"arrayburn\", \"schema_version\": 9}"))
                .contains("newer than this arrayburn reads")
        );
        assert!(e(w("e.json", "{\"tool\": \"arrayburn\"}")).contains("cannot read"));
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/report/demo/report.json");
        assert!(matches!(load(&demo), Ok(Doc::Check(_))));
        assert!(!e(w("f.json", "{")).contains('\n'));
    }
}

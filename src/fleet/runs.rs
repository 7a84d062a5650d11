//! What each run said of itself, in the fleet report: a run whose own
//! verdict is not healthy (found something, could not judge a disk, did not
//! finish), and the later run of the same disks that supersedes it, found
//! among the results read (what a run's state is, and when a later run
//! covers it, are `judge::fleet`'s rules). It must not compare disks
//! across runs (that is `fleet`'s samples and outliers) and must not word
//! anything beyond the runs' own sentences.

use std::collections::HashMap;

use super::load::{Doc, surely_same_host};
use crate::judge::fleet::{Measured, RunFinding, RunKind, Sample};

/// Each run's own verdict where it is not healthy, in the order read; a
/// finding is superseded by the latest later run of the same host and
/// kind (a burn-in also supersedes a soak; the same machine by its id: a
/// host name alone is reused) that was not interrupted, finished, and
/// measured each disk it names (the same disk, by WWN, or serial with
/// model and size) with every kind of pass and at least as far: a check that read it whole, or sampled it as
/// long where it was sampled; a burn-in over at least its range, whole.
pub fn run_findings(docs: &[(String, Doc)], samples: &[Sample]) -> Vec<RunFinding> {
    let index = Index::of(docs, samples);
    let mut out = Vec::new();
    for (i, (source, doc)) in docs.iter().enumerate() {
        let run = doc.document();
        let Some((state, what, disks)) = crate::judge::fleet::own_verdict(&run) else {
            continue;
        };
        let findings = crate::judge::fleet::coded(&run);
        let (host, _) = doc.host();
        out.push(RunFinding {
            host: host.into(),
            source: source.clone(),
            started_at: doc.started_at().into(),
            kind: doc.kind(),
            state,
            superseded_by: index.superseded(docs, i, &disks),
            what,
            disks,
            findings,
            acknowledged: false,
        });
    }
    out
}

/// What [`run_findings`] looks up, built once so that a fleet of
/// thousands of results, or one result of thousands of disks, is judged in
/// linear time: each disk's key by (file, path), each (file, key)'s paths,
/// each result's measurements by path, and the results by machine.
struct Index<'a> {
    key_of: HashMap<(&'a str, &'a str), String>,
    paths_of: HashMap<(&'a str, String), Vec<&'a str>>,
    measured: Vec<HashMap<String, Measured>>,
    by_machine: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Index<'a> {
    fn of(docs: &'a [(String, Doc)], samples: &'a [Sample]) -> Self {
        let mut key_of: HashMap<(&str, &str), String> = HashMap::new();
        let mut paths_of: HashMap<(&str, String), Vec<&str>> = HashMap::new();
        for s in samples {
            let k = s.key();
            key_of.entry((s.source.as_str(), s.path.as_str())).or_insert_with(|| k.clone());
            paths_of.entry((s.source.as_str(), k)).or_default().push(s.path.as_str());
        }
        let mut by_machine: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, (_, d)) in docs.iter().enumerate() {
            if let (_, Some(machine)) = d.host() {
                by_machine.entry(machine).or_default().push(i);
            }
        }
        let measured = docs.iter().map(|(_, d)| d.measured_all()).collect();
        Self { key_of, paths_of, measured, by_machine }
    }

    /// The latest later run that supersedes result `i`'s finding on
    /// `disks`: its file.
    fn superseded(&self, docs: &[(String, Doc)], i: usize, disks: &[String]) -> Option<String> {
        let (source, doc) = &docs[i];
        let later =
            |b: &Doc| (b.started_at(), b.finished_at()) > (doc.started_at(), doc.finished_at());
        let same_machine = doc.host().1.and_then(|m| self.by_machine.get(m)).map(Vec::as_slice);
        (same_machine.unwrap_or_default().iter())
            .map(|j| (*j, &docs[*j]))
            .filter(|(_, (_, d))| {
                surely_same_host(d.host(), doc.host())
                    && later(d)
                    && (d.kind() == doc.kind()
                        || (d.kind() == RunKind::Burnin && doc.kind() == RunKind::Soak))
                    && d.finished()
            })
            .filter(|(j, (src, _))| disks.iter().all(|p| self.covers((source, i), (src, *j), p)))
            .max_by(|a, b| {
                let (a, b) = (&a.1.1, &b.1.1);
                (a.started_at(), a.finished_at()).cmp(&(b.started_at(), b.finished_at()))
            })
            .map(|(_, (src, _))| src.clone())
    }

    /// Whether result `j` (file `src`) measured the disk that result `i`
    /// (file `source`) calls `path` at least as far.
    fn covers(&self, (source, i): (&str, usize), (src, j): (&str, usize), path: &str) -> bool {
        let (Some(k), Some(then)) = (self.key_of.get(&(source, path)), self.measured[i].get(path))
        else {
            return false;
        };
        let paths = self.paths_of.get(&(src, k.clone())).map(Vec::as_slice);
        paths.unwrap_or_default().iter().any(|sp| {
            self.measured[j].get(*sp).is_some_and(|now| crate::judge::fleet::covers(*now, *then))
        })
    }
}

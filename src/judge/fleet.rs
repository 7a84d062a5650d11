//! The fleet's verdicts (`arrayburn report`): each disk against every disk
//! of its model and size across the fleet (the check's rule and
//! thresholds, on serial speeds), each disk against its own earlier runs,
//! each run's own state as its run document says it (and whether a later
//! run covers what it measured), and the verdict over all results: what
//! to act on, what could not be judged, what is healthy.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::peers::{classify, pct_of_group_median};
use super::{ArrayVerdict, Thresholds, Verdict};
use crate::judge::links::LinkFinding;
use crate::outcome::Outcome;
use crate::rundoc::RunDoc;
use crate::stats::median;

/// What a run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    Check,
    Burnin,
    /// A read-only burn-in.
    Soak,
    /// An incoming inspection (`arrayburn inspect`).
    Inspect,
    /// A burn-in's blocks read back later (`burnin --verify`).
    Verify,
    /// Disks in service watched (`arrayburn watch`'s JSON lines).
    Watch,
}

impl RunKind {
    /// As the JSON names it.
    pub fn word(self) -> &'static str {
        match self {
            RunKind::Check => "check",
            RunKind::Burnin => "burnin",
            RunKind::Soak => "soak",
            RunKind::Inspect => "inspect",
            RunKind::Verify => "verify",
            RunKind::Watch => "watch",
        }
    }
}

/// Why a run's own verdict is not healthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// A disk or link to act on.
    Flagged,
    /// Nothing found, but a disk could not be compared.
    NotJudged,
    /// A signal stopped it.
    Interrupted,
    /// A copy saved while it went on, or a disk's run ended early.
    Incomplete,
}

impl RunState {
    /// As the JSON names it.
    pub fn word(self) -> &'static str {
        match self {
            RunState::Flagged => "flagged",
            RunState::NotJudged => "not_judged",
            RunState::Interrupted => "interrupted",
            RunState::Incomplete => "incomplete",
        }
    }
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
    /// `"check"` or `"burnin"` (a soak too).
    pub kind: RunKind,
    /// The check's serial speed over its window (MB/s); None for a burn-in
    /// or a check without a clean serial pass.
    pub mb_per_s: Option<f64>,
    /// Failed reads (check) or bad bytes (burn-in) in that run.
    pub errors: u64,
    /// Burn-in: SMART counters that rose, and its verdict.
    pub smart_rose: Vec<String>,
    pub verdict: String,
    /// A check's random reads at depth 1, alone (`check --random`): its
    /// latency fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random: Option<Fingerprint>,
}

/// A disk's random reads at depth 1, alone, in one check.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Fingerprint {
    pub reads: u64,
    pub iops: f64,
    pub p50_us: f64,
    pub p99_us: f64,
}

impl Fingerprint {
    /// As the random reads' rule reads latencies.
    fn latency(&self) -> crate::stats::LatencyUs {
        crate::stats::LatencyUs { p50: self.p50_us, p99: self.p99_us, ..Default::default() }
    }

    /// Enough reads for a p99.
    fn tailed(&self) -> bool {
        self.reads >= super::random::MIN_READS
    }
}

/// A disk whose latest random reads have a long tail against its model's
/// across the fleet (the check's rule: p99 3x theirs, 2 ms above it, its
/// median theirs).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tail {
    pub host: String,
    pub path: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub p50_us: f64,
    pub p99_us: f64,
    /// The medians of the other disks of its model and size in the fleet,
    /// and how many they are.
    pub model_p50_us: f64,
    pub model_p99_us: f64,
    pub of: usize,
    pub source: String,
}

/// Each disk's latest random fingerprint against the other disks of its
/// model and size across the fleet (two others at least).
pub fn tails(samples: &[Sample]) -> Vec<Tail> {
    let mut latest: std::collections::BTreeMap<String, &Sample> = Default::default();
    for s in samples.iter().filter(|s| s.random.is_some_and(|f| f.tailed())) {
        let e = latest.entry(s.key()).or_insert(s);
        if s.started_at > e.started_at {
            *e = s;
        }
    }
    let all: Vec<&Sample> = latest.into_values().collect();
    let mut out = Vec::new();
    for s in &all {
        let mine = s.random.expect("kept with a fingerprint");
        let others: Vec<Fingerprint> = (all.iter())
            .filter(|o| o.key() != s.key() && o.model == s.model && o.size_bytes == s.size_bytes)
            .filter_map(|o| o.random)
            .collect();
        let of = |get: fn(&Fingerprint) -> f64| median(&others.iter().map(get).collect::<Vec<_>>());
        let (Some(p50), Some(p99)) = (of(|f| f.p50_us), of(|f| f.p99_us)) else { continue };
        let theirs = crate::stats::LatencyUs { p50, p99, ..Default::default() };
        if others.len() >= 2 && super::random::retrying(&mine.latency(), &theirs) {
            out.push(Tail {
                host: s.host.clone(),
                path: s.path.clone(),
                model: s.model.clone(),
                serial: s.serial.clone(),
                p50_us: mine.p50_us,
                p99_us: mine.p99_us,
                model_p50_us: p50,
                model_p99_us: p99,
                of: others.len(),
                source: s.source.clone(),
            });
        }
    }
    out
}

/// Its latest random reads' tail against its own earlier ones (the same
/// rule), in words.
fn tail_grew(last: &Sample, before: &[&Sample]) -> Option<String> {
    let now = last.random.filter(Fingerprint::tailed)?;
    let earlier: Vec<Fingerprint> =
        before.iter().filter_map(|s| s.random).filter(Fingerprint::tailed).collect();
    let p50 = median(&earlier.iter().map(|f| f.p50_us).collect::<Vec<_>>())?;
    let p99 = median(&earlier.iter().map(|f| f.p99_us).collect::<Vec<_>>())?;
    let then = crate::stats::LatencyUs { p50, p99, ..Default::default() };
    super::random::retrying(&now.latency(), &then).then(|| {
        format!(
            "answers random reads with a longer tail than before: p99 {:.1} ms at depth 1, {:.1}x its earlier {:.1} ms ({} run(s)), its median the same ({:.1} ms)",
            now.p99_us / 1000.0,
            now.p99_us / p99,
            p99 / 1000.0,
            earlier.len(),
            now.p50_us / 1000.0
        )
    })
}

impl Sample {
    /// The disk, whatever it is called where: its WWN, else its serial
    /// with its model and size (cheap USB bridges give many disks one
    /// serial: a 2 TB disk is not the 64 MiB one with its serial), else
    /// the host and path.
    pub fn key(&self) -> String {
        let by_serial = |s: &String| {
            format!("{s}|{}|{}", self.model.as_deref().unwrap_or("-"), self.size_bytes)
        };
        self.wwn
            .clone()
            .or_else(|| self.serial.as_ref().map(by_serial))
            .unwrap_or_else(|| format!("{}:{}", self.host, self.path))
    }
}

/// Each disk's latest sample with a speed, in the order first seen.
pub fn latest_speeds<'a>(samples: impl Iterator<Item = &'a Sample>) -> Vec<&'a Sample> {
    let mut latest: Vec<&Sample> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for s in samples.filter(|s| s.mb_per_s.is_some()) {
        match at.entry(s.key()) {
            std::collections::hash_map::Entry::Occupied(i) => {
                let l = &mut latest[*i.get()];
                if l.started_at < s.started_at {
                    *l = s;
                }
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(latest.len());
                latest.push(s);
            }
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
    /// `"slow"` or `"fast"` (the check's verdict words).
    pub verdict: Verdict,
    /// Slow against its model across the fleet only: its own run, which
    /// compared it with its peers on that host, judged it ok.
    #[serde(default)]
    pub fleet_only: bool,
    pub source: String,
    /// Acknowledged (`report --ack`): listed, not flagging.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acknowledged: bool,
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
    /// Acknowledged (`report --ack`): listed, not flagging.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acknowledged: bool,
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
    /// Acknowledged (`report --ack`): listed, not flagging.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acknowledged: bool,
}

/// A run whose own verdict is not healthy: it found something, could not
/// judge a disk, or did not finish.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunFinding {
    pub host: String,
    /// The result file, when the run began and what it was (`"check"`,
    /// `"burnin"`, `"soak"`).
    pub source: String,
    pub started_at: String,
    pub kind: RunKind,
    /// `"flagged"` (a disk or link to act on), `"not_judged"` (nothing
    /// found, but a disk could not be compared), `"interrupted"` (a signal
    /// stopped it) or `"incomplete"` (the file is a copy saved while the
    /// run went on, or a disk's run ended early).
    pub state: RunState,
    /// What it found or could not decide, a line each, each naming its disk
    /// (the run's own sentences).
    pub what: Vec<String>,
    /// The disks those are about (paths as that run gave them).
    pub disks: Vec<String>,
    /// Each disk's findings by code, where the run gave them (a result
    /// written before findings had codes gives none: its sentences stand).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<(String, Vec<crate::finding::Finding>)>,
    /// A later run of the same host and kind that measured all those disks
    /// again, at least as far, to its end: its file. Then this finding is
    /// listed, not counted (the later run's verdict stands).
    pub superseded_by: Option<String>,
    /// Every finding of it on each of its disks acknowledged (`report
    /// --ack`): listed, not flagging.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acknowledged: bool,
}

/// How much of one disk a run measured, to tell whether a later run
/// measured it again at least as far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measured {
    /// A check: whether a pass read it to its last byte, else the sample
    /// (seconds) each pass read of it; and which passes read it (one bit
    /// each: serial, parallel, seek), for what each can find.
    Read { whole: bool, sample_s: f64, passes: u8 },
    /// A burn-in or soak: its range, and whether every pass covered it.
    Burned { start: u64, end: u64, whole: bool },
}

impl Measured {
    /// A pass kind's bit in [`Measured::Read`].
    pub fn pass_bit(kind: crate::measure::PassKind) -> u8 {
        match kind {
            crate::measure::PassKind::Serial => 1,
            crate::measure::PassKind::Parallel => 2,
            crate::measure::PassKind::Seek => 4,
        }
    }
}

/// A run in a few words: "node1's burn-in of 2026-12-01T08:00:00Z".
pub fn run_name(r: &RunFinding) -> String {
    let kind = match r.kind {
        RunKind::Check => "check",
        RunKind::Burnin => "burn-in",
        RunKind::Soak => "read-only soak",
        RunKind::Inspect => "inspection",
        RunKind::Verify => "verify",
        RunKind::Watch => "watch",
    };
    format!("{}'s {kind} of {}", r.host, r.started_at)
}

/// Each disk's latest check compared with every other disk of its model
/// and size, across all hosts: the check's rule and thresholds.
pub fn outliers(samples: &[Sample], th: &Thresholds) -> Vec<Outlier> {
    let latest = latest_speeds(samples.iter());
    let mut models: HashMap<(Option<&str>, u64), usize> = HashMap::new();
    let groups: Vec<usize> = latest
        .iter()
        .map(|s| {
            let next = models.len();
            *models.entry((s.model.as_deref(), s.size_bytes)).or_insert(next)
        })
        .collect();
    let mut sizes: HashMap<usize, usize> = HashMap::new();
    let mut sources: HashMap<usize, std::collections::HashSet<&str>> = HashMap::new();
    for (g, s) in groups.iter().zip(&latest) {
        *sizes.entry(*g).or_default() += 1;
        sources.entry(*g).or_default().insert(s.source.as_str());
    }
    let speeds: Vec<Option<f64>> = latest.iter().map(|s| s.mb_per_s).collect();
    let pct = pct_of_group_median(&speeds, &groups);
    latest
        .iter()
        .zip(pct)
        .zip(&groups)
        .filter_map(|((s, p), g)| {
            let p = p?;
            let verdict = match classify(Some(p), th) {
                v @ (Verdict::Slow | Verdict::Fast) => v,
                _ => return None,
            };
            // Its own run judged it ok: against the same disks alone (one
            // run), that verdict stands; against others too, the finding
            // is the fleet's only, and said so.
            let cleared = s.verdict == Verdict::Ok.word();
            if cleared && sources[g].len() == 1 {
                return None;
            }
            Some(Outlier {
                host: s.host.clone(),
                path: s.path.clone(),
                model: s.model.clone(),
                serial: s.serial.clone(),
                mb_per_s: s.mb_per_s.unwrap_or(0.0),
                pct_of_model: p,
                of: sizes[g],
                verdict,
                fleet_only: cleared && verdict == Verdict::Slow,
                source: s.source.clone(),
                acknowledged: false,
            })
        })
        .collect()
}

/// Each disk's latest run against its earlier ones (the same disk by WWN
/// or serial, on whatever host): slower than their median by more than
/// the check's slow threshold, errors where there were none, SMART
/// counters that rose in a burn-in.
pub fn regressions(samples: &[Sample], th: &Thresholds) -> Vec<Regression> {
    // Each disk's runs, gathered once (linear in samples), by key in order.
    let mut by_key: std::collections::BTreeMap<String, Vec<&Sample>> = Default::default();
    for s in samples {
        by_key.entry(s.key()).or_default().push(s);
    }
    let mut out = Vec::new();
    for (_, mut runs) in by_key {
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
            let found = match last.kind {
                RunKind::Burnin | RunKind::Soak => "bad bytes in its burn-in",
                RunKind::Verify => "bad bytes read back in its verify",
                _ => "failed read(s)",
            };
            what.push(format!("{} {found}, none before", last.errors));
        }
        if !last.smart_rose.is_empty() {
            what.push(format!("SMART rose during its burn-in: {}", last.smart_rose.join(", ")));
        }
        what.extend(tail_grew(last, before));
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
                acknowledged: false,
            });
        }
    }
    out
}

/// The fleet's verdict and its sentence: results read, skipped and disks
/// (`counts`), what the fleet found across runs, and each run's own
/// findings (superseded ones are listed, not counted).
pub fn verdict(
    (results, skipped, disks): (usize, usize, usize),
    (outliers, regressions, links, tails): (&[Outlier], &[Regression], &[HostLink], &[Tail]),
    runs: &[RunFinding],
) -> (ArrayVerdict, String) {
    let slow = outliers.iter().filter(|o| o.verdict == Verdict::Slow).count();
    let fleet_only = outliers.iter().filter(|o| o.fleet_only).count();
    let standing = |flagged: bool| -> Vec<&RunFinding> {
        runs.iter()
            .filter(|r| r.superseded_by.is_none() && (r.state == RunState::Flagged) == flagged)
            .collect()
    };
    let (flagged_runs, open_runs) = (standing(true), standing(false));
    let fleet_found = slow > 0 || !regressions.is_empty() || !links.is_empty() || !tails.is_empty();
    if fleet_found || !flagged_runs.is_empty() {
        let found = ((slow, fleet_only), regressions.len(), (links.len(), tails.len()));
        return (ArrayVerdict::Flagged, flagged_words(&flagged_runs, found, &open_runs));
    }
    if !open_runs.is_empty() {
        return (
            ArrayVerdict::NotJudged,
            format!(
                "NOT JUDGED: nothing to act on in {results} result(s), but {} run(s) could not judge every disk or did not finish: {}; health is not claimed for those disks.",
                open_runs.len(),
                named(&open_runs)
            ),
        );
    }
    if skipped > 0 {
        // What a skipped file found is not known: nothing here is healthy
        // for it.
        return (
            ArrayVerdict::NotJudged,
            format!(
                "NOT JUDGED: nothing to act on in {results} result(s), but {skipped} file(s) could not be read and were skipped (--keep-going): what they found is not known."
            ),
        );
    }
    (
        ArrayVerdict::Healthy,
        format!(
            "HEALTHY: {disks} disk(s) in {results} result(s): every run's own verdict healthy (or superseded by a later run of those disks), none slow for its model across them, none worse than before."
        ),
    )
}

/// A flagged fleet's sentence: the runs with findings of their own, what
/// the fleet found across them (`found`: slow for their model, worse than
/// before, links), and the runs not judged whole.
fn flagged_words(
    flagged: &[&RunFinding],
    ((slow, fleet_only), worse, (links, tails)): ((usize, usize), usize, (usize, usize)),
    open: &[&RunFinding],
) -> String {
    let only = match fleet_only {
        0 => String::new(),
        n => format!(
            " ({n} of them only there: its own run compared it with its peers and judged it ok)"
        ),
    };
    let own = match flagged.len() {
        0 => String::new(),
        n => format!("{n} run(s) with findings of their own ({}); ", named(flagged)),
    };
    let links = match links {
        0 => String::new(),
        n => format!(", {n} link(s) below their maximum"),
    };
    let tails = match tails {
        0 => String::new(),
        n => format!(", {n} answering random reads with a long tail against their model's"),
    };
    let open = match open.len() {
        0 => String::new(),
        n => format!("; {n} run(s) not judged whole: {}", named(open)),
    };
    format!(
        "FLAGGED: {own}{slow} disk(s) slow for their model across the fleet{only}, {worse} worse than in earlier runs{links}{tails}{open}."
    )
}

/// Runs named by what they are: "node1's check of … found something on
/// /dev/sdb", three at most and how many more.
fn named(rs: &[&RunFinding]) -> String {
    let mut said: Vec<String> = rs
        .iter()
        .take(3)
        .map(|r| {
            let what = match r.state {
                RunState::Flagged => "found something on",
                RunState::NotJudged => "could not judge",
                RunState::Interrupted => "was interrupted, measuring",
                RunState::Incomplete => "did not finish, measuring",
            };
            format!("{} {what} {}", run_name(r), r.disks.join(", "))
        })
        .collect();
    if rs.len() > 3 {
        said.push(format!("{} more", rs.len() - 3));
    }
    said.join("; ")
}

/// What one run said of itself, where it is not healthy: state, lines, and
/// the disks concerned, from its run document. A finding counts also in a
/// run that was interrupted or did not finish (it was measured); such a
/// run with none is named as what it is, never as healthy.
pub fn own_verdict(run: &RunDoc) -> Option<(RunState, Vec<String>, Vec<String>)> {
    // Why the run is not whole, if it is not.
    let short = run.cut.as_ref().map(|c| {
        let state = if c.interrupted { RunState::Interrupted } else { RunState::Incomplete };
        (state, c.words.clone(), c.disks.clone())
    });
    let mut what: Vec<String> = run.to_act_on.iter().map(|a| a.sentence.clone()).collect();
    what.extend(run.links.iter().map(|(sentence, _)| sentence.clone()));
    let mut disks: Vec<String> = run.paths_to_act_on();
    disks.extend(run.links.iter().flat_map(|(_, d)| d.iter().cloned()));
    let unjudged_words = |p: &String| {
        if let Some(u) = run.unsure.iter().find(|u| &u.path == p) {
            return format!("{p}: nothing found, but could not be told slow or not ({})", u.why);
        }
        format!(
            "{p}: nothing found, but not compared with peers (measured too briefly, or no peer of its model, size and kind)"
        )
    };
    let unsure = run.unsure.iter().map(|u| &u.path);
    let unjudged: Vec<String> = run.not_judged.iter().chain(unsure).cloned().collect();
    if !what.is_empty() || run.outcome == Outcome::Flagged {
        if what.is_empty() {
            what.push(run.message.clone());
            disks = run.disks.clone();
        }
        if let Some((state, words, _)) = short {
            what.insert(0, format!("{}: {words}", state.word()));
        }
        what.extend(unjudged.iter().filter(|p| !disks.contains(p)).map(unjudged_words));
        return Some((RunState::Flagged, what, dedup(disks)));
    }
    if let Some((state, words, cut)) = short {
        return Some((state, vec![words], cut));
    }
    (run.outcome == Outcome::NotJudged || !unjudged.is_empty()).then(|| {
        let disks = if unjudged.is_empty() { run.disks.clone() } else { unjudged };
        let what = disks.iter().map(unjudged_words).collect();
        (RunState::NotJudged, what, disks)
    })
}

/// Each disk to act on in `run` with its findings by code, where it has
/// any.
pub fn coded(run: &RunDoc) -> Vec<(String, Vec<crate::finding::Finding>)> {
    let mut out: Vec<(String, Vec<crate::finding::Finding>)> = Vec::new();
    for a in run.to_act_on.iter().filter(|a| !a.findings.is_empty()) {
        match out.iter_mut().find(|(p, _)| *p == a.path) {
            Some((_, f)) => f.extend(a.findings.iter().cloned()),
            None => out.push((a.path.clone(), a.findings.clone())),
        }
    }
    out
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    v.retain(|x| seen.insert(x.clone()));
    v
}

/// Whether `later` measured at least what `earlier` did: as far, and with
/// every kind of pass it ran (a serial pass alone cannot clear what only
/// the parallel pass can find).
pub fn covers(later: Measured, earlier: Measured) -> bool {
    match (later, earlier) {
        (
            Measured::Read { whole, sample_s, passes },
            Measured::Read { whole: was_whole, sample_s: was, passes: ran },
        ) => passes & ran == ran && (whole || (!was_whole && sample_s >= was)),
        (Measured::Burned { start, end, whole }, Measured::Burned { start: s, end: e, .. }) => {
            whole && start <= s && end >= e
        }
        _ => false,
    }
}

//! Random reads judged (`check --random`): each disk's latency
//! fingerprint against its peer group's (same model, size and kind), and
//! its deep queue against its own depth-1 figures.
//!
//! - **Retrying**: at depth 1, its p99 at least [`TAIL_TIMES`] its peers'
//!   median p99 (and [`TAIL_FLOOR_MS`] above it) while its own median is
//!   its peers' (at most [`MEDIAN_NORMAL`] of theirs): most reads are
//!   answered at the model's speed, a few after retries. A disk whose
//!   median is slow too is slower, not retrying (the rule below).
//! - **Slow**: its IOPS at a depth below [`SLOW_IOPS_PCT`] of its peers' median.
//! - **No queueing**: alone, the deep queue gains it under
//!   [`QUEUE_GAIN_LOW`] over depth 1 while its peers' median gain is at
//!   least [`QUEUE_GAIN_PEERS`]: its command queueing is off or broken.
//! - **Failed**: any random read that failed.
//! - **Unanswered**: a read hung past `--io-timeout`, the device went
//!   away, or it could not be opened: a path to check, as in the passes.
//!
//! A finding is claimed when both of a disk's reads show it, alone and with
//! every disk at once (a failed or unanswered read wherever it happens;
//! alone where no other disk was read): a busy host's hiccup shows in one
//! of them, a drive's fault in both. One shown by one read only is decided
//! by a read of the disk alone again (claimed or cleared).
//! A disk without a peer measured cleanly is not compared: nothing is
//! claimed of it (the sequential passes already say so).

use crate::finding::{Code, Finding};
use serde::{Deserialize, Serialize};

use super::advice::{Action, DiskAdvice};
use crate::measure::{RandomRead, RandomRun, Stopped};
use crate::stats::{LatencyUs, latency_us, median};

/// A tail at least this many times the peers' p99...
pub const TAIL_TIMES: f64 = 3.0;
/// ...and at least this much above it (ms): a flash drive's 0.1 ms against
/// its peers' 0.03 ms is noise, not a retry.
pub const TAIL_FLOOR_MS: f64 = 2.0;
/// A median at most this many times its peers' is normal.
pub const MEDIAN_NORMAL: f64 = 1.5;
/// Latency rules need this many whole reads at depth 1 (a p99 of fewer is
/// one or two reads).
pub const MIN_READS: u64 = 200;
/// A disk is slow at random below this % of its peers' median IOPS: wider
/// than the sequential rule, as a random rate is noisier (a drive that
/// retries or mis-seeks loses far more).
pub const SLOW_IOPS_PCT: f64 = 70.0;
/// Rate rules need this many whole reads and this long.
pub const MIN_RATE_READS: u64 = 50;
pub const MIN_RATE_S: f64 = 1.0;
/// The deep queue gains a drive whose queueing is off less than this...
pub const QUEUE_GAIN_LOW: f64 = 1.3;
/// ...where its peers gain at least this much.
pub const QUEUE_GAIN_PEERS: f64 = 2.0;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RandomKind {
    /// A long tail with a normal median: the drive retries reads.
    Retrying,
    /// Fewer random reads a second than its peers.
    Slow,
    /// The deep queue gains it nothing where it gains its peers much.
    NoQueueing,
    /// Random reads that failed.
    Failed,
    /// It stopped answering (a read hung), went away, or could not be
    /// opened: nothing of its reads is judged.
    Unanswered,
}

impl RandomKind {
    /// A failed or unanswered read is a finding wherever it happens (no
    /// busy host makes one): claimed without a second read.
    fn on_its_own(self) -> bool {
        matches!(self, RandomKind::Failed | RandomKind::Unanswered)
    }

    /// What the verdict says of a disk it names.
    pub fn words(self) -> &'static str {
        match self {
            RandomKind::Retrying => "retrying (a long tail)",
            RandomKind::Slow => "slow",
            RandomKind::NoQueueing => "without command queueing",
            RandomKind::Failed => "failing reads",
            RandomKind::Unanswered => "not answering",
        }
    }
}

/// Read alone or with every disk at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    Alone,
    Together,
    /// In the neighbour pass, while its neighbours sought.
    Beside,
}

/// One run's figures as the rules read them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub depth: usize,
    pub reads: u64,
    pub failed: u64,
    /// Whole reads a second (null: nothing read).
    pub iops: Option<f64>,
    /// Latency percentiles of the whole reads (µs).
    pub latency_us: LatencyUs,
    /// Long enough for the rate rules (as a peer; as the disk judged,
    /// `timed`: a disk too slow for many reads is slow, not unjudged), and
    /// for the latency rules.
    #[serde(skip)]
    rated: bool,
    #[serde(skip)]
    timed: bool,
    #[serde(skip)]
    tailed: bool,
    /// Why its reads were cut short other than by a stop.
    #[serde(skip)]
    lost: Option<Lost>,
}

/// How a disk's random reads were lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lost {
    Hung,
    Gone,
    Unopened,
}

impl Figures {
    /// Read long enough for a peer's rate.
    pub fn rated(&self) -> bool {
        self.rated
    }

    /// Read long enough for its own rate (however few reads that was).
    pub fn timed(&self) -> bool {
        self.timed
    }

    /// Its reads hung, its device went away, or it could not be opened.
    pub fn lost(&self) -> bool {
        self.lost.is_some()
    }

    /// A run's figures.
    pub fn of(run: &RandomRun) -> Self {
        let lost = match (run.stopped, &run.unopened) {
            (_, Some(_)) => Some(Lost::Unopened),
            (Some(Stopped::Hung), _) => Some(Lost::Hung),
            (Some(Stopped::DeviceGone), _) => Some(Lost::Gone),
            _ => None,
        };
        Figures {
            depth: run.depth,
            reads: run.reads,
            failed: run.failed,
            iops: run.iops(),
            latency_us: latency_us(&run.latency_ns),
            rated: run.reads >= MIN_RATE_READS && run.seconds >= MIN_RATE_S,
            timed: run.reads > 0 && run.seconds >= MIN_RATE_S,
            tailed: run.reads >= MIN_READS,
            lost,
        }
    }
}

/// A disk named by the random reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RandomFinding {
    pub path: String,
    pub kind: RandomKind,
    pub when: When,
    pub depth: usize,
    /// Its figures, and its peers' medians of each (null for a failed
    /// read, which is judged on its own).
    pub measured: Figures,
    pub peers: Option<Figures>,
    /// The same disk's figures at the same depth with every disk reading,
    /// where they showed it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<Figures>,
    /// Its figures read alone once more, where only one of its two reads
    /// showed it: what decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub again: Option<Figures>,
    /// No queueing: the deep queue's IOPS over depth 1's, its own and its
    /// peers' median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain: Option<[f64; 2]>,
    /// What it found and what to do, in words.
    pub sentence: String,
}

/// What the rules found: the findings both reads of a disk showed (alone
/// and with every disk at once; alone where it was read only so, and a
/// failed read wherever), or one of them and the read of it alone again;
/// those only one showed and the read again did not (`cleared`: noise on
/// a busy host makes one), and those only one showed, not read again (a
/// stop came first; `unsure`: not claimed, said so).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Judged {
    pub findings: Vec<RandomFinding>,
    pub unsure: Vec<RandomFinding>,
    pub cleared: Vec<RandomFinding>,
}

impl Judged {
    /// The reads alone again that decide the unsure findings: (disk's
    /// path, depth), each once, depth 1 first; a lack of queueing is read
    /// at depth 1 and at its own (it is a gain of one over the other).
    pub fn to_read_again(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for u in &self.unsure {
            let depths =
                if u.kind == RandomKind::NoQueueing { vec![1, u.depth] } else { vec![u.depth] };
            for depth in depths {
                if !out.iter().any(|(p, d)| *p == u.path && *d == depth) {
                    out.push((u.path.clone(), depth));
                }
            }
        }
        out.sort_by_key(|(_, depth)| *depth);
        out
    }
}

/// The rules over every disk's runs; `paths` and `groups` in the runs'
/// order.
pub fn judge(read: &RandomRead, (paths, groups): (&[String], &[usize])) -> Judged {
    let figures = |when: Option<When>| -> Vec<Vec<Figures>> {
        (read.disks.iter())
            .map(|d| match when {
                Some(When::Alone) => &d.alone,
                Some(When::Together) => &d.together,
                _ => &d.again,
            })
            .map(|r| r.iter().map(Figures::of).collect())
            .collect()
    };
    let alone_figures = figures(Some(When::Alone));
    // Each disk's runs of `mine` against its peers' runs of `theirs`.
    let found =
        |mine: &[Vec<Figures>], theirs: &[Vec<Figures>], when: When| -> Vec<Vec<RandomFinding>> {
            (0..mine.len())
                .map(|d| {
                    let peers: Vec<&Vec<Figures>> = (0..theirs.len())
                        .filter(|&p| p != d && groups[p] == groups[d])
                        .map(|p| &theirs[p])
                        .collect();
                    let mut f = disk(&mine[d], &peers, when);
                    f.iter_mut().for_each(|f| f.path.clone_from(&paths[d]));
                    f
                })
                .collect()
        };
    let together_figures = figures(Some(When::Together));
    let again_figures = figures(None);
    let alone = found(&alone_figures, &alone_figures, When::Alone);
    let together = found(&together_figures, &together_figures, When::Together);
    // A read again is judged against the peers' reads alone.
    let again = found(&again_figures, &alone_figures, When::Alone);
    let mut out = Judged::default();
    for (d, ((alone, together), again)) in alone.into_iter().zip(together).zip(again).enumerate() {
        let both = !read.disks[d].together.is_empty();
        let mut one = Judged::default();
        confirm((alone, together), both, &mut one);
        decide(one.unsure, (&again_figures[d], &again), &mut out);
        out.findings.extend(one.findings);
    }
    out
}

/// One disk's findings alone and together: each alone claimed where the
/// reads together (when `both` ran) show it too, else unsure; a failed
/// read claimed wherever; what only the reads together show, unsure.
fn confirm(
    (alone, together): (Vec<RandomFinding>, Vec<RandomFinding>),
    both: bool,
    out: &mut Judged,
) {
    for f in alone {
        let again = together.iter().find(|t| t.kind == f.kind && t.depth == f.depth);
        match again {
            _ if f.kind.on_its_own() || !both => out.findings.push(f),
            Some(t) => {
                let sentence = match f.kind {
                    RandomKind::NoQueueing => f.sentence.clone(),
                    k => sentence(k, BOTH, &f.measured, f.peers.as_ref()),
                };
                out.findings.push(RandomFinding { together: Some(t.measured), sentence, ..f })
            }
            None => out.unsure.push(f),
        }
    }
    for t in together {
        let same = |f: &RandomFinding| f.path == t.path && f.kind == t.kind;
        if out.findings.iter().any(same) {
            continue;
        }
        if t.kind.on_its_own() {
            out.findings.push(t);
        } else if !out.unsure.iter().any(same) {
            out.unsure.push(t);
        }
    }
}

/// The findings only one of a disk's two reads showed, decided by its
/// reads alone again (`runs`, and what they showed): claimed where the
/// read again at that depth showed it too, cleared where it did not,
/// unsure where it was not read again.
fn decide(
    unsure: Vec<RandomFinding>,
    (runs, showed): (&[Figures], &[RandomFinding]),
    out: &mut Judged,
) {
    for u in unsure {
        let read_again = runs.iter().find(|r| r.depth == u.depth);
        let again = showed.iter().find(|a| a.kind == u.kind && a.depth == u.depth);
        match (read_again, again) {
            (Some(_), Some(a)) => out.findings.push(RandomFinding {
                again: Some(a.measured),
                sentence: match u.kind {
                    RandomKind::NoQueueing => u.sentence.clone(),
                    k => sentence(k, AGAIN, &u.measured, u.peers.as_ref()),
                },
                ..u
            }),
            (Some(r), None) => out.cleared.push(RandomFinding { again: Some(*r), ..u }),
            (None, _) => out.unsure.push(u),
        }
    }
}

/// One disk's findings at each depth against its peers' figures.
fn disk(mine: &[Figures], peers: &[&Vec<Figures>], when: When) -> Vec<RandomFinding> {
    let mut out = Vec::new();
    let finding = |kind, m: &Figures, p: Option<Figures>| RandomFinding {
        path: String::new(),
        kind,
        when,
        depth: m.depth,
        measured: *m,
        peers: p,
        together: None,
        again: None,
        gain: None,
        sentence: sentence(kind, during(when), m, p.as_ref()),
    };
    for m in mine {
        if let Some(f) = unanswered("", m, when) {
            out.push(f);
            continue;
        }
        if m.failed > 0 {
            out.push(finding(RandomKind::Failed, m, None));
            continue;
        }
        let at: Vec<Figures> =
            peers.iter().filter_map(|p| p.iter().find(|f| f.depth == m.depth)).copied().collect();
        let p = peers_median(&at);
        if m.depth == 1
            && let Some(p) = p.filter(|p| p.tailed && m.tailed)
            && retrying(&m.latency_us, &p.latency_us)
        {
            out.push(finding(RandomKind::Retrying, m, Some(p)));
        } else if let (Some(p), Some(iops)) = (p.filter(|p| p.rated && m.timed), m.iops)
            && p.iops.is_some_and(|x| iops < x * SLOW_IOPS_PCT / 100.0)
            && !out.iter().any(|f: &RandomFinding| f.kind == RandomKind::Slow)
        {
            out.push(finding(RandomKind::Slow, m, Some(p)));
        }
    }
    if let Some([(m, gain), (p, peers_gain)]) = no_queueing(mine, peers) {
        // Without a queue it is slower at the deep one: that is the
        // finding, not a second one.
        out.retain(|f| !(f.kind == RandomKind::Slow && f.depth == m.depth));
        let sentence = queueing_sentence((&m, gain), (&p, peers_gain));
        out.push(RandomFinding {
            gain: Some([gain, peers_gain]),
            sentence,
            ..finding(RandomKind::NoQueueing, &m, Some(p))
        });
    }
    out
}

/// A long tail on a normal median.
pub fn retrying(mine: &LatencyUs, peers: &LatencyUs) -> bool {
    peers.p99 > 0.0
        && mine.p99 >= TAIL_TIMES * peers.p99
        && mine.p99 - peers.p99 >= TAIL_FLOOR_MS * 1000.0
        && mine.p50 <= MEDIAN_NORMAL * peers.p50
}

/// The peers' median of each figure (None without a peer measured long
/// enough for the rate rules).
fn peers_median(at: &[Figures]) -> Option<Figures> {
    let at: Vec<&Figures> =
        at.iter().filter(|f| f.rated && f.failed == 0 && f.lost.is_none()).collect();
    let first = at.first()?;
    let of = |get: &dyn Fn(&Figures) -> f64| {
        median(&at.iter().map(|f| get(f)).collect::<Vec<_>>()).unwrap_or(0.0)
    };
    let l = |get: fn(&LatencyUs) -> f64| of(&|f: &Figures| get(&f.latency_us));
    Some(Figures {
        depth: first.depth,
        reads: of(&|f| f.reads as f64) as u64,
        failed: 0,
        iops: Some(of(&|f| f.iops.unwrap_or(0.0))),
        latency_us: LatencyUs {
            p50: l(|x| x.p50),
            p99: l(|x| x.p99),
            p999: l(|x| x.p999),
            p9999: l(|x| x.p9999),
            max: l(|x| x.max),
            mean: l(|x| x.mean),
        },
        rated: true,
        timed: true,
        // The peers' tail is a median over peers each with enough reads.
        tailed: at.iter().all(|f| f.tailed),
        lost: None,
    })
}

/// The deep queue against depth 1: its deep figures and its gain, and its
/// peers' (medians), when it gains under [`QUEUE_GAIN_LOW`] where its
/// peers gain [`QUEUE_GAIN_PEERS`].
fn no_queueing(mine: &[Figures], peers: &[&Vec<Figures>]) -> Option<[(Figures, f64); 2]> {
    let gain = |runs: &[Figures]| -> Option<(Figures, f64)> {
        let one = runs.iter().find(|f| f.depth == 1 && f.rated && f.failed == 0)?;
        let deep = runs.iter().find(|f| f.depth > 1 && f.rated && f.failed == 0)?;
        Some((*deep, deep.iops? / one.iops?))
    };
    let own = gain(mine)?;
    let theirs: Vec<(Figures, f64)> = peers.iter().filter_map(|p| gain(p)).collect();
    let peer_gain = median(&theirs.iter().map(|g| g.1).collect::<Vec<_>>())?;
    let deeps = peers_median(&theirs.iter().map(|g| g.0).collect::<Vec<_>>())?;
    (own.1 < QUEUE_GAIN_LOW && peer_gain >= QUEUE_GAIN_PEERS).then_some([own, (deeps, peer_gain)])
}

fn ms(us: f64) -> String {
    let ms = us / 1000.0;
    if ms < 10.0 { format!("{ms:.2} ms") } else { format!("{ms:.1} ms") }
}

/// Findings both reads showed are said so...
const BOTH: &str = "read alone, and again with every disk reading";
/// ...and those a read alone again showed.
const AGAIN: &str = "shown once, and again when read alone once more";

fn during(when: When) -> &'static str {
    match when {
        When::Alone => "read alone",
        When::Together => "while every disk read",
        When::Beside => "while its neighbours sought",
    }
}

/// A run whose reads hung, whose device went away, or that could not be
/// opened, as a finding of `path` (None: it was none of those).
pub fn unanswered(path: &str, m: &Figures, when: When) -> Option<RandomFinding> {
    m.lost?;
    let kind = RandomKind::Unanswered;
    Some(RandomFinding {
        path: path.to_string(),
        kind,
        when,
        depth: m.depth,
        measured: *m,
        peers: None,
        together: None,
        again: None,
        gain: None,
        sentence: sentence(kind, during(when), m, None),
    })
}

/// The finding in words, with its figures and what to do.
fn sentence(kind: RandomKind, during: &str, m: &Figures, p: Option<&Figures>) -> String {
    let iops = |f: &Figures| f.iops.map_or("no".into(), |x| format!("{x:.0}"));
    match (kind, p) {
        (RandomKind::Retrying, Some(p)) => format!(
            "answers random reads with a long tail ({during}, depth 1): p99 {}, {:.1}x its peers' {}, while its \
             median {} is near theirs ({}): a drive retrying reads internally (a weak head, marginal media); \
             look at its SMART, move it to another bay and check again, return it if the tail follows it",
            ms(m.latency_us.p99),
            m.latency_us.p99 / p.latency_us.p99,
            ms(p.latency_us.p99),
            ms(m.latency_us.p50),
            ms(p.latency_us.p50)
        ),
        (RandomKind::Slow, Some(p)) => format!(
            "reads {} random reads a second at depth {} ({during}), {:.0}% of its peers' {} \
             (median {} against their {}): move it to another bay and check again",
            iops(m),
            m.depth,
            m.iops.unwrap_or(0.0) / p.iops.unwrap_or(1.0) * 100.0,
            iops(p),
            ms(m.latency_us.p50),
            ms(p.latency_us.p50)
        ),
        (RandomKind::Unanswered, _) => format!(
            "{} during its random reads at depth {} ({during}): check its cable, slot and power, then check it \
             again; if it does so again, return it",
            match m.lost {
                Some(Lost::Hung) => "stopped answering (a read got no answer within --io-timeout)",
                Some(Lost::Gone) => "went away (the device is gone)",
                _ => "could not be opened",
            },
            m.depth
        ),
        // A verb first, as every other finding's: its advice may read "random
        // reads: it failed ...".
        _ => format!(
            "failed {} of its random reads at depth {} ({during}): run a full check to find its bad sectors, \
             then return it",
            m.failed, m.depth
        ),
    }
}

/// No queueing in words: its deep figures and gain, its peers'.
fn queueing_sentence((m, gain): (&Figures, f64), (p, peers_gain): (&Figures, f64)) -> String {
    let iops = |f: &Figures| f.iops.map_or("no".into(), |x| format!("{x:.0}"));
    format!(
        "gains nothing from a deep queue: {} random reads a second at depth {} ({gain:.1}x its depth-1 rate) \
         where its peers read {} ({peers_gain:.1}x theirs): its command queueing (NCQ/TCQ) is off or broken; \
         check its queue_depth in sysfs and the controller's settings",
        iops(m),
        m.depth,
        iops(p),
    )
}

/// Each finding said in the disk's advice: a line of its own, or added to
/// the one the sequential passes gave it (the stronger action kept: failed
/// reads are returned; a drive that stopped answering is a path to check
/// before a slowness is rechecked, as in the passes' own advice).
pub fn advise(findings: &[RandomFinding], advice: &mut Vec<DiskAdvice>) {
    for f in findings {
        let action = match f.kind {
            RandomKind::Failed => Action::Return,
            RandomKind::NoQueueing | RandomKind::Unanswered => Action::CheckPath,
            RandomKind::Retrying | RandomKind::Slow => Action::Recheck,
        };
        let found = match f.kind {
            RandomKind::Failed => Finding::of(Code::FailedReads),
            RandomKind::Unanswered => Finding::of(Code::Hung),
            RandomKind::NoQueueing => Finding::of(Code::NoQueueing),
            RandomKind::Retrying => Finding::of(Code::RetryingReads),
            RandomKind::Slow => Finding::of(Code::SlowRandomReads),
        };
        match advice.iter_mut().find(|a| a.path == f.path) {
            Some(a) => {
                a.sentence = format!(
                    "{}; random reads: it {}.",
                    a.sentence.trim_end_matches('.'),
                    f.sentence
                );
                a.findings.push(found);
                let stronger = match (action, a.action) {
                    (_, Action::Return) => false,
                    (Action::Return, _) => true,
                    _ => f.kind == RandomKind::Unanswered,
                };
                if stronger {
                    a.action = action;
                }
            }
            None => advice.push(DiskAdvice {
                path: f.path.clone(),
                action,
                sentence: format!("{}: {}.", f.path, f.sentence),
                findings: vec![found],
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{RandomDisk, RandomSpec};
    use std::time::Duration;

    /// A run at `depth` of `n` reads over `seconds`: `tail` of them (a
    /// fraction) at `slow_ms`, the rest at `ms`.
    fn run(
        depth: usize,
        (n, seconds): (u64, f64),
        ms: f64,
        (tail, slow_ms): (f64, f64),
    ) -> RandomRun {
        let mut r = RandomRun::new(depth);
        let slow = (n as f64 * tail).round() as u64;
        r.latency_ns.record_n((ms * 1e6) as u64, n - slow).unwrap();
        if slow > 0 {
            r.latency_ns.record_n((slow_ms * 1e6) as u64, slow).unwrap();
        }
        (r.reads, r.seconds) = (n, seconds);
        r
    }

    /// A disk at depth 1 (`ms` each, `tail`) and at depth 32 (`gain` times
    /// the IOPS), read 10 s each, alone and together alike.
    fn disk(ms: f64, tail: (f64, f64), gain: f64) -> RandomDisk {
        let n = (10_000.0 / ms) as u64;
        let runs = vec![
            run(1, (n, 10.0), ms, tail),
            run(32, ((n as f64 * gain) as u64, 10.0), ms * 32.0 / gain, (0.0, 0.0)),
        ];
        RandomDisk { alone: runs.clone(), together: runs, again: Vec::new(), drive_log: None }
    }

    fn judged(disks: Vec<RandomDisk>, groups: &[usize]) -> Vec<RandomFinding> {
        judged_all(disks, groups).findings
    }

    fn judged_all(disks: Vec<RandomDisk>, groups: &[usize]) -> Judged {
        let spec = RandomSpec { block: 4096, depths: vec![1, 32], length: Duration::from_secs(10) };
        let paths: Vec<String> = (0..disks.len()).map(|i| format!("/dev/d{i}")).collect();
        judge(&RandomRead { spec, disks }, (&paths, groups))
    }

    const NONE: (f64, f64) = (0.0, 0.0);

    #[test]
    fn a_drive_with_a_long_tail_on_a_normal_median_is_retrying_and_only_it() {
        let mut disks = vec![disk(5.0, (0.005, 8.0), 3.0); 4];
        // 3 % of its reads take 25 ms: p99 25 ms, 5x its peers' p99 (5 ms).
        disks[2] = disk(5.0, (0.03, 25.0), 3.0);
        let f = judged(disks, &[0, 0, 0, 0]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            (f[0].path.as_str(), f[0].kind, f[0].when),
            ("/dev/d2", RandomKind::Retrying, When::Alone)
        );
        let s = &f[0].sentence;
        assert!(s.contains("p99 25.0 ms") && s.contains("5.0x its peers' 5.00 ms"), "{s}");
    }

    #[test]
    fn a_drive_slower_all_through_is_slow_not_retrying() {
        let mut disks = vec![disk(5.0, NONE, 3.0); 4];
        disks[1] = disk(16.0, NONE, 3.0);
        let f = judged(disks, &[0, 0, 0, 0]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!((f[0].path.as_str(), f[0].kind), ("/dev/d1", RandomKind::Slow));
    }

    #[test]
    fn a_uniformly_slower_model_is_judged_among_its_own_and_not_named() {
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        disks.extend(vec![disk(14.0, (0.005, 20.0), 2.5); 3]);
        assert!(judged(disks, &[0, 0, 0, 1, 1, 1]).is_empty());
    }

    #[test]
    fn a_short_tail_or_a_flash_drives_fraction_of_a_millisecond_is_not_retrying() {
        // 5x its peers' p99 but only 0.4 ms above it.
        let mut disks = vec![disk(0.05, (0.02, 0.1), 8.0); 3];
        disks[0] = disk(0.05, (0.03, 0.5), 8.0);
        assert!(judged(disks.clone(), &[0, 0, 0]).is_empty());
        // Too few reads for a p99: 100 reads.
        let mut few = vec![disk(100.0, NONE, 3.0); 3];
        few[0].alone[0] = run(1, (100, 10.0), 100.0, (0.05, 900.0));
        assert!(judged(few, &[0, 0, 0]).iter().all(|f| f.kind != RandomKind::Retrying));
    }

    #[test]
    fn a_drive_the_deep_queue_gains_nothing_is_named_beside_peers_it_gains() {
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        disks[0] = disk(5.0, NONE, 1.05);
        let f = judged(disks, &[0, 0, 0]);
        let q: Vec<_> = f.iter().filter(|f| f.kind == RandomKind::NoQueueing).collect();
        assert_eq!(q.len(), 1, "{f:#?}");
        assert_eq!(q[0].path, "/dev/d0");
        assert!(q[0].gain.is_some_and(|[own, peers]| own < 1.1 && peers > 2.9), "{:?}", q[0].gain);
        // Peers that gain no more (an engine or a controller without a
        // queue) name no one.
        assert!(judged(vec![disk(5.0, NONE, 1.05); 3], &[0, 0, 0]).is_empty());
    }

    #[test]
    fn failed_reads_are_named_and_returned_and_a_tail_only_one_read_shows_is_unsure() {
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        disks[0].together[1].failed = 2;
        disks[1].together[0] = run(1, (2000, 10.0), 5.0, (0.03, 30.0));
        let j = judged_all(disks, &[0, 0, 0]);
        let f = &j.findings;
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!((f[0].kind, f[0].when, f[0].depth), (RandomKind::Failed, When::Together, 32));
        assert_eq!(j.unsure.len(), 1, "{:#?}", j.unsure);
        assert_eq!(
            (j.unsure[0].path.as_str(), j.unsure[0].kind),
            ("/dev/d1", RandomKind::Retrying)
        );
        let mut advice = Vec::new();
        advise(f, &mut advice);
        assert_eq!((advice.len(), advice[0].action), (1, Action::Return));
        assert!(advice[0].sentence.contains("while every disk read"), "{}", advice[0].sentence);
        // Failing at both depths: one line, each depth's failure in words
        // (it read "random reads: it 67 of its random reads failed").
        let mut both = vec![disk(5.0, NONE, 3.0); 3];
        (both[0].alone[0].failed, both[0].alone[1].failed) = (46, 67);
        let j = judged_all(both, &[0, 0, 0]);
        let mut advice = Vec::new();
        advise(&j.findings, &mut advice);
        assert_eq!(advice.len(), 1, "{advice:#?}");
        let said = &advice[0].sentence;
        assert!(said.starts_with("/dev/d0: failed 46 of its random reads at depth 1"), "{said}");
        assert!(
            said.contains("; random reads: it failed 67 of its random reads at depth 32"),
            "{said}"
        );
    }

    #[test]
    fn a_tail_one_read_showed_is_decided_by_a_read_alone_again() {
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        disks[1].alone[0] = run(1, (2000, 10.0), 5.0, (0.03, 30.0));
        let j = judged_all(disks.clone(), &[0, 0, 0]);
        assert_eq!(j.to_read_again(), [("/dev/d1".to_string(), 1)]);
        // Read again, it shows the tail again: claimed, said so.
        let mut shown = disks.clone();
        shown[1].again.push(run(1, (2000, 10.0), 5.0, (0.03, 30.0)));
        let j = judged_all(shown, &[0, 0, 0]);
        assert_eq!((j.findings.len(), j.unsure.len(), j.cleared.len()), (1, 0, 0), "{j:#?}");
        assert!(j.findings[0].again.is_some_and(|a| a.latency_us.p99 > 25_000.0));
        assert!(
            j.findings[0].sentence.contains("again when read alone once more"),
            "{}",
            j.findings[0].sentence
        );
        // Read again, it does not: cleared, with what the read again measured.
        let mut quiet = disks;
        quiet[1].again.push(run(1, (2000, 10.0), 5.0, NONE));
        let j = judged_all(quiet, &[0, 0, 0]);
        assert_eq!((j.findings.len(), j.unsure.len(), j.cleared.len()), (0, 0, 1), "{j:#?}");
        assert!(j.cleared[0].again.is_some_and(|a| a.latency_us.p99 < 6_000.0));
        assert!(j.to_read_again().is_empty());
    }

    #[test]
    fn a_disk_that_hung_or_read_almost_nothing_is_named_never_left_unjudged() {
        // Its depth-1 reads hung: not answering, claimed on its own, a
        // path to check (as a hang in the passes).
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        disks[0].alone[0].stopped = Some(Stopped::Hung);
        let j = judged_all(disks, &[0, 0, 0]);
        assert_eq!(j.findings.len(), 1, "{j:#?}");
        assert_eq!((j.findings[0].kind, j.findings[0].depth), (RandomKind::Unanswered, 1));
        assert!(
            j.findings[0].sentence.starts_with("stopped answering"),
            "{}",
            j.findings[0].sentence
        );
        let mut advice = Vec::new();
        advise(&j.findings, &mut advice);
        assert_eq!(advice[0].action, Action::CheckPath);
        // Slower than its peers in the passes as well: still a path to check
        // first (a hang outranks a slowness), the passes' words kept; media
        // evidence from the passes stays a return.
        for (passes, then) in
            [(Action::Recheck, Action::CheckPath), (Action::Return, Action::Return)]
        {
            let mut advice = vec![DiskAdvice {
                path: "/dev/d0".into(),
                action: passes,
                sentence: "/dev/d0: 80% of its peers' speed, move it.".into(),
                findings: Vec::new(),
            }];
            advise(&j.findings, &mut advice);
            assert_eq!((advice.len(), advice[0].action), (1, then), "{advice:#?}");
            assert!(advice[0].sentence.contains("peers' speed, move it; random reads: it stopped"));
        }
        // 20 reads in 10 s where its peers read 2000: too few for a peer's
        // rate, its own all the same: slow.
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        let d1 = &mut disks[1];
        for runs in [&mut d1.alone, &mut d1.together] {
            runs[0] = run(1, (20, 10.0), 500.0, NONE);
        }
        let f = judged(disks, &[0, 0, 0]);
        assert!(
            f.iter()
                .any(|f| (f.path.as_str(), f.kind, f.depth) == ("/dev/d1", RandomKind::Slow, 1)),
            "{f:#?}"
        );
    }

    #[test]
    fn a_lack_of_queueing_one_read_showed_is_read_again_at_both_depths() {
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        disks[0].alone = disk(5.0, NONE, 1.05).alone;
        let j = judged_all(disks.clone(), &[0, 0, 0]);
        assert_eq!(
            j.to_read_again(),
            [("/dev/d0".to_string(), 1), ("/dev/d0".to_string(), 32)],
            "{j:#?}"
        );
        disks[0].again = disk(5.0, NONE, 1.05).alone;
        let j = judged_all(disks, &[0, 0, 0]);
        assert_eq!(
            j.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [RandomKind::NoQueueing],
            "{j:#?}"
        );
    }

    #[test]
    fn a_tail_both_reads_show_is_claimed_with_both_figures_and_one_read_only_is_claimed_alone() {
        let mut disks = vec![disk(5.0, NONE, 3.0); 3];
        disks[1] = disk(5.0, (0.03, 30.0), 3.0);
        let f = judged(disks.clone(), &[0, 0, 0]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].together.is_some_and(|t| t.latency_us.p99 > 25_000.0), "{f:#?}");
        assert!(f[0].sentence.contains("again with every disk reading"), "{}", f[0].sentence);
        // A check of one disk's group read only alone claims what it read.
        disks.iter_mut().for_each(|d| d.together.clear());
        assert_eq!(judged(disks, &[0, 0, 0]).len(), 1);
    }
}

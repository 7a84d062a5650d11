//! The burn-in's verdicts: what a disk's write-verify found, and its
//! speeds against its peers', turned into an action.
//!
//! - The device went away → check its path (cable, slot, power).
//! - The disk stopped answering (a request with no answer within the I/O
//!   timeout) → check its path; if it hangs again, return it.
//! - Any block that failed to write or read, came back changed, landed
//!   elsewhere, was lost or reads as foreign data, or a SMART media counter
//!   that rose during the run, or a failed SMART health check → return the
//!   disk: a new disk must store what it is given, and each of these says
//!   it did not.
//! - Only a SMART transport counter rose (UDMA CRC, SATA phy errors) →
//!   check the cable, backplane or HBA port: the disk stored everything.
//!   (A corrupted block can also be a bad cable or memory; the sentence
//!   says so, the action stays return until SMART says otherwise.)
//! - The drive's own self-test failed (`--smart-test`) → return it.
//! - A write or read that had the disk for `stall_ms` or more beyond what
//!   its size needs at the pace of the disk's other requests, taken as at
//!   least 50 MB/s (a drive retrying a weak sector; `judge::stall`), the
//!   run's first left out (spin-up) → return it: the disk's own evidence,
//!   judged without peers. Beyond what 50 MB/s needs but within the pace
//!   of a disk slower than that → not decided, said why.
//! - Above its temperature limit during the run (the drive's own
//!   where it reports one: NVMe WCTEMP, ATA SCT, SAS trip point; else a
//!   default for its kind), or minutes it counted above its own warning
//!   temperature rose → check the cooling at its slot.
//! - Otherwise, a write or verify speed under `slow_pct` % of its peers'
//!   median, or a later pass's reads under [`SLOWED_PCT`] % of its own
//!   pass 1 → move it and burn it in again (a slow port looks the same).
//!   A phase timed for under [`MIN_JUDGED_S`] is not compared (noise).
//!   Every disk is burned at once, so a limit they share (the host's CPU,
//!   a controller, an expander) sets each one's pace by how it is shared,
//!   not by the disk: a disk slow against its peers on speed alone is
//!   first re-measured alone, in turn with a peer of its group
//!   ([`suspects`]), and is slow only if it is slow there too.

use super::advice::Action;
use super::peers::pct_of_group_median;
use super::remeasured::against_words;
use super::remeasured::{Against, Remeasured};
pub use super::stall::Slowest;
use super::{ArrayVerdict, MIN_JUDGED_S, SLOWED_PCT, Thresholds, Verdict};
use crate::burnin::record::Class;
use crate::burnin::remeasure::{BATCH, MOST};
use crate::finding::{Code, Finding};

/// One disk's burn-in, as the verdict reads it.
#[derive(Debug, Clone, Default)]
pub struct BurnFacts {
    /// Bytes per class of fault, by the class's words ("failed to write").
    pub bad: Vec<(Class, u64)>,
    /// Whether a corrupted block was among them.
    pub corrupted: bool,
    pub device_gone: bool,
    /// The disk stopped answering: where, in words ("a write at byte 8388608
    /// in pass 1 got no answer within 2 min").
    pub hung: Option<String>,
    /// SMART: counters that rose, in words ("ATA 197 … 0 → 8"), by kind,
    /// and whether the health check failed after the run.
    pub smart_media: Vec<String>,
    pub smart_transport: Vec<String>,
    pub smart_failed: bool,
    /// MB/s of the write and verify phases (None: nothing timed), and
    /// their seconds.
    pub write_mb_per_s: Option<f64>,
    pub verify_mb_per_s: Option<f64>,
    pub write_s: f64,
    pub verify_s: f64,
    /// Read-back MB/s of each pass read whole and timed for at least
    /// [`MIN_JUDGED_S`] (None otherwise), pass 1 first.
    pub pass_mb_per_s: Vec<Option<f64>>,
    /// The drive's own self-test failed (`--smart-test`): its words.
    pub self_test_failed: Option<String>,
    /// Its self-test did not finish before arrayburn stopped waiting:
    /// why, in words (not judged: the drive said nothing).
    pub self_test_unfinished: Option<String>,
    /// The hottest the disk was during the run (SMART), °C, the limit it
    /// is judged against (°C) and where that limit comes from, in words.
    pub hottest_c: Option<i64>,
    pub limit_c: Option<i64>,
    pub limit_source: String,
    /// SMART: the time-above-limit counters that rose, in words.
    pub smart_thermal: Vec<String>,
    /// The slowest write or read.
    pub slowest: Option<Slowest>,
    /// Peer group (same model, size and kind).
    pub group: usize,
    /// Re-measured alone, in turn with a peer, after the run called it
    /// slow on speed alone (None: not re-measured).
    pub remeasured: Option<Remeasured>,
    /// A signal stopped its run: its speeds are of a part of it, and were
    /// never re-measured, so a speed alone blames nothing.
    pub interrupted: bool,
    /// The capacity probe before the run found fake capacity: in words.
    pub fake_capacity: Option<String>,
    /// Its writes collapsed partway through a pass, and what a burst after
    /// idling found (`judge::smr`).
    pub shingled: Option<super::smr::Shingled>,
    /// It spins (sysfs): only a spinning disk's caches are shingles.
    pub spins: bool,
    /// The scattered-write probe before the run (`burnin::scatter`).
    pub scattered: Option<crate::burnin::scatter::Scattered>,
    /// A verify's spin cycles (`--cycles`).
    pub cycles: Vec<crate::burnin::cycle::Cycle>,
    /// `--discard`: what was discarded and read back.
    pub discarded: Option<crate::burnin::discard::Discarded>,
}

impl BurnFacts {
    /// What is known of its shingles (`judge::smr`).
    pub fn signs(&self) -> super::smr::Signs<'_> {
        super::smr::Signs {
            spins: self.spins,
            shingled: self.shingled.as_ref(),
            scattered: self.scattered.as_ref(),
        }
    }
}

/// What the judge made of one disk's burn-in.
#[derive(Debug, Clone, PartialEq)]
pub struct BurnVerdict {
    /// The action and its sentence; None when nothing was found.
    pub action: Rule,
    /// Write and verify speed as % of the peers' median.
    pub write_pct: Option<f64>,
    pub verify_pct: Option<f64>,
    /// Slower than its peers with every disk at once, and re-measured
    /// alone without a decision: in words (its health is not claimed).
    pub undecided: Option<String>,
    /// Its speed is not judged against its peers, as asked (`--slow-pct
    /// 0`).
    pub peers_waived: bool,
}

impl BurnVerdict {
    /// Whether its speed was compared with peers, or that was waived
    /// (else its health is not claimed: nothing found, not judged).
    pub fn compared(&self) -> bool {
        self.peers_waived || self.write_pct.is_some() || self.verify_pct.is_some()
    }

    /// The disk's verdict before links have their say (a disk with an
    /// action is named by it): stopped (a signal, or a soak's --duration
    /// ending) before it was burned whole ([`burned_whole`]: `whole`
    /// false), interrupted; nothing found, healthy only where its speed was
    /// compared with peers and decided; else its health is not claimed.
    pub fn disk_verdict(&self, interrupted: bool, whole: bool) -> DiskVerdict {
        match (interrupted || !whole, self.compared() && self.undecided.is_none()) {
            (true, _) => DiskVerdict::Interrupted,
            (false, true) => DiskVerdict::Healthy,
            (false, false) => DiskVerdict::NotJudged,
        }
    }
}

/// The run's verdict: a signal stopped it; a disk or link to act on;
/// nothing to act on but a disk not judged or not decided; else healthy.
pub fn run_verdict(interrupted: bool, to_act_on: bool, not_judged: bool) -> ArrayVerdict {
    match (interrupted, to_act_on) {
        (true, _) => ArrayVerdict::Interrupted,
        (false, true) => ArrayVerdict::Flagged,
        (false, false) if not_judged => ArrayVerdict::NotJudged,
        (false, false) => ArrayVerdict::Healthy,
    }
}

/// Whether a disk was burned as far as its run asked, the one rule for
/// the run's report and the fleet's reading of it: it neither went away
/// nor hung, and a burn-in reached its last pass's end (a result from
/// before the place was kept: taken as whole) or, fitted to a deadline,
/// burned a stripe and was not stopped (what it tested is said beside);
/// a soak read it whole at least once.
pub fn burned_whole(b: &crate::burnin::record::DiskBurn, read_only: bool) -> bool {
    use crate::burnin::record::Phase;
    let to_deadline = b.stripes.is_some_and(|s| s.done > 0) && !b.interrupted;
    let done = if read_only {
        b.passes_done >= 1
    } else {
        to_deadline || b.place.is_none_or(|p| p.phase == Phase::Done)
    };
    done && !b.device_gone && b.hung.is_none()
}

/// A burn-in's verdict on one disk, as its report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiskVerdict {
    /// Nothing found, and its speed compared with peers.
    Healthy,
    /// An action: return it, recheck it, check its path.
    Return,
    Recheck,
    CheckPath,
    /// Nothing found, but its speed could not be compared: health not
    /// claimed.
    NotJudged,
    /// Stopped before it was burned whole, nothing found.
    Interrupted,
}

impl DiskVerdict {
    /// As the JSON names it.
    pub fn word(self) -> &'static str {
        match self {
            DiskVerdict::Healthy => "healthy",
            DiskVerdict::Return => "return",
            DiskVerdict::Recheck => "recheck",
            DiskVerdict::CheckPath => "check_path",
            DiskVerdict::NotJudged => "not_judged",
            DiskVerdict::Interrupted => "interrupted",
        }
    }

    /// Whether it is an action to take.
    pub fn to_act_on(self) -> bool {
        matches!(self, DiskVerdict::Return | DiskVerdict::Recheck | DiskVerdict::CheckPath)
    }
}

impl From<Action> for DiskVerdict {
    fn from(a: Action) -> Self {
        match a {
            Action::Return => DiskVerdict::Return,
            Action::Recheck => DiskVerdict::Recheck,
            Action::CheckPath => DiskVerdict::CheckPath,
        }
    }
}

/// Each disk's verdict.
pub fn verdicts(disks: &[BurnFacts], th: &Thresholds) -> Vec<BurnVerdict> {
    let groups: Vec<usize> = disks.iter().map(|d| d.group).collect();
    // (MB/s, seconds) → the speed, when timed long enough to compare.
    let speeds = |f: fn(&BurnFacts) -> (Option<f64>, f64)| -> Vec<Option<f64>> {
        disks
            .iter()
            .map(|d| match f(d) {
                (Some(v), s) if s >= MIN_JUDGED_S => Some(v),
                _ => None,
            })
            .collect()
    };
    let write = pct_of_group_median(&speeds(|d| (d.write_mb_per_s, d.write_s)), &groups);
    let verify = pct_of_group_median(&speeds(|d| (d.verify_mb_per_s, d.verify_s)), &groups);
    disks
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let late = spun_up_late(disks, i);
            let late = coded(late, Code::SpunUpLate);
            let action = evidence(d, th).or(late).or_else(|| slow(d, (write[i], verify[i]), th));
            let undecided = action
                .is_none()
                .then(|| {
                    let smr = super::smr::judge(d.signs()).1;
                    let speed = smr.or_else(|| undecided(d, (write[i], verify[i]), th));
                    let said: Vec<String> = (speed.into_iter())
                        .chain(d.slowest.as_ref().and_then(|s| s.too_slow_to_tell(th)))
                        .chain(d.self_test_unfinished.clone())
                        .collect();
                    (!said.is_empty()).then(|| said.join("; "))
                })
                .flatten();
            let peers_waived = th.slow_pct <= 0.0;
            BurnVerdict {
                action,
                write_pct: write[i],
                verify_pct: verify[i],
                undecided,
                peers_waived,
            }
        })
        .collect()
}

/// The disks the run called slow against their peers on speed alone
/// (nothing else found, not slowing from pass to pass), each with the peer
/// to re-measure it in turn with: a disk of its group with nothing found,
/// its speed nearest its group's median; where every other disk of its
/// group was called slow too, one called slow on speed alone (two disks,
/// each slower than the other in one phase: the turns alone say which, if
/// either, is slower, phase by phase). A disk without a peer keeps its
/// verdict.
pub fn suspects(disks: &[BurnFacts], th: &Thresholds) -> Vec<(usize, usize)> {
    let judged = verdicts(disks, th);
    let pct = |v: &BurnVerdict| v.write_pct.or(v.verify_pct);
    let speed_only = |i: usize| {
        let (d, v) = (&disks[i], &judged[i]);
        let below = [v.write_pct, v.verify_pct].iter().flatten().any(|p| *p < th.slow_pct);
        evidence(d, th).is_none() && slowed(&d.pass_mb_per_s).is_none() && below
    };
    (0..disks.len())
        .filter(|&i| speed_only(i))
        .filter_map(|i| {
            let clean = |j: &usize| judged[*j].action.is_none();
            let fine = |j: &usize| {
                *j != i && disks[*j].group == disks[i].group && (clean(j) || speed_only(*j))
            };
            let off = |j: &usize| pct(&judged[*j]).map_or(f64::MAX, |p| (p - 100.0).abs());
            let peer = (0..disks.len())
                .filter(fine)
                .min_by(|a, b| (!clean(a)).cmp(&!clean(b)).then(off(a).total_cmp(&off(b))))?;
            Some((i, peer))
        })
        .collect()
}

/// What a rule says of a disk: what to do and why, and each finding by
/// its code; or nothing.
pub type Rule = Option<(Action, String, Vec<Finding>)>;

/// What a rule of one finding says: what to do and why.
type Said = Option<(Action, String)>;

/// A rule of one finding, its code given.
fn coded(said: Said, code: Code) -> Rule {
    said.map(|(a, s)| (a, s, vec![Finding::of(code)]))
}

/// What the disk's own evidence says, before any speed: gone or hung, bad
/// blocks, SMART, stalls, heat.
fn evidence(d: &BurnFacts, th: &Thresholds) -> Rule {
    let gone = if d.device_gone { Code::DeviceGone } else { Code::Hung };
    coded(gone_or_hung(d), gone)
        .or_else(|| coded(not_back(d), Code::NotBack))
        .or_else(|| faults(d, th))
        .or_else(|| transport(d))
        .or_else(|| heat(d))
        .or_else(|| smr(d))
        .or_else(|| coded(discard_not_zeroes(d), Code::DiscardNotZeroes))
}

/// After a discard whose zeroes were promised, data read back: its TRIM
/// does not do what it (or the kernel for it) declares, which RAID, ZFS
/// and a secure erase rely on.
fn discard_not_zeroes(d: &BurnFacts) -> Said {
    let x = d.discarded.as_ref().filter(|x| x.not_zero_bytes > 0)?;
    Some((
        Action::Recheck,
        format!(
            "after a discard {} promised would read as zeroes, {} of {} read back at spread places held data (first at byte {}): do not rely on its discards zeroing (RAID resyncs and secure erase do); update its firmware and burn it in again with --discard, and return it if it stays so",
            x.promised_by.as_deref().unwrap_or("the drive"),
            crate::units::human_bytes(x.not_zero_bytes),
            crate::units::human_bytes(x.read_bytes),
            x.first_not_zero.unwrap_or_default()
        ),
    ))
}

/// The writes' shape (`judge::smr`): shingles, or a collapse that stayed.
fn smr(d: &BurnFacts) -> Rule {
    let (a, s) = super::smr::judge(d.signs()).0?;
    let zoned = d.signs().scattered.is_some_and(|s| s.zoned.is_some());
    let code = match a {
        Action::Return if zoned => Code::Zoned,
        Action::Return => Code::DriveManagedSmr,
        _ => Code::WritesCollapsed,
    };
    Some((a, s, vec![Finding::of(code)]))
}

/// The disk went away or stopped answering: its path first.
fn gone_or_hung(d: &BurnFacts) -> Said {
    if d.device_gone {
        return Some((
            Action::CheckPath,
            "the device went away during the burn-in, check its cable, slot and power, then burn it in again".into(),
        ));
    }
    let where_ = d.hung.as_ref()?;
    Some((
        Action::CheckPath,
        format!(
            "the disk stopped answering ({where_}); its burn-in ended there: check its cable, slot and power, then burn it in again; if it hangs again, return it"
        ),
    ))
}

/// A spin-up slower than this many times its peers' (or its own first),
/// and by at least [`LATE_S`] more, is late: a drive slow to spin up is one
/// that fails to start one day.
pub const LATE_TIMES: f64 = 2.0;
/// ... and by at least this many seconds more (a spin-up takes seconds).
pub const LATE_S: f64 = 2.0;

/// A disk that did not come back from a spin-down as itself: it did not
/// answer or cannot be read (return it), or answered as another drive (its
/// slot and path).
fn not_back(d: &BurnFacts) -> Said {
    use crate::burnin::cycle::Back;
    d.cycles.iter().find_map(|c| match &c.back {
        Back::Gone(why) => Some((
            Action::Return,
            format!("after {} it did not come back ({why}), return it", c.name()),
        )),
        Back::Other(what) => Some((
            Action::CheckPath,
            format!(
                "after {} another drive answered under its name ({what}): it dropped off the bus or the names moved; check its slot, cable and power",
                c.name()
            ),
        )),
        Back::Same | Back::NotSpun(_) => None,
    })
}

/// Disk `i`'s spin-ups against its peers' (the slowest of each, its group's
/// median) and against its own first: late by [`LATE_TIMES`] and
/// [`LATE_S`] → recheck.
fn spun_up_late(disks: &[BurnFacts], i: usize) -> Said {
    let times = |d: &BurnFacts| -> Vec<(u16, f64)> {
        d.cycles.iter().filter_map(|c| Some((c.cycle, c.spin_up_s?))).collect()
    };
    let late = |s: f64, than: f64| s > LATE_TIMES * than && s - than >= LATE_S;
    let slowest = |d: &BurnFacts| times(d).into_iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let d = &disks[i];
    let (cycle, s) = slowest(d)?;
    let cycle = crate::burnin::cycle::Cycle { cycle, ..d.cycles.first()?.clone() }.name();
    let peers: Vec<f64> = (disks.iter().enumerate())
        .filter(|(j, p)| *j != i && p.group == d.group)
        .filter_map(|(_, p)| Some(slowest(p)?.1))
        .collect();
    if let Some(m) = crate::stats::median(&peers).filter(|m| late(s, *m)) {
        return Some((
            Action::Recheck,
            format!(
                "it took {s:.1} s to answer after {cycle}, its peers {m:.1} s: a drive slow to spin up fails to start one day; check its power, then cycle it again"
            ),
        ));
    }
    let own = times(d);
    let (first, last) = (own.first()?, own.last()?);
    (own.len() > 1 && late(last.1, first.1)).then(|| {
        (
            Action::Recheck,
            format!(
                "its spin-up slowed from {:.1} s (cycle {}) to {:.1} s (cycle {}); check its power, then cycle it again",
                first.1, first.0, last.1, last.0
            ),
        )
    })
}

/// Blocks found bad, SMART media errors or a failed health check or
/// self-test, a stall: return it.
fn faults(d: &BurnFacts, th: &Thresholds) -> Rule {
    let mut bad: Vec<(Finding, String)> = (d.bad.iter().filter(|(_, n)| *n > 0))
        .map(|(c, n)| (Finding::counting(c.code(), *n), format!("{n} bytes {}", c.words())))
        .collect();
    let counter = |c: &String| (Finding::counter(Code::SmartMedia, c), format!("SMART {c}"));
    bad.extend(d.smart_media.iter().map(counter));
    if d.smart_failed {
        bad.push((Finding::of(Code::SmartFailed), "SMART health check failed".into()));
    }
    if let Some(words) = &d.self_test_failed {
        let said = format!("its SMART self-test failed ({words})");
        bad.push((Finding::of(Code::SelfTestFailed), said));
    }
    if let Some(words) = &d.fake_capacity {
        bad.push((Finding::of(Code::FakeCapacity), format!("{words}; only those were burned")));
    }
    // A drive-managed SMR disk stalls while it rewrites its bands: its
    // stalls are named in that verdict.
    let smr = matches!(super::smr::judge(d.signs()).0, Some((Action::Return, _)));
    if let Some(said) = d.slowest.as_ref().filter(|_| !smr).and_then(|s| s.stalled(th)) {
        bad.push((Finding::of(Code::Stalled), said));
    }
    if bad.is_empty() {
        return None;
    }
    let cable = if d.corrupted {
        " (if other disks on the same cable or HBA show corrupted blocks too, check those first)"
    } else {
        ""
    };
    let (findings, bad): (Vec<Finding>, Vec<String>) = bad.into_iter().unzip();
    Some((Action::Return, format!("{}, return it{cable}", bad.join(", ")), findings))
}

/// SMART transport errors while every block read back right: the path.
fn transport(d: &BurnFacts) -> Rule {
    if d.smart_transport.is_empty() {
        return None;
    }
    let said: Vec<String> = d.smart_transport.iter().map(|c| format!("SMART {c}")).collect();
    let findings = d.smart_transport.iter().map(|c| Finding::counter(Code::SmartTransport, c));
    Some((
        Action::CheckPath,
        format!(
            "{} during the burn-in while every block read back right, check its cable, backplane or HBA port",
            said.join(", ")
        ),
        findings.collect(),
    ))
}

/// Hotter than its limit, or SMART thermal counters rose: the cooling.
fn heat(d: &BurnFacts) -> Rule {
    let mut hot: Vec<String> = Vec::new();
    let mut findings = Vec::new();
    if let (Some(c), Some(limit)) = (d.hottest_c, d.limit_c)
        && c > limit
    {
        hot.push(format!("reached {c} °C during the run, above {} ({limit} °C)", d.limit_source));
        findings.push(Finding::of(Code::TooHot));
    }
    hot.extend(d.smart_thermal.iter().map(|c| format!("SMART {c}")));
    findings.extend(d.smart_thermal.iter().map(|c| Finding::counter(Code::SmartThermal, c)));
    (!hot.is_empty()).then(|| {
        let words = hot.join(", ");
        let what = format!(
            "{words}: check the chassis cooling and airflow at its slot, then run it again"
        );
        (Action::Recheck, what, findings)
    })
}

/// Slower than its peers writing or reading back (`write`, `verify`: % of
/// their median) and, where it was re-measured, found slow against its
/// peer there too; or slowing from pass to pass: another slot, again.
fn slow(d: &BurnFacts, (write, verify): (Option<f64>, Option<f64>), th: &Thresholds) -> Rule {
    let mut slow: Vec<String> = (below(d, (write, verify), th).into_iter())
        .filter_map(|(what, p, again)| match again {
            Some((beside, Some(a))) if a.verdict == Verdict::Slow => Some(format!(
                "{what} speed {p:.0}% of its peers' with every disk at once, {} of {beside}'s re-measured alone in turn",
                against_words(&a)
            )),
            // At its peer's speed alone: the run's shared limit, not the
            // disk; or not decided there, or not read there because a
            // finding on either disk ended the turns (said as undecided).
            Some(_) => None,
            // A stop cut it short before it could be re-measured: a stop
            // is never a finding.
            None if d.interrupted => None,
            None => Some(format!("{what} speed {p:.0}% of its peers'")),
        })
        .collect();
    // One finding however many phases were slow (their figures move).
    let mut findings: Vec<Finding> =
        slow.first().map(|_| Finding::of(Code::SlowerThanPeers)).into_iter().collect();
    let slowing = slowed(&d.pass_mb_per_s);
    findings.extend(slowing.iter().map(|_| Finding::of(Code::Slowing)));
    slow.extend(slowing);
    (!slow.is_empty()).then(|| {
        let words = slow.join(", ");
        let what = format!(
            "{words}, move it to another slot and burn it in again; if it stays slow, return it"
        );
        (Action::Recheck, what, findings)
    })
}

/// Slower than its peers with every disk at once, and neither slow nor at
/// their speed re-measured alone: in words.
fn undecided(
    d: &BurnFacts,
    (write, verify): (Option<f64>, Option<f64>),
    th: &Thresholds,
) -> Option<String> {
    let said: Vec<String> = (below(d, (write, verify), th).into_iter())
        .filter_map(|(what, p, again)| {
            let (beside, a) = again?;
            let Some(a) = a else {
                return Some(format!(
                    "{what} speed {p:.0}% of its peers' with every disk at once, its re-measurement beside {beside} ended by a finding before this phase was compared"
                ));
            };
            if a.verdict != Verdict::Unsure {
                return None;
            }
            let why = match a.turns < BATCH {
                true => format!(
                    "too few to decide in the time a re-measurement may take (the burning's own, at most {} min)",
                    MOST.as_secs() / 60
                ),
                false => format!("straddling {:.0}%", th.slow_pct),
            };
            Some(format!(
                "{what} speed {p:.0}% of its peers' with every disk at once, {} of {beside}'s re-measured alone in turn, {why}",
                against_words(&a)
            ))
        })
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// A phase the disk was slow in with every disk at once: its name, its %
/// of its peers' median, and (the peer, what it found in that phase; None
/// where a finding ended the turns first) where re-measured.
type Below<'a> = (&'static str, f64, Option<(&'a str, Option<Against>)>);

/// The phases where the disk was under `slow_pct` of its peers' median,
/// each with what its re-measurement found, where it was re-measured.
fn below<'a>(
    d: &'a BurnFacts,
    (write, verify): (Option<f64>, Option<f64>),
    th: &Thresholds,
) -> Vec<Below<'a>> {
    let again = |pick: fn(&Remeasured) -> Option<Against>| {
        d.remeasured.as_ref().map(|r| (r.beside.as_str(), pick(r)))
    };
    [("write", write, again(|r| r.write)), ("verify", verify, again(|r| r.verify))]
        .into_iter()
        .filter_map(|(what, p, a)| Some((what, p.filter(|p| *p < th.slow_pct)?, a)))
        .collect()
}

/// A disk whose reads slowed from pass to pass (heat, sectors that start
/// to need retries): its slowest later pass under [`SLOWED_PCT`] % of
/// pass 1.
fn slowed(passes: &[Option<f64>]) -> Option<String> {
    let first = (*passes.first()?)?;
    let (i, worst) = passes
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let pct = 100.0 * worst / first;
    (pct < SLOWED_PCT).then(|| {
        format!(
            "reads slowed to {worst:.0} MB/s in pass {}, {pct:.0}% of pass 1's {first:.0} MB/s (heat, or sectors that need retries: check its cooling)",
            i + 1
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_disk_not_burned_whole_is_never_healthy() {
        let compared = BurnVerdict {
            action: None,
            write_pct: None,
            verify_pct: Some(100.0),
            undecided: None,
            peers_waived: false,
        };
        assert_eq!(compared.disk_verdict(false, true), DiskVerdict::Healthy);
        // A soak whose --duration ended first, a signal: stopped, not healthy.
        assert_eq!(compared.disk_verdict(false, false), DiskVerdict::Interrupted);
        assert_eq!(compared.disk_verdict(true, true), DiskVerdict::Interrupted);
    }

    use super::*;
    use crate::burnin::remeasure::Turn;

    fn disk(w: f64, v: f64) -> BurnFacts {
        BurnFacts {
            write_mb_per_s: Some(w),
            verify_mb_per_s: Some(v),
            write_s: 10.0,
            verify_s: 10.0,
            ..BurnFacts::default()
        }
    }

    #[test]
    fn each_finding_carries_its_code_once_and_what_it_counts() {
        let th = Thresholds::default();
        let codes = |v: &BurnVerdict| v.action.as_ref().map(|a| a.2.clone()).unwrap_or_default();
        // Slow writing and reading back: one finding, its figures in the words.
        let out = verdicts(&[disk(40.0, 40.0), disk(100.0, 100.0), disk(100.0, 100.0)], &th);
        assert_eq!(codes(&out[0]), [Finding::of(Code::SlowerThanPeers)], "{out:?}");
        assert!(codes(&out[1]).is_empty() && codes(&out[2]).is_empty());
        // Bad bytes by their class, each counting its bytes.
        let bad = BurnFacts {
            bad: vec![(Class::Zeros, 8192), (Class::Corrupted, 4096), (Class::Stale, 0)],
            ..disk(100.0, 100.0)
        };
        let out = verdicts(&[bad, disk(100.0, 100.0)], &th);
        assert_eq!(
            codes(&out[0]),
            [Finding::counting(Code::NeverWritten, 8192), Finding::counting(Code::Corrupted, 4096)]
        );
        assert!(
            out[0]
                .action
                .as_ref()
                .unwrap()
                .1
                .starts_with("8192 bytes zeros (never written), 4096 bytes corrupted")
        );
    }

    #[test]
    fn with_slow_pct_0_speeds_are_not_judged_against_peers_but_faults_and_slowing_are() {
        let th = Thresholds { slow_pct: 0.0, ..Thresholds::default() };
        // A disk writing at half its peers' speed, and a disk with no peer.
        let facts = [disk(50.0, 100.0), disk(100.0, 100.0), disk(101.0, 100.0)];
        let judged = verdicts(&facts, &th);
        assert!(judged.iter().all(|v| v.action.is_none()), "{judged:?}");
        assert_eq!(judged[0].write_pct.map(f64::round), Some(50.0), "still measured and shown");
        assert_eq!(suspects(&facts, &th), []);
        let alone = verdicts(&[BurnFacts { group: 3, ..disk(50.0, 100.0) }], &th);
        assert_eq!(
            alone[0].disk_verdict(false, true),
            DiskVerdict::Healthy,
            "waived, not unjudged"
        );
        // The default judges the same disk slow; a fault is judged either way.
        assert!(verdicts(&facts, &Thresholds::default())[0].action.is_some());
        let lost = BurnFacts { bad: vec![(Class::Corrupted, 4096)], ..disk(100.0, 100.0) };
        assert!(verdicts(&[lost, disk(100.0, 100.0)], &th)[0].action.is_some());
        // Slowing from its own first pass is its own evidence, not a peer's.
        let slowing =
            BurnFacts { pass_mb_per_s: vec![Some(100.0), Some(40.0)], ..disk(100.0, 100.0) };
        assert!(verdicts(&[slowing, disk(100.0, 100.0)], &th)[0].action.is_some());
    }

    #[test]
    fn two_disks_each_slower_in_one_phase_are_each_re_measured_beside_the_other() {
        let th = Thresholds::default();
        // Writes 14 against 20 MB/s, reads 30 against 21: each under 92 %
        // of the pair's median in one phase. Without a clean peer neither
        // was re-measured, and both were told to be moved and burned again.
        let facts = [disk(14.0, 30.0), disk(20.0, 21.0)];
        assert!(verdicts(&facts, &th).iter().all(|v| v.action.is_some()));
        assert_eq!(suspects(&facts, &th), [(0, 1), (1, 0)]);
        // One with a finding of its own is never the peer.
        let lost = BurnFacts { bad: vec![(Class::Corrupted, 4096)], ..disk(20.0, 21.0) };
        assert_eq!(suspects(&[disk(14.0, 30.0), lost], &th), []);
    }

    #[test]
    fn a_disk_slow_on_speed_alone_is_re_measured_beside_the_peer_nearest_the_median() {
        let th = Thresholds::default();
        let lost = BurnFacts { bad: vec![(Class::Corrupted, 4096)], group: 2, ..disk(60.0, 100.0) };
        let other_group = BurnFacts { group: 1, ..disk(50.0, 100.0) };
        let facts = [
            disk(100.0, 100.0),
            disk(70.0, 100.0),
            disk(104.0, 100.0),
            disk(97.0, 100.0),
            lost,
            other_group,
            disk(101.0, 100.0),
        ];
        // The corrupted one is judged on its blocks; the other group has
        // one disk (no peer, not compared); the slow one is re-measured
        // beside disk 0 (the group's median).
        assert_eq!(suspects(&facts, &th), [(1, 0)]);
        // A clean peer is taken before one called slow too.
        let mut with_slow = facts.to_vec();
        with_slow[0] = disk(100.0, 70.0);
        assert_eq!(suspects(&with_slow, &th)[1], (1, 6));
        // Turns of the disk and of its peer, alternating, the disk at
        // `share` of the peer's 150 MB/s.
        let again = |share: &[f64]| {
            let turns: Vec<Turn> = (share.iter().enumerate())
                .flat_map(|(r, k)| {
                    let at = |who: usize| 2.0 * r as f64 + who as f64;
                    [(0, k * 150.0), (1, 150.0)].map(|(who, w)| Turn {
                        who,
                        round: r as u32,
                        at_s: at(who),
                        write: Some(w),
                        verify: Some(300.0),
                    })
                })
                .collect();
            Some(Remeasured::of("/dev/sdz", &turns, &th))
        };
        let with = |r: Option<Remeasured>| {
            let mut f = facts.to_vec();
            f[1].remeasured = r;
            verdicts(&f, &th).swap_remove(1)
        };
        // At its peer's speed alone: the shared limit's doing, not blamed;
        // its run speed is still reported.
        let cleared = with(again(&[0.99, 1.0, 0.98, 1.01]));
        assert_eq!((cleared.action.clone(), cleared.undecided.clone()), (None, None));
        assert!(cleared.write_pct.is_some_and(|p| p < 80.0));
        let words = |v: BurnVerdict| v.action.unwrap().1;
        let blamed = with(again(&[0.70, 0.71, 0.69, 0.70]));
        assert!(
            words(blamed).starts_with("write speed 70% of its peers' with every disk at once, 70% (69-71% over 4 turns) of /dev/sdz's re-measured alone in turn, move it"),
        );
        // Neither: its health is not claimed, and the words say why.
        let unsure = with(again(&[0.85, 0.99, 0.88, 1.0]));
        assert_eq!(unsure.action, None);
        let why = unsure.undecided.unwrap();
        assert!(why.contains("re-measured alone in turn, straddling 92%"), "{why}");
        assert!(words(with(None)).starts_with("write speed 70% of its peers',"));
        // Turns its peer's finding ended before any was compared: its
        // speed is not blamed, and the words say why.
        let cut = with(Some(Remeasured::of("/dev/sdz", &[], &th)));
        assert_eq!(cut.action, None);
        let why = cut.undecided.unwrap();
        assert!(why.contains("beside /dev/sdz ended by a finding before this phase"), "{why}");
        // Fewer turns than a batch (the time a re-measurement may take ran
        // out), every one below the threshold as the pass was: slower in
        // every measurement, flagged with the figures ("not decided, too
        // few" before, exit 3, for a disk at 64 % and one at 9 %).
        let slow = with(again(&[0.70, 0.70, 0.70]));
        assert!(
            words(slow).starts_with("write speed 70% of its peers' with every disk at once, 70% (70-70% over 3 turns) of /dev/sdz's re-measured alone in turn, move it"),
        );
        let far = with(again(&[0.09, 0.25, 0.42]));
        assert!(words(far).contains("25% (9-42% over 3 turns) of /dev/sdz's"));
        // A turn at or above it: they straddle it with the pass, and decide
        // nothing, saying so.
        for short in [&[0.70, 0.95][..], &[1.0, 1.0]] {
            let cut = with(again(short));
            assert_eq!(cut.action, None, "{short:?}");
            let why = cut.undecided.unwrap();
            assert!(
                why.contains("too few to decide in the time a re-measurement may take"),
                "{why}"
            );
        }
    }

    #[test]
    fn a_stop_before_the_re_measurement_blames_no_disk_on_speed() {
        let th = Thresholds::default();
        // One of three disks at 89 % of its peers' when a signal stopped
        // the run: not re-measured, so its speed is no finding.
        let mut disks = vec![disk(89.0, 100.0), disk(100.0, 100.0), disk(100.0, 100.0)];
        assert_eq!(verdicts(&disks, &th)[0].action.as_ref().map(|a| a.0), Some(Action::Recheck));
        disks.iter_mut().for_each(|d| d.interrupted = true);
        assert_eq!(verdicts(&disks, &th)[0].action, None);
        // Its own evidence still counts.
        disks[0].device_gone = true;
        assert_eq!(verdicts(&disks, &th)[0].action.as_ref().map(|a| a.0), Some(Action::CheckPath));
    }

    #[test]
    fn action_table() {
        let th = Thresholds::default();
        let lost = BurnFacts { bad: vec![(Class::Stale, 8192)], ..disk(100.0, 100.0) };
        let flipped = BurnFacts {
            bad: vec![(Class::Corrupted, 4096)],
            corrupted: true,
            ..disk(100.0, 100.0)
        };
        let gone = BurnFacts { device_gone: true, ..disk(100.0, 100.0) };
        let pending = BurnFacts {
            smart_media: vec!["ATA 197 Current_Pending_Sector 0 → 8".into()],
            ..disk(100.0, 100.0)
        };
        let crc = BurnFacts {
            smart_transport: vec!["ATA 199 UDMA_CRC_Error_Count 0 → 12".into()],
            ..disk(100.0, 100.0)
        };
        let out = verdicts(
            &[
                disk(100.0, 100.0),
                disk(101.0, 99.0),
                lost,
                flipped,
                gone,
                disk(60.0, 100.0),
                pending,
                crc,
            ],
            &th,
        );
        let act: Vec<Option<Action>> = out.iter().map(|v| v.action.as_ref().map(|a| a.0)).collect();
        assert_eq!(
            act,
            [
                None,
                None,
                Some(Action::Return),
                Some(Action::Return),
                Some(Action::CheckPath),
                Some(Action::Recheck),
                Some(Action::Return),
                Some(Action::CheckPath)
            ]
        );
        assert!(out[6].action.as_ref().unwrap().1.starts_with("SMART ATA 197"));
        assert!(out[7].action.as_ref().unwrap().1.contains("check its cable"));
        let said = |i: usize| out[i].action.as_ref().unwrap().1.clone();
        assert_eq!(said(2), "8192 bytes lost (stale on read-back), return it");
        assert!(said(3).contains("check those first"), "{}", said(3));
        assert!(said(5).starts_with("write speed 60% of its peers'"), "{}", said(5));
        // Reads that slowed from pass to pass (85 % of pass 1 is within
        // what a host's other load makes); a pass not timed is not
        // compared.
        let passes =
            |p: &[Option<f64>]| BurnFacts { pass_mb_per_s: p.to_vec(), ..disk(100.0, 100.0) };
        let out = verdicts(
            &[
                passes(&[Some(200.0), Some(190.0), Some(120.0)]),
                passes(&[Some(200.0), None, Some(170.0)]),
                passes(&[None, Some(50.0)]),
            ],
            &th,
        );
        assert_eq!(
            out[0].action.as_ref().map(|a| a.1.as_str()),
            Some(
                "reads slowed to 120 MB/s in pass 3, 60% of pass 1's 200 MB/s (heat, or sectors that need retries: check its cooling), move it to another slot and burn it in again; if it stays slow, return it"
            )
        );
        assert!(out[1].action.is_none() && out[2].action.is_none());
        // A failed self-test returns the disk; heat sends one to its
        // cooling.
        let out = verdicts(
            &[
                BurnFacts {
                    self_test_failed: Some("completed: read failure".into()),
                    ..disk(100.0, 100.0)
                },
                BurnFacts {
                    hottest_c: Some(63),
                    limit_c: Some(60),
                    limit_source: "the default for a drive whose own limit was not read, 60 °C"
                        .into(),
                    ..disk(100.0, 100.0)
                },
                BurnFacts { hottest_c: Some(60), limit_c: Some(60), ..disk(100.0, 100.0) },
                // An NVMe drive at 72 °C under its own 80 °C threshold is
                // fine; minutes it counted above it are not.
                BurnFacts { hottest_c: Some(72), limit_c: Some(80), ..disk(100.0, 100.0) },
                BurnFacts {
                    hottest_c: Some(72),
                    limit_c: Some(80),
                    smart_thermal: vec!["NVMe minutes above its warning temperature 0 → 3".into()],
                    ..disk(100.0, 100.0)
                },
            ],
            &th,
        );
        assert_eq!(
            out[0].action,
            Some((
                Action::Return,
                "its SMART self-test failed (completed: read failure), return it".into(),
                vec![Finding::of(Code::SelfTestFailed)]
            ))
        );
        assert!(
            out[1]
                .action
                .as_ref()
                .is_some_and(|a| a.0 == Action::Recheck && a.1.starts_with("reached 63 °C")),
            "{:?}",
            out[1]
        );
        assert!(out[2].action.is_none());
        assert!(out[3].action.is_none(), "{:?}", out[3]);
        assert!(
            out[4].action.as_ref().is_some_and(|a| a.0 == Action::Recheck
                && a.1.starts_with("SMART NVMe minutes above its warning temperature 0 → 3")),
            "{:?}",
            out[4]
        );
        // A request that had the disk for the stall threshold returns it;
        // one just under does not.
        let slowest = |ms: f64, len: u64, mb_per_s: Option<f64>| BurnFacts {
            slowest: Some(Slowest {
                ms,
                len,
                mb_per_s,
                at: "a read at byte 4096 in pass 1".into(),
            }),
            ..disk(100.0, 100.0)
        };
        let big = 256 << 20;
        let out = verdicts(
            &[
                slowest(2001.0, 4096, Some(150.0)),
                slowest(1999.0, 4096, Some(150.0)),
                // A 256 MiB write at 120 MB/s needs 2237 ms: 2593 ms is
                // no stall, 4300 ms is one.
                slowest(2593.0, big, Some(120.0)),
                slowest(4300.0, big, Some(120.0)),
                // A disk whose other writes ran at 10 MB/s: one that took
                // 7.5 s (a stall at 50 MB/s) is its pace, and that pace too
                // slow to tell; 30 s is beyond even its pace.
                slowest(7500.0, big, Some(10.0)),
                slowest(30000.0, big, Some(10.0)),
            ],
            &th,
        );
        assert_eq!(
            out[0].action,
            Some((
                Action::Return,
                "a read at byte 4096 in pass 1 took 2001 ms (2000 ms or more is a stall for 4 KiB: a drive retrying a weak sector does this), return it".into(),
                vec![Finding::of(Code::Stalled)]
            ))
        );
        assert!(out[1].action.is_none() && out[2].action.is_none(), "{out:?}");
        let said = |i: usize| out[i].action.as_ref().unwrap().1.clone();
        assert!(
            said(3).contains("took 4300 ms (4237 ms or more is a stall for 256 MiB"),
            "{}",
            said(3)
        );
        assert!(out[4].action.is_none(), "{:?}", out[4]);
        let why = out[4].undecided.clone().unwrap_or_default();
        assert!(
            why.starts_with("a read at byte 4096 in pass 1 took 7500 ms (7369 ms or more is a stall for 256 MiB), but its other requests ran at 10.0 MB/s, under the 50 MB/s a healthy disk moves: a stall cannot be told"),
            "{why}"
        );
        assert!(said(5).contains("took 30000 ms (28844 ms or more is a stall"), "{}", said(5));
        // Timed too briefly to compare: no verdict from speed.
        let brief = |w| BurnFacts { write_s: 0.2, ..disk(w, 100.0) };
        let out = verdicts(&[brief(100.0), brief(100.0), brief(50.0)], &th);
        assert!(out.iter().all(|v| v.action.is_none() && v.write_pct.is_none()));
    }

    #[test]
    fn a_stall_is_waived_only_for_a_disk_called_smr_not_for_writes_that_stayed_slow() {
        use super::super::smr::{Collapse, Recovery, Shingled};
        let th = Thresholds::default();
        let collapse =
            Collapse { pass: 1, fast_mb_per_s: 180.0, slow_mb_per_s: 18.0, after_bytes: 25 << 30 };
        let burst = |mb_per_s| Some(Recovery { idle_s: 60.0, bytes: 1 << 30, mb_per_s });
        let stalled = |recovered: f64| BurnFacts {
            slowest: Some(Slowest {
                ms: 5000.0,
                len: 4 << 20,
                mb_per_s: Some(100.0),
                at: "a write at byte 4096 in pass 1".into(),
            }),
            spins: true,
            shingled: Some(Shingled {
                collapse,
                recovery: burst(recovered),
                stall_ms: Some(5000.0),
            }),
            ..disk(100.0, 100.0)
        };
        let out = verdicts(&[stalled(176.0), stalled(20.0)], &th);
        let (action, words, _) = out[0].action.clone().unwrap();
        assert_eq!(action, Action::Return);
        assert!(words.starts_with("behaves as drive-managed SMR"), "{words}");
        // Collapsed and stayed slow: the stall is still a stall (return),
        // not waived for a recheck.
        let (action, words, _) = out[1].action.clone().unwrap();
        assert_eq!(action, Action::Return);
        assert!(words.contains("took 5000 ms"), "{words}");
    }

    #[test]
    fn a_drive_late_or_not_back_from_its_spin_down_is_named() {
        use super::*;
        use crate::burnin::cycle::{Back, Cycle};
        let same = |cycle, s| Cycle { cycle, power: false, spin_up_s: Some(s), back: Back::Same };
        let disk = |cycles: Vec<Cycle>| BurnFacts { cycles, ..BurnFacts::default() };
        let th = Thresholds::default();
        // Three peers: the slowest spin-ups 7.2, 7.6 and 16 s.
        let peers = [
            disk(vec![same(1, 7.0), same(2, 7.2)]),
            disk(vec![same(1, 7.6), same(2, 7.5)]),
            disk(vec![same(1, 16.0), same(2, 15.0)]),
        ];
        let v = verdicts(&peers, &th);
        assert!(v[0].action.is_none() && v[1].action.is_none(), "{v:?}");
        let (a, words, _) = v[2].action.clone().unwrap();
        assert_eq!(a, Action::Recheck);
        assert!(
            words.starts_with("it took 16.0 s to answer after spin-down 1, its peers 7.4 s"),
            "{words}"
        );
        // Twice its peers' but not 2 s more: a fast spin-up's jitter.
        let quick = [disk(vec![same(1, 0.5)]), disk(vec![same(1, 0.6)]), disk(vec![same(1, 2.0)])];
        assert!(verdicts(&quick, &th).iter().all(|v| v.action.is_none()));
        // Alone: against its own first cycle.
        let alone = [disk(vec![same(1, 6.0), same(2, 9.0), same(3, 13.0)])];
        let (a, words, _) = verdicts(&alone, &th)[0].action.clone().unwrap();
        assert_eq!(a, Action::Recheck);
        assert!(
            words.starts_with("its spin-up slowed from 6.0 s (cycle 1) to 13.0 s (cycle 3)"),
            "{words}"
        );
        // Not back, or back as another drive; not spun down is no finding.
        let back = |b: Back| {
            verdicts(&[disk(vec![Cycle { cycle: 2, power: false, spin_up_s: None, back: b }])], &th)
        };
        let gone = back(Back::Gone("reading it fails (EIO)".into()));
        assert_eq!(gone[0].action.as_ref().map(|a| a.0), Some(Action::Return));
        let other = back(Back::Other("serial B, was A".into()));
        let (a, words, _) = other[0].action.clone().unwrap();
        assert_eq!(a, Action::CheckPath);
        assert!(words.starts_with(
            "after spin-down 2 another drive answered under its name (serial B, was A)"
        ));
        assert!(back(Back::NotSpun("hdparm -y failed".into()))[0].action.is_none());
    }
}

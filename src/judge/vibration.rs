//! The neighbour pass judged (`check --vibration`): how much of its random
//! reads each disk loses while its neighbours seek, against what the
//! other disks lose.
//!
//! A disk is named when it loses at least [`LOSS_MIN_PCT`] of its depth-1
//! random reads and at least [`LOSS_OVER_PCT`] points more than the
//! median of the others' losses (two others at least, each read long
//! enough both ways): its bay passes its neighbours' vibration on (a loose
//! tray, missing screws, a bay without damping), or the drive is sensitive
//! to it. What every disk loses alike (a shared controller, the host's
//! CPU) is in the median, not a finding.

use crate::finding::{Code, Finding};
use serde::{Deserialize, Serialize};

use super::advice::{Action, DiskAdvice};
use super::random::{self, Figures, RandomFinding, When};
use crate::measure::ShakeRead;
use crate::stats::median;

/// A disk losing at least this % of its random reads...
pub const LOSS_MIN_PCT: f64 = 20.0;
/// ...and this many points more than the others' median loss is named.
pub const LOSS_OVER_PCT: f64 = 20.0;

/// One disk's loss: its reads alone and beside its seeking neighbours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Loss {
    pub alone: Figures,
    pub loaded: Option<Figures>,
    /// The IOPS lost while they sought, % of its IOPS alone (null: not
    /// read long enough both ways, or a read failed).
    pub loss_pct: Option<f64>,
}

/// Each disk's loss, in the read's order.
pub fn losses(read: &ShakeRead) -> Vec<Loss> {
    read.disks
        .iter()
        .map(|d| {
            let alone = Figures::of(&d.alone);
            let loaded = d.loaded.as_ref().map(Figures::of);
            // However few reads a shaken disk managed beside its
            // neighbours, over its time they are its rate.
            let clean = |f: &Figures| f.failed == 0 && !f.lost();
            let fit = (alone.rated() && clean(&alone))
                && loaded.as_ref().is_some_and(|l| l.timed() && clean(l));
            let loss_pct = match (alone.iops, loaded.as_ref().and_then(|l| l.iops)) {
                (Some(a), Some(l)) if fit => Some(((1.0 - l / a) * 100.0).max(0.0)),
                _ => None,
            };
            Loss { alone, loaded, loss_pct }
        })
        .collect()
}

/// The disks whose reads in the neighbour pass hung, went away or could
/// not be opened: a finding each (as the random reads' own), the first
/// run it happened in.
pub fn unanswered(read: &ShakeRead, paths: &[String]) -> Vec<RandomFinding> {
    (read.disks.iter().zip(paths))
        .filter_map(|(d, path)| {
            let alone = random::unanswered(path, &Figures::of(&d.alone), When::Alone);
            alone.or_else(|| {
                random::unanswered(path, &Figures::of(d.loaded.as_ref()?), When::Beside)
            })
        })
        .collect()
}

/// A disk that loses much more than the others while its neighbours seek.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VibrationFinding {
    pub path: String,
    /// Its bay (`ENCLOSURE slot N`), where the kernel knows it.
    pub bay: Option<String>,
    /// The disks that sought beside it.
    pub neighbours: Vec<String>,
    /// What it lost, and the median of what the others lost (%).
    pub loss_pct: f64,
    pub others_loss_pct: f64,
    pub sentence: String,
}

/// The disks named; `paths`, `bays` and `losses` in the read's order.
pub fn judge(
    read: &ShakeRead,
    losses: &[Loss],
    (paths, bays): (&[String], &[Option<String>]),
) -> Vec<VibrationFinding> {
    let mut out = Vec::new();
    for (d, loss) in losses.iter().enumerate() {
        let Some(mine) = loss.loss_pct else { continue };
        let others: Vec<f64> = (losses.iter().enumerate())
            .filter(|(o, _)| *o != d)
            .filter_map(|(_, l)| l.loss_pct)
            .collect();
        let Some(typical) = median(&others).filter(|_| others.len() >= 2) else { continue };
        if mine < LOSS_MIN_PCT || mine - typical < LOSS_OVER_PCT {
            continue;
        }
        let neighbours: Vec<String> =
            read.disks[d].neighbours.iter().map(|&n| paths[n].clone()).collect();
        let sentence =
            sentence((&paths[d], bays[d].as_deref()), (mine, typical), &neighbours, loss);
        out.push(VibrationFinding {
            path: paths[d].clone(),
            bay: bays[d].clone(),
            neighbours,
            loss_pct: mine,
            others_loss_pct: typical,
            sentence,
        });
    }
    out
}

/// The finding in words: the bay, the loss against the others', the
/// figures, and what to do.
fn sentence(
    (path, bay): (&str, Option<&str>),
    (mine, typical): (f64, f64),
    neighbours: &[String],
    loss: &Loss,
) -> String {
    let iops =
        |f: Option<&Figures>| f.and_then(|f| f.iops).map_or("no".into(), |x| format!("{x:.0}"));
    let who = match bay {
        Some(b) => format!("bay {b} ({path})"),
        None => path.to_string(),
    };
    let beside = if neighbours.len() <= 2 {
        format!("its neighbours ({}) seek", neighbours.join(" and "))
    } else {
        format!("the {} other disks seek", neighbours.len())
    };
    format!(
        "{who} loses {mine:.0}% of its random reads while {beside} ({} a second alone, {} beside them); \
         the other disks lose {typical:.0}% (median): check the tray, its screws and the bay's damping, \
         then swap the drive with one in another bay and check again: if the loss stays with the bay, \
         the bay is the cause, if it follows the drive, the drive",
        iops(Some(&loss.alone)),
        iops(loss.loaded.as_ref()),
    )
}

/// Each finding said in its disk's advice (a line of its own, or added to
/// the one it has).
pub fn advise(findings: &[VibrationFinding], advice: &mut Vec<DiskAdvice>) {
    for f in findings {
        let shaken = Finding::of(Code::Vibration);
        match advice.iter_mut().find(|a| a.path == f.path) {
            Some(a) => {
                a.sentence = format!(
                    "{}; beside seeking neighbours: {}.",
                    a.sentence.trim_end_matches('.'),
                    f.sentence
                );
                a.findings.push(shaken);
            }
            None => advice.push(DiskAdvice {
                path: f.path.clone(),
                action: Action::CheckPath,
                sentence: format!("{}.", f.sentence),
                findings: vec![shaken],
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{RandomRun, RandomSpec, ShakeRun};
    use std::time::Duration;

    /// A depth-1 run of `iops` a second for 10 s at `ms` each.
    fn run(iops: f64, ms: f64) -> RandomRun {
        let mut r = RandomRun::new(1);
        let n = (iops * 10.0) as u64;
        r.latency_ns.record_n((ms * 1e6) as u64, n).unwrap();
        (r.reads, r.seconds) = (n, 10.0);
        r
    }

    fn read(pairs: &[(f64, f64)]) -> ShakeRead {
        let n = pairs.len();
        let disks = (pairs.iter().enumerate())
            .map(|(d, &(alone, loaded))| ShakeRun {
                neighbours: [d.wrapping_sub(1), d + 1].into_iter().filter(|&x| x < n).collect(),
                alone: run(alone, 1000.0 / alone),
                loaded: Some(run(loaded, 1000.0 / loaded)),
            })
            .collect();
        let spec = RandomSpec { block: 4096, depths: vec![1], length: Duration::from_secs(10) };
        ShakeRead { spec, disks }
    }

    fn judged(pairs: &[(f64, f64)]) -> Vec<VibrationFinding> {
        let r = read(pairs);
        let paths: Vec<String> = (0..pairs.len()).map(|i| format!("/dev/d{i}")).collect();
        let bays: Vec<Option<String>> =
            (0..pairs.len()).map(|i| Some(format!("enc0 slot {i}"))).collect();
        judge(&r, &losses(&r), (&paths, &bays))
    }

    #[test]
    fn the_bay_losing_most_beside_seeking_neighbours_is_named_with_its_slot() {
        // Four lose about 10 %; slot 2 loses 40 %.
        let f = judged(&[
            (200.0, 180.0),
            (200.0, 182.0),
            (200.0, 120.0),
            (200.0, 178.0),
            (200.0, 181.0),
        ]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!((f[0].path.as_str(), f[0].bay.as_deref()), ("/dev/d2", Some("enc0 slot 2")));
        assert!(
            (f[0].loss_pct - 40.0).abs() < 0.5 && (f[0].others_loss_pct - 9.5).abs() < 1.0,
            "{f:#?}"
        );
        let s = &f[0].sentence;
        assert!(s.starts_with("bay enc0 slot 2 (/dev/d2) loses 40%"), "{s}");
        assert!(
            s.contains("its neighbours (/dev/d1 and /dev/d3) seek")
                && s.contains("lose 10% (median)"),
            "{s}"
        );
        let mut advice = Vec::new();
        advise(&f, &mut advice);
        assert_eq!(advice[0].action, Action::CheckPath);
    }

    #[test]
    fn a_loss_every_disk_shares_or_a_small_one_names_no_one() {
        // Every disk loses about half: a shared limit, not a bay.
        assert!(judged(&[(200.0, 100.0), (200.0, 96.0), (200.0, 104.0), (200.0, 98.0)]).is_empty());
        // 18 points above the others: under the rule.
        assert!(
            judged(&[(200.0, 196.0), (200.0, 160.0), (200.0, 198.0), (200.0, 195.0)]).is_empty()
        );
        // Two disks: no two others to compare with.
        assert!(judged(&[(200.0, 198.0), (200.0, 60.0)]).is_empty());
    }

    #[test]
    fn a_disk_shaken_to_a_few_reads_has_its_loss_and_one_that_hung_is_named() {
        // 30 reads in 10 s beside its neighbours: too few for a peer's
        // rate, its own loss all the same.
        let mut r = read(&[(200.0, 190.0), (200.0, 3.0), (200.0, 190.0), (200.0, 188.0)]);
        let l = losses(&r);
        assert!(l[1].loss_pct.is_some_and(|x| x > 98.0), "{:?}", l[1]);
        let paths: Vec<String> = (0..4).map(|i| format!("/dev/d{i}")).collect();
        assert!(unanswered(&r, &paths).is_empty());
        r.disks[2].loaded.as_mut().unwrap().stopped = Some(crate::measure::Stopped::Hung);
        let u = unanswered(&r, &paths);
        assert_eq!(u.len(), 1);
        assert_eq!((u[0].path.as_str(), u[0].when), ("/dev/d2", When::Beside));
        assert!(u[0].sentence.contains("while its neighbours sought"), "{}", u[0].sentence);
        assert_eq!(losses(&r)[2].loss_pct, None, "a hung read is no loss");
    }

    #[test]
    fn a_disk_not_read_long_enough_both_ways_has_no_loss() {
        let mut r = read(&[(200.0, 190.0), (200.0, 60.0), (200.0, 190.0)]);
        r.disks[1].loaded = None;
        let l = losses(&r);
        assert_eq!(l[1].loss_pct, None);
        assert!(l[0].loss_pct.is_some_and(|x| (x - 5.0).abs() < 0.5));
    }
}

//! A disk against its model's rated speed, as well as against its peers:
//! so that a lone disk gets a verdict, and a batch slow as a whole (which
//! its own peers cannot see) is named.
//!
//! **The ratings.** The manufacturers' own figures for their models'
//! sustained transfer rate at the outer zone (`data/rated.csv`, each row
//! citing the manual it was read in), and the user's `--rated FILE` in the
//! same columns, whose rows win. A rating applies to a disk when its model
//! string has a word that starts with the rating's model (case ignored);
//! the longest such model wins.
//!
//! **The rule.** A disk's clean serial speed (its outer zone: the check
//! samples from the start) under [`RATED_PCT`] % of its model's rating is
//! below its rating: to act on (its link, its slot, then the disk). The
//! margin is wide: a rating is the best a drive does, read straight.
//! Where every disk of a peer group (two or more) is below its rating,
//! the batch is named, with its link's ceiling beside it.
//!
//! It must not read a file or a device: ratings and speeds come in.

use crate::finding::{Code, Finding};
use serde::{Deserialize, Serialize};

use super::advice::{Action, DiskAdvice};
use crate::stats::median;

/// Under this share of its rating a disk is below it.
pub const RATED_PCT: f64 = 80.0;

/// The ratings built in: `data/rated.csv`.
const BUILT_IN: &str = include_str!("../../data/rated.csv");

/// A model's rated sustained transfer rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub model: String,
    pub mb_per_s: f64,
    /// Where the figure comes from.
    pub source: String,
}

/// No drive reads faster than this (MB/s): a PCIe 6.0 x4 link carries
/// about 30 GB/s; a rating above it is a fault in the file.
pub const MOST_MB_PER_S: f64 = 30_000.0;

/// The ratings in CSV `text` (`model,mb_per_s,source`, `#` comments), or
/// why not, naming the row.
pub fn parse(text: &str) -> Result<Vec<Rating>, String> {
    let mut rows = csv::ReaderBuilder::new().comment(Some(b'#')).from_reader(text.as_bytes());
    let mut out = Vec::new();
    for (i, row) in rows.deserialize::<Rating>().enumerate() {
        let mut r = row.map_err(|e| format!("row {}: {e}", i + 1))?;
        // A ratings file is text from elsewhere: printed in verdicts.
        (r.model, r.source) =
            (crate::escape::terminal(&r.model), crate::escape::terminal(&r.source));
        if r.model.trim().is_empty() || !(r.mb_per_s > 0.0 && r.mb_per_s.is_finite()) {
            return Err(format!(
                "row {}: a model and a speed above 0 MB/s are needed (\"{}\", {})",
                i + 1,
                r.model,
                r.mb_per_s
            ));
        }
        if r.mb_per_s > MOST_MB_PER_S {
            return Err(format!(
                "row {}: {} is rated at {} MB/s, more than any drive reads ({MOST_MB_PER_S} MB/s, 30 GB/s): a fault in the file",
                i + 1,
                r.model,
                // 1e308 as that, not as 309 digits.
                if r.mb_per_s < 1e9 { r.mb_per_s.to_string() } else { format!("{:e}", r.mb_per_s) }
            ));
        }
        out.push(r);
    }
    Ok(out)
}

/// The built-in ratings.
pub fn built_in() -> Vec<Rating> {
    parse(BUILT_IN).expect("data/rated.csv parses (a unit test holds it)")
}

/// The rating for a drive whose model string is `model`: the user's
/// first, then the built-in ones; the longest matching model wins.
pub fn lookup<'a>(ratings: &'a [Rating], model: &str) -> Option<&'a Rating> {
    let words: Vec<String> = model.split_whitespace().map(str::to_uppercase).collect();
    let fits = |r: &&Rating| {
        let m = r.model.trim().to_uppercase();
        words.iter().any(|w| w.starts_with(&m))
    };
    // Stable: among equally long models the first (the user's) wins.
    ratings.iter().filter(fits).rev().max_by_key(|r| r.model.trim().len())
}

/// A disk judged against its model's rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgainstRating {
    /// The disk's path, its model as it reported it, and the rating.
    pub path: String,
    pub model: String,
    pub rated_mb_per_s: f64,
    pub source: String,
    /// Its clean serial speed, and that as % of the rating.
    pub mb_per_s: f64,
    pub pct_of_rated: f64,
    /// Under [`RATED_PCT`] % of it.
    pub below: bool,
}

/// Each disk with a rating and a clean serial speed, judged against it:
/// `disks` as (path, model, clean serial MB/s).
pub fn judge(
    disks: &[(&str, Option<&str>, Option<f64>)],
    ratings: &[Rating],
) -> Vec<AgainstRating> {
    (disks.iter())
        .filter_map(|(path, model, speed)| {
            let (model, speed) = ((*model)?, (*speed)?);
            let r = lookup(ratings, model)?;
            let pct = 100.0 * speed / r.mb_per_s;
            Some(AgainstRating {
                path: path.to_string(),
                model: model.to_string(),
                rated_mb_per_s: r.mb_per_s,
                source: r.source.clone(),
                mb_per_s: speed,
                pct_of_rated: pct,
                below: pct < RATED_PCT,
            })
        })
        .collect()
}

/// Each disk below its rating is to act on: where it already is (slower
/// than its peers too), its sentence says so as well.
pub fn advise(rated: &[AgainstRating], advice: &mut Vec<DiskAdvice>) {
    for r in rated.iter().filter(|r| r.below) {
        let said = format!(
            "reads {:.0} MB/s at its outer zone, {:.0}% of the {:.0} MB/s its model ({}) is rated ({}): check its \
             link and slot, then return it if it stays under",
            r.mb_per_s, r.pct_of_rated, r.rated_mb_per_s, r.model, r.source
        );
        let below = Finding::of(Code::BelowRating);
        match advice.iter_mut().find(|a| a.path == r.path) {
            Some(a) => {
                a.sentence = format!("{}; it also {said}", a.sentence.trim_end_matches('.'));
                a.findings.push(below);
            }
            None => advice.push(DiskAdvice {
                path: r.path.clone(),
                action: Action::Recheck,
                sentence: format!("{}: {said}.", r.path),
                findings: vec![below],
            }),
        }
    }
}

/// A peer group (two or more disks of one model) all below their rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowBatch {
    pub model: String,
    pub disks: Vec<String>,
    /// The lowest and highest speed among them, and the median as % of
    /// the rating.
    pub low_mb_per_s: f64,
    pub high_mb_per_s: f64,
    pub pct_of_rated: f64,
    pub rated_mb_per_s: f64,
    /// The slowest link on the way to the first of them, in words, and
    /// what it carries (MB/s); null where not known.
    pub link_ceiling: Option<String>,
    pub link_ceiling_mb_per_s: Option<f64>,
    /// That link carries less than the rating: it, not the disks, holds
    /// them back (null: not known).
    pub link_limits: Option<bool>,
}

/// The peer groups (`groups`: each rated disk's peer group, by index into
/// `rated`) of two or more disks all below their rating, each with the
/// ceiling of the first one's slowest link (`ceiling`: by path, in words
/// and MB/s).
pub fn batches(
    rated: &[AgainstRating],
    groups: &[usize],
    ceiling: &dyn Fn(&str) -> Option<(String, f64)>,
) -> Vec<SlowBatch> {
    let mut seen: Vec<usize> = groups.to_vec();
    seen.sort_unstable();
    seen.dedup();
    seen.into_iter()
        .filter_map(|g| {
            let of: Vec<&AgainstRating> =
                rated.iter().zip(groups).filter(|(_, x)| **x == g).map(|(r, _)| r).collect();
            if of.len() < 2 || !of.iter().all(|r| r.below) {
                return None;
            }
            let speeds: Vec<f64> = of.iter().map(|r| r.mb_per_s).collect();
            let link = ceiling(&of[0].path);
            let pcts: Vec<f64> = of.iter().map(|r| r.pct_of_rated).collect();
            Some(SlowBatch {
                model: of[0].model.clone(),
                disks: of.iter().map(|r| r.path.clone()).collect(),
                low_mb_per_s: speeds.iter().copied().fold(f64::INFINITY, f64::min),
                high_mb_per_s: speeds.iter().copied().fold(0.0, f64::max),
                pct_of_rated: median(&pcts)?,
                rated_mb_per_s: of[0].rated_mb_per_s,
                link_limits: link.as_ref().map(|(_, most)| *most < of[0].rated_mb_per_s),
                link_ceiling_mb_per_s: link.as_ref().map(|(_, most)| *most),
                link_ceiling: link.map(|(words, _)| words),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_ratings_parse_and_each_cites_its_manual() {
        let r = built_in();
        assert!(r.len() >= 20, "{}", r.len());
        assert!(r.iter().all(|x| x.source.contains("http") && x.source.contains("anual")
            || x.source.contains("specification")));
        assert_eq!(lookup(&r, "SEAGATE ST3300657SS").unwrap().mb_per_s, 204.0);
        assert_eq!(lookup(&r, "st32000644ns").unwrap().mb_per_s, 140.0);
        assert!(lookup(&r, "WDC WD140EDFZ-11A0VA0").is_none());
    }

    #[test]
    fn the_users_ratings_win_and_bad_rows_are_named() {
        let mine =
            parse("model,mb_per_s,source\nWD140EDFZ,220,our lab\nST32000644NS,150,remeasured\n")
                .unwrap();
        let all: Vec<Rating> = mine.iter().cloned().chain(built_in()).collect();
        assert_eq!(lookup(&all, "WDC WD140EDFZ-11A0VA0").unwrap().source, "our lab");
        assert_eq!(lookup(&all, "ST32000644NS").unwrap().mb_per_s, 150.0);
        assert!(parse("model,mb_per_s,source\nX,fast,me\n").unwrap_err().starts_with("row 1:"));
        assert!(parse("model,mb_per_s,source\nX,0,me\n").unwrap_err().contains("above 0 MB/s"));
        let evil = parse("model,mb_per_s,source\nX,100,\"lab\x1b]0;x\x07\"\n").unwrap();
        assert!(!evil[0].source.contains('\x1b'), "{:?}", evil[0].source);
    }

    #[test]
    fn a_lone_disk_and_a_slow_batch_are_judged_by_their_rating() {
        let ratings = parse("model,mb_per_s,source\nST20000NM007D,285,datasheet\n").unwrap();
        let lone = judge(&[("/dev/sda", Some("ST20000NM007D-3DJ103"), Some(190.0))], &ratings);
        assert_eq!(lone.len(), 1);
        assert!(lone[0].below && (lone[0].pct_of_rated - 66.7).abs() < 0.1, "{lone:?}");
        let mut advice = Vec::new();
        advise(&lone, &mut advice);
        assert_eq!(advice[0].action, Action::Recheck);
        assert_eq!(
            advice[0].sentence,
            "/dev/sda: reads 190 MB/s at its outer zone, 67% of the 285 MB/s its model (ST20000NM007D-3DJ103) is \
             rated (datasheet): check its link and slot, then return it if it stays under."
        );
        // At 240 of 285 (84 %): not below. No model or no speed: not judged.
        let fine = judge(&[("/dev/sda", Some("ST20000NM007D"), Some(240.0))], &ratings);
        assert!(!fine[0].below);
        assert!(
            judge(
                &[("/dev/sdb", None, Some(100.0)), ("/dev/sdc", Some("ST20000NM007D"), None)],
                &ratings
            )
            .is_empty()
        );
        // Three of one model at 120-125: the batch; one fine: no batch.
        let three: Vec<(&str, Option<&str>, Option<f64>)> = ["/dev/sda", "/dev/sdb", "/dev/sdc"]
            .iter()
            .zip([120.0, 125.0, 122.0])
            .map(|(p, v)| (*p, Some("ST20000NM007D"), Some(v)))
            .collect();
        let rated = judge(&three, &ratings);
        let b = batches(&rated, &[0, 0, 0], &|_| {
            Some(("its SATA link (link1) at 1.5 Gbps: at most 150 MB/s".into(), 150.0))
        });
        assert_eq!(b[0].link_limits, Some(true));
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].low_mb_per_s, b[0].high_mb_per_s, b[0].disks.len()), (120.0, 125.0, 3));
        let mut mixed = rated.clone();
        mixed[2] = judge(&[("/dev/sdc", Some("ST20000NM007D"), Some(280.0))], &ratings).remove(0);
        assert!(batches(&mixed, &[0, 0, 0], &|_| None).is_empty());
    }
}

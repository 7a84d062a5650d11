//! The parallel pass's groups and the disks slower than their rating, each
//! in a sentence, as the report's message and its run document say them.
//!
//! It must not judge: what each group is, and why, is `judge::groups`'s.

use crate::judge::groups::GroupPath;
use crate::judge::rated::SlowBatch;
use crate::measure::PassKind;

use super::{GroupRow, Pass};

/// What the parallel pass's groups (`judge::groups`) are, each in a
/// sentence: named where reading them again confirmed it, else what the
/// first reading saw and why nothing is named.
pub(super) fn group_sentences(passes: &[Pass]) -> Option<String> {
    let p = passes.iter().find(|p| p.kind == PassKind::Parallel)?;
    let each: Vec<String> = p.groups.iter().map(group_sentence).collect();
    (!each.is_empty()).then(|| each.join(" "))
}

pub(super) fn group_sentence(g: &GroupRow) -> String {
    let [seen, again, alone, behind] = group_figures(g);
    match g.path {
        GroupPath::Own => format!(
            "SHARED PATH: {seen}; {again}; {alone}: a path they share and the others do not limits them{behind}, not the \
             disks: check the path they share (cable, expander port, HBA port)."
        ),
        GroupPath::Shared => format!(
            "SHARED LIMIT, UNEVENLY SHARED: {seen}; {again}; {alone}: they recover without the others, so a limit they \
             share with the other disks (the HBA, its PCIe link, an expander upstream) leaves them less than their \
             share{behind}; the disks are not the cause."
        ),
        GroupPath::Either => format!(
            "SHARED PATH OR LIMIT: {seen}; {again}; {alone}, which does not tell whether their own path limits them or a \
             limit they share with the others{behind}; the disks are not the cause: check the path they share (cable, \
             expander port, HBA port) and re-run."
        ),
        GroupPath::NotReproduced => format!(
            "UNEVEN ONCE: {seen}, but {again}: a passing load, not a path of theirs; no path is named and no disk blamed."
        ),
        GroupPath::NotConfirmed => format!(
            "NOT CONFIRMED: {seen}; reading them again to confirm it was cut short or did not decide, so no path is \
             named and no disk blamed{behind}."
        ),
    }
}

/// A group's figures in words: what the parallel pass saw, what reading
/// it again beside all and alone found, and what it sits behind.
fn group_figures(g: &GroupRow) -> [String; 4] {
    let seen = format!(
        "{} lost speed together in parallel: they kept {:.0}% of their serial speed while the other {} disk(s) kept {:.0}%",
        join_and(&g.disks),
        g.kept_pct_of_serial,
        g.others,
        g.others_kept_pct_of_serial
    );
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}%"));
    let range = |lo: Option<f64>, hi: Option<f64>| match (lo, hi) {
        (Some(lo), Some(hi)) => format!(" ({lo:.0}-{hi:.0}% over {} rounds)", g.rounds),
        _ => String::new(),
    };
    let again = format!(
        "read again beside all they kept {} of what the others kept{}",
        pct(g.together_pct_of_others),
        range(g.together_low, g.together_high)
    );
    let alone = format!(
        "read without the others they kept {} of their serial speed{}",
        pct(g.alone_pct_of_serial),
        range(g.alone_low, g.alone_high)
    );
    let behind = g
        .behind
        .as_deref()
        .map(|b| format!(" (they sit behind {b}; the others do not)"))
        .unwrap_or_default();
    [seen, again, alone, behind]
}

/// "BATCH BELOW ITS RATING: the 3 X disks read 120-125 MB/s ...".
pub(super) fn batch_sentence(x: &SlowBatch) -> String {
    let link = match (&x.link_ceiling, x.link_limits) {
        (Some(words), Some(true)) => {
            format!("; {words}, under the rating: the link holds them back, not the disks")
        }
        (Some(words), _) => format!("; {words}, above the rating: not what holds them back"),
        _ => "; their link's ceiling is not known".into(),
    };
    let read = if x.high_mb_per_s - x.low_mb_per_s < 0.5 {
        format!("{:.0}", x.low_mb_per_s)
    } else {
        format!("{:.0}-{:.0}", x.low_mb_per_s, x.high_mb_per_s)
    };
    format!(
        "BATCH BELOW ITS RATING: the {} {} disk(s) read {read} MB/s at their outer zone, {:.0}% of the {:.0} MB/s \
         their model is rated (alike, their peers cannot show it){link}.",
        x.disks.len(),
        x.model,
        x.pct_of_rated,
        x.rated_mb_per_s
    )
}

/// "a, b and c".
pub(super) fn join_and(v: &[String]) -> String {
    match v.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => v.join(""),
    }
}

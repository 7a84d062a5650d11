//! Acknowledged findings (`arrayburn report --ack FILE`): a finding an
//! admin has looked at and accepted stays listed but does not flag the
//! fleet, until its value moves. The rule is one: an entry acknowledges a
//! finding when it names the finding's disk, its kind and its value,
//! exactly. A run's finding on a disk is valued by its codes and what they
//! count (`crate::finding`: `never_written=8192; slower_than_peers`), so
//! more bad bytes, another SMART count or another fault is another value,
//! and flags again, while a sentence reworded by a later arrayburn is the
//! same finding. A result written before codes is valued by its own words
//! (each line's value class), and an entry made that way still
//! acknowledges the same finding given by codes. A disk slow for its
//! model or slower than before is known by that, not by the figure of
//! each run (which moves every time).
//!
//! It must not read or write the file (`fleet::ack` does) and must not lay
//! out.

use serde::{Deserialize, Serialize};

/// One acknowledged finding, as the file keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ack {
    /// The disk: its fleet key (WWN, else `serial|model|size`, else
    /// `host:path`); a link's: `host:HOST`.
    pub disk: String,
    /// What kind of finding: `"run"` (a run's own finding on the disk),
    /// `"slow"` (slow for its model across the fleet), `"worse"` (worse
    /// than in its earlier runs) or `"link"` (a link below its maximum).
    pub finding: String,
    /// The finding's value when it was acknowledged.
    pub value: String,
    /// Who acknowledged it, why, and when (RFC 3339).
    pub who: String,
    pub why: String,
    pub when: String,
}

/// The file of acknowledged findings (`--ack FILE`), as it is laid out.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AckFile {
    pub acknowledged: Vec<Ack>,
}

/// A finding that flags the fleet, as an entry names it: where it is
/// (host and path, for the reader), its disk's key, its serial and WWN
/// (what an admin may name it by), its kind and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub host: String,
    pub path: String,
    pub disk: String,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub finding: &'static str,
    pub value: String,
    /// A run's finding given by its codes: its value as an entry made
    /// before codes named it (its sentence's value class), which still
    /// acknowledges it.
    pub worded: Option<String>,
}

impl Flag {
    /// Whether `ack` acknowledges this finding.
    pub fn acknowledged_by(&self, ack: &Ack) -> bool {
        let value = ack.value == self.value || self.worded.as_ref() == Some(&ack.value);
        ack.disk == self.disk && ack.finding == self.finding && value
    }

    /// Whether `name` (as an admin gives it: the key, serial, WWN,
    /// `host:path` or the path) names this finding's disk.
    pub fn named(&self, name: &str) -> bool {
        let on = format!("{}:{}", self.host, self.path);
        [Some(&self.disk), self.serial.as_ref(), self.wwn.as_ref(), Some(&on), Some(&self.path)]
            .into_iter()
            .flatten()
            .any(|n| n == name)
    }
}

/// The value of a run's finding on disk `path`: the run's lines naming it,
/// without the path (a path differs from host to host), each as its value
/// class ([`class_of`]); all its lines where none names it.
pub fn run_value(what: &[String], path: &str) -> String {
    let prefix = format!("{path}: ");
    let own: Vec<&str> = what.iter().filter_map(|w| w.strip_prefix(&prefix)).collect();
    let lines: Vec<&str> =
        if own.is_empty() { what.iter().map(String::as_str).collect() } else { own };
    lines.into_iter().map(class_of).collect::<Vec<_>>().join("; ")
}

/// Units whose figure moves from one measurement to the next.
const MOVING: [&str; 9] = ["MB/s", "GB/s", "ms", "s", "min", "h", "°C", "turns", "slices"];

/// A finding's line as its value class: the figures every re-measurement
/// moves (a percentage, a factor, a speed, a time, a temperature, how many
/// turns) as `#`, so that 65 % where 64 % was acknowledged is the same
/// finding; counts and places (bytes, ranges, reads, SMART counts, LBAs)
/// kept, so that more bad bytes or another count is another value, and
/// another kind of fault other words.
pub fn class_of(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let numeric = |t: &str| {
        t.starts_with(|c: char| c.is_ascii_digit())
            && t.chars().all(|c| c.is_ascii_digit() || ".-".contains(c))
    };
    let unit = |w: &str| MOVING.contains(&w.trim_end_matches([',', ';', ')', '.', ':']));
    let out: Vec<String> = (words.iter().enumerate())
        .map(|(i, w)| {
            let core = w.trim_start_matches('(').trim_end_matches([',', ';', ')', '.', ':']);
            let bare = core.strip_suffix('%').or_else(|| core.strip_suffix('x'));
            let figure = bare.is_some_and(numeric)
                || (numeric(core) && words.get(i + 1).is_some_and(|n| unit(n)));
            if figure && !core.is_empty() { w.replacen(core, "#", 1) } else { (*w).to_string() }
        })
        .collect();
    out.join(" ")
}

/// The value of a disk worse than before: each way it is worse, a speed
/// by being slower (its figures move with every run), the rest in their
/// words (bad bytes, SMART counts: a new count is a new value).
pub fn worse_value(what: &[String]) -> String {
    let kind = |w: &String| {
        if w.starts_with("reads at ") {
            "reads slower than in its earlier runs".into()
        } else {
            w.clone()
        }
    };
    what.iter().map(kind).collect::<Vec<String>>().join("; ")
}

/// A slow disk's value: slow for its model (not by how much).
pub const SLOW: &str = "slow for its model across the fleet";

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(value: &str) -> Flag {
        Flag {
            host: "stor01".into(),
            path: "/dev/sdb".into(),
            disk: "ZL2ABC|ST20000|20000588955648".into(),
            serial: Some("ZL2ABC".into()),
            wwn: None,
            finding: "run",
            value: value.into(),
            worded: None,
        }
    }

    fn ack(value: &str) -> Ack {
        Ack {
            disk: "ZL2ABC|ST20000|20000588955648".into(),
            finding: "run".into(),
            value: value.into(),
            who: "ana".into(),
            why: "known; replaced next quarter".into(),
            when: "2026-12-05T10:00:00Z".into(),
        }
    }

    #[test]
    fn an_entry_acknowledges_its_disk_kind_and_value_and_nothing_else() {
        let f = flag("8192 bytes zeros (never written), return it");
        assert!(f.acknowledged_by(&ack("8192 bytes zeros (never written), return it")));
        // The value moved: flagged again.
        assert!(!f.acknowledged_by(&ack("16384 bytes zeros (never written), return it")));
        // Another kind or disk.
        assert!(!f.acknowledged_by(&Ack { finding: "worse".into(), ..ack(&f.value) }));
        assert!(!f.acknowledged_by(&Ack { disk: "ZL2XYZ|ST20000|1".into(), ..ack(&f.value) }));
        for name in ["ZL2ABC", "stor01:/dev/sdb", "/dev/sdb", "ZL2ABC|ST20000|20000588955648"] {
            assert!(f.named(name), "{name}");
        }
        assert!(!f.named("ZL2AB") && !f.named("stor02:/dev/sdb"));
    }

    #[test]
    fn a_finding_by_its_codes_is_acknowledged_by_them_or_by_its_older_words() {
        use crate::finding::{Code, Finding};
        let codes = |n: u64| Finding::value(&[Finding::counting(Code::NeverWritten, n)]);
        let worded = "8192 bytes zeros (never written), return it";
        let f = Flag { value: codes(8192), worded: Some(worded.into()), ..flag("") };
        assert!(f.acknowledged_by(&ack(&codes(8192))));
        assert!(f.acknowledged_by(&ack(worded)), "an entry made before codes");
        assert!(!f.acknowledged_by(&ack(&codes(16384))), "more bad bytes: flagged again");
        // A sentence reworded is the same value; its code is.
        let reworded = Flag { worded: Some("8192 bytes never written: return it".into()), ..f };
        assert!(reworded.acknowledged_by(&ack(&codes(8192))));
    }

    #[test]
    fn a_value_is_the_disk_s_own_words_and_a_speed_by_its_kind() {
        let what = ["/dev/sdb: 8 bytes zeros, return it".to_string(), "/dev/sdc: slow".into()];
        // A re-check at 65 % where 64 % was acknowledged: the same value;
        // more bad bytes, another count or another fault: another.
        let slow = |p: &str| {
            vec![format!(
                "/dev/sdb: {p}% of its peers' speed, 1.9x its peers' tail, a read stalled 2400 ms, move it to another slot and check again; if it stays slow, return it"
            )]
        };
        assert_eq!(run_value(&slow("64"), "/dev/sdb"), run_value(&slow("65"), "/dev/sdb"));
        let bad = |n: &str| {
            vec![format!(
                "/dev/sdb: {n} unreadable range(s) (first at byte 8388608, 8.39 MB), return it"
            )]
        };
        assert_ne!(run_value(&bad("2"), "/dev/sdb"), run_value(&bad("3"), "/dev/sdb"));
        let smart = |n: &str| {
            vec![format!("/dev/sdb: SMART rose: Reallocated_Sector_Ct 0 → {n}, return it")]
        };
        assert_ne!(run_value(&smart("8"), "/dev/sdb"), run_value(&smart("9"), "/dev/sdb"));
        assert_ne!(run_value(&slow("64"), "/dev/sdb"), run_value(&bad("2"), "/dev/sdb"));
        assert_eq!(
            class_of(
                "write speed 64% of its peers' with every disk at once, 64% (60-70% over 4 turns) of /dev/sdz's"
            ),
            "write speed # of its peers' with every disk at once, # (# over # turns) of /dev/sdz's"
        );
        assert_eq!(run_value(&what, "/dev/sdb"), "8 bytes zeros, return it");
        assert_eq!(run_value(&what, "/dev/sdd"), what.join("; "));
        let worse = [
            "reads at 90 MB/s, 60% of its earlier 150 MB/s (3 run(s))".to_string(),
            "SMART rose during its burn-in: Reallocated_Sector_Ct 0 → 8".into(),
        ];
        let later = ["reads at 85 MB/s, 57% of its earlier 150 MB/s (4 run(s))".to_string()];
        assert_eq!(
            worse_value(&worse),
            "reads slower than in its earlier runs; SMART rose during its burn-in: Reallocated_Sector_Ct 0 → 8"
        );
        assert_eq!(worse_value(&later), "reads slower than in its earlier runs");
    }
}

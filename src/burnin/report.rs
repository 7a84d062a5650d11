//! The burn-in's result as one value (JSON) and its text: a table per
//! disk (identity, bytes, write and verify MB/s, against its peers, bad
//! bytes by class), the ranges found, and one sentence per disk to act on.
//! It decides nothing: the actions are `judge::burnin`'s.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::smart::{SelfTest, SmartChange, TestKind};
use super::worker::{Class, DiskBurn, Phase};
use crate::device::Identity;
use crate::export::text::{show, table};
use crate::judge::advice::DiskAdvice;
use crate::units::{human_bytes, human_bytes_binary, human_duration, mb_per_s};

/// One disk's burn-in in the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnDisk {
    /// The path as given.
    pub path: String,
    /// Identity from sysfs (flattened, as in the check's report).
    #[serde(flatten)]
    pub identity: Identity,
    /// The bytes burned: `start_byte` up to `end_byte`.
    pub start_byte: u64,
    pub end_byte: u64,
    /// What was measured and found.
    #[serde(flatten)]
    pub burn: DiskBurn,
    /// Write and verify MB/s (decimal) over all passes; null when nothing
    /// was timed (a soak writes nothing; a run stopped early may not have
    /// verified).
    pub write_mb_per_s: Option<f64>,
    pub verify_mb_per_s: Option<f64>,
    /// Each whole pass's read-back MB/s, pass 1 first (a pass cut short
    /// is left out).
    pub verify_pass_mb_per_s: Vec<f64>,
    /// Those as % of the peer group's median; null without peers.
    pub write_pct_of_peers: Option<f64>,
    pub verify_pct_of_peers: Option<f64>,
    /// SMART before and after and the counters that rose; null when not
    /// read (`smart_note` says why).
    pub smart: Option<SmartChange>,
    pub smart_note: Option<String>,
    /// The drive's self-test before the run (`--smart-test`): which
    /// (`short`, `long`) and its result (`{"state": "passed"}`, `failed`
    /// with the drive's words, `unknown` with why); null when not run.
    pub self_test_kind: Option<TestKind>,
    pub self_test: Option<SelfTest>,
    /// The hottest the disk was during the run (SMART before, every
    /// `--smart-every` seconds, after), °C.
    pub hottest_c: Option<i64>,
    /// The limit it was judged against: `warning_c`, `critical_c` (°C) and
    /// `source` (the drive's own, or the default for its kind).
    #[serde(default)]
    pub temperature_limit: Option<super::smart::TempLimits>,
    /// `"healthy"`, `"return"`, `"recheck"`, `"check_path"`, or
    /// `"interrupted"` (stopped before it was burned whole, nothing found).
    pub verdict: String,
}

/// The whole burn-in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnReport {
    /// `"burnin"`.
    pub kind: String,
    pub tool_version: String,
    pub host: String,
    /// The machine's id and kernel release.
    #[serde(flatten, default)]
    pub machine: crate::device::Machine,
    /// RFC 3339.
    pub started_at: String,
    pub finished_at: String,
    /// A signal stopped it: the numbers cover what was done.
    pub interrupted: bool,
    pub command_line: Vec<String>,
    /// The run id every block carries (hex).
    pub run_id: String,
    pub passes: u16,
    /// A read-only soak (nothing written; `written_bytes` 0).
    pub read_only: bool,
    /// What was written: `"blocks"`, `"badblocks"`, or `"read-only"`.
    pub pattern: String,
    /// Bytes per write and read.
    pub io_bytes: u64,
    /// How writes and reads were issued: `"io_uring"` with `queue_depth`
    /// in flight per disk, or `"psync"` (one at a time).
    pub engine: String,
    pub queue_depth: usize,
    pub disks: Vec<BurnDisk>,
    /// The verdict, where the check's report keeps it.
    pub summary: BurnSummary,
}

/// The burn-in's verdict over all disks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BurnSummary {
    /// `"healthy"`, `"flagged"` (a disk to act on) or `"interrupted"`.
    pub verdict: String,
    /// One entry per disk to act on (as the check's).
    pub disk_verdicts: Vec<DiskAdvice>,
    /// Links below their maximum (as the check's).
    #[serde(default)]
    pub links: Vec<crate::report::LinkFinding>,
    /// The verdict in one sentence.
    pub message: String,
}

/// A fault class in words, as the findings and sentences say it.
pub fn class_words(c: Class) -> &'static str {
    match c {
        Class::WriteError => "failed to write",
        Class::FlushError => "not flushed (the cache flush failed)",
        Class::ReadError => "failed to read back",
        Class::Corrupted => "corrupted",
        Class::Misdirected => "misdirected",
        Class::OtherDisk => "another disk's",
        Class::Stale => "lost (stale on read-back)",
        Class::Zeros => "zeros (never written)",
        Class::Foreign => "foreign (not what was written)",
    }
}

/// The bytes found bad, by class, in short words (`-` for none).
fn errors(b: &DiskBurn) -> String {
    let short = |c: Class| match c {
        Class::WriteError => "write err",
        Class::FlushError => "flush err",
        Class::ReadError => "read err",
        Class::Corrupted => "corrupted",
        Class::Misdirected => "misdirected",
        Class::OtherDisk => "other disk",
        Class::Stale => "lost",
        Class::Zeros => "zeros",
        Class::Foreign => "foreign",
    };
    let each: Vec<String> = b
        .bad_bytes
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{} {}", short(*c), human_bytes_binary(*n)))
        .collect();
    if each.is_empty() {
        "-".into()
    } else {
        each.join(", ")
    }
}

/// The engine in words for the header.
fn engine_words(r: &BurnReport) -> String {
    match r.engine.as_str() {
        "io_uring" => format!("io_uring, {} in flight per disk", r.queue_depth),
        other => format!("{other}, one at a time"),
    }
}

/// MB/s of `bytes` over `secs`; None when nothing was moved or timed
/// (never a 0 that reads as "measured, and slow").
pub fn speed(bytes: u64, secs: f64) -> Option<f64> {
    (bytes > 0 && secs > 0.0).then(|| mb_per_s(bytes, secs))
}

/// Where a disk's burn-in stopped short of its end, in words ("pass 1 of
/// 2, write 70 %"); None when it finished (or for a soak).
pub fn stopped_at(d: &BurnDisk, passes: u16) -> Option<String> {
    let at = d.burn.place?;
    let len = (d.end_byte - d.start_byte).max(1);
    let phase = match at.phase {
        Phase::Done => return None,
        Phase::Write => "write",
        Phase::Verify => "verify",
    };
    Some(format!(
        "stopped in pass {} of {passes}, {phase} {:.0} % (bytes {}..{} of {}..{} done)",
        at.pass,
        100.0 * (at.done_until - d.start_byte) as f64 / len as f64,
        d.start_byte,
        at.done_until,
        d.start_byte,
        d.end_byte
    ))
}

/// The text report.
pub fn render(r: &BurnReport) -> String {
    let mut out = String::new();
    if r.read_only {
        let _ = writeln!(
            out,
            "arrayburn {} read-only soak (O_DIRECT, {} reads, {}, nothing written), {} pass(es), on {}, started {}\n",
            r.tool_version,
            human_bytes(r.io_bytes),
            engine_words(r),
            r.passes,
            r.host,
            r.started_at
        );
    } else {
        let _ = writeln!(
            out,
            "arrayburn {} burn-in (destructive write-verify, {} pattern, O_DIRECT, {} writes, {}), run {}, {} pass(es), on {}, started {}\n",
            r.tool_version,
            r.pattern,
            human_bytes(r.io_bytes),
            engine_words(r),
            r.run_id,
            r.passes,
            r.host,
            r.started_at
        );
    }
    let mut t = table(&[
        "Disk",
        "Model",
        "Serial",
        "Range",
        "Written",
        if r.read_only { "Read" } else { "Verified" },
        "Write MB/s",
        "%ofAvg",
        if r.read_only {
            "Read MB/s"
        } else {
            "Verify MB/s"
        },
        "%ofAvg",
        "Time",
        "Errors",
        "Verdict",
    ]);
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.0}"));
    let bytes = |b: u64| if b == 0 { "-".into() } else { human_bytes(b) };
    for d in &r.disks {
        t.add_row(vec![
            d.path.clone(),
            d.identity.model.clone().unwrap_or_else(|| "-".into()),
            d.identity.serial.clone().unwrap_or_else(|| "-".into()),
            human_bytes(d.end_byte - d.start_byte),
            bytes(d.burn.written_bytes),
            bytes(d.burn.verified_bytes),
            pct(d.write_mb_per_s),
            pct(d.write_pct_of_peers),
            pct(d.verify_mb_per_s),
            pct(d.verify_pct_of_peers),
            human_duration(std::time::Duration::from_secs_f64(
                d.burn.write_s + d.burn.verify_s,
            )),
            errors(&d.burn),
            d.verdict.clone(),
        ]);
    }
    let _ = writeln!(out, "{}", show(&t));
    for d in &r.disks {
        if let Some(words) = stopped_at(d, r.passes) {
            let _ = writeln!(out, "{}: {words}", d.path);
        }
    }
    for d in r.disks.iter().filter(|d| d.verify_pass_mb_per_s.len() > 1) {
        let v = &d.verify_pass_mb_per_s;
        let one = |i: usize| format!("{} {:.0}", i + 1, v[i]);
        let each: Vec<String> = if v.len() <= 8 {
            (0..v.len()).map(one).collect()
        } else {
            // Many passes (a soak run by time): the first, the slowest,
            // the fastest and the last.
            let by = |f: fn(f64, f64) -> bool| {
                (0..v.len())
                    .reduce(|a, b| if f(v[b], v[a]) { b } else { a })
                    .unwrap_or(0)
            };
            let (lo, hi) = (by(|a, b| a < b), by(|a, b| a > b));
            vec![
                one(0),
                format!("slowest {}", one(lo)),
                format!("fastest {}", one(hi)),
                format!("last {}", one(v.len() - 1)),
            ]
        };
        let _ = writeln!(
            out,
            "{} read-back MB/s by pass: {}",
            d.path,
            each.join(", ")
        );
    }
    for d in &r.disks {
        match (&d.smart, &d.smart_note) {
            (Some(c), _) if !c.deltas.is_empty() => {
                let rose: Vec<String> = c
                    .deltas
                    .iter()
                    .map(|x| format!("{} {} → {}", x.name, x.before, x.after))
                    .collect();
                let _ = writeln!(
                    out,
                    "\nSMART {}: rose during the burn-in: {}",
                    d.path,
                    rose.join(", ")
                );
            }
            (None, Some(note)) => {
                let _ = writeln!(out, "\nSMART {}: not compared ({note})", d.path);
            }
            _ => {}
        }
    }
    for d in &r.disks {
        let kind = |k: &Option<TestKind>| match k {
            Some(TestKind::Long) => "long",
            _ => "short",
        };
        match &d.self_test {
            Some(SelfTest::Passed) => {
                let _ = writeln!(
                    out,
                    "SMART {}: {} self-test passed",
                    d.path,
                    kind(&d.self_test_kind)
                );
            }
            Some(SelfTest::Failed(w)) => {
                let _ = writeln!(
                    out,
                    "SMART {}: {} self-test FAILED: {w}",
                    d.path,
                    kind(&d.self_test_kind)
                );
            }
            Some(SelfTest::Unknown(w)) => {
                let _ = writeln!(
                    out,
                    "SMART {}: {} self-test not run: {w}",
                    d.path,
                    kind(&d.self_test_kind)
                );
            }
            Some(SelfTest::Running(_)) | None => {}
        }
        if let Some(c) = d.hottest_c {
            let limit = d
                .temperature_limit
                .as_ref()
                .map(|l| format!(" (its limit: {} °C, {})", l.warning_c, l.source))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "SMART {}: hottest {c} °C during the run{limit}",
                d.path
            );
        }
    }
    for d in r.disks.iter().filter(|d| !d.burn.findings.is_empty()) {
        let _ = writeln!(out, "\n{}:", d.path);
        for f in &d.burn.findings {
            let _ = writeln!(
                out,
                "  pass {}: bytes {}..{} ({} bytes) {}: {}",
                f.pass,
                f.offset,
                f.offset + f.len,
                f.len,
                class_words(f.class),
                f.detail
            );
        }
    }
    if !r.summary.disk_verdicts.is_empty() {
        let _ = writeln!(out, "\nDisks to act on:");
        for a in &r.summary.disk_verdicts {
            let _ = writeln!(out, "  {}", a.sentence);
        }
    }
    let _ = writeln!(out, "\nVerdict: {}", r.summary.message);
    out
}

//! A watch's JSON lines (`arrayburn watch -j`) read for the report: each
//! start line (the run's header, `kind` `watch`) opens a section, each
//! window line's events open and end findings. What stood when the last
//! section ended is the run's verdict (to act on); what ended, or stood
//! when an earlier section stopped and was not found again by a later one
//! that watched for its `--for`, is noted. It must not judge again: the
//! watch's own events are carried.

use serde_json::Value;

use crate::finding::{Code, Finding};
use crate::header::Header;
use crate::outcome::Outcome;
use crate::rundoc::{ActOn, RunDoc};

/// A finding of the watch: begun `since`, ended at `ended` (None while
/// it stood at the last window read).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// `fail_slow`, `group_slow`, `gone` or `errors`.
    pub event: String,
    pub paths: Vec<String>,
    pub direction: Option<String>,
    pub since: String,
    pub ended: Option<String>,
    /// As the watch said it.
    pub sentence: String,
}

impl Found {
    fn same(&self, other: &Found) -> bool {
        (self.event == other.event && self.paths == other.paths)
            && self.direction == other.direction
    }
}

/// A watch's JSON lines, read.
#[derive(Debug, Clone)]
pub struct WatchLog {
    /// The first section's header; `finished_at` the last window's end.
    pub header: Header,
    /// The disks of its last section.
    pub disks: Vec<String>,
    /// Window lines read, over every section (a watch with --json-every
    /// writes fewer than it watched).
    pub windows: usize,
    /// Standing at the end (to act on).
    pub standing: Vec<Found>,
    /// Ended, or stood when a section stopped and not found again by a
    /// later one that watched long enough to.
    pub past: Vec<Found>,
    /// The disks its last section never compared with their peers (idle,
    /// at another load, or without peers): their health not claimed.
    pub unjudged: Vec<String>,
}

/// Whether `bytes` look like a watch's JSON lines: a first line that is a
/// JSON object of `kind` `watch`.
pub fn is_watch(bytes: &[u8]) -> bool {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<Value>(first).is_ok_and(|v| v["kind"] == "watch")
}

/// Whether the file at `path` is a watch's JSON lines (`*.jsonl` whose
/// first line says so; only that line is read).
pub fn is_watch_file(path: &std::path::Path) -> bool {
    use std::io::{BufRead, Read};
    if path.extension().is_none_or(|x| x != "jsonl") {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut first = Vec::new();
    let read = std::io::BufReader::new(f.take(16 << 20)).read_until(b'\n', &mut first);
    read.is_ok() && is_watch(&first)
}

/// One section being read: its start, its pace, what stands in it.
struct Section {
    started: String,
    last_at: String,
    for_s: f64,
    open: Vec<Found>,
    /// The disks its last window says it never compared with peers.
    unjudged: Vec<String>,
}

impl Section {
    fn of(h: &Header, for_s: f64) -> Self {
        let started = h.started_at.clone();
        Section { last_at: started.clone(), started, for_s, open: Vec::new(), unjudged: Vec::new() }
    }

    /// What stood when it stopped: carried until a later section has
    /// watched for its --for without finding it.
    fn stopped(self) -> impl Iterator<Item = Found> {
        let at = self.last_at;
        self.open.into_iter().map(move |mut f| {
            f.sentence = format!("{} (standing when its watch stopped at {at})", f.sentence);
            f
        })
    }
}

/// Reads a watch's JSON lines; why not, in one line (`line N: ...`). A
/// last line cut short (the watch killed while it wrote) is left out.
pub fn read(bytes: &[u8]) -> Result<WatchLog, String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut header: Option<Header> = None;
    let (mut disks, mut windows, mut past, mut carried) = (Vec::new(), 0, Vec::new(), Vec::new());
    let mut section: Option<Section> = None;
    for (i, line) in lines.iter().enumerate() {
        let mut v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) if i + 1 == lines.len() && i > 0 => break,
            Err(e) => return Err(format!("line {}: not JSON ({e})", i + 1)),
        };
        // Input from wherever it came from: its strings cleaned of
        // control characters, its figures held to what they can be.
        crate::escape::json_strings(&mut v);
        out_of_range(&v).map_err(|e| {
            format!(
                "line {}: {e}: the file is damaged or was edited; remove it from the inputs",
                i + 1
            )
        })?;
        if v["kind"] == "watch" {
            let h: Header = serde_json::from_value(v.clone()).map_err(|e| {
                format!("line {}: a watch's start this version cannot read ({e})", i + 1)
            })?;
            if let Some(s) = section.take() {
                carried.extend(s.stopped());
            }
            disks = (v["disks"].as_array().into_iter().flatten())
                .filter_map(|d| d["path"].as_str().map(String::from))
                .collect();
            let mut s = Section::of(&h, v["for_s"].as_f64().unwrap_or(0.0));
            // Before its first window, none was compared.
            s.unjudged = disks.clone();
            section = Some(s);
            header.get_or_insert(h);
            continue;
        }
        let Some(s) = section.as_mut() else {
            return Err(format!("line {}: a window before the watch's start line", i + 1));
        };
        windows += 1;
        if let Some(at) = v["at"].as_str() {
            s.last_at = at.to_string();
        }
        s.unjudged = (v["disks"].as_array().into_iter().flatten())
            .filter(|d| d["compared"].as_u64().unwrap_or(0) == 0)
            .filter_map(|d| d["path"].as_str().map(String::from))
            .collect();
        for e in v["events"].as_array().into_iter().flatten() {
            window_event(e, s, &mut past);
        }
    }
    let (mut header, s) = header.zip(section).ok_or("no watch start line")?;
    header.finished_at = s.last_at.clone();
    header.complete = true;
    let watched_for = seconds_between(&s.started, &s.last_at);
    let unjudged = s.unjudged;
    let mut standing = s.open;
    for c in carried {
        if standing.iter().any(|f| f.same(&c)) {
            continue;
        }
        match watched_for < s.for_s {
            true => standing.push(c),
            false => past.push(c),
        }
    }
    Ok(WatchLog { header, disks, windows, standing, past, unjudged })
}

/// Why a line's figures cannot be a watch's, where one is out of what it
/// can be (a ratio of latencies, a count of windows, a duration).
fn out_of_range(v: &Value) -> Result<(), String> {
    let within = |x: &Value, max: f64, what: &str| match x.as_f64() {
        Some(n) if !(0.0..=max).contains(&n) => {
            Err(format!("{what} {n:e} out of range (0 to {max:e})"))
        }
        _ => Ok(()),
    };
    within(&v["interval_s"], 1e9, "interval_s")?;
    within(&v["for_s"], 1e9, "for_s")?;
    for e in v["events"].as_array().into_iter().flatten() {
        within(&e["found"]["times"], 1e6, "times")?;
        within(&e["found"]["slow_windows"], 1e12, "slow_windows")?;
        within(&e["found"]["windows"], 1e12, "windows")?;
        within(&e["new"], 1e15, "new")?;
    }
    Ok(())
}

/// A window's event: a finding opened in `s`, or one of its own ended.
fn window_event(e: &Value, s: &mut Section, past: &mut Vec<Found>) {
    let word = |k: &str| e[k].as_str().map(String::from);
    let paths: Vec<String> = match word("path") {
        Some(p) => vec![p],
        None => (e["paths"].as_array().into_iter().flatten())
            .filter_map(|p| p.as_str().map(String::from))
            .collect(),
    };
    let at = s.last_at.clone();
    let event = word("event").unwrap_or_default();
    let found = Found {
        event: event.clone(),
        paths,
        direction: word("direction"),
        since: word("since").unwrap_or_else(|| at.clone()),
        ended: None,
        sentence: sentence(e),
    };
    match event.as_str() {
        "fail_slow" | "group_slow" | "gone" => s.open.push(found),
        "errors" => past.push(Found { ended: Some(at), ..found }),
        "ended" | "group_ended" => {
            let began = if event == "ended" { "fail_slow" } else { "group_slow" };
            let mut ended: Vec<Found> = Vec::new();
            s.open.retain(|f| {
                let closes =
                    f.event == began && f.paths == found.paths && f.direction == found.direction;
                if closes {
                    ended.push(Found { ended: Some(at.clone()), ..f.clone() });
                }
                !closes
            });
            past.extend(ended);
        }
        _ => {}
    }
}

/// A watch's event in a sentence, from its fields.
fn sentence(e: &Value) -> String {
    let f = |k: &str| e["found"][k].as_f64().unwrap_or(0.0);
    let paths = |e: &Value| {
        let p: Vec<&str> =
            e["paths"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        p.join(", ")
    };
    let (path, dir) = (e["path"].as_str().unwrap_or(""), e["direction"].as_str().unwrap_or(""));
    let since = e["since"].as_str().unwrap_or("");
    match e["event"].as_str().unwrap_or("") {
        "fail_slow" => format!(
            "{path}: fail-slow in service: its {dir}s took {:.1} times its peers' at their load, in {} of {} windows, since {since}",
            f("times"),
            f("slow_windows"),
            f("windows")
        ),
        "group_slow" => format!(
            "{}: slow together in service: their {dir}s took {:.1} times their first windows', since {since}: their shared path or their workload, not a disk",
            paths(e),
            f("times")
        ),
        "gone" => format!("{path}: gone in service: the kernel no longer showed it"),
        "errors" => format!(
            "{path}: the kernel counted {} failed command(s) in service",
            e["new"].as_u64().unwrap_or(0)
        ),
        other => other.to_string(),
    }
}

/// Seconds from one RFC 3339 time to another (0 where either is unread).
fn seconds_between(a: &str, b: &str) -> f64 {
    let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    t(a).zip(t(b)).map_or(0.0, |(a, b)| (b - a).num_milliseconds() as f64 / 1e3)
}

impl WatchLog {
    /// Its verdict and the sentence that says it: flagged where a finding
    /// stood at its end, not judged where a disk was never compared with
    /// its peers, else healthy.
    fn verdict(&self) -> (Outcome, String) {
        let unjudged = match self.unjudged.is_empty() {
            true => String::new(),
            false => format!(
                "; never compared with their peers (their health not claimed): {}",
                self.unjudged.join(", ")
            ),
        };
        let message = match self.standing.len() {
            0 => format!(
                "nothing stood out in service: {} disk(s) watched from {} to {}{unjudged}",
                self.disks.len(),
                self.header.started_at,
                self.header.finished_at
            ),
            n => format!(
                "{n} finding(s) standing in service at {}{unjudged}",
                self.header.finished_at
            ),
        };
        let outcome = match (self.standing.is_empty(), self.unjudged.is_empty()) {
            (false, _) => Outcome::Flagged,
            (true, false) => Outcome::NotJudged,
            (true, true) => Outcome::Healthy,
        };
        (outcome, message)
    }
}

impl crate::rundoc::Document for WatchLog {
    fn document(&self) -> RunDoc {
        let mut to_act_on = Vec::new();
        let mut links = Vec::new();
        for f in &self.standing {
            let (action, code) = match f.event.as_str() {
                "fail_slow" => ("fail_slow", Code::FailSlow),
                "gone" => ("gone", Code::DeviceGone),
                _ => {
                    links.push((f.sentence.clone(), f.paths.clone()));
                    continue;
                }
            };
            to_act_on.extend(f.paths.iter().map(|p| ActOn {
                path: p.clone(),
                action: action.into(),
                sentence: f.sentence.clone(),
                findings: vec![Finding::of(code)],
            }));
        }
        let notes: Vec<(String, String)> = (self.past.iter())
            .map(|f| {
                let when = f.ended.as_ref().map(|t| format!(" (ended {t})")).unwrap_or_default();
                (f.paths.join(", "), format!("{}{when}", f.sentence))
            })
            .collect();
        let (outcome, message) = self.verdict();
        RunDoc {
            outcome,
            to_act_on,
            links,
            not_judged: self.unjudged.clone(),
            unsure: Vec::new(),
            disks: self.disks.clone(),
            cut: None,
            notes,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rundoc::Document;

    fn recorded(name: &str) -> String {
        let p = format!("{}/tests/fixtures/watch/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(p).unwrap()
    }

    /// `text`'s lines: its start line and its first `n` windows.
    fn first(text: &str, n: usize) -> String {
        text.lines().take(n + 1).map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn a_recorded_watch_says_its_standing_finding_to_act_on_and_a_group_as_a_path() {
        let text = recorded("one-slow");
        assert!(is_watch(text.as_bytes()));
        let w = read(text.as_bytes()).unwrap();
        assert_eq!((w.windows, w.disks.len(), w.standing.len(), w.past.len()), (8, 6, 1, 0));
        let doc = w.document();
        assert_eq!(doc.outcome, Outcome::Flagged);
        let act = &doc.to_act_on[0];
        assert_eq!((act.action.as_str(), act.findings[0].code), ("fail_slow", Code::FailSlow));
        assert!(
            act.sentence.contains(": fail-slow in service: its reads took"),
            "{}",
            act.sentence
        );
        assert_eq!(w.header.finished_at, text.lines().last().unwrap()[7..27]);
        // Slowed together: the group's path, no disk's finding.
        let doc = read(recorded("all-slow").as_bytes()).unwrap().document();
        assert_eq!((doc.to_act_on.len(), doc.links.len()), (0, 1));
        assert_eq!(doc.links[0].1.len(), 4);
        assert!(doc.links[0].0.contains("slow together in service"), "{}", doc.links[0].0);
        // Before any finding: nothing stood out, but the disk at twice
        // its peers' load and the idle one were never compared: not
        // judged, not healthy.
        let w = read(first(&text, 2).as_bytes()).unwrap();
        let doc = w.document();
        assert_eq!(doc.outcome, Outcome::NotJudged, "{}", doc.message);
        assert!(doc.message.starts_with("nothing stood out in service: 6 disk(s) watched from "));
        assert_eq!(doc.not_judged, w.disks[4..], "{}", doc.message);
        assert!(doc.message.contains("never compared with their peers"), "{}", doc.message);
        // Slowed together, every disk was compared.
        assert!(read(recorded("all-slow").as_bytes()).unwrap().unjudged.is_empty());
        // A figure no watch writes is refused, a disk's terminal escape
        // cleaned.
        let start = text.lines().next().unwrap();
        let bad = format!(
            "{start}\n{{\"at\": \"x\", \"disks\": [], \"events\": [{{\"event\": \"fail_slow\", \"path\": \"/dev/sdb\\u001b[2J\", \"found\": {{\"times\": 1e308}}}}]}}\n"
        );
        let why = read(bad.as_bytes()).unwrap_err();
        assert!(why.starts_with("line 2: times ") && why.contains("out of range"), "{why}");
        let bad = bad.replace("1e308", "3.0");
        let w = read(bad.as_bytes()).unwrap();
        assert!(!w.standing[0].sentence.contains('\u{1b}'), "{}", w.standing[0].sentence);
    }

    #[test]
    fn a_finding_standing_at_a_restart_stands_until_a_later_watch_has_watched_for_its_span() {
        let one = recorded("one-slow");
        // The same watch restarted (its start line again), then quiet
        // windows (its first ones, their events left out).
        let quiet: Vec<&str> = one.lines().skip(1).take(3).collect();
        let start = one.lines().next().unwrap();
        let restarted = |windows: &[&str]| {
            let mut t = one.clone();
            t.push_str(&format!("{start}\n"));
            for l in windows {
                let v: Value = serde_json::from_str(l).unwrap();
                let mut v = v.as_object().unwrap().clone();
                v.remove("events");
                t.push_str(&format!("{}\n", Value::Object(v)));
            }
            read(t.as_bytes()).unwrap()
        };
        // One window after the restart (a second from its start): not yet
        // watched for 3 s.
        let w = restarted(&quiet[..1]);
        assert_eq!((w.standing.len(), w.past.len()), (1, 0));
        assert!(w.standing[0].sentence.contains("(standing when its watch stopped at"));
        // Three (their `at` 3 s from its start): watched for its --for
        // without finding it again: no longer claimed standing, noted.
        let w = restarted(&quiet);
        assert_eq!((w.standing.len(), w.past.len()), (0, 1), "{w:?}");
    }

    #[test]
    fn an_ended_finding_is_noted_and_a_damaged_line_refused_but_a_cut_last_one_left_out() {
        let one = recorded("one-slow");
        let start = one.lines().next().unwrap();
        let slow = one.lines().find(|l| l.contains("fail_slow")).unwrap();
        let v: Value = serde_json::from_str(slow).unwrap();
        let e = &v["events"][0];
        let ended = serde_json::json!({"at": "2026-12-07T09:00:00Z", "secs": 1.0, "disks": [],
            "events": [{"event": "ended", "path": e["path"], "direction": "read"}]});
        let text = format!("{start}\n{slow}\n{ended}\n{{\"at\": \"2026-12");
        let w = read(text.as_bytes()).unwrap();
        assert_eq!((w.standing.len(), w.past.len(), w.windows), (0, 1, 2));
        let doc = w.document();
        assert_eq!(doc.outcome, Outcome::Healthy);
        assert!(doc.notes[0].1.ends_with("(ended 2026-12-07T09:00:00Z)"), "{:?}", doc.notes);
        let broken = format!("{start}\nnot json\n{slow}\n");
        assert!(read(broken.as_bytes()).unwrap_err().starts_with("line 2: not JSON"));
        assert!(!is_watch(b"{\"kind\": \"check\"}\n"));
    }
}

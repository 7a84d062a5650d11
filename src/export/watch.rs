//! What `arrayburn watch` says of each window: a dated line per disk
//! (logs, journald) or a live table on a terminal, each finding as it
//! begins and ends (and to `--notify`), JSON lines appended to `--json`
//! (the run's start, then its windows: each with a finding, and one every
//! `--json-every`), and the metrics (at most every 15 s, at once on a
//! finding, and at the end).
//!
//! It must not judge (`judge::watch`) nor read the disks' counters
//! (`run::watch`).

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::judge::watch::Standing;
use crate::notify::Notifier;
use crate::output::Output;
use crate::run::watch::{Event, Start, Tick, Watched};
use crate::stop::StopFlag;

/// How each window is said.
pub struct Shown {
    /// A line per disk and window.
    pub lines: bool,
    /// The live table (a terminal).
    pub table: bool,
}

/// The outputs of one watch, said to window after window.
pub struct Telling {
    pub disks: Vec<Watched>,
    pub shown: Shown,
    pub interval: Duration,
    pub json: Option<Box<dyn Write>>,
    /// A window's line is written at least this often (each with a
    /// finding always).
    pub json_every: Duration,
    pub metrics: Option<Output>,
    pub notifier: Option<Notifier>,
    /// The run's host and start, for the metrics.
    pub host: String,
    pub started: String,
    /// A finding that makes the run's exit 1 was said (gone, failed
    /// commands, slow together; fail-slow at the end is the watch's).
    pub flagged: bool,
    written: Option<Instant>,
    exported: Option<Instant>,
    last: Option<(Tick, bool)>,
}

/// The metrics are written at most this often (a scrape's interval; at
/// once where a finding begins or ends): a file of thousands of samples
/// replaced every second costs more than the watch.
const METRICS_EVERY: Duration = Duration::from_secs(15);

impl Telling {
    /// The outputs, the run's start written first to `--json`.
    pub fn new(start: Start, shown: Shown, interval: Duration) -> Self {
        Telling {
            disks: start.disks.clone(),
            shown,
            interval,
            json: None,
            json_every: Duration::ZERO,
            metrics: None,
            notifier: None,
            host: start.header.host.clone(),
            started: start.header.started_at.clone(),
            flagged: false,
            written: None,
            exported: None,
            last: None,
        }
    }

    /// Writes the run's start line to `--json`.
    pub fn begin(&mut self, start: &Start) {
        let line = serde_json::to_string(start).unwrap_or_default();
        self.line(&line);
    }

    /// Appends `line` to `--json`; an output gone is said once, and the
    /// watch goes on.
    fn line(&mut self, line: &str) {
        let Some(out) = self.json.as_mut() else { return };
        if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
            let why = match e.kind() {
                std::io::ErrorKind::BrokenPipe => "the output went away".to_string(),
                _ => e.to_string(),
            };
            tell!("arrayburn watch: --json: {why}; watching on without it");
            self.json = None;
        }
    }

    /// Says window `t` everywhere asked.
    pub fn window(&mut self, t: &Tick, stop: &StopFlag) {
        if self.shown.lines {
            lines(t);
        }
        self.flagged |= (t.events.iter()).any(|e| {
            matches!(e, Event::Gone { .. } | Event::Errors { .. } | Event::GroupSlow { .. })
        });
        for e in &t.events {
            tell!("arrayburn watch: {}", event_words(e));
            if let Some(n) = &self.notifier {
                n.send_beside(notice(e), stop);
            }
        }
        let due = self.written.is_none_or(|w| w.elapsed() >= self.json_every);
        let written = !t.events.is_empty() || due;
        if written {
            self.written = Some(Instant::now());
            self.line(&serde_json::to_string(t).unwrap_or_default());
        }
        if !t.events.is_empty() || self.exported.is_none_or(|w| w.elapsed() >= METRICS_EVERY) {
            self.exported = Some(Instant::now());
            self.export(t, false);
        }
        if self.shown.table {
            crate::progress::draw(&summary(t, self.disks.len(), self.interval), &cells(t));
        }
        self.last = Some((t.clone(), written));
    }

    /// The watch ended: its last window written where it was not, the
    /// metrics marked whole, the notifications waited for.
    pub fn end(&mut self) {
        if self.shown.table {
            crate::tell::settle();
        }
        if let Some((t, written)) = self.last.take() {
            if !written {
                self.line(&serde_json::to_string(&t).unwrap_or_default());
            }
            self.export(&t, true);
        }
        Notifier::sent();
    }

    fn export(&self, t: &Tick, complete: bool) {
        let Some(out) = &self.metrics else { return };
        let m = crate::export::metrics::watch(&self.host, &self.started, &self.disks, t, complete);
        if let Err(e) = out.write(m.render().as_bytes(), complete, &StopFlag::default()) {
            tell!("arrayburn watch: --metrics {}: {e}; watching on", out.given.display());
        }
    }
}

/// A finding begun or ended, for `--notify`.
fn notice(e: &Event) -> crate::notify::Event {
    let (kind, verdict) = match e {
        Event::FailSlow { .. } => ("finding", "FAIL-SLOW"),
        Event::GroupSlow { .. } => ("finding", "SLOW TOGETHER"),
        Event::Gone { .. } => ("finding", "GONE"),
        Event::Errors { .. } => ("finding", "ERRORS"),
        Event::Ended { .. } | Event::GroupEnded { .. } => ("finding_ended", "ENDED"),
    };
    // The disks to act on: a disk's own finding's, never a group's (its
    // path is to look at, not its disks).
    let act: Vec<String> = match e {
        Event::FailSlow { path, .. } | Event::Gone { path } | Event::Errors { path, .. } => {
            vec![path.clone()]
        }
        _ => Vec::new(),
    };
    crate::notify::Event::watch(kind, verdict, event_words(e), act, e)
}

/// Where `--json` lines go, appended: standard output (`-`), a file
/// (never through a link, only a regular file of this user's or root's,
/// as the run logs are), or a FIFO or terminal; refused in one line
/// before anything is read. A FIFO is waited for until a reader opens it
/// (said once), or a stop (an error then).
pub fn lines_to(given: &std::path::Path, stop: &StopFlag) -> Result<Box<dyn Write>> {
    use crate::output::Sink;
    let o = Output::resolve("--json", given, true).map_err(anyhow::Error::msg)?;
    let shown = given.display();
    Ok(match o.sink {
        Sink::Stdout => Box::new(std::io::stdout()),
        Sink::Stderr => Box::new(std::io::stderr()),
        Sink::File { dir, name } => {
            let name = name.to_string_lossy();
            Box::new(dir.append(&name).with_context(|| format!("--json {shown}"))?)
        }
        Sink::Special(p) => {
            let waiting = || {
                tell!(
                    "arrayburn watch: --json {shown}: a FIFO: waiting for a reader to open it (Ctrl-C ends the watch)"
                );
            };
            Box::new(
                crate::output::open_stream(&p, stop, &waiting)
                    .with_context(|| format!("--json {shown}: cannot write there"))?,
            )
        }
    })
}

/// A line per disk: reads and writes a second, ms a request, how each
/// stood against its peers.
fn lines(t: &Tick) {
    let stamp = crate::units::log_stamp();
    for d in &t.disks {
        let Some(w) = d.window else {
            tell!("{stamp} watch: {} gone", d.path);
            continue;
        };
        tell!(
            "{stamp} watch: {} read {:.0}/s {:.1} MB/s {:.2} ms ({}) write {:.0}/s {:.1} MB/s {:.2} ms ({}) util {:.0}% in flight {}",
            d.path,
            w.read.ops_per_s,
            w.read.mb_per_s,
            w.read.ms,
            d.read.word(),
            w.write.ops_per_s,
            w.write.mb_per_s,
            w.write.ms,
            d.write.word(),
            w.util_pct,
            w.in_flight
        );
    }
}

/// The live table's first line: the disks, the window, the findings
/// standing.
fn summary(t: &Tick, n: usize, interval: std::time::Duration) -> String {
    let count = |f: fn(&Event) -> bool| t.open.iter().filter(|e| f(e)).count();
    let slow = count(|e| matches!(e, Event::FailSlow { .. }));
    let together = count(|e| matches!(e, Event::GroupSlow { .. }));
    let gone = count(|e| matches!(e, Event::Gone { .. }));
    let time = t.at.get(11..19).unwrap_or("");
    format!(
        "watch: {n} disks every {}: {slow} fail-slow, {together} slow together, {gone} gone, {time}Z",
        crate::units::human_duration(interval)
    )
}

/// A cell per disk: reads and writes a second, ms a request and how each
/// stood ("FAIL-SLOW" where it is named).
fn cells(t: &Tick) -> Vec<crate::board::Cell> {
    let named = |path: &str, dir: &str| {
        (t.open.iter()).any(
            |e| matches!(e, Event::FailSlow { path: p, direction, .. } if p == path && *direction == dir),
        )
    };
    let side = |path: &str, dir: &'static str, f: crate::device::diskstats::Flow, s: Standing| {
        let word = match (named(path, dir), s) {
            (true, _) => "FAIL-SLOW".to_string(),
            (false, Standing::Compared { times } | Standing::Slow { times }) => {
                format!("{times:.1}x")
            }
            (false, s) => s.word(),
        };
        let ms = if f.ops_per_s > 0.0 { format!("{:.1}ms", f.ms) } else { "-".into() };
        format!("{}{:>5.0}/s {ms:>7} {word:<9}", &dir[..1].to_uppercase(), f.ops_per_s)
    };
    (t.disks.iter())
        .map(|d| crate::board::Cell {
            name: d.path.clone(),
            figures: match d.window {
                None => " GONE".into(),
                Some(w) => format!(
                    " {} {}",
                    side(&d.path, "read", w.read, d.read),
                    side(&d.path, "write", w.write, d.write)
                ),
            },
        })
        .collect()
}

/// A finding begun or ended, in words.
fn event_words(e: &Event) -> String {
    match e {
        Event::FailSlow { path, direction, since, found } => format!(
            "{path}: FAIL-SLOW: its {direction}s took {:.1} times its peers' at their load, in {} of the last {} windows, since {since}",
            found.times, found.slow_windows, found.windows
        ),
        Event::Ended { path, direction } => {
            format!("{path}: its {direction}s no longer stand out against its peers'")
        }
        Event::GroupSlow { paths, pool, direction, since, found, baseline_ms, now_ms } => format!(
            "{}{}: SLOW TOGETHER: their {direction}s took {:.1} times what they took in their first windows ({baseline_ms:.2} ms, now {now_ms:.2} ms), in {} of the last {} windows, since {since}: their shared path (controller, link, enclosure) or their workload, not a disk",
            paths.join(", "),
            pool.as_ref().map(|p| format!(" (of {p})")).unwrap_or_default(),
            found.times,
            found.slow_windows,
            found.windows
        ),
        Event::GroupEnded { paths, direction } => {
            format!("{}: their {direction}s are back near their first windows'", paths.join(", "))
        }
        Event::Gone { path } => format!("{path}: GONE: the kernel no longer shows it"),
        Event::Errors { path, new, errors } => format!(
            "{path}: ERRORS: the kernel counted {new} failed command(s) in the last window ({errors} since boot): see dmesg"
        ),
    }
}

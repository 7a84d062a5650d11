//! Live progress on stderr, fed by the aggregator: one bar per disk on a
//! terminal, plain periodic lines otherwise (these runs live in tmux and log
//! files for hours, so each line carries the local time). The run's
//! schedule is announced up front (a 24-disk serial pass is 24 minutes) and
//! counted down. It only displays what the aggregator hands it.
//!
//! The burn-in's lines ([`BurnLines`]) are fed by its watch the same way.
//!
//! It must not judge (no verdict is shown before the report) and is not an
//! exporter: a finished report is `export`'s.

use std::io::Write;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::measure::{DiskProgress, DiskRun, Observer, PassKind, ReadError, Stopped, Window};
use crate::units::{human_bytes, human_duration, mb_per_s};

/// How progress is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// indicatif bars.
    Bars,
    /// A line per disk every interval.
    Lines,
    /// Only read errors.
    Quiet,
}

/// The progress display.
pub struct Progress {
    style: Style,
    labels: Vec<String>,
    interval: Duration,
    last_line: Option<Instant>,
    multi: MultiProgress,
    bars: Vec<(usize, ProgressBar)>,
    /// How long each group of the run (a serial disk, the parallel pass,
    /// the seek pass) lasts: its sample, or None for a whole-disk read.
    schedule: Vec<Option<Duration>>,
    /// Groups started so far.
    groups_started: usize,
}

const BAR_LEN: u64 = 1000;

impl Progress {
    /// A display for disks named `labels` (their paths as given; shown
    /// with their control characters as escapes).
    pub fn new(style: Style, labels: Vec<String>, interval: Duration) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let labels = labels.iter().map(|l| crate::escape::terminal(l)).collect();
        Self {
            style,
            labels,
            interval,
            last_line: None,
            multi,
            bars: Vec::new(),
            schedule: Vec::new(),
            groups_started: 0,
        }
    }

    /// Announces the run's groups in order (see `Progress::schedule`) and
    /// how long they take.
    pub fn announce(&mut self, schedule: Vec<Option<Duration>>) {
        self.schedule = schedule;
        if self.style != Style::Quiet {
            let n = self.schedule.len();
            self.line(&format!(
                "arrayburn: {n} read group(s) to run: {}",
                run_left(&self.schedule, Duration::ZERO)
            ));
        }
    }

    /// A line of its own about the run (unless quiet).
    pub fn note(&self, text: &str) {
        if self.style != Style::Quiet {
            self.line(text);
        }
    }

    fn line(&self, text: &str) {
        let stamp = crate::units::log_stamp();
        // A device path's control characters as escapes.
        let text = crate::escape::lines(text);
        let text = if self.style == Style::Lines { format!("{stamp} {text}") } else { text };
        crate::tell::log(&text, true);
        let _ = if self.bars.is_empty() {
            writeln!(std::io::stderr(), "{text}")
        } else {
            self.multi.println(text)
        };
    }

    /// The groups after the current one.
    fn later(&self) -> &[Option<Duration>] {
        self.schedule.get(self.groups_started..).unwrap_or(&[])
    }
}

/// "about 26 min 0 s left" for the current group's `left` and the `later`
/// groups; whole-disk groups add "plus N whole-disk read(s)", whose length
/// is only known once they run.
fn run_left(later: &[Option<Duration>], left: Duration) -> String {
    let timed: Duration = later.iter().flatten().sum();
    let full = later.iter().filter(|g| g.is_none()).count();
    let about = format!("about {} left", human_duration(left + timed));
    if full == 0 { about } else { format!("{about} plus {full} whole-disk read(s)") }
}

/// (fraction done, rate MB/s, time left) of one disk.
fn estimate(p: &DiskProgress) -> (f64, f64, Duration) {
    let secs = p.elapsed.as_secs_f64().max(1e-3);
    let rate = mb_per_s(p.bytes, secs);
    match p.window {
        Window::Full => {
            let done = if p.size > 0 { p.bytes as f64 / p.size as f64 } else { 1.0 };
            let left =
                if rate > 0.0 { (p.size - p.bytes.min(p.size)) as f64 / (rate * 1e6) } else { 1e9 };
            (done, rate, Duration::from_secs_f64(left.min(1e9)))
        }
        // A sample lasts its window (a disk that ends sooner is read again).
        Window::Sample(w) => {
            let left = (w.as_secs_f64() - secs).max(0.0);
            ((secs / w.as_secs_f64()).min(1.0), rate, Duration::from_secs_f64(left))
        }
    }
}

impl Observer for Progress {
    fn group_started(&mut self, kind: PassKind, disks: &[usize]) {
        let names: Vec<&str> = disks.iter().map(|d| self.labels[*d].as_str()).collect();
        match self.style {
            Style::Bars => {
                let style =
                    ProgressStyle::with_template("{prefix:>9} [{bar:30}] {percent:>3}% {msg}")
                        .map(|s| s.progress_chars("=> "))
                        .unwrap_or_else(|_| ProgressStyle::default_bar());
                for &d in disks {
                    let bar = self.multi.add(ProgressBar::new(BAR_LEN).with_style(style.clone()));
                    bar.set_prefix(kind.name());
                    bar.set_message(self.labels[d].clone());
                    self.bars.push((d, bar));
                }
                if !self.schedule.is_empty() {
                    let group = self.schedule.get(self.groups_started).copied().flatten();
                    let later = self.schedule.get(self.groups_started + 1..).unwrap_or(&[]);
                    let mut rest = later.to_vec();
                    if group.is_none() {
                        rest.push(None);
                    }
                    self.line(&format!(
                        "arrayburn: run: {}",
                        run_left(&rest, group.unwrap_or_default())
                    ));
                }
            }
            Style::Lines => {
                self.line(&format!("arrayburn: {} pass: reading {}", kind.name(), names.join(" ")))
            }
            Style::Quiet => {}
        }
        self.groups_started += 1;
        self.last_line = Some(Instant::now());
    }

    fn progress(&mut self, kind: PassKind, disks: &[DiskProgress]) {
        match self.style {
            Style::Bars => {
                for p in disks {
                    let (frac, rate, left) = estimate(p);
                    if let Some((_, bar)) = self.bars.iter().find(|(d, _)| *d == p.disk) {
                        bar.set_position((frac * BAR_LEN as f64) as u64);
                        bar.set_message(format!(
                            "{} {:.0} MB/s, {} read, ETA {}",
                            self.labels[p.disk],
                            rate,
                            human_bytes(p.bytes),
                            human_duration(left)
                        ));
                    }
                }
            }
            Style::Lines => {
                if self.last_line.is_some_and(|t| t.elapsed() < self.interval) {
                    return;
                }
                self.last_line = Some(Instant::now());
                let mut group_left = Duration::ZERO;
                for p in disks {
                    let (frac, rate, left) = estimate(p);
                    group_left = group_left.max(left);
                    self.line(&format!(
                        "arrayburn: {} {}: {:.0}% {} read, {:.0} MB/s, ETA {}",
                        kind.name(),
                        self.labels[p.disk],
                        frac * 100.0,
                        human_bytes(p.bytes),
                        rate,
                        human_duration(left)
                    ));
                }
                if !self.schedule.is_empty() {
                    self.line(&format!("arrayburn: run: {}", run_left(self.later(), group_left)));
                }
            }
            Style::Quiet => {}
        }
    }

    fn read_error(&mut self, disk: usize, error: &ReadError) {
        self.line(&format!(
            "arrayburn: read error on {} at byte {} (+{} bytes): {}",
            self.labels[disk], error.offset, error.len, error.message
        ));
    }

    fn group_finished(&mut self, kind: PassKind, disks: &[usize], runs: &[DiskRun]) {
        for (_, bar) in self.bars.drain(..) {
            bar.finish_and_clear();
        }
        if self.style == Style::Quiet {
            return;
        }
        for (d, r) in disks.iter().zip(runs) {
            let secs = r.elapsed.as_secs_f64();
            self.line(&format!(
                "arrayburn: {} {}: {} in {:.1} s, {:.0} MB/s{}",
                kind.name(),
                self.labels[*d],
                human_bytes(r.bytes),
                secs,
                mb_per_s(r.bytes, secs),
                match r.stopped {
                    Some(Stopped::Interrupted) => " (interrupted)",
                    Some(Stopped::MaxErrors) => " (stopped: --max-errors failed reads)",
                    Some(Stopped::DeviceGone) => " (stopped: the device went away)",
                    Some(Stopped::Hung) => " (stopped: the disk did not answer)",
                    None => "",
                }
            ));
        }
    }
}

/// Where one burn-in disk is, as the burn-in's watch hands it on.
pub struct BurnTick {
    /// The disk as given.
    pub name: String,
    pub pass: u16,
    /// Passes in all (None: a soak run by time).
    pub passes: Option<u16>,
    /// The phase in words ("write", "verify", "read", ...).
    pub phase: &'static str,
    /// How far through its phase, in percent.
    pub phase_pct: f64,
    /// Bytes of the whole run done, and in all.
    pub done: u64,
    pub total: u64,
}

/// The burn-in's progress: a line per disk every interval (with a time
/// stamp: these go to logs), and the whole run's ETA at the speeds seen so
/// far (a soak run by time: its deadline).
pub struct BurnLines {
    every: Duration,
    began: Instant,
    last: Instant,
    /// Each disk's bytes done at the last line, and at the first.
    seen: Vec<Option<u64>>,
    first: Vec<Option<u64>>,
}

impl BurnLines {
    pub fn new(every: Duration) -> Self {
        Self {
            every,
            began: Instant::now(),
            last: Instant::now(),
            seen: Vec::new(),
            first: Vec::new(),
        }
    }

    /// True when the next lines are due.
    pub fn due(&self) -> bool {
        self.last.elapsed() >= self.every
    }

    /// Prints a line per disk, then the ETA (`deadline`: a soak's end).
    pub fn show(&mut self, disks: &[BurnTick], deadline: Option<Instant>) {
        let dt = self.last.elapsed().as_secs_f64();
        self.last = Instant::now();
        self.seen.resize(disks.len(), None);
        self.first.resize(disks.len(), None);
        let now = crate::units::log_stamp();
        let mut eta: f64 = 0.0;
        for (i, d) in disks.iter().enumerate() {
            // No speed before a second look: nothing was measured yet.
            let speed = self.seen[i]
                .map(|s| format!(" {:.0} MB/s", d.done.saturating_sub(s) as f64 / dt / 1e6))
                .unwrap_or_default();
            self.seen[i] = Some(d.done);
            let since = *self.first[i].get_or_insert(d.done);
            let mean = d.done.saturating_sub(since) as f64 / self.began.elapsed().as_secs_f64();
            if d.done < d.total && mean > 0.0 {
                eta = eta.max((d.total - d.done) as f64 / mean);
            }
            let of = d.passes.map_or(String::new(), |n| format!("/{n}"));
            tell!(
                "{now} burnin: {} pass {}{of} {} {:.0}%{speed}",
                d.name,
                d.pass,
                d.phase,
                d.phase_pct
            );
        }
        if let Some(end) = deadline {
            eta = end.saturating_duration_since(Instant::now()).as_secs_f64();
        }
        if eta > 0.0 {
            let s = eta as u64;
            tell!("{now} burnin: whole run ETA {}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_left_adds_the_sampled_groups_and_names_the_whole_disk_ones() {
        let s = Duration::from_secs;
        // 24 serial disks of 60 s, then a parallel pass of 60 s.
        let later = vec![Some(s(60)); 24];
        assert_eq!(run_left(&later, s(60)), "about 25 min 0 s left");
        assert_eq!(
            run_left(&[Some(s(60)), None], s(30)),
            "about 1 min 30 s left plus 1 whole-disk read(s)"
        );
    }
}

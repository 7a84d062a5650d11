//! Live progress on stderr, fed by the aggregator: on a terminal a live
//! table (`board`: a summary line over a cell per disk that fits the
//! window), plain periodic lines otherwise (these runs live in tmux and log
//! files for hours, so each line carries the local time). The run's
//! schedule is announced up front (a 24-disk serial pass is 24 minutes) and
//! counted down. It only displays what the aggregator hands it.
//!
//! The burn-in's lines ([`BurnLines`]) are fed by its watch the same way.
//!
//! It must not judge (no verdict is shown before the report) and is not an
//! exporter: a finished report is `export`'s.

use std::time::{Duration, Instant};

use crate::measure::{DiskProgress, DiskRun, Observer, PassKind, ReadError, Stopped, Window};
use crate::units::{human_bytes, human_duration, mb_per_s};

/// How progress is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// The live table, on a terminal.
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
    /// When the live table was drawn last.
    drawn: Option<Instant>,
    /// How long each group of the run (a serial disk, the parallel pass,
    /// the seek pass) lasts: its sample, or None for a whole-disk read.
    schedule: Vec<Option<Duration>>,
    /// Groups started so far.
    groups_started: usize,
}

/// How often the live table is drawn.
const DRAW_EVERY: Duration = Duration::from_millis(250);

impl Progress {
    /// A display for disks named `labels` (their paths as given; shown
    /// with their control characters as escapes).
    pub fn new(style: Style, labels: Vec<String>, interval: Duration) -> Self {
        let labels = labels.iter().map(|l| crate::escape::terminal(l)).collect();
        Self {
            style,
            labels,
            interval,
            last_line: None,
            drawn: None,
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
        // Said above the live table and in the run's log, a device path's
        // control characters as escapes (by `tell`).
        if self.style == Style::Lines {
            tell!("{stamp} {text}");
        } else {
            tell!("{text}");
        }
    }

    /// A group of random reads starts: `disk` alone (None: every disk at
    /// once) at `depth` for `length`.
    pub fn random_started(&mut self, disk: Option<usize>, depth: usize, length: Duration) {
        let who = match disk {
            Some(d) => format!("{} alone", self.labels[d]),
            None => "every disk at once".into(),
        };
        if self.style != Style::Quiet {
            let later = self.schedule.get(self.groups_started + 1..).unwrap_or(&[]);
            self.line(&format!(
                "arrayburn: random reads: {who} at depth {depth} for {} ({})",
                human_duration(length),
                run_left(later, length)
            ));
        }
        self.drawn = None;
        self.groups_started += 1;
    }

    /// A disk's neighbour pass starts: its random reads alone, then beside
    /// `neighbours` seeking, `length` each.
    pub fn neighbours_started(&mut self, disk: usize, neighbours: &[usize], length: Duration) {
        if self.style != Style::Quiet {
            let near: Vec<&str> = neighbours.iter().map(|n| self.labels[*n].as_str()).collect();
            let later = self.schedule.get(self.groups_started + 1..).unwrap_or(&[]);
            self.line(&format!(
                "arrayburn: neighbour pass: {} alone, then while {} seek, {} each ({})",
                self.labels[disk],
                near.join(" "),
                human_duration(length),
                run_left(later, (length + crate::measure::LOAD_LEAD) * 2)
            ));
        }
        self.drawn = None;
        self.groups_started += 1;
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

impl Progress {
    /// The live table: a cell per disk, the pass's summary above.
    fn table(&mut self, kind: PassKind, disks: &[DiskProgress]) {
        let (mut cells, mut total, mut group_left) = (Vec::new(), 0.0, Duration::ZERO);
        for p in disks {
            let (frac, rate, left) = estimate(p);
            total += rate;
            group_left = group_left.max(left);
            let figures =
                format!(" {:>3.0}% {:>5.0} MB/s ETA {}", frac * 100.0, rate, human_duration(left));
            cells.push(crate::board::Cell { name: self.labels[p.disk].clone(), figures });
        }
        let run = if self.schedule.is_empty() {
            String::new()
        } else {
            format!("; run: {}", run_left(self.later(), group_left))
        };
        let summary = format!(
            "arrayburn: {} pass, {} disk(s), {total:.0} MB/s{run}",
            kind.name(),
            disks.len()
        );
        draw(&summary, &cells);
    }

    /// A line per disk, and the run's time left.
    fn lines(&mut self, kind: PassKind, disks: &[DiskProgress]) {
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
}

impl Observer for Progress {
    fn group_started(&mut self, kind: PassKind, disks: &[usize]) {
        let names: Vec<&str> = disks.iter().map(|d| self.labels[*d].as_str()).collect();
        match self.style {
            Style::Bars => {
                self.drawn = None;
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
                if self.drawn.is_some_and(|t| t.elapsed() < DRAW_EVERY) {
                    return;
                }
                self.drawn = Some(Instant::now());
                self.table(kind, disks);
            }
            Style::Lines => {
                if self.last_line.is_some_and(|t| t.elapsed() < self.interval) {
                    return;
                }
                self.last_line = Some(Instant::now());
                self.lines(kind, disks);
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
        if self.style == Style::Bars {
            // The group's table gives way to its results.
            crate::tell::redraw("");
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
#[derive(Debug, Clone)]
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
    /// Whether it is writing (or flushing) now, and bytes it has left to
    /// write and to read in all.
    pub writing: bool,
    pub left: (u64, u64),
    /// What ended its run early, in the progress's word (`"HUNG"`,
    /// `"GONE"`), shown in place of a speed; None while it runs.
    pub ended: Option<&'static str>,
    /// A burn-in fitted to a deadline: the stripe it burns (from 1), of
    /// how many.
    pub stripe: Option<(u64, u64)>,
}

/// Bytes left to write and to read for a disk at `pass` (from 1) of
/// `passes` over a range of `len` bytes, `into` bytes through its phase
/// (`writing`, else reading back); a soak (`writes` false) only reads.
pub fn bytes_left(
    len: u64,
    (pass, passes): (u16, u16),
    (writing, into): (bool, u64),
    writes: bool,
) -> (u64, u64) {
    let later = u64::from(passes.saturating_sub(pass)) * len;
    let rest = len - into.min(len);
    match (writes, writing) {
        (false, _) => (0, later + rest),
        (true, true) => (later + rest, later + len),
        (true, false) => (later, later + rest),
    }
}

/// One disk's pace so far: bytes and seconds spent writing and reading
/// back, each counted only between two looks that saw the same phase.
#[derive(Debug, Clone, Copy, Default)]
struct Pace {
    write: (u64, f64),
    read: (u64, f64),
    /// At the last look: bytes done and whether it was writing.
    last: Option<(u64, bool)>,
}

impl Pace {
    fn look(&mut self, done: u64, writing: bool, secs: f64) {
        if let Some((before, was)) = self.last
            && was == writing
        {
            let into = if writing { &mut self.write } else { &mut self.read };
            into.0 += done.saturating_sub(before);
            into.1 += secs;
        }
        self.last = Some((done, writing));
    }

    /// Bytes per second, once something was moved.
    fn speed((bytes, secs): (u64, f64)) -> Option<f64> {
        (bytes > 0 && secs > 0.0).then(|| bytes as f64 / secs)
    }

    /// Seconds to move `(write, read)` bytes: the writes at the write
    /// speed seen, the reads at the read speed seen or, before any, at
    /// `guess` (the speed read before the run); None while a speed that is
    /// needed is not known.
    fn time_left(&self, (write, read): (u64, u64), guess: Option<f64>) -> Option<f64> {
        let w = if write == 0 { 0.0 } else { write as f64 / Self::speed(self.write)? };
        let r = match Self::speed(self.read).or(guess) {
            _ if read == 0 => 0.0,
            Some(v) => read as f64 / v,
            None => return None,
        };
        Some(w + r)
    }
}

/// The burn-in's progress: a line per disk every interval (with a time
/// stamp: these go to logs), and the whole run's ETA: each disk's writes
/// left at its write speed and its reads left at its read speed (before
/// it has read any, at the speed read before the run), the slowest disk's
/// (a soak run by time: its deadline). On a terminal (`table`) the lines
/// go to the run's log only, and a live table (`board`) is drawn every
/// second instead.
pub struct BurnLines {
    every: Duration,
    table: bool,
    /// Whether anything is said or drawn (else only the ETA is reckoned,
    /// for the metrics).
    say: bool,
    last: Instant,
    logged: Instant,
    paces: Vec<Pace>,
    /// Each disk's read speed before the run, bytes/s.
    guesses: Vec<Option<f64>>,
}

/// How often the live table is drawn.
const TABLE_EVERY: Duration = Duration::from_secs(1);

impl BurnLines {
    /// `(every, table)`: the lines' interval and whether a table is drawn;
    /// `guesses`: each disk's read speed measured before the run, MB/s.
    pub fn new((every, table): (Duration, bool), guesses: &[Option<f64>]) -> Self {
        Self {
            every,
            table,
            say: true,
            last: Instant::now(),
            logged: Instant::now(),
            paces: Vec::new(),
            guesses: guesses.iter().map(|g| g.map(|v| v * 1e6)).collect(),
        }
    }

    /// One that says nothing: it reckons the ETA every `every`.
    pub fn silent(every: Duration, guesses: &[Option<f64>]) -> Self {
        Self { say: false, ..Self::new((every, false), guesses) }
    }

    /// True when the next look is due.
    pub fn due(&self) -> bool {
        let every = if self.table { self.every.min(TABLE_EVERY) } else { self.every };
        self.last.elapsed() >= every
    }

    /// A line per disk, then the ETA (`deadline`: a soak's end): said, or
    /// logged and drawn as the table. The whole run's ETA in seconds,
    /// where known.
    pub fn show(&mut self, disks: &[BurnTick], deadline: Option<Instant>) -> Option<f64> {
        let dt = self.last.elapsed().as_secs_f64();
        self.last = Instant::now();
        self.paces.resize(disks.len(), Pace::default());
        let now = crate::units::log_stamp();
        let mut eta: Option<f64> = Some(0.0);
        let mut lines = Vec::new();
        let mut cells = Vec::new();
        let mut total_speed = 0.0;
        for (i, d) in disks.iter().enumerate() {
            // No speed before a second look: nothing was measured yet.
            let speed = self.paces[i].last.map(|(s, _)| d.done.saturating_sub(s) as f64 / dt / 1e6);
            self.paces[i].look(d.done, d.writing, dt);
            if d.done < d.total {
                let guess = self.guesses.get(i).copied().flatten();
                let disk = self.paces[i].time_left(d.left, guess);
                eta = eta.zip(disk).map(|(a, b)| a.max(b));
            }
            let of = d.passes.map_or(String::new(), |n| format!("/{n}"));
            let shown = match d.ended {
                Some(word) => format!(" {word}"),
                None => speed.map_or(String::new(), |v| format!(" {v:.0} MB/s")),
            };
            let stripe = d.stripe.map(|(n, of)| format!(" stripe {n}/{of}")).unwrap_or_default();
            lines.push(format!(
                "{now} burnin: {}{stripe} pass {}{of} {} {:.0}%{shown}",
                d.name, d.pass, d.phase, d.phase_pct
            ));
            let v = speed.map_or("-".into(), |v| format!("{v:.0}"));
            let figures = match d.ended {
                Some(word) => {
                    format!(" p{} {:<6} {:>3.0}% {word:>8}", d.pass, d.phase, d.phase_pct)
                }
                None => format!(" p{} {:<6} {:>3.0}% {v:>5} MB/s", d.pass, d.phase, d.phase_pct),
            };
            cells.push(crate::board::Cell { name: d.name.clone(), figures });
            total_speed += speed.unwrap_or(0.0);
        }
        if let Some(end) = deadline {
            eta = Some(end.saturating_duration_since(Instant::now()).as_secs_f64());
        }
        let seconds = eta.filter(|&e| e > 0.0);
        if !self.say {
            return seconds;
        }
        let eta = seconds.map(|e| {
            let s = e as u64;
            format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        });
        if let Some(e) = &eta {
            lines.push(format!("{now} burnin: whole run ETA {e}"));
        }
        if !self.table {
            lines.iter().for_each(|l| tell!("{l}"));
            return seconds;
        }
        if self.logged.elapsed() >= self.every {
            self.logged = Instant::now();
            crate::tell::log(&lines.join("\n"), true);
        }
        draw(&summary(disks, total_speed, eta.as_deref()), &cells);
        seconds
    }

    /// Leaves the table as it was last drawn: what follows goes below it.
    pub fn finish(&self) {
        if self.table && self.say {
            crate::tell::settle();
        }
    }
}

/// Draws the live table (`board`) for the terminal's size.
pub fn draw(summary: &str, cells: &[crate::board::Cell]) {
    let size = console::Term::stderr().size_checked().unwrap_or((24, 80));
    let size = (usize::from(size.0), usize::from(size.1));
    let block = crate::board::render(summary, cells, size);
    crate::tell::redraw(&(block.join("\n") + "\n"));
}

/// The table's first line: disks done of all, their MB/s together, where
/// the first unfinished disk stands, the ETA.
fn summary(disks: &[BurnTick], speed: f64, eta: Option<&str>) -> String {
    let done = disks.iter().filter(|d| d.done >= d.total).count();
    let phase = disks.iter().find(|d| d.done < d.total).map_or(String::new(), |d| {
        let of = d.passes.map_or(String::new(), |n| format!("/{n}"));
        format!(", pass {}{of} {}", d.pass, d.phase)
    });
    let eta = eta.map_or(String::new(), |e| format!(", ETA {e}"));
    format!("arrayburn burnin: {done}/{} disks done, {speed:.0} MB/s{phase}{eta}", disks.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_left_count_the_writes_and_reads_of_this_pass_and_the_later_ones() {
        // Pass 1 of 2 over 100 bytes, 40 into the write: 60 + 100 to write,
        // 200 to read; 40 into the read-back: 100 to write, 60 + 100 to read.
        assert_eq!(bytes_left(100, (1, 2), (true, 40), true), (160, 200));
        assert_eq!(bytes_left(100, (1, 2), (false, 40), true), (100, 160));
        assert_eq!(bytes_left(100, (2, 2), (false, 100), true), (0, 0));
        // A soak only reads.
        assert_eq!(bytes_left(100, (1, 3), (false, 50), false), (0, 250));
    }

    #[test]
    fn the_time_left_prices_writes_and_reads_at_their_own_speeds() {
        let mut p = Pace::default();
        // Two looks a second apart while writing at 10 bytes/s.
        p.look(0, true, 0.0);
        p.look(10, true, 1.0);
        // 100 bytes to write (10 s), 100 to read: at the guess of 50/s
        // before any read (2 s), then at the 25/s read.
        assert_eq!(p.time_left((100, 100), Some(50.0)), Some(12.0));
        assert_eq!(p.time_left((100, 100), None), None);
        // The look across the phase change counts for neither phase.
        p.look(30, false, 1.0);
        p.look(55, false, 1.0);
        assert_eq!(p.time_left((0, 100), Some(50.0)), Some(4.0));
    }

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

//! `arrayburn watch`: resolves the disks (without opening them), watches
//! them (`run::watch`), and says each window: a line per disk (plain, for
//! logs and terminals alike), JSON lines appended to `--json`, and each
//! finding as it begins and ends.

use std::io::{IsTerminal, Write};

use anyhow::{Context, Result, bail};

use crate::cli::{BurnProgress, WatchArgs};
use crate::device::{self, SystemPaths, sysfs};
use crate::header::{Header, Kind};
use crate::judge::watch::Standing;
use crate::notify::Notifier;
use crate::outcome::Outcome;
use crate::output::{Output, named, refuse_duplicates};
use crate::run::watch::{Event, Pace, Start, Tick, Watched, groups, watch};
use crate::stop::StopFlag;

pub fn run(args: &WatchArgs, stop: &StopFlag) -> Result<Outcome> {
    let paths = SystemPaths::real();
    let disks = resolve(&paths, &args.devices)?;
    let metrics = (args.metrics.as_deref())
        .map(|p| Output::resolve("--metrics", p, false))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if let (Some(m), Some(j)) = (&metrics, &args.json) {
        let j = Output::resolve("--json", j, true).map_err(anyhow::Error::msg)?;
        refuse_duplicates([named(&j), named(m)]).map_err(anyhow::Error::msg)?;
    }
    let mut json = args.json.as_deref().map(lines_to).transpose()?;
    let notifier =
        (args.notify.clone()).map(|command| Notifier { command, timeout: args.notify_timeout });
    let windows = (args.stand_out.as_secs_f64() / args.interval.as_secs_f64()).ceil() as usize;
    let pace = match args.once {
        true => Pace { interval: args.interval, span: 1, count: Some(1) },
        false => Pace { interval: args.interval, span: windows.max(1), count: args.count },
    };
    let table = match args.progress {
        BurnProgress::Table => true,
        BurnProgress::Auto => std::io::stderr().is_terminal(),
        BurnProgress::Lines | BurnProgress::None => false,
    };
    let quiet = args.chatter.quiet || table || args.progress == BurnProgress::None;
    tell!(
        "arrayburn watch: {} disk(s), a window every {}, fail-slow after {} window(s) standing out; no I/O of its own",
        disks.len(),
        crate::units::human_duration(args.interval),
        pace.span
    );
    let header = Header::now(Kind::Watch, std::time::SystemTime::now(), std::env::args().collect());
    let (host, started) = (header.host.clone(), header.started_at.clone());
    if let Some(out) = json.as_mut() {
        let start = Start {
            header,
            interval_s: args.interval.as_secs_f64(),
            for_s: args.stand_out.as_secs_f64(),
            disks: disks.clone(),
        };
        let line = serde_json::to_string(&start).unwrap_or_default();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            tell!("arrayburn watch: --json: the output went away; watching on");
            json = None;
        }
    }
    let export = |t: &Tick, complete: bool| {
        if let Some(out) = &metrics {
            let text = crate::export::metrics::watch(&host, &started, &disks, t, complete).render();
            if let Err(e) = out.write(text.as_bytes(), complete, &StopFlag::default()) {
                tell!("arrayburn watch: --metrics {}: {e}; watching on", out.given.display());
            }
        }
    };
    // A disk gone or with failed commands, a group slow together: acted on
    // (exit 1) as a disk still fail-slow at the end is.
    let mut seen = false;
    let mut last: Option<Tick> = None;
    let mut said = |t: &Tick| {
        if !quiet {
            lines(t);
        }
        seen |= (t.events.iter()).any(|e| {
            matches!(e, Event::Gone { .. } | Event::Errors { .. } | Event::GroupSlow { .. })
        });
        for e in &t.events {
            tell!("arrayburn watch: {}", event_words(e));
            if let Some(n) = &notifier {
                n.send_beside(notice(e), stop);
            }
        }
        if let Some(out) = json.as_mut() {
            let line = serde_json::to_string(t).unwrap_or_default();
            if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                tell!("arrayburn watch: --json: the output went away; watching on");
                json = None;
            }
        }
        export(t, false);
        if table {
            let summary = summary(t, disks.len(), args.interval);
            crate::progress::draw(&summary, &cells(t));
        }
        last = Some(t.clone());
        true
    };
    let slow = watch(&paths, &disks, pace, stop, &mut said);
    if table {
        crate::tell::settle();
    }
    if let Some(t) = &last {
        export(t, true);
    }
    Notifier::sent();
    if stop.is_set() {
        return Ok(Outcome::Interrupted);
    }
    Ok(if slow.is_empty() && !seen { Outcome::Healthy } else { Outcome::Flagged })
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
/// before anything is read.
fn lines_to(given: &std::path::Path) -> Result<Box<dyn Write>> {
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
        Sink::Special(p) => Box::new(
            std::fs::OpenOptions::new()
                .write(true)
                .open(&p)
                .with_context(|| format!("--json {shown}: cannot write there"))?,
        ),
    })
}

/// The disks named (every whole disk with a medium where none is), each
/// by its kernel name and peer group; refused in one line where a name is
/// not a whole disk. Nothing is opened: `stat` and sysfs only.
fn resolve(paths: &SystemPaths, given: &[String]) -> Result<Vec<Watched>> {
    let names: Vec<String> = match given.is_empty() {
        true => (sysfs::disk_names(paths).into_iter())
            .filter(|n| !sysfs::is_virtual(n))
            .map(|n| paths.dev.join(n).to_string_lossy().into_owned())
            .collect(),
        false => given.to_vec(),
    };
    let devices = device::resolve_watched(paths, &names)?;
    if devices.is_empty() {
        bail!("no disks to watch: name them (arrayburn watch /dev/sdb ...)");
    }
    let groups = groups(paths, &devices, &device::pools::zfs());
    Ok((devices.into_iter().zip(groups))
        .map(|(d, (group, pool))| Watched {
            path: d.given,
            name: d.identity.name.clone(),
            group,
            pool,
            id: d.identity,
        })
        .collect())
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
            (false, Standing::Idle) => "idle".to_string(),
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

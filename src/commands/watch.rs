//! `arrayburn watch`: resolves the disks (without opening them) and the
//! outputs (refused in one line before anything is read), watches them
//! (`run::watch`), and hands each window to what says it
//! (`export::watch`).

use std::io::IsTerminal;

use anyhow::{Result, bail};

use crate::cli::{BurnProgress, WatchArgs};
use crate::device::{self, SystemPaths, sysfs};
use crate::export::watch::{Shown, Telling, lines_to};
use crate::header::{Header, Kind};
use crate::notify::Notifier;
use crate::outcome::Outcome;
use crate::output::{Output, named, refuse_duplicates};
use crate::run::watch::{Pace, Start, Watched, groups, watch};
use crate::stop::StopFlag;

pub fn run(args: &WatchArgs, stop: &StopFlag) -> Result<Outcome> {
    let paths = SystemPaths::real();
    let metrics = (args.metrics.as_deref())
        .map(|p| Output::resolve("--metrics", p, false))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if let (Some(m), Some(j)) = (&metrics, &args.json) {
        let j = Output::resolve("--json", j, true).map_err(anyhow::Error::msg)?;
        refuse_duplicates([named(&j), named(m)]).map_err(anyhow::Error::msg)?;
    }
    let disks = resolve(&paths, &args.devices, stop)?;
    let json = match args.json.as_deref().map(|p| lines_to(p, stop)).transpose() {
        // Stopped while its FIFO had no reader: nothing was watched.
        Err(e) if stop.is_set() => {
            tell!("arrayburn watch: interrupted before it began: {e:#}");
            return Ok(Outcome::Interrupted);
        }
        json => json?,
    };
    let windows = (args.stand_out.as_secs_f64() / args.interval.as_secs_f64()).ceil() as usize;
    let pace = match args.once {
        true => Pace { interval: args.interval, span: 1, count: Some(1) },
        false => Pace { interval: args.interval, span: windows.max(1), count: args.count },
    };
    tell!(
        "arrayburn watch: {} disk(s), a window every {}, fail-slow after {} window(s) standing out; no I/O of its own",
        disks.len(),
        crate::units::human_duration(args.interval),
        pace.span
    );
    let start = Start {
        header: Header::now(Kind::Watch, std::time::SystemTime::now(), std::env::args().collect()),
        interval_s: args.interval.as_secs_f64(),
        for_s: args.stand_out.as_secs_f64(),
        disks,
    };
    let mut telling = Telling::new(start.clone(), shown(args), args.interval);
    telling.json = json;
    telling.json_every = args.json_every.unwrap_or_default();
    telling.metrics = metrics;
    telling.notifier =
        (args.notify.clone()).map(|command| Notifier { command, timeout: args.notify_timeout });
    telling.begin(&start);
    let ended = watch(&paths, &start.disks, pace, stop, &mut |t| {
        telling.window(t, stop);
        true
    });
    telling.end();
    Ok(outcome(&ended, telling.flagged, stop))
}

/// The watch's verdict: flagged where a disk is fail-slow at its end (or
/// `flagged`: gone, failed commands, a group slow together), not judged
/// where a disk was never compared with its peers (each said, with why),
/// healthy only where every disk was compared and none stood out.
fn outcome(ended: &crate::run::watch::Watch, flagged: bool, stop: &StopFlag) -> Outcome {
    for (path, why) in &ended.unjudged {
        tell!("arrayburn watch: NOT JUDGED: {path}: never compared with its peers: {why}");
    }
    match (stop.is_set(), ended.named.is_empty() && !flagged, ended.unjudged.is_empty()) {
        (true, _, _) => Outcome::Interrupted,
        (false, false, _) => Outcome::Flagged,
        (false, true, false) => Outcome::NotJudged,
        (false, true, true) => Outcome::Healthy,
    }
}

/// How each window is said: the live table on a terminal (or asked),
/// else a line per disk unless --quiet or --progress none.
fn shown(args: &WatchArgs) -> Shown {
    let table = match args.progress {
        BurnProgress::Table => true,
        BurnProgress::Auto => std::io::stderr().is_terminal(),
        BurnProgress::Lines | BurnProgress::None => false,
    };
    let lines = !(args.chatter.quiet || table || args.progress == BurnProgress::None);
    Shown { lines, table }
}

/// The disks named (every whole disk with a medium where none is), each
/// by its kernel name and peer group; refused in one line where a name is
/// not a whole disk. Nothing is opened: `stat` and sysfs only.
fn resolve(paths: &SystemPaths, given: &[String], stop: &StopFlag) -> Result<Vec<Watched>> {
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
    let groups = groups(paths, &devices, &device::pools::zfs(&|| stop.is_set()));
    Ok((devices.into_iter().zip(groups))
        .map(|(d, (group, pool))| Watched { path: d.given, group, pool, id: d.identity })
        .collect())
}

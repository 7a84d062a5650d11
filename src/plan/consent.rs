//! The burn-in's plan shown before anything is written: each disk, its
//! range and how long it takes at the read speed measured now; a terminal
//! is asked to type yes, a script's `--yes` run prints it as the record of
//! what was destroyed. It must not write.

use std::io::{BufRead, Write};
use std::os::fd::AsFd;
use std::time::Duration;

use anyhow::bail;

use super::burnin::BurnPlan;
use crate::burnin::state::Checkpoint;
use crate::burnin::targets::Target;
use crate::burnin::worker::sample_speed;
use crate::io::Bounds;
use crate::stop::StopFlag;
use crate::units::{human_bytes, human_duration};

/// How long `bytes` take at `mb_per_s`, in words.
fn estimate(bytes: u64, mb_per_s: f64) -> String {
    human_duration(Duration::from_secs_f64(bytes as f64 / (mb_per_s * 1e6)))
}

/// The plan, before anything is written: each disk, and how long its
/// reads take at the speed measured now (1 s of reading); the writes'
/// speed is not known before they run (a disk's cache, SMR, a slow
/// firmware make it anything). The speeds are kept for the progress
/// lines' ETA.
fn announce(plan: &mut BurnPlan) {
    let speeds = speeds_now(plan);
    plan.looks.read_mb_per_s = speeds.clone();
    let c = &plan.disks[0].point;
    if plan.resume {
        tell!(
            "arrayburn burnin: will CONTINUE burn-in {} (started {}), writing and verifying each disk {} time(s) in all:",
            c.run_id,
            c.started_at,
            c.passes
        );
    } else {
        tell!(
            "arrayburn burnin: will DESTROY all data in these ranges, writing ({} pattern) and verifying each {} time(s):",
            c.pattern.name(),
            c.passes
        );
    }
    for (d, speed) in plan.disks.iter().zip(&speeds) {
        tell!("  {}", disk_line(&d.target, &d.point, *speed, plan.resume));
        // A volume's burn-in writes its members through it.
        if let Some(v) = &d.target.dev.identity.volume {
            tell!(
                "  {}: {} of {}: its blocks go to them through it, so a failure is not placed on one drive; burn the drives in before building it",
                d.target.dev.given,
                v.a_kind(),
                v.members.join(", ")
            );
        }
    }
    let work: Vec<(u64, f64)> = (plan.disks.iter().zip(&speeds))
        .filter_map(|(d, v)| v.map(|v| (d.point.left().1, v)))
        .collect();
    if let Some(all) = all_at_once(&work) {
        tell!(
            "  all disks at once: the reads about {all} (the slowest disk, at the speed read now), plus the writes: their speed is not known before they run; the progress lines estimate the whole run from the first intervals"
        );
    }
    if let Some(then) = &plan.then_verify {
        let idle = match then.idle.is_zero() {
            true => String::new(),
            false => format!(" idle {}, then", human_duration(then.idle)),
        };
        let disks = ["DISK...".to_string()];
        tell!(
            "  then every disk that finished:{idle} its blocks verified (a run of its own): {}",
            then.shown(&disks)
        );
    }
}

/// One disk of the plan: what it is, the range written, where a resume
/// continues from, and how long it should take at `speed`.
fn disk_line(t: &Target, c: &Checkpoint, speed: Option<f64>, resume: bool) -> String {
    let id = &t.dev.identity;
    let from = if resume { format!("  from {}", c.place()) } else { String::new() };
    let time = match speed {
        Some(v) => format!("reads {v:.0} MB/s now: about {} of reading", estimate(c.left().1, v)),
        None => "(its speed could not be read)".into(),
    };
    format!(
        "{}  {}  {}  serial {}  {}  bytes {}..{}{from}  {time}",
        t.dev.given,
        id.by_id.as_deref().unwrap_or("-"),
        id.model.as_deref().unwrap_or("-"),
        id.serial.as_deref().unwrap_or("-"),
        human_bytes(id.size_bytes),
        t.start,
        t.end,
    )
}

/// Each disk's read speed now, from a second of reading all at once
/// (None for a disk that does not answer).
fn speeds_now(plan: &BurnPlan) -> Vec<Option<f64>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (plan.disks.iter())
            .map(|d| {
                let bounds = Bounds::new(&StopFlag::default(), plan.bounds_timeout);
                let io = d.point.io_bytes as usize;
                s.spawn(move || sample_speed(&d.target, io, Duration::from_secs(1), &bounds))
            })
            .collect();
        handles.into_iter().map(|h| h.join().ok().flatten()).collect()
    })
}

/// How long disks with (bytes left, MB/s) take side by side: as long as
/// the slowest; None when nothing is left.
fn all_at_once(work: &[(u64, f64)]) -> Option<String> {
    work.iter()
        .filter(|(b, v)| *b > 0 && *v > 0.0)
        .max_by(|a, b| (a.0 as f64 / a.1).total_cmp(&(b.0 as f64 / b.1)))
        .map(|(b, v)| estimate(*b, *v))
}

/// A terminal is shown the plan and asked; with `--yes` (a script: `run`
/// refuses one without it) the plan is printed as the record of what was
/// destroyed. False when a signal came while it asked.
pub fn consent(plan: &mut BurnPlan, stop: &StopFlag) -> anyhow::Result<bool> {
    announce(plan);
    if plan.yes {
        return Ok(true);
    }
    typed_yes(
        &format!("Type yes to destroy the data on these {} disk(s): ", plan.disks.len()),
        stop,
    )
}

/// Asks `question` on the terminal and waits for the answer without
/// blocking a signal: true for "yes", false when a signal came while it
/// asked; any other answer refuses (nothing was written).
pub fn typed_yes(question: &str, stop: &StopFlag) -> anyhow::Result<bool> {
    tell_part!("{question}");
    let _ = std::io::stderr().flush();
    loop {
        if stop.is_set() {
            tell!();
            return Ok(false);
        }
        let fd = std::io::stdin();
        let mut poll = [nix::poll::PollFd::new(fd.as_fd(), nix::poll::PollFlags::POLLIN)];
        match nix::poll::poll(&mut poll, nix::poll::PollTimeout::from(100u16)) {
            Ok(0) => continue,
            Err(nix::errno::Errno::EINTR) => continue,
            _ => break,
        }
    }
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed (nothing was written)");
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_in_words() {
        assert_eq!(estimate(20_000_000_000_000 * 2, 250.0), "44 h 26 min");
        assert_eq!(estimate(130_000_000_000, 1000.0), "2 min 10 s");
        // Side by side, the slowest decides (it said 1e6 times too long).
        assert_eq!(
            all_at_once(&[(130_000_000_000, 1000.0), (130_000_000_000, 500.0), (0, 1.0)])
                .as_deref(),
            Some("4 min 20 s")
        );
        assert_eq!(all_at_once(&[(0, 100.0)]), None);
    }
}

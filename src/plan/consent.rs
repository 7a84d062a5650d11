//! The burn-in's plan shown before anything is written: each disk, its
//! range and how long it takes at the read speed measured now; a terminal
//! is asked to type yes, a script's `--yes` run prints it as the record of
//! what was destroyed. It must not write.

use std::io::{BufRead, Write};
use std::os::fd::AsFd;
use std::time::Duration;

use anyhow::bail;

use super::burnin::BurnPlan;
use crate::burnin::estimate::{Basis, Estimate, Speeds};
use crate::burnin::worker::sample_speed;
use crate::grid::Grid;
use crate::io::Bounds;
use crate::stop::StopFlag;
use crate::units::{human_bytes, human_duration};

use crate::units::human_secs as took;

/// How long each disk's reads are timed before asking (reading is safe).
const SAMPLE: Duration = Duration::from_secs(2);

/// The plan, before anything is written: a table of the disks (a line
/// each, in the terminal's width), how long each takes and all of them
/// side by side, and what that rests on: this run's own speeds on a
/// resume, else a few seconds of reads of each disk now (its writes taken
/// as fast), else its model's rated speed. The read speeds are kept for
/// the progress lines' ETA, the estimate for the report's `plan`.
fn announce(plan: &mut BurnPlan, stop: &StopFlag) {
    let speeds = speeds_now(plan, stop);
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
    let mut estimate = estimate(plan, &speeds);
    let fitted = plan.fit_deadline(&mut estimate);
    let (table, left_out) = plan_table(plan, &estimate).text_in(crate::width::of_stderr());
    tell!("{table}");
    if !left_out.is_empty() {
        tell!("  (left out at this width: {})", left_out.join(", "));
    }
    for d in &plan.disks {
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
    tell!("  {}", in_all(&estimate, plan.disks.len()));
    for line in fitted.into_iter().chain(plan.wear_lines()) {
        tell!("  {line}");
    }
    if let Some(then) = &plan.then_verify {
        tell!("  {}", then_words(then));
    }
    plan.estimate = Some(estimate);
}

/// The verify that follows a burn-in, in the plan's words.
fn then_words(then: &super::verify::ThenVerify) -> String {
    let idle = match then.idle.is_zero() {
        true => String::new(),
        false => format!(" idle {}, then", human_duration(then.idle)),
    };
    let disks = ["DISK...".to_string()];
    format!(
        "then every disk that finished:{idle} its blocks verified (a run of its own): {}",
        then.shown(&disks)
    )
}

/// Each disk's estimate from the speeds known now (`read_now`: each
/// disk's reads just timed).
fn estimate(plan: &BurnPlan, read_now: &[Option<f64>]) -> Estimate {
    let ratings = crate::judge::rated::built_in();
    let writes = !plan.read_only;
    let each = plan.disks.iter().zip(read_now).map(|(d, now)| {
        let (c, path) = (&d.point, d.target.dev.given.clone());
        let mb = |bytes: u64, s: f64| (s > 0.0).then(|| bytes as f64 / s / 1e6);
        let b = &c.burn;
        let rated = (d.target.dev.identity.model.as_deref())
            .and_then(|m| crate::judge::rated::lookup(&ratings, m))
            .map(|r| r.mb_per_s);
        let speeds = Speeds {
            this_run: (mb(b.written_bytes, b.write_s), mb(b.verified_bytes, b.verify_s)),
            read_now: *now,
            rated,
        };
        let range = c.end_byte - c.start_byte;
        let e = crate::burnin::estimate::disk(&path, &speeds, range, c.left(), writes);
        (path, e)
    });
    crate::burnin::estimate::all(each.collect())
}

/// The plan's table: a disk a line, its range, where a resume goes on,
/// the speeds its estimate uses and on what, one pass and what is left.
fn plan_table(plan: &BurnPlan, e: &Estimate) -> Grid {
    // Where each disk goes on from: a resume's column only.
    let from = usize::from(plan.resume);
    let mut head = vec!["Disk", "By-id", "Model", "Serial", "Size", "Range"];
    head.extend(["From"].iter().take(from));
    head.extend(["MB/s", "On", "1 pass", "Left"]);
    let mut g = Grid::new(&head).numbers(6 + from..7 + from).optional(&[1, 3, 5, 7 + from, 2, 6]);
    for d in &plan.disks {
        let (t, c, id) = (&d.target, &d.point, &d.target.dev.identity);
        let whole = t.start == 0 && t.end == id.size_bytes;
        let range = match whole {
            true => "whole".to_string(),
            false => format!("{}..{}", human_bytes(t.start), human_bytes(t.end)),
        };
        let by_id = id.by_id.as_deref().and_then(|p| p.rsplit('/').next()).unwrap_or("-");
        let mut row: Vec<String> = vec![
            t.dev.given.clone(),
            by_id.into(),
            id.model.clone().unwrap_or_else(|| "-".into()),
            id.serial.clone().unwrap_or_else(|| "-".into()),
            human_bytes(id.size_bytes),
            range,
        ];
        row.extend([c.place()].into_iter().take(from));
        match e.disks.iter().find(|x| x.path == t.dev.given) {
            Some(x) => {
                let (w, r) = (x.write_mb_per_s, x.read_mb_per_s);
                let mb = match plan.read_only || (w - r).abs() < 0.5 {
                    true => format!("{r:.0}"),
                    false => format!("{w:.0}/{r:.0}"),
                };
                row.extend([mb, x.basis.word().into(), took(x.one_pass_s), took(x.left_s)]);
            }
            None => row.extend(["-", "not known", "-", "-"].map(String::from)),
        }
        g.row(row);
    }
    g
}

/// The estimate in all, and what it rests on.
fn in_all(e: &Estimate, disks: usize) -> String {
    let mut on: Vec<&str> = Vec::new();
    for d in &e.disks {
        let said = match d.basis {
            Basis::ThisRun => "this run's own writes and reads so far",
            Basis::ReadNow => {
                "2 s of reads of each disk now, the writes taken as fast (a drive's cache, SMR or firmware can make them slower; the progress lines correct it)"
            }
            Basis::Rated => "the model's rated speed, for writes and reads alike",
        };
        if !on.contains(&said) {
            on.push(said);
        }
    }
    let unknown = match e.unknown.is_empty() {
        true => String::new(),
        false => format!("; not known for {} (it did not answer the reads)", e.unknown.join(", ")),
    };
    if e.disks.is_empty() {
        return format!("how long it takes is not known{unknown}");
    }
    let side = if disks > 1 { ", the disks side by side (the slowest decides)" } else { "" };
    format!("in all about {}{side}; on {}{unknown}", took(e.all_s), on.join("; "))
}

/// Each disk's read speed now, from [`SAMPLE`] of reading all at once
/// (None for a disk that does not answer, and where a signal stops it).
fn speeds_now(plan: &BurnPlan, stop: &StopFlag) -> Vec<Option<f64>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (plan.disks.iter())
            .map(|d| {
                let bounds = Bounds::new(stop, plan.bounds_timeout);
                let io = d.point.io_bytes as usize;
                s.spawn(move || sample_speed(&d.target, io, SAMPLE, &bounds))
            })
            .collect();
        handles.into_iter().map(|h| h.join().ok().flatten()).collect()
    })
}

/// A terminal is shown the plan and asked; with `--yes` (a script: `run`
/// refuses one without it) the plan is printed as the record of what was
/// destroyed. False when a signal came while it asked.
pub fn consent(plan: &mut BurnPlan, stop: &StopFlag) -> anyhow::Result<bool> {
    announce(plan, stop);
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
    fn the_plan_says_in_all_how_long_and_on_what() {
        let e = crate::burnin::estimate::all(vec![(
            "/dev/sda".into(),
            crate::burnin::estimate::disk(
                "/dev/sda",
                &Speeds { read_now: Some(250.0), ..Speeds::default() },
                20_000_000_000_000,
                (20_000_000_000_000, 20_000_000_000_000),
                true,
            ),
        )]);
        let said = in_all(&e, 1);
        assert!(said.starts_with("in all about 44 h 26 min; on 2 s of reads"), "{said}");
    }
}

//! SMART around a burn-in: each disk's reading before anything is written
//! (or why there is none), the drives' self-tests first where asked, and the
//! reading after the run. It reads and starts; what rose is judged by
//! `judge::burnin`, never here.

use std::time::{Duration, Instant};

use anyhow::bail;

use super::DiskPlan;
use super::smart::{self, DriveKind, SelfTest, SmartChange, SmartMode, Snapshot, TestKind};
use super::targets::Target;
use crate::device::smartctl::{self, Feature};
use crate::stop::StopFlag;
use crate::units::human_duration;

/// Each disk's SMART before anything is written, or why there is none.
/// `require` refuses a disk without it (nothing written); `auto` says once
/// that smartctl is missing and goes on.
pub fn smart_before(
    targets: &[Target],
    mode: SmartMode,
    give_up: &dyn Fn() -> bool,
) -> anyhow::Result<Vec<Result<Snapshot, String>>> {
    if mode == SmartMode::Off {
        return Ok(targets.iter().map(|_| Err("--smart off".into())).collect());
    }
    let read: Vec<Result<Snapshot, String>> =
        targets.iter().map(|t| smart::read(&t.dev.given, give_up)).collect();
    for (t, r) in targets.iter().zip(&read) {
        if let (SmartMode::Require, Err(why)) = (mode, r) {
            bail!(
                "--smart require: {} has no SMART to read ({why}); use --smart auto to burn it in without (nothing was written)",
                t.dev.given
            );
        }
    }
    if read.iter().any(|r| r.as_ref().is_err_and(|w| w.starts_with("smartctl could not run"))) {
        tell!(
            "arrayburn burnin: smartctl not found: SMART is not compared (install smartmontools, or --smart off to say so)"
        );
    }
    Ok(read)
}

/// A reading as a checkpoint keeps it: the snapshot, or why there is none.
pub fn split(read: Result<Snapshot, String>) -> (Option<Snapshot>, Option<String>) {
    match read {
        Ok(s) => (Some(s), None),
        Err(why) => (None, Some(why)),
    }
}

/// SMART after the run against SMART before it (not read when a signal
/// stopped the run, or stops this reading: it is read when the run is
/// done).
pub fn smart_after(disk: &DiskPlan, interrupted: bool, stop: &StopFlag) -> SmartAfter {
    let c = &disk.point;
    match (&c.smart_before, interrupted || stop.is_set()) {
        (Some(_), true) => (None, Some("read at the end of the run".into())),
        (Some(b), false) => match smart::read(&disk.target.dev.given, &|| stop.is_set()) {
            Ok(a) => (Some(SmartChange::of(b.clone(), a)), None),
            Err(why) => (None, Some(format!("after the run: {why}"))),
        },
        (None, _) => (None, c.smart_note.clone()),
    }
}

/// SMART over the run (what rose), or why there is no comparison.
pub type SmartAfter = (Option<SmartChange>, Option<String>);

/// Runs every disk's self-test at once before the burn-in and waits for
/// them (as [`run_self_tests`]); each result goes with its checkpoint.
pub fn self_tests(disks: &mut [DiskPlan], kind: TestKind, limit: Duration, stop: &StopFlag) {
    let drives: Vec<Drive> = disks.iter().map(Drive::of).collect();
    let Some(state) = run_self_tests(&drives, kind, (limit, "before the burn-in"), stop) else {
        return;
    };
    for (d, s) in disks.iter_mut().zip(state) {
        d.point.self_test = Some((kind, s));
    }
}

/// A disk as its self-test is run: its path, and whether it is NVMe (by
/// its SMART before the run).
pub struct Drive<'a> {
    pub path: &'a str,
    pub nvme: bool,
    /// How long each self-test takes, as the drive said before the run.
    pub minutes: &'a [(TestKind, u64)],
}

impl<'a> Drive<'a> {
    pub fn of(d: &'a DiskPlan) -> Self {
        let before = d.point.smart_before.as_ref();
        let nvme = before.is_some_and(|b| b.drive == Some(DriveKind::Nvme));
        let minutes = before.map_or(&[][..], |b| b.self_test_minutes.as_slice());
        Self { path: &d.target.dev.given, nvme, minutes }
    }
}

/// Runs every drive's self-test at once and waits for them (polled at 1,
/// 3, 7, 15, 31 s, then every 30 s) for at most `limit`: a self-test still
/// running then is aborted and is a finding (a drive stuck at "running
/// 10 %" would otherwise hold the run). Each drive's result; None when a
/// signal stopped them (aborted: `smartctl -X`). `when` says which, in
/// the line that tells they run.
pub fn run_self_tests(
    drives: &[Drive],
    kind: TestKind,
    (limit, when): (Duration, &str),
    stop: &StopFlag,
) -> Option<Vec<SelfTest>> {
    let give_up = || stop.is_set();
    // An NVMe drive's self-test is asked only of a smartctl that can start
    // and read one; a conveyance test only of an ATA drive.
    let release = smartctl::installed(&give_up);
    let mut state: Vec<SelfTest> = (drives.iter())
        .map(|d| {
            if let Some(why) = Feature::NvmeSelfTest.lacking(release).filter(|_| d.nvme) {
                return SelfTest::Unknown(why);
            }
            if d.nvme && kind == TestKind::Conveyance {
                return SelfTest::Unknown("NVMe drives have no conveyance self-test".into());
            }
            match smart::start_self_test(d.path, kind, &give_up) {
                Ok(()) => SelfTest::Running(None),
                Err(why) => SelfTest::Unknown(why),
            }
        })
        .collect();
    let which = kind.word();
    if running(&state) {
        let expected = (drives.iter())
            .filter_map(|d| d.minutes.iter().find(|(k, _)| *k == kind).map(|(_, m)| *m))
            .max()
            .map(|m| format!("the drives expect up to {m} min; "))
            .unwrap_or_default();
        tell!(
            "arrayburn burnin: running the drives' {which} SMART self-test {when} ({expected}at most {})",
            human_duration(limit)
        );
    }
    wait_for_self_tests(drives, &mut state, (which, limit), stop).then_some(state)
}

/// Whether a self-test of these is still running.
fn running(state: &[SelfTest]) -> bool {
    state.iter().any(|x| matches!(x, SelfTest::Running(_)))
}

/// Polls the running self-tests until none runs or `limit` is up (those
/// still running then fail, aborted); false when a signal stopped them
/// (aborted too).
fn wait_for_self_tests(
    disks: &[Drive],
    state: &mut [SelfTest],
    (which, limit): (&str, Duration),
    stop: &StopFlag,
) -> bool {
    let give_up = || stop.is_set();
    let began = Instant::now();
    let mut wait = Duration::from_secs(1);
    let mut said = Instant::now();
    while running(state) {
        let until = (Instant::now() + wait).min(began + limit);
        while Instant::now() < until {
            if stop.is_set() {
                abort_self_tests(disks, state);
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if began.elapsed() >= limit {
            abort_self_tests(disks, state);
            time_up(state, which, limit);
            break;
        }
        wait = (wait * 2).min(Duration::from_secs(30));
        for (d, s) in disks.iter().zip(state.iter_mut()) {
            if matches!(s, SelfTest::Running(_)) {
                *s = match smart::poll_self_test(d.path, &give_up) {
                    // A poll that could not be read keeps it running.
                    SelfTest::Unknown(_) if stop.is_set() => s.clone(),
                    now => now,
                };
            }
        }
        if said.elapsed() >= Duration::from_secs(60) {
            said = Instant::now();
            tell_running(disks, state);
        }
    }
    true
}

/// What is left of a self-test still running, in words.
fn left_words(left: Option<u64>) -> String {
    left.map_or("?".to_string(), |l| format!("{l}%"))
}

/// The self-tests still running when `limit` ran out fail, aborted.
fn time_up(state: &mut [SelfTest], which: &str, limit: Duration) {
    for s in state.iter_mut() {
        if let SelfTest::Running(left) = s {
            *s = SelfTest::Failed(overdue(which, limit, *left));
        }
    }
}

/// Why a self-test that ran out of time failed.
fn overdue(which: &str, limit: Duration, left: Option<u64>) -> String {
    let (limit, left) = (human_duration(limit), left_words(left));
    format!("the {which} self-test did not finish within {limit} ({left} left): aborted")
}

/// A line for each self-test still running, with what is left of it.
fn tell_running(disks: &[Drive], state: &[SelfTest]) {
    let now = crate::units::log_stamp();
    for (d, s) in disks.iter().zip(state) {
        if let SelfTest::Running(left) = s {
            let (disk, left) = (d.path, left_words(*left));
            tell!("{now} burnin: {disk} self-test running, {left} left");
        }
    }
}

/// Aborts the self-tests still running (`smartctl -X`, each given a few
/// seconds: a hung drive does not hold the run).
fn abort_self_tests(disks: &[Drive], state: &[SelfTest]) {
    for (d, s) in disks.iter().zip(state) {
        if matches!(s, SelfTest::Running(_)) {
            let abort = ["-X", d.path];
            let _ = crate::device::smartctl::call(&abort, Duration::from_secs(10), &|| false);
        }
    }
}

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
pub fn self_tests(
    disks: &mut [DiskPlan],
    kind: TestKind,
    limit: Option<Duration>,
    stop: &StopFlag,
) {
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

    /// How long the drive says its `kind` self-test takes (smartctl's
    /// polling time), where it says.
    pub fn stated(&self, kind: TestKind) -> Option<Duration> {
        let m = self.minutes.iter().find(|(k, _)| *k == kind)?.1;
        Some(Duration::from_secs(m * 60))
    }

    /// How long its `kind` self-test is waited for: `given`
    /// (`--smart-test-timeout`), else the drive's own stated time and a
    /// quarter more (at least 10 min more: a drive in use while it tests,
    /// a slow last percent), else the fixed default where it states none.
    pub fn limit(&self, kind: TestKind, given: Option<Duration>) -> Duration {
        given.unwrap_or_else(|| match self.stated(kind) {
            Some(t) => t + (t / 4).max(Duration::from_secs(600)),
            None => default_limit(kind),
        })
    }

    /// The warning for a `given` limit shorter than the drive's own
    /// stated time: said before the run, since its test cannot finish.
    pub fn too_short(&self, kind: TestKind, given: Option<Duration>) -> Option<String> {
        let (given, stated) = (given?, self.stated(kind)?);
        (given < stated).then(|| {
            format!(
                "--smart-test-timeout {} is shorter than the {} {} says its {} self-test takes: it will be aborted unfinished and not judged",
                human_duration(given),
                human_duration(stated),
                self.path,
                kind.word()
            )
        })
    }
}

/// The wait for a drive that states no time for its `kind` self-test.
fn default_limit(kind: TestKind) -> Duration {
    match kind {
        TestKind::Short | TestKind::Conveyance => crate::defaults::SHORT_SELF_TEST,
        TestKind::Long => crate::defaults::LONG_SELF_TEST,
    }
}

/// Runs every drive's self-test at once and waits for them (polled at 1,
/// 3, 7, 15, 31 s, then every 30 s), each for at most its own limit
/// ([`Drive::limit`]: `given`, else the drive's stated time): a self-test
/// still running then is aborted and not judged (a drive stuck at
/// "running 10 %" would otherwise hold the run; only the drive's own log
/// saying the test failed is a failure). Each drive's result; None when a
/// signal stopped them (aborted: `smartctl -X`). `when` says which, in
/// the line that tells they run.
pub fn run_self_tests(
    drives: &[Drive],
    kind: TestKind,
    (given, when): (Option<Duration>, &str),
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
    let limits: Vec<Duration> = drives.iter().map(|d| d.limit(kind, given)).collect();
    if running(&state) {
        let expected = (drives.iter())
            .filter_map(|d| d.minutes.iter().find(|(k, _)| *k == kind).map(|(_, m)| *m))
            .max()
            .map(|m| format!("the drives expect up to {m} min; "))
            .unwrap_or_default();
        let most = limits.iter().max().copied().unwrap_or_default();
        tell!(
            "arrayburn burnin: running the drives' {which} SMART self-test {when} ({expected}waiting at most {})",
            human_duration(most)
        );
    }
    let wait = Waits { kind, limits: &limits };
    wait_for_self_tests(drives, &mut state, wait, stop).then_some(state)
}

/// What the waits for a kind of self-test are: each drive's limit.
struct Waits<'a> {
    kind: TestKind,
    limits: &'a [Duration],
}

/// Whether a self-test of these is still running.
fn running(state: &[SelfTest]) -> bool {
    state.iter().any(|x| matches!(x, SelfTest::Running(_)))
}

/// Polls the running self-tests until none runs, each until its own
/// limit is up (one still running then is aborted, unfinished); false when
/// a signal stopped them (aborted too).
fn wait_for_self_tests(
    disks: &[Drive],
    state: &mut [SelfTest],
    waits: Waits,
    stop: &StopFlag,
) -> bool {
    let give_up = || stop.is_set();
    let began = Instant::now();
    let mut wait = Duration::from_secs(1);
    let mut said = Instant::now();
    while running(state) {
        let due = (state.iter().zip(waits.limits))
            .filter(|(s, _)| matches!(s, SelfTest::Running(_)))
            .map(|(_, l)| began + *l)
            .min()
            .unwrap_or(began);
        let until = (Instant::now() + wait).min(due);
        if !stop.rest(until.saturating_duration_since(Instant::now())) || stop.is_set() {
            abort_self_tests(disks, state);
            return false;
        }
        wait = (wait * 2).min(Duration::from_secs(30));
        for ((d, s), limit) in disks.iter().zip(state.iter_mut()).zip(waits.limits) {
            if !matches!(s, SelfTest::Running(_)) {
                continue;
            }
            *s = match smart::poll_self_test(d.path, &give_up) {
                // A poll that could not be read keeps it running.
                SelfTest::Unknown(_) if stop.is_set() => s.clone(),
                now => now,
            };
            if let (SelfTest::Running(left), true) = (&s, began.elapsed() >= *limit) {
                abort_self_test(d);
                *s = SelfTest::Unfinished(unfinished(d, waits.kind, *limit, *left));
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

/// Why a self-test still running at its limit is not judged.
fn unfinished(d: &Drive, kind: TestKind, limit: Duration, left: Option<u64>) -> String {
    let needs = match d.stated(kind) {
        Some(t) => format!("the drive says it needs {}", human_duration(t)),
        None => "the drive states no time for it".to_string(),
    };
    format!(
        "the {} self-test did not finish within {} ({needs}; {} left): aborted, not judged",
        kind.word(),
        human_duration(limit),
        left_words(left)
    )
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

/// Aborts the self-tests still running.
fn abort_self_tests(disks: &[Drive], state: &[SelfTest]) {
    for (d, s) in disks.iter().zip(state) {
        if matches!(s, SelfTest::Running(_)) {
            abort_self_test(d);
        }
    }
}

/// Aborts a drive's self-test (`smartctl -X`, given a few seconds: a hung
/// drive does not hold the run).
fn abort_self_test(d: &Drive) {
    let abort = ["-X", d.path];
    let _ = crate::device::smartctl::call(&abort, Duration::from_secs(10), &|| false);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_test_is_waited_for_as_long_as_its_drive_says_it_takes() {
        let h = |n: u64| Duration::from_secs(n * 3600);
        // A 20 TB drive's extended test: 1479 min (its polling time).
        let minutes = [(TestKind::Short, 2), (TestKind::Long, 1479)];
        let big = Drive { path: "/dev/sdb", nvme: false, minutes: &minutes };
        assert_eq!(big.limit(TestKind::Long, None), Duration::from_secs(1479 * 60 * 5 / 4));
        assert_eq!(big.limit(TestKind::Short, None), Duration::from_secs(12 * 60));
        assert_eq!(big.limit(TestKind::Long, Some(h(1))), h(1), "as told");
        // A drive that states nothing: the fixed defaults.
        let quiet = Drive { path: "/dev/nvme0n1", nvme: true, minutes: &[] };
        assert_eq!(quiet.limit(TestKind::Long, None), crate::defaults::LONG_SELF_TEST);
        assert_eq!(quiet.too_short(TestKind::Long, Some(h(1))), None);
        let said = big.too_short(TestKind::Long, Some(h(10))).unwrap();
        assert!(said.contains("10 h 0 min is shorter than the 24 h 39 min /dev/sdb"), "{said}");
        assert_eq!(big.too_short(TestKind::Short, Some(h(1))), None);
    }
}

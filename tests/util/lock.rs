//! The device lock: which tests may share the machine, said in one place.
//!
//! A test that times a disk or judges a speed (a verdict, a stall, a
//! stop "within a second") must not share the machine with another test
//! that reads or writes a disk: it takes the lock **exclusively**. A device
//! test that times nothing (a refusal, an output, a resume, a
//! classification, a page in a browser) takes it **shared**: such tests run
//! beside each other, never beside a timed one. Tests that touch no device
//! take no lock and run beside anything.
//!
//! Between them, a **paced** test judges speeds that a blkio throttle sets
//! on every disk it times, far below what this machine moves even loaded
//! (at most 50 MB/s a disk and 100 MB/s all of its disks together, from
//! memory-backed loops), with no wall-clock bound of its own (no stop
//! "within a second", no FUSE daemon's pace): the throttle, not the
//! machine, sets every speed it judges. Such a test shares the lock beside
//! untimed ones, one paced test at a time ([`PACE_SLOTS`]), never beside a
//! timed one. Which tests are paced, and why each may be, is the table
//! [`PACED`]. The check's arrays are not, at any speed tried: beside the
//! shared tests and `stress-ng --cpu 2`, at 100 MB/s a disk a four-disk
//! parallel pass read 55 MB/s a disk and a disk held to 70 measured 46 % of
//! its peers; at 16-25 MB/s in 256 KiB requests (green six times beside a
//! loaded run alone) a full loaded run saw a healthy disk's one read held
//! 773 ms (its p99.99 6.5 times its peers': called slow) and a disk at 70 %
//! of its peers in the serial pass not called slow; and a check of two
//! disks at 20 MB/s in 4 MiB reads (12 a disk in a 2 s sample) beside the
//! untimed tests was left unsure (slices 86-114 %). A 2 s sample judges on
//! moments a loaded machine takes; the check's runs stay timed.
//!
//! A burn-in test that shares the lock and asserts a verdict judges no
//! speed (`NO_SPEED_JUDGED`: no peer comparison, no stall under a
//! minute): beside other tests a throttled write can be held past the
//! stall limit (a 24-disk run once saw a 1 MiB write take 2.3 s).
//!
//! Every device test calls [`device_lock`]; its class comes from the tables
//! [`TIMED`], [`UNTIMED`] and [`PACED`] below, by the test's own name, and a test
//! listed in neither is timed (exclusive): a new test is safe until someone
//! says otherwise.
//!
//! The lock is `flock`s on files in /tmp, shared across processes and
//! threads (`cargo test` and `cargo nextest` alike). An exclusive taker
//! first holds the gate, so the shared tests that keep arriving cannot
//! starve it; a paced one first takes one of the pace slots. All are taken
//! with a deadline: a lock still held then fails the test, naming the holder
//! (pid and command line) and the way out. It must not decide what any test
//! asserts.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrayburn::device::lock::holders_of_file;
use nix::fcntl::{Flock, FlockArg};

/// Device tests that time nothing, by the start of their path in the test
/// binary (`module::` for a whole module), each with what it asserts
/// instead: why it may share the machine with its kind. Every other device
/// test (the check's verdicts, the demo, the faults' pinpointing and
/// stalls, the burn-in's speeds, stops and resumes, a hung disk) is timed,
/// or paced where [`PACED`] says so.
pub const UNTIMED: &[(&str, &str)] = &[
    ("ansible::", "the playbook's files and the bad sector's finding; speeds not asserted"),
    (
        "recipes::",
        "OCP streams, the recipes' files and the bad sector's finding; speeds not asserted",
    ),
    ("burnin::every_refusal_writes_nothing", "refusals: exit 2, one line, nothing written"),
    ("burnin::two_disks_that_alias_each_other_", "blocks read back where another disk wrote them"),
    ("burnin::lost_writes_flipped_bits_and_failed_writes_", "faults' byte ranges on FUSE disks"),
    ("burnin::a_range_at_the_end_of_a_20_tib_disk_", "offsets written and read back; a lone disk"),
    (
        "burnin::a_stop_while_scattered_writes_are_probed_",
        "a stop's report: marks and what the probe measured, no speed judged",
    ),
    (
        "burnin::a_stop_with_slow_writes_in_flight_",
        "no finding from a stop; the writes held slow by their throttle",
    ),
    (
        "check::a_4k_sector_disk_and_an_odd_sized_disk_",
        "bytes read to the last one; nothing written",
    ),
    ("check::a_surface_profile_", "the surface CSV sums to the bytes and reads"),
    ("check::a_full_serial_pass_on_big_disks_", "the order of the slices and the bytes read"),
    ("check::a_spread_sample_", "the spots read, under a throttle other tests cannot speed up"),
    (
        "demo::without_a_throttle_the_demo_",
        "the demo without its throttle: no verdict asserted; its disks over 500 MB/s \
         (memory: GB/s even loaded; its throttle's 150 MB/s would fail it)",
    ),
    ("exports::", "pages from recorded results, in a browser (Chromium takes both cores)"),
    ("faults::max_errors_stops_only_", "errors counted and the stop at --max-errors"),
    ("faults::both_engines_", "the same bad sectors and bytes from both engines"),
    (
        "faults::a_sample_that_sweeps_a_small_disk_again_",
        "bad ranges counted once over a sample's sweeps; no speed asserted",
    ),
    ("inputs::", "refusals and warnings: exit codes and one-line messages"),
    ("inspect::", "what recorded drives declare, and the probe's usable sizes; no speed judged"),
    ("iozone::", "iozone's output format, system calls and files on the root filesystem"),
    ("list::", "what `list` says of each disk"),
    ("locate::", "LED files written and the bay named; a bad sector's finding, no speed judged"),
    ("outputs::outputs_follow_links_", "where files are written; the exit status any verdict's"),
    ("outputs::an_unwritable_output_", "refusals and files written; the exit status the verdict's"),
    ("outputs::a_sample_too_short_", "a refusal, and whole 16 MiB disks read in milliseconds"),
    ("outputs::a_burn_in_that_cannot_write_", "the exit status of failed writes; a lone disk"),
    ("outputs::a_fifo_nobody_reads_", "a stop while a FIFO waits for its reader; no verdict"),
    (
        "outputs::output_that_goes_away_",
        "runs that end whole with their outputs closed; any verdict, no speed judged",
    ),
    (
        "burnin::the_command_printed_at_an_interrupt_",
        "the printed command and the outputs it finishes; no speed judged",
    ),
    ("burnin::temperatures_are_judged_", "temperatures from a fake smartctl; no speed judged"),
    ("burnin::readings_no_sensor_can_make_", "readings from a fake smartctl; no speed judged"),
    (
        "burnin::the_drives_self_test_and_its_temperature_",
        "a fake smartctl's self-test and temperatures; no speed judged",
    ),
    (
        "burnin::a_self_test_that_never_finishes_",
        "a fake self-test's timeout, not judged; no speed judged",
    ),
    (
        "burnin::a_self_test_after_the_passes_",
        "a fake self-test after the passes and its error log; no speed judged",
    ),
    ("burnin::a_killed_worker_", "what the waiting process says; no speed judged"),
    ("burnin::a_stopped_worker_", "a stop of a stopped worker; no speed judged"),
    ("burnin::a_disk_left_out_of_a_resume_", "the verdict's words on a resume; no speed judged"),
    (
        "burnin::a_fifo_nobody_reads_",
        "a finished run's wait for a FIFO's reader, bounded and stopped; 16 MiB disks, no speed",
    ),
    ("conventions::", "what -q, -v and the short flags say and write; no speed judged"),
    ("metrics::", "the metrics files and what they say of each run's own verdict"),
    ("report::", "the fleet's reading of results; its runs' verdicts are the findings of faults"),
    ("safety::links_planted_", "files never written through a link"),
    ("verify::a_burn_in_read_back_later_", "blocks read back and classified; no speed judged"),
    ("verify::a_verify_refuses_", "refusals: exit 2, one line, nothing written"),
    (
        "verify::a_stopped_verify_resumes_",
        "a stop and its resume, bytes read back; no speed judged",
    ),
    ("verify::a_drive_that_dies_at_its_spin_down_", "a disk that fails after a fake spin-down"),
    ("verify::a_drive_that_answers_as_another_", "a size changed after a fake spin-down"),
    ("verify::a_burn_in_with_cycles_verifies_", "blocks lost at a fake spin-down, found after"),
    ("verify::a_stop_while_idle_", "a stop while idle; a refusal; the verify its line runs"),
    ("verify::a_power_cycle_through_", "a fake slot's power; the one that stays off waits 10 s"),
    (
        "verify::a_crashed_burn_in_s_next_pass_",
        "a checkpoint behind the writes, as a crash leaves it",
    ),
    ("safety::a_lock_held_by_another_user_", "the lock's holder named and escaped"),
    ("safety::a_disk_held_for_a_moment_", "a held disk waited for, then refused; a lone disk"),
    ("safety::buffers_beyond_", "a refusal with the figure"),
    ("suite::", "the suite's own deadlines, lock and leftovers"),
    (
        "unattended::a_check_outlives_its_terminal_",
        "the log, the hang-up, the notifier and the report's end; any verdict, told alike",
    ),
    (
        "unattended::a_burn_in_outlives_its_terminal_",
        "the log, the stop and the resume; no speed judged",
    ),
    (
        "unattended::notify_tells_of_a_disk_found_bad_",
        "the events and the bad sector's finding; no speed judged",
    ),
    (
        "unattended::the_service_resumes_after_a_crash_",
        "the unit's resume, pages and refusal; no speed judged",
    ),
    ("unattended::a_burn_in_of_24_disks_", "the table's layout in tmux; no speed judged"),
    ("unattended::a_check_of_24_disks_", "the table's layout in tmux; any verdict"),
    ("unattended::a_signal_while_the_notifier_runs_", "a stop of the notifier; any verdict"),
];

/// Device tests whose every timed disk is paced by a blkio throttle (see
/// the module's head), by the start of their path, each with what sets its
/// speeds. They share the lock with untimed tests, one at a time; proved
/// beside the suite's shared tests and `stress-ng --cpu 2`
/// (docs/benchmarks.md, "The suite").
///
/// Not paced, though throttled: a burn-in whose suspect is cleared by
/// turns re-measured alone beside a peer (`burnin::a_disk_slow_only_while_
/// every_disk_was_written_`, `burnin::two_disks_each_slower_in_one_phase_`).
/// A turn is a second or two of 1 MiB writes, and beside the shared tests
/// one turn in seven read 80 % (80-106 % over 7 turns: straddling 92 %,
/// not decided, in a fresh clone's CI, 2026-12-07; the second failed so in
/// a full run the day before): the machine, not the throttle, set it. Nor
/// the burn-in to a deadline (`burnin::a_deadline_burns_stripes_`): it
/// asserts the run's end against the wall clock, and beside the shared
/// tests a 20 s deadline's run took 24.7 s (a fresh clone's CI, 2026-12-07).
pub const PACED: &[(&str, &str)] = &[
    ("burnin::a_healthy_array_is_written_", "writes and reads at 16 MB/s"),
    ("burnin::a_slow_reader_among_slow_writers_", "writes at 8 MB/s, reads at 30 and 21"),
    (
        "burnin::a_crash_mid_verify_",
        "writes at 48 MB/s, reads at 32; each pass's time asserted, not judged against peers",
    ),
    ("burnin::a_soak_that_ends_before_", "reads at 20 MB/s for a 3 s soak"),
    (
        "safety::a_disk_still_draining_",
        "writes at 4 then 0.5 MB/s; the drain waited for is the throttle's",
    ),
    (
        "unattended::the_whole_run_eta_",
        "writes at 4 MB/s, reads at 8: the run's end is the throttle's",
    ),
    (
        "verify::spin_ups_",
        "spin-ups of 0.1 s against 4 s, each the fake spin-down's sleep, not the machine's",
    ),
];

/// Tests of a module [`UNTIMED`] names whole that judge a speed all the
/// same: timed (exclusive), whatever their module's entry says.
pub const TIMED: &[(&str, &str)] = &[(
    "recipes::the_watch_daemonset_",
    "a disk fail-slow when the watch ends: its latency against its peers' in each window; beside \
     the shared tests its last window did not stand out (a fresh clone's CI, 2026-12-07)",
)];

/// How many paced tests may run at once (beside untimed ones). Two, in the
/// second of scripts/test.sh's runs, cut it by 20 s (213 s against 232: the
/// shared tests' CPU, not the paced chain, bound it) and a disk of a paced
/// burn-in measured at 80 % of its peers beside the other paced one.
pub const PACE_SLOTS: usize = 1;

/// How a device test holds the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Alone: it times a disk the machine's load could slow.
    Exclusive,
    /// Beside untimed tests, [`PACE_SLOTS`] paced tests at a time: its speeds are a
    /// throttle's.
    Paced,
    /// Beside anything but a timed test: it times nothing.
    Shared,
}

impl Class {
    /// What the lock log calls it.
    fn word(self) -> &'static str {
        match self {
            Class::Exclusive => "exclusive",
            Class::Paced => "paced",
            Class::Shared => "shared",
        }
    }
}

/// How long a test waits for the lock before it fails, naming the holder:
/// longer than every timed test together takes, shorter than the run's
/// own limit. `ARRAYBURN_TEST_LOCK_WAIT` (seconds) overrides it.
fn patience() -> Duration {
    let secs = std::env::var("ARRAYBURN_TEST_LOCK_WAIT").ok().and_then(|s| s.parse().ok());
    Duration::from_secs(secs.unwrap_or(900))
}

/// How the test named `test` (its path in the binary) holds the lock.
pub fn class(test: &str) -> Class {
    let listed = |table: &[(&str, &str)]| table.iter().any(|(start, _)| test.starts_with(start));
    if listed(TIMED) {
        Class::Exclusive
    } else if listed(UNTIMED) {
        Class::Shared
    } else if listed(PACED) {
        Class::Paced
    } else {
        Class::Exclusive
    }
}

/// Held while a device test runs.
pub struct DeviceLock {
    /// What it holds: the lock, and the gate (an exclusive taker) or a
    /// pace slot (a paced one); none where the test's thread holds the lock
    /// already (a helper that takes it inside a test that did).
    flocks: Option<Vec<Flock<File>>>,
    log: Option<Held>,
}

/// For `ARRAYBURN_TEST_LOCK_LOG=FILE`: a line per test appended there
/// (test, how it held the lock, seconds waited and held), to see where a
/// run's time goes.
struct Held {
    test: String,
    class: Class,
    waited: Duration,
    since: Instant,
}

thread_local! {
    /// How many device locks this test's thread holds.
    static HELD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Drop for DeviceLock {
    fn drop(&mut self) {
        if self.flocks.take().is_some() {
            HELD.set(HELD.get() - 1);
        }
        let (Some(h), Some(log)) = (self.log.take(), std::env::var_os("ARRAYBURN_TEST_LOCK_LOG"))
        else {
            return;
        };
        let how = h.class.word();
        let line = format!(
            "{} {how} waited {:.1} held {:.1}\n",
            h.test,
            h.waited.as_secs_f64(),
            h.since.elapsed().as_secs_f64()
        );
        let log = File::options().create(true).append(true).open(log);
        let _ = log.and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    }
}

/// Takes the machine's device lock for the calling test, as its [`class`]
/// says.
pub fn device_lock() -> DeviceLock {
    if HELD.get() > 0 {
        return DeviceLock { flocks: None, log: None };
    }
    let test = std::thread::current().name().unwrap_or("").to_string();
    let (began, class) = (Instant::now(), class(&test));
    let mut lock = Lock::machine().take(class, patience());
    lock.log = Some(Held { test, class, waited: began.elapsed(), since: Instant::now() });
    lock
}

/// A device lock's two files.
pub struct Lock {
    gate: PathBuf,
    lock: PathBuf,
    pace: Vec<PathBuf>,
}

impl Lock {
    /// The one every test on this machine shares.
    pub fn machine() -> Lock {
        Lock::at(Path::new("/tmp"))
    }

    /// One in `dir` (a test of the lock itself).
    pub fn at(dir: &Path) -> Lock {
        Lock {
            gate: dir.join("arrayburn-tests.gate"),
            lock: dir.join("arrayburn-tests.lock"),
            pace: (0..PACE_SLOTS).map(|i| dir.join(format!("arrayburn-tests.pace.{i}"))).collect(),
        }
    }

    /// Takes it as `class` says, waiting at most `limit`; the test fails
    /// past that, naming who holds it.
    pub fn take(&self, class: Class, limit: Duration) -> DeviceLock {
        let until = Instant::now() + limit;
        let mut held = Vec::new();
        // A paced taker first holds a slot, before the gate: it waits for
        // another paced test holding nothing an exclusive one waits for.
        if class == Class::Paced {
            let slot = flock_any(&self.pace, FlockArg::LockExclusiveNonblock, until);
            held.push(slot.unwrap_or_else(|| self.fail(limit)));
        }
        let gate =
            flock_any(std::slice::from_ref(&self.gate), FlockArg::LockExclusiveNonblock, until)
                .unwrap_or_else(|| self.fail(limit));
        let how = if class == Class::Exclusive {
            FlockArg::LockExclusiveNonblock
        } else {
            FlockArg::LockSharedNonblock
        };
        let lock = flock_any(std::slice::from_ref(&self.lock), how, until)
            .unwrap_or_else(|| self.fail(limit));
        held.push(lock);
        // Other takers only pass through the gate; an exclusive one holds
        // it, so no new taker slips in while it runs.
        if class == Class::Exclusive {
            held.push(gate);
        }
        HELD.set(HELD.get() + 1);
        DeviceLock { flocks: Some(held), log: None }
    }

    fn fail(&self, limit: Duration) -> ! {
        let holders: Vec<String> = [&self.lock, &self.gate]
            .into_iter()
            .chain(&self.pace)
            .flat_map(|p| holders_of_file(p))
            .map(|h| h.words())
            .collect();
        let who = if holders.is_empty() {
            "a process no longer listed".into()
        } else {
            holders.join(", ")
        };
        panic!(
            "the device lock {} was not free within {limit:?}: held by {who}. Another test run is \
             using this machine's test devices: wait for it to end, or end it (kill PID), then run \
             the tests again",
            self.lock.display()
        );
    }
}

/// Takes `how` on the first of `paths` free (each made if missing, never
/// through a link: /tmp is anyone's), polling until `until`.
fn flock_any(paths: &[PathBuf], how: FlockArg, until: Instant) -> Option<Flock<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        for path in paths {
            let f = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .custom_flags(nix::libc::O_NOFOLLOW)
                .open(path)
                .unwrap_or_else(|e| {
                    panic!(
                        "the device lock {}: {e} (a link there is not followed: remove it)",
                        path.display()
                    )
                });
            match Flock::lock(f, how) {
                Ok(l) => return Some(l),
                Err((_, nix::errno::Errno::EWOULDBLOCK)) => {}
                Err((_, e)) => panic!("flock {}: {e}", path.display()),
            }
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

//! The suite's own machinery: a child that overruns its deadline is killed
//! and named, the device lock held elsewhere fails in time naming its
//! holder, and what a killed test left behind is removed, nothing else.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use arrayburn::device::lock::holders_of_file;

use crate::util::*;

/// The message of the panic `f` ends in (it must end in one).
fn panic_of(f: impl FnOnce()) -> String {
    let e = catch_unwind(AssertUnwindSafe(f)).expect_err("it should have failed");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap()
}

fn gone(pid: u32) -> bool {
    // A zombie is gone too: its drop reaped it, or the panic's will.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_or(true, |s| s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')))
}

#[test]
fn a_child_past_its_deadline_is_killed_and_the_failure_names_it() {
    let began = Instant::now();
    let child = Command::new("sleep").arg("60").start();
    let pid = child.id();
    let said = panic_of(|| {
        child.wait(Duration::from_secs(1));
    });
    assert!(began.elapsed() < Duration::from_secs(20), "{:?}", began.elapsed());
    assert!(said.contains("waited 1s for it to exit from `sleep 60`"), "{said}");
    assert!(gone(pid), "pid {pid} still runs");
    // A line that never comes: the failure names it and what was said.
    let child = Command::new("sh").args(["-c", "echo starting >&2; sleep 60"]).start();
    let pid = child.id();
    let said = panic_of(|| {
        child.wait_line("the end", Duration::from_secs(1), |l| l.contains("done"));
    });
    assert!(said.contains("a line on its stderr that shows the end"), "{said}");
    assert!(said.contains("starting"), "{said}");
    wait_for(Duration::from_secs(10), || gone(pid));
    assert!(gone(pid), "pid {pid} still runs");
    // A line that comes, then the exit.
    let child = Command::new("sh").args(["-c", "echo one >&2; echo two >&2"]).start();
    assert_eq!(child.wait_line("two", MINUTE, |l| l.starts_with("tw")), "two");
    assert!(child.wait(MINUTE).status.success());
}

#[test]
fn the_device_lock_held_elsewhere_fails_in_time_naming_the_holder() {
    let dir = tempdir();
    let lock = Lock::at(dir.path());
    let file = dir.path().join("arrayburn-tests.lock");
    std::fs::write(&file, "").unwrap();
    // Another run holds it (shared, as an untimed test would; flock
    // becomes `sleep 60`, the lock held).
    let mut holder = Command::new("flock")
        .args(["--shared", "--no-fork"])
        .arg(&file)
        .args(["sleep", "60"])
        .start();
    holder.wait_until("flock to hold the lock", MINUTE, || !holders_of_file(&file).is_empty());
    let pid = holders_of_file(&file)[0].pid;
    // Shared takers go beside it; an exclusive one fails within its limit.
    drop(lock.take(Class::Shared, Duration::from_secs(5)));
    let began = Instant::now();
    let said = panic_of(|| {
        lock.take(Class::Exclusive, Duration::from_secs(2));
    });
    let took = began.elapsed();
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(10), "{took:?}");
    assert!(said.contains(&format!("held by pid {pid} (user ")), "{said}");
    assert!(said.contains(": sleep 60)"), "{said}");
    assert!(said.contains("wait for it to end, or end it (kill PID)"), "{said}");
    assert!(said.contains("was not free within 2s"), "{said}");
    // Once it has gone, the lock is taken at once.
    drop(holder);
    let began = Instant::now();
    drop(lock.take(Class::Exclusive, Duration::from_secs(10)));
    assert!(began.elapsed() < Duration::from_secs(10));
    // A link planted where the lock's files go (/tmp is anyone's) is never
    // followed: nothing is made at its target.
    let elsewhere = tempdir();
    let target = elsewhere.path().join("made-through-the-link");
    let planted = tempdir();
    std::os::unix::fs::symlink(&target, planted.path().join("arrayburn-tests.gate")).unwrap();
    let said = panic_of(|| {
        Lock::at(planted.path()).take(Class::Exclusive, Duration::from_secs(2));
    });
    assert!(said.contains("a link there is not followed"), "{said}");
    assert!(!target.exists());
}

#[test]
fn paced_tests_run_beside_untimed_ones_as_many_as_their_slots_never_beside_a_timed_one() {
    let dir = tempdir();
    let lock = Lock::at(dir.path());
    let short = Duration::from_secs(1);
    let refused = |class: Class| {
        let said = panic_of(|| {
            lock.take(class, short);
        });
        assert!(said.contains("was not free within 1s"), "{class:?}: {said}");
    };
    // Beside untimed tests, PACE_SLOTS paced tests at a time.
    let shared = lock.take(Class::Shared, short);
    let paced: Vec<_> =
        (0..crate::util::lock::PACE_SLOTS).map(|_| lock.take(Class::Paced, short)).collect();
    let another = lock.take(Class::Shared, short);
    refused(Class::Paced);
    // A timed test waits for every one of them.
    drop((shared, another));
    refused(Class::Exclusive);
    drop(paced);
    let alone = lock.take(Class::Exclusive, short);
    // And while it runs, no other test gets in.
    for class in [Class::Paced, Class::Shared, Class::Exclusive] {
        refused(class);
    }
    drop(alone);
    drop(lock.take(Class::Paced, short));
    // No test is in both tables, and a name in neither is timed.
    for (start, _) in crate::util::lock::PACED {
        assert_eq!(crate::util::lock::class(start), Class::Paced, "{start} is also untimed");
    }
    assert_eq!(crate::util::lock::class("check::a_new_test"), Class::Exclusive);
    // A timed test of a module the untimed table names whole stays timed.
    for (start, _) in crate::util::lock::TIMED {
        let module = start.split("::").next().unwrap();
        assert!(crate::util::lock::UNTIMED.iter().any(|(u, _)| u.starts_with(module)));
        assert_eq!(crate::util::lock::class(start), Class::Exclusive, "{start}");
    }
}

#[test]
fn an_earlier_runs_leftovers_are_removed_and_nothing_else() {
    need_root!();
    let _l = device_lock();
    // A test process that is gone: a pid that exited.
    let dead = Command::new("true").start();
    let dead_pid = dead.id();
    dead.wait(MINUTE);
    let theirs = format!("arrayburn-test-{dead_pid}-0");
    // What it left: a loop device over its file, a cgroup, a directory with
    // a tmpfs mounted on it.
    let file = Path::new("/dev/shm").join(format!("{theirs}.img"));
    arrayburn::testbed::fill_file(&file, 4 << 20, 1, &Default::default()).unwrap();
    let attach = Command::new("losetup").args(["-f", "--show"]).arg(&file).output_within(MINUTE);
    assert!(attach.status.success(), "{attach:?}");
    let their_dev = String::from_utf8_lossy(&attach.stdout).trim().to_string();
    let group = Path::new(arrayburn::testbed::BLKIO_ROOT).join(&theirs);
    std::fs::create_dir(&group).unwrap();
    let mnt = Path::new("/tmp").join(format!("{theirs}-mnt"));
    std::fs::create_dir(&mnt).unwrap();
    let mount = Command::new("mount")
        .args(["-t", "tmpfs", "arrayburn-test", mnt.to_str().unwrap()])
        .output_within(MINUTE);
    assert!(mount.status.success(), "{mount:?}");
    // What this live test made the same way, and a look-alike name of
    // nobody's: both kept.
    let mine = loop_disk(&Spec::shm(4 << 20));
    let stranger = Path::new("/dev/shm").join(format!("arrayburn-tested-{dead_pid}-0.img"));
    std::fs::write(&stranger, "not ours").unwrap();
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/leftovers.sh"))
        .output_within(MINUTE);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let _ = std::fs::remove_file(&stranger);
    assert!(out.status.success(), "{said}");
    assert!(said.contains(&format!("detached {their_dev} ({})", file.display())), "{said}");
    assert!(said.contains(&format!("removed cgroup {}", group.display())), "{said}");
    assert!(said.contains(&format!("unmounted {}", mnt.display())), "{said}");
    assert!(!file.exists() && !group.exists() && !mnt.exists(), "{said}");
    // Whether `dev` is a loop device over `file` (the kernel adds
    // " (deleted)" once the file is gone). Not whether it is attached at
    // all: a test beside this one may attach its own file there at once.
    let over = |dev: &str, file: &Path| {
        let at = format!("/sys/block/{}/loop/backing_file", dev.trim_start_matches("/dev/"));
        std::fs::read_to_string(at).is_ok_and(|b| b.starts_with(file.to_str().unwrap()))
    };
    assert!(!over(&their_dev, &file), "{their_dev} still attached over {}", file.display());
    assert!(over(&mine.dev, &mine.file) && mine.file.exists(), "{said}");
    assert!(!said.contains(&mine.dev) && !said.contains("arrayburn-tested"), "{said}");
}

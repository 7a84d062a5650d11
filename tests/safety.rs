//! A root tool that writes disks must not be steered by another user, a
//! careless admin or a dying disk: links planted where it writes are never
//! followed, a lock held by someone else is named (escaped), a resume
//! proves it has the disk it checkpointed before writing a byte, an edited
//! checkpoint is refused field by field, a hung disk is reported and the
//! others finish, a killed run's disk is waited for, and buffers beyond the
//! memory a run may have are refused with the figure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::faults::FaultyDisk;
use crate::util::*;

const MIB: u64 = 1 << 20;

/// A fingerprint of a file's bytes.
fn sum(p: &Path) -> u64 {
    std::fs::read(p)
        .unwrap()
        .chunks(8)
        .enumerate()
        .fold(0u64, |h, (i, c)| h.rotate_left(5) ^ (c[0] as u64 + i as u64))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `cmd` with no input, prints and returns its output.
fn run(mut cmd: impl std::borrow::BorrowMut<Command>) -> std::process::Output {
    let cmd = cmd.borrow_mut();
    let out = cmd.output_within(RUN);
    eprintln!("--- {cmd:?}\n{}\n--- stderr\n{}", text(&out.stdout), text(&out.stderr));
    out
}

#[test]
fn links_planted_where_root_writes_are_never_followed() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 16 * MIB);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let dir = tempdir();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let before = sum(&victim);
    // 1. A world-writable lock directory another user filled first, with a
    // link where the run's lock file would be: in a private mount
    // namespace, so the machine's /run/lock is never touched.
    let devno = d[0].devno().unwrap().replace(':', "-");
    let script = format!(
        "mount -t tmpfs arrayburn-test /run/lock && mkdir -m 1777 /run/lock/arrayburn \
         && ln -s '{v}' /run/lock/arrayburn/disk-{devno}.lock \
         && exec '{bin}' check --sample 1.5s --progress none {devs}",
        v = victim.display(),
        bin = bin(),
        devs = devs.join(" ")
    );
    let out = run(Command::new("unshare").args(["--mount", "sh", "-c", &script]));
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{out:?}");
    assert_eq!(sum(&victim), before, "the lock link's target was written");
    // 2. An --out directory with links planted at the names the run
    // writes, at the temporary name it used to write first, and in place
    // of charts/: each is replaced or refused, none followed.
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let victims = dir.path().join("victims");
    std::fs::create_dir(&victims).unwrap();
    for name in ["report.txt", ".report.json.arrayburn-tmp", ".report.txt.arrayburn-tmp"] {
        std::os::unix::fs::symlink(&victim, out_dir.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(&victims, out_dir.join("charts")).unwrap();
    let json = dir.path().join("r.json");
    let out = run(arrayburn(&[
        "check",
        "--sample",
        "1.5s",
        "--progress",
        "none",
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        devs[0],
        devs[1],
    ]));
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{out:?}");
    assert_eq!(sum(&victim), before, "a planted link's target was written");
    assert_eq!(std::fs::read_dir(&victims).unwrap().count(), 0, "charts/ was followed");
    let report_txt = std::fs::symlink_metadata(out_dir.join("report.txt")).unwrap();
    assert!(report_txt.is_file(), "the link at report.txt was replaced by the report");
    assert!(text(&out.stderr).contains("charts"), "the charts' refusal is said");
    // 3. A link another user owns is not followed for --json.
    let theirs = dir.path().join("theirs.json");
    std::os::unix::fs::symlink(&victim, &theirs).unwrap();
    nix::unistd::fchownat(
        nix::fcntl::AT_FDCWD,
        &theirs,
        Some(nix::unistd::Uid::from_raw(65534)),
        None,
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .unwrap();
    let out = run(arrayburn(&[
        "check",
        "--sample",
        "1.5s",
        "--json",
        theirs.to_str().unwrap(),
        devs[0],
        devs[1],
    ]));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("owned by uid 65534, not by you or root"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(sum(&victim), before);
}

#[test]
fn a_lock_held_by_another_user_is_named_escaped_and_ignored_only_by_its_pid() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 16 * MIB);
    // A shell takes the disk's lock (flock on its node, as util-linux's
    // flock(1) does), then becomes nobody under a name with terminal
    // escapes in it.
    let script = format!(
        "exec 9<{dev}; flock 9; exec setpriv --reuid=65534 --regid=65534 --clear-groups \
         bash -c 'exec -a \"$0\" sleep 60' $'evil\\e]0;pwned\\a'",
        dev = d[0].dev
    );
    let holder = Command::new("bash").args(["-c", &script]).start();
    let pid = holder.id();
    let sleeping = || {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.contains("65534")))
    };
    assert!(wait_for(Duration::from_secs(5), sleeping), "the holder never started");
    let check = |extra: &[&str]| {
        let mut c = arrayburn(&["check", "--sample", "1.5s", "--progress", "none"]);
        c.args(extra).arg(&d[0].dev).arg(&d[1].dev);
        run(&mut c)
    };
    let out = check(&[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{} is in use by pid {pid} (user nobody: evil\\x1b]0;pwned\\x07",
            d[0].dev
        )),
        "{err}"
    );
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "raw escapes: {err:?}");
    assert!(err.contains(&format!("add --ignore-lock {pid}")), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // Another pid does not unlock it; the holder's does, saying so.
    assert_eq!(check(&["--ignore-lock", "1"]).status.code(), Some(2));
    let out = check(&["--ignore-lock", &pid.to_string()]);
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{out:?}");
    assert!(text(&out.stderr).contains("going ahead as --ignore-lock"), "{out:?}");
}

/// `arrayburn burnin --state STATE --destructive --yes --smart off ARGS`.
fn burnin(state: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(["burnin", "--state"])
        .arg(state)
        .args(["--destructive", "--yes", "--smart", "off"])
        .args(args);
    c
}

fn checkpoint_of(state: &Path, d: &LoopDisk) -> PathBuf {
    state.join(format!("burnin-{}.json", d.name()))
}

/// Puts a new 1-pass checkpoint of `d` in the middle of its write phase
/// into `state`: a burn-in with writes held to `bps`, killed once its
/// checkpoint names at least a quarter written.
fn half_burned(state: &Path, d: &[&LoopDisk], t: &Throttle) {
    let mut args = vec!["burnin", "--state", state.to_str().unwrap()];
    args.extend(["--destructive", "--yes", "--smart", "off"]);
    args.extend(["--checkpoint-every", "1", "--progress", "none"]);
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let mut child = t.command(&args).start();
    let quarter = |x: &LoopDisk| {
        std::fs::read(checkpoint_of(state, x))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|c| c["at"]["done_until"].as_u64() >= Some(4 * MIB))
    };
    child.wait_until("a checkpoint a quarter written", MINUTE, || d.iter().all(|x| quarter(x)));
    child.kill();
}

#[test]
// Timed (the device lock held alone), though it times nothing: it detaches
// a loop device and attaches another file under its name, which a test
// beside it making a loop device (`losetup -f`) could take in between.
fn a_resume_proves_it_has_the_disk_it_checkpointed_before_writing() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 16 * MIB);
    let t = Throttle::new();
    for x in &d {
        t.limit_write(x, 4_000_000);
    }
    let state = tempdir();
    let st = state.path();
    half_burned(st, &[&d[0], &d[1]], &t);
    // The kernel lets go of the disks once the killed run's writes are in.
    assert!(wait_for(Duration::from_secs(20), || d.iter().all(|x| is_free(&x.dev))));
    let refused = |args: &[&str], says: &str, untouched: &Path| {
        let before = sum(untouched);
        let out = run(&mut burnin(st, args));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert_eq!(sum(untouched), before, "{args:?} wrote");
    };
    // 1. Each field of an edited checkpoint is refused, naming it.
    let good = std::fs::read(checkpoint_of(st, &d[1])).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut c: serde_json::Value = serde_json::from_slice(&good).unwrap();
        f(&mut c);
        std::fs::write(checkpoint_of(st, &d[1]), serde_json::to_vec(&c).unwrap()).unwrap();
    };
    let resume1 = ["--resume", d[1].dev.as_str()];
    for (what, change, says) in [
        (
            "start beyond end",
            ("start_byte", 32 * MIB),
            "start_byte..end_byte is 33554432..16777216",
        ),
        ("end beyond the disk", ("end_byte", 32 * MIB), "start_byte..end_byte is 0..33554432"),
        ("unaligned start", ("start_byte", 512), "start_byte..end_byte is 512.."),
        ("a block format never written", ("block_version", 3), "block_version is 3"),
    ] {
        edit(&|c| c[change.0] = change.1.into());
        refused(&resume1, says, &d[1].file);
        eprintln!("refused: {what}");
    }
    edit(&|c| c["run_id"] = "not-hex".into());
    refused(&resume1, "run_id is \"not-hex\"", &d[1].file);
    edit(&|c| c["pattern"] = "zebra".into());
    refused(&resume1, "not a checkpoint (unknown variant `zebra`", &d[1].file);
    // 2. Disk 0's checkpoint copied to disk 1's name (its kernel name
    // edited to match): disk 1 does not carry disk 0's blocks.
    let mut copied: serde_json::Value =
        serde_json::from_slice(&std::fs::read(checkpoint_of(st, &d[0])).unwrap()).unwrap();
    copied["name"] = d[1].name().into();
    copied["device"] = d[1].dev.clone().into();
    std::fs::write(checkpoint_of(st, &d[1]), serde_json::to_vec(&copied).unwrap()).unwrap();
    refused(&resume1, "does not carry this run's blocks", &d[1].file);
    std::fs::write(checkpoint_of(st, &d[1]), &good).unwrap();
    // 3. Disk 0 replaced by another disk of the same size at the same
    // name, holding ext4: refused, the filesystem intact.
    let file = d[0].file.with_extension("other.img");
    arrayburn::testbed::fill_file(&file, 16 * MIB, 99, &arrayburn::stop::StopFlag::default())
        .unwrap();
    assert!(
        Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&file)
            .output_within(MINUTE)
            .status
            .success()
    );
    assert!(Command::new("losetup").args(["-d", &d[0].dev]).output_within(MINUTE).status.success());
    // A detach is done once the last opener has let go (udev's probe after
    // a change, say): the name is taken again as soon as it is free.
    let attach = || Command::new("losetup").arg(&d[0].dev).arg(&file).output_within(MINUTE);
    let st_ok = wait_for(Duration::from_secs(20), || attach().status.success());
    let other = LoopDisk { dev: d[0].dev.clone(), file };
    assert!(st_ok, "losetup {} again", other.dev);
    refused(
        &["--resume", &other.dev, &d[1].dev],
        &format!("--resume: {} is not the disk checkpointed in", other.dev),
        &other.file,
    );
    // 4. --json into the checkpoints' directory is refused.
    let into = st.join("r.json");
    refused(
        &["--resume", "--json", into.to_str().unwrap(), &d[1].dev],
        "where the checkpoints are kept",
        &d[1].file,
    );
    // 4b. A disk that answers with 0 bytes (dead, or its capacity not
    // read): what the disk does is said, not the checkpoint blamed, and
    // the checkpoint stays where it is.
    std::fs::File::options().write(true).open(&other.file).unwrap().set_len(0).unwrap();
    let resized = Command::new("losetup").args(["-c", &other.dev]).output_within(MINUTE).status;
    assert!(resized.success(), "losetup -c {}", other.dev);
    let kept = std::fs::read(checkpoint_of(st, &d[0])).unwrap();
    refused(
        &["--resume", &other.dev, &d[1].dev],
        &format!("--resume: {} answers with a size of 0 bytes (its checkpoint", other.dev),
        &other.file,
    );
    let out = run(&mut burnin(st, &["--resume", &other.dev, &d[1].dev]));
    let err = text(&out.stderr);
    assert!(!err.contains("damaged") && err.contains("is kept"), "{err}");
    assert_eq!(std::fs::read(checkpoint_of(st, &d[0])).unwrap(), kept, "the checkpoint kept");
    std::fs::File::options().write(true).open(&other.file).unwrap().set_len(16 * MIB).unwrap();
    let resized = Command::new("losetup").args(["-c", &other.dev]).output_within(MINUTE).status;
    assert!(resized.success(), "losetup -c {}", other.dev);
    // 5. The disk that is what its checkpoint says resumes and finishes.
    let out = run(t.command(&[
        "burnin",
        "--state",
        st.to_str().unwrap(),
        "--destructive",
        "--yes",
        "--smart",
        "off",
        "--progress",
        "none",
        "--resume",
        &d[1].dev,
    ]));
    // Every block verified; a lone disk's speed is not judged (exit 3).
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    // 6. A finished run resumed onto a replaced disk is refused too (it
    // said HEALTHY for whatever sat at the name).
    let finished: serde_json::Value =
        serde_json::from_slice(&std::fs::read(checkpoint_of(st, &d[1])).unwrap()).unwrap();
    assert_eq!(finished["at"]["phase"], "done", "{finished}");
    let mut moved = finished.clone();
    moved["name"] = other.name().into();
    moved["device"] = other.dev.clone().into();
    std::fs::write(checkpoint_of(st, &other), serde_json::to_vec(&moved).unwrap()).unwrap();
    refused(&["--resume", &other.dev], "does not carry this run's blocks", &other.file);
}

#[test]
fn a_disk_held_for_a_moment_is_waited_for_and_one_held_on_is_refused_naming_who() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 16 * MIB);
    // As the kernel holds a killed run's disk while its writes drain: held
    // open exclusively (here by this test) for 1.5 s from the start.
    let hold = || {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_EXCL)
            .open(&d[0].dev)
            .unwrap()
    };
    let state = tempdir();
    let held = hold();
    let child = burnin(state.path(), &["--progress", "none", &d[0].dev]).start();
    std::thread::sleep(Duration::from_millis(1500));
    drop(held);
    let out = child.wait(RUN);
    let err = text(&out.stderr);
    // Burned whole (a lone disk's speed is not judged: exit 3).
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(!err.contains("is in use"), "{err}");
    // Held on past the wait: refused, naming this test as the opener.
    let held = hold();
    let state = tempdir();
    let out = run(burnin(state.path(), &[&d[0].dev]));
    drop(held);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let me = format!("open now in pid {} (user root: ", std::process::id());
    assert!(err.contains("opened exclusively for 5 s") && err.contains(&me), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    // A stop while it waits for the disk ends the wait at once.
    let held = hold();
    let state = tempdir();
    let mut waiting = burnin(state.path(), &[&d[0].dev]).start();
    std::thread::sleep(Duration::from_secs(1));
    assert!(!waiting.has_exited(), "it waits for the held disk");
    let (out, took) = waiting.interrupt(MINUTE);
    drop(held);
    let err = text(&out.stderr);
    assert!(took < Duration::from_secs(3), "{took:?}: {err}");
    assert!(
        err.contains("stopped while waiting for the disk to be free (nothing was written)"),
        "{err}"
    );
    // And right after a kill (the kernel may still hold the disk while the
    // killed run's writes drain), the resume goes on.
    let t = Throttle::new();
    t.limit_write(&d[0], 4_000_000);
    let state = tempdir();
    half_burned(state.path(), &[&d[0]], &t);
    let st = state.path().to_str().unwrap();
    let out = run(t.command(&[
        "burnin",
        "--state",
        st,
        "--destructive",
        "--yes",
        "--smart",
        "off",
        "--progress",
        "none",
        "--resume",
        &d[0].dev,
    ]));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(!err.contains("is in use"), "{err}");
}

#[test]
fn a_disk_still_draining_a_killed_runs_writes_is_waited_for_while_they_drain() {
    need_root!();
    let _l = device_lock();
    // Writes of 1 MiB held to 0.5 MB/s, six in flight, the run killed
    // outright: its writes take seconds to drain while the dying process
    // is not yet gone, and the kernel holds the disk until then. A resume
    // started at once waits while the disk's I/O still moves and goes on
    // (it was refused after 5 s: "opened exclusively ... by the kernel (a
    // mount, md, dm or ZFS)"). Until its first checkpoint names writes,
    // the run writes at 4 MB/s (at 1 MB/s the capacity probe's 8 MB and
    // the first 4 MiB took 23 s); then the slow limit, and a second for
    // the run to fill its queue under it (killed at once, one write was
    // left in flight and the disk was free in 4.2 s, before a resume
    // looks at its I/O): 6 MiB drain for 12 s, one write every 2 s (half
    // of them left in flight would still outlast the resume's 5 s).
    let d = disks(1, 32 * MIB);
    let t = Throttle::new();
    t.limit_write(&d[0], 4_000_000);
    let state = tempdir();
    let st = state.path().to_str().unwrap();
    let mut args = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    args.extend(["--block", "1m", "--queue-depth", "6", "--checkpoint-every", "1"]);
    args.extend(["--progress", "none", &d[0].dev]);
    let mut first = t.command(&args).start();
    let written = |c: &serde_json::Value| c["at"]["done_until"].as_u64() >= Some(4 * MIB);
    first.wait_until("a checkpoint with writes done", MINUTE, || {
        std::fs::read(checkpoint_of(state.path(), &d[0]))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|c| written(&c))
    });
    t.limit_write(&d[0], 500_000);
    std::thread::sleep(Duration::from_secs(1));
    for pid in family(first.id()).into_iter().rev() {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let mut resume = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
    resume.extend(["--progress", "lines", "--progress-interval", "1s", "--resume", &d[0].dev]);
    let began = Instant::now();
    let again = t.command(&resume).start();
    let line = again.wait_line("the resumed burn-in under way", RUN, |l| {
        l.contains("burnin:") && l.contains('%')
    });
    // It waited out the drain (a bound a loaded machine only lengthens).
    let waited = began.elapsed();
    assert!(waited >= Duration::from_secs(5), "under way after {waited:?}: nothing drained");
    let (out, _) = again.interrupt(MINUTE);
    let err = text(&out.stderr);
    assert!(!err.contains("is in use") && !err.contains("opened exclusively"), "{line}\n{err}");
    assert_eq!(out.status.code(), Some(130), "{err}");
    drop(first);
}

#[test]
fn a_hung_disk_is_reported_and_the_others_finish_and_a_signal_still_stops_at_once() {
    need_root!();
    let _l = device_lock();
    let good = disks(2, 16 * MIB);
    let bad = FaultyDisk::new(16 * MIB, &[]);
    let dir = tempdir();
    let json = dir.path().join("r.json");
    // The check: the frozen disk's read is given up after 2 s, in the serial
    // pass; the parallel pass does not wait for it again.
    let frozen = bad.freeze();
    // The good disks read at a drive-like 100 MB/s (memory disks vary by
    // the CPU's moment, and two of them would be compared on that).
    let paced = Throttle::new();
    for g in &good {
        paced.limit(g, 100_000_000);
    }
    let began = Instant::now();
    let mut check = paced.command(&[
        "check",
        "--sample",
        "1.5s",
        "--io-timeout",
        "2s",
        "--progress",
        "none",
        "--json",
        json.to_str().unwrap(),
        &good[0].dev,
        &bad.dev,
        &good[1].dev,
    ]);
    let child = check.start();
    // The result is written while the disk is still frozen; the process
    // itself ends once its stuck read does (the kernel holds it).
    let written = wait_for(Duration::from_secs(30), || {
        std::fs::read(&json)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["complete"] == true)
    });
    let took = began.elapsed();
    drop(frozen);
    let out = child.wait(MINUTE);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    eprintln!("{stdout}\n{stderr}");
    assert!(written, "no complete result while the disk hung");
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let said: Vec<&serde_json::Value> =
        v["summary"]["disk_verdicts"].as_array().unwrap().iter().collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0]["path"], bad.dev.as_str());
    assert_eq!(said[0]["action"], "check_path");
    assert!(said[0]["sentence"].as_str().unwrap().contains("stopped answering"), "{said:?}");
    for p in v["passes"].as_array().unwrap() {
        for row in p["disks"].as_array().unwrap() {
            if row["path"] == bad.dev.as_str() {
                assert_eq!(row["stopped"], "hung", "{row}");
            } else {
                assert!(row["bytes"].as_u64().unwrap() > 0 && row["stopped"].is_null(), "{row}");
            }
        }
    }
    // The burn-in: the frozen disk's writes are given up after 3 s, the
    // other disk is burned whole, and the hung one is to be checked. Its
    // writes are held to 4 MB/s, and it is frozen once they are under way
    // (frozen before, it is refused: its signatures cannot be read).
    let rw = FaultyDisk::writable(16 * MIB, &[], &[], &[]);
    let t = Throttle::new();
    t.limit_write_dev(&rw.dev, 4_000_000);
    let writing = |state: &Path| {
        let name = rw.dev.trim_start_matches("/dev/");
        std::fs::read(state.join(format!("burnin-{name}.json")))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|c| c["at"]["done_until"].as_u64() > Some(0))
    };
    let spawn = |state: &Path, extra: &[&str]| {
        let st = state.to_str().unwrap();
        let mut a = vec!["burnin", "--state", st, "--destructive", "--yes", "--smart", "off"];
        a.extend(["--checkpoint-every", "1", "--progress", "none", "--wipe-signatures"]);
        // 1 MiB writes at 4 MB/s: two in flight end within 0.6 s, far from
        // the timeout.
        a.extend(["--block", "1m"]);
        a.extend(extra);
        a.extend([good[0].dev.as_str(), rw.dev.as_str()]);
        t.command(&a).start()
    };
    let state = tempdir();
    let bjson = dir.path().join("b.json");
    let child = spawn(state.path(), &["--io-timeout", "3s", "--json", bjson.to_str().unwrap()]);
    if !wait_for(Duration::from_secs(20), || writing(state.path())) {
        let out = child.kill();
        let files: Vec<String> = std::fs::read_dir(state.path())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                format!(
                    "{:?}: {}",
                    e.file_name(),
                    std::fs::read_to_string(e.path()).unwrap_or_default()
                )
            })
            .collect();
        panic!("never wrote: {}\n{files:#?}", text(&out.stderr));
    }
    let frozen = rw.freeze();
    let began = Instant::now();
    // The result written at the run's end (a copy saved as it began says
    // no exit status).
    let written =
        wait_for(Duration::from_secs(30), || says(&bjson, "exit_status", |v| v.is_number()));
    let took = began.elapsed();
    drop(frozen);
    let out = child.wait(MINUTE);
    eprintln!("{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(written, "no result while the disk hung");
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&bjson).unwrap()).unwrap();
    let disk = |dev: &str| {
        let all = v["disks"].as_array().unwrap();
        all.iter().find(|x| x["path"] == dev).unwrap().clone()
    };
    assert_eq!(disk(&good[0].dev)["verified_bytes"], 16 * MIB);
    let hung = disk(&rw.dev);
    assert_eq!(hung["verdict"], "check_path", "{hung}");
    assert_eq!(hung["hung"]["phase"], "write", "{hung}");
    // Not interrupted, but not whole either: one disk was not burned.
    assert_eq!((&v["interrupted"], &v["complete"]), (&false.into(), &false.into()));
    assert!(text(&out.stdout).contains("stopped answering"), "the report says it");
    // Said the moment the watch saw it, dated, on stderr and in the log
    // (only --notify heard of it).
    let hung_said = format!(
        "arrayburn burnin: {}: hung: a request got no answer within --io-timeout (3 s)",
        rw.dev
    );
    let line = text(&out.stderr).lines().find(|l| l.contains(&hung_said)).map(str::to_string);
    let line = line.unwrap_or_else(|| panic!("{}", text(&out.stderr)));
    assert!(line.starts_with("20") && line.contains('T'), "dated: {line}");
    let runs = std::fs::read_dir(state.path().join("runs")).unwrap();
    let log = runs.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "log"));
    let log = std::fs::read_to_string(log.expect("the run's log")).unwrap();
    assert!(log.contains(&hung_said), "{log}");
    // A signal while a disk hangs (its timeout far away): the partial
    // report within seconds, exit 130.
    let state = tempdir();
    let _ = std::fs::remove_file(&bjson);
    let child = spawn(state.path(), &["--json", bjson.to_str().unwrap()]);
    assert!(wait_for(Duration::from_secs(20), || writing(state.path())), "never wrote");
    let frozen = rw.freeze();
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    child.signal(nix::sys::signal::Signal::SIGINT);
    let written = wait_for(Duration::from_secs(20), || says(&bjson, "interrupted", |v| v == true));
    let took = sent.elapsed();
    drop(frozen);
    let out = child.wait(MINUTE);
    eprintln!("{}", text(&out.stderr));
    assert!(written && took < Duration::from_secs(5), "report {took:?} after the signal");
    assert_eq!(out.status.code(), Some(130));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&bjson).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
}

/// Whether the JSON result at `path` has `key` as `holds` wants (a copy
/// saved before the end does not say what the end says).
fn says(path: &Path, key: &str, holds: impl Fn(&serde_json::Value) -> bool) -> bool {
    let read = std::fs::read(path).ok();
    let v = read.and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    v.is_some_and(|v| holds(&v[key]))
}

#[test]
fn buffers_beyond_the_memory_a_run_may_have_are_refused_with_the_figure() {
    need_root!();
    let _l = device_lock();
    // A disk that holds a 512 MiB block (a larger block than the disk is
    // refused first); sparse: nothing here is timed.
    let d = [sparse_disk(1 << 30, 512)];
    // A 1 GiB memory cgroup (a systemd unit or a container sets such).
    let group =
        PathBuf::from(format!("/sys/fs/cgroup/memory/arrayburn-test-{}", std::process::id()));
    std::fs::create_dir(&group).unwrap();
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _g = Remove(group.clone());
    std::fs::write(group.join("memory.limit_in_bytes"), (1u64 << 30).to_string()).unwrap();
    let inside = |args: &[&str]| {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!("echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"", group.display()))
            .arg(bin())
            .args(args);
        run(&mut c)
    };
    let before = sum(&d[0].file);
    // Through io_uring the check's reads all land in one block, whatever
    // the depth: 64 in flight of 64 MiB run inside the 1 GiB (each its own
    // block, 4 GiB, they were refused and, unrefused, killed); a block of
    // 512 MiB and one for pinpointing do not fit.
    let deep =
        inside(&["check", "--queue-depth", "64", "--block", "64m", "--sample", "1.5s", &d[0].dev]);
    assert!(matches!(deep.status.code(), Some(0 | 3)), "{:?}: {}", deep.status, text(&deep.stderr));
    for args in [
        vec!["check", "--queue-depth", "64", "--block", "512m", "--sample", "1.5s", &d[0].dev],
        vec![
            "burnin",
            "--destructive",
            "--yes",
            "--smart",
            "off",
            "--queue-depth",
            "64",
            "--block",
            "64m",
            "--engine",
            "io_uring",
            &d[0].dev,
        ],
    ] {
        let out = inside(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("the I/O buffers need"), "{err}");
        assert!(err.contains("its memory cgroup's limit leaves"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert_eq!(sum(&d[0].file), before);
}

#[test]
fn links_planted_as_checkpoints_are_refused_naming_the_file_once() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 8 << 20);
    let state = tempdir();
    let victim = state.path().join("elsewhere.json");
    std::fs::write(&victim, "{}").unwrap();
    let point = state.path().join(format!("burnin-{}.json", d[0].name()));
    std::os::unix::fs::symlink(&victim, &point).unwrap();
    let st = state.path().to_str().unwrap();
    for args in [
        vec!["burnin", "--verify", "--state", st, &d[0].dev],
        vec!["burnin", "--resume", "--destructive", "--yes", "--state", st, &d[0].dev],
    ] {
        let out = arrayburn(&args).output_within(RUN);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        let shown = point.display().to_string();
        assert_eq!(err.matches(&shown).count(), 1, "the path once: {err}");
        assert!(
            err.contains("is a symbolic link") && err.contains("(nothing was written)"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "{}");
}

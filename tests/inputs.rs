//! Bad input: one line naming the path and the way out, exit 2, nothing
//! written, before any I/O.

use std::path::Path;
use std::time::Duration;

use arrayburn::device::lock::holders_of_file;

use crate::util::*;

/// Runs `arrayburn check ARGS --json J` and asserts a one-line refusal
/// containing `needle`, exit 2, and no JSON written.
fn refused(args: &[&str], needle: &str) {
    let dir = tempdir();
    let json = dir.path().join("never.json");
    let mut all = vec!["check", "--sample", "1.5s", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = arrayburn(&all).output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
    assert!(out.stdout.is_empty(), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    assert!(!json.exists(), "a refused check wrote its JSON");
}

#[test]
fn a_missing_path_is_refused() {
    refused(
        &["/dev/arrayburn-no-such-disk"],
        "/dev/arrayburn-no-such-disk: no such file or device; `arrayburn list`",
    );
}

#[test]
fn a_regular_file_is_refused_with_the_losetup_hint() {
    let dir = tempdir();
    let f = dir.path().join("disk.img");
    std::fs::write(&f, vec![1u8; 8192]).unwrap();
    refused(
        &[f.to_str().unwrap()],
        "is a regular file, not a block device; attach it first with `losetup",
    );
}

#[test]
fn a_placement_file_that_cannot_be_used_is_refused() {
    // ARRAYBURN_TOPOLOGY is refused whole, before any disk is looked at,
    // not silently ignored (the disks would stay where sysfs says).
    let dir = tempdir();
    let bad = dir.path().join("topology.json");
    std::fs::write(&bad, "{\"sda\": [").unwrap();
    let missing = dir.path().join("none.json");
    for (file, needle) in [
        (&bad, "not a JSON object of kernel names to topologies"),
        (&missing, "No such file or directory"),
    ] {
        for cmd in [&["list"][..], &["check", "/dev/arrayburn-no-such-disk"][..]] {
            let out = arrayburn(cmd).env("ARRAYBURN_TOPOLOGY", file).output_within(RUN);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
            assert!(
                err.starts_with(&format!(
                    "arrayburn: error: ARRAYBURN_TOPOLOGY={}: ",
                    file.display()
                )) && err.contains(needle)
                    && err.trim_end().ends_with("or unset it"),
                "{cmd:?}: {err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(out.stdout.is_empty());
        }
    }
}

#[test]
fn a_directory_is_refused() {
    refused(&["/tmp"], "/tmp is a directory, not a block device");
}

#[test]
fn a_character_device_is_refused() {
    refused(&["/dev/null"], "/dev/null is a character device, not a block device");
}

#[test]
fn bad_options_are_refused() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 8 << 20);
    let dev = d[0].dev.as_str();
    refused(&["--slow-pct", "150", dev], "--slow-pct 150 must be between 0 and 100");
    refused(&["--fast-pct", "90", dev], "--fast-pct 90 must be above 100");
    let rated = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(rated.path(), "model,mb_per_s,source\nST4000NM0023,fast,me\n").unwrap();
    let shown = rated.path().display().to_string();
    refused(&["--rated", &shown, dev], &format!("--rated {shown}: row 1:"));
    std::fs::write(rated.path(), "model,mb_per_s,source\nST4000NM0023,1e308,me\n").unwrap();
    refused(
        &["--rated", &shown, dev],
        &format!(
            "--rated {shown}: row 1: ST4000NM0023 is rated at 1e308 MB/s, more than any drive reads"
        ),
    );
    refused(&["--rated", "/nonexistent/rated.csv", dev], "--rated /nonexistent/rated.csv: ");
    refused(&["--block", "1000", dev], "is not a multiple of");
    refused(&["--max-errors", "0", dev], "--max-errors 0: give at least 1");
    refused(&["--spots", "0", dev], "--spots 0: give 1 to 1000");
    refused(&["--spots", "11", "--full", dev], "add --full-serial, or drop --spots");
    refused(&["--seek", "--seek-readers", "1", dev], "--seek-readers 1: give 2 to 64");
    refused(&["--out", "/nonexistent-dir/run1", dev], "directory /nonexistent-dir does not exist");
    // A directory of something else (a checkout): never written among.
    let checkout = tempdir();
    std::fs::write(checkout.path().join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(checkout.path().join("report.txt"), "mine\n").unwrap();
    let shown = checkout.path().display().to_string();
    refused(
        &["--out", &shown, dev],
        &format!("--out {shown}: holds 'Cargo.toml', which no arrayburn run wrote"),
    );
    assert_eq!(std::fs::read_to_string(checkout.path().join("report.txt")).unwrap(), "mine\n");
    let file = tempfile::NamedTempFile::new().unwrap();
    refused(&["--out", file.path().to_str().unwrap(), dev], "--out takes a directory");
    refused(
        &["--out", dev, dev],
        &format!(
            "--out {dev}: is a block device (results are never written to a disk); --out takes a directory"
        ),
    );
    let out = arrayburn(&["check", "--sample", "2 fortnights", dev]).output_within(RUN);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("30s, 1m30s, 1.5s or 1h"));
    // A compound duration is a duration: the refusal is about the disk.
    let out = arrayburn(&["check", "--sample", "1m30s", "/dev/arrayburn-no-such-disk"])
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/dev/arrayburn-no-such-disk: no such file"), "{err}");
}

#[test]
fn a_block_no_disk_holds_is_refused_naming_the_smallest_disk_and_what_fits() {
    // A random block of 1 GiB on 64 MiB disks failed every random read and
    // told the user to return every healthy disk: refused before any read.
    need_root!();
    let _l = device_lock();
    let (big, small) = (loop_disk(&Spec::shm(16 << 20)), loop_disk(&Spec::shm(8 << 20)));
    let (b, s) = (big.dev.as_str(), small.dev.as_str());
    let fits =
        format!("does not fit {s}, which holds 8 MiB (8388608 bytes): give at most 8388608 bytes");
    refused(&["--random", "--random-block", "1g", b, s], &format!("--random-block 1 GiB {fits}"));
    refused(&["--block", "16m", b, s], &format!("--block 16 MiB {fits}"));
    // What fits the smallest disk is taken.
    let out = arrayburn(&["check", "-s", "1.5s", "--mode", "serial", "--block", "8m", b, s])
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("serial {s}: ")), "{err}");
}

#[test]
fn a_command_line_clap_cannot_take_is_one_line_with_the_way_out() {
    for (args, says) in [
        (&["check", "--bogus"][..], "unexpected argument '--bogus' found; tip: "),
        (&["chek"][..], "a similar subcommand exists: 'check'"),
        (&["check"][..], "not provided: <DEVICES>..."),
        // list --json takes its FILE (- for stdout), never the disk after it.
        (&["list", "--json"][..], "a value is required for '--json <FILE>'"),
    ] {
        let out = arrayburn(args).output_within(RUN);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.trim_end().ends_with("; see --help"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let help = arrayburn(&["check", "--help"]).output_within(RUN);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Exit status:"));
}

#[test]
fn the_same_disk_twice_is_refused_also_through_a_symlink() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 8 << 20);
    let dir = tempdir();
    let link = dir.path().join("alias");
    std::os::unix::fs::symlink(&d[0].dev, &link).unwrap();
    refused(&[&d[0].dev, link.to_str().unwrap()], "is the same disk as");
    refused(&[&d[0].dev, &d[0].dev], "named twice");
}

#[test]
fn a_partition_is_refused_naming_its_disk() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 16 << 20);
    let disk = &d[0];
    // This kernel parses no partition tables; BLKPG (addpart) adds one
    // directly, as a partitioning tool would.
    let ok = std::process::Command::new("addpart")
        .args([disk.dev.as_str(), "1", "2048", "20480"])
        .output_within(MINUTE)
        .status;
    assert!(ok.success(), "addpart failed");
    /// Partitions added with BLKPG outlive the loop binding: delete ours.
    struct DelPart(String);
    impl Drop for DelPart {
        fn drop(&mut self) {
            let _ = std::process::Command::new("delpart")
                .args([self.0.as_str(), "1"])
                .output_within(MINUTE);
        }
    }
    let _part = DelPart(disk.dev.clone());
    // Without udev no /dev/loopNp1 appears: make the node from sysfs.
    let sys = format!("/sys/block/{0}/{0}p1/dev", disk.name());
    for _ in 0..50 {
        if Path::new(&sys).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let devno = std::fs::read_to_string(&sys).expect("the kernel saw the partition");
    let (major, minor) = devno.trim().split_once(':').unwrap();
    let dir = tempdir();
    let node = dir.path().join(format!("{}p1", disk.name()));
    let ok = std::process::Command::new("mknod")
        .arg(&node)
        .args(["b", major, minor])
        .output_within(MINUTE)
        .status;
    assert!(ok.success());
    let expect = format!(
        "is partition {0}p1 of disk {0}; the check reads whole disks: name /dev/{0} instead",
        disk.name()
    );
    refused(&[node.to_str().unwrap()], &expect);
    // The burn-in has no flag for partitions: its refusal names none.
    let state = tempdir();
    let out = arrayburn(&["burnin", "--destructive", "--yes", "--state"])
        .arg(state.path())
        .arg(&node)
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let expect = format!(
        "is partition {0}p1 of disk {0}; a burn-in tests whole disks: name /dev/{0} instead (nothing was written)",
        disk.name()
    );
    assert!(err.contains(&expect), "{err}");
    assert!(!err.contains("--allow-partitions"), "{err}");
}

#[test]
fn without_permission_the_check_says_run_as_root() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 8 << 20);
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin(),
            "check",
            "--sample",
            "1.5s",
            &d[0].dev,
        ])
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}: permission denied; run arrayburn as root", d[0].dev)),
        "{err}"
    );
}

#[test]
fn a_mounted_disk_is_checked_with_a_warning() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 64 << 20);
    let mkfs =
        std::process::Command::new("mkfs.ext4").args(["-q", "-F", &d[0].dev]).output_within(RUN);
    assert!(mkfs.status.success(), "{}", String::from_utf8_lossy(&mkfs.stderr));
    let mnt = tempdir();
    let m = std::process::Command::new("mount")
        .args([&d[0].dev, mnt.path().to_str().unwrap()])
        .output_within(MINUTE)
        .status;
    assert!(m.success());
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).output_within(MINUTE);
        }
    }
    let _u = Unmount(mnt.path());
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let r = finish(
        arrayburn(&[
            "check",
            "--sample",
            "1.5s",
            "--progress",
            "none",
            "--json",
            json.to_str().unwrap(),
            &d[0].dev,
        ]),
        &json,
    );
    // A lone disk has no peer to be compared with: no health is claimed.
    assert_eq!(r.code, 3, "a lone disk is not judged");
    assert!(r.stdout.contains("NOT JUDGED"), "{}", r.stdout);
    assert!(
        r.stderr.contains(&format!("warning: {} is in use ({} mounted on", d[0].dev, d[0].name())),
        "{}",
        r.stderr
    );
    assert!(
        matches!(
            r.report.unwrap().disks[0].in_use[..],
            [arrayburn::device::InUse::Mounted { .. }, ..]
        ),
        "the JSON says it was mounted"
    );
}

#[test]
fn a_non_utf8_argument_is_refused_not_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"/tmp/arrayburn-\xff");
    for args in [
        vec!["check".as_ref(), bad],
        vec!["list".as_ref(), bad],
        vec!["check".as_ref(), "--json".as_ref(), bad, "/dev/null".as_ref()],
        vec!["demo".as_ref(), "--out".as_ref(), bad, "--disks".as_ref(), "1".as_ref()],
        vec!["iozone".as_ref(), "-f".as_ref(), bad, "-s".as_ref(), "1m".as_ref()],
    ] {
        let out = std::process::Command::new(bin()).args(&args).output_within(RUN);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A device test run without root skips with the reason, but fails where
/// `ARRAYBURN_REQUIRE_DEVICES=1` says a skip would hide a broken CI.
#[test]
fn a_device_test_without_root_skips_but_fails_where_devices_are_required() {
    need_root!(); // to become another user
    let me = std::env::current_exe().unwrap();
    let run = |require: &str| {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&me)
            .args(["--exact", "list::list_shows_a_named_4k_disk_with_its_geometry", "--nocapture"])
            .env("ARRAYBURN_REQUIRE_DEVICES", require)
            .output_within(RUN);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    let (code, text) = run("0");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("skipped: this test needs root"), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    let (code, text) = run("1");
    assert_eq!(code, Some(101), "{text}");
    assert!(text.contains("ARRAYBURN_REQUIRE_DEVICES=1 but this test needs root"), "{text}");
}

#[test]
fn two_outputs_naming_one_file_are_refused() {
    let dir = tempdir();
    let x = dir.path().join("x");
    let x = x.to_str().unwrap();
    let same = format!("{}/./x", dir.path().display());
    // A block node of its own, of an experimental-use major no driver has
    // (were it ever opened, it would fail, never reach a disk).
    let blk_path = dir.path().join("blk");
    let blk = blk_path.to_str().unwrap().to_string();
    let made = nix::sys::stat::mknod(
        &blk_path,
        nix::sys::stat::SFlag::S_IFBLK,
        nix::sys::stat::Mode::from_bits_truncate(0o600),
        nix::sys::stat::makedev(240, 77),
    );
    for (args, says) in [
        (vec!["--json", x, "--csv", &same], "name the same file"),
        (vec!["--json", "-", "--csv", "-"], "name the same file"),
        (vec!["--json", &blk, "--csv", x], "is a block device"),
        (vec!["--json", x, "--record", &same], "name the same file"),
        (vec!["--record", "-", "--csv", x], "--record -: give a file"),
    ] {
        if args[1] == blk && made.is_err() {
            continue; // not root: no mknod
        }
        let mut all = vec!["check", "--sample", "1.5s"];
        all.extend_from_slice(&args);
        all.push("/dev/arrayburn-no-such-disk");
        let out = arrayburn(&all).output_within(RUN);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let left = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(left, usize::from(made.is_ok()), "nothing written");
}

/// Runs `second` once `first` holds the lock of `disk`, then stops
/// `first`; returns the second run's output and the pid that held the
/// lock (`first`'s, or that of the child a check splits into).
fn while_running(
    mut first: Child,
    disk: &str,
    second: &mut std::process::Command,
) -> (std::process::Output, u32) {
    let mut holder = None;
    let pid = first.id();
    first.wait_until(&format!("the lock of {disk}"), MINUTE, || {
        let family = family(pid);
        let holders = holders_of_file(std::path::Path::new(disk));
        holder = holders.iter().map(|h| h.pid).find(|p| family.contains(p));
        holder.is_some()
    });
    let out = second.output_within(RUN);
    first.interrupt(MINUTE);
    (out, holder.unwrap())
}

#[test]
fn a_second_run_on_the_same_disk_is_refused_and_names_the_first() {
    need_root!();
    let _l = device_lock();
    let d = disks(1, 16 << 20);
    let first = arrayburn(&["check", "--sample", "20s", "--progress", "none", &d[0].dev]).start();
    let first_pid = first.id();
    let second = &mut arrayburn(&["check", "--sample", "1.5s", &d[0].dev]);
    // The check reads in the child it splits into: that one holds the disk.
    let (out, pid) = while_running(first, &d[0].dev, second);
    assert_ne!(pid, first_pid, "the disk held by the check's own child");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{} is in use by pid {pid} (user root: ", d[0].dev)), "{err}");
    assert!(err.contains("wait for that run to end"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());

    // iozone takes the lock of the disk under its files' filesystem.
    let fs_disk = loop_disk(&Spec::shm(32 << 20));
    let dir = Mounted::ext4(&fs_disk);
    let iozone = |extra: &[&str]| {
        let mut c = arrayburn(&["iozone", "-s", "64k", "-r", "64k", "-i", "0", "-i", "1"]);
        c.args(extra).current_dir(dir.path());
        c
    };
    let first = iozone(&["-t", "1", "-F", "a", "--pause", "5"]).start();
    // iozone takes it in its own process.
    let pid = first.id();
    let (out, _) = while_running(first, &fs_disk.dev, &mut iozone(&["-f", "b"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("is in use by pid {pid} (user root: "))
            && err.contains(" iozone -s 64k"),
        "{err}"
    );
}

#[test]
fn help_completions_and_man_pages_come_from_the_same_definitions() {
    let text = |args: &[&str]| {
        let out = arrayburn(args).output_within(RUN);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let help = text(&["check", "--help"]);
    for heading in ["What to read:", "How to judge:", "Outputs:", "Exit status:", "Examples:"] {
        assert!(help.contains(heading), "{heading} in {help}");
    }
    assert!(help.contains("  3    not judged"), "{help}");
    let bash = text(&["completions", "bash"]);
    assert!(bash.contains("--sample") && bash.contains("iozone"), "{bash}");
    let st =
        std::process::Command::new("bash").args(["-n", "-c", &bash]).output_within(MINUTE).status;
    assert!(st.success(), "the bash script parses");
    assert!(text(&["completions", "zsh"]).starts_with("#compdef arrayburn"));
    assert!(text(&["completions", "fish"]).contains("complete -c arrayburn"));
    let man = text(&["man"]);
    assert!(man.contains(".TH arrayburn 1"), "{man}");
    assert!(man.contains(".SH \"EXIT STATUS\""), "{man}");
    for code in ["0", "1", "2", "3", "130"] {
        assert!(man.contains(&format!(".TP\n\\fB{code}\\fR\n")), "exit {code}: {man}");
    }
    let check = text(&["man", "check"]);
    assert!(check.contains(".TH arrayburn-check 1"), "{check}");
    assert!(check.contains("\\-\\-sample"), "{check}");
    assert!(check.contains(".SH EXAMPLES"), "{check}");
    let out = arrayburn(&["man", "nope"]).output_within(RUN);
    assert_eq!(out.status.code(), Some(2));
}

/// `--json >(jq …)`: a pipe named /dev/fd/N is written through, not
/// mistaken for a path to create.
#[test]
fn a_process_substitution_gets_the_json() {
    let dir = tempdir();
    let out = dir.path().join("list.json");
    // The reader renames its file when the pipe closes: whole or absent.
    let script = format!(
        "'{}' list --all --json >(cat > '{o}.part' && mv '{o}.part' '{o}'); wait",
        bin(),
        o = out.display()
    );
    let st = std::process::Command::new("bash").args(["-c", &script]).output_within(MINUTE).status;
    assert!(st.success());
    for _ in 0..50 {
        if out.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(v.is_array(), "{v}");
}

/// An ordinary user runs iozone on their own files: the run goes on even
/// where it cannot make the disk's lock file (at most a warning).
#[test]
fn iozone_runs_for_an_ordinary_user() {
    need_root!(); // to become another user
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin())
        .args(["iozone", "-s", "64k", "-r", "4k", "-i", "0", "-f", "F"])
        .current_dir(dir.path())
        .output_within(RUN);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("iozone test complete."));
    assert!(err.lines().all(|l| l.contains("warning")), "{err}");
}

#[test]
fn a_device_path_with_terminal_escapes_is_shown_escaped_everywhere() {
    need_root!();
    let _l = device_lock();
    // A link whose name carries an OSC sequence (it retitles the terminal)
    // and BEL, pointing at a disk: every line printed, the text report and
    // the page show it as escapes, never the bytes themselves.
    let d = disks(1, 16 << 20);
    let dir = tempdir();
    let link = dir.path().join("disk\u{1b}]0;pwned\u{7}");
    std::os::unix::fs::symlink(&d[0].dev, &link).unwrap();
    let out_dir = dir.path().join("bundle");
    let out = arrayburn(&["check", "--sample", "1.5s", "--progress", "lines"])
        .args(["--out", out_dir.to_str().unwrap()])
        .arg(&link)
        .output_within(RUN);
    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    let text = std::fs::read_to_string(out_dir.join("report.txt")).unwrap();
    for (what, s) in [
        ("stdout", String::from_utf8_lossy(&out.stdout).into_owned()),
        ("stderr", String::from_utf8_lossy(&out.stderr).into_owned()),
        ("report.txt", text),
        ("report.html", page),
    ] {
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'), "{what} holds the raw bytes: {s}");
        assert!(s.contains("disk\\x1b]0;pwned\\x07"), "{what} does not name the disk: {s}");
    }
}

/// Values past what any numeric or duration flag takes.
fn huge_values(arg: &clap::Arg) -> &'static [&'static str] {
    use std::any::TypeId;
    let ty = arg.get_value_parser().type_id();
    if ty == TypeId::of::<std::time::Duration>() {
        // 1e20 s overflowed the parser; 87600h is the most it takes, and
        // a clock plus that is the next place to overflow.
        &["99999999999999999999s", "87600h", "99999999999999999999", "87599h59m"]
    } else if ty == TypeId::of::<f64>() {
        &["1e308", "99999999999999999999", "NaN", "inf"]
    } else if [TypeId::of::<u8>(), TypeId::of::<u16>(), TypeId::of::<u32>()]
        .iter()
        .any(|t| ty == *t)
        || [TypeId::of::<u64>(), TypeId::of::<usize>(), TypeId::of::<i64>()]
            .iter()
            .any(|t| ty == *t)
    {
        &["99999999999999999999", "18446744073709551615", "4294967295", "15e"]
    } else {
        &[]
    }
}

/// Every numeric and duration flag of every command that takes disks or
/// results, at values past what the tool takes: a one-line refusal or a
/// run, never a panic (exit 101 and a backtrace). A flag that needs
/// another is given it as clap asks; a run that goes on is stopped as
/// Ctrl-C would.
#[test]
fn no_value_of_a_numeric_or_duration_flag_panics() {
    use clap::CommandFactory;
    need_root!();
    let _l = device_lock();
    let d = disks(2, 8 << 20);
    let dir = tempdir();
    let (a, b) = (d[0].dev.as_str(), d[1].dev.as_str());
    let state = dir.path().join("state").display().to_string();
    let recorded = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/report/demo/report.json");
    let cli = arrayburn::cli::Cli::command();
    let mut tried = Vec::new();
    for sub in cli.get_subcommands() {
        let base: Vec<&str> = match sub.get_name() {
            "check" => {
                vec!["check", "--progress", "none", "-s", "1.5s", "--mode", "serial", a, b]
            }
            "inspect" => vec!["inspect", a, b],
            "burnin" => vec!["burnin", "--destructive", "--yes", "--state", &state, a, b],
            "report" => vec!["report", recorded],
            "list" => vec!["list"],
            "locate" => vec!["locate", a],
            // demo builds its own disks through check's flags; iozone parses
            // its own (tests/iozone.rs); completions, man, help take no number.
            _ => continue,
        };
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            for value in huge_values(arg) {
                let flag = format!("--{long}");
                let mut args: Vec<String> = base.iter().map(|s| s.to_string()).collect();
                args.extend([flag.clone(), value.to_string()]);
                let out = run_unless_it_needs(sub, &mut args, dir.path());
                let err = String::from_utf8_lossy(&out.stderr);
                assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
                assert!(!err.contains("panicked"), "{args:?}: {err}");
                tried.push(flag);
            }
        }
    }
    for flag in ["--io-timeout", "--random-time", "--spin-up-timeout", "--wait-for-disks", "--idle"]
    {
        assert!(tried.iter().any(|t| t == flag), "{flag} was not tried: {tried:?}");
    }
    for flag in ["--notify-timeout", "--sample", "--duration", "--buckets", "--max-errors"] {
        assert!(tried.iter().any(|t| t == flag), "{flag} was not tried: {tried:?}");
    }
}

/// Runs `arrayburn ARGS` in `cwd`, adding what clap says is required (a
/// flag of the same command, with its first value or 1) up to three times;
/// a run still going after 3 s is interrupted.
fn run_unless_it_needs(
    sub: &clap::Command,
    args: &mut Vec<String>,
    cwd: &Path,
) -> std::process::Output {
    for _ in 0..4 {
        let mut child = arrayburn(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .current_dir(cwd)
            .start();
        let out = if wait_for(Duration::from_secs(3), || child.has_exited()) {
            child.wait(RUN)
        } else {
            child.interrupt(RUN).0
        };
        let err = String::from_utf8_lossy(&out.stderr);
        let Some(needed) = err.split("required arguments were not provided:").nth(1) else {
            return out;
        };
        let Some(name) = needed.split_whitespace().find_map(|w| w.strip_prefix("--")) else {
            return out;
        };
        let Some(arg) = sub.get_arguments().find(|a| a.get_long() == Some(name)) else {
            return out;
        };
        args.insert(1, format!("--{name}"));
        if arg.get_action().takes_values() {
            let first = arg.get_possible_values().first().map(|v| v.get_name().to_string());
            args.insert(2, first.unwrap_or_else(|| "1".into()));
        }
    }
    panic!("{args:?}: still asks for more flags")
}

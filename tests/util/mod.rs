//! Test helpers: filled loop devices, blkio throttles, the binary, and the
//! JSON schema assertions. Every guard removes exactly what it created on
//! drop (also on panic); everything a test makes is named
//! `arrayburn-test-PID-SEQ`, so that what a killed test could not remove
//! is found by `scripts/leftovers.sh`. Every child and every wait has a
//! deadline (`child`), and the device lock says which tests share the
//! machine (`lock`).

mod child;
pub mod lock;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub use child::{Child, Start, family, wait_for};
pub use lock::{Class, Lock, device_lock};

use serde_json::Value;

pub use arrayburn::judge::advice::Action;
pub use arrayburn::judge::surface::Against;
pub use arrayburn::judge::{ArrayVerdict, Verdict};
pub use arrayburn::measure::Stopped;
pub use arrayburn::report::{PassDisk, Report};

/// The burn-in's flags that judge no speed (no peer comparison, no stall
/// under a minute), for a test whose question is not a speed and that
/// shares the machine with other tests (`lock::UNTIMED`): a loaded
/// machine can hold a throttled write past the stall limit.
pub const NO_SPEED_JUDGED: [&str; 3] = ["--not-against-peers", "--stall-ms", "60000"];

/// Skips a test (with the reason printed) unless running as root. Where
/// `ARRAYBURN_REQUIRE_DEVICES=1` (CI sets it) a skip is a failure: a run
/// that could not create devices must not pass. Loop support, FUSE and
/// cgroup-v1 blkio are needed as root too: their helpers fail the test with
/// what is missing, never skip it.
macro_rules! need_root {
    () => {
        if !nix::unistd::Uid::effective().is_root() {
            let why = "this test needs root (it creates loop devices)";
            if std::env::var_os("ARRAYBURN_REQUIRE_DEVICES").is_some_and(|v| v == "1") {
                panic!("ARRAYBURN_REQUIRE_DEVICES=1 but {why}");
            }
            eprintln!("skipped: {why}");
            return;
        }
    };
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// A name marked as this test process's own (`scripts/leftovers.sh`
/// removes what carries it once the process is gone).
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::SeqCst))
}

/// How to make a loop disk.
#[derive(Clone)]
pub struct Spec {
    pub size: u64,
    pub sector: u32,
    /// Directory for the backing file (/dev/shm: memory-backed).
    pub dir: PathBuf,
    pub direct_io: bool,
}

impl Spec {
    pub fn shm(size: u64) -> Self {
        Self { size, sector: 512, dir: "/dev/shm".into(), direct_io: false }
    }
}
/// A filled loop disk (the library's: detached and deleted on drop).
pub use arrayburn::testbed::LoopDisk;

/// Makes a loop disk over a filled file as `spec` says.
pub fn loop_disk(spec: &Spec) -> LoopDisk {
    let file = spec.dir.join(unique("arrayburn-test") + ".img");
    let seed = SEQ.load(Ordering::SeqCst) as u64;
    arrayburn::testbed::fill_file(&file, spec.size, seed, &arrayburn::stop::StopFlag::default())
        .unwrap();
    let sector = spec.sector.to_string();
    let mut options = vec!["--sector-size", sector.as_str()];
    if spec.direct_io {
        options.push("--direct-io=on");
    }
    LoopDisk::attach(file, &options).expect("losetup")
}

/// A sparse loop disk of `size` bytes and `sector`-byte sectors in
/// /dev/shm (detached and deleted on drop): as big as a real drive, for a
/// test that reads almost none of it.
pub fn sparse_disk(size: u64, sector: u32) -> LoopDisk {
    let file = PathBuf::from("/dev/shm").join(unique("arrayburn-test") + ".img");
    std::fs::File::create(&file).unwrap().set_len(size).unwrap();
    LoopDisk::attach(file, &["--sector-size", &sector.to_string()]).expect("losetup")
}

/// An ext4 filesystem made on a loop disk and mounted on a temporary
/// directory; unmounted on drop (declare it after the disk, so it goes
/// first).
pub struct Mounted {
    pub dir: tempfile::TempDir,
}

impl Mounted {
    pub fn ext4(disk: &LoopDisk) -> Self {
        let mkfs = Command::new("mkfs.ext4").args(["-q", "-F", &disk.dev]).output_within(MINUTE);
        assert!(mkfs.status.success(), "{mkfs:?}");
        let dir = tempdir();
        let st = Command::new("mount").arg(&disk.dev).arg(dir.path()).output_within(MINUTE);
        assert!(st.status.success(), "mount {}: {st:?}", disk.dev);
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).output_within(MINUTE);
    }
}

/// Makes `n` memory-backed disks of `size` bytes.
pub fn disks(n: usize, size: u64) -> Vec<LoopDisk> {
    (0..n).map(|_| loop_disk(&Spec::shm(size))).collect()
}

/// A cgroup-v1 blkio group that throttles reads; removed on drop (the
/// crate's own, as the demo uses it).
pub struct Throttle(arrayburn::testbed::Throttle);

impl Throttle {
    pub fn new() -> Self {
        Self(
            arrayburn::testbed::Throttle::create(&unique("arrayburn-test"))
                .expect("cgroup v1 blkio (tests need /sys/fs/cgroup/blkio)"),
        )
    }

    /// Limits reads from `disk` to `bytes_per_s` for processes in the group.
    pub fn limit(&self, disk: &LoopDisk, bytes_per_s: u64) -> &Self {
        self.limit_dev(&disk.dev, bytes_per_s)
    }

    /// Limits reads from the block device `dev` (`/dev/loopN`).
    pub fn limit_dev(&self, dev: &str, bytes_per_s: u64) -> &Self {
        self.0.limit(&devno(dev), bytes_per_s).unwrap();
        self
    }

    /// Limits reads from `disk` to `per_s` requests a second.
    pub fn limit_iops(&self, disk: &LoopDisk, per_s: u64) -> &Self {
        self.0.limit_iops(&devno(&disk.dev), per_s).unwrap();
        self
    }

    /// Limits writes to `disk` to `bytes_per_s` for processes in the group.
    pub fn limit_write(&self, disk: &LoopDisk, bytes_per_s: u64) -> &Self {
        self.limit_write_dev(&disk.dev, bytes_per_s)
    }

    /// Limits writes to the block device `dev` (`/dev/loopN`).
    pub fn limit_write_dev(&self, dev: &str, bytes_per_s: u64) -> &Self {
        self.0.limit_write(&devno(dev), bytes_per_s).unwrap();
        self
    }

    /// The group's directory in the blkio hierarchy.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// `arrayburn ARGS` inside this group.
    pub fn command(&self, args: &[&str]) -> Command {
        self.0.command(bin(), args)
    }

    /// `PROGRAM ARGS` inside this group.
    pub fn command_of(&self, program: &str, args: &[&str]) -> Command {
        self.0.command(program, args)
    }

    /// A group that holds each of `disks`' reads and writes to a drive's
    /// [`CALM_BPS`], for a test that times nothing: memory-backed disks
    /// read at the CPU's pace keep both cores busy for a whole sample,
    /// slowing every test beside it; at a drive's pace they cost little.
    pub fn calm(disks: &[LoopDisk]) -> Self {
        let t = Self::new();
        for d in disks {
            t.limit(d, CALM_BPS).limit_write(d, CALM_BPS);
        }
        t
    }
}

/// What [`Throttle::calm`] holds a disk to: a fast hard disk's pace.
pub const CALM_BPS: u64 = 200_000_000;

/// The disks' writes held to `bytes_per_s` each, for the process a
/// command of the returned throttle runs.
pub fn writes_at(d: &[LoopDisk], bytes_per_s: u64) -> Throttle {
    let t = Throttle::new();
    for x in d {
        t.limit_write(x, bytes_per_s);
    }
    t
}

/// `MAJ:MIN` of the block device `dev` (`/dev/loopN`).
fn devno(dev: &str) -> String {
    let name = dev.trim_start_matches("/dev/");
    fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap().trim().to_string()
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_arrayburn")
}

/// `arrayburn ARGS` outside any throttle.
pub fn arrayburn(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args);
    c
}

/// `arrayburn ARGS` run to its end (at most [`RUN`]), what it printed
/// shown for a failing test.
pub fn printed(args: &[&str]) -> std::process::Output {
    let out = arrayburn(args).output_within(RUN);
    eprintln!(
        "--- {}
{}
--- stderr
{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A run's exit code, stdout, stderr, and its JSON report if written.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// The JSON file as written, for the schema checks.
    pub json: Option<Value>,
    /// The same file read as the crate's own `Report`: a misspelt field is
    /// a compile error, not a Null that passes.
    pub report: Option<Report>,
}

/// Runs `cmd` (which must write `--json json_path`), at most [`RUN`], and
/// reads the result.
pub fn finish(cmd: Command, json_path: &Path) -> Run {
    finish_within(cmd, json_path, RUN)
}

/// Runs `cmd` (which must write `--json json_path`) for at most `limit`
/// and reads the result.
pub fn finish_within(mut cmd: Command, json_path: &Path, limit: Duration) -> Run {
    let out = cmd.output_within(limit);
    let bytes = fs::read(json_path).ok();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json: bytes.as_ref().map(|b| serde_json::from_slice(b).expect("the JSON report parses")),
        report: bytes
            .as_ref()
            .map(|b| serde_json::from_slice(b).expect("the JSON report is a Report")),
    };
    eprintln!("--- stdout\n{}\n--- stderr\n{}", run.stdout, run.stderr);
    run
}

/// Checks the documented fields and their types, and that the document
/// also deserializes into the crate's own `Report` type.
pub fn assert_schema(v: &Value) {
    let _: arrayburn::report::Report =
        serde_json::from_value(v.clone()).expect("JSON matches the Report type");
    assert_eq!(v["schema_version"], 1);
    assert!(v["interrupted"].is_boolean());
    // The result names the machine: its id and kernel, beside the host.
    assert_eq!(
        v["machine_id"].as_str().map(str::len),
        std::fs::read_to_string("/etc/machine-id").ok().map(|m| m.trim().len()),
        "{}",
        v["machine_id"]
    );
    assert!(v["kernel"].as_str().is_some_and(|k| !k.is_empty()));
    let passes = v["passes"].as_array().expect("passes is a list");
    for p in passes {
        assert!(["serial", "parallel", "seek"].contains(&p["kind"].as_str().unwrap()));
        for d in p["disks"].as_array().expect("disks is a list") {
            assert!(d["path"].is_string());
            assert!(d["bytes"].is_u64());
            for k in ["elapsed_s", "mb_per_s"] {
                assert!(d[k].is_f64(), "{k} in {d}");
            }
            for k in ["p50", "p99", "p999", "max"] {
                assert!(d["latency_us"][k].is_number(), "latency_us.{k} in {d}");
            }
            assert!(
                ["ok", "slow", "fast", "error", "unsure"].contains(&d["verdict"].as_str().unwrap())
            );
        }
    }
    assert!(
        ["healthy", "flagged", "not_judged", "interrupted"]
            .contains(&v["summary"]["verdict"].as_str().unwrap())
    );
    assert!(v["summary"]["shared_bottleneck"].is_boolean());
    // The verdict sentence's three numbers describe the same disks.
    let sm = &v["summary"];
    if let (Some(s), Some(p), Some(pct)) = (
        sm["serial_sum_mb_per_s"].as_f64(),
        sm["parallel_mb_per_s"].as_f64(),
        sm["parallel_pct_of_serial_sum"].as_f64(),
    ) {
        assert!((pct - 100.0 * p / s).abs() < 0.01, "{pct}% is not {p} / {s}");
    }
}

/// `(path, action, sentence)` of each disk to act on.
pub fn disk_verdicts(r: &Report) -> Vec<(String, Action, String)> {
    r.summary.disk_verdicts.iter().map(|a| (a.path.clone(), a.action, a.sentence.clone())).collect()
}

/// `PATH=VERDICT` of the disks of `pass` that are not ok (the verdict as
/// the JSON writes it).
pub fn flagged(r: &Report, pass: &str) -> Vec<String> {
    verdicts(r, pass)
        .into_iter()
        .filter(|(_, v)| *v != Verdict::Ok)
        .map(|(p, v)| format!("{p}={}", serde_json::to_value(v).unwrap().as_str().unwrap()))
        .collect()
}

/// The verdicts of `pass` ("serial"/"parallel"/"seek") by disk path.
pub fn verdicts(r: &Report, pass: &str) -> Vec<(String, Verdict)> {
    disk_rows(r, pass).iter().map(|d| (d.path.clone(), d.verdict)).collect()
}

/// The rows of `pass` ("serial"/"parallel"/"seek"); panics when the report
/// has no such pass.
pub fn disk_rows<'a>(r: &'a Report, pass: &str) -> &'a [PassDisk] {
    &r.passes
        .iter()
        .find(|p| p.kind.name() == pass)
        .unwrap_or_else(|| panic!("no {pass} pass"))
        .disks
}

/// A temporary directory in /tmp, marked as this test process's own.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&(unique("arrayburn-test") + "-")).tempdir().unwrap()
}

/// An executable `name` in `dir` that runs `body` (sh): a tool that
/// answers as a recorded drive did (put `dir` first in PATH).
pub fn fake_tool(dir: &Path, name: &str, body: &str) {
    let script = dir.join(name);
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
}

/// A fake `smartctl` of release `release` ("7.3") in `dir`: it answers
/// `--json --version` as that release, refuses `-l farm` below 7.4 with
/// the real 7.3's words (`fixtures/smart/versions/farm-refused-7.3.json`,
/// exit 1), and runs `body` (sh) for every other call.
pub fn fake_smartctl(dir: &Path, release: &str, body: &str) {
    let (major, minor) = release.split_once('.').unwrap();
    let minor: u32 = minor.parse().unwrap();
    let version = format!(
        "case \" $* \" in *\" --version \"*) echo '{{\"json_format_version\":[1,0],\"smartctl\":{{\"version\":[{major},{minor}],\"argv\":[\"smartctl\",\"--json\",\"--version\"],\"exit_status\":0}}}}'; exit 0;; esac"
    );
    let refused =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/smart/versions/farm-refused-7.3.json");
    let farm = if minor < 4 {
        format!("case \" $* \" in *\" farm \"*) cat {}; exit 1;; esac", refused.display())
    } else {
        String::new()
    };
    fake_tool(dir, "smartctl", &format!("{version}\n{farm}\n{body}"));
}

/// A transcribed `smartctl --json -x` of release `release` for a drive of
/// `kind` (`fixtures/smart/versions/KIND-RELEASE.json`: `ata`, `sas`,
/// `nvme`; 7.2 to 7.5).
pub fn smart_of_release(kind: &str, release: &str) -> serde_json::Value {
    recorded_smart(&format!("versions/{kind}-{release}"))
}

/// A real `smartctl --json -x` recorded from a drive
/// (`fixtures/smart/NAME.json`: `ata`, `nvme`, …).
pub fn recorded_smart(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fixtures/smart/{name}.json"));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Sectors written to `dev` so far, from /sys/block/NAME/stat.
/// Makes the test's own loop device `dev` say it spins (sysfs
/// `queue/rotational`; a loop device over memory says it does not): what
/// it is judged as, and the scattered-write probe runs on it. Reset when
/// the device is attached again.
pub fn spins(dev: &str) {
    let name = dev.trim_start_matches("/dev/");
    let at = format!("/sys/block/{name}/queue/rotational");
    std::fs::write(&at, "1").unwrap_or_else(|e| panic!("{at}: {e}"));
}

pub fn sectors_written(dev: &str) -> u64 {
    let name = dev.trim_start_matches("/dev/");
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(6).unwrap().parse().unwrap()
}

/// Whether `program` is on the PATH.
pub fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// Whether every one of `programs` is here; where one is not, the test
/// skips (saying so), unless the run requires every tool
/// (`ARRAYBURN_REQUIRE_DEVICES=1`: then it fails, naming `package`, which
/// scripts/test.sh installs).
pub fn tools_here(programs: &[&str], package: &str) -> bool {
    let Some(missing) = programs.iter().find(|p| !installed(p)) else { return true };
    assert!(
        std::env::var_os("ARRAYBURN_REQUIRE_DEVICES").is_none_or(|v| v != "1"),
        "{missing} is needed (scripts/test.sh installs {package})"
    );
    eprintln!("skipping: no {missing} (scripts/test.sh installs {package} as root)");
    false
}

/// A short command's limit (a tool that answers at once: losetup, mount,
/// mkfs, a refusal).
pub const MINUTE: Duration = Duration::from_secs(60);
/// A run's limit where the test reads small disks for a few seconds: ten
/// times what it takes on a loaded machine of this kind.
pub const RUN: Duration = Duration::from_secs(300);

/// Lets `child` run for `after`, sends it SIGINT, and returns its output
/// and how long it took to stop once signalled.
pub fn interrupt_after(child: Child, after: Duration) -> (std::process::Output, Duration) {
    std::thread::sleep(after);
    child.interrupt(MINUTE)
}

/// Whether `dev` can be opened exclusively (nothing, the kernel included,
/// holds it).
pub fn is_free(dev: &str) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_EXCL).open(dev).is_ok()
}

/// Headless Chromium over one page, or None (said) where it is missing
/// and not required. It takes both cores for a while: a test that uses it
/// holds [`device_lock`] (shared) meanwhile, not to share the machine with
/// a timing test.
pub struct Browser {
    profile: tempfile::TempDir,
}

impl Browser {
    pub fn new() -> Option<Browser> {
        if !installed("chromium") {
            assert!(
                std::env::var_os("ARRAYBURN_REQUIRE_DEVICES").is_none_or(|v| v != "1"),
                "chromium is needed (scripts/test.sh installs it)"
            );
            eprintln!(
                "skipping the browser check: no chromium (scripts/test.sh installs it as root)"
            );
            return None;
        }
        Some(Browser { profile: tempdir() })
    }

    /// Runs Chromium on `page` with `extra` arguments, at most two
    /// minutes.
    pub fn run(&self, page: &Path, extra: &[&str]) -> std::process::Output {
        Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
            .args([
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
            ])
            .args(["--disable-sync", "--disable-quic"])
            .arg(format!("--user-data-dir={}", self.profile.path().display()))
            .args(extra)
            .arg(format!("file://{}", page.display()))
            .output_within(2 * MINUTE)
    }

    /// The DOM the page built, after any script it ran.
    pub fn dom(&self, page: &Path) -> String {
        String::from_utf8_lossy(&self.run(page, &["--dump-dom"]).stdout).into_owned()
    }

    /// A screenshot `width` by `height`: its pixels and samples per pixel.
    pub fn screenshot(&self, page: &Path, width: u32, height: u32) -> (Vec<u8>, usize) {
        let shot = self.profile.path().join("shot.png");
        let _ = fs::remove_file(&shot);
        let out = self.run(
            page,
            &[
                &format!("--screenshot={}", shot.display()),
                &format!("--window-size={width},{height}"),
            ],
        );
        assert!(shot.is_file(), "{}", String::from_utf8_lossy(&out.stderr));
        let decoder = png::Decoder::new(std::io::BufReader::new(File::open(&shot).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (buf, info.color_type.samples())
    }

    /// The page printed to PDF: the file's bytes.
    pub fn pdf(&self, page: &Path) -> Vec<u8> {
        let pdf = self.profile.path().join("page.pdf");
        let _ = fs::remove_file(&pdf);
        let out = self
            .run(page, &["--no-pdf-header-footer", &format!("--print-to-pdf={}", pdf.display())]);
        fs::read(&pdf).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

//! `arrayburn watch` on loop devices under a steady read load (one-head
//! FUSE disks whose every read takes a set time: the latency the kernel
//! counts is the disk's): the disk slow at its peers' load is named
//! fail-slow within a few windows, one at twice their load is not compared,
//! an idle one is idle, and the others stand at their peers'.

use crate::faults::FaultyDisk;
use crate::util::*;

/// `tests/helpers/load.py`: `rate:dev` pairs read for `secs`.
pub(crate) fn load(secs: u64, pairs: &[(u32, &str)]) -> Child {
    shifting(secs, pairs, None)
}

/// [`load`], moved after `shift.0` seconds to the region from `shift.1`
/// MiB.
fn shifting(secs: u64, pairs: &[(u32, &str)], shift: Option<(u64, u64)>) -> Child {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/helpers/load.py");
    let mut c = std::process::Command::new("python3");
    if let Some((after, mib)) = shift {
        c.env("LOAD_SHIFT", format!("{after}:{mib}"));
    }
    c.arg(script).arg(secs.to_string());
    c.args(pairs.iter().map(|(r, d)| format!("{r}:{d}")));
    c.start()
}

#[test]
fn the_disk_slow_at_its_peers_load_is_named_and_one_at_twice_their_load_or_idle_is_not() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    // Five peers of one size: three whose reads take 1 ms, one 6 ms (at
    // the same 20 reads a second: 6 times its peers' latency at their
    // load), one at 40 reads a second whose reads take 3 ms (slower, but
    // at twice the load: not comparable); and an idle one.
    let ok: Vec<FaultyDisk> = (0..3).map(|_| FaultyDisk::drive(64 * MIB, 1000, 0)).collect();
    let slow = FaultyDisk::drive(64 * MIB, 6000, 0);
    let busy = FaultyDisk::drive(64 * MIB, 3000, 0);
    let idle = FaultyDisk::drive(64 * MIB, 1000, 0);
    let mut pairs: Vec<(u32, &str)> = ok.iter().map(|d| (20, d.dev.as_str())).collect();
    pairs.extend([(20, slow.dev.as_str()), (40, busy.dev.as_str())]);
    let reader = load(30, &pairs);
    let dir = tempdir();
    let json = dir.path().join("w.jsonl");
    let mut args = vec!["watch", "--interval", "1s", "--for", "3s", "--count", "8"];
    args.extend(["-j", json.to_str().unwrap()]);
    let prom = dir.path().join("watch.prom");
    let told = dir.path().join("told");
    let notify = format!(
        "{{ echo \"$ARRAYBURN_EVENT $ARRAYBURN_VERDICT $ARRAYBURN_TO_ACT_ON\"; cat; }} >> {}",
        told.display()
    );
    args.extend(["--metrics", prom.to_str().unwrap(), "--notify", &notify]);
    let devs: Vec<&str> = ok.iter().chain([&slow, &busy, &idle]).map(|d| d.dev.as_str()).collect();
    args.extend(&devs);
    let out = arrayburn(&args).output_within(MINUTE);
    let loaded = reader.kill();
    keep(&json, "one-slow");
    assert!(loaded.stderr.is_empty(), "{}", String::from_utf8_lossy(&loaded.stderr));
    let text = String::from_utf8_lossy(&out.stderr);
    eprintln!("{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The run's start (its header, its disks and their peer groups), then
    // a line a window.
    assert_eq!(lines[0]["kind"], "watch", "{}", lines[0]);
    assert_eq!(lines[0]["disks"].as_array().unwrap().len(), 6, "{}", lines[0]);
    let ticks = &lines[1..];
    assert_eq!(ticks.len(), 8, "a line a window");
    let events: Vec<&serde_json::Value> =
        ticks.iter().flat_map(|t| t["events"].as_array().into_iter().flatten()).collect();
    let named: Vec<&str> = (events.iter())
        .filter(|e| e["event"] == "fail_slow")
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(named, [slow.dev.as_str()], "{events:?}");
    let e = events.iter().find(|e| e["event"] == "fail_slow").unwrap();
    assert_eq!(e["direction"], "read", "{e}");
    assert!(e["found"]["times"].as_f64().unwrap() >= 3.0, "{e}");
    assert!(text.contains(&format!("{}: FAIL-SLOW: its reads took", slow.dev)), "{text}");
    // The last window: each as it stood.
    let last = ticks.last().unwrap();
    let stood = |dev: &str| {
        let d = last["disks"].as_array().unwrap().iter().find(|d| d["path"] == dev).unwrap();
        d["read"].clone()
    };
    for d in &ok {
        let s = stood(&d.dev);
        let times = s["compared"]["times"].as_f64().unwrap_or(f64::NAN);
        assert!((0.5..1.6).contains(&times), "{}: {s}", d.dev);
    }
    assert_eq!(stood(&busy.dev), "load_differs");
    assert_eq!(stood(&idle.dev), "idle");
    assert!(stood(&slow.dev).get("slow").is_some(), "{}", stood(&slow.dev));
    // The metrics promtool accepts say so, and the notifier was told.
    let text = std::fs::read_to_string(&prom).unwrap();
    if crate::metrics::promtool_here() {
        crate::metrics::accepted(&text, "watch");
    }
    let value = |name: &str, has: &[&str]| crate::metrics::value(&text, name, has);
    let since = "arrayburn_watch_fail_slow_since_timestamp_seconds";
    let at = |d: &str| format!("device=\"{d}\"");
    assert!(
        value(since, &[&at(&slow.dev), "direction=\"read\""]).is_some_and(|t| t > 1.7e9),
        "{text}"
    );
    for d in ok.iter().chain([&busy, &idle]) {
        assert_eq!(value(since, &[&at(&d.dev)]), None, "{text}");
    }
    let standing = "arrayburn_watch_standing";
    assert_eq!(value(standing, &[&at(&busy.dev), "read", "load_differs"]), Some(1.0), "{text}");
    assert_eq!(value("arrayburn_run_complete", &["watch"]), Some(1.0), "{text}");
    let told = std::fs::read_to_string(&told).unwrap();
    assert!(told.starts_with(&format!("finding FAIL-SLOW {}\n{{", slow.dev)), "{told}");
    assert!(told.contains("\"event\": \"fail_slow\""), "{told}");
    // The report reads the watch beside other results: the disk to act on.
    let fleet = dir.path().join("fleet.json");
    let out = arrayburn(&["report", json.to_str().unwrap(), "--json", fleet.to_str().unwrap()])
        .output_within(MINUTE);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        said.contains(&format!("{}: fail-slow in service: its reads took", slow.dev)),
        "{said}"
    );
    let fleet: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fleet).unwrap()).unwrap();
    let runs = fleet["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{fleet}");
    assert_eq!(
        (runs[0]["kind"].as_str(), runs[0]["state"].as_str()),
        (Some("watch"), Some("flagged")),
        "{fleet}"
    );
    assert_eq!(runs[0]["disks"], serde_json::json!([slow.dev]), "{fleet}");
}

/// Where `WATCH_RECORD` names a directory, the run's JSON lines are kept
/// there as NAME.jsonl (how tests/fixtures/watch/ was recorded).
fn keep(json: &std::path::Path, name: &str) {
    if let Some(dir) = std::env::var_os("WATCH_RECORD") {
        std::fs::copy(json, std::path::Path::new(&dir).join(format!("{name}.jsonl"))).unwrap();
    }
}

/// The events of a run's JSON lines.
fn events(json: &std::path::Path) -> Vec<serde_json::Value> {
    (std::fs::read_to_string(json).unwrap().lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .flat_map(|t| t["events"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn disks_slowed_together_at_the_same_load_are_their_group_never_a_disk() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    // Four peers whose reads take 1 ms in their first 32 MiB and 6 ms in
    // the next: the load moves there after 6 s, on every disk at once.
    let disks: Vec<FaultyDisk> = (0..4)
        .map(|_| FaultyDisk::retrying(64 * MIB, (1000, 0), &[(32 * MIB, 32 * MIB)], 5000))
        .collect();
    let pairs: Vec<(u32, &str)> = disks.iter().map(|d| (20, d.dev.as_str())).collect();
    let reader = shifting(30, &pairs, Some((6, 32)));
    let dir = tempdir();
    let json = dir.path().join("w.jsonl");
    let mut args = vec!["watch", "--interval", "1s", "--for", "3s", "--count", "11"];
    args.extend(["-j", json.to_str().unwrap()]);
    args.extend(disks.iter().map(|d| d.dev.as_str()));
    let out = arrayburn(&args).output_within(MINUTE);
    let loaded = reader.kill();
    keep(&json, "all-slow");
    assert!(loaded.stderr.is_empty(), "{}", String::from_utf8_lossy(&loaded.stderr));
    let text = String::from_utf8_lossy(&out.stderr);
    eprintln!("{text}");
    let events = events(&json);
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["group_slow"], "{events:?}");
    let e = &events[0];
    assert_eq!(e["paths"].as_array().unwrap().len(), 4, "{e}");
    assert!(e["found"]["times"].as_f64().unwrap() >= 3.0, "{e}");
    assert!(text.contains("SLOW TOGETHER"), "{text}");
    assert!(!text.contains("FAIL-SLOW"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}

#[test]
fn on_an_80_column_terminal_the_live_table_is_redrawn_in_place_under_the_findings() {
    need_root!();
    if !tools_here(&["tmux"], "tmux") {
        return;
    }
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let ok: Vec<FaultyDisk> = (0..3).map(|_| FaultyDisk::drive(64 * MIB, 1000, 0)).collect();
    let slow = FaultyDisk::drive(64 * MIB, 6000, 0);
    let all: Vec<&FaultyDisk> = ok.iter().chain([&slow]).collect();
    let pairs: Vec<(u32, &str)> = all.iter().map(|d| (20, d.dev.as_str())).collect();
    let reader = load(30, &pairs);
    let devs: Vec<&str> = all.iter().map(|d| d.dev.as_str()).collect();
    let shell = format!("{} watch --interval 1s --for 2s --count 6 {}", bin(), devs.join(" "));
    let pane = crate::columns::on_terminal(80, 24, &shell, MINUTE);
    drop(reader.kill());
    assert!(pane.contains("EXITED 1"), "{pane}");
    assert_eq!(crate::columns::too_wide(&pane, 80), Vec::<&str>::new(), "{pane}");
    // Drawn in place: one table, its summary counting the finding said
    // above it, the slow disk's cell naming it.
    assert_eq!(pane.matches("watch: 4 disks every").count(), 1, "{pane}");
    assert!(pane.contains(": 1 fail-slow, 0 slow together, 0 gone, "), "{pane}");
    let said = pane.find(&format!("{}: FAIL-SLOW: its reads took", slow.dev)).expect(&pane);
    assert!(said < pane.find("watch: 4 disks every").unwrap(), "{pane}");
    let cell = pane.lines().find(|l| l.starts_with(&format!("{} ", slow.dev))).expect(&pane);
    assert!(cell.contains("FAIL-SLOW"), "{cell}");
    for d in &ok {
        let cell = pane.lines().find(|l| l.starts_with(&format!("{} ", d.dev))).expect(&pane);
        // Its reads at the load's 20 a second (a window may count one
        // more or less), compared, not named.
        let rate: f64 = cell
            .split(" R ")
            .nth(1)
            .and_then(|r| r.split("/s").next())
            .and_then(|r| r.trim().parse().ok())
            .expect(cell);
        assert!((15.0..=25.0).contains(&rate) && !cell.contains("FAIL"), "{cell}");
    }
}

/// The unit's command line as systemd runs arrayburn-watch.service: its
/// ExecStart, /var/lib/arrayburn as `lib`, `$VAR` split at spaces from
/// `env`, the binary the one under test.
fn unit_command(env: &[(&str, String)], lib: &std::path::Path) -> std::process::Command {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let unit =
        std::fs::read_to_string(root.join("contrib/systemd/arrayburn-watch.service")).unwrap();
    let exec = unit.lines().find_map(|l| l.strip_prefix("ExecStart=")).expect("an ExecStart");
    let exec = exec.replace("/var/lib/arrayburn", lib.to_str().unwrap());
    let mut words: Vec<String> = Vec::new();
    for w in exec.split_whitespace() {
        match w.strip_prefix('$') {
            Some(name) => {
                let value = env.iter().find(|(k, _)| *k == name).map_or("", |(_, v)| v.as_str());
                words.extend(value.split_whitespace().map(str::to_string));
            }
            None => words.push(w.to_string()),
        }
    }
    assert_eq!(words[0], "/usr/local/bin/arrayburn", "{exec}");
    let mut cmd = std::process::Command::new(bin());
    cmd.args(&words[1..]);
    cmd
}

#[test]
fn the_service_unit_verifies_and_its_watch_logs_its_findings_and_its_last_window_at_a_stop() {
    need_root!();
    let _l = device_lock();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    if tools_here(&["systemd-analyze"], "systemd") {
        let dir = tempdir();
        let unit = std::fs::read_to_string(root.join("contrib/systemd/arrayburn-watch.service"))
            .unwrap()
            .replace("/usr/local/bin/arrayburn", bin())
            .replace("/etc/arrayburn/", &format!("{}/", dir.path().display()));
        let path = dir.path().join("arrayburn-watch.service");
        std::fs::write(&path, unit).unwrap();
        std::fs::copy(root.join("contrib/systemd/watch.env"), dir.path().join("watch.env"))
            .unwrap();
        let out = std::process::Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&path)
            .output_within(MINUTE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.trim().is_empty(), "{err}");
    }
    const MIB: u64 = 1 << 20;
    let ok: Vec<FaultyDisk> = (0..3).map(|_| FaultyDisk::drive(64 * MIB, 1000, 0)).collect();
    let slow = FaultyDisk::drive(64 * MIB, 6000, 0);
    let all: Vec<&FaultyDisk> = ok.iter().chain([&slow]).collect();
    let pairs: Vec<(u32, &str)> = all.iter().map(|d| (20, d.dev.as_str())).collect();
    let reader = load(60, &pairs);
    let lib = tempdir();
    std::fs::create_dir_all(lib.path().join("watch")).unwrap();
    let prom = lib.path().join("watch.prom");
    let env = [
        ("ARRAYBURN_ARGS", format!("--interval 1s --for 2s --metrics {}", prom.display())),
        ("ARRAYBURN_DISKS", all.iter().map(|d| d.dev.as_str()).collect::<Vec<_>>().join(" ")),
    ];
    let mut watching = unit_command(&env, lib.path()).start();
    let log = lib.path().join("watch/watch.jsonl");
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    watching.wait_until("the finding in its log", MINUTE, || read().contains("fail_slow"));
    // Then windows without a finding: not written (a window an hour)...
    let found: Vec<serde_json::Value> =
        read().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let at = |v: &serde_json::Value| {
        chrono::DateTime::parse_from_rfc3339(v["at"].as_str().unwrap()).unwrap().timestamp() as f64
    };
    let event_at = at(found.last().unwrap());
    watching.wait_until("two windows more in its metrics", MINUTE, || {
        let text = std::fs::read_to_string(&prom).unwrap_or_default();
        let written =
            crate::metrics::value(&text, "arrayburn_run_last_written_timestamp_seconds", &[]);
        written.is_some_and(|t| t >= event_at + 2.5)
    });
    assert_eq!(read().lines().count(), found.len(), "no window written since its finding");
    // ... until `systemctl stop` (SIGTERM): its last window written.
    watching.signal(nix::sys::signal::Signal::SIGTERM);
    let out = watching.wait(MINUTE);
    drop(reader.kill());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains(&format!("{}: FAIL-SLOW", slow.dev)), "{err}");
    assert!(!err.contains(" read "), "no line per disk and window in the journal: {err}");
    let lines: Vec<serde_json::Value> =
        read().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Its start, its first window, the window of its finding, its last.
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[2]["events"][0]["event"], "fail_slow", "{lines:?}");
    assert!(lines[3]["events"].is_null() && at(&lines[3]) >= event_at + 2.0, "{lines:?}");
    let text = std::fs::read_to_string(&prom).unwrap();
    assert_eq!(crate::metrics::value(&text, "arrayburn_run_complete", &["watch"]), Some(1.0));
    // The report reads the log: the disk still fail-slow at its end.
    let out = arrayburn(&["report", lib.path().to_str().unwrap()]).output_within(MINUTE);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("{}: fail-slow in service", slow.dev)), "{said}");
}

#[test]
fn a_bad_disk_or_output_is_refused_in_one_line_before_anything_is_written() {
    let dir = tempdir();
    let json = dir.path().join("w.jsonl");
    let file = dir.path().join("disk.img");
    std::fs::write(&file, [0u8; 4096]).unwrap();
    let j = json.to_str().unwrap();
    let missing = dir.path().join("none/w.prom");
    for (args, needle) in [
        (vec!["/tmp"], "/tmp is a directory, not a block device"),
        (vec!["/dev/null"], "/dev/null is a character device, not a block device"),
        (vec![file.to_str().unwrap()], "is a regular file, not a block device"),
        (vec!["--metrics", missing.to_str().unwrap(), "/dev/null"], "--metrics"),
        (vec!["--metrics", j, "/dev/null"], "name the same file"),
        (vec!["--for", "0s"], "not a positive duration"),
    ] {
        let mut all = vec!["watch", "--count", "1", "--interval", "1s", "-j", j];
        all.extend(&args);
        let out = arrayburn(&all).output_within(MINUTE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(!json.exists(), "{args:?}: a refused watch wrote its JSON lines");
    }
    // --json-every without --json: clap's refusal, exit 2.
    let out = arrayburn(&["watch", "--json-every", "1h", "/dev/null"]).output_within(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(2) && err.contains("--json <FILE>"), "{err}");
}

#[test]
fn once_judges_one_window_and_exits_as_the_check_does() {
    need_root!();
    let _l = device_lock();
    const MIB: u64 = 1 << 20;
    let ok: Vec<FaultyDisk> = (0..3).map(|_| FaultyDisk::drive(64 * MIB, 1000, 0)).collect();
    let slow = FaultyDisk::drive(64 * MIB, 6000, 0);
    let devs: Vec<&str> = ok.iter().chain([&slow]).map(|d| d.dev.as_str()).collect();
    let pairs: Vec<(u32, &str)> = devs.iter().map(|d| (20, *d)).collect();
    let reader = load(20, &pairs);
    let mut args = vec!["watch", "--once", "--interval", "2s", "--progress", "lines"];
    args.extend(&devs);
    let slow_run = arrayburn(&args).output_within(MINUTE);
    // The same disks but the slow one: nothing stands out.
    let mut args = vec!["watch", "--once", "--interval", "2s", "--progress", "lines"];
    args.extend(&devs[..3]);
    let ok_run = arrayburn(&args).output_within(MINUTE);
    drop(reader.kill());
    // Nothing reads them any more: idle, never compared, not judged.
    let mut args = vec!["watch", "--once", "--interval", "1s"];
    args.extend(&devs);
    let idle_run = arrayburn(&args).output_within(MINUTE);
    let said = String::from_utf8_lossy(&slow_run.stderr);
    assert_eq!(slow_run.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("{}: FAIL-SLOW: its reads took", slow.dev)), "{said}");
    assert!(said.contains(" in 1 of the last 1 windows"), "{said}");
    let said = String::from_utf8_lossy(&ok_run.stderr);
    assert_eq!(ok_run.status.code(), Some(0), "{said}");
    assert_eq!(said.matches(" watch: /dev/loop").count(), 3, "a line a disk: {said}");
    let said = String::from_utf8_lossy(&idle_run.stderr);
    assert_eq!(idle_run.status.code(), Some(3), "{said}");
    for d in &devs {
        let line = format!("NOT JUDGED: {d}: never compared with its peers: idle");
        assert!(said.contains(&line), "{said}");
    }
}

#[test]
fn a_fifo_without_a_reader_is_waited_for_and_a_stop_there_ends_the_watch_at_once() {
    need_root!();
    let disk = sparse_disk(64 << 20, 512);
    let dir = tempdir();
    let fifo = dir.path().join("w.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let args = ["watch", "--interval", "1s", "--json", fifo.to_str().unwrap(), &disk.dev];
    // Ctrl-C while no reader has opened it: the watch ends, interrupted.
    let child = arrayburn(&args).start();
    child.wait_line("the wait for a reader", MINUTE, |l| {
        l.contains("a FIFO: waiting for a reader to open it (Ctrl-C ends the watch)")
    });
    let (out, _) = child.interrupt(MINUTE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted before it began"), "{err}");
    // A reader that comes later takes the watch's lines from its start.
    let child = arrayburn(&args).start();
    child.wait_line("the wait for a reader", MINUTE, |l| l.contains("a FIFO: waiting"));
    // Opened without blocking and read with a deadline: a watch that died
    // meanwhile fails the test instead of holding it.
    let mut reader = {
        use std::os::unix::fs::OpenOptionsExt;
        let mut o = std::fs::OpenOptions::new();
        o.read(true).custom_flags(nix::libc::O_NONBLOCK).open(&fifo).unwrap()
    };
    let mut got = Vec::new();
    let line = wait_for(MINUTE, || {
        let mut buf = [0u8; 4096];
        if let Ok(n) = std::io::Read::read(&mut reader, &mut buf) {
            got.extend_from_slice(&buf[..n]);
        }
        got.contains(&b'\n')
    });
    assert!(line, "no line within a minute: {}", String::from_utf8_lossy(&got));
    let first = String::from_utf8_lossy(&got).lines().next().unwrap_or_default().to_string();
    let first: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["kind"], "watch", "{first}");
    let (out, _) = child.interrupt(MINUTE);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
}

//! `--metrics FILE`: node_exporter textfile-collector metrics of a check, a
//! burn-in while it runs and at its end, and a fleet report, each file
//! accepted by the real `promtool check metrics` (Debian's prometheus
//! package; scripts/test.sh installs it) and saying what the run's JSON
//! says.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::*;

const MIB: u64 = 1 << 20;

/// Whether promtool is here (see [`tools_here`]).
pub(crate) fn promtool_here() -> bool {
    tools_here(&["promtool"], "prometheus")
}

/// `promtool check metrics` on `text`: accepted, lint included.
pub(crate) fn accepted(text: &str, what: &str) {
    let mut cmd = Command::new("promtool");
    cmd.args(["check", "metrics"]).stdin(Stdio::piped()).stdout(Stdio::piped());
    let out = cmd
        .stderr(Stdio::piped())
        .start_as_set(|c| {
            // Small enough for the pipe: written whole, then closed.
            let mut input = c.stdin.take().unwrap();
            std::io::Write::write_all(&mut input, text.as_bytes()).unwrap();
        })
        .wait(MINUTE);
    assert!(
        out.status.success(),
        "promtool refused the {what} metrics: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The value of the one sample of `name` whose labels hold all of `has`.
pub(crate) fn value(text: &str, name: &str, has: &[&str]) -> Option<f64> {
    let found: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| has.iter().all(|h| l.contains(h)))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    assert!(found.len() <= 1, "{name} {has:?} more than once:\n{text}");
    found.first().copied()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn a_check_a_burn_in_while_it_runs_and_a_report_write_metrics_promtool_accepts() {
    need_root!();
    if !promtool_here() {
        return;
    }
    let _l = device_lock();
    let dir = tempdir();
    let (json, prom) = (dir.path().join("c.json"), dir.path().join("check.prom"));
    let d = disks(3, 32 * MIB);
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();

    // The check: its verdict as its JSON says it, each disk in each pass.
    let mut args = vec!["check", "--progress", "none", "--sample", "1.5s"];
    args.extend(["--json", json.to_str().unwrap(), "--metrics", prom.to_str().unwrap()]);
    args.extend(&devs);
    let run = finish(Throttle::calm(&d).command(&args), &json);
    let report = run.report.as_ref().unwrap();
    let text = read(&prom);
    accepted(&text, "check");
    let verdict = format!("verdict=\"{}\"", report.summary.verdict.word());
    assert_eq!(value(&text, "arrayburn_run_verdict", &["command=\"check\"", &verdict]), Some(1.0));
    let exit = value(&text, "arrayburn_run_exit_status", &[]).unwrap();
    assert_eq!(exit as i32, run.code, "{text}");
    for p in &report.passes {
        for row in &p.disks {
            let at = [format!("device=\"{}\"", row.path), format!("pass=\"{}\"", p.kind.name())];
            let at: Vec<&str> = at.iter().map(String::as_str).collect();
            let speed = value(&text, "arrayburn_check_read_bytes_per_second", &at).unwrap();
            assert!((speed - row.window_mb_per_s * 1e6).abs() < 1.0, "{text}");
        }
    }
    assert!(
        !dir.path()
            .read_dir()
            .unwrap()
            .flatten()
            .any(|e| { e.file_name().to_string_lossy().contains("arrayburn-tmp") }),
        "no temporary file left beside"
    );

    // The burn-in, writes held to 4 MB/s (some 6 s a disk): while it runs
    // the file says so and how far each disk is; at its end, the verdict.
    let state = tempdir();
    let burn = dir.path().join("burn.prom");
    let t = writes_at(&d, 4_000_000);
    let mut args = vec!["burnin", "--destructive", "--yes", "--smart", "off", "--block", "1m"];
    args.extend(["--progress", "none", "--progress-interval", "1s"]);
    args.extend(["--state", state.path().to_str().unwrap(), "--metrics", burn.to_str().unwrap()]);
    args.extend(&devs);
    let mut child = t.command(&args).start();
    let mut live = String::new();
    child.wait_until("a burn-in's metrics part way", RUN, || {
        live = read(&burn);
        value(&live, "arrayburn_run_complete", &[]) == Some(0.0)
            && d.iter().any(|x| {
                let dev = format!("device=\"{}\"", x.dev);
                value(&live, "arrayburn_burnin_progress_ratio", &[&dev])
                    .is_some_and(|r| r > 0.0 && r < 1.0)
            })
    });
    accepted(&live, "burn-in's live");
    let planned = live.lines().filter(|l| l.starts_with("arrayburn_burnin_bytes_planned{"));
    assert_eq!(planned.count(), d.len(), "one per disk:\n{live}");
    let out = child.wait(RUN);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let end = read(&burn);
    accepted(&end, "burn-in's");
    assert_eq!(value(&end, "arrayburn_run_complete", &[]), Some(1.0), "{end}");
    assert_eq!(value(&end, "arrayburn_run_verdict", &["verdict=\"healthy\""]), Some(1.0));
    for x in &d {
        let dev = format!("device=\"{}\"", x.dev);
        let verdict = value(&end, "arrayburn_burnin_disk_verdict", &[&dev, "verdict=\"healthy\""]);
        assert_eq!(verdict, Some(1.0), "{end}");
        let (done, all) = (
            value(&end, "arrayburn_burnin_bytes_done", &[&dev]),
            value(&end, "arrayburn_burnin_bytes_planned", &[&dev]),
        );
        assert!(done.is_some() && done == all, "{end}");
    }

    // The fleet report over both, with a host name that is no label's
    // friend: escaped, and still accepted.
    let mut v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    v["host"] = "evil\"host\\\nx".into();
    std::fs::write(dir.path().join("evil.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let fleet = dir.path().join("fleet.prom");
    let runs = state.path().join("runs");
    let (a, b) = (dir.path().join("evil.json"), runs);
    let args = ["report", a.to_str().unwrap(), b.to_str().unwrap(), "--metrics"];
    let out = arrayburn(&args).arg(&fleet).stdout(Stdio::null()).output_within(MINUTE);
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{out:?}");
    let text = read(&fleet);
    accepted(&text, "report's");
    // The report cleans the name (its line feed as text); the label
    // escapes the quote and each backslash.
    assert!(text.contains("host=\"evil\\\"host\\\\\\\\x0ax\""), "{text}");
    assert!(text.lines().all(|l| l.starts_with('#') || l.starts_with("arrayburn_")), "{text}");
    assert_eq!(value(&text, "arrayburn_fleet_results", &["read=\"read\""]), Some(2.0), "{text}");
}

/// The alert rules in contrib/prometheus load, and fire on series as
/// arrayburn writes them (`promtool test rules`).
#[test]
fn the_example_alert_rules_load_and_fire_on_arrayburn_series() {
    if !promtool_here() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/prometheus");
    for args in
        [["check", "rules", "arrayburn.rules.yml"], ["test", "rules", "arrayburn.rules.test.yml"]]
    {
        let out = Command::new("promtool").args(args).current_dir(&dir).output_within(MINUTE);
        assert!(
            out.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

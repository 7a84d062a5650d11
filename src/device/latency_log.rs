//! An NVMe drive's own latency log: the OCP Latency Monitor log page
//! (C3h), as `nvme ocp latency-monitor-log DEV -o json` (nvme-cli's OCP
//! plugin) prints it: the thresholds of its four buckets and the reads,
//! writes and deallocates it counted in each, since the feature was
//! enabled (static) and in its current window (active).
//!
//! It reads what the tool says; it must not judge it.

use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The command that reads it, as said in the report.
pub const COMMAND: &str = "nvme ocp latency-monitor-log";

/// What the drive counted, reads only (the check reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriveLatency {
    /// Whether the drive's latency monitor is on (its `Feature Status`
    /// not 0): off, its counters stay 0.
    pub enabled: bool,
    /// The thresholds of buckets 0-3 (`Active Threshold A`-`D`), ms.
    pub thresholds_ms: Vec<f64>,
    /// Reads counted in each bucket since the monitor was enabled
    /// (static), and in its current window (active).
    pub static_reads: Vec<u64>,
    pub active_reads: Vec<u64>,
    /// The longest read latency it measured in each bucket (static), ms.
    pub static_read_latency_ms: Vec<f64>,
}

/// What asking a drive for its log gave: the log, or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriveLog {
    pub log: Option<DriveLatency>,
    pub not_read: Option<String>,
}

impl DriveLog {
    /// Read at `dev` (see [`read`]).
    pub fn of(dev: &str, give_up: &dyn Fn() -> bool) -> Self {
        match read(dev, give_up) {
            Ok(log) => DriveLog { log: Some(log), not_read: None },
            Err(why) => DriveLog { log: None, not_read: Some(why) },
        }
    }

    /// In a line: the buckets' read counts and longest latencies, or why
    /// it was not read.
    pub fn words(&self) -> String {
        let Some(l) = &self.log else {
            return format!("not read: {}", self.not_read.as_deref().unwrap_or("no reason"));
        };
        if !l.enabled {
            return format!(
                "read ({COMMAND}), but its latency monitor is off: its counters say nothing"
            );
        }
        let list = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join("/");
        let counts = l.static_reads.iter().map(u64::to_string).collect::<Vec<_>>().join("/");
        format!(
            "reads it counted in its buckets at {} ms: {counts} (the longest {} ms), {COMMAND}",
            list(&l.thresholds_ms),
            list(&l.static_read_latency_ms)
        )
    }
}

/// The log of the NVMe drive at `dev`, or why not in words (no nvme-cli,
/// no OCP plugin, a drive without the log page).
pub fn read(dev: &str, give_up: &dyn Fn() -> bool) -> Result<DriveLatency, String> {
    let mut cmd = Command::new("nvme");
    cmd.args(["ocp", "latency-monitor-log", dev, "-o", "json"]);
    let out = super::tool::output(&mut cmd, super::tool::LIMIT, give_up)?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("no reason given");
        let said = crate::escape::terminal(said.trim());
        return Err(format!("{COMMAND} failed ({}): {said}", out.status));
    }
    parse(&out.stdout)
}

/// The log from nvme-cli's JSON.
pub fn parse(json: &[u8]) -> Result<DriveLatency, String> {
    let v: Value = serde_json::from_slice(json)
        .map_err(|e| format!("{COMMAND} printed no JSON it is known to print ({e})"))?;
    let number = |key: &str| v.get(key).and_then(Value::as_f64);
    let enabled = number("Feature Status").ok_or_else(|| {
        format!("{COMMAND} printed no \"Feature Status\": not the log page it reads")
    })? != 0.0;
    let per_bucket = |what: &str| -> Vec<f64> {
        (0..4).filter_map(|i| v.get(format!("{what}: Bucket {i}"))?.get("Read")?.as_f64()).collect()
    };
    let thresholds_ms = ["A", "B", "C", "D"]
        .iter()
        .filter_map(|t| number(&format!("Active Threshold {t}")))
        .collect();
    let count = |what: &str| per_bucket(what).into_iter().map(|x| x as u64).collect();
    Ok(DriveLatency {
        enabled,
        thresholds_ms,
        static_reads: count("Static Bucket Counter"),
        active_reads: count("Active Bucket Counter"),
        static_read_latency_ms: per_bucket("Static Measured Latency"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape nvme-cli's OCP plugin prints (its `json_c3_log`): each
    /// bucket an object of Trim, Write and Read.
    pub(crate) fn printed(enabled: u32, reads: [u64; 4]) -> String {
        let mut v = serde_json::json!({
            "Feature Status": enabled,
            "Active Bucket Timer": 0,
            "Active Threshold A": 5, "Active Threshold B": 20,
            "Active Threshold C": 50, "Active Threshold D": 100,
            "Log Page Version": 4,
        });
        for (i, n) in reads.iter().enumerate() {
            let b = |x: u64| serde_json::json!({"Trim": 0, "Write": 0, "Read": x});
            v[format!("Active Bucket Counter: Bucket {i}")] = b(*n / 2);
            v[format!("Static Bucket Counter: Bucket {i}")] = b(*n);
            v[format!("Static Measured Latency: Bucket {i}")] =
                b(if *n > 0 { 7 + 30 * i as u64 } else { 0 });
        }
        v.to_string()
    }

    #[test]
    fn the_buckets_reads_are_read_from_nvme_clis_json() {
        let log = parse(printed(1, [120, 3, 0, 1]).as_bytes()).unwrap();
        assert!(log.enabled);
        assert_eq!(log.thresholds_ms, [5.0, 20.0, 50.0, 100.0]);
        assert_eq!(log.static_reads, [120, 3, 0, 1]);
        assert_eq!(log.active_reads, [60, 1, 0, 0]);
        assert_eq!(log.static_read_latency_ms, [7.0, 37.0, 0.0, 97.0]);
        assert!(!parse(printed(0, [0; 4]).as_bytes()).unwrap().enabled);
    }

    #[test]
    fn output_that_is_not_the_log_is_refused_in_words() {
        let e = parse(b"{\"Critical Warning\": 0}").unwrap_err();
        assert!(e.contains("no \"Feature Status\""), "{e}");
        assert!(parse(b"Invalid command").unwrap_err().contains("printed no JSON"));
    }
}

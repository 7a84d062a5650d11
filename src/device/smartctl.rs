//! smartctl, the one place arrayburn runs it: the burn-in's readings and
//! self-tests, the inspection and the link code's disk maximum all ask
//! through here. Each call is bound by [`tool::LIMIT`] (a hung disk hangs
//! smartctl too) and by `give_up`; what the disk says of itself comes back
//! with its control characters escaped.
//!
//! It knows the releases users run (7.2 to 7.5, [`FEATURES`]): what each
//! can be asked, where each puts a value ([`text_of`]), and how to say in
//! one line what smartctl could not read ([`why_not`]). The installed
//! release is asked once per run ([`installed`]), never assumed from a
//! recording.
//!
//! It must not interpret what a drive's values mean (the burn-in's `smart`,
//! `inspect` and the link code do).

use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tool;

/// `smartctl ARGS`, given at most `limit` or until `give_up`; why not in
/// words (smartctl missing: "smartctl could not run (...): install
/// smartmontools").
pub fn call(args: &[&str], limit: Duration, give_up: &dyn Fn() -> bool) -> Result<Output, String> {
    tool::output(Command::new("smartctl").args(args), limit, give_up).map_err(|e| {
        if e.contains("could not run") { format!("{e}: install smartmontools") } else { e }
    })
}

/// `smartctl --json ARGS DEVICE` as JSON, its strings escaped. smartctl's
/// exit status is a bit mask that is often non-zero on a healthy disk: the
/// JSON says what it could read.
pub fn json(device: &str, args: &[&str], give_up: &dyn Fn() -> bool) -> Result<Value, String> {
    let all: Vec<&str> =
        ["--json"].into_iter().chain(args.iter().copied()).chain([device]).collect();
    let out = call(&all, tool::LIMIT, give_up)?;
    let mut v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("smartctl gave no JSON for {device} ({e})"))?;
    crate::escape::json_strings(&mut v);
    Ok(v)
}

/// A smartctl release (7.3 is `Version(7, 3)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Version(pub u32, pub u32);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

impl Version {
    /// The release that wrote a `smartctl --json` document
    /// (`smartctl.version`: `[7, 3]`).
    pub fn of_json(v: &Value) -> Option<Version> {
        let n = |i: usize| v["smartctl"]["version"][i].as_u64().and_then(|n| u32::try_from(n).ok());
        Some(Version(n(0)?, n(1)?))
    }

    /// The release `smartctl --version` names on its first line
    /// (`smartctl 7.3 2022-02-28 r5338 [...]`).
    pub fn of_text(s: &str) -> Option<Version> {
        let word = s.lines().next()?.strip_prefix("smartctl ")?.split_whitespace().next()?;
        let (major, minor) = word.split_once('.')?;
        let minor: String = minor.chars().take_while(char::is_ascii_digit).collect();
        Some(Version(major.parse().ok()?, minor.parse().ok()?))
    }
}

/// What arrayburn asks of smartctl that not every release users run has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// `-l farm`: Seagate's FARM log (hours a reset of SMART leaves).
    Farm,
    /// `-t short|long` and the self-test log of an NVMe drive.
    NvmeSelfTest,
    /// An NVMe drive's own warning and critical temperatures in the JSON.
    NvmeLimits,
    /// A SAS drive's phy link counters in the JSON.
    SasPhys,
    /// A SAS drive's self-test log in the JSON.
    SasSelfTestLog,
    /// A SAS drive's start-stop cycle count in the JSON.
    SasStartStop,
    /// A SAS drive's protection-information format in the JSON.
    ScsiProtection,
}

/// Each feature, the first release that has it, and what it gives, in
/// words (the README's table is this one).
pub const FEATURES: [(Feature, Version, &str); 7] = [
    (Feature::Farm, Version(7, 4), "FARM hours (Seagate, `-l farm`)"),
    (Feature::NvmeSelfTest, Version(7, 4), "NVMe self-tests (`-t short`, `-t long` and their log)"),
    (Feature::NvmeLimits, Version(7, 5), "an NVMe drive's own temperature limits"),
    (Feature::SasPhys, Version(7, 3), "SAS phy link counters"),
    (Feature::SasSelfTestLog, Version(7, 3), "SAS self-test results"),
    (Feature::SasStartStop, Version(7, 3), "SAS start-stop cycles"),
    (Feature::ScsiProtection, Version(7, 3), "SAS protection-information formats"),
];

impl Feature {
    /// The first release that has it.
    pub fn since(self) -> Version {
        FEATURES.iter().find(|f| f.0 == self).map_or(Version(7, 5), |f| f.1)
    }

    /// What it gives, in words.
    pub fn what(self) -> &'static str {
        FEATURES.iter().find(|f| f.0 == self).map_or("", |f| f.2)
    }

    /// Whether `release` has it (an unknown release is not assumed to).
    pub fn in_release(self, release: Option<Version>) -> bool {
        release.is_some_and(|r| r >= self.since())
    }

    /// Why it is not read under `release`, in words ("FARM hours
    /// (Seagate, `-l farm`) need smartctl 7.4 or later; this host has
    /// 7.3"); None where it has it.
    pub fn lacking(self, release: Option<Version>) -> Option<String> {
        self.lacking_as(release, "this host has")
    }

    /// As [`Feature::lacking`], of a reading whose own document names the
    /// release that wrote it (`release`): "...; this reading is 7.2's". Only
    /// the release asked of this host ([`installed`]) is "this host's": a
    /// reading may come from another (a recording, another host's result).
    pub fn lacking_in_reading(self, release: Option<Version>) -> Option<String> {
        self.lacking_as(release, "this reading came from smartctl")
    }

    fn lacking_as(self, release: Option<Version>, have: &str) -> Option<String> {
        if self.in_release(release) {
            return None;
        }
        let have = release
            .map_or("a smartctl whose version could not be read".into(), |r| format!("{have} {r}"));
        Some(format!("{} need smartctl {} or later; {have}", self.what(), self.since()))
    }
}

/// The installed smartctl's release, asked once per run
/// (`smartctl --json --version`, or its first line where a release gives
/// no JSON); None where smartctl is missing or does not say.
pub fn installed(give_up: &dyn Fn() -> bool) -> Option<Version> {
    static ASKED: OnceLock<Option<Version>> = OnceLock::new();
    once(&ASKED, give_up, || {
        let out = call(&["--json", "--version"], tool::LIMIT, give_up).ok()?;
        let json = serde_json::from_slice::<Value>(&out.stdout).ok();
        json.as_ref()
            .and_then(Version::of_json)
            .or_else(|| Version::of_text(&String::from_utf8_lossy(&out.stdout)))
    })
}

/// `ask`'s answer, kept in `kept` for the rest of the run, unless a stop
/// (`give_up`) cut it short: that answer is not smartctl's.
fn once<T: Clone>(kept: &OnceLock<T>, give_up: &dyn Fn() -> bool, ask: impl FnOnce() -> T) -> T {
    if let Some(v) = kept.get() {
        return v.clone();
    }
    let v = ask();
    if !give_up() {
        let _ = kept.set(v.clone());
    }
    v
}

/// What `smartctl --scan-open` printed (every device it could open and
/// how: a RAID controller's drives as `/dev/bus/0 -d megaraid,0`), asked
/// once per run; empty where it could not run.
pub fn scan_open(give_up: &dyn Fn() -> bool) -> String {
    static ASKED: OnceLock<String> = OnceLock::new();
    once(&ASKED, give_up, || match call(&["--scan-open"], tool::LIMIT, give_up) {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(_) => String::new(),
    })
}

/// The first of `paths` (each a key path) that holds a non-empty string:
/// a value some releases write under another name (a SAS drive's model is
/// `model_name` in 7.2 and 7.5, `scsi_model_name` in 7.3 and 7.4).
pub fn text_of(v: &Value, paths: &[&[&str]]) -> Option<String> {
    paths.iter().find_map(|p| {
        let at = p.iter().fold(v, |v, k| &v[*k]);
        at.as_str().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    })
}

/// The first of `paths` that holds a number (see [`text_of`]).
pub fn number_of(v: &Value, paths: &[&[&str]]) -> Option<i64> {
    paths.iter().find_map(|p| p.iter().fold(v, |v, k| &v[*k]).as_i64())
}

/// Where a SAS drive's model is: `model_name` (7.2, 7.5; every ATA and
/// NVMe release), `scsi_model_name` (7.3, 7.4).
pub const MODEL: &[&[&str]] = &[&["model_name"], &["scsi_model_name"]];
/// Where a drive's firmware is: `firmware_version` (ATA, NVMe),
/// `scsi_revision` (SAS, 7.3 on), `revision` (SAS, 7.2 and before).
pub const FIRMWARE: &[&[&str]] = &[&["firmware_version"], &["scsi_revision"], &["revision"]];
/// Where a SAS drive's trip temperature is: `temperature.drive_trip`,
/// `scsi_temperature.drive_trip` (7.3 only).
pub const DRIVE_TRIP: &[&[&str]] =
    &[&["temperature", "drive_trip"], &["scsi_temperature", "drive_trip"]];

/// What smartctl could not read of `device`, in one line that names no
/// device (the caller names it once): its error messages, each without
/// the device name it starts with, without the advice to read `-h`, and
/// "Unable to detect device type" said as what it means.
pub fn why_not(v: &Value, device: &str) -> String {
    let said: Vec<String> = (v["smartctl"]["messages"].as_array().into_iter().flatten())
        .filter(|m| m["severity"].as_str().is_none_or(|s| s == "error"))
        .filter_map(|m| m["string"].as_str())
        .map(|s| s.trim().trim_start_matches(device).trim_start_matches(':').trim())
        .filter(|s| {
            !s.is_empty() && !s.starts_with("Use smartctl -h") && !s.starts_with("Please specify")
        })
        .map(|s| match s {
            "Unable to detect device type" => "smartctl cannot tell what kind of device it is (a loop device, a virtual disk or a RAID volume has no SMART of its own; a disk behind an unknown USB bridge may need -d sat)".to_string(),
            s => s.to_string(),
        })
        .collect();
    if !said.is_empty() {
        return said.join("; ");
    }
    // The drive named itself, then smartctl stopped without a word in its
    // JSON (QEMU's SAS drive behind a MegaRAID: "Test Unit Ready [medium
    // or hardware error]" in its text only).
    let status = v["smartctl"]["exit_status"].as_u64().unwrap_or(0);
    let named = ["model_name", "scsi_model_name", "serial_number"].iter().any(|k| !v[k].is_null());
    if named && status & 2 != 0 {
        return format!(
            "smartctl read the drive's identity only, then stopped (exit status {status}: a command it needs failed; `smartctl -x {device}` names it)"
        );
    }
    // The drive answered and says it has none (QEMU's SAS drive behind
    // an LSI HBA: "SMART support is: Unavailable - device lacks SMART
    // capability").
    if v["smart_support"]["available"] == false {
        return "the drive says it has no SMART (smartctl: \"device lacks SMART capability\")"
            .into();
    }
    "no SMART data".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_release_is_read_from_its_json_or_its_banner() {
        let v = json!({"smartctl": {"version": [7, 3]}});
        assert_eq!(Version::of_json(&v), Some(Version(7, 3)));
        assert_eq!(Version::of_json(&json!({})), None);
        let banner = "smartctl 7.2 2020-12-30 r5155 [x86_64-linux-5.15.0] (local build)\nCopyright";
        assert_eq!(Version::of_text(banner), Some(Version(7, 2)));
        assert_eq!(Version::of_text("smartctl 7.5 2025-04-30 r5714"), Some(Version(7, 5)));
        assert_eq!(Version::of_text("{\"json_format_version\""), None);
        assert!(Version(7, 10) > Version(7, 5));
    }

    #[test]
    fn each_feature_is_asked_only_of_a_release_that_has_it() {
        let (v73, v74) = (Some(Version(7, 3)), Some(Version(7, 4)));
        assert!(!Feature::Farm.in_release(v73) && Feature::Farm.in_release(v74));
        assert_eq!(
            Feature::Farm.lacking(v73).unwrap(),
            "FARM hours (Seagate, `-l farm`) need smartctl 7.4 or later; this host has 7.3"
        );
        assert_eq!(Feature::Farm.lacking(v74), None);
        assert!(Feature::NvmeLimits.lacking(v74).is_some());
        assert!(Feature::SasPhys.lacking(Some(Version(7, 2))).is_some());
        // A release that could not be read is not assumed to have anything.
        assert!(Feature::SasPhys.lacking(None).unwrap().contains("could not be read"));
    }

    #[test]
    fn a_value_is_read_under_each_name_a_release_gives_it() {
        let v72 = json!({"model_name": "SEAGATE ST1200", "revision": "0004"});
        let v73 = json!({"scsi_model_name": "SEAGATE ST1200", "scsi_revision": "0004",
            "scsi_temperature": {"drive_trip": 60}});
        for v in [&v72, &v73] {
            assert_eq!(text_of(v, MODEL).as_deref(), Some("SEAGATE ST1200"));
            assert_eq!(text_of(v, FIRMWARE).as_deref(), Some("0004"));
        }
        assert_eq!(number_of(&v73, DRIVE_TRIP), Some(60));
        assert_eq!(text_of(&json!({"model_name": "  "}), MODEL), None);
    }

    #[test]
    fn smartctls_errors_become_one_line_naming_no_device() {
        let v = json!({"smartctl": {"messages": [
            {"string": "/dev/loop0: Unable to detect device type", "severity": "error"},
            {"string": "Please specify device type with the -d option.", "severity": "error"},
            {"string": "Use smartctl -h to get a usage summary", "severity": "error"}]}});
        let said = why_not(&v, "/dev/loop0");
        assert!(said.starts_with("smartctl cannot tell what kind of device it is"), "{said}");
        assert!(!said.contains("/dev/loop0") && !said.contains("-h"), "{said}");
        // What the real 7.3 says of a loop device.
        let at = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/smart/versions/loop-7.3.json");
        let real: Value = serde_json::from_slice(&std::fs::read(at).unwrap()).unwrap();
        assert_eq!(why_not(&real, "/dev/loop0"), said);
        assert_eq!(why_not(&json!({}), "/dev/sda"), "no SMART data");
        let open = json!({"smartctl": {"messages": [{"string":
            "Smartctl open device: /dev/sdb failed: No such device", "severity": "error"}]}});
        assert_eq!(
            why_not(&open, "/dev/sdb"),
            "Smartctl open device: /dev/sdb failed: No such device"
        );
    }
}

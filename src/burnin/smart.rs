//! SMART before and after a burn-in, from `smartctl --json -x`: the
//! counters that matter, and how much each rose during the run. The delta,
//! not the lifetime total: a used disk's old count says nothing about this
//! burn-in (burnin-users.md §3).
//!
//! | kind | counters |
//! |---|---|
//! | media (→ return the disk) | ATA 5, 187, 196, 197, 198; NVMe `media_errors`, `critical_warning`, available spare below its threshold; SAS grown defects and uncorrected read/write/verify errors |
//! | transport (→ cable, backplane, HBA port) | ATA 199 (UDMA CRC); SATA phy events 0x001, 0x00A, 0x00B; SAS phys' invalid dwords, running disparity errors, loss of dword sync, phy reset problems |
//!
//! ATA 1, 7, 188 and 194 pack several numbers into one raw value on many
//! drives, so they are not compared. It reads and parses; the verdict is
//! `judge::burnin`'s.

use crate::device::smartctl::{self, Feature};
use crate::device::tool;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a counter's rise points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterKind {
    /// The disk's media: return the disk.
    Media,
    /// The path to it: cable, backplane, HBA port.
    Transport,
    /// Time spent above the drive's own temperature limits: its cooling.
    Thermal,
    /// Errors the drive logged that point at neither its media nor the
    /// path (an aborted command; an NVMe error log entry, which a host's
    /// unsupported request makes too): listed, not judged.
    Logged,
}

/// The counter of the ATA error log's entries: its rise is classed by the
/// new entries themselves ([`SmartChange::of`]).
pub const ATA_ERROR_LOG: &str = "ATA error log entries";

/// An entry of the drive's ATA error log (smartctl's summary or extended
/// table): its number (they only grow) and the drive's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedError {
    pub number: u64,
    pub description: String,
}

/// What a logged error points at, by the error bits the drive set in it
/// (smartctl's words: `UNC` uncorrectable data, `IDNF` sector not found,
/// `AMNF` address mark not found, `ICRC` an interface CRC error; `ABRT`
/// alone, an aborted command, says neither).
pub fn logged_kind(description: &str) -> CounterKind {
    let says =
        |bit: &str| description.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == bit);
    if ["UNC", "IDNF", "AMNF"].into_iter().any(says) {
        CounterKind::Media
    } else if says("ICRC") {
        CounterKind::Transport
    } else {
        CounterKind::Logged
    }
}

/// One counter's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    pub name: String,
    pub kind: CounterKind,
    pub value: u64,
}

/// One reading of a disk's SMART.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The drive's overall health self-assessment.
    pub passed: Option<bool>,
    /// The current temperature (°C), from `temperature.current`, never
    /// from a normalised attribute value.
    pub temperature_c: Option<i64>,
    pub counters: Vec<Counter>,
    /// The temperature limits the drive reports of itself, where it does.
    #[serde(default)]
    pub limits: Option<TempLimits>,
    /// What kind of drive it says it is (for a default limit where it
    /// reports none).
    #[serde(default)]
    pub drive: Option<DriveKind>,
    /// Readings outside what a drive's sensor can mean (a temperature of
    /// 300 °C or 65535, a limit of 255 °C): a sensor or firmware fault,
    /// named here and not used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_believed: Vec<String>,
    /// The ATA error log's entries smartctl shows (the newest few).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logged_errors: Vec<LoggedError>,
    /// How long the drive says each of its self-tests takes (minutes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub self_test_minutes: Vec<(TestKind, u64)>,
    /// What this drive has that the smartctl which read it cannot give
    /// (a SAS drive's phy counters under 7.2), a sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_read: Vec<String>,
    /// A solid-state drive's wear: bytes written over its life, the share
    /// of its endurance used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wear: Option<super::endurance::Wear>,
    /// An ATA drive's IDENTIFY: whether it declares that a trimmed range
    /// reads as zeroes (TRIM deterministic and zeroed; smartctl 7.2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zeroes_after_trim: Option<bool>,
}

/// Temperatures a drive's sensor can mean (°C); a reading outside is a
/// sensor or firmware fault (300, 255, 65535, or -1 for "none").
pub const SENSOR_C: std::ops::RangeInclusive<i64> = -40..=125;

/// Temperature limits a drive can mean (°C): no drive is rated to run
/// only below 40 °C or above 100 °C; a limit outside is a firmware fault
/// (a limit of 1 °C would call every drive too hot).
pub const LIMIT_C: std::ops::RangeInclusive<i64> = 40..=100;

/// `c` where a sensor can mean it; else None, its words in `not_believed`.
fn believed(c: Option<i64>, what: &str, not_believed: &mut Vec<String>) -> Option<i64> {
    within(c, what, (&SENSOR_C, "a drive's sensor can read"), not_believed)
}

/// `c` where it lies in `range`; else None, its words in `not_believed`
/// (`can`: what the range is, in words).
fn within(
    c: Option<i64>,
    what: &str,
    (range, can): (&std::ops::RangeInclusive<i64>, &str),
    not_believed: &mut Vec<String>,
) -> Option<i64> {
    let c = c?;
    if range.contains(&c) {
        return Some(c);
    }
    not_believed.push(format!(
        "{what} {c} °C (outside the {}..{} °C {can}: a sensor or firmware fault, not used)",
        range.start(),
        range.end()
    ));
    None
}

/// A drive's own temperature limits (°C), and where they were read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TempLimits {
    /// Above this, the drive is hotter than it is meant to run.
    pub warning_c: i64,
    /// Above this, it protects itself (throttles, or shuts down).
    pub critical_c: Option<i64>,
    /// Which of the drive's values these are, in words.
    pub source: String,
}

/// What kind of drive, for the default temperature limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriveKind {
    /// A spinning disk.
    Hdd,
    /// A SATA or SAS solid-state drive.
    Ssd,
    /// An NVMe drive.
    Nvme,
}

impl DriveKind {
    /// The kind the kernel says a disk is (its transport, rotational).
    pub fn of(id: &crate::device::Identity) -> Self {
        match () {
            _ if id.topology.transport == "nvme" => DriveKind::Nvme,
            _ if id.rotational => DriveKind::Hdd,
            _ => DriveKind::Ssd,
        }
    }

    /// The limit a drive of this kind is judged against where its own was
    /// not read (it reports none, or the installed smartctl cannot give
    /// it): most hard disks are rated to 60 °C, SATA and SAS
    /// SSDs to 70 °C; NVMe drives set their warning threshold at 70-85 °C.
    pub fn default_limits(self) -> TempLimits {
        let (warning_c, what) = match self {
            DriveKind::Hdd => (60, "60 °C, what most hard disks are rated to"),
            DriveKind::Ssd => (70, "70 °C, what most SATA and SAS SSDs are rated to"),
            DriveKind::Nvme => (75, "75 °C, below most NVMe drives' warning thresholds"),
        };
        TempLimits {
            warning_c,
            critical_c: None,
            source: format!("the default for a drive whose own limit was not read, {what}"),
        }
    }
}

/// The temperature limits a `smartctl --json -x` document gives: NVMe's
/// warning and critical composite thresholds (WCTEMP, CCTEMP), ATA's SCT
/// operating limit, SAS's drive trip point (warned 5 °C before it).
/// A limit outside what a sensor can mean (255 °C) is named in
/// `not_believed` and not used (the default for its kind applies then).
fn limits(v: &Value, not_believed: &mut Vec<String>) -> Option<TempLimits> {
    let mut limit = |x: &Value, what: &str| {
        // 0 (or -1) is "no limit" in every format that has one.
        let c = x.as_i64().filter(|c| *c > 0);
        within(c, what, (&LIMIT_C, "a drive's temperature limit can be"), not_believed)
    };
    let nvme = &v["nvme_composite_temperature_threshold"];
    if let Some(w) = limit(&nvme["warning"], "warning limit") {
        return Some(TempLimits {
            warning_c: w,
            critical_c: limit(&nvme["critical"], "critical limit"),
            source: "its own warning composite temperature threshold (NVMe WCTEMP)".into(),
        });
    }
    for t in [&v["ata_sct_status"]["temperature"], &v["temperature"]] {
        if let Some(w) = limit(&t["op_limit_max"], "operating limit") {
            return Some(TempLimits {
                warning_c: w,
                critical_c: limit(&t["limit_max"], "highest limit"),
                source: "its own recommended operating maximum (ATA SCT)".into(),
            });
        }
    }
    let trip = smartctl::number_of(v, smartctl::DRIVE_TRIP).map(Value::from).unwrap_or_default();
    let trip = limit(&trip, "trip point")?;
    Some(TempLimits {
        warning_c: trip - 5,
        critical_c: Some(trip),
        source: format!("5 °C below its own trip point, {trip} °C (SAS)"),
    })
}

/// What kind of drive the document describes.
fn drive_kind(v: &Value) -> Option<DriveKind> {
    if v["device"]["protocol"].as_str() == Some("NVMe") {
        return Some(DriveKind::Nvme);
    }
    let spins = v["rotation_rate"].as_u64()? > 0;
    Some(if spins { DriveKind::Hdd } else { DriveKind::Ssd })
}

/// A counter that rose during the burn-in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    pub name: String,
    pub kind: CounterKind,
    pub before: u64,
    pub after: u64,
}

/// Before, after, and what rose.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmartChange {
    pub before: Snapshot,
    pub after: Snapshot,
    pub deltas: Vec<Delta>,
}

impl SmartChange {
    /// Compares two readings.
    pub fn of(before: Snapshot, after: Snapshot) -> Self {
        let deltas = after
            .counters
            .iter()
            .filter_map(|a| {
                let b = before.counters.iter().find(|b| b.name == a.name)?;
                (a.value > b.value).then(|| Delta {
                    name: a.name.clone(),
                    kind: if a.name == ATA_ERROR_LOG {
                        new_errors(&after, b.value)
                    } else {
                        a.kind
                    },
                    before: b.value,
                    after: a.value,
                })
            })
            .collect();
        Self { before, after, deltas }
    }
}

impl SmartChange {
    /// What the run that wrote `burn` cost a solid-state drive's
    /// endurance, where it counts its wear before and after.
    pub fn cost(&self, burn: &super::record::DiskBurn) -> Option<super::endurance::Endurance> {
        let (before, after) = (self.before.wear.as_ref()?, self.after.wear.as_ref()?);
        Some(super::endurance::cost(before, after, burn.written_bytes))
    }
}

/// What the ATA error log's entries past number `before` point at: the
/// media where one does, else the path where one does, else neither.
fn new_errors(after: &Snapshot, before: u64) -> CounterKind {
    let new = after.logged_errors.iter().filter(|e| e.number > before);
    new.map(|e| logged_kind(&e.description))
        .min_by_key(|k| match k {
            CounterKind::Media => 0,
            CounterKind::Transport => 1,
            _ => 2,
        })
        .unwrap_or(CounterKind::Logged)
}

/// `smartctl --json -x DEVICE` as JSON, or why there is none.
fn read_json(device: &str, give_up: &dyn Fn() -> bool) -> Result<Value, String> {
    smartctl::json(device, &["-x"], give_up)
}

/// Runs `smartctl --json -x DEVICE`: the reading, or why there is none
/// (smartctl missing, or no SMART data for this device).
pub fn read(device: &str, give_up: &dyn Fn() -> bool) -> Result<Snapshot, String> {
    let v = read_json(device, give_up)?;
    parse(&v).ok_or_else(|| match smartctl::why_not(&v, device) {
        why if why.starts_with("no SMART data") => why,
        why => format!("no SMART data: {why}"),
    })
}

/// A counter found: its name, kind and value (none: not reported).
type Push<'a> = &'a mut dyn FnMut(String, CounterKind, Option<u64>);

/// The ATA attributes that count media or transport errors, and the SATA
/// phy events that count link errors.
fn ata_counters(v: &Value, push: Push) {
    for a in v["ata_smart_attributes"]["table"].as_array().into_iter().flatten() {
        let kind = match a["id"].as_u64() {
            Some(5 | 187 | 196 | 197 | 198) => CounterKind::Media,
            Some(199) => CounterKind::Transport,
            _ => continue,
        };
        let name =
            format!("ATA {} {}", a["id"].as_u64().unwrap_or(0), a["name"].as_str().unwrap_or(""));
        push(name, kind, a["raw"]["value"].as_u64());
    }
    for p in v["sata_phy_event_counters"]["table"].as_array().into_iter().flatten() {
        if matches!(p["id"].as_u64(), Some(0x001 | 0x00a | 0x00b)) {
            let name = format!(
                "SATA phy 0x{:03x} {}",
                p["id"].as_u64().unwrap_or(0),
                p["name"].as_str().unwrap_or("")
            );
            push(name, CounterKind::Transport, p["value"].as_u64());
        }
    }
}

/// The NVMe health log's media errors, critical warnings, minutes above
/// its temperatures and its spare below threshold.
fn nvme_counters(v: &Value, push: Push) {
    let nvme = &v["nvme_smart_health_information_log"];
    for key in ["media_errors", "critical_warning"] {
        push(format!("NVMe {key}"), CounterKind::Media, nvme[key].as_u64());
    }
    // Minutes the drive itself counted above its warning and critical
    // composite temperatures.
    for (key, what) in [
        ("warning_temp_time", "minutes above its warning temperature"),
        ("critical_comp_time", "minutes above its critical temperature"),
    ] {
        push(format!("NVMe {what}"), CounterKind::Thermal, nvme[key].as_u64());
    }
    if let (Some(spare), Some(threshold)) =
        (nvme["available_spare"].as_u64(), nvme["available_spare_threshold"].as_u64())
    {
        push(
            "NVMe available_spare below threshold".into(),
            CounterKind::Media,
            Some(u64::from(spare < threshold)),
        );
    }
}

/// A SAS drive's grown defects, uncorrected errors and its ports' phys'
/// link errors.
fn sas_counters(v: &Value, push: Push) {
    push("SAS grown defects".into(), CounterKind::Media, v["scsi_grown_defect_list"].as_u64());
    for op in ["read", "write", "verify"] {
        push(
            format!("SAS uncorrected {op} errors"),
            CounterKind::Media,
            v["scsi_error_counter_log"][op]["total_uncorrected_errors"].as_u64(),
        );
    }
    // SAS: each port's phys count link errors (smartctl -x, the
    // protocol-specific port log page).
    for (port, phys) in v.as_object().into_iter().flatten() {
        let Some(n) = port.strip_prefix("scsi_sas_port_") else { continue };
        for (phy, c) in phys.as_object().into_iter().flatten() {
            let Some(m) = phy.strip_prefix("phy_") else { continue };
            for key in [
                "invalid_dword_count",
                "running_disparity_error_count",
                "loss_of_dword_synchronization_count",
                "phy_reset_problem_count",
            ] {
                push(
                    format!("SAS port {n} phy {m} {key}"),
                    CounterKind::Transport,
                    c[key].as_u64(),
                );
            }
        }
    }
}

/// The counters of a `smartctl --json` document; None without any SMART
/// data (a loop device, a USB bridge that hides it).
pub fn parse(v: &Value) -> Option<Snapshot> {
    let mut counters = Vec::new();
    let mut push = |name: String, kind: CounterKind, value: Option<u64>| {
        if let Some(value) = value {
            counters.push(Counter { name, kind, value });
        }
    };
    ata_counters(v, &mut push);
    nvme_counters(v, &mut push);
    sas_counters(v, &mut push);
    let (logged, logged_errors) = logs(v);
    counters.extend(logged);
    let passed = v["smart_status"]["passed"].as_bool();
    if counters.is_empty() && passed.is_none() {
        return None;
    }
    let release = smartctl::Version::of_json(v);
    let lacking: &[Feature] = match v["device"]["protocol"].as_str() {
        Some("NVMe") => &[Feature::NvmeLimits],
        Some("SCSI") => &[Feature::SasPhys, Feature::SasSelfTestLog],
        _ => &[],
    };
    let not_read = lacking.iter().filter_map(|f| f.lacking_in_reading(release)).collect();
    let mut not_believed = Vec::new();
    let temperature_c =
        believed(v["temperature"]["current"].as_i64(), "temperature", &mut not_believed);
    Some(Snapshot {
        passed,
        temperature_c,
        counters,
        limits: limits(v, &mut not_believed),
        drive: drive_kind(v),
        not_believed,
        not_read,
        logged_errors,
        wear: super::endurance::wear(v),
        zeroes_after_trim: (v["trim"]["supported"].as_bool() == Some(true)).then(|| {
            v["trim"]["deterministic"].as_bool() == Some(true)
                && v["trim"]["zeroed"].as_bool() == Some(true)
        }),
        self_test_minutes: [TestKind::Short, TestKind::Long, TestKind::Conveyance]
            .into_iter()
            .filter_map(|k| Some((k, k.expected_minutes(v)?)))
            .collect(),
    })
}

/// The counters of the logs the attributes do not hold (the ATA error log,
/// the NVMe error log's entries, the ATA device statistics), and the ATA
/// error log's entries.
fn logs(v: &Value) -> (Vec<Counter>, Vec<LoggedError>) {
    let (count, entries) = error_log(v);
    let nvme = v["nvme_smart_health_information_log"]["num_err_log_entries"].as_u64();
    let logged = [(ATA_ERROR_LOG, count), ("NVMe error log entries", nvme)].into_iter();
    let logged = logged.filter_map(|(name, value)| {
        Some(Counter { name: name.into(), kind: CounterKind::Logged, value: value? })
    });
    let stats =
        device_statistics(v).into_iter().map(|(name, kind, value)| Counter { name, kind, value });
    (logged.chain(stats).collect(), entries)
}

/// The ATA error log: how many errors the drive has logged (the extended
/// log's count where smartctl read it, else the summary's) and the entries
/// it shows.
fn error_log(v: &Value) -> (Option<u64>, Vec<LoggedError>) {
    let log = &v["ata_smart_error_log"];
    let which = if log["extended"].is_object() { &log["extended"] } else { &log["summary"] };
    // smartctl names the count `count`; some builds `device_error_count`.
    let count = which["count"].as_u64().or_else(|| which["device_error_count"].as_u64());
    let entries = (which["table"].as_array().into_iter().flatten())
        .filter_map(|e| {
            let number = e["error_number"].as_u64()?;
            let description = e["error_description"].as_str().unwrap_or("").to_string();
            Some(LoggedError { number, description })
        })
        .collect();
    (count, entries)
}

/// The ATA device statistics that count errors (`smartctl -x`, the
/// Device Statistics log's pages), each with what its rise points at.
fn device_statistics(v: &Value) -> Vec<(String, CounterKind, u64)> {
    const WATCHED: [(&str, CounterKind); 5] = [
        ("Number of Reported Uncorrectable Errors", CounterKind::Media),
        ("Number of Reallocated Logical Sectors", CounterKind::Media),
        ("Number of Mechanical Start Failures", CounterKind::Media),
        ("Number of Interface CRC Errors", CounterKind::Transport),
        ("Resets Between Cmd Acceptance and Completion", CounterKind::Transport),
    ];
    let pages = v["ata_device_statistics"]["pages"].as_array().into_iter().flatten();
    let entries = pages.flat_map(|p| p["table"].as_array().into_iter().flatten());
    entries
        .filter_map(|e| {
            let name = e["name"].as_str()?;
            let (_, kind) = WATCHED.iter().find(|(n, _)| *n == name)?;
            // A statistic the drive marks invalid holds no count.
            if e["flags"]["valid"].as_bool() == Some(false) {
                return None;
            }
            Some((format!("ATA statistics {name}"), *kind, e["value"].as_u64()?))
        })
        .collect()
}

/// Whether the burn-in reads SMART.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum SmartMode {
    Auto,
    Require,
    Off,
}

/// Which self-test `--smart-test` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Minutes: electrical and mechanical checks, a read of a small part.
    Short,
    /// Hours: a read of the whole surface (smartctl's "extended").
    Long,
    /// Minutes: damage in transport (ATA drives that offer it).
    Conveyance,
}

impl TestKind {
    /// As smartctl's `-t` and the report name it.
    pub fn word(self) -> &'static str {
        match self {
            TestKind::Short => "short",
            TestKind::Long => "long",
            TestKind::Conveyance => "conveyance",
        }
    }

    /// How long the drive says this self-test takes (its polling time,
    /// minutes), where it says (ATA).
    pub fn expected_minutes(self, v: &Value) -> Option<u64> {
        let key = match self {
            TestKind::Short => "short",
            TestKind::Long => "extended",
            TestKind::Conveyance => "conveyance",
        };
        v["ata_smart_data"]["self_test"]["polling_minutes"][key].as_u64()
    }
}

/// Where a drive's self-test stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum SelfTest {
    /// Running; the percent left when the drive says.
    Running(Option<u64>),
    Passed,
    /// Ended with an error, in the drive's words.
    Failed(String),
    /// Still running when arrayburn stopped waiting for it (aborted then):
    /// why, in words. Not a failure: nothing the drive said is known.
    Unfinished(String),
    /// The drive reports no self-test (or smartctl could not ask).
    Unknown(String),
}

/// The state of the latest self-test in a `smartctl --json -x` document:
/// ATA (`ata_smart_data.self_test.status`: 0xF_ while running), NVMe
/// (`nvme_self_test_log`: an operation in progress, else the newest
/// result) or SCSI (`scsi_self_test_0.result`: 15 while running).
pub fn self_test_state(v: &Value) -> SelfTest {
    let status = &v["ata_smart_data"]["self_test"]["status"];
    if let Some(value) = status["value"].as_u64() {
        let words = status["string"].as_str().unwrap_or("").to_string();
        return match (value >> 4, status["passed"].as_bool()) {
            (0xf, _) => SelfTest::Running(status["remaining_percent"].as_u64()),
            (_, Some(true)) | (0, None) => SelfTest::Passed,
            _ => SelfTest::Failed(match first_error_lba(v) {
                Some(lba) => format!("{words}; first error at LBA {lba}"),
                None => words,
            }),
        };
    }
    let nvme = &v["nvme_self_test_log"];
    if nvme.is_object() {
        if nvme["current_self_test_operation"]["value"].as_u64().is_some_and(|op| op != 0) {
            let done = nvme["current_self_test_completion_percent"].as_u64();
            return SelfTest::Running(done.map(|d| 100 - d.min(100)));
        }
        let result = &nvme["table"][0]["self_test_result"];
        return match result["value"].as_u64() {
            Some(0) => SelfTest::Passed,
            Some(_) => SelfTest::Failed(result["string"].as_str().unwrap_or("").into()),
            None => SelfTest::Unknown("no self-test in the drive's log".into()),
        };
    }
    let scsi = &v["scsi_self_test_0"]["result"];
    match scsi["value"].as_u64() {
        Some(15) => SelfTest::Running(None),
        Some(0) => SelfTest::Passed,
        Some(_) => SelfTest::Failed(scsi["string"].as_str().unwrap_or("").into()),
        None => SelfTest::Unknown("the drive reports no self-test".into()),
    }
}

/// The LBA of the first error of the newest self-test in the drive's log
/// (ATA: the extended log where smartctl read it, else the standard one),
/// where it names one.
fn first_error_lba(v: &Value) -> Option<u64> {
    let log = &v["ata_smart_self_test_log"];
    ["extended", "standard"].iter().find_map(|k| log[k]["table"][0]["lba"].as_u64())
}

/// Starts the drive's self-test (`smartctl -t short|long|conveyance`);
/// why not, when it did not start.
pub fn start_self_test(
    device: &str,
    kind: TestKind,
    give_up: &dyn Fn() -> bool,
) -> Result<(), String> {
    let which = kind.word();
    let out = smartctl::call(&["-t", which, "--json", device], tool::LIMIT, give_up)?;
    // Bits 0-2 of the exit status: the command line, the device, or the
    // command failed.
    if out.status.code().is_none_or(|c| c & 0b111 != 0) {
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        crate::escape::json_strings(&mut v);
        return Err(smartctl::why_not(&v, device));
    }
    Ok(())
}

/// Polls a running self-test: its state now.
pub fn poll_self_test(device: &str, give_up: &dyn Fn() -> bool) -> SelfTest {
    match read_json(device, give_up) {
        Ok(v) => self_test_state(&v),
        Err(why) => SelfTest::Unknown(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/smart").join(name);
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    }

    #[test]
    fn each_release_is_read_for_what_it_gives_and_what_it_lacks_is_said() {
        for release in ["7.2", "7.3", "7.4", "7.5"] {
            let of =
                |kind: &str| parse(&fixture(&format!("versions/{kind}-{release}.json"))).unwrap();
            let (sas, nvme, ata) = (of("sas"), of("nvme"), of("ata"));
            // The SAS trip point, whichever name the release gives it.
            let trip = sas.limits.as_ref().and_then(|l| l.critical_c);
            assert_eq!(trip, Some(60), "{release}: {sas:?}");
            let phys = sas.counters.iter().any(|c| c.name.starts_with("SAS port 0 phy 0"));
            assert_eq!(phys, release != "7.2", "{release}: {sas:?}");
            let unread = sas.not_read.join("; ");
            assert_eq!(
                unread.contains("SAS phy link counters need smartctl 7.3"),
                release == "7.2"
            );
            assert_eq!(
                unread.contains("SAS self-test results need smartctl 7.3"),
                release == "7.2"
            );
            let passed = self_test_state(&fixture(&format!("versions/sas-{release}.json")));
            assert_eq!(passed == SelfTest::Passed, release != "7.2", "{release}: {passed:?}");
            // An NVMe drive's own limits from 7.5; before, the lack is said.
            let own = nvme.limits.as_ref().map(|l| l.warning_c);
            assert_eq!(own, (release == "7.5").then_some(75), "{release}: {nvme:?}");
            let lacks = nvme.not_read.join("; ");
            assert_eq!(
                lacks.contains(&format!(
                    "own temperature limits need smartctl 7.5 or later; this reading came from smartctl {release}"
                )),
                release != "7.5",
                "{release}: {lacks}"
            );
            let nvme_test = self_test_state(&fixture(&format!("versions/nvme-{release}.json")));
            assert_eq!(nvme_test == SelfTest::Passed, release >= "7.4", "{release}: {nvme_test:?}");
            assert!(ata.not_read.is_empty() && ata.passed == Some(true), "{release}: {ata:?}");
        }
    }

    #[test]
    fn each_drive_says_its_own_temperature_limits_where_it_has_them() {
        let sas = parse(&fixture("sas.json")).unwrap();
        let l = sas.limits.unwrap();
        assert_eq!((l.warning_c, l.critical_c), (55, Some(60)));
        assert!(l.source.contains("trip point, 60 °C"), "{}", l.source);
        let ata = parse(&fixture("ata.json")).unwrap();
        assert_eq!((ata.limits, ata.drive), (None, Some(DriveKind::Hdd)));
        let mut nvme = fixture("nvme.json");
        assert_eq!(parse(&nvme).unwrap().drive, Some(DriveKind::Nvme));
        assert_eq!(parse(&nvme).unwrap().limits, None, "a recording of smartctl 7.1");
        nvme["nvme_composite_temperature_threshold"] =
            serde_json::json!({"warning": 80, "critical": 85});
        let l = parse(&nvme).unwrap().limits.unwrap();
        assert_eq!((l.warning_c, l.critical_c), (80, Some(85)));
        assert_eq!(DriveKind::Ssd.default_limits().warning_c, 70);
        // Readings no sensor can make are named and not used: 65535 °C,
        // a limit of 255 °C (the default for its kind applies then).
        nvme["temperature"]["current"] = 65535.into();
        nvme["nvme_composite_temperature_threshold"] =
            serde_json::json!({"warning": 255, "critical": 255});
        let s = parse(&nvme).unwrap();
        assert_eq!((s.temperature_c, s.limits), (None, None));
        assert_eq!(s.not_believed.len(), 2, "{:?}", s.not_believed);
        assert!(s.not_believed[0].starts_with("temperature 65535 °C (outside the -40..125 °C"));
        // A limit no drive is rated to (1 °C would make every drive too
        // hot, 110 °C none) is a firmware fault, named; the default holds.
        let mut ata = fixture("ata.json");
        ata["ata_sct_status"]["temperature"] =
            serde_json::json!({"op_limit_max": 1, "limit_max": 110});
        let s = parse(&ata).unwrap();
        assert_eq!(s.limits, None, "{:?}", s.not_believed);
        assert!(
            s.not_believed[0].starts_with(
                "operating limit 1 °C (outside the 40..100 °C a drive's temperature limit"
            ),
            "{:?}",
            s.not_believed
        );
        ata["ata_sct_status"]["temperature"] =
            serde_json::json!({"op_limit_max": 60, "limit_max": 70});
        assert_eq!(
            parse(&ata).unwrap().limits.map(|l| (l.warning_c, l.critical_c)),
            Some((60, Some(70)))
        );
    }

    #[test]
    fn a_recorded_ata_disk_has_its_media_and_cable_counters() {
        let s = parse(&fixture("ata.json")).unwrap();
        assert_eq!(s.passed, Some(true));
        assert_eq!(s.temperature_c, Some(32));
        let names: Vec<(&str, CounterKind)> =
            s.counters.iter().map(|c| (c.name.as_str(), c.kind)).collect();
        assert_eq!(
            names,
            [
                ("ATA 5 Reallocated_Sector_Ct", CounterKind::Media),
                ("ATA 196 Reallocated_Event_Count", CounterKind::Media),
                ("ATA 197 Current_Pending_Sector", CounterKind::Media),
                ("ATA 198 Offline_Uncorrectable", CounterKind::Media),
                ("ATA 199 UDMA_CRC_Error_Count", CounterKind::Transport),
                (ATA_ERROR_LOG, CounterKind::Logged),
            ],
            "1, 7 and 194 (packed) are left out"
        );
    }

    #[test]
    fn deltas_not_totals() {
        let mut after = fixture("ata.json");
        let table = after["ata_smart_attributes"]["table"].as_array_mut().unwrap();
        for a in table.iter_mut() {
            if a["id"] == 197 {
                a["raw"]["value"] = 8.into();
            }
        }
        let before = parse(&fixture("ata.json")).unwrap();
        let change = SmartChange::of(before, parse(&after).unwrap());
        assert_eq!(
            change.deltas,
            [Delta {
                name: "ATA 197 Current_Pending_Sector".into(),
                kind: CounterKind::Media,
                before: 0,
                after: 8
            }]
        );
        let n = parse(&fixture("nvme.json")).unwrap();
        assert!(n.counters.iter().any(|c| c.name == "NVMe media_errors" && c.value == 0));
        assert!(parse(&serde_json::json!({"smartctl": {"exit_status": 2}})).is_none());
    }

    #[test]
    fn a_recorded_sas_disk_has_grown_defects_and_its_phys_link_errors() {
        let mut v = fixture("sas.json");
        let s = parse(&v).unwrap();
        assert_eq!((s.passed, s.temperature_c), (Some(true), Some(31)));
        let names: Vec<&str> = s.counters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["SAS grown defects", "SAS uncorrected read errors", "SAS uncorrected write errors"],
            "this disk logs no verify errors"
        );
        // smartctl -x adds the port log page (its keys as smartctl writes
        // them): invalid dwords that rise point at the link.
        let phy = |n: u64| {
            serde_json::json!({"phy_0": {"invalid_dword_count": n,
                "running_disparity_error_count": 0,
                "loss_of_dword_synchronization_count": 1,
                "phy_reset_problem_count": 0}})
        };
        v["scsi_sas_port_0"] = phy(3);
        let before = parse(&v).unwrap();
        v["scsi_sas_port_0"] = phy(40);
        v["scsi_grown_defect_list"] = 2.into();
        let change = SmartChange::of(before, parse(&v).unwrap());
        let rose: Vec<(&str, CounterKind, u64, u64)> =
            change.deltas.iter().map(|d| (d.name.as_str(), d.kind, d.before, d.after)).collect();
        assert_eq!(
            rose,
            [
                ("SAS grown defects", CounterKind::Media, 0, 2),
                ("SAS port 0 phy 0 invalid_dword_count", CounterKind::Transport, 3, 40)
            ]
        );
    }

    #[test]
    fn self_tests_running_passed_and_failed() {
        // The recorded ATA disk was mid-test: 0xF1, 10 % left.
        let mut v = fixture("ata.json");
        assert_eq!(self_test_state(&v), SelfTest::Running(Some(10)));
        v["ata_smart_data"]["self_test"]["status"] =
            serde_json::json!({"value": 0, "string": "completed without error", "passed": true});
        assert_eq!(self_test_state(&v), SelfTest::Passed);
        v["ata_smart_data"]["self_test"]["status"] = serde_json::json!({"value": 121,
            "string": "completed: read failure, 90% remaining", "passed": false});
        assert_eq!(
            self_test_state(&v),
            SelfTest::Failed("completed: read failure, 90% remaining".into())
        );
        // NVMe: an operation in progress, then the log's newest entry.
        let mut n = fixture("nvme.json");
        n["nvme_self_test_log"] = serde_json::json!({
            "current_self_test_operation": {"value": 1, "string": "Short self-test in progress"},
            "current_self_test_completion_percent": 30, "table": []});
        assert_eq!(self_test_state(&n), SelfTest::Running(Some(70)));
        n["nvme_self_test_log"] = serde_json::json!({
            "current_self_test_operation": {"value": 0},
            "table": [{"self_test_code": {"value": 1},
                "self_test_result": {"value": 7, "string": "Completed with failed segment"}}]});
        assert_eq!(self_test_state(&n), SelfTest::Failed("Completed with failed segment".into()));
        // SAS: the newest result.
        let mut s = fixture("sas.json");
        assert!(matches!(self_test_state(&s), SelfTest::Unknown(_)));
        s["scsi_self_test_0"] = serde_json::json!({"code": {"value": 1},
            "result": {"value": 0, "string": "Completed"}});
        assert_eq!(self_test_state(&s), SelfTest::Passed);
    }

    #[test]
    fn nvme_spare_below_its_threshold_counts() {
        let mut v = fixture("nvme.json");
        let spare = |v: &Value| {
            parse(v)
                .unwrap()
                .counters
                .into_iter()
                .find(|c| c.name == "NVMe available_spare below threshold")
                .map(|c| c.value)
        };
        assert_eq!(spare(&v), Some(0));
        v["nvme_smart_health_information_log"]["available_spare"] = 9.into();
        assert_eq!(spare(&v), Some(1));
    }

    /// The error log of a real Seagate ST33000650NS as smartctl 7.1 wrote
    /// it (`summary`: two UNC entries; each entry's registers and previous
    /// commands left out), found through the code index.
    fn recorded_error_log() -> Value {
        serde_json::json!({"summary": {"revision": 1, "count": 2, "logged_count": 2, "table": [
            {"error_number": 2, "lifetime_hours": 10519,
             "error_description": "Error: UNC at LBA = 0x0fffffff = 268435455"},
            {"error_number": 1, "lifetime_hours": 9156,
             "error_description": "Error: UNC at LBA = 0x0fffffff = 268435455"}]}})
    }

    #[test]
    fn new_error_log_entries_are_classed_by_what_the_drive_says_of_them() {
        let before = fixture("ata.json");
        let mut after = before.clone();
        after["ata_smart_error_log"] = recorded_error_log();
        let change =
            |after: &Value| SmartChange::of(parse(&before).unwrap(), parse(after).unwrap()).deltas;
        let d = change(&after);
        let log: Vec<_> = d.iter().filter(|x| x.name == ATA_ERROR_LOG).collect();
        assert_eq!(log.len(), 1, "{d:?}");
        assert_eq!((log[0].before, log[0].after, log[0].kind), (0, 2, CounterKind::Media));
        // An interface CRC error points at the path; an aborted command at
        // neither (listed, not judged).
        let words = |w: &str| {
            let mut v = after.clone();
            v["ata_smart_error_log"]["summary"]["table"][0]["error_description"] = w.into();
            v["ata_smart_error_log"]["summary"]["table"][1]["error_description"] = w.into();
            change(&v).into_iter().find(|x| x.name == ATA_ERROR_LOG).unwrap().kind
        };
        assert_eq!(words("Error: ICRC, ABRT at LBA = 0x00000000 = 0"), CounterKind::Transport);
        assert_eq!(words("Error: ABRT"), CounterKind::Logged);
        assert_eq!(words("Error: IDNF at LBA = 0x0fffffff = 268435455"), CounterKind::Media);
        // The extended log's count wins where smartctl read it.
        let mut x = after.clone();
        x["ata_smart_error_log"]["extended"] = serde_json::json!({"count": 7, "table": []});
        let snap = parse(&x).unwrap();
        assert_eq!(snap.counters.iter().find(|c| c.name == ATA_ERROR_LOG).unwrap().value, 7);
    }

    #[test]
    fn device_statistics_and_nvme_error_entries_are_counted_by_kind() {
        let mut v = fixture("ata.json");
        // As smartctl -x lays the Device Statistics log out (pages, each a
        // table of name, value and flags; ataprint.cpp).
        v["ata_device_statistics"] = serde_json::json!({"pages": [
            {"number": 4, "name": "General Errors Statistics", "table": [
                {"offset": 8, "name": "Number of Reported Uncorrectable Errors", "size": 4,
                 "value": 3, "flags": {"value": 192, "valid": true}},
                {"offset": 16, "name": "Resets Between Cmd Acceptance and Completion", "size": 4,
                 "value": 9, "flags": {"value": 192, "valid": true}}]},
            {"number": 6, "name": "Transport Statistics (rev 1)", "table": [
                {"offset": 24, "name": "Number of Interface CRC Errors", "size": 2,
                 "value": 5, "flags": {"value": 128, "valid": false}}]}]});
        let c = parse(&v).unwrap().counters;
        let find = |n: &str| c.iter().find(|x| x.name == format!("ATA statistics {n}"));
        let unc = find("Number of Reported Uncorrectable Errors").unwrap();
        assert_eq!((unc.kind, unc.value), (CounterKind::Media, 3));
        let resets = find("Resets Between Cmd Acceptance and Completion").unwrap();
        assert_eq!(resets.kind, CounterKind::Transport);
        assert!(find("Number of Interface CRC Errors").is_none(), "marked invalid: no count");
        let nvme = parse(&fixture("nvme.json")).unwrap().counters;
        let entries = nvme.iter().find(|x| x.name == "NVMe error log entries").unwrap();
        assert_eq!((entries.kind, entries.value), (CounterKind::Logged, 0));
    }

    #[test]
    fn a_failed_self_test_names_its_first_error_s_lba_and_each_kind_its_time() {
        let mut v = fixture("ata.json");
        v["ata_smart_data"]["self_test"]["status"] = serde_json::json!({"value": 121,
            "string": "completed: read failure", "passed": false});
        let log = &mut v["ata_smart_self_test_log"]["standard"]["table"][0];
        log["status"] =
            serde_json::json!({"value": 121, "string": "Completed: read failure", "passed": false});
        log["lba"] = 123456789.into();
        assert_eq!(
            self_test_state(&v),
            SelfTest::Failed("completed: read failure; first error at LBA 123456789".into())
        );
        // The recorded drive's polling times: short 2, extended 1479 min.
        let snap = parse(&fixture("ata.json")).unwrap();
        assert_eq!(snap.self_test_minutes, [(TestKind::Short, 2), (TestKind::Long, 1479)]);
        assert_eq!(TestKind::Conveyance.word(), "conveyance");
    }
}

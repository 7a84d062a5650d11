//! SMART before and after a burn-in, from `smartctl --json -x`: the
//! counters that matter, and how much each rose during the run. The delta,
//! not the lifetime total: a used disk's old count says nothing about this
//! burn-in (burnin-users.md §3).
//!
//! | kind | counters |
//! |---|---|
//! | media (→ return the disk) | ATA 5, 187, 196, 197, 198; NVMe `media_errors`, `critical_warning`; SAS grown defects and uncorrected read/write/verify errors |
//! | transport (→ cable, backplane, HBA port) | ATA 199 (UDMA CRC); SATA phy events 0x001, 0x00A, 0x00B |
//!
//! ATA 1, 7, 188 and 194 pack several numbers into one raw value on many
//! drives, so they are not compared. It reads and parses; the verdict is
//! `judge::burnin`'s.

use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a counter's rise points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The disk's media: return the disk.
    Media,
    /// The path to it: cable, backplane, HBA port.
    Transport,
}

/// One counter's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    pub name: String,
    pub kind: Kind,
    pub value: u64,
}

/// One reading of a disk's SMART.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The drive's overall health self-assessment.
    pub passed: Option<bool>,
    pub temperature_c: Option<i64>,
    pub counters: Vec<Counter>,
}

/// A counter that rose during the burn-in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    pub name: String,
    pub kind: Kind,
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
                    kind: a.kind,
                    before: b.value,
                    after: a.value,
                })
            })
            .collect();
        Self {
            before,
            after,
            deltas,
        }
    }
}

/// Runs `smartctl --json -x DEVICE`: the reading, or why there is none
/// (smartctl missing, or no SMART data for this device).
pub fn read(device: &str) -> Result<Snapshot, String> {
    let out = Command::new("smartctl")
        .args(["--json", "-x", device])
        .output()
        .map_err(|e| format!("smartctl could not run ({e}): install smartmontools"))?;
    // smartctl's exit status is a bit mask that is often non-zero on a
    // healthy disk; the JSON says what it could read.
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("smartctl gave no JSON for {device} ({e})"))?;
    parse(&v).ok_or_else(|| {
        let why = v["smartctl"]["messages"][0]["string"]
            .as_str()
            .unwrap_or("no SMART data")
            .to_string();
        format!("no SMART data for {device}: {why}")
    })
}

/// The counters of a `smartctl --json` document; None without any SMART
/// data (a loop device, a USB bridge that hides it).
pub fn parse(v: &Value) -> Option<Snapshot> {
    let mut counters = Vec::new();
    let mut push = |name: String, kind: Kind, value: Option<u64>| {
        if let Some(value) = value {
            counters.push(Counter { name, kind, value });
        }
    };
    for a in v["ata_smart_attributes"]["table"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let kind = match a["id"].as_u64() {
            Some(5 | 187 | 196 | 197 | 198) => Kind::Media,
            Some(199) => Kind::Transport,
            _ => continue,
        };
        let name = format!(
            "ATA {} {}",
            a["id"].as_u64().unwrap_or(0),
            a["name"].as_str().unwrap_or("")
        );
        push(name, kind, a["raw"]["value"].as_u64());
    }
    for p in v["sata_phy_event_counters"]["table"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if matches!(p["id"].as_u64(), Some(0x001 | 0x00a | 0x00b)) {
            let name = format!(
                "SATA phy 0x{:03x} {}",
                p["id"].as_u64().unwrap_or(0),
                p["name"].as_str().unwrap_or("")
            );
            push(name, Kind::Transport, p["value"].as_u64());
        }
    }
    let nvme = &v["nvme_smart_health_information_log"];
    for key in ["media_errors", "critical_warning"] {
        push(format!("NVMe {key}"), Kind::Media, nvme[key].as_u64());
    }
    push(
        "SAS grown defects".into(),
        Kind::Media,
        v["scsi_grown_defect_list"].as_u64(),
    );
    for op in ["read", "write", "verify"] {
        push(
            format!("SAS uncorrected {op} errors"),
            Kind::Media,
            v["scsi_error_counter_log"][op]["total_uncorrected_errors"].as_u64(),
        );
    }
    let passed = v["smart_status"]["passed"].as_bool();
    if counters.is_empty() && passed.is_none() {
        return None;
    }
    Some(Snapshot {
        passed,
        temperature_c: v["temperature"]["current"].as_i64(),
        counters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/smart")
            .join(name);
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    }

    #[test]
    fn a_recorded_ata_disk_has_its_media_and_cable_counters() {
        let s = parse(&fixture("ata.json")).unwrap();
        assert_eq!(s.passed, Some(true));
        assert_eq!(s.temperature_c, Some(32));
        let names: Vec<(&str, Kind)> = s
            .counters
            .iter()
            .map(|c| (c.name.as_str(), c.kind))
            .collect();
        assert_eq!(
            names,
            [
                ("ATA 5 Reallocated_Sector_Ct", Kind::Media),
                ("ATA 196 Reallocated_Event_Count", Kind::Media),
                ("ATA 197 Current_Pending_Sector", Kind::Media),
                ("ATA 198 Offline_Uncorrectable", Kind::Media),
                ("ATA 199 UDMA_CRC_Error_Count", Kind::Transport),
            ],
            "1, 7 and 194 (packed) are left out"
        );
    }

    #[test]
    fn deltas_not_totals() {
        let mut after = fixture("ata.json");
        let table = after["ata_smart_attributes"]["table"]
            .as_array_mut()
            .unwrap();
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
                kind: Kind::Media,
                before: 0,
                after: 8
            }]
        );
        let n = parse(&fixture("nvme.json")).unwrap();
        assert!(
            n.counters
                .iter()
                .any(|c| c.name == "NVMe media_errors" && c.value == 0)
        );
        assert!(parse(&serde_json::json!({"smartctl": {"exit_status": 2}})).is_none());
    }
}

//! What a burn-in costs a solid-state drive: the wear its own counters
//! show before and after (NVMe: data units written and percentage used;
//! ATA: logical sectors written and the Percentage Used Endurance
//! Indicator of its device statistics, else its vendor's written and wear
//! attributes), the share of its rated endurance the run used, and what a
//! plan would use (`--max-wear`).
//!
//! It reads `smartctl --json` documents and does arithmetic; it must not
//! run smartctl (`smart` does) and must not judge.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::units::human_bytes;

/// What a solid-state drive says of its wear.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Wear {
    /// Bytes the host has written over the drive's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes: Option<u64>,
    /// The share of its rated endurance used, in per cent (may pass 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_pct: Option<u64>,
}

/// ATA wear attributes whose normalized value is the endurance left, in
/// per cent (Intel 233, Samsung 177, Crucial 202, 169, 231: their names
/// in smartctl's drive database).
const LEFT_ATTRIBUTES: [u64; 5] = [233, 177, 202, 169, 231];

/// A solid-state drive's wear in a `smartctl --json -x` document; None
/// for a spinning disk or a drive that counts neither.
pub fn wear(v: &Value) -> Option<Wear> {
    let nvme = &v["nvme_smart_health_information_log"];
    let w = if nvme.is_object() {
        Wear {
            written_bytes: nvme["data_units_written"].as_u64().map(|u| u.saturating_mul(512_000)),
            used_pct: nvme["percentage_used"].as_u64(),
        }
    } else if v["rotation_rate"].as_u64() == Some(0) {
        Wear { written_bytes: ata_written(v), used_pct: ata_used(v) }
    } else {
        return None;
    };
    (w.written_bytes.is_some() || w.used_pct.is_some()).then_some(w)
}

/// An ATA device statistic's value, by its name.
fn statistic(v: &Value, name: &str) -> Option<u64> {
    let pages = v["ata_device_statistics"]["pages"].as_array()?;
    let entries = pages.iter().flat_map(|p| p["table"].as_array().into_iter().flatten());
    entries.filter(|e| e["name"] == name).find_map(|e| e["value"].as_u64())
}

/// An ATA attribute by its id.
fn attribute(v: &Value, id: u64) -> Option<&Value> {
    let table = v["ata_smart_attributes"]["table"].as_array()?;
    table.iter().find(|a| a["id"].as_u64() == Some(id))
}

/// Bytes an ATA drive says the host wrote: its device statistics' logical
/// sectors, else attribute 241 in the unit its name says.
fn ata_written(v: &Value) -> Option<u64> {
    let sector = v["logical_block_size"].as_u64().unwrap_or(512);
    if let Some(n) = statistic(v, "Logical Sectors Written") {
        return Some(n.saturating_mul(sector));
    }
    let a = attribute(v, 241)?;
    let unit = match a["name"].as_str()? {
        "Total_LBAs_Written" => sector,
        "Host_Writes_32MiB" => 32 << 20,
        "Host_Writes_GiB" | "Total_Writes_GiB" | "Lifetime_Writes_GiB" => 1 << 30,
        _ => return None,
    };
    a["raw"]["value"].as_u64().map(|n| n.saturating_mul(unit))
}

/// The share of an ATA drive's endurance used: its device statistic, else
/// 100 less a wear attribute's normalized value.
fn ata_used(v: &Value) -> Option<u64> {
    statistic(v, "Percentage Used Endurance Indicator").or_else(|| {
        let left = LEFT_ATTRIBUTES.iter().find_map(|id| attribute(v, *id)?["value"].as_u64())?;
        (left <= 100).then(|| 100 - left)
    })
}

impl Wear {
    /// Bytes that use one per cent of its endurance, at the rate its own
    /// counters show (bytes written for the share used so far); None
    /// before it has used one per cent.
    pub fn bytes_per_pct(&self) -> Option<f64> {
        let (written, used) = (self.written_bytes?, self.used_pct?);
        (used >= 1 && written > 0).then(|| written as f64 / used as f64)
    }

    /// Its percentage used once `bytes` more are written, where its
    /// counters give the rate.
    pub fn after_writing(&self, bytes: u64) -> Option<f64> {
        Some(self.used_pct? as f64 + bytes as f64 / self.bytes_per_pct()?)
    }
}

/// What a run cost a drive's endurance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endurance {
    /// Bytes the run wrote, as the drive counts them (else as the run
    /// counted them).
    pub written_bytes: u64,
    /// Whether `written_bytes` is the drive's own count.
    pub counted_by_drive: bool,
    pub used_before_pct: Option<u64>,
    pub used_after_pct: Option<u64>,
    /// The share of its rated endurance the run used, in per cent, where
    /// its counters tell: the rise of its percentage used, or the bytes
    /// at the rate it had used its endurance before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated_pct: Option<f64>,
    /// In words.
    pub said: String,
}

/// What writing `wrote` bytes (the run's count) cost a drive that read
/// `before` and `after`.
pub fn cost(before: &Wear, after: &Wear, wrote: u64) -> Endurance {
    let counted = before.written_bytes.zip(after.written_bytes).map(|(b, a)| a.saturating_sub(b));
    let written_bytes = counted.unwrap_or(wrote);
    let (b, a) = (before.used_pct, after.used_pct);
    let rose = a.zip(b).map(|(a, b)| a.saturating_sub(b)).filter(|r| *r > 0);
    let rate = before.bytes_per_pct();
    let rated_pct = rose.map(|r| r as f64).or(rate.map(|r| written_bytes as f64 / r));
    let whose = if counted.is_some() { "the drive's own count" } else { "arrayburn's count" };
    let share = match (rose, rate) {
        (Some(r), _) => format!("{r} % of its rated endurance (its percentage used rose by that)"),
        (None, Some(r)) => format!(
            "about {:.2} % of its rated endurance, at the rate its own counters show ({} written for {} % used)",
            written_bytes as f64 / r,
            human_bytes(before.written_bytes.unwrap_or_default()),
            before.used_pct.unwrap_or_default()
        ),
        (None, None) if b.is_some() => "under 1 % of its rated endurance".into(),
        (None, None) => {
            "how much of its rated endurance is not known (it says no percentage used)".into()
        }
    };
    let used = match (b, a) {
        (Some(b), Some(a)) if a != b => format!("; percentage used {b} % before, {a} % after"),
        (Some(b), _) => format!("; percentage used {b} % before and after"),
        _ => String::new(),
    };
    Endurance {
        written_bytes,
        counted_by_drive: counted.is_some(),
        used_before_pct: b,
        used_after_pct: a,
        rated_pct,
        said: format!("this run wrote {} ({whose}): {share}{used}", human_bytes(written_bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!("{}/fixtures/smart/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn every_release_s_nvme_and_ata_ssd_say_their_wear_and_a_spinning_disk_none() {
        for minor in 2..=5 {
            let nvme = wear(&fixture(&format!("versions/nvme-7.{minor}.json"))).unwrap();
            // The Intel SSDPEKNW010T8: 7,773,431 units of 512,000 bytes.
            assert_eq!(nvme, Wear { written_bytes: Some(3_979_996_672_000), used_pct: Some(0) });
            let ata = wear(&fixture(&format!("versions/ssd-ata-7.{minor}.json"))).unwrap();
            // The Samsung 860 EVO: 64,777,770,148 sectors of 512, 19 % used.
            assert_eq!(ata, Wear { written_bytes: Some(33_166_218_315_776), used_pct: Some(19) });
            assert_eq!(wear(&fixture(&format!("versions/ata-7.{minor}.json"))), None);
            assert_eq!(wear(&fixture(&format!("versions/sas-7.{minor}.json"))), None);
        }
        // Without device statistics: attribute 241 and 177's 81 left.
        let mut v = fixture("versions/ssd-ata-7.5.json");
        v.as_object_mut().unwrap().remove("ata_device_statistics");
        assert_eq!(
            wear(&v),
            Some(Wear { written_bytes: Some(33_166_218_315_776), used_pct: Some(19) })
        );
        assert_eq!(wear(&fixture("versions/loop-7.3.json")), None);
    }

    #[test]
    fn a_run_s_cost_is_the_drive_s_own_count_at_the_rate_it_has_worn() {
        let before = Wear { written_bytes: Some(33_166_218_315_776), used_pct: Some(19) };
        // 500 GB written and counted by the drive; still 19 %.
        let after = Wear { written_bytes: Some(33_666_218_315_776), ..before };
        let c = cost(&before, &after, 499_000_000_000);
        assert!(c.counted_by_drive);
        assert_eq!(c.written_bytes, 500_000_000_000);
        // 33.17 TB for 19 %: 1.746 TB a per cent; 0.5 TB is 0.29 %.
        assert!((c.rated_pct.unwrap() - 0.2864).abs() < 1e-3, "{c:?}");
        assert_eq!(
            c.said,
            "this run wrote 500 GB (the drive's own count): about 0.29 % of its rated endurance, at the rate its own counters show (33.17 TB written for 19 % used); percentage used 19 % before and after"
        );
        // Its percentage used rose: that is the share.
        let worn = Wear { used_pct: Some(20), ..after };
        let c = cost(&before, &worn, 0);
        assert_eq!(c.rated_pct, Some(1.0));
        assert!(c.said.ends_with("1 % of its rated endurance (its percentage used rose by that); percentage used 19 % before, 20 % after"), "{}", c.said);
        // A new drive at 0 %: no rate yet, under 1 % said.
        let new = Wear { written_bytes: Some(1_000_000), used_pct: Some(0) };
        let c = cost(&new, &Wear { written_bytes: Some(2_001_000_000), ..new }, 1);
        assert_eq!(c.rated_pct, None);
        assert_eq!(
            c.said,
            "this run wrote 2 GB (the drive's own count): under 1 % of its rated endurance; percentage used 0 % before and after"
        );
        // No count of its own: arrayburn's.
        let c = cost(&Wear::default(), &Wear::default(), 4_000_000_000);
        assert!(
            c.said.starts_with("this run wrote 4 GB (arrayburn's count): how much"),
            "{}",
            c.said
        );
    }

    #[test]
    fn a_plan_s_wear_is_predicted_only_at_a_rate_the_drive_has_shown() {
        let worn = Wear { written_bytes: Some(10_000_000_000_000), used_pct: Some(10) };
        // 1 TB a per cent: 2 TB more is 12 %.
        assert_eq!(worn.after_writing(2_000_000_000_000), Some(12.0));
        assert_eq!(Wear { used_pct: Some(0), ..worn }.after_writing(1), None);
        assert_eq!(Wear { written_bytes: None, ..worn }.after_writing(1), None);
    }
}

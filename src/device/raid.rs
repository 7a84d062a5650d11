//! A volume of a hardware RAID controller (megaraid_sas, hpsa, smartpqi,
//! aacraid) is not a drive: a read of it measures the volume, and SMART
//! reaches its drives only through the controller (`smartctl -d
//! megaraid,N` ...). Told from the controller's driver (sysfs), the
//! volume's vendor and model ("PERC H730P", "LOGICAL VOLUME",
//! "MR9361-8i"), or smartctl's own refusal to open it; its drives from
//! `smartctl --scan-open`. It must not judge the drives (`judge::inspect`
//! does) nor refuse anything.

use serde::{Deserialize, Serialize};

/// A RAID controller family arrayburn knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Controller {
    /// Its kernel driver (`megaraid_sas`), where read.
    pub driver: Option<String>,
    /// The family, in words.
    pub family: String,
    /// smartctl's device type for its drives (`megaraid`, `cciss`,
    /// `aacraid`).
    pub passthrough: String,
}

impl Controller {
    /// What the volume is and what a check of it can tell, in words.
    pub fn volume_words(&self) -> String {
        let driver = self.driver.as_ref().map(|d| format!(" ({d})")).unwrap_or_default();
        format!(
            "a volume of a {} controller{driver}, not a drive: a check measures the volume's speed, not any one drive's, and a burn-in writes all of its drives at once through the controller's cache; to test each drive, set the controller to HBA or JBOD mode",
            self.family
        )
    }
}

/// Drivers of RAID controllers: (driver, family, smartctl's device type).
const FAMILIES: [(&str, &str, &str); 4] = [
    ("megaraid_sas", "Broadcom MegaRAID (Dell PERC, Lenovo ServeRAID)", "megaraid"),
    ("hpsa", "HPE Smart Array", "cciss"),
    ("smartpqi", "Microchip SmartPQI (HPE Smart Array, Adaptec SmartRAID)", "cciss"),
    ("aacraid", "Adaptec", "aacraid"),
];

/// Model words only a RAID volume has, and the driver they point at.
const VOLUME_MODELS: [(&str, &str); 6] = [
    ("PERC", "megaraid_sas"),
    ("MEGARAID", "megaraid_sas"),
    ("SERVERAID", "megaraid_sas"),
    ("MR9", "megaraid_sas"),
    ("LOGICAL VOLUME", "hpsa"),
    ("SMART ARRAY", "hpsa"),
];

/// Vendors a volume of these controllers carries and no drive does (a
/// drive in JBOD or HBA mode carries its maker's, or its server maker's:
/// an HP-branded drive says "HP", so "HP" and "DELL" tell nothing alone).
const VOLUME_VENDORS: [&str; 4] = ["LSI", "AVAGO", "BROADCOM", "ADAPTEC"];

fn family(driver: &str, read: Option<&str>) -> Option<Controller> {
    let (d, family, passthrough) = FAMILIES.iter().find(|f| f.0 == driver)?;
    Some(Controller {
        driver: read.map(|_| d.to_string()),
        family: family.to_string(),
        passthrough: passthrough.to_string(),
    })
}

/// The controller whose volume a disk is, from its controller's `driver`
/// (sysfs), its `vendor` and `model` (sysfs or smartctl) and what smartctl
/// said opening it (`refusal`); None for a drive (one a RAID controller
/// passes through in JBOD or HBA mode included).
pub fn volume(
    driver: Option<&str>,
    vendor: Option<&str>,
    model: Option<&str>,
    refusal: Option<&str>,
) -> Option<Controller> {
    let up = |s: Option<&str>| s.unwrap_or("").trim().to_ascii_uppercase();
    let (vendor, model) = (up(vendor), up(model));
    let by_model = VOLUME_MODELS.iter().find(|(w, _)| model.contains(w)).map(|(_, d)| *d);
    let by_refusal = refusal.is_some_and(|r| r.contains("megaraid,N")).then_some("megaraid_sas");
    match driver.filter(|d| FAMILIES.iter().any(|f| f.0 == *d)) {
        // The controller's own driver: a volume unless it passes a drive
        // through (its maker's vendor and model).
        Some(d) => {
            let volume_vendor = VOLUME_VENDORS.iter().any(|v| vendor == *v || model.starts_with(v));
            (by_model.is_some() || by_refusal.is_some() || volume_vendor)
                .then(|| family(d, Some(d)))
                .flatten()
        }
        None => by_model.or(by_refusal).and_then(|d| family(d, None)),
    }
}

/// The drives behind controllers of device type `passthrough`
/// (`megaraid`) that `smartctl --scan-open` printed: (device, its `-d`
/// type), as `/dev/bus/0`, `sat+megaraid,0`. Lines commented out (a
/// device that could not be opened) are not drives.
pub fn members(scan: &str, passthrough: &str) -> Vec<(String, String)> {
    let kind = format!("{passthrough},");
    (scan.lines())
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let mut w = l.split('#').next()?.split_whitespace();
            let (dev, flag, kind_n) = (w.next()?, w.next()?, w.next()?);
            (flag == "-d" && kind_n.contains(&kind)).then(|| (dev.to_string(), kind_n.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_volume_is_told_from_a_drive_behind_the_same_controller() {
        let perc = volume(Some("megaraid_sas"), Some("DELL"), Some("PERC H740P Mini"), None);
        assert_eq!(perc.as_ref().map(|c| c.passthrough.as_str()), Some("megaraid"));
        assert_eq!(perc.unwrap().driver.as_deref(), Some("megaraid_sas"));
        let hp = volume(Some("hpsa"), Some("HP"), Some("LOGICAL VOLUME"), None).unwrap();
        assert_eq!(hp.passthrough, "cciss");
        let mr = volume(Some("megaraid_sas"), Some("AVAGO"), Some("MR9361-8i"), None).unwrap();
        assert!(mr.family.contains("MegaRAID"));
        // A drive passed through in JBOD or HBA mode is a drive.
        assert_eq!(volume(Some("megaraid_sas"), Some("ATA"), Some("ST4000NM0035-1V4"), None), None);
        assert_eq!(volume(Some("smartpqi"), Some("SEAGATE"), Some("ST8000NM0075"), None), None);
        // A server maker's own drive in HBA mode: its vendor is the maker's.
        assert_eq!(volume(Some("hpsa"), Some("HP"), Some("EG0600FBVFP"), None), None);
        assert_eq!(volume(Some("megaraid_sas"), Some("DELL"), Some("ST600MM0088"), None), None);
        let adaptec = volume(Some("aacraid"), Some("Adaptec"), Some("data1"), None).unwrap();
        assert_eq!(adaptec.passthrough, "aacraid");
        // Without sysfs: its model, or smartctl's refusal to open it.
        let refused = "Smartctl open device: /dev/sda failed: DELL or MegaRaid controller, please try adding '-d megaraid,N'";
        let by_refusal = volume(None, None, None, Some(refused)).unwrap();
        assert_eq!((by_refusal.passthrough.as_str(), by_refusal.driver), ("megaraid", None));
        assert!(volume(None, Some("DELL"), Some("PERC H730P"), None).is_some());
        // An HBA (mpt3sas) and a plain disk are not RAID controllers.
        assert_eq!(volume(Some("mpt3sas"), Some("SEAGATE"), Some("ST4000NM0035"), None), None);
        assert_eq!(volume(Some("ahci"), Some("ATA"), Some("WDC WD40EFRX"), None), None);
    }

    #[test]
    fn the_drives_are_read_from_a_recorded_scan() {
        let at = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/smart/raid/scan-open-megaraid.txt");
        let scan = std::fs::read_to_string(at).unwrap();
        let m = members(&scan, "megaraid");
        assert_eq!(m.len(), 4, "{m:?}");
        assert_eq!(m[0], ("/dev/bus/0".to_string(), "sat+megaraid,0".to_string()));
        assert_eq!(m[3].1, "sat+megaraid,3");
        assert!(members(&scan, "cciss").is_empty());
    }
}

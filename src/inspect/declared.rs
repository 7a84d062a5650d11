//! What a drive says of itself, for the incoming inspection: the identity
//! every disk has in sysfs, then what `smartctl --json -x` adds
//! (firmware, hours, power cycles, start/stop count, Seagate's FARM
//! hours where the release has `-l farm`, ATA security, TRIM, zones, NVMe
//! capacity outside any namespace)
//! and what `hdparm -N` adds (an ATA drive's native size: a Host Protected
//! Area). Parsing only: it must not judge (`judge::inspect` does) and it
//! reads no sector.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::device::Identity;
use crate::device::format::Format;
use crate::device::raid::Controller;
use crate::device::smartctl::{self, Feature};

/// What one drive declares of itself; `None` where the drive did not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Declared {
    /// The kernel's name of the disk (`sdb`).
    #[serde(default)]
    pub name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    /// The capacity the drive announces now (bytes; the kernel's where
    /// SMART does not say).
    pub size_bytes: u64,
    /// The capacity the kernel reads (bytes): what was measured.
    #[serde(default)]
    pub kernel_bytes: u64,
    pub logical_block: u32,
    pub physical_block: u32,
    /// Spindle speed (rpm); 0 for a solid-state drive.
    pub rotation_rpm: Option<u64>,
    /// SMART's power-on hours.
    pub power_on_hours: Option<u64>,
    pub power_cycles: Option<u64>,
    /// ATA attribute 4, or a SAS drive's accumulated start-stop cycles.
    pub start_stops: Option<u64>,
    /// Seagate's FARM log, where the drive keeps one.
    pub farm: Option<Farm>,
    /// The ATA security feature set's state, where the drive has it.
    pub security: Option<Security>,
    /// Capacity the drive has but does not show (an HPA, a DCO, NVMe
    /// capacity in no namespace), where it could be asked.
    pub hidden: Option<Hidden>,
    /// TRIM (ATA DATA SET MANAGEMENT) supported.
    pub trim: Option<bool>,
    /// The zone model, where the drive or the kernel names one
    /// (`host_aware`, `host_managed`, `device_managed`).
    pub zoned: Option<String>,
    /// A low-level format arrayburn does not test (520-byte sectors,
    /// protection information), from sysfs, sg_readcap or smartctl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// The RAID controller whose volume this is, and its drives as read
    /// through it, where it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid: Option<Raid>,
    /// What could not be asked, and why, a sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_read: Vec<String>,
    /// Whether SMART answered at all (hours, security and FARM are known
    /// only then).
    pub smart: bool,
    /// The kernel takes it for a spinning disk (its `queue/rotational`).
    #[serde(default, skip_serializing)]
    pub rotational: bool,
    /// An NVMe namespace's ID: the namespaces of one controller share
    /// its serial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nsid: Option<u32>,
    /// How long an ATA drive may retry a sector before it answers (SCT
    /// Error Recovery Control), where smartctl read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// How long the kernel waits for a command before it aborts it and
    /// resets the device (sysfs `device/timeout`, seconds), where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_timeout_s: Option<u64>,
    /// How smartctl spoke to it (`ATA`, `SCSI`, `NVMe`), where it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// An NVMe drive's error log entries (its lifetime count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme_error_log: Option<u64>,
}

/// An ATA drive's limit on its retries of a sector (SCT Error Recovery
/// Control): each direction's limit in tenths of a second, None where the
/// feature is off (the drive retries as long as it likes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    /// The drive has the feature (IDENTIFY word 206 bit 3).
    pub supported: bool,
    pub read_ds: Option<u32>,
    pub write_ds: Option<u32>,
}

/// An NVMe drive's error log entries, as smartctl read its health log.
pub fn nvme_error_log(v: &Value) -> Option<u64> {
    v["nvme_smart_health_information_log"]["num_err_log_entries"].as_u64()
}

/// What smartctl -x said of the drive's error recovery control: None
/// where it did not say (not an ATA drive, or not asked).
fn recovery(v: &Value) -> Option<Recovery> {
    if v["device"]["protocol"] != "ATA" {
        return None;
    }
    let caps = &v["ata_sct_capabilities"];
    let erc = &v["ata_sct_erc"];
    let limit = |k: &str| {
        (erc[k]["enabled"] == true)
            .then(|| erc[k]["deciseconds"].as_u64().and_then(|d| u32::try_from(d).ok()))
            .flatten()
    };
    if erc.is_object() {
        return Some(Recovery {
            supported: true,
            read_ds: limit("read"),
            write_ds: limit("write"),
        });
    }
    // No SCT at all (no capabilities word), or SCT without ERC.
    let lacks = caps.is_null() || caps["error_recovery_control_supported"] == false;
    (lacks && v["smart_status"].is_object()).then_some(Recovery {
        supported: false,
        read_ds: None,
        write_ds: None,
    })
}

/// A RAID volume's controller and the drives behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Raid {
    pub controller: Controller,
    /// Every drive `smartctl --scan-open` lists behind a controller of its
    /// kind (the volume's and any other's: smartctl cannot tell which).
    pub members: Vec<Member>,
}

/// A drive behind a RAID controller, as smartctl reads it through it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// How it was asked: `-d sat+megaraid,0 /dev/bus/0`.
    pub asked: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub power_on_hours: Option<u64>,
    /// Its own health assessment.
    pub passed: Option<bool>,
    /// Why its SMART was not read, where it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_read: Option<String>,
}

impl Member {
    /// What `smartctl --json -x -d KIND DEVICE` said of the drive.
    pub fn of(asked: String, v: &Value) -> Member {
        let said = !v["smart_status"].is_null() || !v["serial_number"].is_null();
        Member {
            asked,
            model: smartctl::text_of(v, smartctl::MODEL),
            serial: smartctl::text_of(v, &[&["serial_number"]]),
            power_on_hours: v["power_on_time"]["hours"].as_u64(),
            passed: v["smart_status"]["passed"].as_bool(),
            not_read: (!said).then(|| smartctl::why_not(v, "")),
        }
    }
}

/// Seagate's Field Access Reliability Metrics log: hours a reset of
/// SMART's attributes does not touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Farm {
    pub power_on_hours: u64,
    pub power_cycles: Option<u64>,
    pub serial: Option<String>,
}

/// ATA security, as smartctl reads it from IDENTIFY word 128.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Security {
    pub enabled: bool,
    pub locked: bool,
    pub frozen: Option<bool>,
    /// Too many wrong passwords: no unlock until a power cycle.
    pub attempts_exceeded: bool,
    /// smartctl's words (`ENABLED, PW level HIGH, **LOCKED** [SEC4]`).
    pub words: String,
}

/// Capacity a drive hides from the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hidden {
    /// Bytes shown now.
    pub shown_bytes: u64,
    /// Bytes the drive has.
    pub native_bytes: u64,
    /// What hides them, and the way back, in words.
    pub how: String,
    /// The command that shows the whole drive again.
    pub restore: Option<String>,
}

impl Declared {
    /// What sysfs says of every disk.
    pub fn of(id: &Identity) -> Self {
        Declared {
            name: id.name.clone(),
            format: id.format.clone(),
            model: id.model.clone(),
            serial: id.serial.clone(),
            firmware: id.firmware.clone(),
            size_bytes: id.size_bytes,
            kernel_bytes: id.size_bytes,
            logical_block: id.logical_block_size,
            physical_block: id.physical_block_size,
            rotational: id.rotational,
            nsid: id.nsid,
            ..Declared::default()
        }
    }

    /// Adds what a `smartctl --json -x -l farm` document says; without
    /// SMART data (a loop device, a bridge that hides it) says why in
    /// `not_read`.
    pub fn add_smart(&mut self, v: &Value, device: &str) {
        let text = |k: &Value| k.as_str().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let said =
            ["model_name", "scsi_model_name", "serial_number", "power_on_time", "smart_status"]
                .iter()
                .any(|k| !v[k].is_null());
        if !said {
            self.not_read.push(format!("SMART: {}", smartctl::why_not(v, device)));
            return;
        }
        // Its identity alone is no SMART: a drive that gave neither health
        // nor hours (QEMU's SAS drive behind a MegaRAID: smartctl stops at
        // "Test Unit Ready [medium or hardware error]", exit status 2) is
        // not known, its identity kept.
        self.smart = !v["smart_status"].is_null() || !v["power_on_time"].is_null();
        if !self.smart {
            self.not_read.push(format!(
                "SMART: {}: its health, hours and counters are not known",
                smartctl::why_not(v, device)
            ));
        }
        let nvme = v["device"]["protocol"].as_str() == Some("NVMe");
        self.model = smartctl::text_of(v, smartctl::MODEL).or(self.model.take());
        self.serial = text(&v["serial_number"]).or(self.serial.take());
        self.firmware = smartctl::text_of(v, smartctl::FIRMWARE).or(self.firmware.take());
        // The kernel's sector size is what was measured where it reads the
        // disk: a drive's claim of 520-byte sectors then is no format to
        // refuse (Linux leaves a drive of such sectors at size 0).
        let measured = self.kernel_bytes > 0;
        if v["device"]["protocol"] == "SCSI" {
            let release = smartctl::Version::of_json(v);
            self.not_read.extend(Feature::SasStartStop.lacking_in_reading(release));
            if self.format.is_none() {
                self.format = scsi_format(v, release, &mut self.not_read)
                    .filter(|f| !measured || f.logical_block.is_none_or(|b| b == 512 || b == 4096));
            }
        }
        if let Some(b) = v["user_capacity"]["bytes"].as_u64().filter(|b| *b > 0) {
            self.size_bytes = b;
        }
        let block = |k: &str| v[k].as_u64().and_then(|b| u32::try_from(b).ok()).filter(|b| *b > 0);
        if !measured {
            self.logical_block = block("logical_block_size").unwrap_or(self.logical_block);
        }
        self.physical_block =
            block("physical_block_size").unwrap_or(self.logical_block.max(self.physical_block));
        self.rotation_rpm = v["rotation_rate"].as_u64().or(nvme.then_some(0));
        // A SCSI drive's 0 is "solid state" and "not reported" alike in
        // smartctl's JSON: solid state only where the kernel says so too.
        if v["device"]["protocol"] == "SCSI" && self.rotation_rpm == Some(0) && self.rotational {
            self.rotation_rpm = None;
        }
        self.power_on_hours = v["power_on_time"]["hours"].as_u64();
        self.power_cycles = v["power_cycle_count"].as_u64();
        self.start_stops = start_stops(v);
        self.farm = farm(v);
        self.security = security(&v["ata_security"]);
        if v["device"]["protocol"] != "ATA" {
            self.not_read.push(
                "security: not an ATA drive, and a TCG Opal lock is not read here (sedutil-cli --query shows one)"
                    .into(),
            );
        }
        self.trim = v["trim"]["supported"].as_bool();
        self.recovery = recovery(v);
        self.protocol = v["device"]["protocol"].as_str().map(str::to_string);
        self.nvme_error_log = nvme_error_log(v);
        self.zoned = v["zoned_device"]["capabilities"].as_str().map(str::to_string);
        if let (Some(total), Some(free)) =
            (v["nvme_total_capacity"].as_u64(), v["nvme_unallocated_capacity"].as_u64())
            && free > 0
        {
            self.hidden = Some(Hidden {
                shown_bytes: total - free,
                native_bytes: total,
                how: "NVMe capacity in no namespace".into(),
                restore: None,
            });
        }
    }

    /// Adds what `hdparm -N` printed (`max sectors = 312579695/312581808,
    /// HPA is enabled`): a native size above the one shown is an HPA. A
    /// bridge that cannot pass the command says `0/1`: not read, then.
    pub fn add_hdparm(&mut self, out: &str) {
        let Some((now, native)) = max_sectors(out) else {
            self.not_read.push("HPA: hdparm -N gave no native size".into());
            return;
        };
        if now == 0 || native <= 1 {
            self.not_read.push(format!(
                "HPA: hdparm -N said {now}/{native} (the command did not reach the drive)"
            ));
            return;
        }
        // hdparm counts the drive's logical sectors (its LBAs).
        let lba = u64::from(self.logical_block.max(512));
        if self.size_bytes > 0 && now * lba != self.size_bytes {
            self.not_read.push(format!(
                "HPA: hdparm -N's current size ({now} sectors) is not the {} bytes the drive shows: not used",
                self.size_bytes
            ));
            return;
        }
        if native > now {
            self.hidden = Some(Hidden {
                shown_bytes: now * lba,
                native_bytes: native * lba,
                how: format!("a Host Protected Area (hdparm -N: {now}/{native} sectors)"),
                restore: Some(format!("hdparm -N p{native}")),
            });
        }
    }

    /// Adds what `hdparm --dco-identify` printed (`Real max sectors: N`):
    /// a Device Configuration Overlay can hide capacity beyond even the
    /// native size `hdparm -N` reads. The shown size is the drive's.
    pub fn add_dco(&mut self, out: &str) {
        let real = out
            .lines()
            .find_map(|l| l.trim().strip_prefix("Real max sectors:"))
            .and_then(|n| n.trim().parse::<u64>().ok());
        let Some(real) = real.filter(|r| *r > 1) else {
            self.not_read.push("DCO: hdparm --dco-identify gave no real maximum".into());
            return;
        };
        let lba = u64::from(self.logical_block.max(512));
        let native = self.hidden.as_ref().map_or(self.size_bytes, |h| h.native_bytes);
        if real * lba > native && self.size_bytes > 0 {
            let hpa = self.hidden.take();
            let caution =
                "; restoring it resets the drive to its factory settings, and its data may be lost";
            let how = match &hpa {
                Some(h) => format!(
                    "{}, and a Device Configuration Overlay (hdparm --dco-identify: real maximum {real} sectors){caution}",
                    h.how
                ),
                None => format!(
                    "a Device Configuration Overlay (hdparm --dco-identify: real maximum {real} sectors){caution}"
                ),
            };
            self.hidden = Some(Hidden {
                shown_bytes: self.size_bytes,
                native_bytes: real * lba,
                how,
                restore: Some("hdparm --dco-restore".into()),
            });
        }
    }

    /// Where the kernel names a zone model (`queue/zoned`), and the drive
    /// did not.
    pub fn add_zoned(&mut self, sysfs: Option<&str>) {
        if self.zoned.is_none()
            && let Some(z) = sysfs.map(str::trim).filter(|z| !z.is_empty() && *z != "none")
        {
            self.zoned = Some(z.replace('-', "_"));
        }
    }

    /// Whether the drive is a Seagate's (the maker whose drives keep a
    /// FARM log): its model starts "ST" (ATA) or its vendor is SEAGATE.
    pub fn seagate(&self) -> bool {
        self.model.as_deref().is_some_and(|m| {
            let m = m.trim_start();
            m.starts_with("ST") || m.to_ascii_uppercase().starts_with("SEAGATE")
        })
    }

    /// The sector format in words: 512n, 512e, 4Kn, or logical/physical.
    pub fn sector_format(&self) -> String {
        match (self.logical_block, self.physical_block) {
            (512, 512) => "512n".into(),
            (512, 4096) => "512e".into(),
            (4096, 4096) => "4Kn".into(),
            (l, p) => format!("{l}/{p}"),
        }
    }
}

/// A SAS drive's format as smartctl reads it (`logical_block_size`,
/// `scsi_protection_type` from 7.3), where arrayburn does not test it.
fn scsi_format(
    v: &Value,
    release: Option<smartctl::Version>,
    not_read: &mut Vec<String>,
) -> Option<Format> {
    let protection = v["scsi_protection_type"].as_u64().and_then(|t| u8::try_from(t).ok());
    if protection.is_none() {
        not_read.extend(Feature::ScsiProtection.lacking_in_reading(release));
    }
    let f = Format {
        logical_block: v["logical_block_size"].as_u64().and_then(|b| u32::try_from(b).ok()),
        // smartctl writes the type only where the drive has one.
        protection_type: protection.or(Feature::ScsiProtection.in_release(release).then_some(0)),
        blocks: v["user_capacity"]["blocks"].as_u64(),
        source: "smartctl".into(),
        nvme: None,
    };
    Some(f).filter(|f| f.logical_block.is_some() && f.untested())
}

/// ATA attribute 4's raw value, or SAS's accumulated start-stop cycles.
fn start_stops(v: &Value) -> Option<u64> {
    let ata = (v["ata_smart_attributes"]["table"].as_array().into_iter().flatten())
        .find(|a| a["id"].as_u64() == Some(4))
        .and_then(|a| a["raw"]["value"].as_u64());
    ata.or_else(|| v["scsi_start_stop_cycle_counter"]["accumulated_start_stop_cycles"].as_u64())
}

/// The FARM log's drive information (ATA: `poh`; SAS: `power_on_hour`).
fn farm(v: &Value) -> Option<Farm> {
    let page = &v["seagate_farm_log"]["page_1_drive_information"];
    let hours = page["poh"].as_u64().or_else(|| page["power_on_hour"].as_u64())?;
    Some(Farm {
        power_on_hours: hours,
        power_cycles: page["power_cycle_count"].as_u64(),
        serial: page["serial_number"].as_str().map(|s| s.trim().to_string()),
    })
}

/// smartctl's `ata_security` object.
fn security(s: &Value) -> Option<Security> {
    let enabled = s["enabled"].as_bool()?;
    Some(Security {
        enabled,
        locked: s["locked"].as_bool().unwrap_or(false),
        frozen: s["frozen"].as_bool(),
        attempts_exceeded: s["pw_attempts_exceeded"].as_bool().unwrap_or(false),
        words: s["string"].as_str().unwrap_or("").trim().to_string(),
    })
}

/// `max sectors = NOW/NATIVE` from hdparm -N's output.
fn max_sectors(out: &str) -> Option<(u64, u64)> {
    let line = out.lines().find(|l| l.trim_start().starts_with("max sectors"))?;
    let (now, native) = line.split_once('=')?.1.split(',').next()?.trim().split_once('/')?;
    Some((now.trim().parse().ok()?, native.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let p = format!("{}/fixtures/smart/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn smart(name: &str) -> Declared {
        let mut f = Declared::default();
        f.add_smart(&fixture(name), "/dev/sdb");
        f
    }

    #[test]
    fn a_drive_that_gave_its_identity_only_is_not_known_and_its_unreported_rpm_is_not_solid_state()
    {
        // Recorded in the lab: smartctl 7.3 stops at the MegaRAID drive's
        // Test Unit Ready after its identity.
        let p = format!("{}/fixtures/lab/megaraid-sas-x.json", env!("CARGO_MANIFEST_DIR"));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let mut d = Declared { rotational: true, ..Declared::default() };
        d.add_smart(&v, "/dev/sdd");
        assert!(!d.smart);
        assert_eq!(
            (d.model.as_deref(), d.serial.as_deref()),
            (Some("SEAGATE LAB SAS MR"), Some("LABMR00"))
        );
        assert_eq!((d.power_on_hours, d.rotation_rpm), (None, None));
        assert!(
            d.not_read.iter().any(|n| n
                == "SMART: smartctl read the drive's identity only, then stopped (exit status 2: a command it \
                    needs failed; `smartctl -x /dev/sdd` names it): its health, hours and counters are not known"),
            "{:#?}",
            d.not_read
        );
        // Where the kernel takes it for solid state, 0 is solid state.
        let mut ssd = Declared::default();
        ssd.add_smart(&v, "/dev/sdd");
        assert_eq!(ssd.rotation_rpm, Some(0));
    }

    #[test]
    fn a_drive_without_smart_is_said_to_have_none_and_its_zero_temperature_and_rpm_are_not_read() {
        // Recorded in the lab: QEMU's SAS drive behind an LSI SAS1068 HBA
        // (mptsas) answers, with no SMART, rotation 0 and temperature 0.
        let p = format!("{}/fixtures/lab/mptsas-sas-x.json", env!("CARGO_MANIFEST_DIR"));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let mut d = Declared { rotational: true, ..Declared::default() };
        d.add_smart(&v, "/dev/sda");
        assert!(!d.smart);
        assert_eq!((d.power_on_hours, d.rotation_rpm), (None, None));
        assert_eq!(d.model.as_deref(), Some("SEAGATE LAB SAS HBA"));
        assert!(
            d.not_read.iter().any(|n| n
                == "SMART: the drive says it has no SMART (smartctl: \"device lacks SMART capability\"): \
                    its health, hours and counters are not known"),
            "{:#?}",
            d.not_read
        );
    }

    #[test]
    fn a_drives_error_recovery_limit_is_read_set_off_or_lacking() {
        let erc = |name: &str| {
            let mut d = Declared::default();
            d.add_smart(&fixture(&format!("erc/{name}")), "/dev/sda");
            d.recovery
        };
        let r = |supported, read_ds, write_ds| Some(Recovery { supported, read_ds, write_ds });
        assert_eq!(erc("wd-red-70-7.2.json"), r(true, Some(70), Some(70)));
        assert_eq!(erc("samsung-disabled-7.2.json"), r(true, None, None));
        assert_eq!(erc("st4000dm000-unsupported-7.0.json"), r(false, None, None));
        // Not an ATA drive: not said.
        assert_eq!(smart("nvme.json").recovery, None);
        assert_eq!(smart("sas.json").recovery, None);
    }

    #[test]
    fn a_recorded_sata_disk_gives_its_identity_hours_and_counts() {
        let f = smart("ata.json");
        assert!(f.smart);
        assert_eq!(f.model.as_deref(), Some("WDC WD140EDFZ-11A0VA0"));
        assert_eq!(f.firmware.as_deref(), Some("81.00A81"));
        assert_eq!(f.size_bytes, 14_000_519_643_136);
        assert_eq!((f.power_on_hours, f.power_cycles), (Some(1730), Some(9)));
        assert_eq!(f.start_stops, Some(9));
        assert_eq!(f.rotation_rpm, Some(5400));
        assert_eq!((f.farm.clone(), f.security.clone(), f.hidden.clone()), (None, None, None));
    }

    #[test]
    fn nvme_and_sas_recordings_give_theirs() {
        let n = smart("nvme.json");
        assert!(n.not_read[0].contains("TCG Opal lock is not read"), "{:?}", n.not_read);
        assert_eq!((n.power_on_hours, n.rotation_rpm), (Some(2401), Some(0)));
        let s = smart("sas.json");
        assert_eq!(s.power_on_hours, Some(5675));
        assert_eq!(s.firmware.as_deref(), Some("N004"));
        assert_eq!(s.rotation_rpm, Some(10500));
    }

    #[test]
    fn farm_security_and_an_hpa_are_read() {
        let f = smart("farm-reset.json");
        let farm = f.farm.clone().unwrap();
        assert_eq!((f.power_on_hours, farm.power_on_hours), (Some(12), 31383));
        assert_eq!(farm.serial.as_deref(), Some("WW60N2JG"));
        assert!(!f.security.clone().unwrap().locked);
        let l = smart("ata-locked.json");
        let s = l.security.unwrap();
        assert!(s.enabled && s.locked && !s.attempts_exceeded, "{s:?}");
        let mut h = Declared::default();
        h.add_hdparm(
            &std::fs::read_to_string(format!(
                "{}/fixtures/smart/hdparm-N-hpa.txt",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        );
        let hidden = h.hidden.unwrap();
        assert_eq!(
            (hidden.shown_bytes, hidden.native_bytes),
            (312_579_695 * 512, 312_581_808 * 512)
        );
        assert_eq!(hidden.restore.as_deref(), Some("hdparm -N p312581808"));
    }

    #[test]
    fn a_dco_that_hides_capacity_is_told_and_one_that_does_not_is_not() {
        let fixture = |n: &str| {
            std::fs::read_to_string(format!("{}/fixtures/smart/{n}", env!("CARGO_MANIFEST_DIR")))
                .unwrap()
        };
        // The recorded 750 GB disk: no HPA, its DCO's maximum what it shows.
        let mut whole =
            Declared { size_bytes: 1_465_149_168 * 512, logical_block: 512, ..Declared::default() };
        whole.add_hdparm(&fixture("hdparm-N-750g.txt"));
        whole.add_dco(&fixture("hdparm-dco.txt"));
        assert_eq!((whole.hidden, whole.not_read.len()), (None, 0));
        // The same DCO on a drive that shows (and natively reports) 2 GB
        // less: the overlay hides it.
        let shown = 1_465_149_168 - 4_000_000;
        let mut cut =
            Declared { size_bytes: shown * 512, logical_block: 512, ..Declared::default() };
        cut.add_hdparm(&format!("/dev/sda:\n max sectors   = {shown}/{shown}, HPA is disabled\n"));
        cut.add_dco(&fixture("hdparm-dco.txt"));
        let h = cut.hidden.unwrap();
        assert_eq!((h.shown_bytes, h.native_bytes), (shown * 512, 1_465_149_168 * 512));
        assert!(h.how.starts_with("a Device Configuration Overlay"), "{}", h.how);
        assert_eq!(h.restore.as_deref(), Some("hdparm --dco-restore"));
    }

    #[test]
    fn hdparm_that_did_not_reach_the_drive_is_not_an_hpa() {
        let mut f = Declared::default();
        f.add_hdparm("\n/dev/sdf:\n max sectors   = 0/1, HPA is enabled\n");
        assert_eq!(f.hidden, None);
        assert!(f.not_read[0].contains("did not reach the drive"), "{:?}", f.not_read);
        let mut g = Declared::default();
        g.add_hdparm("\n/dev/sda:\n max sectors   = 312581808/312581808, HPA is disabled\n");
        assert_eq!((g.hidden, g.not_read.len()), (None, 0));
        // Numbers that are not this drive's (a bridge's, another disk's).
        let mut m =
            Declared { size_bytes: 14_000_519_643_136, logical_block: 512, ..Declared::default() };
        m.add_hdparm("\n/dev/sdb:\n max sectors   = 312579695/312581808, HPA is enabled\n");
        assert_eq!(m.hidden, None);
        assert!(m.not_read[0].contains("not the 14000519643136 bytes"), "{:?}", m.not_read);
    }

    #[test]
    fn no_smart_data_is_said_not_guessed() {
        let mut f = Declared::default();
        f.add_smart(&serde_json::json!({"smartctl": {"messages": [{"string": "/dev/loop3: Unable to detect device type"}], "exit_status": 1}}), "/dev/loop3");
        assert!(!f.smart);
        assert_eq!(f.power_on_hours, None);
        assert!(
            f.not_read[0].starts_with("SMART: smartctl cannot tell what kind"),
            "{:?}",
            f.not_read
        );
        assert!(!f.not_read[0].contains("/dev/loop3"), "{:?}", f.not_read);
    }
}

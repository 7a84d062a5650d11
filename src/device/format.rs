//! A drive's low-level format where it is not a plain disk of 512- or
//! 4096-byte sectors: a SAS drive formatted by a storage array with 520 or
//! 528 bytes per sector, or with T10 protection information (PI type 1-3),
//! as used drives from decommissioned arrays come. Linux's sd driver
//! leaves a drive of an unsupported sector size at size 0 ("Unsupported
//! sector size 520"); a PI format adds 8 bytes per sector that the HBA
//! checks or does not.
//!
//! Read from sysfs (`device/scsi_disk/*/protection_type`), and, for a SCSI
//! disk whose size reads 0, `sg_readcap --long` (sg3_utils), asked only
//! then. What cannot be told is said. The one rule here: such a format is
//! not tested (check and burn-in refuse it; list and inspect name it) and
//! the words that name its cause and the way out. It must not refuse
//! anything itself.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::tool;

/// A format arrayburn does not test, and what is known of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Format {
    /// Bytes per logical sector, where known (520, 528).
    #[serde(default)]
    pub logical_block: Option<u32>,
    /// The T10 protection information type (1-3); 0 for none; None where
    /// not known.
    #[serde(default)]
    pub protection_type: Option<u8>,
    /// Its logical sectors, where known.
    #[serde(default)]
    pub blocks: Option<u64>,
    /// Where it was read, in words (`sg_readcap --long`, sysfs).
    pub source: String,
    /// An NVMe namespace's metadata, where it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<NvmeMetadata>,
}

/// What an NVMe namespace formatted with metadata carries (`nvme id-ns`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvmeMetadata {
    /// Bytes of metadata per block, where nvme-cli said.
    pub bytes: Option<u32>,
    /// The LBA format of the same data size without metadata (for `nvme
    /// format --lbaf`), where nvme-cli said.
    pub plain_lbaf: Option<u32>,
}

/// The speed a drive rewrites its sectors at while formatting, for the
/// rough time said (a 7200 rpm SAS drive's sustained write).
const FORMAT_BYTES_PER_S: f64 = 200e6;

impl Format {
    /// Whether the format is one arrayburn does not test: sectors other
    /// than 512 or 4096 bytes, or protection information.
    pub fn untested(&self) -> bool {
        self.logical_block.is_some_and(|b| b != 512 && b != 4096)
            || self.protection_type.is_some_and(|t| t > 0)
            || self.nvme.is_some()
    }

    /// The cause, what to do and what it costs, in one sentence, for the
    /// disk `/dev/NAME` (`name`).
    pub fn sentence(&self, name: &str) -> String {
        if let Some(m) = &self.nvme {
            return self.nvme_sentence(m, name);
        }
        let cause = match (self.logical_block, self.protection_type) {
            (Some(b), pi) if b != 512 && b != 4096 => {
                let pi = pi
                    .filter(|t| *t > 0)
                    .map(|t| format!(" and protection information type {t}"))
                    .unwrap_or_default();
                format!(
                    "formatted with {b}-byte sectors{pi} (as a storage array formats its drives): Linux cannot use it (its size reads 0)"
                )
            }
            (_, Some(t)) if t > 0 => format!(
                "formatted with protection information (T10 PI type {t}: 8 bytes more per sector, checked by the HBA where it can): arrayburn does not test such a format, whose reads are not those of the disk a pool will use"
            ),
            // Never built: a format is kept only where it is untested.
            _ => "formatted in a way arrayburn does not test".into(),
        };
        let bytes = self.blocks.map(|b| b * 512);
        let time = match bytes {
            Some(b) => format!(
                "roughly {:.0} h for its {} (it rewrites every sector)",
                (b as f64 / FORMAT_BYTES_PER_S / 3600.0).max(1.0),
                crate::units::human_bytes(b)
            ),
            None => "hours: it rewrites every sector".into(),
        };
        format!(
            "{cause}; to make it a plain 512-byte disk: sg_format --format --size=512 --fmtpinfo=0 /dev/{name} (sg3_utils; it destroys everything on the drive and takes {time})"
        )
    }
}

impl Format {
    /// An NVMe namespace's metadata format in words, and the command that
    /// makes it a plain one.
    fn nvme_sentence(&self, m: &NvmeMetadata, name: &str) -> String {
        let bytes = m.bytes.map_or("metadata".into(), |b| format!("{b} bytes of metadata"));
        let block = self.logical_block.map_or("block".into(), |b| format!("{b}-byte block"));
        let pi = match self.protection_type {
            Some(t) if t > 0 => {
                format!(
                    " holding protection information (T10 PI type {t}, which the kernel writes and checks)"
                )
            }
            _ => " (no protection information)".into(),
        };
        let lbaf = m.plain_lbaf.map_or_else(
            || format!("N (N: a format of `nvme id-ns -H /dev/{name}` with Metadata Size 0)"),
            |n| n.to_string(),
        );
        format!(
            "formatted with {bytes} per {block}{pi}: arrayburn does not test such a format, whose blocks carry more than the data a pool writes; to make it a plain namespace: nvme format /dev/{name} --lbaf={lbaf} (nvme-cli; it destroys everything on the namespace)"
        )
    }
}

/// An NVMe namespace's metadata format, from sysfs (`integrity/format`:
/// `nop` for metadata without protection information, `T10-DIF-TYPE1-CRC`
/// and the like with it; `none` for a plain namespace) and `nvme id-ns -o
/// json` where nvme-cli answers (how many bytes, and which format is
/// plain).
fn read_nvme(dir: &Path, name: &str) -> Option<Format> {
    let integrity = std::fs::read_to_string(dir.join("integrity/format")).ok()?;
    let integrity = integrity.trim();
    if integrity.is_empty() || integrity == "none" {
        return None;
    }
    let pi = integrity
        .strip_prefix("T10-DIF-TYPE")
        .and_then(|t| t.chars().next()?.to_digit(10))
        .and_then(|t| u8::try_from(t).ok())
        .unwrap_or(0);
    let asked = tool::output(
        Command::new("nvme").args(["id-ns", "-o", "json", &format!("/dev/{name}")]),
        READCAP_LIMIT,
        &|| false,
    );
    let id_ns = match asked {
        Ok(out) if out.status.success() => serde_json::from_slice(&out.stdout).ok(),
        _ => None,
    };
    let mut f = id_ns.as_ref().and_then(parse_id_ns).unwrap_or(Format {
        logical_block: None,
        protection_type: None,
        blocks: None,
        source: "sysfs (integrity/format)".into(),
        nvme: Some(NvmeMetadata { bytes: None, plain_lbaf: None }),
    });
    f.protection_type = Some(pi);
    Some(f)
}

/// What `nvme id-ns -o json` says of a namespace's format: the one in use
/// (`flbas`: bits 0-3, and 5-6 above 16 formats), its data size (`ds`, a
/// power of two) and metadata bytes (`ms`); None where it has none.
pub fn parse_id_ns(v: &serde_json::Value) -> Option<Format> {
    let flbas = v["flbas"].as_u64()?;
    let index = (flbas & 0xf) | ((flbas >> 5 & 0x3) << 4);
    let formats = v["lbafs"].as_array()?;
    let now = formats.get(usize::try_from(index).ok()?)?;
    let (ms, ds) = (now["ms"].as_u64()?, now["ds"].as_u64()?);
    if ms == 0 {
        return None;
    }
    let plain =
        formats.iter().position(|l| l["ms"].as_u64() == Some(0) && l["ds"].as_u64() == Some(ds));
    Some(Format {
        logical_block: u32::try_from(1u64.checked_shl(u32::try_from(ds).ok()?)?).ok(),
        protection_type: v["dps"].as_u64().map(|d| (d & 0x7) as u8),
        blocks: v["nsze"].as_u64(),
        source: "nvme id-ns".into(),
        nvme: Some(NvmeMetadata {
            bytes: u32::try_from(ms).ok(),
            plain_lbaf: plain.and_then(|p| u32::try_from(p).ok()),
        }),
    })
}

/// The format of disk `name` where it is one arrayburn does not test (a
/// SCSI disk: its sysfs directory `dir` has `device/scsi_disk`; an NVMe
/// namespace formatted with metadata); None
/// for a plain disk, and where nothing says which format a disk of size 0
/// has (no medium, not spun up, or no sg3_utils to ask): a cause is never
/// guessed. `size_bytes` is what the kernel reads.
pub fn read(dir: &Path, name: &str, size_bytes: u64) -> Option<Format> {
    if name.starts_with("nvme") {
        return read_nvme(dir, name);
    }
    let scsi_disk = std::fs::read_dir(dir.join("device/scsi_disk")).ok()?.flatten().next()?;
    let pi = std::fs::read_to_string(scsi_disk.path().join("protection_type"))
        .ok()
        .and_then(|t| t.trim().parse::<u8>().ok());
    let by_sysfs = pi.filter(|t| *t > 0).map(|t| Format {
        logical_block: None,
        protection_type: Some(t),
        blocks: None,
        source: "sysfs (protection_type)".into(),
        nvme: None,
    });
    if size_bytes > 0 {
        return by_sysfs;
    }
    // READ CAPACITY answers at once, even from a drive not spun up.
    let asked = tool::output(
        Command::new("sg_readcap").args(["--long", &format!("/dev/{name}")]),
        READCAP_LIMIT,
        &|| false,
    );
    let text = match asked {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => String::new(),
    };
    parse_readcap(&text).or(by_sysfs).filter(Format::untested)
}

/// How long `sg_readcap` may take (a hung disk hangs it too).
const READCAP_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What `sg_readcap --long` printed: `Logical block length=520 bytes`,
/// `prot_en=1, p_type=1`, `Number of logical blocks=...`.
pub fn parse_readcap(text: &str) -> Option<Format> {
    let after = |key: &str| -> Option<u64> {
        let at = text.find(key)? + key.len();
        let digits: String =
            text[at..].trim_start().chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let logical = after("Logical block length=")?;
    // p_type counts from 0 for type 1; without --long there is no
    // protection line (not known, then).
    let protection_type = after("prot_en=").map(|on| match (on, after("p_type=")) {
        (1, Some(t)) => (t + 1).min(3) as u8,
        _ => 0,
    });
    Some(Format {
        logical_block: u32::try_from(logical).ok(),
        protection_type,
        blocks: after("Number of logical blocks="),
        source: "sg_readcap --long".into(),
        nvme: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/formats").join(name);
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn recorded_readcaps_are_read_for_sector_size_and_protection() {
        let f = parse_readcap(&fixture("sg_readcap-520.txt")).unwrap();
        assert_eq!((f.logical_block, f.protection_type), (Some(520), None));
        assert!(f.untested() && f.blocks.is_some_and(|b| b > 1_000_000));
        let said = f.sentence("sdc");
        assert!(said.starts_with("formatted with 520-byte sectors"), "{said}");
        assert!(said.contains("sg_format --format --size=512 --fmtpinfo=0 /dev/sdc"), "{said}");
        assert!(said.contains("destroys everything on the drive"), "{said}");
        let pi = parse_readcap(&fixture("sg_readcap-pi.txt")).unwrap();
        assert_eq!(pi.logical_block, Some(512));
        assert!(pi.protection_type == Some(2) && pi.untested(), "{pi:?}");
        assert!(pi.sentence("sdd").contains("protection information (T10 PI type 2"), "{pi:?}");
        let plain = parse_readcap(&fixture("sg_readcap-512.txt")).unwrap();
        assert_eq!((plain.logical_block, plain.protection_type), (Some(512), None));
        assert!(!plain.untested());
        assert_eq!(parse_readcap("sg_readcap: not a SCSI device"), None);
    }

    #[test]
    fn an_nvme_namespace_with_metadata_is_told_with_the_format_that_makes_it_plain() {
        // Recorded in the lab: QEMU's namespace as it comes, then formatted
        // 512 + 8 (no PI) and 4096 + 8 with PI type 1.
        let id_ns = |f: &str| -> serde_json::Value {
            let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lab").join(f);
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        assert_eq!(parse_id_ns(&id_ns("nvme-id-ns-plain.json")), None);
        let eight = parse_id_ns(&id_ns("nvme-id-ns-512-8.json")).unwrap();
        assert_eq!(
            (eight.logical_block, eight.protection_type, eight.blocks),
            (Some(512), Some(0), Some(516_222))
        );
        assert!(eight.untested());
        assert_eq!(
            eight.sentence("nvme0n1"),
            "formatted with 8 bytes of metadata per 512-byte block (no protection information): arrayburn does not test such a format, whose blocks carry more than the data a pool writes; to make it a plain namespace: nvme format /dev/nvme0n1 --lbaf=0 (nvme-cli; it destroys everything on the namespace)"
        );
        let pi = parse_id_ns(&id_ns("nvme-id-ns-4096-8-pi1.json")).unwrap();
        assert_eq!((pi.logical_block, pi.protection_type), (Some(4096), Some(1)));
        let said = pi.sentence("nvme0n1");
        assert!(said.starts_with("formatted with 8 bytes of metadata per 4096-byte block holding protection information (T10 PI type 1, which the kernel writes and checks)"), "{said}");
        assert!(said.contains("nvme format /dev/nvme0n1 --lbaf=4 "), "{said}");
        // Without nvme-cli's answer: what sysfs tells, and how to find the
        // format to use.
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("integrity")).unwrap();
        std::fs::write(t.path().join("integrity/format"), "none\n").unwrap();
        assert_eq!(read(t.path(), "nvme-lab-none0n1", 1 << 30), None);
        std::fs::write(t.path().join("integrity/format"), "T10-DIF-TYPE3-CRC\n").unwrap();
        let f = read(t.path(), "nvme-lab-none0n1", 1 << 30).unwrap();
        assert_eq!(f.protection_type, Some(3));
        assert!(f.sentence("nvme9n1").contains(
            "--lbaf=N (N: a format of `nvme id-ns -H /dev/nvme9n1` with Metadata Size 0)"
        ));
    }

    /// A fake sysfs directory of a SCSI disk with `protection_type`.
    fn scsi_disk(pi: &str) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("device/scsi_disk/2:0:1:0");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("protection_type"), pi).unwrap();
        t
    }

    #[test]
    fn sysfs_tells_a_pi_format_and_a_plain_disk_is_nothing() {
        let pi = scsi_disk("2\n");
        let f = read(pi.path(), "sdz", 1 << 40).unwrap();
        assert_eq!(f.protection_type, Some(2));
        assert!(f.untested());
        assert_eq!(read(scsi_disk("0\n").path(), "sdz", 1 << 40), None);
        // Not a SCSI disk (NVMe, a loop device): nothing asked.
        assert_eq!(read(tempfile::tempdir().unwrap().path(), "loop9", 0), None);
        // Size 0 without sg_readcap's answer (sdz is no device here): no
        // cause is claimed (no medium, not spun up: the size-0 refusal
        // says so); with a PI type in sysfs, that is what is known.
        assert_eq!(read(scsi_disk("0\n").path(), "sdz-none", 0), None);
        let pi = read(scsi_disk("1\n").path(), "sdz-none", 0).unwrap();
        assert_eq!((pi.logical_block, pi.protection_type), (None, Some(1)));
    }
}

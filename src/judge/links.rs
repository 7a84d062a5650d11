//! Links below their maximum: which of the disks' links are, shared or a
//! disk's own, the advice they change and the words the verdicts use (the
//! check's and the burn-in's alike). Whether one link runs below what its
//! ends allow is still read with it in `device::topology`.
//!
//! It must not read sysfs or run a tool.

use serde::{Deserialize, Serialize};

use super::advice::{DiskAdvice, SlowLink, with_links};
use crate::device::BlockDevice;

/// A link that runs below what both its ends support (see a disk's
/// `topology.links`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkFinding {
    /// `"pcie"`, `"sata"` or `"sas"`.
    pub kind: String,
    /// Where: a PCI address, `linkN`, `phy-…`.
    pub at: String,
    /// Now and at most, in the kernel's words.
    pub current: String,
    pub max: String,
    /// What a PCIe link carries at most as it runs now (MB/s).
    pub carries_mb_per_s: Option<f64>,
    /// A link the disks behind it share (a controller's, an HBA's or
    /// AHCI's, or a PCIe switch's uplink), rather than a disk's own.
    pub controller: bool,
    /// That shared link is a PCIe switch's uplink (NVMe drives behind a
    /// switch card or backplane), not the controller's own.
    #[serde(default)]
    pub switch: bool,
    /// The disks checked behind it (the one disk for its own link).
    pub disks: Vec<String>,
}

/// What a PCIe link carries at most, in MB/s: GT/s per lane less the line
/// code (8b/10b to Gen2, 128b/130b from Gen3), times the lanes.
pub fn pcie_mb_per_s(link: &str) -> Option<f64> {
    let gt: f64 = link.split_whitespace().next()?.parse().ok()?;
    let lanes: f64 = link.rsplit_once(" x")?.1.trim().parse().ok()?;
    let code = if gt <= 5.0 { 0.8 } else { 128.0 / 130.0 };
    Some(gt * 1e3 / 8.0 * code * lanes)
}

/// The links below their maximum on the way to `devices`: each
/// disk's own (SATA, SAS phys, an NVMe drive's PCIe link) and, once each,
/// the PCIe links they share: their controllers' (HBAs, AHCI) and the
/// uplinks of PCIe switches above them.
pub fn degraded(devices: &[BlockDevice]) -> Vec<LinkFinding> {
    let mut out: Vec<LinkFinding> = Vec::new();
    for d in devices {
        let t = &d.identity.topology;
        // The PCI function nearest the disk: an HBA, or the NVMe drive.
        let nearest = t.controller.as_ref().map(|c| c.pci.as_str());
        for l in t.links.iter().filter(|l| l.degraded) {
            let pcie = l.kind == "pcie";
            // An NVMe drive's own PCIe link is the drive's; a controller's,
            // or a switch's above either, is shared by the disks behind it.
            let switch = pcie && nearest.is_some_and(|n| n != l.at);
            let controller = pcie && (switch || t.transport != "nvme");
            if let Some(seen) = out.iter_mut().find(|o| controller && o.at == l.at) {
                seen.disks.push(d.given.clone());
                continue;
            }
            out.push(LinkFinding {
                kind: l.kind.clone(),
                at: l.at.clone(),
                current: l.current.clone(),
                max: l.max.clone(),
                carries_mb_per_s: pcie.then(|| pcie_mb_per_s(&l.current)).flatten(),
                controller,
                switch,
                disks: vec![d.given.clone()],
            });
        }
    }
    out
}

/// A link's kind as the sentences name it.
pub fn kind_words(kind: &str) -> String {
    kind.to_uppercase().replace("PCIE", "PCIe")
}

/// A link below its maximum in the verdict's words.
pub fn sentence(l: &LinkFinding) -> String {
    let most = l
        .carries_mb_per_s
        .map(|m| format!(", at most {m:.0} MB/s"))
        .unwrap_or_default();
    if l.controller {
        let (which, fix) = if l.switch {
            (
                format!("the PCIe switch {}'s uplink", l.at),
                "reseat the switch card or its cable, or move it",
            )
        } else {
            (
                format!("the controller {}'s PCIe link", l.at),
                "reseat the card or move it",
            )
        };
        format!(
            "{which} runs at {} where {} is possible ({} disk(s) behind it{most}): {fix} to a full-width, full-speed slot",
            l.current,
            l.max,
            l.disks.len()
        )
    } else {
        format!(
            "{}'s {} link ({}) runs at {} where {} is possible{most} (see Disks to act on)",
            l.disks[0],
            kind_words(&l.kind),
            l.at,
            l.current,
            l.max
        )
    }
}

/// A disk's own links below their maximum change its advice: a finding of
/// its own, or the likely cause of its slowness (see [`with_links`]).
pub fn advise(links: &[LinkFinding], advice: &mut Vec<DiskAdvice>) {
    for l in links.iter().filter(|l| !l.controller) {
        let path = &l.disks[0];
        let slow = SlowLink {
            kind: kind_words(&l.kind),
            at: l.at.clone(),
            current: l.current.clone(),
            max: l.max.clone(),
        };
        let i = advice.iter().position(|a| &a.path == path);
        let old = i.map(|i| advice.remove(i));
        if let Some(new) = with_links(path, &[slow], old) {
            advice.insert(i.unwrap_or(advice.len()), new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_pcie_link_carries() {
        let mb = |l: &str| pcie_mb_per_s(l).map(|v| v.round());
        assert_eq!(mb("8.0 GT/s PCIe x4"), Some(3938.0), "Gen3 x4");
        assert_eq!(mb("16.0 GT/s PCIe x8"), Some(15754.0), "Gen4 x8");
        assert_eq!(mb("5.0 GT/s PCIe x1"), Some(500.0), "Gen2 x1");
        assert_eq!(mb("Unknown"), None);
    }
}

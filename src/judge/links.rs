//! Links below their maximum: which of the disks' links are, shared or a
//! disk's own, the advice they change and the words the verdicts use (the
//! check's and the burn-in's alike), and whether a SATA or SAS link runs
//! below what both its ends allow: `device::topology` reads each link's
//! rates (as numbers, and the kernel's words), this decides.
//!
//! It must not read sysfs or run a tool.

use serde::{Deserialize, Serialize};

use super::advice::{DiskAdvice, SlowLink, with_links};
use crate::device::topology::{DiskEnd, Link, Topology, rate};
use crate::device::{BlockDevice, Identity};

/// The advice of a run made whole: the links below their maximum on the
/// way to `devices` found and advised ([`advise`]), and each
/// sentence naming its disk's bay; the links found.
pub fn with_links_and_bays(
    advice: &mut Vec<DiskAdvice>,
    devices: &[crate::device::BlockDevice],
) -> Vec<LinkFinding> {
    let links = degraded(devices);
    advise(&links, advice);
    super::advice::name_bays(advice, devices);
    links
}

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
pub fn pcie_mb_per_s(gt_per_s: f64, lanes: u32) -> f64 {
    let code = if gt_per_s <= 5.0 { 0.8 } else { 128.0 / 130.0 };
    gt_per_s * 1e3 / 8.0 * code * f64::from(lanes)
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
                max: l.max_words(),
                carries_mb_per_s: match (pcie, l.current_rate, l.current_lanes) {
                    (true, Some(gt), Some(lanes)) => Some(pcie_mb_per_s(gt, lanes)),
                    _ => None,
                },
                controller,
                switch,
                disks: vec![d.given.clone()],
            });
        }
    }
    out
}

/// What a link carries at most as it runs now, in MB/s: a PCIe link's
/// lanes at their rate less the line code; a SATA or SAS link's rate less
/// 8b/10b.
pub fn carries(l: &Link) -> Option<f64> {
    let rate = l.current_rate?;
    match l.kind.as_str() {
        "pcie" => Some(pcie_mb_per_s(rate, l.current_lanes.unwrap_or(1))),
        "sata" | "sas" => Some(rate * 100.0),
        _ => None,
    }
}

/// The slowest link on a disk's way, in words with what it carries
/// ("its SATA link (link3) at 1.5 Gbps: at most 150 MB/s").
pub fn ceiling(t: &Topology) -> Option<(String, f64)> {
    let (l, most) = (t.links.iter())
        .filter_map(|l| Some((l, carries(l)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let words = format!(
        "its {} link ({}) at {}: at most {most:.0} MB/s",
        kind_words(&l.kind),
        l.at,
        l.current
    );
    Some((words, most))
}

/// A link's kind as the sentences name it.
pub fn kind_words(kind: &str) -> String {
    kind.to_uppercase().replace("PCIE", "PCIe")
}

/// A link below its maximum in the verdict's words.
pub fn sentence(l: &LinkFinding) -> String {
    let most = l.carries_mb_per_s.map(|m| format!(", at most {m:.0} MB/s")).unwrap_or_default();
    if l.controller {
        let (which, fix) = if l.switch {
            (
                format!("the PCIe switch {}'s uplink", l.at),
                "reseat the switch card or its cable, or move it",
            )
        } else {
            (format!("the controller {}'s PCIe link", l.at), "reseat the card or move it")
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

/// Judges the SATA and SAS links of `ids` against the disk's own end: a
/// link below its port's maximum is below what both ends allow only if the
/// disk can go faster too (an old SATA II disk on a SATA III port is not);
/// where the disk's end is unknown (no smartctl answer; a SAS disk's is in
/// no file the kernel keeps) the disks of the same model beside it decide
/// (`settle_by_model`). Run once on the disks a command resolved.
pub fn settle<'a>(ids: impl Iterator<Item = &'a mut Identity>) {
    let mut disks: Vec<(Option<&str>, &mut Topology)> =
        ids.map(|i| (i.model.as_deref(), &mut i.topology)).collect();
    settle_all(&mut disks);
}

/// [`settle`] over each disk's model and topology.
pub fn settle_all(disks: &mut [(Option<&str>, &mut Topology)]) {
    for (_, t) in disks.iter_mut() {
        for l in t.links.iter_mut().filter(|l| own(&l.kind)) {
            *l = with_disk_max(std::mem::take(l));
        }
    }
    settle_by_model(disks);
}

/// A disk's own link (SATA, SAS), whose far end is the disk.
fn own(kind: &str) -> bool {
    kind == "sata" || kind == "sas"
}

/// A link below its port's maximum judged against the disk's maximum too
/// (`disk_max`, a SATA disk's from smartctl); without it the disk's end is
/// unknown and the link stays marked. A link at its port's maximum is
/// returned as it is.
fn with_disk_max(l: Link) -> Link {
    if !l.degraded || l.disk_end != DiskEnd::Known {
        return l;
    }
    let Some(words) = l.disk_max.clone() else { return Link { disk_end: DiskEnd::Unknown, ..l } };
    let disk = rate(&words);
    let (max, max_rate) = match (disk, l.max_rate) {
        (Some(d), Some(p)) if d < p => (words, Some(d)),
        _ => (l.max.clone(), l.max_rate),
    };
    Link {
        degraded: matches!((l.current_rate, max_rate), (Some(c), Some(m)) if c < m),
        max,
        max_rate,
        ..l
    }
}

/// A SATA or SAS link below its port's maximum whose disk's own maximum
/// is unknown is judged by the disks of the same model beside it
/// (`disks`: each disk's model and topology): slower than one of them, it
/// stays below its maximum, and says so; as fast as the fastest of them,
/// the model's maximum is taken to be what they all run at (6 Gb/s SAS
/// disks on a 12 Gb/s expander are not a fault). Alone, it stays marked.
fn settle_by_model(disks: &mut [(Option<&str>, &mut Topology)]) {
    // Each disk's own links: (disk, model, kind, rate, as the kernel says).
    let runs: Vec<(usize, Option<String>, String, f64, String)> = disks
        .iter()
        .enumerate()
        .flat_map(|(i, (model, t))| {
            t.links.iter().filter(|l| own(&l.kind)).filter_map(move |l| {
                Some((
                    i,
                    model.map(String::from),
                    l.kind.clone(),
                    l.current_rate?,
                    l.current.clone(),
                ))
            })
        })
        .collect();
    for (i, (model, t)) in disks.iter_mut().enumerate() {
        let Some(model) = *model else { continue };
        let unknown = |l: &Link| own(&l.kind) && l.degraded && l.disk_end == DiskEnd::Unknown;
        for l in t.links.iter_mut().filter(|l| unknown(l)) {
            let Some(cur) = l.current_rate else { continue };
            let fastest = runs
                .iter()
                .filter(|r| r.0 != i && r.1.as_deref() == Some(model) && r.2 == l.kind)
                .max_by(|a, b| a.3.total_cmp(&b.3));
            match fastest {
                Some(f) if f.3 > cur => l.disk_end = DiskEnd::PeerFaster(f.4.clone()),
                Some(_) => {
                    l.disk_end =
                        DiskEnd::PeersAlike(std::mem::replace(&mut l.max, l.current.clone()));
                    l.max_rate = l.current_rate;
                    l.degraded = false;
                }
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::topology::{disk_max_speed, link};

    #[test]
    fn a_sata_link_is_degraded_only_if_the_disk_can_go_faster_too() {
        let v: serde_json::Value = serde_json::from_slice(
            &std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/smart/ata.json"),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(disk_max_speed(&v).as_deref(), Some("6.0 Gb/s"), "the recorded disk");
        let l = link("sata", "link3", ("3.0 Gbps".into(), None), ("6.0 Gbps".into(), None));
        assert!(l.degraded);
        let with = |disk_max: Option<String>| with_disk_max(Link { disk_max, ..l.clone() });
        // A SATA II disk: nothing wrong with the link.
        let old = with(Some("3.0 Gb/s".into()));
        assert_eq!((old.max_words().as_str(), old.degraded), ("3.0 Gb/s", false));
        // A SATA III disk: the link is below what both ends can do.
        let new = with(disk_max_speed(&v));
        assert_eq!((new.max_words().as_str(), new.degraded), ("6.0 Gbps", true));
        // Nobody asked the disk: marked, and said so.
        let unknown = with(None);
        assert!(unknown.degraded);
        assert!(unknown.max_words().ends_with("(the port's; the disk's unknown)"));
        assert_eq!(unknown.disk_end, DiskEnd::Unknown);
    }

    #[test]
    fn a_link_whose_disk_end_is_unknown_is_judged_by_the_same_model() {
        // As read: a link below its port's maximum says the disk's end is
        // unknown.
        let on = |kind: &str, cur: &str, max: &str| {
            let l = link(kind, "phy-0:0:1", (cur.into(), None), (max.into(), None));
            Topology { links: vec![with_disk_max(l)], ..Topology::default() }
        };
        let mut t = [
            // Model A: one of two at 6 Gb/s, the other at 12.
            on("sas", "6.0 Gbit", "12.0 Gbit"),
            on("sas", "12.0 Gbit", "12.0 Gbit"),
            // Model B: both at 6 of 12 Gb/s (SAS-2 disks on a SAS-3 HBA).
            on("sas", "6.0 Gbit", "12.0 Gbit"),
            on("sas", "6.0 Gbit", "12.0 Gbit"),
            // Model C alone, and a disk without a model.
            on("sas", "6.0 Gbit", "12.0 Gbit"),
            on("sata", "3.0 Gbps", "6.0 Gbps"),
        ];
        let models = [Some("A"), Some("A"), Some("B"), Some("B"), Some("C"), None];
        let mut disks: Vec<(Option<&str>, &mut Topology)> =
            models.iter().copied().zip(t.iter_mut()).collect();
        settle_by_model(&mut disks);
        let said: Vec<(bool, String)> =
            t.iter().map(|t| (t.links[0].degraded, t.links[0].max_words())).collect();
        let said: Vec<(bool, &str)> = said.iter().map(|(d, m)| (*d, m.as_str())).collect();
        assert_eq!(
            said,
            [
                (true, "12.0 Gbit (a disk of the same model runs at 12.0 Gbit)"),
                (false, "12.0 Gbit"),
                (
                    false,
                    "6.0 Gbit (every disk of this model here runs at it; the port allows 12.0 Gbit)"
                ),
                (
                    false,
                    "6.0 Gbit (every disk of this model here runs at it; the port allows 12.0 Gbit)"
                ),
                (true, "12.0 Gbit (the port's; the disk's unknown)"),
                (true, "6.0 Gbps (the port's; the disk's unknown)"),
            ]
        );
    }

    #[test]
    fn what_a_pcie_link_carries() {
        let mb = |gt: f64, lanes: u32| pcie_mb_per_s(gt, lanes).round();
        assert_eq!(mb(8.0, 4), 3938.0, "Gen3 x4");
        assert_eq!(mb(16.0, 8), 15754.0, "Gen4 x8");
        assert_eq!(mb(5.0, 1), 500.0, "Gen2 x1");
    }
}

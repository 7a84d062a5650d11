//! Where a disk hangs: its transport, the controller it sits behind (PCI
//! address, driver, and vendor/device names where the system has
//! pci.ids), its SCSI address, the SAS expander and port, the enclosure
//! slot, and `/dev/disk/by-path`. All read from sysfs: the disk's device
//! path (`/sys/block/NAME` resolves to, for instance,
//! `/sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0/host0/port-0:0/expander-0:0/port-0:0:4/end_device-0:0:4/target0:0:4/0:0:4:0/block/sde`)
//! names each hop.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::paths::{SystemPaths, leaf};

/// A PCI function a disk is reached through.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Controller {
    /// PCI address (`0000:03:00.0`).
    pub pci: String,
    /// Kernel driver bound to it (`mpt3sas`, `ahci`, `nvme`, `virtio-pci`).
    pub driver: Option<String>,
    /// PCI vendor and device ids (`1000`, `0097`).
    pub vendor_id: Option<String>,
    pub device_id: Option<String>,
    /// Their names from pci.ids, where the system has the file.
    pub name: Option<String>,
}

impl Controller {
    /// `0000:03:00.0 (mpt3sas, Broadcom / LSI SAS3008 ...)`.
    pub fn words(&self) -> String {
        let extra: Vec<&str> =
            [&self.driver, &self.name].into_iter().flatten().map(String::as_str).collect();
        if extra.is_empty() {
            return self.pci.clone();
        }
        format!("{} ({})", self.pci, extra.join(", "))
    }
}

/// Where one disk hangs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Topology {
    /// `sata`, `sas`, `nvme`, `usb`, `virtio`, `scsi`, `virtual` (loop,
    /// RAM, device-mapper) or `unknown`.
    pub transport: String,
    /// The PCI function nearest the disk: the HBA, AHCI or NVMe controller.
    pub controller: Option<Controller>,
    /// SCSI host:channel:target:lun.
    pub scsi_address: Option<String>,
    /// The SAS expander it is behind (`expander-0:0`), and the port and
    /// phys it is attached by (`port-0:0:4`, `phy-0:0:4`).
    pub expander: Option<String>,
    pub sas_port: Option<String>,
    pub phys: Vec<String>,
    /// Enclosure and slot (`/sys/class/enclosure`): `0:0:12:0 slot 4`.
    pub enclosure_slot: Option<String>,
    /// That slot's directory in sysfs (its `locate` and `fault` LEDs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enclosure_component: Option<String>,
    /// The `/dev/disk/by-path` link to it.
    pub by_path: Option<String>,
    /// The links on the way to it (the PCIe link of its controller or of
    /// the NVMe drive itself, the SATA link, the SAS phys), as negotiated
    /// and at most.
    pub links: Vec<Link>,
}

impl Topology {
    /// Its enclosure and slot number, where the kernel gives a numbered
    /// slot (`0:0:12:0 slot 4`: `("0:0:12:0", 4)`).
    pub fn bay(&self) -> Option<(&str, i64)> {
        let (enclosure, slot) = self.enclosure_slot.as_deref()?.rsplit_once(" slot ")?;
        Some((enclosure, slot.trim().parse().ok()?))
    }
}

impl Topology {
    /// The controller in short (`0000:03:00.0 mpt3sas`), or `-`.
    pub fn controller_words(&self) -> String {
        self.controller.as_ref().map_or("-".into(), |c| {
            format!("{} {}", c.pci, c.driver.as_deref().unwrap_or("")).trim().to_string()
        })
    }

    /// The link to show: one below its maximum first (`sata 3.0 Gbps of
    /// 6.0 Gbps (below its maximum)`), else the disk's own (the last on
    /// its way), else `-`.
    pub fn link_words(&self) -> String {
        self.links
            .iter()
            .find(|l| l.degraded)
            .map(|l| format!("{} {} of {} (below its maximum)", l.kind, l.current, l.max_words()))
            .or_else(|| self.links.last().map(|l| format!("{} {}", l.kind, l.current)))
            .unwrap_or_else(|| "-".into())
    }
}

/// One link on a disk's path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Link {
    /// `"pcie"`, `"sata"` or `"sas"`.
    pub kind: String,
    /// Which: the PCI address, the ATA link (`link3`), the SAS phy.
    pub at: String,
    /// As negotiated and the most both ends allow, in the kernel's words
    /// (`8.0 GT/s PCIe x2`, `3.0 Gbps`, `6.0 Gbit`); `max` is the port's
    /// where the disk's end is not known (`disk_end`).
    pub current: String,
    pub max: String,
    /// The same as numbers: the rate per lane in the kind's unit (GT/s for
    /// PCIe, Gbit/s for SATA and SAS) and the PCIe lanes.
    pub current_rate: Option<f64>,
    pub max_rate: Option<f64>,
    pub current_lanes: Option<u32>,
    pub max_lanes: Option<u32>,
    /// A SATA disk's own maximum, as smartctl gave it (asked only for a
    /// link below its port's maximum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_max: Option<String>,
    /// What is known of the disk's end of a SATA or SAS link.
    pub disk_end: DiskEnd,
    /// It runs below its maximum: a cable, slot or riser to look at.
    pub degraded: bool,
}

/// What is known of the disk's end of a link (`judge::links` decides it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiskEnd {
    /// Both ends are known (a PCIe link; a SATA disk smartctl answered for;
    /// a link at its port's maximum).
    #[default]
    Known,
    /// Only the port's end is known: `max` is the port's.
    Unknown,
    /// Unknown, but a disk of the same model beside it runs at this.
    PeerFaster(String),
    /// Unknown, and every disk of its model here runs at `max`; the port
    /// allows this.
    PeersAlike(String),
}

impl Link {
    /// A link as `ARRAYBURN_TOPOLOGY` gives it, in words only: its numbers
    /// read from the words, and both its ends known (the file says what
    /// the link allows).
    fn given(self) -> Link {
        let (cur_rate, cur_lanes) = rate_and_lanes(&self.current);
        let (max_rate, max_lanes) = rate_and_lanes(&self.max);
        Link {
            current_rate: self.current_rate.or(cur_rate),
            max_rate: self.max_rate.or(max_rate),
            current_lanes: self.current_lanes.or(cur_lanes),
            max_lanes: self.max_lanes.or(max_lanes),
            disk_max: match self.kind.as_str() {
                "sata" | "sas" => self.disk_max.clone().or_else(|| Some(self.max.clone())),
                _ => self.disk_max.clone(),
            },
            ..self
        }
    }

    /// Its maximum in words, saying how far the disk's end is known.
    pub fn max_words(&self) -> String {
        match &self.disk_end {
            DiskEnd::Known => self.max.clone(),
            DiskEnd::Unknown => format!("{} (the port's; the disk's unknown)", self.max),
            DiskEnd::PeerFaster(r) => {
                format!("{} (a disk of the same model runs at {r})", self.max)
            }
            DiskEnd::PeersAlike(port) => format!(
                "{} (every disk of this model here runs at it; the port allows {port})",
                self.max
            ),
        }
    }
}

/// A rate and its PCIe lanes from the kernel's words (`8.0 GT/s PCIe x4`
/// -> 8.0, 4).
fn rate_and_lanes(words: &str) -> (Option<f64>, Option<u32>) {
    let lanes = words.rsplit_once(" x").and_then(|(_, w)| w.trim().parse().ok());
    (rate(words), lanes)
}

/// The number a rate starts with (`8.0 GT/s PCIe` -> 8.0).
pub fn rate(s: &str) -> Option<f64> {
    s.split_whitespace().next()?.parse().ok()
}

/// A link from its current and maximum rate (and PCIe widths); below its
/// maximum where either number is lower.
pub fn link(kind: &str, at: &str, cur: (String, Option<u32>), max: (String, Option<u32>)) -> Link {
    let words = |(r, w): &(String, Option<u32>)| match w {
        Some(w) => format!("{r} x{w}"),
        None => r.clone(),
    };
    let (current_rate, max_rate) = (rate(&cur.0), rate(&max.0));
    let slower = matches!((current_rate, max_rate), (Some(c), Some(m)) if c < m);
    let narrower = matches!((cur.1, max.1), (Some(c), Some(m)) if c < m);
    Link {
        kind: kind.into(),
        at: at.into(),
        current: words(&cur),
        max: words(&max),
        current_rate,
        max_rate,
        current_lanes: cur.1,
        max_lanes: max.1,
        degraded: slower || narrower,
        ..Link::default()
    }
}

/// The PCIe link above the PCI function at `dir` (a controller, an NVMe
/// drive), where it has one: as it runs now, and the most both ends allow,
/// the function and the port above it (`port`, the bridge: a root or
/// switch port, whose own link registers describe the same link). An x8
/// card in an x16 slot, or a Gen4 card in a Gen3 slot, runs at its
/// maximum; a card that trained below what it and its slot can do does
/// not.
fn pcie_link(dir: &Path, port: Option<&Path>) -> Option<Link> {
    let speed = |d: &Path, f: &str| read_trim(&d.join(f)).filter(|v| rate(v).is_some());
    let width = |d: &Path, f: &str| {
        read_trim(&d.join(f)).and_then(|v| v.parse::<u32>().ok()).filter(|w| *w > 0)
    };
    let cur = speed(dir, "current_link_speed")?;
    let mut max = speed(dir, "max_link_speed")?;
    let mut max_width = width(dir, "max_link_width");
    if let Some(port) = port {
        if let Some(p) = speed(port, "max_link_speed")
            && rate(&p) < rate(&max)
        {
            max = p;
        }
        if let Some(p) = width(port, "max_link_width") {
            max_width = Some(max_width.map_or(p, |w| w.min(p)));
        }
    }
    let at = dir.file_name()?.to_string_lossy().into_owned();
    Some(link("pcie", &at, (cur, width(dir, "current_link_width")), (max, max_width)))
}

/// The PCIe links on the way down `chain` (the PCI functions from the root
/// to the one nearest the disk), each judged against both its ends: the
/// link above every function that faces up (an endpoint, a switch's
/// upstream port: a PCIe switch's uplink carries every drive behind it),
/// found from each function's port type in its config space. Where that
/// cannot be read (not root), the link above the function nearest the
/// disk alone.
fn pcie_links(chain: &[PathBuf]) -> Vec<Link> {
    let last = chain.len().saturating_sub(1);
    chain
        .iter()
        .enumerate()
        .filter(|(i, d)| match port_type(d) {
            // Endpoints (PCIe, legacy), switch upstream ports, PCIe-to-PCI
            // bridges: their link registers describe the link above them.
            Some(t) => matches!(t, 0 | 1 | 5 | 7),
            None => *i == last,
        })
        .filter_map(|(i, d)| pcie_link(d, i.checked_sub(1).map(|j| chain[j].as_path())))
        .collect()
}

/// The PCIe device/port type of the function at `dir` (PCIe capability
/// register, bits 7:4: 0 endpoint, 4 root port, 5 switch upstream port, 6
/// switch downstream port, ...), from its config space; None where that
/// cannot be read (beyond the first 64 bytes it needs root) or the
/// function has no PCIe capability.
fn port_type(dir: &Path) -> Option<u8> {
    // The standard 256 bytes only, as lspci reads by default (not the
    // extended space some devices answer badly).
    let mut c = Vec::with_capacity(256);
    fs::File::open(dir.join("config")).ok()?.take(256).read_to_end(&mut c).ok()?;
    let byte = |at: usize| c.get(at).copied();
    // Status register: a capability list is present.
    if byte(0x06)? & 0x10 == 0 {
        return None;
    }
    let mut at = usize::from(byte(0x34)? & 0xfc);
    // At most 48 capabilities fit in the first 256 bytes: a loop in a
    // broken list ends there.
    for _ in 0..48 {
        if at < 0x40 {
            return None;
        }
        if byte(at)? == 0x10 {
            return Some(byte(at + 2)? >> 4);
        }
        at = usize::from(byte(at + 1)? & 0xfc);
    }
    None
}

/// The SATA link below the ATA port at `dir` (`.../ata3`): its speed now
/// and the most the port allows. A port whose limit the kernel does not
/// know (`<unknown>`: QEMU's AHCI, and controllers that leave SControl's
/// limit at 0) still has its speed: its maximum is `unknown`, and it is
/// not said to run below it.
fn sata_link(dir: &Path) -> Option<Link> {
    for e in fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("link") {
            continue;
        }
        let l = e.path().join("ata_link").join(&name);
        let cur = read_trim(&l.join("sata_spd")).filter(|v| rate(v).is_some())?;
        let known = |f: &str| read_trim(&l.join(f)).filter(|v| rate(v).is_some());
        let max = known("hw_sata_spd_limit")
            .or_else(|| known("sata_spd_limit"))
            .unwrap_or_else(|| UNKNOWN_MAX.into());
        return Some(link("sata", &name, (cur, None), (max, None)));
    }
    None
}

/// A link's maximum where the kernel does not know it.
pub const UNKNOWN_MAX: &str = "unknown";

/// A SATA link below its port's maximum: the disk's own maximum from
/// `smartctl --json -i` (`interface_speed.max`), asked only for such a link
/// (whether the link is then below what both ends allow is
/// `judge::links`' to say).
fn both_ends(mut l: Link, dev: &Path) -> Link {
    if l.degraded {
        l.disk_max = super::smartctl::json(&dev.to_string_lossy(), &["-i"], &|| false)
            .ok()
            .and_then(|v| disk_max_speed(&v));
    }
    l
}

/// A SATA disk's maximum link speed from `smartctl --json -i`.
pub fn disk_max_speed(v: &serde_json::Value) -> Option<String> {
    let s = v["interface_speed"]["max"]["string"].as_str()?;
    rate(s).is_some().then(|| s.to_string())
}

/// A SAS phy's negotiated and hardware-maximum rate (`phy_dir` is the
/// phy's entry in its port).
fn sas_link(phy_dir: &Path, phy: &str) -> Option<Link> {
    let d = phy_dir.join("sas_phy").join(phy);
    let cur = read_trim(&d.join("negotiated_linkrate")).filter(|v| rate(v).is_some())?;
    let max = read_trim(&d.join("maximum_linkrate_hw"))
        .or_else(|| read_trim(&d.join("maximum_linkrate")))
        .filter(|v| rate(v).is_some())?;
    // The phy is the HBA's or the expander's; the disk's end does not say
    // what it can do (`judge::links` judges it by the disk's model).
    Some(link("sas", phy, (cur, None), (max, None)))
}

/// Whether a path component is a PCI function address (`0000:03:00.0`).
fn is_pci(c: &str) -> bool {
    let b = c.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && c.chars().enumerate().all(|(i, ch)| matches!(i, 4 | 7 | 10) || ch.is_ascii_hexdigit())
}

/// Whether a component is a SCSI address (`2:0:3:0`).
fn is_scsi_address(c: &str) -> bool {
    let parts: Vec<&str> = c.split(':').collect();
    parts.len() == 4 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn read_trim(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| crate::escape::terminal(t))
}

/// Where `ARRAYBURN_TOPOLOGY` names a JSON file (an object of kernel
/// names to topologies), the topology it gives `name`: for a lab whose
/// disks are not where sysfs says, and for the tests, which place loop
/// devices on controllers of their own.
fn given(name: &str) -> Option<Topology> {
    Some(given_all().ok()??.remove(name)?.as_given())
}

impl Topology {
    /// A topology as `ARRAYBURN_TOPOLOGY` gives it (its links in words):
    /// each link's numbers read from its words.
    pub fn as_given(mut self) -> Topology {
        self.links = self.links.into_iter().map(Link::given).collect();
        self
    }
}

/// The topologies `ARRAYBURN_TOPOLOGY` gives (None when it is not set), or
/// why its file cannot be used, in a line that says what to do.
pub fn given_all() -> Result<Option<std::collections::HashMap<String, Topology>>, String> {
    let Some(file) = std::env::var_os("ARRAYBURN_TOPOLOGY") else { return Ok(None) };
    let shown = Path::new(&file).display().to_string();
    let bytes = crate::input::read(Path::new(&file)).map_err(|e| {
        format!("ARRAYBURN_TOPOLOGY={shown}: {e}; name a readable file or unset it")
    })?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        format!(
            "ARRAYBURN_TOPOLOGY={shown}: not a JSON object of kernel names to topologies ({e}); fix the file or unset it"
        )
    })
}

/// The topology of whole disk `name`.
pub fn topology(paths: &SystemPaths, name: &str) -> Topology {
    if let Some(t) = given(name) {
        return t;
    }
    let sys = fs::canonicalize(&paths.sys).unwrap_or_else(|_| paths.sys.clone());
    let link = sys.join("block").join(name);
    let Ok(device) = fs::canonicalize(&link) else {
        return Topology { transport: "unknown".into(), ..Topology::default() };
    };
    let rel = device.strip_prefix(&sys).map(Path::to_path_buf).unwrap_or_else(|_| device.clone());
    let parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let has = |p: &str| parts.iter().any(|c| c.starts_with(p));
    let vendor = read_trim(&device.join("device/vendor"));
    let transport = if parts.first().is_some_and(|c| c == "devices")
        && parts.get(1).is_some_and(|c| c == "virtual")
    {
        "virtual"
    } else if has("nvme") {
        "nvme"
    } else if parts.iter().any(|c| c.starts_with("usb")) {
        "usb"
    } else if has("end_device-") {
        // A SATA disk on a SAS HBA answers its inquiry as "ATA".
        if vendor.as_deref() == Some("ATA") { "sata" } else { "sas" }
    } else if parts.iter().any(|c| c.starts_with("ata")) {
        "sata"
    } else if parts.iter().any(|c| c.starts_with("virtio")) {
        "virtio"
    } else if has("host") {
        "scsi"
    } else {
        "unknown"
    };
    // The PCI function nearest the disk, the one above it, and the ATA
    // port on the way.
    let mut pci_dirs: Vec<PathBuf> = Vec::new();
    let mut ata_dir: Option<PathBuf> = None;
    let mut at = sys.clone();
    for c in &parts {
        at.push(c);
        if is_pci(c) {
            pci_dirs.push(at.clone());
        }
        if c.starts_with("ata") && c[3..].bytes().all(|b| b.is_ascii_digit()) {
            ata_dir = Some(at.clone());
        }
    }
    let pci_dir = pci_dirs.last().cloned();
    let controller = pci_dir.map(|dir| controller(paths, &dir));
    let last = |f: &dyn Fn(&str) -> bool| parts.iter().rev().find(|c| f(c)).cloned();
    let scsi_address = last(&is_scsi_address);
    let expander = last(&|c: &str| c.starts_with("expander-"));
    let sas_port = last(&|c: &str| c.starts_with("port-"));
    let phys = sas_port
        .as_ref()
        .and_then(|port| {
            let dir = parts
                .iter()
                .position(|c| c == port)
                .map(|i| sys.join(parts[..=i].iter().collect::<PathBuf>()))?;
            let mut v: Vec<String> = fs::read_dir(dir)
                .ok()?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("phy-"))
                .collect();
            v.sort();
            Some(v)
        })
        .unwrap_or_default();
    let scsi_dir = scsi_address.as_ref().and_then(|a| {
        parts.iter().position(|c| c == a).map(|i| sys.join(parts[..=i].iter().collect::<PathBuf>()))
    });
    let mut links = pcie_links(&pci_dirs);
    links.extend(ata_dir.and_then(|d| sata_link(&d)).map(|l| both_ends(l, &paths.dev.join(name))));
    if let Some(port) = &sas_port
        && let Some(i) = parts.iter().position(|c| c == port)
    {
        let dir = sys.join(parts[..=i].iter().collect::<PathBuf>());
        links.extend(phys.iter().filter_map(|p| sas_link(&dir.join(p), p)));
    }
    let slot = scsi_dir.and_then(|d| enclosure_slot(paths, &d));
    Topology {
        transport: transport.into(),
        controller,
        links,
        enclosure_slot: slot.as_ref().map(|(words, _)| words.clone()),
        enclosure_component: slot.map(|(_, dir)| dir.to_string_lossy().into_owned()),
        scsi_address,
        expander,
        sas_port,
        phys,
        by_path: by_path(paths, name),
    }
}

/// The PCI function at `dir`: driver, ids, and names from pci.ids.
fn controller(paths: &SystemPaths, dir: &Path) -> Controller {
    let pci = leaf(dir);
    let driver = fs::read_link(dir.join("driver")).ok().map(|t| leaf(&t));
    let id = |f: &str| read_trim(&dir.join(f)).map(|v| v.trim_start_matches("0x").to_string());
    let (vendor_id, device_id) = (id("vendor"), id("device"));
    let name = vendor_id
        .as_ref()
        .zip(device_id.as_ref())
        .and_then(|(v, d)| pci_name(&paths.pci_ids, v, d));
    Controller { pci, driver, vendor_id, device_id, name }
}

/// `Vendor Device` from a pci.ids file (vendor lines unindented, device
/// lines one tab in); the vendor alone when the device is not listed.
pub fn pci_name(file: &Path, vendor: &str, device: &str) -> Option<String> {
    let text = fs::read_to_string(file).ok()?;
    let mut vendor_name: Option<&str> = None;
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if !line.starts_with('\t') {
            if vendor_name.is_some() {
                break;
            }
            if let Some(rest) = line.strip_prefix(vendor)
                && rest.starts_with("  ")
            {
                vendor_name = Some(rest.trim());
            }
            continue;
        }
        if let Some(v) = vendor_name
            && !line.starts_with("\t\t")
            && let Some(rest) = line[1..].strip_prefix(device)
            && rest.starts_with("  ")
        {
            return Some(format!("{v} {}", rest.trim()));
        }
    }
    vendor_name.map(String::from)
}

/// The enclosure slot whose `device` link is the SCSI device at
/// `scsi_dir`: `ENCLOSURE slot N` (the slot number from the component's
/// `slot` file, else the component's name), and the component's directory.
fn enclosure_slot(paths: &SystemPaths, scsi_dir: &Path) -> Option<(String, PathBuf)> {
    let want = fs::canonicalize(scsi_dir).ok()?;
    let enclosures = fs::read_dir(paths.sys.join("class/enclosure")).ok()?;
    enclosures.flatten().find_map(|enc| slot_in(&enc.path(), &want))
}

/// `ENCLOSURE slot N` and the component's directory when one of
/// enclosure `enc`'s components is the SCSI device `want`.
fn slot_in(enc: &Path, want: &Path) -> Option<(String, PathBuf)> {
    let is_want =
        |c: &fs::DirEntry| fs::canonicalize(c.path().join("device")).is_ok_and(|p| p == want);
    let comp = fs::read_dir(enc).ok()?.flatten().find(is_want)?;
    let slot = read_trim(&comp.path().join("slot")).unwrap_or_else(|| leaf(&comp.path()));
    Some((format!("{} slot {slot}", leaf(enc)), comp.path()))
}

/// The `/dev/disk/by-path` link to `/dev/NAME`.
fn by_path(paths: &SystemPaths, name: &str) -> Option<String> {
    let mut found = super::paths::links_to(&paths.by_path, name);
    found.sort_by_key(|p| p.len());
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fake sysfs holding one disk at `device` (relative to /sys), with
    /// its PCI function's driver, ids, and a pci.ids naming it.
    struct Fake {
        dir: tempfile::TempDir,
    }

    impl Fake {
        fn new() -> Self {
            let f = Self { dir: tempfile::tempdir().unwrap() };
            fs::create_dir_all(f.sys().join("block")).unwrap();
            fs::create_dir_all(f.sys().join("bus/pci/drivers")).unwrap();
            fs::create_dir_all(f.root().join("by-path")).unwrap();
            fs::write(
                f.root().join("pci.ids"),
                "# pci.ids\n1000  Broadcom / LSI\n\t0097  SAS3008 PCI-Express Fusion-MPT SAS-3\n\t\t1000 3090  SAS9311-8i\n144d  Samsung Electronics Co Ltd\n\ta808  NVMe SSD Controller SM981/PM981/PM983\n1af4  Red Hat, Inc.\n\t1042  Virtio 1.0 block device\n8086  Intel Corporation\n\t06d2  Comet Lake SATA AHCI Controller\n",
            )
            .unwrap();
            f
        }
        fn root(&self) -> PathBuf {
            self.dir.path().to_path_buf()
        }
        fn sys(&self) -> PathBuf {
            self.root().join("sys")
        }
        fn paths(&self) -> SystemPaths {
            SystemPaths {
                sys: self.sys(),
                by_path: self.root().join("by-path"),
                pci_ids: self.root().join("pci.ids"),
                dev: self.root().join("dev"),
                ..SystemPaths::real()
            }
        }
        /// Disk `name` at `device` (below /sys), its controller at the
        /// PCI component `pci` with `driver`, `vendor:device` ids.
        fn disk(&self, name: &str, device: &str, pci: (&str, &str, &str, &str), vendor: &str) {
            let dev = self.sys().join(device);
            fs::create_dir_all(dev.join("device")).unwrap();
            fs::write(dev.join("device/vendor"), vendor).unwrap();
            symlink(&dev, self.sys().join("block").join(name)).unwrap();
            let (addr, driver, v, d) = pci;
            let at = device.find(addr).unwrap() + addr.len();
            let pdir = self.sys().join(&device[..at]);
            fs::write(pdir.join("vendor"), format!("0x{v}\n")).unwrap();
            fs::write(pdir.join("device"), format!("0x{d}\n")).unwrap();
            let drv = self.sys().join("bus/pci/drivers").join(driver);
            fs::create_dir_all(&drv).unwrap();
            let _ = symlink(&drv, pdir.join("driver"));
        }
    }

    #[test]
    fn a_sas_disk_behind_an_expander_in_an_enclosure_slot() {
        let f = Fake::new();
        let port =
            "devices/pci0000:00/0000:00:03.0/0000:03:00.0/host0/port-0:0/expander-0:0/port-0:0:4";
        let dev = format!("{port}/end_device-0:0:4/target0:0:4/0:0:4:0/block/sde");
        f.disk("sde", &dev, ("0000:03:00.0", "mpt3sas", "1000", "0097"), "SEAGATE");
        fs::create_dir_all(f.sys().join(port).join("phy-0:0:4")).unwrap();
        // The enclosure's slot 4 points at the disk's SCSI device.
        let comp = f.sys().join("class/enclosure/0:0:12:0/Slot04");
        fs::create_dir_all(&comp).unwrap();
        fs::write(comp.join("slot"), "4\n").unwrap();
        let scsi = f.sys().join(format!("{port}/end_device-0:0:4/target0:0:4/0:0:4:0"));
        symlink(&scsi, comp.join("device")).unwrap();
        symlink(
            "../../sde",
            f.root().join("by-path/pci-0000:03:00.0-sas-exp0x500304801f715f3f-phy4-lun-0"),
        )
        .unwrap();
        let t = topology(&f.paths(), "sde");
        assert_eq!(t.transport, "sas");
        let c = t.controller.as_ref().unwrap();
        assert_eq!(
            c.words(),
            "0000:03:00.0 (mpt3sas, Broadcom / LSI SAS3008 PCI-Express Fusion-MPT SAS-3)"
        );
        assert_eq!(t.scsi_address.as_deref(), Some("0:0:4:0"));
        assert_eq!(t.expander.as_deref(), Some("expander-0:0"));
        assert_eq!(t.sas_port.as_deref(), Some("port-0:0:4"));
        assert_eq!(t.phys, ["phy-0:0:4"]);
        assert_eq!(t.enclosure_slot.as_deref(), Some("0:0:12:0 slot 4"));
        assert!(t.enclosure_component.unwrap().ends_with("class/enclosure/0:0:12:0/Slot04"));
        assert!(t.by_path.unwrap().ends_with("-sas-exp0x500304801f715f3f-phy4-lun-0"));
    }

    #[test]
    fn nvme_ahci_virtio_and_a_sata_disk_on_a_sas_hba() {
        let f = Fake::new();
        f.disk(
            "nvme0n1",
            "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1",
            ("0000:3d:00.0", "nvme", "144d", "a808"),
            "",
        );
        f.disk(
            "sda",
            "devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sda",
            ("0000:00:17.0", "ahci", "8086", "06d2"),
            "ATA",
        );
        f.disk(
            "vda",
            "devices/pci0000:00/0000:00:02.0/virtio1/block/vda",
            ("0000:00:02.0", "virtio-pci", "1af4", "1042"),
            "",
        );
        f.disk(
            "sdf",
            "devices/pci0000:00/0000:00:03.0/0000:04:00.0/host1/port-1:0/end_device-1:0/target1:0:0/1:0:0:0/block/sdf",
            ("0000:04:00.0", "mpt3sas", "1000", "0097"),
            "ATA",
        );
        let p = f.paths();
        let got = |n: &str| {
            let t = topology(&p, n);
            (t.transport, t.controller.map(|c| c.words()), t.expander)
        };
        assert_eq!(
            got("nvme0n1"),
            ("nvme".into(), Some("0000:3d:00.0 (nvme, Samsung Electronics Co Ltd NVMe SSD Controller SM981/PM981/PM983)".into()), None)
        );
        assert_eq!(
            got("sda"),
            (
                "sata".into(),
                Some(
                    "0000:00:17.0 (ahci, Intel Corporation Comet Lake SATA AHCI Controller)".into()
                ),
                None
            )
        );
        assert_eq!(
            got("vda"),
            (
                "virtio".into(),
                Some("0000:00:02.0 (virtio-pci, Red Hat, Inc. Virtio 1.0 block device)".into()),
                None
            )
        );
        assert_eq!(got("sdf").0, "sata", "a SATA disk on a SAS HBA, directly attached");
        assert_eq!(topology(&p, "sdf").sas_port.as_deref(), Some("port-1:0"));
        assert_eq!(topology(&p, "sdz").transport, "unknown");
    }

    #[test]
    fn links_below_their_maximum_are_marked() {
        let f = Fake::new();
        let w = |rel: &str, v: &str| {
            let p = f.sys().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, format!("{v}\n")).unwrap();
        };
        // AHCI: a disk whose SATA link came up at 3.0 of 6.0 Gb/s.
        f.disk(
            "sda",
            "devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sda",
            ("0000:00:17.0", "ahci", "8086", "06d2"),
            "ATA",
        );
        w("devices/pci0000:00/0000:00:17.0/ata3/link3/ata_link/link3/sata_spd", "3.0 Gbps");
        w(
            "devices/pci0000:00/0000:00:17.0/ata3/link3/ata_link/link3/hw_sata_spd_limit",
            "6.0 Gbps",
        );
        // QEMU's AHCI as Debian 12's kernel shows it in the lab: a speed,
        // no limit known.
        f.disk(
            "sdb",
            "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sdb",
            ("0000:00:1f.2", "ahci", "8086", "2922"),
            "ATA",
        );
        for (file, v) in [
            ("sata_spd", "1.5 Gbps"),
            ("hw_sata_spd_limit", "<unknown>"),
            ("sata_spd_limit", "<unknown>"),
        ] {
            w(&format!("devices/pci0000:00/0000:00:1f.2/ata1/link1/ata_link/link1/{file}"), v);
        }
        // A PCIe link as both its ends report it: the root port above
        // (whose link registers describe the same link) and the device.
        let pcie = |port: &str,
                    dev: &str,
                    cur: (&str, &str),
                    port_max: (&str, &str),
                    dev_max: (&str, &str)| {
            for (d, max) in [(port.to_string(), port_max), (format!("{port}/{dev}"), dev_max)] {
                let d = format!("devices/pci0000:00/{d}");
                w(&format!("{d}/current_link_speed"), cur.0);
                w(&format!("{d}/current_link_width"), cur.1);
                w(&format!("{d}/max_link_speed"), max.0);
                w(&format!("{d}/max_link_width"), max.1);
            }
        };
        let (gen3, gen4) = ("8.0 GT/s PCIe", "16.0 GT/s PCIe");
        // NVMe trained at x2 of x4 in an x4 slot.
        f.disk(
            "nvme0n1",
            "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1",
            ("0000:3d:00.0", "nvme", "144d", "a808"),
            "",
        );
        pcie("0000:00:1d.0", "0000:3d:00.0", (gen3, "2"), (gen3, "4"), (gen3, "4"));
        // A Gen4 NVMe drive in a Gen3 slot: as fast as the slot allows.
        f.disk(
            "nvme1n1",
            "devices/pci0000:00/0000:00:1c.0/0000:3e:00.0/nvme/nvme1/nvme1n1",
            ("0000:3e:00.0", "nvme", "144d", "a80a"),
            "",
        );
        pcie("0000:00:1c.0", "0000:3e:00.0", (gen3, "4"), (gen3, "4"), (gen4, "4"));
        // A SAS HBA at Gen3 of Gen4 in a Gen4 x16 slot, its disk's
        // expander phy at 6 of 12 Gb/s.
        let port =
            "devices/pci0000:00/0000:00:03.0/0000:03:00.0/host0/port-0:0/expander-0:0/port-0:0:4";
        f.disk(
            "sde",
            &format!("{port}/end_device-0:0:4/target0:0:4/0:0:4:0/block/sde"),
            ("0000:03:00.0", "mpt3sas", "1000", "0097"),
            "SEAGATE",
        );
        pcie("0000:00:03.0", "0000:03:00.0", (gen3, "8"), (gen4, "16"), (gen4, "8"));
        // An x8 Gen3 HBA in a Gen4 x16 slot: as fast as the card can go.
        f.disk(
            "sdf",
            "devices/pci0000:00/0000:00:01.0/0000:01:00.0/host1/target1:0:0/1:0:0:0/block/sdf",
            ("0000:01:00.0", "megaraid_sas", "1000", "005d"),
            "LSI",
        );
        pcie("0000:00:01.0", "0000:01:00.0", (gen3, "8"), (gen4, "16"), (gen3, "8"));
        let phy = format!("{port}/phy-0:0:4/sas_phy/phy-0:0:4");
        w(&format!("{phy}/negotiated_linkrate"), "6.0 Gbit");
        w(&format!("{phy}/maximum_linkrate_hw"), "12.0 Gbit");
        f.disk(
            "vda",
            "devices/pci0000:00/0000:00:02.0/virtio1/block/vda",
            ("0000:00:02.0", "virtio-pci", "1af4", "1042"),
            "",
        );
        let p = f.paths();
        // As a command resolves its disks: read, then judged.
        let links = |n: &str| -> Vec<(String, String, String, String, bool)> {
            let mut t = topology(&p, n);
            crate::judge::links::settle_all(&mut [(None, &mut t)]);
            t.links
                .into_iter()
                .map(|l| (l.max_words(), l))
                .map(|(max, l)| (l.kind, l.at, l.current, max, l.degraded))
                .collect()
        };
        let l = |k: &str, at: &str, c: &str, m: &str, d: bool| {
            (k.into(), at.into(), c.into(), m.into(), d)
        };
        assert_eq!(
            links("sda"),
            [l("sata", "link3", "3.0 Gbps", "6.0 Gbps (the port's; the disk's unknown)", true)],
            "no smartctl answer for a disk of a fake tree"
        );
        assert_eq!(links("sdb"), [l("sata", "link1", "1.5 Gbps", "unknown", false)]);
        assert_eq!(topology(&p, "sdb").link_words(), "sata 1.5 Gbps");
        assert_eq!(
            links("nvme0n1"),
            [l("pcie", "0000:3d:00.0", "8.0 GT/s PCIe x2", "8.0 GT/s PCIe x4", true)]
        );
        assert_eq!(
            links("nvme1n1"),
            [l("pcie", "0000:3e:00.0", "8.0 GT/s PCIe x4", "8.0 GT/s PCIe x4", false)],
            "the slot's Gen3 is the link's maximum"
        );
        assert_eq!(
            links("sdf"),
            [l("pcie", "0000:01:00.0", "8.0 GT/s PCIe x8", "8.0 GT/s PCIe x8", false)],
            "the card's x8 and Gen3 are the link's maximum"
        );
        assert_eq!(
            links("sde"),
            [
                l("pcie", "0000:03:00.0", "8.0 GT/s PCIe x8", "16.0 GT/s PCIe x8", true),
                l(
                    "sas",
                    "phy-0:0:4",
                    "6.0 Gbit",
                    "12.0 Gbit (the port's; the disk's unknown)",
                    true
                )
            ]
        );
        assert_eq!(links("vda"), [], "virtio: no link applies");
    }

    #[test]
    fn a_pcie_switchs_narrow_uplink_is_found_above_its_drives() {
        let f = Fake::new();
        // NVMe drives on a switch card: root port -> switch upstream port
        // -> downstream port -> drive. The uplink trained at x8 of x16.
        let chain = "0000:00:03.0/0000:01:00.0/0000:02:08.0/0000:04:00.0";
        f.disk(
            "nvme2n1",
            &format!("devices/pci0000:00/{chain}/nvme/nvme2/nvme2n1"),
            ("0000:04:00.0", "nvme", "144d", "a808"),
            "",
        );
        let gen3 = "8.0 GT/s PCIe";
        let mut at = f.sys().join("devices/pci0000:00");
        // Each function: its port type and its link registers (a
        // downstream-facing port's describe the link below it).
        for (dev, kind, cur, max) in [
            ("0000:00:03.0", 4u8, "8", "16"),
            ("0000:01:00.0", 5, "8", "16"),
            ("0000:02:08.0", 6, "4", "4"),
            ("0000:04:00.0", 0, "4", "4"),
        ] {
            at.push(dev);
            fs::create_dir_all(&at).unwrap();
            // Config space: a capability list (status bit 4) starting at
            // 0x40 with power management, then PCI Express at 0x50.
            let mut config = vec![0u8; 256];
            config[0x06] = 0x10;
            config[0x34] = 0x40;
            config[0x40..0x42].copy_from_slice(&[0x01, 0x50]);
            config[0x50..0x54].copy_from_slice(&[0x10, 0x00, (kind << 4) | 2, 0x00]);
            fs::write(at.join("config"), config).unwrap();
            for (file, v) in [
                ("current_link_speed", gen3),
                ("max_link_speed", gen3),
                ("current_link_width", cur),
                ("max_link_width", max),
            ] {
                fs::write(at.join(file), format!("{v}\n")).unwrap();
            }
        }
        assert_eq!(port_type(&at), Some(0));
        let links: Vec<(String, String, String, bool)> = topology(&f.paths(), "nvme2n1")
            .links
            .into_iter()
            .map(|l| (l.at, l.current, l.max, l.degraded))
            .collect();
        let l = |at: &str, c: &str, m: &str, d: bool| (at.into(), c.into(), m.into(), d);
        assert_eq!(
            links,
            [
                l("0000:01:00.0", "8.0 GT/s PCIe x8", "8.0 GT/s PCIe x16", true),
                l("0000:04:00.0", "8.0 GT/s PCIe x4", "8.0 GT/s PCIe x4", false),
            ],
            "the uplink, judged against the root port; the drive's own link"
        );
    }

    #[test]
    fn pci_names_without_the_device_or_the_file() {
        let f = Fake::new();
        let ids = f.root().join("pci.ids");
        assert_eq!(pci_name(&ids, "1000", "ffff").as_deref(), Some("Broadcom / LSI"));
        assert_eq!(pci_name(&ids, "dead", "beef"), None);
        assert_eq!(pci_name(&f.root().join("none"), "1000", "0097"), None);
    }
}

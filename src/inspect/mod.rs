//! The incoming inspection's facts: what each drive declares of itself,
//! asked of all at once in seconds ([`declared`]). Asking reads no sector
//! (the capacity probe, which writes, is `burnin::probe`).
//!
//! It must not decide what a finding means (`judge::inspect` does) or lay
//! anything out (`export::inspect`).

pub mod declared;

use std::path::Path;
use std::process::Command;

pub use declared::Declared;

use crate::device::smartctl::{self, Feature};
use crate::device::{BlockDevice, SystemPaths, raid, tool};
use declared::{Member, Raid};
use serde_json::Value;

/// Asks one disk: sysfs, then smartctl (SMART, security, and FARM where
/// the installed release has it), then, for
/// an ATA drive, hdparm (its native size, and its DCO's real maximum). Each tool bound by
/// [`tool::LIMIT`] and `give_up`; a tool missing or failing is said in
/// `not_read`, and the rest goes on.
pub fn ask(
    paths: &SystemPaths,
    dev: &BlockDevice,
    give_up: &(dyn Fn() -> bool + Sync),
) -> Declared {
    let mut d = Declared::of(&dev.identity);
    let timer = paths.sys.join("block").join(&dev.identity.name).join("device/timeout");
    d.kernel_timeout_s = std::fs::read_to_string(timer).ok().and_then(|t| t.trim().parse().ok());
    let mut ata = dev.identity.topology.transport == "sata";
    // FARM only of a release that takes `-l farm` (7.3 refuses the whole
    // call for it).
    let release = smartctl::installed(give_up);
    let farm = Feature::Farm.in_release(release);
    let args: &[&str] = if farm { &["-x", "-l", "farm"] } else { &["-x"] };
    if let Some(v) = &dev.identity.volume {
        d.not_read.push(format!(
            "SMART: {} has none of its own: inspect its members (arrayburn inspect {})",
            v.a_kind(),
            v.members.join(" ")
        ));
        return d;
    }
    match smartctl::json(&dev.given, args, give_up) {
        Ok(v) => {
            ata |= v["device"]["protocol"] == "ATA";
            if let Some(raid) = raid_volume(dev, &v, give_up) {
                d.raid = Some(raid);
                d.model = d.model.take().or_else(|| smartctl::text_of(&v, smartctl::MODEL));
                return d;
            }
            d.add_smart(&v, &dev.given);
            if let Some(why) = Feature::Farm.lacking(release).filter(|_| d.smart && d.seagate()) {
                d.not_read.push(why);
            }
        }
        Err(e) => d.not_read.push(format!("SMART: {e}")),
    }
    if ata {
        ask_hdparm(&mut d, dev, give_up);
    }
    let zoned = paths.sys.join("block").join(&dev.identity.name).join("queue/zoned");
    d.add_zoned(std::fs::read_to_string(Path::new(&zoned)).ok().as_deref());
    d
}

/// An ATA drive's native size (`hdparm -N`: an HPA) and its DCO's real
/// maximum (`hdparm --dco-identify`), added to `d`; what could not be
/// asked said in its `not_read`.
fn ask_hdparm(d: &mut Declared, dev: &BlockDevice, give_up: &dyn Fn() -> bool) {
    for (flag, what) in [("-N", "HPA"), ("--dco-identify", "DCO")] {
        let asked =
            tool::output(Command::new("hdparm").args([flag, &dev.given]), tool::LIMIT, give_up);
        match asked {
            Ok(out) if out.status.success() => {
                let text = String::from_utf8_lossy(&out.stdout);
                if flag == "-N" { d.add_hdparm(&text) } else { d.add_dco(&text) }
            }
            Ok(out) => {
                let err = String::from_utf8_lossy(&out.stderr);
                let why = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("no reason given");
                d.not_read.push(format!(
                    "{what}: hdparm {flag} failed ({}): {}",
                    out.status,
                    why.trim()
                ));
            }
            Err(e) if e.contains("could not run") => {
                d.not_read.push(format!("{what}: {e}: install hdparm"));
                break;
            }
            Err(e) => d.not_read.push(format!("{what}: {e}")),
        }
    }
}

/// Where `dev` is a RAID controller's volume (its controller's driver,
/// its vendor and model, or smartctl's refusal to open it say so): the
/// controller, and each drive behind one of its kind read through it.
fn raid_volume(dev: &BlockDevice, v: &Value, give_up: &(dyn Fn() -> bool + Sync)) -> Option<Raid> {
    let id = &dev.identity;
    let driver = id.topology.controller.as_ref().and_then(|c| c.driver.as_deref());
    let model = id.model.clone().or_else(|| smartctl::text_of(v, smartctl::MODEL));
    let vendor =
        id.vendor.clone().or_else(|| smartctl::text_of(v, &[&["scsi_vendor"], &["vendor"]]));
    let refusal = v["smartctl"]["messages"][0]["string"].as_str();
    let controller = raid::volume(driver, vendor.as_deref(), model.as_deref(), refusal)?;
    let scan = smartctl::scan_open(give_up);
    // Every drive behind it at once: one that does not answer costs its
    // own limit, not each of the others' turn (24 members at 60 s each
    // were 24 minutes).
    let member = |(device, kind): (String, String)| {
        let asked = format!("-d {kind} {device}");
        match smartctl::json(&device, &["-x", "-d", &kind], give_up) {
            Ok(m) => Member::of(asked, &m),
            Err(e) => {
                Member::of(asked, &serde_json::json!({"smartctl": {"messages": [{"string": e}]}}))
            }
        }
    };
    let members = std::thread::scope(|s| {
        let asks: Vec<_> = (raid::members(&scan, &controller.passthrough).into_iter())
            .map(|m| s.spawn(move || member(m)))
            .collect();
        asks.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    Some(Raid { controller, members })
}

/// Asks every disk at once.
pub fn ask_all(
    paths: &SystemPaths,
    devs: &[BlockDevice],
    give_up: &(dyn Fn() -> bool + Sync),
) -> Vec<Declared> {
    // The release asked once, before the disks are asked at once.
    let _ = smartctl::installed(give_up);
    std::thread::scope(|s| {
        let asks: Vec<_> = devs.iter().map(|d| s.spawn(move || ask(paths, d, give_up))).collect();
        (asks.into_iter().zip(devs))
            .map(|(h, d)| h.join().unwrap_or_else(|_| Declared::of(&d.identity)))
            .collect()
    })
}

/// Each NVMe drive's error log entries read again after a run, beside the
/// count its inspection read before it, as a counter of what the kernel
/// saw (`seen[i]` of `devices[i]`): the drive's own log, listed, as a
/// burn-in lists it; none read where the drive gave none before.
pub fn error_logs_after(
    devices: &[BlockDevice],
    before: &[&Declared],
    seen: &mut [crate::device::kernel::Seen],
    give_up: &(dyn Fn() -> bool + Sync),
) {
    for ((dev, d), s) in devices.iter().zip(before).zip(seen.iter_mut()) {
        // A stop: the run ends now, not after smartctl.
        if give_up() {
            return;
        }
        let Some(was) = d.nvme_error_log else { continue };
        let Ok(v) = smartctl::json(&dev.given, &["-A"], give_up) else { continue };
        if let Some(now) = declared::nvme_error_log(&v) {
            s.counters.push(crate::device::kernel::Counter {
                name: "nvme error log entries".into(),
                before: was,
                after: now,
            });
        }
    }
}

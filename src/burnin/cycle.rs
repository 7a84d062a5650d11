//! Spin cycles around a verify (`burnin --verify --cycles N`): before each
//! read-back, the disk is spun down (ATA STANDBY IMMEDIATE by `hdparm -y`;
//! SCSI STOP UNIT by `sg_start --stop`; an NVMe drive does not spin) and
//! read at once, timing how long it takes to answer again, and its identity
//! is read again: a drive that does not come back, comes back as another
//! (its serial, WWN or size changed under its name) or slower than its
//! peers and its own earlier cycles is what a new array must not hold.
//! With `--power-cycle`, the slot's power is cut instead, through the
//! kernel's enclosure (`power_status` of the disk's slot): the drive goes
//! away, starts cold when the power is back and is found again by its
//! name, opened again and timed until it answers.
//! It measures; what a spin-up's time means is `judge::burnin`'s.
//!
//! It must not write to a disk (only to its slot's `power_status`).

use std::fs::File;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::block::BLOCK;
use super::targets::Target;
use crate::device::kernel::Cuts;
use crate::device::tool::Needed;
use crate::device::{BlockDevice, SystemPaths};
use crate::io::{Bounds, Halt, Probe, Until};
use crate::stop::StopFlag;

/// One spin cycle of one disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cycle {
    /// Which (from 1).
    pub cycle: u16,
    /// Its slot's power was cut (not a spin-down).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub power: bool,
    /// Seconds from the spin-down's end until the disk answered a read;
    /// None where it did not answer, or was not spun down.
    pub spin_up_s: Option<f64>,
    pub back: Back,
}

/// How a disk came back from its spin-down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum Back {
    /// It answered, as the same drive.
    Same,
    /// It could not be spun down (why): read back without it.
    NotSpun(String),
    /// It did not answer, or reading it fails (why): nothing more is read.
    Gone(String),
    /// It answered as another drive (what changed): nothing more is read.
    Other(String),
}

impl Cycle {
    /// What it was, in words: "spin-down 2", "power cycle 2".
    pub fn name(&self) -> String {
        match self.power {
            true => format!("power cycle {}", self.cycle),
            false => format!("spin-down {}", self.cycle),
        }
    }

    /// Whether the read-back goes on after it.
    pub fn read_on(&self) -> bool {
        matches!(self.back, Back::Same | Back::NotSpun(_))
    }
}

/// How long a spin-down command may take.
const SPIN_DOWN_LIMIT: Duration = Duration::from_secs(60);

/// Spins disk `t` down, then reads its first block (at most `within`),
/// timing it, and reads its identity again.
pub fn spin(t: &Target, cycle: u16, within: Duration, stop: &StopFlag) -> Cycle {
    let not_spun =
        |why: String| Cycle { cycle, power: false, spin_up_s: None, back: Back::NotSpun(why) };
    let Some(mut cmd) = spin_down(&t.dev) else {
        return not_spun("an NVMe drive does not spin: no spin cycle".into());
    };
    let what = format!("{cmd:?}").replace('"', "");
    match crate::device::tool::output(&mut cmd, SPIN_DOWN_LIMIT, &|| stop.is_set()) {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return not_spun(format!("{what} failed ({})", crate::escape::terminal(&said)));
        }
        Err(why) => return not_spun(format!("{what}: {why}")),
    }
    let began = Instant::now();
    let gone = |why: String| Cycle { cycle, power: false, spin_up_s: None, back: Back::Gone(why) };
    let Ok(mut probe) = Probe::of(&t.file, &Bounds::new(stop, within)) else {
        return gone("it cannot be read".into());
    };
    match probe.read_at(t.start, BLOCK, Until::Stop) {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return gone(format!("reading it fails ({e})")),
        Err(Halt::Hung) => {
            let within = crate::units::human_duration(within);
            return gone(format!("it did not answer a read within {within} of its spin-down"));
        }
        Err(_) => return gone("the wait for it was stopped".into()),
    }
    let spin_up_s = Some(began.elapsed().as_secs_f64());
    let back = match changed(&t.dev) {
        Some(what) => Back::Other(what),
        None => Back::Same,
    };
    Cycle { cycle, power: false, spin_up_s, back }
}

/// The command that spins `dev` down: SCSI's STOP UNIT for a SAS disk,
/// ATA's STANDBY IMMEDIATE otherwise; none for an NVMe drive.
fn spin_down(dev: &BlockDevice) -> Option<Command> {
    let tool = spin_tool(dev)?;
    let mut c = Command::new(tool.program);
    let flag = if tool == Needed::SG_START { "--stop" } else { "-y" };
    c.args([flag, &dev.given]);
    Some(c)
}

/// The program that spins `dev` down (none for an NVMe drive).
fn spin_tool(dev: &BlockDevice) -> Option<Needed> {
    match dev.identity.topology.transport.as_str() {
        "nvme" => None,
        "sas" => Some(Needed::SG_START),
        _ => Some(Needed::HDPARM),
    }
}

/// Why `dev` cannot be spun down here, before anything runs: the program
/// its spin-down needs is not installed (a spin cycle without it would
/// only say "could not run" at every cycle, and the verify end as one
/// without cycles).
pub fn missing_tool(dev: &BlockDevice) -> Option<String> {
    let tool = spin_tool(dev).filter(|t| !t.installed())?;
    Some(format!(
        "--cycles: {} is spun down by {}, which is not installed: {}, or leave out --cycles (nothing was written)",
        dev.given,
        tool.program,
        tool.install()
    ))
}

/// What changed of the drive under `dev`'s name (serial, WWN, size), in
/// words; None when it is the same drive.
fn changed(dev: &BlockDevice) -> Option<String> {
    let now = match crate::device::resolve(&SystemPaths::real(), &dev.given, false) {
        Ok(now) => now.identity,
        Err(e) => return Some(format!("its name no longer leads to a disk ({e})")),
    };
    let was = &dev.identity;
    let shown = |v: &Option<String>| v.as_deref().map_or("(none)".into(), crate::escape::terminal);
    if now.serial != was.serial {
        return Some(format!("serial {}, was {}", shown(&now.serial), shown(&was.serial)));
    }
    if now.wwn != was.wwn {
        return Some(format!("WWN {}, was {}", shown(&now.wwn), shown(&was.wwn)));
    }
    (now.size_bytes != was.size_bytes)
        .then(|| format!("{} bytes, was {} bytes", now.size_bytes, was.size_bytes))
}

/// How long a drive may take to go away once its slot's power is cut, and
/// how long the power then stays off.
const POWER_GONE_LIMIT: Duration = Duration::from_secs(30);
const POWER_OFF: Duration = Duration::from_secs(2);

/// The `power_status` file of `t`'s enclosure slot, where the kernel
/// offers one.
pub fn slot_power(t: &BlockDevice) -> Option<std::path::PathBuf> {
    let slot = t.identity.topology.enclosure_component.as_deref()?;
    Some(std::path::Path::new(slot).join("power_status")).filter(|p| p.is_file())
}

/// Cuts disk `t`'s slot power (`power` its `power_status`), waits for the
/// drive to go, keeps the power off a moment, turns it on, and waits (at
/// most `within`) for a drive under its name to answer a read: timed from
/// the power's return, its identity read again; the file opened then is
/// put in `now` (`first` read until one is). The power is turned on again
/// on every path. The kernel's watch is told when the power is cut and
/// when the drive is back (`cuts`): what its log says between is the
/// run's.
pub fn power(
    t: &Target,
    (cycle, power, cuts): (u16, &std::path::Path, &Cuts),
    within: Duration,
    (first, now): (&File, &Mutex<Option<File>>),
    stop: &StopFlag,
) -> Cycle {
    let at = |spin_up_s, back| Cycle { cycle, power: true, spin_up_s, back };
    let set = |word: &str| {
        std::fs::write(power, word).map_err(|e| format!("{} {word}: {e}", power.display()))
    };
    let back_as = || told_back(t, cuts);
    cuts.cut(t.dev.rdev);
    if let Err(why) = set("off") {
        back_as();
        return at(None, Back::NotSpun(format!("its slot's power could not be cut ({why})")));
    }
    let gone = gone_within(t, (first, now), stop);
    let off = stop.rest(POWER_OFF);
    if let Err(why) = set("on") {
        return at(None, Back::Gone(format!("its slot's power could not be turned on ({why})")));
    }
    // A stop cut the waits short: what they found is not a finding.
    if !off || stop.is_set() {
        return at(None, Back::Gone("the wait for it was stopped".into()));
    }
    if !gone {
        back_as();
        let limit = crate::units::human_duration(POWER_GONE_LIMIT);
        let why = format!("its slot's power was cut, but it still answered {limit} on");
        return at(None, Back::NotSpun(why));
    }
    match found_again(t, within, now, stop) {
        Ok(spin_up_s) => {
            back_as();
            at(Some(spin_up_s), changed(&t.dev).map_or(Back::Same, Back::Other))
        }
        Err(last) => {
            let within = crate::units::human_duration(within);
            let why = format!("it did not come back within {within} of its slot's power ({last})");
            at(None, Back::Gone(why))
        }
    }
}

/// Tells the kernel's watch that `t` is back: it follows it under the
/// names its name now leads to.
fn told_back(t: &Target, cuts: &Cuts) {
    let now =
        crate::device::resolve_watched(&SystemPaths::real(), std::slice::from_ref(&t.dev.given));
    cuts.back(t.dev.rdev, now.ok().and_then(|mut d| d.pop()).as_ref());
}

/// Waits (at most `within`) for a drive under `t`'s name to answer a read:
/// the seconds it took, its file opened then put in `now`; or why it did
/// not.
fn found_again(
    t: &Target,
    within: Duration,
    now: &Mutex<Option<File>>,
    stop: &StopFlag,
) -> Result<f64, String> {
    let began = Instant::now();
    let mut last = String::from("its name leads to no disk");
    while began.elapsed() < within && !stop.is_set() {
        match answers(t, &Bounds::new(stop, within.saturating_sub(began.elapsed()))) {
            Ok(file) => {
                *now.lock().unwrap_or_else(|e| e.into_inner()) = Some(file);
                return Ok(began.elapsed().as_secs_f64());
            }
            Err(why) => last = why,
        }
        stop.rest(Duration::from_millis(250));
    }
    Err(last)
}

/// Whether the drive went once its power was cut: its name leads to
/// another device or none, or its file cannot be read.
fn gone_within(t: &Target, (first, now): (&File, &Mutex<Option<File>>), stop: &StopFlag) -> bool {
    let began = Instant::now();
    while began.elapsed() < POWER_GONE_LIMIT && !stop.is_set() {
        let same = std::fs::metadata(&t.dev.given).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.rdev() == t.dev.rdev
        });
        let guard = now.lock().unwrap_or_else(|e| e.into_inner());
        let file = guard.as_ref().unwrap_or(first);
        if !same || !reads(file, t.start, &Bounds::new(stop, Duration::from_secs(5))) {
            return true;
        }
        drop(guard);
        stop.rest(Duration::from_millis(250));
    }
    false
}

/// Whether `file` answers a read of its block at `at`.
fn reads(file: &File, at: u64, bounds: &Bounds) -> bool {
    Probe::of(file, bounds)
        .is_ok_and(|mut p| matches!(p.read_at(at, BLOCK, Until::Stop), Ok(Ok(_))))
}

/// `t`'s name opened again (O_DIRECT, read-only) and its first block read:
/// the file, or why not.
fn answers(t: &Target, bounds: &Bounds) -> Result<File, String> {
    let file = crate::io::open_direct(std::path::Path::new(&t.dev.given))
        .map_err(|e| format!("opening it fails ({e})"))?;
    let mut probe = Probe::of(&file, bounds).map_err(|e| format!("reading it fails ({e})"))?;
    match probe.read_at(t.start, BLOCK, Until::Stop) {
        Ok(Ok(_)) => Ok(file),
        Ok(Err(e)) => Err(format!("reading it fails ({e})")),
        Err(_) => Err("it did not answer a read".into()),
    }
}

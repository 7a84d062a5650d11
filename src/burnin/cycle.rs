//! Spin cycles around a verify (`burnin --verify --cycles N`): before each
//! read-back, the disk is spun down (ATA STANDBY IMMEDIATE by `hdparm -y`;
//! SCSI STOP UNIT by `sg_start --stop`; an NVMe drive does not spin) and
//! read at once, timing how long it takes to answer again, and its identity
//! is read again: a drive that does not come back, comes back as another
//! (its serial, WWN or size changed under its name) or slower than its
//! peers and its own earlier cycles is what a new array must not hold.
//! It measures; what a spin-up's time means is `judge::burnin`'s.
//!
//! It must not write.

use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::block::BLOCK;
use super::targets::Target;
use crate::device::{BlockDevice, SystemPaths};
use crate::io::{Bounds, Halt, Probe, Until};
use crate::stop::StopFlag;

/// One spin cycle of one disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cycle {
    /// Which (from 1).
    pub cycle: u16,
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
    let not_spun = |why: String| Cycle { cycle, spin_up_s: None, back: Back::NotSpun(why) };
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
    let gone = |why: String| Cycle { cycle, spin_up_s: None, back: Back::Gone(why) };
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
    Cycle { cycle, spin_up_s, back }
}

/// The command that spins `dev` down: SCSI's STOP UNIT for a SAS disk,
/// ATA's STANDBY IMMEDIATE otherwise; none for an NVMe drive.
fn spin_down(dev: &BlockDevice) -> Option<Command> {
    match dev.identity.topology.transport.as_str() {
        "nvme" => None,
        "sas" => {
            let mut c = Command::new("sg_start");
            c.args(["--stop", &dev.given]);
            Some(c)
        }
        _ => {
            let mut c = Command::new("hdparm");
            c.args(["-y", &dev.given]);
            Some(c)
        }
    }
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

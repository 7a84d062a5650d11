//! Fit for a RAID or a pool: whether a drive gives up on a bad sector
//! before the kernel gives up on the drive. A drive that retries a sector
//! for two minutes while the kernel waits 30 s is reset, then dropped by
//! md or ZFS on its first bad sector; one whose error recovery control
//! (SCT ERC) answers within the kernel's command timer is not.
//!
//! | drive | rule | fit |
//! |---|---|---|
//! | ATA, ERC set | both limits below the kernel's timer | yes |
//! | ATA, ERC set | a limit at or above the timer | no |
//! | ATA, ERC off | retries as long as it likes | no |
//! | ATA, no ERC | cannot limit its retries | no |
//! | NVMe, a RAID controller's volume, an md/dm volume | not the drive's to say | not applicable |
//! | SAS, no SMART, ERC not read, timer not read | | not known |
//!
//! It must not read devices: `inspect::declared` brings the facts.

use serde::{Deserialize, Serialize};

use crate::inspect::Declared;

/// The timer the kernel is told to keep where a drive cannot be made to
/// answer sooner (the Linux RAID wiki's "timeout mismatch" advice).
pub const RAISED_TIMER_S: u64 = 180;

/// Whether a drive is fit for a RAID or a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fitness {
    Fit,
    Unfit,
    NotApplicable,
    NotKnown,
}

/// A drive's fitness and why, in a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fit {
    pub fitness: Fitness,
    pub sentence: String,
}

impl Default for Fit {
    fn default() -> Self {
        Fit { fitness: Fitness::NotKnown, sentence: "not judged".into() }
    }
}

fn fit(fitness: Fitness, sentence: String) -> Fit {
    Fit { fitness, sentence }
}

/// The two fixes, for disk `path` (kernel name `name`): its limit set
/// (where it has the feature) or the kernel's timer raised.
fn fixes(path: &str, name: &str, settable: bool) -> String {
    let raise = format!(
        "raise the kernel's timer to {RAISED_TIMER_S} s: echo {RAISED_TIMER_S} > /sys/block/{name}/device/timeout, kept at each boot by a udev rule (ACTION==\"add\", SUBSYSTEM==\"block\", KERNEL==\"{name}\", ATTR{{device/timeout}}=\"{RAISED_TIMER_S}\"; match by ENV{{ID_SERIAL}} where names move)"
    );
    if settable {
        format!(
            "set its limit to 7 s at each boot (most drives forget it at power-off): smartctl -l scterc,70,70 {path}; or {raise}"
        )
    } else {
        raise
    }
}

/// Disk `path`'s fitness from what it declared.
pub fn judge(path: &str, d: &Declared) -> Fit {
    if d.raid.is_some() {
        return fit(
            Fitness::NotApplicable,
            "the RAID controller's: its own timers and retries decide, not the kernel's".into(),
        );
    }
    if d.name.starts_with("nvme") {
        return fit(
            Fitness::NotApplicable,
            "not applicable: an NVMe drive has no SCT error recovery control (the kernel's nvme_core.io_timeout governs)".into(),
        );
    }
    if ["md", "dm-"].iter().any(|p| d.name.starts_with(p)) {
        return fit(Fitness::NotApplicable, "a volume: its members' fitness is theirs".into());
    }
    let Some(r) = d.recovery else {
        let why = if !d.smart {
            "not known: no SMART data"
        } else if d.protocol.as_deref() == Some("SCSI") {
            "not known: a SAS or SCSI drive's retry limit is in its read-write error recovery mode page (sdparm --page=rw), not read here"
        } else {
            "not known: smartctl gave no error recovery control"
        };
        return fit(Fitness::NotKnown, why.into());
    };
    let Some(timer) = d.kernel_timeout_s else {
        return fit(Fitness::NotKnown, "not known: the kernel's command timer was not read".into());
    };
    let name = &d.name;
    if !r.supported {
        return fit(
            Fitness::Unfit,
            format!(
                "cannot limit its retries (no SCT error recovery control): a bad sector may hold it for minutes while the kernel waits {timer} s, then resets it, and md or ZFS drops it on the first; {}",
                fixes(path, name, false)
            ),
        );
    }
    let (Some(read), Some(write)) = (r.read_ds, r.write_ds) else {
        return fit(
            Fitness::Unfit,
            format!(
                "its error recovery control is off: it may retry a bad sector longer than the kernel waits ({timer} s), and md or ZFS drops it on the first; {}",
                fixes(path, name, true)
            ),
        );
    };
    let most = read.max(write);
    let secs = f64::from(most) / 10.0;
    if u64::from(most) < timer * 10 {
        return fit(
            Fitness::Fit,
            format!("fit: it retries a sector at most {secs:.1} s, below the kernel's {timer} s"),
        );
    }
    fit(
        Fitness::Unfit,
        format!(
            "it may retry a sector {secs:.1} s, not below the kernel's {timer} s: the kernel resets it first, and md or ZFS drops it; {}",
            fixes(path, name, true)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::declared::Recovery;

    fn ata(recovery: Option<Recovery>, timer: Option<u64>) -> Declared {
        Declared {
            name: "sdb".into(),
            smart: true,
            recovery,
            kernel_timeout_s: timer,
            protocol: Some("ATA".into()),
            ..Declared::default()
        }
    }

    fn erc(supported: bool, read_ds: Option<u32>, write_ds: Option<u32>) -> Option<Recovery> {
        Some(Recovery { supported, read_ds, write_ds })
    }

    #[test]
    fn a_drive_fits_only_where_it_gives_up_before_the_kernel_does() {
        let judged = |d: &Declared| judge("/dev/sdb", d);
        // 7 s against 30 s: fit, with both figures.
        let f = judged(&ata(erc(true, Some(70), Some(70)), Some(30)));
        assert_eq!(f.fitness, Fitness::Fit);
        assert_eq!(f.sentence, "fit: it retries a sector at most 7.0 s, below the kernel's 30 s");
        // 30 s against 30 s, and a write limit past it: not fit.
        for (r, w) in [(300, 300), (70, 400)] {
            let f = judged(&ata(erc(true, Some(r), Some(w)), Some(30)));
            assert_eq!(f.fitness, Fitness::Unfit, "{f:?}");
            assert!(f.sentence.contains("not below the kernel's 30 s"), "{}", f.sentence);
        }
        // The same 30 s against a raised timer: fit.
        assert_eq!(judged(&ata(erc(true, Some(300), Some(300)), Some(180))).fitness, Fitness::Fit);
        // Off: both fixes.
        let f = judged(&ata(erc(true, None, None), Some(30)));
        assert_eq!(f.fitness, Fitness::Unfit);
        assert!(f.sentence.starts_with("its error recovery control is off"), "{}", f.sentence);
        assert!(f.sentence.contains("smartctl -l scterc,70,70 /dev/sdb"), "{}", f.sentence);
        assert!(f.sentence.contains("echo 180 > /sys/block/sdb/device/timeout"), "{}", f.sentence);
        // Lacking: the timer only.
        let f = judged(&ata(erc(false, None, None), Some(30)));
        assert_eq!(f.fitness, Fitness::Unfit);
        assert!(f.sentence.starts_with("cannot limit its retries"), "{}", f.sentence);
        assert!(!f.sentence.contains("scterc"), "{}", f.sentence);
        // The timer not read: not known, never fit.
        assert_eq!(judged(&ata(erc(true, Some(70), Some(70)), None)).fitness, Fitness::NotKnown);
    }

    #[test]
    fn nvme_volumes_and_drives_behind_a_controller_are_not_the_drives_to_judge() {
        let mut d = ata(None, Some(30));
        d.name = "nvme0n1".into();
        assert_eq!(judge("/dev/nvme0n1", &d).fitness, Fitness::NotApplicable);
        d.name = "md0".into();
        assert_eq!(judge("/dev/md0", &d).fitness, Fitness::NotApplicable);
        // SAS: its limit not read here; no SMART: not known.
        let mut sas = ata(None, Some(30));
        sas.protocol = Some("SCSI".into());
        let f = judge("/dev/sdb", &sas);
        assert_eq!(f.fitness, Fitness::NotKnown);
        assert!(f.sentence.contains("sdparm --page=rw"), "{}", f.sentence);
        sas.smart = false;
        assert_eq!(judge("/dev/sdb", &sas).sentence, "not known: no SMART data");
    }
}

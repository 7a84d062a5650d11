//! `arrayburn inspect`'s plan: its outputs and disks, and for the capacity
//! probe every refusal before its first write (no `--destructive`, a disk
//! in use, read-only, carrying a signature, locked, another run's), the
//! disks opened O_EXCL and locked, and the consent (typed yes, or
//! `--yes`). It must not read a sector.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::burnin::targets::{Target, refuse_signature, targets};
use crate::cli::InspectArgs;
use crate::device::{self, BlockDevice, SystemPaths, lock::DiskLock};
use crate::inspect::Declared;
use crate::io::Bounds;
use crate::judge::inspect::Rules;
use crate::output::Output;
use crate::output::Outputs;
use crate::stop::StopFlag;
use crate::units::human_bytes;

/// A runnable inspection.
pub struct InspectPlan {
    /// The disks, in command-line order.
    pub devices: Vec<BlockDevice>,
    pub rules: Rules,
    json: Option<Output>,
    out: Option<PathBuf>,
    metrics: Option<Output>,
    ocp: Option<Output>,
    /// The probe's disks, opened for writing (none without `--probe`).
    pub probe: Vec<Target>,
    _locks: Vec<DiskLock>,
    pub io_timeout: Duration,
    /// `--smr-probe` and `--smr-idle`: the scattered-write probe's times.
    pub smr: (Duration, Duration),
    yes: bool,
}

impl InspectPlan {
    /// Resolves the flags: every refusal but a locked drive's (known once
    /// the drives are asked: [`Self::refuse_locked`]).
    pub fn resolve(args: &InspectArgs, stop: &StopFlag) -> Result<Self> {
        let output = |flag: &str, p: &Option<PathBuf>| {
            (p.as_deref().map(|p| Output::resolve(flag, p, true)))
                .transpose()
                .map_err(|e| anyhow::anyhow!("{e} (nothing was read or written)"))
        };
        let (json, metrics) = (output("--json", &args.json)?, output("--metrics", &args.metrics)?);
        let ocp = output("--ocp-diag", &args.ocp_diag)?;
        (super::refuse_shared([&json, &metrics, &ocp].into_iter().flatten(), args.out.as_deref()))
            .map_err(|e| anyhow::anyhow!("{e} (nothing was read or written)"))?;
        if let Some(dir) = &args.out {
            super::check_output_dir(dir)?;
        }
        super::check_io_timeout(args.io_timeout).map_err(anyhow::Error::msg)?;
        if args.probe && !args.destructive {
            bail!(
                "--probe overwrites blocks across {}: add --destructive to confirm that their data may be destroyed (nothing was written)",
                args.devices.join(" ")
            );
        }
        let devices = device::resolve_all(&SystemPaths::real(), &args.devices, false)?;
        let (probe, locks) = if args.probe {
            if !args.yes && !std::io::stdin().is_terminal() {
                bail!(
                    "standard input is not a terminal, so no one can confirm: add --yes to probe {} disk(s) from a script (nothing was written)",
                    devices.len()
                );
            }
            let (probe, locks) = targets(&args.devices, true, (None, args.ignore_lock), stop)?;
            if !args.wipe_signatures {
                for t in &probe {
                    refuse_signature(&t.dev, &Bounds::new(stop, args.io_timeout))?;
                }
            }
            (probe, locks)
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(InspectPlan {
            devices,
            rules: Rules { new_hours: args.new_hours },
            json,
            out: args.out.clone(),
            metrics,
            ocp,
            probe,
            _locks: locks,
            io_timeout: args.io_timeout,
            smr: (args.smr_probe, args.smr_idle),
            yes: args.yes,
        })
    }

    /// Where the result goes.
    pub fn outputs(&self) -> Outputs<'_> {
        Outputs {
            json: self.json.as_ref(),
            csv: None,
            out: self.out.as_deref(),
            metrics: self.metrics.as_ref(),
            ocp: self.ocp.as_ref(),
        }
    }

    /// A probe of a drive that says it is locked is refused: its writes
    /// and reads fail until it is unlocked, which says nothing of its
    /// capacity.
    pub fn refuse_locked(&self, declared: &[Declared]) -> Result<()> {
        for (t, d) in self.probe.iter().zip(declared) {
            if d.security.as_ref().is_some_and(|s| s.locked) {
                bail!(
                    "{} is locked (ATA security): unlock it before probing its capacity (nothing was written)",
                    t.dev.given
                );
            }
        }
        Ok(())
    }

    /// The probe's disks shown, and a terminal asked to type yes (with
    /// `--yes` they are printed as the record of what was overwritten).
    /// False when a signal came while it asked.
    pub fn consent(&self, stop: &StopFlag) -> Result<bool> {
        if self.probe.is_empty() {
            return Ok(true);
        }
        tell!(
            "arrayburn inspect: the capacity probe will OVERWRITE blocks at the start, across and at the end of:"
        );
        for t in &self.probe {
            let id = &t.dev.identity;
            tell!(
                "  {}  {}  serial {}  {} announced",
                t.dev.given,
                id.model.as_deref().unwrap_or("-"),
                id.serial.as_deref().unwrap_or("-"),
                human_bytes(id.size_bytes)
            );
        }
        if self.yes {
            return Ok(true);
        }
        super::consent::typed_yes(
            &format!("Type yes to overwrite blocks of these {} disk(s): ", self.probe.len()),
            stop,
        )
    }
}

//! `arrayburn locate DISK... [--off] [--fault]`: the LED of each disk's
//! enclosure slot set (`device::led`), a line each. Glue only.

use crate::cli::LocateArgs;
use crate::device::led::{self, Led};
use crate::device::{SystemPaths, resolve_all};
use crate::outcome::Outcome;

/// Sets each disk's LED; exit 0 when every one was set, 3 when one could
/// not be (no slot known, no such LED: said on its line).
pub fn run(args: &LocateArgs) -> anyhow::Result<Outcome> {
    let devs = resolve_all(&SystemPaths::real(), &args.devices, false)?;
    let which = if args.fault { Led::Fault } else { Led::Locate };
    let mut all = true;
    for d in &devs {
        match led::set(&d.identity.topology, which, !args.off) {
            // A device path's control characters as escapes.
            Ok(words) => show!("{}: {words}\n", d.given),
            Err(why) => {
                all = false;
                show!("{}: not set: {why}\n", d.given);
            }
        }
    }
    Ok(if all { Outcome::Healthy } else { Outcome::NotJudged })
}

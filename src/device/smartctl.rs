//! smartctl, the one place arrayburn runs it: the burn-in's readings and
//! self-tests and the link code's disk maximum all ask through here. Each
//! call is bound by [`tool::LIMIT`] (a hung disk hangs smartctl too) and by
//! `give_up`; what the disk says of itself comes back with its control
//! characters escaped.
//!
//! It must not interpret what smartctl says (the burn-in's `smart` and the
//! link code do).

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use super::tool;

/// `smartctl ARGS`, given at most `limit` or until `give_up`; why not in
/// words (smartctl missing: "smartctl could not run (...): install
/// smartmontools").
pub fn call(args: &[&str], limit: Duration, give_up: &dyn Fn() -> bool) -> Result<Output, String> {
    tool::output(Command::new("smartctl").args(args), limit, give_up).map_err(|e| {
        if e.contains("could not run") { format!("{e}: install smartmontools") } else { e }
    })
}

/// `smartctl --json ARGS DEVICE` as JSON, its strings escaped. smartctl's
/// exit status is a bit mask that is often non-zero on a healthy disk: the
/// JSON says what it could read.
pub fn json(device: &str, args: &[&str], give_up: &dyn Fn() -> bool) -> Result<Value, String> {
    let all: Vec<&str> =
        ["--json"].into_iter().chain(args.iter().copied()).chain([device]).collect();
    let out = call(&all, tool::LIMIT, give_up)?;
    let mut v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("smartctl gave no JSON for {device} ({e})"))?;
    crate::escape::json_strings(&mut v);
    Ok(v)
}

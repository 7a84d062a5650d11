//! A run down its plan: the check's passes (`check.rs`) and the burn-in's
//! steps (`burnin.rs`), each taking a plan and handing back what it
//! measured. Every step that reads or writes a disk lives here.
//!
//! It must not resolve flags or refuse (`plan/` did), judge (it asks
//! `judge/` what to read again) or build, save or publish a report.

pub mod burnin;
pub mod check;
pub mod watch;

use crate::device::{BlockDevice, SystemPaths};

/// The inspection that opens a check or a burn-in: each disk asked and
/// judged by `rules` (its findings reported beside the run's own), and a
/// locked drive refused before anything is read: its reads fail until it
/// is unlocked, which must never be taken for bad media. `verb` says what
/// it is refused for ("checking").
pub fn before_run(
    devs: &[BlockDevice],
    rules: crate::judge::inspect::Rules,
    verb: &str,
    give_up: &(dyn Fn() -> bool + Sync),
) -> anyhow::Result<Vec<crate::judge::inspect::Inspected>> {
    let declared = crate::inspect::ask_all(&SystemPaths::real(), devs, give_up);
    let paths: Vec<String> = devs.iter().map(|d| d.given.clone()).collect();
    let none = (vec![None; declared.len()], vec![None; declared.len()]);
    let inspected = crate::judge::inspect::judged(&paths, declared, none, rules);
    if let Some((d, f)) = (inspected.iter()).find_map(|d| {
        d.to_act_on().find(|f| f.concern == crate::finding::Code::UntestedFormat).map(|f| (d, f))
    }) {
        anyhow::bail!(
            "{}: {} (refused before {verb}: nothing was read or written)",
            d.path,
            f.sentence
        );
    }
    if let Some(d) = inspected.iter().find(|d| d.locked()) {
        let words = d.declared.security.as_ref().map(|s| s.words.as_str()).unwrap_or("");
        anyhow::bail!(
            "{} is locked (ATA security: {words}): unlock it before {verb}; its reads fail until then, which is no fault of its media (nothing was read or written)",
            d.path
        );
    }
    Ok(inspected)
}

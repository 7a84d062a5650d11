//! A run down its plan: the check's passes (`check.rs`) and the burn-in's
//! steps (`burnin.rs`), each taking a plan and handing back what it
//! measured. Every step that reads or writes a disk lives here.
//!
//! It must not resolve flags or refuse (`plan/` did), judge (it asks
//! `judge/` what to read again) or build, save or publish a report.

pub mod burnin;
pub mod check;

//! arrayburn: a read-only array check for raw block devices.
//!
//! The shape is measure → judge → present: `plan` resolves devices and
//! refuses bad input before any I/O; `run` workers read with O_DIRECT and
//! only measure; `stats` judges with pure functions; `report` turns one
//! [`report::Report`] value into text and JSON.
#![deny(unsafe_code)]

pub mod cli;
pub mod commands;
pub mod demo;
pub mod device;
pub mod io;
pub mod iozone;
pub mod plan;
pub mod report;
pub mod run;
pub mod stats;
pub mod units;

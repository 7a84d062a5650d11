//! arrayburn: a read-only array check for raw block devices, a destructive
//! burn-in of new disks, iozone's file workloads, and the fleet report over
//! many hosts' results.
//!
//! The check is a pipeline, one folder or file per stage:
//! `plan` (flags to a runnable plan; every refusal before the first read) →
//! `measure` (workers read with O_DIRECT and only measure) → `judge` (every
//! rule that makes a verdict, as pure functions) → `report` (one
//! [`report::Report`] value) → `export` (text, JSON, CSV, charts) and
//! `progress` (the live display). The burn-in runs down the same stages:
//! [`plan::burnin::BurnPlan`] → `burnin` (its workers write, read back and
//! classify) → `judge::burnin` → [`report::burnin::BurnReport`] →
//! `export::burnin`. Both measure through one I/O sweep, [`io::Sweep`]
//! (requests in flight handed back in order, a stop, a hang, each
//! request's time with the disk) and its [`io::Probe`] (failures pinpointed
//! block by block). `commands` holds one file per subcommand, glue only;
//! `iozone` is iozone's file workloads; `stop` the stop flag beneath them, `supervisor` the parent of the child process a run reads
//! disks in.
#![deny(unsafe_code)]
// clippy.toml forbids unbounded child waits in tests; the tool's own
// children are bounded where it runs them.
#![allow(clippy::disallowed_methods)]

// First: its macros are used by the modules below.
#[macro_use]
pub mod tell;

pub mod board;
pub mod burnin;
pub mod cli;
pub mod commands;
pub mod defaults;
pub mod device;
pub mod escape;
pub mod export;
pub mod finding;
pub mod fleet;
pub mod grid;
pub mod header;
pub mod help;
pub mod host;
pub mod input;
pub mod inspect;
pub mod io;
pub mod iozone;
pub mod judge;
pub mod measure;
pub mod memory;
pub mod notify;
pub mod outcome;
pub mod output;
pub mod plan;
pub mod progress;
pub mod report;
pub mod run;
pub mod rundoc;
pub mod stats;
pub mod stop;
pub mod supervisor;
pub mod testbed;
pub mod units;
pub mod width;

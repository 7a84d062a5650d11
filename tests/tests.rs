//! One integration-test binary (fewer link steps on a 2-core machine).
//! Tests that need root create their own loop devices and cgroups and
//! remove exactly those, also when they fail; without root they print why
//! and skip.

#[macro_use]
mod util;

mod ansible;
mod burnin;
pub(crate) mod check;
pub(crate) mod columns;
mod conventions;
mod demo;
mod exports;
pub(crate) mod faults;
mod inputs;
mod inspect;
mod iozone;
mod lab;
mod list;
mod locate;
pub(crate) mod metrics;
mod outputs;
mod random;
mod recipes;
pub(crate) mod replay;
mod report;
mod safety;
mod suite;
pub(crate) mod unattended;
mod verify;
pub(crate) mod watch;

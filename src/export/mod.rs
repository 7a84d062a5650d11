//! Presenting a finished [`Report`](crate::report::Report): solnet-style
//! text tables, JSON, CSV of the surface profiles, charts (written to their
//! paths by `crate::output`).
//!
//! Each exporter is a pure function of the report: it must not judge (the
//! medians and verdicts it shows are the report's) and must not read
//! devices. The live display while a check runs is `progress`, apart.

pub mod burnin;
pub mod chart;
pub mod csv;
pub mod doc;
pub mod fleet;
pub mod inspect;
pub mod json;
pub mod list;
pub mod metrics;
pub mod ocp;
pub mod page;
pub mod publish;
pub mod text;
pub mod watch;

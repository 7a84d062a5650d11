//! The JSON document (written by [`crate::output`]).

use crate::report::Report;

/// Serializes the report.
pub fn render(report: &Report) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(report).expect("a report always serializes");
    v.push(b'\n');
    v
}

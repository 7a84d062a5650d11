//! The JSON document (written by [`crate::output`]).

use crate::report::Report;

/// Serializes the report.
pub fn render(report: &Report) -> Vec<u8> {
    document(report)
}

/// Any result as its JSON document, pretty and ending in a newline: the one
/// JSON policy of the check, the burn-in and the fleet report (their types
/// hold no map with other than string keys, so serializing cannot fail).
pub fn document(value: &impl serde::Serialize) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(value).expect("a report always serializes");
    v.push(b'\n');
    v
}

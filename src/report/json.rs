//! The JSON file: written whole to a temporary name and renamed, so a reader
//! (or a crash mid-write) never sees half a document.

use std::fs;
use std::io::Write;
use std::path::Path;

use super::Report;

/// Serializes the report.
pub fn render(report: &Report) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(report).expect("a report always serializes");
    v.push(b'\n');
    v
}

/// Writes `bytes` to `path` atomically (temporary file in the same
/// directory, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.arrayburn-tmp"));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

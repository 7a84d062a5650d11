//! The output rules every command's plan follows: `--out` a directory
//! (made if only its parent is there, never a disk), an output file
//! proven writable, `--record` never standard output, and no two outputs
//! naming one file.
//!
//! It must not write a result (a file proven writable is left as it was).

use std::path::{Path, PathBuf};

use crate::output::{self, Output, parent_dir};

use super::PlanError;

/// `--record FILE`, resolved and proven writable: never standard output
/// (it carries the report).
pub fn record_output(p: Option<&Path>) -> Result<Option<Output>, String> {
    match p {
        Some(p) if p == Path::new("-") => Err("--record -: give a file to record the \
             measurements in (standard output carries the report, or --json -)"
            .into()),
        p => p.map(|p| Output::resolve("--record", p, false)).transpose(),
    }
}

/// Refuses two outputs (`outputs`, and the files of the `--out` bundle
/// `out`) that name the same file.
pub fn refuse_shared<'a>(
    outputs: impl IntoIterator<Item = &'a Output>,
    out: Option<&Path>,
) -> Result<(), String> {
    let mut named: Vec<(String, PathBuf)> = outputs.into_iter().map(output::named).collect();
    if let Some(p) = out {
        named.extend(output::bundle::FILES.iter().map(|f| {
            let file = p.join(f);
            (format!("--out {}", file.display()), output::identity_of(&file))
        }));
    }
    output::refuse_duplicates(named)
}

/// The `--out` directory is used if it exists, created if only its parent
/// does; files must be creatable in it (or in the parent). Nothing is left
/// here.
pub fn check_output_dir(p: &Path) -> Result<(), PlanError> {
    if p.exists() && !p.is_dir() {
        use std::os::unix::fs::FileTypeExt;
        let what = match std::fs::metadata(p).map(|m| m.file_type()) {
            Ok(t) if t.is_block_device() => "a block device (results are never written to a disk)",
            Ok(t) if t.is_file() => "a file",
            _ => "not a directory",
        };
        return Err(PlanError::Output(format!(
            "--out {}: is {what}; --out takes a directory (created if missing), the JSON alone goes to --json FILE",
            p.display()
        )));
    }
    if let Some(other) = not_a_bundle(p) {
        return Err(PlanError::Output(format!(
            "--out {}: holds {other}, which no arrayburn run wrote (it would write among them and replace any of the same name); name a new or empty directory, or the bundle of an earlier run",
            p.display()
        )));
    }
    let parent = parent_dir(p);
    if !p.exists() && !parent.is_dir() {
        return Err(PlanError::Output(format!(
            "--out {}: directory {} does not exist; create it or choose another path",
            p.display(),
            parent.display()
        )));
    }
    let dir = if p.exists() { p } else { parent };
    output::Dir::open(dir).and_then(|d| d.probe()).map_err(|e| {
        PlanError::Output(format!(
            "--out {}: cannot write in {} ({e}); choose a writable directory",
            p.display(),
            dir.display()
        ))
    })
}

/// In an existing directory `p` that is neither empty nor a bundle an
/// arrayburn run wrote (its `report.json`, or nothing but a bundle's
/// files and the temporary files a run writes them through, one a crash
/// may leave): the first entry of something else, by name; None otherwise.
fn not_a_bundle(p: &Path) -> Option<String> {
    use crate::output::bundle::{CHARTS, FILES, JSON};
    let entries = std::fs::read_dir(p).ok()?;
    if p.join(JSON).is_file() {
        return None;
    }
    let mut names: Vec<String> =
        entries.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned())).collect();
    names.sort();
    let ours = |n: &str| n == CHARTS || FILES.contains(&n) || n.ends_with(".arrayburn-tmp");
    names.into_iter().find(|n| !ours(n)).map(|n| format!("'{n}'"))
}

/// A file the run will create (iozone's test files) must be creatable: its
/// directory exists and it is not a directory itself. Nothing is created
/// here.
pub fn check_output_path(flag: &str, p: &Path) -> Result<(), PlanError> {
    let parent = parent_dir(p);
    if p.is_dir() {
        return Err(PlanError::Output(format!(
            "{flag} {}: is a directory; give a file name inside it",
            p.display()
        )));
    }
    if !parent.is_dir() {
        return Err(PlanError::Output(format!(
            "{flag} {}: directory {} does not exist; create it or choose another path",
            p.display(),
            parent.display()
        )));
    }
    Ok(())
}

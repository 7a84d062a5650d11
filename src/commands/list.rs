//! `arrayburn list`: the disks on this machine, from sysfs. Reads no data.

use anyhow::{Context, Result};

use crate::cli::ListArgs;
use crate::device::{self, SystemPaths, sysfs};
use crate::export::list::{Entry, table};
use crate::outcome::Outcome;
use crate::output::Output;

/// Lists disks.
pub fn run(args: &ListArgs, stop: &crate::stop::StopFlag) -> Result<Outcome> {
    let json = args
        .json
        .as_deref()
        .map(|p| Output::resolve("--json", p, true).map_err(anyhow::Error::msg))
        .transpose()?;
    let paths = SystemPaths::real();
    let mut entries =
        if args.devices.is_empty() { all(&paths, args.all) } else { named(&paths, &args.devices)? };
    crate::judge::links::settle(entries.iter_mut().map(|e| &mut e.identity));
    if let Some(o) = json {
        let doc = serde_json::to_string_pretty(&entries)? + "\n";
        o.write(doc.as_bytes(), true, stop)
            .with_context(|| format!("writing --json {}", o.given.display()))?;
    } else {
        use std::io::Write;
        let shown = table(&entries, crate::width::of_stdout());
        let _ = std::io::stdout().lock().write_all(shown.as_bytes());
    }
    Ok(Outcome::Healthy)
}

fn entry(d: device::BlockDevice) -> Entry {
    Entry { path: d.given, identity: d.identity, partition_of: d.partition_of, in_use: d.in_use }
}

fn named(paths: &SystemPaths, names: &[String]) -> Result<Vec<Entry>> {
    names.iter().map(|n| Ok(entry(device::resolve(paths, n, true)?))).collect()
}

/// Every disk in /sys/block with a medium; virtual ones only with `--all`.
fn all(paths: &SystemPaths, include_virtual: bool) -> Vec<Entry> {
    sysfs::disk_names(paths)
        .into_iter()
        .filter(|n| include_virtual || !sysfs::is_virtual(n))
        .filter_map(|n| device::resolve(paths, &paths.dev.join(&n).to_string_lossy(), true).ok())
        // A disk of size 0 only where its format says why (a SAS drive of
        // 520-byte sectors): named, with the way out.
        .filter(|d| d.identity.size_bytes > 0 || d.identity.format.is_some())
        .map(entry)
        .collect()
}

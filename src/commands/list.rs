//! `arrayburn list`: the disks on this machine, from sysfs. Reads no data.

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::ListArgs;
use crate::device::{self, Identity, InUse, SystemPaths, sysfs};
use crate::grid::Grid;
use crate::outcome::Outcome;
use crate::output::Output;
use crate::units::human_bytes;

/// One row of `list --json FILE`.
#[derive(Debug, Serialize)]
struct Entry {
    /// The path listed.
    path: String,
    #[serde(flatten)]
    identity: Identity,
    /// For a partition, its disk's kernel name.
    partition_of: Option<String>,
    /// Why it is in use; empty when idle.
    in_use: Vec<InUse>,
}

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

/// The disks as a table in `width` columns (a terminal's; none: every
/// column), the columns left out named.
fn table(entries: &[Entry], width: Option<usize>) -> String {
    let mut t = Grid::new(&[
        "Disk",
        "By-id",
        "Model",
        "Serial",
        "Firmware",
        "Size",
        "Bytes",
        "Sector",
        "Rot",
        "Rm",
        "RO",
        "Transport",
        "Controller",
        "Slot",
        "Link",
        "In use",
    ])
    .optional(&[6, 1, 9, 10, 4, 12, 13, 7, 8, 14, 3, 11]);
    let yn = |b: bool| if b { "yes" } else { "no" };
    for e in entries {
        let id = &e.identity;
        let by_id = id.by_id.as_deref().and_then(|p| p.rsplit('/').next()).unwrap_or("-");
        let uses: Vec<String> = e.in_use.iter().map(|u| u.to_string()).collect();
        t.row(vec![
            e.path.clone(),
            by_id.to_string(),
            id.model.clone().unwrap_or_else(|| "-".into()),
            id.serial.clone().unwrap_or_else(|| "-".into()),
            id.firmware.clone().unwrap_or_else(|| "-".into()),
            human_bytes(id.size_bytes),
            id.size_bytes.to_string(),
            format!("{}/{}", id.logical_block_size, id.physical_block_size),
            yn(id.rotational).into(),
            yn(id.removable).into(),
            yn(id.read_only).into(),
            id.topology.transport.clone(),
            id.topology.controller_words(),
            id.topology
                .enclosure_slot
                .clone()
                .or_else(|| id.topology.scsi_address.clone())
                .unwrap_or_else(|| "-".into()),
            id.topology.link_words(),
            if uses.is_empty() { "-".into() } else { uses.join("; ") },
        ]);
    }
    // A path with control characters as escapes, as in the table.
    let notes: String = (entries.iter())
        .filter_map(|e| {
            let id = &e.identity;
            let path = crate::escape::terminal(&e.path);
            if let Some(f) = id.format.as_ref() {
                let said = format!("{path}: {}", f.sentence(&id.name));
                return Some(format!("{}\n", crate::width::wrap(&said, width, "", "  ")));
            }
            let driver = id.topology.controller.as_ref().and_then(|c| c.driver.as_deref());
            let c = device::raid::volume(driver, id.vendor.as_deref(), id.model.as_deref(), None)?;
            let said = format!(
                "{path}: {}; `arrayburn inspect {path}` reads its drives through the controller (smartctl -d {},N)",
                c.volume_words(),
                c.passthrough
            );
            Some(format!("{}\n", crate::width::wrap(&said, width, "", "  ")))
        })
        .collect();
    let (shown, left_out) = t.text_in(width);
    let left_out = match left_out.is_empty() {
        true => String::new(),
        false => {
            let said = format!(
                "(Columns left out at this width: {}. A wider terminal and --json have them.)",
                left_out.join(", ")
            );
            format!("{}\n", crate::width::wrap(&said, width, "", " "))
        }
    };
    format!("{shown}\n{notes}{left_out}")
}

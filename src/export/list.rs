//! `arrayburn list` laid out: a row per disk (its `--json` as the rows
//! are), the table at a terminal's width with the columns left out named.
//!
//! It must not read a disk or sysfs (the command did).

use serde::Serialize;

use crate::device::{self, Identity, InUse};
use crate::grid::Grid;
use crate::units::human_bytes;

/// One row of `list --json FILE`.
#[derive(Debug, Serialize)]
pub struct Entry {
    /// The path listed.
    pub path: String,
    #[serde(flatten)]
    pub identity: Identity,
    /// For a partition, its disk's kernel name.
    pub partition_of: Option<String>,
    /// Why it is in use; empty when idle.
    pub in_use: Vec<InUse>,
}

/// The disks as a table in `width` columns (a terminal's; none: every
/// column), the columns left out named.
pub fn table(entries: &[Entry], width: Option<usize>) -> String {
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

//! The surface profiles as CSV, one row per disk, pass and bucket: for a
//! spreadsheet or a plotting script. A pure function of the [`Report`].

use crate::report::Report;
use crate::units::fraction_of;

/// The CSV columns.
pub const HEADER: [&str; 8] =
    ["pass", "disk", "bucket", "start_byte", "end_byte", "bytes", "reads", "mb_per_s"];

/// Renders every surface profile in the report.
pub fn render(report: &Report) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(HEADER);
    for p in &report.passes {
        let pass = p.kind.name();
        for d in &p.disks {
            let size = report.disk(&d.path).map_or(0, |x| x.identity.size_bytes);
            let n = d.surface.buckets as u64;
            let s = &d.surface;
            for (i, ((bytes, reads), mbps)) in
                s.bytes.iter().zip(&s.reads).zip(&s.mb_per_s).enumerate()
            {
                let edge = |k: u64| fraction_of(size, k, n);
                let speed = mbps.map(|v| format!("{v:.3}")).unwrap_or_default();
                let row = [
                    pass.to_string(),
                    d.path.clone(),
                    i.to_string(),
                    edge(i as u64).to_string(),
                    edge(i as u64 + 1).to_string(),
                    bytes.to_string(),
                    reads.to_string(),
                    speed,
                ];
                let _ = w.write_record(&row);
            }
        }
    }
    w.into_inner().unwrap_or_default()
}

//! `-b FILE`: the report as a BIFF2 worksheet, the format iozone writes
//! (spec §8.7) and spreadsheet programs still open: BOF, LABEL and NUMBER
//! records, EOF, little-endian.

use super::args::Config;
use super::output::Results;
use super::output::{EXCEL_TITLES, excel_cell, excel_columns};
use super::throughput::PHASES;

/// The BIFF2 bytes.
#[derive(Default)]
struct Sheet(Vec<u8>);

impl Sheet {
    fn record(&mut self, opcode: u16, body: &[u8]) {
        self.0.extend_from_slice(&opcode.to_le_bytes());
        self.0.extend_from_slice(&(body.len() as u16).to_le_bytes());
        self.0.extend_from_slice(body);
    }

    fn cell_head(row: u16, col: u16) -> Vec<u8> {
        let mut b = Vec::with_capacity(19);
        b.extend_from_slice(&row.to_le_bytes());
        b.extend_from_slice(&col.to_le_bytes());
        b.extend_from_slice(&[0, 0, 0]);
        b
    }

    /// A text cell: iozone's fixed 256-byte string (at most 255 used).
    fn label(&mut self, row: u16, col: u16, text: &str) {
        let bytes = &text.as_bytes()[..text.len().min(255)];
        let mut b = Self::cell_head(row, col);
        b.push(bytes.len() as u8);
        b.extend_from_slice(bytes);
        b.resize(b.len() + 256 - bytes.len(), 0);
        self.record(0x0004, &b);
    }

    fn number(&mut self, row: u16, col: u16, v: f64) {
        let mut b = Self::cell_head(row, col);
        b.extend_from_slice(&v.to_le_bytes());
        self.record(0x0003, &b);
    }
}

/// Labels of the single/auto reports in the spreadsheet (capitalised as
/// iozone writes them there).
fn sheet_title(col: usize) -> String {
    let t = EXCEL_TITLES[col].replace(" report", " Report");
    match t.as_str() {
        "Re-Reader Report" => "Re-reader Report".into(),
        "Re-Fwrite Report" => "Re-fwrite Report".into(),
        "Re-Fread Report" => "Re-fread Report".into(),
        "Re-Pwrite Report" => "Re-pwrite Report".into(),
        "Re-Pread Report" => "Re-pread Report".into(),
        "Random read Report" => "Random Read Report".into(),
        "Random write Report" => "Random Write Report".into(),
        "Backward read Report" => "Backward Read Report".into(),
        "Record rewrite Report" => "Record Rewrite Report".into(),
        "Stride read Report" => "Stride Read Report".into(),
        _ => t,
    }
}

/// The worksheet of a run's results.
pub fn render(c: &Config, r: &Results) -> Vec<u8> {
    let mut s = Sheet::default();
    s.record(0x0009, &[0x02, 0x00, 0x10, 0x00]);
    s.label(0, 0, &format!("{} ", c.command_line.join(" ")));
    if c.throughput() {
        let axis = if c.threads { "threads" } else { "processes" };
        s.label(
            1,
            0,
            &format!("Throughput report Y-axis is type of test X-axis is number of {axis}"),
        );
        s.label(2, 0, &format!("Record size = {} kBytes", r.reclen / 1024));
        s.label(3, 0, if c.ops { "Output is in ops/sec" } else { "Output is in kBytes/sec" });
        let counts = c.process_counts();
        let ran = PHASES.iter().filter(|p| r.blocks.iter().any(|b| b.phase == **p));
        for (phase, row) in ran.zip(4u16..) {
            s.label(row, 0, &format!("{:>15} ", phase.label()));
            for (i, n) in counts.iter().enumerate() {
                let v = r
                    .blocks
                    .iter()
                    .find(|b| b.phase == *phase && b.count == *n)
                    .map_or(0.0, |b| b.children_see);
                s.number(row, 2 + i as u16, v);
            }
        }
    } else {
        s.label(1, 0, " ");
        s.label(2, 0, "The top row is records sizes, the left column is file sizes");
        let mut sizes: Vec<u64> = r.rows.iter().map(|x| x.kb).collect();
        sizes.dedup();
        let mut row = 3u16;
        for col in excel_columns(c) {
            s.label(row, 0, &sheet_title(col));
            row += 1;
            for (i, rec) in r.recs.iter().enumerate() {
                s.number(row, 1 + i as u16, (rec / 1024) as f64);
            }
            row += 1;
            for &kb in &sizes {
                s.number(row, 0, kb as f64);
                for (i, &rec) in r.recs.iter().filter(|x| **x <= kb * 1024).enumerate() {
                    s.number(row, 1 + i as u16, excel_cell(c, &r.rows, kb, rec, col) as f64);
                }
                row += 1;
            }
        }
    }
    s.record(0x000a, &[]);
    s.0
}

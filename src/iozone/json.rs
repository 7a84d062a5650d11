//! `--json FILE`: every number a run measured, so nobody scrapes text.
//! Each result has the test, the file and record size, the process count,
//! the throughput in bytes/s and in the unit iozone prints.

use std::time::SystemTime;

use serde::Serialize;

use super::args::Config;
use super::io::Unit;
use super::output::Results;
use super::single::COLUMNS;
use crate::header::{Header, Kind};
use crate::units::rfc3339_local;

#[derive(Serialize)]
struct Doc<'a> {
    /// Tool, kind (`"iozone"`), host, machine, times (UTC), command line,
    /// interrupted and complete ([`Header`], flattened).
    #[serde(flatten)]
    header: Header,
    iozone_compatible: &'static str,
    /// When the run began: RFC 3339, local time with its offset.
    run_began: &'a str,
    mode: &'static str,
    /// "kB/s" (kB = 1024 bytes), "ops/s" or "us/op".
    unit: &'static str,
    o_direct: bool,
    /// True with --huge-pages: records moved through 2 MiB pages, not
    /// iozone's 4 KiB ones (faster with O_DIRECT: not iozone's numbers).
    huge_pages: bool,
    /// `-V`: the byte every byte of the records was, each read checked
    /// byte by byte (iozone: "performance measurements are invalid in
    /// this mode"); null: iozone's light pattern.
    verify_byte: Option<u8>,
    /// Why the run stopped early (a failed process, a full disk); null
    /// when it ran to the end or was interrupted.
    error: Option<&'a str>,
    warnings: &'a [String],
    results: Vec<Entry>,
}

#[derive(Serialize)]
struct Entry {
    test: String,
    file_kb: u64,
    record_kb: u64,
    processes: usize,
    /// Bytes per second (single/auto: this column's; throughput: the
    /// children's sum).
    bytes_per_s: f64,
    /// The number iozone prints (kB/s, ops/s or µs/op).
    value: f64,
    ops: u64,
    seconds: Option<f64>,
    /// Throughput mode only.
    parent_sees: Option<f64>,
    min_per_process: Option<f64>,
    max_per_process: Option<f64>,
    avg_per_process: Option<f64>,
    min_xfer: Option<f64>,
}

/// The JSON document of a run.
pub fn render(c: &Config, r: &Results, began: SystemTime) -> Vec<u8> {
    let unit = Unit::of(c);
    let mut results = Vec::new();
    for row in &r.rows {
        for (k, m) in row.cols.iter().enumerate() {
            let Some(m) = m else { continue };
            results.push(Entry {
                test: COLUMNS[k].into(),
                file_kb: row.kb,
                record_kb: row.reclen / 1024,
                processes: 1,
                bytes_per_s: if m.secs > 0.0 { m.bytes as f64 / m.secs } else { 0.0 },
                value: unit.integer(m) as f64,
                ops: m.ops,
                seconds: Some(m.secs),
                parent_sees: None,
                min_per_process: None,
                max_per_process: None,
                avg_per_process: None,
                min_xfer: None,
            });
        }
    }
    for b in &r.blocks {
        // The printed figure is kB/s (1024 bytes), or ops/s of one record.
        let bytes = if c.ops { r.reclen as f64 } else { 1024.0 };
        results.push(Entry {
            test: b.phase.label().into(),
            file_kb: r.kb,
            record_kb: r.reclen / 1024,
            processes: b.count,
            bytes_per_s: b.children_see * bytes,
            value: b.children_see,
            ops: 0,
            seconds: None,
            parent_sees: Some(b.parent_sees),
            min_per_process: Some(b.min),
            max_per_process: Some(b.max),
            avg_per_process: Some(b.avg),
            min_xfer: Some(b.min_xfer),
        });
    }
    let doc = Doc {
        header: Header::now(Kind::Iozone, began, c.command_line.clone())
            .ended(r.interrupted, r.error.is_none()),
        iozone_compatible: "3.487",
        run_began: &rfc3339_local(began),
        mode: if c.throughput() {
            "throughput"
        } else if c.auto_mode() {
            "auto"
        } else {
            "single"
        },
        unit: match unit {
            Unit::KbPerS => "kB/s",
            Unit::OpsPerS => "ops/s",
            Unit::UsecPerOp => "us/op",
        },
        o_direct: c.direct,
        huge_pages: c.huge_pages,
        verify_byte: c.verify_byte,
        error: r.error.as_deref(),
        warnings: &r.warnings,
        results,
    };
    let mut v = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    v.push(b'\n');
    v
}

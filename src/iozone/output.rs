//! iozone's text layouts (spec §8), exactly, so scripts that split its
//! output on whitespace (or grep its labels and take `$4`/`$5`) read ours
//! unchanged: the header block, the single/auto table, the `-R` Excel
//! blocks, the throughput blocks and the throughput `-R` report.

use std::fmt::Write;

use super::args::Config;
use super::io::{Measure, Unit};
use super::single::{COLUMN_TEST, Row};
use super::throughput::{PhaseResult, ThroughputTest};

/// Everything a run measured, for the text, JSON and BIFF outputs.
#[derive(Debug, Default)]
pub struct Results {
    /// Single/auto mode rows.
    pub rows: Vec<Row>,
    /// Record sizes of the Excel header (auto: the whole -y..-q range).
    pub recs: Vec<u64>,
    /// Throughput blocks, per process count in order.
    pub blocks: Vec<PhaseResult>,
    /// Throughput mode: file size (kB) and record size (bytes).
    pub kb: u64,
    pub reclen: u64,
    /// A signal stopped the run.
    pub interrupted: bool,
    /// Why the run failed before the end, if it did.
    pub error: Option<String>,
    /// The page-cache warning, when given.
    pub warnings: Vec<String>,
}

const CONTRIBUTORS: [&str; 9] = [
    "\tContributors:William Norcott, Don Capps, Isom Crawford, Kirby Collins",
    "\t             Al Slater, Scott Rhine, Mike Wisner, Ken Goss",
    "\t             Steve Landherr, Brad Smith, Mark Kelly, Dr. Alain CYR,",
    "\t             Randy Dunlap, Mark Montague, Dan Million, Gavin Brebner,",
    "\t             Jean-Marc Zucconi, Jeff Blomberg, Benny Halevy, Dave Boone,",
    "\t             Erik Habbinga, Kris Strecker, Walter Wong, Joshua Root,",
    "\t             Fabrice Bacchella, Zhenghua Xue, Qin Li, Darren Sawyer,",
    "\t             Vangel Bojaxhi, Ben England, Vikentsi Lapa,",
    "\t             Alexey Skidanov, Sudhir Kumar.",
];

/// "process"/"thread" as `-T` says.
fn who(c: &Config) -> &'static str {
    if c.threads { "thread" } else { "process" }
}

/// The header block (§8.1), up to and including the stride line, plus the
/// throughput-mode process lines. `warnings` go right after the splash
/// lines (the page-cache warning).
pub fn header(c: &Config, began: &str, warnings: &[String]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "\tIozone: Performance Test of File I/O");
    let _ = writeln!(o, "\t        Version $Revision: 3.487 $");
    let _ = writeln!(o, "\t\tCompiled for 64 bit mode.");
    let paging = if c.huge_pages {
        "; --huge-pages: 2 MiB-page buffers, numbers not comparable with iozone's"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "\t\tBuild: arrayburn-{} (iozone-compatible{paging}) \n",
        env!("CARGO_PKG_VERSION")
    );
    for line in CONTRIBUTORS {
        let _ = writeln!(o, "{line}");
    }
    let _ = writeln!(o, "\n\tRun began: {began}\n");
    for s in &c.splash {
        if s.is_empty() {
            let _ = writeln!(o);
        } else {
            let _ = writeln!(o, "\t{s}");
        }
    }
    for w in warnings {
        let _ = writeln!(o, "\t{w}");
    }
    let _ = writeln!(o, "\tCommand line used: {}", c.command_line.join(" "));
    if !c.ops && !c.usec {
        let _ = writeln!(o, "\tOutput is in kBytes/sec");
    }
    let _ = writeln!(o, "\tTime Resolution = 0.000001 seconds.");
    let _ = writeln!(o, "\tProcessor cache size set to {} kBytes.", c.cache_kb);
    let _ = writeln!(o, "\tProcessor cache line size set to {} bytes.", c.cache_line);
    let _ = writeln!(o, "\tFile stride size set to {} * record size.", c.stride);
    if c.throughput() {
        let counts = c.process_counts();
        if c.lower.is_some() || c.upper.is_some() {
            let _ = writeln!(o, "\tMin {} = {} ", who(c), counts.first().unwrap_or(&1));
            let _ = writeln!(o, "\tMax {} = {} ", who(c), counts.last().unwrap_or(&1));
        }
        let n = if c.counts.is_empty() {
            counts.first().copied().unwrap_or(1)
        } else {
            c.counts.last().copied().unwrap_or(1)
        };
        let plural = if c.threads {
            if n == 1 { "thread" } else { "threads" }
        } else if n == 1 {
            "process"
        } else {
            "processes"
        };
        let _ = writeln!(o, "\tThroughput test with {n} {plural}");
    }
    o
}

/// Right edges of the 17 data columns of the single/auto table (§8.2),
/// after kB (16) and reclen (24).
const EDGES: [usize; 17] =
    [33, 42, 51, 60, 69, 78, 87, 97, 107, 116, 125, 134, 143, 152, 161, 169, 178];
/// Width of each column (pread is 8 wide, as iozone prints it).
fn width(col: usize) -> usize {
    let prev = if col == 0 { 24 } else { EDGES[col - 1] };
    EDGES[col] - prev
}

/// The two header lines of the table.
pub fn table_header(c: &Config) -> String {
    let cols = if c.pwrite_tests { 17 } else { 13 };
    let top = "                                                              random    random     bkwd    record    stride                                    ";
    let mut line1 = top.to_string();
    let mut line2 = String::from(
        "              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread",
    );
    if cols == 17 {
        line1.push_str(&" ".repeat(178 - 143));
        line2.push_str("  pwrite repwrite   pread   repread");
    }
    format!("{line1}\n{line2}\n")
}

/// One data row, or blanks where a test was not selected (widths as
/// iozone's, fread/freread's 17-wide blank included).
pub fn table_row(c: &Config, row: &Row) -> String {
    let unit = Unit::of(c);
    let cols = if c.pwrite_tests { 17 } else { 13 };
    let mut o = format!("{:>16}{:>8}", row.kb, row.reclen / 1024);
    let mut col = 0;
    while col < cols {
        let pair = matches!(col, 0 | 2 | 4 | 9 | 11 | 13 | 15);
        let span = if pair { 2 } else { 1 };
        if row.cols[col].is_none() {
            let mut blank: usize = (col..col + span).map(width).sum();
            // iozone pads a deselected fread pair with 17 blanks, not 18:
            // kept where it only shortens the line, not with -E, where it
            // would shift the pwrite and pread columns.
            if col == 11 && cols == 13 {
                blank -= 1;
            }
            o.push_str(&" ".repeat(blank));
        } else {
            for k in col..col + span {
                let v = row.cols[k].map(|m| unit.integer(&m)).unwrap_or(0);
                let w = width(k);
                let _ = write!(o, "{v:>w$}");
            }
        }
        col += span;
    }
    o.push('\n');
    o
}

/// The row of `-A` (obsolete auto mode 2): kB, reclen, write, rewrite,
/// read, reread.
pub fn auto2_row(c: &Config, row: &Row) -> String {
    let unit = Unit::of(c);
    let v = |k: usize| row.cols[k].map(|m| unit.integer(&m)).unwrap_or(0);
    format!("{:>16}{:>8}{:>9}{:>9}{:>9}{:>9}\n", row.kb, row.reclen / 1024, v(0), v(1), v(2), v(3))
}

/// Titles of the single/auto `-R` reports, by column.
pub const EXCEL_TITLES: [&str; 17] = [
    "Writer report",
    "Re-writer report",
    "Reader report",
    "Re-Reader report",
    "Random read report",
    "Random write report",
    "Backward read report",
    "Record rewrite report",
    "Stride read report",
    "Fwrite report",
    "Re-Fwrite report",
    "Fread report",
    "Re-Fread report",
    "Pwrite report",
    "Re-Pwrite report",
    "Pread report",
    "Re-Pread report",
];

/// The columns the `-R` reports cover: selected tests, in order.
pub fn excel_columns(c: &Config) -> Vec<usize> {
    let cols = if c.pwrite_tests { 17 } else { 13 };
    (0..cols).filter(|&k| c.selected(COLUMN_TEST[k])).collect()
}

/// The cell value of a file size and record size in a column: the
/// measured integer, or 0 for a pair not run (crossover).
pub fn excel_cell(c: &Config, rows: &[Row], kb: u64, rec: u64, col: usize) -> u64 {
    rows.iter()
        .find(|r| r.kb == kb && r.reclen == rec)
        .and_then(|r| r.cols[col])
        .map(|m: Measure| Unit::of(c).integer(&m))
        .unwrap_or(0)
}

/// The "Excel output is below:" block (§8.3).
pub fn excel(c: &Config, rows: &[Row], recs: &[u64]) -> String {
    let mut o = String::from("Excel output is below:\n");
    let mut sizes: Vec<u64> = rows.iter().map(|r| r.kb).collect();
    sizes.dedup();
    for col in excel_columns(c) {
        let _ = write!(o, "\n\"{}\"\n      ", EXCEL_TITLES[col]);
        for r in recs {
            let _ = write!(o, "  \"{}\"", r / 1024);
        }
        o.push('\n');
        for &kb in &sizes {
            let _ = write!(o, "\"{kb}\"  ");
            for &r in recs.iter().filter(|r| **r <= kb * 1024) {
                let _ = write!(o, " {} ", excel_cell(c, rows, kb, r, col));
            }
            o.push('\n');
        }
    }
    o
}

/// COUNT and LABEL of a throughput block line, and the tabs after it
/// (Children / Parent), per spec §8.4.
fn block_label(
    p: ThroughputTest,
    count: usize,
) -> (String, &'static str, &'static str, &'static str) {
    let (wide, label, ct, pt) = match p {
        ThroughputTest::InitialWrite => (true, "initial writers ", "\t", "\t"),
        ThroughputTest::Rewrite => (true, "rewriters ", "\t", "\t"),
        ThroughputTest::Read => (true, "readers ", "\t\t", "\t\t"),
        ThroughputTest::ReRead => (false, "re-readers ", "\t", "\t"),
        ThroughputTest::ReverseRead => (false, "reverse readers ", "\t", "\t"),
        ThroughputTest::StrideRead => (false, "stride readers ", "\t", "\t"),
        ThroughputTest::RandomRead => (false, "random readers ", "\t", "\t"),
        ThroughputTest::Mixed => (false, "mixed workload ", "\t", "\t"),
        ThroughputTest::RandomWrite => (false, "random writers ", "\t", "\t"),
        ThroughputTest::Pwrite => (false, "pwrite writers ", "\t", "\t"),
        ThroughputTest::Pread => (false, "pread readers ", "\t", "\t"),
        ThroughputTest::Fwrite => (true, "fwriters ", "\t", "\t\t"),
        ThroughputTest::Fread => (true, "freaders ", "\t", "\t\t"),
    };
    let n = if wide { format!("{count:2}") } else { count.to_string() };
    (n, label, ct, pt)
}

/// "Each process writes a N kByte file in M kByte records".
pub fn each_line(c: &Config, kb: u64, reclen: u64) -> String {
    format!("\tEach {} writes a {kb} kByte file in {} kByte records\n", who(c), reclen / 1024)
}

/// One phase's six lines (and `-C`'s per-child lines).
pub fn block(c: &Config, b: &PhaseResult) -> String {
    let (rate, amount) = if c.ops { ("ops/sec", "ops") } else { ("kB/sec", "kB") };
    let who = who(c);
    let (n, label, ct, pt) = block_label(b.phase, b.count);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n\tChildren see throughput for {n} {label}{ct}= {:10.2} {rate}",
        b.children_see
    );
    let _ =
        writeln!(o, "\tParent sees throughput for {n} {label}{pt}= {:10.2} {rate}", b.parent_sees);
    let _ = writeln!(o, "\tMin throughput per {who} \t\t\t= {:10.2} {rate} ", b.min);
    let _ = writeln!(o, "\tMax throughput per {who} \t\t\t= {:10.2} {rate}", b.max);
    let _ = writeln!(o, "\tAvg throughput per {who} \t\t\t= {:10.2} {rate}", b.avg);
    let _ = writeln!(o, "\tMin xfer \t\t\t\t\t= {:10.2} {amount}", b.min_xfer);
    if c.per_child {
        for (k, ch) in b.children.iter().enumerate() {
            let _ = writeln!(
                o,
                "\tChild[{k}] xfer count = {:10.2} {amount}, Throughput = {:10.2} {rate}",
                ch.actual, ch.throughput
            );
        }
    }
    o
}

/// The throughput `-R` report (§8.5): one row per phase, one column per
/// process count, the "Children see" figures.
pub fn throughput_report(c: &Config, reclen: u64, rows: &[(ThroughputTest, Vec<f64>)]) -> String {
    let axis = if c.threads { "threads" } else { "processes" };
    let unit = if c.ops { "ops/sec" } else { "kBytes/sec" };
    let mut o = String::new();
    let _ =
        writeln!(o, "\n\"Throughput report Y-axis is type of test X-axis is number of {axis}\"");
    let _ = writeln!(o, "\"Record size = {} kBytes \"", reclen / 1024);
    let _ = writeln!(o, "\"Output is in {unit}\"\n");
    for (phase, values) in rows {
        let _ = write!(o, "\"{:>15} \"", phase.label());
        for v in values {
            let _ = write!(o, " {v:10.2} ");
        }
        o.push_str("\n\n");
    }
    o
}

/// iozone's `-h` text, for the flags arrayburn runs.
pub const HELP: &str = "\
arrayburn iozone: iozone 3.487's command line, tests and output, better behaved.
Usage: arrayburn iozone [options]
  -a          auto mode (file sizes -n..-g, record sizes -y..-q)
  -A          obsolete auto mode 2 (as -az -i0 -i1, six columns)
  -z          with -a: no crossover (small records on files over 16 MB too)
  -n SIZE     auto: minimum file size (default 64k)
  -g SIZE     auto: maximum file size (default 512m)
  -y SIZE     auto: minimum record size (default 4k)
  -q SIZE     auto: maximum record size (default 16m)
  -i N        test N (repeatable): 0=write/rewrite 1=read/reread 2=random read/write
              3=backward read 4=record rewrite 5=stride read 6=fwrite/frewrite
              7=fread/freread 8=mixed (throughput mode) 9=pwrite 10=pread
  -r SIZE     record size (repeatable: auto over the list)
  -s SIZE     file size (repeatable: auto over the list); a bare number is kB
  -f FILE     test file (single and auto mode; default ./iozone.tmp)
  -t N        throughput mode with N processes (repeatable)
  -l N, -u N  throughput mode, every count from -l to -u
  -F F1 F2 .. one file per process (after -t/-l/-u)
  -T          threads (the wording; arrayburn always runs threads)
  -I          O_DIRECT          -o  O_SYNC writes     -m  16 MiB multi-buffer
  -c          close() timed     -e  fsync() timed     -p  purge the CPU cache
  -O          ops/sec           -N  usec/op           -j N  stride (default 17)
  -R          Excel report      -b FILE  BIFF spreadsheet too (implies -R)
  -C          per-child numbers -x  no stonewalling   -w  keep the test files
  -+n         no re-tests       -E  pwrite/pread in single and auto mode
  -M          print uname -a    -h  this help
arrayburn's own:
  --json FILE     every number, machine-readable
  --pause SECONDS pause between throughput phases (iozone: 2)
  --huge-pages    move records through 2 MiB pages: faster than iozone
                  with -I, so the numbers are no longer iozone's
";

//! Single and auto mode: for each (file size, record size) pair, iozone's
//! tests 0–10 in order on one file, each a timed loop (spec §5.1), the file
//! removed at the end unless `-w`.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Instant;

use super::args::Config;
use super::io::{
    Access, Buffer, Fill, Measure, Reach, check_stop, open, order, purge_cpu_cache, record_io,
    short_file, timed,
};
use crate::stop::StopFlag;

/// Columns of a row, in iozone's order.
pub const COLUMNS: [&str; 17] = [
    "write",
    "rewrite",
    "read",
    "reread",
    "random read",
    "random write",
    "bkwd read",
    "record rewrite",
    "stride read",
    "fwrite",
    "frewrite",
    "fread",
    "freread",
    "pwrite",
    "repwrite",
    "pread",
    "repread",
];

/// The test number (`-i`) that produces each column.
pub const COLUMN_TEST: [u8; 17] = [0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 6, 7, 7, 9, 9, 10, 10];

/// One row of the table: a file size, a record size, and each column's
/// measurement (None: not selected).
#[derive(Debug, Clone)]
pub struct Row {
    pub kb: u64,
    pub reclen: u64,
    pub cols: [Option<Measure>; 17],
}

/// How a timed loop addresses its records.
#[derive(Clone, Copy)]
enum Walk<'o> {
    /// Through the file position (read()/write()).
    Sequential,
    /// Record i at offset i × reclen (pread()/pwrite()).
    Positional,
    /// These records, each reached by an lseek() (iozone's random,
    /// backward, stride and record-rewrite tests).
    At(&'o [u64]),
}

/// The pair's work: file path, records and their size.
struct Pair<'a> {
    c: &'a Config,
    path: &'a Path,
    reclen: u64,
    n: u64,
    stop: &'a StopFlag,
    purge: Vec<u8>,
}

impl Pair<'_> {
    /// A buffer of one record (or `-m`'s work area), filled as asked.
    fn buffer(&self) -> Buffer {
        Buffer::new(self.reclen, self.c.multi_buffer, self.c.huge_pages, Fill::of(self.c))
    }

    fn measure(&self, secs: f64, ops: u64) -> Measure {
        Measure { bytes: ops * self.reclen, ops, secs }
    }

    fn purge(&mut self) {
        if self.c.purge {
            purge_cpu_cache(&mut self.purge);
        }
    }

    /// Test 0 (and 9 with `pwrite`): sequential writes of a new file, then
    /// of the existing one.
    fn write(&mut self, fresh: bool, positional: bool) -> io::Result<Measure> {
        if fresh {
            match std::fs::remove_file(self.path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        let file = open(self.path, Access::Write, self.c, false)?;
        file.sync_all()?;
        let walk = if positional { Walk::Positional } else { Walk::Sequential };
        self.timed_loop(file, self.buffer(), walk, Access::Write)
    }

    /// Test 1 (and 10 with `pread`): sequential reads, after an untimed
    /// priming read of record 0 (test 1 only).
    fn read(&mut self, positional: bool) -> io::Result<Measure> {
        let file = open(self.path, Access::Read, self.c, false)?;
        let mut buf = self.buffer();
        if positional {
            return self.timed_loop(file, buf, Walk::Positional, Access::Read);
        }
        file.sync_all()?;
        let fill = buf.fill();
        record_io(&file, Reach::Positional, Access::Read, buf.record(), 0, fill)?;
        self.timed_loop(file, buf, Walk::Sequential, Access::Read)
    }

    /// Reads (or writes) the records in `order`, each at its offset.
    fn at_offsets(&mut self, order: &[u64], access: Access) -> io::Result<Measure> {
        let file = open(self.path, access, self.c, false)?;
        let buf = self.buffer();
        self.timed_loop(file, buf, Walk::At(order), access)
    }

    /// The timed loop of the read/write/pread/pwrite/offset tests.
    fn timed_loop(
        &mut self,
        file: File,
        mut buf: Buffer,
        walk: Walk,
        access: Access,
    ) -> io::Result<Measure> {
        let (reclen, purge) = (self.reclen, self.c.purge);
        let n = match walk {
            Walk::At(order) => order.len() as u64,
            _ => self.n,
        };
        let mut scratch = std::mem::take(&mut self.purge);
        let fill = buf.fill();
        let secs = timed(self.c, file, self.stop, |f, stop| {
            for i in 0..n {
                check_stop(stop)?;
                if purge {
                    purge_cpu_cache(&mut scratch);
                }
                let (reach, at) = match walk {
                    Walk::Sequential => (Reach::Sequential, i * reclen),
                    Walk::Positional => (Reach::Positional, i * reclen),
                    Walk::At(order) => (Reach::Seek, order[i as usize] * reclen),
                };
                record_io(f, reach, access, buf.record(), at, fill)?;
            }
            Ok(())
        });
        self.purge = scratch;
        Ok(self.measure(secs?, n))
    }

    /// Test 6: fwrite through a stdio-like buffer of one record (never
    /// O_DIRECT or O_SYNC, as iozone's fopen).
    fn fwrite(&mut self) -> io::Result<Measure> {
        let file = super::io::no_follow()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.path)?;
        file.sync_all()?;
        let mut buf = self.buffer();
        let n = self.n;
        let mut w = BufWriter::with_capacity(self.reclen as usize, file);
        let t = Instant::now();
        for _ in 0..n {
            check_stop(self.stop)?;
            self.purge();
            w.write_all(buf.record())?;
        }
        let secs = self.finish_stdio(t, w.into_inner().map_err(|e| e.into_error())?, true)?;
        Ok(self.measure(secs, n))
    }

    /// Test 7: fread through a buffer of one record.
    fn fread(&mut self) -> io::Result<Measure> {
        let file = super::io::no_follow().read(true).open(self.path)?;
        file.sync_all()?;
        let mut buf = self.buffer();
        let n = self.n;
        let mut r = BufReader::with_capacity(self.reclen as usize, file);
        let t = Instant::now();
        for i in 0..n {
            check_stop(self.stop)?;
            self.purge();
            let fill = buf.fill();
            let rec = buf.record();
            r.read_exact(rec).map_err(short_file)?;
            fill.check(rec, i * self.reclen)?;
        }
        let secs = self.finish_stdio(t, r.into_inner(), false)?;
        Ok(self.measure(secs, n))
    }

    /// The end of a stdio test: fflush+fsync timed with `-e`, fclose timed
    /// with `-c`, the rest untimed.
    fn finish_stdio(&self, t: Instant, file: File, wrote: bool) -> io::Result<f64> {
        if self.c.fsync_timed && wrote {
            file.sync_all()?;
        }
        if self.c.close_timed {
            drop(file);
            return Ok(t.elapsed().as_secs_f64());
        }
        let secs = t.elapsed().as_secs_f64();
        if wrote {
            file.sync_all()?;
        }
        Ok(secs)
    }
}

/// A test into column `k` and its re-test (run again, or 0 with `-+n`)
/// into `k + 1`; `run` is told whether it is the re-test.
fn with_retest(
    cols: &mut [Option<Measure>; 17],
    k: usize,
    c: &Config,
    mut run: impl FnMut(bool) -> io::Result<Measure>,
) -> io::Result<()> {
    cols[k] = Some(run(false)?);
    cols[k + 1] = Some(if c.no_retest { Measure::default() } else { run(true)? });
    Ok(())
}

/// Runs the selected tests on one (file size, record size) pair and
/// returns the row. The file is removed at the end unless `-w`.
pub fn run_pair(c: &Config, path: &Path, kb: u64, reclen: u64, stop: &StopFlag) -> io::Result<Row> {
    let mut pair = Pair {
        c,
        path,
        reclen,
        n: kb * 1024 / reclen,
        stop,
        purge: vec![0; (c.cache_kb as usize) << 10],
    };
    let mut cols: [Option<Measure>; 17] = [None; 17];
    let last = if c.pwrite_tests { 10 } else { 8 };
    let result = (|| -> io::Result<()> {
        for test in 0..=last {
            if !c.selected(test) {
                continue;
            }
            match test {
                0 => {
                    with_retest(&mut cols, 0, c, |again| pair.write(!again, false))?;
                }
                1 => {
                    with_retest(&mut cols, 2, c, |_| pair.read(false))?;
                }
                2 => {
                    let p = order::random(pair.n);
                    cols[4] = Some(pair.at_offsets(&p, Access::Read)?);
                    cols[5] = Some(pair.at_offsets(&p, Access::Write)?);
                }
                3 => {
                    let p: Vec<u64> = (0..pair.n).rev().collect();
                    cols[6] = Some(pair.at_offsets(&p, Access::Read)?);
                }
                4 => {
                    let p = vec![0; pair.n as usize];
                    cols[7] = Some(pair.at_offsets(&p, Access::Write)?);
                }
                5 => {
                    let p = order::stride(pair.n, c.stride);
                    cols[8] = Some(pair.at_offsets(&p, Access::Read)?);
                }
                6 => {
                    with_retest(&mut cols, 9, c, |_| pair.fwrite())?;
                }
                7 => {
                    with_retest(&mut cols, 11, c, |_| pair.fread())?;
                }
                9 => {
                    with_retest(&mut cols, 13, c, |_| pair.write(false, true))?;
                }
                10 => {
                    with_retest(&mut cols, 15, c, |_| pair.read(true))?;
                }
                _ => {}
            }
        }
        Ok(())
    })();
    if !c.keep {
        let _ = std::fs::remove_file(path);
    }
    result?;
    Ok(Row { kb, reclen, cols })
}

/// The (file size kB, record size bytes) pairs of auto mode, in order
/// (spec §7), and the record sizes of the Excel header.
pub fn auto_pairs(c: &Config) -> (Vec<(u64, u64)>, Vec<u64>) {
    let explicit_r = !c.records.is_empty();
    let crossover = !(c.no_crossover
        || explicit_r
        || !c.sizes_kb.is_empty()
        || c.min_rec.is_some()
        || c.max_rec.is_some());
    let sizes: Vec<u64> = if !c.sizes_kb.is_empty() {
        c.sizes_kb.clone()
    } else {
        let (lo, hi) = (c.min_file_kb.unwrap_or(64), c.max_file_kb.unwrap_or(524_288));
        std::iter::successors(Some(lo), |s| Some(s * 2)).take_while(|s| *s <= hi).collect()
    };
    let recs: Vec<u64> = if explicit_r {
        c.records.clone()
    } else {
        let (lo, hi) = (c.min_rec.unwrap_or(4096), c.max_rec.unwrap_or(16 << 20));
        std::iter::successors(Some(lo), |r| Some(r * 2)).take_while(|r| *r <= hi).collect()
    };
    let mut pairs = Vec::new();
    for &kb in &sizes {
        for &r in &recs {
            if r > kb * 1024 {
                break;
            }
            if crossover && kb > 16384 && r < 64 << 10 {
                continue;
            }
            pairs.push((kb, r));
        }
    }
    (pairs, recs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(s: &str) -> Config {
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        super::super::args::parse("iozone", &args).unwrap()
    }

    #[test]
    fn auto_mode_sizes_and_the_crossover() {
        let (pairs, recs) = auto_pairs(&cfg("-a -g 64m"));
        assert_eq!(recs.len(), 13, "4 kB to 16 MB");
        assert_eq!(pairs[0], (64, 4096));
        assert_eq!(pairs.iter().filter(|p| p.0 == 64).count(), 5);
        assert!(
            pairs.iter().filter(|p| p.0 == 32768).all(|p| p.1 >= 64 << 10),
            "crossover from 32 MB"
        );
        assert_eq!(pairs.iter().filter(|p| p.0 == 65536).count(), 9);
        let (z, _) = auto_pairs(&cfg("-a -z -g 64m"));
        assert_eq!(z.iter().filter(|p| p.0 == 65536).count(), 13);
        let (q, recs) = auto_pairs(&cfg("-a -n 32K -g 1g -y 32 -q 32"));
        assert_eq!(q.len(), 16);
        assert_eq!(recs, [32 << 10]);
        let (s, _) = auto_pairs(&cfg("-a -n 128m -g 1g -y 64 -q 512"));
        assert_eq!(s.len(), 16);
    }
}

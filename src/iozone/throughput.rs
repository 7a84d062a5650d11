//! Throughput mode (`-t`, `-l`/`-u`): for each process count, iozone's
//! phases (spec §5.2) run by that many children at once, released together,
//! each timing its own loop; the first to finish stops the others' clocks
//! (stonewalling, §6.3) unless `-x`. Children are processes, as iozone's
//! are, or threads with `-T`, as iozone's then are (`children`: the two
//! measure differently here; docs/iozone.md). A child that fails stops the
//! others and ends the run with its error: nothing waits forever.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use super::args::Config;
use super::io::{Access, Buffer, Fill, Reach, open, order, record_io, short_file};
use crate::device::buffer::SharedBuf;
use crate::stop::StopFlag;

/// A phase of throughput mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThroughputTest {
    InitialWrite,
    Rewrite,
    Read,
    ReRead,
    ReverseRead,
    StrideRead,
    RandomRead,
    Mixed,
    RandomWrite,
    Pwrite,
    Pread,
    Fwrite,
    Fread,
}

/// The phases in iozone's order.
pub const PHASES: [ThroughputTest; 13] = [
    ThroughputTest::InitialWrite,
    ThroughputTest::Rewrite,
    ThroughputTest::Read,
    ThroughputTest::ReRead,
    ThroughputTest::ReverseRead,
    ThroughputTest::StrideRead,
    ThroughputTest::RandomRead,
    ThroughputTest::Mixed,
    ThroughputTest::RandomWrite,
    ThroughputTest::Pwrite,
    ThroughputTest::Pread,
    ThroughputTest::Fwrite,
    ThroughputTest::Fread,
];

impl ThroughputTest {
    /// The system calls that reach a record, as iozone's children make
    /// them: read()/write() through the position in the sequential phases,
    /// lseek() first in the offset phases, pread()/pwrite() in theirs.
    pub fn reach(self) -> Reach {
        match self {
            ThroughputTest::ReverseRead
            | ThroughputTest::StrideRead
            | ThroughputTest::RandomRead
            | ThroughputTest::Mixed
            | ThroughputTest::RandomWrite => Reach::Seek,
            ThroughputTest::Pwrite | ThroughputTest::Pread => Reach::Positional,
            _ => Reach::Sequential,
        }
    }

    /// The `-i` test that enables it.
    pub fn test(self) -> u8 {
        match self {
            ThroughputTest::InitialWrite | ThroughputTest::Rewrite => 0,
            ThroughputTest::Read | ThroughputTest::ReRead => 1,
            ThroughputTest::RandomRead | ThroughputTest::RandomWrite => 2,
            ThroughputTest::ReverseRead => 3,
            ThroughputTest::StrideRead => 5,
            ThroughputTest::Fwrite => 6,
            ThroughputTest::Fread => 7,
            ThroughputTest::Mixed => 8,
            ThroughputTest::Pwrite => 9,
            ThroughputTest::Pread => 10,
        }
    }

    /// The label of the `-R` report (spec §8.5), unpadded.
    pub fn label(self) -> &'static str {
        match self {
            ThroughputTest::InitialWrite => "Initial write",
            ThroughputTest::Rewrite => "Rewrite",
            ThroughputTest::Read => "Read",
            ThroughputTest::ReRead => "Re-read",
            ThroughputTest::ReverseRead => "Reverse Read",
            ThroughputTest::StrideRead => "Stride read",
            ThroughputTest::RandomRead => "Random read",
            ThroughputTest::Mixed => "Mixed workload",
            ThroughputTest::RandomWrite => "Random write",
            ThroughputTest::Pwrite => "Pwrite",
            ThroughputTest::Pread => "Pread",
            ThroughputTest::Fwrite => "Fwrite",
            ThroughputTest::Fread => "Fread",
        }
    }

    /// A re-test (its numbers are 0 with `-+n`).
    pub fn is_retest(self) -> bool {
        matches!(self, ThroughputTest::Rewrite | ThroughputTest::ReRead)
    }

    /// Whether the first child to finish stops the others' clocks.
    fn stonewalls(self) -> bool {
        !matches!(self, ThroughputTest::Fwrite | ThroughputTest::Fread)
    }

    /// Whether the phase writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            ThroughputTest::InitialWrite
                | ThroughputTest::Rewrite
                | ThroughputTest::RandomWrite
                | ThroughputTest::Pwrite
                | ThroughputTest::Fwrite
                | ThroughputTest::Mixed
        )
    }
}

/// What one child measured in one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Child {
    /// kB moved (`reclen/1024` per record), or operations with `-O`.
    pub actual: f64,
    /// `actual` per second of the child's own clock.
    pub throughput: f64,
}

/// One phase with one process count: iozone's six numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseResult {
    pub phase: ThroughputTest,
    pub count: usize,
    pub children: Vec<Child>,
    /// Σ child throughput.
    pub children_see: f64,
    /// Σ child actual over the parent's time (release to last exit).
    pub parent_sees: f64,
    pub min: f64,
    pub max: f64,
    pub avg: f64,
    /// Smallest child `actual`.
    pub min_xfer: f64,
}

impl PhaseResult {
    pub fn new(phase: ThroughputTest, children: Vec<Child>, parent_secs: f64) -> Self {
        let count = children.len();
        let children_see: f64 = children.iter().map(|c| c.throughput).sum();
        let total: f64 = children.iter().map(|c| c.actual).sum();
        let fold = |f: fn(f64, f64) -> f64, init: f64, v: fn(&Child) -> f64| {
            children.iter().map(v).fold(init, f)
        };
        Self {
            phase,
            count,
            children_see,
            parent_sees: if parent_secs > 0.0 { total / parent_secs } else { 0.0 },
            min: fold(f64::min, f64::MAX, |c| c.throughput),
            max: fold(f64::max, 0.0, |c| c.throughput),
            avg: children_see / count.max(1) as f64,
            min_xfer: fold(f64::min, f64::MAX, |c| c.actual),
            children,
        }
    }

    /// The block of a skipped re-test (`-+n`): zeros.
    pub fn zero(phase: ThroughputTest, count: usize) -> Self {
        Self {
            phase,
            count,
            children: vec![Child::default(); count],
            children_see: 0.0,
            parent_sees: 0.0,
            min: 0.0,
            max: 0.0,
            avg: 0.0,
            min_xfer: 0.0,
        }
    }
}

/// The phases a configuration runs, in order.
pub fn phases(c: &Config) -> Vec<ThroughputTest> {
    PHASES.iter().copied().filter(|p| c.selected(p.test())).collect()
}

/// The file of child `k`: `-F`'s, or `iozone.DUMMY.k` in the working
/// directory.
pub fn child_file(c: &Config, k: usize) -> PathBuf {
    c.files.get(k).cloned().unwrap_or_else(|| PathBuf::from(format!("iozone.DUMMY.{k}")))
}

/// A child's failure, naming the child and its file; the OS error stays
/// reachable (an EIO is a finding about the storage).
#[derive(Debug, thiserror::Error)]
#[error("child {k} ({}): {source}", path.display())]
pub struct ChildError {
    pub k: usize,
    pub path: PathBuf,
    pub source: io::Error,
}

/// `e` of child `k` as an io::Error of the same kind.
pub fn child_error(k: usize, path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), ChildError { k, path: path.to_path_buf(), source: e })
}

/// How a child meets the others: released together, told when one has
/// finished (the stonewall) or when all must stop.
pub trait Link {
    /// Waits until every child is ready and the parent releases them.
    fn release(&self);
    /// Whether another child has finished (the stonewall).
    fn stonewalled(&self) -> bool;
    /// Whether a child failed or a signal came: stop now.
    fn aborted(&self) -> bool;
    /// This child has finished its loop: the others stonewall.
    fn finished(&self);
}

/// Shared state of one phase's thread children (`-T`).
struct Shared {
    /// Set by the first child to finish (stonewall).
    done: AtomicBool,
    /// Set when a child failed or a signal came: everyone stops.
    abort: AtomicBool,
    first_error: Mutex<Option<io::Error>>,
}

/// Thread children meet through a barrier and shared flags.
struct ThreadLink<'a> {
    barrier: &'a Barrier,
    shared: &'a Shared,
}

impl Link for ThreadLink<'_> {
    fn release(&self) {
        self.barrier.wait();
    }
    fn stonewalled(&self) -> bool {
        self.shared.done.load(Ordering::Relaxed)
    }
    fn aborted(&self) -> bool {
        self.shared.abort.load(Ordering::Relaxed)
    }
    fn finished(&self) {
        self.shared.done.store(true, Ordering::Relaxed);
    }
}

/// One child's loop. Returns its numbers.
pub struct ChildRun<'a> {
    pub c: &'a Config,
    pub phase: ThroughputTest,
    pub k: usize,
    pub path: &'a Path,
    pub reclen: u64,
    /// Records in the file.
    pub n: u64,
    pub link: &'a (dyn Link + Sync),
    pub stop: &'a StopFlag,
    /// With -T, the fread phase's one buffer for every child (iozone's).
    pub fread_buf: Option<&'a SharedBuf>,
}

impl ChildRun<'_> {
    /// The per-record unit of `actual`.
    fn per_record(&self) -> f64 {
        if self.c.ops { 1.0 } else { (self.reclen / 1024) as f64 }
    }

    fn stonewall(&self) -> bool {
        self.phase.stonewalls() && !self.c.no_stonewall
    }

    fn open_file(&self) -> io::Result<File> {
        match self.phase {
            ThroughputTest::Fwrite => super::io::no_follow()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(self.path),
            ThroughputTest::Fread => super::io::no_follow().read(true).open(self.path),
            ThroughputTest::Pwrite => {
                // iozone re-creates the file first (creat).
                super::io::no_follow().write(true).create(true).truncate(true).open(self.path)?;
                open(self.path, Access::Write, self.c, false)
            }
            ThroughputTest::Mixed if self.k % 2 == 1 => {
                open(self.path, Access::Write, self.c, false)
            }
            p if p.writes() => open(self.path, Access::Write, self.c, false),
            _ => open(self.path, Access::Read, self.c, true),
        }
    }

    /// The records in the order this child accesses them, and whether it
    /// writes them.
    fn plan(&self) -> (Vec<u64>, bool) {
        let seq = || (0..self.n).collect::<Vec<u64>>();
        match self.phase {
            ThroughputTest::ReverseRead => ((0..self.n).rev().collect(), false),
            ThroughputTest::StrideRead => (order::stride(self.n, self.c.stride), false),
            ThroughputTest::RandomRead => (order::random(self.n), false),
            ThroughputTest::RandomWrite => (order::random(self.n), true),
            ThroughputTest::Mixed => (order::random(self.n), self.k % 2 == 1),
            p => (seq(), p.writes()),
        }
    }

    /// Opens the file, waits for the release, runs the timed loop.
    pub fn spawn(&self) -> io::Result<Child> {
        let opened = self.open_file();
        self.link.release();
        let file = opened?;
        let (records, writes) = self.plan();
        let access = if writes { Access::Write } else { Access::Read };
        let reach = self.phase.reach();
        // -m: in throughput mode iozone uses the work area for fwrite and
        // fread only; ours is filled with the pattern, so fread is sound.
        let mut buf = Buffer::new(
            self.reclen,
            self.c.multi_buffer && !self.phase.stonewalls(),
            self.c.huge_pages,
            Fill::of(self.c),
        );
        let fill = buf.fill();
        let unbuffered = self.c.direct;
        let mut out = match self.phase {
            ThroughputTest::Fwrite => Some(BufWriter::with_capacity(
                if unbuffered { 0 } else { self.reclen as usize },
                file.try_clone()?,
            )),
            _ => None,
        };
        let mut inp = match self.phase {
            ThroughputTest::Fread => Some(BufReader::with_capacity(
                if unbuffered { 0 } else { self.reclen as usize },
                file.try_clone()?,
            )),
            _ => None,
        };
        if self.phase == ThroughputTest::Fwrite {
            file.sync_all()?;
        }
        let t = Instant::now();
        let mut frozen: Option<Child> = None;
        let mut done = 0u64;
        for &r in &records {
            if self.link.aborted() || self.stop.is_set() {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "stopped"));
            }
            if frozen.is_none() && self.stonewall() && self.link.stonewalled() {
                frozen = Some(self.numbers(done, t));
                // Writers of a new file (initial write; pwrite, which
                // truncates first) finish it, so the phases after read a
                // whole file; the others stop here.
                if !matches!(self.phase, ThroughputTest::InitialWrite | ThroughputTest::Pwrite) {
                    break;
                }
            }
            match (&mut out, &mut inp) {
                (Some(w), _) => w.write_all(buf.record())?,
                (_, Some(rd)) => match self.fread_buf {
                    // A request of a whole stdio buffer bypasses it (as in
                    // glibc's fread and BufReader): read(2) straight into
                    // the one buffer all children share.
                    Some(one) => one.read_exact_from(rd.get_ref(), self.reclen as usize),
                    None => {
                        let rec = buf.record();
                        rd.read_exact(rec).and_then(|()| fill.check(rec, r * self.reclen))
                    }
                }
                .map_err(short_file)?,
                _ => record_io(&file, reach, access, buf.record(), r * self.reclen, fill)?,
            }
            done += 1;
        }
        if let Some(w) = out {
            w.into_inner().map_err(|e| e.into_error())?;
        }
        drop(inp);
        // -e: the fsync inside the child's time; -c: the close too.
        if self.c.fsync_timed {
            file.sync_all()?;
        }
        let untimed = if self.c.close_timed {
            drop(file);
            None
        } else {
            Some(file)
        };
        let mine = self.numbers(done, t);
        self.link.finished();
        if let Some(f) = untimed {
            // Untimed, but inside the parent's time (as iozone's children).
            f.sync_all()?;
        }
        Ok(frozen.unwrap_or(mine))
    }

    /// `done` records after `t`: actual and throughput.
    fn numbers(&self, done: u64, t: Instant) -> Child {
        let secs = t.elapsed().as_secs_f64().max(1e-6);
        let actual = done as f64 * self.per_record();
        Child { actual, throughput: actual / secs }
    }
}

/// One phase to run: with how many children, on files of `kb` kB in
/// records of `reclen` bytes.
pub struct PhaseRun<'a> {
    pub c: &'a Config,
    pub phase: ThroughputTest,
    pub count: usize,
    pub kb: u64,
    pub reclen: u64,
}

/// The children of a phase as threads of this process (`-T`): their
/// numbers, and the parent's seconds from the release to the last exit.
pub fn run_threads(run: &PhaseRun, stop: &StopFlag) -> io::Result<(Vec<Child>, f64)> {
    let &PhaseRun { c, phase, count, kb, reclen } = run;
    let shared = Shared {
        done: AtomicBool::new(false),
        abort: AtomicBool::new(false),
        first_error: Mutex::new(None),
    };
    let barrier = Barrier::new(count + 1);
    let n = kb * 1024 / reclen;
    let paths: Vec<PathBuf> = (0..count).map(|k| child_file(c, k)).collect();
    let results: Vec<Mutex<Option<Child>>> = (0..count).map(|_| Mutex::new(None)).collect();
    // iozone's thread-mode fread children share one buffer (see SharedBuf);
    // its process-mode children each read into their own copy.
    let fread_buf = (phase == ThroughputTest::Fread).then(|| SharedBuf::new(reclen as usize));
    let link = ThreadLink { barrier: &barrier, shared: &shared };
    let parent_secs = std::thread::scope(|s| {
        for k in 0..count {
            let child = ChildRun {
                c,
                phase,
                k,
                path: &paths[k],
                reclen,
                n,
                link: &link,
                stop,
                fread_buf: fread_buf.as_ref(),
            };
            let results = &results;
            let shared = &shared;
            s.spawn(move || match child.spawn() {
                Ok(r) => *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r),
                // Stopped because another child failed or a signal came:
                // that cause is what gets reported.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let mut first = shared.first_error.lock().unwrap_or_else(|e| e.into_inner());
                    if first.is_none() {
                        *first = Some(child_error(k, child.path, e));
                    }
                    // Only once the cause is recorded may the others stop.
                    shared.abort.store(true, Ordering::Relaxed);
                }
            });
        }
        barrier.wait();
        Instant::now()
    })
    .elapsed()
    .as_secs_f64();
    // The scope joined every child: parent time runs from the release to
    // the last exit.
    if let Some(e) = shared.first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    if stop.is_set() {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    let children: Vec<Child> = results
        .into_iter()
        .map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_default())
        .collect();
    Ok((children, parent_secs))
}

/// Between phases: `sync()`, then iozone's pause (2 s unless `--pause`).
pub fn settle(c: &Config, stop: &StopFlag) {
    nix::unistd::sync();
    let until = Instant::now() + Duration::from_secs_f64(c.pause_s);
    while Instant::now() < until && !stop.is_set() {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocks_numbers_are_iozones() {
        let c = |actual, throughput| Child { actual, throughput };
        // Child 1 was stonewalled at 48 MiB of 64.
        let b = PhaseResult::new(
            ThroughputTest::Read,
            vec![c(65536.0, 4000.0), c(49152.0, 3000.0)],
            20.0,
        );
        assert_eq!(b.children_see, 7000.0, "the sum of the children's rates");
        assert_eq!(b.parent_sees, (65536.0 + 49152.0) / 20.0, "all kB over the parent's time");
        assert_eq!((b.min, b.max, b.avg), (3000.0, 4000.0, 3500.0));
        assert_eq!(b.min_xfer, 49152.0, "how far the slowest child got");
        // A child with 0 first is the minimum (iozone re-seeds on 0: not copied).
        let z = PhaseResult::new(ThroughputTest::Read, vec![c(0.0, 0.0), c(10.0, 5.0)], 1.0);
        assert_eq!(z.min, 0.0);
    }

    #[test]
    fn phases_follow_the_selected_tests_in_iozones_order() {
        let cfg = |s: &str| {
            let a: Vec<String> = s.split_whitespace().map(String::from).collect();
            super::super::args::parse("iozone", &a).unwrap()
        };
        assert_eq!(
            phases(&cfg("-t 1 -i 2 -i 0")),
            [
                ThroughputTest::InitialWrite,
                ThroughputTest::Rewrite,
                ThroughputTest::RandomRead,
                ThroughputTest::RandomWrite
            ]
        );
        assert_eq!(phases(&cfg("-t 1")).len(), 13);
        assert!(
            phases(&cfg("-t 1 -i 0 -i 4")).iter().all(|p| p.test() == 0),
            "-i 4 has no throughput phase"
        );
    }
}

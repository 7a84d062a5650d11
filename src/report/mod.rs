//! The [`Report`]: everything a check found, as one value, and how it is
//! built from what was measured and judged. Every output (text, JSON, CSV,
//! charts: `export`) is a function of it. The `///` docs on these fields
//! are the JSON schema's documentation (see docs/json-schema.md).
//!
//! It must not decide anything (verdicts, references and reasons come from
//! `judge`) and must not read devices.

mod build;
pub mod burnin;
mod group_words;
pub mod inspect;
pub mod random;
pub mod replay;
mod rundoc_of;
pub mod vibration;

use serde::{Deserialize, Serialize};

use crate::device::{Identity, InUse};
use crate::judge::advice::DiskAdvice;
use crate::judge::surface::SlowRegion;
use crate::judge::{ArrayVerdict, Verdict};
use crate::measure::{PassKind, ReadError, SlowRead, Stopped};
use crate::stats::{LatencyBins, LatencyUs};

pub use build::{Checked, Measured, RunInfo, build};

pub use crate::header::{Header, SCHEMA_VERSION};
pub use crate::judge::links::LinkFinding;

/// The whole result of `arrayburn check`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Tool, kind (`"check"`), host, machine, times, command line, and
    /// whether it is whole ([`Header`], flattened: its fields open the
    /// document).
    #[serde(flatten)]
    pub header: Header,
    /// The options the check ran with.
    pub options: Options,
    /// The disks checked, in command-line order.
    pub disks: Vec<Disk>,
    /// The passes run, in order (serial, then parallel).
    pub passes: Vec<Pass>,
    /// The disks re-measured before their verdict (one pass alone called
    /// them slow, or could not decide): what was measured and what it
    /// decided.
    #[serde(default)]
    pub confirmations: Vec<ConfirmRow>,
    /// What each drive declared of itself before the run (`arrayburn
    /// inspect`'s table and findings; hours are not judged in a check).
    /// Notes beside the verdict: none changes it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inspection: Vec<crate::judge::inspect::Inspected>,
    /// The random reads (`--random`, or `--full` on rotational disks):
    /// each disk's IOPS and latency alone and all at once, at each depth,
    /// and what they found (see [`random::RandomSection`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random: Option<random::RandomSection>,
    /// The neighbour pass (`--vibration`): each disk's random reads alone
    /// and beside its seeking neighbours, and its loss (see
    /// [`vibration::VibrationSection`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vibration: Option<vibration::VibrationSection>,
    /// The verdict over all passes.
    pub summary: Summary,
}

/// A disk re-measured before its verdict: alone, alternating with a peer
/// of its group (a serial verdict), or with every disk together (a
/// parallel verdict).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfirmRow {
    /// The disk, and the peer it alternated with (paths as given; null when
    /// read with every disk together).
    pub path: String,
    pub peer: Option<String>,
    /// The pass whose verdict of the disk this decides: `"serial"` (read
    /// alternating with `peer`) or `"parallel"` (read together).
    #[serde(default = "serial_pass")]
    pub pass: PassKind,
    /// Its speed as % of the peer's at the same moments (read together: of
    /// its group peers' median in the same round): the median over its
    /// slices and the interval around it (null when nothing could be
    /// compared), and the slices it rests on.
    pub pct_of_peer: Option<f64>,
    pub pct_of_peer_low: Option<f64>,
    pub pct_of_peer_high: Option<f64>,
    pub slices: usize,
    /// What it decided: `"slow"`, `"ok"` or `"unsure"`; `pass`'s verdict
    /// of the disk is this one.
    pub verdict: Verdict,
    /// The same in words.
    pub sentence: String,
    /// The slices read, in order (both disks', or every disk's round by
    /// round; `at_s` from the start of the re-measurement).
    pub measured: Vec<SliceRow>,
}

fn serial_pass() -> PassKind {
    PassKind::Serial
}

fn one() -> usize {
    1
}

fn one_slice() -> u32 {
    1
}

/// The options a check ran with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Options {
    /// Size of each read in bytes.
    pub block_bytes: u64,
    /// Length of the sample window in seconds.
    pub sample_s: f64,
    /// Whether the serial pass read whole disks.
    pub serial_full: bool,
    /// Whether the parallel pass read whole disks.
    pub parallel_full: bool,
    /// A disk below this % of its peers' median (or of its own serial speed)
    /// is slow.
    pub slow_pct: f64,
    /// A disk above this % of its peers' median is fast.
    pub fast_pct: f64,
    /// The I/O engine: `"io_uring"` (`queue_depth` reads in flight per
    /// disk) or `"psync"` (one O_DIRECT pread at a time; `"pread"` in
    /// reports before the io_uring engine).
    pub engine: String,
    #[serde(default = "one")]
    pub queue_depth: usize,
    /// A disk stops a pass after this many failed reads.
    pub max_errors: u64,
    /// Buckets of the surface profiles.
    pub buckets: usize,
    /// Reads at least this long (ms) are logged with their offset.
    pub slow_read_ms: f64,
    /// A disk with a read at least this long (ms) is slow.
    pub stall_ms: f64,
    /// Spots each sample window was spread over (1: the start of the disk).
    pub spots: u32,
    /// Slices each disk's serial sample was read in, interleaved with the
    /// other disks' (1: at once; reports before slices: 1).
    #[serde(default = "one_slice")]
    pub slices: u32,
    /// Readers per disk in the seek-stress pass; null when it did not run.
    pub seek_readers: Option<usize>,
}

/// One disk: its identity as sysfs tells it (flattened into this object:
/// `name`, `dev_path`, `by_id`, `vendor`, `model`, `serial`, `firmware`,
/// `size_bytes`, `logical_block_size`, `physical_block_size`, `rotational`,
/// `removable`, `read_only`, `devno`), and how the check treats it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Disk {
    /// The path as given on the command line.
    pub path: String,
    /// Identity from sysfs.
    #[serde(flatten)]
    pub identity: Identity,
    /// Why the disk was in use when the check started (other I/O disturbs
    /// the numbers); empty when idle.
    pub in_use: Vec<InUse>,
    /// Peer group number: disks are compared only within their group (same
    /// model, size and kind).
    pub peer_group: usize,
    /// What the kernel saw of it during the run (`device::kernel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<crate::device::kernel::Seen>,
}

/// How much of each disk a pass read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowKind {
    /// A time window per disk.
    Sample,
    /// Whole disks.
    Full,
}

/// One pass over the disks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pass {
    /// `"serial"` (one disk at a time), `"parallel"` (all at once) or
    /// `"seek"` (all at once, `options.seek_readers` staggered readers per
    /// disk).
    pub kind: PassKind,
    /// `"sample"` (a time window from the start of each disk) or `"full"`.
    pub window: WindowKind,
    /// When the pass started (RFC 3339, UTC).
    pub started_at: String,
    /// Wall time of the pass in seconds.
    pub elapsed_s: f64,
    /// Sum of the disks' MB/s over the sample window (parallel: the array's
    /// throughput; serial: the sum of solo speeds).
    pub aggregate_mb_per_s: f64,
    /// The median window MB/s of the disks that could be compared (no
    /// failed read, at least a second of window): the array's typical speed,
    /// as the text and the charts show it. Null when none could.
    #[serde(default)]
    pub median_mb_per_s: Option<f64>,
    /// Full passes: the median seconds to read a whole disk, over the disks
    /// read cleanly to the end; null otherwise.
    #[serde(default)]
    pub median_elapsed_s: Option<f64>,
    /// True when a signal cut this pass short.
    pub interrupted: bool,
    /// Per-disk results; disks a stop kept from starting are absent.
    pub disks: Vec<PassDisk>,
    /// Parallel pass with disks behind two or more controllers: each
    /// controller's share of serial speed kept.
    #[serde(default)]
    pub controllers: Vec<ControllerRow>,
    /// Parallel pass, no controller limiting: each group of disks that
    /// lost speed together while the others did not, and what reading it
    /// again found.
    #[serde(default)]
    pub groups: Vec<GroupRow>,
    /// A serial pass read in slices: each slice in the order read.
    #[serde(default)]
    pub slices: Vec<SliceRow>,
    /// A serial pass read in slices: how the array's own speed moved
    /// during it; null otherwise.
    #[serde(default)]
    pub conditions: Option<ConditionsRow>,
}

/// One slice of a serial pass: a disk read alone for part of its sample.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SliceRow {
    /// The disk's path as given.
    pub path: String,
    /// The round (from 0): every disk is read once a round.
    pub round: u32,
    /// Seconds from the start of the pass to the slice's start, and its
    /// length.
    pub at_s: f64,
    pub elapsed_s: f64,
    /// MB/s over its window (its warm-up left out).
    pub mb_per_s: f64,
}

/// How the array's speed moved during a sliced serial pass.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ConditionsRow {
    /// The slowest and the fastest round's shared speed, as % of the
    /// pass's median.
    pub low_pct: f64,
    pub high_pct: f64,
    /// Whether they moved enough to matter (5 % or more apart): the numbers
    /// of disks read at different moments differ by as much.
    pub moved: bool,
}

/// One controller in the parallel pass.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ControllerRow {
    /// PCI address, and in words with its driver and name.
    pub pci: String,
    pub controller: String,
    /// The disks behind it.
    pub disks: Vec<String>,
    /// The median share of their serial speed they kept.
    pub kept_pct_of_serial: f64,
    /// They lost speed together while another controller's disks did not:
    /// the controller (or its link) limited them.
    pub limited: bool,
}

/// A group of disks that lost speed together in the parallel pass while
/// the others did not, found from the speeds alone (`judge::groups`), and
/// what reading it again (alone, then beside all) found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GroupRow {
    /// Its disks.
    pub disks: Vec<String>,
    /// The median share of their serial speed they kept in the parallel
    /// pass, and the others (how many, and what they kept).
    pub kept_pct_of_serial: f64,
    pub others: usize,
    pub others_kept_pct_of_serial: f64,
    /// Read again beside all: the group's share as % of the others' share
    /// (median over rounds, and the interval around it); null if not read.
    pub together_pct_of_others: Option<f64>,
    pub together_low: Option<f64>,
    pub together_high: Option<f64>,
    /// Read again without the others: the share of their serial speed
    /// they kept (median over rounds, interval); null if not read.
    pub alone_pct_of_serial: Option<f64>,
    pub alone_low: Option<f64>,
    pub alone_high: Option<f64>,
    /// Rounds read again.
    pub rounds: usize,
    /// What that decided: `own` (their own path limits them), `shared` (a
    /// limit shared with the others), `either`, `not_reproduced` (a passing
    /// load: not named), `not_confirmed` (not read again, or undecided).
    pub path: crate::judge::groups::GroupPath,
    /// What they, and none of the others, sit behind (an expander, a SAS
    /// port, a controller), where sysfs says.
    pub behind: Option<String>,
}

/// One disk in one pass. MB/s are decimal (10^6 bytes per second).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PassDisk {
    /// The path as given on the command line.
    pub path: String,
    /// Bytes read successfully in this pass.
    pub bytes: u64,
    /// Seconds from the first read's start to the last read's end.
    pub elapsed_s: f64,
    /// `bytes / elapsed_s` in MB/s.
    pub mb_per_s: f64,
    /// Bytes read within the sample window (all of them for a sample pass).
    pub window_bytes: u64,
    /// Seconds of the sample window actually measured.
    pub window_elapsed_s: f64,
    /// MB/s over the sample window: the speed compared between disks and
    /// between passes (same zone of the disk, same length of time).
    pub window_mb_per_s: f64,
    /// Successful reads.
    pub reads: u64,
    /// Latency of the reads in microseconds.
    pub latency_us: LatencyUs,
    /// Reads counted in MHDD's latency bins.
    pub latency_bins: LatencyBins,
    /// Reads that took at least `options.slow_read_ms`.
    pub slow_read_count: u64,
    /// The slowest 256 of them, in offset order: `offset`, `len` (bytes),
    /// `latency_ms`, `index`.
    pub slow_reads: Vec<SlowRead>,
    /// p99.99 latency as % of the peer group's median p99.99; null without
    /// peers.
    pub p9999_pct_of_peers: Option<f64>,
    /// The median window MB/s of the disk's peer group in this pass (the
    /// reference of `pct_of_peers`); null without peers.
    #[serde(default)]
    pub peers_median_mb_per_s: Option<f64>,
    /// MB/s across the disk's surface.
    pub surface: SurfaceProfile,
    /// Regions of the surface that read at under half the speed of the same
    /// region on the peers or of the disk's own neighbouring regions.
    pub slow_regions: Vec<SlowRegion>,
    /// `window_mb_per_s` as % of the median of the disk's peer group in this
    /// pass; null without peers. In a serial pass read in slices: the median
    /// over its slices of each one's share of its group's speed at that
    /// moment.
    pub pct_of_peers: Option<f64>,
    /// A serial pass read in slices: the interval around `pct_of_peers`
    /// (the order statistics of its slices' shares that hold the median at
    /// 90 % confidence or better), and the slices it rests on; null
    /// otherwise.
    #[serde(default)]
    pub pct_of_peers_low: Option<f64>,
    #[serde(default)]
    pub pct_of_peers_high: Option<f64>,
    #[serde(default)]
    pub slices: Option<usize>,
    /// Parallel and seek passes: `window_mb_per_s` as % of this disk's
    /// serial speed.
    pub pct_of_serial: Option<f64>,
    /// Seek pass: `pct_of_serial` as % of the peer group's median of it
    /// (how this disk copes with seeking compared with its peers); without
    /// a serial pass, `pct_of_peers`.
    pub seek_pct_of_peers: Option<f64>,
    /// Full passes: completion time per byte as % of the peer group's
    /// median (above 100 = slower); null unless the disk was read to the end.
    pub time_pct_of_peers: Option<f64>,
    /// True when the disk was read to its last byte.
    pub reached_end: bool,
    /// Reads that failed; each was re-read in smaller pieces to find its
    /// exact bad ranges.
    pub read_errors: u64,
    /// Exact bad ranges found (`errors` lists the first 64 ranges, exact
    /// and unread).
    pub bad_ranges: u64,
    /// Bytes found unreadable (the sum of the exact bad ranges).
    pub bad_bytes: u64,
    /// Bytes neither read nor proven bad: skipped in an area that fails
    /// wholesale (listed in `errors` with `exact` false), or left unprobed
    /// when the sample time ran out or a stop came.
    #[serde(default)]
    pub unread_bytes: u64,
    /// Why the disk's read ended before its window or disk did:
    /// `"max_errors"`, `"interrupted"` or `"device_gone"`; null when it ran
    /// to the end. A sample that re-read its disk is not stopped early.
    #[serde(default)]
    pub stopped: Option<Stopped>,
    /// True when the device went away (ENODEV/ENXIO) rather than failing a
    /// read of its media; the read stopped there.
    pub device_gone: bool,
    /// The first bad ranges, exact to the logical block: byte offset,
    /// length, errno, message.
    pub errors: Vec<ReadError>,
    /// `"ok"`, `"slow"`, `"fast"` or `"error"`.
    pub verdict: Verdict,
    /// Why the verdict is not ok, in words; empty when ok.
    pub reasons: Vec<String>,
}

/// A disk's speed across its surface: `buckets` equal ranges from its start
/// to its end. Bucket `i` covers bytes `i * size / buckets` up to (not
/// including) `(i + 1) * size / buckets`; a read counts where it starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SurfaceProfile {
    /// Number of buckets.
    pub buckets: usize,
    /// Bytes read in each bucket.
    pub bytes: Vec<u64>,
    /// Reads in each bucket.
    pub reads: Vec<u64>,
    /// MB/s while reading in each bucket (bytes over the time spent in those
    /// reads); null where nothing was read.
    pub mb_per_s: Vec<Option<f64>>,
}

/// The verdict over the whole check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// `"healthy"` (every disk compared with its peers; none slow, no
    /// failed reads; a fast disk is marked but healthy), `"flagged"` (a disk
    /// is slow or failed reads), `"not_judged"` (nothing found, but a
    /// disk could not be compared: read too briefly or without peers), or
    /// `"interrupted"` (stopped with nothing found: health not claimed).
    pub verdict: ArrayVerdict,
    /// Disks that no pass could compare with their peers (read for under a
    /// second of window, or alone in their peer group).
    #[serde(default)]
    pub not_compared: Vec<String>,
    /// True when the parallel pass was limited by a path the disks share
    /// (controller, expander, bus, CPU) rather than by the disks.
    pub shared_bottleneck: bool,
    /// Sum of the disks' serial MB/s (what the disks deliver alone). With
    /// both passes: over the disks measured cleanly in both, the same disks
    /// as `parallel_mb_per_s` and the percentages.
    pub serial_sum_mb_per_s: Option<f64>,
    /// The array's parallel MB/s over the sample window (same disks).
    pub parallel_mb_per_s: Option<f64>,
    /// Parallel MB/s as % of the serial sum.
    pub parallel_pct_of_serial_sum: Option<f64>,
    /// Median over disks of parallel speed as % of own serial speed.
    pub median_pct_of_serial: Option<f64>,
    /// Disks marked in any pass: slow, error, and also fast (which alone
    /// leaves the verdict healthy).
    pub flagged: Vec<Flag>,
    /// One entry per slow or failing disk: `path`, `action` (`"return"`,
    /// `"recheck"`: move it and check again, `"check_path"`: slot, cable or
    /// expander), and `sentence`, the evidence from all passes in words.
    pub disk_verdicts: Vec<DiskAdvice>,
    /// Links on the way to the disks that run below their maximum: a
    /// finding each (the verdict is then flagged).
    #[serde(default)]
    pub links: Vec<LinkFinding>,
    /// The disks what the kernel saw put among those to act on
    /// (`judge::kernel`), each with what, in words (the verdict is then
    /// flagged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel: Vec<String>,
    /// Each disk with a rating for its model (`--rated`, or built in) and
    /// a clean serial speed, judged against it (`judge::rated`): `path`,
    /// `model`, `rated_mb_per_s`, `source`, `mb_per_s`, `pct_of_rated`,
    /// `below` (under 80 %: to act on).
    #[serde(default)]
    pub rated: Vec<crate::judge::rated::AgainstRating>,
    /// Peer groups all below their rating: `model`, `disks`,
    /// `low_mb_per_s`, `high_mb_per_s`, `pct_of_rated` (median),
    /// `rated_mb_per_s`, `link_ceiling` and `link_ceiling_mb_per_s` (the
    /// slowest link on the way to the first, and what it carries; null
    /// where not known) and `link_limits` (it carries less than the
    /// rating: the link holds them back, not the disks).
    #[serde(default)]
    pub rated_batches: Vec<crate::judge::rated::SlowBatch>,
    /// What the random reads found (each also among `disk_verdicts`):
    /// `path`, `kind` (`"retrying"`: a long tail on a normal median;
    /// `"slow"`; `"no_queueing"`; `"failed"`), `when` (`"alone"` or
    /// `"together"`), `depth`, the `measured` figures and the `peers'`
    /// medians, `gain` (no queueing: deep IOPS over depth 1's, its own
    /// and its peers'), `sentence`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub random: Vec<crate::judge::random::RandomFinding>,
    /// The disks the neighbour pass named (each also among
    /// `disk_verdicts`): `path`, `bay`, `neighbours`, `loss_pct`,
    /// `others_loss_pct` (the median of the others'), `sentence`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vibration: Vec<crate::judge::vibration::VibrationFinding>,
    /// The verdict in one sentence.
    pub message: String,
}

/// A disk flagged in a pass.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flag {
    /// The disk's path as given.
    pub path: String,
    /// The pass it was flagged in.
    pub pass: PassKind,
    /// `"slow"`, `"fast"` or `"error"`.
    pub verdict: Verdict,
    /// Why, in words.
    pub reasons: Vec<String>,
}

impl Report {
    /// The disk given on the command line as `path`.
    pub fn disk(&self, path: &str) -> Option<&Disk> {
        self.disks.iter().find(|d| d.path == path)
    }
}

/// The recorded check `fixtures/report/NAME/report.json`, for the tests.
#[cfg(test)]
pub fn fixture(name: &str) -> Report {
    let at = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("fixtures/report/{name}/report.json"));
    serde_json::from_slice(&std::fs::read(at).unwrap()).unwrap()
}

//! Every default of `arrayburn check` and `arrayburn burnin`, in one place:
//! the flags' defaults (`cli`), the judge's thresholds, the demo's check and
//! the messages that name a default all read them from here.

/// Sample window per disk and pass (`--sample`).
pub const SAMPLE: &str = "60s";
/// The shortest `--sample` that can be judged: its first 10 % is the
/// warm-up and the rest must last [`crate::judge::MIN_JUDGED_S`], with
/// room for the reads at its edges.
pub const MIN_SAMPLE: std::time::Duration = std::time::Duration::from_millis(1500);
/// Size of each read (`--block`), as the help shows it...
pub const REQUEST_SIZE: &str = "4m";
/// ...and in bytes.
pub const REQUEST_SIZE_BYTES: u64 = 4 << 20;
/// Reads in flight per disk with io_uring (docs/benchmarks.md, "Queue
/// depth").
pub const QUEUE_DEPTH: u16 = 2;
/// A disk below this % of its peers' median is slow (`--slow-pct`,
/// solnet-array-test's).
pub const SLOW_PCT: f64 = 92.0;
/// A disk above this % of its peers' median is fast (`--fast-pct`).
pub const FAST_PCT: f64 = 107.0;
/// A read this slow (ms) makes a disk slow (`--stall-ms`).
pub const STALL_MS: u64 = 2000;
/// Reads this slow (ms) are logged with their offset (`--slow-read-ms`).
pub const SLOW_READ_MS: u64 = 500;
/// The slowest a healthy disk is taken to move a request's bytes at: a
/// request is allowed the time its size needs at this speed before it
/// counts as a slow read or a stall (a 256 MiB read at 100 MB/s takes
/// 2.7 s and is neither).
pub const SIZE_FLOOR_MB_PER_S: f64 = 50.0;

/// How long a request of `len` bytes needs at [`SIZE_FLOOR_MB_PER_S`].
pub fn size_time(len: u64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(len as f64 / (SIZE_FLOOR_MB_PER_S * 1e6))
}
/// A disk stops a pass after this many failed reads (`--max-errors`).
pub const MAX_ERRORS: u64 = 100;
/// A surface profile's bucket with fewer reads is neither judged nor used
/// as a reference (`judge::surface`; where a bucket ends cuts a read or
/// two's time into its neighbour: with 8 reads a bucket of a disk held to
/// 150 MB/s read 110 or 179, with 32 within a few %). The check's buckets
/// and the burn-in's stretches are sized to hold at least this many.
pub const MIN_BUCKET_READS: u64 = 32;
/// Buckets of a surface profile (`--buckets`).
pub const BUCKETS: usize = 100;
/// Readers per disk in the seek-stress pass (`--seek-readers`).
pub const SEEK_READERS: usize = 6;
/// How long each disk is read at random at each depth (`check --random`).
pub const RANDOM_TIME: &str = "10s";
/// Bytes per random read.
pub const RANDOM_BLOCK: &str = "4k";
/// The deep queue of the random reads (io_uring).
pub const RANDOM_DEPTH: usize = 32;
/// Spots a sample is spread over (`--spots`; 1: the start of the disk).
pub const SPOTS: u32 = 1;
/// Slices each disk's serial sample is read in, interleaved with the other
/// disks' (`--slices`; 1: each sample at once)...
pub const SLICES: u32 = 6;
/// ...each at least this long (fewer slices on a short sample): under it a
/// slice is mostly its warm-up and a throttle's or a cache's start.
pub const MIN_SLICE: std::time::Duration = std::time::Duration::from_secs(1);
/// A full serial pass reads each disk in `--slices` parts, interleaved with
/// the other disks', each part at least this big (fewer parts on smaller
/// disks; under twice it, a disk is read at once): a part then lasts
/// seconds on the fastest NVMe drive and minutes to hours on a hard disk,
/// while a small disk's whole read is over before conditions move.
pub const MIN_FULL_SLICE: u64 = 16 << 30;
/// A request outstanding this long means the disk hung (`--io-timeout`):
/// far beyond a drive's own retries of a bad sector (tens of seconds) and
/// the kernel's command timeouts, so only a disk that stopped answering
/// reaches it.
pub const IO_TIMEOUT: &str = "2m";
/// Where the burn-in keeps a checkpoint per disk (`burnin --state`).
pub const STATE_DIR: &str = "/var/lib/arrayburn/burnin";
/// A burn-in saves each disk's checkpoint at least this often
/// (`--checkpoint-every`).
pub const CHECKPOINT_EVERY: &str = "30s";
/// How long a disk whose writes collapsed is left idle before a burst
/// shows whether they recover (a drive-managed SMR disk cleans its media
/// cache while idle).
pub const SMR_IDLE: &str = "60s";
/// How long the scattered-write probe writes before the burn-in's first
/// pass (`burnin::scatter`; 0: not probed).
pub const SMR_PROBE: &str = "20s";
/// A burn-in reads each disk's temperature this often (`--smart-every`).
pub const SMART_EVERY: &str = "5m";
/// Interval between progress lines (`--progress-interval`).
pub const PROGRESS_INTERVAL: &str = "10s";
/// How long `--notify`'s command may run.
pub const NOTIFY_TIMEOUT: &str = "60s";
/// Passes of a read-only soak without `--passes` or `--duration`.
pub const SOAK_PASSES: u16 = 2;
/// How long a drive's short self-test may run before it is aborted as
/// stuck (`burnin --smart-test short`; drives say 1-2 minutes).
pub const SHORT_SELF_TEST: std::time::Duration = std::time::Duration::from_secs(30 * 60);
/// ...and its long self-test (a 24 TB HDD's takes about 30 hours).
pub const LONG_SELF_TEST: std::time::Duration = std::time::Duration::from_secs(72 * 3600);

/// Power-on hours a new drive may have (its factory test): more is "used".
pub const NEW_HOURS: u64 = 100;

#[cfg(test)]
mod tests {
    #[test]
    fn the_block_default_reads_as_its_bytes() {
        assert_eq!(
            crate::units::parse_size(super::REQUEST_SIZE).unwrap(),
            super::REQUEST_SIZE_BYTES
        );
    }
}

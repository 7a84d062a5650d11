//! Command-line syntax only (clap). Nothing here touches the system: the
//! meaning of the flags is resolved in `plan`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::burnin::block::Pattern;
pub use crate::burnin::smart::SmartMode;
use crate::defaults;
use crate::io::EngineKind;
use crate::units::{parse_duration, parse_ms, parse_size};

/// Check disk arrays (read-only: serial and parallel O_DIRECT reads, per-disk
/// MB/s and latency, slow-disk and shared-bottleneck verdicts), burn in new
/// disks (destructive write-verify, resumable), run iozone's workloads, and
/// report on many hosts' results.
#[derive(Debug, Parser)]
#[command(
    name = "arrayburn",
    version,
    propagate_version = true,
    after_long_help = crate::help::tail("")
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the disks on this machine with identity, size and in-use state.
    #[command(after_help = crate::help::tail("list"))]
    List(ListArgs),
    /// Read disks one at a time, then all at once, and judge them (read-only).
    #[command(after_help = crate::help::tail("check"))]
    Check(CheckArgs),
    /// Build a small array of memory-backed disks (one made slow), check it,
    /// and remove it again: the real check, without spare disks (root).
    #[command(after_help = crate::help::tail("demo"))]
    Demo(DemoArgs),
    /// iozone-compatible file workloads on a mounted filesystem: iozone's
    /// flags, tests and output (`arrayburn iozone -h`), plus --json.
    // -h and -V are iozone's own (help, verify pattern): none of clap's.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Iozone(IozoneArgs),
    /// Incoming inspection in seconds, read-only: what each drive declares
    /// of itself (hours, FARM hours, security, hidden capacity, firmware and
    /// sector format against its peers); with --probe --destructive, fake
    /// capacity found by writing a few blocks.
    #[command(after_help = crate::help::tail("inspect"))]
    Inspect(InspectArgs),
    /// Burn in new disks: write every block and read it back, all disks at
    /// once (DESTROYS their data; needs --destructive).
    #[command(after_help = crate::help::tail("burnin"))]
    Burnin(BurninArgs),
    /// Light (or with --off turn off) the locate LED of each disk's
    /// enclosure slot (--fault: its fault LED), to find its bay.
    #[command(after_help = crate::help::tail("locate"))]
    Locate(LocateArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish,
    /// powershell) to standard output.
    #[command(after_help = crate::help::tail("completions"))]
    Completions(CompletionsArgs),
    /// Read check and burn-in results (JSON files, or directories of
    /// them) from one host or many and compare them: disks slow for their
    /// model across the fleet, disks worse than in their earlier runs,
    /// each host's verdicts.
    #[command(after_help = crate::help::tail("report"))]
    Report(ReportArgs),
    /// Watch disks in service through the kernel's own counters (no I/O of
    /// its own): name a disk whose latency, at its peers' load, stands out
    /// for --for (fail-slow).
    #[command(after_help = crate::help::tail("watch"))]
    Watch(WatchArgs),
    /// Print a man page (roff) to standard output: arrayburn's, or one
    /// subcommand's.
    #[command(after_help = crate::help::tail("man"))]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A subcommand whose page to print (check, list, demo, iozone...);
    /// arrayburn's own page when left out.
    #[arg(conflicts_with = "install")]
    pub subcommand: Option<String>,
    /// Write every page (arrayburn.1, arrayburn-check.1, ...) into
    /// PREFIX/share/man/man1 and the bash, zsh and fish completions where
    /// those shells look under PREFIX, making the directories.
    #[arg(long)]
    pub install: bool,
    /// Where --install writes.
    #[arg(long, value_name = "DIR", default_value = "/usr/local", requires = "install")]
    pub prefix: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result files (`--json` of check or burnin, or `report.json` of
    /// `--out`), or directories searched for `*.json`.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the fleet report as JSON to FILE (`-`: standard output).
    #[arg(short = 'j', help_heading = "Outputs", long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write report.txt, report.json, report.md and a self-contained
    /// report.html into DIR.
    #[arg(short = 'o', help_heading = "Outputs", long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write Prometheus metrics to FILE for node_exporter's textfile
    /// collector (e.g. /var/lib/prometheus/node-exporter/arrayburn.prom):
    /// the fleet's verdict, each run not healthy, each disk's latest
    /// speed, those slow for their model or worse than before; written
    /// beside and renamed over, as the collector expects.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,

    /// Skip a file that cannot be read (said in one line) instead of
    /// refusing them all.
    #[arg(long)]
    pub keep_going: bool,
    /// Findings acknowledged in FILE (written by --ack-add) are listed
    /// apart and do not flag the fleet, until their value moves (more bad
    /// bytes, another SMART count, another fault).
    #[arg(help_heading = "Acknowledged findings", long, value_name = "FILE")]
    pub ack: Option<PathBuf>,
    /// Acknowledge every finding standing on DISK now (by its serial, WWN,
    /// HOST:PATH or path as the report lists it; a link by host:HOST),
    /// with its value now: added to --ack FILE, kept whole. Repeatable.
    #[arg(help_heading = "Acknowledged findings", long, value_name = "DISK", requires_all = ["ack", "why"])]
    pub ack_add: Vec<String>,
    /// Why the findings --ack-add names are accepted (kept with each).
    #[arg(help_heading = "Acknowledged findings", long, value_name = "TEXT", requires = "ack_add")]
    pub why: Option<String>,
    /// Who accepts them [default: $SUDO_USER, else $USER].
    #[arg(help_heading = "Acknowledged findings", long, value_name = "NAME", requires = "ack_add")]
    pub who: Option<String>,
    #[command(flatten)]
    pub notify: NotifyArgs,
    #[command(flatten)]
    pub chatter: Chatter,
}

/// Who is told when a run ends (check, burnin, report).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Outputs")]
pub struct NotifyArgs {
    /// Run CMD (by `sh -c`) when the run ends, and during a burn-in when a
    /// disk is found bad, gone or hung: the result JSON on its standard
    /// input; ARRAYBURN_EVENT, _VERDICT, _EXIT, _HOST, _MESSAGE and
    /// _TO_ACT_ON in its environment (contrib/notify/: mail, webhook). It
    /// never stops or changes the run.
    #[arg(long, value_name = "CMD", env = "ARRAYBURN_NOTIFY")]
    pub notify: Option<String>,
    /// How long --notify's command may run before it is killed.
    #[arg(long, value_name = "DURATION", default_value = defaults::NOTIFY_TIMEOUT, value_parser = parse_duration, env = "ARRAYBURN_NOTIFY_TIMEOUT")]
    pub notify_timeout: Duration,
}

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("self_tests").args(["smart_test", "smart_test_after"]).multiple(true)))]
pub struct BurninArgs {
    /// Whole disks to burn in (everything on them is destroyed), to soak
    /// (--read-only) or to verify (--verify).
    #[arg(help_heading = "What to burn", required = true)]
    pub devices: Vec<String>,
    /// Confirms that the data on these disks may be destroyed (without it,
    /// nothing is written).
    #[arg(help_heading = "Safety", long)]
    pub destructive: bool,
    /// Skips the question on a terminal (scripts: required).
    #[arg(short = 'y', help_heading = "Safety", long)]
    pub yes: bool,
    /// Go ahead although process PID holds a disk's lock (the refusal
    /// names it): only when that process is not using the disk.
    #[arg(help_heading = "Safety", long, value_name = "PID")]
    pub ignore_lock: Option<u32>,
    /// Overwrite disks that carry a partition table, filesystem, RAID, LVM
    /// or ZFS signature (refused without it).
    #[arg(help_heading = "Safety", long)]
    pub wipe_signatures: bool,
    /// Write and verify every disk this many times, each pass with its own
    /// blocks (a lost write of pass 2 reads back as pass 1's) [default: 1,
    /// with --pattern badblocks 4].
    #[arg(short = 'p', help_heading = "How to write and read", long)]
    pub passes: Option<u16>,
    /// What is written: `blocks` (self-identifying, every fault
    /// classified) or `badblocks` (its four fills 0xaa 0x55 0xff 0x00, one
    /// per pass, for procedures that name them).
    #[arg(help_heading = "How to write and read", long, value_enum, default_value_t = Pattern::Blocks)]
    pub pattern: Pattern,
    #[command(flatten)]
    pub io: IoArgs,
    /// Keep a checkpoint per disk in DIR, to --resume after a reboot or
    /// an interrupt.
    #[arg(help_heading = "Checkpoints and resume", long, value_name = "DIR", default_value = defaults::STATE_DIR)]
    pub state: PathBuf,
    /// Continue the burn-in checkpointed in --state on these disks (the
    /// same run: its passes, range and pattern).
    #[arg(help_heading = "Checkpoints and resume", long, conflicts_with_all = ["passes", "pattern", "range", "block"])]
    pub resume: bool,
    /// As a service runs it: continue the burn-in checkpointed in --state
    /// on these disks where there is one (its own options win), start it
    /// where there is none; refused where it is done (nothing is burned
    /// twice) or only some disks have one.
    #[arg(help_heading = "Checkpoints and resume", long, conflicts_with = "resume")]
    pub resume_or_start: bool,
    /// Wait up to DURATION for every disk to be present with a readable
    /// size before anything else (a service started at boot, before udev
    /// has made the by-id links); which is still missing then is named
    /// (exit 2, nothing written).
    #[arg(help_heading = "Checkpoints and resume", long, value_name = "DURATION", value_parser = parse_duration)]
    pub wait_for_disks: Option<Duration>,
    /// A read-only soak instead: read every disk whole, --passes times
    /// (default 2) or for --duration, each pass compared with the first
    /// and with the peers; nothing is written (no --destructive needed).
    #[arg(help_heading = "How to write and read", long, conflicts_with_all = ["destructive", "resume", "resume_or_start", "pattern", "wipe_signatures"])]
    pub read_only: bool,
    /// Read back a finished or interrupted burn-in's blocks from its
    /// checkpoint in --state (days later, after shipping or power cycles)
    /// and classify every block as the burn-in does; nothing is written
    /// (no --destructive needed). A disk that does not carry the run's
    /// blocks is refused; --resume continues an interrupted verify.
    #[arg(help_heading = "How to write and read", long, conflicts_with_all = ["destructive", "read_only", "resume_or_start", "pattern", "passes", "range", "wipe_signatures", "smart_test", "duration"])]
    pub verify: bool,
    /// N read-backs, each after a spin cycle: every disk spun down (hdparm
    /// -y; sg_start --stop for SAS) and read at once, timed until it
    /// answers, its identity read again. A disk that does not come back,
    /// comes back as another drive, or spins up late against its peers or
    /// its own first cycle is named. With --verify, that verify's; with
    /// --destructive, a verify of its own after the burn-in's passes (as
    /// --idle).
    #[arg(help_heading = "How to write and read", long, value_name = "N", conflicts_with = "read_only", value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub cycles: Option<u16>,
    /// After the burn-in's last pass, leave every disk idle this long
    /// (e.g. 24h), then read its blocks back as --verify does (retention):
    /// a run of its own, its report beside the burn-in's (NAME-verify.json,
    /// DIR-verify), its certificate saying both. A stop while idle leaves
    /// the burn-in's verdict and says how to verify later.
    #[arg(help_heading = "How to write and read", long, value_name = "DURATION", conflicts_with_all = ["read_only", "verify"], value_parser = crate::units::parse_duration_or_zero)]
    pub idle: Option<Duration>,
    /// With --cycles: each cycle cuts the disk's power through its
    /// enclosure slot (the kernel's power_status) instead of spinning it
    /// down: the drive goes away, starts cold and is found again by its
    /// name (give /dev/disk/by-id paths: /dev/sdX may change), its identity
    /// checked. A disk in no slot whose power the kernel can switch is
    /// refused.
    #[arg(help_heading = "How to write and read", long, requires = "cycles")]
    pub power_cycle: bool,
    /// With --cycles: how long a disk may take to answer after its
    /// spin-down (or its power's return) before it is named as not back.
    #[arg(help_heading = "How to write and read", long, value_name = "DURATION", default_value = "2m", value_parser = parse_duration, requires = "cycles")]
    pub spin_up_timeout: Duration,
    /// After the last read-back, leave each disk trimmed: what the burn-in
    /// wrote is deallocated (write zeroes with deallocate where the kernel
    /// can promise zeroes, else a plain discard) and, where zeroes were
    /// promised (by the kernel, or the drive's own TRIM "deterministic,
    /// zeroed"), read back at spread places: data there is a finding. Not
    /// with --idle or --cycles (their verify reads the blocks back).
    #[arg(help_heading = "How to write and read", long, conflicts_with_all = ["read_only", "verify", "idle", "cycles"])]
    pub discard: bool,
    /// A disk whose writes collapse partway (as a drive-managed SMR disk's
    /// do once its media cache is full) is left idle this long after the
    /// run, then written a burst at its start: back at full speed, it
    /// behaves as DM-SMR.
    #[arg(help_heading = "SMR probe", long, value_name = "DURATION", default_value = defaults::SMR_IDLE, value_parser = parse_duration)]
    pub smr_idle: Duration,
    /// Before the first pass, small writes scattered over each disk, each
    /// flushed to the media, for up to this long (0: none): a spinning
    /// disk that takes them at many times the rate its seeks allow reads
    /// keeps them in a cache that persists, and one whose cache then fills
    /// and cleans itself while idle (--smr-idle) is drive-managed SMR.
    #[arg(help_heading = "SMR probe", long, value_name = "DURATION", default_value = defaults::SMR_PROBE, value_parser = crate::units::parse_duration_or_zero)]
    pub smr_probe: Duration,
    /// With --read-only: read passes until this much time has passed
    /// (e.g. 8h; the pass then running is cut short).
    #[arg(help_heading = "How to write and read", long, requires = "read_only", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Save each disk's checkpoint at least this often (e.g. 30s, 5m; the
    /// disk's cache is flushed first).
    #[arg(help_heading = "Checkpoints and resume", long, value_name = "DURATION", default_value = defaults::CHECKPOINT_EVERY, value_parser = parse_duration)]
    pub checkpoint_every: Duration,
    /// Finish by DURATION from now (e.g. 24h): a disk whose full
    /// write-verify would outlast it is burned in stripes spread over its
    /// whole surface, coarse first, until the deadline; the report says
    /// exactly what was tested, and --resume (or --resume-or-start) burns
    /// the rest later. A disk whose full pass fits is burned whole.
    #[arg(help_heading = "What to burn", long, value_name = "DURATION", conflicts_with_all = ["read_only", "verify"], value_parser = parse_duration)]
    pub deadline: Option<Duration>,
    /// Burn only START..END of each disk (4 KiB multiples; 17t.. for the
    /// end of a large disk).
    #[arg(help_heading = "What to burn", long, value_name = "START..END")]
    pub range: Option<String>,
    /// Write the result as JSON to FILE (`-`: standard output).
    #[arg(short = 'j', help_heading = "Outputs", long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write report.txt, report.json, the run's page (report.html:
    /// everything, charts inline, a certificate per disk; prints to PDF),
    /// report.md, and charts/ (MB/s across each disk's surface, pass 1 and
    /// the last; temperature over the run; SVG and PNG) into DIR.
    #[arg(short = 'o', help_heading = "Outputs", long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write Prometheus metrics to FILE for node_exporter's textfile
    /// collector (e.g. /var/lib/prometheus/node-exporter/arrayburn.prom):
    /// the verdict, each disk's speeds, bad bytes, SMART rises and verdict;
    /// while it runs, bytes done, progress and ETA (every
    /// --progress-interval). Written beside and renamed over, as the
    /// collector expects.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Write the run as an OCP Test & Validation diag stream (JSON lines,
    /// ocp-diag-core schema 2.0) to FILE (`-`: standard output): each disk
    /// a hardwareInfo, its speeds, bad bytes and SMART rises as
    /// measurements, a diagnosis per disk from the run's verdicts.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub ocp_diag: Option<PathBuf>,
    /// Also write what was measured to FILE at the end (each disk's burn,
    /// SMART, temperatures and re-measurement, with the disks and how they
    /// are judged), to attach to a bug report. Replayed by arrayburn's
    /// library (no command replays it), it gives the report the run gave.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// A write or read that has the disk this many milliseconds beyond
    /// what its size needs at the disk's speed is a stall: return the disk.
    /// Default 2000; a --resume judges as the run it goes on did, unless
    /// given.
    #[arg(help_heading = "How to judge", long, value_name = "MS", value_parser = parse_ms)]
    pub stall_ms: Option<u64>,
    /// A disk whose writes or read-backs run under this % of its peers'
    /// median is slow (re-measured alone first), above 0 and under 100.
    /// Default 92; a --resume judges as the run it goes on did, unless
    /// given.
    #[arg(help_heading = "How to judge", long, value_name = "PCT")]
    pub slow_pct: Option<f64>,
    /// Do not judge speeds against peers (a disk's faults, stalls and
    /// slowing from pass to pass still are, and the verdict says so).
    /// `--slow-pct 0`, its old spelling, works for a release.
    #[arg(help_heading = "How to judge", long, conflicts_with = "slow_pct")]
    pub not_against_peers: bool,
    /// Read SMART before and after (smartctl --json) and judge what rose:
    /// `auto` where smartctl and the disk allow, `require` refuses a disk
    /// without SMART data, `off` skips it.
    #[arg(help_heading = "SMART", long, value_enum, default_value_t = SmartMode::Auto)]
    pub smart: SmartMode,
    /// Run the drive's own SMART self-test first (short: minutes; long:
    /// the whole surface, hours; conveyance: damage in transport, ATA) and
    /// judge its result.
    #[arg(help_heading = "SMART", long, value_enum, conflicts_with = "resume")]
    pub smart_test: Option<crate::burnin::smart::TestKind>,
    /// Run the drive's own SMART self-test after the passes (long: the
    /// standard finish of a burn-in, the whole surface read by the drive
    /// itself) and judge its result; a failed one returns the disk, with
    /// the LBA of its first error where the drive logs it.
    #[arg(help_heading = "SMART", long, value_enum, value_name = "KIND")]
    pub smart_test_after: Option<crate::burnin::smart::TestKind>,
    /// Abort a --smart-test (or --smart-test-after) still running after
    /// this long, not judged (a drive stuck at "running 10 %") [default:
    /// each drive's own stated time and a quarter more; 30m short and
    /// conveyance, 72h long where it states none].
    #[arg(help_heading = "SMART", long, value_name = "DURATION", requires = "self_tests", value_parser = parse_duration)]
    pub smart_test_timeout: Option<Duration>,
    /// Refuse a solid-state disk this burn-in would take past PCT % of its
    /// rated endurance used (its own percentage used now, plus what the
    /// bytes to write cost at the rate its counters show), or that is
    /// there already; nothing is written.
    #[arg(help_heading = "SMART", long, value_name = "PCT", value_parser = parse_pct)]
    pub max_wear: Option<f64>,
    /// Read each disk's temperature this often during the run (e.g. 5m).
    #[arg(help_heading = "SMART", long, value_name = "DURATION", default_value = defaults::SMART_EVERY, value_parser = parse_duration)]
    pub smart_every: Duration,
    /// How progress is shown on stderr: on a terminal (auto) a live table
    /// under a summary line that fits the window; lines (a dated line per
    /// disk and the whole run's ETA every --progress-interval, as the log
    /// always gets); or none (the plan, warnings and the report are still
    /// printed).
    #[arg(help_heading = "Outputs", long, value_enum, default_value_t = BurnProgress::Auto)]
    pub progress: BurnProgress,
    /// Interval between progress lines (a burn-in of many large disks
    /// logs less with 5m).
    #[arg(help_heading = "Outputs", long, value_name = "DURATION", default_value = defaults::PROGRESS_INTERVAL, value_parser = parse_duration)]
    pub progress_interval: Duration,
    /// At the end, light the fault LED of each disk to return and the
    /// locate LED of each other disk to act on, where the kernel knows its
    /// enclosure slot (`arrayburn locate --off DISK` turns it off).
    #[arg(help_heading = "Outputs", long)]
    pub locate: bool,
    #[command(flatten)]
    pub notify: NotifyArgs,
    #[command(flatten)]
    pub chatter: Chatter,
}

/// How the burn-in shows progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BurnProgress {
    /// A live table on a terminal, lines elsewhere.
    Auto,
    /// The live table (redrawn every second; it needs a terminal).
    Table,
    /// Plain lines every --progress-interval (for logs, Ansible).
    Lines,
    /// None.
    None,
}

/// A percentage above 0, at most 100.
fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("{s}: give a percentage above 0, at most 100")),
    }
}

impl BurninArgs {
    /// The `--slow-pct` asked, 0 for `--not-against-peers` (or its old
    /// spelling, `--slow-pct 0`).
    pub fn slow_pct_asked(&self) -> Option<f64> {
        if self.not_against_peers { Some(0.0) } else { self.slow_pct }
    }
}

#[derive(Debug, Args)]
pub struct IozoneArgs {
    /// iozone's arguments, parsed by iozone's rules.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LocateArgs {
    /// Whole disks whose bay to light (/dev/sdb, /dev/disk/by-id/...).
    #[arg(required = true)]
    pub devices: Vec<String>,
    /// Turn the LED off again.
    #[arg(long)]
    pub off: bool,
    /// The fault LED instead of the locate LED.
    #[arg(long)]
    pub fault: bool,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Whole disks to inspect (/dev/sdb, /dev/disk/by-id/...).
    #[arg(required = true)]
    pub devices: Vec<String>,
    /// Power-on hours a new drive may have (its factory test); more is
    /// "used".
    #[arg(long, value_name = "HOURS", default_value_t = defaults::NEW_HOURS)]
    pub new_hours: u64,
    /// Also find fake capacity: write self-identifying blocks at the start,
    /// across the disk and at its announced end, read them back and bisect
    /// the usable size (seconds); and on a spinning disk, write scattered
    /// blocks, each flushed, for up to --smr-probe: many times the rate its
    /// seeks allow is a cache that persists (drive-managed SMR where it
    /// fills and cleans itself idle). Destroys the data in those blocks:
    /// needs --destructive.
    #[arg(long, help_heading = "Capacity probe")]
    pub probe: bool,
    /// Confirms that --probe may overwrite blocks of these disks.
    #[arg(long, help_heading = "Safety", requires = "probe")]
    pub destructive: bool,
    /// Skips the question on a terminal (scripts: required with --probe).
    #[arg(short = 'y', long, help_heading = "Safety")]
    pub yes: bool,
    /// Probe disks that carry a partition table, filesystem, RAID, LVM or
    /// ZFS signature (refused without it).
    #[arg(long, help_heading = "Safety")]
    pub wipe_signatures: bool,
    /// Go ahead although process PID holds a disk's lock (the refusal
    /// names it): only when that process is not using the disk.
    #[arg(long, value_name = "PID", help_heading = "Safety")]
    pub ignore_lock: Option<u32>,
    /// A probe's read or write outstanding this long means the disk hung.
    #[arg(long, value_name = "DURATION", default_value = defaults::IO_TIMEOUT, value_parser = parse_duration, help_heading = "I/O")]
    pub io_timeout: Duration,
    /// With --probe: how long a spinning disk's scattered writes go on
    /// (0: none).
    #[arg(long, value_name = "DURATION", default_value = defaults::SMR_PROBE, value_parser = crate::units::parse_duration_or_zero, help_heading = "SMR probe", requires = "probe")]
    pub smr_probe: Duration,
    /// With --probe: how long a disk whose scattered writes slowed idles
    /// before it is written again (a drive-managed SMR disk cleans its
    /// cache meanwhile).
    #[arg(long, value_name = "DURATION", default_value = defaults::SMR_IDLE, value_parser = parse_duration, help_heading = "SMR probe", requires = "probe")]
    pub smr_idle: Duration,
    /// Write the result as JSON to FILE (`-`: standard output).
    #[arg(short = 'j', long, value_name = "FILE", help_heading = "Outputs")]
    pub json: Option<PathBuf>,
    /// Also write report.txt, report.json, report.md and the page
    /// (report.html) into DIR.
    #[arg(short = 'o', long, value_name = "DIR", help_heading = "Outputs")]
    pub out: Option<PathBuf>,
    /// Write Prometheus metrics to FILE (node_exporter's textfile
    /// collector): the verdict, each disk's hours and findings.
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub metrics: Option<PathBuf>,
    /// Write the inspection as an OCP Test & Validation diag stream (JSON
    /// lines, ocp-diag-core schema 2.0) to FILE (`-`: standard output).
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub ocp_diag: Option<PathBuf>,
    #[command(flatten)]
    pub chatter: Chatter,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Whole disks to watch (none: every whole disk with a medium).
    pub devices: Vec<String>,
    /// The length of a window: the counters are read this often (e.g.
    /// 10s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub interval: Duration,
    /// How long a disk must stand out against its peers (in most windows,
    /// and in the last) before it is named fail-slow.
    #[arg(long = "for", value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    pub stand_out: Duration,
    /// One window (--interval), judged at once (for cron and NHC): exit 1
    /// where a disk stood out in it.
    #[arg(long, conflicts_with = "count")]
    pub once: bool,
    /// Stop after N windows (exit 1 where a disk is fail-slow then).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Write JSON lines to FILE (`-`: standard output), appended: one per
    /// window (each disk's reads and writes a second, MB/s, ms a request,
    /// utilisation, in flight, and how it stood against its peers) and one
    /// per finding begun or ended.
    #[arg(short = 'j', help_heading = "Outputs", long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// How each window is shown on stderr: on a terminal (auto) a live
    /// table of the disks under a summary line, redrawn in place (the
    /// findings said above it); lines (a dated line per disk and window,
    /// for logs and journald); or none (only the findings).
    #[arg(help_heading = "Outputs", long, value_enum, default_value_t = BurnProgress::Auto)]
    pub progress: BurnProgress,
    /// With --json, write a window's line at least this often, not every
    /// window (a window with a finding begun or ended always, and the
    /// last): a service watching hundreds of disks keeps its log small
    /// with 1h.
    #[arg(help_heading = "Outputs", long, value_name = "DURATION", value_parser = parse_duration, requires = "json")]
    pub json_every: Option<Duration>,
    /// Write Prometheus metrics to FILE for node_exporter's textfile
    /// collector (after a window, at most every 15 s; at once when a
    /// finding begins or ends; and at the end): each disk's requests,
    /// bytes and latency a second, its standing against its peers, the
    /// findings standing; written beside and renamed over.
    #[arg(help_heading = "Outputs", long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Run CMD (by `sh -c`) when a finding begins (fail-slow, slow
    /// together, gone, failed commands) and when it ends: the event's JSON
    /// on its standard input; ARRAYBURN_EVENT (finding, finding_ended),
    /// _VERDICT, _HOST, _MESSAGE and _TO_ACT_ON in its environment. It
    /// never stops or changes the watch.
    #[arg(help_heading = "Outputs", long, value_name = "CMD", env = "ARRAYBURN_NOTIFY")]
    pub notify: Option<String>,
    /// How long --notify's command may run before it is killed.
    #[arg(help_heading = "Outputs", long, value_name = "DURATION", default_value = defaults::NOTIFY_TIMEOUT, value_parser = parse_duration, env = "ARRAYBURN_NOTIFY_TIMEOUT")]
    pub notify_timeout: Duration,
    #[command(flatten)]
    pub chatter: Chatter,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only these devices (paths such as /dev/sdb or /dev/disk/by-id/...).
    pub devices: Vec<String>,
    /// Include loop, RAM, device-mapper and md devices.
    #[arg(long)]
    pub all: bool,
    /// Write JSON to FILE instead of the table (`-`: standard output), as
    /// every other --json (a bare `--json` would take the next disk for
    /// the file).
    #[arg(short = 'j', help_heading = "Outputs", long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Which passes to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Passes {
    /// Serial, then parallel.
    Both,
    /// Only the serial pass.
    Serial,
    /// Only the parallel pass (no per-disk baseline to compare with).
    Parallel,
}

/// How much a run says, and in colour or not (check, burnin, report,
/// demo: the same flags everywhere).
#[derive(Debug, Clone, Copy, Args)]
#[command(next_help_heading = "What is said")]
pub struct Chatter {
    /// Say only the verdict's headline and a line per disk to act on (and
    /// errors, warnings, and how to go on after a stop): no report, no
    /// progress, no notes. The exit status and every file asked for are
    /// the same.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Say more: the check's report adds each serial slice's and each
    /// re-measured round's MB/s.
    #[arg(short, long)]
    pub verbose: bool,
    /// Colour the verdict line and the marks (--SLOW--, !!ERROR!!): auto
    /// on a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

/// When to colour what is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set (to anything but empty).
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Colour forced on (true) or off (false), or on a terminal only
    /// (None).
    pub fn forced(self) -> Option<bool> {
        match self {
            ColorWhen::Auto => None,
            ColorWhen::Always => Some(true),
            ColorWhen::Never => Some(false),
        }
    }
}

/// How progress is shown on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgressMode {
    /// A live table on a terminal, plain periodic lines otherwise.
    Auto,
    /// The live table (a cell per disk; it needs a terminal). `bars`,
    /// its old spelling, works for a release.
    #[value(alias = "bars")]
    Table,
    /// Plain lines every --progress-interval (for logs and tmux).
    Lines,
    /// Nothing but read errors and warnings.
    None,
}

/// How requests reach the disks, for the check and the burn-in alike.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "I/O")]
pub struct IoArgs {
    /// Size of each read (and a burn-in's write; binary units: 4m = 4 MiB;
    /// a burn-in's a multiple of 4 KiB).
    #[arg(short = 'b', long, default_value = defaults::REQUEST_SIZE, value_parser = parse_size)]
    pub block: u64,
    /// How requests are issued: io_uring with --queue-depth in flight per
    /// disk, psync (one at a time), or auto (io_uring where the kernel
    /// allows it).
    #[arg(long, value_enum, default_value_t = EngineKind::Auto)]
    pub engine: EngineKind,
    /// Requests in flight per disk with io_uring (1-256).
    #[arg(long, default_value_t = defaults::QUEUE_DEPTH, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub queue_depth: u16,
    /// A request with no answer after this long means the disk hung: its
    /// run ends there and it is reported (check the path or return it), the
    /// other disks carry on.
    #[arg(long, value_name = "DURATION", default_value = defaults::IO_TIMEOUT, value_parser = parse_duration)]
    pub io_timeout: Duration,
}

impl IoArgs {
    /// The engine that runs and the requests it keeps in flight: `auto`
    /// resolved, psync one at a time, io_uring asked for where the kernel
    /// gives none refused.
    pub fn engine(&self) -> Result<(EngineKind, usize), String> {
        crate::io::resolve_engine(self.engine, self.queue_depth)
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Block devices to read (whole disks: /dev/sdb, /dev/disk/by-id/...).
    #[arg(help_heading = "What to read", required = true)]
    pub devices: Vec<String>,
    /// How long each disk is read in a sampled pass (30s, 2m, 1m30s, 1.5s).
    #[arg(short = 's', help_heading = "What to read", long, default_value = defaults::SAMPLE, value_parser = parse_duration)]
    pub sample: Duration,
    /// Read whole disks in the parallel pass and judge completion times
    /// (the serial pass stays a sample, as in solnet-array-test).
    #[arg(help_heading = "What to read", long)]
    pub full: bool,
    /// Read whole disks in the serial pass too.
    #[arg(help_heading = "What to read", long)]
    pub full_serial: bool,
    /// A disk below this % of its peers' median (or of its own serial speed
    /// in the parallel pass) is slow.
    #[arg(help_heading = "How to judge", long, value_name = "PCT", default_value_t = defaults::SLOW_PCT)]
    pub slow_pct: f64,
    /// Ratings of drive models to judge each disk against as well as its
    /// peers: a CSV file of `model,mb_per_s,source` (its rows win over the
    /// built-in ones, read from the manufacturers' manuals).
    #[arg(help_heading = "How to judge", long, value_name = "FILE")]
    pub rated: Option<PathBuf>,
    /// A disk above this % of its peers' median is fast.
    #[arg(help_heading = "How to judge", long, default_value_t = defaults::FAST_PCT)]
    pub fast_pct: f64,
    /// Which passes to run: serial (one disk at a time), parallel (all at
    /// once), or both.
    #[arg(help_heading = "What to read", long = "mode", value_enum, default_value_t = Passes::Both)]
    pub passes: Passes,
    /// `--mode`'s old spelling (a burn-in's --passes is a count): works
    /// for a release, with a note.
    #[arg(long = "passes", value_enum, hide = true, conflicts_with = "passes")]
    pub old_passes: Option<Passes>,
    /// Spread each sample over N spots of the disk (N equal slices of the
    /// window, slice k reading from k/N of the disk, as DiskSpeed reads 11),
    /// so the baseline covers the whole disk rather than its start (an HDD's
    /// fastest zone). 1 reads from the start only.
    #[arg(help_heading = "What to read", long, default_value_t = defaults::SPOTS)]
    pub spots: u32,
    /// Read each disk's serial sample in N slices, interleaved with the
    /// other disks' (every disk once a round, the order changing from round
    /// to round), so a slow change of shared conditions (another pool's
    /// load, a throttling controller) falls on every disk alike; each disk
    /// is compared with the slices read close to its own, and its spread
    /// over them is reported. 1 reads each sample at once. Fewer on a short
    /// sample: a slice lasts at least 1 s.
    #[arg(help_heading = "What to read", long, default_value_t = defaults::SLICES)]
    pub slices: u32,
    /// Add a seek-stress pass after the others (solnet's third pass): all
    /// disks at once, each read by --seek-readers staggered readers, judged
    /// against its own serial speed and its peers'.
    #[arg(help_heading = "What to read", long)]
    pub seek: bool,
    /// Concurrent readers per disk in the seek-stress pass, started at
    /// equal distances over the disk.
    #[arg(help_heading = "What to read", long, default_value_t = defaults::SEEK_READERS)]
    pub seek_readers: usize,
    /// Add random reads after the other passes: each disk read at random
    /// places over its whole surface, --random-block bytes each, for
    /// --random-time at depth 1 and (io_uring) at depth 32, alone and then
    /// all at once; each disk's IOPS and latency percentiles judged against
    /// its peers' (a long tail on a normal median: a drive retrying). Part
    /// of --full on rotational disks.
    #[arg(help_heading = "What to read", long)]
    pub random: bool,
    /// Add the neighbour pass (spinning drives, 3 or more): each disk's
    /// depth-1 random reads alone, then while the disks in the slots beside
    /// it (without a slot map: every other disk) read at random, so their
    /// heads seek; a disk losing far more than the others is named with its
    /// bay. --random-time each way.
    #[arg(help_heading = "What to read", long)]
    pub vibration: bool,
    /// How long each disk is read at random at each depth, alone and all
    /// at once, and in the neighbour pass alone and beside its neighbours
    /// (0: no random reads, also with --full).
    #[arg(help_heading = "What to read", long, value_name = "DURATION", default_value = defaults::RANDOM_TIME, value_parser = crate::units::parse_duration_or_zero)]
    pub random_time: Duration,
    /// Bytes per random read.
    #[arg(help_heading = "What to read", long, value_name = "SIZE", default_value = defaults::RANDOM_BLOCK, value_parser = parse_size)]
    pub random_block: u64,
    /// Equal position buckets of each disk's surface profile (MB/s across
    /// the disk), at most: fewer on a disk too small for a whole read to
    /// give each bucket 32 reads (a bucket with fewer reads is neither
    /// drawn nor judged: one read through a cache or a throttle is not a
    /// speed).
    #[arg(help_heading = "How to judge", long, default_value_t = defaults::BUCKETS)]
    pub buckets: usize,
    /// Stop reading a disk after this many failed reads (each is re-read to
    /// find its exact bad sectors): a dying disk can otherwise take days.
    #[arg(help_heading = "How to judge", long, default_value_t = defaults::MAX_ERRORS)]
    pub max_errors: u64,
    /// Log every read that takes at least this many milliseconds beyond
    /// what its size needs at 50 MB/s (never more than --stall-ms), with
    /// its offset (a sector the drive had to retry).
    #[arg(help_heading = "How to judge", long, value_name = "MS", default_value_t = defaults::SLOW_READ_MS, value_parser = parse_ms)]
    pub slow_read_ms: u64,
    /// Flag a disk slow when any read takes at least this many milliseconds.
    #[arg(help_heading = "How to judge", long, value_name = "MS", default_value_t = defaults::STALL_MS, value_parser = parse_ms)]
    pub stall_ms: u64,
    /// Accept partitions (read them as if they were disks).
    #[arg(help_heading = "What to read", long)]
    pub allow_partitions: bool,
    /// Go ahead although process PID holds a disk's lock (the refusal
    /// names it): only when that process is not using the disk.
    #[arg(help_heading = "Safety", long, value_name = "PID")]
    pub ignore_lock: Option<u32>,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl CheckArgs {
    /// A check of `devices` with every other flag at its default, as the
    /// declaration above gives it (the demo's check).
    pub fn for_devices(devices: Vec<String>) -> Self {
        use clap::FromArgMatches;
        let cmd = Self::augment_args(clap::Command::new("check").no_binary_name(true));
        let argv = std::iter::once("--".to_string()).chain(devices);
        let m = cmd.try_get_matches_from(argv).expect("the defaults parse");
        Self::from_arg_matches(&m).expect("the defaults parse")
    }
}

/// Where results and progress go (shared by `check` and `demo`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Outputs")]
pub struct OutputArgs {
    /// Write the full result as JSON to FILE (also after each pass, and on
    /// interruption). `-` is standard output (the text report then goes to
    /// stderr); a FIFO or terminal gets one document at the end.
    #[arg(short = 'j', long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write everything to directory DIR (created if missing): report.txt,
    /// report.json, surface.csv, at the end the run's page (report.html:
    /// everything, charts inline; prints to PDF) and report.md, and charts/
    /// (MB/s per disk, MB/s across the surface and latency bins per pass,
    /// as SVG and PNG).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the surface profiles (MB/s per position bucket, per disk and
    /// pass) as CSV to FILE (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write Prometheus metrics to FILE for node_exporter's textfile
    /// collector (e.g. /var/lib/prometheus/node-exporter/arrayburn.prom):
    /// the verdict, each disk's speed, % of its peers, failed reads and
    /// verdict per pass (also after each pass). Written beside and renamed
    /// over, as the collector expects.
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Also write what was measured to FILE at the end (every pass,
    /// slice, disk re-measured and group read again, as read, with what
    /// the check ran on and with), to attach to a bug report. Replayed by
    /// arrayburn's library (no command replays it), it gives the report
    /// the run gave.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Write the run as an OCP Test & Validation diag stream (JSON lines,
    /// ocp-diag-core schema 2.0) to FILE (`-`: standard output): each disk
    /// a hardwareInfo, each pass a step of measurements, a diagnosis per
    /// disk from the run's verdicts (also after each pass, without the
    /// run's end).
    #[arg(long, value_name = "FILE")]
    pub ocp_diag: Option<PathBuf>,

    /// How progress is shown on stderr.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
    /// Interval between plain progress lines.
    #[arg(long, value_name = "DURATION", default_value = defaults::PROGRESS_INTERVAL, value_parser = parse_duration)]
    pub progress_interval: Duration,
    /// At the end, light the fault LED of each disk to return and the
    /// locate LED of each other disk to act on, where the kernel knows its
    /// enclosure slot (`arrayburn locate --off DISK` turns it off).
    #[arg(long)]
    pub locate: bool,
    #[command(flatten)]
    pub notify: NotifyArgs,
    #[command(flatten)]
    pub chatter: Chatter,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Number of disks in the demo array (3 to 32).
    #[arg(long, default_value_t = 6)]
    pub disks: usize,
    /// Size of each memory-backed disk (it lives in /dev/shm while the demo
    /// runs).
    #[arg(long, default_value = "256m", value_parser = parse_size)]
    pub size: u64,
    /// Sample window per disk and pass.
    #[arg(short = 's', help_heading = "What to read", long, default_value = "3s", value_parser = parse_duration)]
    pub sample: Duration,
    /// Leave cgroups alone: no throttle, so no slow disk (what the demo
    /// also does where cgroup-v1 blkio is missing).
    #[arg(long)]
    pub no_throttle: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

//! The check's plan: its flags to settings, its devices resolved, refused
//! or accepted and opened read-only with O_DIRECT, peer groups formed,
//! the passes it reads. All its refusals happen here, before the first
//! read.
//!
//! It must not read a device (opening it is all) and must not judge: the
//! thresholds it checks are handed to `judge` untouched.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::{CheckArgs, Passes, ProgressMode};
use crate::defaults;
use crate::device::{self, BlockDevice, DeviceError, SystemPaths, lock};
use crate::io::{EngineKind, open_direct};
use crate::judge::Thresholds;
use crate::measure::{Beside, Geometry, PassKind, PassSpec, Window};
use crate::output::{self, Output};

use super::outputs::{check_output_dir, record_output, refuse_shared};
use super::{PlanError, notifier};

/// The resolved options of a check.
/// A recording keeps every setting but where the outputs went and who was
/// told: those decide nothing a report says.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Read size in bytes.
    pub block: u64,
    /// How reads are issued (`auto` resolved: io_uring or psync), and how
    /// many are in flight per disk with io_uring.
    pub engine: EngineKind,
    pub queue_depth: usize,
    /// Sample length.
    pub sample: Duration,
    /// Serial pass reads whole disks.
    pub serial_full: bool,
    /// Parallel pass reads whole disks.
    pub parallel_full: bool,
    /// Which passes run.
    pub passes: Passes,
    /// Outlier thresholds.
    pub thresholds: Thresholds,
    /// JSON output (a file, a special file, or `-` for stdout).
    #[serde(skip)]
    pub json: Option<Output>,
    /// Output directory (report, JSON, CSV, charts).
    #[serde(skip)]
    pub out: Option<PathBuf>,
    /// Progress display.
    pub progress: ProgressMode,
    /// Interval of plain progress lines.
    pub progress_interval: Duration,
    /// A disk stops a pass after this many failed reads.
    pub max_errors: u64,
    /// Reads at least this long are logged with their offset.
    pub slow_read: Duration,
    /// Buckets of the surface profile.
    pub buckets: usize,
    /// Surface profile CSV output (a file, a special file, or `-`).
    #[serde(skip)]
    pub csv: Option<Output>,
    /// Prometheus metrics (`--metrics`).
    #[serde(skip)]
    pub metrics: Option<Output>,
    /// The measurements, recorded (`--record`).
    #[serde(skip)]
    pub record: Option<Output>,
    /// The OCP diag stream (`--ocp-diag`).
    #[serde(skip)]
    pub ocp: Option<Output>,
    /// Spots a sample window is spread over.
    pub spots: u32,
    /// Slices a serial pass reads each disk's sample in (already fewer
    /// where the sample is short); a full serial pass, the parts it reads
    /// each disk in (fewer on small disks).
    pub slices: u32,
    /// The ratings each disk is judged against (`--rated FILE`'s first,
    /// then the built-in ones).
    pub ratings: Vec<crate::judge::rated::Rating>,
    /// Readers per disk of the seek-stress pass, when it runs.
    pub seek_readers: Option<usize>,
    /// The random reads after the passes, when they run (`--random`, or
    /// `--full` on rotational disks).
    #[serde(default)]
    pub random: Option<crate::measure::RandomSpec>,
    /// The neighbour pass, when it runs (`--vibration`): its depth-1 reads.
    #[serde(default)]
    pub vibration: Option<crate::measure::RandomSpec>,
    /// Go ahead although this pid holds a disk's lock (`--ignore-lock`).
    pub ignore_lock: Option<u32>,
    /// A read outstanding this long means the disk hung.
    pub io_timeout: Duration,
    /// Who is told of the run's end (`--notify`).
    #[serde(skip)]
    pub notify: Option<crate::notify::Notifier>,
    /// Light the bays of the disks to act on at the end (`--locate`).
    pub locate: bool,
}

impl Settings {
    /// Where the check's result goes.
    pub fn outputs(&self) -> crate::output::Outputs<'_> {
        let (json, csv, metrics) = (self.json.as_ref(), self.csv.as_ref(), self.metrics.as_ref());
        let ocp = self.ocp.as_ref();
        crate::output::Outputs { json, csv, out: self.out.as_deref(), metrics, ocp }
    }
}

/// A check ready to run.
#[derive(Debug)]
pub struct Plan {
    /// The devices, in command-line order.
    pub devices: Vec<BlockDevice>,
    /// Each device opened read-only with O_DIRECT.
    pub files: Vec<File>,
    /// Peer group of each device.
    pub groups: Vec<usize>,
    /// Options.
    pub settings: Settings,
    /// Things the user should know before the numbers (devices in use).
    pub warnings: Vec<String>,
    /// What each drive declared of itself before the run (filled by the
    /// command: the plan reads nothing).
    pub inspection: Vec<crate::judge::inspect::Inspected>,
}

impl Plan {
    /// Resolves the check's arguments against the system.
    pub fn resolve(args: &CheckArgs, paths: &SystemPaths) -> Result<Plan, PlanError> {
        let mut settings = settings(args)?;
        let mut devices = device::resolve_all(paths, &args.devices, args.allow_partitions)?;
        if settings.serial_full {
            let smallest = devices.iter().map(|d| d.identity.size_bytes).min().unwrap_or(0);
            settings.slices = full_slices(args.slices, smallest);
        }
        crate::judge::links::settle(devices.iter_mut().map(|d| &mut d.identity));
        if args.full && devices.iter().all(|d| d.identity.rotational) {
            settings.random = settings.random.or_else(|| random_spec(args, settings.engine));
        }
        check_devices(settings.block, &devices)?;
        if let Some(r) = settings.random.as_ref().or(settings.vibration.as_ref()) {
            check_random_block(r.block, &devices)?;
        }
        if settings.vibration.is_some() {
            check_vibration(&devices)?;
        }
        check_memory(&settings, devices.len())?;
        let files = devices.iter().map(open).collect::<Result<Vec<_>, _>>()?;
        let in_use = devices.iter().filter(|d| !d.in_use.is_empty()).map(|d| {
            let why: Vec<String> = d.in_use.iter().map(|u| u.to_string()).collect();
            format!(
                "{} is in use ({}): the check only reads, but other I/O disturbs its numbers",
                d.given,
                why.join(", ")
            )
        });
        let volumes = (devices.iter())
            .filter_map(|d| d.identity.volume.as_ref().map(|v| v.sentence(&d.given)));
        let warnings = in_use.chain(volumes).collect();
        let groups = crate::judge::peers::peer_groups(&devices);
        Ok(Plan { devices, files, groups, settings, warnings, inspection: Vec::new() })
    }

    /// Its disks as the rules see them (which to re-measure, and when
    /// that has decided: `judge::check`).
    pub fn array(&self) -> crate::judge::check::Array<'_> {
        let (devices, groups) = (&self.devices, &self.groups);
        crate::judge::check::Array { devices, groups, thresholds: &self.settings.thresholds }
    }

    /// The passes to run, in order.
    pub fn pass_specs(&self) -> Vec<PassSpec> {
        let s = &self.settings;
        let window = |full: bool| {
            if full { Window::Full } else { Window::Sample(s.sample) }
        };
        let serial = PassSpec {
            kind: PassKind::Serial,
            window: window(s.serial_full),
            sample: s.sample,
            block: s.block,
            max_errors: s.max_errors,
            slow_read: s.slow_read,
            stall: Duration::from_secs_f64(s.thresholds.stall_ms / 1e3),
            readers: 1,
            spots: s.spots,
            slices: s.slices,
        };
        let parallel = PassSpec {
            kind: PassKind::Parallel,
            window: window(s.parallel_full),
            slices: 1,
            ..serial
        };
        let mut specs = match s.passes {
            Passes::Both => vec![serial, parallel],
            Passes::Serial => vec![serial],
            Passes::Parallel => vec![parallel],
        };
        if let Some(readers) = s.seek_readers {
            specs.push(PassSpec {
                kind: PassKind::Seek,
                window: Window::Sample(s.sample),
                readers,
                spots: 1,
                slices: 1,
                ..serial
            });
        }
        specs
    }

    /// The disks that seek beside each disk in the neighbour pass: the
    /// slots next to it in its enclosure (by slot number), or every other
    /// disk where its slot or theirs is not known.
    pub fn neighbours(&self) -> Vec<Vec<usize>> {
        let bays: Vec<Option<(&str, i64)>> =
            self.devices.iter().map(|d| d.identity.topology.bay()).collect();
        let n = bays.len();
        let others = |d: usize| (0..n).filter(move |&o| o != d);
        (0..n)
            .map(|d| {
                let beside = |o: &usize| {
                    matches!((bays[d], bays[*o]), (Some((e, s)), Some((f, t))) if e == f && (s - t).abs() == 1)
                };
                let near: Vec<usize> = others(d).filter(beside).collect();
                if near.is_empty() { others(d).collect() } else { near }
            })
            .collect()
    }

    /// Each disk's bound on a read's wait, one for the whole check: a disk
    /// that hung in one pass is not waited for again in the next.
    pub fn bounds(&self, stop: &crate::stop::StopFlag) -> Vec<crate::io::Bounds> {
        self.devices
            .iter()
            .map(|_| crate::io::Bounds::new(stop, self.settings.io_timeout))
            .collect()
    }

    /// How a disk is re-measured: as the serial pass reads, beside a peer;
    /// with all, as the parallel pass reads, in as many rounds as the
    /// serial pass has slices.
    pub fn remeasure_spec(&self, beside: Beside) -> Option<PassSpec> {
        let specs = self.pass_specs();
        let of = |kind: PassKind| specs.iter().find(|s| s.kind == kind).copied();
        let serial = of(PassKind::Serial)?;
        match beside {
            Beside::Peer(_) => Some(serial),
            Beside::All => of(PassKind::Parallel).map(|p| PassSpec { slices: serial.slices, ..p }),
        }
    }

    /// The line that says a disk is being re-measured, and why.
    pub fn remeasure_words(&self, (disk, beside): (usize, Beside)) -> String {
        let a = &self.devices[disk].given;
        match beside {
            Beside::Peer(peer) => format!(
                "arrayburn: re-measuring {a} alone, alternating with {}: the serial pass alone called it slow or could not decide",
                self.devices[peer].given
            ),
            Beside::All => format!(
                "arrayburn: re-measuring {a} with all disks reading together: the parallel pass alone called it slow"
            ),
        }
    }

    /// The line that says a group of disks is read again, and why.
    pub fn group_words(&self, group: &[usize]) -> String {
        let names: Vec<&str> = group.iter().map(|d| self.devices[*d].given.as_str()).collect();
        format!(
            "arrayburn: reading {} again, alone and then beside all: they lost speed together in the parallel pass while the others did not",
            names.join(", ")
        )
    }

    /// How long each group of disks reads, in order (see
    /// [`PassSpec::groups`]).
    pub fn schedule(&self) -> Vec<Option<Duration>> {
        let n = self.devices.len();
        let mut all: Vec<Option<Duration>> =
            self.pass_specs().iter().flat_map(|s| s.groups(n)).collect();
        if let Some(r) = &self.settings.random {
            let together = if n > 1 { 1 } else { 0 };
            all.extend(vec![Some(r.length); r.depths.len() * (n + together)]);
        }
        if let Some(v) = &self.settings.vibration {
            // Alone, then beside the neighbours, who start before and end after.
            all.extend(vec![Some((v.length + crate::measure::LOAD_LEAD) * 2); n]);
        }
        all
    }

    /// How progress is drawn: as asked, else the live table on a terminal
    /// and lines elsewhere.
    pub fn style(&self) -> crate::progress::Style {
        use crate::progress::Style;
        use std::io::IsTerminal;
        match self.settings.progress {
            _ if crate::tell::quiet() => Style::Quiet,
            ProgressMode::Table => Style::Bars,
            ProgressMode::Lines => Style::Lines,
            ProgressMode::None => Style::Quiet,
            ProgressMode::Auto if std::io::stderr().is_terminal() => Style::Bars,
            ProgressMode::Auto => Style::Lines,
        }
    }

    /// Where the check's log goes: `run.log` in `--out DIR`, else beside a
    /// `--json FILE` (`r.json`: `r.log`, or `r.log.log` where `r.log` is
    /// one of the run's own outputs); None where the results go only to
    /// the terminal or a pipe. Opened (appended) when asked.
    pub fn log(&self) -> Option<std::io::Result<(File, PathBuf)>> {
        use crate::output::{Dir, Sink};
        let s = &self.settings;
        let at = match (&s.out, &s.json) {
            (Some(dir), _) => Dir::create(dir).map(|d| (d, output::bundle::LOG.to_string())),
            (None, Some(Output { sink: Sink::File { dir, name }, .. })) => {
                let log = Path::new(name).with_extension("log");
                let ours =
                    |p: &Path| s.csv.iter().chain(&s.json).any(|o| o.is(&dir.path().join(p)));
                let log = if ours(&log) { Path::new(name).with_extension("log.log") } else { log };
                Ok((dir.clone(), log.to_string_lossy().into_owned()))
            }
            _ => return None,
        };
        Some(at.and_then(|(dir, name)| Ok((dir.append(&name)?, dir.path().join(name)))))
    }

    /// Takes each disk's run lock (see [`device::lock`]): refused when
    /// another arrayburn run reads one of them.
    pub fn lock_disks(&self) -> Result<Vec<lock::DiskLock>, PlanError> {
        let mut locks = Vec::new();
        for d in &self.devices {
            let ignore = self.settings.ignore_lock;
            locks.extend(lock::lock(d.rdev, &d.given, ignore).map_err(PlanError::Busy)?);
        }
        Ok(locks)
    }

    /// Read geometry of each device: its size, block and surface buckets
    /// (`--buckets`, fewer on a disk too small for a whole read to give
    /// each bucket the reads it needs to be judged or drawn).
    pub fn geometry(&self) -> Vec<Geometry> {
        let s = &self.settings;
        self.devices
            .iter()
            .map(|d| {
                let size = d.identity.size_bytes;
                let fit = size / (s.block * crate::defaults::MIN_BUCKET_READS);
                Geometry {
                    size,
                    logical_block: d.identity.logical_block_size,
                    buckets: s.buckets.min(fit.max(1) as usize),
                }
            })
            .collect()
    }
}

/// The slices a serial sample of `sample` is read in: `asked`, fewer where
/// a slice would last under [`defaults::MIN_SLICE`].
fn slices_for(asked: u32, sample: Duration) -> u32 {
    let fit = sample.as_secs_f64() / defaults::MIN_SLICE.as_secs_f64();
    asked.min(fit as u32).max(1)
}

/// The parts a full serial pass reads each disk in when its smallest disk
/// holds `smallest` bytes: `asked`, fewer where a part would hold under
/// [`defaults::MIN_FULL_SLICE`].
fn full_slices(asked: u32, smallest: u64) -> u32 {
    let fit = smallest / defaults::MIN_FULL_SLICE;
    asked.min(u32::try_from(fit).unwrap_or(u32::MAX)).max(1)
}

/// Refuses an I/O timeout under a second: a busy healthy disk would be
/// called hung.
pub fn check_io_timeout(t: Duration) -> Result<(), String> {
    if t < Duration::from_secs(1) {
        return Err(format!(
            "--io-timeout {}: give at least 1s (the default is {}; a drive's own retries of a bad sector take tens of seconds)",
            crate::units::human_duration(t),
            defaults::IO_TIMEOUT
        ));
    }
    Ok(())
}

fn settings(args: &CheckArgs) -> Result<Settings, PlanError> {
    check_values(args)?;
    let [json, csv, metrics, record, ocp] = outputs(args)?;
    let (engine, queue_depth) = args.io.engine().map_err(PlanError::BadValue)?;
    Ok(Settings {
        block: args.io.block,
        engine,
        queue_depth,
        sample: args.sample,
        serial_full: args.full_serial,
        parallel_full: args.full,
        passes: args.old_passes.unwrap_or(args.passes),
        thresholds: Thresholds {
            slow_pct: args.slow_pct,
            fast_pct: args.fast_pct,
            stall_ms: args.stall_ms as f64,
        },
        json,
        out: args.output.out.clone(),
        progress: args.output.progress,
        progress_interval: args.output.progress_interval,
        max_errors: args.max_errors,
        slow_read: Duration::from_millis(args.slow_read_ms),
        buckets: args.buckets,
        csv,
        metrics,
        record,
        ocp,
        spots: args.spots,
        slices: slices_for(args.slices, args.sample),
        ratings: ratings(args.rated.as_deref())?,
        seek_readers: args.seek.then_some(args.seek_readers),
        random: args.random.then(|| random_spec(args, engine)).flatten(),
        vibration: args.vibration.then(|| crate::measure::RandomSpec {
            block: args.random_block,
            depths: vec![1],
            length: args.random_time,
        }),
        ignore_lock: args.ignore_lock,
        io_timeout: args.io.io_timeout,
        notify: notifier(&args.output.notify),
        locate: args.output.locate,
    })
}

/// The random reads `--random-time` and `--random-block` ask for (None at
/// a time of 0): depth 1, and the deep queue where the engine has one.
fn random_spec(
    args: &CheckArgs,
    engine: crate::io::EngineKind,
) -> Option<crate::measure::RandomSpec> {
    let deep = engine.resolved() == crate::io::EngineKind::IoUring;
    let depths = if deep { vec![1, defaults::RANDOM_DEPTH] } else { vec![1] };
    let length = args.random_time;
    (!length.is_zero()).then_some(crate::measure::RandomSpec {
        block: args.random_block,
        depths,
        length,
    })
}

/// The neighbour pass reads spinning disks (a flash drive has no head to
/// shake), beside at least two others.
fn check_vibration(devices: &[BlockDevice]) -> Result<(), PlanError> {
    if devices.len() < 3 {
        return Err(PlanError::BadValue(format!(
            "--vibration compares each disk's loss with the others': give at least 3 disks ({} given)",
            devices.len()
        )));
    }
    if let Some(d) = devices.iter().find(|d| !d.identity.rotational) {
        return Err(PlanError::Unfit(format!(
            "--vibration measures spinning drives and {} does not spin (a flash drive has no head to shake): leave it out",
            d.given
        )));
    }
    Ok(())
}

/// `--random-block` is whole logical blocks of every disk.
fn check_random_block(block: u64, devices: &[BlockDevice]) -> Result<(), PlanError> {
    for d in devices {
        let lbs = u64::from(d.identity.logical_block_size);
        if block == 0 || !block.is_multiple_of(lbs) {
            return Err(PlanError::Unfit(format!(
                "--random-block {block} is not a multiple of {}'s logical block size ({lbs} bytes); give a multiple such as {}",
                d.given,
                lbs.max(4096)
            )));
        }
    }
    check_fits("--random-block", block, devices)
}

/// `--rated FILE`'s ratings, then the built-in ones; a file that cannot be
/// read or parsed is refused, naming the row.
fn ratings(file: Option<&std::path::Path>) -> Result<Vec<crate::judge::rated::Rating>, PlanError> {
    let mut all = Vec::new();
    if let Some(f) = file {
        let shown = f.display();
        let bytes = crate::input::read(f).map_err(|e| {
            PlanError::BadValue(format!("--rated {shown}: {e}; name a readable CSV file"))
        })?;
        let text = String::from_utf8_lossy(&bytes);
        all = crate::judge::rated::parse(&text).map_err(|e| {
            PlanError::BadValue(format!(
                "--rated {shown}: {e}; each row is model,mb_per_s,source under that header"
            ))
        })?;
    }
    all.extend(crate::judge::rated::built_in());
    Ok(all)
}

/// Refuses a flag's value outside what the check can use, naming the flag,
/// the range and the default.
/// A `--sample` long enough to judge a disk by (the check's, the
/// demo's), or why not.
pub fn check_sample(sample: std::time::Duration) -> Result<(), String> {
    if sample < defaults::MIN_SAMPLE {
        return Err(format!(
            "--sample {}: give at least {}: the first 10 % of a sample is its warm-up, and a disk must then be read for {:.0} s to be compared",
            crate::units::human_duration(sample),
            crate::units::human_duration(defaults::MIN_SAMPLE),
            crate::judge::MIN_JUDGED_S
        ));
    }
    Ok(())
}

/// Refuses a flag's value out of its range: the I/O timeout, the random
/// reads' time, the sample, the thresholds, then the sizes (`check_sizes`).
fn check_values(args: &CheckArgs) -> Result<(), PlanError> {
    let bad = |m: String| Err(PlanError::BadValue(m));
    check_io_timeout(args.io.io_timeout).map_err(PlanError::BadValue)?;
    for (asked, flag) in [(args.random, "--random"), (args.vibration, "--vibration")] {
        if asked && args.random_time.is_zero() {
            return bad(format!(
                "{flag} reads for --random-time, given 0: give a time such as {}",
                defaults::RANDOM_TIME
            ));
        }
    }
    check_sample(args.sample).map_err(PlanError::BadValue)?;
    if !(args.slow_pct > 0.0 && args.slow_pct < 100.0) {
        return bad(format!(
            "--slow-pct {} must be between 0 and 100 (the default is {})",
            args.slow_pct,
            defaults::SLOW_PCT
        ));
    }
    if !(args.fast_pct > 100.0 && args.fast_pct.is_finite()) {
        return bad(format!(
            "--fast-pct {} must be above 100 (the default is {})",
            args.fast_pct,
            defaults::FAST_PCT
        ));
    }
    if args.slow_read_ms == 0 || args.stall_ms < args.slow_read_ms {
        return bad(format!(
            "--slow-read-ms {} and --stall-ms {}: both must be above 0 and the stall threshold not below the slow-read one (defaults {} and {})",
            args.slow_read_ms,
            args.stall_ms,
            defaults::SLOW_READ_MS,
            defaults::STALL_MS
        ));
    }
    if args.max_errors == 0 {
        return bad(format!(
            "--max-errors 0: give at least 1 (the default is {})",
            defaults::MAX_ERRORS
        ));
    }
    check_sizes(args)
}

/// Refuses a read size, surface buckets, spots, slices or seek readers out
/// of their ranges, and spots a full check cannot compare.
fn check_sizes(args: &CheckArgs) -> Result<(), PlanError> {
    let bad = |m: String| Err(PlanError::BadValue(m));
    if args.io.block == 0 || args.io.block > 1 << 30 {
        return bad(format!(
            "--block {} must be between 4k and 1g (the default is {})",
            args.io.block,
            defaults::REQUEST_SIZE
        ));
    }
    if !(1..=10_000).contains(&args.buckets) {
        return bad(format!(
            "--buckets {}: give 1 to 10000 (the default is {})",
            args.buckets,
            defaults::BUCKETS
        ));
    }
    if !(1..=1000).contains(&args.spots) {
        return bad(format!(
            "--spots {}: give 1 to 1000 (11 reads every tenth of the disk)",
            args.spots
        ));
    }
    if !(1..=100).contains(&args.slices) {
        return bad(format!(
            "--slices {}: give 1 to 100 (the default is {}; 1 reads each disk's serial sample at once)",
            args.slices,
            defaults::SLICES
        ));
    }
    if args.spots > 1 && args.full && !args.full_serial {
        return Err(PlanError::Conflict(
            "--spots spreads the serial sample, but --full compares the parallel pass's first --sample of reading (the disk's start) with it: add --full-serial, or drop --spots",
        ));
    }
    if !(2..=64).contains(&args.seek_readers) {
        return bad(format!(
            "--seek-readers {}: give 2 to 64 (the default is {}, as solnet-array-test)",
            args.seek_readers,
            defaults::SEEK_READERS
        ));
    }
    Ok(())
}

/// The `--json`, `--csv`, `--metrics`, `--record` and `--ocp-diag`
/// outputs resolved, and no two outputs (those and the `--out` bundle's
/// files) the same file.
fn outputs(args: &CheckArgs) -> Result<[Option<Output>; 5], PlanError> {
    let resolve = |flag: &str, p: &Option<PathBuf>| {
        p.as_deref().map(|p| Output::resolve(flag, p, true).map_err(PlanError::Output)).transpose()
    };
    let json = resolve("--json", &args.output.json)?;
    let csv = resolve("--csv", &args.output.csv)?;
    let metrics = resolve("--metrics", &args.output.metrics)?;
    let record = record_output(args.output.record.as_deref()).map_err(PlanError::Output)?;
    let ocp = resolve("--ocp-diag", &args.output.ocp_diag)?;
    if let Some(p) = &args.output.out {
        check_output_dir(p)?;
    }
    let files = [&json, &csv, &metrics, &record, &ocp];
    refuse_shared(files.into_iter().flatten(), args.output.out.as_deref())
        .map_err(PlanError::Output)?;
    Ok([json, csv, metrics, record, ocp])
}

/// Refuses buffers beyond the memory the run may have. Each reader (one
/// per disk in the passes, `--seek-readers` per disk in the seek pass)
/// holds a block to pinpoint a failed read with; every read, through
/// io_uring or psync, lands in the one block of its size the process keeps
/// ([`crate::device::buffer::AlignedBuf::discard`]: nobody looks at what
/// the check reads), so the depth asks for no more; the random reads
/// likewise, one block for every disk.
fn check_memory(s: &Settings, disks: usize) -> Result<(), PlanError> {
    let readers = s.seek_readers.unwrap_or(1) as u64 * disks as u64;
    let block = crate::units::human_bytes_binary(s.block);
    let what = format!("{block} for each of {readers} reader(s) and one every read lands in");
    let flags = format!("--block {block}");
    crate::memory::refuse_beyond((readers + 1) * s.block, &what, (&flags, "--block"))
        .map_err(PlanError::BadValue)?;
    let Some(r) = s.random.as_ref().or(s.vibration.as_ref()) else { return Ok(()) };
    let shown = crate::units::human_bytes_binary(r.block);
    crate::memory::refuse_beyond(
        r.block,
        &format!("one {shown} every random read lands in"),
        (&format!("--random-block {shown}"), "--random-block"),
    )
    .map_err(PlanError::BadValue)
}

/// Refuses devices with no data and a read size their sectors do not
/// divide.
fn check_devices(block: u64, devices: &[BlockDevice]) -> Result<(), PlanError> {
    for d in devices {
        if let Some(f) = &d.identity.format {
            return Err(PlanError::Unfit(format!(
                "{}: {}; a check is not run on it",
                d.given,
                f.sentence(&d.identity.name)
            )));
        }
        if d.identity.size_bytes == 0 {
            return Err(PlanError::Unfit(format!(
                "{} has size 0 (no medium, not spun up, a loop device with nothing attached, or a SAS drive formatted with 520-byte sectors or protection information: sg_readcap --long from sg3_utils tells); name a disk with data",
                d.given
            )));
        }
        let lbs = u64::from(d.identity.logical_block_size);
        if !block.is_multiple_of(lbs) {
            return Err(PlanError::Unfit(format!(
                "--block {block} is not a multiple of {}'s logical block size ({lbs} bytes); use a power of two such as 1m or 4m",
                d.given
            )));
        }
    }
    check_fits("--block", block, devices)
}

/// A read size every disk holds at least once: a larger one reads nothing
/// whole (a random read of it fails on every disk, and a pass would time
/// a cut-short read), so it is refused before any disk is read, naming the
/// smallest disk and the largest size that fits it.
fn check_fits(flag: &str, block: u64, devices: &[BlockDevice]) -> Result<(), PlanError> {
    let Some(d) = devices.iter().min_by_key(|d| d.identity.size_bytes) else { return Ok(()) };
    let size = d.identity.size_bytes;
    if block <= size {
        return Ok(());
    }
    let human = crate::units::human_bytes_binary;
    Err(PlanError::Unfit(format!(
        "{flag} {} does not fit {}, which holds {} ({size} bytes): give at most {size} bytes, or leave {flag} out for its default",
        human(block),
        d.given,
        human(size),
    )))
}

fn open(d: &BlockDevice) -> Result<File, PlanError> {
    open_direct(Path::new(&d.given)).map_err(|e| match e.raw_os_error() {
        Some(nix::libc::EACCES) | Some(nix::libc::EPERM) if !nix::unistd::Uid::effective().is_root() => {
            DeviceError::NoPermission(d.given.clone()).into()
        }
        // Root refused: not a matter of running as root.
        Some(nix::libc::EACCES) | Some(nix::libc::EPERM) => PlanError::Open {
            path: d.given.clone(),
            detail: format!(
                "refused even to root ({e}): a security module, the hypervisor or the device itself locks it; see dmesg"
            ),
        },
        Some(nix::libc::EINVAL) => PlanError::Open {
            path: d.given.clone(),
            detail: "the device does not support O_DIRECT, which arrayburn needs to measure the disk \
                     rather than the page cache; check the disk itself, not a virtual layer over it"
                .into(),
        },
        Some(nix::libc::ENXIO) | Some(nix::libc::ENOMEDIUM) => PlanError::Open {
            path: d.given.clone(),
            detail: "no medium or device gone; check that the disk is attached".into(),
        },
        _ => PlanError::Open {
            path: d.given.clone(),
            detail: e.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serial_pass_is_sliced_only_where_each_slice_is_long_enough() {
        let s = Duration::from_secs;
        assert_eq!([6, 2, 1, 3].map(|t| slices_for(6, s(t))), [6, 2, 1, 3]);
        assert_eq!(slices_for(6, Duration::from_millis(2500)), 2);
        let gib = 1u64 << 30;
        // Full passes: parts of 16 GiB at least, of the smallest disk.
        let parts = [20 * gib, 32 * gib, 40 * gib, 20_000 * gib].map(|b| full_slices(6, b));
        assert_eq!(parts, [1, 2, 2, 6]);
        assert_eq!(full_slices(1, 20_000 * gib), 1, "--slices 1 reads each disk at once");
    }
}

//! From `burnin --verify` flags to the disks a verify reads back: each
//! disk's burn-in checkpoint found in `--state`, valid, made for this disk
//! by what it says of itself, and its blocks sampled to be the run's; the
//! verify's own checkpoint made beside it (or, with `--resume`, an
//! interrupted verify's taken up). Every refusal happens here, before the
//! disks are read whole.
//!
//! It must not write to a disk (it reads: sampled blocks, SMART) and must
//! not judge.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::burnin::health;
use crate::burnin::state::{At, Checkpoint, Phase, Store, Verifies};
use crate::burnin::targets::{Target, read_targets};
use crate::cli::BurninArgs;
use crate::device::lock::DiskLock;
use crate::io::Bounds;
use crate::stop::StopFlag;
use crate::units::rfc3339;

use super::settings::settings_of;

/// A verify's disks (their checkpoint names are the verify's own), their
/// locks, their verify checkpoints and the store those are kept in.
pub type ToVerify = (Vec<Target>, Vec<DiskLock>, Vec<Checkpoint>, Store);

/// What `burnin --verify` reads: every disk's burn-in proven to be on it,
/// a verify's checkpoint for each (fresh, with SMART as it is now, or an
/// interrupted verify's with `--resume`).
pub fn to_verify(args: &BurninArgs, argv: &[String], stop: &StopFlag) -> Result<ToVerify> {
    let (mut targets, locks) = read_targets(&args.devices, None, args.ignore_lock)?;
    let store = Store::open(&args.state).map_err(|e| {
        anyhow::anyhow!(
            "--state {}: cannot keep a verify's checkpoints there ({e}); give the --state its burn-in kept (nothing was written)",
            args.state.display()
        )
    })?;
    let id = crate::burnin::state::fresh_id();
    let mut points = Vec::new();
    for t in &mut targets {
        let burned = burned(&store, t, args, stop)?;
        let name = Checkpoint::verify_name(&t.checkpoint);
        let point = match (store.load(&name).map_err(anyhow::Error::msg)?, args.resume) {
            (Some(v), true) => resumed(v, &burned, (&store, &name), t)?,
            (None, true) => bail!(
                "--verify --resume: {} has no verify to continue in {} (looked for {}); leave out --resume to begin one (nothing was written)",
                t.dev.given,
                args.state.display(),
                store.path(&name).display()
            ),
            (Some(v), false) if v.at.phase != Phase::Done => bail!(
                "--verify: {} has an unfinished verify ({}) checkpointed in {}: add --resume to continue it, or move that file away to begin again (nothing was written)",
                t.dev.given,
                v.place(),
                store.path(&name).display()
            ),
            (_, false) => {
                let cycles = args.cycles.map(|n| (n, args.spin_up_timeout, args.power_cycle));
                let mut v = fresh(&burned, (&t.dev.given, &id), (argv, cycles), settings_of(args));
                let verdict = burn_verdict(&store, &burned, t);
                v.verifies.iter_mut().for_each(|x| x.burn_verdict = verdict.clone());
                v
            }
        };
        t.checkpoint = name;
        points.push(point);
    }
    if let Some(other) = points.iter().find(|c| c.own_id() != points[0].own_id()) {
        bail!(
            "--verify --resume: {} and {} were checkpointed by different verifies; resume each on its own (nothing was written)",
            points[0].device,
            other.device
        );
    }
    refuse_unswitched(&targets, &points)?;
    refuse_untooled(&targets, &points)?;
    if !args.resume {
        smart_now(&mut points, &targets, args, stop)?;
    }
    Ok((targets, locks, points, store))
}

/// Why `t` cannot be verified from `state`: it holds no checkpoint `name`
/// (looked for at `path`); where one of that disk is kept instead, or the
/// command that finds them.
fn no_checkpoint(t: &Target, state: &Path, (name, path): (&str, &Path)) -> anyhow::Error {
    let way = match kept_elsewhere(state, name).as_slice() {
        [] => format!(
            "give the --state its burn-in kept (by default {}; `find / -xdev -name '{name}'` lists this disk's checkpoints on this machine)",
            crate::defaults::STATE_DIR
        ),
        found => {
            let at: Vec<String> = found.iter().map(|d| d.display().to_string()).collect();
            format!(
                "this disk's burn-in checkpoint is in {}: give --state {}",
                at.join(" and "),
                at[0]
            )
        }
    };
    anyhow::anyhow!(
        "--verify: {} has no burn-in checkpoint in {} (looked for {}); {way} (nothing was written)",
        t.dev.given,
        state.display(),
        path.display()
    )
}

/// The directories other than `state` that hold a checkpoint `name` (a
/// regular file, no link followed): the default state directory, and the
/// directories in `state` (a `--state` naming the parent of the burn-in's,
/// as `/var/lib/arrayburn` for `/var/lib/arrayburn/burnin`).
fn kept_elsewhere(state: &Path, name: &str) -> Vec<PathBuf> {
    let inside = std::fs::read_dir(state).into_iter().flatten().flatten().take(1000);
    let dirs = std::iter::once(PathBuf::from(crate::defaults::STATE_DIR))
        .chain(inside.map(|e| e.path()).filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir())));
    let mut found: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let holds = d.join(name).symlink_metadata().is_ok_and(|m| m.is_file());
        if holds && d != state && !found.contains(&d) {
            found.push(d);
        }
    }
    found
}

/// Refuses a disk whose verify cuts its slot's power (`--power-cycle`)
/// in no slot whose power the kernel can switch.
fn refuse_unswitched(targets: &[Target], points: &[Checkpoint]) -> Result<()> {
    for (t, c) in targets.iter().zip(points) {
        let power = c.verifies.as_ref().is_some_and(|v| v.power);
        if power && crate::burnin::cycle::slot_power(&t.dev).is_none() {
            bail!(
                "--power-cycle: {} is in no enclosure slot whose power the kernel can switch (no power_status in its slot under /sys/class/enclosure); leave out --power-cycle to spin it down instead (nothing was written)",
                t.dev.given
            );
        }
    }
    Ok(())
}

/// Refuses a verify whose spin cycles need a program not installed.
fn refuse_untooled(targets: &[Target], points: &[Checkpoint]) -> Result<()> {
    for (t, c) in targets.iter().zip(points) {
        let spins = c.verifies.as_ref().is_some_and(|v| v.spin_up_timeout_s.is_some() && !v.power);
        if let Some(why) = spins.then(|| crate::burnin::cycle::missing_tool(&t.dev)).flatten() {
            bail!("{why}");
        }
    }
    Ok(())
}

/// A new verify's SMART before it reads (its delta at the end is the
/// verify's own), or why there is none.
fn smart_now(
    points: &mut [Checkpoint],
    targets: &[Target],
    args: &BurninArgs,
    stop: &StopFlag,
) -> Result<()> {
    let before = health::smart_before(targets, args.smart, &|| stop.is_set())?;
    for (c, smart) in points.iter_mut().zip(before) {
        (c.smart_before, c.smart_note) = health::split(smart);
    }
    Ok(())
}

/// Disk `t`'s burn-in checkpoint: found, valid, made for this disk, with
/// blocks written, and (sampled) still on it; `t` takes its range and
/// block identity.
fn burned(store: &Store, t: &mut Target, args: &BurninArgs, stop: &StopFlag) -> Result<Checkpoint> {
    let (name, c) = store.find(t)?;
    let path = store.path(&name);
    let Some(c) = c else { return Err(no_checkpoint(t, &args.state, (&name, &path))) };
    let newer =
        |why: String| anyhow::anyhow!("--verify: {}: {why} (nothing was written)", path.display());
    c.check_settings().map_err(newer)?;
    if let Err(why) = c.validate(c.size_bytes, t.dev.identity.logical_block_size) {
        bail!(
            "--verify: {}: {why}; the file is damaged or was edited, and cannot say what the disk holds (nothing was written)",
            path.display()
        );
    }
    let not_it = |why: String| {
        anyhow::anyhow!(
            "--verify: {} is not the disk checkpointed in {}: {why}; name the disk that was burned in (nothing was written)",
            t.dev.given,
            path.display()
        )
    };
    c.matches(&t.dev).map_err(not_it)?;
    if c.written().is_empty() {
        bail!(
            "--verify: {}'s burn-in (run {}, {}) wrote nothing yet: there is nothing to read back (nothing was written)",
            t.dev.given,
            c.run_id,
            c.place()
        );
    }
    (t.start, t.end) = (c.start_byte, c.end_byte);
    t.disk = c.disk_hash.unwrap_or(t.disk);
    t.checkpoint = name;
    let run = c.run_number().unwrap_or_default();
    let bounds = Bounds::new(stop, args.io.io_timeout);
    crate::burnin::resume::carries(t, &c, run, &bounds).map_err(|why| {
        anyhow::anyhow!(
            "--verify: {}: {why}: written since its burn-in (run {}), or another disk under its name; there is nothing of the run's to verify (nothing was written)",
            t.dev.given,
            c.run_id
        )
    })?;
    Ok(c)
}

/// A new verify of `burned`'s blocks, as one read-back pass over its range.
/// `cycles`: `--cycles`, `--spin-up-timeout` and `--power-cycle`, where
/// given.
fn fresh(
    burned: &Checkpoint,
    (device, id): (&str, &str),
    (argv, cycles): (&[String], Option<(u16, std::time::Duration, bool)>),
    settings: crate::burnin::settings::Settings,
) -> Checkpoint {
    let now = rfc3339(std::time::SystemTime::now());
    let start = burned.start_byte;
    Checkpoint {
        started_at: now.clone(),
        saved_at: now,
        device: device.to_string(),
        passes: cycles.map_or(1, |(n, _, _)| n),
        command_line: argv.to_vec(),
        settings: Some(settings),
        at: At { phase: Phase::Verify, ..At::first(start) },
        burn: Default::default(),
        smart_before: None,
        smart_note: None,
        self_test: None,
        probe: None,
        scattered: None,
        verifies: Some(Verifies {
            burned: burned.at,
            passes: burned.passes,
            burned_from: burned.started_at.clone(),
            burned_until: burned.saved_at.clone(),
            id: id.to_string(),
            burn_verdict: None,
            spin_up_timeout_s: cycles.map(|(_, within, _)| within.as_secs_f64()),
            power: cycles.is_some_and(|(_, _, power)| power),
            stripes: burned.burn.stripes,
        }),
        ..burned.clone()
    }
}

/// An interrupted verify taken up: of this burn-in as it stands now, valid,
/// made for this disk.
fn resumed(
    mut v: Checkpoint,
    burned: &Checkpoint,
    (store, name): (&Store, &str),
    t: &Target,
) -> Result<Checkpoint> {
    let path = store.path(name);
    let of_it = v.verifies.as_ref().is_some_and(|x| {
        v.run_id == burned.run_id && x.burned == burned.at && x.passes == burned.passes
    });
    if !of_it || v.at.phase == Phase::Done {
        bail!(
            "--verify --resume: {} holds no unfinished verify of {}'s burn-in as checkpointed now (run {}); leave out --resume to begin one (nothing was written)",
            path.display(),
            t.dev.given,
            burned.run_id
        );
    }
    let newer = |why: String| {
        anyhow::anyhow!("--verify --resume: {}: {why} (nothing was written)", path.display())
    };
    v.check_settings().map_err(newer)?;
    if let Err(why) = v.validate(v.size_bytes, t.dev.identity.logical_block_size) {
        bail!(
            "--verify --resume: {}: {why}; the file is damaged or was edited: move it away and begin a verify without --resume (nothing was written)",
            path.display()
        );
    }
    v.burn.resumes += 1;
    Ok(v)
}

/// The burn-in's verdict on disk `t`, as the report it kept in `runs/`
/// says it (found by serial, else by the path it was burned under; by
/// both where disks of the run share a serial, as the namespaces of one
/// NVMe controller do).
fn burn_verdict(store: &Store, c: &Checkpoint, t: &Target) -> Option<String> {
    let kept: serde_json::Value = serde_json::from_slice(&store.kept(&c.run_id)?).ok()?;
    let disks = kept.get("disks")?.as_array()?;
    let serial = t.dev.identity.serial.as_deref();
    let text =
        |d: &serde_json::Value, k: &str| d.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let at = |d: &&serde_json::Value| text(d, "path").as_deref() == Some(c.device.as_str());
    let found = match serial {
        Some(s) => {
            let same: Vec<&serde_json::Value> =
                disks.iter().filter(|d| text(d, "serial").as_deref() == Some(s)).collect();
            if same.len() > 1 { same.into_iter().find(|d| at(d)) } else { same.first().copied() }
        }
        None => disks.iter().find(at),
    };
    let verdict = found?.get("verdict")?.as_str()?;
    Some(crate::escape::terminal(verdict))
}

/// A verify of its own after a burn-in's passes (`--idle`, `--cycles`;
/// a resume takes them from the run it goes on): how long every disk idles
/// first, and the verify's command line, its disks added when the passes
/// are done.
#[derive(Debug, Clone)]
pub struct ThenVerify {
    pub idle: std::time::Duration,
    pub words: Vec<String>,
    /// The verify's settings, as `words` give them (its disks left out):
    /// read once here, where a verify that could not begin is refused
    /// before the burn-in writes.
    pub args: BurninArgs,
    /// Its read-backs follow spin-downs (`--cycles` without
    /// `--power-cycle`): the spin-down's program is needed.
    pub spins: bool,
}

impl ThenVerify {
    /// The verify `args` (and `first`, the run a resume goes on) ask for
    /// after the passes, None where they ask for none. Its outputs go
    /// beside the burn-in's (`NAME-verify.json`, `DIR-verify`; the same
    /// `--metrics`), proven writable here; one the burn-in's report takes
    /// whole (standard output, a pipe) is refused.
    pub fn of(
        args: &BurninArgs,
        first: Option<&crate::burnin::settings::Settings>,
        outputs: &[(&'static str, Option<PathBuf>)],
        judged: (f64, u64),
    ) -> Result<Option<Self>> {
        let idle = args.idle.or(first.and_then(|f| f.idle));
        let cycles = args.cycles.or(first.and_then(|f| f.cycles));
        if idle.is_none() && cycles.is_none() {
            return Ok(None);
        }
        let (within, power) = match (args.cycles, first) {
            (None, Some(f)) => (f.spin_up_timeout, f.power_cycle),
            _ => (args.spin_up_timeout, args.power_cycle),
        };
        let mut beside = Vec::new();
        for (name, given) in outputs {
            let Some(p) = given else { continue };
            let special = std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir());
            if p == Path::new("-") || special {
                bail!(
                    "--{name} {}: with --idle or --cycles the burn-in and the verify after it each write a report, and this takes one; give a file (the verify's goes beside it as NAME-verify) (nothing was written)",
                    p.display()
                );
            }
            beside.push((*name, Some(verify_beside(name, p))));
        }
        let flag = |n: &str| beside.iter().find(|(x, _)| *x == n).and_then(|(_, p)| p.as_deref());
        let outs = super::burn_outputs::outputs([
            flag("json"),
            flag("out"),
            flag("metrics"),
            flag("record"),
            flag("ocp-diag"),
        ])?;
        super::burn_outputs::refuse_outputs_in(&args.state, &outs)?;
        let mut words = super::burn_outputs::run_words(args, "--verify", &beside, judged);
        if let Some(n) = cycles {
            let within = format!("{}s", within.as_secs_f64());
            words.extend(["--cycles".into(), n.to_string(), "--spin-up-timeout".into(), within]);
            words.extend(power.then(|| "--power-cycle".to_string()));
        }
        let spins = cycles.is_some() && !power;
        let args = verify_args(&words)?;
        Ok(Some(Self { idle: idle.unwrap_or_default(), words, args, spins }))
    }

    /// The verify's command line for `disks`.
    pub fn line(&self, disks: &[String]) -> Vec<String> {
        self.words.iter().chain(disks).cloned().collect()
    }

    /// The verify's settings for `disks`.
    pub fn args(&self, disks: &[String]) -> BurninArgs {
        BurninArgs { devices: disks.to_vec(), ..self.args.clone() }
    }

    /// The same, as a shell reads it.
    pub fn shown(&self, disks: &[String]) -> String {
        let line = self.line(disks);
        line.iter().map(|w| super::burn_outputs::shell_word(w)).collect::<Vec<_>>().join(" ")
    }
}

/// The verify's settings its `words` give (every other as clap leaves
/// it), a disk to read named for the parse alone.
fn verify_args(words: &[String]) -> Result<BurninArgs> {
    use clap::Parser;
    let line = words.iter().cloned().chain(["-".to_string()]);
    match crate::cli::Cli::try_parse_from(line).map(|c| c.command) {
        Ok(crate::cli::Command::Burnin(a)) => Ok(BurninArgs { devices: Vec::new(), ..a }),
        Ok(_) => unreachable!("the verify's words name burnin"),
        Err(e) => bail!(
            "the verify after the burn-in could not be made ({}); run the burn-in without --idle or --cycles and verify after it with --verify (nothing was written)",
            e.kind()
        ),
    }
}

/// Where a verify after a burn-in writes what the burn-in's `--FLAG p`
/// names: a file `report.json` → `report-verify.json`, a directory
/// (`--out`) `run.1` → `run.1-verify`; the same `--metrics` (the latest
/// run's).
fn verify_beside(flag: &str, p: &Path) -> PathBuf {
    let whole = p.file_name().unwrap_or_default().to_string_lossy();
    let stem = p.file_stem().unwrap_or_default().to_string_lossy();
    let name = match (flag, p.extension()) {
        ("metrics", _) => return p.to_path_buf(),
        ("out", _) | (_, None) => format!("{whole}-verify"),
        (_, Some(ext)) => format!("{stem}-verify.{}", ext.to_string_lossy()),
    };
    p.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verify_after_writes_beside_the_burn_ins_outputs() {
        let beside = |p: &str| verify_beside("json", Path::new(p)).to_string_lossy().into_owned();
        assert_eq!(beside("/srv/r/burn.json"), "/srv/r/burn-verify.json");
        assert_eq!(beside("burn.tar.gz"), "burn.tar-verify.gz");
        assert_eq!(beside("/srv/r/bundle"), "/srv/r/bundle-verify");
        assert_eq!(beside("/srv/r/bundle/"), "/srv/r/bundle-verify");
        let dir = |p: &str| verify_beside("out", Path::new(p));
        assert_eq!(dir("/srv/reports.2026"), Path::new("/srv/reports.2026-verify"));
        assert_eq!(dir("/srv/run/"), Path::new("/srv/run-verify"));
        let same = Path::new("/var/lib/node/arrayburn.prom");
        assert_eq!(verify_beside("metrics", same), same, "the latest run's metrics");
    }
}

//! Checkpoints: one small JSON file per disk in `--state DIR`, so that a
//! burn-in survives a reboot, a closed terminal or a Ctrl-C.
//!
//! A checkpoint says which run wrote the disk (run id, the seed of every
//! block), what the disk is (serial, model, size: a resume refuses another
//! disk), what was asked (range, passes, I/O size), where the run is (pass,
//! phase, and the bytes of that phase done, from the range's start), what
//! it has found so far, and SMART as it was before the first byte.
//!
//! ddrescue's rule: the file never claims what is not on the disk. During a
//! write phase the disk's cache is flushed (fdatasync) before a checkpoint
//! names the bytes written; the file is written under a temporary name,
//! synced and renamed, and the directory synced, so a crash leaves the old
//! checkpoint or the new one, never half of one. A checkpoint is saved at
//! least every `--checkpoint-every` seconds (30), at the end of each phase,
//! and when a signal stops the run: a reboot loses at most one interval.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::block::{BLOCK, Pattern};
use super::record::DiskBurn;
pub use super::record::{At, Phase};
use super::smart::{SelfTest, Snapshot, TestKind};
use super::stripes::Stripes;
use crate::device::BlockDevice;
use crate::output::Dir;

/// The passes of a read-only soak run by `--duration` without `--passes`:
/// as many as the time allows (never checkpointed: a soak keeps none).
pub const PASSES_BY_TIME: u16 = u16::MAX;

/// The format of the file; a resume refuses another.
pub const FORMAT: u32 = 1;

/// The most passes a burn-in makes (a soak run by time counts its own).
pub const MAX_PASSES: u16 = 1000;

/// One disk's checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    pub format: u32,
    /// The run every block carries (16 hex digits), and when it began
    /// (RFC 3339).
    pub run_id: String,
    pub started_at: String,
    /// When this checkpoint was saved.
    pub saved_at: String,
    /// The disk: as the user named it, and what identifies it.
    pub device: String,
    /// Its kernel name when the checkpoint was made (`sdb`, `loop3`).
    #[serde(default)]
    pub name: Option<String>,
    pub by_id: Option<String>,
    pub serial: Option<String>,
    #[serde(default)]
    pub wwn: Option<String>,
    pub model: Option<String>,
    pub size_bytes: u64,
    /// The identity hash every block of this disk carries (recomputed
    /// from the identity for files that predate it).
    #[serde(default)]
    pub disk_hash: Option<u32>,
    /// What was asked.
    pub start_byte: u64,
    pub end_byte: u64,
    pub passes: u16,
    pub io_bytes: u64,
    pub pattern: Pattern,
    /// The self-identifying blocks' format (`block::VERSION`; a file that
    /// names none was begun by an arrayburn that wrote version 1, and its
    /// run goes on writing that).
    #[serde(default = "block_version_1")]
    pub block_version: u16,
    /// The command line that began the run (as its reports show it; a
    /// resume reads `settings`, or this where a checkpoint written before
    /// them keeps none).
    pub command_line: Vec<String>,
    /// The settings the run began with: a resume runs with them but for
    /// what its own command line says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<crate::burnin::settings::Settings>,
    /// Where the run stands, and what it measured and found so far.
    pub at: At,
    pub burn: DiskBurn,
    /// SMART before the first byte was written (the delta at the end is
    /// taken against it), or why there is none.
    pub smart_before: Option<Snapshot>,
    pub smart_note: Option<String>,
    /// The drive's self-test before the run (`--smart-test`): which, and
    /// how it ended.
    #[serde(default)]
    pub self_test: Option<(TestKind, SelfTest)>,
    /// What the capacity probe found before the run (a fresh burn-in of
    /// whole disks): a fake disk is burned only where it holds data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::burnin::probe::Probed>,
    /// What the scattered-write probe found before the run
    /// (`burnin::scatter`; a fresh burn-in, not with `--smr-probe 0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scattered: Option<crate::burnin::scatter::Scattered>,
    /// A verify's checkpoint (`burnin --verify`): the burn-in whose blocks
    /// it reads back (its run id, passes and pattern are this file's), and
    /// where that run stood. None: a burn-in's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifies: Option<Verifies>,
}

/// What a verify reads back: where the burn-in it verifies stood when its
/// blocks were last written, and when that was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verifies {
    /// The burn-in's place (which pass's blocks are where), of its passes
    /// asked (the verify reads its blocks back once: this file's `passes`
    /// is 1).
    pub burned: At,
    pub passes: u16,
    /// When the burn-in began, and when its checkpoint was last saved
    /// (its blocks are at least this old when read back).
    pub burned_from: String,
    pub burned_until: String,
    /// The verify's own id (its log and report in `runs/`).
    pub id: String,
    /// The burn-in's verdict on this disk, as its report kept in `runs/`
    /// says it (`"healthy"`, `"return"`...); None where none is kept.
    #[serde(default)]
    pub burn_verdict: Option<String>,
    /// `--cycles`: each read-back (this file's `passes`) begins with a
    /// spin cycle, a disk given this many seconds to answer after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_up_timeout_s: Option<f64>,
    /// `--power-cycle`: each cycle cuts the slot's power instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub power: bool,
    /// A burn-in fitted to a deadline: its stripes as it left them (only
    /// those are read back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripes: Option<Stripes>,
}

impl Checkpoint {
    /// The stretches whose content this checkpoint knows, each with the
    /// pass whose blocks it holds: (from, to, pass). A verify's are the
    /// burn-in's it reads back.
    pub fn written(&self) -> Vec<(u64, u64, u16)> {
        let (start, end) = (self.start_byte, self.end_byte);
        let at = self.verifies.as_ref().map_or(self.at, |v| v.burned);
        if let Some(s) = self.stripes() {
            let passes = self.verifies.as_ref().map_or(self.passes, |v| v.passes);
            return striped_written(&s, (start, end), (at, passes));
        }
        let mut out = Vec::new();
        match at.phase {
            Phase::Write => {
                if at.done_until > start {
                    out.push((start, at.done_until, at.pass));
                }
                // The rest still holds the previous pass, verified.
                if at.pass > 1 && end > at.done_until {
                    out.push((at.done_until, end, at.pass - 1));
                }
            }
            Phase::Verify | Phase::Done => out.push((start, end, at.pass)),
        }
        out
    }

    /// The stripes of a burn-in fitted to a deadline (a verify's: of the
    /// burn-in it reads back); None where the range is burned whole.
    pub fn stripes(&self) -> Option<Stripes> {
        match &self.verifies {
            Some(v) => v.stripes,
            None => self.burn.stripes,
        }
    }

    /// The id of this run's log and report in `runs/`: a verify's own,
    /// else the burn-in's.
    pub fn own_id(&self) -> &str {
        self.verifies.as_ref().map_or(&self.run_id, |v| &v.id)
    }

    /// The name of a verify's checkpoint beside the burn-in's `name`.
    pub fn verify_name(name: &str) -> String {
        format!("verify-{}", name.strip_prefix("burnin-").unwrap_or(name))
    }
}

/// What a striped burn-in of `passes` passes has written over `range` as
/// it stands at `at` (in the stripe it is burning): each stripe done holds
/// its last pass; the one begun, what its place says. In order over the
/// range.
fn striped_written(
    s: &Stripes,
    range: (u64, u64),
    (at, passes): (At, u16),
) -> Vec<(u64, u64, u16)> {
    let last = passes.max(1);
    let mut out: Vec<(u64, u64, u16)> = Vec::new();
    let mut add = |from: u64, to: u64, pass: u16| {
        if from >= to {
            return;
        }
        match out.last_mut() {
            Some(l) if l.1 == from && l.2 == pass => l.1 = to,
            _ => out.push((from, to, pass)),
        }
    };
    let now = s.next(&super::stripes::order(s.slots)).filter(|_| at.phase != Phase::Done);
    let mut done: Vec<(u64, u64)> = s.tested(range);
    if let Some(slot) = now {
        done.push(s.span(range, slot));
        done.sort_unstable();
    }
    let current = now.map(|slot| s.span(range, slot));
    for (from, to) in done {
        let Some((a, b)) = current.filter(|c| *c == (from, to)) else {
            add(from, to, last);
            continue;
        };
        // The stripe being burned: its own place.
        match at.phase {
            Phase::Write => {
                add(a, at.done_until.clamp(a, b), at.pass);
                if at.pass > 1 {
                    add(at.done_until.clamp(a, b), b, at.pass - 1);
                }
            }
            _ => add(a, b, at.pass),
        }
    }
    out
}

fn block_version_1() -> u16 {
    super::block::VERSION_1
}

/// The longest phase time a checkpoint can hold (some 31 years).
const MAX_SECONDS: f64 = 1e9;

/// A field's refusal: its name, its value and what is written instead.
fn bad(field: &str, value: String, want: &str) -> Result<(), String> {
    Err(format!("{field} is {value}, where {want}"))
}

impl Checkpoint {
    /// Where this run stands, in words ("pass 1 of 2, write 40%").
    pub fn place(&self) -> String {
        if self.at.phase == Phase::Done {
            return format!("all {} pass(es) done", self.passes);
        }
        let range = (self.start_byte, self.end_byte);
        if let Some(s) = self.burn.stripes.filter(|_| self.verifies.is_none()) {
            let c = s.coverage(range);
            return format!(
                "stripe {} of {} ({:.1} % of the range burned), pass {} of {}",
                super::stripes::grouped(c.stripes + 1),
                super::stripes::grouped(c.of),
                c.pct,
                self.at.pass,
                self.passes
            );
        }
        let pct = self.at.percent(range.0, range.1);
        format!("pass {} of {}, {} {pct:.0}%", self.at.pass, self.passes, self.at.phase.word())
    }

    /// The passes asked for; None for a soak run by time.
    pub fn passes_asked(&self) -> Option<u16> {
        (self.passes != PASSES_BY_TIME).then_some(self.passes)
    }

    /// Bytes this disk has left to write, and to read back.
    pub fn left(&self) -> (u64, u64) {
        if self.at.phase == Phase::Done {
            return (0, 0);
        }
        let len = self.end_byte - self.start_byte;
        if let Some(s) = self.burn.stripes.filter(|_| self.verifies.is_none()) {
            // The stripes left, each written and read back every pass.
            let rest = len - s.tested_bytes((self.start_byte, self.end_byte));
            let each = rest.saturating_mul(u64::from(self.passes));
            return (each, each);
        }
        let into = self.at.done_until.saturating_sub(self.start_byte);
        let writing = self.at.phase != Phase::Verify;
        crate::progress::bytes_left(len, (self.at.pass, self.passes), (writing, into), true)
    }

    /// The run id as a number; `None` when it is not 1 to 16 hex digits.
    pub fn run_number(&self) -> Option<u64> {
        let ok = (1..=16).contains(&self.run_id.len())
            && self.run_id.bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| u64::from_str_radix(&self.run_id, 16).ok()).flatten()
    }

    /// Whether every field holds what a checkpoint of a disk of
    /// `size_bytes` (logical blocks of `lbs` bytes) can hold: a damaged
    /// or hand-edited file that still parses is refused here, naming the
    /// field, rather than steering a destructive run.
    pub fn validate(&self, size_bytes: u64, lbs: u32) -> Result<(), String> {
        let whole = |b: u64| b.is_multiple_of(BLOCK as u64) && b.is_multiple_of(u64::from(lbs));
        self.check_run(size_bytes, &whole)?;
        self.check_place(&whole)?;
        self.check_burn()?;
        self.check_stripes(&whole)?;
        self.check_settings()?;
        self.check_verifies(&whole)
    }

    /// Its settings, where this build can take them: not of a later
    /// version (that arrayburn resumes it; the file is not damaged).
    pub fn check_settings(&self) -> Result<(), String> {
        self.settings.as_ref().map_or(Ok(()), |s| s.check())
    }

    /// A verify's: the burn-in's place it reads back.
    fn check_verifies(&self, whole: &dyn Fn(u64) -> bool) -> Result<(), String> {
        let Some(v) = &self.verifies else { return Ok(()) };
        if let Some(s) =
            v.spin_up_timeout_s.filter(|s| !(s.is_finite() && (0.0..=MAX_SECONDS).contains(s)))
        {
            return bad(
                "verifies.spin_up_timeout_s",
                s.to_string(),
                "0 to 1e9 seconds are written",
            );
        }
        let b = &v.burned;
        if !(1..=MAX_PASSES).contains(&v.passes) || !(1..=v.passes).contains(&b.pass) {
            return bad(
                "verifies.burned.pass",
                format!("{} of {}", b.pass, v.passes),
                &format!("1 to the burn-in's passes, at most {MAX_PASSES}, are written"),
            );
        }
        if !((self.start_byte..=self.end_byte).contains(&b.done_until) && whole(b.done_until)) {
            return bad(
                "verifies.burned.done_until",
                b.done_until.to_string(),
                "a whole block inside the range is written",
            );
        }
        Ok(())
    }

    /// The run's own fields: its format, block version, id, range, passes
    /// and request size.
    fn check_run(&self, size_bytes: u64, whole: &dyn Fn(u64) -> bool) -> Result<(), String> {
        if self.format != FORMAT {
            return bad(
                "format",
                self.format.to_string(),
                &format!("this arrayburn reads {FORMAT}"),
            );
        }
        let versions = [super::block::VERSION, super::block::VERSION_1];
        if !versions.contains(&self.block_version) {
            // Blocks of a format this build cannot read back would all be
            // foreign: a disk returned for the file's damage.
            return bad(
                "block_version",
                self.block_version.to_string(),
                &format!("this arrayburn writes {} or {}", versions[0], versions[1]),
            );
        }
        if self.run_number().is_none() {
            return bad("run_id", format!("{:?}", self.run_id), "1 to 16 hex digits are written");
        }
        let (start, end) = (self.start_byte, self.end_byte);
        if !(start < end && end <= size_bytes && whole(start) && whole(end)) {
            return bad(
                "start_byte..end_byte",
                format!("{start}..{end}"),
                &format!(
                    "a range of whole 4 KiB blocks inside the disk ({size_bytes} bytes) is written"
                ),
            );
        }
        if !(1..=MAX_PASSES).contains(&self.passes) {
            return bad(
                "passes",
                self.passes.to_string(),
                &format!("1 to {MAX_PASSES} are written"),
            );
        }
        if !(self.io_bytes > 0 && self.io_bytes <= 1 << 30 && whole(self.io_bytes)) {
            return bad(
                "io_bytes",
                self.io_bytes.to_string(),
                "a multiple of 4 KiB up to 1 GiB is written",
            );
        }
        Ok(())
    }

    /// Where the run stands: its pass and the span done.
    fn check_place(&self, whole: &dyn Fn(u64) -> bool) -> Result<(), String> {
        let (start, end) = (self.start_byte, self.end_byte);
        let at = &self.at;
        if !(1..=self.passes).contains(&at.pass) {
            return bad(
                "at.pass",
                at.pass.to_string(),
                &format!("1 to passes ({}) are written", self.passes),
            );
        }
        if at.phase == Phase::Done && at.pass != self.passes {
            return bad("at.pass", at.pass.to_string(), "a finished run is at its last pass");
        }
        let inside = |b: u64| (start..=end).contains(&b) && whole(b);
        if !(inside(at.done_until) && inside(at.interval_from) && at.interval_from <= at.done_until)
        {
            return bad(
                "at.interval_from..at.done_until",
                format!("{}..{}", at.interval_from, at.done_until),
                "a span of whole blocks inside the range is written",
            );
        }
        Ok(())
    }

    /// A deadline's stripes: whole blocks, as many as cover the range, no
    /// more done than there are; the place inside the stripe burned next.
    fn check_stripes(&self, whole: &dyn Fn(u64) -> bool) -> Result<(), String> {
        let Some(s) = self.stripes() else { return Ok(()) };
        let range = (self.start_byte, self.end_byte);
        let len = range.1 - range.0;
        if !(s.size > 0 && whole(s.size)) {
            return bad("stripes.size", s.size.to_string(), "a multiple of 4 KiB is written");
        }
        let slots = len.div_ceil(s.size);
        if s.slots != slots || slots > super::stripes::MOST_SLOTS || s.done > s.slots {
            return bad(
                "stripes.slots / stripes.done",
                format!("{} / {}", s.slots, s.done),
                &format!("{slots} stripes of this size cover the range, at most that many done"),
            );
        }
        if self.verifies.is_some() || self.at.phase == Phase::Done {
            return Ok(());
        }
        let Some(slot) = s.next(&super::stripes::order(s.slots)) else {
            return bad("at.phase", self.at.phase.word().into(), "every stripe is done");
        };
        let (a, b) = s.span(range, slot);
        let inside =
            (a..=b).contains(&self.at.done_until) && (a..=b).contains(&self.at.interval_from);
        if !inside {
            return bad(
                "at.done_until",
                self.at.done_until.to_string(),
                &format!("a place inside the stripe burned next ({a}..{b}) is written"),
            );
        }
        Ok(())
    }

    /// What the burn found so far: passes, times and bytes within what a
    /// run of these passes over this range can have.
    fn check_burn(&self) -> Result<(), String> {
        let (start, end) = (self.start_byte, self.end_byte);
        if self.burn.passes_done > self.passes {
            return bad(
                "burn.passes_done",
                self.burn.passes_done.to_string(),
                &format!("at most passes ({}) are written", self.passes),
            );
        }
        let b = &self.burn;
        let times = [("burn.write_s", b.write_s), ("burn.verify_s", b.verify_s)].into_iter();
        let passes = (b.write_pass_s.iter().map(|s| ("burn.write_pass_s", *s)))
            .chain(b.verify_pass_s.iter().map(|s| ("burn.verify_pass_s", *s)));
        for (field, s) in times.chain(passes) {
            if !(s.is_finite() && (0.0..=MAX_SECONDS).contains(&s)) {
                return bad(field, s.to_string(), "0 to 1e9 seconds are written");
            }
        }
        if b.write_pass_s.len() > usize::from(self.passes)
            || b.verify_pass_s.len() > usize::from(self.passes)
        {
            return bad(
                "burn.write_pass_s / burn.verify_pass_s",
                format!("{} / {} passes", b.write_pass_s.len(), b.verify_pass_s.len()),
                &format!("at most passes ({}) are written", self.passes),
            );
        }
        // A resume may write an interval again (its read-back failed):
        // twice the range a pass, at most.
        let most = (end - start).saturating_mul(2 * u64::from(self.passes));
        for (field, n) in
            [("burn.written_bytes", b.written_bytes), ("burn.verified_bytes", b.verified_bytes)]
        {
            if n > most {
                return bad(
                    field,
                    n.to_string(),
                    &format!("at most twice the range a pass ({most}) is written"),
                );
            }
        }
        Ok(())
    }

    /// Whether `dev` is the disk this checkpoint was made for, by what the
    /// disk says of itself (the blocks on it are read by the resume
    /// itself); the reason when not.
    pub fn matches(&self, dev: &BlockDevice) -> Result<(), String> {
        let id = &dev.identity;
        if self.size_bytes != id.size_bytes {
            return Err(format!(
                "it was made for a disk of {} bytes, this one has {}",
                self.size_bytes, id.size_bytes
            ));
        }
        let mut known =
            vec![("serial", &self.serial, &id.serial), ("model", &self.model, &id.model)];
        // Where both know it: a WWN and a by-id name stay with the disk.
        for (what, was, is) in [("WWN", &self.wwn, &id.wwn), ("by-id name", &self.by_id, &id.by_id)]
        {
            if was.is_some() && is.is_some() {
                known.push((what, was, is));
            }
        }
        // A disk with neither serial nor WWN (a loop device, many USB
        // bridges) is known by its kernel name too.
        let name = Some(id.name.clone());
        if self.serial.is_none() && self.wwn.is_none() && self.name.is_some() {
            known.push(("kernel name", &self.name, &name));
        }
        for (what, was, is) in known {
            if was != is {
                return Err(format!(
                    "it was made for {what} {}, this disk has {}",
                    shown(was),
                    shown(is)
                ));
            }
        }
        Ok(())
    }
}

fn shown(v: &Option<String>) -> String {
    v.as_deref().map_or("(none)".into(), crate::escape::terminal)
}

/// A fresh run id, 16 hex digits (the clock's nanoseconds mixed with the
/// process id; it only has to differ between runs on one disk).
pub fn fresh_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mixed = super::block::disk_hash(&format!("{t}:{}", std::process::id())) as u64 | (t << 32);
    format!("{mixed:016x}")
}

/// The subdirectory of `--state` that keeps each run's log and report.
pub const RUNS: &str = "runs";

/// The checkpoint directory (`--state DIR`), held open.
pub struct Store {
    dir: Dir,
}

impl Store {
    /// Opens `dir`, making it if missing, and proves checkpoints can be
    /// written there.
    pub fn open(dir: &Path) -> std::io::Result<Store> {
        std::fs::create_dir_all(dir)?;
        let dir = Dir::open(dir)?;
        dir.probe()?;
        Ok(Store { dir })
    }

    /// Where the checkpoint `name` is, for messages.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Reads the checkpoint `name`; `Ok(None)` when there is none.
    pub fn load(&self, name: &str) -> Result<Option<Checkpoint>, String> {
        let shown = self.path(name);
        match self.dir.read(name) {
            Ok(None) => Ok(None),
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                format!("{}: not a checkpoint ({e}): move it away to start over", shown.display())
            }),
            // Dir's own words name the file already.
            Err(e) => Err(e.to_string()),
        }
    }

    /// Every checkpoint kept here (`burnin-*.json`), by file name; one
    /// that cannot be read is passed over.
    pub fn all(&self) -> Vec<(String, Checkpoint)> {
        let Ok(entries) = std::fs::read_dir(self.dir.path()) else { return Vec::new() };
        let mut names: Vec<String> = (entries.flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("burnin-") && n.ends_with(".json"))
            .collect();
        names.sort();
        names.into_iter().filter_map(|n| Some((n.clone(), self.load(&n).ok()??))).collect()
    }

    /// The checkpoint of `t` here, under its own name or, where two disks
    /// of one run shared a serial, under the other form of it; the name
    /// it is (or would be) under.
    pub fn find(&self, t: &super::targets::Target) -> anyhow::Result<(String, Option<Checkpoint>)> {
        let other = super::targets::file_name(&t.dev, !t.checkpoint.contains('@'));
        for name in [t.checkpoint.clone(), other] {
            let c = self.load(&name).map_err(|e| anyhow::anyhow!("{e} (nothing was written)"))?;
            if c.is_some() {
                return Ok((name, c));
            }
        }
        Ok((t.checkpoint.clone(), None))
    }

    /// The run's log (`runs/RUN.log`, appended to: a resume of the run
    /// goes on in the same file), and its path.
    pub fn log(&self, run_id: &str) -> std::io::Result<(std::fs::File, PathBuf)> {
        let runs = self.dir.sub(RUNS)?;
        let name = format!("{run_id}.log");
        Ok((runs.append(&name)?, runs.path().join(name)))
    }

    /// Saves a disk's checkpoint `name` as `at` with burn `b` (its run's
    /// options from `c`): a checkpoint that cannot be saved is said once
    /// (`warned`); the burn-in goes on, but cannot be resumed from there.
    pub fn save_place(
        &self,
        (name, c): (&str, &Checkpoint),
        (b, at): (&DiskBurn, At),
        warned: &mut bool,
    ) {
        let now = Checkpoint {
            saved_at: crate::units::rfc3339(std::time::SystemTime::now()),
            at,
            burn: b.clone(),
            ..c.clone()
        };
        if let Err(e) = self.save(name, &now)
            && !std::mem::replace(warned, true)
        {
            tell!(
                "arrayburn burnin: warning: {}: cannot save its checkpoint ({e}); the burn-in goes on, but cannot be resumed from here",
                self.path(name).display()
            );
        }
    }

    /// The report kept for run `run_id` (`runs/RUN.json`), where there is one.
    pub fn kept(&self, run_id: &str) -> Option<Vec<u8>> {
        self.dir.sub(RUNS).ok()?.read(&format!("{run_id}.json")).ok()?
    }

    /// Keeps the run's report as [`Store::keep_report`] does, saying where
    /// (or, where it cannot, why: the run's other outputs still follow).
    pub fn keep(&self, run_id: &str, json: &[u8]) {
        match self.keep_report(run_id, json) {
            Ok(path) => tell!("arrayburn burnin: {}: the run's report", path.display()),
            Err(e) => {
                tell!("arrayburn burnin: warning: the report cannot be kept in --state ({e})")
            }
        }
    }

    /// Keeps the run's report (`runs/RUN.json`) whole, before any other
    /// output is written: a result no terminal, pipe or full disk elsewhere
    /// could take is here.
    pub fn keep_report(&self, run_id: &str, json: &[u8]) -> std::io::Result<PathBuf> {
        let runs = self.dir.sub(RUNS)?;
        let name = format!("{run_id}.json");
        runs.write(&name, json)?;
        runs.sync()?;
        Ok(runs.path().join(name))
    }

    /// Saves a checkpoint whole: a crash leaves the previous one or this
    /// one (the rename is only durable once the directory is synced).
    pub fn save(&self, name: &str, c: &Checkpoint) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec_pretty(c).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        self.dir.write(name, &bytes)?;
        self.dir.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_checkpoint_reads_back_the_same() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path()).unwrap();
        let p = d.path().join("burnin-x.json");
        assert!(store.load("burnin-x.json").unwrap().is_none());
        let c = Checkpoint {
            format: FORMAT,
            run_id: "00ff".into(),
            started_at: "2026-12-01T06:00:00Z".into(),
            saved_at: "2026-12-01T06:00:30Z".into(),
            device: "/dev/sdb".into(),
            name: Some("sdb".into()),
            by_id: None,
            serial: Some("ZL2ABC".into()),
            wwn: None,
            model: Some("ST20000NM007D".into()),
            size_bytes: 20 << 40,
            disk_hash: None,
            start_byte: 0,
            end_byte: 20 << 40,
            passes: 2,
            io_bytes: 4 << 20,
            pattern: Pattern::Blocks,
            block_version: crate::burnin::block::VERSION,
            command_line: vec!["arrayburn".into()],
            settings: None,
            at: At {
                pass: 2,
                phase: Phase::Verify,
                done_until: 17 << 40,
                interval_from: (17 << 40) - (4 << 30),
            },
            burn: DiskBurn::default(),
            smart_before: None,
            smart_note: Some("--smart off".into()),
            self_test: None,
            probe: None,
            scattered: None,
            verifies: None,
        };
        store.save("burnin-x.json", &c).unwrap();
        let back = store.load("burnin-x.json").unwrap().unwrap();
        assert_eq!(back.at, c.at);
        assert_eq!(back.serial, c.serial);
        assert_eq!(c.validate(20 << 40, 512), Ok(()));
        // Each damaged field is named.
        let broken = |f: &dyn Fn(&mut Checkpoint)| {
            let mut x = c.clone();
            f(&mut x);
            x.validate(20 << 40, 512).unwrap_err()
        };
        assert!(broken(&|x| x.run_id = "zz".into()).starts_with("run_id"));
        assert!(broken(&|x| x.block_version = 3).starts_with("block_version is 3"));
        assert!(broken(&|x| x.start_byte = x.end_byte + 4096).starts_with("start_byte"));
        assert!(broken(&|x| x.end_byte += 4096).starts_with("start_byte"));
        assert!(broken(&|x| x.start_byte = 512).starts_with("start_byte"));
        assert!(broken(&|x| x.passes = 0).starts_with("passes"));
        assert!(broken(&|x| x.at.pass = 3).starts_with("at.pass"));
        assert!(broken(&|x| x.at.done_until = 21 << 40).starts_with("at.interval"));
        assert!(broken(&|x| x.io_bytes = 1000).starts_with("io_bytes"));
        // Times and bytes no run can have (a resume burned the disk and
        // then panicked on them).
        assert!(broken(&|x| x.burn.write_s = -5.0).starts_with("burn.write_s is -5"));
        assert!(broken(&|x| x.burn.verify_pass_s = vec![1e300]).starts_with("burn.verify_pass_s"));
        assert!(broken(&|x| x.burn.write_pass_s = vec![1.0; 3]).starts_with("burn.write_pass_s"));
        assert!(broken(&|x| x.burn.written_bytes = 81 << 40).starts_with("burn.written_bytes"));
        std::fs::write(&p, "{").unwrap();
        assert!(store.load("burnin-x.json").unwrap_err().contains("not a checkpoint"));
    }

    #[test]
    fn a_checkpoint_an_older_arrayburn_saved_goes_on_writing_its_block_format() {
        let mut json = serde_json::to_value(fresh_point(1, 4096)).unwrap();
        assert_eq!(json["block_version"], crate::burnin::block::VERSION);
        json.as_object_mut().unwrap().remove("block_version");
        let old: Checkpoint = serde_json::from_value(json).unwrap();
        assert_eq!(old.block_version, crate::burnin::block::VERSION_1);
    }

    #[test]
    fn what_a_checkpoint_has_left() {
        let mut c = fresh_point(2, 1000);
        assert_eq!(c.left(), (2000, 2000), "two passes, each written and read");
        c.at = At { pass: 2, phase: Phase::Verify, done_until: 250, interval_from: 0 };
        assert_eq!(c.left(), (0, 750));
        c.at.phase = Phase::Done;
        assert_eq!(c.left(), (0, 0));
    }

    #[test]
    fn a_checkpoint_knows_which_pass_s_blocks_are_where_and_a_verify_reads_its_burn_in_s() {
        let mut c = fresh_point(3, 100 * 4096);
        assert!(c.written().is_empty(), "nothing written yet");
        c.at = At { pass: 2, phase: Phase::Write, done_until: 40 * 4096, interval_from: 0 };
        assert_eq!(c.written(), [(0, 40 * 4096, 2), (40 * 4096, 100 * 4096, 1)]);
        c.at.pass = 1;
        assert_eq!(c.written(), [(0, 40 * 4096, 1)], "pass 1's rest holds nothing of the run");
        c.at = At { pass: 3, phase: Phase::Verify, done_until: 4096, interval_from: 0 };
        assert_eq!(c.written(), [(0, 100 * 4096, 3)]);
        // A verify's checkpoint: its own place is a read-back's; the
        // blocks are where its burn-in left them.
        let burned = At { pass: 2, phase: Phase::Write, done_until: 40 * 4096, interval_from: 0 };
        let mut v = Checkpoint {
            passes: 1,
            at: At { pass: 1, phase: Phase::Verify, done_until: 8192, interval_from: 0 },
            verifies: Some(Verifies {
                burned,
                passes: 3,
                burned_from: String::new(),
                burned_until: String::new(),
                id: "2".into(),
                burn_verdict: None,
                spin_up_timeout_s: None,
                power: false,
                stripes: None,
            }),
            ..c.clone()
        };
        assert_eq!(v.written(), [(0, 40 * 4096, 2), (40 * 4096, 100 * 4096, 1)]);
        assert_eq!(v.own_id(), "2");
        assert_eq!(c.own_id(), "1");
        assert_eq!(Checkpoint::verify_name("burnin-ZL2ABC.json"), "verify-ZL2ABC.json");
        assert_eq!(v.validate(100 * 4096, 512), Ok(()));
        // The burn-in's place is checked as the file's own is.
        v.verifies.as_mut().unwrap().burned.pass = 4;
        assert!(v.validate(100 * 4096, 512).unwrap_err().starts_with("verifies.burned.pass"));
        v.verifies.as_mut().unwrap().burned = At { done_until: 101 * 4096, ..burned };
        assert!(v.validate(100 * 4096, 512).unwrap_err().starts_with("verifies.burned.done_until"));
    }

    #[test]
    fn a_striped_checkpoint_knows_its_stripes_what_is_left_and_where_it_may_stand() {
        // 10 stripes of 10 blocks, 2 passes; the order is 0, 9, 4, 2, 6...
        let b = 4096;
        let mut c = fresh_point(2, 100 * b);
        c.burn.stripes = Some(Stripes { size: 10 * b, slots: 10, done: 3, runs: 1 });
        // Three done (0, 9, 4), the fourth (2) in pass 2's write.
        c.at = At { pass: 2, phase: Phase::Write, done_until: 25 * b, interval_from: 20 * b };
        assert_eq!(
            c.written(),
            [
                (0, 10 * b, 2),
                (20 * b, 25 * b, 2),
                (25 * b, 30 * b, 1),
                (40 * b, 50 * b, 2),
                (90 * b, 100 * b, 2)
            ]
        );
        assert_eq!(c.validate(100 * b, 512), Ok(()));
        assert_eq!(c.left(), (140 * b, 140 * b), "seven stripes, two passes each");
        assert!(c.place().starts_with("stripe 4 of 10 (30.0 % of the range burned), pass 2 of 2"));
        // A place outside the stripe burned next is refused, as is more
        // done than there are or a size that does not cover the range.
        let outside = Checkpoint {
            at: At { done_until: 35 * b, interval_from: 30 * b, ..c.at },
            ..c.clone()
        };
        assert!(outside.validate(100 * b, 512).unwrap_err().starts_with("at.done_until"));
        let mut more = c.clone();
        more.burn.stripes = Some(Stripes { done: 11, ..more.burn.stripes.unwrap() });
        assert!(
            more.validate(100 * b, 512).unwrap_err().starts_with("stripes.slots / stripes.done")
        );
        let mut short = c.clone();
        short.burn.stripes = Some(Stripes { slots: 9, ..short.burn.stripes.unwrap() });
        assert!(
            short.validate(100 * b, 512).unwrap_err().starts_with("stripes.slots / stripes.done")
        );
        // All done: the whole range holds the last pass.
        c.burn.stripes = Some(Stripes { done: 10, ..c.burn.stripes.unwrap() });
        c.at = At { pass: 2, phase: Phase::Done, done_until: 100 * b, interval_from: 100 * b };
        assert_eq!(c.written(), [(0, 100 * b, 2)]);
        assert_eq!(c.validate(100 * b, 512), Ok(()));
    }

    fn fresh_point(passes: u16, len: u64) -> Checkpoint {
        Checkpoint {
            format: FORMAT,
            run_id: "1".into(),
            started_at: String::new(),
            saved_at: String::new(),
            device: "/dev/x".into(),
            name: None,
            by_id: None,
            serial: None,
            wwn: None,
            model: None,
            size_bytes: len,
            disk_hash: None,
            start_byte: 0,
            end_byte: len,
            passes,
            io_bytes: 4096,
            pattern: crate::burnin::block::Pattern::Blocks,
            block_version: crate::burnin::block::VERSION,
            command_line: vec![],
            settings: None,
            at: At::first(0),
            burn: crate::burnin::record::DiskBurn::default(),
            smart_before: None,
            smart_note: None,
            self_test: None,
            probe: None,
            scattered: None,
            verifies: None,
        }
    }
}

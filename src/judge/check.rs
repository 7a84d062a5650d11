//! The check's questions while it runs, answered from the passes'
//! measurements (`measure`'s [`PassRun`]s and [`Slice`]s): which disks to
//! re-measure before their verdict and beside what, which groups of disks
//! that lost speed together to read again, and whether the rounds read so
//! far decide. The rules are `pass`', `confirm`'s and `groups`'; this gives
//! them the facts of what was measured, the same facts the report's
//! verdicts are judged on.
//!
//! It must not read a disk, lay out a report or word anything.

use super::confirm::{self, Calls, Confirmed};
use super::disk::other_evidence;
use super::groups::{self, GroupConfirmed};
use super::pass::{PassJudgement, judge};
use super::slices::SliceSpeed;
use super::surface::MIN_BUCKET_S;
use super::{Facts, Thresholds};
use crate::defaults::MIN_BUCKET_READS;
use crate::device::BlockDevice;
use crate::measure::{Beside, DiskRun, PassKind, PassRun, Slice, Window};
use crate::units::mb_per_s;

/// The check's disks as the rules see them: each plan disk (command-line
/// order), its peer group, and the thresholds.
#[derive(Debug, Clone, Copy)]
pub struct Array<'a> {
    pub devices: &'a [BlockDevice],
    pub groups: &'a [usize],
    pub thresholds: &'a Thresholds,
}

/// A surface profile's speed per bucket, where the bucket holds enough
/// reads to be a speed (neither drawn nor judged otherwise).
pub fn surface_speeds(run: &DiskRun) -> Vec<Option<f64>> {
    run.surface.mb_per_s(MIN_BUCKET_READS, MIN_BUCKET_S)
}

/// Each pass's disks' surface speeds, in the pass's order: what their
/// facts borrow.
pub struct Surfaces(Vec<Vec<Vec<Option<f64>>>>);

impl Surfaces {
    /// Of every disk of every pass.
    pub fn of(passes: &[PassRun]) -> Self {
        Surfaces(
            passes
                .iter()
                .map(|p| p.disks.iter().map(|(_, r)| surface_speeds(r)).collect())
                .collect(),
        )
    }

    /// Of pass `p`'s disks.
    pub fn of_pass(&self, p: usize) -> &[Vec<Option<f64>>] {
        &self.0[p]
    }
}

/// A measured slice as the rules take it: its middle's time and its speed.
pub fn slice_speed(s: &Slice) -> SliceSpeed {
    SliceSpeed {
        disk: s.disk,
        round: s.round,
        at_s: (s.at + s.elapsed / 2).as_secs_f64(),
        mb_per_s: mb_per_s(s.window.0, s.window.1.as_secs_f64()),
    }
}

/// A pass's slices, each disk by its place in the pass.
fn slice_speeds(p: &PassRun) -> Vec<SliceSpeed> {
    let index = |d: usize| p.disks.iter().position(|(x, _)| *x == d);
    (p.slices.iter())
        .filter_map(|s| Some(SliceSpeed { disk: index(s.disk)?, ..slice_speed(s) }))
        .collect()
}

impl Array<'_> {
    /// Plan disk `d`'s facts as `run` measured it (`surface`: its
    /// [`surface_speeds`]): its numbers, peer group, size and controller.
    pub fn facts<'b>(&self, d: usize, run: &'b DiskRun, surface: &'b [Option<f64>]) -> Facts<'b> {
        let id = &self.devices[d].identity;
        let (window_bytes, window) = run.window;
        let elapsed_s = run.elapsed.as_secs_f64();
        Facts {
            group: self.groups[d],
            controller: id.topology.controller.as_ref().map(|c| match &id.topology.expander {
                Some(e) => format!("{} {e}", c.pci),
                None => c.pci.clone(),
            }),
            size_bytes: id.size_bytes,
            window_mb_per_s: mb_per_s(window_bytes, window.as_secs_f64()),
            window_s: window.as_secs_f64(),
            bytes: run.bytes,
            elapsed_s,
            reached_end: run.reached_end,
            p9999_us: crate::stats::latency_us(&run.latency_ns).p9999,
            second_slowest_us: crate::stats::second_slowest_us(&run.latency_ns),
            slow_reads: &run.slow_reads,
            slow_read_count: run.slow_read_count,
            read_errors: run.failed_reads,
            bad_ranges: run.bad_ranges,
            bad_bytes: run.bad_bytes,
            unread_bytes: run.unread_bytes,
            stopped: run.stopped,
            device_gone: run.gone,
            errors: &run.errors,
            surface_mb_per_s: surface,
            surface_reads: &run.surface.reads,
            surface_bytes: &run.surface.bytes,
        }
    }

    /// Pass `p` judged by `judge::pass` (`surfaces`: its disks'
    /// [`surface_speeds`]; `serial`: each plan disk's clean serial speed).
    pub fn judge_pass(
        &self,
        p: &PassRun,
        surfaces: &[Vec<Option<f64>>],
        serial: &[Option<f64>],
    ) -> PassJudgement {
        let facts: Vec<Facts> = (p.disks.iter().zip(surfaces))
            .map(|((d, run), surface)| self.facts(*d, run, surface))
            .collect();
        let serial: Vec<Option<f64>> = p.disks.iter().map(|(d, _)| serial[*d]).collect();
        judge(
            p.kind,
            p.window == Window::Full,
            &facts,
            (&serial, &slice_speeds(p)),
            self.thresholds,
        )
    }

    /// Each plan disk's serial speed over its window, where it is clean
    /// (no failed read, read long enough to judge).
    pub fn serial_speeds(&self, passes: &[PassRun]) -> Vec<Option<f64>> {
        let mut out = vec![None; self.devices.len()];
        for p in passes.iter().filter(|p| p.kind == PassKind::Serial) {
            for (d, run) in &p.disks {
                out[*d] = self.facts(*d, run, &[]).clean_speed();
            }
        }
        out
    }

    /// The disks to re-measure before the verdict, each with what to read
    /// it beside (see [`confirm::suspects`]).
    pub fn to_confirm(&self, passes: &[PassRun]) -> Vec<(usize, Beside)> {
        let serial = self.serial_speeds(passes);
        let surfaces = Surfaces::of(passes);
        let mut calls: Vec<Calls> =
            self.groups.iter().map(|g| Calls { group: *g, ..Calls::default() }).collect();
        for (i, p) in passes.iter().enumerate() {
            let j = self.judge_pass(p, surfaces.of_pass(i), &serial);
            let limited = j.finding.is_some_and(|f| f.shared_bottleneck);
            for (((d, run), surface), judged) in
                p.disks.iter().zip(surfaces.of_pass(i)).zip(&j.disks)
            {
                let other = other_evidence(&self.facts(*d, run, surface), judged, self.thresholds);
                calls[*d].record(p.kind, judged, (run.failed(), other), limited);
            }
        }
        confirm::suspects(&calls)
    }

    /// The groups of disks that lost speed together in the parallel pass
    /// (`judge::groups`), each as plan disks, to read again before they are
    /// named.
    pub fn groups_to_confirm(&self, passes: &[PassRun]) -> Vec<Vec<usize>> {
        let serial = self.serial_speeds(passes);
        let Some(p) = passes.iter().find(|p| p.kind == PassKind::Parallel) else {
            return Vec::new();
        };
        let surfaces: Vec<_> = p.disks.iter().map(|(_, r)| surface_speeds(r)).collect();
        let j = self.judge_pass(p, &surfaces, &serial);
        j.groups.iter().map(|g| g.disks.iter().map(|i| p.disks[*i].0).collect()).collect()
    }

    /// What the rounds of reading `group` (plan disks) again found
    /// (`serial`: each plan disk's clean serial speed).
    pub fn group_confirmed(
        &self,
        group: &[usize],
        (alone, together): (&[Slice], &[Slice]),
        serial: &[Option<f64>],
    ) -> GroupConfirmed {
        let speeds = |v: &[Slice]| v.iter().map(slice_speed).collect::<Vec<_>>();
        let (alone, together) = (speeds(alone), speeds(together));
        groups::confirmed((&alone, &together), group, serial, self.thresholds)
    }

    /// Whether the rounds of reading `group` again so far (alone,
    /// together) decide where its limit is (see [`groups::decided`]).
    pub fn group_decided<'g>(
        &'g self,
        passes: &[PassRun],
        group: &'g [usize],
    ) -> impl Fn(&[Slice], &[Slice]) -> bool + 'g {
        let serial = self.serial_speeds(passes);
        move |alone, together| {
            groups::decided(&self.group_confirmed(group, (alone, together), &serial))
        }
    }

    /// What the slices of re-measuring `disk` beside `beside` say of it.
    pub fn remeasured(&self, at: (usize, Beside), slices: &[Slice]) -> Confirmed {
        let speeds: Vec<SliceSpeed> = slices.iter().map(slice_speed).collect();
        confirm::remeasured(&speeds, at, self.groups, self.thresholds)
    }

    /// Whether the slices of re-measuring `disk` beside `beside` so far
    /// decide its verdict (see [`confirm::decided`]).
    pub fn decided(&self, at: (usize, Beside)) -> impl Fn(&[Slice]) -> bool + '_ {
        move |slices| confirm::decided(&self.remeasured(at, slices))
    }
}

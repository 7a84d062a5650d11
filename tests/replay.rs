//! Replay: checks recorded on loop devices (`check --record`, kept in
//! fixtures/replay/, each made as its README says) fed through the report
//! and the judge again, with no device. A rule that needs only a run's
//! measurements is tested here, on the measurements, with the input the
//! rule reads edited where a live test ran an array again only to change
//! it. The live tests that made each recording keep what needs the disks
//! (that a slow disk measures slow); [`assert_replays`] guards the seam:
//! a recording replays to the report its run gave.

use std::path::{Path, PathBuf};

use arrayburn::judge::rated::Rating;
use arrayburn::measure::PassKind;
use arrayburn::report::replay::{BurnRecording, Recording};
use serde_json::Value;

use crate::util::*;

/// The report a recording gives, its end marked as a run's end marks it.
pub fn replayed(r: &Recording) -> Report {
    let mut report = r.report();
    arrayburn::export::publish::ended(&mut report);
    report
}

/// The report as its JSON file says it.
pub fn as_json(report: &Report) -> Value {
    serde_json::from_slice(&arrayburn::export::json::render(report)).unwrap()
}

/// A recording read from `path`.
pub fn recording(path: &Path) -> Recording {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Recording::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Where two JSON values first differ (a JSON pointer), if they do.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (l, r) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                first_difference(l, r, &format!("{at}/{k}"))
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => (x.iter().zip(y))
            .enumerate()
            .find_map(|(i, (l, r))| first_difference(l, r, &format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} != {b}")),
    }
}

/// The recording at `path` replays to `live`, the JSON its run wrote:
/// every field, every number, the same.
pub fn assert_replays(path: &Path, live: &Value) {
    let again = as_json(&replayed(&recording(path)));
    if let Some(d) = first_difference(&again, live, "") {
        panic!("the replayed report differs from the live one at {d}");
    }
}

/// A burn-in's recording read from `path`.
pub fn burn_recording(path: &Path) -> BurnRecording {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    BurnRecording::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The report a burn-in's recording gives, its end marked, as its JSON
/// file says it.
pub fn burn_replayed(r: &BurnRecording) -> Value {
    let mut report = r.report();
    arrayburn::export::publish::ended(&mut report);
    serde_json::from_slice(&arrayburn::export::burnin::json(&report)).unwrap()
}

/// The burn-in's recording at `path` replays to `live`, the JSON its run
/// wrote: every field, every number, the same.
pub fn assert_burn_replays(path: &Path, live: &Value) {
    let again = burn_replayed(&burn_recording(path));
    if let Some(d) = first_difference(&again, live, "") {
        panic!("the replayed burn-in's report differs from the live one at {d}");
    }
}

/// A recording of fixtures/replay/ (made by its record.sh).
fn fixture(name: &str) -> Recording {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/replay");
    recording(&dir.join(format!("{name}.json")))
}

#[test]
fn first_difference_names_the_field() {
    let a = serde_json::json!({"a": [1, {"b": 2.5}], "c": "x"});
    let b = serde_json::json!({"a": [1, {"b": 2.25}], "c": "x"});
    assert_eq!(first_difference(&a, &a, ""), None);
    assert_eq!(first_difference(&a, &b, "").as_deref(), Some("/a/1/b: 2.5 != 2.25"));
    let c = serde_json::json!({"a": [1], "c": "x"});
    assert!(first_difference(&a, &c, "").unwrap().starts_with("/a: "));
}

#[test]
fn a_recording_of_another_kind_or_version_is_refused_naming_it() {
    let r = fixture("eight-two-slow-one-fast");
    let mut v: Value = serde_json::from_slice(&r.json()).unwrap();
    v["version"] = 99.into();
    let e = Recording::parse(v.to_string().as_bytes()).unwrap_err();
    assert!(e.contains("version 99") && e.contains("with the arrayburn that wrote it"), "{e}");
    let e = Recording::parse(b"{\"passes\": []}").unwrap_err();
    assert!(e.starts_with("not a recording of arrayburn's") && !e.contains('\n'), "{e}");
    // A burn-in's recording is not a check's.
    let burn = br#"{"recording": "arrayburn burnin measurements", "version": 1}"#;
    let e = Recording::parse(burn).unwrap_err();
    assert!(e.contains("not of \"arrayburn check measurements\""), "{e}");
    v["version"] = 1.into();
    v["passes"] = "none".into();
    let e = Recording::parse(v.to_string().as_bytes()).unwrap_err();
    assert!(e.starts_with("a damaged recording") && e.ends_with("record the run again"), "{e}");
}

/// The recording of the disks `keep` (indexes in it, in that order)
/// alone: their devices, groups, inspection and every measurement of
/// theirs, re-indexed; a re-measurement beside a disk left out, and a
/// group read again with one, are left out too. Each disk's numbers are
/// what it measured; what its peers are is what changes.
pub fn only(r: &Recording, keep: &[usize]) -> Recording {
    use arrayburn::measure::{Beside, Slice};
    let to = |d: usize| keep.iter().position(|k| *k == d);
    let slices = |s: &[Slice]| -> Vec<Slice> {
        s.iter().filter_map(|s| Some(Slice { disk: to(s.disk)?, ..*s })).collect()
    };
    // A pass lists its disks in the plan's order.
    let runs = |runs: &[(usize, arrayburn::measure::DiskRun)]| {
        let mut kept: Vec<_> =
            runs.iter().filter_map(|(d, run)| Some((to(*d)?, run.clone()))).collect();
        kept.sort_by_key(|(d, _)| *d);
        kept
    };
    let mut out = r.clone();
    out.devices = keep.iter().map(|d| r.devices[*d].clone()).collect();
    out.groups = keep.iter().map(|d| r.groups[*d]).collect();
    out.inspection.retain(|i| out.devices.iter().any(|d| d.given == i.path));
    for p in &mut out.passes {
        p.disks = runs(&p.disks);
        p.slices = slices(&p.slices);
    }
    out.rechecks = (r.rechecks.iter())
        .filter_map(|c| {
            let beside = match c.beside {
                Beside::Peer(p) => Beside::Peer(to(p)?),
                Beside::All => Beside::All,
            };
            let (slices, runs) = (slices(&c.slices), runs(&c.runs));
            Some(arrayburn::measure::Recheck { disk: to(c.disk)?, beside, slices, runs })
        })
        .collect();
    out.groups_read_again = (r.groups_read_again.iter())
        .filter_map(|g| {
            let disks = g.disks.iter().map(|d| to(*d)).collect::<Option<Vec<_>>>()?;
            let (alone, together) = (slices(&g.alone), slices(&g.together));
            Some(arrayburn::measure::GroupRecheck { disks, alone, together })
        })
        .collect();
    // The random reads of the disks kept (read together with the others:
    // their figures are what they measured); the neighbour pass's, each
    // with the neighbours kept.
    if let Some(x) = &mut out.random {
        x.disks = keep.iter().map(|d| x.disks[*d].clone()).collect();
    }
    if let Some(x) = &mut out.vibration {
        x.disks = (keep.iter().map(|d| x.disks[*d].clone()))
            .map(|mut run| {
                run.neighbours = run.neighbours.iter().filter_map(|n| to(*n)).collect();
                run
            })
            .collect();
    }
    out
}

#[test]
fn a_recording_of_some_of_its_disks_keeps_their_measurements_re_indexed() {
    let r = fixture("eight-two-slow-one-fast");
    let part = only(&r, &[6, 1]);
    assert_eq!(part.devices[0].given, r.devices[6].given);
    for (p, q) in part.passes.iter().zip(&r.passes) {
        let ours: Vec<usize> = p.disks.iter().map(|(d, _)| *d).collect();
        assert_eq!(ours, [0, 1], "{:?}", p.kind);
        assert_eq!(p.disks[0].1.bytes, q.disks.iter().find(|(d, _)| *d == 6).unwrap().1.bytes);
        assert!(p.slices.iter().all(|s| s.disk < 2));
    }
}

/// `r` with disks placed as `ARRAYBURN_TOPOLOGY` would place them (kernel
/// names to topologies in words), the links then settled as a run settles
/// them.
pub fn placed(r: &mut Recording, at: impl IntoIterator<Item = (usize, Value)>) {
    for (i, t) in at {
        let t: arrayburn::device::topology::Topology = serde_json::from_value(t).unwrap();
        r.devices[i].identity.topology = t.as_given();
    }
    arrayburn::judge::links::settle(r.devices.iter_mut().map(|d| &mut d.identity));
}

/// The pass `kind` of a recording, to edit.
fn pass_mut(r: &mut Recording, kind: PassKind) -> &mut arrayburn::measure::PassRun {
    r.passes.iter_mut().find(|p| p.kind == kind).expect("the pass")
}

/// The exit status the replayed report's run would have ended with.
fn code(v: &Report) -> u8 {
    v.header.exit_status.expect("marked by ended()")
}

/// Its disks' paths.
fn paths(r: &Recording) -> Vec<String> {
    r.devices.iter().map(|d| d.given.clone()).collect()
}

/// Eight disks read at 100 MB/s, two of them (1 and 6) at 70 and one (3)
/// at 150 (fixtures/replay/record.sh).
fn eight() -> Recording {
    fixture("eight-two-slow-one-fast")
}

#[test]
fn two_slow_disks_of_eight_are_both_flagged_and_a_slow_link_named_as_the_likely_cause() {
    let mut r = eight();
    let d = paths(&r);
    let v = replayed(&r);
    let slow = [format!("{}=slow", d[1]), format!("{}=fast", d[3]), format!("{}=slow", d[6])];
    assert_eq!(flagged(&v, "serial"), slow, "{}", v.summary.message);
    assert_eq!(flagged(&v, "parallel"), slow);
    let acts: Vec<Action> = disk_verdicts(&v).iter().map(|s| s.1).collect();
    assert_eq!(acts, [Action::Recheck, Action::Recheck], "{:?}", disk_verdicts(&v));
    assert_eq!(code(&v), 1);
    // The second slow disk came up on a SATA link at 3.0 of 6.0 Gb/s: the
    // link, not the disk, is named as the likely cause of its slowness.
    let link = serde_json::json!({"transport": "sata", "links": [{"kind": "sata", "at": "link7",
        "current": "3.0 Gbps", "max": "6.0 Gbps", "degraded": true}]});
    placed(&mut r, [(6, link)]);
    let v = replayed(&r);
    let said = disk_verdicts(&v);
    let acts: Vec<(&str, Action)> = said.iter().map(|s| (s.0.as_str(), s.1)).collect();
    assert_eq!(acts, [(d[1].as_str(), Action::Recheck), (d[6].as_str(), Action::CheckPath)]);
    assert!(
        said[1].2.contains(
            "but its SATA link (link7) runs at 3.0 Gbps where 6.0 Gbps is possible: the link is the likely cause, replace the cable or move the slot"
        ),
        "{said:?}"
    );
    let text = arrayburn::export::text::render(&v);
    assert!(text.contains("the link is the likely cause"), "{text}");
    assert_eq!(as_json(&v)["disks"][6]["topology"]["links"][0]["current"], "3.0 Gbps");
}

#[test]
fn one_read_held_on_a_loaded_host_is_no_latency_tail_and_two_are() {
    // The six disks at 100 and 150 MB/s; disk 1's serial pass gets reads
    // of 773 ms (far under the 2 s stall limit), the moment a loaded host
    // once held one read of a healthy disk for.
    let held = |n: usize| {
        let mut r = only(&eight(), &[0, 2, 3, 4, 5, 7]);
        let run = &mut pass_mut(&mut r, PassKind::Serial).disks[1].1;
        for _ in 0..n {
            run.latency_ns.record(773_000_000).unwrap();
        }
        replayed(&r)
    };
    let d = paths(&only(&eight(), &[0, 2, 3, 4, 5, 7]));
    let row = |v: &Report| disk_rows(v, "serial")[1].clone();
    let v = held(1);
    assert_eq!(row(&v).verdict, Verdict::Ok, "one read is a moment: {:?}", row(&v).reasons);
    assert_eq!(v.summary.verdict, ArrayVerdict::Healthy, "{}", v.summary.message);
    let v = held(2);
    let reasons = row(&v).reasons.join("; ");
    assert_eq!(row(&v).verdict, Verdict::Slow, "{reasons}");
    assert!(reasons.contains("p99.99 read latency 773 ms is"), "{reasons}");
    assert!(flagged(&v, "serial").contains(&format!("{}=slow", d[1])), "{}", v.summary.message);
}

#[test]
fn a_faster_disk_is_marked_but_the_array_stays_healthy() {
    // The eight without their two slow disks.
    let r = only(&eight(), &[0, 2, 3, 4, 5, 7]);
    let d = paths(&r);
    let v = replayed(&r);
    assert_eq!(flagged(&v, "serial"), [format!("{}=fast", d[2])], "{}", v.summary.message);
    assert_eq!(v.summary.verdict, ArrayVerdict::Healthy, "{}", v.summary.message);
    assert_eq!(code(&v), 0, "a fast disk is not a fault");
    let text = arrayburn::export::text::render(&v);
    assert!(text.contains("++FAST++") && text.contains("Verdict: HEALTHY"), "{text}");
}

#[test]
fn a_disk_faster_in_the_parallel_pass_makes_no_group_of_the_others() {
    // Four disks of 100 MB/s; the last reads beside the others as the
    // fast disk did (150 MB/s), having read at 100 alone (its other load
    // gone): it gained, the others kept their speed. Nobody lost speed,
    // so there is no group of the others behind a shared limit.
    let all = eight();
    let fast = all.passes.iter().find(|p| p.kind == PassKind::Parallel).unwrap().disks[3].clone();
    let mut r = only(&all, &[0, 2, 4, 5]);
    pass_mut(&mut r, PassKind::Parallel).disks[3].1 = fast.1;
    let v = replayed(&r);
    let kept = disk_rows(&v, "parallel")[3].pct_of_serial;
    assert!(kept.is_some_and(|k| k > 130.0), "disk 3 gained in parallel: {kept:?}");
    let groups: Vec<_> = v.passes.iter().flat_map(|p| &p.groups).collect();
    assert!(groups.is_empty(), "no group: {groups:?}");
    assert_eq!(code(&v), 0, "{}", v.summary.message);
}

/// `r` with every disk declaring itself a WD140EDFZ (in what the drive
/// declared before the run: loop devices have no model in sysfs), rated
/// `mb_per_s` by the lab.
fn rated_wd140edfz(mut r: Recording, mb_per_s: f64) -> Recording {
    for d in &mut r.devices {
        d.identity.model = None;
    }
    for i in &mut r.inspection {
        i.declared.model = Some("WDC WD140EDFZ-11A0VA0".into());
    }
    assert_eq!(r.inspection.len(), r.devices.len(), "each disk inspected");
    let source = "our lab's figure".into();
    r.settings.ratings = vec![Rating { model: "WD140EDFZ".into(), mb_per_s, source }];
    r
}

#[test]
fn a_lone_disk_is_judged_by_its_models_rating_and_a_batch_slow_as_a_whole_is_named() {
    // One disk at 70 MB/s, its model rated 120: a verdict of its own,
    // though it has no peer to be compared with.
    let all = eight();
    let v = replayed(&rated_wd140edfz(only(&all, &[1]), 120.0));
    assert_eq!(v.summary.rated.len(), 1, "{}", v.summary.message);
    let x = &v.summary.rated[0];
    assert!(x.below && (35.0..65.0).contains(&x.pct_of_rated), "{x:?}");
    assert_eq!((x.model.as_str(), x.rated_mb_per_s), ("WDC WD140EDFZ-11A0VA0", 120.0));
    let acts = disk_verdicts(&v);
    assert_eq!(acts.len(), 1, "{acts:?}");
    assert_eq!(acts[0].1, Action::Recheck);
    assert!(
        acts[0].2.contains("MB/s at its outer zone, ")
            && acts[0].2.contains(
                "of the 120 MB/s its model (WDC WD140EDFZ-11A0VA0) is rated (our lab's figure)"
            ),
        "{acts:?}"
    );
    assert_eq!(code(&v), 1, "{}", v.summary.message);
    // A disk at 100 MB/s, its model rated 85: judged, and healthy (not
    // "not compared").
    let v = replayed(&rated_wd140edfz(only(&all, &[0]), 85.0));
    assert!(!v.summary.rated[0].below, "{:?}", v.summary.rated);
    assert!(v.summary.not_compared.is_empty(), "{}", v.summary.message);
    assert_eq!(code(&v), 0, "{}", v.summary.message);
    let msg = &v.summary.message;
    assert!(msg.contains("1 judged against their model's rating"), "{msg}");
    // Three of the model at 100 MB/s, rated 140: alike, so their peers see
    // nothing; the batch is named, with its SATA links' ceiling (1.5 Gbps:
    // 150 MB/s, above the rating: not what holds them back).
    let mut r = rated_wd140edfz(only(&all, &[0, 2, 4]), 140.0);
    let sata = |i: usize| {
        serde_json::json!({"transport": "sata", "links": [{"kind": "sata", "at": format!("link{i}"),
            "current": "1.5 Gbps", "max": "1.5 Gbps", "degraded": false}]})
    };
    placed(&mut r, (0..3).map(|i| (i, sata(i))));
    let v = replayed(&r);
    assert!(flagged(&v, "serial").is_empty(), "alike: {:?}", flagged(&v, "serial"));
    assert_eq!(v.summary.rated_batches.len(), 1, "{}", v.summary.message);
    let b = &v.summary.rated_batches[0];
    assert_eq!((b.disks.len(), b.link_limits), (3, Some(false)), "{b:?}");
    let msg = &v.summary.message;
    assert!(
        msg.contains("BATCH BELOW ITS RATING: the 3 WDC WD140EDFZ-11A0VA0 disk(s) read ")
            && msg
                .contains("its SATA link (link0) at 1.5 Gbps: at most 150 MB/s, above the rating"),
        "{msg}"
    );
    assert_eq!(code(&v), 1, "{msg}");
}

/// A burn-in's recording of fixtures/replay/ (made by its record.sh).
fn burn_fixture(name: &str) -> BurnRecording {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/replay");
    burn_recording(&dir.join(format!("{name}.json")))
}

#[test]
fn a_big_block_is_allowed_the_time_its_size_needs() {
    // 128 MiB requests to disks held to 40 MB/s need 3.4 s each: no stall
    // (the 2 s rule per request, whatever its size, said "a write took
    // 3355 ms ... return it" of a healthy disk), in the burn-in and in the
    // check.
    let r = burn_fixture("burnin-big-blocks");
    assert_eq!(r.run.disks[0].disk.point.io_bytes, 128 << 20);
    let doc = burn_replayed(&r);
    assert_eq!(doc["exit_status"], 0, "{}", doc["summary"]);
    for disk in doc["disks"].as_array().unwrap() {
        let ms = disk["slowest"]["ms"].as_f64().unwrap();
        assert!(ms > 2000.0, "a request slower than the old rule's 2 s: {disk}");
        assert_eq!(disk["verdict"], "healthy", "{disk}");
    }
    // Judged with a limit 2 s beyond what a request's size needs at the
    // disk's own speed, not 2 s whatever its size: the same requests are
    // stalls once the limit is tighter than what they took beyond it.
    let mut tight = r.clone();
    tight.run.thresholds.stall_ms = 1.0;
    let doc = burn_replayed(&tight);
    assert_ne!(doc["disks"][0]["verdict"], "healthy", "{}", doc["disks"][0]);
    let v = replayed(&fixture("check-big-blocks"));
    assert_eq!(v.options.block_bytes, 128 << 20);
    for row in disk_rows(&v, "serial") {
        assert!(row.slow_reads.len() >= 2, "reads of 2 s and more: {row:?}");
        assert_eq!(row.verdict, Verdict::Ok, "{row:?}");
    }
    assert_eq!(code(&v), 0, "{}", v.summary.message);
}

#[test]
fn a_request_no_slower_than_the_pace_of_a_disk_slower_than_a_healthy_one_is_no_stall_and_not_decided()
 {
    // As a lab run's emulated SAS drives wrote on a loaded host: 2.4 MB/s,
    // every 4 MiB write near 1.8 s, the slowest of each 2.0-2.1 s, two of
    // them called stalls ("return it") at the 2084 ms a 4 MiB request may
    // take at 50 MB/s. Here the big-block burn-in's disks written at
    // 10 MB/s: 128 MiB needs 13.4 s at that pace, 2.7 s at 50 MB/s.
    use arrayburn::burnin::record::SlowIo;
    use arrayburn::burnin::state::Phase;
    let paced = |ms: f64| {
        let mut r = burn_fixture("burnin-big-blocks");
        for d in &mut r.run.disks {
            d.burn.write_s = d.burn.written_bytes as f64 / 10e6;
            d.burn.write_pass_s = vec![d.burn.write_s];
            d.burn.slowest = Some(SlowIo { pass: 1, phase: Phase::Write, offset: 0, ms });
        }
        burn_replayed(&r)
    };
    // A 6 s write (a stall at 50 MB/s, faster than the disk's own pace):
    // no stall claimed, and not decided either.
    let doc = paced(6000.0);
    assert_eq!(doc["exit_status"], 3, "{}", doc["summary"]);
    for disk in doc["disks"].as_array().unwrap() {
        assert_eq!(disk["verdict"], "not_judged", "{disk}");
    }
    let said = doc["summary"]["message"].as_str().unwrap();
    assert!(
        said.contains("took 6000 ms (4684 ms or more is a stall for 128 MiB), but its other requests ran at 6.4 MB/s, under the 50 MB/s a healthy disk moves: a stall cannot be told"),
        "{said}"
    );
    assert!(!said.contains("return it"), "{said}");
    // A 20 s write is beyond even its own pace (15.4 s): a stall.
    let doc = paced(20_000.0);
    assert_eq!(doc["disks"][0]["verdict"], "return", "{}", doc["disks"][0]);
}

#[test]
fn a_disk_slow_alone_too_is_blamed_with_both_figures() {
    // Three disks written at 20 MB/s, disk 1 at 14 also when re-measured
    // alone in turn with a peer (burnin::a_disk_slow_only_while_every_disk_
    // was_written_ runs the same array with its limit lifted for that turn,
    // and clears it): blamed, with both figures, the others healthy.
    let doc = burn_replayed(&burn_fixture("burnin-slow-alone-too"));
    assert_eq!(doc["exit_status"], 1, "{}", doc["summary"]);
    let disk = &doc["disks"][1];
    assert!(disk["write_pct_of_peers"].as_f64().unwrap() < 80.0, "{disk}");
    assert_eq!(disk["verdict"], "recheck", "{disk}");
    let again = &disk["remeasured"]["write"];
    assert_eq!(again["verdict"], "slow", "{again}");
    assert!(again["turns"].as_u64() >= Some(4), "{again}");
    assert!((60.0..80.0).contains(&again["pct"].as_f64().unwrap()), "{again}");
    let said = doc["summary"]["disk_verdicts"][0]["sentence"].as_str().unwrap();
    assert!(
        said.contains("of its peers' with every disk at once, ")
            && said.contains("re-measured alone in turn"),
        "{said}"
    );
    for other in [0, 2] {
        assert_eq!(doc["disks"][other]["verdict"], "healthy", "{}", doc["disks"][other]);
        assert!(doc["disks"][other]["remeasured"].is_null());
    }
}

#[test]
fn one_disk_at_70_percent_is_flagged_slow_in_both_passes_and_no_other() {
    // Five disks read at 100 MB/s, disk 2 at 70 (record.sh check-one-at-70):
    // slow in both passes, no other disk, no shared limit; to be moved and
    // checked again (no media evidence), said in the text as solnet did.
    let r = fixture("check-one-at-70");
    let slow = format!("{}=slow", paths(&r)[2]);
    let v = replayed(&r);
    assert_eq!(code(&v), 1, "{}", v.summary.message);
    assert_eq!(flagged(&v, "serial"), std::slice::from_ref(&slow));
    assert_eq!(flagged(&v, "parallel"), [slow]);
    assert!(!v.summary.shared_bottleneck);
    let pct = disk_rows(&v, "serial")[2].pct_of_peers.unwrap();
    assert!((60.0..80.0).contains(&pct), "slow disk at {pct}% of peers");
    let said = disk_verdicts(&v);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].1, Action::Recheck, "slower, but no media evidence: {said:?}");
    assert!(
        said[0].2.ends_with("move it to another slot and check again; if it stays slow, return it"),
        "{said:?}"
    );
    let text = arrayburn::export::text::render(&v);
    assert!(text.contains("--SLOW--") && text.contains("Verdict: FLAGGED"), "{text}");
}

#[test]
fn a_drift_shared_by_every_disk_blames_none_and_the_slow_one_is_found() {
    // Eight disks at 100 MB/s, disk 5 at 80, all of them rising and falling
    // by 15 % together every 32 s (record.sh check-drift: the serial pass,
    // 4 rounds of 8 s, read them at different moments, as a busy server's
    // other load). No healthy disk is called slow (or left unsure) in
    // either pass; the slow one is found: slow in the parallel pass, read at
    // one moment for all, and slow or, where the drift spread its slices,
    // unsure in the serial pass.
    let r = fixture("check-drift");
    let d = paths(&r);
    let v = replayed(&r);
    let msg = &v.summary.message;
    let serial_calls = flagged(&v, "serial");
    assert!(serial_calls.iter().all(|f| f.starts_with(&format!("{}=", d[5]))), "{msg}");
    assert_eq!(flagged(&v, "parallel"), [format!("{}=slow", d[5])], "{msg}");
    let said = disk_verdicts(&v);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].0, d[5]);
    let serial = v.passes.iter().find(|p| p.kind.name() == "serial").unwrap();
    let moved = serial.conditions.unwrap();
    assert!(moved.moved && moved.high_pct - moved.low_pct > 5.0, "{moved:?}");
    assert_eq!(serial.slices.len(), 8 * 4);
    let text = arrayburn::export::text::render(&v);
    assert!(text.contains("CONDITIONS MOVED"), "{text}");
    assert_eq!(code(&v), 1);
}

#[test]
fn out_dir_holds_the_report_and_charts_that_show_the_slow_disk() {
    use crate::check::{FLAGGED_RED, count_colour, decode_png};
    // Four disks at 100 MB/s, disk 1 at 60, the seek pass too (record.sh
    // check-seek-one-at-60): the `--out` bundle its report makes. (That a
    // run's bundle holds what it printed: demo::the_demo_finds_its_slow_
    // disk_and_leaves_nothing_behind, live.)
    let r = fixture("check-seek-one-at-60");
    let d = paths(&r);
    let v = replayed(&r);
    assert_eq!(flagged(&v, "serial"), [format!("{}=slow", d[1])]);
    let dir = tempdir();
    let out = dir.path().join("run1");
    arrayburn::export::publish::bundle(&v, &out, true).unwrap();
    let text = arrayburn::export::text::render(&v);
    assert_eq!(std::fs::read_to_string(out.join("report.txt")).unwrap(), text);
    let bundled: Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_schema(&bundled);
    assert_eq!(bundled, as_json(&v), "the same report as --json");
    let csv = std::fs::read_to_string(out.join("surface.csv")).unwrap();
    // 256 MiB disks read in 1 MiB reads: 8 buckets of 32 reads each (the
    // fewest that make a speed), not the default 100.
    assert_eq!(csv.lines().count(), 1 + 3 * 4 * 8, "3 passes x 4 disks x 8 buckets");
    for pass in ["serial", "parallel", "seek"] {
        for chart in ["speed", "surface", "latency"] {
            let svg =
                std::fs::read_to_string(out.join(format!("charts/{chart}-{pass}.svg"))).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
                "{chart}-{pass}.svg"
            );
            let name = d[1].trim_start_matches("/dev/");
            if chart != "speed" || pass == "serial" {
                assert!(svg.contains(name), "{chart}-{pass}.svg names the disks");
            }
            let png = decode_png(&out.join(format!("charts/{chart}-{pass}.png")));
            assert_eq!((png.0, png.1), (1000, 560));
            let white = count_colour(&png, [255, 255, 255]);
            assert!(png.2.len() - white > png.2.len() / 50, "{chart}-{pass}.png is not blank");
        }
    }
    // The slow disk's bar is red: a few thousand pixels of it.
    let speed = decode_png(&out.join("charts/speed-serial.png"));
    assert!(count_colour(&speed, FLAGGED_RED) > 5_000, "the slow disk stands out in red");
    let names: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "no temporary files left: {names:?}");
    // The run's own page: its verdict, every chart inline, nothing to
    // fetch.
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!page.contains("<script") && !page.contains("src=\""), "{page}");
    assert_eq!(page.matches("<svg").count(), 9, "three charts of each of three passes");
    assert!(page.contains("class=\"verdict flagged\">Verdict: FLAGGED"), "{page}");
}

#[test]
fn a_disk_at_85_percent_is_confirmed_slow_against_a_peer() {
    // The serial pass only, disk 2 of five at 85 MB/s against 100
    // (record.sh check-one-at-85): nothing else backs the serial pass's
    // call, so the disk was re-measured against a peer, and that agreed.
    let r = fixture("check-one-at-85");
    let dev = paths(&r)[2].clone();
    let v = replayed(&r);
    assert_eq!(flagged(&v, "serial"), [format!("{dev}=slow")], "{}", v.summary.message);
    let row = &disk_rows(&v, "serial")[2];
    let (pct, hi) = (row.pct_of_peers.unwrap(), row.pct_of_peers_high.unwrap());
    assert!((78.0..92.0).contains(&pct) && row.pct_of_peers_low.unwrap() <= pct && pct <= hi);
    assert_eq!(row.slices, Some(2), "2 s in slices of 1 s: {row:?}");
    let c = &v.confirmations[..];
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].path.as_str(), c[0].verdict), (dev.as_str(), Verdict::Slow), "{c:?}");
    assert!((78.0..92.0).contains(&c[0].pct_of_peer.unwrap()), "{c:?}");
    assert!(row.reasons.iter().any(|x| x.starts_with("re-measured alone")), "{row:?}");
    assert_eq!(code(&v), 1);
    assert_eq!(disk_verdicts(&v).len(), 1);
}

#[test]
fn a_disk_that_slows_only_when_all_read_is_flagged_in_the_parallel_pass() {
    // Four disks at 100 MB/s; once the parallel pass began, disk 1 at 60 (a
    // bad expander port shows only under load; record.sh
    // check-slow-when-all-read). It lost speed alone, so the parallel pass
    // flags it against its own serial speed; the serial pass flags
    // nothing. The parallel pass alone called it slow, so it was read again
    // with all the disks together, and that agreed. (Cleared when it reads
    // at its speed again: check::a_disk_slow_only_while_the_parallel_pass_
    // read_it_is_re_measured_together_and_cleared, live.)
    let r = fixture("check-slow-when-all-read");
    let devs = paths(&r);
    let v = replayed(&r);
    assert_eq!(code(&v), 1, "{}", v.summary.message);
    assert_eq!(flagged(&v, "serial"), Vec::<String>::new());
    assert_eq!(flagged(&v, "parallel"), [format!("{}=slow", devs[1])]);
    assert!(!v.summary.shared_bottleneck);
    let row = &disk_rows(&v, "parallel")[1];
    let kept = row.pct_of_serial.unwrap();
    assert!((45.0..75.0).contains(&kept), "kept {kept}% of its serial speed");
    let reasons = row.reasons.join("; ");
    assert!(
        reasons.contains("of its own serial speed while the array's median disk keeps"),
        "{reasons}"
    );
    assert!(
        row.reasons.iter().any(|x| x.starts_with("re-measured with all disks reading together")),
        "{reasons}"
    );
    let said = disk_verdicts(&v);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].2.contains("of its own speed when all disks read"), "{said:?}");
    assert_eq!(v.confirmations.len(), 1, "{:?}", v.confirmations);
    let c = &v.confirmations[0];
    assert_eq!(
        (c.path.as_str(), c.pass, c.verdict),
        (devs[1].as_str(), PassKind::Parallel, Verdict::Slow)
    );
    assert!(c.peer.is_none() && c.slices >= 4, "{c:?}");
    assert!((45.0..75.0).contains(&c.pct_of_peer.unwrap()), "{c:?}");
    for dev in &devs {
        assert!(c.measured.iter().any(|s| &s.path == dev), "every disk read: {c:?}");
    }
}

/// A disk that read well while the kernel reset its link, and one whose
/// I/O errors the reads never saw: each named in the verdict's own
/// sentence and among the disks to act on (the run is flagged), never
/// "HEALTHY" beside them, never a "FLAGGED: ." that names nothing.
#[test]
fn what_the_kernel_saw_flags_the_run_and_names_its_disks_in_the_verdict() {
    use arrayburn::device::kernel::{Kind, Seen};
    let mut r = only(&eight(), &[0, 2, 4, 5, 7]);
    let d = paths(&r);
    assert_eq!(replayed(&r).summary.verdict, ArrayVerdict::Healthy);
    let mut kernel = vec![Seen::default(); d.len()];
    kernel[1].counts = [(Kind::Reset, 2)].into_iter().collect();
    kernel[3].counts = [(Kind::IoError, 1)].into_iter().collect();
    kernel[3].sectors = vec![4242];
    r.kernel = Some(kernel);
    let v = replayed(&r);
    assert_eq!(v.summary.verdict, ArrayVerdict::Flagged, "{}", v.summary.message);
    let acts: Vec<(&str, &str)> =
        v.summary.disk_verdicts.iter().map(|a| (a.path.as_str(), a.action.word())).collect();
    assert_eq!(acts, [(d[1].as_str(), "check_path"), (d[3].as_str(), "recheck")]);
    let message = &v.summary.message;
    assert!(
        message.starts_with("FLAGGED: ")
            && message.contains(&format!("{} reset or timed out by the kernel", d[1]))
            && message.contains(&format!("{} with kernel I/O errors its reads did not see", d[3])),
        "{message}"
    );
    assert_eq!(code(&v), 1);
}

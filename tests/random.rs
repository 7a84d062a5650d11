//! `check --random`: random reads alone and all at once, each disk's
//! latency fingerprint judged against its model's (emulated one-head
//! drives: every read that does not follow the last one waits a seek).

use std::time::Duration;

use crate::faults::FaultyDisk;
use crate::util::*;
use arrayburn::judge::random::RandomKind;

const MIB: u64 = 1 << 20;

#[test]
fn the_drive_with_a_long_tail_is_named_retrying_and_a_slower_model_is_not() {
    need_root!();
    let _l = device_lock();
    // Four drives of one model (64 MiB, 3 ms a seek); the third answers
    // reads in 4 % of its surface 15 ms late (p99 about 5x its peers').
    // Two drives of a slower model (96 MiB, 7 ms a seek): slower all
    // through, median and tail alike.
    let (model, size) = ((200, 3_000), 64 * MIB);
    let tail: Vec<(u64, u64)> = (0..8).map(|i| (i * 8 * MIB + 2 * MIB, 320 << 10)).collect();
    let disks = [
        FaultyDisk::drive(size, model.0, model.1),
        FaultyDisk::drive(size, model.0, model.1),
        FaultyDisk::retrying(size, model, &tail, 15_000),
        FaultyDisk::drive(size, model.0, model.1),
        FaultyDisk::drive(96 * MIB, 200, 7_000),
        FaultyDisk::drive(96 * MIB, 200, 7_000),
    ];
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut cmd = arrayburn(&["check", "--random", "--random-time", "2s", "--engine", "psync"]);
    cmd.args(["--passes", "parallel", "-s", "2s", "--progress", "lines", "--json"]).arg(&json);
    cmd.args(disks.iter().map(|d| &d.dev));
    let r = finish(cmd, &json);
    assert_schema(r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    let found: Vec<(&str, RandomKind)> =
        v.summary.random.iter().map(|f| (f.path.as_str(), f.kind)).collect();
    assert_eq!(found, [(disks[2].dev.as_str(), RandomKind::Retrying)], "{}", v.summary.message);
    let f = &v.summary.random[0];
    let (mine, peers) = (f.measured.latency_us, f.peers.unwrap().latency_us);
    assert!(mine.p99 > 4.5 * peers.p99, "p99 {} against its peers' {}", mine.p99, peers.p99);
    assert!(mine.p50 < 1.5 * peers.p50, "a normal median: {} against {}", mine.p50, peers.p50);
    assert!(f.together.is_some(), "shown again with every disk reading");
    // The slower model is slower all through, and judged among its own.
    let section = v.random.as_ref().unwrap();
    assert_eq!(section.depths, [1], "psync keeps one read in flight");
    let p50 = |i: usize| section.disks[i].alone[0].figures.latency_us.p50;
    assert!(p50(4) > 1.8 * p50(0) && p50(5) > 1.8 * p50(1), "{section:#?}");
    assert!(section.disks.iter().all(|d| d.together.len() == 1 && d.alone[0].figures.reads >= 200));
    let said = disk_verdicts(&v);
    assert!(
        said.iter().any(|(p, _, s)| p == &disks[2].dev && s.contains("a drive retrying reads")),
        "{said:?}"
    );
    assert!(said.iter().all(|(p, _, _)| p == &disks[2].dev), "{said:?}");
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("Random reads (4 KiB at random over each whole disk"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("random reads: every disk at once at depth 1"), "{}", r.stderr);
}

#[test]
fn the_deep_queue_is_read_through_io_uring_and_a_bad_random_block_is_refused() {
    need_root!();
    if !arrayburn::io::uring_available() {
        eprintln!("skipped: no io_uring here");
        return;
    }
    let _l = device_lock();
    let d = disks(2, 32 * MIB);
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut cmd = arrayburn(&["check", "--random", "--random-time", "1s", "--passes", "serial"]);
    cmd.args(["-s", "1.5s", "--progress", "none", "--json"])
        .arg(&json)
        .args(d.iter().map(|x| &x.dev));
    let r = finish(cmd, &json);
    let v = r.report.unwrap();
    let section = v.random.unwrap();
    assert_eq!(section.depths, [1, 32]);
    for row in &section.disks {
        let (one, deep) = (&row.alone[0].figures, &row.alone[1].figures);
        assert_eq!((one.depth, deep.depth), (1, 32));
        assert!(one.reads > 0 && deep.reads > 0 && one.failed == 0, "{row:#?}");
        assert_eq!(row.alone[0].cdf_us.len(), 12);
        assert!(row.alone[0].cdf_us.windows(2).all(|w| w[0][1] <= w[1][1]), "a rising curve");
    }
    // A random read that is not whole sectors: one line, exit 2, nothing written.
    let out = dir.path().join("bad.json");
    let mut cmd = arrayburn(&["check", "--random", "--random-block", "1000", "--json"]);
    let bad = cmd.arg(&out).args(d.iter().map(|x| &x.dev)).output_within(RUN);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("--random-block 1000 is not a multiple of"), "{err}");
    assert!(!out.exists());
}

#[test]
fn a_stop_during_the_random_reads_keeps_what_they_read_marked_interrupted() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 32 * MIB);
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut cmd = arrayburn(&["check", "--random", "--random-time", "5m", "--passes", "serial"]);
    cmd.args(["-s", "1.5s", "--progress", "lines", "--json"]).arg(&json);
    let child = cmd.args(d.iter().map(|x| &x.dev)).start();
    child.wait_line("the random reads", MINUTE, |l| {
        l.contains("random reads: ") && l.contains("alone")
    });
    let (out, took) = child.interrupt(MINUTE);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        took < Duration::from_secs(20),
        "stopped within seconds, not the 5 min asked: {took:?}"
    );
    let v: arrayburn::report::Report =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(v.header.interrupted && !v.header.complete);
    let first = &v.random.expect("the random reads so far").disks[0].alone[0];
    assert_eq!(first.stopped.as_deref(), Some("stopped"));
    assert!(first.figures.reads > 0 && first.seconds < 60.0, "{first:#?}");
}

//! End-to-end checks on real loop devices: verdicts on healthy, slow and
//! CPU-bound arrays, odd geometries, interruption.

use std::time::{Duration, Instant};

use arrayburn::measure::PassKind;

use crate::util::*;

const MB: u64 = 1_000_000;
const MIB: u64 = 1 << 20;

/// `n` memory-backed disks of `size` bytes, disk `i` read at `speed(i)`
/// bytes/s by processes in the returned throttle group.
fn throttled(n: usize, size: u64, speed: impl Fn(usize) -> u64) -> (Vec<LoopDisk>, Throttle) {
    let d = disks(n, size);
    let t = Throttle::new();
    for (i, x) in d.iter().enumerate() {
        t.limit(x, speed(i));
    }
    (d, t)
}

/// Runs a check of `disks` inside `throttle` and returns the result.
fn check(throttle: &Throttle, disks: &[LoopDisk], extra: &[&str]) -> Run {
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut args: Vec<&str> =
        vec!["check", "--progress", "lines", "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(disks.iter().map(|d| d.dev.as_str()));
    let r = finish(throttle.command(&args), &json);
    assert_schema(r.json.as_ref().expect("a JSON report"));
    r
}

fn checksum(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

#[test]
fn a_healthy_identical_array_raises_no_flags() {
    need_root!();
    let _l = device_lock();
    // Once: a second round on the same array asserted what the first did
    // (15 s of the suite's exclusive time); every run of the suite is
    // another round.
    let (d, t) = throttled(6, 256 * MIB, |_| 100 * MB);
    let dir = tempdir();
    let out = dir.path().join("bundle");
    let r = check(&t, &d, &["--sample", "2s", "--block", "1m", "--out", out.to_str().unwrap()]);
    let v = r.report.unwrap();
    assert_eq!(r.code, 0, "{}", v.summary.message);
    for pass in ["serial", "parallel"] {
        let png = decode_png(&out.join(format!("charts/speed-{pass}.png")));
        assert_eq!(count_colour(&png, FLAGGED_RED), 0, "{pass}: no red bar");
    }
    assert!(v.summary.disk_verdicts.is_empty());
    assert!(flagged(&v, "serial").is_empty() && flagged(&v, "parallel").is_empty());
    assert_eq!(v.summary.verdict, ArrayVerdict::Healthy);
    assert!(!v.summary.shared_bottleneck);
    for row in disk_rows(&v, "serial").iter().chain(disk_rows(&v, "parallel")) {
        let mbps = row.mb_per_s;
        assert!((85.0..=120.0).contains(&mbps), "measured {mbps} MB/s on a 100 MB/s disk");
    }
    assert!(r.stdout.contains("Verdict: HEALTHY"));
}

#[test]
fn a_disk_slow_only_while_the_parallel_pass_read_it_is_re_measured_together_and_cleared() {
    need_root!();
    let _l = device_lock();
    // Disk 1 reads at 60 MB/s while the parallel pass runs (another pool's
    // reads on it for that minute), and at its own speed again once the
    // re-measurement is announced: the parallel pass alone calls it slow,
    // so it is read again with all the disks together, and cleared. (Held
    // at 60 then too, it is flagged: replay::a_disk_that_slows_only_when_
    // all_read_is_flagged_in_the_parallel_pass, recorded.) Its
    // measurements, recorded, replay to the report it gave.
    let (d, t) = throttled(4, 256 * MIB, |_| 100 * MB);
    let mut remeasuring = false;
    let dir = tempdir();
    let record = dir.path().join("recording.json");
    let args = ["--sample", "2s", "--block", "1m", "--record", record.to_str().unwrap()];
    let r = check_watched(&t, &d, &args, |line| {
        if line.contains("re-measuring") {
            remeasuring = true;
            t.limit(&d[1], 100 * MB);
        } else if !remeasuring && line.contains("parallel pass: reading") {
            t.limit(&d[1], 60 * MB);
        }
    });
    crate::replay::assert_replays(&record, r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    eprintln!("{}\n{}", r.stdout, r.stderr);
    let row = &disk_rows(&v, "parallel")[1];
    assert!(row.pct_of_peers.unwrap() < 75.0, "the parallel pass measured it slow: {row:?}");
    let c = &v.confirmations[..];
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].path.as_str(), c[0].pass), (d[1].dev.as_str(), PassKind::Parallel));
    assert!((90.0..110.0).contains(&c[0].pct_of_peer.unwrap()), "{c:?}");
    // Never called slow. At its peers' speed again, it is cleared; where
    // the host's load scattered the slices across the threshold (beside
    // stress-ng, one run in three or four: 91-101 % over 12 slices), it is
    // not decided, and the run claims no health for it (exit 3).
    match c[0].verdict {
        Verdict::Ok => {
            assert_eq!(row.verdict, Verdict::Ok, "not called slow: {row:?}");
            assert!(c[0].sentence.ends_with("not slow"), "{c:?}");
            assert_eq!(r.code, 0, "{}", v.summary.message);
            assert!(r.stdout.contains("re-measured: ok") && r.stdout.contains("Verdict: HEALTHY"));
        }
        Verdict::Unsure => {
            assert_eq!(row.verdict, Verdict::Unsure, "not called slow: {row:?}");
            assert!(c[0].sentence.contains("still unsure (the slices straddle"), "{c:?}");
            assert_eq!(r.code, 3, "{}", v.summary.message);
            assert!(r.stdout.contains("Verdict: NOT JUDGED"), "{}", r.stdout);
        }
        other => panic!("re-measured at its peers' speed, called {other:?}: {c:?}"),
    }
}

#[test]
fn a_cpu_bound_array_is_a_shared_bottleneck_not_slow_disks() {
    need_root!();
    let _l = device_lock();
    // Memory-backed disks, each held to an NVMe-like 5 GB/s when alone (so
    // the serial baseline is a disk's, not this shared VM's CPU noise).
    // Together they would need 40 GB/s of copying from the loop driver; two
    // cores give 15-28 GB/s of it (measured; at 3 GB/s each they once kept
    // up, 24 GB/s), so every disk loses speed at once. Small disks are read
    // again from the start for the whole window.
    // A 2 s window (3 s cost 9 s more of the suite's exclusive time): CI
    // once measured the first disk alone at 91 % of the others in it
    // (another test's burst of CPU), which the serial pass's re-measurement
    // now answers (below). Each
    // serial sample is read at once (--slices 1): at 5 GB/s on two loaded
    // cores, 0.5 s slices scatter by 10 % (blk-throttle makes up a
    // shortfall within a read, not across the idle gap between slices),
    // which leaves healthy disks unsure; this test is the parallel pass's.
    let (d, t) = throttled(8, 256 * MIB, |_| 5000 * MB);
    let dir = tempdir();
    let record = dir.path().join("recording.json");
    let r =
        check(&t, &d, &["--sample", "2s", "--slices", "1", "--record", record.to_str().unwrap()]);
    crate::replay::assert_replays(&record, r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    let msg = v.summary.message.to_string();
    assert!(v.summary.shared_bottleneck, "{msg}");
    // The parallel pass blames no disk for the shared limit. The serial
    // pass is not this test's: at 5 GB/s alone a memory-backed disk reads
    // at the pace of the CPU it gets, which another test's burst, the
    // kernel tearing down the rings of the last run, or the hypervisor
    // (this VM has shown a third of its CPU stolen) takes. One disk's
    // serial reading can then fall under the threshold and stay there
    // when re-measured (the suite once measured a disk at 81 %, then 76 %
    // against a peer). What is held here: a disk the serial pass calls
    // slow was re-measured first, and the shared bottleneck is named.
    assert!(matches!(r.code, 0 | 1 | 3), "{msg}");
    serial_blame_was_confirmed(&v);
    assert!(
        flagged(&v, "parallel").is_empty(),
        "parallel pass blames disks: {:?}",
        flagged(&v, "parallel")
    );
    let agg = v.summary.parallel_pct_of_serial_sum.unwrap();
    assert!(agg < 90.0, "aggregate {agg}% of the serial sum");
    assert!(r.stdout.contains("SHARED BOTTLENECK"));
    // The same array as NVMe drives behind one PCIe switch whose uplink
    // trained at x8 of x16 (its measurements replayed, the topology
    // edited): the shared-bottleneck verdict names that link, what it
    // carries at most and what the disks read through it; the link is a
    // finding (exit 1), the disks are still not blamed.
    let switch = |i: usize| {
        let own = format!("0000:{:02x}:00.0", 0x41 + i);
        let uplink = serde_json::json!({"kind": "pcie", "at": "0000:40:00.0",
            "current": "16.0 GT/s PCIe x8", "max": "16.0 GT/s PCIe x16", "degraded": true});
        let drive = serde_json::json!({"kind": "pcie", "at": own,
            "current": "16.0 GT/s PCIe x4", "max": "16.0 GT/s PCIe x4", "degraded": false});
        let place = serde_json::json!({"transport": "nvme",
            "controller": {"pci": own, "driver": "nvme"}, "links": [uplink, drive]});
        (i, place)
    };
    let mut again = crate::replay::recording(&record);
    crate::replay::placed(&mut again, (0..d.len()).map(switch));
    let v = crate::replay::replayed(&again);
    let msg = v.summary.message.to_string();
    assert!(v.summary.shared_bottleneck, "{msg}");
    let read: f64 = disk_rows(&v, "parallel").iter().map(|x| x.window_mb_per_s).sum();
    assert!(
        msg.contains(&format!(
            "the controller, expander, bus or CPU is the limit, not the disks. The PCIe switch 0000:40:00.0's uplink, at 16.0 GT/s PCIe x8, carries at most 15754 MB/s; the 8 disk(s) behind it read {read:.0} MB/s together."
        )),
        "{msg}"
    );
    assert!(flagged(&v, "parallel").is_empty(), "{msg}");
    serial_blame_was_confirmed(&v);
    // The link is named (after a serial call of the CPU's noise, if any).
    assert!(
        msg.starts_with("FLAGGED: ")
            && msg.contains("the PCIe switch 0000:40:00.0's uplink runs at 16.0 GT/s PCIe x8"),
        "{msg}"
    );
    assert_eq!(v.header.exit_status, Some(1), "a link below its maximum is a finding: {msg}");
}

/// A disk the serial pass calls slow was re-measured before (fast or
/// unsure is no blame).
fn serial_blame_was_confirmed(v: &arrayburn::report::Report) {
    for b in flagged(v, "serial").into_iter().filter(|f| f.ends_with("=slow")) {
        let path = b.split('=').next().unwrap();
        let msg = &v.summary.message;
        assert!(v.confirmations.iter().any(|c| c.path == path), "{b} blamed unconfirmed: {msg}");
    }
}

#[test]
fn a_4k_sector_disk_and_an_odd_sized_disk_are_read_to_the_last_byte() {
    need_root!();
    let _l = device_lock();
    let four_k = loop_disk(&Spec { sector: 4096, ..Spec::shm(32 * MIB + 3 * 4096) });
    let odd = loop_disk(&Spec::shm(32 * MIB + 5 * 512));
    let sums = |ds: &[&LoopDisk]| -> Vec<u64> {
        ds.iter().map(|d| checksum(&std::fs::read(&d.file).unwrap())).collect()
    };
    let before = sums(&[&four_k, &odd]);
    let t = Throttle::new();
    let both = [four_k, odd];
    let r = check(&t, &both, &["--full", "--full-serial", "--block", "1m"]);
    assert_eq!(sums(&[&both[0], &both[1]]), before, "a read-only check changed a disk");
    let v = r.report.unwrap();
    assert_eq!(v.disks[0].identity.logical_block_size, 4096);
    for pass in ["serial", "parallel"] {
        let rows = disk_rows(&v, pass);
        for (row, size) in rows.iter().zip([32 * MIB + 3 * 4096, 32 * MIB + 5 * 512]) {
            assert_eq!(row.bytes, size, "{pass}: {row:?}");
            assert!(row.reached_end);
            assert_eq!(row.read_errors, 0);
        }
    }
    assert!(r.stdout.contains("Bytes Transferred"));
    // Tiny memory-backed disks read in milliseconds: reported, not judged.
    assert!(
        disk_rows(&v, "serial")
            .iter()
            .all(|row| row.pct_of_peers.is_none() && row.verdict == Verdict::Ok)
    );
    assert!(v.summary.message.contains("Not compared (read for under 1 s"));
}

#[test]
fn a_full_serial_pass_on_big_disks_reads_each_in_parts_interleaved_with_the_others() {
    need_root!();
    let _l = device_lock();
    // Two sparse 33 GiB disks in memory. Holes read at memory speed, so
    // only the order and the bytes are asserted here, not a verdict. Parts
    // of at least 16 GiB make two per disk, read forwards then backwards:
    // disk 0's first part, disk 1's first, disk 1's second, disk 0's second.
    let size = 33u64 << 30;
    let d: Vec<LoopDisk> = (0..2)
        .map(|i| {
            let file = std::path::PathBuf::from(format!(
                "/dev/shm/arrayburn-parts-{}-{i}.img",
                std::process::id()
            ));
            std::fs::File::create(&file).unwrap().set_len(size).unwrap();
            LoopDisk::attach(file, &["--direct-io=on"]).unwrap()
        })
        .collect();
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut args = vec!["check", "--mode", "serial", "--full-serial", "--sample", "2s"];
    args.extend(["--progress", "lines", "--json", json.to_str().unwrap()]);
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let r = finish(arrayburn(&args), &json);
    assert!(matches!(r.code, 0 | 1 | 3), "{}", r.stderr);
    // The pass's own reads: those before any re-measurement (holes read
    // at memory speed on a loaded machine can differ enough for one).
    let read: Vec<&str> = (r.stderr.lines())
        .take_while(|l| !l.contains("re-measuring"))
        .filter_map(|l| l.split("serial pass: reading ").nth(1))
        .collect();
    let (a, b) = (d[0].dev.as_str(), d[1].dev.as_str());
    assert_eq!(read, [a, b, b, a]);
    let v = r.report.unwrap();
    assert_eq!(v.options.slices, 2);
    let serial = v.passes.iter().find(|p| p.kind == PassKind::Serial).unwrap();
    let order: Vec<(&str, u32)> =
        serial.slices.iter().map(|s| (s.path.as_str(), s.round)).collect();
    assert_eq!(order, [(a, 0), (b, 0), (b, 1), (a, 1)]);
    for row in &serial.disks {
        assert_eq!((row.bytes, row.reached_end, row.read_errors), (size, true, 0), "{row:?}");
        assert!(row.stopped.is_none() && row.window_elapsed_s <= row.elapsed_s, "{row:?}");
    }
    assert!(r.stdout.contains("whole disks, read in 2 slices interleaved with the other disks'"));
}

#[test]
fn a_signal_mid_run_writes_a_valid_partial_report_and_exits_130() {
    need_root!();
    let _l = device_lock();
    let (d, t) = throttled(3, 256 * MIB, |_| 20 * MB);
    use nix::sys::signal::Signal;
    // (SIGHUP is not a stop: the check outlives its terminal, see
    // tests/unattended.rs.)
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        interrupted_by(signal, false, &t, &d);
    }
    // `pkill arrayburn` and a service manager's stop signal both of the
    // check's processes (it reads in a child): still one stop, the partial
    // report written, not the "second signal" that quits at once.
    interrupted_by(Signal::SIGTERM, true, &t, &d);
}

/// Starts a long check, sends `signal` while the first disk is being read
/// (to the check's process, or to `every` process it is), and checks the
/// prompt stop, the exit code and the partial report.
fn interrupted_by(signal: nix::sys::signal::Signal, every: bool, t: &Throttle, d: &[LoopDisk]) {
    let dir = tempdir();
    let json = dir.path().join("partial.json");
    let mut args =
        vec!["check", "--sample", "60s", "--progress", "none", "--json", json.to_str().unwrap()];
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let child = t.command(&args).start();
    std::thread::sleep(Duration::from_millis(2500));
    let sent = Instant::now();
    if every {
        let pids = family(child.id());
        assert_eq!(pids.len(), 2, "the check and the child it reads in");
        for pid in pids {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal);
        }
    } else {
        child.signal(signal);
    }
    let out = child.wait(MINUTE);
    assert!(sent.elapsed() < Duration::from_secs(5), "{signal}: took {:?} to stop", sent.elapsed());
    assert_eq!(out.status.code(), Some(130), "{signal}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("INTERRUPTED"),
        "{signal}: report not marked"
    );
    let bytes = std::fs::read(&json).unwrap();
    assert_schema(&serde_json::from_slice(&bytes).unwrap());
    let v: Report = serde_json::from_slice(&bytes).unwrap();
    assert!(v.header.interrupted, "{signal}");
    // No health word for a run stopped with 2 of 3 disks unread: what was
    // read, what was not and which passes did not run.
    assert_eq!(v.summary.verdict, ArrayVerdict::Interrupted, "{signal}");
    let (a, b, c) = (&d[0].dev, &d[1].dev, &d[2].dev);
    let said = format!(
        "INTERRUPTED: partial results, health not claimed. Read before the stop: {a}; not read: {b} and {c}; stopped in or after the serial pass; not run: the parallel pass."
    );
    assert!(v.summary.message.starts_with(&said), "{signal}: {}", v.summary.message);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("HEALTHY") && !text.contains("NOT JUDGED"), "{signal}: {text}");
    let serial = disk_rows(&v, "serial");
    assert_eq!(serial.len(), 1, "{signal}: only the first disk had started");
    assert!(serial[0].bytes > 0);
    let mut left: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    left.sort();
    assert_eq!(left, ["partial.json", "partial.log"], "{signal}: temporary files left");
}

#[test]
fn a_surface_profile_covers_the_disk_and_sums_to_the_bytes_read() {
    need_root!();
    let _l = device_lock();
    let (d, t) = throttled(2, 64 * MIB, |_| 50 * MB);
    let dir = tempdir();
    let csv_path = dir.path().join("surface.csv");
    let r = check(
        &t,
        &d,
        &[
            "--full",
            "--full-serial",
            // 16 MiB buckets of 512 KiB reads: each is 32 reads and 0.34 s
            // at 50 MB/s (blk-throttle lets a slice's worth through at
            // once), enough to be a speed.
            "--buckets",
            "4",
            "--block",
            "512k",
            "--csv",
            csv_path.to_str().unwrap(),
        ],
    );
    let v = r.report.unwrap();
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("pass,disk,bucket,start_byte,end_byte,bytes,reads,mb_per_s"));
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    assert_eq!(rows.len(), 2 * 2 * 4, "2 passes x 2 disks x 4 buckets");
    for pass in ["serial", "parallel"] {
        for (i, disk) in d.iter().enumerate() {
            let mine: Vec<&Vec<String>> =
                rows.iter().filter(|r| r[0] == pass && r[1] == disk.dev).collect();
            assert_eq!(mine.len(), 4);
            let sum: u64 = mine.iter().map(|r| r[5].parse::<u64>().unwrap()).sum();
            assert_eq!(sum, disk_rows(&v, pass)[i].bytes, "{pass}: the CSV sums to the bytes read");
            let reads: u64 = mine.iter().map(|r| r[6].parse::<u64>().unwrap()).sum();
            assert_eq!(reads, disk_rows(&v, pass)[i].reads, "{pass}: and to the reads made");
            assert_eq!(
                mine[3][4],
                (64 * MIB).to_string(),
                "the last bucket ends at the end of the disk"
            );
            // The blkio throttle releases reads in bursts: a bucket's speed
            // here is real but scattered, so only its presence is asserted.
            for r in &mine {
                let mbps: f64 = r[7].parse().unwrap();
                assert!(mbps > 0.0, "{pass}: every bucket of a full read has a speed: {r:?}");
            }
            assert_eq!(disk_rows(&v, pass)[i].surface.buckets, 4);
        }
    }
}

#[test]
fn a_spread_sample_reads_every_spot_of_the_disk() {
    need_root!();
    let _l = device_lock();
    // 2 s at 20 MB/s reads about 40 MB of a 256 MiB disk: from the start
    // only, that is the first 16 MiB buckets; spread over 4 spots, 10 MB at
    // each quarter.
    let (d, t) = throttled(3, 256 * MIB, |_| 20 * MB);
    let r =
        check(&t, &d, &["--sample", "2s", "--block", "512k", "--spots", "4", "--buckets", "16"]);
    let v = r.report.unwrap();
    assert_eq!(v.options.spots, 4);
    for pass in ["serial", "parallel"] {
        for row in disk_rows(&v, pass) {
            let bytes = &row.surface.bytes;
            for spot in [0, 4, 8, 12] {
                assert!(bytes[spot] > 0, "{pass}: spot at bucket {spot}: {bytes:?}");
            }
            assert!(
                bytes[2] == 0 && bytes[6] == 0 && bytes[10] == 0 && bytes[14] == 0,
                "{pass}: nothing read between the spots: {bytes:?}"
            );
        }
    }
    assert!(r.stdout.contains("spread over 4 spots"), "{}", r.stdout);
}

/// The red of a flagged disk in the charts.
pub(crate) const FLAGGED_RED: [u8; 3] = [214, 39, 40];

/// (width, height, RGB pixels) of a PNG file; panics unless it decodes.
pub(crate) fn decode_png(path: &std::path::Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG pixels");
    let step = info.color_type.samples();
    let pixels = buf[..info.buffer_size()].chunks(step).map(|p| [p[0], p[1], p[2]]).collect();
    (info.width, info.height, pixels)
}

pub(crate) fn count_colour(png: &(u32, u32, Vec<[u8; 3]>), rgb: [u8; 3]) -> usize {
    png.2.iter().filter(|p| **p == rgb).count()
}

#[test]
fn a_signal_with_slow_reads_in_flight_stops_within_a_second() {
    need_root!();
    let _l = device_lock();
    // 2 reads of 16 MiB in flight per disk at 8 MB/s: the kernel moves
    // them along together, so each pair takes 4 s; the signal comes 4.5 s
    // in, when the first pair is done and the second has 3 s to go. The
    // stop wakes the worker waiting for its oldest read and does not wait
    // for the reads in flight: the partial report is written within a
    // second, not when they end. (Reads the kernel has already started are
    // finished by it before the process can exit, as for any reader: here
    // seconds at a throttled 8 MB/s, on a real disk milliseconds.)
    let (d, t) = throttled(2, 256 * MIB, |_| 8 * MB);
    let dir = tempdir();
    let json = dir.path().join("partial.json");
    let child = t
        .command(&[
            "check",
            "--engine",
            "io_uring",
            "--queue-depth",
            "2",
            "--block",
            "16m",
            "--passes",
            "parallel",
            "--sample",
            "60s",
            "--progress",
            "none",
            "--json",
            json.to_str().unwrap(),
            &d[0].dev,
            &d[1].dev,
        ])
        .start();
    std::thread::sleep(Duration::from_millis(4500));
    let sent = Instant::now();
    child.signal(nix::sys::signal::Signal::SIGINT);
    // The partial report appears within a second.
    let written = loop {
        if std::fs::read(&json)
            .ok()
            .and_then(|b| serde_json::from_slice::<Report>(&b).ok())
            .is_some_and(|r| r.header.interrupted)
        {
            break sent.elapsed();
        }
        assert!(sent.elapsed() < Duration::from_secs(10), "no report");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(written < Duration::from_secs(1), "report after {written:?}");
    let out = child.wait(MINUTE);
    let exited = sent.elapsed();
    assert!(exited < Duration::from_secs(6), "exited after {exited:?}");
    assert_eq!(out.status.code(), Some(130));
    let v: Report = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(v.header.interrupted);
    assert_eq!((v.options.engine.as_str(), v.options.queue_depth), ("io_uring", 2));
    for row in disk_rows(&v, "parallel") {
        assert!(row.bytes > 0 && row.bytes < 256 * MIB, "{row:?}");
        assert_eq!(row.stopped, Some(Stopped::Interrupted), "{row:?}");
    }
}

/// Runs a check of `disks` inside `throttle`, calling `on_line` with each
/// progress line as it comes (to change the limits at a moment of the run).
fn check_watched(
    throttle: &Throttle,
    disks: &[LoopDisk],
    extra: &[&str],
    mut on_line: impl FnMut(&str),
) -> Run {
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let mut args = vec!["check", "--progress", "lines", "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(disks.iter().map(|x| x.dev.as_str()));
    let child = throttle.command(&args).start();
    let mut seen = String::new();
    child.follow(RUN, |line| {
        on_line(line);
        seen.push_str(line);
        seen.push('\n');
    });
    let out = child.wait(MINUTE);
    let bytes = std::fs::read(&json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_schema(&v);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: seen,
        report: Some(serde_json::from_value(v.clone()).unwrap()),
        json: Some(v),
    }
}

#[test]
fn a_disk_slow_only_while_the_serial_pass_read_it_is_re_measured_and_cleared() {
    need_root!();
    let _l = device_lock();
    // Disk 1 reads at 70 MB/s while the serial pass runs (another load on
    // it, gone by the parallel pass): the serial pass alone calls it slow,
    // the parallel pass does not, so it is read again, alternating with a
    // peer, and cleared.
    // Its measurements, recorded, replay to the report it gave.
    // Three disks, the least a median of peers takes (four cost 2 s more).
    let (d, t) = throttled(3, 256 * MIB, |i| if i == 1 { 70 * MB } else { 100 * MB });
    let dir = tempdir();
    let record = dir.path().join("recording.json");
    let args = ["--sample", "2s", "--block", "1m", "--record", record.to_str().unwrap()];
    let r = check_watched(&t, &d, &args, |line| {
        if line.contains("parallel pass: reading") {
            t.limit(&d[1], 100 * MB);
        }
    });
    crate::replay::assert_replays(&record, r.json.as_ref().unwrap());
    let v = r.report.unwrap();
    eprintln!("{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(&format!("re-measuring {} alone, alternating with", d[1].dev)));
    assert_eq!(v.confirmations.len(), 1, "{:?}", v.confirmations);
    let c = &v.confirmations[0];
    assert_eq!((c.path.as_str(), c.verdict), (d[1].dev.as_str(), Verdict::Ok), "{c:?}");
    let peer = c.peer.clone().expect("alternated with a peer");
    assert!(peer != c.path && c.pass == PassKind::Serial, "{c:?}");
    let pct = c.pct_of_peer.unwrap();
    assert!((90.0..110.0).contains(&pct) && c.slices >= 4, "{c:?}");
    assert!(c.measured.iter().any(|s| s.path == peer) && c.sentence.ends_with("not slow"), "{c:?}");
    let row = &disk_rows(&v, "serial")[1];
    assert!(row.pct_of_peers.unwrap() < 80.0, "the serial pass measured it slow: {row:?}");
    assert_eq!(row.verdict, Verdict::Ok, "but it is not called slow: {row:?}");
    assert_eq!(r.code, 0, "{}", v.summary.message);
    assert!(r.stdout.contains("re-measured: ok") && r.stdout.contains("Verdict: HEALTHY"));
    // The fleet report over this one result judges the disk by what the
    // re-measurement settled, as the check did: nothing to act on.
    let dir = tempdir();
    let json = dir.path().join("r.json");
    std::fs::write(&json, r.json.unwrap().to_string()).unwrap();
    let out = arrayburn(&["report", json.to_str().unwrap()]).output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("HEALTHY") && !text.contains("SLOW"), "{text}");
}

/// What the kernel saw is in every check: as root, each disk's (none of
/// its lines or counters named on quiet loop disks); as a user the log is
/// kept from (`kernel.dmesg_restrict`), said in the verdict, never taken
/// for a quiet log.
#[test]
fn a_check_keeps_what_the_kernel_saw_and_says_so_where_the_log_is_kept_from_it() {
    need_root!();
    let _l = device_lock();
    let d = disks(2, 64 * MIB);
    let dir = tempdir();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .unwrap();
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let json = dir.path().join("root.json");
    let mut args = vec!["check", "-s", "2s", "--mode", "serial", "--json", json.to_str().unwrap()];
    args.extend(&devs);
    let r = finish(arrayburn(&args), &json);
    let v = r.json.unwrap();
    for disk in v["disks"].as_array().unwrap() {
        let k = &disk["kernel"];
        assert!(k.is_object() && k["not_read"].is_null(), "{k:#}");
        assert_eq!(k["counts"], serde_json::json!({}), "{k:#}");
    }
    assert!(!v["summary"]["message"].as_str().unwrap().contains("kernel"), "{}", r.stdout);
    // The same disks, read by nobody (they are lent to it: the device
    // nodes outlive the loop devices, so their owner is given back, also
    // when the test fails), the log kept from all but root where the
    // machine says so.
    struct Lent(Vec<(String, u32)>);
    impl Drop for Lent {
        fn drop(&mut self) {
            for (dev, uid) in &self.0 {
                let _ =
                    nix::unistd::chown(dev.as_str(), Some(nix::unistd::Uid::from_raw(*uid)), None);
            }
        }
    }
    let _lent = Lent(
        devs.iter()
            .map(|dev| {
                let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(dev).unwrap());
                nix::unistd::chown(*dev, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
                (dev.to_string(), uid)
            })
            .collect(),
    );
    let restricted =
        std::fs::read_to_string("/proc/sys/kernel/dmesg_restrict").is_ok_and(|r| r.trim() == "1");
    let json = dir.path().join("nobody.json");
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin()]);
    let mut args = vec!["check", "-s", "2s", "--mode", "serial", "--json", json.to_str().unwrap()];
    args.extend(&devs);
    cmd.args(&args);
    let r = finish(cmd, &json);
    let v = r.json.unwrap_or_else(|| panic!("no report: {}", r.stderr));
    let message = v["summary"]["message"].as_str().unwrap();
    if restricted {
        assert!(
            message.contains("kernel log not read (/dev/kmsg: Operation not permitted")
                && message.contains("kernel.dmesg_restrict keeps it from all but root"),
            "{message}"
        );
        for disk in v["disks"].as_array().unwrap() {
            assert!(disk["kernel"]["not_read"].is_string(), "{:#}", disk["kernel"]);
        }
    } else {
        assert!(!message.contains("kernel log not read"), "{message}");
    }
}

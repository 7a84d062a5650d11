//! A disk with bad sectors (a loop device over the `faultdisk` FUSE file):
//! the error is recorded with its offset, the disk is marked "error", and
//! the other disks finish undisturbed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::util::*;

const MIB: u64 = 1 << 20;

/// Builds the helper once per test run (needs gcc and libfuse3-dev).
fn helper() -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("faultdisk");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/helpers/faultdisk.c");
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "fuse3"])
        .output()
        .expect("pkg-config");
    assert!(
        flags.status.success(),
        "libfuse3-dev is missing: apt-get install -y libfuse3-dev fuse3 (the README's test command does)"
    );
    let flags = String::from_utf8_lossy(&flags.stdout).to_string();
    let mut gcc = Command::new("gcc");
    gcc.args(["-O2", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .args(flags.split_whitespace());
    let st = gcc.status().expect("gcc");
    assert!(st.success(), "building faultdisk failed");
    out
}

/// A mounted faultdisk with a read-only direct-I/O loop device over it;
/// detached, unmounted and reaped on drop.
struct FaultyDisk {
    dev: String,
    mnt: tempfile::TempDir,
    daemon: Child,
}

impl FaultyDisk {
    fn new(size: u64, bad: &[(u64, u64)]) -> Self {
        let mnt = tempdir();
        let ranges: Vec<String> = bad.iter().map(|(s, l)| format!("{s}:{l}")).collect();
        let daemon = Command::new(helper())
            .args([
                size.to_string(),
                ranges.join(","),
                mnt.path().to_string_lossy().into(),
                "-f".into(),
            ])
            .spawn()
            .unwrap();
        let img = mnt.path().join("disk.img");
        for _ in 0..100 {
            if img.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = Command::new("losetup")
            .args(["-f", "--show", "-r", "--direct-io=on"])
            .arg(&img)
            .output()
            .unwrap();
        let mut me = Self {
            dev: String::new(),
            mnt,
            daemon,
        };
        assert!(
            out.status.success(),
            "losetup over FUSE: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        me.dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        me
    }
}

impl Drop for FaultyDisk {
    fn drop(&mut self) {
        if !self.dev.is_empty() {
            let _ = Command::new("losetup").args(["-d", &self.dev]).status();
            // Detach is deferred while the device is open: wait for it.
            let sys = format!("/sys/block/{}/loop", self.dev.trim_start_matches("/dev/"));
            for _ in 0..100 {
                if !Path::new(&sys).exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        let _ = self.daemon.wait();
    }
}

#[test]
fn a_read_error_is_recorded_with_its_offset_and_the_other_disks_finish() {
    need_root!();
    let _l = device_lock();
    let size = 64 * MIB;
    let bad = FaultyDisk::new(size, &[(20 * MIB + 4096, 4096)]);
    let good = disks(2, size);
    // Good disks at a drive-like 50 MB/s: read for over a second, so judged.
    let t = Throttle::new();
    for g in &good {
        t.limit(g, 50_000_000);
    }
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let args = [
        "check",
        "--full",
        "--full-serial",
        "--progress",
        "lines",
        "--json",
        json.to_str().unwrap(),
    ];
    let mut cmd = t.command(&args);
    cmd.args([&good[0].dev, &bad.dev, &good[1].dev]);
    let r = finish(cmd, &json);
    let v = r.json.unwrap();
    assert_schema(&v);
    assert_eq!(r.code, 1);
    for pass in ["serial", "parallel"] {
        let rows = disk_rows(&v, pass);
        assert_eq!(rows[1]["verdict"], "error", "{pass}");
        assert_eq!(rows[1]["read_errors"], 1, "{pass}");
        assert_eq!(
            rows[1]["errors"][0]["offset"],
            20 * MIB,
            "{pass}: the failed 4 MiB read starts at 20 MiB"
        );
        assert_eq!(rows[1]["errors"][0]["errno"], 5, "{pass}: EIO");
        assert_eq!(
            rows[1]["bytes"],
            size - 4 * MIB,
            "{pass}: the rest of the disk was still read"
        );
        for i in [0, 2] {
            assert_eq!(rows[i]["verdict"], "ok", "{pass}: a good disk");
            assert_eq!(
                rows[i]["bytes"], size,
                "{pass}: a good disk read to the end"
            );
        }
    }
    assert!(
        r.stderr
            .contains(&format!("read error on {} at byte {}", bad.dev, 20 * MIB)),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("!!ERROR!!"));
}

//! External tools that ask a disk something (smartctl, blkid), run with a
//! time limit. A disk that stops answering (a dead USB bridge, a drive in
//! endless retries) hangs the tool that asks it, in the kernel where no
//! signal reaches it; arrayburn stops waiting instead, says so, and goes
//! on. The tool is killed and left to die when the disk lets it.
//!
//! It must not interpret what the tool says.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a tool may take unless told otherwise: smartctl answers a
/// healthy disk in well under a second and a disk retrying a read within
/// its command timeouts (tens of seconds).
pub const LIMIT: Duration = Duration::from_secs(60);

/// A program some step needs, with the packages that bring it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needed {
    pub program: &'static str,
    /// Debian's and Ubuntu's package.
    pub debian: &'static str,
    /// RHEL's, Rocky's and Fedora's.
    pub rhel: &'static str,
}

impl Needed {
    pub const HDPARM: Needed = Needed { program: "hdparm", debian: "hdparm", rhel: "hdparm" };
    pub const SG_START: Needed =
        Needed { program: "sg_start", debian: "sg3-utils", rhel: "sg3_utils" };

    /// Whether it is an executable file on `PATH`.
    pub fn installed(self) -> bool {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(self.program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    }

    /// Where to get it, in words: "install hdparm (Debian: hdparm, RHEL:
    /// hdparm)".
    pub fn install(self) -> String {
        format!("install {} (Debian: {}, RHEL: {})", self.program, self.debian, self.rhel)
    }
}

/// Runs `cmd` with no input and its output captured, waiting at most
/// `limit`, or until `give_up` says so (a signal). Why not, in words,
/// when it could not run or did not end in time.
pub fn output(
    cmd: &mut Command,
    limit: Duration,
    give_up: &dyn Fn() -> bool,
) -> Result<Output, String> {
    let name = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name} could not run ({e})"))?;
    // Read both pipes while waiting, so a talkative tool never blocks on
    // a full pipe; the readers end when the tool does.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let began = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return Ok(Output {
                    status,
                    stdout: out.join().unwrap_or_default(),
                    stderr: err.join().unwrap_or_default(),
                });
            }
            Ok(None) => {}
            Err(e) => return Err(format!("{name}: {e}")),
        }
        let why = if give_up() {
            "was stopped (signal received)".to_string()
        } else if began.elapsed() >= limit {
            format!("did not answer within {} s (the disk may be hung)", limit.as_secs())
        } else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let _ = child.kill();
        return Err(format!("{name} {why}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_that_hangs_is_left_behind_in_time() {
        let ok = output(Command::new("sh").args(["-c", "echo hi"]), LIMIT, &|| false).unwrap();
        assert_eq!(ok.stdout, b"hi\n");
        let began = Instant::now();
        let e = output(Command::new("sleep").arg("30"), Duration::from_millis(300), &|| false)
            .unwrap_err();
        assert!(e.contains("did not answer within 0 s"), "{e}");
        assert!(began.elapsed() < Duration::from_secs(5));
        let e = output(Command::new("sleep").arg("30"), LIMIT, &|| true).unwrap_err();
        assert!(e.contains("was stopped"), "{e}");
    }
}

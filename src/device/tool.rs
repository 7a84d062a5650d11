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

/// The most a tool may print (stdout and stderr together) before it is
/// stopped and not read: far above any real `smartctl -x` (tens of KiB),
/// and a bound on what a broken or hostile tool can make arrayburn hold.
pub const MOST_OUTPUT: usize = 16 << 20;

/// How long the pipes may stay open once the tool itself has ended (its
/// children holding them) before those children are ended.
const AFTER_EXIT: Duration = Duration::from_millis(200);

/// Runs `cmd` with no input and its output captured, waiting at most
/// `limit`, or until `give_up` says so (a signal). Why not, in words,
/// when it could not run, did not end in time or printed more than
/// [`MOST_OUTPUT`].
///
/// The tool runs in a process group of its own, and every end is the
/// group's: at the limit, at a stop, past the output cap, and once the
/// tool has exited, what it left behind holding its pipes (a child that
/// never exits held the wait for ever before).
pub fn output(
    cmd: &mut Command,
    limit: Duration,
    give_up: &dyn Fn() -> bool,
) -> Result<Output, String> {
    use std::os::unix::process::CommandExt;
    let name = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("{name} could not run ({e})"))?;
    let group = Group(child.id());
    let (tx, rx) = std::sync::mpsc::channel();
    read_into(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>), 0, &tx);
    read_into(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>), 1, &tx);
    drop(tx);
    let (mut got, began) = (Got::default(), Instant::now());
    // When the tool exited: it is left unreaped until the end, so that its
    // pid, the group's id, cannot be taken by another process meanwhile
    // (the group is ended by that id).
    let mut exited: Option<Instant> = None;
    let status = |child: &mut std::process::Child| child.wait().map_err(|e| format!("{name}: {e}"));
    loop {
        if got.take(&rx) {
            group.end();
            return Err(format!("{name} printed more than {} MiB: not read", MOST_OUTPUT >> 20));
        }
        if exited.is_none() && group.leader_exited() {
            exited = Some(Instant::now());
        }
        if let Some(at) = exited {
            if got.open == 0 {
                return Ok(got.output(status(&mut child)?));
            }
            // Its children hold the pipes: they are ended; one that left
            // the group is not waited for past the limit.
            if at.elapsed() >= AFTER_EXIT {
                group.end();
            }
        }
        let why = if give_up() {
            "was stopped (signal received)".to_string()
        } else if began.elapsed() >= limit {
            format!("did not answer within {} s (the disk may be hung)", limit.as_secs())
        } else {
            continue;
        };
        group.end();
        return match exited.filter(|_| !give_up()) {
            // The tool answered; only what it left behind did not end.
            Some(_) => Ok(got.output(status(&mut child)?)),
            None => Err(format!("{name} {why}")),
        };
    }
}

/// What a tool printed so far: its standard output and error, and how
/// many of them are still open.
struct Got {
    bytes: [Vec<u8>; 2],
    open: usize,
}

impl Default for Got {
    fn default() -> Self {
        Got { bytes: [Vec::new(), Vec::new()], open: 2 }
    }
}

impl Got {
    /// Takes what the readers sent within 20 ms; whether it is now more
    /// than [`MOST_OUTPUT`].
    fn take(&mut self, rx: &std::sync::mpsc::Receiver<(usize, Option<Vec<u8>>)>) -> bool {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok((i, Some(bytes))) => self.bytes[i].extend_from_slice(&bytes),
            Ok((_, None)) => self.open = self.open.saturating_sub(1),
            Err(_) => {}
        }
        self.bytes[0].len() + self.bytes[1].len() > MOST_OUTPUT
    }

    fn output(&mut self, status: std::process::ExitStatus) -> Output {
        let [stdout, stderr] = std::mem::take(&mut self.bytes);
        Output { status, stdout, stderr }
    }
}

/// A tool's process group (its leader's pid).
struct Group(u32);

impl Group {
    /// Whether its leader, the tool, has exited (left unreaped: its pid
    /// stays the group's).
    fn leader_exited(&self) -> bool {
        use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
        let pid = nix::unistd::Pid::from_raw(self.0 as i32);
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        !matches!(waitid(Id::Pid(pid), flags), Ok(WaitStatus::StillAlive))
    }

    /// Kills every process still in it; a process in the kernel (a read
    /// of a hung disk) dies when the disk lets it, not waited for.
    fn end(&self) {
        let pgid = nix::unistd::Pid::from_raw(self.0 as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    }
}

/// Reads `pipe` on a thread of its own, sending each chunk as `(which,
/// Some(bytes))` and its end as `(which, None)`; it stops once nobody
/// listens (the tool given up), or at its end.
fn read_into(
    pipe: Option<Box<dyn Read + Send>>,
    which: usize,
    to: &std::sync::mpsc::Sender<(usize, Option<Vec<u8>>)>,
) {
    let to = to.clone();
    let Some(mut pipe) = pipe else {
        let _ = to.send((which, None));
        return;
    };
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let chunk = match pipe.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Ok(0) | Err(_) => None,
                Ok(n) => Some(buf[..n].to_vec()),
            };
            let end = chunk.is_none();
            if to.send((which, chunk)).is_err() || end {
                return;
            }
        }
    });
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

    /// Whether process `pid` is still running (not gone, not a zombie).
    fn running(pid: &str) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        stat.is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
    }

    /// Waits up to 10 s for `pid` to stop running.
    fn ends(pid: &str) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if !running(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_tool_that_leaves_a_child_holding_its_output_is_read_and_the_child_ended() {
        // The tool exits; its child keeps stdout open for ever: the wait
        // held `inspect` 300 s past its limit (a child that never exits:
        // for ever).
        let began = Instant::now();
        let out = output(Command::new("sh").args(["-c", "sleep 600 & echo $!"]), LIMIT, &|| false)
            .unwrap();
        assert!(began.elapsed() < Duration::from_secs(10), "{:?}", began.elapsed());
        let pid = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success() && !pid.trim().is_empty(), "{out:?}");
        assert!(ends(&pid), "the child {pid} still runs");
    }

    #[test]
    fn at_the_limit_the_tool_and_its_children_are_ended() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("pid");
        let script = format!("sleep 600 & echo $! > {}; sleep 600", at.display());
        let began = Instant::now();
        let e =
            output(Command::new("sh").args(["-c", &script]), Duration::from_millis(500), &|| false)
                .unwrap_err();
        assert!(e.contains("sh did not answer within 0 s"), "{e}");
        assert!(began.elapsed() < Duration::from_secs(10), "{:?}", began.elapsed());
        let pid = std::fs::read_to_string(&at).unwrap();
        assert!(ends(&pid), "the child {pid} was left running");
    }

    #[test]
    fn endless_output_is_cut_at_the_cap_and_not_read() {
        let began = Instant::now();
        let e = output(&mut Command::new("yes"), LIMIT, &|| false).unwrap_err();
        assert_eq!(e, "yes printed more than 16 MiB: not read");
        assert!(began.elapsed() < Duration::from_secs(30), "{:?}", began.elapsed());
    }
}

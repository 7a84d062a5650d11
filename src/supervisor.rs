//! A run's exit status, given as soon as its results are written, whatever
//! a disk does.
//!
//! A read of a disk that stopped answering (a frozen USB bridge, a drive in
//! endless retries) stays in the kernel for as long as the disk is silent,
//! and no signal ends it. A process ends only when its last thread has, so
//! with such a read in a thread (the psync engine's, the burn-in's look for
//! ZFS labels) a run whose report was written could not exit: the shell, a
//! script or Ansible would wait for as long as the disk stays frozen.
//! (io_uring lets go of a ring's stuck reads after the process has gone;
//! a blocking read holds its thread.)
//!
//! So a command that reads disks runs in a child process ([`split`]): the
//! process the shell started only waits for the child's word, the exit
//! status it sends once every result is written and it has let go of the
//! terminal ([`exit`]), and exits with it at once. It passes on the
//! signals it is sent (a terminal's reach both processes already), and a
//! child whose parent is killed is stopped as by SIGTERM. A child held by a
//! stuck read ends on its own once the read returns; until then it still
//! holds its disks, so no other run takes them.
//!
//! A child killed outright (SIGKILL: the out-of-memory killer picks the
//! process that holds the buffers) cannot say anything; so it tells the
//! parent beforehand where its log is ([`start_log`]) and how the run goes on
//! ([`go_on_with`]), and the parent says it for it: a line on standard
//! error and in the log, and the exit status 128 + the signal.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::libc;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, kill, sigaction};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, getppid, pipe2};

/// In the parent: the child's pid, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// In the child: the pipe's write end, for [`exit`]; -1 when the run was
/// not split.
static WORD: AtomicI32 = AtomicI32::new(-1);

/// What the child tells the parent over the pipe, each a tag byte and its
/// bytes: the exit status (one byte, the last word), the log's path and
/// how the run goes on (each up to a NUL).
const EXIT: u8 = b'X';
const LOG: u8 = b'L';
const GO_ON: u8 = b'G';
/// The `--json` file the child last saved (to be marked killed).
const SAVED_JSON: u8 = b'J';
/// The `--ocp-diag` file it last saved, and the lines that end its stream
/// should it be killed (after a 0x01 byte).
const SAVED_OCP: u8 = b'D';

/// The signals a parent passes on to its child: those that stop a run.
const PASSED_ON: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// Splits the run in two. Returns in the child (and where no child could
/// be made: the run then goes on in this one process); in the parent it
/// never returns. Call it before any thread is started.
pub fn split() {
    let Ok((read, write)) = pipe2(OFlag::O_CLOEXEC) else { return };
    let parent = nix::unistd::getpid();
    // SAFETY: no other thread runs yet (the caller's promise), so the
    // child may do anything the parent could.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            drop(read);
            // A parent killed (SIGKILL, say) stops the run, partial results
            // written, instead of leaving it to go on unwatched.
            let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGTERM);
            if getppid() != parent {
                let _ = kill(nix::unistd::getpid(), Signal::SIGTERM);
            }
            WORD.store(write.into_raw_fd(), Ordering::SeqCst);
        }
        Ok(ForkResult::Parent { child }) => {
            drop(write);
            wait_for(read, child)
        }
        Err(_) => {}
    }
}

/// Lets the run outlive its terminal: SIGHUP (an ssh session or terminal
/// closed) is ignored from here on, by this process and what it starts.
/// The lines it prints then go nowhere; its results and its log are
/// written as asked. Call it after the stop signals' handler is set.
pub fn outlive_terminal() {
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    // SAFETY: ignoring a signal touches no memory.
    let _ = unsafe { sigaction(Signal::SIGHUP, &ignore) };
}

/// Ends the run with `code`. A split child first flushes its output, lets
/// go of its standard input, output and error (so that a reader of them
/// sees their end though a stuck read holds this process), and sends the
/// parent the code; then it exits.
pub fn exit(code: u8) -> ! {
    // The log's last line: how the run ended, for whoever reads it after
    // the terminal has gone.
    let words = crate::outcome::Outcome::words(code);
    crate::tell::log(&format!("arrayburn: exit status {code} ({words})"), true);
    let fd = WORD.swap(-1, Ordering::SeqCst);
    if fd >= 0 {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        let _ = nix::sys::prctl::set_pdeathsig(None);
        if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
            for n in 0..3 {
                // SAFETY: dup2 onto the standard descriptors, which this
                // process keeps open to its end (now on /dev/null).
                unsafe { libc::dup2(null.as_raw_fd(), n) };
            }
        }
        // SAFETY: `fd` was the pipe's write end, taken out of WORD above
        // and owned by nobody else.
        let word = unsafe { OwnedFd::from_raw_fd(fd) };
        let _ = nix::unistd::write(&word, &[EXIT, code]);
    }
    std::process::exit(code.into())
}

/// Starts the run's log where it was opened (`at`: the file and its path),
/// naming it first; where it could not be opened, one line says so and
/// the run goes on. `who` names the command.
pub fn start_log(who: &str, at: std::io::Result<(std::fs::File, std::path::PathBuf)>) {
    match at {
        Ok((file, path)) => {
            crate::tell::log_to(file);
            log_at(&path);
            crate::tell::err(format_args!("{who}: {}: the run's log", path.display()), true);
        }
        Err(e) => crate::tell::err(
            format_args!("{who}: warning: no log is kept ({e}); the run goes on"),
            true,
        ),
    }
}

/// Tells the parent where the run's log is, for it to write in should this
/// process be killed (nothing where the run was not split).
fn log_at(path: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    tell_parent(LOG, path.as_os_str().as_bytes());
}

/// Tells the parent how the run goes on should this process be killed
/// (`words`: a line, "continue with: ..."); the latest counts.
pub fn go_on_with(words: &str) {
    tell_parent(GO_ON, words.as_bytes());
}

/// Tells the parent the results saved so far, for it to mark them killed
/// should this process be killed: the `--json` file (a regular file), and
/// the `--ocp-diag` file with the lines that end its stream then
/// (`SIGNAL` and `AT` in them are put in by the parent). None takes back
/// what was told (the run's last save: its own result, never marked).
pub fn saved(json: Option<&std::path::Path>, ocp: Option<(&std::path::Path, &[u8])>) {
    use std::os::unix::ffi::OsStrExt;
    // A message is cut at 3000 bytes: a path that long is not sent (the
    // parent must never mark a file by a cut name).
    let fits = |p: &&std::path::Path| p.as_os_str().len() <= 2000;
    let (json, ocp) = (json.filter(fits), ocp.filter(|(p, _)| fits(p)));
    // An empty path: none.
    tell_parent(SAVED_JSON, json.map_or(&[][..], |p| p.as_os_str().as_bytes()));
    let mut bytes = Vec::new();
    if let Some((p, tail)) = ocp {
        bytes.extend_from_slice(p.as_os_str().as_bytes());
        bytes.push(1);
        bytes.extend_from_slice(tail);
    }
    tell_parent(SAVED_OCP, &bytes);
}

/// One message to the parent: `tag`, `bytes` (NULs dropped), a NUL. A
/// pipe write this small is atomic; one that fails is let go (the run
/// goes on).
fn tell_parent(tag: u8, bytes: &[u8]) {
    let fd = WORD.load(Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    let mut message = vec![tag];
    message.extend(bytes.iter().copied().filter(|b| *b != 0).take(3000));
    message.push(0);
    // SAFETY: `fd` is the pipe's write end, open until `exit` takes it;
    // borrowed for this write only.
    let word = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let _ = nix::unistd::write(word, &message);
}

/// The parent's whole life: pass signals on, wait for the child's word
/// (or its end, when it ended without one), exit with it.
fn wait_for(read: OwnedFd, child: Pid) -> ! {
    CHILD.store(child.as_raw(), Ordering::SeqCst);
    let pass_on = SigAction::new(
        SigHandler::SigAction(pass_on),
        SaFlags::SA_SIGINFO | SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for signal in PASSED_ON {
        // SAFETY: the handler only reads an atomic and calls kill(2).
        let was = unsafe { sigaction(signal, &pass_on) };
        // One inherited as ignored (nohup's SIGHUP) stays ignored: the
        // child inherited that too.
        if was.is_ok_and(|w| matches!(w.handler(), SigHandler::SigIgn)) {
            let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
            // SAFETY: restoring what was there.
            let _ = unsafe { sigaction(signal, &ignore) };
        }
    }
    let mut heard = Heard::default();
    let mut buf = [0u8; 4096];
    loop {
        match nix::unistd::read(&read, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if let Some(code) = heard.take(&buf[..n]) {
                    std::process::exit(code.into())
                }
            }
            Err(Errno::EINTR) => continue,
            Err(_) => break,
        }
    }
    // No word: the child ended without one (a panic, a signal).
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => {
                let code = 128 + signal as i32;
                heard.killed(child, signal, code);
                std::process::exit(code)
            }
            Err(Errno::EINTR) | Ok(_) => continue,
            Err(_) => std::process::exit(2),
        }
    }
}

/// What the parent has heard from the child so far.
#[derive(Default)]
struct Heard {
    /// Bytes of a message not whole yet.
    pending: Vec<u8>,
    log: Option<std::path::PathBuf>,
    go_on: Option<String>,
    json: Option<std::path::PathBuf>,
    ocp: Option<(std::path::PathBuf, Vec<u8>)>,
}

impl Heard {
    /// Takes bytes read from the pipe: the exit status once it has come.
    fn take(&mut self, bytes: &[u8]) -> Option<u8> {
        use std::os::unix::ffi::OsStrExt;
        self.pending.extend_from_slice(bytes);
        loop {
            match self.pending.first() {
                Some(&EXIT) => return self.pending.get(1).copied(),
                Some(&tag @ (LOG | GO_ON | SAVED_JSON | SAVED_OCP)) => {
                    let end = self.pending.iter().position(|b| *b == 0)?;
                    let text = &self.pending[1..end];
                    let path = |b: &[u8]| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b));
                    let named = |b: &[u8]| (!b.is_empty()).then(|| path(b));
                    match tag {
                        LOG => self.log = Some(path(text)),
                        SAVED_JSON => self.json = named(text),
                        SAVED_OCP => {
                            let at = text.iter().position(|b| *b == 1).unwrap_or(text.len());
                            let tail = text.get(at + 1..).unwrap_or_default().to_vec();
                            self.ocp = named(&text[..at]).map(|p| (p, tail));
                        }
                        _ => self.go_on = Some(String::from_utf8_lossy(text).into_owned()),
                    }
                    self.pending.drain(..=end);
                }
                // Nothing else is sent (parent and child are one build).
                _ => return None,
            }
        }
    }

    /// The child was killed by `signal` without a word: said on standard
    /// error and in the run's log, with how the run goes on and, last in
    /// the log, the exit status.
    fn killed(&self, child: Pid, signal: Signal, code: i32) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let why = match signal {
            Signal::SIGKILL => {
                " (SIGKILL: the kernel's out-of-memory killer sends it too; see `dmesg`)"
            }
            _ => "",
        };
        let go_on = self.go_on.as_deref().map(|g| format!("; {g}")).unwrap_or_default();
        // Device paths in the continue command are the user's text:
        // control characters as escapes, as every line the run says (the
        // command on a line of its own).
        let line = crate::escape::lines(&format!(
            "arrayburn: error: the run's worker process (pid {child}) was killed by {}{why}; it wrote no result after its last save{go_on}",
            signal.as_str()
        ));
        let _ = writeln!(std::io::stderr(), "{line}");
        self.mark_killed(signal, code, &line);
        let Some(log) = &self.log else { return };
        // The log the child made, appended to: never created, never
        // reached through a link put in its place since.
        let opened =
            std::fs::OpenOptions::new().append(true).custom_flags(libc::O_NOFOLLOW).open(log);
        let Ok(mut f) = opened else { return };
        let stamp = crate::units::log_stamp();
        let words = crate::outcome::Outcome::words(u8::try_from(code).unwrap_or(u8::MAX));
        let _ = write!(f, "{stamp} {line}\n{stamp} arrayburn: exit status {code} ({words})\n");
    }
}

impl Heard {
    /// Marks the results the child last saved as killed: the JSON copy
    /// says so (`killed`, `interrupted`, the exit status), and the OCP
    /// stream gets its end (an error and `testRunEnd` ERROR). Each only a
    /// regular file, never through a link; what cannot be marked is left.
    fn mark_killed(&self, signal: Signal, code: i32, line: &str) {
        let stamp = crate::units::rfc3339(std::time::SystemTime::now());
        if let Some(p) = &self.json {
            let marked = crate::input::read_not_linked(p)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .filter(serde_json::Value::is_object)
                .map(|mut v| {
                    v["killed"] = line.trim_start_matches("arrayburn: error: ").into();
                    (v["interrupted"], v["exit_status"]) = (true.into(), code.into());
                    v["complete"] = false.into();
                    // Nothing found by then is no health (a finding stands).
                    let s = &mut v["summary"];
                    if s["verdict"] == "healthy" || s["verdict"] == "not_judged" {
                        s["verdict"] = "interrupted".into();
                    }
                    v["finished_at"] = stamp.clone().into();
                    v
                });
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(".".as_ref());
            if let (Some(v), Some(name)) = (marked, p.file_name()) {
                let bytes = serde_json::to_vec_pretty(&v).unwrap_or_default();
                if let Ok(d) = crate::output::Dir::open(dir) {
                    let _ = d.write(&name.to_string_lossy(), &bytes);
                }
            }
        }
        if let Some((p, tail)) = &self.ocp {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let tail = String::from_utf8_lossy(tail)
                .replace("SIGNAL", signal.as_str())
                .replace("\"AT\"", &format!("\"{stamp}\""));
            let opened = std::fs::OpenOptions::new()
                .append(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(p);
            if let Ok(mut f) = opened
                && f.metadata().is_ok_and(|m| m.is_file())
            {
                let _ = f.write_all(tail.as_bytes());
            }
        }
    }
}

/// Passes a signal on to the child, unless the kernel sent it (a
/// terminal's Ctrl-C or hangup reaches the whole process group, the child
/// too).
extern "C" fn pass_on(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands an SA_SIGINFO handler a valid siginfo.
    let code = unsafe { info.as_ref() }.map_or(0, |i| i.si_code);
    let child = CHILD.load(Ordering::SeqCst);
    if code != libc::SI_KERNEL && child > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    }
    if child > 0 {
        // A stopped child (SIGSTOP, a debugger let go) takes the stop
        // only once it runs again: a stop signal must not wait on that.
        // SAFETY: as above.
        unsafe { libc::kill(child, libc::SIGCONT) };
    }
}

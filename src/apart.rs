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
        let _ = nix::unistd::write(&word, &[code]);
    }
    std::process::exit(code.into())
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
    let mut word = [0u8];
    loop {
        match nix::unistd::read(&read, &mut word) {
            Ok(1) => std::process::exit(word[0].into()),
            Err(Errno::EINTR) => continue,
            _ => break,
        }
    }
    // No word: the child ended without one (a panic, a signal).
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => std::process::exit(128 + signal as i32),
            Err(Errno::EINTR) | Ok(_) => continue,
            Err(_) => std::process::exit(2),
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
}

//! Every process a test starts, and every wait on one, has a deadline.
//!
//! `Command::start` spawns with standard input closed and both outputs
//! collected on threads (a pipe nobody drains can never fill and stall the
//! child); the `Child` it returns is killed and reaped when dropped, so a
//! failing assertion leaves nothing running. Waiting for a line, for the
//! exit, or for the output of a short command all take a limit, and
//! running out of it fails the test with what it waited for, for how long,
//! and what the child had said. It must not decide what a test asserts.

use std::io::Read;
use std::process::{self, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// One output of a child, filled by its reader thread.
#[derive(Default)]
struct Pipe {
    state: Mutex<Collected>,
    grew: Condvar,
}

#[derive(Default)]
struct Collected {
    bytes: Vec<u8>,
    /// The pipe reached its end (or there was none).
    closed: bool,
}

impl Pipe {
    /// A pipe read to its end on a thread of its own; `None` is a closed one.
    fn read(from: Option<impl Read + Send + 'static>) -> Arc<Pipe> {
        let pipe = Arc::new(Pipe::default());
        let Some(mut from) = from else {
            pipe.state.lock().unwrap().closed = true;
            return pipe;
        };
        let to = pipe.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let n = from.read(&mut buf).unwrap_or(0);
                let mut s = to.state.lock().unwrap();
                if n == 0 {
                    s.closed = true;
                } else {
                    s.bytes.extend_from_slice(&buf[..n]);
                }
                to.grew.notify_all();
                if n == 0 {
                    return;
                }
            }
        });
        pipe
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.state.lock().unwrap().bytes).into_owned()
    }

    /// Waits until `done` holds of what was collected, the pipe closes, or
    /// `until` passes; whether `done` held.
    fn wait(&self, until: Instant, mut done: impl FnMut(&Collected) -> bool) -> bool {
        let mut s = self.state.lock().unwrap();
        loop {
            if done(&s) {
                return true;
            }
            let now = Instant::now();
            if s.closed || now >= until {
                return false;
            }
            s = self.grew.wait_timeout(s, until - now).unwrap().0;
        }
    }
}

/// A running child: killed and reaped on drop.
pub struct Child {
    inner: process::Child,
    what: String,
    out: Arc<Pipe>,
    err: Arc<Pipe>,
    exited: Option<ExitStatus>,
}

/// Starting children with deadlines: use these, never `output`, `status`
/// or `spawn` of `std::process::Command` in a test.
pub trait Start {
    /// Spawns with standard input closed and both outputs collected.
    fn start(&mut self) -> Child;
    /// Spawns as the command was set up, then hands the raw child to
    /// `adjust` (to close a pipe, say) before collecting what is left.
    fn start_as_set(&mut self, adjust: impl FnOnce(&mut process::Child)) -> Child;
    /// Runs to the end, at most `limit`: its output.
    fn output_within(&mut self, limit: Duration) -> Output;
}

impl Start for Command {
    fn start(&mut self) -> Child {
        self.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        self.start_as_set(|_| ())
    }

    #[allow(clippy::disallowed_methods)]
    fn start_as_set(&mut self, adjust: impl FnOnce(&mut process::Child)) -> Child {
        use std::os::unix::process::CommandExt;
        let what = describe(self);
        // SAFETY: prctl is async-signal-safe and touches no memory of the
        // parent's: the child dies with the test that started it, even a
        // test killed at its deadline (whose drops never run).
        unsafe {
            self.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)
            });
        }
        let mut inner = self.spawn().unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        adjust(&mut inner);
        let out = Pipe::read(inner.stdout.take());
        let err = Pipe::read(inner.stderr.take());
        Child { inner, what, out, err, exited: None }
    }

    fn output_within(&mut self, limit: Duration) -> Output {
        self.start().wait(limit)
    }
}

/// The command as a short line for messages: the program's file name and
/// its arguments.
fn describe(cmd: &Command) -> String {
    let program = std::path::Path::new(cmd.get_program());
    let name = program.file_name().unwrap_or(program.as_os_str()).to_string_lossy();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy()).collect();
    format!("`{name} {}`", args.join(" "))
}

impl Child {
    pub fn pid(&self) -> Pid {
        Pid::from_raw(self.inner.id() as i32)
    }

    pub fn id(&self) -> u32 {
        self.inner.id()
    }

    /// Whether the child has exited (reaped then).
    pub fn has_exited(&mut self) -> bool {
        if self.exited.is_none() {
            self.exited = self.inner.try_wait().unwrap();
        }
        self.exited.is_some()
    }

    /// Sends `signal` (the child may have ended: then nothing happens).
    pub fn signal(&self, signal: Signal) {
        let _ = kill(self.pid(), signal);
    }

    /// The first whole line of standard error (where progress goes) that
    /// `matches`, waiting at most `limit`; the test fails (naming `what`)
    /// when the output ends or the time runs out first.
    pub fn wait_line(&self, what: &str, limit: Duration, matches: impl Fn(&str) -> bool) -> String {
        let mut found = None;
        let seen = self.err.wait(Instant::now() + limit, |c| {
            let text = String::from_utf8_lossy(&c.bytes);
            // Whole lines only (not one still being written), each
            // without its newline.
            let whole = text.rfind('\n').map_or("", |end| &text[..end]);
            found = whole.lines().find(|l| matches(l)).map(str::to_string);
            found.is_some()
        });
        if !seen {
            let ended = if self.err.state.lock().unwrap().closed {
                " (its stderr ended first)"
            } else {
                ""
            };
            self.fail(&format!("a line on its stderr that shows {what}{ended}"), limit);
        }
        found.unwrap()
    }

    /// Calls `on_line` with each whole line of standard error (without
    /// its newline) as it comes, until it ends; the test fails when that
    /// takes more than `limit`.
    pub fn follow(&self, limit: Duration, mut on_line: impl FnMut(&str)) {
        let (pipe, until, mut read) = (&self.err, Instant::now() + limit, 0);
        loop {
            let mut closed = false;
            let more = pipe.wait(until, |c| {
                closed = c.closed;
                c.closed || c.bytes[read..].contains(&b'\n')
            });
            let lines = {
                let s = pipe.state.lock().unwrap();
                let end = if closed {
                    s.bytes.len()
                } else {
                    read + s.bytes[read..].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
                };
                let lines = String::from_utf8_lossy(&s.bytes[read..end]).into_owned();
                read = end;
                lines
            };
            lines.lines().for_each(&mut on_line);
            if !more {
                self.fail("the end of its stderr", limit);
            }
            if closed {
                return;
            }
        }
    }

    /// Polls `ready` every 20 ms while the child runs, at most `limit`; the
    /// test fails (naming `what`) when the child ends or the time runs out
    /// first.
    pub fn wait_until(&mut self, what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
        wait_for(limit, || ready() || self.has_exited());
        if !ready() {
            let exited = if self.has_exited() { " (it exited first)" } else { "" };
            self.fail(&format!("{what}{exited}"), limit);
        }
    }

    /// Waits at most `limit` for the child to exit (and its outputs to
    /// close): its status and all it wrote. Past the limit it is killed
    /// and the test fails.
    pub fn wait(mut self, limit: Duration) -> Output {
        let until = Instant::now() + limit;
        let status = self.exit_by(until).unwrap_or_else(|| self.fail("it to exit", limit));
        // A grandchild may hold the pipes a moment longer; not for ever.
        let grace = Instant::now() + Duration::from_secs(5);
        for p in [&self.out, &self.err] {
            p.wait(grace, |c| c.closed);
        }
        Output {
            status,
            stdout: self.out.state.lock().unwrap().bytes.clone(),
            stderr: self.err.state.lock().unwrap().bytes.clone(),
        }
    }

    /// Sends SIGINT and waits at most `limit`: the output and how long the
    /// child took to stop once signalled.
    pub fn interrupt(self, limit: Duration) -> (Output, Duration) {
        let sent = Instant::now();
        self.signal(Signal::SIGINT);
        let out = self.wait(limit);
        (out, sent.elapsed())
    }

    /// Kills the child (as a crash or a reboot would) and reaps it.
    pub fn kill(self) -> Output {
        self.kill_all();
        self.wait(Duration::from_secs(30))
    }

    /// SIGKILL to the child and every process under it, the lowest first
    /// (a split run's worker would take its parent's death as a SIGTERM).
    fn kill_all(&self) {
        for pid in family(self.id()).into_iter().rev() {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }

    /// The exit status once the child exited, polling until `until`.
    fn exit_by(&mut self, until: Instant) -> Option<ExitStatus> {
        wait_for(until.saturating_duration_since(Instant::now()), || self.has_exited());
        self.exited
    }

    /// Fails the test: what it waited for, how long, and what the child
    /// said (killed first, so nothing is left running).
    fn fail(&self, waited_for: &str, limit: Duration) -> ! {
        // Reaped by the drop, as the panic unwinds.
        self.kill_all();
        panic!(
            "waited {limit:?} for {waited_for} from {} (pid {}); gave up and killed it.\n--- its stdout\n{}\n--- its stderr\n{}",
            self.what,
            self.inner.id(),
            self.out.text(),
            self.err.text()
        );
    }

    /// Kills the child if it still runs and reaps it, waiting a bounded
    /// time (a child stuck in the kernel on a frozen disk cannot die until
    /// the disk is thawed: it is left, said, rather than waited for).
    fn stop(&mut self) {
        if self.exited.is_some() {
            return;
        }
        self.kill_all();
        if self.exit_by(Instant::now() + Duration::from_secs(10)).is_none() {
            eprintln!(
                "{} (pid {}) did not die within 10 s of SIGKILL; left behind",
                self.what,
                self.inner.id()
            );
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `pid` and the processes under it, parents before their children (from
/// /proc: a process's children by thread).
pub fn family(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", all[i]));
        for task in tasks.into_iter().flatten().flatten() {
            let children = std::fs::read_to_string(task.path().join("children"));
            all.extend(children.unwrap_or_default().split_whitespace().flat_map(str::parse::<u32>));
        }
        i += 1;
    }
    all
}

/// Waits until `ready` holds (polling every 20 ms), at most `limit`;
/// whether it did.
pub fn wait_for(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ready()
}

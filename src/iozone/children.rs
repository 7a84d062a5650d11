//! Throughput mode's children as processes, as iozone forks them unless
//! `-T`. Measured here, the two differ: iozone's own `-T` writes 13 % slower
//! with `-I` than its processes do (docs/iozone.md), so threads cannot stand
//! in for processes.
//!
//! Each child is this program again (`arrayburn iozone-child`, hidden),
//! given the phase and the same iozone arguments, so it parses the same
//! configuration. Parent and child talk in lines over the child's stdin and
//! stdout:
//!
//! | child → parent | meaning |
//! |---|---|
//! | `ready` | file opened, buffer made: waiting for the release |
//! | `done` | its loop has finished (the others stonewall) |
//! | `result ACTUAL THROUGHPUT` | its numbers, last |
//! | `error RAW KIND MESSAGE` | it failed (RAW: the OS error or `-`) |
//!
//! | parent → child | meaning |
//! |---|---|
//! | `go` | start the timed loop (sent to all once all are ready) |
//! | `stonewall` | another child has finished |
//! | `stop` | a child failed or a signal came (end of input means the same) |

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Child as Process, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};

use super::args;
use super::throughput::{Child, ChildRun, Link, PHASES, PhaseRun, child_error, child_file};
use crate::outcome::Outcome;
use crate::stop::StopFlag;

/// The hidden subcommand a child runs as.
pub const SUBCOMMAND: &str = "iozone-child";

/// Runs a phase's children as processes: their numbers, and the parent's
/// seconds from the release to the last exit.
pub fn run_processes(run: &PhaseRun, stop: &StopFlag) -> io::Result<(Vec<Child>, f64)> {
    let (c, count) = (run.c, run.count);
    let exe = std::env::current_exe()?;
    let index = PHASES.iter().position(|p| *p == run.phase).unwrap_or(0);
    let mut procs: Vec<Process> = Vec::with_capacity(count);
    let mut inputs: Vec<Option<ChildStdin>> = Vec::with_capacity(count);
    let (tx, rx) = unbounded::<(usize, Option<String>)>();
    let mut readers = Vec::with_capacity(count);
    for k in 0..count {
        let mut p = Command::new(&exe)
            .arg(SUBCOMMAND)
            .args([index, k, run.kb as usize, run.reclen as usize].map(|n| n.to_string()))
            .args(&c.command_line[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("starting child {k}: {e}")))?;
        inputs.push(p.stdin.take());
        let out = p.stdout.take().expect("piped");
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send((k, Some(line))).is_err() {
                    return;
                }
            }
            let _ = tx.send((k, None));
        }));
        procs.push(p);
    }
    drop(tx);
    let mut parent = Parent {
        paths: (0..count).map(|k| child_file(c, k)).collect(),
        inputs,
        results: vec![None; count],
        ended: vec![false; count],
        first_error: None,
        stonewalled: false,
        stopping: false,
    };
    let secs = parent.conduct(&rx, count, stop);
    parent.inputs.clear();
    for p in &mut procs {
        let _ = p.wait();
    }
    for r in readers {
        let _ = r.join();
    }
    if let Some(e) = parent.first_error {
        return Err(e);
    }
    if stop.is_set() {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    Ok((parent.results.into_iter().map(Option::unwrap_or_default).collect(), secs))
}

/// The parent's side of one phase.
struct Parent {
    paths: Vec<std::path::PathBuf>,
    inputs: Vec<Option<ChildStdin>>,
    results: Vec<Option<Child>>,
    ended: Vec<bool>,
    first_error: Option<io::Error>,
    stonewalled: bool,
    stopping: bool,
}

impl Parent {
    /// Sends `line` to every child still listening.
    fn tell_all(&mut self, line: &str) {
        for input in self.inputs.iter_mut() {
            if let Some(w) = input
                && writeln!(w, "{line}").and_then(|()| w.flush()).is_err()
            {
                *input = None;
            }
        }
    }

    /// Releases the children once all are ready, relays the stonewall,
    /// stops everyone on a failure or a signal; returns the seconds from
    /// the release to the last child's end.
    fn conduct(
        &mut self,
        rx: &Receiver<(usize, Option<String>)>,
        count: usize,
        stop: &StopFlag,
    ) -> f64 {
        let mut ready = 0;
        let mut released: Option<Instant> = None;
        while self.ended.iter().any(|e| !e) {
            if stop.is_set() && !self.stopping {
                self.stopping = true;
                self.tell_all("stop");
            }
            let Ok((k, line)) = rx.recv_timeout(Duration::from_millis(50)) else { continue };
            let Some(line) = line else {
                self.ended_early(k, released.is_some());
                continue;
            };
            let (word, rest) = line.split_once(' ').unwrap_or((&line, ""));
            match word {
                "ready" => {
                    ready += 1;
                    if ready == count && !self.stopping {
                        self.tell_all("go");
                        released = Some(Instant::now());
                    }
                }
                "done" if !self.stonewalled => {
                    self.stonewalled = true;
                    self.tell_all("stonewall");
                }
                "result" => self.results[k] = parse_result(rest),
                "error" => {
                    let e = parse_error(rest);
                    // A child stopped by the others' stop is not the cause.
                    if e.kind() != io::ErrorKind::Interrupted {
                        let e = child_error(k, &self.paths[k].clone(), e);
                        self.fail(e);
                    }
                }
                _ => {}
            }
        }
        released.map_or(0.0, |t| t.elapsed().as_secs_f64())
    }

    /// Child `k`'s output ended: without its numbers (and not stopped) that
    /// is its failure; before the release (`released` false), it must not
    /// hold the others there.
    fn ended_early(&mut self, k: usize, released: bool) {
        self.ended[k] = true;
        if self.results[k].is_none() && self.first_error.is_none() && !self.stopping {
            let e = io::Error::other("ended without its numbers");
            self.fail(child_error(k, &self.paths[k].clone(), e));
        }
        if !released && !self.stopping {
            self.stopping = true;
            self.tell_all("stop");
        }
    }

    /// Records the first failure and stops every child.
    fn fail(&mut self, e: io::Error) {
        self.first_error.get_or_insert(e);
        if !std::mem::replace(&mut self.stopping, true) {
            self.tell_all("stop");
        }
    }
}

fn parse_result(rest: &str) -> Option<Child> {
    let mut it = rest.split(' ').map(str::parse::<f64>);
    Some(Child { actual: it.next()?.ok()?, throughput: it.next()?.ok()? })
}

/// An error line as an io::Error of the same kind (the OS error where there
/// was one, so EIO stays a storage fault).
fn parse_error(rest: &str) -> io::Error {
    let mut parts = rest.splitn(3, ' ');
    let raw = parts.next().and_then(|r| r.parse::<i32>().ok());
    let kind = match parts.next() {
        Some("InvalidData") => io::ErrorKind::InvalidData,
        Some("Interrupted") => io::ErrorKind::Interrupted,
        Some("UnexpectedEof") => io::ErrorKind::UnexpectedEof,
        _ => io::ErrorKind::Other,
    };
    let message = parts.next().unwrap_or("").to_string();
    match raw {
        Some(code) if message == io::Error::from_raw_os_error(code).to_string() => {
            io::Error::from_raw_os_error(code)
        }
        _ => io::Error::new(kind, message),
    }
}

/// An io::Error as one `error` line.
fn error_line(e: &io::Error) -> String {
    let raw = e.raw_os_error().map_or("-".to_string(), |r| r.to_string());
    let kind = match e.kind() {
        io::ErrorKind::InvalidData => "InvalidData",
        io::ErrorKind::Interrupted => "Interrupted",
        io::ErrorKind::UnexpectedEof => "UnexpectedEof",
        _ => "Other",
    };
    let message = e.to_string().replace('\n', " ");
    format!("error {raw} {kind} {message}")
}

/// The child's side: the release and the stonewall come over stdin.
struct ProcessLink {
    go: Receiver<()>,
    stonewalled: AtomicBool,
    aborted: AtomicBool,
}

impl ProcessLink {
    /// Listens on stdin from a thread of its own.
    fn listen() -> &'static ProcessLink {
        let (go_tx, go) = bounded::<()>(1);
        let link: &'static ProcessLink = Box::leak(Box::new(ProcessLink {
            go,
            stonewalled: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
        }));
        std::thread::spawn(move || link.read_stdin(go_tx));
        link
    }

    fn read_stdin(&self, go: Sender<()>) {
        for line in io::stdin().lock().lines() {
            match line.as_deref() {
                Ok("go") => {
                    let _ = go.send(());
                }
                Ok("stonewall") => self.stonewalled.store(true, Ordering::Relaxed),
                Ok(_) => {
                    self.aborted.store(true, Ordering::Relaxed);
                    break;
                }
                Err(_) => break,
            }
        }
        // End of input: the parent is gone or said stop.
        self.aborted.store(true, Ordering::Relaxed);
        drop(go);
    }
}

impl Link for ProcessLink {
    fn release(&self) {
        say("ready");
        // A closed channel (stop before the release) ends the wait too.
        let _ = self.go.recv();
    }
    fn stonewalled(&self) -> bool {
        self.stonewalled.load(Ordering::Relaxed)
    }
    fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }
    fn finished(&self) {
        say("done");
    }
}

/// One line to the parent.
fn say(line: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// `arrayburn iozone-child PHASE K KB RECLEN IOZONE-ARGS...`: one child
/// process of a throughput phase.
pub fn child_main(args: &[String], stop: &StopFlag) -> anyhow::Result<Outcome> {
    let num = |i: usize| -> anyhow::Result<u64> {
        args.get(i).and_then(|a| a.parse().ok()).ok_or_else(|| {
            anyhow::anyhow!("{SUBCOMMAND}: internal use only (run by arrayburn iozone)")
        })
    };
    let (phase, k, kb, reclen) = (num(0)?, num(1)?, num(2)?, num(3)?);
    let phase = *PHASES
        .get(phase as usize)
        .ok_or_else(|| anyhow::anyhow!("{SUBCOMMAND}: no phase {phase}"))?;
    let c = args::parse("arrayburn iozone", &args[4..])?;
    let k = k as usize;
    let path = child_file(&c, k);
    let link = ProcessLink::listen();
    let child = ChildRun {
        c: &c,
        phase,
        k,
        path: &path,
        reclen,
        n: kb * 1024 / reclen.max(1),
        link,
        stop,
        fread_buf: None,
    };
    match child.spawn() {
        Ok(r) => say(&format!("result {} {}", r.actual, r.throughput)),
        Err(e) => say(&error_line(&e)),
    }
    Ok(Outcome::Healthy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_numbers_and_errors_exactly() {
        let r = parse_result("65536 2345678.123456789").unwrap();
        assert_eq!((r.actual, r.throughput), (65536.0, 2345678.123456789));
        let eio = io::Error::from_raw_os_error(nix::libc::EIO);
        let back = parse_error(error_line(&eio).trim_start_matches("error "));
        assert_eq!(back.raw_os_error(), Some(nix::libc::EIO), "EIO stays a storage fault");
        let bad =
            io::Error::new(io::ErrorKind::InvalidData, "data read back is not\nwhat was written");
        let back = parse_error(error_line(&bad).trim_start_matches("error "));
        assert_eq!(back.kind(), io::ErrorKind::InvalidData);
        assert_eq!(back.to_string(), "data read back is not what was written");
    }
}

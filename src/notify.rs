//! `--notify CMD`: tells someone when a run ends, and during a burn-in when
//! a disk is found bad, gone or hung (a mail, a webhook, a chat message:
//! contrib/notify/ has examples).
//!
//! CMD runs through `sh -c`, with the run's result JSON (or, for a disk's
//! event, a small JSON about it) on its standard input and environment
//! variables naming the event: `ARRAYBURN_EVENT` (`end` or `disk`;
//! `arrayburn watch`'s `finding` and `finding_ended`),
//! `ARRAYBURN_COMMAND`, `ARRAYBURN_VERDICT` (`HEALTHY`, `FLAGGED`,
//! `NOT JUDGED`, `INTERRUPTED`; for a disk: `BAD`, `GONE`, `HUNG`),
//! `ARRAYBURN_EXIT` (the run's exit status, at its end), `ARRAYBURN_HOST`,
//! `ARRAYBURN_MESSAGE` (the verdict's sentence) and `ARRAYBURN_TO_ACT_ON`
//! (the disks to act on, one per line).
//!
//! A notifier never stops or holds up the run: it gets `--notify-timeout`
//! (then, or at a signal that comes while it runs, it and what it started
//! are killed), its failure is one line on
//! standard error and in the log, and the run's results and exit status do
//! not change. A disk's event is sent beside the run (a thread); the run's
//! end is sent once every result is written.
//!
//! It must not decide what a verdict is, only carry it.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::burnin::live::Trouble;
use crate::rundoc::RunDoc;
use crate::stop::StopFlag;

/// The events being sent beside the run, each bounded by its timeout.
static BESIDE: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Where and how long to notify.
#[derive(Debug, Clone)]
pub struct Notifier {
    /// The command, run by `sh -c`.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
}

/// What happened, for the notifier.
#[derive(Debug, Clone)]
pub struct Event {
    /// `end` or `disk`.
    pub kind: &'static str,
    /// `check`, `burnin` or `report`.
    pub command: &'static str,
    /// `HEALTHY`, `FLAGGED`, ... or a disk's `BAD`, `GONE`, `HUNG`.
    pub verdict: String,
    /// The run's exit status (its end only).
    pub exit: Option<u8>,
    /// The verdict's sentence.
    pub message: String,
    /// The disks to act on.
    pub to_act_on: Vec<String>,
    /// The JSON on the notifier's standard input.
    pub json: Vec<u8>,
}

impl Event {
    /// A burn-in's disk that met `trouble` (found bad, gone or hung): the
    /// run goes on.
    pub fn disk(disk: &str, trouble: Trouble, run_id: &str) -> Event {
        let what = match trouble {
            Trouble::Bad => "a block failed or read back wrong",
            Trouble::Gone => "the device went away",
            Trouble::Hung => "it stopped answering",
        };
        let json = serde_json::json!({
            "event": "disk", "command": "burnin", "disk": disk, "verdict": trouble.word(),
            "what": what, "run_id": run_id,
        });
        Event {
            kind: "disk",
            command: "burnin",
            verdict: trouble.word().into(),
            exit: None,
            message: format!("{disk}: {what}; the burn-in goes on"),
            to_act_on: vec![disk.to_string()],
            json: format!("{json:#}\n").into_bytes(),
        }
    }

    /// A finding of `arrayburn watch` begun (`kind` `finding`; `verdict`
    /// `FAIL-SLOW`, `SLOW TOGETHER`, `GONE`, `ERRORS`) or ended
    /// (`finding_ended`, `ENDED`), said in `message`; `json` the event's.
    pub fn watch(
        kind: &'static str,
        verdict: &str,
        message: String,
        to_act_on: Vec<String>,
        json: &impl serde::Serialize,
    ) -> Event {
        let json = serde_json::to_vec_pretty(json).unwrap_or_default();
        Event {
            kind,
            command: "watch",
            verdict: verdict.into(),
            exit: None,
            message,
            to_act_on,
            json,
        }
    }

    /// The end of a run: its run document and its result JSON.
    pub fn end(command: &'static str, run: &RunDoc, json: Vec<u8>) -> Event {
        let verdict = run.outcome.word();
        Event {
            kind: "end",
            command,
            verdict: verdict.into(),
            exit: Some(run.outcome.exit_code()),
            message: run.message.clone(),
            to_act_on: run.paths_to_act_on(),
            json,
        }
    }
}

impl Notifier {
    /// Runs the notifier for `event` and waits for it, at most its timeout
    /// (a signal that comes meanwhile, `stop`, ends the wait too: it is
    /// killed; an interrupted run's end is still told); a failure is said
    /// in one line (the run goes on as it was).
    pub fn send(&self, event: &Event, stop: &StopFlag) {
        if let Err(e) = self.run(event, stop) {
            tell!(
                "arrayburn: warning: --notify for the {} event failed: {e} (the run's results and exit status stand)",
                event.kind
            );
        }
    }

    /// As [`Notifier::send`], beside the caller (a disk's event during a
    /// burn-in: the run does not wait for it; the run's end waits for it,
    /// at most its timeout).
    pub fn send_beside(&self, event: Event, stop: &StopFlag) {
        let (me, stop) = (self.clone(), stop.clone());
        let sending = std::thread::spawn(move || me.send(&event, &stop));
        BESIDE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(sending);
    }

    /// As [`Notifier::send`], once the events sent beside the run are done
    /// (the end is told last).
    pub fn send_last(&self, event: &Event, stop: &StopFlag) {
        Self::sent();
        self.send(event, stop);
    }

    /// Waits for the events sent beside the run (each at most its
    /// timeout).
    pub fn sent() {
        let sending =
            std::mem::take(&mut *BESIDE.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for s in sending {
            let _ = s.join();
        }
    }

    fn run(&self, event: &Event, stop: &StopFlag) -> Result<(), String> {
        let stopped_before = stop.is_set();
        let host = nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&self.command)
            // An `arrayburn report` the notifier runs must not notify in
            // turn (and so on): the notifier is not passed on.
            .env_remove("ARRAYBURN_NOTIFY")
            .env_remove("ARRAYBURN_NOTIFY_TIMEOUT")
            .env("ARRAYBURN_EVENT", event.kind)
            .env("ARRAYBURN_COMMAND", event.command)
            .env("ARRAYBURN_VERDICT", &event.verdict)
            .env("ARRAYBURN_HOST", host)
            .env("ARRAYBURN_MESSAGE", &event.message)
            .env("ARRAYBURN_TO_ACT_ON", event.to_act_on.join("\n"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group: killed whole at the timeout (a
            // `curl` it started too).
            .process_group(0);
        if let Some(code) = event.exit {
            cmd.env("ARRAYBURN_EXIT", code.to_string());
        }
        let mut child = cmd.spawn().map_err(|e| format!("cannot run sh: {e}"))?;
        // Fed and drained on threads: a notifier that reads nothing, or
        // says a lot, never blocks the wait below.
        let (json, mut stdin) = (event.json.clone(), child.stdin.take());
        std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(&json);
            }
        });
        let mut stderr = child.stderr.take();
        let (said, heard) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(e) = stderr.as_mut() {
                let _ = e.take(64 * 1024).read_to_string(&mut text);
            }
            let _ = said.send(text);
        });
        let until = Instant::now() + self.timeout;
        let stopped = || stop.is_set() && !stopped_before;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < until && !stopped() => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => {
                    let group = nix::unistd::Pid::from_raw(-(child.id() as i32));
                    let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
                    let _ = child.wait();
                    let why = if stopped() {
                        "a signal stopped the run".to_string()
                    } else {
                        format!("--notify-timeout {}", crate::units::human_duration(self.timeout))
                    };
                    return Err(format!(
                        "`{}` still ran after {why}; it was killed",
                        crate::escape::terminal(&self.command)
                    ));
                }
            }
        };
        if status.success() {
            return Ok(());
        }
        // What it said, unless something it left behind keeps its stderr.
        let text = heard.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        let said = if last.is_empty() { String::new() } else { format!(": {last}") };
        Err(format!("`{}` ended with {status}{said}", crate::escape::terminal(&self.command)))
    }
}

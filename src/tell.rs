//! Lines for people, on standard output and error, that never stop a run.
//! A terminal or pipe that goes away (an ssh session dropped, `| tee`
//! killed) makes every later write fail, and `println!`/`eprintln!` panic
//! there: a days-long burn-in would die with no result. The results are
//! written to their files regardless; a line nobody can read any more is
//! dropped.
//!
//! A run's log ([`log_to`]: a burn-in's `STATE/runs/RUN.log`, a check's
//! beside its `--json` or in its `--out`) gets a copy of every line, each
//! dated, so a run whose terminal went away still says what it did.
//!
//! It must not decide what is said, only that saying it cannot fail.

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, PoisonError};

/// The run's log file, once one is opened.
static LOG: Mutex<Option<File>> = Mutex::new(None);

/// Copies every later line to `file` (appended), each dated.
pub fn log_to(file: File) {
    *LOG.lock().unwrap_or_else(PoisonError::into_inner) = Some(file);
}

/// `-q`: only errors and warnings are said (the run's log still gets
/// every line).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// `-v`: reports say more.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// `--color`: 0 auto, 1 always, 2 never.
static COLOUR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// How much the run says, and when in colour (`-q`, `-v`, `--color`;
/// `colour`: None on a terminal only).
pub fn set_chatter(quiet: bool, verbose: bool, colour: Option<bool>) {
    use std::sync::atomic::Ordering::Relaxed;
    QUIET.store(quiet, Relaxed);
    VERBOSE.store(verbose, Relaxed);
    COLOUR.store(
        match colour {
            None => 0,
            Some(true) => 1,
            Some(false) => 2,
        },
        Relaxed,
    );
}

/// Whether only the verdict line, errors and warnings are said (`-q`).
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether reports say more (`-v`).
pub fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether what goes to a stream (`terminal`: it is one) is coloured:
/// `--color always`, or auto on a terminal with NO_COLOR unset or empty.
pub fn colour(terminal: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    match COLOUR.load(std::sync::atomic::Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => terminal && !no_color,
    }
}

/// Whether a line says an error, a warning or that the run was
/// interrupted (with how to go on): said even with `-q`.
fn problem(text: &str) -> bool {
    ["error:", "warning:", ": interrupted"].iter().any(|w| text.contains(w))
}

/// Appends `text` to the run's log, if one is open; with `date`, each
/// line dated where it does not start with a date already (the progress
/// lines do; a report is copied as printed).
/// A log that cannot be written any more (a full disk) is closed, said
/// once on standard error.
pub fn log(text: &str, date: bool) {
    let mut log = LOG.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(f) = log.as_mut() else { return };
    let stamp = crate::units::log_stamp();
    let mut lines = String::with_capacity(text.len() + 32);
    for l in text.lines() {
        if date && !dated(l) {
            lines.push_str(&stamp);
            lines.push(' ');
        }
        lines.push_str(l);
        lines.push('\n');
    }
    if let Err(e) = f.write_all(lines.as_bytes()) {
        *log = None;
        drop(log);
        let _ = writeln!(
            std::io::stderr(),
            "arrayburn: warning: the run's log cannot be written any more ({e}); the run goes on"
        );
    }
}

/// Whether a line starts with a date-time (`2026-12-03T13:44:54Z`).
fn dated(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() >= 11
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[..4].iter().all(u8::is_ascii_digit)
}

/// Lines of a live display ([`redraw`]) last drawn on standard error:
/// cleared before the next line is said there, which then stands where the
/// display was (the display is drawn again below it).
static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Draws `block` (whole lines, each fitting the terminal) on standard
/// error in place of the block drawn last.
pub fn redraw(block: &str) {
    let mut e = std::io::stderr().lock();
    let mut text = clearing();
    text.push_str(block);
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
    LIVE.store(block.lines().count(), std::sync::atomic::Ordering::SeqCst);
}

/// Leaves the block drawn last where it is: what is said next goes below.
pub fn settle() {
    LIVE.store(0, std::sync::atomic::Ordering::SeqCst);
}

/// The escapes that move up to the live block's first line and clear from
/// there (none when nothing is drawn).
fn clearing() -> String {
    match LIVE.swap(0, std::sync::atomic::Ordering::SeqCst) {
        0 => String::new(),
        n => format!("\x1b[{n}F\x1b[J"),
    }
}

/// A line on standard error (as `eprintln!`).
#[macro_export]
macro_rules! tell {
    () => { $crate::tell::err(format_args!(""), true) };
    ($($t:tt)*) => { $crate::tell::err(format_args!($($t)*), true) };
}

/// Text on standard error without a newline (as `eprint!`).
#[macro_export]
macro_rules! tell_part {
    ($($t:tt)*) => { $crate::tell::err(format_args!($($t)*), false) };
}

/// Text on standard output without a newline (as `print!`).
#[macro_export]
macro_rules! show {
    ($($t:tt)*) => { $crate::tell::out(format_args!($($t)*)) };
}

/// Writes `text` (and a newline) to standard error, ignoring a failure;
/// control characters (from a device path, a host name) shown as escapes.
pub fn err(text: fmt::Arguments, newline: bool) {
    let text = crate::escape::lines(&text.to_string());
    log(&text, true);
    if quiet() && !problem(&text) {
        return;
    }
    // A terminal gets each line in its width, wrapped at words.
    let text = crate::width::wrap_lines(&text, crate::width::of_stderr());
    let mut e = std::io::stderr().lock();
    let live = clearing();
    let _ = if newline {
        writeln!(e, "{live}{text}")
    } else {
        write!(e, "{live}{text}").and_then(|()| e.flush())
    };
}

/// Prints a run's report as `shown` (escaped already, perhaps coloured;
/// with `-q` its verdict line alone) on standard output, or standard
/// error where `stderr`; the run's log gets `text`, the whole report
/// uncoloured.
pub fn report(text: &str, shown: &str, stderr: bool) {
    log(text, false);
    if stderr {
        let mut e = std::io::stderr().lock();
        let live = clearing();
        let _ = write!(e, "{live}{shown}").and_then(|()| e.flush());
    } else {
        let mut o = std::io::stdout().lock();
        let _ = write!(o, "{shown}").and_then(|()| o.flush());
    }
}

/// Writes `text` to standard output, ignoring a failure; control
/// characters shown as escapes.
pub fn out(text: fmt::Arguments) {
    let text = crate::escape::lines(&text.to_string());
    log(&text, false);
    let mut o = std::io::stdout().lock();
    let _ = write!(o, "{text}").and_then(|()| o.flush());
}

#[cfg(test)]
mod tests {
    #[test]
    fn quiet_still_says_errors_warnings_and_how_to_go_on_after_a_stop() {
        assert!(super::problem("arrayburn: error: --sample 0: ..."));
        assert!(super::problem("arrayburn burnin: warning: no log is kept"));
        assert!(super::problem(
            "arrayburn burnin: interrupted; continue with: arrayburn burnin ..."
        ));
        assert!(!super::problem("arrayburn: re-measuring /dev/sdb alone"));
    }
}

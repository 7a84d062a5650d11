//! Lines for people, on standard output and error, that never stop a run.
//! A terminal or pipe that goes away (an ssh session dropped, `| tee`
//! killed) makes every later write fail, and `println!`/`eprintln!` panic
//! there: a days-long burn-in would die with no result. The results are
//! written to their files regardless; a line nobody can read any more is
//! dropped.
//!
//! It must not decide what is said, only that saying it cannot fail.

use std::fmt;
use std::io::Write;

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
    let mut e = std::io::stderr().lock();
    let _ =
        if newline { writeln!(e, "{text}") } else { write!(e, "{text}").and_then(|()| e.flush()) };
}

/// Writes `text` to standard output, ignoring a failure; control
/// characters shown as escapes.
pub fn out(text: fmt::Arguments) {
    let text = crate::escape::lines(&text.to_string());
    let mut o = std::io::stdout().lock();
    let _ = write!(o, "{text}").and_then(|()| o.flush());
}

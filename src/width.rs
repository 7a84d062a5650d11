//! How wide a line may be where it is read, and text laid out to that
//! width: a terminal's columns (`COLUMNS` honoured, then the terminal's
//! own size), none for a file or a pipe, which keep their full lines; a
//! line longer than the width wrapped at its blanks with a hanging
//! indent (a path or a word longer than the line is never cut).
//!
//! It must not decide what is said, nor which columns of a table show
//! (that is the table's: `export::doc`).

use std::io::IsTerminal;
use std::os::fd::AsFd;

/// The narrowest width laid out for: below it, lines are left whole.
const NARROWEST: usize = 40;

/// The width of standard output where it is a terminal.
pub fn of_stdout() -> Option<usize> {
    let out = std::io::stdout();
    of(out.is_terminal(), out.as_fd())
}

/// The width of standard error where it is a terminal.
pub fn of_stderr() -> Option<usize> {
    let err = std::io::stderr();
    of(err.is_terminal(), err.as_fd())
}

/// A terminal's width: `COLUMNS` where it is a number, else the
/// terminal's, else 80; None where the stream is no terminal.
fn of(terminal: bool, fd: std::os::fd::BorrowedFd) -> Option<usize> {
    if !terminal {
        return None;
    }
    let columns = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok());
    let asked = columns.filter(|&c| c > 0).or_else(|| {
        terminal_size::terminal_size_of(fd).map(|(terminal_size::Width(w), _)| usize::from(w))
    });
    Some(asked.unwrap_or(80))
}

/// `line` laid out in `width` columns: the first line starts with
/// `first`, the lines after it with `rest` (a hanging indent); broken only
/// at blanks. No width: one line, as given.
pub fn wrap(line: &str, width: Option<usize>, first: &str, rest: &str) -> String {
    let Some(width) = width.filter(|&w| w >= NARROWEST) else {
        return format!("{first}{line}");
    };
    let options = textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .break_words(false);
    textwrap::wrap(line, options).join("\n")
}

/// Each line of `text` longer than `width` wrapped at its blanks, the
/// lines after it indented two more than its own indent; shorter lines,
/// and all of them without a width, as they are.
pub fn wrap_lines(text: &str, width: Option<usize>) -> String {
    let Some(w) = width else { return text.to_string() };
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if unicode_width::UnicodeWidthStr::width(line) <= w {
            out.push_str(line);
            continue;
        }
        let body = line.trim_start_matches(' ');
        let indent = &line[..line.len() - body.len()];
        out.push_str(&wrap(body, Some(w), indent, &format!("{indent}  ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_broken_at_blanks_with_a_hanging_indent() {
        let said = "/dev/loop3: 66% of its peers' speed, move it to another slot and check again; if it stays slow, return it";
        let w = wrap(said, Some(40), "  ", "    ");
        assert_eq!(
            w,
            "  /dev/loop3: 66% of its peers' speed,\n    move it to another slot and check\n    again; if it stays slow, return it"
        );
        assert!(w.lines().all(|l| l.len() <= 40), "{w}");
        // A file or a pipe: the line whole.
        assert_eq!(wrap(said, None, "  ", "    "), format!("  {said}"));
    }

    #[test]
    fn a_path_longer_than_the_line_is_never_cut_nor_split_at_its_hyphens() {
        let path = "/dev/disk/by-id/nvme-SAMSUNG_MZQL23T8HCLS-00A07_S64HNE0T123456-part1";
        let w = wrap(&format!("read {path} again"), Some(40), "", "  ");
        assert_eq!(w, format!("read\n  {path}\n  again"));
    }

    #[test]
    fn only_the_lines_longer_than_the_width_are_wrapped_each_under_its_own_indent() {
        let text =
            "short\n    an indented line that is far longer than the forty columns given\nend";
        assert_eq!(
            wrap_lines(text, Some(40)),
            "short\n    an indented line that is far longer\n      than the forty columns given\nend"
        );
        assert_eq!(wrap_lines(text, None), text);
    }
}

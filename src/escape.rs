//! Text from outside arrayburn (a disk's model and serial, a host name, a
//! result file, a lock holder's command line) made safe to show. A model
//! string or a host name in a result file can carry ESC, OSC or BEL bytes
//! that rewrite the reader's terminal, or HTML that a Markdown renderer
//! runs; here such text becomes visible escapes instead.
//!
//! It must not decide what is shown, only how a string is made harmless
//! for where it goes (HTML pages escape through their template crate).

use std::fmt::Write;

/// Whether `c` changes how a terminal shows what follows: every control
/// character (C0, DEL, C1) and the Unicode bidirectional controls (text
/// that displays in another order than it reads).
fn is_control(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every control character shown as an escape (`\x1b`,
/// `\u{202e}`), so it prints as one line of plain text on a terminal.
pub fn terminal(s: &str) -> String {
    terminal_cow(s).into_owned()
}

/// As [`terminal`], borrowing `s` where it has nothing to escape (nearly
/// always: every cell of a fleet's tables, every string of a result file
/// read, is cleaned).
pub fn terminal_cow(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_control) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !is_control(c) => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    out.into()
}

/// `s` with every control character but the line ends and tabs shown as
/// an escape: a whole text (a report, a page, a message) made harmless
/// wherever a host name, a device path or a model in it came from.
pub fn lines(s: &str) -> String {
    if !s.chars().any(|c| is_control(c) && c != '\n' && c != '\t') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (j, part) in line.split('\t').enumerate() {
            if j > 0 {
                out.push('\t');
            }
            out.push_str(&terminal(part));
        }
    }
    out
}

/// `s` as literal text in a Markdown table cell: control characters
/// escaped as for a terminal, HTML's `&`, `<` and `>` as entities (a
/// renderer passes raw HTML through), and every character Markdown gives
/// a meaning escaped with a backslash.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in terminal(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '!' | '|'
            | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Every string in a JSON value made safe for a terminal (a tool's
/// output, such as smartctl's, quotes what the disk says of itself).
pub fn json_strings(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) if s.chars().any(is_control) => *s = terminal(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(json_strings),
        serde_json::Value::Object(m) => m.values_mut().for_each(json_strings),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible_escapes() {
        assert_eq!(terminal("ST20000NM007D"), "ST20000NM007D");
        assert_eq!(terminal("a\x1b]0;pwned\x07b\nc\u{9b}d"), "a\\x1b]0;pwned\\x07b\\x0ac\\x9bd");
        assert_eq!(terminal("x\u{202e}gpj.exe"), "x\\u{202e}gpj.exe");
        assert_eq!(terminal("héllo"), "héllo", "other Unicode is kept");
    }

    #[test]
    fn markdown_text_carries_no_html_and_no_markup() {
        let m = markdown("<script>alert(1)</script> *x* | y_z \x1b[31m");
        assert!(!m.contains('<') && !m.contains('>'), "{m}");
        assert!(m.starts_with("&lt;script&gt;alert\\(1\\)&lt;/script&gt;"), "{m}");
        assert!(m.contains("\\*x\\* \\| y\\_z \\\\x1b\\[31m"), "{m}");
    }
}

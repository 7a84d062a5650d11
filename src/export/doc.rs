//! A report laid out once, as blocks (headings, notes, tables, items),
//! rendered alike as text, Markdown and the page: what one shows, the
//! others show. Building the blocks is each report's exporter's work
//! (`text`, `burnin`); this module only renders them and must not know
//! any report's fields.

use std::borrow::Cow;
use std::fmt::Write;

use unicode_width::UnicodeWidthStr;

/// How a cell stands out on the page: a fault, a call not decided, a
/// disk faster than its peers. Carried with the cell by whoever builds
/// it, never read back from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Bad,
    Unsure,
    Fast,
}

/// One cell: its text and its mark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub text: String,
    pub mark: Option<Mark>,
}

impl Cell {
    /// `text` marked `mark` (none: plain).
    pub fn marked(text: impl Into<String>, mark: Option<Mark>) -> Self {
        Self { text: text.into(), mark }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Self { text, mark: None }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Self { text: text.into(), mark: None }
    }
}

/// A table: a header, rows of cells, and which columns hold numbers
/// (aligned right).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grid {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub numbers: std::ops::Range<usize>,
}

impl Grid {
    /// An empty table with this header and no number column.
    pub fn new(header: &[&str]) -> Self {
        Self { header: header.iter().map(|h| h.to_string()).collect(), ..Self::default() }
    }

    /// The columns `cols` hold numbers.
    pub fn numbers(mut self, cols: std::ops::Range<usize>) -> Self {
        self.numbers = cols;
        self
    }

    pub fn row<C: Into<Cell>>(&mut self, cells: Vec<C>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// solnet's layout: no borders, columns two blanks apart (numbers
    /// aligned right, the header too), a dashed line under the header, no
    /// trailing blanks. Laid out here in one pass per row: a fleet's table
    /// of every disk's every run has hundreds of thousands of rows, which a
    /// general table crate took seconds and a cell's worth of allocations
    /// each to lay out.
    pub fn text(&self) -> String {
        // Control characters (a device path's, a model's) as escapes,
        // before the columns are measured.
        let rows: Vec<Vec<Cow<str>>> = (self.rows.iter())
            .map(|r| r.iter().map(|c| crate::escape::terminal_cow(&c.text)).collect())
            .collect();
        let header: Vec<Cow<str>> = self.header.iter().map(|h| Cow::from(h.as_str())).collect();
        let columns = rows.iter().map(Vec::len).chain([header.len()]).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for r in rows.iter().chain([&header]) {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.width());
            }
        }
        let mut out = String::new();
        let ends = |out: &mut String, start: usize| {
            out.truncate(start + out[start..].trim_end().len());
            out.push('\n');
        };
        let line = |out: &mut String, cells: &[Cow<str>]| {
            let start = out.len();
            for (i, w) in widths.iter().enumerate() {
                let text = cells.get(i).map_or("", |c| c.as_ref());
                let gap = std::iter::repeat_n(' ', w.saturating_sub(text.width()));
                if self.numbers.contains(&i) {
                    out.extend(gap);
                    out.push_str(text);
                } else {
                    out.push_str(text);
                    out.extend(gap);
                }
                // The cell's blank, then the one between columns.
                out.push_str("  ");
            }
            ends(out, start);
        };
        line(&mut out, &header);
        let start = out.len();
        for w in &widths {
            out.extend(std::iter::repeat_n('-', w + 1));
            out.push(' ');
        }
        ends(&mut out, start);
        for r in &rows {
            line(&mut out, r);
        }
        out.pop();
        out
    }

    /// A GitHub-flavoured Markdown table (`|` in a cell escaped).
    pub fn markdown(&self) -> String {
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let cells: Vec<String> = cells.map(md_cell).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let rule: Vec<String> = (0..self.header.len())
            .map(|i| if self.numbers.contains(&i) { "---:" } else { "---" }.to_string())
            .collect();
        let mut out = line(&mut self.header.iter().map(String::as_str));
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            out.push_str(&line(&mut r.iter().map(|c| c.text.as_str())));
        }
        out
    }
}

/// A cell's text as literal Markdown (a model string is not markup),
/// blank as `-`.
pub fn md_cell(s: &str) -> String {
    if s.trim().is_empty() { "-".into() } else { crate::escape::markdown(s) }
}

/// How a heading or alert reads: plain, or a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Bad,
}

/// One piece of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// The report's first line: what ran, where, when.
    Title(String),
    /// A line that warns about the whole document (partial, interrupted).
    Alert(String),
    /// A section's first line, after a blank one.
    Heading(String, Tone),
    /// A line under a heading.
    Note(String),
    /// A table after a blank line.
    Table(Grid),
    /// A table right under its heading.
    Tight(Grid),
    /// An indented line of a list.
    Item(String),
    /// A line under the item before it, indented further.
    Sub(String),
    /// The closing lines: a sentence per disk to act on, the verdict.
    Verdict { to_act_on: Vec<String>, message: String },
}

/// The blocks as the text report, control characters (a host name's, a
/// device path's) shown as escapes.
pub fn text(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        let _ = match b {
            Block::Title(s) | Block::Alert(s) | Block::Note(s) => writeln!(out, "{s}"),
            Block::Heading(s, _) => writeln!(out, "\n{s}"),
            Block::Table(g) => writeln!(out, "\n{}", g.text()),
            Block::Tight(g) => writeln!(out, "{}", g.text()),
            Block::Item(s) => writeln!(out, "  {s}"),
            Block::Sub(s) => writeln!(out, "    {s}"),
            Block::Verdict { to_act_on, message } => {
                if !to_act_on.is_empty() {
                    let _ = writeln!(out, "\nDisks to act on:");
                    for a in to_act_on {
                        let _ = writeln!(out, "  {a}");
                    }
                }
                writeln!(out, "\nVerdict: {message}")
            }
        };
    }
    crate::escape::lines(&out)
}

/// The text report coloured for a terminal: the verdict line by its word
/// (green healthy, red flagged, yellow not judged or interrupted) and the
/// marks the tables carry (red --SLOW--, !!ERROR!!, --ROSE--; yellow
/// ??UNSURE??; blue ++FAST++). Applied to what is printed only, never to
/// a file.
pub fn coloured(text: &str) -> String {
    const RED: &str = "\x1b[1;31m";
    const GREEN: &str = "\x1b[1;32m";
    const YELLOW: &str = "\x1b[1;33m";
    const BLUE: &str = "\x1b[1;34m";
    const END: &str = "\x1b[0m";
    let marks = [
        ("--SLOW--", RED),
        ("!!ERROR!!", RED),
        ("--ROSE--", RED),
        ("??UNSURE??", YELLOW),
        ("++FAST++", BLUE),
    ];
    let line = |l: &str| -> String {
        if let Some(v) = l.strip_prefix("Verdict: ") {
            let c = match v {
                _ if v.starts_with("HEALTHY") => GREEN,
                _ if v.starts_with("FLAGGED") => RED,
                _ => YELLOW,
            };
            return format!("{c}{l}{END}");
        }
        let mut l = l.to_string();
        for (m, c) in marks {
            l = l.replace(m, &format!("{c}{m}{END}"));
        }
        l
    };
    let mut out: String = text.lines().map(line).collect::<Vec<_>>().join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The blocks as Markdown (a ticket's description): the verdict first,
/// headings as `###`, tables as tables, items as a list. Text from a disk
/// or host is escaped, never markup.
pub fn markdown(blocks: &[Block]) -> String {
    let mut out = String::new();
    let mut listing = false;
    for b in blocks {
        if let Block::Title(s) = b {
            let _ = writeln!(out, "## {}\n", md_cell(s));
        }
    }
    for b in blocks {
        if let Block::Verdict { to_act_on, message } = b {
            let _ = writeln!(out, "**Verdict: {}**\n", md_cell(message));
            if !to_act_on.is_empty() {
                let _ = writeln!(out, "Disks to act on:\n");
                for a in to_act_on {
                    let _ = writeln!(out, "- {}", md_cell(a));
                }
                out.push('\n');
            }
        }
    }
    for b in blocks {
        let item = matches!(b, Block::Item(_) | Block::Sub(_));
        if listing && !item {
            out.push('\n');
        }
        listing = item;
        let _ = match b {
            Block::Title(_) | Block::Verdict { .. } => Ok(()),
            Block::Alert(s) => writeln!(out, "**{}**\n", md_cell(s)),
            Block::Heading(s, _) => {
                writeln!(out, "### {}\n", md_cell(s.strip_suffix(':').unwrap_or(s)))
            }
            Block::Note(s) => writeln!(out, "{}\n", md_cell(s)),
            Block::Table(g) | Block::Tight(g) => writeln!(out, "{}", g.markdown()),
            Block::Item(s) => writeln!(out, "- {}", md_cell(s)),
            Block::Sub(s) => writeln!(out, "  - {}", md_cell(s)),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_shows_a_hostile_string_as_text() {
        let mut g = Grid::new(&["Disk", "Model"]);
        g.row(vec!["/dev/sda", "<script>alert(1)</script>|x"]);
        let md = markdown(&[Block::Title("t".into()), Block::Table(g)]);
        assert!(md.contains(r"&lt;script&gt;alert\(1\)&lt;/script&gt;\|x"), "{md}");
        assert!(!md.contains("<script"), "{md}");
    }

    #[test]
    fn the_text_puts_a_blank_line_before_headings_and_loose_tables() {
        let g = Grid::new(&["A"]);
        let t = text(&[
            Block::Title("T".into()),
            Block::Heading("H".into(), Tone::Plain),
            Block::Tight(g.clone()),
            Block::Item("i".into()),
            Block::Sub("s".into()),
            Block::Table(g),
        ]);
        assert_eq!(t, "T\n\nH\nA\n--\n  i\n    s\n\nA\n--\n");
    }
}

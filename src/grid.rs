//! A table laid out as text (solnet's columns, in a terminal's width) and
//! as Markdown: rows of cells, each perhaps marked. Every report's tables
//! and the burn-in's plan use it; it must not know any report's fields.

use std::borrow::Cow;

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
    /// The columns a narrow terminal may go without, the first to go
    /// first; the others always show.
    pub optional: Vec<usize>,
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

    /// The columns `cols` may be left out where the table does not fit,
    /// the first left out first.
    pub fn optional(mut self, cols: &[usize]) -> Self {
        self.optional = cols.to_vec();
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
        self.text_in(None).0
    }

    /// The table in `width` columns: its optional columns left out, the
    /// first first, until it fits (or none is left); with the headers of
    /// those left out. No width: every column.
    pub fn text_in(&self, width: Option<usize>) -> (String, Vec<String>) {
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
        let mut shown = vec![true; columns];
        let mut left_out = Vec::new();
        let wide = |shown: &[bool]| -> usize {
            let cols = widths.iter().zip(shown).filter(|(_, s)| **s);
            // The dashed line's: each column's dashes one longer than it.
            cols.map(|(w, _)| w + 2).sum::<usize>().saturating_sub(1)
        };
        // A column holding a marked cell (a finding, a slow disk) stays.
        let marked =
            |c: usize| self.rows.iter().any(|r| r.get(c).is_some_and(|x| x.mark.is_some()));
        for &c in &self.optional {
            if width.is_none_or(|w| wide(&shown) <= w) {
                break;
            }
            if c < columns && shown[c] && !marked(c) {
                shown[c] = false;
                left_out.push(self.header.get(c).cloned().unwrap_or_default());
            }
        }
        let mut out = String::new();
        let ends = |out: &mut String, start: usize| {
            out.truncate(start + out[start..].trim_end().len());
            out.push('\n');
        };
        let line = |out: &mut String, cells: &[Cow<str>]| {
            let start = out.len();
            for (i, w) in widths.iter().enumerate().filter(|(i, _)| shown[*i]) {
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
        for (w, _) in widths.iter().zip(&shown).filter(|(_, s)| **s) {
            out.extend(std::iter::repeat_n('-', w + 1));
            out.push(' ');
        }
        ends(&mut out, start);
        for r in &rows {
            line(&mut out, r);
        }
        out.pop();
        (out, left_out)
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

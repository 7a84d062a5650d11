//! A report laid out once, as blocks (headings, notes, tables, items),
//! rendered alike as text, Markdown and the page: what one shows, the
//! others show. Building the blocks is each report's exporter's work
//! (`text`, `burnin`); this module only renders them and must not know
//! any report's fields.

use std::fmt::Write;

pub use crate::grid::{Cell, Grid, Mark, md_cell};

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
    /// The closing lines: the verdict in a line that fits (its word, how
    /// many disks, the exit status), a sentence per disk to act on, then
    /// the verdict in full.
    Verdict { headline: String, to_act_on: Vec<String>, message: String },
}

/// A verdict's line that fits: its word, how many disks it is about and
/// to act on, and the exit status (`Verdict: FLAGGED: 1 of 6 disk(s) to
/// act on (exit status 1)`).
pub fn headline(run: &crate::rundoc::RunDoc) -> String {
    use crate::outcome::Outcome;
    let disks = run.disks.len();
    let act = run.paths_to_act_on().len();
    let (unsure, unjudged) = (run.unsure.len(), run.not_judged.len());
    let mut said = match run.outcome {
        Outcome::Healthy => format!("{disks} disk(s), nothing to act on"),
        // Flagged for the run's path alone (a shared link): no disk named.
        Outcome::Flagged if act == 0 && !run.links.is_empty() => format!(
            "{} link(s) below their maximum, no one disk of {disks} to act on",
            run.links.len()
        ),
        Outcome::Flagged if act == 0 => format!("a finding of the run, no one disk of {disks}"),
        Outcome::Flagged => format!("{act} of {disks} disk(s) to act on"),
        Outcome::NotJudged if unjudged > 0 => {
            format!("{unjudged} of {disks} disk(s) not judged, nothing found")
        }
        Outcome::NotJudged => format!("nothing to act on of {disks} disk(s)"),
        Outcome::Interrupted if act > 0 => {
            format!("partial results, {act} of {disks} disk(s) to act on so far")
        }
        Outcome::Interrupted => format!("partial results of {disks} disk(s)"),
    };
    if unsure > 0 {
        said.push_str(&format!(", {unsure} not decided"));
    }
    if unjudged > 0 && run.outcome != Outcome::NotJudged {
        said.push_str(&format!(", {unjudged} not judged"));
    }
    format!("Verdict: {}: {said} (exit status {})", run.outcome.word(), run.outcome.exit_code())
}

/// The blocks `-q` says: the verdict's headline and its disks to act on
/// (without the verdict in full).
pub fn quiet(blocks: &[Block]) -> Vec<Block> {
    let verdict = blocks.iter().find_map(|b| match b {
        Block::Verdict { headline, to_act_on, .. } => Some((headline, to_act_on)),
        _ => None,
    });
    let Some((headline, to_act_on)) = verdict else { return Vec::new() };
    let mut out = vec![Block::Note(headline.clone())];
    out.extend(to_act_on.iter().map(|a| Block::Item(a.clone())));
    out
}

/// The blocks as the text report, control characters (a host name's, a
/// device path's) shown as escapes; every line whole (a file, a pipe).
pub fn text(blocks: &[Block]) -> String {
    text_in(blocks, None)
}

/// The blocks as the text report laid out in `width` columns (a
/// terminal's): sentences wrapped at words with a hanging indent, each
/// table in the columns that fit, a line naming those left out.
pub fn text_in(blocks: &[Block], width: Option<usize>) -> String {
    use crate::width::wrap;
    let mut out = String::new();
    let mut left_out: Vec<String> = Vec::new();
    let table = |out: &mut String, left_out: &mut Vec<String>, g: &Grid| {
        let (t, gone) = g.text_in(width);
        let _ = writeln!(out, "{t}");
        for h in gone {
            if !left_out.contains(&h) {
                left_out.push(h);
            }
        }
    };
    for b in blocks {
        let _ = match b {
            Block::Title(s) | Block::Alert(s) | Block::Note(s) => {
                writeln!(out, "{}", wrap(s, width, "", "  "))
            }
            Block::Heading(s, _) => writeln!(out, "\n{}", wrap(s, width, "", "  ")),
            Block::Table(g) => {
                out.push('\n');
                table(&mut out, &mut left_out, g);
                Ok(())
            }
            Block::Tight(g) => {
                table(&mut out, &mut left_out, g);
                Ok(())
            }
            Block::Item(s) => writeln!(out, "{}", wrap(s, width, "  ", "    ")),
            Block::Sub(s) => writeln!(out, "{}", wrap(s, width, "    ", "      ")),
            Block::Verdict { headline, to_act_on, message } => {
                if !left_out.is_empty() {
                    let cols = left_out.join(", ");
                    let note = format!(
                        "(Columns left out at this width: {cols}. A wider terminal, --json and --out's page have them.)"
                    );
                    let _ = writeln!(out, "\n{}", wrap(&note, width, "", " "));
                }
                let _ = writeln!(out, "\n{}", wrap(headline, width, "", "  "));
                for a in to_act_on {
                    let _ = writeln!(out, "{}", wrap(a, width, "  ", "      "));
                }
                // The verdict in full, its word said by the headline.
                let word = headline.strip_prefix("Verdict: ").and_then(|h| h.split(": ").next());
                let rest = word.and_then(|w| message.strip_prefix(&format!("{w}: ")));
                writeln!(
                    out,
                    "{}",
                    wrap(&format!("Details: {}", rest.unwrap_or(message)), width, "", "  ")
                )
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
        if let Block::Verdict { to_act_on, message, .. } = b {
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
    use unicode_width::UnicodeWidthStr;

    #[test]
    fn markdown_shows_a_hostile_string_as_text() {
        let mut g = Grid::new(&["Disk", "Model"]);
        g.row(vec!["/dev/sda", "<script>alert(1)</script>|x"]);
        let md = markdown(&[Block::Title("t".into()), Block::Table(g)]);
        assert!(md.contains(r"&lt;script&gt;alert\(1\)&lt;/script&gt;\|x"), "{md}");
        assert!(!md.contains("<script"), "{md}");
    }

    #[test]
    fn a_narrow_table_leaves_out_its_optional_columns_first_first_but_never_a_marked_one() {
        let mut g = Grid::new(&["Disk", "Model", "p50 ms", "p99 ms", "Flag"])
            .numbers(2..4)
            .optional(&[2, 1, 3]);
        g.row(vec![
            Cell::from("/dev/sda"),
            Cell::marked("A VERY LONG MODEL NAME", Some(Mark::Bad)),
            Cell::from("0.5"),
            Cell::from("12.5"),
            Cell::marked("--SLOW--", Some(Mark::Bad)),
        ]);
        let (all, none) = g.text_in(None);
        assert!(none.is_empty() && all.contains("p50 ms"), "{all}");
        // p50 goes first; the model is marked, so p99 goes next.
        let (t, gone) = g.text_in(Some(45));
        assert_eq!(gone, ["p50 ms", "p99 ms"], "{t}");
        assert!(t.lines().all(|l| l.width() <= 45) && t.contains("--SLOW--"), "{t}");
        assert_eq!(g.text_in(Some(55)).1, ["p50 ms"]);
        // The report says which columns were left out, at the end.
        let blocks = [
            Block::Table(g),
            Block::Verdict {
                headline: "Verdict: FLAGGED: x".into(),
                to_act_on: vec![],
                message: "FLAGGED: y".into(),
            },
        ];
        let t = text_in(&blocks, Some(45));
        assert!(
            t.replace("\n ", " ").contains("(Columns left out at this width: p50 ms, p99 ms."),
            "{t}"
        );
        assert!(t.ends_with("Verdict: FLAGGED: x\nDetails: y\n"), "{t}");
        assert!(!text(&blocks).contains("left out"));
    }

    #[test]
    fn the_headline_counts_the_disks_as_the_run_document_says_them() {
        use crate::outcome::Outcome;
        use crate::rundoc::{ActOn, RunDoc, Undecided};
        let disks: Vec<String> = (0..6).map(|i| format!("/dev/sd{i}")).collect();
        let act = |p: &str| ActOn {
            path: p.into(),
            action: "return".into(),
            sentence: "s".into(),
            findings: Vec::new(),
        };
        let mut run = RunDoc {
            outcome: Outcome::Flagged,
            to_act_on: vec![act("/dev/sd1"), act("/dev/sd1"), act("/dev/sd2")],
            links: Vec::new(),
            not_judged: Vec::new(),
            unsure: Vec::new(),
            disks,
            cut: None,
            notes: Vec::new(),
            message: "FLAGGED: m".into(),
        };
        assert_eq!(headline(&run), "Verdict: FLAGGED: 2 of 6 disk(s) to act on (exit status 1)");
        // Flagged for a shared link alone: no disk claimed.
        run.to_act_on.clear();
        run.links.push(("a link".into(), vec![]));
        assert_eq!(
            headline(&run),
            "Verdict: FLAGGED: 1 link(s) below their maximum, no one disk of 6 to act on (exit status 1)"
        );
        // Not judged: never "nothing found" for a disk left undecided.
        run.outcome = Outcome::NotJudged;
        run.links.clear();
        run.unsure.push(Undecided { path: "/dev/sd3".into(), why: "w".into() });
        assert_eq!(
            headline(&run),
            "Verdict: NOT JUDGED: nothing to act on of 6 disk(s), 1 not decided (exit status 3)"
        );
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

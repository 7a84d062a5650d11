//! The live table on a terminal, the burn-in's and the check's: a summary
//! line (the burn-in's disks done of all, the MB/s of all together, the
//! phase, the ETA) over a cell per disk, in as many columns as the window
//! needs so that nothing wraps or scrolls away (24 disks at 80x24: two
//! columns of 12), drawn in place (`tell::redraw`; a line said meanwhile
//! stands above it). The dated lines go to the run's log meanwhile.
//!
//! It must not measure or judge: it lays out what it is handed.

use crate::escape::terminal;

/// One disk's cell.
pub struct Cell {
    /// The disk as given.
    pub name: String,
    /// Its figures, after the name (" p1 write  45%   123 MB/s").
    pub figures: String,
}

/// The narrowest a cell may be: a short name and its figures.
const MIN_CELL: usize = 30;
/// Between two columns.
const GAP: &str = "  ";

/// The table for a window of `rows` x `cols`: the summary, then the
/// cells, column by column, every line shorter than the window is wide
/// (a line as wide as it wraps on some terminals) and one row left free
/// for the cursor. Where even the narrowest columns cannot hold every
/// disk, the last cell says how many more there are.
pub fn render(summary: &str, cells: &[Cell], (rows, cols): (usize, usize)) -> Vec<String> {
    let width = cols.saturating_sub(1).max(MIN_CELL);
    let mut out = vec![fit(summary, width)];
    let height = rows.saturating_sub(2).max(1);
    let needed = cells.len().div_ceil(height).max(1);
    let fitting = ((width + GAP.len()) / (MIN_CELL + GAP.len())).max(1);
    let columns = needed.min(fitting);
    let cell_width = (width + GAP.len()) / columns - GAP.len();
    let shown = cells.len().min(columns * height);
    let per_column = shown.div_ceil(columns).max(1);
    let mut texts: Vec<String> = cells[..shown].iter().map(|c| cell(c, cell_width)).collect();
    if shown < cells.len() {
        let more = cells.len() - shown + 1;
        texts[shown - 1] = fit(&format!("+{more} more disks (the log has every one)"), cell_width);
    }
    for row in 0..per_column {
        let line: Vec<String> = (0..columns)
            .filter_map(|col| texts.get(col * per_column + row))
            .map(|t| format!("{t:<cell_width$}"))
            .collect();
        out.push(line.join(GAP).trim_end().to_string());
    }
    out
}

/// One cell, `width` characters at most: the end of the disk's name (its
/// start is the same for all: /dev/disk/by-id/ata-...) and its figures.
fn cell(c: &Cell, width: usize) -> String {
    let figures = &c.figures;
    let name = terminal(&c.name);
    let room = width.saturating_sub(figures.chars().count()).max(4);
    let n = name.chars().count();
    let name = if n <= room {
        name
    } else {
        let tail: String = name.chars().skip(n - (room - 1)).collect();
        format!("…{tail}")
    };
    fit(&format!("{name:<room$}{figures}"), width)
}

/// `text` cut to `width` characters.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(n: usize, name: impl Fn(usize) -> String) -> Vec<Cell> {
        (0..n)
            .map(|i| Cell { name: name(i), figures: " p1 write   45%   123 MB/s".into() })
            .collect()
    }

    #[test]
    fn twenty_four_disks_fit_eighty_by_twenty_four_in_two_columns() {
        let c = cells(24, |i| format!("/dev/disk/by-id/ata-WDC_WD80EFZX-68UW8N0_VK0A{i:04}"));
        let t = render("arrayburn burnin: 0/24 disks done", &c, (24, 80));
        assert_eq!(t.len(), 13, "{t:#?}");
        assert!(t.iter().all(|l| l.chars().count() < 80), "{t:#?}");
        // Every disk shown by the end of its name, the part that differs.
        for i in 0..24 {
            assert!(t.iter().any(|l| l.contains(&format!("VK0A{i:04} "))), "{i}: {t:#?}");
        }
    }

    #[test]
    fn a_window_too_small_for_every_disk_says_how_many_more() {
        let c = cells(100, |i| format!("/dev/sd{i}"));
        let t = render("summary", &c, (10, 40));
        assert!(t.len() <= 9 && t.iter().all(|l| l.chars().count() < 40), "{t:#?}");
        let shown = t.iter().filter(|l| l.contains("/dev/sd")).count();
        assert!(t.last().unwrap().contains(&format!("+{} more disks", 100 - shown)), "{t:#?}");
    }
}

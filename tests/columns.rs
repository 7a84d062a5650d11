//! Readable where admins read it: on a real terminal (tmux) of 80x24
//! every line of the lifecycle's output fits, or is wrapped at words by
//! arrayburn itself; at 120x40 more columns show; a pipe keeps its full
//! lines.

use crate::unattended::Tmux;
use crate::util::*;

const MIB: u64 = 1 << 20;

/// What `shell` printed on a `cols`x`rows` tmux terminal once it ended,
/// the lines the terminal wrapped joined again (`capture-pane -J`): each
/// line as arrayburn wrote it.
pub(crate) fn on_terminal(cols: u32, rows: u32, shell: &str, limit: std::time::Duration) -> String {
    let tmux = Tmux::new();
    let line = format!("{shell}; echo EXITED $?; sleep 600");
    let (c, r) = (cols.to_string(), rows.to_string());
    tmux.run(&["new-session", "-d", "-x", &c, "-y", &r, "-s", "w", &line]);
    tmux.run(&["set-option", "-t", "w", "history-limit", "20000"]);
    let mut pane = String::new();
    let ended = wait_for(limit, || {
        pane = tmux.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "w"]);
        pane.contains("EXITED ")
    });
    assert!(ended, "{shell} did not end on the terminal: {pane}");
    pane
}

/// The lines of `pane` wider than `cols`.
pub(crate) fn too_wide(pane: &str, cols: usize) -> Vec<&str> {
    pane.lines().filter(|l| unicode_width::UnicodeWidthStr::width(*l) > cols).collect()
}

#[test]
fn a_newcomers_lifecycle_fits_80_columns_and_shows_more_at_120() {
    need_root!();
    if !tools_here(&["tmux"], "tmux") {
        return;
    }
    let _l = device_lock();
    let d = disks(3, 32 * MIB);
    let dir = tempdir();
    let devs: Vec<&str> = d.iter().map(|x| x.dev.as_str()).collect();
    let devs = devs.join(" ");
    let run = |tag: &str| {
        let (json, state) = (dir.path().join(format!("{tag}.json")), dir.path().join(tag));
        format!(
            "B={b}; $B list {devs}; $B inspect {devs}; $B check -s 1.5s --json {json} {devs}; \
             $B burnin --destructive --yes --smart off --state {state} {devs}; $B report {json}",
            b = bin(),
            json = json.display(),
            state = state.display(),
        )
    };
    let narrow = on_terminal(80, 24, &run("n"), RUN);
    assert_eq!(too_wide(&narrow, 80), Vec::<&str>::new(), "{narrow}");
    // Each command said its verdict, its tables headed.
    assert!(narrow.matches("Verdict: ").count() >= 4, "{narrow}");
    assert!(narrow.contains("Disk ") && narrow.contains("1 pass"), "the plan's headings: {narrow}");
    assert!(narrow.contains("Columns left out at this width"), "{narrow}");
    let wide = on_terminal(120, 40, &run("w"), RUN);
    assert_eq!(too_wide(&wide, 120), Vec::<&str>::new(), "{wide}");
    // The parallel pass's latency columns: at 120, not at 80.
    let latency =
        |pane: &str| pane.lines().any(|l| l.contains("Parall MB/sec") && l.contains("p50 ms"));
    assert!(latency(&wide) && !latency(&narrow), "{wide}\n{narrow}");
}

#[test]
fn the_demo_at_80_columns_has_no_longer_line_and_a_pipe_keeps_whole_lines() {
    need_root!();
    if !tools_here(&["tmux"], "tmux") {
        return;
    }
    let _l = device_lock();
    let demo = format!("{} demo --disks 4 --size 64m -s 1.5s", bin());
    let pane = on_terminal(80, 24, &demo, RUN);
    assert!(pane.contains("EXITED 1"), "the demo finds its slow disk: {pane}");
    assert_eq!(too_wide(&pane, 80), Vec::<&str>::new(), "{pane}");
    // Its verdict first in a line that fits, then the disk, then why.
    let verdict = pane.split("\nVerdict: ").nth(1).unwrap_or_default();
    assert!(verdict.starts_with("FLAGGED: 1 of 4 disk(s) to act on (exit status 1)"), "{pane}");
    // A pipe: whole lines, as written to a file.
    let out = std::process::Command::new(bin())
        .args(["demo", "--disks", "4", "--size", "64m", "-s", "1.5s"])
        .env("COLUMNS", "80")
        .output_within(RUN);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!too_wide(&text, 80).is_empty(), "a pipe's lines are not wrapped: {text}");
    assert!(text.lines().any(|l| l.starts_with("Details: ") && l.len() > 80), "{text}");
}

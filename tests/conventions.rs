//! What admins expect of a command they run on many hosts: `-q` says the
//! verdict line alone, `-v` more, colour only where it is wanted
//! (`--color`, NO_COLOR, a real terminal under tmux), the same short flags
//! everywhere, and milliseconds written with their unit.

use std::path::Path;

use std::process::Command;

use crate::unattended::Tmux;
use crate::util::*;

const MIB: u64 = 1 << 20;

/// A recorded check with a slow disk (the fleet report over it is
/// flagged).
fn recorded() -> String {
    let at = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/report/demo/report.json");
    at.to_str().unwrap().to_string()
}

#[test]
fn quiet_says_the_verdict_line_alone_and_colour_is_only_where_wanted() {
    let file = recorded();
    let dir = tempdir();
    let json = dir.path().join("fleet.json");
    let out =
        arrayburn(&["report", "-q", &file, "-j", json.to_str().unwrap()]).output_within(MINUTE);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The headline, then a line per disk to act on, indented.
    let mut lines = stdout.lines();
    let headline = lines.next().unwrap_or_default();
    assert!(
        headline.starts_with("Verdict: FLAGGED: ") && headline.ends_with("(exit status 1)"),
        "{stdout}"
    );
    assert!(lines.all(|l| l.starts_with("  ")), "{stdout}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(json.is_file(), "-j wrote the JSON as --json does");
    // Not a terminal: no colour, unless asked for.
    let plain = arrayburn(&["report", &file]).output_within(MINUTE);
    assert!(!plain.stdout.contains(&0x1b), "{}", String::from_utf8_lossy(&plain.stdout));
    let always = arrayburn(&["report", "--color", "always", &file]).output_within(MINUTE);
    let text = String::from_utf8_lossy(&always.stdout);
    assert!(text.contains("\x1b[1;31mVerdict: FLAGGED"), "{text:?}");
    let never =
        arrayburn(&["report", "--color", "never", &file]).env("NO_COLOR", "").output_within(MINUTE);
    assert!(!never.stdout.contains(&0x1b));
    // -q and -v together: one line naming both, exit 2.
    let both = arrayburn(&["report", "-q", "-v", &file]).output_within(MINUTE);
    let err = String::from_utf8_lossy(&both.stderr);
    assert_eq!(both.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--quiet") && err.contains("--verbose"), "{err}");
}

#[test]
fn on_a_terminal_the_verdict_is_coloured_unless_no_color_is_set() {
    if !tools_here(&["tmux"], "tmux") {
        return;
    }
    let file = recorded();
    let tmux = Tmux::new();
    for (name, env) in [("plain", ""), ("nocolor", "NO_COLOR=1 ")] {
        let line = format!("{env}{} report {file}; echo EXITED $?; sleep 600", bin());
        tmux.run(&["new-session", "-d", "-x", "200", "-y", "50", "-s", name, &line]);
    }
    // capture-pane -e keeps the escapes the program wrote.
    let mut panes = (String::new(), String::new());
    let ended = wait_for(MINUTE, || {
        panes.0 = tmux.run(&["capture-pane", "-p", "-e", "-t", "plain"]);
        panes.1 = tmux.run(&["capture-pane", "-p", "-e", "-t", "nocolor"]);
        panes.0.contains("EXITED") && panes.1.contains("EXITED")
    });
    assert!(ended, "{panes:?}");
    let verdict =
        |pane: &str| pane.lines().find(|l| l.contains("Verdict: ")).unwrap_or("").to_string();
    assert!(verdict(&panes.0).contains('\x1b'), "coloured on a terminal: {:?}", verdict(&panes.0));
    assert!(!verdict(&panes.1).contains('\x1b'), "NO_COLOR: {:?}", verdict(&panes.1));
}

#[test]
fn a_check_with_short_flags_quiet_or_verbose_writes_the_same_files() {
    need_root!();
    let _l = device_lock();
    let d = disks(3, 32 * MIB);
    let calm = Throttle::calm(&d);
    let dir = tempdir();
    let (json, out_dir) = (dir.path().join("r.json"), dir.path().join("bundle"));
    let mut args = vec!["check", "-q", "-s", "1.5s", "-b", "1m", "--slow-read-ms", "2s"];
    args.extend(["-j", json.to_str().unwrap(), "-o", out_dir.to_str().unwrap()]);
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let out = calm.command(&args).output_within(RUN);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{stderr}");
    // The headline, then a line per disk to act on (indented).
    assert!(stdout.starts_with("Verdict: "), "{stdout}");
    assert!(stdout.lines().skip(1).all(|l| l.starts_with("  ")), "{stdout}");
    assert!(stderr.is_empty(), "no progress, no notes: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["options"]["slow_read_ms"], 2000.0, "2s is 2000 ms");
    assert_eq!(v["options"]["block_bytes"], 1 << 20);
    assert!(out_dir.join("report.html").is_file() && out_dir.join("run.log").is_file());
    // The log keeps every line the run did not say.
    let log = std::fs::read_to_string(out_dir.join("run.log")).unwrap();
    assert!(log.contains("Serial pass"), "{log}");
    // -v: each serial slice's MB/s in the report.
    let mut args = vec!["check", "-v", "-s", "3s", "--slices", "3", "--progress", "none"];
    args.extend(d.iter().map(|x| x.dev.as_str()));
    let out = calm.command(&args).output_within(RUN);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("each slice (MB/s over its window)"), "{stdout}");
    let rows = stdout.lines().filter(|l| d.iter().any(|x| l.starts_with(&x.dev))).count();
    assert!(rows >= 3 * 3 + 3 * 2, "a row per disk and slice, besides the tables: {stdout}");
    // The slices' own table: a row per disk and slice (3 of 1 s each).
    let table = stdout.split("each slice (MB/s over its window)").nth(1).unwrap_or("");
    let table = table.split("\n\n").next().unwrap_or("");
    for x in &d {
        let own = table.lines().filter(|l| l.starts_with(&format!("{} ", x.dev))).count();
        assert_eq!(own, 3, "{} read in 3 slices: {table}", x.dev);
    }
}

#[test]
fn every_help_and_man_page_says_its_exit_status_examples_environment_and_files() {
    // iozone's --help is iozone's own (-h): its page says the rest.
    for sub in ["check", "burnin", "report", "list", "demo", "completions", "man"] {
        let out = arrayburn(&[sub, "--help"]).output_within(MINUTE);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sub} --help");
        assert!(
            text.contains("Exit status:\n") && text.contains("Examples:\n  arrayburn "),
            "{sub}:\n{text}"
        );
    }
    if !tools_here(&["man", "groff"], "man-db and groff-base") {
        return;
    }
    let prefix = tempdir();
    let out = arrayburn(&["man", "--install", "--prefix", prefix.path().to_str().unwrap()])
        .output_within(MINUTE);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let man1 = prefix.path().join("share/man/man1");
    let pages = ["", "check", "burnin", "report", "list", "demo", "iozone", "completions", "man"];
    for sub in pages {
        let file = if sub.is_empty() { "arrayburn.1".into() } else { format!("arrayburn-{sub}.1") };
        let out = Command::new("man")
            .arg("-l")
            .arg(man1.join(&file))
            .env("MANWIDTH", "100")
            .output_within(MINUTE);
        let text = plain(&String::from_utf8_lossy(&out.stdout));
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let headings: Vec<&str> =
            text.lines().filter(|l| !l.starts_with(' ') && !l.is_empty()).collect();
        for h in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "EXIT STATUS",
            "EXAMPLES",
            "ENVIRONMENT",
            "FILES",
            "SEE ALSO",
        ] {
            assert!(headings.contains(&h), "{file} has no {h}: {headings:?}");
        }
        // Its first words (man spreads the line to the margin).
        let synopsis = text.split("SYNOPSIS").nth(1).unwrap_or("");
        let words: Vec<&str> = synopsis.split_whitespace().take(2).collect();
        let want = if sub.is_empty() { ["arrayburn", "["] } else { ["arrayburn", sub] };
        assert!(words[0] == want[0] && words[1].starts_with(want[1]), "{file}:\n{text}");
        let description =
            text.split("DESCRIPTION").nth(1).unwrap_or("").split("\n\n").next().unwrap_or("");
        assert!(
            description.split_whitespace().count() >= 25,
            "{file}: a real description:\n{text}"
        );
        assert!(text.contains("ARRAYBURN_NOTIFY") && text.contains("/var/lib/arrayburn/burnin"));
        assert!(text.contains("smartctl(8)") && text.contains("badblocks(8)"), "{file}");
    }
    // No page for clap's own `help`, and none listed.
    let top = std::fs::read_to_string(man1.join("arrayburn.1")).unwrap();
    assert!(!top.contains("arrayburn\\-help"), "{top}");
    let help = arrayburn(&["man", "help"]).output_within(MINUTE);
    assert_eq!(help.status.code(), Some(2));
    // The completions where the shells look; bash's parses.
    let bash = prefix.path().join("share/bash-completion/completions/arrayburn");
    assert!(prefix.path().join("share/zsh/site-functions/_arrayburn").is_file());
    assert!(prefix.path().join("share/fish/vendor_completions.d/arrayburn.fish").is_file());
    let out = Command::new("bash").arg("-n").arg(&bash).output_within(MINUTE);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// man's output without its overstrikes (`N\x08N` is a bold N).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if chars.peek() == Some(&'\u{8}') {
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

#[test]
fn the_readmes_table_of_smartctl_releases_is_the_one_arrayburn_asks_by() {
    use arrayburn::device::smartctl::{FEATURES, Version};
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for (_, since, what) in FEATURES {
        let cells: Vec<&str> =
            (2..=5).map(|minor| if Version(7, minor) >= since { "yes" } else { "no" }).collect();
        let row = format!("| {what} | {} |", cells.join(" | "));
        assert!(readme.contains(&row), "README's smartctl table lacks the row {row}");
    }
}

/// `scripts/structure.py` over a copy of the sources (README.md's floors
/// beside it) with `change` made to it: its exit status and what it said.
fn structure_of(change: impl FnOnce(&Path)) -> (bool, String) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = tempdir();
    let cp = Command::new("cp").arg("-r").arg(here.join("src")).arg(copy.path()).output_within(RUN);
    assert!(cp.status.success());
    std::fs::copy(here.join("README.md"), copy.path().join("README.md")).unwrap();
    change(&copy.path().join("src"));
    let out = Command::new("python3")
        .arg(here.join("scripts/structure.py"))
        .arg(copy.path().join("src"))
        .output_within(RUN);
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), said)
}

/// Appends `line` to the source file `file` under `src`.
fn append(src: &Path, file: &str, line: &str) {
    let path = src.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\n{line}\n")).unwrap();
}

#[test]
fn every_import_runs_down_and_the_ratchet_names_one_that_does_not() {
    let (ok, said) = structure_of(|_| {});
    assert!(ok, "the layering has faults:\n{said}");
    assert!(said.contains("0 running up or sideways, 0 circles between files, 0 cycles"), "{said}");
    // An import that runs up: the rules reaching for the report.
    let (ok, said) = structure_of(|src| {
        append(src, "judge/rated.rs", "pub fn up() { let _ = crate::report::Report::default; }")
    });
    assert!(!ok, "an import from judge to report passed:\n{said}");
    assert!(
        said.contains("judge (floor 6) imports report::Report (floor 8): an import that runs up"),
        "{said}"
    );
    assert!(said.contains("/judge/rated.rs:"), "the file is not named:\n{said}");
    // A circle between two files of one folder, each using the other.
    let (ok, said) = structure_of(|src| {
        append(src, "judge/smr.rs", "pub fn a() { super::rated::b(); }");
        append(src, "judge/rated.rs", "pub fn b() { super::smr::a(); }");
    });
    assert!(!ok, "a circle passed:\n{said}");
    assert!(said.contains("a circle between 2 files"), "{said}");
    assert!(said.contains("/judge/smr.rs:") && said.contains("/judge/rated.rs:"), "{said}");
    // A new module on no floor.
    let (ok, said) = structure_of(|src| {
        std::fs::write(src.join("unplaced.rs"), "pub fn x() {}\n").unwrap();
    });
    assert!(!ok, "a module on no floor passed:\n{said}");
    assert!(said.contains("module `unplaced` is on no floor"), "{said}");
}

#[test]
fn the_ratchets_hold_commands_files_and_long_functions_where_they_stand() {
    // A command grown past 150 lines (glue only: its steps belong in run/).
    let (ok, said) = structure_of(|src| append(src, "commands/check.rs", &"// glue\n".repeat(80)));
    assert!(!ok, "a long command passed:\n{said}");
    assert!(
        said.contains("commands/check.rs: ") && said.contains("over the 150 a command may have"),
        "{said}"
    );
    // A file past 1,100 lines.
    let (ok, said) = structure_of(|src| append(src, "units.rs", &"// more\n".repeat(1200)));
    assert!(!ok, "a long file passed:\n{said}");
    assert!(said.contains("units.rs: ") && said.contains("over 1100: split it"), "{said}");
    // Functions over 50 lines added (enough that the figure rises past where
    // it was brought down however far below it the tree stands), in files
    // that stay under 1,100 lines.
    let long = |n: usize| format!("pub fn long{n}() {{\n{}}}\n", "    let _ = 1;\n".repeat(60));
    let (ok, said) = structure_of(|src| {
        for (i, file) in ["units.rs", "escape.rs", "host.rs"].iter().enumerate() {
            append(src, file, &(0..8).map(|k| long(i * 8 + k)).collect::<String>());
        }
    });
    assert!(!ok, "a long function passed:\n{said}");
    assert!(
        said.contains("functions over 50 lines: ") && said.contains("split the longest"),
        "{said}"
    );
}

/// Every long flag two or more commands share, as clap declares it: its
/// kind (a switch or a value), its values, its value's name, its short
/// form and its help heading, for each command that has it. A name means
/// one thing everywhere; a hidden flag is an old spelling kept for a
/// release (check's `--passes`, now `--mode`). Defaults may differ (the
/// demo's sample is short).
#[test]
fn a_flag_two_commands_share_means_the_same_in_both() {
    use clap::CommandFactory;
    let cli = arrayburn::cli::Cli::command();
    let mut seen: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    for sub in cli.get_subcommands() {
        for a in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = a.get_long() else { continue };
            let values: Vec<String> =
                a.get_possible_values().iter().map(|p| p.get_name().to_string()).collect();
            let said = format!(
                "{:?} values {values:?} named {:?} short {:?} under {:?}",
                a.get_action(),
                a.get_value_names(),
                a.get_short(),
                a.get_help_heading()
            );
            seen.entry(long.to_string()).or_default().push((sub.get_name().to_string(), said));
        }
    }
    let shared: Vec<&String> = seen.iter().filter(|(_, u)| u.len() > 1).map(|(l, _)| l).collect();
    // The flags shared today: a new shared flag is added here once it
    // means the same everywhere.
    assert_eq!(
        shared,
        [
            "block",
            "color",
            "csv",
            "destructive",
            "engine",
            "ignore-lock",
            "io-timeout",
            "json",
            "locate",
            "metrics",
            "notify",
            "notify-timeout",
            "ocp-diag",
            "out",
            "progress",
            "progress-interval",
            "queue-depth",
            "quiet",
            "record",
            "sample",
            "slow-pct",
            "smr-idle",
            "smr-probe",
            "stall-ms",
            "verbose",
            "wipe-signatures",
            "yes",
        ],
        "{seen:#?}"
    );
    let differ: Vec<String> = (seen.iter())
        .filter(|(_, uses)| uses.iter().any(|u| u.1 != uses[0].1))
        .map(|(long, uses)| format!("--{long}: {uses:?}"))
        .collect();
    assert!(differ.is_empty(), "one name, two meanings:\n{}", differ.join("\n"));
    // The old spellings still work, each with a one-line note naming the
    // new one (refused here for a missing disk, after the note).
    for (args, note) in [
        (&["check", "--passes", "serial", "/dev/arrayburn-none"][..], "is now --mode"),
        (&["check", "--progress", "bars", "/dev/arrayburn-none"][..], "is now --progress table"),
        (
            &["burnin", "--destructive", "--yes", "--slow-pct", "0", "/dev/arrayburn-none"][..],
            "--slow-pct 0 is now --not-against-peers",
        ),
    ] {
        let out = arrayburn(args).output_within(MINUTE);
        let err = String::from_utf8_lossy(&out.stderr);
        let notes: Vec<&str> = err.lines().filter(|l| l.contains("note:")).collect();
        assert!(notes.len() == 1 && notes[0].contains(note), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

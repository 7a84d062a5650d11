//! `arrayburn man [SUBCOMMAND]`: the man page, from the same definitions
//! as `--help` (the options: clap's; the description, exit status,
//! examples, environment, files: `help`). `--install` writes every page
//! and the shell completions where the system looks for them.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};
use crate::help::{self, Page};
use crate::outcome::Outcome;

/// Prints arrayburn's man page or a subcommand's (`arrayburn-check(1)`),
/// or installs them all.
pub fn run(args: &ManArgs) -> anyhow::Result<Outcome> {
    if args.install {
        return install(&args.prefix);
    }
    let page = render(args.subcommand.as_deref().unwrap_or(""))?;
    std::io::stdout().lock().write_all(&page)?;
    Ok(Outcome::Healthy)
}

/// The subcommands with a page (clap's own `help` has none).
fn names() -> Vec<&'static str> {
    help::PAGES.iter().map(|p| p.name).filter(|n| !n.is_empty()).collect()
}

/// The page of `name` (`""`: arrayburn's) in roff.
fn render(name: &str) -> anyhow::Result<Vec<u8>> {
    let top = Cli::command();
    let Some(doc) = help::page(name) else {
        anyhow::bail!("man {name}: no such subcommand; give one of {}", names().join(", "));
    };
    let cmd = match name {
        "" => top,
        _ => {
            let sub = top.find_subcommand(name).context("a subcommand with a page")?.clone();
            sub.name(format!("arrayburn-{name}"))
                .bin_name(format!("arrayburn {name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let has_options = cmd.get_arguments().any(|a| !a.is_hide_set());
    let man = clap_mangen::Man::new(cmd);
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    page.extend_from_slice(description(doc).as_bytes());
    if has_options {
        man.render_options_section(&mut page)?;
    }
    if name.is_empty() {
        page.extend_from_slice(commands().as_bytes());
    }
    page.extend_from_slice(sections(doc).as_bytes());
    man.render_version_section(&mut page)?;
    Ok(page)
}

/// Text as roff takes it: a backslash, a leading dot or quote, and a
/// hyphen (a minus in options) escaped.
fn esc(t: &str) -> String {
    let t = t.replace('\\', "\\\\").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') { format!("\\&{t}") } else { t }
}

/// DESCRIPTION: the command's paragraphs.
fn description(p: &Page) -> String {
    let paras: Vec<String> = p.description.iter().map(|d| esc(d)).collect();
    format!(".SH DESCRIPTION\n{}\n", paras.join("\n.PP\n"))
}

/// COMMANDS (arrayburn's page): each subcommand's page, named.
fn commands() -> String {
    let top = Cli::command();
    let each: String = (names().into_iter())
        .filter_map(|n| Some((n, top.find_subcommand(n)?.get_about()?.to_string())))
        .map(|(n, about)| {
            format!(".TP\n\\fBarrayburn {n}\\fR \\- arrayburn\\-{n}(1)\n{}\n", esc(&about))
        })
        .collect();
    format!(".SH COMMANDS\n{each}")
}

/// EXIT STATUS, EXAMPLES, ENVIRONMENT, FILES and SEE ALSO.
fn sections(p: &Page) -> String {
    let table = |rows: &mut dyn Iterator<Item = (String, String)>| -> String {
        rows.map(|(k, v)| format!(".TP\n\\fB{}\\fR\n{}\n", esc(&k), esc(&v))).collect()
    };
    let codes = table(&mut p.exit.iter().map(|(c, m)| (c.to_string(), m.to_string())));
    let examples: String = p.examples.iter().map(|e| format!("{}\n", esc(e))).collect();
    let env = table(&mut help::ENVIRONMENT.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let files = table(&mut help::FILES.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut see: Vec<String> = vec![help::SEE_ALSO.to_string()];
    see.extend(names().into_iter().filter(|n| *n != p.name).map(|n| format!("arrayburn-{n}(1)")));
    if !p.name.is_empty() {
        see.insert(0, "arrayburn(1)".into());
    }
    format!(
        ".SH \"EXIT STATUS\"\n{codes}.SH EXAMPLES\n.nf\n{examples}.fi\n.SH ENVIRONMENT\n{env}.SH FILES\n{files}.SH \"SEE ALSO\"\n{}\n",
        esc(&see.join(", "))
    )
}

/// Every page into PREFIX/share/man/man1, and bash's, zsh's and fish's
/// completions where those shells look under PREFIX; each directory made.
fn install(prefix: &Path) -> anyhow::Result<Outcome> {
    let man1 = prefix.join("share/man/man1");
    let write = |dir: &Path, file: &str, bytes: &[u8]| -> anyhow::Result<()> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot make it", dir.display()))?;
        let at = dir.join(file);
        std::fs::write(&at, bytes).with_context(|| format!("{}: cannot write it", at.display()))?;
        tell!("arrayburn man: {}", at.display());
        Ok(())
    };
    write(&man1, "arrayburn.1", &render("")?)?;
    for n in names() {
        write(&man1, &format!("arrayburn-{n}.1"), &render(n)?)?;
    }
    use clap_complete::Shell;
    let shells = [
        (Shell::Bash, "share/bash-completion/completions", "arrayburn"),
        (Shell::Zsh, "share/zsh/site-functions", "_arrayburn"),
        (Shell::Fish, "share/fish/vendor_completions.d", "arrayburn.fish"),
    ];
    for (shell, dir, file) in shells {
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "arrayburn", &mut script);
        write(&prefix.join(dir), file, &script)?;
    }
    Ok(Outcome::Healthy)
}

//! `arrayburn man [SUBCOMMAND]`: the man page, from the same definitions
//! as `--help`.

use std::io::Write;

use clap::CommandFactory;

use super::Outcome;
use crate::cli::Cli;

/// Prints arrayburn's man page, or a subcommand's (`arrayburn-check(1)`).
pub fn run(subcommand: Option<&str>) -> anyhow::Result<Outcome> {
    let top = Cli::command();
    let cmd = match subcommand {
        None => top,
        Some(name) => {
            let names: Vec<String> =
                top.get_subcommands().map(|c| c.get_name().to_string()).collect();
            let Some(sub) = top.find_subcommand(name) else {
                anyhow::bail!("man {name}: no such subcommand; give one of {}", names.join(", "));
            };
            sub.clone().name(format!("arrayburn-{name}")).version(env!("CARGO_PKG_VERSION"))
        }
    };
    let has_options = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subcommands = cmd.has_subcommands();
    let man = clap_mangen::Man::new(cmd);
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    if has_options {
        man.render_options_section(&mut page)?;
    }
    if has_subcommands {
        man.render_subcommands_section(&mut page)?;
    }
    page.extend_from_slice(exit_and_examples_roff().as_bytes());
    man.render_version_section(&mut page)?;
    std::io::stdout().lock().write_all(&page)?;
    Ok(Outcome::Healthy)
}

/// EXIT STATUS and EXAMPLES sections in roff, from the tables `--help`
/// prints.
fn exit_and_examples_roff() -> String {
    let esc = |t: &str| t.replace('\\', "\\\\").replace('-', "\\-");
    let codes: String = crate::cli::EXIT_CODES
        .iter()
        .map(|(code, m)| format!(".TP\n\\fB{code}\\fR\n{}\n", esc(m)))
        .collect();
    let examples: String = crate::cli::EXAMPLES.iter().map(|e| format!("{}\n", esc(e))).collect();
    format!(".SH \"EXIT STATUS\"\n{codes}.SH EXAMPLES\n.nf\n{examples}.fi\n")
}

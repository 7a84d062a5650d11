//! The fleet report's plan: `arrayburn report`'s flags resolved, every
//! output proven writable before a result file is read.
//!
//! It must not read a result: `fleet` does.

use std::path::{Path, PathBuf};

use crate::cli::ReportArgs;
use crate::judge::ack::Ack;
use crate::notify::Notifier;
use crate::output::{Output, Outputs};

/// A fleet report ready to read its results.
pub struct FleetPlan {
    /// The result files and directories given.
    pub inputs: Vec<PathBuf>,
    /// Skip a file that cannot be read (`--keep-going`).
    pub keep_going: bool,
    pub json: Option<Output>,
    pub metrics: Option<Output>,
    pub out: Option<PathBuf>,
    /// Who is told of the report's end (`--notify`).
    pub notify: Option<Notifier>,
    /// `--ack FILE` and the findings it acknowledges (read before any
    /// result); `--ack-add`'s disks, and who says why.
    pub ack: Option<(PathBuf, Vec<Ack>)>,
    pub ack_add: Vec<String>,
    pub who: String,
    pub why: String,
}

impl FleetPlan {
    /// Resolves `arrayburn report`'s flags; an output that cannot be
    /// written is refused here.
    pub fn resolve(args: &ReportArgs) -> anyhow::Result<FleetPlan> {
        let resolve = |flag: &str, p: Option<&std::path::Path>| {
            p.map(|p| Output::resolve(flag, p, true)).transpose().map_err(anyhow::Error::msg)
        };
        let json = resolve("--json", args.json.as_deref())?;
        let metrics = resolve("--metrics", args.metrics.as_deref())?;
        if let Some(dir) = &args.out {
            super::check_output_dir(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let adding = !args.ack_add.is_empty();
        if adding && args.why.as_deref().is_some_and(|w| w.trim().is_empty()) {
            anyhow::bail!(
                "--why is empty: say why these findings are accepted (it is kept with each, for whoever reads the report next)"
            );
        }
        let ack = (args.ack.as_ref())
            .map(|p| read_acks(p, adding).map(|a| (p.clone(), a)))
            .transpose()
            .map_err(anyhow::Error::msg)?;
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let who = args.who.clone().or_else(|| env("SUDO_USER")).or_else(|| env("USER"));
        Ok(FleetPlan {
            ack,
            ack_add: args.ack_add.clone(),
            who: who.unwrap_or_else(|| "unknown".into()),
            why: args.why.clone().unwrap_or_default(),
            inputs: args.inputs.clone(),
            keep_going: args.keep_going,
            json,
            metrics,
            out: args.out.clone(),
            notify: super::notifier(&args.notify),
        })
    }

    /// Where the report goes.
    pub fn outputs(&self) -> Outputs<'_> {
        let (json, metrics) = (self.json.as_ref(), self.metrics.as_ref());
        Outputs { json, csv: None, out: self.out.as_deref(), metrics, ocp: None }
    }
}

/// Reads the file of acknowledged findings; an empty list where it does
/// not exist yet and `may_be_new` (it is about to be written).
fn read_acks(path: &Path, may_be_new: bool) -> Result<Vec<Ack>, String> {
    let shown = path.display();
    match crate::input::read_not_linked(path) {
        // Its words are printed: any control character is escaped first.
        Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
            .map(|mut v| {
                crate::escape::json_strings(&mut v);
                v
            })
            .and_then(serde_json::from_value::<crate::judge::ack::AckFile>)
            .map(|f| f.acknowledged)
            .map_err(|e| format!("--ack {shown}: not a file of acknowledged findings ({e}); give the file --ack-add wrote, or move it away")),
        Err(_) if may_be_new && std::fs::symlink_metadata(path).is_err() => Ok(Vec::new()),
        Err(e) => Err(format!("--ack {shown}: cannot read it ({e}); give the file --ack-add wrote")),
    }
}

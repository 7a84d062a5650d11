//! The fleet report's plan: `arrayburn report`'s flags resolved, every
//! output proven writable before a result file is read.
//!
//! It must not read a result: `fleet` does.

use std::path::PathBuf;

use crate::cli::ReportArgs;
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
        Ok(FleetPlan {
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
        Outputs { json, csv: None, out: self.out.as_deref(), metrics }
    }
}

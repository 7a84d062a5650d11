//! What every JSON document arrayburn writes opens with (the check's, the
//! burn-in's, iozone's and the fleet report's): which tool and version
//! wrote it, which kind of document it is, where and when it ran, the
//! command line, and whether it is whole. A reader (the fleet report, a
//! script) looks here first and at the kind's own fields after.
//!
//! It must not know any kind's own fields; it only reads this machine.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::device::Machine;
use crate::units::rfc3339;

/// Version of the JSON layouts; bumped when a field changes meaning or goes.
pub const SCHEMA_VERSION: u32 = 1;

/// Which document this is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `arrayburn check` (results written before the shared header have no
    /// kind, and are checks).
    #[default]
    Check,
    /// `arrayburn burnin`, a read-only soak too.
    Burnin,
    /// `arrayburn iozone`.
    Iozone,
    /// `arrayburn report`: many results read together.
    Fleet,
    /// `arrayburn inspect`: what each drive declares of itself.
    Inspect,
    /// `arrayburn watch`: the first line of its JSON lines.
    Watch,
}

/// The opening fields of every document (flattened into it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    /// Layout version of this document ([`SCHEMA_VERSION`]).
    #[serde(default = "first_schema")]
    pub schema_version: u32,
    /// `"arrayburn"`.
    #[serde(default = "arrayburn")]
    pub tool: String,
    /// `"check"`, `"burnin"`, `"iozone"`, `"fleet"` or `"inspect"`.
    #[serde(default)]
    pub kind: Kind,
    /// The version of arrayburn that wrote it.
    pub tool_version: String,
    /// Host name of the machine it ran on.
    #[serde(default)]
    pub host: String,
    /// The machine's id and kernel release.
    #[serde(flatten, default)]
    pub machine: Machine,
    /// When it started, and when this document was written (RFC 3339, UTC).
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub finished_at: String,
    /// True when a signal stopped it early: the numbers cover what was done.
    #[serde(default)]
    pub interrupted: bool,
    /// True only in the final document of a run that did all it was asked
    /// (a check's copies saved after each pass say false, as does an
    /// interrupted run): a file that says false is partial.
    #[serde(default)]
    pub complete: bool,
    /// The command line, as typed.
    #[serde(default)]
    pub command_line: Vec<String>,
    /// The run's exit status (0 healthy, 1 something to act on, 3 not
    /// judged, 130 interrupted), in the document written at its end; absent
    /// from a copy saved while it went on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<u8>,
    /// Where the run's worker process was killed outright (SIGKILL, the
    /// out-of-memory killer): what happened, in words, set by the process
    /// that waited for it in the last copy the worker had saved (which
    /// then also says `interrupted` and the exit status, 128 + the signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed: Option<String>,
}

fn first_schema() -> u32 {
    1
}

fn arrayburn() -> String {
    "arrayburn".into()
}

impl Header {
    /// A header for a document of `kind` written now on this machine.
    pub fn now(kind: Kind, started: SystemTime, command_line: Vec<String>) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool: arrayburn(),
            kind,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            host: nix::unistd::gethostname()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            machine: Machine::this(),
            started_at: rfc3339(started),
            finished_at: rfc3339(SystemTime::now()),
            interrupted: false,
            complete: false,
            command_line,
            exit_status: None,
            killed: None,
        }
    }

    /// Marks how the run ended: `interrupted`, and whole when it was not
    /// and `did_all` it was asked.
    pub fn ended(mut self, interrupted: bool, did_all: bool) -> Self {
        self.interrupted = interrupted;
        self.complete = !interrupted && did_all;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_written_before_the_header_reads_as_a_check_of_schema_1() {
        let old = r#"{"tool":"arrayburn","tool_version":"0.1.0","host":"h",
            "started_at":"2026-01-01T00:00:00Z","finished_at":"2026-01-01T00:01:00Z",
            "interrupted":false,"complete":true,"command_line":["arrayburn"]}"#;
        let h: Header = serde_json::from_str(old).unwrap();
        assert_eq!((h.kind, h.schema_version, h.complete), (Kind::Check, 1, true));
        let burn = r#"{"kind":"burnin","tool_version":"0.1.0"}"#;
        let h: Header = serde_json::from_str(burn).unwrap();
        assert_eq!((h.kind, h.tool.as_str()), (Kind::Burnin, "arrayburn"));
        let made = Header::now(Kind::Fleet, SystemTime::now(), vec![]).ended(false, true);
        let v = serde_json::to_value(&made).unwrap();
        assert_eq!(v["kind"], "fleet");
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert!(made.complete && !made.interrupted);
    }
}

//! How a command ended, and the exit code that says so: shared by every
//! subcommand (and iozone's runner) without any of them importing another.

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything healthy (exit 0).
    Healthy,
    /// A disk was flagged or failed reads (exit 1).
    Flagged,
    /// Nothing found, but not every disk could be compared: health is not
    /// claimed (exit 3).
    NotJudged,
    /// A signal stopped the run (exit 130).
    Interrupted,
}

impl Outcome {
    /// What an exit status of arrayburn's says, in words.
    pub fn words(code: u8) -> &'static str {
        match code {
            0 => "healthy",
            1 => "something to act on",
            2 => "could not run",
            3 => "not judged",
            130 => "interrupted",
            c if c > 128 => "ended by a signal",
            _ => "unknown",
        }
    }

    /// Of two runs one command made, what the command says: a stop, else
    /// something to act on, else what was not judged.
    pub fn and(self, other: Outcome) -> Outcome {
        let rank = |o: Outcome| {
            [Outcome::Healthy, Outcome::NotJudged, Outcome::Flagged, Outcome::Interrupted]
                .iter()
                .position(|x| *x == o)
        };
        if rank(other) > rank(self) { other } else { self }
    }

    /// The verdict's word, as reports and `--notify` say it (`HEALTHY`,
    /// `FLAGGED`, `NOT JUDGED`, `INTERRUPTED`).
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Healthy => "HEALTHY",
            Outcome::Flagged => "FLAGGED",
            Outcome::NotJudged => "NOT JUDGED",
            Outcome::Interrupted => "INTERRUPTED",
        }
    }

    /// The process exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Healthy => 0,
            Outcome::Flagged => 1,
            Outcome::NotJudged => 3,
            Outcome::Interrupted => 130,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outcome::*;

    #[test]
    fn two_runs_say_the_worse_of_them() {
        assert_eq!(Healthy.and(Flagged), Flagged);
        assert_eq!(Flagged.and(Healthy), Flagged);
        assert_eq!(NotJudged.and(Healthy), NotJudged);
        assert_eq!(Flagged.and(NotJudged), Flagged);
        assert_eq!(Healthy.and(Interrupted), Interrupted);
        assert_eq!(Healthy.and(Healthy), Healthy);
    }
}

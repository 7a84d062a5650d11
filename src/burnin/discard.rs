//! `burnin --discard`: after the last read-back, each solid-state disk is
//! left trimmed: the stretches the burn-in wrote are deallocated with the
//! kernel's promise that they read as zeroes (`device::discard`), else
//! discarded plainly; where zeroes were promised (by the kernel, or by the
//! drive's own IDENTIFY: TRIM deterministic and zeroed), spread blocks
//! are read back, and any that are not zeroes are counted: a drive that
//! breaks that promise is a finding (`judge::burnin`).
//!
//! It must not judge, and must not run where nothing may be written (the
//! plan asks it only of a burn-in's disks).

use serde::{Deserialize, Serialize};

use crate::device::discard::{discard, zero_deallocate};
use crate::io::{Bounds, Halt, Probe, Until};

/// How much is discarded at a time (a stop is heard between).
const CHUNK: u64 = 1 << 30;

/// At most this many places are read back, each [`SAMPLE`] bytes.
const PLACES: u64 = 1024;
const SAMPLE: usize = 64 << 10;

/// How a disk's burned stretches were discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Way {
    /// Write zeroes with deallocate: the kernel promises zeroes.
    ZeroDeallocate,
    /// A plain discard (TRIM, deallocate, UNMAP).
    Discard,
}

/// What the discard after a burn-in did and read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Discarded {
    /// Bytes discarded, and how.
    pub bytes: u64,
    pub way: Option<Way>,
    /// Who promised that the range reads as zeroes after it, in words;
    /// None: nobody did, and nothing was read back.
    pub promised_by: Option<String>,
    /// Bytes read back at spread places, and of those, bytes that were
    /// not zeroes (the first such at `first_not_zero`).
    pub read_bytes: u64,
    pub not_zero_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_not_zero: Option<u64>,
    /// Why it did not finish (the kernel refused, a stop, a read failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

impl Discarded {
    /// Nothing discarded, and why.
    pub fn refused(why: &str) -> Self {
        Self {
            bytes: 0,
            way: None,
            promised_by: None,
            read_bytes: 0,
            not_zero_bytes: 0,
            first_not_zero: None,
            incomplete: Some(why.into()),
        }
    }

    /// In words, for the report.
    pub fn words(&self) -> String {
        let human = crate::units::human_bytes;
        let how = match self.way {
            Some(Way::ZeroDeallocate) => {
                "deallocated with write zeroes (the kernel promises zeroes)"
            }
            Some(Way::Discard) => "discarded (TRIM/deallocate)",
            None => "not discarded",
        };
        let mut said = format!("{} of what the burn-in wrote {how}", human(self.bytes));
        match (&self.promised_by, self.not_zero_bytes) {
            (Some(_), 0) if self.read_bytes > 0 => {
                said.push_str(&format!("; {} read back at spread places, all zeroes", human(self.read_bytes)))
            }
            (Some(by), n) if n > 0 => said.push_str(&format!(
                "; {} of {} read back at spread places held data (first at byte {}), where {by} promised zeroes",
                human(n),
                human(self.read_bytes),
                self.first_not_zero.unwrap_or_default()
            )),
            (None, _) if self.way.is_some() => {
                said.push_str("; not read back (the drive does not promise zeroes after a discard)")
            }
            _ => {}
        }
        if let Some(why) = &self.incomplete {
            said.push_str(&format!("; incomplete: {why}"));
        }
        said
    }
}

/// Discards `written` (stretches of `file`, in order), chunk by chunk, the
/// kernel's zeroing way first; `declared`: the drive's own promise of
/// zeroes after a TRIM, where it makes one. Then, where zeroes were
/// promised, reads spread places back.
pub fn discard_written(
    file: &std::fs::File,
    written: &[(u64, u64)],
    declared: Option<&str>,
    bounds: &Bounds,
) -> Discarded {
    let mut out = Discarded { incomplete: None, ..Discarded::refused("") };
    'all: for &(from, to) in written {
        let mut at = from;
        while at < to {
            if bounds.stop.is_set() {
                out.incomplete = Some("a stop came".into());
                break 'all;
            }
            let len = CHUNK.min(to - at);
            let done = match out.way {
                Some(Way::Discard) => discard(file, at, len),
                _ => match zero_deallocate(file, at, len) {
                    Err(e) if out.way.is_none() && is_unsupported(&e) => {
                        out.way = Some(Way::Discard);
                        discard(file, at, len)
                    }
                    r => r.map(|()| out.way = out.way.or(Some(Way::ZeroDeallocate))),
                },
            };
            if let Err(e) = done {
                out.incomplete = Some(format!("the kernel refused a discard at byte {at} ({e})"));
                break 'all;
            }
            out.bytes += len;
            at += len;
        }
    }
    out.promised_by = match out.way {
        Some(Way::ZeroDeallocate) => Some("the kernel (write zeroes with deallocate)".into()),
        Some(Way::Discard) => declared.map(str::to_string),
        None => None,
    };
    if out.promised_by.is_some() && out.incomplete.is_none() {
        read_zeroes(file, written, bounds, &mut out);
    }
    out
}

/// Whether the kernel cannot deallocate with zeroes here.
fn is_unsupported(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(nix::libc::EOPNOTSUPP | nix::libc::EINVAL | nix::libc::ENOTTY))
}

/// Reads [`PLACES`] spread places of `written` back, counting bytes that
/// are not zeroes.
fn read_zeroes(file: &std::fs::File, written: &[(u64, u64)], bounds: &Bounds, out: &mut Discarded) {
    let total: u64 = written.iter().map(|(a, b)| b - a).sum();
    let places = PLACES.min(total / SAMPLE as u64).max(1);
    let mut probe = match Probe::of(file, bounds) {
        Ok(p) => p,
        Err(e) => {
            out.incomplete = Some(format!("it could not be read back ({e})"));
            return;
        }
    };
    for k in 0..places {
        // The k-th place, as an offset into the stretches laid end to end.
        let mut into = crate::units::fraction_of(total, k, places) / 4096 * 4096;
        let Some(&(from, to)) = written.iter().find(|(a, b)| {
            let n = b - a;
            if into < n {
                return true;
            }
            into -= n;
            false
        }) else {
            break;
        };
        let at = from + into;
        let len = SAMPLE.min((to - at) as usize);
        match probe.read_at(at, len, Until::Stop) {
            Ok(Ok(bytes)) => {
                out.read_bytes += len as u64;
                let data = bytes.chunks(4096).filter(|b| b.iter().any(|&x| x != 0));
                let first = bytes.chunks(4096).position(|b| b.iter().any(|&x| x != 0));
                out.not_zero_bytes += data.map(|b| b.len() as u64).sum::<u64>();
                if let Some(i) = first {
                    out.first_not_zero.get_or_insert(at + i as u64 * 4096);
                }
            }
            Ok(Err(e)) => {
                out.incomplete = Some(format!("a read back at byte {at} failed ({e})"));
                return;
            }
            Err(Halt::Hung) => {
                out.incomplete = Some(format!("a read back at byte {at} got no answer"));
                return;
            }
            Err(_) => {
                out.incomplete = Some("a stop came".into());
                return;
            }
        }
    }
}

//! Burn-in of new disks (`arrayburn burnin --destructive`): every block of
//! every disk written with self-identifying data, flushed, read back and
//! classified, all disks at once.
//!
//! - `block`: the written format and how a block read back is classified.
//! - `plan`: every refusal, before a byte is written.
//! - `worker`: one disk's write-flush-verify passes; it only measures and
//!   classifies (verdicts are `judge::burnin`'s).
//! - `report`: the result as JSON and text.
//! - `smart`: SMART before and after, and what rose.
//! - `state`: the checkpoint per disk that a `--resume` continues from.
//! - `resume`: what a resume proves (the disk's blocks) before it writes.

pub mod block;
pub mod plan;
pub mod report;
pub mod resume;
pub mod smart;
pub mod state;
pub mod worker;

//! Burn-in of new disks (issue 11, under construction): what a destructive
//! write-verify writes and how a block read back is classified (`block`).
//! The command itself, its safety refusals, checkpoints and SMART deltas
//! are still to come; nothing here writes to a device yet.

pub mod block;

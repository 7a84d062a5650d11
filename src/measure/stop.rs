//! The stop flag: set by a signal handler (or a test), read by every
//! worker before each read.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set by a signal handler (or a test); workers stop at the next read.
/// It also says whether the program is doing what a second signal must not
/// cut short (removing the demo's loop devices and cgroup or iozone's test
/// files, writing a result file), so that the handler waits instead.
#[derive(Debug, Clone, Default)]
pub struct StopFlag {
    stop: Arc<AtomicBool>,
    holds: Arc<AtomicUsize>,
}

/// While it lives, a second signal waits instead of ending the process.
#[must_use]
pub struct Hold(Arc<AtomicUsize>);

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl StopFlag {
    /// Asks every worker to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }
    /// Whether a stop was asked for.
    pub fn is_set(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    /// Holds off a second signal's exit until the returned guard is
    /// dropped (holds nest).
    pub fn hold(&self) -> Hold {
        self.holds.fetch_add(1, Ordering::SeqCst);
        Hold(self.holds.clone())
    }
    /// Whether exiting now would leave resources or a half-written file
    /// behind.
    pub fn cleanup_pending(&self) -> bool {
        self.holds.load(Ordering::SeqCst) > 0
    }
}

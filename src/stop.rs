//! The stop flag: set by a signal handler (or a test), read by every
//! worker before each read and woken on by every wait for the disks. It
//! sits below everything that measures, writes or waits (measure, io,
//! burnin, iozone, the test bed), and must not know any of them.

use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use nix::sys::eventfd::{EfdFlags, EventFd};

/// Set by a signal handler (or a test); workers stop at the next read.
/// It also says whether the program is doing what a second signal must not
/// cut short (removing the demo's loop devices and cgroup or iozone's test
/// files, writing a result file), so that the handler waits instead.
///
/// A stop also makes its [`StopFlag::waker`] readable, so a worker blocked
/// in the kernel waiting for a read (a deep io_uring queue on a slow disk)
/// wakes at once instead of when its oldest read ends.
#[derive(Debug, Clone)]
pub struct StopFlag {
    stop: Arc<AtomicBool>,
    holds: Arc<AtomicUsize>,
    /// Written once by a stop and never read: readable from then on.
    waker: Option<Arc<EventFd>>,
}

impl Default for StopFlag {
    fn default() -> Self {
        Self { stop: Arc::default(), holds: Arc::default(), waker: new_waker() }
    }
}

/// The eventfd a stop makes readable. Without one (no eventfd), a blocked
/// worker sees the stop when its read ends.
fn new_waker() -> Option<Arc<EventFd>> {
    EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK).ok().map(Arc::new)
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
        if let Some(w) = &self.waker {
            let _ = w.write(1);
        }
    }
    /// A descriptor that becomes readable when a stop is asked for.
    pub fn waker(&self) -> Option<BorrowedFd<'_>> {
        self.waker.as_ref().map(|w| w.as_fd())
    }
    /// Whether a stop was asked for.
    pub fn is_set(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    /// Waits `d`, or until a stop is asked for: whether the whole of `d`
    /// passed.
    pub fn rest(&self, d: std::time::Duration) -> bool {
        let until = std::time::Instant::now() + d;
        while !self.is_set() {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(std::time::Duration::from_millis(100)));
        }
        false
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

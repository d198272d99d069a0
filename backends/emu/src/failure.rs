//! Tasks that fail as they run, and how a stream goes on (contract §1).
//!
//! A task fails when the emulator refuses its work as it runs: a copy or memset whose
//! memory is gone, an access the checker refuses when it runs (work behind an open wait,
//! `signal.rs`), a wait that runs out of time, a host function that panics. The next
//! synchronization of its stream reports the first failure since the last one, and the
//! platform's failure hook hears of each as it happens, on the stream's worker, before the
//! task counts as complete.
//!
//! With the failure mode set to stop ([`Emulator::set_stop_on_failure`]) a failing task
//! stops its stream: the stream drops its work (queued then, or enqueued later) until the
//! host takes the failure with a synchronization. An abort or a stop
//! ([`Emulator::cut_stream`]) drops the work queued and not started (the task running
//! completes) and leaves its error for the next synchronization; the stream takes new
//! work afterwards. Dropped work never runs, so it never touches memory freed after.

use crate::device::Emulator;
use crate::stream::{EmuStream, FailureHook, lock};
use mempool_hal::{Error, Result};

impl Emulator {
    /// Sets (`Some`) or clears the hook the platform runs when a task fails
    /// ([`crate::TaskFailure`]); one per platform, the last set wins.
    pub fn set_failure_hook(&self, hook: Option<FailureHook>) {
        *lock(&self.platform.hooks.on_failure) = hook;
    }

    /// Sets the failure mode of `stream`: `stop` makes a failing task stop it (module docs).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    pub fn set_stop_on_failure(&self, stream: &EmuStream, stop: bool) -> Result<()> {
        stream.live(self.platform.id, "set_stop_on_failure")?.set_stop_on_failure(stop);
        Ok(())
    }

    /// Aborts or stops `stream`: drops the work queued and not started; the task running
    /// completes. The next synchronization reports `error`.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    pub fn cut_stream(&self, stream: &EmuStream, error: Error) -> Result<()> {
        stream.live(self.platform.id, "cut_stream")?.cut(error);
        Ok(())
    }

    /// The number of the last task enqueued on `stream` (its position; 0 before any),
    /// as [`crate::TaskFailure::task`] numbers a failed one.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    pub fn last_task(&self, stream: &EmuStream) -> Result<u64> {
        // Without the state lock: every enqueue of the drop-in libraries asks for it.
        Ok(stream.live(self.platform.id, "last_task")?.last_real_hint())
    }
}

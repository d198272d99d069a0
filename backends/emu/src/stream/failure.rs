//! Tasks that fail as they run (the emulator's `failure.rs` is the public side): the
//! platform's failure hook, the stop failure mode, aborts and stops that drop queued work,
//! and the failure a synchronization takes.

use super::{StreamShared, lock};
use crate::sync::{Arc, Mutex, Ordering};
use mempool_hal::Error;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A task that failed as it ran, as the platform's failure hook sees it
/// ([`crate::Emulator::set_failure_hook`]).
#[derive(Debug, Clone)]
pub struct TaskFailure {
    /// The stream's id ([`crate::EmuStream::id`]).
    pub stream: u64,
    /// The stream's device.
    pub device: u32,
    /// The task: its position on the stream ([`crate::Emulator::last_task`] numbers tasks so).
    pub task: u64,
    /// Why it failed.
    pub error: Error,
}

/// What the platform runs when a task fails, on the worker of its stream, before the
/// task counts as complete (so before a synchronization that reports it returns).
pub type FailureHook = Arc<dyn Fn(&TaskFailure) + Send + Sync>;

/// The platform's hooks, shared by its streams.
pub(crate) struct Hooks {
    pub(crate) on_failure: Mutex<Option<FailureHook>>,
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks { on_failure: Mutex::new(None) }
    }
}

impl StreamShared {
    /// A task failed as it ran: the hook hears of it, the next synchronization reports it
    /// (the first one since the last), and with the failure mode set to stop the stream
    /// drops its work until then.
    pub(super) fn fail(&self, pos: u64, e: Error) {
        let hook = lock(&self.hooks.on_failure).clone();
        if let Some(hook) = hook {
            let f = TaskFailure { stream: self.id, device: self.device, task: pos, error: e.clone() };
            // A hook that panics loses its report, never the worker.
            let _ = catch_unwind(AssertUnwindSafe(|| hook(&f)));
        }
        lock(&self.failure).get_or_insert(e);
        if self.stop_on_failure.load(Ordering::Acquire) {
            self.state().failed_stop = true;
        }
    }

    /// Sets the failure mode: `stop` makes a failing task stop the stream.
    pub(crate) fn set_stop_on_failure(&self, stop: bool) {
        self.stop_on_failure.store(stop, Ordering::Release);
    }

    /// Drops every operation queued and not started (the one running completes), and
    /// leaves `e` for the next synchronization to report: an abort or a stop. The stream
    /// takes new work afterwards.
    pub(crate) fn cut(&self, e: Error) {
        let mut st = self.state();
        st.drop_through = st.last_real;
        lock(&self.failure).get_or_insert(e);
        self.work_cv.notify_one();
    }

    /// Takes the failure recorded since the last synchronization; a stream stopped by a
    /// failure runs new work again.
    pub(crate) fn take_failure(&self) -> Option<Error> {
        let e = lock(&self.failure).take();
        if e.is_some() {
            self.state().failed_stop = false;
        }
        e
    }
}

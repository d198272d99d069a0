//! The end of a stream: its destroy (work queued runs, or is dropped by a destroy that
//! discards), a worker that gave up a wait that could not end, and what the platform asks
//! before it forgets a destroyed stream.

use super::{StreamShared, lock};
use crate::sync::Ordering;

impl StreamShared {
    /// Marks the stream destroyed: work already queued still runs, then the worker ends.
    /// A stream whose worker never started ends here (its `on_exit` runs now): the caller
    /// must not hold the platform's stream registry.
    pub(crate) fn close(&self) -> bool {
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return false;
        }
        let unstarted = {
            let mut st = self.state();
            // A write section: lock-free markers that overlap it take the lock, and see
            // the stream closed.
            self.published.write(|| st.closing = true);
            st.allowed = u64::MAX;
            self.work_cv.notify_one();
            if st.worker { None } else { st.on_exit.take() }
        };
        if let (Some(f), Some(me)) = (unstarted, self.me.upgrade()) {
            f(&me);
        }
        true
    }

    /// Marks the stream destroyed, as [`StreamShared::close`] (`false` when it already
    /// was), and drops the work not yet started: an operation already running completes,
    /// the rest never runs.
    pub(crate) fn close_discarding(&self) -> bool {
        let first = self.close();
        if first {
            self.discard_pending();
        }
        first
    }

    /// Drops the work of a destroyed stream that has not started (see
    /// [`StreamShared::close_discarding`]); what is running completes.
    pub(crate) fn discard_pending(&self) {
        let mut st = self.state();
        st.discard = true;
        self.work_cv.notify_one();
    }

    /// The stream was destroyed while its worker waited in vain: drops the work still
    /// queued (it was never ordered after what it waited for, so it must not run), and
    /// wakes whoever waits for this stream, who then fails at once.
    pub(super) fn abandon(&self) {
        let dropped = {
            let mut st = self.state();
            self.abandoned.store(true, Ordering::Release);
            std::mem::take(&mut st.ops)
        };
        drop(dropped);
        let _g = lock(&self.done_mx);
        self.done_cv.notify_all();
    }

    /// Whether the worker dropped the rest of the stream's work ([`StreamShared::abandon`]).
    pub(crate) fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Acquire)
    }

    /// The position of the `n`-th operation still queued (not started) and how many of
    /// the first `n` exist; `None` when none is queued.
    pub(crate) fn nth_pending(&self, n: usize) -> Option<(u64, usize)> {
        let st = self.state();
        let count = n.min(st.ops.len());
        if count == 0 {
            return None;
        }
        Some((st.ops[count - 1].pos, count))
    }

    /// Whether the worker has no more work (destroyed streams can then be forgotten).
    pub(crate) fn is_idle(&self) -> bool {
        let st = self.state();
        st.ops.is_empty() && self.completed() >= st.last_real
    }
}

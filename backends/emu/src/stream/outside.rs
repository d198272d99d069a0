//! Waits whose end comes from outside the stream's order (a notification, a word of
//! memory: `signal.rs`): the order they give, known when they end, and the waits queued
//! whose order is not known yet (`OpenWait`), behind which work is checked when it runs.

use super::{StreamShared, StreamState, Task};
use crate::clock::Clock;
use crate::sync::{Arc, OnceLock, Ordering};
use mempool_hal::Result;

/// The worker's side of a [`Task::Await`]: blocks until the wait is satisfied, and returns
/// the order that gives (`None`: none the checker can name), or fails the task.
pub(crate) type Await = Box<dyn FnOnce(u64) -> Result<Option<Joined>> + Send + 'static>;

/// An order a wait gives: a point of another stream and its clock there.
#[derive(Debug, Clone)]
pub(crate) struct Joined {
    pub(crate) clock: Arc<Clock>,
    pub(crate) point: (u64, u64),
}

/// A wait enqueued before what satisfies it was: the order it gives is known when it
/// ends. Work enqueued behind it meanwhile is checked when it runs (`pool/access.rs`),
/// with this order added.
#[derive(Debug, Default)]
pub(crate) struct OpenWait {
    pub(crate) joined: OnceLock<Option<Joined>>,
}

impl StreamShared {
    /// The order an ended wait gives: the stream's tail takes it, for what is enqueued
    /// from now on.
    pub(super) fn take_order(&self, j: &Joined) {
        let mut st = self.state();
        if let Some(clock) = st.clock().merged(&j.clock, j.point) {
            self.set_clock_locked(&mut st, clock);
        }
    }

    /// An open wait ended (`joined`: with that order) or was dropped (`None`).
    pub(super) fn settle(&self, open: &Arc<OpenWait>, joined: Option<Joined>) {
        let _ = open.joined.set(joined.clone());
        if let Some(j) = &joined {
            self.take_order(j);
        }
        let mut st = self.state();
        let before = st.open_waits.len();
        st.open_waits.retain(|w| !Arc::ptr_eq(w, open));
        self.open.fetch_sub((before - st.open_waits.len()) as u64, Ordering::AcqRel);
    }

    /// Whether waits whose order is not known yet are queued (a hint, read without the
    /// lock: the caller checks `StreamState::open_waits` under it).
    pub(crate) fn has_open_waits(&self) -> bool {
        self.open.load(Ordering::Acquire) != 0
    }

    /// Whether the wait at `pos` should give up: the stream was destroyed by a destroy
    /// that drops its work, or aborted, stopped or stopped by a failure since.
    pub(crate) fn gives_up(&self, pos: u64) -> bool {
        let st = self.state();
        st.discard || st.failed_stop || pos <= st.drop_through
    }

    /// Enqueues a wait that ends from outside the stream's order ([`Task::Await`]);
    /// `open`: its order is not known yet. Returns its position.
    pub(crate) fn push_await_locked(&self, st: &mut StreamState, wait: Await, open: bool) -> Result<u64> {
        let open = open.then(|| Arc::new(OpenWait::default()));
        let pos = self.push_op_locked(st, Task::Await(wait, open.clone()), false)?;
        if let Some(w) = open {
            st.open_waits.push(w);
            self.open.fetch_add(1, Ordering::AcqRel);
        }
        Ok(pos)
    }
}

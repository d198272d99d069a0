//! The calling thread's context, as the backends make and keep it current:
//!
//! - [`Entered`]: which device instance this thread last made current through a backend,
//!   and the three ways in (the cheap cached check, the checked one that asks the runtime,
//!   the slow one that sets the context); [`next_instance`] numbers the instances;
//! - [`InstanceContext`]: a backend's device instance over that record: the ways in and
//!   the liveness of its handles, written once for both backends;
//! - [`preserving_current`]: the context given back after a backend call, so code that
//!   calls a backend from a framework's thread leaves the framework's current device as it
//!   was.

use crate::handle::Handle;
use mempool_hal::{Error, Result};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::LocalKey;

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// A number for a new device instance, never given out before in this process (both
/// backends draw from it; 0 is never given, so it can mean "none").
#[inline]
pub fn next_instance() -> u64 {
    NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed)
}

/// The device instance whose context the calling thread last made current through one
/// backend, kept in that backend's `thread_local!` `Cell<u64>` (0: none). Instances are
/// never reused, unlike context addresses, so a match means the context is still the one
/// this backend set, unless other code switched it since (which [`Entered::enter_checked`]
/// asks the runtime about).
#[derive(Debug, Clone, Copy)]
pub struct Entered(&'static LocalKey<Cell<u64>>);

impl Entered {
    /// Over the backend's thread-local record.
    pub const fn new(key: &'static LocalKey<Cell<u64>>) -> Self {
        Entered(key)
    }

    /// The instance the calling thread last entered (0 once the thread's storage is gone).
    #[inline]
    fn get(self) -> u64 {
        self.0.try_with(Cell::get).unwrap_or(0)
    }

    /// Records `instance` as entered on this thread, for a context made current by a call
    /// that does so itself (CANN's `aclrtCreateContext`); 0 forgets any.
    #[inline]
    pub fn record(self, instance: u64) {
        let _ = self.0.try_with(|c| c.set(instance));
    }

    /// Makes `instance`'s context current: one thread-local compare when this thread last
    /// entered it, otherwise [`enter_slow`](Self::enter_slow) with `set`.
    ///
    /// # Errors
    ///
    /// `set`'s error.
    #[inline]
    pub fn enter<E>(self, instance: u64, set: impl FnOnce() -> Result<(), E>) -> Result<(), E> {
        if self.get() == instance { Ok(()) } else { self.enter_slow(instance, set) }
    }

    /// [`enter`](Self::enter) for the pool-management and device-wide paths: asks the
    /// runtime which context is current (`current`, one call) instead of trusting the
    /// record, which goes stale when other code on this thread switches context; when it is
    /// not `ctx` (or the question fails), [`enter_slow`](Self::enter_slow) with `set`.
    ///
    /// # Errors
    ///
    /// `set`'s error.
    pub fn enter_checked<C: PartialEq, E>(
        self,
        instance: u64,
        ctx: C,
        current: impl FnOnce() -> Result<C, E>,
        set: impl FnOnce() -> Result<(), E>,
    ) -> Result<(), E> {
        match current() {
            Ok(c) if c == ctx => {
                self.record(instance);
                Ok(())
            }
            _ => self.enter_slow(instance, set),
        }
    }

    /// Sets the context (`set`) and records `instance` as entered on this thread.
    ///
    /// # Errors
    ///
    /// `set`'s error; the record is left as it was.
    #[cold]
    #[inline(never)]
    pub fn enter_slow<E>(self, instance: u64, set: impl FnOnce() -> Result<(), E>) -> Result<(), E> {
        set()?;
        self.record(instance);
        Ok(())
    }

    /// Forgets `instance` on this thread if it is the one recorded (at the instance's end).
    pub fn forget(self, instance: u64) {
        if self.get() == instance {
            self.record(0);
        }
    }
}

/// One device instance of a backend and the context it keeps current on whichever thread
/// calls it (both runtimes bind contexts per thread). A backend gives the four facts; the
/// ways in and the liveness checks come with them.
pub trait InstanceContext {
    /// The backend's per-thread record.
    const ENTERED: Entered;

    /// The instance's number ([`next_instance`]) and its context, as an address.
    fn ids(&self) -> (u64, usize);

    /// Asks the runtime which context is current on the calling thread.
    ///
    /// # Errors
    ///
    /// The runtime's error.
    fn current_ctx(&self) -> Result<usize>;

    /// Makes the instance's context current on the calling thread.
    ///
    /// # Errors
    ///
    /// The runtime's error.
    fn set_current(&self) -> Result<()>;

    /// The error a backend answers for a portable one (a backend with codes of its own
    /// renumbers it); as it is by default.
    #[inline]
    fn renumber(e: Error) -> Error {
        e
    }

    /// Makes the context current, so the backend works from any thread. When this thread
    /// last entered this instance it is one thread-local compare. The malloc, free and copy
    /// paths use it.
    ///
    /// # Errors
    ///
    /// [`set_current`](Self::set_current)'s error.
    #[inline]
    fn enter(&self) -> Result<()> {
        Self::ENTERED.enter(self.ids().0, || self.set_current())
    }

    /// [`enter`](Self::enter) for the pool-management and device-wide paths: asks the
    /// runtime which context is current (one call) instead of trusting the per-thread
    /// record, which goes stale when other code on this thread switches context.
    ///
    /// # Errors
    ///
    /// [`set_current`](Self::set_current)'s error.
    fn enter_checked(&self) -> Result<()> {
        let (instance, ctx) = self.ids();
        Self::ENTERED.enter_checked(instance, ctx, || self.current_ctx(), || self.set_current())
    }

    /// Makes the context current whatever the record says.
    ///
    /// # Errors
    ///
    /// [`set_current`](Self::set_current)'s error.
    fn enter_slow(&self) -> Result<()> {
        Self::ENTERED.enter_slow(self.ids().0, || self.set_current())
    }

    /// The raw value of `h` if it is a live handle of this instance; otherwise a
    /// stale-handle error (`InvalidHandle`) naming `what`, renumbered for the backend.
    ///
    /// # Errors
    ///
    /// `InvalidHandle` for `op`.
    #[inline]
    fn live(&self, h: &Handle, op: &'static str, what: &'static str) -> Result<usize> {
        if h.is_live_in(self.ids().0) { Ok(h.raw()) } else { Err(Self::renumber(Error::stale_handle(op, what))) }
    }

    /// Marks `h` destroyed if it is a live handle of this instance, so that no clone passes
    /// it to the runtime again; `false` if it was not (destroyed already, or foreign).
    #[inline]
    fn retire(&self, h: &Handle) -> bool {
        h.retire(self.ids().0)
    }
}

/// Runs `f`, then, when the thread had a context before (`current`) and `f` changed it,
/// makes that one current again (`set`, `true` on success). `forget` clears the backend's
/// per-thread record of its own context, before `f` (the framework may have switched the
/// thread's context since the backend's last call, so `f` must make its own current again)
/// and after a restore. A thread with no context before keeps the one `f` made current.
pub fn preserving_current<C: Copy + PartialEq, T>(
    current: impl Fn() -> Option<C>,
    set: impl FnOnce(C) -> bool,
    forget: impl Fn(),
    f: impl FnOnce() -> T,
) -> T {
    let before = current();
    forget();
    let out = f();
    if let Some(before) = before {
        if current() != Some(before) && set(before) {
            forget();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static CURRENT: Cell<u64> = const { Cell::new(0) };
    }

    #[test]
    fn entering_sets_once_and_a_stale_record_is_caught_by_the_checked_way() {
        let entered = Entered::new(&CURRENT);
        let (a, b) = (next_instance(), next_instance());
        assert!(a != 0 && b > a);
        let sets = Cell::new(0);
        let set = || {
            sets.set(sets.get() + 1);
            Ok::<(), ()>(())
        };
        entered.enter(a, set).unwrap();
        entered.enter(a, set).unwrap();
        assert_eq!(sets.get(), 1);
        // Other code switched the context: the checked way asks and sets again.
        entered.enter_checked(a, 1, || Ok(2), set).unwrap();
        assert_eq!(sets.get(), 2);
        entered.enter_checked(a, 1, || Ok(1), set).unwrap();
        assert_eq!(sets.get(), 2);
        // A failed set leaves the record as it was.
        assert_eq!(entered.enter(b, || Err("refused")), Err("refused"));
        entered.enter(a, set).unwrap();
        assert_eq!(sets.get(), 2);
        entered.forget(b);
        entered.enter(a, set).unwrap();
        assert_eq!(sets.get(), 2);
        entered.forget(a);
        entered.enter(a, set).unwrap();
        assert_eq!(sets.get(), 3);
    }

    #[test]
    fn the_context_before_comes_back_and_the_record_is_forgotten() {
        let ctx = Cell::new(Some(1));
        let forgotten = Cell::new(false);
        let out = preserving_current(
            || ctx.get(),
            |c| {
                ctx.set(Some(c));
                true
            },
            || forgotten.set(true),
            || {
                ctx.set(Some(2));
                7
            },
        );
        assert_eq!((out, ctx.get(), forgotten.get()), (7, Some(1), true));
        // Unchanged: nothing set, but the record is forgotten before the call all the same
        // (the framework may have switched the context since the backend's last call).
        forgotten.set(false);
        preserving_current(|| ctx.get(), |_| unreachable!(), || forgotten.set(true), || ());
        assert!(forgotten.get());
        // No context before: the new one stays.
        ctx.set(None);
        preserving_current(|| ctx.get(), |_| unreachable!(), || forgotten.set(true), || ctx.set(Some(3)));
        assert_eq!(ctx.get(), Some(3));
    }
}

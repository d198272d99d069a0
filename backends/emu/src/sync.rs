//! The emulator's concurrency primitives, from one place: the standard library's, or under
//! `--cfg loom` the model checker loom's, so that `cargo xtask loom` (`tests/loom.rs`)
//! explores every interleaving of the stream workers, event records and waits, the pool
//! and stream locks and the synchronizations with the emulator's own code.
//!
//! This module is the bottom layer: it names no other module of the crate.
//!
//! What loom models, and the stand-ins where it has no equivalent:
//!
//! - `Mutex`, `MutexGuard`, `RwLock`, `Condvar`, the atomics the emulator keeps per object,
//!   threads (`thread::Builder` names them, as the standard one does) and thread-locals
//!   (`thread_local!`, with the standard macro's `const { }` form; a stream's worker knows
//!   itself by one) are loom's.
//! - `Condvar::wait_timeout` never times out under loom (it waits for a notification), and
//!   [`Instant`] is a clock that does not move: every bounded wait of the emulator becomes
//!   an unbounded one, so a wait that could only end by its timeout is reported as a
//!   deadlock instead of passing unnoticed. Timeouts themselves are not model-checked
//!   (the normal tests cover them), and event time stamps all read the same time.
//! - `Arc`, `Weak` and `OnceLock` stay the standard library's in both builds: loom's `Arc`
//!   has no `Weak` (the platform and the pool registry hold weak references), reference
//!   counts are not the emulator's synchronization, and a `OnceLock` only holds an
//!   event's time stamp. Statics (the platform counter, the lineage ids of `clock.rs`,
//!   the address quarantine of `pool/mapping.rs`) stay the standard library's too: loom's
//!   primitives cannot be built in a constant; nothing blocks or is locked under them.
//! - The host-function thread of `hostfn.rs` (off by default) is not modelled: loom's
//!   channels model no disconnection, which is how that thread ends.

cfg_if::cfg_if! {
    if #[cfg(loom)] {
        pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, fence};
        pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard, RwLock};
        pub(crate) use loom::thread;
        pub(crate) use frozen::Instant;

        /// loom's `thread_local!`, in the form of the standard one with a `const { }`
        /// initializer (which loom's does not take: the block becomes its initializer).
        macro_rules! loom_thread_local {
            ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block;) => {
                loom::thread_local! { $(#[$attr])* $vis static $name: $t = $init; }
            };
        }
        pub(crate) use loom_thread_local as thread_local;
    } else {
        pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
        pub(crate) use std::sync::{Condvar, Mutex, MutexGuard, RwLock};
        pub(crate) use std::time::Instant;
        pub(crate) use std::{thread, thread_local};
    }
}

pub(crate) use std::sync::atomic::Ordering;
pub(crate) use std::sync::{Arc, OnceLock, PoisonError, Weak};

/// Under loom, a clock that does not move (module docs): a model's outcome must not
/// depend on the real time its exploration takes, and loom's timed waits never time out.
#[cfg(loom)]
mod frozen {
    use std::time::Duration;

    /// A point in time of the frozen clock: an offset from its one `now`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub(crate) struct Instant(Duration);

    impl Instant {
        /// Always the same point.
        pub(crate) fn now() -> Instant {
            Instant(Duration::ZERO)
        }

        /// As `std::time::Instant::saturating_duration_since`.
        pub(crate) fn saturating_duration_since(&self, earlier: Instant) -> Duration {
            self.0.saturating_sub(earlier.0)
        }

        /// As `std::time::Instant::duration_since` (saturating, as the standard one is).
        pub(crate) fn duration_since(&self, earlier: Instant) -> Duration {
            self.saturating_duration_since(earlier)
        }

        /// Time since `self` by the frozen clock.
        pub(crate) fn elapsed(&self) -> Duration {
            Instant::now().saturating_duration_since(*self)
        }
    }

    impl std::ops::Add<Duration> for Instant {
        type Output = Instant;

        fn add(self, d: Duration) -> Instant {
            Instant(self.0.saturating_add(d))
        }
    }
}

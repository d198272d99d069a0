//! The thirty scenarios of [contract §10](mempool_hal::contract::conformance), one function each, grouped as the
//! specification groups them, and the scenarios of the extension traits (`vmm.rs`:
//! [contract §14](mempool_hal::contract::vmm)) for backends that implement them.
//!
//! Every scenario takes the harness, makes its own device with [`Harness::device`],
//! reads the granularity `g` from it, works on small pools (a few dozen granules) and
//! destroys what it created. Sizes and addresses are checked exactly: fresh blocks are
//! carved from the low end of a pool's address range in address order, so the address a
//! correct backend hands out is known in advance.
//!
//! The functions are public so that a backend's own tests can call one directly; the
//! usual way to run them is [`trials`](crate::trials) or
//! [`conformance_main!`](crate::conformance_main).
//!
//! [`Harness::device`]: crate::Harness::device

mod alloc_free_stats;
mod host_register;
mod lifetime_handles;
mod peer;
mod properties_attributes;
mod release_trim;
mod vmm;

pub use alloc_free_stats::*;
pub use host_register::*;
pub use lifetime_handles::*;
pub use peer::*;
pub use properties_attributes::*;
pub use release_trim::*;
pub use vmm::*;

use crate::{Failure, ScenarioResult, ensure_eq};
use mempool_hal::{Device, DevicePtr, HostFn, MemPool, MemPoolExt, PoolProps, Profile, attr};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Creates a pool of `granules` granules on `dev`, with every reuse flag off: the
/// scenarios turn on the ones they test. (Ascend creates pools so; CUDA creates them with
/// all three on, which scenario 1 checks.)
fn new_pool<D: Device>(dev: &D, granules: u64) -> Result<D::Pool, Failure> {
    let pool = fresh_pool(dev, granules)?;
    pool.set(attr::ReuseFollowEventDependencies, false)?;
    pool.set(attr::ReuseAllowOpportunistic, false)?;
    pool.set(attr::ReuseAllowInternalDependencies, false)?;
    Ok(pool)
}

/// Creates a pool of `granules` granules on `dev`, as the backend creates it.
fn fresh_pool<D: Device>(dev: &D, granules: u64) -> Result<D::Pool, Failure> {
    let size = granules
        .checked_mul(dev.pool_granularity())
        .ok_or_else(|| Failure::new(format!("{granules} granules overflow u64")))?;
    Ok(dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(size).build())?)
}

/// Frees `ptr` on `stream`, expecting the backend to accept it.
///
/// Contract (this helper is private to the suite): `ptr` is a live allocation that
/// `pool.malloc_async` returned to the calling scenario and that the scenario has not
/// freed. Scenarios that free bad pointers on purpose call `free_async` themselves.
fn free<P: MemPool>(pool: &P, ptr: DevicePtr, stream: &P::Stream) -> mempool_hal::Result<()> {
    // SAFETY: by this helper's contract `ptr` is the start of a live allocation of
    // `pool`, and the suite never enqueues work that touches pool memory, so no use of
    // it can be ordered after the free.
    unsafe { pool.free_async(ptr, stream) }
}

/// Contract §6 by profile (§12), right after a synchronization that, on `documented`,
/// brings RESERVED down to `target` (max(threshold, USED)): on `documented` RESERVED is
/// `target`; on `cann-open` nothing was released (RESERVED is still `before`), and
/// `trim_to(target)` then brings it to `target`. Either way RESERVED is `target` after.
fn released_at_sync<P: MemPool>(
    profile: Profile,
    pool: &P,
    before: u64,
    target: u64,
    what: fmt::Arguments<'_>,
) -> ScenarioResult {
    match profile {
        Profile::Documented | Profile::Cuda => {
            ensure_eq!(pool.get(attr::ReservedMemCurrent)?, target, "RESERVED after {what}");
        }
        Profile::CannOpen => {
            ensure_eq!(pool.get(attr::ReservedMemCurrent)?, before, "RESERVED after {what} (cann-open: no release)");
            pool.trim_to(target)?;
            ensure_eq!(pool.get(attr::ReservedMemCurrent)?, target, "RESERVED after {what} and trim_to({target})");
        }
    }
    Ok(())
}

/// `ptr + bytes`, or a failure if that overflows (a backend handing out an address at
/// the very top of the address space).
#[track_caller]
fn offset(ptr: DevicePtr, bytes: u64) -> Result<DevicePtr, Failure> {
    match ptr.checked_add(bytes) {
        Some(p) => Ok(p),
        None => Err(Failure::new(format!("{ptr} + {bytes} overflows the address space"))),
    }
}

/// How long a [`Gate`] blocker waits before giving up on its own, so that a scenario
/// that fails in an unexpected way can never hang a stream for ever.
const GATE_TIMEOUT: Duration = Duration::from_secs(60);

/// A gate that host functions wait on: it pins a stream ("the free is enqueued but has
/// not executed") until the scenario opens it.
///
/// Dropping the gate opens it, so a scenario that returns early (a failed check, an
/// unexpected error, a panic) never leaves a stream blocked.
struct Gate {
    inner: Arc<GateInner>,
}

struct GateInner {
    open: Mutex<bool>,
    opened: Condvar,
    expired: AtomicBool,
}

impl Gate {
    fn new() -> Self {
        Gate {
            inner: Arc::new(GateInner {
                open: Mutex::new(false),
                opened: Condvar::new(),
                expired: AtomicBool::new(false),
            }),
        }
    }

    /// A host function that blocks its stream until the gate opens.
    fn blocker(&self) -> HostFn {
        self.blocker_then(|| {})
    }

    /// A host function that blocks its stream until the gate opens, then runs `after`
    /// before returning.
    fn blocker_then(&self, after: impl FnOnce() + Send + 'static) -> HostFn {
        let inner = Arc::clone(&self.inner);
        Box::new(move || {
            let guard = inner.open.lock().unwrap_or_else(PoisonError::into_inner);
            let (guard, timeout) = inner
                .opened
                .wait_timeout_while(guard, GATE_TIMEOUT, |open| !*open)
                .unwrap_or_else(PoisonError::into_inner);
            drop(guard);
            if timeout.timed_out() {
                inner.expired.store(true, Ordering::SeqCst);
            }
            after();
        })
    }

    /// Opens the gate: every blocker returns.
    fn open(&self) {
        *self.inner.open.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.inner.opened.notify_all();
    }

    /// Fails if a blocker gave up waiting (the scenario's timing assumptions broke).
    #[track_caller]
    fn check_not_expired(&self) -> Result<(), Failure> {
        if self.inner.expired.load(Ordering::SeqCst) {
            return Err(Failure::new(format!("a blocking host function gave up after {GATE_TIMEOUT:?}")));
        }
        Ok(())
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

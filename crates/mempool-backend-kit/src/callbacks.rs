//! A pool behind C allocator callbacks: the object and the three functions CANN's
//! external-allocator registry takes ([contract §16](mempool_hal::contract::allocator_registry)),
//! over any [`MemPool`] and one of its streams.
//!
//! [`CallbackAllocator`] owns the object the callbacks receive (a stable heap address) and
//! hands out `extern "C"` functions, monomorphized for the pool type:
//!
//! - alloc (`void *(*)(void *obj, size_t size)`): [`MemPool::malloc_async`] of `size` bytes
//!   on the allocator's stream; the block it returns is the device address itself, NULL
//!   when the pool refuses (size 0 too);
//! - free (`void (*)(void *obj, void *block)`): [`MemPool::free_async`] of the block on the
//!   allocator's stream, so the memory is reused only after the work queued before the free;
//!   a block the allocator did not hand out (NULL, foreign, freed already) never reaches
//!   the pool;
//! - getAddrFromBlock (`void *(*)(void *block)`): the block, which is its address.
//!
//! A callback never panics or unwinds into C: an error or a caught panic is counted
//! ([`CallbackAllocator::failures`]) and kept ([`CallbackAllocator::last_error`]), and alloc
//! answers NULL. Nothing here calls a runtime: the Ascend backend registers the object and
//! functions with the runtime's registry.

use mempool_hal::{DevicePtr, Error, ErrorKind, MemPool, Result, code};
use std::collections::HashMap;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// `void *(*)(void *obj, size_t size)`: CANN's `aclrtAllocatorAllocFunc`.
pub type AllocFn = unsafe extern "C" fn(obj: *mut c_void, size: usize) -> *mut c_void;
/// `void (*)(void *obj, void *block)`: CANN's `aclrtAllocatorFreeFunc`.
pub type FreeFn = unsafe extern "C" fn(obj: *mut c_void, block: *mut c_void);
/// `void *(*)(void *block)`: CANN's `aclrtAllocatorGetAddrFromBlockFunc`.
pub type GetAddrFn = unsafe extern "C" fn(block: *mut c_void) -> *mut c_void;

/// What the callbacks' object points to.
struct Inner<P: MemPool> {
    pool: Arc<P>,
    stream: P::Stream,
    /// The blocks handed out and not yet freed: address to size.
    live: Mutex<HashMap<u64, u64>>,
    allocs: AtomicU64,
    frees: AtomicU64,
    failures: AtomicU64,
    last_error: Mutex<Option<Error>>,
}

impl<P: MemPool> Inner<P> {
    fn fail(&self, e: Error) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
    }

    fn alloc(&self, size: usize) -> Result<u64> {
        let ptr = self.pool.malloc_async(size as u64, &self.stream)?;
        self.live.lock().unwrap_or_else(PoisonError::into_inner).insert(ptr.addr(), size as u64);
        self.allocs.fetch_add(1, Ordering::Relaxed);
        Ok(ptr.addr())
    }

    fn free(&self, addr: u64) -> Result<()> {
        let Some(size) = self.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&addr) else {
            return Err(Error::invalid_pointer(
                "allocator free callback",
                format!("block {addr:#x} was not handed out by this allocator, or is freed already"),
            ));
        };
        // SAFETY: the block was handed out by this allocator and is freed once (it just
        // left `live`). The caller of the free callback (CANN's operator layer) frees a
        // workspace after queueing its kernels on the same stream, so every use is ordered
        // before this stream-ordered free; the emulator's checker reports one that is not.
        if let Err(e) = unsafe { self.pool.free_async(DevicePtr::from_addr(addr), &self.stream) } {
            self.live.lock().unwrap_or_else(PoisonError::into_inner).insert(addr, size);
            return Err(e);
        }
        self.frees.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// A pool and one of its streams behind C allocator callbacks (see the [module docs](self)).
///
/// Dropping it frees, in stream order on its stream, the blocks still handed out; drop it
/// only when no caller will use the object or the functions again (for CANN: after the
/// registration is gone and no operator still queued holds a workspace the host would
/// free later).
pub struct CallbackAllocator<P: MemPool + 'static>
where
    P::Stream: Send + Sync,
{
    inner: Box<Inner<P>>,
}

impl<P: MemPool + 'static> std::fmt::Debug for CallbackAllocator<P>
where
    P::Stream: Send + Sync,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackAllocator")
            .field("object", &self.object())
            .field("live_blocks", &self.live_blocks())
            .field("failures", &self.failures())
            .finish()
    }
}

impl<P: MemPool + 'static> CallbackAllocator<P>
where
    P::Stream: Send + Sync,
{
    /// Callbacks that allocate from `pool` on `stream`.
    pub fn new(pool: Arc<P>, stream: P::Stream) -> Self {
        CallbackAllocator {
            inner: Box::new(Inner {
                pool,
                stream,
                live: Mutex::new(HashMap::new()),
                allocs: AtomicU64::new(0),
                frees: AtomicU64::new(0),
                failures: AtomicU64::new(0),
                last_error: Mutex::new(None),
            }),
        }
    }

    /// The object every callback takes (`aclrtAllocator`): valid while `self` lives.
    pub fn object(&self) -> *mut c_void {
        std::ptr::from_ref::<Inner<P>>(&self.inner).cast_mut().cast()
    }

    /// The alloc callback.
    pub fn alloc_fn(&self) -> AllocFn {
        alloc_callback::<P>
    }

    /// The free callback.
    pub fn free_fn(&self) -> FreeFn {
        free_callback::<P>
    }

    /// The getAddrFromBlock callback.
    pub fn get_addr_fn(&self) -> GetAddrFn {
        get_addr_callback
    }

    /// The pool.
    pub fn pool(&self) -> &Arc<P> {
        &self.inner.pool
    }

    /// The stream the callbacks allocate and free on.
    pub fn stream(&self) -> &P::Stream {
        &self.inner.stream
    }

    /// How many blocks are handed out and not freed.
    pub fn live_blocks(&self) -> usize {
        self.inner.live.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// How many blocks the alloc callback handed out, and how many the free callback freed.
    pub fn counts(&self) -> (u64, u64) {
        (self.inner.allocs.load(Ordering::Relaxed), self.inner.frees.load(Ordering::Relaxed))
    }

    /// How many callback calls failed (an alloc that answered NULL, a free refused).
    pub fn failures(&self) -> u64 {
        self.inner.failures.load(Ordering::Relaxed)
    }

    /// The error of the last failed callback call.
    pub fn last_error(&self) -> Option<Error> {
        self.inner.last_error.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl<P: MemPool + 'static> Drop for CallbackAllocator<P>
where
    P::Stream: Send + Sync,
{
    fn drop(&mut self) {
        let left: Vec<u64> = self.inner.live.lock().unwrap_or_else(PoisonError::into_inner).keys().copied().collect();
        for addr in left {
            // Errors have no one to go to here; the pool keeps what it refuses.
            let _ = self.inner.free(addr);
        }
    }
}

/// The error kept for a panic caught in a callback.
fn panic_error(op: &'static str) -> Error {
    Error::new(ErrorKind::Internal, code::ACL_ERROR_RT_INTERNAL_ERROR, op, "panic caught at the C boundary")
}

/// The alloc callback of [`CallbackAllocator<P>`].
///
/// # Safety
///
/// `obj` is NULL or the [`CallbackAllocator::object`] of a live `CallbackAllocator<P>`.
unsafe extern "C" fn alloc_callback<P: MemPool + 'static>(obj: *mut c_void, size: usize) -> *mut c_void
where
    P::Stream: Send + Sync,
{
    if obj.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: non-null, and by the function's contract the object of a live allocator of
    // this pool type; only shared access is taken (its state is behind locks and atomics).
    let inner = unsafe { &*obj.cast_const().cast::<Inner<P>>() };
    match catch_unwind(AssertUnwindSafe(|| inner.alloc(size))) {
        Ok(Ok(addr)) => addr as *mut c_void,
        Ok(Err(e)) => {
            inner.fail(e);
            std::ptr::null_mut()
        }
        Err(_) => {
            inner.fail(panic_error("allocator alloc callback"));
            std::ptr::null_mut()
        }
    }
}

/// The free callback of [`CallbackAllocator<P>`].
///
/// # Safety
///
/// As [`alloc_callback`].
unsafe extern "C" fn free_callback<P: MemPool + 'static>(obj: *mut c_void, block: *mut c_void)
where
    P::Stream: Send + Sync,
{
    if obj.is_null() {
        return;
    }
    // SAFETY: as in `alloc_callback`.
    let inner = unsafe { &*obj.cast_const().cast::<Inner<P>>() };
    match catch_unwind(AssertUnwindSafe(|| inner.free(block as u64))) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => inner.fail(e),
        Err(_) => inner.fail(panic_error("allocator free callback")),
    }
}

/// The getAddrFromBlock callback: a block is its device address.
extern "C" fn get_addr_callback(block: *mut c_void) -> *mut c_void {
    block
}

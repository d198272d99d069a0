//! [`AscendPool`] and its [`MemPool`] implementation: the hot path of the backend.

use super::{Ascend, AscendStream, Handle, Shared};
use crate::result::{self, pool::PoolCalls};
use crate::sys;
use mempool_backend_kit::context::InstanceContext;
use mempool_backend_kit::pool::{OomCase, OomRetry, checked_size, out_of_memory};
use mempool_hal::attr::AttrId;
use mempool_hal::{DevicePtr, Error, ErrorKind, MemPool, MemPoolExt, PoolCall, RawAttrValue, Result, code, round_up};
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// A pool of the Ascend backend.
#[derive(Clone)]
pub struct AscendPool {
    pub(super) handle: Arc<Handle>,
    shared: Arc<Shared>,
    size: u64,
    /// The device's pool granularity when the pool was made (1 for the probe's pool),
    /// for the rounding-overflow check of `malloc_async`.
    granularity: u64,
    calls: PoolCalls,
    /// The retry after out-of-memory with cached bytes, and its count (shared by the
    /// pool's clones).
    oom_retry: OomRetry,
}

impl fmt::Debug for AscendPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AscendPool")
            .field("raw", &format_args!("{:#x}", self.handle.raw()))
            .field("size", &self.size)
            .field("oom_retries", &self.oom_retries())
            .finish()
    }
}

impl Ascend {
    /// The backend's pool for the runtime's `pool`.
    pub(super) fn pool_handle(&self, pool: sys::aclrtMemPool, size: u64, granularity: u64) -> AscendPool {
        AscendPool {
            handle: Handle::new(pool, self.shared.instance),
            shared: Arc::clone(&self.shared),
            size,
            granularity,
            calls: PoolCalls::resolve(&self.shared.rt),
            oom_retry: OomRetry::default(),
        }
    }
}

impl AscendPool {
    /// The runtime's `aclrtMemPool`, to pass to other CANN calls. It is valid until the
    /// pool is destroyed through the backend; using it is up to the caller's own `unsafe`
    /// code.
    pub fn as_raw(&self) -> sys::aclrtMemPool {
        self.handle.raw() as sys::aclrtMemPool
    }

    /// The raw pool, checked live, with the device's context current; a destroyed pool
    /// answers with the code CANN gives for `call`.
    #[inline]
    fn raw(&self, op: &'static str, call: PoolCall) -> Result<sys::aclrtMemPool> {
        if !self.handle.is_live_in(self.shared.instance) {
            return Err(Error::destroyed_pool(op, call, "pool"));
        }
        self.shared.enter()?;
        Ok(self.as_raw())
    }

    /// The raw stream of `s`, checked live (the context is entered by the caller).
    #[inline]
    fn stream(&self, s: &AscendStream, op: &'static str) -> Result<sys::aclrtStream> {
        Ok(self.shared.live(&s.0, op, "stream")? as sys::aclrtStream)
    }

    /// How many allocations of this pool met out-of-memory while the pool held cached
    /// bytes (RESERVED > USED) and were retried after synchronizing the instance's
    /// streams and trimming the pool to USED (contract §12). Each such allocation counts
    /// once, whether its retry succeeded or not. No retry is made when a pool trimmed to
    /// USED would still be too small for the request.
    ///
    /// A runtime that never reuses freed blocks (the open CANN runtime: every
    /// `aclrtMemPoolMallocAsync` takes fresh address space, and only a trim gives cached
    /// blocks back) makes this grow in a steady allocate/free loop; a runtime that reuses
    /// them keeps it at 0. A trace recorder sees only the allocation that finally
    /// succeeded or failed: read this counter through its wrapped pool
    /// (`RecordingPool::inner` in `mempool-trace`).
    pub fn oom_retries(&self) -> u64 {
        self.oom_retry.count()
    }

    /// The answer to an out-of-memory `aclrtMemPoolMallocAsync` of `size` bytes (`n` as
    /// `size_t`): the kit's [`OomRetry`] policy, with the instance's streams synchronized
    /// before the trim (CANN's trim does not wait for queued frees).
    #[cold]
    #[inline(never)]
    fn after_oom(
        &self,
        op: &'static str,
        size: u64,
        n: usize,
        pool: sys::aclrtMemPool,
        stream: sys::aclrtStream,
    ) -> Result<*mut c_void> {
        let requested = round_up(size, self.granularity).unwrap_or(size);
        let case = OomCase { requested, pool_size: self.size, stats: self.stats().unwrap_or_default(), said: None };
        self.oom_retry.after_oom(
            case,
            || {
                result::device::synchronize(&self.shared.rt)?;
                let used = self.stats()?.used_current;
                self.trim_to(used)?;
                Ok(used)
            },
            |give_up| result::pool::malloc_async(&self.shared.rt, &self.calls, pool, n, stream, || Err(give_up(None))),
            |tried| self.oom(op, requested, tried),
        )
    }

    /// The pool's out-of-memory error for a request of `requested` bytes, with its
    /// statistics, and `what` was tried, at the end of its message.
    fn oom(&self, op: &'static str, requested: u64, tried: String) -> Error {
        out_of_memory(op, requested, self.stats().unwrap_or_default(), self.size, None, &tried)
    }

    /// The body of [`MemPool::free_async`], for this crate's own callers: they owe what
    /// that method's contract asks (`ptr` is a live allocation of this device, every use
    /// of it ordered before the free on `stream`).
    #[inline]
    pub(super) fn free_ordered(&self, ptr: DevicePtr, stream: &AscendStream) -> Result<()> {
        const OP: &str = "aclrtMemPoolFreeAsync";
        let s = self.stream(stream, OP)?;
        self.shared.enter()?;
        if ptr.is_null() {
            return Err(null_free());
        }
        result::pool::free_async(&self.shared.rt, &self.calls, ptr.addr() as usize as *mut c_void, s)
    }
}

impl MemPool for AscendPool {
    type Stream = AscendStream;

    #[inline]
    fn malloc_async(&self, size: u64, stream: &AscendStream) -> Result<DevicePtr> {
        const OP: &str = "aclrtMemPoolMallocAsync";
        let s = self.stream(stream, OP)?;
        let pool = self.raw(OP, PoolCall::Lifetime)?;
        let n = checked_size(OP, size, self.granularity)?;
        let p = result::pool::malloc_async(&self.shared.rt, &self.calls, pool, n, s, || {
            self.after_oom(OP, size, n, pool, s)
        })?;
        Ok(DevicePtr::from_addr(p as u64))
    }

    #[allow(unsafe_code)]
    #[inline]
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &AscendStream) -> Result<()> {
        self.free_ordered(ptr, stream)
    }

    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        const OP: &str = "aclrtMemPoolTrimTo";
        if !self.handle.is_live_in(self.shared.instance) {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, "pool"));
        }
        self.shared.enter_checked()?;
        let pool = self.as_raw();
        let keep = usize::try_from(min_bytes_to_keep).unwrap_or(usize::MAX);
        result::pool::trim_to(&self.shared.rt, pool, keep)
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        const OP: &str = "aclrtMemPoolGetAttr";
        if !self.handle.is_live_in(self.shared.instance) {
            return Err(Error::destroyed_pool(OP, PoolCall::Attribute, "pool"));
        }
        self.shared.enter_checked()?;
        let pool = self.as_raw();
        result::pool::get_attr(&self.shared.rt, pool, attr)
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        const OP: &str = "aclrtMemPoolSetAttr";
        if let Some(info) = attr.info() {
            if info.width != value.width() {
                return Err(Error::invalid_param(OP, format!("{attr:?} takes a {:?} value", info.width)));
            }
        }
        if !self.handle.is_live_in(self.shared.instance) {
            return Err(Error::destroyed_pool(OP, PoolCall::Attribute, "pool"));
        }
        self.shared.enter_checked()?;
        let pool = self.as_raw();
        result::pool::set_attr(&self.shared.rt, pool, attr, value)
    }

    fn size(&self) -> u64 {
        self.size
    }

    // `stats_snapshot` keeps the provided four reads of `get_attr_raw`: the runtime has no
    // call that reads several attributes of a pool together, so counters read while
    // another thread allocates, frees or trims may come from different instants.
}

/// A null pointer given to `free_async`: `InvalidPointer`, code 100000 (a null argument).
#[cold]
#[inline(never)]
fn null_free() -> Error {
    Error::new(ErrorKind::InvalidPointer, code::ACL_ERROR_INVALID_PARAM, "aclrtMemPoolFreeAsync", "null pointer")
}

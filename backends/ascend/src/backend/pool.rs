//! [`AscendPool`] and its [`MemPool`] implementation: the hot path of the backend.

use super::{Ascend, AscendStream, Handle, Shared};
use crate::result::{self, pool::PoolCalls};
use crate::sys;
use mempool_hal::attr::AttrId;
use mempool_hal::{
    DevicePtr, Error, ErrorKind, MemPool, MemPoolExt, OomInfo, PoolCall, RawAttrValue, Result, code, round_up,
};
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
}

impl fmt::Debug for AscendPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AscendPool")
            .field("raw", &format_args!("{:#x}", self.handle.raw))
            .field("size", &self.size)
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
        }
    }
}

impl AscendPool {
    /// The runtime's `aclrtMemPool`, to pass to other CANN calls. It is valid until the
    /// pool is destroyed through the backend; using it is up to the caller's own `unsafe`
    /// code.
    pub fn as_raw(&self) -> sys::aclrtMemPool {
        self.handle.raw as sys::aclrtMemPool
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

    /// The pool's out-of-memory error for a request of `requested` bytes, with its
    /// statistics.
    fn oom(&self, op: &'static str, requested: u64) -> Error {
        let stats = self.stats().unwrap_or_default();
        Error::out_of_memory(
            op,
            OomInfo {
                requested,
                stats,
                pool_size: self.size,
                // The runtime does not report its free ranges; what is certainly free is
                // the address space the pool has not reserved, as one upper bound.
                largest_free_range: self.size.saturating_sub(stats.reserved_current),
                largest_cached_block: stats.reserved_current - stats.used_current.min(stats.reserved_current),
            },
        )
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
        if size == 0 {
            return Err(Error::invalid_param(OP, "size 0"));
        }
        let n = match usize::try_from(size) {
            Ok(n) if round_up(size, self.granularity).is_some() => n,
            _ => return Err(Error::invalid_param(OP, "size overflows when rounded")),
        };
        let p = result::pool::malloc_async(&self.shared.rt, &self.calls, pool, n, s, || {
            self.oom(OP, round_up(size, self.granularity).unwrap_or(size))
        })?;
        Ok(DevicePtr::from_addr(p as u64))
    }

    #[allow(unsafe_code)]
    #[inline]
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &AscendStream) -> Result<()> {
        self.free_ordered(ptr, stream)
    }

    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        let pool = self.raw("aclrtMemPoolTrimTo", PoolCall::Lifetime)?;
        let keep = usize::try_from(min_bytes_to_keep).unwrap_or(usize::MAX);
        result::pool::trim_to(&self.shared.rt, pool, keep)
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        let pool = self.raw("aclrtMemPoolGetAttr", PoolCall::Attribute)?;
        result::pool::get_attr(&self.shared.rt, pool, attr)
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        const OP: &str = "aclrtMemPoolSetAttr";
        if let Some(info) = attr.info() {
            if info.width != value.width() {
                return Err(Error::invalid_param(OP, format!("{attr:?} takes a {:?} value", info.width)));
            }
        }
        let pool = self.raw(OP, PoolCall::Attribute)?;
        result::pool::set_attr(&self.shared.rt, pool, attr, value)
    }

    fn size(&self) -> u64 {
        self.size
    }
}

/// A null pointer given to `free_async`: `InvalidPointer`, code 100000 (a null argument).
#[cold]
#[inline(never)]
fn null_free() -> Error {
    Error::new(ErrorKind::InvalidPointer, code::ACL_ERROR_INVALID_PARAM, "aclrtMemPoolFreeAsync", "null pointer")
}

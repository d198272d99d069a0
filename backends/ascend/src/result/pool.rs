//! Memory pools: `aclrtMemPoolCreate`, `aclrtMemPoolDestroy`, `aclrtMemPoolMallocAsync`,
//! `aclrtMemPoolFreeAsync`, `aclrtMemPoolTrimTo`, `aclrtMemPoolGetAttr`,
//! `aclrtMemPoolSetAttr`.

use super::{attr_kind, kind_of, malloc_out_of_memory, pointer_kind, trim_kind};
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::attr::{AttrId, AttrWidth};
use mempool_hal::{RawAttrValue, Result, code};
use std::ffi::c_void;
use std::sync::OnceLock;

/// The runtime calls of a pool's hot path, resolved when the pool is made so that each
/// allocation and free is one indirect call with no symbol lookup. `None` where the runtime
/// lacks the symbol: the call then resolves it again for the `NotSupported` error.
#[derive(Clone, Copy)]
pub(crate) struct PoolCalls {
    malloc: Option<sys::fns::aclrtMemPoolMallocAsync>,
    free: Option<sys::fns::aclrtMemPoolFreeAsync>,
}

impl PoolCalls {
    /// Resolves the hot-path calls of `rt`.
    pub(crate) fn resolve(rt: &Runtime) -> PoolCalls {
        PoolCalls { malloc: sym!(rt, aclrtMemPoolMallocAsync).ok(), free: sym!(rt, aclrtMemPoolFreeAsync).ok() }
    }
}

/// A hot-path symbol the pool found missing when it was made, resolved through the
/// loader's slot again, off the hot path: the loader's `NotSupported` error naming it.
#[cold]
#[inline(never)]
fn resolve_late<F: Copy>(rt: &Runtime, slot: &OnceLock<Option<F>>, name: &'static str) -> Result<F> {
    rt.resolve(slot, name)
}

/// `aclrtMemPoolCreate` with `props`.
#[inline]
pub(crate) fn create(rt: &Runtime, props: &sys::aclrtMemPoolProps) -> Result<sys::aclrtMemPool> {
    let f = sym!(rt, aclrtMemPoolCreate)?;
    let mut pool: sys::aclrtMemPool = std::ptr::null_mut();
    // SAFETY: valid out-pointer and a properly laid out props struct (checked at compile
    // time in `sys`).
    rt.check(unsafe { f(&mut pool, props) }, "aclrtMemPoolCreate")?;
    Ok(pool)
}

/// `aclrtMemPoolDestroy`.
#[inline]
pub(crate) fn destroy(rt: &Runtime, pool: sys::aclrtMemPool) -> Result<()> {
    let f = sym!(rt, aclrtMemPoolDestroy)?;
    // SAFETY: the caller passes a live pool that it will never pass to the runtime again
    // (see the module docs of `result`).
    rt.check(unsafe { f(pool) }, "aclrtMemPoolDestroy")
}

/// `aclrtMemPoolMallocAsync` of `size` bytes through the cached `calls`. On the pool's
/// out-of-memory answer (507000) the answer is what `on_oom()` makes of it (a retry, or
/// the error with the pool's statistics, which only the caller knows); the runtime's
/// message is taken first either way (a later call would overwrite it). `on_oom` runs
/// only on that cold path.
#[inline]
pub(crate) fn malloc_async(
    rt: &Runtime,
    calls: &PoolCalls,
    pool: sys::aclrtMemPool,
    size: usize,
    stream: sys::aclrtStream,
    on_oom: impl FnOnce() -> Result<*mut c_void>,
) -> Result<*mut c_void> {
    const OP: &str = "aclrtMemPoolMallocAsync";
    let f = match calls.malloc {
        Some(f) => f,
        None => resolve_late(rt, &rt.symbols().aclrtMemPoolMallocAsync, OP)?,
    };
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the caller passes a live pool and a live stream.
    let rc = unsafe { f(&mut p, size, pool, stream) };
    if rc != code::ACL_SUCCESS {
        return malloc_failed(rt, rc, on_oom);
    }
    Ok(p)
}

/// The answer to a failed `aclrtMemPoolMallocAsync`.
#[cold]
#[inline(never)]
fn malloc_failed(rt: &Runtime, rc: i32, on_oom: impl FnOnce() -> Result<*mut c_void>) -> Result<*mut c_void> {
    if malloc_out_of_memory(rc) {
        let _ = rt.recent_error_message();
        return on_oom();
    }
    Err(rt.failure(rc, "aclrtMemPoolMallocAsync", kind_of(rc)))
}

/// `aclrtMemPoolFreeAsync` of `ptr` through the cached `calls`. An address that is not
/// a live allocation is `InvalidPointer`.
///
/// The caller owes what [`MemPool::free_async`](mempool_hal::MemPool::free_async) asks:
/// `ptr` is a live allocation and every use of it is ordered before this free.
#[inline]
pub(crate) fn free_async(rt: &Runtime, calls: &PoolCalls, ptr: *mut c_void, stream: sys::aclrtStream) -> Result<()> {
    const OP: &str = "aclrtMemPoolFreeAsync";
    let f = match calls.free {
        Some(f) => f,
        None => resolve_late(rt, &rt.symbols().aclrtMemPoolFreeAsync, OP)?,
    };
    // SAFETY: the caller guarantees `ptr` is a live allocation with every use ordered
    // before this free (the trait's contract) and passes a live stream.
    let rc = unsafe { f(ptr, stream) };
    rt.check_with(rc, OP, pointer_kind)
}

/// `aclrtMemPoolTrimTo`.
#[inline]
pub(crate) fn trim_to(rt: &Runtime, pool: sys::aclrtMemPool, min_bytes_to_keep: usize) -> Result<()> {
    let f = sym!(rt, aclrtMemPoolTrimTo)?;
    // SAFETY: the caller passes a live pool.
    let rc = unsafe { f(pool, min_bytes_to_keep) };
    rt.check_with(rc, "aclrtMemPoolTrimTo", trim_kind)
}

/// `aclrtMemPoolGetAttr`: the value in the attribute's width (a 64-bit value for an id
/// the table does not know).
#[inline]
pub(crate) fn get_attr(rt: &Runtime, pool: sys::aclrtMemPool, attr: AttrId) -> Result<RawAttrValue> {
    let f = sym!(rt, aclrtMemPoolGetAttr)?;
    let id = i32::try_from(attr.0).unwrap_or(i32::MAX);
    // Room for the widest value, whatever the id.
    let mut buf = 0u64;
    // SAFETY: the caller passes a live pool; `buf` has room for a u32 or a u64 value.
    let rc = unsafe { f(pool, id, (&mut buf as *mut u64).cast()) };
    rt.check_with(rc, "aclrtMemPoolGetAttr", |rc| attr_kind(attr, rc))?;
    Ok(match attr.info().map(|i| i.width) {
        Some(AttrWidth::U32) => {
            RawAttrValue::U32(u32::from_ne_bytes(buf.to_ne_bytes()[..4].try_into().unwrap_or([0; 4])))
        }
        _ => RawAttrValue::U64(buf),
    })
}

/// `aclrtMemPoolSetAttr` with `value` in its own width.
#[inline]
pub(crate) fn set_attr(rt: &Runtime, pool: sys::aclrtMemPool, attr: AttrId, value: RawAttrValue) -> Result<()> {
    let f = sym!(rt, aclrtMemPoolSetAttr)?;
    let id = i32::try_from(attr.0).unwrap_or(i32::MAX);
    let mut buf = match value {
        RawAttrValue::U32(v) => {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&v.to_ne_bytes());
            u64::from_ne_bytes(b)
        }
        RawAttrValue::U64(v) => v,
    };
    // SAFETY: the caller passes a live pool; `buf` holds the value at its start in its
    // width.
    let rc = unsafe { f(pool, id, (&mut buf as *mut u64).cast()) };
    rt.check_with(rc, "aclrtMemPoolSetAttr", |rc| attr_kind(attr, rc))
}

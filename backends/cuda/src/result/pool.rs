//! Memory pools: `cuMemPoolCreate`, `cuMemPoolDestroy`, `cuMemAllocFromPoolAsync`,
//! `cuMemAllocAsync`, `cuMemFreeAsync`, `cuMemPoolTrimTo`, `cuMemPoolGetAttribute`,
//! `cuMemPoolSetAttribute`.

use super::{attr_kind, kind_of, malloc_out_of_memory, pointer_kind};
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::attr::{AttrId, AttrWidth};
use mempool_hal::{Error, RawAttrValue, Result};
use std::ffi::c_int;
use std::sync::OnceLock;

/// The driver calls of a pool's hot path, resolved when the pool is made so that each
/// allocation and free is one indirect call with no symbol lookup. `None` where the driver
/// lacks the symbol: the call then resolves it again for the `NotSupported` error.
#[derive(Clone, Copy)]
pub(crate) struct PoolCalls {
    malloc: Option<sys::fns::cuMemAllocFromPoolAsync>,
    free: Option<sys::fns::cuMemFreeAsync>,
}

impl PoolCalls {
    /// Resolves the hot-path calls of `rt`.
    pub(crate) fn resolve(rt: &Runtime) -> PoolCalls {
        PoolCalls { malloc: sym!(rt, cuMemAllocFromPoolAsync).ok(), free: sym!(rt, cuMemFreeAsync).ok() }
    }
}

/// A hot-path symbol the pool found missing when it was made, resolved through the
/// loader's slot again, off the hot path: the loader's `NotSupported` error naming it.
#[cold]
#[inline(never)]
fn resolve_late<F: Copy>(rt: &Runtime, slot: &OnceLock<Option<F>>, name: &'static str) -> Result<F> {
    rt.resolve(slot, name)
}

/// `cuMemPoolCreate` with `props`.
#[inline]
pub(crate) fn create(rt: &Runtime, props: &sys::CUmemPoolProps) -> Result<sys::CUmemoryPool> {
    let f = sym!(rt, cuMemPoolCreate)?;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: a valid out-pointer and a properly laid out props struct (checked at compile
    // time in `sys`), whose Windows pointer is null.
    rt.check(unsafe { f(&mut pool, props) }, "cuMemPoolCreate")?;
    Ok(pool)
}

/// `cuMemPoolDestroy`. The driver keeps the memory of allocations still live, or of frees
/// not yet run, until they are done.
#[inline]
pub(crate) fn destroy(rt: &Runtime, pool: sys::CUmemoryPool) -> Result<()> {
    let f = sym!(rt, cuMemPoolDestroy)?;
    // SAFETY: the caller passes a live pool it created and will never pass to the driver
    // again (see the module docs of `result`).
    rt.check(unsafe { f(pool) }, "cuMemPoolDestroy")
}

/// `cuMemAllocFromPoolAsync` of `size` bytes through the cached `calls`. On the
/// out-of-memory answer (2) the answer is what `on_oom` makes of the driver's error (a
/// retry, or the error with the pool's statistics, which only the caller knows); `on_oom`
/// runs only on that cold path.
#[inline]
pub(crate) fn malloc_async(
    rt: &Runtime,
    calls: &PoolCalls,
    pool: sys::CUmemoryPool,
    size: usize,
    stream: sys::CUstream,
    on_oom: impl FnOnce(Error) -> Result<sys::CUdeviceptr>,
) -> Result<sys::CUdeviceptr> {
    const OP: &str = "cuMemAllocFromPoolAsync";
    let f = match calls.malloc {
        Some(f) => f,
        None => resolve_late(rt, &rt.symbols().cuMemAllocFromPoolAsync, OP)?,
    };
    let mut p: sys::CUdeviceptr = 0;
    // SAFETY: a valid out-pointer; the caller passes a live pool and a live stream.
    let rc = unsafe { f(&mut p, size, pool, stream) };
    if rc != sys::CUDA_SUCCESS {
        return malloc_failed(rt, rc, OP, on_oom);
    }
    Ok(p)
}

/// `cuMemAllocAsync` of `size` bytes from the current pool of the stream's device, with
/// the same out-of-memory handling as [`malloc_async`].
#[inline]
pub(crate) fn malloc_async_current(
    rt: &Runtime,
    size: usize,
    stream: sys::CUstream,
    on_oom: impl FnOnce(Error) -> Result<sys::CUdeviceptr>,
) -> Result<sys::CUdeviceptr> {
    const OP: &str = "cuMemAllocAsync";
    let f = sym!(rt, cuMemAllocAsync)?;
    let mut p: sys::CUdeviceptr = 0;
    // SAFETY: a valid out-pointer; the caller passes a live stream.
    let rc = unsafe { f(&mut p, size, stream) };
    if rc != sys::CUDA_SUCCESS {
        return malloc_failed(rt, rc, OP, on_oom);
    }
    Ok(p)
}

/// The answer to a failed allocation.
#[cold]
#[inline(never)]
fn malloc_failed(
    rt: &Runtime,
    rc: sys::CUresult,
    op: &'static str,
    on_oom: impl FnOnce(Error) -> Result<sys::CUdeviceptr>,
) -> Result<sys::CUdeviceptr> {
    let e = rt.failure(rc, op, kind_of(rc));
    if malloc_out_of_memory(rc) { on_oom(e) } else { Err(e) }
}

/// `cuMemFreeAsync` of `ptr` through the cached `calls`. An address that is not a live
/// allocation is `InvalidPointer`.
///
/// The caller owes what [`MemPool::free_async`](mempool_hal::MemPool::free_async) asks:
/// `ptr` is a live allocation and every use of it is ordered before this free.
#[inline]
pub(crate) fn free_async(rt: &Runtime, calls: &PoolCalls, ptr: sys::CUdeviceptr, stream: sys::CUstream) -> Result<()> {
    const OP: &str = "cuMemFreeAsync";
    let f = match calls.free {
        Some(f) => f,
        None => resolve_late(rt, &rt.symbols().cuMemFreeAsync, OP)?,
    };
    // SAFETY: the caller guarantees `ptr` is a live allocation with every use ordered
    // before this free (the trait's contract) and passes a live stream.
    let rc = unsafe { f(ptr, stream) };
    rt.check_with(rc, OP, pointer_kind)
}

/// `cuMemPoolTrimTo`: releases cached memory whose frees have run, keeping at least
/// `min_bytes_to_keep` reserved.
#[inline]
pub(crate) fn trim_to(rt: &Runtime, pool: sys::CUmemoryPool, min_bytes_to_keep: usize) -> Result<()> {
    let f = sym!(rt, cuMemPoolTrimTo)?;
    // SAFETY: the caller passes a live pool.
    rt.check(unsafe { f(pool, min_bytes_to_keep) }, "cuMemPoolTrimTo")
}

/// The driver's number of an attribute id: a known key's through
/// [`sys::mempool_attribute`]; an unknown id as it is, for the driver to refuse.
fn attr_number(attr: AttrId) -> sys::CUmemPool_attribute {
    match attr.key() {
        Some(key) => sys::mempool_attribute(key),
        None => c_int::try_from(attr.0).unwrap_or(c_int::MAX),
    }
}

/// `cuMemPoolGetAttribute`: the value in its C type, `int` for a [`AttrWidth::U32`]
/// attribute (the reuse flags), `cuuint64_t` for a [`AttrWidth::U64`] one, returned at the
/// portable width.
#[inline]
pub(crate) fn get_attr(rt: &Runtime, pool: sys::CUmemoryPool, attr: AttrId, width: AttrWidth) -> Result<RawAttrValue> {
    const OP: &str = "cuMemPoolGetAttribute";
    let f = sym!(rt, cuMemPoolGetAttribute)?;
    match width {
        AttrWidth::U32 => {
            let mut v: c_int = 0;
            // SAFETY: the caller passes a live pool; `v` is the `int` this attribute is.
            let rc = unsafe { f(pool, attr_number(attr), (&mut v as *mut c_int).cast()) };
            rt.check_with(rc, OP, |rc| attr_kind(attr, rc))?;
            Ok(RawAttrValue::U32(u32::from_ne_bytes(v.to_ne_bytes())))
        }
        AttrWidth::U64 => {
            let mut v: u64 = 0;
            // SAFETY: the caller passes a live pool; `v` is the `cuuint64_t` this
            // attribute is.
            let rc = unsafe { f(pool, attr_number(attr), (&mut v as *mut u64).cast()) };
            rt.check_with(rc, OP, |rc| attr_kind(attr, rc))?;
            Ok(RawAttrValue::U64(v))
        }
    }
}

/// `cuMemPoolSetAttribute` with `value` in its C type: an [`RawAttrValue::U32`] as an
/// `int`, an [`RawAttrValue::U64`] as a `cuuint64_t`.
#[inline]
pub(crate) fn set_attr(rt: &Runtime, pool: sys::CUmemoryPool, attr: AttrId, value: RawAttrValue) -> Result<()> {
    const OP: &str = "cuMemPoolSetAttribute";
    let f = sym!(rt, cuMemPoolSetAttribute)?;
    let rc = match value {
        RawAttrValue::U32(v) => {
            let mut v = c_int::from_ne_bytes(v.to_ne_bytes());
            // SAFETY: the caller passes a live pool; `v` is the `int` this attribute is.
            unsafe { f(pool, attr_number(attr), (&mut v as *mut c_int).cast()) }
        }
        RawAttrValue::U64(v) => {
            let mut v = v;
            // SAFETY: the caller passes a live pool; `v` is the `cuuint64_t` this
            // attribute is.
            unsafe { f(pool, attr_number(attr), (&mut v as *mut u64).cast()) }
        }
    };
    rt.check_with(rc, OP, |rc| attr_kind(attr, rc))
}

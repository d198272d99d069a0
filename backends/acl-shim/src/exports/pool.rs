//! The pool calls (`aclrtMemPool*`).

use super::prelude::*;

/// `aclError aclrtMemPoolCreate(aclrtMemPool *pool, const aclrtMemPoolProps *props)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolCreate(pool: *mut aclrtMemPool, props: *const aclrtMemPoolProps) -> aclError {
    const OP: &str = "aclrtMemPoolCreate";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        non_null(props, OP, "props")?;
        let s = shim(OP)?;
        let d = current(OP)?;
        // SAFETY: non-null, and the caller passes a readable props struct; read unaligned
        // in case C placed it oddly.
        let c = unsafe { props.read_unaligned() };
        let p = s.dev(d).create_pool(&PoolProps::from(&c))?;
        let h = s.pools.insert(p);
        // SAFETY: non-null, and the caller passes a writable `aclrtMemPool`.
        unsafe { pool.write(h as aclrtMemPool) };
        Ok(())
    })
}

/// `aclError aclrtMemPoolDestroy(aclrtMemPool pool)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolDestroy(pool: aclrtMemPool) -> aclError {
    const OP: &str = "aclrtMemPoolDestroy";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        // CANN looks the pool up before it needs the context.
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
        let dev = s.dev(current(OP)?);
        s.pools.remove(pool as usize);
        dev.destroy_pool(&p)
    })
}

/// Attributes 4-8 need a current context (107002): CANN reads the current context's
/// device for them (and crashes without one); the reuse flags 1-3 do not.
fn needs_context(id: AttrId, op: &'static str) -> mempool_hal::Result<()> {
    if id.0 >= 4 {
        current(op)?;
    }
    Ok(())
}

fn attr_width(attr: aclrtMemPoolAttr, op: &'static str) -> mempool_hal::Result<(AttrId, AttrWidth)> {
    let Ok(id) = u32::try_from(attr).map(AttrId) else {
        return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("unknown pool attribute id {attr}")));
    };
    let info = id.check_read().map_err(|e| e.with_op(op))?;
    Ok((id, info.width))
}

/// `aclError aclrtMemPoolSetAttr(aclrtMemPool pool, aclrtMemPoolAttr attr, void *value)`:
/// `value` points to a `uint32_t` for attributes 1-3 and a `uint64_t` for 4-8.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolSetAttr(
    pool: aclrtMemPool,
    attr: aclrtMemPoolAttr,
    value: *mut c_void,
) -> aclError {
    const OP: &str = "aclrtMemPoolSetAttr";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        let p = s.pool(pool as usize, OP, PoolCall::Attribute)?;
        let (id, width) = attr_width(attr, OP)?;
        if value.is_null() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "value is null"));
        }
        needs_context(id, OP)?;
        let raw = match width {
            // SAFETY: non-null; the caller passes a value of the attribute's documented
            // width; read unaligned to be safe.
            AttrWidth::U32 => RawAttrValue::U32(unsafe { value.cast::<u32>().read_unaligned() }),
            // SAFETY: as above, for a `uint64_t`.
            AttrWidth::U64 => RawAttrValue::U64(unsafe { value.cast::<u64>().read_unaligned() }),
        };
        p.set_attr_raw(id, raw).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMemPoolGetAttr(aclrtMemPool pool, aclrtMemPoolAttr attr, void *value)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolGetAttr(
    pool: aclrtMemPool,
    attr: aclrtMemPoolAttr,
    value: *mut c_void,
) -> aclError {
    const OP: &str = "aclrtMemPoolGetAttr";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        let p = s.pool(pool as usize, OP, PoolCall::Attribute)?;
        let (id, _) = attr_width(attr, OP)?;
        if value.is_null() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "value is null"));
        }
        needs_context(id, OP)?;
        match p.get_attr_raw(id).map_err(|e| e.with_op(OP))? {
            // SAFETY: non-null; the caller passes room for the attribute's documented width.
            RawAttrValue::U32(v) => unsafe { value.cast::<u32>().write_unaligned(v) },
            // SAFETY: as above, for a `uint64_t`.
            RawAttrValue::U64(v) => unsafe { value.cast::<u64>().write_unaligned(v) },
        }
        Ok(())
    })
}

/// `aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool pool,
/// aclrtStream stream)`. Size 0 succeeds and writes nothing (CANN's behaviour). The
/// checks come in CANN's order: null arguments (100000), size 0, the stream handle
/// (107017), the context (no current context or a stream of another device: 107003), a
/// size that overflows (107000), then the pool (unknown or destroyed: 507000).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    pool: aclrtMemPool,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtMemPoolMallocAsync";
    ffi(OP, || {
        non_null(ptr, OP, "ptr")?;
        non_null(pool, OP, "pool")?;
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        if size == 0 {
            return Ok(());
        }
        let e = s.pool_stream(stream as usize, OP)?;
        let gran = s.dev(e.device).config().granularity;
        if (size as u64).checked_next_multiple_of(gran).is_none() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("size {size} overflows when rounded")));
        }
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
        let d = p.malloc_async(size as u64, &e.stream).map_err(|e| e.with_op(OP))?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(d.addr() as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream)`: frees any pool's
/// allocation (or an `aclrtMalloc` address) in stream order. A null stream is 507000; no
/// current context, or a stream of another device, is 107003 (after the stream handle's
/// own check, 107017), as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtMemPoolFreeAsync";
    ffi(OP, || {
        non_null(ptr, OP, "ptr")?;
        if stream.is_null() {
            return Err(err(code::ACL_ERROR_RT_INTERNAL_ERROR, OP, "stream is null"));
        }
        let s = shim(OP)?;
        let e = s.pool_stream(stream as usize, OP)?;
        if let Some((_, heap)) = s.heap_of(ptr as u64) {
            return heap.free_async(s.dev(e.device), dptr(ptr), &e.stream, OP);
        }
        s.dev(e.device).free(dptr(ptr), &e.stream).map_err(|e| e.with_op(OP))
    })
}

/// `aclError aclrtMemPoolTrimTo(aclrtMemPool pool, size_t minBytesToKeep)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolTrimTo(pool: aclrtMemPool, min_bytes_to_keep: usize) -> aclError {
    const OP: &str = "aclrtMemPoolTrimTo";
    ffi(OP, || {
        non_null(pool, OP, "pool")?;
        let s = shim(OP)?;
        let p = s.pool(pool as usize, OP, PoolCall::Lifetime)?;
        // CANN reads the current context's device here (and crashes without one).
        current(OP)?;
        p.trim_to(min_bytes_to_keep as u64).map_err(|e| e.with_op(OP))
    })
}

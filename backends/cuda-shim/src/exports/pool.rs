//! Memory pools: creating and destroying them, their attributes, trimming, stream-ordered
//! allocation and free, and each device's default and current pool.
//!
//! Pools behave as the driver's: the reuse attributes 1-3 are on at creation, the release
//! threshold takes any value (a value above the pool's size keeps everything, as
//! `UINT64_MAX` does on the driver), a reset high-water mark starts again from the current
//! value, a trim below USED releases what it can, and synchronizations release memory
//! above the threshold. Unlike the driver, destroying a
//! pool with live allocations makes them unknown addresses at once (the driver keeps them
//! until they are freed).

use super::prelude::*;
use mempool_hal::attr::{AttrInfo, AttrRole, Counter};
use mempool_hal::{AllocationType, ErrorKind, HandleType, PoolProps};
use std::sync::atomic::Ordering;

/// Checks the driver's fields of `CUmemPoolProps` and maps them onto the emulator's
/// properties: the pool's device and [`PoolProps`].
fn pool_props(s: &Shim, c: &CUmemPoolProps, op: &'static str) -> mempool_hal::Result<(u32, PoolProps)> {
    let bad = |msg: String| Err(err(CUDA_ERROR_INVALID_VALUE, op, msg));
    if c.allocType != CU_MEM_ALLOCATION_TYPE_PINNED {
        return bad(format!("allocType {} is not CU_MEM_ALLOCATION_TYPE_PINNED (1)", c.allocType));
    }
    let handle = match c.handleTypes {
        CU_MEM_HANDLE_TYPE_NONE => HandleType::NONE,
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR => HandleType::POSIX,
        other => return bad(format!("handleTypes {other:#x} is neither NONE (0) nor POSIX_FILE_DESCRIPTOR (1)")),
    };
    if c.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
        return bad(format!("location.type {} is not CU_MEM_LOCATION_TYPE_DEVICE (1)", c.location.type_));
    }
    if c.usage != 0 {
        return bad(format!("usage {:#x} is not 0", c.usage));
    }
    if let Some(i) = c.reserved.iter().position(|&b| b != 0) {
        return bad(format!("reserved[{i}] is not zero"));
    }
    let device = s.device_id(i64::from(c.location.id), op)?;
    let props = PoolProps::builder()
        .alloc_type(AllocationType::PINNED)
        .handle_type(handle)
        .device(device)
        .max_size(c.maxSize as u64)
        .build();
    Ok((device, props))
}

/// `CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)`: a pool
/// of `maxSize` bytes (rounded up to the granularity; 0: the whole device) on
/// `location.id`, its reuse attributes 1-3 on. `allocType` other than PINNED,
/// `handleTypes` other than NONE or POSIX_FILE_DESCRIPTOR, `location.type` other than
/// DEVICE, a non-zero `usage` or reserved byte, or a `maxSize` above the device's memory:
/// `CUDA_ERROR_INVALID_VALUE`; a device that does not exist: `CUDA_ERROR_INVALID_DEVICE`.
/// `win32SecurityAttributes` is ignored. Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolCreate(pool: *mut CUmemoryPool, props: *const CUmemPoolProps) -> CUresult {
    const OP: &str = "cuMemPoolCreate";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(pool, OP, "pool")?;
        non_null(props, OP, "poolProps")?;
        // SAFETY: non-null, and the caller passes a readable props struct; read unaligned
        // in case C placed it oddly.
        let c = unsafe { props.read_unaligned() };
        let (device, p) = pool_props(s, &c, OP)?;
        let h = s.create_pool(device, &p, OP)?;
        // SAFETY: non-null, and the caller passes a writable `CUmemoryPool`.
        unsafe { pool.write(h as CUmemoryPool) };
        Ok(())
    })
}

/// `CUresult cuMemPoolDestroy(CUmemoryPool pool)`: a device's default pool cannot be
/// destroyed (`CUDA_ERROR_INVALID_VALUE`); a pool that is a device's current pool stops
/// being it (the default pool takes its place). Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolDestroy(pool: CUmemoryPool) -> CUresult {
    const OP: &str = "cuMemPoolDestroy";
    ffi(OP, || {
        let s = shim(OP)?;
        let h = pool as usize;
        if s.is_default_pool(h) {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("{pool:p} is a device's default pool")));
        }
        s.pool(h, OP)?;
        // Another thread may have destroyed it since the look-up: the removal decides.
        let e =
            s.pools.remove(h).ok_or_else(|| err(CUDA_ERROR_INVALID_HANDLE, OP, format!("{pool:p} is destroyed")))?;
        s.forget_pool(h);
        s.dev(e.device).destroy_pool(&e.pool).map_err(|e| e.with_op(OP))
    })
}

/// A counter's index in [`PoolEntry::high_floor`].
fn floor_index(counter: Counter) -> usize {
    match counter {
        Counter::Reserved => 0,
        Counter::Used => 1,
    }
}

/// An attribute from C, through the backend's one mapping (unknown:
/// `CUDA_ERROR_INVALID_VALUE`).
fn attr(a: c_int, op: &'static str) -> mempool_hal::Result<&'static AttrInfo> {
    mempool_cuda::sys::mempool_attribute_key(a)
        .and_then(|key| key.id().info())
        .ok_or_else(|| err(CUDA_ERROR_INVALID_VALUE, op, format!("unknown pool attribute {a} (1-8)")))
}

/// `CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void
/// *value)`: `value` points to an `int` for attributes 1-3 (non-zero: on) and a
/// `cuuint64_t` for 4-8. The release threshold (4) takes any value. Writing 0 to a
/// high-water mark (6, 8) resets it to the current value, as on the driver. An unknown
/// attribute, a read-only one (5, 7), or a non-zero value for a high-water mark:
/// `CUDA_ERROR_INVALID_VALUE`. Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolSetAttribute(pool: CUmemoryPool, attr_id: c_int, value: *mut c_void) -> CUresult {
    const OP: &str = "cuMemPoolSetAttribute";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(value, OP, "value")?;
        let info = attr(attr_id, OP)?;
        let id = info.id;
        let p = s.pool(pool as usize, OP)?;
        let raw = match info.width {
            // SAFETY: non-null; the caller passes an `int` for attributes 1-3; read
            // unaligned to be safe.
            AttrWidth::U32 => RawAttrValue::U32(unsafe { value.cast::<c_int>().read_unaligned() } as u32),
            // SAFETY: as above, a `cuuint64_t` for attributes 4-8.
            AttrWidth::U64 => RawAttrValue::U64(unsafe { value.cast::<u64>().read_unaligned() }),
        };
        match info.role {
            AttrRole::ReleaseThreshold => {
                let v = raw.as_u64();
                p.pool.set_attr_raw(id, RawAttrValue::U64(v.min(p.pool.size()))).map_err(|e| e.with_op(OP))?;
                p.threshold.store(v, Ordering::Release);
            }
            // A read-only attribute, or a non-zero write to a high-water mark, is refused
            // by the emulator with a kind that translates to `CUDA_ERROR_INVALID_VALUE`.
            AttrRole::ReuseFlag(_) | AttrRole::Current(_) => p.pool.set_attr_raw(id, raw).map_err(|e| e.with_op(OP))?,
            AttrRole::High(counter) => {
                p.pool.set_attr_raw(id, raw).map_err(|e| e.with_op(OP))?;
                // The driver resets a mark to the current value: keep it as the mark's floor.
                let st = p.pool.stats_snapshot().map_err(|e| e.with_op(OP))?;
                p.high_floor[floor_index(counter)].store(counter.current(&st), Ordering::Release);
            }
        }
        Ok(())
    })
}

/// `CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void
/// *value)`: writes an `int` for attributes 1-3 and a `cuuint64_t` for 4-8 (the release
/// threshold as last written). An unknown attribute: `CUDA_ERROR_INVALID_VALUE`. Needs no
/// current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolGetAttribute(pool: CUmemoryPool, attr_id: c_int, value: *mut c_void) -> CUresult {
    const OP: &str = "cuMemPoolGetAttribute";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(value, OP, "value")?;
        let info = attr(attr_id, OP)?;
        let p = s.pool(pool as usize, OP)?;
        let v = p.pool.get_attr_raw(info.id).map_err(|e| e.with_op(OP))?;
        let raw = match info.role {
            AttrRole::ReleaseThreshold => RawAttrValue::U64(p.threshold.load(Ordering::Acquire)),
            AttrRole::High(counter) => {
                RawAttrValue::U64(v.as_u64().max(p.high_floor[floor_index(counter)].load(Ordering::Acquire)))
            }
            AttrRole::ReuseFlag(_) | AttrRole::Current(_) => v,
        };
        match raw {
            // SAFETY: non-null; the caller passes room for an `int` (attributes 1-3).
            RawAttrValue::U32(v) => unsafe { value.cast::<c_int>().write_unaligned(v as c_int) },
            // SAFETY: as above, for a `cuuint64_t` (attributes 4-8).
            RawAttrValue::U64(v) => unsafe { value.cast::<u64>().write_unaligned(v) },
        }
        Ok(())
    })
}

/// `CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)`: releases cached
/// memory whose free has run until the pool reserves at most `minBytesToKeep`, or USED
/// if that is more (the driver's rule: a target below USED releases what it can; the
/// emulator alone refuses it, as CANN does). Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolTrimTo(pool: CUmemoryPool, min_bytes_to_keep: usize) -> CUresult {
    const OP: &str = "cuMemPoolTrimTo";
    ffi(OP, || {
        let s = shim(OP)?;
        let p = s.pool(pool as usize, OP)?;
        // USED may rise between the snapshot and the trim (another thread allocating):
        // the emulator then refuses the trim, which is tried again with the new USED.
        for _ in 0..8 {
            let st = p.pool.stats_snapshot().map_err(|e| e.with_op(OP))?;
            let keep = (min_bytes_to_keep as u64).max(st.used_current).min(p.pool.size());
            if keep >= st.reserved_current {
                return Ok(());
            }
            match p.pool.trim_to(keep) {
                Err(e) if e.kind() == ErrorKind::InvalidParam => continue,
                r => return r.map_err(|e| e.with_op(OP)),
            }
        }
        Ok(())
    })
}

/// `cuMemAllocFromPoolAsync` (`pool` given) and `cuMemAllocAsync` (the current pool of
/// the stream's device): the checks of the module docs, then the allocation.
fn alloc_async(
    dptr: *mut CUdeviceptr,
    size: usize,
    pool: Option<CUmemoryPool>,
    stream: CUstream,
    op: &'static str,
) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(dptr, op, "dptr")?;
    if size == 0 {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, "bytesize 0"));
    }
    let given = pool.map(|h| s.pool(h as usize, op)).transpose()?;
    let e = s.stream(stream as usize, op)?;
    let p: PoolEntry = match given {
        Some(p) => p,
        None => s.pool(s.current_pool(e.device, op)?, op)?,
    };
    let gran = s.dev(e.device).config().granularity;
    if (size as u64).checked_next_multiple_of(gran).is_none() {
        return Err(err(CUDA_ERROR_OUT_OF_MEMORY, op, format!("{size} bytes cannot be allocated")));
    }
    let d = s.enqueue(&e, op, || p.pool.malloc_async(size as u64, &e.stream).map_err(|e| e.with_op(op)))?;
    // SAFETY: non-null, and the caller passes a writable `CUdeviceptr`.
    unsafe { dptr.write(d.addr()) };
    Ok(())
}

/// `CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool
/// pool, CUstream hStream)` (NULL stream: the current context's legacy default stream):
/// `bytesize` bytes from `pool` in stream order, rounded up to the granularity. Size 0:
/// `CUDA_ERROR_INVALID_VALUE`; the pool cannot hold it: `CUDA_ERROR_OUT_OF_MEMORY`; a
/// stream of another device than the pool's: `CUDA_ERROR_INVALID_CONTEXT`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync(
    dptr: *mut CUdeviceptr,
    bytesize: usize,
    pool: CUmemoryPool,
    stream: CUstream,
) -> CUresult {
    const OP: &str = "cuMemAllocFromPoolAsync";
    ffi(OP, || alloc_async(dptr, bytesize, Some(pool), stream, OP))
}

/// `CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)` (NULL
/// stream: the current context's legacy default stream): as `cuMemAllocFromPoolAsync` from the
/// current pool of the stream's device (`cuDeviceSetMemPool`; the default pool until then).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, stream: CUstream) -> CUresult {
    const OP: &str = "cuMemAllocAsync";
    ffi(OP, || alloc_async(dptr, bytesize, None, stream, OP))
}

/// `CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)` (NULL stream: the
/// current context's legacy default stream): frees an allocation of any pool in stream order.
/// 0, or an address that is not the start of a live allocation (interior, freed already,
/// unknown), or a free not ordered after the allocation and its uses:
/// `CUDA_ERROR_INVALID_VALUE`; a stream of another device than the pool's:
/// `CUDA_ERROR_INVALID_CONTEXT`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFreeAsync(dptr: CUdeviceptr, stream: CUstream) -> CUresult {
    const OP: &str = "cuMemFreeAsync";
    ffi(OP, || {
        let s = shim(OP)?;
        non_zero(dptr, OP, "dptr")?;
        let e = s.stream(stream as usize, OP)?;
        s.enqueue(&e, OP, || s.dev(e.device).free(DevicePtr::from_addr(dptr), &e.stream).map_err(|e| e.with_op(OP)))
    })
}

/// Which pool of a device [`device_pool`] gives.
#[derive(Clone, Copy)]
enum Which {
    Default,
    Current,
}

/// `cuDeviceGetDefaultMemPool` and `cuDeviceGetMemPool`.
fn device_pool(out: *mut CUmemoryPool, dev: CUdevice, which: Which, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(out, op, "pool_out")?;
    let d = s.device_id(i64::from(dev), op)?;
    let h = match which {
        Which::Default => s.default_pool(d, op)?,
        Which::Current => s.current_pool(d, op)?,
    };
    // SAFETY: non-null, and the caller passes a writable `CUmemoryPool`.
    unsafe { out.write(h as CUmemoryPool) };
    Ok(())
}

/// `CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)`: the
/// device's default pool (the whole device, reuse attributes on), made at its first use.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetDefaultMemPool(pool_out: *mut CUmemoryPool, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceGetDefaultMemPool";
    ffi(OP, || device_pool(pool_out, dev, Which::Default, OP))
}

/// `CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)`: the device's current
/// pool, which `cuMemAllocAsync` uses (the default pool until `cuDeviceSetMemPool`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetMemPool(pool: *mut CUmemoryPool, dev: CUdevice) -> CUresult {
    const OP: &str = "cuDeviceGetMemPool";
    ffi(OP, || device_pool(pool, dev, Which::Current, OP))
}

/// `CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)`: makes `pool` the
/// device's current pool. A pool of another device: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceSetMemPool(dev: CUdevice, pool: CUmemoryPool) -> CUresult {
    const OP: &str = "cuDeviceSetMemPool";
    ffi(OP, || {
        let s = shim(OP)?;
        let d = s.device_id(i64::from(dev), OP)?;
        let p = s.pool(pool as usize, OP)?;
        if p.device != d {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                OP,
                format!("pool {pool:p} is located on device {}, not device {d}", p.device),
            ));
        }
        s.set_current_pool(d, pool as usize);
        Ok(())
    })
}

per_thread_twin!(cuMemAllocAsync_ptsz = cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, stream: CUstream) stream stream);
per_thread_twin!(cuMemAllocFromPoolAsync_ptsz = cuMemAllocFromPoolAsync(dptr: *mut CUdeviceptr, bytesize: usize, pool: CUmemoryPool, stream: CUstream) stream stream);
per_thread_twin!(cuMemFreeAsync_ptsz = cuMemFreeAsync(dptr: CUdeviceptr, stream: CUstream) stream stream);

/// The device a location of the pool-access calls names (`CU_MEM_LOCATION_TYPE_DEVICE`
/// and a valid ordinal; otherwise `CUDA_ERROR_INVALID_VALUE`, or `CUDA_ERROR_INVALID_DEVICE`).
fn access_device(s: &Shim, loc: CUmemLocation, op: &'static str) -> mempool_hal::Result<u32> {
    if loc.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("location type {} is not a device (1)", loc.type_)));
    }
    s.device_id(i64::from(loc.id), op)
}

/// `CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t
/// count)`: the pool's own device keeps read-write access (`CU_MEM_ACCESS_FLAGS_PROT_READWRITE`;
/// any other flags for it: `CUDA_ERROR_INVALID_VALUE`); another device may be given no
/// access (`PROT_NONE`, which it has), and read or read-write access answers
/// `CUDA_ERROR_NOT_SUPPORTED` (no peer access between emulated devices). Flags outside
/// the enum, a location that is not a device: `CUDA_ERROR_INVALID_VALUE`; a NULL `map`
/// with a count: `CUDA_ERROR_INVALID_VALUE`. Every entry is checked before any applies.
///
/// # Safety
///
/// See the module docs; `map` holds `count` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolSetAccess(pool: CUmemoryPool, map: *const CUmemAccessDesc, count: usize) -> CUresult {
    const OP: &str = "cuMemPoolSetAccess";
    ffi(OP, || {
        let s = shim(OP)?;
        if count > 0 {
            non_null(map, OP, "map")?;
        }
        let p = s.pool(pool as usize, OP)?;
        if count == 0 {
            return Ok(());
        }
        // SAFETY: non-null, `count` entries (the caller's contract).
        let descs = unsafe { std::slice::from_raw_parts(map, count) };
        for d in descs {
            let dev = access_device(s, d.location, OP)?;
            let flags = d.flags;
            if ![CU_MEM_ACCESS_FLAGS_PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ, CU_MEM_ACCESS_FLAGS_PROT_READWRITE]
                .contains(&flags)
            {
                return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("access flags {flags} are not 0, 1 or 3")));
            }
            if dev == p.device && flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE {
                return Err(err(
                    CUDA_ERROR_INVALID_VALUE,
                    OP,
                    format!("the pool's own device {dev} keeps read-write access"),
                ));
            }
            if dev != p.device && flags != CU_MEM_ACCESS_FLAGS_PROT_NONE {
                return Err(err(
                    CUDA_ERROR_NOT_SUPPORTED,
                    OP,
                    format!("device {dev} cannot access a pool of device {} (no peer access here)", p.device),
                ));
            }
        }
        Ok(())
    })
}

/// `CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
/// CUmemLocation *location)`: `CU_MEM_ACCESS_FLAGS_PROT_READWRITE` for the pool's own
/// device, `PROT_NONE` for any other.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemPoolGetAccess(
    flags: *mut CUmemAccess_flags,
    pool: CUmemoryPool,
    location: *mut CUmemLocation,
) -> CUresult {
    const OP: &str = "cuMemPoolGetAccess";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(flags, OP, "flags")?;
        non_null(location, OP, "location")?;
        let p = s.pool(pool as usize, OP)?;
        // SAFETY: non-null, and the caller passes a readable location.
        let dev = access_device(s, unsafe { location.read() }, OP)?;
        let f = if dev == p.device { CU_MEM_ACCESS_FLAGS_PROT_READWRITE } else { CU_MEM_ACCESS_FLAGS_PROT_NONE };
        // SAFETY: non-null, and the caller passes a writable flags value.
        unsafe { flags.write(f) };
        Ok(())
    })
}

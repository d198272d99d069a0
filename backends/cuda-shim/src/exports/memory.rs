//! Plain device memory (`cuMemAlloc`, `cuMemFree`, `cuMemGetAddressRange`), page-locked
//! host memory (`cuMemAllocHost`, `cuMemHostAlloc`, `cuMemFreeHost`) and the device's memory
//! information (`cuMemGetInfo`).
//!
//! `cuMemAlloc` memory comes from a hidden whole-device pool of each device (no reuse
//! between streams, nothing kept cached: a free gives the memory back), allocated on a
//! hidden stream as a synchronous allocation: complete when the call returns, so work on
//! any stream may use it (the emulator's checker orders it before everything enqueued
//! afterwards). Sizes are rounded to the granularity (2 MiB by default), where the driver
//! rounds small allocations much less: many small `cuMemAlloc`s use more of the emulated
//! device than they would of a real one.

use super::prelude::*;

/// The alignment of `cuMemAllocHost` memory: a page, as the driver gives.
const HOST_ALIGN: usize = 4096;

/// `CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)` (`cuMemAlloc` in
/// `cuda.h`): `bytesize` bytes of device memory on the current context's device, usable on
/// every stream at once. Size 0: `CUDA_ERROR_INVALID_VALUE`; more than the device has left:
/// `CUDA_ERROR_OUT_OF_MEMORY`. Needs a current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) -> CUresult {
    const OP: &str = "cuMemAlloc_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(dptr, OP, "dptr")?;
        if bytesize == 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, "bytesize 0"));
        }
        let d = s.current(OP)?;
        let total = s.dev(d).config().device_memory;
        if bytesize as u64 > total {
            return Err(err(
                CUDA_ERROR_OUT_OF_MEMORY,
                OP,
                format!("{bytesize} bytes is more than the device's {total}"),
            ));
        }
        let plain = s.plain(d, OP)?;
        let p = plain.pool.malloc_sync(bytesize as u64, &plain.stream).map_err(|e| e.with_op(OP))?;
        // SAFETY: non-null, and the caller passes a writable `CUdeviceptr`.
        unsafe { dptr.write(p.addr()) };
        Ok(())
    })
}

/// `CUresult cuMemFree_v2(CUdeviceptr dptr)` (`cuMemFree` in `cuda.h`): frees `cuMemAlloc`
/// memory. As on the driver, the call first waits for the work queued on the device (so
/// work that used the memory has run; the wait is a device synchronization here: the
/// device's pools release what they keep above their threshold), then the memory goes back
/// to the device. 0, an address `cuMemAlloc` did not hand out (pool memory included), an
/// interior pointer, memory freed already: `CUDA_ERROR_INVALID_VALUE`. Needs no current
/// context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    const OP: &str = "cuMemFree_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        non_zero(dptr, OP, "dptr")?;
        let p = DevicePtr::from_addr(dptr);
        let not_ours =
            || err(CUDA_ERROR_INVALID_VALUE, OP, format!("{dptr:#x} is not the start of live cuMemAlloc memory"));
        let (start, _, base) = s.devices[0].allocation_at(p).ok_or_else(not_ours)?;
        let d = s.plain_device(base.addr()).filter(|_| start == p).ok_or_else(not_ours)?;
        let plain = s.plain(d, OP)?;
        let dev = s.dev(d);
        dev.synchronize_device().map_err(|e| e.with_op(OP))?;
        plain.pool.free(p, &plain.stream).map_err(|e| e.with_op(OP))?;
        // The free runs on the hidden stream at once; the host observes it (a complete
        // query is an observation), and the memory goes back to the device.
        dev.run_pending(&plain.stream).map_err(|e| e.with_op(OP))?;
        let _ = dev.query_stream(&plain.stream).map_err(|e| e.with_op(OP))?;
        if let Ok(used) = mempool_hal::MemPoolExt::get(&plain.pool, mempool_hal::attr::UsedMemCurrent) {
            let _ = plain.pool.trim_to(used);
        }
        Ok(())
    })
}

/// `CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr
/// dptr)` (`cuMemGetAddressRange` in `cuda.h`): the start and size of the live allocation
/// holding `dptr` (`cuMemAlloc` or a pool's; the size as handed out, rounded to the
/// granularity); either out-pointer may be NULL. An address in no live allocation:
/// `CUDA_ERROR_NOT_FOUND`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    pbase: *mut CUdeviceptr,
    psize: *mut usize,
    dptr: CUdeviceptr,
) -> CUresult {
    const OP: &str = "cuMemGetAddressRange_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        let (start, len, _) = s.devices[0]
            .allocation_at(DevicePtr::from_addr(dptr))
            .ok_or_else(|| err(CUDA_ERROR_NOT_FOUND, OP, format!("{dptr:#x} is not in a live allocation")))?;
        if !pbase.is_null() {
            // SAFETY: non-null, and the caller passes a writable `CUdeviceptr`.
            unsafe { pbase.write(start.addr()) };
        }
        if !psize.is_null() {
            // SAFETY: non-null, and the caller passes a writable `size_t`.
            unsafe { psize.write(len as usize) };
        }
        Ok(())
    })
}

/// `CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)`: as
/// `cuMemAllocHost`; `Flags` are `CU_MEMHOSTALLOC_PORTABLE` (1), `_DEVICEMAP` (2) and
/// `_WRITECOMBINED` (4), which change nothing here (every context sees the memory, and its
/// device address is its host address); other bits: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostAlloc(pp: *mut *mut c_void, bytesize: usize, flags: c_uint) -> CUresult {
    const OP: &str = "cuMemHostAlloc";
    ffi(OP, || {
        shim(OP)?;
        if flags & !7 != 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("flags {flags:#x} are not CU_MEMHOSTALLOC_* flags")));
        }
        alloc_host(pp, bytesize, OP)
    })
}

/// `CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)` (`cuMemAllocHost` in
/// `cuda.h`): host memory the library knows (page-locked on the driver, ordinary host
/// memory here), page-aligned. Async copies and memsets on it run in stream order, and it
/// stays allocated until the queued work using it has run, even if it is freed earlier.
/// Size 0: `CUDA_ERROR_INVALID_VALUE`; too large: `CUDA_ERROR_OUT_OF_MEMORY`. Needs a
/// current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) -> CUresult {
    const OP: &str = "cuMemAllocHost_v2";
    ffi(OP, || alloc_host(pp, bytesize, OP))
}

/// The body of `cuMemAllocHost_v2` and `cuMemHostAlloc`.
fn alloc_host(pp: *mut *mut c_void, bytesize: usize, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(pp, op, "pp")?;
    if bytesize == 0 {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, "bytesize 0"));
    }
    s.current(op)?;
    // Size 0 is refused above; too large or no host memory are both out of memory.
    let p = s
        .host_allocs
        .alloc(bytesize, HOST_ALIGN)
        .map_err(|_| err(CUDA_ERROR_OUT_OF_MEMORY, op, format!("{bytesize} host bytes cannot be allocated")))?;
    // SAFETY: non-null, and the caller passes a writable `void *`.
    unsafe { pp.write(p as *mut c_void) };
    Ok(())
}

/// `CUresult cuMemFreeHost(void *p)`: `cuMemAllocHost` memory, given back once the copies
/// and memsets queued on it have run. NULL, or memory `cuMemAllocHost` did not hand out
/// (device memory included): `CUDA_ERROR_INVALID_VALUE`. Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    const OP: &str = "cuMemFreeHost";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(p, OP, "p")?;
        // The last reference deallocates it (now, or when queued work using it has run).
        s.host_allocs.free(p as usize).ok_or_else(|| {
            err(CUDA_ERROR_INVALID_VALUE, OP, format!("{p:p} is not the start of cuMemAllocHost memory"))
        })
    })
}

/// `CUresult cuMemGetInfo_v2(size_t *free, size_t *total)` (`cuMemGetInfo` in `cuda.h`):
/// the current context's device: its memory size (`MEMPOOL_EMU_DEVICE_MEMORY`) and what
/// no pool has reserved. Needs a current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    const OP: &str = "cuMemGetInfo_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(free, OP, "free")?;
        non_null(total, OP, "total")?;
        let info = s.dev(s.current(OP)?).mem_info().map_err(|e| e.with_op(OP))?;
        // SAFETY: both non-null, and the caller passes writable `size_t`s.
        unsafe {
            free.write(info.free as usize);
            total.write(info.total as usize);
        }
        Ok(())
    })
}

//! Page-locked host memory (`cuMemAllocHost`, `cuMemFreeHost`) and the device's memory
//! information (`cuMemGetInfo`).

use super::prelude::*;

/// The alignment of `cuMemAllocHost` memory: a page, as the driver gives.
const HOST_ALIGN: usize = 4096;

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
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(pp, OP, "pp")?;
        if bytesize == 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, "bytesize 0"));
        }
        s.current(OP)?;
        // Size 0 is refused above; too large or no host memory are both out of memory.
        let p = s
            .host_allocs
            .alloc(bytesize, HOST_ALIGN)
            .map_err(|_| err(CUDA_ERROR_OUT_OF_MEMORY, OP, format!("{bytesize} host bytes cannot be allocated")))?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { pp.write(p as *mut c_void) };
        Ok(())
    })
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

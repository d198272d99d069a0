//! Synchronous memory: `aclrtMalloc` (and its 32-byte twin) with `aclrtFree`, and the runtime's host memory, `aclrtMallocHost` with `aclrtFreeHost`.

use super::prelude::*;

/// `aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)`:
/// synchronous device memory, the size padded as CANN pads it (to a multiple of 32 bytes,
/// plus 32), 32-byte aligned; small allocations share the granule blocks of a hidden
/// whole-device pool. It is ordered before everything enqueued after the call. Out of
/// device memory: 207001. Such an address may also be freed in stream order with
/// `aclrtMemPoolFreeAsync`, as on the real runtime.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMalloc(ptr: *mut *mut c_void, size: usize, _policy: aclrtMemMallocPolicy) -> aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe { malloc_sync("aclrtMalloc", ptr, size, true) }
}

/// `aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)`:
/// as `aclrtMalloc`, the size padded to a multiple of 32 bytes only (CANN adds no 32 more
/// here).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocAlign32(
    ptr: *mut *mut c_void,
    size: usize,
    _policy: aclrtMemMallocPolicy,
) -> aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe { malloc_sync("aclrtMallocAlign32", ptr, size, false) }
}

/// `aclrtMalloc` and `aclrtMallocAlign32`: `size` bytes of synchronous device memory from
/// the current device's heap, padded as CANN pads them (`plus_32`: `aclrtMalloc` adds 32
/// bytes to the multiple of 32).
///
/// # Safety
///
/// `ptr` is null or writable for one `void *`.
unsafe fn malloc_sync(op: &'static str, ptr: *mut *mut c_void, size: usize, plus_32: bool) -> aclError {
    ffi(op, || {
        non_null(ptr, op, "devPtr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, op, "size 0"));
        }
        let s = shim(op)?;
        let a = s.sync_alloc(current(op)?)?;
        let p = a.malloc(crate::heap::padded(size as u64, plus_32, op)?, op)?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(p.addr() as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtFree(void *devPtr)`: `aclrtMalloc` memory of any device; needs no current
/// context (as on CANN). The host must have synchronized the streams that used it.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFree(ptr: *mut c_void) -> aclError {
    const OP: &str = "aclrtFree";
    ffi(OP, || {
        non_null(ptr, OP, "devPtr")?;
        let s = shim(OP)?;
        let Some((d, heap)) = s.heap_of(ptr as u64) else {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("{ptr:p} was not allocated by aclrtMalloc")));
        };
        heap.free(s.dev(d), dptr(ptr), OP)
    })
}

/// `aclError aclrtMallocHost(void **hostPtr, size_t size)`: host memory the runtime
/// knows (page-locked on CANN, ordinary host memory here), 64-byte aligned. Memsets and
/// copies accept it, synchronous and async; async work on it runs in stream order, and
/// the memory stays allocated until that work has run, even if it is freed earlier. Needs
/// a current context (107002), as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHost(ptr: *mut *mut c_void, size: usize) -> aclError {
    const OP: &str = "aclrtMallocHost";
    ffi(OP, || {
        non_null(ptr, OP, "hostPtr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        if std::alloc::Layout::from_size_align(size, 64).is_err() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("size {size} is too large")));
        }
        let s = shim(OP)?;
        current(OP)?;
        let p = s.host_allocs.alloc(size, 64).map_err(|e| match e {
            HostAllocError::Empty | HostAllocError::TooLarge => {
                err(code::ACL_ERROR_INVALID_PARAM, OP, format!("size {size} is too large"))
            }
            HostAllocError::NoMemory => {
                err(code::ACL_ERROR_RT_MEMORY_ALLOCATION, OP, format!("cannot allocate {size} host bytes"))
            }
        })?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { ptr.write(p as *mut c_void) };
        Ok(())
    })
}

/// `aclError aclrtFreeHost(void *hostPtr)`: the memory goes back once the copies and
/// memsets queued on it have run. Device memory answers 107000, as CANN; other memory the
/// runtime did not hand out, 100000 (CANN leaves it to the driver).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreeHost(ptr: *mut c_void) -> aclError {
    const OP: &str = "aclrtFreeHost";
    ffi(OP, || {
        non_null(ptr, OP, "hostPtr")?;
        let s = shim(OP)?;
        if s.devices[0].is_pool_address(dptr(ptr)) {
            // CANN asks the driver where the pointer lies and refuses device memory.
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("{ptr:p} is device memory (aclrtMalloc or a pool), not aclrtMallocHost memory"),
            ));
        }
        // The last reference deallocates it (now, or when queued work using it has run).
        s.host_allocs.free(ptr as usize).ok_or_else(|| {
            err(code::ACL_ERROR_INVALID_PARAM, OP, format!("{ptr:p} was not allocated by aclrtMallocHost"))
        })
    })
}

//! `mempool_alloc` and `mempool_free`: PyTorch's `void *(size_t, int, stream)` and
//! `void (void *, size_t, int, stream)`.

use crate::error::AllocError;
use crate::ffi::guard;
use crate::state::allocator;
use std::ffi::{c_int, c_void};

/// `void *mempool_alloc(size_t size, int device, void *stream)`: `size` bytes on `device` in
/// stream order on `stream` (NULL: the device's default stream). NULL on failure, with the
/// reason in `mempool_last_error()`: size 0, an unknown device, a stream the backend
/// refuses, or out of memory after the retry (the device is synchronized, the frees waiting
/// for streams are taken in, the cache is trimmed, and the allocation tried once more;
/// then the out-of-memory observers are called).
///
/// # Safety
///
/// `stream` is NULL or a stream handle of the runtime the framework loaded.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_alloc(size: usize, device: c_int, stream: *mut c_void) -> *mut c_void {
    guard("mempool_alloc", std::ptr::null_mut(), || {
        let a = allocator()?;
        let dev = a.device(device.into())?;
        match dev.alloc(size as u64, stream as usize) {
            Ok(p) => Ok(p as *mut c_void),
            Err(e @ AllocError::OutOfMemory { .. }) => {
                // The observers hear of it even when the statistics cannot be read (zeros).
                let stats = dev.stats().unwrap_or_default();
                a.notify_oom(device.into(), size, &stats);
                Err(e)
            }
            Err(e) => Err(e),
        }
    })
}

/// `void mempool_free(void *ptr, size_t size, int device, void *stream)`: frees `ptr`,
/// allocated with `size` bytes on `device`, in stream order on `stream` (the allocation's
/// stream, as the frameworks pass it). When other streams used it
/// (`mempool_record_stream`), an event is recorded on each and the memory is freed once
/// the host sees them complete. NULL does nothing. A pointer the library did not hand out,
/// a second free, a wrong size or device changes nothing; the reason is in
/// `mempool_last_error()`. A free the runtime's stream-order checker refuses is freed
/// after a device synchronization, counted, and described in `mempool_last_error()`.
///
/// # Safety
///
/// `stream` is NULL or a stream handle of the runtime the framework loaded.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_free(ptr: *mut c_void, size: usize, device: c_int, stream: *mut c_void) {
    guard("mempool_free", (), || {
        if ptr.is_null() {
            return Ok(());
        }
        let dev = allocator()?.device(device.into())?;
        dev.free(ptr as u64, size as u64, stream as usize)
    })
}

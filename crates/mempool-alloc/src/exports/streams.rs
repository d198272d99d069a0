//! `mempool_record_stream`: PyTorch's `record_stream` hook, `void (void *, stream)`.

use crate::error::AllocError;
use crate::ffi::guard;
use crate::state::allocator;
use std::ffi::c_void;

/// `void mempool_record_stream(void *ptr, void *stream)`: notes that `stream` uses the live
/// allocation at `ptr`. Its free then records an event on `stream` and frees the memory
/// only once the host sees the event complete, as PyTorch's caching allocator does; the
/// framework's streams are not made to wait for anything. A pointer that is not a live
/// allocation (NULL included), or a stream the backend refuses, changes nothing and is
/// described by `mempool_last_error()`.
///
/// # Safety
///
/// `stream` is NULL or a stream handle of the runtime the framework loaded.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_record_stream(ptr: *mut c_void, stream: *mut c_void) {
    guard("mempool_record_stream", (), || {
        if ptr.is_null() {
            return Err(AllocError::Invalid("ptr is NULL".into()));
        }
        for (_, dev) in allocator()?.opened() {
            if dev.record_stream(ptr as u64, stream as usize)? {
                return Ok(());
            }
        }
        Err(AllocError::Invalid(format!("{ptr:p} is not a live allocation of the library on any device")))
    })
}

//! `mempool_register_stream_allocator` and `mempool_unregister_stream_allocator`: the
//! library's pool as a stream's external allocator in CANN's registry (contract §16), so
//! CANN's operators draw their workspaces from it.

use crate::error::AllocError;
use crate::ffi::guard;
use crate::state::allocator;
use std::ffi::{c_int, c_void};

/// `int mempool_register_stream_allocator(int device, void *stream)`: registers the
/// library's pool of `device` (through its small-block layer) as the external allocator of
/// `stream` with the runtime's `aclrtAllocatorRegister`: CANN's operators run on `stream`
/// then take their workspaces from it, in the stream's order. A registration the library
/// made on the stream before is replaced. 0 on success; -1 with the reason in
/// `mempool_last_error()`: NULL stream, an unknown device, a stream the runtime refuses, a
/// runtime without the registry, or a backend other than Ascend (CUDA and the emulator
/// have no such registry).
///
/// # Safety
///
/// `stream` is NULL or a stream handle of the runtime the framework loaded, which stays
/// alive until the registration is dropped (`mempool_unregister_stream_allocator`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_register_stream_allocator(device: c_int, stream: *mut c_void) -> c_int {
    guard("mempool_register_stream_allocator", -1, || {
        allocator()?.device(device.into())?.register_allocator(stream as usize)?;
        Ok::<c_int, AllocError>(0)
    })
}

/// `int mempool_unregister_stream_allocator(int device, void *stream)`: drops the
/// registration `mempool_register_stream_allocator` made on `stream` (the runtime's
/// `aclrtAllocatorUnregister`, unless another allocator was registered on the stream
/// since); the workspaces still handed out are freed in the stream's order. Call it only
/// once no operator still queued on the stream holds one. 0 on success; -1 when the library
/// has no registration on the stream, or for an unknown device, with the reason in
/// `mempool_last_error()`.
///
/// # Safety
///
/// `stream` is NULL or a stream handle the library may have registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_unregister_stream_allocator(device: c_int, stream: *mut c_void) -> c_int {
    guard("mempool_unregister_stream_allocator", -1, || {
        if allocator()?.device(device.into())?.unregister_allocator(stream as usize)? {
            Ok(0)
        } else {
            Err(AllocError::Invalid(format!(
                "the library registered no allocator on stream {stream:p} of device {device}"
            )))
        }
    })
}

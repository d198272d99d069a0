//! The names and descriptions of the result codes (`cuGetErrorName`,
//! `cuGetErrorString`), with one body for both, and the calling thread's message of its
//! last failed call, which the driver API has no call for: the library's own
//! `mempool_cuda_shim_last_error` for C callers and the CUDA backend,
//! [`last_error_message`](crate::last_error_message) for Rust callers.

use super::prelude::*;
use std::ffi::CStr;

/// Every code this library returns: its name and a description of our own.
const CODES: [(CUresult, &CStr, &CStr); 12] = [
    (CUDA_SUCCESS, c"CUDA_SUCCESS", c"no error"),
    (CUDA_ERROR_INVALID_VALUE, c"CUDA_ERROR_INVALID_VALUE", c"an argument is out of its range or a pointer is null"),
    (CUDA_ERROR_OUT_OF_MEMORY, c"CUDA_ERROR_OUT_OF_MEMORY", c"the memory asked for could not be allocated"),
    (CUDA_ERROR_NOT_INITIALIZED, c"CUDA_ERROR_NOT_INITIALIZED", c"the driver is not initialized (call cuInit first)"),
    (CUDA_ERROR_INVALID_DEVICE, c"CUDA_ERROR_INVALID_DEVICE", c"the device ordinal does not name a device"),
    (
        CUDA_ERROR_INVALID_CONTEXT,
        c"CUDA_ERROR_INVALID_CONTEXT",
        c"no valid context is current, or the context handle is not a context",
    ),
    (
        CUDA_ERROR_INVALID_HANDLE,
        c"CUDA_ERROR_INVALID_HANDLE",
        c"the handle is not a live stream, event or pool of the right kind",
    ),
    (CUDA_ERROR_NOT_READY, c"CUDA_ERROR_NOT_READY", c"the work asked about has not completed yet"),
    (
        CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
        c"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        c"the host range overlaps a registered range or page-locked memory",
    ),
    (
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
        c"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
        c"the pointer does not start a registered host range",
    ),
    (CUDA_ERROR_NOT_SUPPORTED, c"CUDA_ERROR_NOT_SUPPORTED", c"the operation is not supported"),
    (CUDA_ERROR_UNKNOWN, c"CUDA_ERROR_UNKNOWN", c"an internal error occurred"),
];

/// Which text of a code [`describe`] gives.
#[derive(Clone, Copy)]
enum Text {
    Name,
    Description,
}

/// `cuGetErrorName` and `cuGetErrorString`: a static string for a known code; an unknown
/// code writes NULL and answers `CUDA_ERROR_INVALID_VALUE`.
fn describe(code: CUresult, out: *mut *const c_char, text: Text, op: &'static str) -> mempool_hal::Result<()> {
    non_null(out, op, "pStr")?;
    let found = CODES.iter().find(|(c, _, _)| *c == code).map(|(_, name, desc)| match text {
        Text::Name => *name,
        Text::Description => *desc,
    });
    // SAFETY: non-null, and the caller passes a writable `const char *`.
    unsafe { out.write(found.map_or(std::ptr::null(), CStr::as_ptr)) };
    found
        .map(|_| ())
        .ok_or_else(|| err(CUDA_ERROR_INVALID_VALUE, op, format!("{code} is not a code this library knows")))
}

/// `CUresult cuGetErrorName(CUresult error, const char **pStr)`: the code's name
/// (`"CUDA_ERROR_INVALID_VALUE"`), a static string; before `cuInit` too.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(error: CUresult, p_str: *mut *const c_char) -> CUresult {
    const OP: &str = "cuGetErrorName";
    ffi(OP, || describe(error, p_str, Text::Name, OP))
}

/// `CUresult cuGetErrorString(CUresult error, const char **pStr)`: a description of the
/// code, a static string; before `cuInit` too.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(error: CUresult, p_str: *mut *const c_char) -> CUresult {
    const OP: &str = "cuGetErrorString";
    ffi(OP, || describe(error, p_str, Text::Description, OP))
}

/// `const char *mempool_cuda_shim_last_error(void)`: the message of the calling thread's
/// last failed call (`"cuMemFreeAsync: ... (stream-order violation)"`: the call's name, what
/// was wrong, the portable kind), or NULL when no call has failed on this thread; before
/// `cuInit` too. The string belongs to the library and stays valid until the thread's next
/// failed call (at least until its next call into the library), or the thread's end. The
/// driver has no such symbol: its API gives only a code (`cuGetErrorString`). The CUDA
/// backend adds the message to its errors.
///
/// # Safety
///
/// Takes nothing; the answer must not be used after the thread's next call into the
/// library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_cuda_shim_last_error() -> *const c_char {
    last_error_ptr()
}

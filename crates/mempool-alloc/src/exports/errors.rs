//! `mempool_last_error` and `mempool_backend`.

use crate::ffi::{guard, last_error_ptr};
use crate::state::allocator;
use std::ffi::c_char;

/// `const char *mempool_last_error(void)`: the calling thread's last failure, or NULL when
/// its last call succeeded (a free that met a stream-order violation succeeded, and leaves
/// its description here). Valid until the thread's next call into the library. The only
/// function that does not clear it.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_last_error() -> *const c_char {
    last_error_ptr()
}

/// `const char *mempool_backend(void)`: the backend the library runs on and where it was
/// found (`"cuda (/usr/lib/x86_64-linux-gnu/libcuda.so.1)"`, `"ascend (...)"`,
/// `"emulator (2 devices; ...)"`), or NULL when the start failed (the reason is in
/// `mempool_last_error()`). The string lives as long as the process.
#[unsafe(no_mangle)]
pub extern "C" fn mempool_backend() -> *const c_char {
    guard("mempool_backend", std::ptr::null(), || allocator().map(|a| a.description.as_ptr()))
}

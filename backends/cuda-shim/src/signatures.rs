//! The exported functions, checked at compile time against the declaration table of
//! [`mempool_cuda::sys`]: every entry of
//! [`for_each_cuda_function!`](mempool_cuda::sys::for_each_cuda_function) becomes
//! `const _: sys::fns::NAME = exports::NAME;`, so an export whose signature drifts from
//! the table (or that is missing) fails to build, naming both types.
//!
//! The handle and struct types the two sides name are the same Rust types
//! ([`types`](crate::types) re-exports them from `mempool_cuda::sys`), so the check
//! compares the C signatures themselves.

use crate::exports;

/// One `const` per table entry: the export coerces to the table's function-pointer type.
macro_rules! same_signature {
    ($( $name:ident ( $($params:tt)* ) ; )*) => {
        $( const _: mempool_cuda::sys::fns::$name = exports::$name; )*
    };
}

mempool_cuda::sys::for_each_cuda_function!(same_signature);

// Outside the table: the marker by which a loader tells this library from the driver,
// which has no such call (`const char *mempool_cuda_shim_version(void)`).
const _: unsafe extern "C" fn() -> *const std::ffi::c_char = exports::mempool_cuda_shim_version;

// Outside the table too: the calling thread's last message, which the backend resolves by
// the name `mempool_cuda::sys::SHIM_LAST_ERROR` with this type.
const _: mempool_cuda::sys::ShimLastError = exports::mempool_cuda_shim_last_error;
const _: () = assert!(matches!(mempool_cuda::sys::SHIM_LAST_ERROR.as_bytes(), b"mempool_cuda_shim_last_error"));

// Outside the table: the legacy name of `cuMemHostRegister_v2`, the same call.
const _: mempool_cuda::sys::fns::cuMemHostRegister_v2 = exports::cuMemHostRegister;

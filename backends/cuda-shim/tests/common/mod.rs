//! Helpers shared by the test binaries.

#![allow(dead_code)] // each binary uses part of them

use cuda::exports::{cuCtxSetCurrent, cuDevicePrimaryCtxRetain, cuInit};
use cuda::types::{CUDA_SUCCESS, CUcontext, CUresult};
use std::path::PathBuf;

pub const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// This thread's last error message (`""` when none).
pub fn message() -> String {
    cuda::last_error_message().unwrap_or_default()
}

/// Fails with the call's name, code and this thread's message unless it succeeded.
pub fn check(rc: CUresult, what: &str) {
    assert_eq!(rc, CUDA_SUCCESS, "{what}: {}", message());
}

/// `cuInit`, then device `device`'s primary context retained and made current on the
/// calling thread.
pub fn init_and_use(device: i32) -> CUcontext {
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: flags 0, a valid out-pointer and a handle the library returned.
    unsafe {
        check(cuInit(0), "cuInit");
        check(cuDevicePrimaryCtxRetain(&mut ctx, device), "cuDevicePrimaryCtxRetain");
        check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    }
    ctx
}

/// The names of the exported C functions the library implements: the implemented
/// variants of the driver table, and the library's own two.
pub fn exported_functions() -> Vec<String> {
    cuda::table::variants()
        .iter()
        .filter(|v| v.kind == cuda::table::Kind::Implemented)
        .map(|v| v.symbol.to_string())
        .chain(["mempool_cuda_shim_last_error", "mempool_cuda_shim_version"].map(String::from))
        .collect()
}

/// `target/<profile>/deps/libcuda.so`, next to the test binary.
pub fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let lib = exe.parent().expect("test binaries live in target/<profile>/deps").join("libcuda.so");
    assert!(lib.exists(), "{} is missing: the crate's cdylib was not built", lib.display());
    lib
}

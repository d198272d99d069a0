//! `cuInit`, `cuDriverGetVersion`, and the marker by which a loader tells this library
//! from the driver.

use super::prelude::*;

/// The driver API version this library answers: the CUDA version its driver table is
/// written from ([`crate::table::TABLE_VERSION`], 13.5: 1000 × major + 10 × minor), which is
/// also `CUDA_VERSION` of `include/cuda.h`.
pub const DRIVER_VERSION: c_int = crate::table::TABLE_VERSION;

/// `CUresult cuInit(unsigned int Flags)`: starts the emulated platform (configured from
/// the environment) at the first call; `Flags` must be 0 (`CUDA_ERROR_INVALID_VALUE`).
/// Again: nothing more happens. A platform that cannot start (a setting that does not
/// parse) answers `CUDA_ERROR_UNKNOWN` naming it, now and at every later `cuInit`, and
/// every other call stays `CUDA_ERROR_NOT_INITIALIZED`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CUresult {
    const OP: &str = "cuInit";
    ffi(OP, || {
        if flags != 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("flags {flags:#x} are not 0")));
        }
        init(OP).map(|_| ())
    })
}

/// `CUresult cuDriverGetVersion(int *driverVersion)`: 13050 (13.5), before `cuInit` too.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CUresult {
    const OP: &str = "cuDriverGetVersion";
    ffi(OP, || {
        non_null(version, OP, "driverVersion")?;
        // SAFETY: non-null, and the caller passes a writable `int`.
        unsafe { version.write(DRIVER_VERSION) };
        Ok(())
    })
}

/// What [`mempool_cuda_shim_version`] answers.
const VERSION: &std::ffi::CStr =
    match std::ffi::CStr::from_bytes_with_nul(concat!("mempool-emu-", env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(c) => c,
        Err(_) => c"mempool-emu",
    };

/// `const char *mempool_cuda_shim_version(void)`: `"mempool-emu-"` and this library's
/// version (for example `mempool-emu-0.1.0`), a static string, before `cuInit` too. The
/// driver has no such symbol: a loader that finds it knows it opened this library.
///
/// # Safety
///
/// Takes nothing and reads nothing: always safe to call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mempool_cuda_shim_version() -> *const c_char {
    VERSION.as_ptr()
}

//! `cuGetProcAddress` and `cuGetProcAddress_v2`, answered from the driver table
//! ([`crate::table`]), and `cuGetExportTable`, which answers not supported: the driver's
//! private export tables are what the CUDA runtime (`libcudart`) needs, and it stays out
//! of scope.
//!
//! Both work before `cuInit`, as on the driver (NVIDIA's `cuda-bindings` resolves every
//! function before its first `cuInit`).

use super::prelude::*;
use crate::table::{Lookup, resolve};

/// The body of both: checks, writes NULL to `*pfn` first, then the variant found, and the
/// status where the caller asked for it.
fn get_proc_address(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: cuuint64_t,
    status: *mut CUdriverProcAddressQueryResult,
    op: &'static str,
) -> mempool_hal::Result<()> {
    non_null(symbol, op, "symbol")?;
    non_null(pfn, op, "pfn")?;
    // SAFETY: non-null, and the caller passes a writable `void *`.
    unsafe { pfn.write(std::ptr::null_mut()) };
    let per_thread = match flags {
        CU_GET_PROC_ADDRESS_DEFAULT | CU_GET_PROC_ADDRESS_LEGACY_STREAM => false,
        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM => true,
        _ => return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("flags {flags:#x} are not 0, 1 or 2"))),
    };
    if cuda_version < 0 {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("CUDA version {cuda_version} is negative")));
    }
    // SAFETY: non-null, and the caller passes a NUL-terminated string.
    let name = unsafe { std::ffi::CStr::from_ptr(symbol) }.to_bytes();
    let write_status = |v: CUdriverProcAddressQueryResult| {
        if !status.is_null() {
            // SAFETY: non-null, and the caller passes a writable result.
            unsafe { status.write(v) };
        }
    };
    match resolve(name, cuda_version, per_thread) {
        Lookup::Found(v) => {
            // SAFETY: as above.
            unsafe { pfn.write(v.address.get().cast_mut()) };
            write_status(CU_GET_PROC_ADDRESS_SUCCESS);
            Ok(())
        }
        Lookup::VersionNotSufficient => {
            write_status(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
            Err(err(
                CUDA_ERROR_NOT_FOUND,
                op,
                format!("{} is newer than CUDA version {cuda_version}", String::from_utf8_lossy(name)),
            ))
        }
        Lookup::NotFound => {
            write_status(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
            Err(err(
                CUDA_ERROR_NOT_FOUND,
                op,
                format!("{:?} is not the base name of a driver function", String::from_utf8_lossy(name)),
            ))
        }
    }
}

/// `CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
/// cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)`: the address of the
/// variant of the *base* name `symbol` (`"cuMemAlloc"`) that a client written for
/// `cudaVersion` calls: the newest one not newer than it (`cuMemAlloc_v2` from 3020 on);
/// with `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` (2), its `_ptds`/`_ptsz` twin where
/// it has one; flags 0 and `CU_GET_PROC_ADDRESS_LEGACY_STREAM` (1) give the legacy-stream
/// variants. `*pfn` is NULL unless a variant is found. An unknown name: `CUDA_ERROR_NOT_FOUND`
/// (500) with status `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND` (1); a version older than the
/// first variant: 500 with `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT` (2); `symbolStatus`
/// may be NULL. Null `symbol` or `pfn`, other flags, a negative version:
/// `CUDA_ERROR_INVALID_VALUE`. Before `cuInit` too.
///
/// # Safety
///
/// See the module docs; `symbol` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: cuuint64_t,
    symbol_status: *mut CUdriverProcAddressQueryResult,
) -> CUresult {
    const OP: &str = "cuGetProcAddress_v2";
    ffi(OP, || get_proc_address(symbol, pfn, cuda_version, flags, symbol_status, OP))
}

/// `CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t
/// flags)`: CUDA 11.3's variant, as `cuGetProcAddress_v2` without the status.
///
/// # Safety
///
/// See [`cuGetProcAddress_v2`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: cuuint64_t,
) -> CUresult {
    const OP: &str = "cuGetProcAddress";
    ffi(OP, || get_proc_address(symbol, pfn, cuda_version, flags, std::ptr::null_mut(), OP))
}

/// `CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)`:
/// the driver's private tables, which only NVIDIA's own libraries read: writes NULL where
/// `ppExportTable` is given and answers `CUDA_ERROR_NOT_SUPPORTED` for every id.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetExportTable(table: *mut *const c_void, _id: *const CUuuid) -> CUresult {
    const OP: &str = "cuGetExportTable";
    ffi(OP, || {
        non_null(table, OP, "ppExportTable")?;
        // SAFETY: non-null, and the caller passes a writable `const void *`.
        unsafe { table.write(std::ptr::null()) };
        Err(err(CUDA_ERROR_NOT_SUPPORTED, OP, "the driver's private export tables are not emulated"))
    })
}

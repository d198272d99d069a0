//! Host registration ([contract §15](mempool_hal::contract::host_register)):
//! `cuMemHostRegister_v2` (and the legacy `cuMemHostRegister`, the same call),
//! `cuMemHostUnregister`, `cuMemHostGetDevicePointer_v2`, with the driver's codes.
//!
//! A registered range is page-locked memory for the async copies (queued in stream order,
//! not done before the call returns) until it is unregistered, and its device address is
//! its host address (the emulator's memory is host memory, as with unified addressing
//! and `CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`), usable wherever
//! the copies take a `CUdeviceptr`. The table of ranges is the emulator's. Codes:
//!
//! | situation | code |
//! |---|---|
//! | before `cuInit` | 3 |
//! | null `p`, `bytesize` 0, a flag bit outside 0xF, a range that wraps or lies in device memory | 1 |
//! | `CU_MEMHOSTREGISTER_IOMEMORY` (host memory here is no I/O memory) | 801 |
//! | register or get the device pointer with no current context | 201 |
//! | a range overlapping a registered one (by bytes) or `cuMemAllocHost` memory | 712 |
//! | unregister of a pointer no registration holds | 713 |
//! | unregister of an interior pointer, or of `cuMemAllocHost` memory | 1 |
//! | the device pointer of memory neither registered nor from `cuMemAllocHost`; `Flags` ≠ 0 | 1 |
//!
//! `cuMemHostUnregister` needs no current context (drivers unregister from any thread).
//! The legacy 32-bit `cuMemHostGetDevicePointer` is not exported: no address here fits
//! in 32 bits.

use super::prelude::*;
use mempool_emu::cabi::HostRange;
use mempool_hal::{HostRegisterFlags, HostRegistration, code};

/// The flag bits the driver knows.
const KNOWN_FLAGS: c_uint = CU_MEMHOSTREGISTER_PORTABLE
    | CU_MEMHOSTREGISTER_DEVICEMAP
    | CU_MEMHOSTREGISTER_IOMEMORY
    | CU_MEMHOSTREGISTER_READ_ONLY;

/// The one body of both register names.
fn register(p: *mut c_void, bytesize: usize, flags: c_uint, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(p, op, "p")?;
    if bytesize == 0 {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, "bytesize 0"));
    }
    if flags & !KNOWN_FLAGS != 0 {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("Flags {flags:#x} has bits outside 0xF")));
    }
    if flags & CU_MEMHOSTREGISTER_IOMEMORY != 0 {
        return Err(err(
            CUDA_ERROR_NOT_SUPPORTED,
            op,
            "CU_MEMHOSTREGISTER_IOMEMORY: host memory here is no I/O memory",
        ));
    }
    let device = s.current(op)?;
    if (p as usize).checked_add(bytesize).is_none() {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("[{p:p}, +{bytesize}) wraps the address space")));
    }
    if let Some((base, n)) = s.host_allocs.overlapping(p as usize, bytesize) {
        return Err(err(
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
            op,
            format!("[{p:p}, +{bytesize}) overlaps cuMemAllocHost memory [{base:#x}, +{n}), page-locked already"),
        ));
    }
    let read_only = flags & CU_MEMHOSTREGISTER_READ_ONLY != 0;
    // SAFETY: the C caller owns the range and keeps it valid until it is unregistered and
    // the copies queued on it have run (the driver's contract of registered memory); the
    // emulator only records it here.
    match unsafe { s.dev(device).register_host(p.cast(), bytesize, HostRegisterFlags { read_only }) } {
        Ok(_) => Ok(()),
        Err(e) if e.code() == code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED => {
            Err(err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, op, e.message().to_string()))
        }
        Err(e) => Err(err(CUDA_ERROR_INVALID_VALUE, op, e.message().to_string())),
    }
}

/// `CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)`
/// (`cuMemHostRegister` in `cuda.h`): registers `[p, p + bytesize)`.
///
/// # Safety
///
/// See the module docs of [`exports`](super); the range must stay valid until it is
/// unregistered and the copies queued on it have run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostRegister_v2(p: *mut c_void, bytesize: usize, flags: c_uint) -> CUresult {
    const OP: &str = "cuMemHostRegister_v2";
    ffi(OP, || register(p, bytesize, flags, OP))
}

/// `CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)`: the legacy
/// name of [`cuMemHostRegister_v2`], which the driver exports too, with the same behaviour.
///
/// # Safety
///
/// As [`cuMemHostRegister_v2`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostRegister(p: *mut c_void, bytesize: usize, flags: c_uint) -> CUresult {
    const OP: &str = "cuMemHostRegister";
    ffi(OP, || register(p, bytesize, flags, OP))
}

/// `CUresult cuMemHostUnregister(void *p)`: unregisters the range registered at `p` (its
/// start). A copy queued on it still runs on its bytes: the memory is the caller's.
///
/// # Safety
///
/// See the module docs of [`exports`](super).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostUnregister(p: *mut c_void) -> CUresult {
    const OP: &str = "cuMemHostUnregister";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(p, OP, "p")?;
        if s.host_allocs.overlapping(p as usize, 1).is_some() {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("{p:p} is cuMemAllocHost memory, not registered")));
        }
        if let HostRange::Pinned(b) = s.devices[0].registered_host(p as usize, 1) {
            if b.addr() != p as usize {
                return Err(err(
                    CUDA_ERROR_INVALID_VALUE,
                    OP,
                    format!("{p:p} lies inside the range registered at {:#x}, not at its start", b.addr()),
                ));
            }
        }
        s.devices[0]
            .unregister_host(p.cast())
            .map_err(|e| err(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, OP, e.message().to_string()))
    })
}

/// `CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int
/// Flags)` (`cuMemHostGetDevicePointer` in `cuda.h`): the device address of registered or
/// `cuMemAllocHost` memory, which is `p` itself here (an interior pointer answers its own
/// address). `Flags` must be 0.
///
/// # Safety
///
/// See the module docs of [`exports`](super).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    pdptr: *mut CUdeviceptr,
    p: *mut c_void,
    flags: c_uint,
) -> CUresult {
    const OP: &str = "cuMemHostGetDevicePointer_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(pdptr, OP, "pdptr")?;
        non_null(p, OP, "p")?;
        if flags != 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("Flags {flags:#x} must be 0")));
        }
        s.current(OP)?;
        let known = s.host_allocs.overlapping(p as usize, 1).is_some()
            || matches!(s.devices[0].registered_host(p as usize, 1), HostRange::Pinned(_));
        if !known {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                OP,
                format!("{p:p} is neither registered host memory nor cuMemAllocHost memory"),
            ));
        }
        // SAFETY: non-null, and the caller passes a writable `CUdeviceptr`.
        unsafe { pdptr.write(p as CUdeviceptr) };
        Ok(())
    })
}

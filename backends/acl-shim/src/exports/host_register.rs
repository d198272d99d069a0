//! Host registration ([contract §15](mempool_hal::contract::host_register)):
//! `aclrtHostRegister`, `aclrtHostRegisterV2`, `aclrtHostUnregister`, with CANN's checks
//! in CANN's order.
//!
//! A registered range is page-locked memory for copies and memsets (queued in stream
//! order, not done before the call returns) until it is unregistered; its device address
//! is its host address (the emulator's memory is host memory). The table of ranges is the
//! emulator's, one per process here. Codes:
//!
//! | situation | code |
//! |---|---|
//! | null `ptr` or `devPtr`, size 0 | 100000 |
//! | V1 `type` with a bit other than IOMEMORY (0x4) and READONLY (0x8) | 207000 |
//! | V2 `flag` 0, or a bit other than MAPPED, IOMEMORY, READONLY, PINNED | 107000 |
//! | no current context | 107002 |
//! | a range that wraps, is larger than the host addresses, or lies in device memory | 107000 |
//! | a range overlapping a registered one or `aclrtMallocHost` memory | 507910 |
//! | unregister of an address that is not a registered range's start | 507911 |
//!
//! CANN's V1 leaves an overlap to the driver, whose "already registered" answer is
//! 507910 (another driver may answer 507899); V2 checks overlap itself, with 507910.

use super::prelude::*;
use mempool_hal::{HostRegisterFlags, HostRegistration};
use sys::aclrtHostRegisterType;

use sys::{ACL_HOST_REG_MAPPED as MAPPED, ACL_HOST_REG_PINNED as PINNED};
/// The type bits and flags IOMEMORY and READONLY (the same values in V1 and V2).
const IOMEMORY: u32 = sys::ACL_HOST_REG_IOMEMORY;
const READONLY: u32 = sys::ACL_HOST_REG_READONLY;

/// Registers `[ptr, ptr + size)` on the emulator (arguments checked by the caller), after
/// the context check; answers the device address.
fn register(ptr: *mut c_void, size: u64, read_only: bool, op: &'static str) -> mempool_hal::Result<*mut c_void> {
    let s = shim(op)?;
    let device = current(op)?;
    let len = usize::try_from(size).ok().filter(|&n| (ptr as usize).checked_add(n).is_some()).ok_or_else(|| {
        err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("[{ptr:p}, +{size}) wraps the address space"))
    })?;
    if let Some((base, n)) = s.host_allocs.overlapping(ptr as usize, len) {
        return Err(err(
            code::ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED,
            op,
            format!("[{ptr:p}, +{size}) overlaps aclrtMallocHost memory [{base:#x}, +{n}), page-locked already"),
        ));
    }
    // SAFETY: the C caller owns the range and keeps it valid until it is unregistered and
    // the copies queued on it have run (the ACL contract of registered memory); the
    // emulator only records it here.
    let d = unsafe { s.dev(device).register_host(ptr.cast(), len, HostRegisterFlags { read_only }) }
        .map_err(|e| e.with_op(op))?;
    Ok(d.addr() as *mut c_void)
}

/// `aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type,
/// void **devPtr)`: registers the range and writes its device address (the pointer
/// itself here) to `*devPtr`.
///
/// # Safety
///
/// See the module docs of [`exports`](super); `ptr` must stay valid until it is
/// unregistered and the work queued on it has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostRegister(
    ptr: *mut c_void,
    size: u64,
    type_: aclrtHostRegisterType,
    dev_ptr: *mut *mut c_void,
) -> aclError {
    const OP: &str = "aclrtHostRegister";
    ffi(OP, || {
        non_null(ptr, OP, "ptr")?;
        non_null(dev_ptr, OP, "devPtr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        let bits = type_ as u32;
        if bits & !(IOMEMORY | READONLY) != 0 {
            return Err(err(
                code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                OP,
                format!("register type {bits:#x} has bits other than IOMEMORY (0x4) and READONLY (0x8)"),
            ));
        }
        let d = register(ptr, size, bits & READONLY != 0, OP)?;
        // SAFETY: non-null, and the caller passes a writable `void *`.
        unsafe { dev_ptr.write(d) };
        Ok(())
    })
}

/// `aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)`: registers the
/// range; `flag` holds at least one of MAPPED (0x2), IOMEMORY (0x4), READONLY (0x8),
/// PINNED (0x10000000) and nothing else.
///
/// # Safety
///
/// As [`aclrtHostRegister`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> aclError {
    const OP: &str = "aclrtHostRegisterV2";
    ffi(OP, || {
        non_null(ptr, OP, "ptr")?;
        if size == 0 {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "size 0"));
        }
        let known = MAPPED | IOMEMORY | READONLY | PINNED;
        if flag == 0 || flag & !known != 0 {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("flag {flag:#x} is not a non-empty set of MAPPED, IOMEMORY, READONLY, PINNED"),
            ));
        }
        register(ptr, size, flag & READONLY != 0, OP).map(drop)
    })
}

/// `aclError aclrtHostUnregister(void *ptr)`: unregisters the range registered at `ptr`
/// (its start). A copy queued on it still runs on its bytes: the memory is the caller's.
///
/// # Safety
///
/// See the module docs of [`exports`](super).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostUnregister(ptr: *mut c_void) -> aclError {
    const OP: &str = "aclrtHostUnregister";
    ffi(OP, || {
        non_null(ptr, OP, "ptr")?;
        let s = shim(OP)?;
        let device = current(OP)?;
        s.dev(device).unregister_host(ptr.cast()).map_err(|e| e.with_op(OP))
    })
}

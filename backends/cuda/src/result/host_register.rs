//! Host registration ([contract §15](mempool_hal::contract::host_register)):
//! `cuMemHostRegister_v2`, `cuMemHostGetDevicePointer_v2`, `cuMemHostUnregister`.
//! Optional symbols: a driver without them answers `NotSupported` at the first call, and
//! still loads.

use super::kind_of;
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::{ErrorKind, Result};
use std::ffi::c_void;

/// The kind of a failed registration call: 712 (the range overlaps a registered one) is
/// `InvalidParam`, 713 (nothing registered there) `InvalidPointer`.
pub(crate) fn register_kind(rc: sys::CUresult) -> ErrorKind {
    match rc {
        sys::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => ErrorKind::InvalidParam,
        sys::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED => ErrorKind::InvalidPointer,
        _ => kind_of(rc),
    }
}

/// `cuMemHostRegister_v2` of `size` bytes at `ptr`, mapped for the device
/// (`CU_MEMHOSTREGISTER_DEVICEMAP`, and `READ_ONLY` when `read_only`).
#[inline]
pub(crate) fn register(rt: &Runtime, ptr: *mut c_void, size: usize, read_only: bool) -> Result<()> {
    let f = sym!(rt, cuMemHostRegister_v2)?;
    let ro = if read_only { sys::CU_MEMHOSTREGISTER_READ_ONLY } else { 0 };
    // SAFETY: the caller owns the host range and keeps it valid until it is unregistered
    // and the work queued on it has run (`register_host`'s contract).
    let rc = unsafe { f(ptr, size, sys::CU_MEMHOSTREGISTER_DEVICEMAP | ro) };
    rt.check_with(rc, "cuMemHostRegister_v2", register_kind)
}

/// `cuMemHostGetDevicePointer_v2` of registered memory at `ptr`.
#[inline]
pub(crate) fn device_pointer(rt: &Runtime, ptr: *mut c_void) -> Result<sys::CUdeviceptr> {
    let f = sym!(rt, cuMemHostGetDevicePointer_v2)?;
    let mut d: sys::CUdeviceptr = 0;
    // SAFETY: a valid out-pointer; the driver only looks the address up.
    let rc = unsafe { f(&mut d, ptr, 0) };
    rt.check_with(rc, "cuMemHostGetDevicePointer_v2", register_kind)?;
    Ok(d)
}

/// `cuMemHostUnregister` of the range registered at `ptr`.
#[inline]
pub(crate) fn unregister(rt: &Runtime, ptr: *mut c_void) -> Result<()> {
    let f = sym!(rt, cuMemHostUnregister)?;
    // SAFETY: the driver only looks the address up in its registrations.
    let rc = unsafe { f(ptr) };
    rt.check_with(rc, "cuMemHostUnregister", register_kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_codes_map_to_kinds() {
        assert_eq!(register_kind(712), ErrorKind::InvalidParam);
        assert_eq!(register_kind(713), ErrorKind::InvalidPointer);
        assert_eq!(register_kind(1), ErrorKind::InvalidParam);
        assert_eq!(register_kind(201), ErrorKind::NoContext);
    }
}

//! Host registration ([contract §15](mempool_hal::contract::host_register)):
//! `aclrtHostRegister`, `aclrtHostUnregister`. Optional symbols: a runtime without them
//! answers `NotSupported` at the first call, and still loads. 507910 (the range overlaps a
//! registered one) is `InvalidParam`, 507911 (nothing registered there) `InvalidPointer`
//! ([`kind_of`](super::kind_of)).

use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;
use std::ffi::c_void;

/// `aclrtHostRegister` of `size` bytes at `ptr`, mapped (READONLY when `read_only`):
/// the device address the runtime answers.
#[inline]
pub(crate) fn register(rt: &Runtime, ptr: *mut c_void, size: u64, read_only: bool) -> Result<*mut c_void> {
    let f = sym!(rt, aclrtHostRegister)?;
    let ty = if read_only { sys::ACL_HOST_REGISTER_READONLY } else { sys::ACL_HOST_REGISTER_MAPPED };
    let mut dev: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the caller owns the host range and keeps it valid until
    // it is unregistered and the work queued on it has run (`register_host`'s contract).
    let rc = unsafe { f(ptr, size, ty, &mut dev) };
    rt.check(rc, "aclrtHostRegister")?;
    Ok(dev)
}

/// `aclrtHostUnregister` of the range registered at `ptr`.
#[inline]
pub(crate) fn unregister(rt: &Runtime, ptr: *mut c_void) -> Result<()> {
    let f = sym!(rt, aclrtHostUnregister)?;
    // SAFETY: the runtime only looks the address up in its table of registrations.
    let rc = unsafe { f(ptr) };
    rt.check(rc, "aclrtHostUnregister")
}

//! Virtual memory (contract §14): `aclrtMemGetAllocationGranularity`,
//! `aclrtReserveMemAddress`, `aclrtReleaseMemAddress`, `aclrtMallocPhysical`,
//! `aclrtFreePhysical`, `aclrtMapMem`, `aclrtUnmapMem`, `aclrtMemSetAccess`.
//!
//! None of these needs a current context on CANN; the device is named by the properties
//! and access descriptors. A runtime without one of the symbols (a CANN older than the
//! calls) answers `NotSupported` (207000) naming it.

use super::vmm_kind;
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;
use std::ffi::c_void;

/// `aclrtMemGetAllocationGranularity` of device memory in 2 MiB pages on `device`
/// (`option`: minimum 0, recommended 1).
#[inline]
pub(crate) fn granularity(rt: &Runtime, device: u32, option: sys::aclrtMemGranularityOptions) -> Result<u64> {
    let f = sym!(rt, aclrtMemGetAllocationGranularity)?;
    let mut prop = sys::aclrtPhysicalMemProp::device(device);
    let mut g: usize = 0;
    // SAFETY: a properly laid out props struct (checked at compile time in `sys`) and a
    // valid out-pointer, both alive for the call.
    let rc = unsafe { f(&mut prop, option, &mut g) };
    rt.check_with(rc, "aclrtMemGetAllocationGranularity", vmm_kind)?;
    Ok(g as u64)
}

/// `aclrtReserveMemAddress` of `size` bytes (flags 0: normal reservation); `expect` is
/// the address asked for, or null for anywhere.
#[inline]
pub(crate) fn reserve(rt: &Runtime, size: usize, alignment: usize, expect: *mut c_void) -> Result<*mut c_void> {
    let f = sym!(rt, aclrtReserveMemAddress)?;
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; `expect` is only an address the runtime compares.
    let rc = unsafe { f(&mut p, size, alignment, expect, 0) };
    rt.check_with(rc, "aclrtReserveMemAddress", vmm_kind)?;
    Ok(p)
}

/// `aclrtReleaseMemAddress` of the reservation starting at `at`.
#[inline]
pub(crate) fn release(rt: &Runtime, at: *mut c_void) -> Result<()> {
    let f = sym!(rt, aclrtReleaseMemAddress)?;
    // SAFETY: an address the runtime looks up; nothing is dereferenced on the host.
    rt.check_with(unsafe { f(at) }, "aclrtReleaseMemAddress", vmm_kind)
}

/// `aclrtMallocPhysical` of `size` bytes of device memory in 2 MiB pages on `device`.
#[inline]
pub(crate) fn malloc_physical(rt: &Runtime, device: u32, size: usize) -> Result<sys::aclrtDrvMemHandle> {
    let f = sym!(rt, aclrtMallocPhysical)?;
    let prop = sys::aclrtPhysicalMemProp::device(device);
    let mut h: sys::aclrtDrvMemHandle = std::ptr::null_mut();
    // SAFETY: a valid out-pointer and a properly laid out props struct, alive for the call.
    let rc = unsafe { f(&mut h, size, &prop, 0) };
    rt.check_with(rc, "aclrtMallocPhysical", vmm_kind)?;
    Ok(h)
}

/// `aclrtFreePhysical`.
#[inline]
pub(crate) fn free_physical(rt: &Runtime, handle: sys::aclrtDrvMemHandle) -> Result<()> {
    let f = sym!(rt, aclrtFreePhysical)?;
    // SAFETY: the caller passes a live handle of this runtime that it will not pass again
    // (the runtime dereferences handles; see the module docs of `result`).
    rt.check_with(unsafe { f(handle) }, "aclrtFreePhysical", vmm_kind)
}

/// `aclrtMapMem` of `size` bytes of `handle`, from `offset`, at `at` (flags 0).
#[inline]
pub(crate) fn map(
    rt: &Runtime,
    at: *mut c_void,
    size: usize,
    offset: usize,
    handle: sys::aclrtDrvMemHandle,
) -> Result<()> {
    let f = sym!(rt, aclrtMapMem)?;
    // SAFETY: the caller passes a live handle of this runtime; the address is looked up
    // by the runtime.
    rt.check_with(unsafe { f(at, size, offset, handle, 0) }, "aclrtMapMem", vmm_kind)
}

/// `aclrtUnmapMem` of the mapping starting at `at`.
#[inline]
pub(crate) fn unmap(rt: &Runtime, at: *mut c_void) -> Result<()> {
    let f = sym!(rt, aclrtUnmapMem)?;
    // SAFETY: an address the runtime looks up; nothing is dereferenced on the host.
    rt.check_with(unsafe { f(at) }, "aclrtUnmapMem", vmm_kind)
}

/// `aclrtMemSetAccess` of `[at, at + size)` for `device`, with one descriptor.
#[inline]
pub(crate) fn set_access(
    rt: &Runtime,
    at: *mut c_void,
    size: usize,
    device: u32,
    flags: sys::aclrtMemAccessFlags,
) -> Result<()> {
    let f = sym!(rt, aclrtMemSetAccess)?;
    let mut desc = sys::aclrtMemAccessDesc::device(device, flags);
    // SAFETY: one properly laid out descriptor, alive for the call; the address is
    // looked up by the runtime.
    rt.check_with(unsafe { f(at, size, &mut desc, 1) }, "aclrtMemSetAccess", vmm_kind)
}

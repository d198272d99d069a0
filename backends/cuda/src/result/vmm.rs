//! Virtual memory (contract §14): `cuMemGetAllocationGranularity`, `cuMemAddressReserve`,
//! `cuMemAddressFree`, `cuMemCreate`, `cuMemRelease`, `cuMemMap`, `cuMemUnmap`,
//! `cuMemSetAccess`.
//!
//! None of these needs a current context on the driver; the device is named by the
//! properties and access descriptors. A driver without one of the symbols (older than
//! CUDA 10.2) answers `NotSupported` (801) naming it.

use super::kind_of;
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;

/// `cuMemGetAllocationGranularity` of pinned memory on `device` (`option`: minimum 0,
/// recommended 1).
#[inline]
pub(crate) fn granularity(
    rt: &Runtime,
    device: sys::CUdevice,
    option: sys::CUmemAllocationGranularity_flags,
) -> Result<u64> {
    let f = sym!(rt, cuMemGetAllocationGranularity)?;
    let prop = sys::CUmemAllocationProp::device(device);
    let mut g: usize = 0;
    // SAFETY: a valid out-pointer and a properly laid out props struct (checked at compile
    // time in `sys`), both alive for the call.
    let rc = unsafe { f(&mut g, &prop, option) };
    rt.check_with(rc, "cuMemGetAllocationGranularity", kind_of)?;
    Ok(g as u64)
}

/// `cuMemAddressReserve` of `size` bytes aligned to `alignment` (0: the driver's
/// default), at `addr` if the driver can (0: anywhere); flags 0.
#[inline]
pub(crate) fn reserve(rt: &Runtime, size: usize, alignment: usize, addr: sys::CUdeviceptr) -> Result<sys::CUdeviceptr> {
    let f = sym!(rt, cuMemAddressReserve)?;
    let mut p: sys::CUdeviceptr = 0;
    // SAFETY: a valid out-pointer; `addr` is only a number the driver compares.
    rt.check_with(unsafe { f(&mut p, size, alignment, addr, 0) }, "cuMemAddressReserve", kind_of)?;
    Ok(p)
}

/// `cuMemAddressFree` of the reservation `[ptr, ptr + size)`.
#[inline]
pub(crate) fn free(rt: &Runtime, ptr: sys::CUdeviceptr, size: usize) -> Result<()> {
    let f = sym!(rt, cuMemAddressFree)?;
    // SAFETY: plain numbers the driver looks up.
    rt.check_with(unsafe { f(ptr, size) }, "cuMemAddressFree", kind_of)
}

/// `cuMemCreate` of `size` bytes of pinned memory on `device`; flags 0.
#[inline]
pub(crate) fn create(rt: &Runtime, device: sys::CUdevice, size: usize) -> Result<sys::CUmemGenericAllocationHandle> {
    let f = sym!(rt, cuMemCreate)?;
    let prop = sys::CUmemAllocationProp::device(device);
    let mut h: sys::CUmemGenericAllocationHandle = 0;
    // SAFETY: a valid out-pointer and a properly laid out props struct, alive for the call.
    rt.check_with(unsafe { f(&mut h, size, &prop, 0) }, "cuMemCreate", kind_of)?;
    Ok(h)
}

/// `cuMemRelease`.
#[inline]
pub(crate) fn release(rt: &Runtime, handle: sys::CUmemGenericAllocationHandle) -> Result<()> {
    let f = sym!(rt, cuMemRelease)?;
    // SAFETY: the caller passes a live handle of this driver that it will not pass again
    // (an unknown handle is undefined behaviour on the driver).
    rt.check_with(unsafe { f(handle) }, "cuMemRelease", kind_of)
}

/// `cuMemMap` of `size` bytes of `handle`, from `offset`, at `ptr`; flags 0.
#[inline]
pub(crate) fn map(
    rt: &Runtime,
    ptr: sys::CUdeviceptr,
    size: usize,
    offset: usize,
    handle: sys::CUmemGenericAllocationHandle,
) -> Result<()> {
    let f = sym!(rt, cuMemMap)?;
    // SAFETY: the caller passes a live handle of this driver; the address is looked up.
    rt.check_with(unsafe { f(ptr, size, offset, handle, 0) }, "cuMemMap", kind_of)
}

/// `cuMemUnmap` of `[ptr, ptr + size)`.
#[inline]
pub(crate) fn unmap(rt: &Runtime, ptr: sys::CUdeviceptr, size: usize) -> Result<()> {
    let f = sym!(rt, cuMemUnmap)?;
    // SAFETY: plain numbers the driver looks up.
    rt.check_with(unsafe { f(ptr, size) }, "cuMemUnmap", kind_of)
}

/// `cuMemSetAccess` of `[ptr, ptr + size)` for `device`, with one descriptor.
#[inline]
pub(crate) fn set_access(
    rt: &Runtime,
    ptr: sys::CUdeviceptr,
    size: usize,
    device: sys::CUdevice,
    flags: sys::CUmemAccess_flags,
) -> Result<()> {
    let f = sym!(rt, cuMemSetAccess)?;
    let desc = sys::CUmemAccessDesc::device(device, flags);
    // SAFETY: one properly laid out descriptor, alive for the call.
    rt.check_with(unsafe { f(ptr, size, &desc, 1) }, "cuMemSetAccess", kind_of)
}

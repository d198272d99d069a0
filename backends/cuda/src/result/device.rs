//! Devices: `cuDriverGetVersion`, `cuDeviceGetCount`, `cuDeviceGet`,
//! `cuDeviceGetAttribute`, `cuMemGetInfo_v2`, and a device's pools:
//! `cuDeviceGetDefaultMemPool`, `cuDeviceGetMemPool`, `cuDeviceSetMemPool`.

use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;
use std::ffi::c_int;

/// `cuDriverGetVersion`: the driver's version, 1000 × major + 10 × minor (12020 is 12.2).
#[inline]
pub(crate) fn driver_version(rt: &Runtime) -> Result<c_int> {
    let f = sym!(rt, cuDriverGetVersion)?;
    let mut v: c_int = 0;
    // SAFETY: a valid out-pointer.
    rt.check(unsafe { f(&mut v) }, "cuDriverGetVersion")?;
    Ok(v)
}

/// `cuDeviceGetCount`: how many devices the driver sees.
#[inline]
pub(crate) fn count(rt: &Runtime) -> Result<c_int> {
    let f = sym!(rt, cuDeviceGetCount)?;
    let mut n: c_int = 0;
    // SAFETY: a valid out-pointer.
    rt.check(unsafe { f(&mut n) }, "cuDeviceGetCount")?;
    Ok(n)
}

/// `cuDeviceGet`: the device of `ordinal` (101 when there is none).
#[inline]
pub(crate) fn get(rt: &Runtime, ordinal: c_int) -> Result<sys::CUdevice> {
    let f = sym!(rt, cuDeviceGet)?;
    let mut d: sys::CUdevice = 0;
    // SAFETY: a valid out-pointer.
    rt.check(unsafe { f(&mut d, ordinal) }, "cuDeviceGet")?;
    Ok(d)
}

/// `cuDeviceGetAttribute`: the value of `attribute` for `device`.
#[inline]
pub(crate) fn attribute(rt: &Runtime, device: sys::CUdevice, attribute: sys::CUdevice_attribute) -> Result<c_int> {
    let f = sym!(rt, cuDeviceGetAttribute)?;
    let mut v: c_int = 0;
    // SAFETY: a valid out-pointer; the caller passes a device from `cuDeviceGet`.
    rt.check(unsafe { f(&mut v, attribute, device) }, "cuDeviceGetAttribute")?;
    Ok(v)
}

/// `cuMemGetInfo_v2`: the (free, total) bytes of the current context's device.
#[inline]
pub(crate) fn mem_info(rt: &Runtime) -> Result<(usize, usize)> {
    let f = sym!(rt, cuMemGetInfo_v2)?;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; the caller has made a context current.
    rt.check(unsafe { f(&mut free, &mut total) }, "cuMemGetInfo_v2")?;
    Ok((free, total))
}

/// `cuDeviceGetDefaultMemPool`: the pool the driver made for `device`.
#[inline]
pub(crate) fn default_mem_pool(rt: &Runtime, device: sys::CUdevice) -> Result<sys::CUmemoryPool> {
    let f = sym!(rt, cuDeviceGetDefaultMemPool)?;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the caller passes a device from `cuDeviceGet`.
    rt.check(unsafe { f(&mut pool, device) }, "cuDeviceGetDefaultMemPool")?;
    Ok(pool)
}

/// `cuDeviceGetMemPool`: the pool `cuMemAllocAsync` allocates from on `device`.
#[inline]
pub(crate) fn mem_pool(rt: &Runtime, device: sys::CUdevice) -> Result<sys::CUmemoryPool> {
    let f = sym!(rt, cuDeviceGetMemPool)?;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the caller passes a device from `cuDeviceGet`.
    rt.check(unsafe { f(&mut pool, device) }, "cuDeviceGetMemPool")?;
    Ok(pool)
}

/// `cuDeviceSetMemPool`: makes `pool` the one `cuMemAllocAsync` allocates from on `device`.
#[inline]
pub(crate) fn set_mem_pool(rt: &Runtime, device: sys::CUdevice, pool: sys::CUmemoryPool) -> Result<()> {
    let f = sym!(rt, cuDeviceSetMemPool)?;
    // SAFETY: the caller passes a device from `cuDeviceGet` and a live pool of it.
    rt.check(unsafe { f(device, pool) }, "cuDeviceSetMemPool")
}

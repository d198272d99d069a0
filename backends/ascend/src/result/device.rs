//! Devices: `aclrtSynchronizeDevice`, `aclrtGetMemInfo`, peer access.

use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;

/// `aclrtSynchronizeDevice`: waits for the work of the current context's streams (CANN
/// covers the current context only, not the whole device).
#[inline]
pub(crate) fn synchronize(rt: &Runtime) -> Result<()> {
    let f = sym!(rt, aclrtSynchronizeDevice)?;
    // SAFETY: no arguments; the caller has made a context current.
    rt.check(unsafe { f() }, "aclrtSynchronizeDevice")
}

/// `aclrtGetMemInfo(ACL_HBM_MEM)`: the current device's (free, total) bytes.
#[inline]
pub(crate) fn mem_info(rt: &Runtime) -> Result<(usize, usize)> {
    let f = sym!(rt, aclrtGetMemInfo)?;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    let rc = unsafe { f(sys::ACL_HBM_MEM, &mut free, &mut total) };
    rt.check(rc, "aclrtGetMemInfo")?;
    Ok((free, total))
}

/// `aclrtGetVersion`: the runtime's (major, minor, patch) version.
#[inline]
pub(crate) fn version(rt: &Runtime) -> Result<(i32, i32, i32)> {
    let f = sym!(rt, aclrtGetVersion)?;
    let (mut major, mut minor, mut patch) = (0i32, 0i32, 0i32);
    // SAFETY: valid out-pointers.
    let rc = unsafe { f(&mut major, &mut minor, &mut patch) };
    rt.check(rc, "aclrtGetVersion")?;
    Ok((major, minor, patch))
}

/// `aclrtDeviceCanAccessPeer(&can, device, peer)`.
#[inline]
pub(crate) fn can_access_peer(rt: &Runtime, device: i32, peer: i32) -> Result<bool> {
    let f = sym!(rt, aclrtDeviceCanAccessPeer)?;
    let mut can = 0i32;
    // SAFETY: a valid out-pointer; the ids are checked by the runtime.
    let rc = unsafe { f(&mut can, device, peer) };
    rt.check(rc, "aclrtDeviceCanAccessPeer")?;
    Ok(can == 1)
}

/// `aclrtDeviceEnablePeerAccess(peer, 0)` from the current device.
#[inline]
pub(crate) fn enable_peer_access(rt: &Runtime, peer: i32) -> Result<()> {
    let f = sym!(rt, aclrtDeviceEnablePeerAccess)?;
    // SAFETY: no pointer arguments.
    rt.check(unsafe { f(peer, 0) }, "aclrtDeviceEnablePeerAccess")
}

/// `aclrtDeviceDisablePeerAccess(peer)` from the current device.
#[inline]
pub(crate) fn disable_peer_access(rt: &Runtime, peer: i32) -> Result<()> {
    let f = sym!(rt, aclrtDeviceDisablePeerAccess)?;
    // SAFETY: no pointer arguments.
    rt.check(unsafe { f(peer) }, "aclrtDeviceDisablePeerAccess")
}

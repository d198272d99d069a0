//! Contexts: `cuDevicePrimaryCtxRetain`, `cuDevicePrimaryCtxRelease_v2`,
//! `cuCtxSetCurrent`, `cuCtxGetCurrent`, `cuCtxSynchronize`, and peer access
//! (`cuDeviceCanAccessPeer`, `cuCtxEnablePeerAccess`, `cuCtxDisablePeerAccess`).

use super::sync_kind;
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;

/// `cuDevicePrimaryCtxRetain`: the device's primary context, with one more reference held
/// (created on the first retain in the process). It does not become current.
#[inline]
pub(crate) fn primary_retain(rt: &Runtime, device: sys::CUdevice) -> Result<sys::CUcontext> {
    let f = sym!(rt, cuDevicePrimaryCtxRetain)?;
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the caller passes a device from `cuDeviceGet`.
    rt.check(unsafe { f(&mut ctx, device) }, "cuDevicePrimaryCtxRetain")?;
    Ok(ctx)
}

/// `cuDevicePrimaryCtxRelease_v2`: gives back one reference taken by
/// [`primary_retain`]; the last one destroys the context.
#[inline]
pub(crate) fn primary_release(rt: &Runtime, device: sys::CUdevice) -> Result<()> {
    let f = sym!(rt, cuDevicePrimaryCtxRelease_v2)?;
    // SAFETY: the caller gives back a reference it took and no handle of it is used any
    // more (see the module docs of `result`).
    rt.check(unsafe { f(device) }, "cuDevicePrimaryCtxRelease_v2")
}

/// `cuCtxSetCurrent`: binds `ctx` to the calling thread.
#[inline]
pub(crate) fn set_current(rt: &Runtime, ctx: sys::CUcontext) -> Result<()> {
    let f = sym!(rt, cuCtxSetCurrent)?;
    // SAFETY: the caller passes a context it holds a reference on.
    rt.check(unsafe { f(ctx) }, "cuCtxSetCurrent")
}

/// `cuCtxGetCurrent`: the calling thread's current context (null when it has none).
#[inline]
pub(crate) fn current(rt: &Runtime) -> Result<sys::CUcontext> {
    let f = sym!(rt, cuCtxGetCurrent)?;
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    rt.check(unsafe { f(&mut ctx) }, "cuCtxGetCurrent")?;
    Ok(ctx)
}

/// `cuCtxSynchronize`: waits for every stream of the current context. Failed device work
/// is `AsyncFailure`.
#[inline]
pub(crate) fn synchronize(rt: &Runtime) -> Result<()> {
    let f = sym!(rt, cuCtxSynchronize)?;
    // SAFETY: no arguments; the caller has made a context current.
    rt.check_with(unsafe { f() }, "cuCtxSynchronize", sync_kind)
}

/// `cuDeviceCanAccessPeer(&can, device, peer)`.
#[inline]
pub(crate) fn can_access_peer(rt: &Runtime, device: sys::CUdevice, peer: sys::CUdevice) -> Result<bool> {
    let f = sym!(rt, cuDeviceCanAccessPeer)?;
    let mut can: std::ffi::c_int = 0;
    // SAFETY: a valid out-pointer; the devices come from `cuDeviceGet`.
    rt.check(unsafe { f(&mut can, device, peer) }, "cuDeviceCanAccessPeer")?;
    Ok(can == 1)
}

/// `cuCtxEnablePeerAccess(peer, 0)` from the current context.
#[inline]
pub(crate) fn enable_peer_access(rt: &Runtime, peer: sys::CUcontext) -> Result<()> {
    let f = sym!(rt, cuCtxEnablePeerAccess)?;
    // SAFETY: the caller holds a reference on `peer`.
    rt.check(unsafe { f(peer, 0) }, "cuCtxEnablePeerAccess")
}

/// `cuCtxDisablePeerAccess(peer)` from the current context.
#[inline]
pub(crate) fn disable_peer_access(rt: &Runtime, peer: sys::CUcontext) -> Result<()> {
    let f = sym!(rt, cuCtxDisablePeerAccess)?;
    // SAFETY: the caller holds a reference on `peer`.
    rt.check(unsafe { f(peer) }, "cuCtxDisablePeerAccess")
}

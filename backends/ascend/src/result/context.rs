//! Contexts: `aclrtCreateContext`, `aclrtDestroyContext`, `aclrtSetCurrentContext`,
//! `aclrtGetCurrentContext`.

use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;

/// `aclrtCreateContext`: a new context on `device`, which becomes current on the calling
/// thread.
#[inline]
pub(crate) fn create(rt: &Runtime, device: i32) -> Result<sys::aclrtContext> {
    let f = sym!(rt, aclrtCreateContext)?;
    let mut ctx: sys::aclrtContext = std::ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer.
    rt.check(unsafe { f(&mut ctx, device) }, "aclrtCreateContext")?;
    Ok(ctx)
}

/// `aclrtDestroyContext`.
#[inline]
pub(crate) fn destroy(rt: &Runtime, ctx: sys::aclrtContext) -> Result<()> {
    let f = sym!(rt, aclrtDestroyContext)?;
    // SAFETY: the caller passes a context it created on this runtime and that no handle
    // uses any more (see the module docs of `result`).
    rt.check(unsafe { f(ctx) }, "aclrtDestroyContext")
}

/// `aclrtSetCurrentContext`.
#[inline]
pub(crate) fn set_current(rt: &Runtime, ctx: sys::aclrtContext) -> Result<()> {
    let f = sym!(rt, aclrtSetCurrentContext)?;
    // SAFETY: the caller passes a live context created on this runtime.
    rt.check(unsafe { f(ctx) }, "aclrtSetCurrentContext")
}

/// `aclrtGetCurrentContext`: the calling thread's current context (107002 when it has
/// none).
#[inline]
pub(crate) fn current(rt: &Runtime) -> Result<sys::aclrtContext> {
    let f = sym!(rt, aclrtGetCurrentContext)?;
    let mut ctx: sys::aclrtContext = std::ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer.
    rt.check(unsafe { f(&mut ctx) }, "aclrtGetCurrentContext")?;
    Ok(ctx)
}

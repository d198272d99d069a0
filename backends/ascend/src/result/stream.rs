//! Streams: `aclrtCreateStream`, `aclrtDestroyStream`, `aclrtSynchronizeStream`.

use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::Result;

/// `aclrtCreateStream`: a new stream in the current context.
#[inline]
pub(crate) fn create(rt: &Runtime) -> Result<sys::aclrtStream> {
    let f = sym!(rt, aclrtCreateStream)?;
    let mut s: sys::aclrtStream = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    rt.check(unsafe { f(&mut s) }, "aclrtCreateStream")?;
    Ok(s)
}

/// `aclrtDestroyStream`.
#[inline]
pub(crate) fn destroy(rt: &Runtime, stream: sys::aclrtStream) -> Result<()> {
    let f = sym!(rt, aclrtDestroyStream)?;
    // SAFETY: the caller passes a live stream that it will never pass to the runtime
    // again (see the module docs of `result`).
    rt.check(unsafe { f(stream) }, "aclrtDestroyStream")
}

/// `aclrtSynchronizeStream`.
#[inline]
pub(crate) fn synchronize(rt: &Runtime, stream: sys::aclrtStream) -> Result<()> {
    let f = sym!(rt, aclrtSynchronizeStream)?;
    // SAFETY: the caller passes a live stream.
    rt.check(unsafe { f(stream) }, "aclrtSynchronizeStream")
}

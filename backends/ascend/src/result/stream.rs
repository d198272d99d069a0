//! Streams: `aclrtCreateStream`, `aclrtDestroyStream`, `aclrtSynchronizeStream`,
//! `aclrtStreamQuery`.

use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::{Result, StreamStatus};

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

/// `aclrtStreamQuery`: whether everything enqueued on `stream` has run.
#[inline]
pub(crate) fn query(rt: &Runtime, stream: sys::aclrtStream) -> Result<StreamStatus> {
    let f = sym!(rt, aclrtStreamQuery)?;
    let mut status = sys::ACL_STREAM_STATUS_NOT_READY;
    // SAFETY: the caller passes a live stream; valid out-pointer.
    rt.check(unsafe { f(stream, &mut status) }, "aclrtStreamQuery")?;
    Ok(if status == sys::ACL_STREAM_STATUS_COMPLETE { StreamStatus::Complete } else { StreamStatus::NotReady })
}

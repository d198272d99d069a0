//! Streams: `cuStreamCreate`, `cuStreamDestroy_v2`, `cuStreamSynchronize`,
//! `cuStreamQuery`, `cuStreamWaitEvent`.

use super::sync_kind;
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::{Result, StreamStatus};
use std::ffi::c_uint;

/// `cuStreamCreate` with `flags` in the current context.
#[inline]
pub(crate) fn create(rt: &Runtime, flags: c_uint) -> Result<sys::CUstream> {
    let f = sym!(rt, cuStreamCreate)?;
    let mut s: sys::CUstream = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    rt.check(unsafe { f(&mut s, flags) }, "cuStreamCreate")?;
    Ok(s)
}

/// `cuStreamDestroy_v2`: work already enqueued still runs.
#[inline]
pub(crate) fn destroy(rt: &Runtime, stream: sys::CUstream) -> Result<()> {
    let f = sym!(rt, cuStreamDestroy_v2)?;
    // SAFETY: the caller passes a live stream that it will never pass to the driver again
    // (see the module docs of `result`).
    rt.check(unsafe { f(stream) }, "cuStreamDestroy_v2")
}

/// `cuStreamSynchronize`. Failed device work is `AsyncFailure`.
#[inline]
pub(crate) fn synchronize(rt: &Runtime, stream: sys::CUstream) -> Result<()> {
    let f = sym!(rt, cuStreamSynchronize)?;
    // SAFETY: the caller passes a live stream.
    rt.check_with(unsafe { f(stream) }, "cuStreamSynchronize", sync_kind)
}

/// `cuStreamQuery`: 0 when everything enqueued has run, `CUDA_ERROR_NOT_READY` (600)
/// while work is pending.
#[inline]
pub(crate) fn query(rt: &Runtime, stream: sys::CUstream) -> Result<StreamStatus> {
    let f = sym!(rt, cuStreamQuery)?;
    // SAFETY: the caller passes a live stream.
    match unsafe { f(stream) } {
        sys::CUDA_SUCCESS => Ok(StreamStatus::Complete),
        sys::CUDA_ERROR_NOT_READY => Ok(StreamStatus::NotReady),
        rc => Err(rt.failure(rc, "cuStreamQuery", sync_kind(rc))),
    }
}

/// `cuStreamWaitEvent` (flags 0): later work on `stream` waits for `event`'s latest record.
#[inline]
pub(crate) fn wait_event(rt: &Runtime, stream: sys::CUstream, event: sys::CUevent) -> Result<()> {
    let f = sym!(rt, cuStreamWaitEvent)?;
    // SAFETY: the caller passes live handles.
    rt.check(unsafe { f(stream, event, 0) }, "cuStreamWaitEvent")
}

//! Events: `cuEventCreate`, `cuEventDestroy_v2`, `cuEventRecord`, `cuEventSynchronize`,
//! `cuEventQuery`, `cuEventElapsedTime`.

use super::{elapsed_kind, sync_kind};
use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::{EventStatus, Result};
use std::ffi::c_uint;

/// `cuEventCreate` with `flags` in the current context.
#[inline]
pub(crate) fn create(rt: &Runtime, flags: c_uint) -> Result<sys::CUevent> {
    let f = sym!(rt, cuEventCreate)?;
    let mut e: sys::CUevent = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    rt.check(unsafe { f(&mut e, flags) }, "cuEventCreate")?;
    Ok(e)
}

/// `cuEventDestroy_v2`.
#[inline]
pub(crate) fn destroy(rt: &Runtime, event: sys::CUevent) -> Result<()> {
    let f = sym!(rt, cuEventDestroy_v2)?;
    // SAFETY: the caller passes a live event that it will never pass to the driver again
    // (see the module docs of `result`).
    rt.check(unsafe { f(event) }, "cuEventDestroy_v2")
}

/// `cuEventRecord`.
#[inline]
pub(crate) fn record(rt: &Runtime, event: sys::CUevent, stream: sys::CUstream) -> Result<()> {
    let f = sym!(rt, cuEventRecord)?;
    // SAFETY: the caller passes live handles.
    rt.check(unsafe { f(event, stream) }, "cuEventRecord")
}

/// `cuEventSynchronize`. Failed device work is `AsyncFailure`.
#[inline]
pub(crate) fn synchronize(rt: &Runtime, event: sys::CUevent) -> Result<()> {
    let f = sym!(rt, cuEventSynchronize)?;
    // SAFETY: the caller passes a live event.
    rt.check_with(unsafe { f(event) }, "cuEventSynchronize", sync_kind)
}

/// `cuEventQuery`: 0 when the work before the latest record has run (or the event was
/// never recorded), `CUDA_ERROR_NOT_READY` (600) while it is pending.
#[inline]
pub(crate) fn query(rt: &Runtime, event: sys::CUevent) -> Result<EventStatus> {
    let f = sym!(rt, cuEventQuery)?;
    // SAFETY: the caller passes a live event.
    match unsafe { f(event) } {
        sys::CUDA_SUCCESS => Ok(EventStatus::Complete),
        sys::CUDA_ERROR_NOT_READY => Ok(EventStatus::NotReady),
        rc => Err(rt.failure(rc, "cuEventQuery", sync_kind(rc))),
    }
}

/// `cuEventElapsedTime`: milliseconds from `start` to `end`. An event never recorded
/// (400) or not complete (600) is `NotReady`.
#[inline]
pub(crate) fn elapsed_ms(rt: &Runtime, start: sys::CUevent, end: sys::CUevent) -> Result<f32> {
    let f = sym!(rt, cuEventElapsedTime)?;
    let mut ms = 0f32;
    // SAFETY: the caller passes live events; a valid out-pointer.
    rt.check_with(unsafe { f(&mut ms, start, end) }, "cuEventElapsedTime", elapsed_kind)?;
    Ok(ms)
}

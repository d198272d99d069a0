//! Events: `aclrtCreateEvent`, `aclrtDestroyEvent`, `aclrtRecordEvent`,
//! `aclrtStreamWaitEvent`, `aclrtSynchronizeEvent`, `aclrtQueryEventStatus`,
//! `aclrtEventElapsedTime`.

use crate::loader::{Runtime, sym};
use crate::sys;
use mempool_hal::{EventStatus, Result};

/// `aclrtCreateEvent`: a new event in the current context.
#[inline]
pub(crate) fn create(rt: &Runtime) -> Result<sys::aclrtEvent> {
    let f = sym!(rt, aclrtCreateEvent)?;
    let mut e: sys::aclrtEvent = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    rt.check(unsafe { f(&mut e) }, "aclrtCreateEvent")?;
    Ok(e)
}

/// `aclrtDestroyEvent`.
#[inline]
pub(crate) fn destroy(rt: &Runtime, event: sys::aclrtEvent) -> Result<()> {
    let f = sym!(rt, aclrtDestroyEvent)?;
    // SAFETY: the caller passes a live event that it will never pass to the runtime
    // again (see the module docs of `result`).
    rt.check(unsafe { f(event) }, "aclrtDestroyEvent")
}

/// `aclrtRecordEvent`.
#[inline]
pub(crate) fn record(rt: &Runtime, event: sys::aclrtEvent, stream: sys::aclrtStream) -> Result<()> {
    let f = sym!(rt, aclrtRecordEvent)?;
    // SAFETY: the caller passes live handles.
    rt.check(unsafe { f(event, stream) }, "aclrtRecordEvent")
}

/// `aclrtStreamWaitEvent`.
#[inline]
pub(crate) fn stream_wait(rt: &Runtime, stream: sys::aclrtStream, event: sys::aclrtEvent) -> Result<()> {
    let f = sym!(rt, aclrtStreamWaitEvent)?;
    // SAFETY: the caller passes live handles.
    rt.check(unsafe { f(stream, event) }, "aclrtStreamWaitEvent")
}

/// `aclrtSynchronizeEvent`.
#[inline]
pub(crate) fn synchronize(rt: &Runtime, event: sys::aclrtEvent) -> Result<()> {
    let f = sym!(rt, aclrtSynchronizeEvent)?;
    // SAFETY: the caller passes a live event.
    rt.check(unsafe { f(event) }, "aclrtSynchronizeEvent")
}

/// `aclrtQueryEventStatus`.
#[inline]
pub(crate) fn query(rt: &Runtime, event: sys::aclrtEvent) -> Result<EventStatus> {
    let f = sym!(rt, aclrtQueryEventStatus)?;
    let mut status = sys::ACL_EVENT_RECORDED_STATUS_NOT_READY;
    // SAFETY: the caller passes a live event; valid out-pointer.
    rt.check(unsafe { f(event, &mut status) }, "aclrtQueryEventStatus")?;
    Ok(if status == sys::ACL_EVENT_RECORDED_STATUS_COMPLETE { EventStatus::Complete } else { EventStatus::NotReady })
}

/// `aclrtEventElapsedTime`: milliseconds from `start` to `end`.
#[inline]
pub(crate) fn elapsed_ms(rt: &Runtime, start: sys::aclrtEvent, end: sys::aclrtEvent) -> Result<f32> {
    let f = sym!(rt, aclrtEventElapsedTime)?;
    let mut ms = 0f32;
    // SAFETY: the caller passes live events; valid out-pointer.
    rt.check(unsafe { f(&mut ms, start, end) }, "aclrtEventElapsedTime")?;
    Ok(ms)
}

//! Events: creating (with flags), recording, waiting, resetting, synchronizing (plain and timed), querying, and their times.

use super::prelude::*;

/// `aclError aclrtCreateEvent(aclrtEvent *event)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError {
    const OP: &str = "aclrtCreateEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.dev(current(OP)?).create_event()?;
        let h = s.events.insert(ev);
        // SAFETY: non-null, and the caller passes a writable `aclrtEvent`.
        unsafe { event.write(h as aclrtEvent) };
        Ok(())
    })
}

/// `aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)`: as
/// `aclrtCreateEvent`; every event keeps time stamps whatever the flags.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, _flag: u32) -> aclError {
    const OP: &str = "aclrtCreateEventWithFlag";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.dev(current(OP)?).create_event()?;
        let h = s.events.insert(ev);
        // SAFETY: non-null, and the caller passes a writable `aclrtEvent`.
        unsafe { event.write(h as aclrtEvent) };
        Ok(())
    })
}

/// `aclError aclrtDestroyEvent(aclrtEvent event)`: needs no current context (as on
/// CANN).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyEvent(event: aclrtEvent) -> aclError {
    const OP: &str = "aclrtDestroyEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        s.events.remove(event as usize);
        s.dev(current(OP).unwrap_or(0)).destroy_event(&ev)
    })
}

/// `aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtRecordEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).record_event(&ev, &e.stream)
    })
}

/// `aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError {
    const OP: &str = "aclrtStreamWaitEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let ev = s.event(event as usize, OP)?;
        s.dev(e.device).stream_wait_event(&e.stream, &ev)
    })
}

/// `aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)` (null stream: the
/// default stream): the event forgets its record, taking effect at the call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtResetEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).reset_event(&ev, &e.stream)
    })
}

/// `aclError aclrtSynchronizeEvent(aclrtEvent event)`: needs no current context (as on
/// CANN).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError {
    const OP: &str = "aclrtSynchronizeEvent";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        s.dev(current(OP).unwrap_or(0)).synchronize_event(&ev)
    })
}

/// `aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)` (-1: no
/// limit): as `aclrtSynchronizeEvent`, or 507047 when the recorded point has not been
/// reached within `timeout` ms. Needs no current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32) -> aclError {
    const OP: &str = "aclrtSynchronizeEventWithTimeout";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        let t = timeout_ms(timeout, OP)?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        s.dev(current(OP).unwrap_or(0)).synchronize_event_timeout(&ev, t)
    })
}

/// `aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)`:
/// needs no current context (as on CANN).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus) -> aclError {
    const OP: &str = "aclrtQueryEventStatus";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        non_null(status, OP, "status")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let st = match s.dev(current(OP).unwrap_or(0)).query_event(&ev)? {
            EventStatus::Complete => ACL_EVENT_RECORDED_STATUS_COMPLETE,
            EventStatus::NotReady => ACL_EVENT_RECORDED_STATUS_NOT_READY,
        };
        // SAFETY: non-null, and the caller passes a writable status.
        unsafe { status.write(st) };
        Ok(())
    })
}

/// `aclError aclrtEventElapsedTime(float *ms, aclrtEvent start, aclrtEvent end)`: real
/// elapsed milliseconds between two completed events. An event never recorded answers
/// 507000, as on CANN; needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventElapsedTime(ms: *mut f32, start: aclrtEvent, end: aclrtEvent) -> aclError {
    const OP: &str = "aclrtEventElapsedTime";
    ffi(OP, || {
        non_null(ms, OP, "ms")?;
        non_null(start, OP, "startEvent")?;
        non_null(end, OP, "endEvent")?;
        let s = shim(OP)?;
        let (a, b) = (s.event(start as usize, OP)?, s.event(end as usize, OP)?);
        let v = s.dev(current(OP).unwrap_or(0)).event_elapsed_ms(&a, &b)?;
        // SAFETY: non-null, and the caller passes a writable float.
        unsafe { ms.write(v) };
        Ok(())
    })
}

/// `aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)`: when the
/// event's recorded point was reached, in microseconds since the Unix epoch; an event
/// never recorded or not reached yet: 507000. Needs no current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventGetTimestamp(event: aclrtEvent, timestamp: *mut u64) -> aclError {
    const OP: &str = "aclrtEventGetTimestamp";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        non_null(timestamp, OP, "timestamp")?;
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let us = s.dev(current(OP).unwrap_or(0)).event_timestamp_us(&ev)?;
        // SAFETY: non-null, and the caller passes a writable `uint64_t`.
        unsafe { timestamp.write(us) };
        Ok(())
    })
}

//! Events: creating (with flags), recording, waiting, resetting, synchronizing (plain and timed), querying, and their times.

use super::prelude::*;
use crate::state::EventEntry;

/// What `aclrtCreateEvent` gives an event: CANN's default flags (its `RT_EVENT_DEFAULT`
/// holds a wait flag of the runtime's own, so such an event may be waited on and reset).
const DEFAULT_FLAGS: u32 = sys::ACL_EVENT_SYNC | sys::ACL_EVENT_TIME_LINE;
/// The highest flags value `aclrtCreateEventWithFlag` accepts (CANN's `RT_EVENT_FLAG_MAX`).
const MAX_FLAGS: u32 = 0x3F;
/// `ACL_EVENT_DEVICE_USE_ONLY` and `ACL_EVENT_EXTERNAL`: each only alone.
const ALONE_FLAGS: [u32; 2] = [0x10, 0x20];
/// The flags that give an event a wait task (`ACL_EVENT_SYNC`, `ACL_EVENT_EXTERNAL`):
/// without one, CANN refuses to wait on it or reset it (207000).
const WAITABLE_FLAGS: u32 = sys::ACL_EVENT_SYNC | 0x20;

/// `aclrtCreateEvent` (`flags` `None`: the default flags) and `aclrtCreateEventWithFlag`:
/// flags 0, above 0x3F, or `ACL_EVENT_DEVICE_USE_ONLY` / `ACL_EVENT_EXTERNAL` with
/// another flag answer 107000, as CANN checks them.
fn create_event(event: *mut aclrtEvent, flags: Option<u32>, op: &'static str) -> mempool_hal::Result<()> {
    non_null(event, op, "event")?;
    if let Some(f) = flags
        && (f == 0 || f > MAX_FLAGS || ALONE_FLAGS.iter().any(|&a| f & a != 0 && f != a))
    {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!(
                "event flags {f:#x} are not valid (one or more of 0x1-0x20 up to 0x3F; ACL_EVENT_DEVICE_USE_ONLY and \
                 ACL_EVENT_EXTERNAL alone)"
            ),
        ));
    }
    let s = shim(op)?;
    let ev = s.dev(current(op)?).create_event()?;
    let h = s.events.insert(EventEntry::new(ev, flags.unwrap_or(DEFAULT_FLAGS), false));
    // SAFETY: non-null, and the caller passes a writable `aclrtEvent`.
    unsafe { event.write(h as aclrtEvent) };
    Ok(())
}

/// Refuses to wait on or reset an event created without a wait flag (`ACL_EVENT_SYNC`):
/// 207000, as CANN (a timing-only event, `ACL_EVENT_TIME_LINE`, cannot be waited on).
fn waitable(e: &EventEntry, h: aclrtEvent, op: &'static str) -> mempool_hal::Result<()> {
    if e.flags & WAITABLE_FLAGS == 0 {
        return Err(err(
            code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            op,
            format!(
                "event {h:p} was created with flags {:#x}, without ACL_EVENT_SYNC: it cannot be waited on or reset",
                e.flags
            ),
        ));
    }
    Ok(())
}

/// `aclError aclrtCreateEvent(aclrtEvent *event)`: an event of the current device that
/// streams may wait on.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError {
    const OP: &str = "aclrtCreateEvent";
    ffi(OP, || create_event(event, None, OP))
}

/// `aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)`: as
/// `aclrtCreateEvent`, with the flags kept and checked as CANN checks them: 0, above
/// 0x3F, or `ACL_EVENT_DEVICE_USE_ONLY` / `ACL_EVENT_EXTERNAL` mixed with another flag
/// answer 107000; an event without `ACL_EVENT_SYNC` cannot be waited on or reset
/// (207000). Every event keeps time stamps whatever its flags.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    const OP: &str = "aclrtCreateEventWithFlag";
    ffi(OP, || create_event(event, Some(flag), OP))
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
        let ev = s.event(event as usize, OP)?.event;
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
        let ev = s.event(event as usize, OP)?.event;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).record_event(&ev, &e.stream)?;
        crate::state::note_task(s, &e);
        Ok(())
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
        waitable(&ev, event, OP)?;
        s.dev(e.device).stream_wait_event(&e.stream, &ev.event)?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}

/// `aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)`: an event of
/// CANN's "new mode", with the flags checked as CANN checks them: one or more of
/// `ACL_EVENT_SYNC`, `ACL_EVENT_CAPTURE_STREAM_PROGRESS`, 0x4 and `ACL_EVENT_TIME_LINE`,
/// or `ACL_EVENT_IPC` alone; anything else (0, `ACL_EVENT_DEVICE_USE_ONLY`,
/// `ACL_EVENT_EXTERNAL`, mixtures with `ACL_EVENT_IPC`, above 0x4F): 107000. Only such an
/// event, created with `ACL_EVENT_SYNC` alone, takes the external record and wait flags.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    const OP: &str = "aclrtCreateEventExWithFlag";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        const ORABLE: u32 = 0xF;
        if !(flag != 0 && (flag & !ORABLE == 0 || flag == sys::ACL_EVENT_IPC)) {
            return Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("event flags {flag:#x} are not valid here (one or more of 0x1-0x8, or ACL_EVENT_IPC alone)"),
            ));
        }
        let s = shim(OP)?;
        let ev = s.dev(current(OP)?).create_event()?;
        let h = s.events.insert(EventEntry::new(ev, flag, true));
        // SAFETY: non-null, and the caller passes a writable `aclrtEvent`.
        unsafe { event.write(h as aclrtEvent) };
        Ok(())
    })
}

/// The checks of an external record or wait flag (`ACL_EVENT_RECORD_EXTERNAL`,
/// `ACL_EVENT_WAIT_EXTERNAL`), and that the event keeps the flag its first record (or
/// wait) used: an event not made by `aclrtCreateEventExWithFlag` with `ACL_EVENT_SYNC`
/// alone: 207000; no stream captures a graph here, so an external one then answers
/// 107029; a flag other than the first one used: 107000.
fn flag_checks(e: &EventEntry, slot: usize, flag: u32, op: &'static str) -> mempool_hal::Result<()> {
    let mut fixed = e.fixed.lock().unwrap_or_else(PoisonError::into_inner);
    let first = *fixed[slot].get_or_insert(flag);
    if flag == 1 && !(e.ex && e.flags == sys::ACL_EVENT_SYNC) {
        return Err(err(
            code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            op,
            "an external flag needs an event created by aclrtCreateEventExWithFlag with ACL_EVENT_SYNC alone",
        ));
    }
    if first != flag {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            format!("the event was first used with flag {first}, and keeps it (asked: {flag})"),
        ));
    }
    if flag == 1 {
        return Err(err(
            sys::ACL_ERROR_RT_STREAM_NOT_CAPTURED,
            op,
            "an external flag is for a stream capturing a graph, and no stream captures here",
        ));
    }
    Ok(())
}

/// `aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t
/// flag)`: `ACL_EVENT_RECORD_DEFAULT` records as `aclrtRecordEvent`;
/// `ACL_EVENT_RECORD_EXTERNAL` is for graph capture (see `flag_checks`); another flag:
/// 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRecordEventWithFlag(event: aclrtEvent, stream: aclrtStream, flag: u32) -> aclError {
    const OP: &str = "aclrtRecordEventWithFlag";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        if flag > sys::ACL_EVENT_RECORD_EXTERNAL {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("flag {flag} is neither 0 nor 1")));
        }
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        let e = s.stream(stream as usize, OP)?;
        flag_checks(&ev, 0, flag, OP)?;
        s.dev(e.device).record_event(&ev.event, &e.stream)?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}

/// `aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t
/// timeout, uint32_t flag)` (null stream: the default stream): `ACL_EVENT_WAIT_DEFAULT`
/// waits as `aclrtStreamWaitEvent` (the wait takes the event's record when it is enqueued,
/// and `timeout` sets no limit of its own here); `ACL_EVENT_WAIT_EXTERNAL` is for graph
/// capture (see `flag_checks`) and takes only timeout 0; another flag: 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamWaitEventWithFlag(
    stream: aclrtStream,
    event: aclrtEvent,
    timeout: u32,
    flag: u32,
) -> aclError {
    const OP: &str = "aclrtStreamWaitEventWithFlag";
    ffi(OP, || {
        non_null(event, OP, "event")?;
        if flag > sys::ACL_EVENT_WAIT_EXTERNAL || (flag == sys::ACL_EVENT_WAIT_EXTERNAL && timeout != 0) {
            return Err(err(
                code::ACL_ERROR_INVALID_PARAM,
                OP,
                format!("flag {flag} with timeout {timeout}: the flag is 0 or 1, and 1 takes only timeout 0"),
            ));
        }
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let ev = s.event(event as usize, OP)?;
        waitable(&ev, event, OP)?;
        flag_checks(&ev, 1, flag, OP)?;
        s.dev(e.device).stream_wait_event(&e.stream, &ev.event)?;
        crate::state::note_task(s, &e);
        Ok(())
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
        waitable(&ev, event, OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).reset_event(&ev.event, &e.stream)
    })
}

/// `aclrtSynchronizeEvent` (`timeout` `None`) and `aclrtSynchronizeEventWithTimeout`: no
/// current context needed (as on CANN).
fn synchronize_event(
    event: aclrtEvent,
    timeout: Option<std::time::Duration>,
    op: &'static str,
) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let ev = s.event(event as usize, op)?.event;
    s.dev(current(op).unwrap_or(0)).synchronize_event_timeout(&ev, timeout)
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
        synchronize_event(event, None, OP)
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
        synchronize_event(event, timeout_ms(timeout, OP)?, OP)
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
        let ev = s.event(event as usize, OP)?.event;
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
        let (a, b) = (s.event(start as usize, OP)?.event, s.event(end as usize, OP)?.event);
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
        let ev = s.event(event as usize, OP)?.event;
        let us = s.dev(current(OP).unwrap_or(0)).event_timestamp_us(&ev)?;
        // SAFETY: non-null, and the caller passes a writable `uint64_t`.
        unsafe { timestamp.write(us) };
        Ok(())
    })
}

//! Events: creating, recording, waiting on them from a stream, synchronizing, querying,
//! their elapsed time, and destroying them.

use super::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// The flags `cuEventCreate` knows: `CU_EVENT_BLOCKING_SYNC`, `CU_EVENT_DISABLE_TIMING`,
/// `CU_EVENT_INTERPROCESS`.
const KNOWN_FLAGS: c_uint = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;

/// `CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)`: an event of the current
/// context's device. Flags: `CU_EVENT_DEFAULT` (0), `CU_EVENT_BLOCKING_SYNC` (1, accepted;
/// every wait blocks here) and `CU_EVENT_DISABLE_TIMING` (2), which makes
/// `cuEventElapsedTime` refuse the event. Unknown bits, or `CU_EVENT_INTERPROCESS` (4)
/// without `CU_EVENT_DISABLE_TIMING`: `CUDA_ERROR_INVALID_VALUE`; `CU_EVENT_INTERPROCESS`
/// with it: `CUDA_ERROR_NOT_SUPPORTED` (no interprocess events here).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(event: *mut CUevent, flags: c_uint) -> CUresult {
    const OP: &str = "cuEventCreate";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(event, OP, "phEvent")?;
        if flags & !KNOWN_FLAGS != 0 || (flags & CU_EVENT_INTERPROCESS != 0 && flags & CU_EVENT_DISABLE_TIMING == 0) {
            return Err(err(
                CUDA_ERROR_INVALID_VALUE,
                OP,
                format!("event flags {flags:#x} are not valid (bits 0x1-0x4; 0x4 only with 0x2)"),
            ));
        }
        if flags & CU_EVENT_INTERPROCESS != 0 {
            return Err(err(CUDA_ERROR_NOT_SUPPORTED, OP, "interprocess events are not supported"));
        }
        let d = s.current(OP)?;
        let ev = s.dev(d).create_event().map_err(|e| e.with_op(OP))?;
        let h = s.events.insert(EventEntry {
            device: d,
            event: ev,
            timing: flags & CU_EVENT_DISABLE_TIMING == 0,
            recorded: Arc::new(AtomicBool::new(false)),
        });
        // SAFETY: non-null, and the caller passes a writable `CUevent`.
        unsafe { event.write(h as CUevent) };
        Ok(())
    })
}

/// `CUresult cuEventRecord(CUevent hEvent, CUstream hStream)` (NULL stream,
/// `CU_STREAM_LEGACY`: the current context's legacy default stream, whose end is after
/// the earlier work of every blocking stream; `CU_STREAM_PER_THREAD`: the thread's
/// per-thread one): records the event at the current end of the stream, replacing an
/// earlier record. A stream of another device than the event's is accepted.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventRecord(event: CUevent, stream: CUstream) -> CUresult {
    const OP: &str = "cuEventRecord";
    ffi(OP, || record(event, stream, OP))
}

/// The body of both event records.
fn record(event: CUevent, stream: CUstream, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let ev = s.event(event as usize, op)?;
    let e = s.stream(stream as usize, op)?;
    s.enqueue(&e, op, || s.dev(e.device).record_event(&ev.event, &e.stream).map_err(|e| e.with_op(op)))?;
    ev.recorded.store(true, Ordering::Release);
    Ok(())
}

/// `CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int
/// flags)`: as `cuEventRecord`. `flags` is `CU_EVENT_RECORD_DEFAULT` (0) or
/// `CU_EVENT_RECORD_EXTERNAL` (1, which matters only while a stream is captured, and no
/// stream is here); anything else: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventRecordWithFlags(event: CUevent, stream: CUstream, flags: c_uint) -> CUresult {
    const OP: &str = "cuEventRecordWithFlags";
    ffi(OP, || {
        shim(OP)?;
        if flags != CU_EVENT_RECORD_DEFAULT && flags != CU_EVENT_RECORD_EXTERNAL {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("flags {flags:#x} are neither 0 nor 1")));
        }
        record(event, stream, OP)
    })
}

per_thread_twin!(cuEventRecord_ptsz = cuEventRecord(event: CUevent, stream: CUstream) stream stream);
per_thread_twin!(cuEventRecordWithFlags_ptsz = cuEventRecordWithFlags(event: CUevent, stream: CUstream, flags: c_uint) stream stream);
per_thread_twin!(cuStreamWaitEvent_ptsz = cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) stream stream);

/// `CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)`
/// (the default streams as for `cuEventRecord`): later work on the stream waits
/// for the work before the event's latest record (an event never recorded: nothing to
/// wait for). `Flags` must be 0 (`CUDA_ERROR_INVALID_VALUE`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) -> CUresult {
    const OP: &str = "cuStreamWaitEvent";
    ffi(OP, || {
        let s = shim(OP)?;
        if flags != 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("flags {flags:#x} are not 0")));
        }
        let e = s.stream(stream as usize, OP)?;
        let ev = s.event(event as usize, OP)?;
        s.enqueue(&e, OP, || s.dev(e.device).stream_wait_event(&e.stream, &ev.event).map_err(|e| e.with_op(OP)))
    })
}

/// `CUresult cuEventSynchronize(CUevent hEvent)`: waits for the work before the event's
/// latest record (an event never recorded: at once); the pools of that stream's device
/// then release memory above their threshold. Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventSynchronize(event: CUevent) -> CUresult {
    const OP: &str = "cuEventSynchronize";
    ffi(OP, || {
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        s.dev(ev.device).synchronize_event(&ev.event).map_err(|e| e.with_op(OP))
    })
}

/// `CUresult cuEventQuery(CUevent hEvent)`: `CUDA_SUCCESS` when the work before the
/// event's latest record has run, or the event was never recorded (as the driver answers);
/// `CUDA_ERROR_NOT_READY` (600) otherwise. Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventQuery(event: CUevent) -> CUresult {
    const OP: &str = "cuEventQuery";
    ffi(OP, || {
        let s = shim(OP)?;
        let ev = s.event(event as usize, OP)?;
        if !ev.recorded.load(Ordering::Acquire) {
            return Ok(());
        }
        match s.dev(ev.device).query_event(&ev.event).map_err(|e| e.with_op(OP))? {
            EventStatus::Complete => Ok(()),
            EventStatus::NotReady => {
                Err(err(CUDA_ERROR_NOT_READY, OP, format!("the work before event {event:p} has not completed")))
            }
        }
    })
}

/// `CUresult cuEventDestroy_v2(CUevent hEvent)` (`cuEventDestroy` in `cuda.h`): returns at
/// once, even if the recorded work has not completed. Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventDestroy_v2(event: CUevent) -> CUresult {
    const OP: &str = "cuEventDestroy_v2";
    ffi(OP, || destroy(event, OP))
}

/// `CUresult cuEventDestroy(CUevent hEvent)`: CUDA 2.0's variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventDestroy(event: CUevent) -> CUresult {
    const OP: &str = "cuEventDestroy";
    ffi(OP, || destroy(event, OP))
}

/// The body of both event destructions.
fn destroy(event: CUevent, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let ev = s.event(event as usize, op)?;
    s.events.remove(event as usize);
    s.dev(ev.device).destroy_event(&ev.event).map_err(|e| e.with_op(op))
}

/// `CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)`: the
/// real milliseconds between the completion of the two recorded points. An event created
/// with `CU_EVENT_DISABLE_TIMING`, or never recorded: `CUDA_ERROR_INVALID_HANDLE`; one
/// whose work has not completed: `CUDA_ERROR_NOT_READY`. Needs no current context.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult {
    const OP: &str = "cuEventElapsedTime";
    ffi(OP, || elapsed(ms, start, end, OP))
}

/// `CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)`:
/// as `cuEventElapsedTime` (CUDA 12.8's variant, the one CUDA 13 clients resolve).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult {
    const OP: &str = "cuEventElapsedTime_v2";
    ffi(OP, || elapsed(ms, start, end, OP))
}

/// The body of both elapsed-time calls.
fn elapsed(ms: *mut f32, start: CUevent, end: CUevent, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(ms, op, "pMilliseconds")?;
    let (a, b) = (s.event(start as usize, op)?, s.event(end as usize, op)?);
    for (h, e) in [(start, &a), (end, &b)] {
        if !e.timing {
            return Err(err(CUDA_ERROR_INVALID_HANDLE, op, format!("event {h:p} was created without timing")));
        }
        if !e.recorded.load(Ordering::Acquire) {
            return Err(err(CUDA_ERROR_INVALID_HANDLE, op, format!("event {h:p} was never recorded")));
        }
    }
    let v = s.dev(a.device).event_elapsed_ms(&a.event, &b.event).map_err(|e| e.with_op(op))?;
    // SAFETY: non-null, and the caller passes a writable `float`.
    unsafe { ms.write(v) };
    Ok(())
}

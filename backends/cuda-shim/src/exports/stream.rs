//! Streams: creating, destroying, synchronizing and querying them.
//!
//! The default streams are the driver's. The NULL stream and `CU_STREAM_LEGACY` (0x1) name
//! the current context's legacy default stream, one per device, made at its first use:
//! its work waits for the work enqueued before it on every blocking stream of the device
//! (created with `CU_STREAM_DEFAULT`, and the per-thread default streams), and work
//! enqueued on a blocking stream waits for the legacy stream's work enqueued before it.
//! A stream created with `CU_STREAM_NON_BLOCKING` does neither. `CU_STREAM_PER_THREAD`
//! (0x2) names the calling thread's per-thread default stream of the current context's
//! device: a blocking stream of its own per thread, made at its first use and destroyed
//! when the thread ends, with no order between two threads' per-thread streams. The
//! implicit waits are the emulator's own (an internal event recorded on one stream and
//! waited for on the other), so its stream-order checker sees them: how they are made,
//! and what they cost, is in the crate's `state` module.
//!
//! Every handle argument takes the three special values; a synchronization or query of
//! the legacy stream waits for, or asks about, its own work (which includes the
//! blocking-stream work it waits for), not blocking-stream work enqueued after it.

use super::prelude::*;

/// `CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)`: a stream of the
/// current context's device. `Flags` is `CU_STREAM_DEFAULT` (0: a blocking stream, which
/// synchronizes with the legacy default stream) or `CU_STREAM_NON_BLOCKING` (1: one that
/// does not); anything else: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut CUstream, flags: c_uint) -> CUresult {
    const OP: &str = "cuStreamCreate";
    ffi(OP, || create(stream, flags, OP))
}

/// `CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int
/// priority)`: as `cuStreamCreate`. The emulator has one priority (the range
/// `cuCtxGetStreamPriorityRange` reports is 0 to 0), and the driver clamps a priority
/// outside the range to it: every priority is taken, and means the same.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    stream: *mut CUstream,
    flags: c_uint,
    _priority: c_int,
) -> CUresult {
    const OP: &str = "cuStreamCreateWithPriority";
    ffi(OP, || create(stream, flags, OP))
}

/// The body of both stream creations.
fn create(stream: *mut CUstream, flags: c_uint, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(stream, op, "phStream")?;
    if flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING {
        return Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("stream flags {flags:#x} are neither 0 nor 1")));
    }
    let d = s.current(op)?;
    let st = s.dev(d).create_stream().map_err(|e| e.with_op(op))?;
    let kind = if flags == CU_STREAM_NON_BLOCKING {
        StreamKind::NonBlocking
    } else {
        s.adopt(d, &st);
        StreamKind::Blocking
    };
    let context = s.current_handle(op)?;
    let id = s.next_stream_id();
    let h = s.streams.insert(StreamEntry { device: d, stream: st, kind, context, flags, id });
    // SAFETY: non-null, and the caller passes a writable `CUstream`.
    unsafe { stream.write(h as CUstream) };
    Ok(())
}

/// `CUresult cuStreamDestroy_v2(CUstream hStream)` (`cuStreamDestroy` in `cuda.h`):
/// returns at once; the work already queued on the stream still runs (and later work on
/// the legacy default stream still waits for that of a blocking stream). The default
/// streams cannot be destroyed: the NULL stream, `CU_STREAM_LEGACY` and
/// `CU_STREAM_PER_THREAD` answer `CUDA_ERROR_INVALID_HANDLE`, as a garbage or destroyed
/// handle does (this library's choice: the legacy stream lives as long as the process, a
/// per-thread stream until its thread ends).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: CUstream) -> CUresult {
    const OP: &str = "cuStreamDestroy_v2";
    ffi(OP, || destroy(stream, OP))
}

/// `CUresult cuStreamDestroy(CUstream hStream)`: CUDA 2.0's variant, the same call.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamDestroy(stream: CUstream) -> CUresult {
    const OP: &str = "cuStreamDestroy";
    ffi(OP, || destroy(stream, OP))
}

/// The body of both stream destructions.
fn destroy(stream: CUstream, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let default = [
        (std::ptr::null_mut(), "the NULL stream"),
        (CU_STREAM_LEGACY, "CU_STREAM_LEGACY"),
        (CU_STREAM_PER_THREAD, "CU_STREAM_PER_THREAD"),
    ]
    .into_iter()
    .find_map(|(h, name)| (h == stream).then_some(name));
    if let Some(name) = default {
        return Err(err(CUDA_ERROR_INVALID_HANDLE, op, format!("{name} (a default stream) cannot be destroyed")));
    }
    s.stream(stream as usize, op)?;
    // Another thread may have destroyed it since the look-up: the removal decides.
    let e = s
        .streams
        .remove(stream as usize)
        .ok_or_else(|| err(CUDA_ERROR_INVALID_HANDLE, op, format!("stream {stream:p} is destroyed")))?;
    s.retire(&e, op)
}

/// `CUresult cuStreamSynchronize(CUstream hStream)` (NULL, `CU_STREAM_LEGACY`: the current
/// context's legacy default stream; `CU_STREAM_PER_THREAD`: the thread's per-thread
/// one): waits for the stream's work; the pools of its device then release memory above
/// their threshold.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamSynchronize(stream: CUstream) -> CUresult {
    const OP: &str = "cuStreamSynchronize";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.dev(e.device).synchronize_stream(&e.stream).map_err(|e| e.with_op(OP))
    })
}

/// `CUresult cuStreamQuery(CUstream hStream)` (the default streams as for
/// `cuStreamSynchronize`): `CUDA_SUCCESS` when everything queued has run (the host has then observed the
/// stream, as after a synchronization, but no pool releases anything),
/// `CUDA_ERROR_NOT_READY` (600) while work is pending.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamQuery(stream: CUstream) -> CUresult {
    const OP: &str = "cuStreamQuery";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        match s.dev(e.device).query_stream(&e.stream).map_err(|e| e.with_op(OP))? {
            StreamStatus::Complete => Ok(()),
            StreamStatus::NotReady => Err(err(CUDA_ERROR_NOT_READY, OP, format!("stream {stream:p} has work pending"))),
        }
    })
}

per_thread_twin!(cuStreamSynchronize_ptsz = cuStreamSynchronize(stream: CUstream) stream stream);
per_thread_twin!(cuStreamQuery_ptsz = cuStreamQuery(stream: CUstream) stream stream);

/// NULL as the per-thread default stream (`CU_STREAM_PER_THREAD`), for the `_ptsz` twins;
/// every other handle as it is.
pub(crate) fn per_thread(stream: CUstream) -> CUstream {
    if stream.is_null() { CU_STREAM_PER_THREAD } else { stream }
}

/// Looks the stream up and writes one of its properties through `out`.
fn query<T>(
    stream: CUstream,
    out: *mut T,
    what: &str,
    op: &'static str,
    get: impl FnOnce(&Shim, &StreamEntry) -> mempool_hal::Result<T>,
) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    non_null(out, op, what)?;
    let e = s.stream(stream as usize, op)?;
    let v = get(s, &e)?;
    // SAFETY: non-null, and the caller passes a writable value of the type.
    unsafe { out.write(v) };
    Ok(())
}

/// `CUresult cuStreamGetPriority(CUstream hStream, int *priority)`: 0, the one priority
/// of the emulator's streams (the range of `cuCtxGetStreamPriorityRange`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetPriority(stream: CUstream, priority: *mut c_int) -> CUresult {
    const OP: &str = "cuStreamGetPriority";
    ffi(OP, || query(stream, priority, "priority", OP, |_, _| Ok(0)))
}

/// `CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)`: the flags the
/// stream was created with (`CU_STREAM_DEFAULT` 0, `CU_STREAM_NON_BLOCKING` 1; 0 for the
/// default streams).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetFlags(stream: CUstream, flags: *mut c_uint) -> CUresult {
    const OP: &str = "cuStreamGetFlags";
    ffi(OP, || query(stream, flags, "flags", OP, |_, e| Ok(e.flags)))
}

/// `CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId)`: an id unique
/// in the process (the legacy default stream's is 1, as its handle, 0 for NULL; a
/// per-thread default stream's 2).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetId(stream: CUstream, id: *mut u64) -> CUresult {
    const OP: &str = "cuStreamGetId";
    ffi(OP, || query(stream, id, "streamId", OP, |_, e| Ok(e.id)))
}

/// `CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device)`: the stream's device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetDevice(stream: CUstream, device: *mut CUdevice) -> CUresult {
    const OP: &str = "cuStreamGetDevice";
    ffi(OP, || query(stream, device, "device", OP, |_, e| Ok(e.device as CUdevice)))
}

/// `CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)`: the context the stream
/// was created in (a default stream: the current context).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetCtx(stream: CUstream, pctx: *mut CUcontext) -> CUresult {
    const OP: &str = "cuStreamGetCtx";
    ffi(OP, || query(stream, pctx, "pctx", OP, |_, e| Ok(e.context as CUcontext)))
}

/// `CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)`
/// (CUDA 12.5's variant): as `cuStreamGetCtx`; there are no green contexts here, so
/// `*pGreenCtx` (where given) is NULL.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetCtx_v2(
    stream: CUstream,
    pctx: *mut CUcontext,
    green: *mut *mut c_void,
) -> CUresult {
    const OP: &str = "cuStreamGetCtx_v2";
    ffi(OP, || {
        query(stream, pctx, "pCtx", OP, |_, e| Ok(e.context as CUcontext))?;
        if !green.is_null() {
            // SAFETY: non-null, and the caller passes a writable `CUgreenCtx`.
            unsafe { green.write(std::ptr::null_mut()) };
        }
        Ok(())
    })
}

/// `CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)`:
/// `CU_STREAM_CAPTURE_STATUS_NONE` (0): stream capture is not emulated
/// (`cuStreamBeginCapture` answers `CUDA_ERROR_NOT_SUPPORTED`), so no stream is capturing.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamIsCapturing(stream: CUstream, status: *mut c_int) -> CUresult {
    const OP: &str = "cuStreamIsCapturing";
    ffi(OP, || query(stream, status, "captureStatus", OP, |_, _| Ok(CU_STREAM_CAPTURE_STATUS_NONE)))
}

per_thread_twin!(cuStreamGetPriority_ptsz = cuStreamGetPriority(stream: CUstream, priority: *mut c_int) stream stream);
per_thread_twin!(cuStreamGetFlags_ptsz = cuStreamGetFlags(stream: CUstream, flags: *mut c_uint) stream stream);
per_thread_twin!(cuStreamGetId_ptsz = cuStreamGetId(stream: CUstream, id: *mut u64) stream stream);
per_thread_twin!(cuStreamGetDevice_ptsz = cuStreamGetDevice(stream: CUstream, device: *mut CUdevice) stream stream);
per_thread_twin!(cuStreamGetCtx_ptsz = cuStreamGetCtx(stream: CUstream, pctx: *mut CUcontext) stream stream);
per_thread_twin!(cuStreamGetCtx_v2_ptsz = cuStreamGetCtx_v2(stream: CUstream, pctx: *mut CUcontext, green: *mut *mut c_void) stream stream);
per_thread_twin!(cuStreamIsCapturing_ptsz = cuStreamIsCapturing(stream: CUstream, status: *mut c_int) stream stream);

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
    let h = s.streams.insert(StreamEntry { device: d, stream: st, kind });
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
    ffi(OP, || {
        let s = shim(OP)?;
        let default = [
            (std::ptr::null_mut(), "the NULL stream"),
            (CU_STREAM_LEGACY, "CU_STREAM_LEGACY"),
            (CU_STREAM_PER_THREAD, "CU_STREAM_PER_THREAD"),
        ]
        .into_iter()
        .find_map(|(h, name)| (h == stream).then_some(name));
        if let Some(name) = default {
            return Err(err(CUDA_ERROR_INVALID_HANDLE, OP, format!("{name} (a default stream) cannot be destroyed")));
        }
        s.stream(stream as usize, OP)?;
        // Another thread may have destroyed it since the look-up: the removal decides.
        let e = s
            .streams
            .remove(stream as usize)
            .ok_or_else(|| err(CUDA_ERROR_INVALID_HANDLE, OP, format!("stream {stream:p} is destroyed")))?;
        s.retire(&e, OP)
    })
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

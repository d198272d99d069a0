//! Streams: creating, destroying, synchronizing and querying them.
//!
//! The NULL stream is a plain stream of its own per device here, made at its first use:
//! the driver's legacy semantics (the NULL stream waiting for, and making wait, every
//! blocking stream of the context) are not modelled, so `CU_STREAM_NON_BLOCKING` changes
//! nothing. A program that relies on them must order its streams with events.

use super::prelude::*;

/// `CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)`: a stream of the
/// current context's device. `Flags` is `CU_STREAM_DEFAULT` (0) or
/// `CU_STREAM_NON_BLOCKING` (1); anything else: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut CUstream, flags: c_uint) -> CUresult {
    const OP: &str = "cuStreamCreate";
    ffi(OP, || {
        let s = shim(OP)?;
        non_null(stream, OP, "phStream")?;
        if flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("stream flags {flags:#x} are neither 0 nor 1")));
        }
        let d = s.current(OP)?;
        let st = s.dev(d).create_stream().map_err(|e| e.with_op(OP))?;
        let h = s.streams.insert(StreamEntry { device: d, stream: st });
        // SAFETY: non-null, and the caller passes a writable `CUstream`.
        unsafe { stream.write(h as CUstream) };
        Ok(())
    })
}

/// `CUresult cuStreamDestroy_v2(CUstream hStream)` (`cuStreamDestroy` in `cuda.h`):
/// returns at once; the work already queued on the stream still runs. The NULL stream
/// cannot be destroyed: `CUDA_ERROR_INVALID_HANDLE`, as for a garbage or destroyed handle.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: CUstream) -> CUresult {
    const OP: &str = "cuStreamDestroy_v2";
    ffi(OP, || {
        let s = shim(OP)?;
        if stream.is_null() {
            return Err(err(CUDA_ERROR_INVALID_HANDLE, OP, "the NULL stream cannot be destroyed"));
        }
        let e = s.stream(stream as usize, OP)?;
        s.streams.remove(stream as usize);
        s.dev(e.device).destroy_stream(&e.stream).map_err(|e| e.with_op(OP))
    })
}

/// `CUresult cuStreamSynchronize(CUstream hStream)` (NULL: the current context's default
/// stream): waits for the stream's work; the pools of its device then release memory
/// above their threshold.
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

/// `CUresult cuStreamQuery(CUstream hStream)` (NULL: the current context's default
/// stream): `CUDA_SUCCESS` when everything queued has run (the host has then observed the
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

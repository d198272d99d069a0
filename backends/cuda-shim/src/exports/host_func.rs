//! Host functions run in stream order (`cuLaunchHostFunc`).

use super::prelude::*;

/// Makes a raw pointer `Send` for work queued on an emulated stream. The C caller owns
/// what it points to and guarantees it outlives the work (the driver's contract).
#[derive(Clone, Copy)]
struct SendPtr(*mut c_void);
// SAFETY: the pointer is only handed back to the C function it was given for, as the
// driver API promises; the C caller is responsible for the pointee's thread safety.
unsafe impl Send for SendPtr {}

/// `CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)` (NULL
/// stream, `CU_STREAM_LEGACY`: the current context's legacy default stream;
/// `CU_STREAM_PER_THREAD`: the thread's per-thread one): `fn(userData)` runs when the
/// stream reaches it, and later work on the stream waits for it to return (on the legacy
/// stream and the blocking streams, with the implicit order of the legacy stream). The host functions of
/// all streams of a device run one at a time on one thread of that device. Device
/// pointers are host addresses here, so the function may use device memory directly,
/// standing in for a kernel. A NULL `fn`: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// See the module docs; `fn` must be safe to call with `userData` from another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchHostFunc(stream: CUstream, func: CUhostFn, user_data: *mut c_void) -> CUresult {
    const OP: &str = "cuLaunchHostFunc";
    ffi(OP, || {
        let s = shim(OP)?;
        let Some(f) = func else { return Err(err(CUDA_ERROR_INVALID_VALUE, OP, "fn is null")) };
        let e = s.stream(stream as usize, OP)?;
        let data = SendPtr(user_data);
        s.enqueue(&e, OP, || {
            s.dev(e.device)
                .launch_host_func(
                    &e.stream,
                    Box::new(move || {
                        let data = data;
                        // SAFETY: the C caller provided `f` and `userData` for exactly this call.
                        unsafe { f(data.0) }
                    }),
                )
                .map_err(|e| e.with_op(OP))
        })
    })
}

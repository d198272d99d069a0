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
    ffi(OP, || host_func(stream, func, user_data, OP))
}

/// The body of both `cuLaunchHostFunc`s, once their own arguments are checked.
fn host_func(stream: CUstream, func: CUhostFn, user_data: *mut c_void, op: &'static str) -> mempool_hal::Result<()> {
    shim(op)?;
    let Some(f) = func else { return Err(err(CUDA_ERROR_INVALID_VALUE, op, "fn is null")) };
    launch(
        stream,
        op,
        move |data| {
            // SAFETY: the C caller provided `f` and `userData` for exactly this call.
            unsafe { f(data) }
        },
        user_data,
    )
}

/// `CUresult cuLaunchHostFunc_v2(CUstream hStream, CUhostFn fn, void *userData, unsigned
/// int syncMode)` (CUDA 13.1's variant): as `cuLaunchHostFunc`; `syncMode` is
/// `CU_HOST_TASK_BLOCKING` (0) or `CU_HOST_TASK_SPINWAIT` (1), how the thread running the
/// function waits, which makes no difference here; anything else:
/// `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// As for `cuLaunchHostFunc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchHostFunc_v2(
    stream: CUstream,
    func: CUhostFn,
    user_data: *mut c_void,
    sync_mode: c_uint,
) -> CUresult {
    const OP: &str = "cuLaunchHostFunc_v2";
    ffi(OP, || {
        shim(OP)?;
        if sync_mode > 1 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("syncMode {sync_mode} is neither 0 nor 1")));
        }
        host_func(stream, func, user_data, OP)
    })
}

per_thread_twin!(cuLaunchHostFunc_ptsz = cuLaunchHostFunc(stream: CUstream, func: CUhostFn, user_data: *mut c_void) stream stream);
per_thread_twin!(cuLaunchHostFunc_v2_ptsz = cuLaunchHostFunc_v2(stream: CUstream, func: CUhostFn, user_data: *mut c_void, sync_mode: c_uint) stream stream);

/// `CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void
/// *userData, unsigned int flags)`: `callback(hStream, CUDA_SUCCESS, userData)` runs in
/// stream order, as a host function (the stream handle it gets is the one given here).
/// A NULL `callback`, or `flags` other than 0: `CUDA_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// As for `cuLaunchHostFunc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamAddCallback(
    stream: CUstream,
    callback: CUstreamCallback,
    user_data: *mut c_void,
    flags: c_uint,
) -> CUresult {
    const OP: &str = "cuStreamAddCallback";
    ffi(OP, || {
        shim(OP)?;
        let Some(f) = callback else { return Err(err(CUDA_ERROR_INVALID_VALUE, OP, "callback is null")) };
        if flags != 0 {
            return Err(err(CUDA_ERROR_INVALID_VALUE, OP, format!("flags {flags:#x} are not 0")));
        }
        let handle = SendPtr(stream.cast());
        launch(
            stream,
            OP,
            move |data| {
                let handle = handle;
                // SAFETY: the C caller provided `callback` and `userData` for exactly this call;
                // the handle is handed back as it was given.
                unsafe { f(handle.0.cast(), CUDA_SUCCESS, data) }
            },
            user_data,
        )
    })
}

per_thread_twin!(cuStreamAddCallback_ptsz = cuStreamAddCallback(stream: CUstream, callback: CUstreamCallback, user_data: *mut c_void, flags: c_uint) stream stream);

/// Queues `run(userData)` on the stream behind `stream`, in stream order.
fn launch(
    stream: CUstream,
    op: &'static str,
    run: impl FnOnce(*mut c_void) + Send + 'static,
    user_data: *mut c_void,
) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let e = s.stream(stream as usize, op)?;
    let data = SendPtr(user_data);
    s.enqueue(&e, op, || {
        s.dev(e.device)
            .launch_host_func(
                &e.stream,
                Box::new(move || {
                    let data = data;
                    run(data.0)
                }),
            )
            .map_err(|e| e.with_op(op))
    })
}

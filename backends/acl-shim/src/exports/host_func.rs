//! Host functions (`aclrtLaunchHostFunc`) and callbacks run by a subscribed thread (`aclrtSubscribeReport`, `aclrtLaunchCallback`, `aclrtProcessReport`, `aclrtUnSubscribeReport`).

use super::prelude::*;

/// Makes a raw pointer `Send` for work queued on an emulated stream. The C caller owns
/// what it points to and guarantees it outlives the work (the ACL contract).
#[derive(Clone, Copy)]
struct SendPtr(*mut c_void);
// SAFETY: the pointer is only handed back to the C function it was given for, as the
// ACL API promises; the C caller is responsible for the pointee's thread safety.
unsafe impl Send for SendPtr {}

/// `aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)`:
/// `fn(args)` runs when the stream reaches it, on the device's one host-function thread,
/// as CANN runs a context's host functions on its one callback thread: one at a time, so
/// a host function that blocks holds back the host functions of the device's other
/// streams (their copies and memsets still run). Every context of a device shares that
/// thread here. On the emulator device pointers are host addresses, so the function may
/// use them directly. A null `fn` is 107000; a stream subscribed for callbacks with
/// `aclrtSubscribeReport` is 107011 (`ACL_ERROR_RT_STREAM_SUBSCRIBE`), as on CANN, where
/// the two mechanisms must not be mixed on one stream.
///
/// # Safety
///
/// See the module docs; `fn` must be safe to call with `args` from another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchHostFunc(stream: aclrtStream, func: aclrtHostFunc, args: *mut c_void) -> aclError {
    const OP: &str = "aclrtLaunchHostFunc";
    ffi(OP, || {
        let Some(f) = func else { return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "fn is null")) };
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        if let Ok(target) = s.host_func_subs.target(e.device, stream as usize, OP) {
            // A thread subscribed the stream's host functions: it runs them, and the
            // stream waits for each.
            let cb = Callback { func: f, data: args };
            let limit = s.dev(e.device).config().wait_timeout;
            s.dev(e.device).launch_host_func(
                &e.stream,
                Box::new(move || {
                    if let Some(done) = target.post(cb, true) {
                        done.wait(limit);
                    }
                }),
            )?;
            crate::state::note_task(s, &e);
            return Ok(());
        }
        s.reports.refuse_subscribed(e.device, stream as usize, OP)?;
        if !stream.is_null() {
            // CANN subscribes the stream to its own callback thread for good.
            s.host_func_streams.lock().unwrap_or_else(PoisonError::into_inner).insert(stream as usize);
        }
        let args = SendPtr(args);
        s.dev(e.device).launch_host_func(
            &e.stream,
            Box::new(move || {
                let args = args;
                // SAFETY: the C caller provided `f` and `args` for exactly this call.
                unsafe { f(args.0) }
            }),
        )?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}

/// Refuses a callback subscription or launch on a stream that ran `aclrtLaunchHostFunc`
/// (107011, `ACL_ERROR_RT_STREAM_SUBSCRIBE`): CANN subscribed it to its own callback
/// thread then, for the stream's life, and the two mechanisms exclude each other.
fn refuse_host_func_stream(s: &Shim, stream: aclrtStream, op: &'static str) -> mempool_hal::Result<()> {
    if !stream.is_null()
        && s.host_func_streams.lock().unwrap_or_else(PoisonError::into_inner).contains(&(stream as usize))
    {
        return Err(err(
            sys::ACL_ERROR_RT_STREAM_SUBSCRIBE,
            op,
            format!(
                "stream {stream:p} ran aclrtLaunchHostFunc, which subscribes it to the runtime's callback thread for \
                 good: use aclrtLaunchHostFunc on it, or callbacks on another stream"
            ),
        ));
    }
    Ok(())
}

/// `aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)` (null stream:
/// the default stream): callbacks launched on the stream will run on the thread
/// `threadId` (a `pthread_t`) when it calls `aclrtProcessReport`. A stream already
/// subscribed: 107011.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSubscribeReport(thread: u64, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtSubscribeReport";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        refuse_host_func_stream(s, stream, OP)?;
        s.reports.subscribe(thread, e.device, stream as usize, OP)
    })
}

/// `aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)`: ends the
/// subscription (107011 when `threadId` did not subscribe the stream); callbacks already
/// queued for the thread can still be processed.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtUnSubscribeReport(thread: u64, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtUnSubscribeReport";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.reports.unsubscribe(thread, e.device, stream as usize, OP)
    })
}

/// `aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType
/// blockType, aclrtStream stream)`: when the stream reaches it, `fn(userData)` is handed to
/// the thread that subscribed the stream, which runs it in `aclrtProcessReport`. With
/// `ACL_CALLBACK_BLOCK` the stream waits until it has run. A stream no thread subscribed:
/// 107015; a null `fn` or another block type: 100000.
///
/// # Safety
///
/// See the module docs; `fn` must be safe to call with `userData` on the subscribed thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchCallback(
    func: aclrtCallback,
    user_data: *mut c_void,
    block_type: aclrtCallbackBlockType,
    stream: aclrtStream,
) -> aclError {
    const OP: &str = "aclrtLaunchCallback";
    ffi(OP, || {
        let Some(f) = func else { return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "fn is null")) };
        let block = match block_type {
            sys::ACL_CALLBACK_NO_BLOCK => false,
            sys::ACL_CALLBACK_BLOCK => true,
            other => return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("block type {other} is not 0 or 1"))),
        };
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        refuse_host_func_stream(s, stream, OP)?;
        let target = s.reports.target(e.device, stream as usize, OP)?;
        let cb = Callback { func: f, data: user_data };
        let limit = s.dev(e.device).config().wait_timeout;
        s.dev(e.device).launch_host_func(
            &e.stream,
            Box::new(move || {
                if let Some(done) = target.post(cb, block) {
                    done.wait(limit);
                }
            }),
        )?;
        crate::state::note_task(s, &e);
        Ok(())
    })
}

/// `aclError aclrtProcessReport(int32_t timeout)` (-1: no limit): runs the next callback
/// queued for the calling thread, waiting up to `timeout` ms for one: 507012 when none
/// came; 107012 when the thread subscribed no stream; 100000 for 0 or below -1.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtProcessReport(timeout: i32) -> aclError {
    const OP: &str = "aclrtProcessReport";
    ffi(OP, || {
        let t = timeout_ms(timeout, OP).map_err(|_| {
            err(code::ACL_ERROR_INVALID_PARAM, OP, format!("timeout {timeout} ms is neither -1 nor positive"))
        })?;
        shim(OP)?.reports.process(t, OP)
    })
}

/// `aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)`:
/// the host functions launched on the stream from now on run on the thread
/// `hostFuncThreadId` (a `pthread_t`), one per `aclrtProcessHostFunc` call there, never
/// before it calls; the stream waits for each. As in CANN's runtime that has these calls,
/// a stream may be subscribed for callbacks (`aclrtSubscribeReport`) too. A null stream:
/// 107000; a stream subscribed already: 107011.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSubscribeHostFunc(thread: u64, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtSubscribeHostFunc";
    ffi(OP, || {
        non_null_stream(stream, OP)?;
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.host_func_subs.subscribe(thread, e.device, stream as usize, OP)
    })
}

/// A null stream is 107000 for the host-function subscription calls.
fn non_null_stream(stream: aclrtStream, op: &'static str) -> mempool_hal::Result<()> {
    if stream.is_null() {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            "the stream is null (the default stream cannot be subscribed)",
        ));
    }
    Ok(())
}

/// `aclError aclrtProcessHostFunc(int32_t timeout)` (-1: no limit): runs the next host
/// function queued for the calling thread, waiting up to `timeout` ms for one: 507012 when
/// none came; 107012 when the thread subscribed no stream; 107000 for 0 or below -1.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtProcessHostFunc(timeout: i32) -> aclError {
    const OP: &str = "aclrtProcessHostFunc";
    ffi(OP, || {
        let t = timeout_ms(timeout, OP).map_err(|_| {
            err(code::ACL_ERROR_RT_PARAM_INVALID, OP, format!("timeout {timeout} ms is neither -1 nor positive"))
        })?;
        shim(OP)?.host_func_subs.process(t, OP)
    })
}

/// `aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)`:
/// ends the subscription (a null stream: 107000; not subscribed by that thread: 107011);
/// host functions already queued for the thread can still be processed.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtUnSubscribeHostFunc(thread: u64, stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtUnSubscribeHostFunc";
    ffi(OP, || {
        non_null_stream(stream, OP)?;
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        s.host_func_subs.unsubscribe(thread, e.device, stream as usize, OP)
    })
}

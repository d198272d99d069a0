//! Streams: creating, destroying, synchronizing (plain and timed) and querying them, the device synchronization, and the failure mode.

use super::prelude::*;
use mempool_ascend::sys::{aclrtStreamConfigAttr, aclrtStreamConfigHandle, aclrtStreamStateCallback};

/// `aclrtCreateStream`, `aclrtCreateStreamWithConfig` and `aclrtCreateStreamV2`: a stream on
/// the current device, which keeps its flags and priority for the getters.
fn create_stream(stream: *mut aclrtStream, flags: u32, priority: u32, op: &'static str) -> mempool_hal::Result<()> {
    non_null(stream, op, "stream")?;
    let s = shim(op)?;
    let d = current(op)?;
    let st = s.dev(d).create_stream()?;
    let h = s.streams.insert(crate::state::StreamEntry { device: d, stream: st, flags, priority });
    // SAFETY: non-null, and the caller passes a writable `aclrtStream`.
    unsafe { stream.write(h as aclrtStream) };
    s.stream_state(h, sys::ACL_RT_STREAM_STATE_CREATE_POST);
    Ok(())
}

/// `aclError aclrtCreateStream(aclrtStream *stream)`: on the current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError {
    const OP: &str = "aclrtCreateStream";
    ffi(OP, || create_stream(stream, 0, 0, OP))
}

/// `aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t
/// flag)`: as `aclrtCreateStream`; the priority and flags are kept for the getters and do
/// not change how the emulator runs the stream.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamWithConfig(stream: *mut aclrtStream, priority: u32, flag: u32) -> aclError {
    const OP: &str = "aclrtCreateStreamWithConfig";
    ffi(OP, || create_stream(stream, flag, priority, OP))
}

/// The stream flags `aclrtStreamGetFlags` reports (CANN maps these bits back, no others).
const REPORTED_FLAGS: u32 = 0x3F;

/// Writes `v` through the out-pointer `out` of a stream getter, for `stream` (null: the
/// default stream of the current device, 107002 without one; a destroyed or unknown handle
/// is 107017). NULL `out`: 100000.
fn stream_getter<T>(
    stream: aclrtStream,
    out: *mut T,
    op: &'static str,
    get: impl FnOnce(&crate::state::StreamEntry) -> T,
) -> mempool_hal::Result<()> {
    non_null(out, op, "the out-pointer")?;
    let s = shim(op)?;
    let e = s.stream_of_any_device(stream as usize, op)?;
    let v = get(&e);
    // SAFETY: non-null, and the caller passes a writable value of this type.
    unsafe { out.write(v) };
    Ok(())
}

/// `aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)`: the flags the stream
/// was created with (bits 0x1-0x20); 0 for a default stream.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetFlags(stream: aclrtStream, flags: *mut u32) -> aclError {
    const OP: &str = "aclrtStreamGetFlags";
    ffi(OP, || stream_getter(stream, flags, OP, |e| e.flags & REPORTED_FLAGS))
}

/// `aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)`: the priority
/// the stream was created with; 0 for a default stream.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetPriority(stream: aclrtStream, priority: *mut u32) -> aclError {
    const OP: &str = "aclrtStreamGetPriority";
    ffi(OP, || stream_getter(stream, priority, OP, |e| e.priority))
}

/// `aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)`: the stream's id, the
/// one task failures report (`aclrtGetStreamIdFromExceptionInfo`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetId(stream: aclrtStream, id: *mut i32) -> aclError {
    const OP: &str = "aclrtStreamGetId";
    ffi(OP, || stream_getter(stream, id, OP, |e| e.stream.id() as i32))
}

/// `aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void)`: a zeroed handle (NULL
/// when the host has no memory), for `aclrtSetStreamConfigOpt` and `aclrtCreateStreamV2`.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamConfigHandle() -> *mut aclrtStreamConfigHandle {
    let mut out = std::ptr::null_mut();
    let _ = ffi("aclrtCreateStreamConfigHandle", || {
        let s = shim("aclrtCreateStreamConfigHandle")?;
        let h = Box::into_raw(Box::new(aclrtStreamConfigHandle {
            workptr: std::ptr::null_mut(),
            workSize: 0,
            flag: 0,
            priority: 0,
        }));
        s.stream_configs.lock().unwrap_or_else(PoisonError::into_inner).insert(h as usize);
        out = h;
        Ok(())
    });
    out
}

/// A live configuration handle (NULL or unknown: 100000).
fn config_of(
    s: &Shim,
    h: *const aclrtStreamConfigHandle,
    op: &'static str,
) -> mempool_hal::Result<aclrtStreamConfigHandle> {
    if h.is_null() || !s.stream_configs.lock().unwrap_or_else(PoisonError::into_inner).contains(&(h as usize)) {
        return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("{h:p} is not a live stream configuration handle")));
    }
    // SAFETY: a handle this library made and has not freed.
    Ok(unsafe { *h })
}

/// `aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle)`. NULL or a
/// handle this library did not make (or freed): 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStreamConfigHandle(handle: *mut aclrtStreamConfigHandle) -> aclError {
    const OP: &str = "aclrtDestroyStreamConfigHandle";
    ffi(OP, || {
        let s = shim(OP)?;
        config_of(s, handle, OP)?;
        s.stream_configs.lock().unwrap_or_else(PoisonError::into_inner).remove(&(handle as usize));
        // SAFETY: made by `Box::into_raw` in `aclrtCreateStreamConfigHandle`, and now
        // forgotten by the registry, so freed once.
        drop(unsafe { Box::from_raw(handle) });
        Ok(())
    })
}

/// `aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr
/// attr, const void *attrValue, size_t valueSize)`: `ACL_RT_STREAM_WORK_ADDR_PTR` (0, a
/// pointer), `ACL_RT_STREAM_WORK_SIZE` (1, a `size_t`), `ACL_RT_STREAM_FLAG` (2, a
/// `size_t`), `ACL_RT_STREAM_PRIORITY` (3, a `uint32_t` of 0-7), each with exactly its
/// size. Anything else, NULL, an unknown handle: 100000.
///
/// # Safety
///
/// See the module docs; `attrValue` must be readable for `valueSize` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetStreamConfigOpt(
    handle: *mut aclrtStreamConfigHandle,
    attr: aclrtStreamConfigAttr,
    value: *const c_void,
    size: usize,
) -> aclError {
    const OP: &str = "aclrtSetStreamConfigOpt";
    ffi(OP, || {
        let s = shim(OP)?;
        let mut h = config_of(s, handle, OP)?;
        non_null(value, OP, "attrValue")?;
        let want = match attr {
            0 => size_of::<*mut c_void>(),
            1 | 2 => size_of::<usize>(),
            3 => size_of::<u32>(),
            other => return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("attribute {other} is not 0-3"))),
        };
        if size != want && !(attr == 2 && size == size_of::<u32>()) {
            return Err(err(
                code::ACL_ERROR_INVALID_PARAM,
                OP,
                format!("attribute {attr} takes {want} bytes, not {size}"),
            ));
        }
        // SAFETY: non-null and readable for `size` bytes, which is the value's size; read
        // unaligned, as the caller's buffer may be.
        unsafe {
            match attr {
                0 => h.workptr = value.cast::<*mut c_void>().read_unaligned(),
                1 => h.workSize = value.cast::<usize>().read_unaligned(),
                2 if size == size_of::<u32>() => h.flag = value.cast::<u32>().read_unaligned() as usize,
                2 => h.flag = value.cast::<usize>().read_unaligned(),
                _ => {
                    let p = value.cast::<u32>().read_unaligned();
                    if p > 7 {
                        return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, format!("priority {p} is not 0-7")));
                    }
                    h.priority = p;
                }
            }
        }
        // SAFETY: a live handle this library made (checked above).
        unsafe { handle.write(h) };
        Ok(())
    })
}

/// `aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle
/// *handle)`: a stream with the handle's flags and priority (NULL handle: all zero); the
/// work area is accepted and unused. NULL `stream` or an unknown handle: 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamV2(
    stream: *mut aclrtStream,
    handle: *const aclrtStreamConfigHandle,
) -> aclError {
    const OP: &str = "aclrtCreateStreamV2";
    ffi(OP, || {
        non_null(stream, OP, "stream")?;
        let s = shim(OP)?;
        let (flags, priority) = if handle.is_null() {
            (0, 0)
        } else {
            let h = config_of(s, handle, OP)?;
            (u32::try_from(h.flag).unwrap_or(u32::MAX), h.priority)
        };
        create_stream(stream, flags, priority, OP)
    })
}

/// `aclrtDestroyStream` (`force` off) and `aclrtDestroyStreamForce` (`force` on), as
/// CANN's `Stream::TearDown` does them: the call returns when the stream has nothing
/// pending. The plain form waits for the queued work; the force form drops the work not
/// yet started (it never runs) and waits only for what is running. Either way, every
/// task queued before the call has completed or never runs when it returns (a wait past
/// the wait time-out drops what has not started and answers 507000). The stream's
/// failure mode, host-function mark and callback subscription go with it.
fn destroy_stream(stream: aclrtStream, force: bool, op: &'static str) -> mempool_hal::Result<()> {
    non_null(stream, op, "stream (the default stream cannot be destroyed)")?;
    let s = shim(op)?;
    if s.is_default_stream_handle(stream as usize) {
        return Err(err(
            code::ACL_ERROR_RT_PARAM_INVALID,
            op,
            "the handle names a context's default stream (aclrtCtxGetCurrentDefaultStream), which cannot be destroyed",
        ));
    }
    let e = s.stream(stream as usize, op)?;
    s.stream_state(stream as usize, sys::ACL_RT_STREAM_STATE_DESTROY_PRE);
    s.streams.remove(stream as usize);
    s.forget_stream(e.device, stream as usize);
    s.dev(e.device).destroy_stream_waiting(&e.stream, force).map_err(|err| err.with_op(op))
}

/// `aclError aclrtDestroyStream(aclrtStream stream)`: waits for the stream's queued work,
/// then destroys it.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStream(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtDestroyStream";
    ffi(OP, || destroy_stream(stream, false, OP))
}

/// `aclError aclrtDestroyStreamForce(aclrtStream stream)`: drops the stream's work not yet
/// started (it never runs), waits for what is running, then destroys it.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStreamForce(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtDestroyStreamForce";
    ffi(OP, || destroy_stream(stream, true, OP))
}

/// `aclrtSynchronizeStream` (`timeout` `None`) and `aclrtSynchronizeStreamWithTimeout`: the
/// stream of any device (CANN switches to the stream's context to synchronize it), with a
/// current context needed (107002).
fn synchronize_stream(
    stream: aclrtStream,
    timeout: Option<std::time::Duration>,
    op: &'static str,
) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let e = s.stream_of_any_device(stream as usize, op)?;
    s.dev(e.device).synchronize_stream_timeout(&e.stream, timeout)
}

/// `aclError aclrtSynchronizeStream(aclrtStream stream)` (null: the default stream of the
/// current device). A stream of another device is synchronized too, as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtSynchronizeStream";
    ffi(OP, || synchronize_stream(stream, None, OP))
}

/// `aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)` (null:
/// the default stream; -1: no limit): as `aclrtSynchronizeStream`, or 507046 when the work
/// has not completed within `timeout` ms (nothing is observed then).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError {
    const OP: &str = "aclrtSynchronizeStreamWithTimeout";
    ffi(OP, || synchronize_stream(stream, timeout_ms(timeout, OP)?, OP))
}

/// `aclError aclrtSynchronizeDevice(void)`: the current device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeDevice() -> aclError {
    const OP: &str = "aclrtSynchronizeDevice";
    ffi(OP, || {
        let s = shim(OP)?;
        s.dev(current(OP)?).synchronize_device()
    })
}

/// `aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)` (null: the
/// default stream): `ACL_STREAM_STATUS_COMPLETE` when everything enqueued has run, which
/// counts as the host observing the stream (contract §8); `NOT_READY` otherwise. A stream
/// of another device is queried too, as on CANN.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus) -> aclError {
    const OP: &str = "aclrtStreamQuery";
    ffi(OP, || {
        non_null(status, OP, "status")?;
        let s = shim(OP)?;
        let e = s.stream_of_any_device(stream as usize, OP)?;
        let st = match s.dev(e.device).query_stream(&e.stream)? {
            mempool_hal::StreamStatus::Complete => sys::ACL_STREAM_STATUS_COMPLETE,
            mempool_hal::StreamStatus::NotReady => sys::ACL_STREAM_STATUS_NOT_READY,
        };
        // SAFETY: non-null, and the caller passes a writable status.
        unsafe { status.write(st) };
        Ok(())
    })
}

/// `aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)` (null: the
/// default stream): only bit 0 counts. With `ACL_STOP_ON_FAILURE` a task that fails as it
/// runs stops the stream: its work is dropped (never run) until a synchronization reports
/// the failure, after which the stream runs again. Going back from STOP to CONTINUE:
/// 207000, as CANN. (CANN sets the whole context to stop and keeps it stopped; here the
/// mode is the stream's.)
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) -> aclError {
    const OP: &str = "aclrtSetStreamFailureMode";
    ffi(OP, || {
        let s = shim(OP)?;
        let e = s.stream(stream as usize, OP)?;
        let mode = mode & sys::ACL_STOP_ON_FAILURE;
        let mut modes = s.failure_modes.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (e.device, stream as usize);
        if modes.get(&key) == Some(&sys::ACL_STOP_ON_FAILURE) && mode == sys::ACL_CONTINUE_ON_FAILURE {
            return Err(err(
                code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                OP,
                "a stream set to ACL_STOP_ON_FAILURE cannot go back to ACL_CONTINUE_ON_FAILURE",
            ));
        }
        modes.insert(key, mode);
        s.dev(e.device).set_stop_on_failure(&e.stream, mode == sys::ACL_STOP_ON_FAILURE)
    })
}

/// `aclrtStreamAbort` and `aclrtStreamStop`: the work queued and not started is dropped
/// (it never runs); the task running completes (a host function cannot be interrupted);
/// the next synchronization answers `code`, and the stream takes new work afterwards.
fn cut(stream: aclrtStream, code: aclError, what: &str, op: &'static str) -> mempool_hal::Result<()> {
    let s = shim(op)?;
    let e = s.stream(stream as usize, op)?;
    let error = mempool_hal::Error::new(
        mempool_hal::ErrorKind::AsyncFailure,
        code,
        op,
        format!("the stream was {what}: the work queued then was dropped"),
    );
    s.dev(e.device).cut_stream(&e.stream, error)
}

/// `aclError aclrtStreamAbort(aclrtStream stream)` (null: the default stream, as on the
/// chips that allow it): drops the stream's queued work; the next synchronization
/// answers 107023 (`ACL_ERROR_RT_STREAM_ABORT`), and the stream is usable again.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamAbort(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtStreamAbort";
    ffi(OP, || cut(stream, sys::ACL_ERROR_RT_STREAM_ABORT, "aborted", OP))
}

/// `aclError aclrtStreamStop(aclrtStream stream)`: a null stream is 107000, as on CANN;
/// otherwise as `aclrtStreamAbort`, with 507000 for the next synchronization (what CANN's
/// sample shows on hardware).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamStop(stream: aclrtStream) -> aclError {
    const OP: &str = "aclrtStreamStop";
    ffi(OP, || {
        if stream.is_null() {
            return Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "the default stream cannot be stopped"));
        }
        cut(stream, code::ACL_ERROR_RT_INTERNAL_ERROR, "stopped", OP)
    })
}

/// `aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback
/// callback, void *args)`: process-wide, by name. The callbacks run on the creating or
/// destroying thread, `ACL_RT_STREAM_STATE_CREATE_POST` after every
/// `aclrtCreateStream*` and `ACL_RT_STREAM_STATE_DESTROY_PRE` before every
/// `aclrtDestroyStream*`. A null callback removes the name (registered or not); a name
/// registered already: 107000; a null name: 100000.
///
/// # Safety
///
/// See the module docs; `regName` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRegStreamStateCallback(
    name: *const c_char,
    callback: aclrtStreamStateCallback,
    args: *mut c_void,
) -> aclError {
    const OP: &str = "aclrtRegStreamStateCallback";
    ffi(OP, || {
        if name.is_null() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "regName is null"));
        }
        // SAFETY: non-null, and the caller passes a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        let s = shim(OP)?;
        let mut cbs = s.stream_states.lock().unwrap_or_else(PoisonError::into_inner);
        match callback {
            None => {
                cbs.remove(&name);
                Ok(())
            }
            Some(_) if cbs.contains_key(&name) => Err(err(
                code::ACL_ERROR_RT_PARAM_INVALID,
                OP,
                format!("a stream state callback is registered as {name:?} already"),
            )),
            Some(func) => {
                cbs.insert(name, crate::state::StreamStateCallback { func, args });
                Ok(())
            }
        }
    })
}

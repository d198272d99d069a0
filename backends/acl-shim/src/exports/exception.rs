//! Task failures as a program sees them: the exception callback
//! (`aclrtSetExceptionInfoCallback`) and the getters of its `aclrtExceptionInfo`, the
//! device's fault report (`aclrtGetErrorVerbose`) and the calling thread's last task
//! (`aclrtGetThreadLastTaskId`).
//!
//! A task fails when the emulator refuses its work as it runs (the emulator's `failure`
//! module): the callback hears of it on the stream's worker thread before the task counts
//! as complete, so before the synchronization that reports the failure returns. The info
//! it gets is valid during the call only; the getters answer `0xFFFFFFFF` (CANN's
//! `ACL_ERROR_INVALID_EXCEPTION_INFO`) for NULL and for any pointer that is not the info
//! of a callback running on the calling thread.

use super::prelude::*;
use mempool_ascend::sys::{aclrtErrorInfo, aclrtFuncHandle};
use std::cell::Cell;
use std::sync::atomic::Ordering;

use crate::exception_info::{CALLBACK, INVALID_INFO, RUNNING};
pub use crate::exception_info::{aclrtExceptionInfo, aclrtExceptionInfoCallback};

/// `aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback)`: the
/// process's one exception callback (the last set wins; NULL removes it).
///
/// # Safety
///
/// See the module docs; `callback` must be safe to call from a stream's worker thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetExceptionInfoCallback(callback: aclrtExceptionInfoCallback) -> aclError {
    const OP: &str = "aclrtSetExceptionInfoCallback";
    ffi(OP, || {
        shim(OP)?;
        CALLBACK.store(callback.map_or(0, |f| f as usize), Ordering::Release);
        Ok(())
    })
}

/// Reads a field of the info of the callback running on this thread.
fn field(info: *const aclrtExceptionInfo, op: &'static str, get: fn(&aclrtExceptionInfo) -> u32) -> u32 {
    let mut out = INVALID_INFO;
    let rc = ffi(op, || {
        if info.is_null() || RUNNING.with(Cell::get) != info {
            return Err(err(
                code::ACL_ERROR_INVALID_PARAM,
                op,
                "info is not the aclrtExceptionInfo of an exception callback running on this thread",
            ));
        }
        // SAFETY: `info` is the info `dispatch` is passing to the callback that runs on
        // this thread now, alive until it returns.
        out = get(unsafe { &*info });
        Ok(())
    });
    if rc == code::ACL_SUCCESS { out } else { INVALID_INFO }
}

/// `uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info)`: the failed
/// task's number (as `aclrtGetThreadLastTaskId` numbers tasks).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetTaskIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    field(info, "aclrtGetTaskIdFromExceptionInfo", |i| i.task)
}

/// `uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info)`: the
/// failed task's stream id.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetStreamIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    field(info, "aclrtGetStreamIdFromExceptionInfo", |i| i.stream)
}

/// `uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info)`: 0 here
/// (CANN names the thread that launched the task; the emulator does not keep it).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetThreadIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    field(info, "aclrtGetThreadIdFromExceptionInfo", |i| i.thread)
}

/// `uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info)`: the
/// failed task's device.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    field(info, "aclrtGetDeviceIdFromExceptionInfo", |i| i.device)
}

/// `uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info)`: the
/// failure's ACL code, as the synchronization reports it.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetErrorCodeFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    field(info, "aclrtGetErrorCodeFromExceptionInfo", |i| i.code)
}

/// `aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info, void
/// **devArgsPtr, uint32_t *devArgsLen)`: no failed task here is a kernel, so there are no
/// arguments: `0xFFFFFFFF`, as CANN answers for a task that is not one (NULL outputs:
/// 100000; an unknown info: `0xFFFFFFFF`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetArgsFromExceptionInfo(
    info: *const aclrtExceptionInfo,
    args: *mut *mut c_void,
    len: *mut u32,
) -> aclError {
    const OP: &str = "aclrtGetArgsFromExceptionInfo";
    if field(info, OP, |_| 0) == INVALID_INFO {
        return INVALID_INFO as aclError;
    }
    let rc = ffi(OP, || {
        non_null(args, OP, "devArgsPtr")?;
        non_null(len, OP, "devArgsLen")
    });
    if rc != code::ACL_SUCCESS { rc } else { INVALID_INFO as aclError }
}

/// `aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info,
/// aclrtFuncHandle *func)`: no failed task here is a kernel: 107000, as CANN answers for
/// a task without a kernel (NULL `func`: 100000; an unknown info: `0xFFFFFFFF`).
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetFuncHandleFromExceptionInfo(
    info: *const aclrtExceptionInfo,
    func: *mut aclrtFuncHandle,
) -> aclError {
    const OP: &str = "aclrtGetFuncHandleFromExceptionInfo";
    if field(info, OP, |_| 0) == INVALID_INFO {
        return INVALID_INFO as aclError;
    }
    ffi(OP, || {
        non_null(func, OP, "func")?;
        Err(err(code::ACL_ERROR_RT_PARAM_INVALID, OP, "the failed task is not a kernel: it has no function handle"))
    })
}

/// `aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)`: the
/// device's fault report. The emulator has no device faults (a memory or link error):
/// `ACL_RT_NO_ERROR` with no detail, as CANN reports for a failed task. A device out of
/// range: 107001; NULL: 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetErrorVerbose(device: i32, info: *mut aclrtErrorInfo) -> aclError {
    const OP: &str = "aclrtGetErrorVerbose";
    ffi(OP, || {
        if info.is_null() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "errorInfo is null"));
        }
        let s = shim(OP)?;
        s.device_id(i64::from(device as u32), OP)?;
        let none = aclrtErrorInfo {
            tryRepair: 0,
            hasDetail: 0,
            reserved: [0; 2],
            errorType: sys::ACL_RT_NO_ERROR,
            detail: [0; 321],
        };
        // SAFETY: non-null, and the caller passes a writable `aclrtErrorInfo`.
        unsafe { info.write(none) };
        Ok(())
    })
}

/// `aclError aclrtGetThreadLastTaskId(uint32_t *taskId)`: the number of the last task the
/// calling thread enqueued (its position on its stream), `0xFFFFFFFF` before any. NULL:
/// 100000.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetThreadLastTaskId(task: *mut u32) -> aclError {
    const OP: &str = "aclrtGetThreadLastTaskId";
    ffi(OP, || {
        if task.is_null() {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, OP, "taskId is null"));
        }
        // SAFETY: non-null, and the caller passes a writable `uint32_t`.
        unsafe { task.write(crate::state::last_task()) };
        Ok(())
    })
}

//! Errors: the calling thread's last message (`aclGetRecentErrMsg`) and last code (`aclrtGetLastError`, `aclrtPeekAtLastError`).

use super::prelude::*;

/// `const char *aclGetRecentErrMsg(void)`: takes this thread's last error message, as
/// CANN "obtains and clears" it. NULL when there is nothing to report: no call has failed
/// on this thread yet, or the message was already taken. A C caller that prints it must
/// check for NULL first (`printf("%s", NULL)` is undefined). The string stays valid until
/// this function returns another message on this thread.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    take_last_error_ptr()
}

/// Checks the level of `aclrtGetLastError` / `aclrtPeekAtLastError`, then answers this
/// thread's last error code, taking it when `take`.
fn last_error(level: aclrtLastErrLevel, take: bool, op: &'static str) -> aclError {
    let rc = ffi(op, || {
        if level != sys::ACL_RT_THREAD_LEVEL {
            return Err(err(code::ACL_ERROR_INVALID_PARAM, op, format!("level {level} is not ACL_RT_THREAD_LEVEL")));
        }
        Ok(())
    });
    if rc != code::ACL_SUCCESS { rc } else { last_code(take) }
}

/// `aclError aclrtGetLastError(aclrtLastErrLevel level)`: the code of the calling thread's
/// last failed call (0 if none), which it then forgets.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError {
    last_error(level, true, "aclrtGetLastError")
}

/// `aclError aclrtPeekAtLastError(aclrtLastErrLevel level)`: the code of the calling
/// thread's last failed call (0 if none), kept.
///
/// # Safety
///
/// See the module docs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError {
    last_error(level, false, "aclrtPeekAtLastError")
}

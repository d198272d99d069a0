//! The bottom layer every exported function stands on: the library's codes and how an
//! error becomes one, its per-thread last failure, the unwind guard ([`ffi`]; the
//! machinery of both is `mempool_emu::cabi::boundary`, shared by the three C libraries),
//! and the argument checks shared by many calls (null pointers, time limits, device
//! pointers).
//!
//! It imports nothing from the rest of the crate: every other module may use it, and it
//! uses none of them.

use mempool_emu::cabi::boundary::{ErrorStore, LastError};
use mempool_hal::{DevicePtr, Error, ErrorKind, Result, Vendor};
use std::ffi::{c_char, c_int, c_void};

/// The ACL codes, from the Ascend backend's declaration table (`mempool_ascend::sys`), the
/// one place the library reads them from.
pub(crate) use mempool_ascend::sys as code;

thread_local! {
    /// This thread's last failure: its message until `aclGetRecentErrMsg` takes it, and
    /// its code until `aclrtGetLastError` does (reached only through [`LAST`]).
    static LAST_ERROR: LastError = const { LastError::new() };
}

/// This library's per-thread last failure.
const LAST: ErrorStore = ErrorStore::new(&LAST_ERROR);

/// This thread's last error code (0 if none); `take` clears it.
pub(crate) fn last_code(take: bool) -> c_int {
    LAST.code(take)
}

/// Takes this thread's last error message, as CANN's `aclGetRecentErrMsg` "obtains and
/// clears" it: a pointer to it, or null when there is nothing to report (no failure yet,
/// or the message was already taken). The string stays valid until this function
/// returns another message on this thread.
pub(crate) fn take_last_error_ptr() -> *const c_char {
    LAST.take_message_ptr()
}

/// The ACL code of `e`: its own when it is an ACL number (the emulator's and this
/// library's errors are), else the code of its kind (`mempool_ascend::result::code_of`).
fn code_of(e: &Error) -> c_int {
    e.code_in(Vendor::Acl, mempool_ascend::result::code_of)
}

/// An error with the kind that matches `code`.
pub(crate) fn err(code: c_int, op: &'static str, msg: impl Into<String>) -> Error {
    Error::new(mempool_ascend::result::kind_of(code), code, op, msg)
}

/// A destroyed or unknown handle of kind `what` (107017).
pub(crate) fn stale(op: &'static str, what: &str, h: usize) -> Error {
    Error::stale_handle(op, format_args!("{what} {h:#x}"))
}

/// Runs the body of an exported function: errors become their code and this thread's
/// message; a panic never crosses the C boundary (507000).
pub(crate) fn ffi(op: &'static str, body: impl FnOnce() -> Result<()>) -> c_int {
    LAST.guard(op, code::ACL_ERROR_RT_INTERNAL_ERROR, code_of, body)
}

/// Refuses a null pointer argument with 100000.
pub(crate) fn non_null<T>(p: *const T, op: &'static str, what: &str) -> Result<()> {
    if p.is_null() {
        Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM, op, format!("{what} is null")))
    } else {
        Ok(())
    }
}

/// A C pointer as a device pointer (never dereferenced here: the emulator checks it).
pub(crate) fn dptr(p: *const c_void) -> DevicePtr {
    DevicePtr::from_addr(p as u64)
}

/// Parses a time limit in milliseconds: -1 is no limit, 0 and anything below -1 are
/// refused with 107000 (CANN's answer).
pub(crate) fn timeout_ms(ms: i32, op: &'static str) -> Result<Option<std::time::Duration>> {
    match ms {
        -1 => Ok(None),
        1.. => Ok(Some(std::time::Duration::from_millis(ms as u64))),
        _ => Err(err(code::ACL_ERROR_RT_PARAM_INVALID, op, format!("timeout {ms} ms is neither -1 nor positive"))),
    }
}

//! The bottom layer every exported function stands on: the unwind guard ([`ffi`]), errors
//! with their codes and the calling thread's last message and code, and the argument
//! checks shared by many calls (null pointers, time limits, device pointers).
//!
//! It imports nothing from the rest of the crate: every other module may use it, and it
//! uses none of them.

use mempool_hal::{DevicePtr, Error, ErrorKind, Result, code};
use std::cell::{Cell, RefCell};
use std::ffi::{CString, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    /// The message of this thread's last error, until `aclGetRecentErrMsg` takes it.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
    /// The message `aclGetRecentErrMsg` returned last on this thread, kept alive for the
    /// caller until that call returns another message.
    static TAKEN_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
    /// The code of this thread's last error not yet taken by `aclrtGetLastError`.
    static LAST_CODE: Cell<c_int> = const { Cell::new(0) };
}

/// This thread's last error code (0 if none); `take` clears it.
pub(crate) fn last_code(take: bool) -> c_int {
    LAST_CODE.with(|c| if take { c.replace(0) } else { c.get() })
}

/// Takes this thread's last error message, as CANN's `aclGetRecentErrMsg` "obtains and
/// clears" it: a pointer to it, or null when there is nothing to report (no failure yet,
/// or the message was already taken). The string stays valid until this function
/// returns another message on this thread.
pub(crate) fn take_last_error_ptr() -> *const std::ffi::c_char {
    match LAST_ERROR.with(|m| m.borrow_mut().take()) {
        None => std::ptr::null(),
        Some(msg) => TAKEN_ERROR.with(|t| t.borrow_mut().insert(msg).as_ptr()),
    }
}

fn set_last_error(msg: String) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|m| *m.borrow_mut() = Some(c));
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
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => code::ACL_SUCCESS,
        Ok(Err(e)) => {
            let c = e.code();
            set_last_error(format!("{op}: {} ({})", e.message(), e.kind()));
            let c = if c == code::ACL_SUCCESS { code::ACL_ERROR_RT_INTERNAL_ERROR } else { c };
            LAST_CODE.with(|l| l.set(c));
            c
        }
        Err(_) => {
            set_last_error(format!("{op}: internal error (panic caught at the C boundary)"));
            LAST_CODE.with(|l| l.set(code::ACL_ERROR_RT_INTERNAL_ERROR));
            code::ACL_ERROR_RT_INTERNAL_ERROR
        }
    }
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

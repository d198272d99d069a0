//! The bottom layer every exported function stands on: the driver's result codes, the
//! unwind guard ([`ffi`]) that turns errors and panics into a `CUresult`, the calling
//! thread's last message, and the argument checks shared by many calls.
//!
//! It imports nothing from the rest of the crate: every other module may use it, and it
//! uses none of them.

use mempool_hal::{Error, ErrorKind, Result, Vendor};
use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The driver's result type (`CUresult`, an `int`-sized enum in C).
pub type CUresult = c_int;

/// The call succeeded.
pub const CUDA_SUCCESS: CUresult = 0;
/// A bad argument: a null pointer, a value out of range, bad pool properties, an unknown
/// or read-only attribute, a device pointer outside live memory.
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
/// Device or page-locked host memory could not be allocated.
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
/// A call other than `cuInit`, `cuDriverGetVersion`, `cuGetErrorName` and
/// `cuGetErrorString` came before a successful `cuInit`.
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
/// A device ordinal that does not exist.
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
/// No current context where the call needs one, a context handle that is not a live
/// context, or a stream used with a pool of another device.
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
/// A null, garbage, destroyed or wrong-kind stream, event or pool handle.
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
/// A host range that overlaps one registered already, or `cuMemAllocHost` memory.
pub const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
/// An unregister of a pointer that no registration knows.
pub const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
/// The work a query asks about has not completed yet.
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
/// The operation is not supported by this library.
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
/// Anything else, a panic caught at the C boundary included.
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

thread_local! {
    /// The message of this thread's last failed call, NUL-terminated for C callers.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// The message of the calling thread's last failed call (`"cuMemPoolCreate: ..."`), or
/// `None` when no call has failed on this thread. The driver API has no C call for it; C
/// callers (and the CUDA backend) read it through the library's own
/// `mempool_cuda_shim_last_error`, Rust callers and the tests here.
pub fn last_error_message() -> Option<String> {
    LAST_ERROR.with(|m| m.borrow().as_ref().map(|c| c.to_string_lossy().into_owned()))
}

/// The calling thread's last message as a C string, or null when none (or while the
/// thread is being torn down). The string stays where it is until the thread's next failed
/// call replaces it, or the thread ends.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.try_with(|m| m.borrow().as_ref().map_or(std::ptr::null(), |c| c.as_ptr())).unwrap_or(std::ptr::null())
}

fn set_last_error(msg: String) {
    // A NUL inside a message (from a caller's text, say) would cut it short for C: shown
    // as U+FFFD instead.
    let msg = CString::new(msg).unwrap_or_else(|e| {
        let text = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{fffd}");
        CString::new(text).unwrap_or_default()
    });
    LAST_ERROR.with(|m| *m.borrow_mut() = Some(msg));
}

/// The portable kind that goes with a `CUresult` this library returns.
fn kind_of(code: CUresult) -> ErrorKind {
    match code {
        CUDA_ERROR_INVALID_VALUE => ErrorKind::InvalidParam,
        CUDA_ERROR_OUT_OF_MEMORY => ErrorKind::OutOfMemory,
        CUDA_ERROR_NOT_INITIALIZED => ErrorKind::Unavailable,
        CUDA_ERROR_INVALID_DEVICE => ErrorKind::InvalidDevice,
        CUDA_ERROR_INVALID_CONTEXT => ErrorKind::NoContext,
        CUDA_ERROR_INVALID_HANDLE => ErrorKind::InvalidHandle,
        CUDA_ERROR_NOT_READY => ErrorKind::NotReady,
        CUDA_ERROR_NOT_SUPPORTED => ErrorKind::NotSupported,
        CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => ErrorKind::InvalidParam,
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED => ErrorKind::InvalidPointer,
        _ => ErrorKind::Internal,
    }
}

/// An error of this library with the `CUresult` `code` (its kind follows from the code).
pub(crate) fn err(code: CUresult, op: &'static str, msg: impl Into<String>) -> Error {
    Error::cuda(kind_of(code), code, op, msg)
}

/// The `CUresult` of an error: its own code when it is a CUDA one (made by [`err`]),
/// otherwise by its kind (the emulator reports ACL numbers, which mean nothing here).
pub(crate) fn code_of(e: &Error) -> CUresult {
    if e.vendor() == Vendor::Cuda && e.code() != CUDA_SUCCESS {
        return e.code();
    }
    match e.kind() {
        ErrorKind::InvalidParam
        | ErrorKind::ReadOnly
        | ErrorKind::UnknownAttribute
        | ErrorKind::InvalidPointer
        | ErrorKind::StreamOrderViolation => CUDA_ERROR_INVALID_VALUE,
        ErrorKind::OutOfMemory | ErrorKind::HostAllocation => CUDA_ERROR_OUT_OF_MEMORY,
        ErrorKind::InvalidHandle => CUDA_ERROR_INVALID_HANDLE,
        ErrorKind::InvalidDevice => CUDA_ERROR_INVALID_DEVICE,
        ErrorKind::NoContext | ErrorKind::WrongContext => CUDA_ERROR_INVALID_CONTEXT,
        ErrorKind::NotReady => CUDA_ERROR_NOT_READY,
        ErrorKind::NotSupported => CUDA_ERROR_NOT_SUPPORTED,
        _ => CUDA_ERROR_UNKNOWN,
    }
}

/// Runs the body of an exported function: an error becomes its `CUresult` and this
/// thread's last message (`"<op>: <message> (<kind>)"`); a panic never crosses the C
/// boundary: it becomes `CUDA_ERROR_UNKNOWN` (999) with a message.
pub(crate) fn ffi(op: &'static str, body: impl FnOnce() -> Result<()>) -> CUresult {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CUDA_SUCCESS,
        Ok(Err(e)) => {
            set_last_error(format!("{op}: {} ({})", e.message(), e.kind()));
            code_of(&e)
        }
        Err(_) => {
            set_last_error(format!("{op}: internal error (panic caught at the C boundary)"));
            CUDA_ERROR_UNKNOWN
        }
    }
}

/// Refuses a null pointer argument with `CUDA_ERROR_INVALID_VALUE`.
pub(crate) fn non_null<T>(p: *const T, op: &'static str, what: &str) -> Result<()> {
    if p.is_null() { Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("{what} is null"))) } else { Ok(()) }
}

/// Refuses a null device pointer (`CUdeviceptr` 0) with `CUDA_ERROR_INVALID_VALUE`.
pub(crate) fn non_zero(p: u64, op: &'static str, what: &str) -> Result<()> {
    if p == 0 { Err(err(CUDA_ERROR_INVALID_VALUE, op, format!("{what} is 0 (a null device pointer)"))) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_of_the_emulator_translate_by_kind_and_ours_keep_their_code() {
        let acl = Error::new(ErrorKind::OutOfMemory, 507_000, "malloc_async", "full");
        assert_eq!(code_of(&acl), CUDA_ERROR_OUT_OF_MEMORY);
        let acl = Error::new(ErrorKind::WrongContext, 107_003, "free_async", "other device");
        assert_eq!(code_of(&acl), CUDA_ERROR_INVALID_CONTEXT);
        let acl = Error::new(ErrorKind::AsyncFailure, 507_000, "synchronize_stream", "failed");
        assert_eq!(code_of(&acl), CUDA_ERROR_UNKNOWN);
        let ours = err(CUDA_ERROR_NOT_INITIALIZED, "cuStreamCreate", "call cuInit first");
        assert_eq!((code_of(&ours), ours.kind()), (CUDA_ERROR_NOT_INITIALIZED, ErrorKind::Unavailable));
    }

    #[test]
    fn the_last_message_is_kept_for_c_until_the_next_failure() {
        std::thread::spawn(|| {
            assert!(last_error_ptr().is_null(), "no failure on a fresh thread");
            assert_eq!(ffi("cuTest", || Err(err(CUDA_ERROR_INVALID_VALUE, "x", "bad"))), CUDA_ERROR_INVALID_VALUE);
            let p = last_error_ptr();
            assert!(!p.is_null());
            assert_eq!(ffi("cuTest", || Ok(())), CUDA_SUCCESS);
            assert_eq!(last_error_ptr(), p, "a success leaves the message where it is");
            // SAFETY: non-null, and no failure on this thread has replaced it.
            let text = unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap().to_string();
            assert_eq!(text, "cuTest: bad (invalid parameter)");
            assert_eq!(last_error_message().as_deref(), Some(text.as_str()));
            ffi("cuTest", || Err(err(CUDA_ERROR_INVALID_VALUE, "x", "a\0b")));
            assert_eq!(last_error_message().as_deref(), Some("cuTest: a\u{fffd}b (invalid parameter)"));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_panic_is_stopped_at_the_boundary() {
        let rc = ffi("cuTest", || panic!("boom"));
        assert_eq!(rc, CUDA_ERROR_UNKNOWN);
        assert_eq!(last_error_message().as_deref(), Some("cuTest: internal error (panic caught at the C boundary)"));
        assert_eq!(ffi("cuTest", || Ok(())), CUDA_SUCCESS);
    }
}

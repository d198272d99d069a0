//! The bottom layer every exported function stands on: the driver's result codes (from
//! the CUDA backend's `sys`), the unwind guard ([`ffi`]) that turns errors and panics into
//! a `CUresult`, the calling thread's last message (the machinery of both is
//! `mempool_emu::cabi::boundary`, shared by the three C libraries), and the argument checks
//! shared by many calls.
//!
//! It imports nothing from the rest of the crate: every other module may use it, and it
//! uses none of them.

use mempool_emu::cabi::boundary::{ErrorStore, LastError};
use mempool_hal::{Error, Result, Vendor};
use std::ffi::c_char;

/// The driver's result codes, from the CUDA backend's declaration table
/// (`mempool_cuda::sys`), the one place the library reads them from.
pub use mempool_cuda::sys::{
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, CUDA_ERROR_INVALID_CONTEXT,
    CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_FOUND,
    CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_OUT_OF_MEMORY,
    CUDA_ERROR_UNKNOWN, CUDA_SUCCESS, CUresult,
};

thread_local! {
    /// This thread's last failure (reached only through [`LAST`]).
    static LAST_ERROR: LastError = const { LastError::new() };
}

/// This library's per-thread last failure.
const LAST: ErrorStore = ErrorStore::new(&LAST_ERROR);

/// The message of the calling thread's last failed call (`"cuMemPoolCreate: ..."`), or
/// `None` when no call has failed on this thread. The driver API has no C call for it; C
/// callers (and the CUDA backend) read it through the library's own
/// `mempool_cuda_shim_last_error`, Rust callers and the tests here.
pub fn last_error_message() -> Option<String> {
    LAST.message()
}

/// The calling thread's last message as a C string, or null when none (or while the
/// thread is being torn down). The string stays where it is until the thread's next failed
/// call replaces it, or the thread ends.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST.message_ptr()
}

/// An error of this library with the `CUresult` `code` (its kind follows from the code,
/// by the CUDA backend's table, `mempool_cuda::result::kind_of`).
pub(crate) fn err(code: CUresult, op: &'static str, msg: impl Into<String>) -> Error {
    Error::cuda(mempool_cuda::result::kind_of(code), code, op, msg)
}

/// The `CUresult` of an error: its own code when it is a CUDA one (made by [`err`]),
/// otherwise the code of its kind from the CUDA numbering's one table
/// (`mempool_cuda::result::code_of`; the emulator reports ACL numbers, which mean nothing
/// here).
pub(crate) fn code_of(e: &Error) -> CUresult {
    e.code_in(Vendor::Cuda, mempool_cuda::result::code_of)
}

/// Runs the body of an exported function: an error becomes its `CUresult` and this
/// thread's last message (`"<op>: <message> (<kind>)"`); a panic never crosses the C
/// boundary: it becomes `CUDA_ERROR_UNKNOWN` (999) with a message.
pub(crate) fn ffi(op: &'static str, body: impl FnOnce() -> Result<()>) -> CUresult {
    LAST.guard(op, CUDA_ERROR_UNKNOWN, code_of, body)
}

/// After a `_ptsz` twin's call of its plain variant failed with `rc`: the thread's message
/// names the twin (`"cuStreamSynchronize_ptsz: ..."`), as every failure names its entry
/// point. Returns `rc`.
pub(crate) fn as_twin(rc: CUresult, base: &str, twin: &str) -> CUresult {
    if rc != CUDA_SUCCESS
        && let Some(m) = LAST.message()
        && let Some(rest) = m.strip_prefix(base).filter(|r| r.starts_with(": "))
    {
        LAST.fail(rc, &format!("{twin}{rest}"));
    }
    rc
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
    use mempool_hal::ErrorKind;

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
        assert_eq!(
            last_error_message().as_deref(),
            Some("cuTest: internal error (a panic was caught at the C boundary)")
        );
        assert_eq!(ffi("cuTest", || Ok(())), CUDA_SUCCESS);
    }
}

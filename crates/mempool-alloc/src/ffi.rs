//! The bottom layer of the C interface: the unwind guard every export runs in, and the
//! calling thread's last error (`mempool_last_error`); the machinery of both is
//! `mempool_emu::cabi::boundary`, shared by the three C libraries. It imports nothing from
//! the crate.

use mempool_emu::cabi::boundary::{ErrorStore, LastError};
use std::ffi::c_char;

thread_local! {
    /// The calling thread's last failure, kept until its next call into the library
    /// (reached only through [`LAST`]).
    static LAST_ERROR: LastError = const { LastError::new() };
}

/// This library's per-thread last failure.
const LAST: ErrorStore = ErrorStore::new(&LAST_ERROR);

/// The code the library's last failure is kept with (its exports answer a value, NULL or
/// -1, and the reason is the message).
const FAILED: i32 = -1;

/// Sets the calling thread's last error to `message` (an interior NUL becomes U+FFFD).
pub(crate) fn set_last_error(message: impl Into<String>) {
    LAST.fail(FAILED, &message.into());
}

#[cfg(test)]
/// Forgets the calling thread's last error (each export but `mempool_last_error` starts so).
pub(crate) fn clear_last_error() {
    LAST.clear();
}

/// The calling thread's last error as a C string, or NULL; valid until the thread's next
/// call into the library (which replaces or clears it).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST.message_ptr()
}

/// The calling thread's last error as text, if any (for tests and observers).
pub fn last_error() -> Option<String> {
    LAST.message()
}

/// Runs the body of export `op`: clears the thread's last error, runs `f`, and turns a
/// failure into `fallback` with the reason as the last error. A panic never crosses the C
/// boundary: it becomes `fallback` with a message.
pub(crate) fn guard<T, E: std::fmt::Display>(op: &'static str, fallback: T, f: impl FnOnce() -> Result<T, E>) -> T {
    LAST.guard_value(op, fallback, FAILED, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_keeps_the_reason_and_catches_panics() {
        assert_eq!(guard("op", 0, || Ok::<_, String>(7)), 7);
        assert!(last_error().is_none());
        assert_eq!(guard("op", 0, || Err::<i32, _>("bad\0input")), 0);
        assert_eq!(last_error().as_deref(), Some("op: bad\u{fffd}input"));
        assert!(!last_error_ptr().is_null());
        let caught = guard("boom", -1, || -> Result<i32, String> { panic!("x") });
        assert_eq!(caught, -1);
        assert!(last_error().is_some_and(|m| m.contains("panic")));
        clear_last_error();
        assert!(last_error_ptr().is_null());
    }
}

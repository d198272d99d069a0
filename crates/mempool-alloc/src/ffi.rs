//! The bottom layer of the C interface: the unwind guard every export runs in, and the
//! calling thread's last error (`mempool_last_error`). It imports nothing from the crate.

use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    /// The calling thread's last failure, kept until its next call into the library.
    static LAST: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Sets the calling thread's last error to `message` (an interior NUL becomes a space).
pub(crate) fn set_last_error(message: impl Into<String>) {
    let mut bytes = message.into().into_bytes();
    for b in &mut bytes {
        if *b == 0 {
            *b = b' ';
        }
    }
    let text = CString::new(bytes).unwrap_or_default();
    // During the thread's exit (a thread-local destructor that frees) the slot may be gone:
    // the message is dropped then, never a panic.
    let _ = LAST.try_with(|l| *l.borrow_mut() = Some(text));
}

/// Forgets the calling thread's last error (each export but `mempool_last_error` starts so).
pub(crate) fn clear_last_error() {
    let _ = LAST.try_with(|l| *l.borrow_mut() = None);
}

/// The calling thread's last error as a C string, or NULL; valid until the thread's next
/// call into the library (which replaces or clears it).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST.try_with(|l| l.borrow().as_ref().map_or(std::ptr::null(), |s| s.as_ptr())).unwrap_or(std::ptr::null())
}

/// The calling thread's last error as text, if any (for tests and observers).
pub fn last_error() -> Option<String> {
    LAST.try_with(|l| l.borrow().as_ref().map(|s| s.to_string_lossy().into_owned())).ok().flatten()
}

/// Runs the body of export `op`: clears the thread's last error, runs `f`, and turns a
/// failure into `fallback` with the reason as the last error. A panic never crosses the C
/// boundary: it becomes `fallback` with a message.
pub(crate) fn guard<T, E: std::fmt::Display>(op: &'static str, fallback: T, f: impl FnOnce() -> Result<T, E>) -> T {
    match catch_unwind(AssertUnwindSafe(|| {
        clear_last_error();
        f()
    })) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_last_error(format!("{op}: {e}"));
            fallback
        }
        Err(_) => {
            set_last_error(format!("{op}: internal error (a panic was caught at the C boundary)"));
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_keeps_the_reason_and_catches_panics() {
        assert_eq!(guard("op", 0, || Ok::<_, String>(7)), 7);
        assert!(last_error().is_none());
        assert_eq!(guard("op", 0, || Err::<i32, _>("bad\0input")), 0);
        assert_eq!(last_error().as_deref(), Some("op: bad input"));
        assert!(!last_error_ptr().is_null());
        let caught = guard("boom", -1, || -> Result<i32, String> { panic!("x") });
        assert_eq!(caught, -1);
        assert!(last_error().is_some_and(|m| m.contains("panic")));
        clear_last_error();
        assert!(last_error_ptr().is_null());
    }
}

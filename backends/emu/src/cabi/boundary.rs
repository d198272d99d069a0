//! The C boundary, written once for the three C libraries (`libacl_rt.so`, the CPU
//! `libcuda.so.1`, `libmempool_alloc.so`): the unwind guard every export runs in, and the
//! calling thread's last failure (its message and code).
//!
//! Each library owns its store (a `thread_local!` of [`LastError`] named by an
//! [`ErrorStore`]), so one library's failures never show in another's answers when
//! several are linked into one process; the machinery is this module's. Each library's
//! own `ffi.rs` keeps only its codes and how an error becomes one.
//!
//! # Thread exit
//!
//! A program may call a library from a thread-local destructor as its thread ends (a C++
//! `thread_local` cache that frees its memory or events, a `pthread_key_create`
//! destructor), after the library's own thread-local storage is gone. Every access here
//! goes through [`LocalKey::try_with`]: storing a message then drops it, reading one finds
//! none, and the call still returns its code. Nothing here panics, so nothing unwinds into
//! a C frame. The rule for every `thread_local!` an `extern "C"` entry point reaches: it
//! has no destructor (a `Cell` of plain data), or it is reached only through `try_with`
//! (`cargo xtask tidy` checks it in the three libraries and in this module).
//!
//! # Messages
//!
//! One NUL policy: a NUL byte inside a message (from a caller's text, say) would end it
//! early for C, so it is stored as U+FFFD, the replacement character.

use mempool_hal::{Error, Result};
use std::cell::{Cell, RefCell};
use std::ffi::{CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::LocalKey;

/// The message of a panic stopped at the boundary, after `"<op>: "`.
pub const PANIC_MESSAGE: &str = "internal error (a panic was caught at the C boundary)";

/// What one thread keeps of one library's last failure. Declare one per library, with
/// `thread_local! { static LAST: LastError = const { LastError::new() }; }`, and reach it
/// only through an [`ErrorStore`].
#[derive(Debug, Default)]
pub struct LastError {
    /// The last failure's message, until it is replaced, cleared or taken.
    message: RefCell<Option<CString>>,
    /// The message [`ErrorStore::take_message_ptr`] handed out last, kept alive for the
    /// caller until it hands out another.
    taken: RefCell<Option<CString>>,
    /// The last failure's code (0: none since it was last taken).
    code: Cell<c_int>,
}

impl LastError {
    /// Nothing failed yet.
    pub const fn new() -> Self {
        LastError { message: RefCell::new(None), taken: RefCell::new(None), code: Cell::new(0) }
    }
}

/// One library's per-thread last failure: every access goes through `try_with`, so it
/// never panics, even while the thread's storage is being torn down.
#[derive(Debug, Clone, Copy)]
pub struct ErrorStore(&'static LocalKey<LastError>);

/// `text` as a C string, each NUL inside it as U+FFFD.
pub fn c_message(text: &str) -> CString {
    let clean = if text.contains('\0') { text.replace('\0', "\u{fffd}") } else { text.to_owned() };
    // No NUL is left, so this cannot fail; an empty string if it somehow did.
    CString::new(clean).unwrap_or_default()
}

/// `"<op>: <message> (<kind>)"`, how the drop-in libraries describe a failed call.
pub fn describe(op: &str, e: &Error) -> String {
    format!("{op}: {} ({})", e.message(), e.kind())
}

impl ErrorStore {
    /// The store kept in `key`, a library's own `thread_local!`.
    pub const fn new(key: &'static LocalKey<LastError>) -> Self {
        ErrorStore(key)
    }

    /// Records a failure: its code and message (the thread's storage gone: nothing is
    /// kept). Returns `code`.
    pub fn fail(self, code: c_int, message: &str) -> c_int {
        let text = c_message(message);
        let _ = self.0.try_with(|l| {
            l.code.set(code);
            if let Ok(mut m) = l.message.try_borrow_mut() {
                *m = Some(text);
            }
        });
        code
    }

    /// Forgets the last failure (its message and code).
    pub fn clear(self) {
        let _ = self.0.try_with(|l| {
            l.code.set(0);
            if let Ok(mut m) = l.message.try_borrow_mut() {
                *m = None;
            }
        });
    }

    /// The last failure's code, 0 when none (or while the thread is being torn down);
    /// `take` clears it (the message stays).
    pub fn code(self, take: bool) -> c_int {
        self.0.try_with(|l| if take { l.code.replace(0) } else { l.code.get() }).unwrap_or(0)
    }

    /// The last failure's message as text, if any.
    pub fn message(self) -> Option<String> {
        self.0
            .try_with(|l| l.message.try_borrow().ok()?.as_ref().map(|c| c.to_string_lossy().into_owned()))
            .ok()
            .flatten()
    }

    /// The last failure's message as a C string, or null when none (or while the thread is
    /// being torn down). It stays valid until the thread's next failure or clear.
    pub fn message_ptr(self) -> *const c_char {
        self.0
            .try_with(|l| l.message.try_borrow().ok()?.as_ref().map(|c| c.as_ptr()))
            .ok()
            .flatten()
            .unwrap_or(std::ptr::null())
    }

    /// Takes the last failure's message ("obtains and clears" it, as CANN's
    /// `aclGetRecentErrMsg`): a pointer to it, or null when there is none (nothing failed,
    /// it was taken already, or the thread is being torn down). The string stays valid
    /// until this function hands out another message on this thread.
    pub fn take_message_ptr(self) -> *const c_char {
        self.0
            .try_with(|l| {
                let msg = l.message.try_borrow_mut().ok()?.take()?;
                let mut taken = l.taken.try_borrow_mut().ok()?;
                Some(taken.insert(msg).as_ptr())
            })
            .ok()
            .flatten()
            .unwrap_or(std::ptr::null())
    }

    /// Runs the body of export `op` of a drop-in runtime library: success is 0 (the
    /// success code of both ACL and the CUDA driver); an error becomes the code `code_of`
    /// gives it, with the message `"<op>: <message> (<kind>)"`; a panic never crosses the C
    /// boundary: it becomes `internal`, with a message. A success leaves the last failure
    /// as it was.
    pub fn guard(
        self,
        op: &'static str,
        internal: c_int,
        code_of: impl FnOnce(&Error) -> c_int,
        body: impl FnOnce() -> Result<()>,
    ) -> c_int {
        match catch_unwind(AssertUnwindSafe(body)) {
            Ok(Ok(())) => 0,
            Ok(Err(e)) => {
                let c = code_of(&e);
                self.fail(if c == 0 { internal } else { c }, &describe(op, &e))
            }
            Err(_) => self.fail(internal, &format!("{op}: {PANIC_MESSAGE}")),
        }
    }

    /// Runs the body of export `op` of a library whose calls answer a value (a pointer, a
    /// count) and keep the reason apart: clears the last failure, runs `body`, and turns a
    /// failure into `fallback` with `"<op>: <error>"` as the message (code `code`). A panic
    /// never crosses the C boundary: it becomes `fallback`, with a message.
    pub fn guard_value<T, E: std::fmt::Display>(
        self,
        op: &'static str,
        fallback: T,
        code: c_int,
        body: impl FnOnce() -> std::result::Result<T, E>,
    ) -> T {
        match catch_unwind(AssertUnwindSafe(|| {
            self.clear();
            body()
        })) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                self.fail(code, &format!("{op}: {e}"));
                fallback
            }
            Err(_) => {
                self.fail(code, &format!("{op}: {PANIC_MESSAGE}"));
                fallback
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mempool_hal::ErrorKind;

    thread_local! {
        static LAST: LastError = const { LastError::new() };
    }
    const STORE: ErrorStore = ErrorStore::new(&LAST);

    fn bad(msg: &str) -> Error {
        Error::new(ErrorKind::InvalidParam, 7, "x", msg)
    }

    #[test]
    fn a_failure_keeps_its_code_and_message_until_the_next_and_a_success_leaves_them() {
        std::thread::spawn(|| {
            assert!(STORE.message_ptr().is_null(), "no failure on a fresh thread");
            assert_eq!(STORE.guard("op", 99, Error::code, || Err(bad("no"))), 7);
            let p = STORE.message_ptr();
            assert!(!p.is_null());
            assert_eq!(STORE.guard("op", 99, Error::code, || Ok(())), 0);
            assert_eq!(STORE.message_ptr(), p, "a success leaves the message where it is");
            assert_eq!(STORE.message().as_deref(), Some("op: no (invalid parameter)"));
            assert_eq!((STORE.code(false), STORE.code(true), STORE.code(false)), (7, 7, 0));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_code_of_zero_is_internal_and_a_panic_stops_at_the_boundary() {
        assert_eq!(STORE.guard("op", 99, |_| 0, || Err(bad("zero"))), 99);
        assert_eq!(STORE.guard("boom", 99, Error::code, || panic!("x")), 99);
        assert_eq!(STORE.message().as_deref(), Some("boom: internal error (a panic was caught at the C boundary)"));
        assert_eq!(STORE.guard_value("v", -1, 5, || -> std::result::Result<i32, String> { panic!("y") }), -1);
        assert_eq!(STORE.code(false), 5);
    }

    #[test]
    fn one_nul_policy() {
        assert_eq!(STORE.guard("op", 99, Error::code, || Err(bad("a\0b"))), 7);
        assert_eq!(STORE.message().as_deref(), Some("op: a\u{fffd}b (invalid parameter)"));
        assert_eq!(STORE.guard_value("v", 0, 1, || Err::<i32, _>("c\0d")), 0);
        assert_eq!(STORE.message().as_deref(), Some("v: c\u{fffd}d"));
        assert_eq!(c_message("plain").as_bytes(), b"plain");
    }

    #[test]
    fn taking_the_message_clears_it_and_keeps_it_alive_until_the_next_take() {
        std::thread::spawn(|| {
            assert!(STORE.take_message_ptr().is_null());
            STORE.fail(3, "first");
            let p = STORE.take_message_ptr();
            // SAFETY: non-null, and nothing has been taken since on this thread.
            assert_eq!(unsafe { std::ffi::CStr::from_ptr(p) }.to_str(), Ok("first"));
            assert!(STORE.take_message_ptr().is_null(), "taken already");
            assert!(STORE.message().is_none());
            STORE.clear();
            assert_eq!(STORE.code(false), 0);
        })
        .join()
        .unwrap();
    }

    /// A value whose destructor runs after the store's own storage is gone (it is
    /// registered first, so it is destroyed last) and fails there.
    struct FailsAtExit(std::sync::mpsc::Sender<(c_int, bool, c_int)>);

    impl Drop for FailsAtExit {
        fn drop(&mut self) {
            let rc = STORE.guard("exit", 99, Error::code, || Err(bad("late")));
            let _ = self.0.send((rc, STORE.message_ptr().is_null(), STORE.code(true)));
        }
    }

    thread_local! {
        static AT_EXIT: RefCell<Option<FailsAtExit>> = const { RefCell::new(None) };
    }

    #[test]
    fn a_failure_after_the_threads_storage_is_gone_still_returns_its_code() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            AT_EXIT.with(|a| *a.borrow_mut() = Some(FailsAtExit(tx)));
            // The store's storage is made after AT_EXIT's, so it is destroyed before it.
            STORE.fail(1, "early");
        })
        .join()
        .unwrap();
        assert_eq!(rx.recv().unwrap(), (7, true, 0), "the code, and no message or code kept");
    }
}

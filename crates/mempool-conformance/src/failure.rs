//! How a scenario fails: the [`Failure`] type, the [`ensure!`](crate::ensure) family of
//! macros and [`expect_error`].

use mempool_hal::ErrorKind;
use std::any::Any;
use std::fmt;
use std::panic::Location;

/// The outcome of one scenario: `Ok(())` when every check held.
pub type ScenarioResult = Result<(), Failure>;

/// Why a scenario failed: a failed check, a backend error that was not expected, or a
/// panic. It names the source line of the check (or of the `?` that propagated the
/// backend error).
pub struct Failure {
    message: String,
    location: Option<&'static Location<'static>>,
    error: Option<mempool_hal::Error>,
}

impl Failure {
    /// A failure at the caller's source line.
    #[track_caller]
    pub fn new(message: impl Into<String>) -> Self {
        Failure { message: message.into(), location: Some(Location::caller()), error: None }
    }

    /// A failure for a panic caught while a scenario ran, from the panic's payload.
    pub fn panicked(payload: Box<dyn Any + Send>) -> Self {
        let what = if let Some(s) = payload.downcast_ref::<&'static str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a non-string payload".to_owned()
        };
        Failure { message: format!("panicked: {what}"), location: None, error: None }
    }

    /// What went wrong, without the source location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The source line of the failed check, when known (not for panics).
    pub fn location(&self) -> Option<&'static Location<'static>> {
        self.location
    }

    /// The backend error behind this failure, if it is an unexpected backend error.
    pub fn backend_error(&self) -> Option<&mempool_hal::Error> {
        self.error.as_ref()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some(loc) => write!(f, "{}:{}: {}", loc.file(), loc.line(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The same text as Display: this is what `cargo test` style output shows.
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Failure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.as_ref().map(|e| e as _)
    }
}

impl From<mempool_hal::Error> for Failure {
    /// An unexpected backend error, located at the `?` that propagated it.
    #[track_caller]
    fn from(error: mempool_hal::Error) -> Self {
        Failure {
            message: format!("unexpected backend error: {error}"),
            location: Some(Location::caller()),
            error: Some(error),
        }
    }
}

/// Checks that `result` is an error of `kind` with vendor code `code`, and returns the
/// error for further checks. `what` names the call in the failure message. `code` is the
/// ACL number the contract gives (the emulator's and the Ascend backend's numbering); an
/// error in another vendor's numbering (the CUDA backend's `CUresult`,
/// [`mempool_hal::Vendor::Cuda`]) must have the kind and a code other than 0: its vendor's
/// one kind → code table is the backend's own (`mempool_cuda::result::code_of`), which the
/// backend's tests check.
///
/// # Errors
///
/// A [`Failure`] at the caller's line when the call succeeded or failed differently.
#[track_caller]
pub fn expect_error<T: fmt::Debug>(
    result: mempool_hal::Result<T>,
    kind: ErrorKind,
    code: i32,
    what: impl fmt::Display,
) -> Result<mempool_hal::Error, Failure> {
    match result {
        Ok(value) => Err(Failure::new(format!(
            "{what}: expected an error ({kind}, code {code}), but the call succeeded with {value:?}"
        ))),
        // `code` is ACL's number; another vendor's error carries its own code for the kind.
        Err(e) if e.kind() == kind && vendor_code_matches(&e, code) => Ok(e),
        Err(e) => Err(Failure::new(format!(
            "{what}: expected an error ({kind}, code {code}), got ({}, code {}): {e}",
            e.kind(),
            e.code()
        ))),
    }
}

/// Whether `e`'s code is the one its vendor gives for the mistake whose ACL code is `acl`:
/// `acl` itself for an ACL error; any code but success for another vendor's.
fn vendor_code_matches(e: &mempool_hal::Error, acl: i32) -> bool {
    match e.vendor() {
        mempool_hal::Vendor::Acl => e.code() == acl,
        _ => e.code() != 0,
    }
}

/// Returns a [`Failure`] naming the source line unless the condition holds.
///
/// ```
/// use mempool_conformance::{ensure, ScenarioResult};
/// fn check(used: u64, reserved: u64) -> ScenarioResult {
///     ensure!(reserved >= used, "RESERVED {reserved} is below USED {used}");
///     Ok(())
/// }
/// assert!(check(1, 2).is_ok());
/// let failure = check(3, 2).unwrap_err();
/// assert!(failure.to_string().contains("RESERVED 2 is below USED 3"));
/// ```
#[macro_export]
macro_rules! ensure {
    ($cond:expr $(,)?) => {
        $crate::ensure!($cond, "check failed")
    };
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return ::core::result::Result::Err($crate::Failure::new(::std::format!(
                "{} (`{}` is false)",
                ::std::format_args!($($fmt)+),
                ::core::stringify!($cond),
            )));
        }
    };
}

/// Returns a [`Failure`] naming the source line and both values unless they are equal.
///
/// ```
/// use mempool_conformance::{ensure_eq, ScenarioResult};
/// fn check(used: u64) -> ScenarioResult {
///     ensure_eq!(used, 4096, "USED after one allocation");
///     Ok(())
/// }
/// assert!(check(4096).is_ok());
/// let failure = check(0).unwrap_err();
/// assert!(failure.to_string().contains("USED after one allocation"));
/// assert!(failure.to_string().contains("`used` = 0"));
/// ```
#[macro_export]
macro_rules! ensure_eq {
    ($left:expr, $right:expr $(,)?) => {
        $crate::ensure_eq!($left, $right, "values differ")
    };
    ($left:expr, $right:expr, $($fmt:tt)+) => {
        match (&$left, &$right) {
            (left, right) => {
                if !(*left == *right) {
                    return ::core::result::Result::Err($crate::Failure::new(::std::format!(
                        "{}: `{}` = {:?}, expected `{}` = {:?}",
                        ::std::format_args!($($fmt)+),
                        ::core::stringify!($left),
                        left,
                        ::core::stringify!($right),
                        right,
                    )));
                }
            }
        }
    };
}

/// Returns a [`Failure`] naming the source line and the value unless the two differ.
///
/// ```
/// use mempool_conformance::{ensure_ne, ScenarioResult};
/// fn check(a: u64, b: u64) -> ScenarioResult {
///     ensure_ne!(a, b, "two live allocations share an address");
///     Ok(())
/// }
/// assert!(check(1, 2).is_ok());
/// assert!(check(2, 2).is_err());
/// ```
#[macro_export]
macro_rules! ensure_ne {
    ($left:expr, $right:expr $(,)?) => {
        $crate::ensure_ne!($left, $right, "values are equal")
    };
    ($left:expr, $right:expr, $($fmt:tt)+) => {
        match (&$left, &$right) {
            (left, right) => {
                if *left == *right {
                    return ::core::result::Result::Err($crate::Failure::new(::std::format!(
                        "{}: `{}` and `{}` are both {:?}",
                        ::std::format_args!($($fmt)+),
                        ::core::stringify!($left),
                        ::core::stringify!($right),
                        left,
                    )));
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use mempool_hal::{Error, code};

    fn backend_call(fail: bool) -> mempool_hal::Result<u64> {
        if fail {
            Err(Error::new(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_INVALID_HANDLE, "op", "stale"))
        } else {
            Ok(7)
        }
    }

    fn propagate(fail: bool) -> ScenarioResult {
        let v = backend_call(fail)?;
        ensure_eq!(v, 7, "value");
        Ok(())
    }

    #[test]
    fn question_mark_names_its_line() {
        let f = propagate(true).unwrap_err();
        assert_eq!(f.location().unwrap().file(), file!());
        assert!(f.to_string().contains("unexpected backend error"), "{f}");
        assert_eq!(f.backend_error().unwrap().code(), code::ACL_ERROR_RT_INVALID_HANDLE);
        assert!(std::error::Error::source(&f).is_some());
        assert!(propagate(false).is_ok());
    }

    #[test]
    fn ensure_names_line_and_condition() {
        fn check(x: u64) -> ScenarioResult {
            ensure!(x > 3, "x = {x}");
            Ok(())
        }
        let line = line!() - 3;
        let f = check(1).unwrap_err();
        assert_eq!(f.location().unwrap().line(), line);
        assert_eq!(f.message(), "x = 1 (`x > 3` is false)");
    }

    #[test]
    fn expect_error_matches_kind_and_code() {
        let e = expect_error(backend_call(true), ErrorKind::InvalidHandle, 107_017, "call").unwrap();
        assert_eq!(e.op(), "op");
        let f = expect_error(backend_call(true), ErrorKind::InvalidHandle, 507_000, "call").unwrap_err();
        assert!(f.message().contains("got (invalid handle, code 107017)"), "{f}");
        let f = expect_error(backend_call(false), ErrorKind::InvalidHandle, 107_017, "call").unwrap_err();
        assert!(f.message().contains("succeeded with 7"), "{f}");
    }

    #[test]
    fn panic_payloads_become_messages() {
        let f = Failure::panicked(Box::new("boom"));
        assert_eq!(f.to_string(), "panicked: boom");
        let f = Failure::panicked(Box::new(String::from("bang")));
        assert_eq!(f.message(), "panicked: bang");
        assert!(f.location().is_none());
    }
}

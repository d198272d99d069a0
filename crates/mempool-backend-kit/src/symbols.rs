//! The lazy symbol resolver: each C function of a loaded library is looked up on its first
//! use and remembered, found or not, so that a library without a call still serves every
//! other call, and the one it lacks answers an error naming it instead of failing the load.

use std::sync::OnceLock;

/// One function's slot: empty until first use, then the function pointer, or `None` when
/// the library has no such symbol.
pub type Slot<F> = OnceLock<Option<F>>;

/// Resolves `name` in `lib` into `slot` on first use; later calls read the slot. A library
/// without the symbol answers `missing()`.
///
/// # Safety
///
/// `F` is the function-pointer type of the C function `name` (its exact parameters and
/// return type), and `lib` stays loaded as long as any copy of the pointer is used (the
/// backends never unload their library).
///
/// # Errors
///
/// `missing()`, when the library lacks the symbol.
#[inline]
pub unsafe fn resolve<F: Copy, E>(
    lib: &libloading::Library,
    slot: &Slot<F>,
    name: &str,
    missing: impl FnOnce() -> E,
) -> Result<F, E> {
    let f = slot.get_or_init(|| {
        // SAFETY: the caller vouches that `F` is the type of `name` and that the library
        // outlives the pointer.
        unsafe { lib.get::<F>(name.as_bytes()).ok().map(|s| *s) }
    });
    f.ok_or_else(missing)
}

/// Resolves a function of a backend's loaded library by name: `$rt.resolve(slot, name)`,
/// with the slot `$rt.symbols().$name` and the name the identifier's text. The backend's
/// `resolve` answers the function pointer or its error for a missing symbol.
#[macro_export]
macro_rules! sym {
    ($rt:expr, $name:ident) => {
        $rt.resolve(&$rt.symbols().$name, stringify!($name))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    type Getpid = unsafe extern "C" fn() -> i32;

    #[test]
    fn a_symbol_resolves_once_and_a_missing_one_answers_its_error() {
        let lib = libloading::Library::from(libloading::os::unix::Library::this());
        let slot: Slot<Getpid> = OnceLock::new();
        // SAFETY: `getpid` takes nothing and returns `pid_t` (an `int`); the process image
        // stays loaded.
        let f = unsafe { resolve(&lib, &slot, "getpid", || "missing") }.unwrap();
        // SAFETY: `getpid` has no preconditions.
        assert_eq!(unsafe { f() } as u32, std::process::id());
        assert!(slot.get().copied().flatten().is_some());
        let none: Slot<Getpid> = OnceLock::new();
        // SAFETY: the symbol does not exist, so no pointer is made.
        let e = unsafe { resolve(&lib, &none, "mempool_no_such_symbol", || "missing") };
        assert_eq!(e, Err("missing"));
        assert_eq!(none.get(), Some(&None));
    }
}

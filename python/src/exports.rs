//! The C functions of libmempool_alloc.so, exported from the extension module itself, so
//! that a framework that `dlopen`s this file (`library_path()`) calls the same code, and
//! the same state, as Python does. rustc exports a dependency's `#[unsafe(no_mangle)]`
//! functions from a cdylib (`nm -D --defined-only` lists all of them); the table here names
//! each one as well, so none can be left out of the link, and gives their addresses
//! (`address(name)`) for the frameworks' hook setters. `cargo xtask python` checks the
//! exports with `nm`, and the tests through `ctypes`.

use mempool_alloc::exports::EXPORTS;
use std::ffi::{CStr, c_void};
use std::path::PathBuf;

/// One C function of the library: its name and address.
#[derive(Debug)]
pub(crate) struct Export {
    name: &'static str,
    addr: *const (),
}

// SAFETY: `addr` is the address of a function of this library, fixed for the life of the
// process; it is never written, and read only as a number.
unsafe impl Sync for Export {}

/// The table: one entry per name, in `EXPORTS`'s order, and the names alone (checked against
/// `EXPORTS` at compile time below).
macro_rules! exports {
    ($($f:ident),* $(,)?) => {
        /// The names of the table, as written.
        const NAMES: [&str; EXPORTS.len()] = [$(stringify!($f)),*];
        /// Every export with its address; `#[used]` keeps the table, and so every function
        /// it names, in the linked library.
        #[used]
        static TABLE: [Export; EXPORTS.len()] = [$(Export { name: stringify!($f), addr: mempool_alloc::$f as *const () }),*];
    };
}

exports![
    mempool_alloc,
    mempool_free,
    mempool_init,
    mempool_empty_cache,
    mempool_empty_cache_checked,
    mempool_set_memory_fraction,
    mempool_record_stream,
    mempool_stats,
    mempool_reset_peak_stats,
    mempool_on_oom,
    mempool_record_history,
    mempool_dump_snapshot,
    mempool_last_error,
    mempool_backend,
    mempool_register_stream_allocator,
    mempool_unregister_stream_allocator,
];

/// Whether `a` and `b` are the same text (a `const` comparison).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether every name of `EXPORTS` is in the table (the lengths are equal by type, and the
/// names are distinct, so the table holds exactly the library's exports).
const fn covers_every_export() -> bool {
    let mut i = 0;
    while i < EXPORTS.len() {
        let mut found = false;
        let mut j = 0;
        while j < NAMES.len() {
            found |= same(EXPORTS[i], NAMES[j]);
            j += 1;
        }
        if !found {
            return false;
        }
        i += 1;
    }
    true
}

const _: () = assert!(covers_every_export(), "the table must name every export of mempool_alloc::exports::EXPORTS");

/// The names of the C functions the extension module exports, in the library's order.
pub(crate) fn names() -> &'static [&'static str] {
    &EXPORTS
}

/// The address of export `name`, or `None` when the library has no such export.
pub(crate) fn address(name: &str) -> Option<usize> {
    TABLE.iter().find(|e| e.name == name).map(|e| e.addr as usize)
}

/// The path of the shared object these functions live in (the extension module), as the
/// dynamic loader knows it, made canonical when it can be.
pub(crate) fn library_path() -> Option<PathBuf> {
    // SAFETY: `Dl_info` is plain data; all-zero is a valid value (null pointers).
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = TABLE[0].addr.cast::<c_void>();
    // SAFETY: `addr` is the address of a function of a loaded object, and `info` is valid
    // for writing; `dladdr` only reads the loader's tables.
    let found = unsafe { libc::dladdr(addr, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: on success `dli_fname` is a NUL-terminated path owned by the loader, valid
    // while the object stays loaded (this code is in it); it is copied at once.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(name.to_string_lossy().into_owned());
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

//! Finding and loading the CUDA driver library, and resolving its symbols lazily, one by
//! one.
//!
//! Search order, stopping at the first library that loads, exports `cuInit`, and whose
//! `cuInit(0)` succeeds:
//!
//! 1. an explicit path from the caller ([`LoadOptions::path`]), then the environment
//!    variable [`ENV_LIBRARY`] (`MEMPOOL_CUDA_LIBRARY`): a library file, or a folder holding
//!    one;
//! 2. the system loader by bare name (`LD_LIBRARY_PATH`, the ld.so cache);
//! 3. the usual driver folders, [`DRIVER_DIRS`]: `/usr/lib/x86_64-linux-gnu`, `/usr/lib64`,
//!    `/usr/lib/wsl/lib` (WSL), `/usr/local/cuda/compat` (the forward-compatibility
//!    package);
//!
//! trying `libcuda.so.1` before `libcuda.so` in each place ([`LIBRARY_NAMES`]). The
//! toolkit's link stubs are never used: a path with a folder named `stubs` is skipped, and
//! a library whose `cuInit` answers `CUDA_ERROR_STUB_LIBRARY` (34) counts as no driver.
//! [`LoadOptions::candidates`] lists the places for given options. Every path tried, and why
//! it was not taken, goes into the `Unavailable` error (the walk and its record are
//! [`mempool_backend_kit::search`]'s).
//!
//! `cuInit(0)` runs once per library per process, whoever loads it first, safely when
//! several threads start together. A library is never unloaded: driver threads may still
//! run its code.

use crate::sys::{self, Symbols};
use mempool_backend_kit::search::{self, LinkStubs};
use mempool_hal::{Error, ErrorKind, Result};
use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The environment variable naming the driver library (a file or a folder).
pub const ENV_LIBRARY: &str = "MEMPOOL_CUDA_LIBRARY";

/// The library names tried in each place, in order.
pub const LIBRARY_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// The usual folders of an installed driver (step 3 of the search), in order.
pub const DRIVER_DIRS: [&str; 4] =
    ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib", "/usr/local/cuda/compat"];

/// Where to look for the driver.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// An explicit library file or folder, tried first.
    pub path: Option<PathBuf>,
    /// Whether to read [`ENV_LIBRARY`]. Default true.
    pub use_env: bool,
    /// Whether to ask the system loader by bare name. Default true.
    pub system_loader: bool,
    /// Whether to try [`DRIVER_DIRS`]. Default true.
    pub driver_dirs: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { path: None, use_env: true, system_loader: true, driver_dirs: true }
    }
}

impl LoadOptions {
    /// Only `path` (a file or a folder), nothing else.
    pub fn only(path: impl Into<PathBuf>) -> Self {
        LoadOptions { path: Some(path.into()), use_env: false, system_loader: false, driver_dirs: false }
    }

    /// Every candidate, in search order: full paths, bare names for the system loader,
    /// then full paths in the driver folders.
    pub fn candidates(&self) -> Vec<PathBuf> {
        self.candidates_with(&|var| std::env::var_os(var))
    }

    /// [`LoadOptions::candidates`] with the environment read through `env`.
    pub fn candidates_with(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let in_dir = |dir: &Path, out: &mut Vec<PathBuf>| out.extend(search::in_dir(dir, &LIBRARY_NAMES));
        let place = |p: &Path, out: &mut Vec<PathBuf>| {
            // A folder, or a path that does not look like a library file: try the names in it.
            let named_like_a_library = p.file_name().is_some_and(|n| n.to_string_lossy().contains(".so"));
            if p.is_dir() || !named_like_a_library { in_dir(p, out) } else { out.push(p.to_path_buf()) }
        };
        if let Some(p) = &self.path {
            place(p, &mut out);
        }
        if self.use_env {
            if let Some(p) = env(ENV_LIBRARY).filter(|v| !v.is_empty()) {
                place(Path::new(&p), &mut out);
            }
        }
        if self.system_loader {
            out.extend(LIBRARY_NAMES.iter().map(PathBuf::from));
        }
        if self.driver_dirs {
            for d in DRIVER_DIRS {
                in_dir(Path::new(d), &mut out);
            }
        }
        out
    }
}

/// The default search order ([`LoadOptions::default`]'s candidates, the environment
/// read now): every path and bare name the backend tries, in order.
pub fn search_order() -> Vec<PathBuf> {
    LoadOptions::default().candidates()
}

/// A loaded, initialized CUDA driver. Lives for the rest of the process once loaded: its
/// code may be running on driver threads, so it is never unloaded.
pub struct Runtime {
    lib: libloading::Library,
    path: PathBuf,
    syms: Symbols,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("path", &self.path).finish()
    }
}

/// Resolves a function of the driver by name: `Ok(fn pointer)` or `NotSupported`.
macro_rules! sym {
    ($rt:expr, $name:ident) => {
        $rt.resolve(&$rt.symbols().$name, stringify!($name))
    };
}
pub(crate) use sym;

impl Runtime {
    /// The library file (or the bare name given to the system loader) that was loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lazily resolved symbol slots.
    pub(crate) fn symbols(&self) -> &Symbols {
        &self.syms
    }

    /// Resolves `name` into `slot` on first use.
    ///
    /// # Errors
    ///
    /// `NotSupported` (`CUDA_ERROR_NOT_SUPPORTED`, 801) naming the symbol when the library
    /// lacks it; the error's operation is the symbol's name.
    pub(crate) fn resolve<F: Copy>(&self, slot: &OnceLock<Option<F>>, name: &'static str) -> Result<F> {
        let f = slot.get_or_init(|| {
            // SAFETY: `F` is the function-pointer type declared for `name` in `sys`, which
            // matches the driver's C API; the pointer stays valid because the library is
            // never unloaded while `self` lives.
            unsafe { self.lib.get::<F>(name.as_bytes()).ok().map(|s| *s) }
        });
        f.ok_or_else(|| {
            Error::cuda(
                ErrorKind::NotSupported,
                sys::CUDA_ERROR_NOT_SUPPORTED,
                name,
                format!("the driver {} has no symbol `{name}` (a driver older than this call?)", self.path.display()),
            )
        })
    }

    /// The driver's name for `rc` (`cuGetErrorName`, e.g. `CUDA_ERROR_OUT_OF_MEMORY`);
    /// `None` when the driver lacks the call or does not know the code.
    pub fn error_name(&self, rc: sys::CUresult) -> Option<String> {
        let f = sym!(self, cuGetErrorName).ok()?;
        driver_string(|out| {
            // SAFETY: a valid out-pointer; the driver writes a pointer to a static string.
            unsafe { f(rc, out) }
        })
    }

    /// The driver's description of `rc` (`cuGetErrorString`, e.g. `out of memory`);
    /// `None` when the driver lacks the call or does not know the code.
    pub fn error_string(&self, rc: sys::CUresult) -> Option<String> {
        let f = sym!(self, cuGetErrorString).ok()?;
        driver_string(|out| {
            // SAFETY: a valid out-pointer; the driver writes a pointer to a static string.
            unsafe { f(rc, out) }
        })
    }

    /// `NAME: description` for `rc`, from the driver when it can say, else from this
    /// crate's table ([`sys::error_name`]).
    pub fn describe(&self, rc: sys::CUresult) -> String {
        describe_with(rc, self.error_name(rc), self.error_string(rc))
    }
}

/// The string a driver call writes through its out-pointer, copied; `None` when the call
/// fails or writes NULL or an empty string.
fn driver_string(call: impl FnOnce(*mut *const c_char) -> sys::CUresult) -> Option<String> {
    let mut p: *const c_char = std::ptr::null();
    if call(&mut p) != sys::CUDA_SUCCESS || p.is_null() {
        return None;
    }
    // SAFETY: the driver answered success and wrote a pointer to a NUL-terminated static
    // string; it is copied at once.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    (!s.is_empty()).then_some(s)
}

/// The text of a code: the driver's name and description when given, this crate's name
/// otherwise.
fn describe_with(rc: sys::CUresult, name: Option<String>, text: Option<String>) -> String {
    let name = name.or_else(|| sys::error_name(rc).map(str::to_string)).unwrap_or_else(|| format!("CUresult {rc}"));
    match text {
        Some(text) => format!("{name}: {text}"),
        None => format!("{name} (the driver gave no description)"),
    }
}

/// Drivers loaded so far in this process, by the path they were loaded from: each is
/// loaded and initialized (`cuInit(0)`) once, whoever asks first, from any thread.
static LOADED: Mutex<Vec<Arc<Runtime>>> = Mutex::new(Vec::new());

/// The toolkit's link stubs, never tried.
const LINK_STUBS: LinkStubs = LinkStubs { folder: "stubs", why: "the toolkit's link stubs" };

/// Finds, loads and initializes the driver (see the [module docs](self) for the order).
///
/// # Errors
///
/// `Unavailable` listing every path tried and why each was not taken, when no driver is
/// found: no library loads, none exports `cuInit`, or every `cuInit(0)` fails (a link
/// stub's answer, 34, included). The code is the first failing `cuInit`'s `CUresult`
/// (`CUDA_ERROR_NO_DEVICE`, say), else 34 when only link stubs were found, else
/// `CUDA_ERROR_NO_DEVICE` (100).
pub fn load(opts: &LoadOptions) -> Result<Arc<Runtime>> {
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    let mut init_failure: Option<sys::CUresult> = None;
    let mut stub_seen = false;
    let found = search::first_to_open(opts.candidates(), LINK_STUBS, |cand| {
        if let Some(rt) = loaded.iter().find(|r| r.path == cand) {
            return Ok(Arc::clone(rt));
        }
        // SAFETY: loading a shared library runs its initializers; a CUDA driver's are sound
        // to run, and this is the documented way to use the driver without linking it at
        // build time.
        let lib = unsafe { libloading::Library::new(cand) }.map_err(|e| e.to_string())?;
        let rt = Runtime { lib, path: cand.to_path_buf(), syms: Symbols::default() };
        let Ok(init) = sym!(rt, cuInit) else {
            // Keep it mapped: unloading libraries that ran initializers is not worth the
            // risk.
            std::mem::forget(rt);
            return Err("loaded, but it has no cuInit (not a CUDA driver)".into());
        };
        // SAFETY: `cuInit` takes flags, which must be 0.
        let rc = unsafe { init(0) };
        let why = match rc {
            sys::CUDA_SUCCESS => {
                let rt = Arc::new(rt);
                loaded.push(Arc::clone(&rt));
                return Ok(rt);
            }
            sys::CUDA_ERROR_STUB_LIBRARY => {
                stub_seen = true;
                "a link stub (cuInit answered 34, CUDA_ERROR_STUB_LIBRARY)".to_string()
            }
            other => {
                init_failure.get_or_insert(other);
                format!("cuInit failed with {other} ({})", rt.describe(other))
            }
        };
        std::mem::forget(rt);
        Err(why)
    });
    found.map_err(|record| {
        let code =
            init_failure.unwrap_or(if stub_seen { sys::CUDA_ERROR_STUB_LIBRARY } else { sys::CUDA_ERROR_NO_DEVICE });
        Error::cuda(ErrorKind::Unavailable, code, "load", record.unavailable("CUDA driver"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_fall_back_to_the_table() {
        assert_eq!(describe_with(2, Some("N".into()), Some("text".into())), "N: text");
        assert_eq!(describe_with(2, None, None), "CUDA_ERROR_OUT_OF_MEMORY (the driver gave no description)");
        assert_eq!(describe_with(4242, None, Some("odd".into())), "CUresult 4242: odd");
    }

    #[test]
    fn a_file_path_is_taken_as_is_and_a_folder_gets_both_names() {
        let file = LoadOptions::only("/opt/driver/libcuda.so.535.1");
        assert_eq!(file.candidates_with(&|_| None), [PathBuf::from("/opt/driver/libcuda.so.535.1")]);
        let dir = LoadOptions::only("/opt/driver");
        assert_eq!(
            dir.candidates_with(&|_| None),
            [PathBuf::from("/opt/driver/libcuda.so.1"), PathBuf::from("/opt/driver/libcuda.so")]
        );
    }
}

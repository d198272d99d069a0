//! Finding and loading the CUDA driver library, and resolving its symbols lazily, one by
//! one.
//!
//! Search order, stopping at the first library that loads, exports `cuInit`, and whose
//! `cuInit(0)` succeeds:
//!
//! 1. a copy the process has loaded already ([`LoadOptions::loaded`]): a `libcuda.so.1`
//!    or `libcuda.so` (or a versioned file, `libcuda.so.535.104.05`) that a framework such
//!    as PyTorch loaded before the backend, so that the stream handles it passes mean the
//!    same to both; the path the dynamic loader gives for it is opened, which yields that
//!    copy;
//! 2. an explicit path from the caller ([`LoadOptions::path`]), then the environment
//!    variable [`ENV_LIBRARY`] (`MEMPOOL_CUDA_LIBRARY`): a library file, or a folder holding
//!    one;
//! 3. the system loader by bare name (`LD_LIBRARY_PATH`, the ld.so cache);
//! 4. the usual driver folders, [`DRIVER_DIRS`]: `/usr/lib/x86_64-linux-gnu`, `/usr/lib64`,
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
//! several threads start together, and under whichever path (a library opened again by
//! another path, a loaded copy's full path after a bare name say, is recognized by the
//! address of its `cuInit`). A library is never unloaded: driver threads may still
//! run its code.

use crate::sys::{self, Symbols};
use mempool_backend_kit::search::{self, LinkStubs};
use mempool_backend_kit::symbols;
use mempool_hal::{Error, ErrorKind, Result};
use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The environment variable naming the driver library (a file or a folder).
pub const ENV_LIBRARY: &str = "MEMPOOL_CUDA_LIBRARY";

/// The library names tried in each place, in order.
pub const LIBRARY_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// The usual folders of an installed driver (step 4 of the search), in order.
pub const DRIVER_DIRS: [&str; 4] =
    ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib", "/usr/local/cuda/compat"];

/// Where to look for the driver.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Whether to take a copy of the driver the process has loaded already (a
    /// framework's), before any other place. Default true; [`LoadOptions::only`] sets it
    /// false.
    pub loaded: bool,
    /// An explicit library file or folder, tried first after a loaded copy.
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
        LoadOptions { loaded: true, path: None, use_env: true, system_loader: true, driver_dirs: true }
    }
}

impl LoadOptions {
    /// Only `path` (a file or a folder), nothing else: not even a copy the process has
    /// loaded already.
    pub fn only(path: impl Into<PathBuf>) -> Self {
        LoadOptions { loaded: false, path: Some(path.into()), use_env: false, system_loader: false, driver_dirs: false }
    }

    /// Every candidate, in search order: the loaded copies, full paths, bare names for the
    /// system loader, then full paths in the driver folders.
    pub fn candidates(&self) -> Vec<PathBuf> {
        self.candidates_with(&|var| std::env::var_os(var))
    }

    /// [`LoadOptions::candidates`] with the environment read through `env` (the loaded
    /// copies are still the process's, [`search::loaded_copies`]).
    pub fn candidates_with(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        let mut out = if self.loaded { search::loaded_copies(&LIBRARY_NAMES) } else { Vec::new() };
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

/// The default search order ([`LoadOptions::default`]'s candidates, the environment and
/// the process's loaded copies read now): every path and bare name the backend tries, in
/// order.
pub fn search_order() -> Vec<PathBuf> {
    LoadOptions::default().candidates()
}

/// A loaded, initialized CUDA driver. Lives for the rest of the process once loaded: its
/// code may be running on driver threads, so it is never unloaded.
pub struct Runtime {
    lib: libloading::Library,
    path: PathBuf,
    syms: Symbols,
    /// The CPU libcuda's [`sys::SHIM_LAST_ERROR`], resolved at the first failure; `None`
    /// in NVIDIA's driver. Outside the driver's table ([`Symbols`]): no driver has it.
    shim_last_error: OnceLock<Option<sys::ShimLastError>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("path", &self.path).finish()
    }
}

/// Resolves a function of the driver by name: `Ok(fn pointer)` or `NotSupported` (the
/// kit's [`sym!`](mempool_backend_kit::sym) over [`Runtime::resolve`]).
pub(crate) use mempool_backend_kit::sym;

impl Runtime {
    /// The library file (or the bare name given to the system loader) that was loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lazily resolved symbol slots.
    pub(crate) fn symbols(&self) -> &Symbols {
        &self.syms
    }

    /// The address of the library's `cuInit`, once resolved: one library, one address,
    /// whatever path it was opened by.
    fn init_address(&self) -> Option<usize> {
        self.syms.cuInit.get().copied().flatten().map(|f| f as usize)
    }

    /// Resolves `name` into `slot` on first use.
    ///
    /// # Errors
    ///
    /// `NotSupported` (`CUDA_ERROR_NOT_SUPPORTED`, 801) naming the symbol when the library
    /// lacks it; the error's operation is the symbol's name.
    pub(crate) fn resolve<F: Copy>(&self, slot: &OnceLock<Option<F>>, name: &'static str) -> Result<F> {
        // SAFETY: `F` is the function-pointer type declared for `name` in `sys`, which
        // matches the driver's C API; the pointer stays valid because the library is never
        // unloaded while `self` lives.
        unsafe {
            symbols::resolve(&self.lib, slot, name, || {
                Error::cuda(
                    ErrorKind::NotSupported,
                    sys::CUDA_ERROR_NOT_SUPPORTED,
                    name,
                    format!(
                        "the driver {} has no symbol `{name}` (a driver older than this call?)",
                        self.path.display()
                    ),
                )
            })
        }
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

    /// The project's CPU libcuda's message of the calling thread's last failed call
    /// ([`sys::SHIM_LAST_ERROR`]; `"cuMemFreeAsync: ... (stream-order violation)"`, naming
    /// the call first); `None` in a library without the call (NVIDIA's driver) or when no
    /// call has failed on this thread. The symbol is looked up once, at the first use.
    pub fn recent_error_message(&self) -> Option<String> {
        let f = self.shim_last_error.get_or_init(|| {
            // SAFETY: the symbol, where it exists, is the CPU libcuda's
            // `const char *mempool_cuda_shim_last_error(void)`, whose type `ShimLastError`
            // is (the library checks its export against it); the pointer stays valid
            // because the library is never unloaded while `self` lives.
            unsafe { self.lib.get::<sys::ShimLastError>(sys::SHIM_LAST_ERROR.as_bytes()).ok().map(|s| *s) }
        });
        let f = (*f)?;
        // SAFETY: the call takes nothing; it returns NULL or a NUL-terminated string valid
        // until this thread's next call into the library, copied at once.
        let p = unsafe { f() };
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null, a NUL-terminated string of the library (see above).
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        (!s.is_empty()).then_some(s)
    }

    /// The text of a failed call `op` that answered `rc`: [`Runtime::describe`], and the
    /// library's own message of the failure when it has one
    /// ([`Runtime::recent_error_message`], taken only when it names `op`, so that a message
    /// left by an earlier failure is never shown): `NAME: description; the library says:
    /// ...`, without the library's `op: ` (the error names the call). The library's message
    /// is read first, before the calls that describe the code, which could replace it.
    pub(crate) fn failure_text(&self, rc: sys::CUresult, op: &str) -> String {
        let said = self.recent_error_message();
        let said = said.as_deref().and_then(|m| about_call(m, op));
        let text = self.describe(rc);
        match said {
            Some(m) => format!("{text}; the library says: {m}"),
            None => text,
        }
    }
}

/// The rest of a message of the CPU libcuda about the call `op` (it starts `op: `);
/// `None` for a message about another call.
fn about_call<'m>(message: &'m str, op: &str) -> Option<&'m str> {
    message.strip_prefix(op)?.strip_prefix(": ").filter(|rest| !rest.is_empty())
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
/// loaded and initialized (`cuInit(0)`) once, whoever asks first, from any thread, and
/// under whichever path.
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
        let rt = Runtime { lib, path: cand.to_path_buf(), syms: Symbols::default(), shim_last_error: OnceLock::new() };
        let Ok(init) = sym!(rt, cuInit) else {
            // Keep it mapped: unloading libraries that ran initializers is not worth the
            // risk.
            std::mem::forget(rt);
            return Err("loaded, but it has no cuInit (not a CUDA driver)".into());
        };
        if let Some(same) = loaded.iter().find(|r| r.init_address() == Some(init as usize)) {
            // The same library, loaded before under another path (by bare name, then
            // found as a loaded copy by its full path, say): it was initialized then.
            // Dropping `rt` gives back this path's extra reference; `same` keeps it loaded.
            return Ok(Arc::clone(same));
        }
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
                format!("cuInit failed with {other} ({})", rt.failure_text(other, "cuInit"))
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
    fn only_a_message_about_the_failed_call_is_taken() {
        let m = "cuMemFreeAsync: not ordered (stream-order violation)";
        assert_eq!(about_call(m, "cuMemFreeAsync"), Some("not ordered (stream-order violation)"));
        assert_eq!(about_call("cuMemFreeAsyncX: no", "cuMemFreeAsync"), None);
        assert_eq!(about_call("cuStreamQuery: earlier failure", "cuMemFreeAsync"), None);
        assert_eq!(about_call("cuMemFreeAsync", "cuMemFreeAsync"), None);
        assert_eq!(about_call("cuMemFreeAsync: ", "cuMemFreeAsync"), None);
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
        assert!(!dir.loaded && LoadOptions::default().loaded, "only a given path: no loaded copy");
    }
}

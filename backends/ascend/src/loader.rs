//! Finding and loading the ACL runtime ([contract §9](mempool_hal::contract::loading)), and resolving its symbols
//! lazily, one by one.
//!
//! Search order, stopping at the first library that loads and is not a link stub:
//!
//! 1. a copy the process has loaded already ([`LoadOptions::loaded`]): a `libacl_rt.so`
//!    or `libascendcl.so` (or a versioned file of one) that a framework such as torch_npu
//!    loaded before the backend, so that the stream handles it passes mean the same to
//!    both; the path the dynamic loader gives for it is opened, which yields that copy;
//! 2. an explicit path from the caller ([`LoadOptions::path`]) or the environment variable
//!    [`ENV_LIBRARY`] (`MEMPOOL_ASCEND_LIBRARY`): a library file, or a folder holding one;
//! 3. `$ASCEND_HOME_PATH/lib64`, then `$ASCEND_TOOLKIT_HOME/lib64` (set by CANN's
//!    `set_env.sh`);
//! 4. `/usr/local/Ascend/cann/lib64`, `/usr/local/Ascend/ascend-toolkit/latest/lib64`;
//! 5. the system loader (`LD_LIBRARY_PATH`, the ld.so cache);
//!
//! trying `libacl_rt.so` before `libascendcl.so` in each place. Folders named `devlib`
//! (CANN's link stubs) are never tried, and a library whose `aclInit` answers 100039
//! (`ACL_ERROR_COMPILING_STUB_MODE`) is a stub: it is skipped. Every path tried, and why
//! it was not taken, goes into the `Unavailable` error (the walk and its record are
//! [`mempool_backend_kit::search`]'s).

use crate::sys::{self, Symbols};
use mempool_backend_kit::search::{self, LinkStubs};
use mempool_backend_kit::symbols;
use mempool_hal::{Error, ErrorKind, Result, code};
use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The environment variable naming the runtime library (a file or a folder).
pub const ENV_LIBRARY: &str = "MEMPOOL_ASCEND_LIBRARY";

/// The library names tried in each folder, in order.
pub const LIBRARY_NAMES: [&str; 2] = ["libacl_rt.so", "libascendcl.so"];

/// The standard CANN install folders (step 4 of the search).
pub const STANDARD_DIRS: [&str; 2] = ["/usr/local/Ascend/cann/lib64", "/usr/local/Ascend/ascend-toolkit/latest/lib64"];

/// Where to look for the runtime.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Whether to take a copy of the runtime the process has loaded already (a
    /// framework's), before any other place. Default true; [`LoadOptions::only`] sets it
    /// false.
    pub loaded: bool,
    /// An explicit library file or folder, tried first after a loaded copy.
    pub path: Option<PathBuf>,
    /// Whether to read the environment ([`ENV_LIBRARY`], `ASCEND_HOME_PATH`,
    /// `ASCEND_TOOLKIT_HOME`). Default true.
    pub use_env: bool,
    /// Whether to try the standard install folders. Default true.
    pub standard_dirs: bool,
    /// Whether to ask the system loader by bare name. Default true.
    pub system_loader: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { loaded: true, path: None, use_env: true, standard_dirs: true, system_loader: true }
    }
}

impl LoadOptions {
    /// Only `path` (a file or a folder), nothing else: not even a copy the process has
    /// loaded already.
    pub fn only(path: impl Into<PathBuf>) -> Self {
        LoadOptions {
            loaded: false,
            path: Some(path.into()),
            use_env: false,
            standard_dirs: false,
            system_loader: false,
        }
    }

    /// Every candidate, in search order: the loaded copies, full paths, then bare names for
    /// the system loader.
    pub fn candidates(&self) -> Vec<PathBuf> {
        self.candidates_with(&|var| std::env::var_os(var))
    }

    /// [`LoadOptions::candidates`] with the environment read through `env` (the loaded
    /// copies are still the process's, [`search::loaded_copies`]).
    pub fn candidates_with(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        let mut out = if self.loaded { search::loaded_copies(&LIBRARY_NAMES) } else { Vec::new() };
        let mut push_place = |p: &Path| {
            if p.is_dir() || p.extension().is_none() {
                out.extend(search::in_dir(p, &LIBRARY_NAMES));
            } else {
                out.push(p.to_path_buf());
            }
        };
        if let Some(p) = &self.path {
            push_place(p);
        }
        if self.use_env {
            if let Some(p) = env(ENV_LIBRARY).filter(|v| !v.is_empty()) {
                push_place(Path::new(&p));
            }
            for var in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
                if let Some(home) = env(var).filter(|v| !v.is_empty()) {
                    let dir = Path::new(&home).join("lib64");
                    out.extend(search::in_dir(&dir, &LIBRARY_NAMES));
                }
            }
        }
        if self.standard_dirs {
            for d in STANDARD_DIRS {
                out.extend(search::in_dir(Path::new(d), &LIBRARY_NAMES));
            }
        }
        if self.system_loader {
            out.extend(LIBRARY_NAMES.iter().map(PathBuf::from));
        }
        out
    }
}

/// A loaded, initialized ACL runtime. Lives for the rest of the process once loaded:
/// its code may be running on runtime threads, so it is never unloaded.
pub struct Runtime {
    lib: libloading::Library,
    path: PathBuf,
    syms: Symbols,
    /// Whether this backend's `aclInit` initialized the runtime (it answered 0), rather
    /// than finding it initialized by someone else in the process (100002).
    initialized_here: bool,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("path", &self.path).finish()
    }
}

/// Resolves a function of the runtime by name: `Ok(fn pointer)` or `NotSupported` (the
/// kit's [`sym!`](mempool_backend_kit::sym) over [`Runtime::resolve`]).
pub(crate) use mempool_backend_kit::sym;

impl Runtime {
    /// The library file that was loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lazily resolved symbol slots.
    pub(crate) fn symbols(&self) -> &Symbols {
        &self.syms
    }

    /// The address of the library's `aclInit`, once resolved: one library, one address,
    /// whatever path it was opened by.
    fn init_address(&self) -> Option<usize> {
        self.syms.aclInit.get().copied().flatten().map(|f| f as usize)
    }

    /// Resolves `name` into `slot` on first use.
    ///
    /// # Errors
    ///
    /// `NotSupported` (207000) naming the symbol when the library lacks it.
    pub(crate) fn resolve<F: Copy>(&self, slot: &OnceLock<Option<F>>, name: &'static str) -> Result<F> {
        // SAFETY: `F` is the function-pointer type declared for `name` in `sys`, which
        // matches the C API; the pointer stays valid because the library is never unloaded
        // while `self` lives.
        unsafe {
            symbols::resolve(&self.lib, slot, name, || {
                Error::new(
                    ErrorKind::NotSupported,
                    code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    name,
                    format!(
                        "the runtime {} has no symbol `{name}` (an older CANN without this call?)",
                        self.path.display()
                    ),
                )
            })
        }
    }

    /// The runtime's message for the last error on this thread (`aclGetRecentErrMsg`).
    pub fn recent_error_message(&self) -> Option<String> {
        let f = self.resolve(&self.syms.aclGetRecentErrMsg, "aclGetRecentErrMsg").ok()?;
        string_of(f)
    }

    /// The SoC the runtime names (`aclrtGetSocName`): CANN names the chip, the project's
    /// drop-in library `mempool-emu-` and its version; `None` when the runtime lacks the
    /// call or answers NULL.
    pub fn soc_name(&self) -> Option<String> {
        let f = self.resolve(&self.syms.aclrtGetSocName, "aclrtGetSocName").ok()?;
        string_of(f)
    }
}

/// The string a runtime call without arguments returns, copied; `None` for NULL or empty.
fn string_of(f: unsafe extern "C" fn() -> *const c_char) -> Option<String> {
    // SAFETY: the function takes no arguments and returns a NUL-terminated string owned by
    // the runtime (or null), valid until the next ACL call on this thread; it is copied at
    // once.
    unsafe {
        let p: *const c_char = f();
        if p.is_null() {
            return None;
        }
        let s = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        (!s.is_empty()).then_some(s)
    }
}

/// Runtimes loaded so far in this process, by the path they were loaded from: each is
/// loaded and initialized (`aclInit`) once, whoever asks first, from any thread, and under
/// whichever path (a library opened again by another path is recognized by the address of
/// its `aclInit`).
static LOADED: Mutex<Vec<Arc<Runtime>>> = Mutex::new(Vec::new());

/// CANN's link stubs, never tried.
const LINK_STUBS: LinkStubs = LinkStubs { folder: "devlib", why: "devlib link stubs" };

/// Releases this backend's hold on every runtime it has loaded, and forgets them (a later
/// [`load`] initializes afresh). Call it at the end of the program, after every device and
/// handle of the backend is dropped; devices still alive afterwards get the runtime's
/// errors for uninitialized use. Skipping it is fine: the process exit ends the runtime
/// too.
///
/// It finalizes only what this backend initialized, so a host program that initialized
/// ACL itself keeps its runtime:
///
/// - with `aclFinalizeReference` (CANN's counted finalize: every `aclInit`, a repeat
///   answering 100002 too, holds one reference), it gives back the one reference the
///   backend's `aclInit` took; the runtime is finalized only when that was the last;
/// - without it (an older runtime), it calls `aclFinalize`, which tears down whatever the
///   count, only when the backend's `aclInit` was the one that initialized the runtime
///   (it answered 0, not 100002); otherwise it leaves the runtime alone.
///
/// # Errors
///
/// The first failure; every runtime is still released and forgotten.
/// `ACL_ERROR_REPEAT_FINALIZE` (100037) is not a failure: the library was finalized
/// already (it was loaded under two paths, or someone else finalized it), which is the
/// state asked for.
pub fn finalize() -> Result<()> {
    let runtimes: Vec<Arc<Runtime>> = LOADED.lock().unwrap_or_else(PoisonError::into_inner).drain(..).collect();
    let mut first = Ok(());
    for rt in runtimes {
        let (rc, op) = if let Ok(f) = sym!(rt, aclFinalizeReference) {
            let mut left = 0u64;
            // SAFETY: a valid out-pointer; the runtime was initialized (or found
            // initialized, which took a reference too) by `load`, and this reference is
            // given back once because the runtime has just left the registry.
            (unsafe { f(&mut left) }, "aclFinalizeReference")
        } else if let (true, Ok(f)) = (rt.initialized_here, sym!(rt, aclFinalize)) {
            // SAFETY: no arguments; this backend's `aclInit` initialized the runtime, and
            // it is finalized once because it has just left the registry.
            (unsafe { f() }, "aclFinalize")
        } else {
            std::mem::forget(rt);
            continue;
        };
        if first.is_ok() && rc != sys::ACL_ERROR_REPEAT_FINALIZE {
            first = rt.check(rc, op);
        }
        // Never unloaded (see `Runtime`): runtime threads may still run its code.
        std::mem::forget(rt);
    }
    first
}

/// Finds, loads and initializes the runtime.
///
/// # Errors
///
/// `Unavailable` listing every path tried and why each was not taken, when no real
/// runtime is found (link stubs count as not found).
pub fn load(opts: &LoadOptions) -> Result<Arc<Runtime>> {
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    let found = search::first_to_open(opts.candidates(), LINK_STUBS, |cand| {
        if let Some(rt) = loaded.iter().find(|r| r.path == cand) {
            return Ok(Arc::clone(rt));
        }
        // SAFETY: loading a shared library runs its initializers; an ACL runtime's are
        // sound to run, and this is the documented way to use the runtime without
        // linking it at build time.
        let lib = unsafe { libloading::Library::new(cand) }.map_err(|e| e.to_string())?;
        let mut rt = Runtime { lib, path: cand.to_path_buf(), syms: Symbols::default(), initialized_here: false };
        let init = sym!(rt, aclInit).map_err(|_| "loaded, but it has no aclInit".to_string())?;
        if let Some(same) = loaded.iter().find(|r| r.init_address() == Some(init as usize)) {
            // The same library, loaded before under another path (by bare name, then
            // found as a loaded copy by its full path, say): it was initialized then.
            // Dropping `rt` gives back this path's extra reference; `same` keeps it loaded.
            return Ok(Arc::clone(same));
        }
        // SAFETY: `aclInit(NULL)` initializes with the default configuration.
        let rc = unsafe { init(std::ptr::null()) };
        let why = match rc {
            code::ACL_SUCCESS | sys::ACL_ERROR_REPEAT_INITIALIZE => {
                rt.initialized_here = rc == code::ACL_SUCCESS;
                let rt = Arc::new(rt);
                loaded.push(Arc::clone(&rt));
                return Ok(rt);
            }
            // Keep the stub mapped (below): unloading libraries that ran initializers is
            // not worth the risk, and stubs are small.
            code::ACL_ERROR_COMPILING_STUB_MODE => "a link stub (aclInit answered 100039)".to_string(),
            other => format!("aclInit failed with {other}"),
        };
        std::mem::forget(rt);
        Err(why)
    });
    found.map_err(|record| {
        Error::new(
            ErrorKind::Unavailable,
            code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "load",
            record.unavailable("Ascend runtime"),
        )
    })
}

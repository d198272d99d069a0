//! Run on the real hardware when there is some, on the emulator otherwise.
//!
//! The order, when the features are on: a real NVIDIA device (feature `cuda`), then a
//! real Ascend runtime (feature `ascend`), then the project's CPU libcuda if that is the
//! CUDA library found, then the emulator. See [`auto()`], and
//! [the choosers' table](crate#which-backend-runs-the-three-choosers) for why this order
//! differs from `DefaultBackend`'s and `libmempool_alloc.so`'s.

#[cfg(feature = "ascend")]
use mempool_ascend::Ascend;
#[cfg(feature = "cuda")]
use mempool_cuda::Cuda;
use mempool_emu::Emulator;
#[cfg(feature = "cuda")]
use mempool_hal::Device as _;
use mempool_hal::{Error, ErrorKind, Result};
use std::fmt;

/// The backend [`auto()`] chose, and why.
///
/// Code generic over [`Device`](mempool_hal::Device) runs on any arm; the
/// [`with_auto_device!`](crate::with_auto_device) macro writes the `match`:
///
/// ```
/// use mempool::prelude::*;
/// fn total<D: Device>(dev: &D) -> mempool::Result<u64> {
///     Ok(dev.mem_info()?.total)
/// }
/// let chosen = mempool::auto(0)?;
/// println!("{chosen}"); // which backend, and why
/// let bytes = mempool::with_auto_device!(chosen, |dev| total(&dev))?;
/// assert!(bytes > 0);
/// # Ok::<(), mempool::Error>(())
/// ```
///
/// Which arms exist follows the features: `Cuda` with `cuda`, `Ascend` with `ascend`,
/// `Emulator` always.
#[derive(Debug)]
pub enum Auto {
    /// A CUDA driver was found (feature `cuda`). `None`: an NVIDIA driver with a device,
    /// the first choice. `Some(why)`: the library found is the project's CPU libcuda (the
    /// emulator behind CUDA's calls, `backends/cuda-shim`), which is not an NVIDIA device,
    /// and no real hardware was found; `why` names the CPU library and every other place
    /// looked at.
    #[cfg(feature = "cuda")]
    Cuda(Cuda, Option<Error>),
    /// A real Ascend runtime was found (feature `ascend`), and no NVIDIA device.
    #[cfg(feature = "ascend")]
    Ascend(Ascend),
    /// No runtime was found (the error lists every path tried, for every backend): the
    /// emulator, with its default configuration.
    Emulator(Emulator, Error),
}

impl fmt::Display for Auto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "cuda")]
            Auto::Cuda(d, None) => {
                write!(f, "NVIDIA device {} through the CUDA driver at {}", d.id(), d.runtime().path().display())
            }
            #[cfg(feature = "cuda")]
            Auto::Cuda(_, Some(why)) => {
                write!(f, "CPU libcuda, the emulator behind CUDA's calls ({})", first_line(why))
            }
            #[cfg(feature = "ascend")]
            Auto::Ascend(d) => write!(f, "Ascend runtime at {}", d.runtime().path().display()),
            Auto::Emulator(_, why) => write!(f, "CPU emulator ({})", emulator_reason(why)),
        }
    }
}

/// The first line of an error's message, without the `; tried:` that introduces the
/// list of paths on the next lines.
fn first_line(e: &Error) -> &str {
    let line = e.message().lines().next().unwrap_or("");
    line.strip_suffix("; tried:").unwrap_or(line)
}

/// Why the emulator was chosen, in one line: with the `cuda` feature the error's first
/// line names every reason; without it, the error is the Ascend backend's own.
fn emulator_reason(why: &Error) -> String {
    if cfg!(feature = "cuda") { first_line(why).to_string() } else { format!("no Ascend runtime: {}", first_line(why)) }
}

impl Auto {
    /// Whether the real Ascend runtime was chosen.
    pub fn is_ascend(&self) -> bool {
        #[cfg(feature = "ascend")]
        if let Auto::Ascend(_) = self {
            return true;
        }
        false
    }

    /// Whether an NVIDIA device was chosen (a CUDA driver that is not the project's CPU
    /// libcuda).
    pub fn is_nvidia(&self) -> bool {
        #[cfg(feature = "cuda")]
        if let Auto::Cuda(_, None) = self {
            return true;
        }
        false
    }
}

/// Where [`auto_from`] looks for each backend; the default is each backend's standard
/// search.
#[derive(Debug, Clone, Default)]
pub struct AutoOptions {
    /// The CUDA driver search (feature `cuda`): `MEMPOOL_CUDA_LIBRARY`, the system
    /// loader, the usual driver folders ([`mempool_cuda::loader`]).
    #[cfg(feature = "cuda")]
    pub cuda: mempool_cuda::LoadOptions,
    /// The Ascend runtime search (feature `ascend`, [contract §9](mempool_hal::contract::loading)).
    #[cfg(feature = "ascend")]
    pub ascend: mempool_ascend::LoadOptions,
}

/// Device `device` of the best backend found, in this order (each step only when its
/// feature is on):
///
/// 1. **an NVIDIA device**: the CUDA driver search finds a library whose `cuInit(0)`
///    succeeds, which NVIDIA's driver does only with a device present, and the library
///    is not the project's CPU libcuda;
/// 2. **an Ascend runtime**: the standard search ([contract §9](mempool_hal::contract::loading))
///    finds one (a found runtime shows CANN is installed; the device is the runtime's
///    business);
/// 3. **the project's CPU libcuda**, when that is the CUDA library found: the emulator
///    behind CUDA's calls, there because someone pointed the search at it
///    (`MEMPOOL_CUDA_LIBRARY`, as `cargo xtask shim --cuda` prints); it is never preferred
///    over an Ascend runtime;
/// 4. **the emulator**, with its default configuration.
///
/// The CPU libcuda is told from NVIDIA's driver by the symbol `mempool_cuda_shim_version`,
/// which only it exports. The [`Auto`] says which was chosen and why (its `Display`, and
/// the error it carries when no hardware was found).
///
/// Only a missing backend falls through to the next step: for CUDA, no driver
/// (`Unavailable`) or one that cannot serve pools (`NotSupported`: an old driver, a device
/// without pools); for Ascend, no runtime (`Unavailable`). A backend that is found but
/// fails (a bad device id, for one) is an error, not a silent fallback.
///
/// # Errors
///
/// The errors of `Cuda::open` other than `Unavailable` and `NotSupported`, and of
/// `Ascend::open` other than `Unavailable`.
pub fn auto(device: u32) -> Result<Auto> {
    auto_from(&AutoOptions::default(), device)
}

/// [`auto()`] with the Ascend runtime searched with `opts` (and the CUDA driver, with
/// the feature `cuda`, by its default search): [`auto_from`] with only the Ascend search
/// set, the one entry point with options for every backend.
///
/// # Errors
///
/// As [`auto()`].
#[cfg(feature = "ascend")]
#[deprecated(since = "0.1.0", note = "use `auto_from(&AutoOptions { ascend: opts, ..Default::default() }, device)`")]
// The update fills the CUDA search when `cuda` is on; without it, there is nothing to fill.
#[allow(clippy::needless_update)]
pub fn auto_with(opts: &mempool_ascend::LoadOptions, device: u32) -> Result<Auto> {
    auto_from(&AutoOptions { ascend: opts.clone(), ..AutoOptions::default() }, device)
}

/// [`auto()`] with explicit search options for every backend.
///
/// # Errors
///
/// As [`auto()`].
pub fn auto_from(opts: &AutoOptions, device: u32) -> Result<Auto> {
    // Why each backend was not taken, in the order tried: (what is missing, the error).
    let mut skipped: Vec<(&str, Error)> = Vec::new();

    #[cfg(feature = "cuda")]
    let cpu_libcuda = match mempool_cuda::load(&opts.cuda) {
        Ok(rt) => match cpu_libcuda_marker(&rt) {
            None => match Cuda::open_with(&opts.cuda, device) {
                Ok(d) => return Ok(Auto::Cuda(d, None)),
                Err(e) if matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::NotSupported) => {
                    skipped.push(("no NVIDIA device", e));
                    false
                }
                Err(e) => return Err(e),
            },
            Some(marker) => {
                let why = format!(
                    "{} is the project's CPU libcuda (it exports `{marker}`), not an NVIDIA driver",
                    rt.path().display()
                );
                skipped.push((
                    "no NVIDIA device",
                    Error::cuda(ErrorKind::Unavailable, mempool_cuda::sys::CUDA_ERROR_NO_DEVICE, "auto", why),
                ));
                true
            }
        },
        Err(e) if e.kind() == ErrorKind::Unavailable => {
            skipped.push(("no NVIDIA device", e));
            false
        }
        Err(e) => return Err(e),
    };

    #[cfg(feature = "ascend")]
    match Ascend::open_with(&opts.ascend, device) {
        Ok(d) => return Ok(Auto::Ascend(d)),
        Err(e) if e.kind() == ErrorKind::Unavailable => skipped.push(("no Ascend runtime", e)),
        Err(e) => return Err(e),
    }

    #[cfg(feature = "cuda")]
    if cpu_libcuda {
        match Cuda::open_with(&opts.cuda, device) {
            Ok(d) => return Ok(Auto::Cuda(d, Some(combined(skipped)))),
            Err(e) if matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::NotSupported) => {
                skipped.push(("the CPU libcuda cannot serve", e));
            }
            Err(e) => return Err(e),
        }
    }

    Ok(Auto::Emulator(Emulator::new(), combined(skipped)))
}

/// One error for every reason a backend was not taken, in the order tried: the last
/// one's kind and code, and a message whose first line names each reason
/// (`no NVIDIA device: ...; no Ascend runtime: ...`), followed by every full message.
/// Without the `cuda` feature, the Ascend backend's error as it is.
fn combined(mut skipped: Vec<(&str, Error)>) -> Error {
    if !cfg!(feature = "cuda") && skipped.len() == 1 {
        if let Some((_, e)) = skipped.pop() {
            return e;
        }
    }
    let summary = skipped.iter().map(|(label, e)| format!("{label}: {}", first_line(e))).collect::<Vec<_>>().join("; ");
    let details = skipped.iter().map(|(label, e)| format!("{label}:\n{}", e.message())).collect::<Vec<_>>().join("\n");
    match skipped.pop() {
        Some((_, last)) => last.with_message(format!("{summary}\n{details}")),
        // Not reached: `auto` is built only with a hardware backend, and each one tried
        // leaves a reason before the emulator is chosen.
        None => Error::new(ErrorKind::Unavailable, 0, "auto", "no hardware backend is enabled"),
    }
}

/// The name of the marker symbol if the library `rt` loaded is the project's CPU libcuda,
/// `None` for any other library (NVIDIA's driver).
#[cfg(feature = "cuda")]
#[allow(unsafe_code)]
fn cpu_libcuda_marker(rt: &mempool_cuda::Runtime) -> Option<&'static str> {
    const MARKER: &str = "mempool_cuda_shim_version";
    // SAFETY: `rt` holds this library loaded (it is never unloaded), so opening it again by
    // the same path only takes another reference to the loaded library: no initializer
    // runs. The reference is given back when `lib` is dropped.
    let lib = unsafe { libloading::Library::new(rt.path()) }.ok()?;
    // SAFETY: only the symbol's presence is read; the pointer is never called or read.
    let found = unsafe { lib.get::<*const std::ffi::c_void>(MARKER.as_bytes()) }.is_ok();
    found.then_some(MARKER)
}

/// Runs an expression generic over [`Device`](mempool_hal::Device) on whichever backend
/// an [`Auto`] holds: `with_auto_device!(chosen, |dev| run(&dev))`.
#[cfg(all(feature = "ascend", feature = "cuda"))]
#[macro_export]
macro_rules! with_auto_device {
    ($auto:expr, |$dev:ident| $body:expr) => {
        match $auto {
            $crate::Auto::Cuda($dev, _) => $body,
            $crate::Auto::Ascend($dev) => $body,
            $crate::Auto::Emulator($dev, _) => $body,
        }
    };
}

/// Runs an expression generic over [`Device`](mempool_hal::Device) on whichever backend
/// an [`Auto`] holds: `with_auto_device!(chosen, |dev| run(&dev))`.
#[cfg(all(feature = "ascend", not(feature = "cuda")))]
#[macro_export]
macro_rules! with_auto_device {
    ($auto:expr, |$dev:ident| $body:expr) => {
        match $auto {
            $crate::Auto::Ascend($dev) => $body,
            $crate::Auto::Emulator($dev, _) => $body,
        }
    };
}

/// Runs an expression generic over [`Device`](mempool_hal::Device) on whichever backend
/// an [`Auto`] holds: `with_auto_device!(chosen, |dev| run(&dev))`.
#[cfg(all(feature = "cuda", not(feature = "ascend")))]
#[macro_export]
macro_rules! with_auto_device {
    ($auto:expr, |$dev:ident| $body:expr) => {
        match $auto {
            $crate::Auto::Cuda($dev, _) => $body,
            $crate::Auto::Emulator($dev, _) => $body,
        }
    };
}

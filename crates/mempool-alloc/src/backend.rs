//! Which backend the library runs on, how each takes the framework's streams, and opening
//! a device on it.
//!
//! `MEMPOOL_ALLOC_BACKEND=auto` (the default) takes, in order:
//!
//! 1. a CUDA driver the process has already loaded (the framework's own `libcuda.so.1`);
//! 2. an Ascend runtime the process has already loaded (`libascendcl.so`, `libacl_rt.so`);
//! 3. a CUDA driver the CUDA backend's search finds (`MEMPOOL_CUDA_LIBRARY`, the system
//!    loader, the driver folders);
//! 4. an Ascend runtime the Ascend backend's search finds (`MEMPOOL_ASCEND_LIBRARY`,
//!    `ASCEND_HOME_PATH`, the CANN folders, the system loader);
//! 5. the CPU emulator (configured by `MEMPOOL_EMU_*`).
//!
//! The backends themselves look for a loaded copy of their library before searching
//! paths, so the library and the framework share one runtime and its stream handles. Why
//! this order differs from `mempool::auto()`'s and `DefaultBackend`'s is in the facade's
//! table of the three choosers (`mempool` crate docs, "Which backend runs").

use crate::config::{Choice, Settings};
use crate::device::{Backend, DevicePool, NullStream, Pool};
use crate::error::AllocError;
use mempool_emu::{EmuStream, Emulator};

/// The backend chosen at start, able to open its devices.
#[derive(Debug)]
pub(crate) enum Opened {
    /// The CPU emulator, its devices from `MEMPOOL_EMU_DEVICES`.
    Emulator(Emulator),
    /// The CUDA driver.
    #[cfg(feature = "cuda")]
    Cuda,
    /// The Ascend runtime.
    #[cfg(feature = "ascend")]
    Ascend,
}

impl Backend for Emulator {
    const NULL: NullStream = NullStream::Own { synchronous: false };

    unsafe fn borrow(&self, raw: usize) -> Result<EmuStream, AllocError> {
        Err(AllocError::Stream {
            stream: raw,
            why: "the emulator backend has one stream per device: pass NULL (set MEMPOOL_ALLOC_BACKEND to the \
                  runtime whose streams the framework uses)"
                .into(),
        })
    }
}

cfg_if::cfg_if! {
    if #[cfg(feature = "cuda")] {
        use mempool_cuda::{Cuda, CudaStream};

        impl Backend for Cuda {
            const NULL: NullStream = NullStream::Borrowed;

            unsafe fn borrow(&self, raw: usize) -> Result<CudaStream, AllocError> {
                // SAFETY: the caller's promise: a stream of the driver the framework loaded,
                // which is the one this device runs on.
                unsafe { self.borrow_stream(raw as mempool_cuda::sys::CUstream) }
                    .map_err(|e| AllocError::Stream { stream: raw, why: e.to_string() })
            }

            fn preserving<T>(&self, f: impl FnOnce() -> T) -> T {
                self.runtime().preserving_current(f)
            }
        }
    }
}

cfg_if::cfg_if! {
    if #[cfg(feature = "ascend")] {
        use mempool_ascend::{Ascend, AscendStream};

        impl Backend for Ascend {
            const NULL: NullStream = NullStream::Own { synchronous: true };
            const ALLOCATOR_REGISTRY: bool = true;

            unsafe fn borrow(&self, raw: usize) -> Result<AscendStream, AllocError> {
                // SAFETY: the caller's promise: a stream of the runtime the framework
                // loaded, which is the one this device runs on.
                unsafe { self.borrow_stream(raw as mempool_ascend::sys::aclrtStream) }
                    .map_err(|e| AllocError::Stream { stream: raw, why: e.to_string() })
            }

            fn preserving<T>(&self, f: impl FnOnce() -> T) -> T {
                self.runtime().preserving_current(f)
            }

            fn register_allocator(
                &self,
                stream: &AscendStream,
                layer: std::sync::Arc<mempool_small::SmallBlocks<'static, Ascend>>,
            ) -> Result<Box<dyn std::any::Any + Send + Sync>, AllocError> {
                Ok(Box::new(self.register_stream_allocator(stream, layer)?))
            }
        }
    }
}

/// Chooses the backend (see the [module docs](self)); returns it and a description.
pub(crate) fn choose(settings: &Settings) -> Result<(Opened, String), AllocError> {
    let emulator = |why: &str| -> Result<(Opened, String), AllocError> {
        let emu =
            Emulator::builder().with_env().and_then(|b| b.build()).map_err(|e| AllocError::Start(e.to_string()))?;
        let devices = emu.config().devices;
        Ok((Opened::Emulator(emu), format!("emulator ({devices} devices{why})")))
    };
    match settings.backend {
        Choice::Emulator => emulator(""),
        Choice::Cuda => cuda().map_err(AllocError::Start),
        Choice::Ascend => ascend().map_err(AllocError::Start),
        Choice::Auto => {
            if loaded_cuda() {
                return cuda().map_err(AllocError::Start);
            }
            if loaded_ascend() {
                return ascend().map_err(AllocError::Start);
            }
            let cuda_why = match cuda() {
                Ok(found) => return Ok(found),
                Err(why) => why,
            };
            let ascend_why = match ascend() {
                Ok(found) => return Ok(found),
                Err(why) => why,
            };
            emulator(&format!("; no runtime found: {} / {}", first_line(&cuda_why), first_line(&ascend_why)))
        }
    }
}

/// The first line of a loader's error, without the `; tried:` that introduces its list of
/// paths.
fn first_line(s: &str) -> &str {
    let line = s.lines().next().unwrap_or("");
    line.strip_suffix("; tried:").unwrap_or(line)
}

fn loaded_cuda() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(feature = "cuda")] {
            !mempool_backend_kit::search::loaded_copies(&mempool_cuda::LIBRARY_NAMES).is_empty()
        } else {
            false
        }
    }
}

fn loaded_ascend() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(feature = "ascend")] {
            !mempool_backend_kit::search::loaded_copies(&mempool_ascend::loader::LIBRARY_NAMES).is_empty()
        } else {
            false
        }
    }
}

fn cuda() -> Result<(Opened, String), String> {
    cfg_if::cfg_if! {
        if #[cfg(feature = "cuda")] {
            let rt = mempool_cuda::load(&mempool_cuda::LoadOptions::default()).map_err(|e| e.to_string())?;
            Ok((Opened::Cuda, format!("cuda ({})", rt.path().display())))
        } else {
            Err("the library was built without the CUDA backend (feature `cuda`)".into())
        }
    }
}

fn ascend() -> Result<(Opened, String), String> {
    cfg_if::cfg_if! {
        if #[cfg(feature = "ascend")] {
            let rt = mempool_ascend::load(&mempool_ascend::LoadOptions::default()).map_err(|e| e.to_string())?;
            Ok((Opened::Ascend, format!("ascend ({})", rt.path().display())))
        } else {
            Err("the library was built without the Ascend backend (feature `ascend`)".into())
        }
    }
}

impl Opened {
    /// Opens device `index` (0 or more) with its pool and layer.
    pub(crate) fn open(&self, index: u32, settings: &Settings) -> Result<Box<dyn Pool>, AllocError> {
        match self {
            Opened::Emulator(emu) => pool_of(index, settings, |i| emu.device(i)),
            // Opening makes a context of the device current: the thread gets its own back.
            #[cfg(feature = "cuda")]
            Opened::Cuda => mempool_cuda::load(&mempool_cuda::LoadOptions::default())?
                .preserving_current(|| pool_of(index, settings, Cuda::open)),
            #[cfg(feature = "ascend")]
            Opened::Ascend => mempool_ascend::load(&mempool_ascend::LoadOptions::default())?
                .preserving_current(|| pool_of(index, settings, Ascend::open)),
        }
    }
}

/// Device `index` of a backend (`open`), with its pool and layer.
fn pool_of<D: Backend>(
    index: u32,
    settings: &Settings,
    open: impl FnOnce(u32) -> mempool_hal::Result<D>,
) -> Result<Box<dyn Pool>, AllocError>
where
    D::Stream: std::hash::Hash + Eq,
{
    let dev = open(index).map_err(|e| match e.kind() {
        mempool_hal::ErrorKind::InvalidDevice => {
            AllocError::UnknownDevice { device: index.into(), why: format!("; {e}") }
        }
        _ => AllocError::Backend(e),
    })?;
    Ok(Box::new(DevicePool::open(index.into(), dev, settings)?))
}

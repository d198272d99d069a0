//! The CUDA driver (`libcuda.so.1`) behind the `mempool-hal` traits: its stream-ordered
//! memory pools (`cuMemPool*`, `cuMemAllocFromPoolAsync`, `cuMemFreeAsync`), streams,
//! events and copies, loaded at run time with libloading. Nothing CUDA is needed to
//! build: no toolkit, header or library.
//!
//! # Layers
//!
//! The same as the Ascend backend's, one per module:
//!
//! - [`sys`]: hand-written `#[repr(C)]` types, constants and the signatures of every driver
//!   call the crate makes, in one table ([`for_each_cuda_function!`]), with compile-time
//!   size and offset checks of `CUmemPoolProps` (the 88 bytes of CUDA 12.6).
//! - [`loader`]: the library search, link-stub detection, `cuInit(0)` once per library,
//!   and lazy, one-by-one symbol resolution: a driver without a call yields
//!   `NotSupported` naming the missing symbol, never a panic.
//! - [`result`]: one thin typed wrapper per driver call, grouped by object
//!   (`stream::create`, `pool::malloc_async`, ...), and every rule from a `CUresult` to
//!   [`mempool_hal::Error`] ([`Error::cuda`](mempool_hal::Error::cuda)), keeping the raw
//!   code and the driver's `cuGetErrorName` / `cuGetErrorString` text, and on the
//!   project's CPU libcuda its own message of the failure (a stream-order violation names
//!   the streams and positions; [`Runtime::recent_error_message`]). All calls into the
//!   driver are made there.
//! - [`Cuda`]: the [`mempool_hal::Device`] implementation, the safe layer: handles
//!   checked live before each call, no `unsafe` code but the declarations of
//!   [`free_async`](mempool_hal::MemPool::free_async) and [`Cuda::borrow_stream`] (a
//!   framework's stream, which the backend uses and never destroys). The device's primary context is
//!   retained at [`Cuda::open`], made current on whichever thread calls
//!   (`cuCtxSetCurrent`), and released when the instance's last handle is dropped, so the
//!   backend is `Send + Sync`.
//! - [`Cuda`] also implements [`mempool_hal::VirtualMemory`] (contract §14) through
//!   `cuMemAddressReserve` … `cuMemSetAccess`, passing the driver only the allocation
//!   handles the instance holds; a driver without the calls answers `NotSupported`.
//!
//! What this backend shares with the Ascend backend, written once in `mempool-backend-kit`:
//! the page-locked staging cache and the staged host copies
//! ([`mempool_backend_kit::staging`]), the liveness of stream, event and pool handles
//! ([`mempool_backend_kit::handle`]), a pool's size check and out-of-memory error
//! ([`mempool_backend_kit::pool`]), the library search and its record of every path tried
//! ([`mempool_backend_kit::search`]), and the probe table with its common pool experiments
//! ([`mempool_backend_kit::probe`]).
//!
//! Every error of this crate is in the driver's numbering ([`mempool_hal::Vendor::Cuda`]):
//! the driver's own codes, and for the mistakes the backend catches itself (a stale handle,
//! a size of 0, an attribute rule of the contract) the code the driver gives for the same
//! mistake ([`result::code_of`]). Match on [`mempool_hal::Error::kind`] for portable
//! handling.
//!
//! # Finding the driver
//!
//! [`loader::LoadOptions::candidates`] (and [`loader::search_order`] for the defaults)
//! lists the places, in this order, stopping at the first library that loads and whose
//! `cuInit(0)` succeeds:
//!
//! 1. a copy of the driver the process has loaded already ([`LoadOptions::loaded`]; a
//!    framework such as PyTorch that loaded `libcuda.so.1` first), so that the stream
//!    handles it passes ([`Cuda::borrow_stream`]) mean the same to both;
//! 2. an explicit path from the caller ([`LoadOptions::path`]), then
//!    `MEMPOOL_CUDA_LIBRARY` ([`ENV_LIBRARY`]): a library file, or a folder holding one;
//! 3. the system loader by bare name: `libcuda.so.1`, then `libcuda.so`
//!    (`LD_LIBRARY_PATH`, the ld.so cache);
//! 4. the usual driver folders ([`loader::DRIVER_DIRS`]): `/usr/lib/x86_64-linux-gnu`,
//!    `/usr/lib64`, `/usr/lib/wsl/lib`, `/usr/local/cuda/compat`.
//!
//! In a folder, `libcuda.so.1` is tried before `libcuda.so`. The toolkit's link stubs
//! (`.../stubs/libcuda.so`) are never used: a path through a `stubs` folder is skipped, and
//! a library whose `cuInit` answers `CUDA_ERROR_STUB_LIBRARY` (34) counts as no driver. No
//! driver is [`ErrorKind::Unavailable`](mempool_hal::ErrorKind::Unavailable), listing every
//! path tried and why it was not taken; a library that lacks a call the backend makes is
//! [`ErrorKind::NotSupported`](mempool_hal::ErrorKind::NotSupported) (801) naming the
//! symbol. The library is never unloaded, since driver threads may still run its code.
//!
//! ```
//! use mempool_cuda::Cuda;
//! use mempool_hal::{Device, ErrorKind, MemPool, MemPoolExt, PoolProps, Result, attr};
//!
//! fn main() -> Result<()> {
//!     let dev = match Cuda::open(0) {
//!         Ok(dev) => dev,
//!         // No driver, or one without pools: nothing to show on this machine.
//!         Err(e) if matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::NotSupported | ErrorKind::InvalidDevice) => {
//!             eprintln!("{e}");
//!             return Ok(());
//!         }
//!         Err(e) => return Err(e),
//!     };
//!     println!("driver {} at {}", dev.driver_version(), dev.runtime().path().display());
//!     let stream = dev.create_stream()?;
//!     let pool = dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(64 << 20).build())?;
//!     pool.set(attr::ReuseAllowOpportunistic, false)?; // the driver's default is on
//!     let p = pool.malloc_async(4096, &stream)?;
//!     dev.memcpy_h2d_async(p, b"hello", &stream)?;
//!     // SAFETY: `p` is a live allocation of `pool`, used only on `stream` before this.
//!     unsafe { pool.free_async(p, &stream)? };
//!     dev.synchronize_stream(&stream)?;
//!     assert_eq!(pool.get(attr::UsedMemCurrent)?, 0);
//!     dev.destroy_pool(&pool)?;
//!     dev.destroy_stream(&stream)
//! }
//! ```
//!
//! # Where CUDA differs from the contract
//!
//! The backend follows the driver where its semantics differ, and says so in the method's
//! `# Portability` section:
//!
//! | what | the contract (Ascend, the emulator) | this backend |
//! |---|---|---|
//! | reuse flags of a fresh pool | off | on (the driver's default) |
//! | `trim_to` below USED | `InvalidParam` | releases what it can, no error |
//! | resetting a high-water mark | to 0 | to the current value |
//! | `query_event` of an event never recorded | not ready | complete |
//! | choice of block | smallest fit, lowest address | the driver's |
//! | pool granularity | measured or fixed per backend | 2 MiB ([`POOL_GRANULARITY`]): the driver cannot be asked |
//! | `destroy_pool` with queued work | waits for it | the driver defers the release itself |
//! | error codes | ACL numbers | `CUresult` ([`mempool_hal::Vendor::Cuda`]) |
//!
//! As on Ascend, the backend is correct whether or not the driver reuses and releases
//! memory: an out-of-memory answer while the pool holds cached bytes is retried once after
//! a synchronize and a trim to USED ([`CudaPool::oom_retries`]); host copies are staged in
//! reused page-locked buffers ([`Cuda::staging`]), so they stay asynchronous; and on drivers
//! before 12.2, which ignore `CUmemPoolProps::maxSize`, the backend enforces the pool's size
//! itself (see [`CudaPool`]'s `malloc_async`).
//!
//! Beyond the traits: [`Cuda::default_pool`], [`Cuda::current_pool`],
//! [`Cuda::set_current_pool`] and [`Cuda::malloc_async_current`] reach the device's own
//! pools (`cuDeviceGetDefaultMemPool`, `cuDeviceGetMemPool`, `cuDeviceSetMemPool`,
//! `cuMemAllocAsync`); `as_raw` on streams, events and pools, and [`Cuda::context_raw`],
//! give the driver's own handles for the calls this crate does not wrap (kernel launches,
//! say). Errors met when an instance ends (in `Drop`) are kept for [`take_drop_error`].
//! [`probe::run`] measures which behaviour (contract §12) the driver's pools have;
//! `cargo run -p mempool-cuda --example probe` prints it as a table.

#![deny(missing_docs)]

mod backend;
pub mod loader;
pub mod probe;
pub mod result;
pub mod sys;

pub use backend::{Cuda, CudaEvent, CudaPool, CudaStream, POOL_GRANULARITY, StagingStats, take_drop_error};
pub use loader::{DRIVER_DIRS, ENV_LIBRARY, LIBRARY_NAMES, LoadOptions, Runtime, load, search_order};

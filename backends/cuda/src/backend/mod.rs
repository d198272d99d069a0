//! The [`Device`](mempool_hal::Device) and [`MemPool`](mempool_hal::MemPool)
//! implementation over the loaded driver: owned handles, liveness, and the device's
//! primary context. Every driver call goes through [`result`](crate::result); this layer
//! has no `unsafe` code but the declarations of `free_async`, whose contract is the
//! trait's, and of [`Cuda::borrow_stream`], whose caller vouches for a stream it created.

#![deny(unsafe_code)]

mod device;
mod host_register;
mod pool;
mod staging;
mod vmm;

pub use device::POOL_GRANULARITY;
pub use pool::CudaPool;
pub use staging::StagingStats;

use crate::loader::{LoadOptions, Runtime, load};
use crate::{result, sys};
use mempool_backend_kit::context::{Entered, InstanceContext, next_instance};
use mempool_backend_kit::handle::Handle;
use mempool_hal::{Error, ErrorKind, Result};
use std::cell::Cell;
use std::ffi::c_int;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

thread_local! {
    /// The device instance whose context this thread last made current through this
    /// backend (instances are never reused, unlike context addresses).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// The first error met at the end of a device instance, kept for [`take_drop_error`].
static DROP_ERROR: Mutex<Option<Error>> = Mutex::new(None);

/// Takes the first error met when the last handle of a device instance was dropped (its
/// final `cuCtxSynchronize`, the freeing of its page-locked staging buffers, or
/// `cuDevicePrimaryCtxRelease_v2`), if any since the last call. `Drop` cannot return an
/// error, so it keeps the first one here, for a program that wants to check its teardown.
pub fn take_drop_error() -> Option<Error> {
    DROP_ERROR.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// What every handle of one device instance shares: the driver, the device and its
/// primary context.
struct Shared {
    rt: Arc<Runtime>,
    /// The ordinal the instance was opened with.
    device: u32,
    /// The driver's `CUdevice` for it.
    cu_device: sys::CUdevice,
    /// The retained primary context, as an address.
    ctx: usize,
    instance: u64,
    /// `cuDriverGetVersion`'s answer.
    driver_version: c_int,
    /// Page-locked staging buffers for host copies (shared with the host functions that
    /// return them).
    staging: Arc<staging::Staging>,
    /// The handles of the pools this instance created, so that a handle of the device's
    /// current pool ([`Cuda::current_pool`]) shares the liveness of the pool it names.
    pools: Mutex<Vec<Weak<Handle>>>,
    /// The physical chunks of `cuMemCreate` the instance has not released.
    chunks: vmm::Chunks,
    /// The peers this instance enabled access to, each with the reference it holds on the
    /// peer's primary context (`Device::enable_peer_access`), given back at the disable or
    /// at the end of the instance.
    peers: Mutex<std::collections::HashMap<u32, sys::CUdevice>>,
}

/// The device's context, made current on the calling thread (CUDA contexts are bound per thread) by the kit's
/// ways in: [`enter`](InstanceContext::enter) on the malloc, free and copy paths,
/// [`enter_checked`](InstanceContext::enter_checked) (which asks `cuCtxGetCurrent`) on
/// the pool-management and device-wide paths.
impl InstanceContext for Shared {
    const ENTERED: Entered = Entered::new(&CURRENT);

    /// The instance and the retained primary context.
    #[inline]
    fn ids(&self) -> (u64, usize) {
        (self.instance, self.ctx)
    }

    /// `cuCtxGetCurrent`.
    fn current_ctx(&self) -> Result<usize> {
        Ok(result::context::current(&self.rt)? as usize)
    }

    fn set_current(&self) -> Result<()> {
        // `ctx` is the primary context this instance retained; it is released only when
        // the last handle of the instance is dropped.
        result::context::set_current(&self.rt, self.ctx as sys::CUcontext)
    }

    #[inline]
    fn renumber(e: Error) -> Error {
        result::renumbered(e)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // No handle of this instance is left. Wait for the context's streams, so every
        // staging copy has run and its host function has given its buffer back; then free
        // the buffers (here, on a user thread) and give back the primary context reference
        // taken at `open`. The first failure is kept for `take_drop_error`.
        let mut first: Option<Error> = None;
        let mut keep = |r: Result<()>| {
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        };
        let entered = self.enter_slow();
        let entered_ok = entered.is_ok();
        keep(entered);
        if entered_ok {
            keep(result::context::synchronize(&self.rt));
        }
        keep(self.staging.free_all(&self.rt));
        let peers: Vec<sys::CUdevice> =
            self.peers.lock().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, d)| d).collect();
        for d in peers {
            keep(result::context::primary_release(&self.rt, d));
        }
        keep(result::context::primary_release(&self.rt, self.cu_device));
        <Shared as InstanceContext>::ENTERED.forget(self.instance);
        if let Some(e) = first {
            let message = format!("at the end of the instance of device {}: {}", self.device, e.message());
            DROP_ERROR.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e.with_message(message));
        }
    }
}

/// One device of the CUDA driver; implements [`Device`](mempool_hal::Device).
///
/// Cheap to clone. `Send + Sync`: every call first makes the device's primary context
/// current on the calling thread. The instance holds one reference on the primary context
/// (`cuDevicePrimaryCtxRetain` at [`Cuda::open`]) and gives it back when its last handle
/// (the device, a clone, or a pool) is dropped, after synchronizing the context; an error
/// there is kept for [`take_drop_error`].
#[derive(Clone)]
pub struct Cuda {
    shared: Arc<Shared>,
}

impl fmt::Debug for Cuda {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cuda")
            .field("library", &self.shared.rt.path())
            .field("device", &self.shared.device)
            .field("driver_version", &self.shared.driver_version)
            .finish()
    }
}

/// A stream of the CUDA backend: one it created ([`Device::create_stream`], a non-blocking
/// stream, `CU_STREAM_NON_BLOCKING`, which does not synchronize with the legacy NULL
/// stream), or one it borrows from other code ([`Cuda::borrow_stream`]), whatever its
/// flags.
///
/// [`Device::create_stream`]: mempool_hal::Device::create_stream
#[derive(Debug, Clone)]
pub struct CudaStream(Arc<Handle>);

mempool_backend_kit::identity!(CudaStream);

impl CudaStream {
    /// The driver's `CUstream`, to pass to other CUDA calls (a kernel launch, say). It is
    /// valid until the stream is destroyed through the backend (a borrowed stream: by its
    /// owner); using it is up to the caller's own `unsafe` code.
    pub fn as_raw(&self) -> sys::CUstream {
        self.0.raw() as sys::CUstream
    }

    /// Whether the backend borrows the stream ([`Cuda::borrow_stream`]) rather than owns it.
    pub fn is_borrowed(&self) -> bool {
        self.0.is_borrowed()
    }
}

/// An event of the CUDA backend, created with timing (`CU_EVENT_DEFAULT`).
#[derive(Debug, Clone)]
pub struct CudaEvent(Arc<Handle>);

mempool_backend_kit::identity!(CudaEvent);

impl CudaEvent {
    /// The driver's `CUevent`, to pass to other CUDA calls. It is valid until the event is
    /// destroyed through the backend; using it is up to the caller's own `unsafe` code.
    pub fn as_raw(&self) -> sys::CUevent {
        self.0.raw() as sys::CUevent
    }
}

impl Cuda {
    /// Finds the driver with the default search (see [`loader`](crate::loader)) and opens
    /// device `device` (an ordinal, from 0).
    ///
    /// In order: `cuDriverGetVersion`, `cuDeviceGet`, `cuDeviceGetAttribute` of
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`, `cuDevicePrimaryCtxRetain` and
    /// `cuCtxSetCurrent`: the primary context is current on the calling thread afterwards.
    ///
    /// # Errors
    ///
    /// `Unavailable` when no driver is found (the message lists every path tried);
    /// `NotSupported` (801) naming the first missing symbol of a library that lacks the
    /// calls, or for a device without memory pools (the attribute is 0, or a driver before
    /// 11.2 does not know it); `InvalidDevice` (101) for a device that does not exist.
    pub fn open(device: u32) -> Result<Cuda> {
        Cuda::open_with(&LoadOptions::default(), device)
    }

    /// Like [`Cuda::open`] with explicit search options.
    ///
    /// # Errors
    ///
    /// As [`Cuda::open`].
    pub fn open_with(opts: &LoadOptions, device: u32) -> Result<Cuda> {
        let rt = load(opts)?;
        let ordinal = c_int::try_from(device).map_err(|_| {
            Error::cuda(ErrorKind::InvalidDevice, sys::CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet", "device id too large")
        })?;
        let driver_version = result::device::driver_version(&rt)?;
        let cu_device = result::device::get(&rt, ordinal)?;
        // A driver older than the attribute (before 11.2, without pools) refuses its number.
        let pools = match result::device::attribute(&rt, cu_device, sys::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) {
            Err(e) if e.code() == sys::CUDA_ERROR_INVALID_VALUE => 0,
            other => other?,
        };
        if pools == 0 {
            return Err(Error::cuda(
                ErrorKind::NotSupported,
                sys::CUDA_ERROR_NOT_SUPPORTED,
                "cuDeviceGetAttribute",
                format!(
                    "device {device} does not support stream-ordered memory pools \
                     (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 0 or unknown; driver {})",
                    version_string(driver_version)
                ),
            ));
        }
        let ctx = result::context::primary_retain(&rt, cu_device)?;
        if let Err(e) = result::context::set_current(&rt, ctx) {
            let _ = result::context::primary_release(&rt, cu_device);
            return Err(e);
        }
        let instance = next_instance();
        <Shared as InstanceContext>::ENTERED.record(instance);
        Ok(Cuda {
            shared: Arc::new(Shared {
                rt,
                device,
                cu_device,
                ctx: ctx as usize,
                instance,
                driver_version,
                staging: Arc::default(),
                pools: Mutex::default(),
                chunks: vmm::Chunks::default(),
                peers: Mutex::new(std::collections::HashMap::new()),
            }),
        })
    }

    /// The page-locked staging cache's counters (see [`Device::memcpy_h2d_async`]).
    ///
    /// [`Device::memcpy_h2d_async`]: mempool_hal::Device::memcpy_h2d_async
    pub fn staging(&self) -> StagingStats {
        self.shared.staging.stats()
    }

    /// The driver's version, as `cuDriverGetVersion` gives it: 1000 × major + 10 × minor
    /// (12020 is CUDA 12.2).
    pub fn driver_version(&self) -> i32 {
        self.shared.driver_version
    }

    /// Whether the driver enforces a pool's maximum size itself (`CUmemPoolProps::maxSize`,
    /// read from CUDA 12.2 on). When it does not, the backend does: see
    /// [`CudaPool`]'s `malloc_async`.
    pub fn driver_limits_pool_size(&self) -> bool {
        self.shared.driver_version >= sys::VERSION_POOL_MAX_SIZE
    }

    /// The device's primary context, retained by this instance: every stream, event and
    /// pool of the instance belongs to it. Valid while the instance lives; using it is up
    /// to the caller's own `unsafe` code.
    pub fn context_raw(&self) -> sys::CUcontext {
        self.shared.ctx as sys::CUcontext
    }

    /// The driver's `CUdevice` of this instance.
    pub fn device_raw(&self) -> sys::CUdevice {
        self.shared.cu_device
    }

    /// The driver library in use.
    pub fn runtime(&self) -> &Runtime {
        &self.shared.rt
    }

    /// Wraps `raw`, a stream that other code created through this instance's driver (a
    /// framework's stream, handed to a pluggable allocator), so that every call of the
    /// [`Device`](mempool_hal::Device) and [`MemPool`](mempool_hal::MemPool) traits takes
    /// it. The driver's default streams are accepted too: NULL (the legacy default
    /// stream), [`CU_STREAM_LEGACY`](sys::CU_STREAM_LEGACY) and
    /// [`CU_STREAM_PER_THREAD`](sys::CU_STREAM_PER_THREAD), which the driver resolves in
    /// the context current at each call (the instance's primary context, which the backend
    /// makes current first). The backend borrows the stream: it never destroys it, and
    /// [`Device::destroy_stream`](mempool_hal::Device::destroy_stream) of it answers
    /// `InvalidHandle` (`CUDA_ERROR_INVALID_HANDLE`, 400) and leaves it usable. Each call
    /// makes a handle of its own: two borrows of one stream are not equal.
    ///
    /// # Safety
    ///
    /// `raw` must be one of the default streams above, or a live stream of the driver this
    /// instance loaded ([`Cuda::runtime`]) in the device's primary context, for as long as
    /// the returned value, or a clone of it, is used; its owner destroys it only after
    /// that.
    ///
    /// # Errors
    ///
    /// None today; the `Result` leaves room for a check.
    #[allow(unsafe_code)]
    pub unsafe fn borrow_stream(&self, raw: sys::CUstream) -> Result<CudaStream> {
        Ok(CudaStream(Handle::borrowed(raw, self.shared.instance)))
    }

    /// The raw stream of `s`, checked live, with the device's context current.
    #[inline]
    fn stream(&self, s: &CudaStream, op: &'static str) -> Result<sys::CUstream> {
        let raw = self.shared.live(&s.0, op, "stream")?;
        self.shared.enter()?;
        Ok(raw as sys::CUstream)
    }

    /// The raw event of `e`, checked live, with the device's context current.
    #[inline]
    fn event(&self, e: &CudaEvent, op: &'static str) -> Result<sys::CUevent> {
        let raw = self.shared.live(&e.0, op, "event")?;
        self.shared.enter()?;
        Ok(raw as sys::CUevent)
    }
}

/// `12.2` for 12020.
fn version_string(v: c_int) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

impl Runtime {
    /// Runs `f`, then gives the calling thread back the context that was current before
    /// (`cuCtxGetCurrent` before, `cuCtxSetCurrent` after, only when `f` changed it), so
    /// that code which calls the backend from a framework's thread leaves the framework's
    /// current device as it was. The backend's per-thread record of its current context is forgotten when it
    /// restores one, so the next call of the backend on this thread makes its own current
    /// again. A thread with no context before keeps the one `f` made current.
    pub fn preserving_current<T>(&self, f: impl FnOnce() -> T) -> T {
        mempool_backend_kit::context::preserving_current(
            || result::context::current(self).ok(),
            |c| result::context::set_current(self, c).is_ok(),
            || <Shared as InstanceContext>::ENTERED.record(0),
            f,
        )
    }
}

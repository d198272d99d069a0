//! The [`Device`](mempool_hal::Device) and [`MemPool`](mempool_hal::MemPool)
//! implementation over the loaded runtime: owned handles, liveness, and the device's
//! context. Every runtime call goes through [`result`](crate::result); this layer has no
//! `unsafe` code but the declarations of `free_async`, whose contract is the trait's, and
//! of [`Ascend::borrow_stream`], whose caller vouches for a stream it created.

#![deny(unsafe_code)]

mod allocator;
mod device;
mod host_register;
mod pool;
mod staging;
mod vmm;

pub use allocator::{RegisteredAllocator, StreamAllocator};
pub use device::FALLBACK_GRANULARITY;
pub use pool::AscendPool;
pub use staging::StagingStats;

use crate::loader::{LoadOptions, Runtime, load};
use crate::{result, sys};
use mempool_backend_kit::context::{Entered, InstanceContext, next_instance};
use mempool_backend_kit::handle::Handle;
use mempool_hal::{Error, ErrorKind, Result, code};
use std::cell::Cell;
use std::fmt;
use std::sync::{Arc, OnceLock};

thread_local! {
    /// The device instance whose context this thread last made current through this
    /// backend (instances are never reused, unlike context addresses).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// What every handle of one device shares: the runtime and the device's context.
struct Shared {
    rt: Arc<Runtime>,
    device: u32,
    /// The `aclrtContext`, as an address.
    ctx: usize,
    instance: u64,
    granularity: OnceLock<u64>,
    /// Page-locked staging buffers for host copies (shared with the host functions that
    /// return them).
    staging: Arc<staging::Staging>,
    /// The physical chunks of `aclrtMallocPhysical` the instance has not freed.
    chunks: vmm::Chunks,
}

/// The device's context, made current on the calling thread (ACL contexts are per thread) by the kit's
/// ways in: [`enter`](InstanceContext::enter) on the malloc, free and copy paths,
/// [`enter_checked`](InstanceContext::enter_checked) (which asks `aclrtGetCurrentContext`) on
/// the pool-management and device-wide paths.
impl InstanceContext for Shared {
    const ENTERED: Entered = Entered::new(&CURRENT);

    /// The instance and the context `aclrtCreateContext` made.
    #[inline]
    fn ids(&self) -> (u64, usize) {
        (self.instance, self.ctx)
    }

    /// `aclrtGetCurrentContext`.
    fn current_ctx(&self) -> Result<usize> {
        Ok(result::context::current(&self.rt)? as usize)
    }

    fn set_current(&self) -> Result<()> {
        // `ctx` was created by `aclrtCreateContext` on this runtime and is only destroyed
        // when the last handle of the device is dropped.
        result::context::set_current(&self.rt, self.ctx as sys::aclrtContext)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // No handle of this device is left. Wait for the context's streams, so every
        // staging copy has run and its host function has given its buffer back; then
        // free the buffers (here, on a user thread) and destroy the context, which is ours.
        if self.enter_slow().is_ok() {
            let _ = result::device::synchronize(&self.rt);
        }
        let _ = self.staging.free_all(&self.rt);
        let _ = result::context::destroy(&self.rt, self.ctx as sys::aclrtContext);
        <Shared as InstanceContext>::ENTERED.forget(self.instance);
    }
}

/// One device of the real Ascend runtime; implements [`Device`](mempool_hal::Device).
///
/// Cheap to clone. `Send + Sync`: every call first makes the device's context current on
/// the calling thread.
#[derive(Clone)]
pub struct Ascend {
    shared: Arc<Shared>,
}

impl fmt::Debug for Ascend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ascend").field("library", &self.shared.rt.path()).field("device", &self.shared.device).finish()
    }
}

/// A stream of the Ascend backend: one it created ([`Device::create_stream`]), or one it
/// borrows from other code ([`Ascend::borrow_stream`]).
///
/// [`Device::create_stream`]: mempool_hal::Device::create_stream
#[derive(Debug, Clone)]
pub struct AscendStream(Arc<Handle>);

// Clones name the same stream: two handles are equal when they name one stream.
mempool_backend_kit::identity!(AscendStream);

impl AscendStream {
    /// The runtime's `aclrtStream`, to pass to other CANN calls (a kernel launch, say).
    /// It is valid until the stream is destroyed through the backend (a borrowed stream:
    /// by its owner); using it is up to the caller's own `unsafe` code.
    pub fn as_raw(&self) -> sys::aclrtStream {
        self.0.raw() as sys::aclrtStream
    }

    /// Whether the backend borrows the stream ([`Ascend::borrow_stream`]) rather than owns
    /// it.
    pub fn is_borrowed(&self) -> bool {
        self.0.is_borrowed()
    }
}

/// An event of the Ascend backend.
#[derive(Debug, Clone)]
pub struct AscendEvent(Arc<Handle>);

impl Ascend {
    /// Finds the runtime with the default search ([contract §9](mempool_hal::contract::loading)) and opens `device`.
    ///
    /// # Errors
    ///
    /// `Unavailable` when no runtime is found (the message lists every path tried);
    /// `InvalidDevice` for a device that does not exist.
    pub fn open(device: u32) -> Result<Ascend> {
        Ascend::open_with(&LoadOptions::default(), device)
    }

    /// Like [`Ascend::open`] with explicit search options.
    ///
    /// # Errors
    ///
    /// As [`Ascend::open`].
    pub fn open_with(opts: &LoadOptions, device: u32) -> Result<Ascend> {
        let rt = load(opts)?;
        let dev = i32::try_from(device).map_err(|_| {
            Error::new(ErrorKind::InvalidDevice, code::ACL_ERROR_RT_INVALID_DEVICEID, "open", "device id too large")
        })?;
        // No `aclrtSetDevice`: `aclrtCreateContext` retains the device itself, and its
        // context is released with it, so nothing is left set when the instance ends.
        let ctx = result::context::create(&rt, dev)?;
        let instance = next_instance();
        // aclrtCreateContext makes the new context current on this thread.
        <Shared as InstanceContext>::ENTERED.record(instance);
        Ok(Ascend {
            shared: Arc::new(Shared {
                rt,
                device,
                ctx: ctx as usize,
                instance,
                granularity: OnceLock::new(),
                staging: Arc::default(),
                chunks: vmm::Chunks::default(),
            }),
        })
    }

    /// The page-locked staging cache's counters (see [`Device::memcpy_h2d_async`]).
    ///
    /// [`Device::memcpy_h2d_async`]: mempool_hal::Device::memcpy_h2d_async
    pub fn staging(&self) -> StagingStats {
        self.shared.staging.stats()
    }

    /// The runtime's `aclrtContext` of this instance: every stream, event and pool of the
    /// instance belongs to it. Valid while the instance lives; using it is up to the
    /// caller's own `unsafe` code.
    pub fn context_raw(&self) -> sys::aclrtContext {
        self.shared.ctx as sys::aclrtContext
    }

    /// The runtime library in use.
    pub fn runtime(&self) -> &Runtime {
        &self.shared.rt
    }

    /// Wraps `raw`, a stream that other code created through this instance's runtime (a
    /// framework's stream, handed to a pluggable allocator), so that every call of the
    /// [`Device`](mempool_hal::Device) and [`MemPool`](mempool_hal::MemPool) traits takes
    /// it. The backend borrows the stream: it never destroys it, and
    /// [`Device::destroy_stream`](mempool_hal::Device::destroy_stream) of it answers
    /// `InvalidHandle` (107017) and leaves it usable. Each call makes a handle of its own:
    /// two borrows of one stream are not equal.
    ///
    /// As for the backend's own streams, each call first makes the instance's context
    /// current on the calling thread; the runtime must accept the stream there (a stream
    /// of the same device).
    ///
    /// # Safety
    ///
    /// `raw` must be a live stream of the runtime this instance loaded
    /// ([`Ascend::runtime`]) for as long as the returned value, or a clone of it, is used;
    /// its owner destroys it only after that.
    ///
    /// # Errors
    ///
    /// `InvalidParam` (107000) for a null `raw`: CANN's pool calls do not take the default
    /// stream.
    #[allow(unsafe_code)]
    pub unsafe fn borrow_stream(&self, raw: sys::aclrtStream) -> Result<AscendStream> {
        if raw.is_null() {
            return Err(Error::invalid_param(
                "borrow_stream",
                "a null aclrtStream (the default stream) cannot be borrowed: the pool calls do not take it",
            ));
        }
        Ok(AscendStream(Handle::borrowed(raw, self.shared.instance)))
    }

    /// The raw stream of `s`, checked live, with the device's context current.
    #[inline]
    fn stream(&self, s: &AscendStream, op: &'static str) -> Result<sys::aclrtStream> {
        let raw = self.shared.live(&s.0, op, "stream")?;
        self.shared.enter()?;
        Ok(raw as sys::aclrtStream)
    }

    /// The raw event of `e`, checked live, with the device's context current.
    #[inline]
    fn event(&self, e: &AscendEvent, op: &'static str) -> Result<sys::aclrtEvent> {
        let raw = self.shared.live(&e.0, op, "event")?;
        self.shared.enter()?;
        Ok(raw as sys::aclrtEvent)
    }
}

impl Runtime {
    /// Runs `f`, then gives the calling thread back the context that was current before
    /// (`aclrtGetCurrentContext` before, `aclrtSetCurrentContext` after, only when `f`
    /// changed it), so that code which calls the backend from a framework's thread leaves
    /// the framework's current device as it was. The backend's per-thread record of its current context is forgotten when it
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

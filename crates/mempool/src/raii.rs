//! Owned handles: destroyed, or freed in stream order, when dropped.

use mempool_hal::{Device, DevicePtr, Error, EventStatus, HostBuffer, MemPool, PoolProps, Result};
use std::fmt;
use std::ops::Deref;
use std::sync::{Mutex, PoisonError};

/// A stream, destroyed when dropped (work already enqueued still runs).
pub struct Stream<'d, D: Device> {
    dev: &'d D,
    raw: D::Stream,
}

impl<'d, D: Device> Stream<'d, D> {
    /// Creates a stream on `dev`.
    ///
    /// # Errors
    ///
    /// As [`Device::create_stream`].
    pub fn new(dev: &'d D) -> Result<Self> {
        Ok(Stream { dev, raw: dev.create_stream()? })
    }

    /// The backend handle.
    pub fn raw(&self) -> &D::Stream {
        &self.raw
    }

    /// Blocks until the stream's work has run (pools then release above their threshold).
    ///
    /// # Errors
    ///
    /// As [`Device::synchronize_stream`].
    pub fn synchronize(&self) -> Result<()> {
        self.dev.synchronize_stream(&self.raw)
    }

    /// Makes later work on this stream wait for `event`.
    ///
    /// # Errors
    ///
    /// As [`Device::stream_wait_event`].
    pub fn wait(&self, event: &Event<'d, D>) -> Result<()> {
        self.dev.stream_wait_event(&self.raw, &event.raw)
    }

    /// Enqueues a host function.
    ///
    /// # Errors
    ///
    /// As [`Device::launch_host_func`].
    pub fn launch_host_func(&self, f: impl FnOnce() + Send + 'static) -> Result<()> {
        self.dev.launch_host_func(&self.raw, Box::new(f))
    }
}

impl<D: Device> Drop for Stream<'_, D> {
    fn drop(&mut self) {
        let _ = self.dev.destroy_stream(&self.raw);
    }
}

impl<D: Device> fmt::Debug for Stream<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.raw, f)
    }
}

/// An event, destroyed when dropped.
pub struct Event<'d, D: Device> {
    dev: &'d D,
    raw: D::Event,
}

impl<'d, D: Device> Event<'d, D> {
    /// Creates an event on `dev`.
    ///
    /// # Errors
    ///
    /// As [`Device::create_event`].
    pub fn new(dev: &'d D) -> Result<Self> {
        Ok(Event { dev, raw: dev.create_event()? })
    }

    /// The backend handle.
    pub fn raw(&self) -> &D::Event {
        &self.raw
    }

    /// Records the event at the current end of `stream`.
    ///
    /// # Errors
    ///
    /// As [`Device::record_event`].
    pub fn record(&self, stream: &Stream<'d, D>) -> Result<()> {
        self.dev.record_event(&self.raw, &stream.raw)
    }

    /// Blocks until the work before the event has run.
    ///
    /// # Errors
    ///
    /// As [`Device::synchronize_event`].
    pub fn synchronize(&self) -> Result<()> {
        self.dev.synchronize_event(&self.raw)
    }

    /// Whether the work before the event has run.
    ///
    /// # Errors
    ///
    /// As [`Device::query_event`].
    pub fn query(&self) -> Result<EventStatus> {
        self.dev.query_event(&self.raw)
    }
}

impl<D: Device> Drop for Event<'_, D> {
    fn drop(&mut self) {
        let _ = self.dev.destroy_event(&self.raw);
    }
}

impl<D: Device> fmt::Debug for Event<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.raw, f)
    }
}

/// A pool, destroyed when dropped. Buffers borrow it, so it outlives them.
///
/// It dereferences to the backend pool, so the typed attribute methods of
/// [`MemPoolExt`](mempool_hal::MemPoolExt) (`get`, `set`, `reset`, `stats`) and
/// [`MemPool::trim_to`] apply directly.
pub struct Pool<'d, D: Device> {
    dev: &'d D,
    raw: D::Pool,
    drop_error: Mutex<Option<Error>>,
}

impl<'d, D: Device> Pool<'d, D> {
    /// Creates a pool on `dev`.
    ///
    /// # Errors
    ///
    /// As [`Device::create_pool`].
    pub fn new(dev: &'d D, props: &PoolProps) -> Result<Self> {
        Ok(Pool { dev, raw: dev.create_pool(props)?, drop_error: Mutex::new(None) })
    }

    /// The device.
    pub fn device(&self) -> &'d D {
        self.dev
    }

    /// Allocates `size` bytes in stream order on `stream`. The buffer frees itself on
    /// `stream` when dropped, or on another stream with [`Buffer::free_async`].
    ///
    /// # Errors
    ///
    /// An error kept from an earlier buffer's drop is reported first (once); otherwise as
    /// [`MemPool::malloc_async`].
    pub fn alloc<'a>(&'a self, size: u64, stream: &'a Stream<'d, D>) -> Result<Buffer<'a, 'd, D>> {
        if let Some(e) = self.take_drop_error() {
            return Err(e);
        }
        let ptr = self.raw.malloc_async(size, &stream.raw)?;
        Ok(Buffer { pool: self, stream, ptr, len: size })
    }

    /// Takes the error of a buffer drop that could not free in stream order, if any.
    pub fn take_drop_error(&self) -> Option<Error> {
        self.drop_error.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn keep_drop_error(&self, e: Error) {
        self.drop_error.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
    }
}

impl<D: Device> Deref for Pool<'_, D> {
    type Target = D::Pool;
    fn deref(&self) -> &D::Pool {
        &self.raw
    }
}

impl<D: Device> Drop for Pool<'_, D> {
    fn drop(&mut self) {
        let _ = self.dev.destroy_pool(&self.raw);
    }
}

impl<D: Device> fmt::Debug for Pool<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.raw, f)
    }
}

/// An allocation that frees itself in stream order.
///
/// It borrows its pool and its allocating stream, so neither can be destroyed while it
/// lives. Dropping it frees on the allocating stream; [`Buffer::free_async`] frees on
/// another stream and reports errors.
pub struct Buffer<'a, 'd, D: Device> {
    pool: &'a Pool<'d, D>,
    stream: &'a Stream<'d, D>,
    ptr: DevicePtr,
    len: u64,
}

impl<'a, 'd, D: Device> Buffer<'a, 'd, D> {
    /// The device address (opaque; for the backend's copy calls and kernels).
    pub fn ptr(&self) -> DevicePtr {
        self.ptr
    }

    /// The requested size in bytes (the pool counts it rounded to the granularity).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the size is 0 (never: the pool refuses empty allocations).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `data` into the start of the buffer, in stream order on `stream`.
    ///
    /// # Errors
    ///
    /// `data` longer than the buffer: `InvalidPointer`; otherwise as
    /// [`Device::memcpy_h2d_async`].
    pub fn copy_from_host(&self, data: &[u8], stream: &Stream<'d, D>) -> Result<()> {
        self.pool.dev.memcpy_h2d_async(self.ptr, data, &stream.raw)
    }

    /// Copies the start of the buffer into `dst`, in stream order on `stream`.
    ///
    /// # Errors
    ///
    /// As [`Device::memcpy_d2h_async`].
    pub fn copy_to_host(&self, dst: &HostBuffer, stream: &Stream<'d, D>) -> Result<()> {
        self.pool.dev.memcpy_d2h_async(dst, self.ptr, &stream.raw)
    }

    /// Sets the whole buffer to `value`, in stream order on `stream`.
    ///
    /// # Errors
    ///
    /// As [`Device::memset_async`].
    pub fn fill(&self, value: u8, stream: &Stream<'d, D>) -> Result<()> {
        self.pool.dev.memset_async(self.ptr, value, self.len, &stream.raw)
    }

    /// Frees the buffer in stream order on `stream` (every use must be ordered before it).
    ///
    /// # Errors
    ///
    /// As [`MemPool::free_async`]. If the free is refused the buffer is freed on its
    /// allocating stream instead, so nothing is lost, and the first error is returned.
    pub fn free_async(self, stream: &Stream<'d, D>) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        // The buffer is consumed here, so this is its only free (see `unsafe_free`).
        match unsafe_free(&this.pool.raw, this.ptr, &stream.raw) {
            Ok(()) => Ok(()),
            Err(e) => {
                if let Err(e2) = unsafe_free(&this.pool.raw, this.ptr, &this.stream.raw) {
                    this.pool.keep_drop_error(e2);
                }
                Err(e)
            }
        }
    }
}

impl<D: Device> Drop for Buffer<'_, '_, D> {
    fn drop(&mut self) {
        if let Err(e) = unsafe_free(&self.pool.raw, self.ptr, &self.stream.raw) {
            self.pool.keep_drop_error(e.with_op("Buffer::drop"));
        }
    }
}

impl<D: Device> fmt::Debug for Buffer<'_, '_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer").field("ptr", &self.ptr).field("len", &self.len).finish()
    }
}

/// Frees a pointer the caller's buffer owns; the one place the facade calls the unsafe
/// trait method.
#[allow(unsafe_code)]
fn unsafe_free<P: MemPool>(pool: &P, ptr: DevicePtr, stream: &P::Stream) -> Result<()> {
    // SAFETY: only called by `Buffer`, which owns `ptr` (a live allocation of `pool`) and
    // calls this once: from `free_async` (consuming the buffer, with a fallback only when
    // the first free was refused and so did nothing) or from `drop`.
    unsafe { pool.free_async(ptr, stream) }
}

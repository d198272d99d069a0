//! Registering a pool as a stream's external allocator ([contract §16](mempool_hal::contract::allocator_registry)):
//! [`Ascend::register_stream_allocator`] and its guard, [`StreamAllocator`].
//!
//! CANN's operator layer fetches a stream's allocator with `aclrtAllocatorGetByStream` and
//! draws its workspaces from it: alloc, then getAddrFromBlock for the address, the kernels
//! on the stream, then free. Registered here, those calls allocate from the pool on that
//! stream and free in its order ([`mempool_backend_kit::callbacks`]), so the workspaces
//! come from the pool, in stream order, under the drop-in library's checker.

use super::{Ascend, AscendStream};
use crate::result::{self, allocator::Callbacks};
use mempool_backend_kit::callbacks::CallbackAllocator;
use mempool_hal::{MemPool, Result};
use std::fmt;
use std::sync::Arc;

pub use crate::result::allocator::Registered as RegisteredAllocator;

/// A pool registered as a stream's allocator; dropping it unregisters it.
///
/// Drop it (or call [`StreamAllocator::unregister`]) only when no operator still queued
/// holds one of its workspaces: the blocks still handed out are freed then, in stream
/// order, and the callbacks' object goes away.
pub struct StreamAllocator<P: MemPool<Stream = AscendStream> + 'static> {
    dev: Ascend,
    /// The descriptor, as an address; 0 once destroyed.
    desc: usize,
    callbacks: CallbackAllocator<P>,
}

impl<P: MemPool<Stream = AscendStream> + 'static> fmt::Debug for StreamAllocator<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamAllocator")
            .field("desc", &format_args!("{:#x}", self.desc))
            .field("callbacks", &self.callbacks)
            .finish()
    }
}

impl Ascend {
    /// Registers `pool` as the allocator of `stream` (`aclrtAllocatorRegister`): CANN's
    /// operator layer then draws the workspaces of the operators it runs on `stream` from
    /// `pool`, in the stream's order. `pool` is any pool of this device whose streams are
    /// the backend's: an [`AscendPool`](super::AscendPool), or a layer over one such as
    /// `mempool_small::SmallBlocks`. A later registration on the stream replaces this one
    /// (CANN's rule: the last wins).
    ///
    /// # Errors
    ///
    /// A destroyed stream: `InvalidHandle`. A runtime without the registry:
    /// `NotSupported` (207000) naming the missing call. The runtime's answers otherwise;
    /// nothing stays registered or allocated after a failure.
    pub fn register_stream_allocator<P>(&self, stream: &AscendStream, pool: Arc<P>) -> Result<StreamAllocator<P>>
    where
        P: MemPool<Stream = AscendStream> + 'static,
    {
        const OP: &str = "register_stream_allocator";
        let raw = self.stream(stream, OP)?;
        let callbacks = CallbackAllocator::new(pool, stream.clone());
        let rt = &self.shared.rt;
        let desc = result::allocator::create_desc(
            rt,
            &Callbacks {
                allocator: callbacks.object(),
                alloc: Some(callbacks.alloc_fn()),
                free: Some(callbacks.free_fn()),
                get_addr: Some(callbacks.get_addr_fn()),
            },
        )?;
        if let Err(e) = result::allocator::register(rt, raw, desc) {
            let _ = result::allocator::destroy_desc(rt, desc);
            return Err(e);
        }
        Ok(StreamAllocator { dev: self.clone(), desc: desc as usize, callbacks })
    }

    /// What `stream` has registered (`aclrtAllocatorGetByStream`), as CANN's operator
    /// layer fetches it; `None` when nothing is. Calling the callbacks is up to the
    /// caller's own `unsafe` code.
    ///
    /// # Errors
    ///
    /// A destroyed stream: `InvalidHandle`. A runtime without the registry:
    /// `NotSupported` (207000).
    pub fn registered_allocator(&self, stream: &AscendStream) -> Result<Option<RegisteredAllocator>> {
        let raw = self.stream(stream, "registered_allocator")?;
        result::allocator::get_by_stream(&self.shared.rt, raw)
    }
}

impl<P: MemPool<Stream = AscendStream> + 'static> StreamAllocator<P> {
    /// The callbacks and their counters.
    pub fn callbacks(&self) -> &CallbackAllocator<P> {
        &self.callbacks
    }

    /// The stream it is registered on.
    pub fn stream(&self) -> &AscendStream {
        self.callbacks.stream()
    }

    /// Unregisters it, reporting the runtime's answer (drop does the same, silently).
    /// The stream's registration is dropped only while it is still this one: a later
    /// registration on the stream stays.
    ///
    /// # Errors
    ///
    /// The runtime's answer to `aclrtAllocatorUnregister` or `aclrtAllocatorDestroyDesc`.
    pub fn unregister(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if self.desc == 0 {
            return Ok(());
        }
        let rt = &self.dev.shared.rt;
        let mut first = Ok(());
        // A destroyed stream has no registration left (the runtime drops it with the
        // stream); only a live one is asked.
        if let Ok(raw) = self.dev.stream(self.callbacks.stream(), "unregister") {
            match result::allocator::get_by_stream(rt, raw) {
                Ok(Some(r)) if r.allocator == self.callbacks.object() => {
                    first = result::allocator::unregister(rt, raw);
                }
                Ok(_) => {}
                Err(e) => first = Err(e),
            }
        }
        let destroyed = result::allocator::destroy_desc(rt, self.desc as crate::sys::aclrtAllocatorDesc);
        self.desc = 0;
        first.and(destroyed)
    }
}

impl<P: MemPool<Stream = AscendStream> + 'static> Drop for StreamAllocator<P> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

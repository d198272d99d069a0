//! The emulated pool: [`EmuPool`] and the [`MemPool`] implementation, over
//!
//! - `shared.rs`: one pool's state under its lock (allocation, the stream-ordered free,
//!   release, trim, attributes);
//! - `lanes.rs`: the same-stream fast path of each stream, and the exclusive guard of
//!   every other path;
//! - `reuse.rs`: which block serves an allocation (contract §4), rules a-f in order;
//! - `registry.rs`: the pools of a platform by address, and what outlives a destroyed pool;
//! - `access.rs`: checked access to device memory (copies, memsets, kernels);
//! - below them, pure structures: `blocks.rs` (the ranges of a pool), `mempool-bins` (size
//!   classes), `starts.rs` (where ranges start), `mapping.rs` (the host memory),
//!   `pins.rs` (the ranges copies are touching now) and `budget.rs` (the memory of a
//!   device, shared by its pools).

pub(crate) mod access;
mod blocks;
pub(crate) mod budget;
mod lanes;
pub(crate) mod mapping;
pub(crate) mod pins;
mod records;
pub(crate) mod registry;
mod reuse;
pub(crate) mod shared;
mod starts;

use crate::stream::EmuStream;
pub(crate) use mapping::quarantined;
use mempool_hal::attr::AttrId;
use mempool_hal::{DevicePtr, MemPool, PoolStats, RawAttrValue, Result};
use registry::PoolRegistry;
pub use reuse::{ReuseCounts, ReuseRule};
use shared::PoolShared;
use std::fmt;
use std::sync::Arc;

/// A pool of the emulator: a cheap handle; clones name the same pool.
#[derive(Clone)]
pub struct EmuPool {
    pub(crate) shared: Arc<PoolShared>,
    pub(crate) registry: Arc<PoolRegistry>,
}

impl fmt::Debug for EmuPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.shared, f)
    }
}

impl EmuPool {
    /// Like [`MemPool::malloc_async`], also saying which reuse rule ([contract §4](mempool_hal::contract::allocation))
    /// served the allocation.
    ///
    /// # Errors
    ///
    /// As [`MemPool::malloc_async`].
    pub fn malloc_async_traced(&self, size: u64, stream: &EmuStream) -> Result<(DevicePtr, ReuseRule)> {
        let s = stream.live(self.shared.platform, "malloc_async")?;
        self.shared.malloc(size, s, false)
    }

    /// A synchronous allocation, as `aclrtMalloc` makes: served like
    /// [`MemPool::malloc_async`] on `stream` (its reuse rules), but complete when the call
    /// returns (it waits for what `stream` has queued), so the checker orders it before
    /// everything enqueued afterwards, on any stream (contract §1 and §11). Free it in
    /// stream order like any other allocation.
    ///
    /// # Errors
    ///
    /// As [`MemPool::malloc_async`]; a wait on `stream` that times out: `Internal`.
    pub fn malloc_sync(&self, size: u64, stream: &EmuStream) -> Result<DevicePtr> {
        let s = stream.live(self.shared.platform, "malloc")?;
        self.shared.malloc(size, s, true).map(|(p, _)| p)
    }

    /// Like [`MemPool::free_async`], but safe: the emulator checks every pointer. A
    /// stream-ordered free like it, not a synchronous one; a pointer of another pool of the
    /// platform is freed there, as [`Emulator::free`](crate::Emulator::free) does.
    ///
    /// # Errors
    ///
    /// As [`MemPool::free_async`].
    pub fn free(&self, ptr: DevicePtr, stream: &EmuStream) -> Result<()> {
        let s = stream.live(self.shared.platform, "free_async")?;
        if self.shared.contains(ptr.addr()) {
            // Its own memory: no need to look the pool up.
            return self.shared.free_async(ptr.addr(), s);
        }
        self.registry.free_async(ptr, s)
    }

    /// How many allocations each reuse rule has served since creation.
    pub fn reuse_counts(&self) -> ReuseCounts {
        self.shared.state().counts
    }

    /// Number of live allocations.
    pub fn live_allocations(&self) -> usize {
        self.shared.state().blocks.live_count()
    }

    /// Cached bytes whose free has not executed yet (never released).
    pub fn pending_cached_bytes(&self) -> u64 {
        self.shared.state().blocks.pending_cached()
    }

    /// The first address of the pool's range.
    pub fn base(&self) -> DevicePtr {
        DevicePtr::from_addr(self.shared.base)
    }
}

impl MemPool for EmuPool {
    type Stream = EmuStream;

    fn malloc_async(&self, size: u64, stream: &EmuStream) -> Result<DevicePtr> {
        self.malloc_async_traced(size, stream).map(|(p, _)| p)
    }

    unsafe fn free_async(&self, ptr: DevicePtr, stream: &EmuStream) -> Result<()> {
        self.free(ptr, stream)
    }

    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        self.shared.trim_to(min_bytes_to_keep)
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        self.shared.get_attr(attr)
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        self.shared.set_attr(attr, value)
    }

    fn size(&self) -> u64 {
        self.shared.size
    }

    /// The four counters read under the pool's lock, in one step: no allocation, free,
    /// release or trim falls between them.
    fn stats_snapshot(&self) -> Result<PoolStats> {
        self.shared.stats()
    }
}

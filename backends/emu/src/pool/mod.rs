//! The emulated pool: [`EmuPool`] and the [`MemPool`] implementation.

pub(crate) mod access;
mod bins;
mod blocks;
mod mapping;
pub(crate) mod registry;
mod reuse;
pub(crate) mod shared;
mod starts;

use crate::stream::EmuStream;
pub(crate) use mapping::quarantined;
use mempool_hal::attr::AttrId;
use mempool_hal::{DevicePtr, MemPool, RawAttrValue, Result};
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
    /// Like [`MemPool::malloc_async`], also saying which reuse rule (SPEC.md section 4)
    /// served the allocation.
    ///
    /// # Errors
    ///
    /// As [`MemPool::malloc_async`].
    pub fn malloc_async_traced(&self, size: u64, stream: &EmuStream) -> Result<(DevicePtr, ReuseRule)> {
        let s = stream.live(self.shared.platform, "malloc_async")?;
        self.shared.malloc(size, s)
    }

    /// Like [`MemPool::free_async`], but safe: the emulator checks every pointer.
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
}

#[cfg(test)]
mod tests {
    use crate::{Emulator, ExecutionMode};
    use mempool_hal::{Device, MemPool, MemPoolExt, PoolProps, attr};

    /// Random allocate/free/sync/trim sequences over three streams keep the block
    /// structure exact: live, cached and free ranges tile the pool, free neighbours are
    /// merged, and the counters match the blocks.
    #[test]
    fn random_sequences_keep_the_invariants() {
        const G: u64 = 64 << 10;
        for seed in 1..=20u64 {
            let emu = Emulator::builder()
                .granularity(G)
                .device_memory(64 * G)
                .mode(if seed % 2 == 0 { ExecutionMode::Deferred } else { ExecutionMode::Threaded })
                .build()
                .unwrap();
            let streams: Vec<_> = (0..3).map(|_| emu.create_stream().unwrap()).collect();
            let pool = emu.create_pool(&PoolProps::builder().max_size(48 * G).build()).unwrap();
            pool.set(attr::ReuseAllowOpportunistic, seed % 3 == 0).unwrap();
            pool.set(attr::ReuseAllowInternalDependencies, seed % 5 == 0).unwrap();
            pool.set(attr::ReleaseThreshold, (seed % 4) * 8 * G).unwrap();
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut next = move || {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            };
            let mut live = Vec::new();
            for _ in 0..400 {
                let s = &streams[(next() % 3) as usize];
                match next() % 10 {
                    0..=4 => {
                        if let Ok(p) = pool.malloc_async((next() % (4 * G)) + 1, s) {
                            live.push(p);
                        }
                    }
                    5..=7 if !live.is_empty() => {
                        let p = live.swap_remove((next() as usize) % live.len());
                        pool.free(p, s).unwrap();
                    }
                    8 => emu.synchronize_stream(s).unwrap(),
                    _ => {
                        let used = pool.stats().unwrap().used_current;
                        pool.trim_to(used).unwrap();
                    }
                }
                pool.shared.check_invariants();
            }
            for p in live.drain(..) {
                pool.free(p, &streams[0]).unwrap();
            }
            emu.synchronize_device().unwrap();
            pool.shared.check_invariants();
            let s = pool.stats().unwrap();
            assert_eq!(s.used_current, 0);
            let c = pool.reuse_counts();
            assert!(c.fresh > 10 && c.same_stream + c.known_complete > 10, "the sequence exercised reuse: {c:?}");
            assert!(s.reserved_current <= (seed % 4) * 8 * G, "release at device sync honours the threshold");
        }
    }
}

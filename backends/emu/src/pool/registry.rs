//! The registry of a platform's pools by address: the live pools by base address, and the
//! address ranges of destroyed ones. It finds the pool of a pointer for a free that names
//! no pool (`aclrtMemPoolFreeAsync`), for copies and kernels, and for the checker's
//! messages.
//!
//! Three things outlive a destroyed pool, each for its own time:
//!
//! - **the graveyard** (`Platform`, in `platform.rs`): the pool's state and memory, held
//!   while any stream has not yet passed the destroy, since work enqueued before it still
//!   runs on that memory; it is dropped (`bury`) at the next synchronization or pool
//!   creation or destruction after those streams have passed it;
//! - **the destroyed ranges** (here): each destroyed pool's base, size and a weak
//!   reference to it, so that a pointer into one is known as memory of a destroyed pool
//!   (the checker's messages) and [`PoolRegistry::destroyed_at`] says whether the pool's
//!   mapping still exists. They are indexed by base address and never overlap (a later
//!   destroy takes over what it overlaps), so a lookup is a search, not a scan; and once
//!   more than [`DESTROYED_KEPT`] are kept, those whose pool is gone and whose range has
//!   left the quarantine are forgotten (the host may map that range again);
//! - **the quarantine** (`mapping.rs`): once the last reference to the pool drops its
//!   mapping, the address range stays reserved, inaccessible and without memory, process
//!   wide, until 256 later ranges or 16 TiB of address space have joined it; then it goes
//!   back to the host.

use super::shared::PoolShared;
use crate::stream::{StreamShared, lock};
use crate::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use crate::vmm::VmmSpace;
use mempool_hal::{DevicePtr, Error, ErrorKind, Result, code};
use std::collections::BTreeMap;

/// How many destroyed ranges are kept before the forgettable ones go (module docs).
pub(crate) const DESTROYED_KEPT: usize = 1024;

/// The ranges of destroyed pools by base address (disjoint), with their size and pool.
#[derive(Default)]
struct Destroyed {
    ranges: BTreeMap<u64, (u64, Weak<PoolShared>)>,
    /// The size at which to look for forgettable ranges next (twice what stayed, at least
    /// [`DESTROYED_KEPT`]), so the look costs O(1) per destroy over time.
    prune_at: usize,
}

impl Destroyed {
    /// The range holding `addr`.
    fn at(&self, addr: u64) -> Option<&(u64, Weak<PoolShared>)> {
        let (base, range) = self.ranges.range(..=addr).next_back()?;
        (addr - base < range.0).then_some(range)
    }

    /// Adds a destroyed range; the latest destroy wins where it overlaps older ones
    /// (their range was reused meanwhile), which keep only what lies outside it.
    fn insert(&mut self, base: u64, size: u64, pool: Weak<PoolShared>) {
        let end = base.saturating_add(size);
        let below = self.ranges.range(..base).next_back().filter(|(b, r)| **b + r.0 > base).map(|(b, _)| *b);
        let overlapping: Vec<u64> = below.into_iter().chain(self.ranges.range(base..end).map(|(b, _)| *b)).collect();
        for b in overlapping {
            let Some((sz, old)) = self.ranges.remove(&b) else { continue };
            if b < base {
                self.ranges.insert(b, (base - b, old.clone()));
            }
            if b + sz > end {
                self.ranges.insert(end, (b + sz - end, old));
            }
        }
        self.ranges.insert(base, (size, pool));
        if self.ranges.len() > self.prune_at.max(DESTROYED_KEPT) {
            self.ranges.retain(|&b, (_, p)| p.strong_count() > 0 || super::mapping::quarantined(b));
            self.prune_at = 2 * self.ranges.len();
        }
    }
}

/// The pools of one platform by address.
#[derive(Default)]
pub(crate) struct PoolRegistry {
    /// The live pools by base address.
    pools: RwLock<BTreeMap<u64, Arc<PoolShared>>>,
    /// Address ranges of destroyed pools (for the checker's messages, and to know a
    /// pointer that outlived its pool), with the pool while anything still holds it.
    destroyed: Mutex<Destroyed>,
    /// The device memory outside pools: reserved ranges of virtual memory and the chunks
    /// mapped there (`vmm/`).
    pub(crate) vmm: Arc<VmmSpace>,
    /// The host ranges the program registered (contract §15), which copies reach through
    /// their device addresses.
    pub(crate) hosts: crate::host_register::HostRegistrations,
}

impl PoolRegistry {
    /// An empty registry whose virtual memory waits at most `timeout` (`Config::wait_timeout`).
    pub(crate) fn new(timeout: std::time::Duration) -> PoolRegistry {
        PoolRegistry { vmm: Arc::new(VmmSpace::new(timeout)), ..PoolRegistry::default() }
    }

    /// Registers a new pool.
    pub(crate) fn insert(&self, pool: &Arc<PoolShared>) {
        self.pools.write().unwrap_or_else(PoisonError::into_inner).insert(pool.base, Arc::clone(pool));
    }

    /// Moves a pool just marked destroyed from the live pools to the destroyed ranges.
    pub(crate) fn retire(&self, pool: &Arc<PoolShared>) {
        self.pools.write().unwrap_or_else(PoisonError::into_inner).remove(&pool.base);
        lock(&self.destroyed).insert(pool.base, pool.size, Arc::downgrade(pool));
    }

    /// The live pool whose range holds `addr`.
    pub(crate) fn pool_at(&self, addr: u64) -> Option<Arc<PoolShared>> {
        let pools = self.pools.read().unwrap_or_else(PoisonError::into_inner);
        pools.range(..=addr).next_back().map(|(_, p)| p).filter(|p| p.contains(addr)).cloned()
    }

    /// The live pools of `device`.
    pub(crate) fn pools_of(&self, device: u32) -> Vec<Arc<PoolShared>> {
        let pools = self.pools.read().unwrap_or_else(PoisonError::into_inner);
        pools.values().filter(|p| p.device == device).cloned().collect()
    }

    /// Frees `ptr` in stream order on stream `s`, whichever pool it belongs to.
    pub(crate) fn free_async(&self, ptr: DevicePtr, s: &Arc<StreamShared>) -> Result<()> {
        const OP: &str = "free_async";
        if ptr.is_null() {
            return Err(Error::new(ErrorKind::InvalidPointer, code::ACL_ERROR_INVALID_PARAM, OP, "null pointer"));
        }
        let Some(pool) = self.pool_at(ptr.addr()) else {
            return Err(Error::invalid_pointer(OP, format!("{ptr} is not an address of any pool")));
        };
        pool.free_async(ptr.addr(), s)
    }

    /// Whether `addr` lay in a pool that has been destroyed.
    pub(crate) fn was_destroyed(&self, addr: u64) -> bool {
        self.destroyed_at(addr).is_some()
    }

    /// For an address in a destroyed pool's range: whether the pool's mapping still
    /// exists (queued work or a handle holds the pool), so that the range is still the
    /// emulator's. `None` for other addresses.
    pub(crate) fn destroyed_at(&self, addr: u64) -> Option<bool> {
        lock(&self.destroyed).at(addr).map(|(_, pool)| pool.strong_count() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destroyed_ranges_are_disjoint_and_the_latest_destroy_wins() {
        let mut d = Destroyed::default();
        d.insert(100, 100, Weak::new()); // [100, 200)
        d.insert(150, 100, Weak::new()); // [150, 250) takes over [150, 200)
        d.insert(120, 10, Weak::new()); // [120, 130) splits [100, 150)
        let ranges: Vec<_> = d.ranges.iter().map(|(b, (s, _))| (*b, *s)).collect();
        assert_eq!(ranges, vec![(100, 20), (120, 10), (130, 20), (150, 100)]);
        assert!(d.at(99).is_none());
        assert!(d.at(125).is_some());
        assert!(d.at(249).is_some());
        assert!(d.at(250).is_none());
        // Ranges whose pool is gone (and not quarantined) are forgotten past the bound.
        for i in 0..DESTROYED_KEPT as u64 {
            d.insert(1 << 20 | i << 4, 16, Weak::new());
        }
        assert!(d.ranges.len() <= DESTROYED_KEPT, "{}", d.ranges.len());
    }
}

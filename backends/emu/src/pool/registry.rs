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
//!   reference to it, for the life of the platform, so that a pointer into one is known as
//!   memory of a destroyed pool (the checker's messages) and [`PoolRegistry::destroyed_at`]
//!   says whether the pool's mapping still exists;
//! - **the quarantine** (`mapping.rs`): once the last reference to the pool drops its
//!   mapping, the address range stays reserved, inaccessible and without memory, process
//!   wide, until 256 later ranges or 16 TiB of address space have joined it; then it goes
//!   back to the host.

use super::shared::PoolShared;
use crate::stream::{StreamShared, lock};
use mempool_hal::{DevicePtr, Error, ErrorKind, Result, code};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};

/// The pools of one platform by address.
#[derive(Default)]
pub(crate) struct PoolRegistry {
    /// The live pools by base address.
    pools: RwLock<BTreeMap<u64, Arc<PoolShared>>>,
    /// Address ranges of destroyed pools (for the checker's messages, and to know a
    /// pointer that outlived its pool), with the pool while anything still holds it.
    destroyed: Mutex<Vec<(u64, u64, Weak<PoolShared>)>>,
}

impl PoolRegistry {
    /// Registers a new pool.
    pub(crate) fn insert(&self, pool: &Arc<PoolShared>) {
        self.pools.write().unwrap_or_else(PoisonError::into_inner).insert(pool.base, Arc::clone(pool));
    }

    /// Moves a pool just marked destroyed from the live pools to the destroyed ranges.
    pub(crate) fn retire(&self, pool: &Arc<PoolShared>) {
        self.pools.write().unwrap_or_else(PoisonError::into_inner).remove(&pool.base);
        lock(&self.destroyed).push((pool.base, pool.size, Arc::downgrade(pool)));
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
        let d = lock(&self.destroyed);
        let inside = |&&(base, size, _): &&(u64, u64, Weak<PoolShared>)| addr >= base && addr - base < size;
        // The latest destroy first: a range may have been reused by a later pool since.
        d.iter().rev().find(inside).map(|(_, _, pool)| pool.strong_count() > 0)
    }
}

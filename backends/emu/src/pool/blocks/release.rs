//! Release: cached blocks whose free has run given back to the pool's free address space,
//! smallest first, down to a target (the release threshold at synchronization, `trim_to`).

use super::marks::FREE;
use super::{BlockId, Blocks, Entry, NIL, SharedSlots};

impl Blocks {
    /// Plans a release down to `target` reserved bytes: completed cached blocks, smallest
    /// first (then lowest address), the last one split at `gran`, skipping every block
    /// for which `busy(addr, len)` holds (a range being copied now). Returns the blocks,
    /// their addresses and the low-end length to release from each; apply each with
    /// [`Blocks::release`].
    pub(crate) fn plan_release(&self, target: u64, busy: impl Fn(u64, u64) -> bool) -> Vec<(BlockId, u64, u64)> {
        let reserved = self.stats.reserved_current;
        if reserved <= target {
            return Vec::new();
        }
        let mut excess = mempool_hal::round_down(reserved - target, self.gran);
        if excess == 0 {
            return Vec::new();
        }
        let mut cands: Vec<&Entry> =
            self.bins.iter().flat_map(|b| b.sizes().iter().filter(|e| self.node(e.id).executed(&b.stream))).collect();
        cands.retain(|e| !busy(e.addr, e.len));
        cands.sort_unstable_by_key(|e| (e.len, e.addr));
        let mut plan = Vec::new();
        for e in cands {
            if excess == 0 {
                break;
            }
            let take = e.len.min(excess);
            plan.push((BlockId(e.id), e.addr, take));
            excess -= take;
        }
        plan
    }

    /// Releases the low `take` bytes of cached block `b` back to the free address space.
    /// The caller decommits the memory.
    pub(crate) fn release(&mut self, b: BlockId, take: u64) {
        let id = b.0;
        let (sid, len) = (self.node(id).stream, self.node(id).len);
        let bin = self.bin_index(sid).expect("a cached block's bin");
        self.carve_cached(bin, id, len, take);
        self.set_free(id);
        self.stats.reserved_current -= take;
        for other in [self.node(id).prev, self.node(id).next] {
            if other != NIL && self.mark(other) == FREE {
                let olen = self.node(other).len;
                self.free.remove(&mut SharedSlots(&self.slots), other, olen);
                self.absorb(id, other);
            }
        }
        let n = self.node(id);
        let e = Entry { len: n.len, addr: n.addr, id };
        self.free.insert(&mut SharedSlots(&self.slots), e);
    }

    /// Cached bytes whose free has not executed yet.
    pub(crate) fn pending_cached(&self) -> u64 {
        self.bins
            .iter()
            .flat_map(|b| b.sizes().iter().filter(|e| !self.node(e.id).executed(&b.stream)))
            .map(|e| e.len)
            .sum()
    }
}

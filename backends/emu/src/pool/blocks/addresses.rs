//! What lies at an address: the live allocation a free names (or why there is none), the
//! node containing an address for copies and error messages, and the checker's accesses
//! noted on live allocations.

use super::marks::FREE;
use super::{BlockId, Blocks, NIL, Node, Tag};
use crate::pool::records::{Access, Cached, Live};

impl Blocks {
    /// The node containing `addr`.
    pub(super) fn containing(&self, addr: u64) -> Option<&Node> {
        if addr < self.base || addr - self.base >= self.size {
            return None;
        }
        let g = self.starts.pred(self.granule(addr))?;
        let n = self.node(self.at[g as usize] - 1);
        (addr - n.addr < n.len).then_some(n)
    }

    /// The live allocation starting at `addr` and its length, or why there is none.
    pub(crate) fn live_block(&self, addr: u64) -> Result<(BlockId, u64), &'static str> {
        if let Some(id) = self.starting_at(addr) {
            // The node, not its mark: the free reads the node next anyway.
            let n = self.node(id);
            if n.tag == Tag::Live {
                return Ok((BlockId(id), n.len));
            }
        }
        match self.containing(addr).map(|n| (n.tag, n.addr == addr)) {
            Some((Tag::Live, _)) => Err("an interior pointer of a live allocation"),
            Some((Tag::Cached, true)) => Err("already freed (double free)"),
            Some((Tag::Cached, false)) => {
                Err("inside a freed block (freed already, or never the start of an allocation)")
            }
            _ => Err("not an allocation of this pool"),
        }
    }

    /// The live allocation containing `addr`: its start, length and record.
    pub(crate) fn containing_live(&self, addr: u64) -> Option<(u64, u64, Live)> {
        self.containing(addr)
            .filter(|n| n.tag == Tag::Live)
            .map(|n| (n.addr, n.len, Live { owner: n.stream, pos: n.pos }))
    }

    /// The cached block containing `addr`: its start and tags.
    pub(crate) fn containing_cached_block(&self, addr: u64) -> Option<(u64, Cached)> {
        self.containing(addr).filter(|n| n.tag == Tag::Cached).map(|n| (n.addr, n.cached()))
    }

    /// Whether `addr` lies in memory that was allocated once (live, cached, or freed and
    /// released since).
    pub(crate) fn was_allocated(&self, addr: u64) -> bool {
        if addr < self.base || addr - self.base >= self.size {
            return false;
        }
        let g = self.granule(addr);
        self.ever[(g / 64) as usize] & (1 << (g % 64)) != 0
    }

    /// The live allocation `b` (found with [`Blocks::live_block`]).
    pub(crate) fn live_record(&self, b: BlockId) -> Live {
        let n = self.node(b.0);
        Live { owner: n.stream, pos: n.pos }
    }

    /// Notes an access to the live allocation at `start`, keeping only the last access of
    /// each stream (with `races`: of each stream, range and kind).
    pub(crate) fn note_access(&mut self, start: u64, a: Access, races: bool) {
        if self.is_live_start(start) {
            let notes = self.accesses.entry(start).or_default();
            if races {
                notes.retain(|n| !a.covers(n));
                notes.push(a);
            } else if let Some(n) = notes.iter_mut().find(|n| n.stream == a.stream) {
                *n = a;
            } else {
                notes.push(a);
            }
        }
    }

    pub(super) fn is_live_start(&self, addr: u64) -> bool {
        self.starting_at(addr).is_some_and(|id| self.mark(id) != FREE && self.node(id).tag == Tag::Live)
    }

    /// The accesses noted on the live allocation starting at `addr`.
    pub(crate) fn accesses(&self, addr: u64) -> &[Access] {
        if self.accesses.is_empty() {
            return &[];
        }
        self.accesses.get(&addr).map_or(&[], Vec::as_slice)
    }

    /// Whether `[addr, addr + len)` lies inside one live allocation.
    pub(crate) fn within_live(&self, addr: u64, len: u64) -> bool {
        self.containing_live(addr).is_some_and(|(a, l, _)| addr.checked_add(len).is_some_and(|end| end <= a + l))
    }

    /// Whether `[addr, addr + len)` is reserved memory (live or cached), so committed.
    pub(crate) fn committed(&self, addr: u64, len: u64, base: u64, size: u64) -> bool {
        let Some(end) = addr.checked_add(len) else { return false };
        if addr < base || end > base + size {
            return false;
        }
        let Some(mut n) = self.containing(addr) else { return false };
        loop {
            if n.tag == Tag::Free {
                return false;
            }
            if n.addr + n.len >= end || n.next == NIL {
                return true;
            }
            n = self.node(n.next);
        }
    }
}

//! The same-stream cycle on a fast path (`lanes.rs`): the two steps of [`Blocks`] a
//! stream's lane runs without the pool's lock, each making exactly the change the slow
//! path's `take_cached` and `cache` make in that case, on what the stream owns only.

use super::{Blocks, Entry, SharedSlots, Tag, cached_mark, live_mark, owned_by};
use crate::clock::Clock;
use crate::pool::lanes::LaneGuard;
use crate::stream::StreamShared;
use std::sync::Arc;

/// A block a fast free may cache ([`Blocks::fast_free_target`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FreeTarget {
    id: u32,
    /// A neighbour is the freeing stream's: the block's mark must then say cached.
    settle: bool,
}

impl Blocks {
    /// Rule a for `len` bytes on `stream`, when its best fit is a whole block of exactly
    /// `len` bytes: makes it live at `pos` (after the stream's last position) and returns
    /// its address. `None` (nothing changed) when the best fit needs a split or the stream
    /// has none: the slow path then decides, by the same rules.
    pub(crate) fn fast_take(&self, len: u64, stream: u64, pos: u64, lane: &LaneGuard<'_>) -> Option<u64> {
        let bin = &self.bins[self.bin_index(stream)?];
        // SAFETY: the lane of `stream` is held (`lane`), so no other path writes its bin
        // now, and this is the only reference to it.
        let sizes = unsafe { &mut *bin.sizes.get() };
        let e = sizes.take_exact(&mut SharedSlots(&self.slots), len)?;
        debug_assert!(owned_by(self.mark(e.id), stream), "a block in a stream's bin is the stream's");
        if sizes.is_empty() {
            lane.add_nonempty(-1);
        }
        // SAFETY: the block was cached in the stream's bin, so the stream owns it: no
        // other path writes it while the lane is held.
        let n = unsafe { &mut *self.nodes[e.id as usize].get() };
        // Exact, so the marks invariant holds whatever the neighbours. Written only when it
        // changes: a block whose free left its mark as it was (no neighbour of the stream)
        // still says live, and the same-stream cycle writes nothing.
        let live = live_mark(stream);
        if self.mark(e.id) != live {
            self.set_own_mark(e.id, live);
        }
        n.tag = Tag::Live;
        n.stream = stream;
        n.pos = pos;
        lane.add_live(1);
        lane.add_used(len as i64);
        Some(n.addr)
    }

    /// The live block starting at `addr`, if `stream` allocated it and can cache it on a
    /// fast path: no neighbour freed on the same stream to merge with, no access noted
    /// for the checker, a bin for the stream. `None` otherwise (and for every pointer
    /// the slow path refuses): nothing changed.
    pub(crate) fn fast_free_target(&self, addr: u64, stream: u64) -> Option<FreeTarget> {
        let id = self.starting_at(addr)?;
        if !owned_by(self.mark(id), stream) || !self.accesses.is_empty() {
            return None;
        }
        // The stream owns it: its node is read by no one else's write.
        let n = self.node(id);
        if n.tag != Tag::Live {
            return None;
        }
        // A neighbour cached by this stream would merge: the slow path does that. A
        // neighbour's mark says so exactly when the neighbour is this stream's, as this
        // block is (the marks invariant); another stream may flip its own marks meanwhile,
        // never to one of this stream's.
        let (live, cached) = (live_mark(stream), cached_mark(stream));
        let (below, above) = (self.neighbour_mark(n.prev), self.neighbour_mark(n.next));
        if below == cached || above == cached {
            return None;
        }
        let settle = below == live || above == live;
        self.bin_index(stream).map(|_| FreeTarget { id, settle })
    }

    /// The address of the clock the block of `target` holds (null when none), which a
    /// lock-free marker compares with its stream's (`stream/published.rs`).
    pub(crate) fn clock_of(&self, target: FreeTarget) -> *const Clock {
        self.node(target.id).clock.as_ref().map_or(std::ptr::null(), Arc::as_ptr)
    }

    /// Caches the block of `target` (from [`Blocks::fast_free_target`], with the lane
    /// still held since) as freed on `stream` at `(pos, dep_real)` with the stream's
    /// `clock`; `None`: the block holds the stream's clock already (the marker was taken
    /// against it, [`Blocks::clock_of`]).
    pub(crate) fn fast_cache(
        &self,
        target: FreeTarget,
        stream: &StreamShared,
        (pos, dep_real): (u64, u64),
        clock: Option<&Arc<Clock>>,
        lane: &LaneGuard<'_>,
    ) {
        let FreeTarget { id, settle } = target;
        let bin = &self.bins[self.bin_index(stream.id).expect("fast_free_target found the stream's bin")];
        // SAFETY: the stream owns the block (`fast_free_target`) and its lane is held, so
        // no other path writes the node now.
        let n = unsafe { &mut *self.nodes[id as usize].get() };
        if let Some(clock) = clock
            && !n.clock.as_ref().is_some_and(|c| Arc::ptr_eq(c, clock))
        {
            n.clock = Some(Arc::clone(clock));
        }
        let cached = cached_mark(stream.id);
        if settle && self.mark(id) != cached {
            // A neighbour is the stream's too: the mark must say cached (the invariant).
            self.set_own_mark(id, cached);
        }
        n.tag = Tag::Cached;
        n.stream = stream.id;
        n.pos = pos;
        n.dep_real = dep_real;
        let e = Entry { len: n.len, addr: n.addr, id };
        lane.add_live(-1);
        lane.add_used(-(e.len as i64));
        // SAFETY: as in `fast_take`: the stream's own bin, under its lane.
        let sizes = unsafe { &mut *bin.sizes.get() };
        if sizes.is_empty() {
            lane.add_nonempty(1);
        }
        sizes.insert(&mut SharedSlots(&self.slots), e);
    }

    /// Folds the lanes' changes into the counters (a slow path, alone).
    pub(crate) fn fold(&mut self, used: i64, live: i64, nonempty: i64) {
        self.stats.used_current = self.stats.used_current.wrapping_add(used as u64);
        self.live = self.live.wrapping_add(live as usize);
        self.nonempty_bins = self.nonempty_bins.wrapping_add(nonempty as usize);
    }
}

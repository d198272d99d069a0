//! The marks: per node, one word in a dense array naming the stream that owns it and
//! whether it is live or cached, and the rule that keeps the live-or-cached part exact
//! where a free reads it (the *marks invariant*, [`live_mark`]).

use super::{Blocks, NIL};
use std::sync::atomic::Ordering;

/// [`Blocks::marks`] of a free range (or a recycled node); a live or cached block's mark
/// names the stream that owns it and says which of the two it is ([`live_mark`],
/// [`cached_mark`]).
pub(super) const FREE: u64 = 0;

/// The mark of a live block allocated on `stream`. A block is owned by the allocating
/// stream while it is live and by the freeing stream while it is cached, so the
/// same-stream cycle (allocate what the stream freed, free what it allocated) never
/// changes a mark's owner: a stream's fast path reads others' marks to tell its own blocks
/// from theirs (`lanes.rs`).
///
/// Which of the two a mark says is exact whenever it matters (the *marks invariant*): for
/// every block with a neighbour owned by the same stream. A free then decides its merges
/// from its neighbours' marks alone, without reading their nodes. A block with no such
/// neighbour is one whose live-or-cached state no free reads from its mark, and its
/// stream's fast path leaves the mark as it is: the same-stream cycle of a stream whose
/// blocks sit between other streams' writes no mark, so the dense marks stay lines that
/// the cores share for reading.
pub(super) fn live_mark(stream: u64) -> u64 {
    (stream << 2) | 1
}

/// The mark of a block cached by a free on `stream` (see [`live_mark`]).
pub(super) fn cached_mark(stream: u64) -> u64 {
    (stream << 2) | 3
}

/// Whether mark `m` names `stream` as the owner (live or cached).
pub(super) fn owned_by(m: u64, stream: u64) -> bool {
    m != FREE && m >> 2 == stream
}

/// Whether marks `a` and `b` name the same owner (neither free).
fn same_owner(a: u64, b: u64) -> bool {
    a != FREE && b != FREE && a >> 2 == b >> 2
}

impl Blocks {
    /// Who owns node `id`, live or cached ([`live_mark`], [`cached_mark`]), or [`FREE`].
    pub(super) fn mark(&self, id: u32) -> u64 {
        self.marks[id as usize].load(Ordering::Relaxed)
    }

    pub(super) fn set_mark(&mut self, id: u32, m: u64) {
        *self.marks[id as usize].get_mut() = m;
    }

    /// A fast path's write of a mark of its stream's own block: from one of the stream's
    /// two marks to the other (the ownership rule of the type docs).
    pub(super) fn set_own_mark(&self, id: u32, m: u64) {
        debug_assert!(same_owner(self.mark(id), m), "a fast path keeps the owner");
        self.marks[id as usize].store(m, Ordering::Relaxed);
    }

    /// Writes node `id`'s exact mark `m` (a slow path, alone) and keeps the marks
    /// invariant of [`live_mark`]: when the owner changed (`moved`: it was free or another
    /// stream's), a neighbour of the new owner may have a stale mark (it had no neighbour
    /// of its owner before), so its exact mark is written too. With the owner unchanged,
    /// each neighbour of that owner already had this block beside it, so its mark is exact.
    #[inline]
    pub(super) fn set_exact_mark(&mut self, id: u32, m: u64, moved: bool) {
        self.set_mark(id, m);
        if moved {
            self.settle_neighbours(id, m);
        }
    }

    /// The mark of neighbour `id`, [`FREE`] at the pool's ends ([`NIL`]).
    pub(super) fn neighbour_mark(&self, id: u32) -> u64 {
        if id == NIL { FREE } else { self.mark(id) }
    }

    /// The exact marks of node `id`'s neighbours owned by the owner of `m` (its new mark).
    #[cold]
    fn settle_neighbours(&mut self, id: u32, m: u64) {
        debug_assert_ne!(m, FREE, "a block's mark names its owner");
        let n = self.node(id);
        for x in [n.prev, n.next] {
            let xm = self.neighbour_mark(x);
            if same_owner(xm, m) {
                let exact = self.node(x).mark();
                if xm != exact {
                    self.set_mark(x, exact);
                }
            }
        }
    }
}

//! The layer's bookkeeping, under its lock: one arena per stream (its free ranges, spare,
//! hot and parked blocks), the blocks taken from the pool and the ranges (nodes) that tile
//! them, carving a range and merging it back.

use crate::live::LiveRanges;
use crate::stats::SmallStats;
use crate::{ALIGN, HOT, SMALL_LIMIT};
use mempool_bins::{Entry, SizeBins, Slots};
use mempool_hal::{Device, DevicePtr};
use rustc_hash::FxHashMap;
use std::hash::Hash;

pub(crate) const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) prev: u32,
    pub(crate) next: u32,
    pub(crate) block: u32,
    pub(crate) free: bool,
    /// The requested bytes while live.
    pub(crate) requested: u64,
    /// Its heap slot in its arena's free set while it is listed there ([`Slots`]).
    pub(crate) slot: u32,
}

/// The nodes as the free sets see them: each node's heap slot.
struct NodeSlots<'a>(&'a mut [Node]);

impl Slots for NodeSlots<'_> {
    #[inline]
    fn slot(&self, id: u32) -> u32 {
        self.0[id as usize].slot
    }
    #[inline]
    fn set_slot(&mut self, id: u32, slot: u32) {
        self.0[id as usize].slot = slot;
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) arena: u32,
    /// Ranges live or pending.
    pub(crate) used: u32,
    pub(crate) small: bool,
    /// The node at the block's start. It stays the same while the block is held: carving
    /// keeps the front of a range in its node, and a merge keeps the lower node. So an
    /// empty block's one free node is this one.
    pub(crate) first: u32,
}

#[derive(Debug)]
pub(crate) struct Arena<S> {
    pub(crate) stream: S,
    /// Free ranges, small blocks then large blocks, for the exact best fit: the smallest
    /// that fits, then the lowest address.
    pub(crate) free: [SizeBins; 2],
    /// An empty small block kept for the next request (its range is in the free set).
    pub(crate) spare: Option<u32>,
    /// Small ranges freed on this stream lately, oldest first, not merged yet: a request of
    /// the same rounded size takes one back at once. Each with its size, so that finding
    /// one reads no node.
    pub(crate) hot: Vec<(u32, u64)>,
    /// Empty blocks of at least [`PARK_MIN`] kept whole for a request of the same block
    /// size (out of the free set; its range is its first node): (block, the stream's
    /// block-request count when parked).
    pub(crate) parked: Vec<(u32, u64)>,
    /// Block requests of this stream so far (the clock of `parked`).
    pub(crate) ticks: u64,
}

/// How many block sizes [`State::block_sizes`] remembers.
pub(crate) const BLOCK_SIZES: usize = 8;

pub(crate) struct State<D: Device> {
    pub(crate) arenas: Vec<Arena<D::Stream>>,
    pub(crate) arena_of: FxHashMap<D::Stream, u32>,
    pub(crate) last: usize,
    pub(crate) nodes: Vec<Node>,
    pub(crate) spare_nodes: Vec<u32>,
    pub(crate) blocks: Vec<Block>,
    pub(crate) spare_blocks: Vec<u32>,
    /// Carved live ranges by address.
    pub(crate) live: LiveRanges,
    /// Passed-through live allocations by address: (requested, rounded).
    pub(crate) direct: FxHashMap<u64, (u64, u64)>,
    pub(crate) pending: Vec<(u32, D::Event)>,
    /// The last block sizes computed: (rounded request, block size), replaced in turn. A
    /// training loop asks for the same few sizes over and over.
    pub(crate) block_sizes: [(u64, u64); BLOCK_SIZES],
    /// The entry of `block_sizes` to replace next.
    pub(crate) next_block_size: usize,
    pub(crate) events: Vec<D::Event>,
    pub(crate) stats: SmallStats,
}

/// The free set of a rounded size: 0 for small blocks, 1 for large ones.
pub(crate) fn class(rounded: u64) -> usize {
    usize::from(rounded > SMALL_LIMIT)
}

impl<D: Device> State<D>
where
    D::Stream: Eq + Hash,
{
    pub(crate) fn arena(&mut self, stream: &D::Stream) -> u32 {
        if let Some(a) = self.arenas.get(self.last)
            && a.stream == *stream
        {
            return self.last as u32;
        }
        let i = match self.arena_of.get(stream) {
            Some(&i) => i,
            None => {
                let i = self.arenas.len() as u32;
                self.arenas.push(Arena {
                    stream: stream.clone(),
                    free: [SizeBins::new(ALIGN), SizeBins::new(ALIGN)],
                    spare: None,
                    hot: Vec::with_capacity(HOT + 1),
                    parked: Vec::new(),
                    ticks: 0,
                });
                self.arena_of.insert(stream.clone(), i);
                i
            }
        };
        self.last = i as usize;
        i
    }

    pub(crate) fn new_node(&mut self, node: Node) -> u32 {
        match self.spare_nodes.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Takes the best-fitting free range of arena `a`, class `c`, out of its set.
    pub(crate) fn take(&mut self, a: u32, c: usize, rounded: u64) -> Option<u32> {
        let set = &mut self.arenas[a as usize].free[c];
        let e = set.best(rounded)?;
        set.remove(&mut NodeSlots(&mut self.nodes), e.id, e.len);
        Some(e.id)
    }

    pub(crate) fn add_block(&mut self, a: u32, addr: u64, size: u64, small: bool) -> u32 {
        let blk = Block { addr, size, arena: a, used: 0, small, first: NIL };
        let b = match self.spare_blocks.pop() {
            Some(b) => {
                self.blocks[b as usize] = blk;
                b
            }
            None => {
                self.blocks.push(blk);
                (self.blocks.len() - 1) as u32
            }
        };
        let s = &mut self.stats;
        s.blocks += 1;
        s.block_bytes += size;
        s.held_current += size;
        s.held_high = s.held_high.max(s.held_current);
        let n = self.new_node(Node { addr, size, prev: NIL, next: NIL, block: b, free: true, requested: 0, slot: 0 });
        self.blocks[b as usize].first = n;
        n
    }

    /// Makes free node `n` (out of its set) live with `rounded` bytes, splitting off the
    /// rest as a free range, except a rest no request can use: at the end of a large
    /// block and at most [`SMALL_LIMIT`] bytes, it could only ever merge back into this
    /// range (its one neighbour), and no request of the large set fits it, so the range
    /// keeps it (the same free ranges, as each set sees them, at every step).
    pub(crate) fn carve(&mut self, n: u32, rounded: u64, requested: u64) -> DevicePtr {
        let node = self.nodes[n as usize];
        let blk = self.blocks[node.block as usize];
        let useless_rest = !blk.small && node.next == NIL && node.size - rounded <= SMALL_LIMIT;
        if node.size > rounded && !useless_rest {
            let rest = Node {
                addr: node.addr + rounded,
                size: node.size - rounded,
                prev: n,
                next: node.next,
                block: node.block,
                free: true,
                requested: 0,
                slot: 0,
            };
            let r = self.new_node(rest);
            if rest.next != NIL {
                self.nodes[rest.next as usize].prev = r;
            }
            self.list(r);
            let node = &mut self.nodes[n as usize];
            node.next = r;
            node.size = rounded;
        }
        let node = &mut self.nodes[n as usize];
        node.free = false;
        node.requested = requested;
        if blk.used == 0 {
            let arena = &mut self.arenas[blk.arena as usize];
            if arena.spare == Some(node.block) {
                arena.spare = None;
            }
        }
        self.blocks[node.block as usize].used += 1;
        self.live.insert_new(node.addr, n);
        let s = &mut self.stats;
        s.requested_current += requested;
        s.requested_high = s.requested_high.max(s.requested_current);
        s.live_ranges += 1;
        DevicePtr::from_addr(node.addr)
    }

    /// Makes node `n`, taken from a stream's unmerged ranges, live again.
    pub(crate) fn revive(&mut self, n: u32, requested: u64) -> DevicePtr {
        let node = &mut self.nodes[n as usize];
        node.requested = requested;
        let addr = node.addr;
        self.live.insert_new(addr, n);
        let s = &mut self.stats;
        s.requested_current += requested;
        s.requested_high = s.requested_high.max(s.requested_current);
        s.live_ranges += 1;
        DevicePtr::from_addr(addr)
    }

    /// Frees node `n` (no longer in `live`), merging it with free neighbours; returns its
    /// block when that became empty. The free range goes into its arena's set, except an
    /// empty block's: the caller decides where that goes (`SmallBlocks::emptied`).
    pub(crate) fn free_node(&mut self, n: u32) -> Option<u32> {
        let node = self.nodes[n as usize];
        let mut n = n;
        if node.next != NIL && self.nodes[node.next as usize].free {
            self.unlist(node.next);
            self.absorb_next(n);
        }
        if node.prev != NIL && self.nodes[node.prev as usize].free {
            self.unlist(node.prev);
            self.absorb_next(node.prev);
            n = node.prev;
        }
        let cur = &mut self.nodes[n as usize];
        cur.free = true;
        cur.requested = 0;
        let b = &mut self.blocks[node.block as usize];
        b.used -= 1;
        if b.used == 0 {
            return Some(node.block);
        }
        self.list(n);
        None
    }

    /// Free node `n`, the set it is listed in (its block's arena and kind), and the nodes'
    /// slots as that set sees them.
    fn set_of(&mut self, n: u32) -> (Node, &mut SizeBins, NodeSlots<'_>) {
        let node = self.nodes[n as usize];
        let blk = self.blocks[node.block as usize];
        let set = &mut self.arenas[blk.arena as usize].free[usize::from(!blk.small)];
        (node, set, NodeSlots(&mut self.nodes))
    }

    /// Puts free node `n` into its arena's set.
    pub(crate) fn list(&mut self, n: u32) {
        let (node, set, mut slots) = self.set_of(n);
        set.insert(&mut slots, Entry { len: node.size, addr: node.addr, id: n });
    }

    /// Takes free node `n` out of its arena's set.
    pub(crate) fn unlist(&mut self, n: u32) {
        let (node, set, mut slots) = self.set_of(n);
        set.remove(&mut slots, n, node.size);
    }

    /// Merges the node after `a` into `a` (neither in a set) and recycles it.
    pub(crate) fn absorb_next(&mut self, a: u32) {
        let b = self.nodes[a as usize].next;
        let nb = self.nodes[b as usize];
        let na = &mut self.nodes[a as usize];
        na.size += nb.size;
        na.next = nb.next;
        if nb.next != NIL {
            self.nodes[nb.next as usize].prev = a;
        }
        self.spare_nodes.push(b);
    }
}

#[cfg(test)]
impl<D: Device> State<D>
where
    D::Stream: Eq + Hash,
{
    /// Checks the bookkeeping (tests): each held block is tiled by its nodes from its first
    /// one, `used` counts its ranges that are not free, and exactly the free ranges of
    /// blocks that are not empty, plus each stream's spare, are in the free sets, each at
    /// its recorded slot; a parked block is empty and listed nowhere.
    pub(crate) fn check(&self) {
        use std::collections::BTreeSet;
        let mut listed = BTreeSet::new();
        let mut in_use = 0usize;
        for (b, blk) in self.blocks.iter().enumerate() {
            if blk.size == 0 {
                continue;
            }
            let arena = &self.arenas[blk.arena as usize];
            let b = b as u32;
            let (mut at, mut n, mut prev, mut used, mut free) = (blk.addr, blk.first, NIL, 0, Vec::new());
            while n != NIL {
                let node = &self.nodes[n as usize];
                assert_eq!((node.addr, node.block, node.prev), (at, b, prev), "node {n} of block {b}");
                if node.free {
                    free.push(n);
                } else {
                    used += 1;
                }
                at += node.size;
                (prev, n) = (n, node.next);
            }
            assert_eq!(at, blk.addr + blk.size, "block {b}'s nodes tile it");
            assert_eq!(used, blk.used, "block {b}'s ranges in use");
            in_use += used as usize;
            let parked = arena.parked.iter().any(|&(pb, _)| pb == b);
            if blk.used == 0 {
                assert_eq!(free, [blk.first], "an empty block is one free range");
                assert!(parked || arena.spare == Some(b), "empty block {b} is parked or its stream's spare");
                assert!(!(parked && arena.spare == Some(b)));
                if parked {
                    continue;
                }
            } else {
                assert!(!parked && arena.spare != Some(b), "block {b} in use is neither parked nor spare");
            }
            listed.extend(free);
        }
        let mut sets = BTreeSet::new();
        for arena in &self.arenas {
            for &(n, size) in &arena.hot {
                let node = &self.nodes[n as usize];
                assert!(!node.free && size == node.size, "hot range {n} is held at its size");
            }
            for set in &arena.free {
                // The check only reads the slots (through a copy of the nodes).
                let mut nodes = self.nodes.clone();
                set.check(&NodeSlots(&mut nodes));
                for e in set.iter() {
                    let node = &self.nodes[e.id as usize];
                    assert_eq!((e.len, e.addr), (node.size, node.addr), "the set's key of node {}", e.id);
                    assert!(sets.insert(e.id), "node {} listed twice", e.id);
                }
            }
        }
        assert_eq!(sets, listed, "the free sets hold exactly the free ranges to carve");
        let hot: usize = self.arenas.iter().map(|a| a.hot.len()).sum();
        assert_eq!(self.live.len() + self.pending.len() + hot, in_use, "a range in use is live, pending or hot");
    }
}

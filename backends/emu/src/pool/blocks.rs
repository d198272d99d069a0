//! The pool's bookkeeping: live allocations, cached blocks with their free tags, and the
//! unreserved address space. Pure data; the caller holds the pool lock and does the
//! syscalls (commit, decommit) this module asks for.
//!
//! Every range of the pool is a node of one slab, linked to its neighbours in address
//! order (the nodes tile the pool), so merging with a neighbour never searches. Cached
//! blocks sit in per-stream [`SizeBins`], free ranges in one more, for the exact best fit
//! of [contract §4](mempool_hal::contract::allocation). Node starts are indexed twice, in an array by granule (a free
//! finds its allocation with one load) and in a bitset of granules ([`Starts`]: "which
//! node contains this address", for copies and error messages); both change only when a
//! node is split or merged, so the same-stream cycle of allocate and free updates no
//! index and allocates nothing. A dense array of one word per node says what each node
//! is, so a free decides its merges without touching its neighbours' nodes.
//!
//! | file | what |
//! |---|---|
//! | `blocks.rs` | the slab of nodes, the bins, allocation (split, take) and the free (cache, merge) |
//! | `blocks/marks.rs` | the dense owner marks and the rule that keeps them exact where a free reads them |
//! | `blocks/fast.rs` | the same-stream cycle on a stream's lane, without the pool's lock |
//! | `blocks/addresses.rs` | what lies at an address: the live block a free names, the containing node, noted accesses |
//! | `blocks/release.rs` | planning and applying a release of cached blocks |
//! | `blocks/check.rs` | the structure's invariants, checked by the tests |

mod addresses;
#[cfg(test)]
mod check;
mod fast;
mod marks;
mod release;

use marks::{FREE, cached_mark, live_mark, owned_by};

use super::mapping::advise_huge;
use super::records::{Access, Cached};
use super::starts::{Starts, zeroed};
use crate::clock::Clock;
use crate::stream::StreamShared;
use mempool_bins::{Entry, SizeBins, Slots};
use mempool_hal::PoolStats;
use rustc_hash::FxHashMap;
use std::cell::UnsafeCell;
use std::mem;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A block chosen for an allocation (a node of the slab).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockId(u32);

/// A cached block chosen for an allocation: the node, the bin holding it and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pick {
    id: u32,
    bin: u32,
    len: u64,
}

const NIL: u32 = u32::MAX;

/// Up to this many bins, a pool finds a stream's bin by a linear search.
const LINEAR_BINS: usize = 8;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Free,
    Live,
    Cached,
}

/// One range of the pool. Flat rather than an enum of payloads: the hot transitions
/// (cached to live and back) then write a few fields in place instead of moving a whole
/// value through the stack. One cache line, aligned to it, so that reading a node never
/// touches two lines and nodes of different streams written by different threads never
/// share one.
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct Node {
    addr: u64,
    len: u64,
    /// The nodes just below and above in address order (`NIL` at the pool's ends).
    prev: u32,
    next: u32,
    tag: Tag,
    /// Live: the allocating stream. Cached: the freeing stream.
    stream: u64,
    /// Live: see [`Live::pos`]. Cached: see [`Cached::pos`].
    pos: u64,
    /// Cached: see [`Cached::dep_real`].
    dep_real: u64,
    /// Cached: the free's clock ([`Cached::clock`]). Live: the clock of the free it was
    /// last cached with, kept so that freeing it again on a stream whose clock has not
    /// changed shares it instead of taking a new reference (the same-stream cycle then
    /// touches no reference count).
    clock: Option<Arc<Clock>>,
}

impl Node {
    /// A range of unreserved address space.
    fn unreserved(addr: u64, len: u64, prev: u32, next: u32) -> Node {
        Node { addr, len, prev, next, tag: Tag::Free, stream: 0, pos: 0, dep_real: 0, clock: None }
    }

    /// What [`Blocks::marks`] holds for it.
    fn mark(&self) -> u64 {
        match self.tag {
            Tag::Free => FREE,
            Tag::Live => live_mark(self.stream),
            Tag::Cached => cached_mark(self.stream),
        }
    }

    /// A cached block's free has executed on its stream `s`.
    pub(crate) fn executed(&self, s: &StreamShared) -> bool {
        s.completed() >= self.dep_real
    }

    /// A cached block's free position on its stream ([`Cached::pos`]).
    pub(crate) fn free_pos(&self) -> u64 {
        self.pos
    }

    fn cached(&self) -> Cached {
        debug_assert_eq!(self.tag, Tag::Cached);
        Cached {
            stream: self.stream,
            pos: self.pos,
            dep_real: self.dep_real,
            clock: Arc::clone(self.clock.as_ref().expect("a cached block has its free's clock")),
        }
    }
}

/// The nodes' heap slots, as the bins see them. A node's slot is written only by the
/// owner of its bin (`lanes.rs`): relaxed atomics, so that two streams' fast paths may
/// write slots of their own blocks at once.
struct SharedSlots<'a>(&'a [AtomicU32]);

impl Slots for SharedSlots<'_> {
    fn slot(&self, id: u32) -> u32 {
        self.0[id as usize].load(Ordering::Relaxed)
    }
    fn set_slot(&mut self, id: u32, slot: u32) {
        self.0[id as usize].store(slot, Ordering::Relaxed);
    }
}

/// The cached blocks of one freeing stream, by size. Two cache-line pairs of its own:
/// each stream's fast path writes its bin (`lanes.rs`).
#[derive(Debug)]
#[repr(align(128))]
struct Bin {
    stream: Arc<StreamShared>,
    /// Written by the stream's fast path or by a slow path (alone): see
    /// [`Blocks`]'s ownership rule.
    sizes: UnsafeCell<SizeBins>,
}

impl Bin {
    fn sizes(&self) -> &SizeBins {
        // SAFETY: `Blocks`'s ownership rule: a shared `Blocks` is either a slow path's
        // (alone) or a fast path's, which reads only its own stream's bin, which no
        // other path writes meanwhile.
        unsafe { &*self.sizes.get() }
    }

    fn sizes_mut(&mut self) -> &mut SizeBins {
        self.sizes.get_mut()
    }
}

/// Everything behind the pool lock.
///
/// Ownership rule (`lanes.rs`): a `&mut Blocks` or a `&Blocks` outside the fast-path
/// methods (`blocks/fast.rs`) belongs to a slow path, alone with the pool's state. A fast
/// path of stream S holds S's lane and a `&Blocks` shared with other streams' fast paths;
/// it reads the structure's shared parts (granule index, bins' streams, marks) and writes
/// only what S owns: S's bin, the nodes whose mark names S, their slots and marks (a mark
/// only between S's own two values). Those sit in
/// cells (`UnsafeCell`, relaxed atomics) for that reason.
#[derive(Debug)]
pub(crate) struct Blocks {
    pub(crate) stats: PoolStats,
    gran: u64,
    base: u64,
    size: u64,
    nodes: Vec<UnsafeCell<Node>>,
    /// Per node, who owns it and whether it is live or cached ([`Node::mark`], exact where
    /// the marks invariant of [`live_mark`] asks): dense, so neighbours are checked
    /// cheaply. Written by slow paths, and by a stream's fast path for a block it owns
    /// that has a neighbour it owns, between the stream's two marks only.
    marks: Vec<AtomicU64>,
    /// Per node, its slot in the size bins that hold it (free and cached nodes); apart
    /// from the nodes so that reordering a heap touches little memory.
    slots: Vec<AtomicU32>,
    /// Recycled node ids.
    spare: Vec<u32>,
    /// The granule where each node starts.
    starts: Starts,
    /// Per granule: 1 + the id of the node starting there (0: none).
    at: Vec<u32>,
    /// Number of live allocations.
    live: usize,
    /// Per live allocation that has had accesses enqueued: the last one of each stream
    /// (with races checked: the last of each stream, range and kind).
    accesses: FxHashMap<u64, Vec<Access>>,
    /// Per granule, one bit: whether it was ever allocated (so an access to released
    /// memory is still known as a use after free).
    ever: Vec<u64>,
    /// Per freeing stream: its cached blocks. Emptied bins stay (so the same-stream
    /// cycle neither searches nor allocates) until they outnumber the others.
    bins: Vec<Bin>,
    /// Each bin's index by stream id, once there are more than [`LINEAR_BINS`] (fewer
    /// are searched linearly).
    bin_of: FxHashMap<u64, u32>,
    /// Each bin's stream id, in bin order: what the linear search reads, apart from the
    /// bins themselves (which their streams' fast paths write).
    bin_ids: Vec<u64>,
    /// How many bins hold blocks.
    nonempty_bins: usize,
    /// The unreserved address space, by size.
    free: SizeBins,
}

impl Blocks {
    /// A pool whose whole range `[base, base + size)` is unreserved, carved in multiples
    /// of `gran` (a power of two; `size` is a multiple). `None` when the host cannot
    /// allocate the indexes (one bit and one word per granule, touched lazily).
    pub(crate) fn new(base: u64, size: u64, gran: u64) -> Option<Blocks> {
        let granules = usize::try_from(size / gran).ok()?;
        let mut b = Blocks {
            stats: PoolStats::default(),
            gran,
            base,
            size,
            nodes: Vec::new(),
            marks: Vec::new(),
            slots: Vec::new(),
            spare: Vec::new(),
            starts: Starts::new(granules)?,
            at: zeroed(granules)?,
            live: 0,
            accesses: FxHashMap::default(),
            ever: zeroed(granules.div_ceil(64))?,
            bins: Vec::new(),
            bin_of: FxHashMap::default(),
            bin_ids: Vec::new(),
            nonempty_bins: 0,
            free: SizeBins::new(gran),
        };
        let id = b.new_node(Node::unreserved(base, size, NIL, NIL));
        b.index_start(base, id);
        b.free.insert(&mut SharedSlots(&b.slots), Entry { len: size, addr: base, id });
        Some(b)
    }

    /// Records that node `id` starts at `addr`.
    fn index_start(&mut self, addr: u64, id: u32) {
        let g = self.granule(addr);
        self.starts.insert(g);
        self.at[g as usize] = id + 1;
    }

    /// Records that no node starts at `addr` any more.
    fn unindex_start(&mut self, addr: u64) {
        let g = self.granule(addr);
        self.starts.remove(g);
        self.at[g as usize] = 0;
    }

    /// The node starting exactly at `addr`, if any.
    fn starting_at(&self, addr: u64) -> Option<u32> {
        if addr < self.base || addr - self.base >= self.size || (addr - self.base) & (self.gran - 1) != 0 {
            return None;
        }
        self.at[self.granule(addr) as usize].checked_sub(1)
    }

    /// Makes node `id` a free range (dropping any clock).
    fn set_free(&mut self, id: u32) {
        self.set_mark(id, FREE);
        let n = self.nodes[id as usize].get_mut();
        n.tag = Tag::Free;
        n.clock = None;
    }

    /// The granule index of `addr` (inside the pool).
    fn granule(&self, addr: u64) -> u64 {
        (addr - self.base) >> self.gran.trailing_zeros()
    }

    fn new_node(&mut self, node: Node) -> u32 {
        let m = node.mark();
        match self.spare.pop() {
            Some(id) => {
                *self.nodes[id as usize].get_mut() = node;
                self.set_mark(id, m);
                id
            }
            None => {
                let cap = self.nodes.capacity();
                self.nodes.push(UnsafeCell::new(node));
                if self.nodes.capacity() != cap {
                    advise_huge(self.nodes.as_ptr().cast(), self.nodes.capacity() * mem::size_of::<Node>());
                }
                self.marks.push(AtomicU64::new(m));
                self.slots.push(AtomicU32::new(0));
                u32::try_from(self.nodes.len() - 1).expect("fewer than 2^32 blocks")
            }
        }
    }

    fn drop_node(&mut self, id: u32) {
        self.set_free(id);
        self.spare.push(id);
    }

    fn node(&self, id: u32) -> &Node {
        // SAFETY: the ownership rule (type docs): a slow path is alone; a fast path only
        // reads nodes its stream owns, which no other path writes meanwhile.
        unsafe { &*self.nodes[id as usize].get() }
    }

    fn node_mut(&mut self, id: u32) -> &mut Node {
        self.nodes[id as usize].get_mut()
    }

    /// The address of a chosen block.
    pub(crate) fn addr(&self, b: BlockId) -> u64 {
        self.node(b.0).addr
    }

    /// The tags of a chosen cached block, with its freeing stream.
    pub(crate) fn cached_tags(&self, p: Pick) -> (Arc<StreamShared>, Cached) {
        (Arc::clone(&self.bins[p.bin as usize].stream), self.node(p.id).cached())
    }

    /// Rule a: the best cached block freed on `stream`.
    pub(crate) fn same_stream(&self, len: u64, stream: u64) -> Option<Pick> {
        let bin = self.bin_index(stream)?;
        let e = self.bins[bin].sizes().best(len)?;
        Some(Pick { id: e.id, bin: bin as u32, len: e.len })
    }

    /// The best cached block of another stream than `skip` that satisfies `pred`
    /// (given the freeing stream and the block): rules b-e (see `reuse.rs`).
    pub(crate) fn best_other(&self, len: u64, skip: u64, pred: impl Fn(&StreamShared, &Node) -> bool) -> Option<Pick> {
        let mut best: Option<(Entry, usize)> = None;
        for (i, bin) in self.bins.iter().enumerate() {
            if bin.stream.id == skip || bin.sizes().is_empty() {
                continue;
            }
            let found = bin.sizes().best_where(len, |e| {
                best.is_none_or(|(b, _)| (e.len, e.addr) < (b.len, b.addr)) && pred(&bin.stream, self.node(e.id))
            });
            if let Some(e) = found {
                best = Some((e, i));
            }
        }
        best.map(|(e, bin)| Pick { id: e.id, bin: bin as u32, len: e.len })
    }

    /// Whether any stream other than `skip` has cached blocks.
    pub(crate) fn has_other_bins(&self, skip: u64) -> bool {
        self.nonempty_bins > usize::from(self.bin(skip).is_some_and(|b| !b.sizes().is_empty()))
    }

    /// Rule f: the best free range of address space.
    pub(crate) fn fresh(&self, len: u64) -> Option<BlockId> {
        self.free.best(len).map(|e| BlockId(e.id))
    }

    /// Splits node `id` after its first `len` bytes; the upper part becomes a new node
    /// with the same tag and tags (the clock moves to it), indexed in `starts` but not in
    /// any bins. Returns the new node's id.
    fn split(&mut self, id: u32, len: u64) -> u32 {
        let n = self.nodes[id as usize].get_mut();
        let (addr, rest_len, next) = (n.addr + len, n.len - len, n.next);
        let rest = Node {
            addr,
            len: rest_len,
            prev: id,
            next,
            tag: n.tag,
            stream: n.stream,
            pos: n.pos,
            dep_real: n.dep_real,
            clock: n.clock.take(),
        };
        let m = self.new_node(rest);
        self.node_mut(id).len = len;
        self.node_mut(id).next = m;
        if next != NIL {
            self.node_mut(next).prev = m;
        }
        self.index_start(addr, m);
        m
    }

    /// Merges node `other` (just below or above `id`) into `id`, dropping it.
    fn absorb(&mut self, id: u32, other: u32) {
        let o = self.node(other);
        let (oaddr, olen, oprev, onext) = (o.addr, o.len, o.prev, o.next);
        let n = self.nodes[id as usize].get_mut();
        if oaddr < n.addr {
            let old = mem::replace(&mut n.addr, oaddr);
            n.len += olen;
            n.prev = oprev;
            if oprev != NIL {
                self.node_mut(oprev).next = id;
            }
            self.unindex_start(old);
            self.index_start(oaddr, id);
        } else {
            n.len += olen;
            n.next = onext;
            if onext != NIL {
                self.node_mut(onext).prev = id;
            }
            self.unindex_start(oaddr);
        }
        self.drop_node(other);
    }

    /// Turns the low `len` bytes of a cached block into a live allocation; the rest stays
    /// cached with the same tags. Returns its address.
    #[inline]
    pub(crate) fn take_cached(&mut self, p: Pick, len: u64, owner: (u64, u64)) -> u64 {
        self.carve_cached(p.bin as usize, p.id, p.len, len);
        // A whole block keeps its clock as the spare.
        self.make_live(p.id, owner)
    }

    /// Takes cached block `id` (of `blen` bytes, in bin `bin`) out of its bin, leaving
    /// only its low `len` bytes in node `id`; the rest stays cached, with the same tags
    /// and the clock.
    fn carve_cached(&mut self, bin: usize, id: u32, blen: u64, len: u64) {
        self.bins[bin].sizes_mut().remove(&mut SharedSlots(&self.slots), id, blen);
        if blen > len {
            // The rest keeps the tags and the clock.
            let m = self.split(id, len);
            let addr = self.node(m).addr;
            self.bins[bin].sizes_mut().insert(&mut SharedSlots(&self.slots), Entry { len: blen - len, addr, id: m });
        } else if self.bins[bin].sizes().is_empty() {
            self.nonempty_bins -= 1;
        }
    }

    /// Turns the low `len` bytes of a free range into a live allocation. The caller has
    /// committed the memory. Returns its address.
    pub(crate) fn take_fresh(&mut self, b: BlockId, len: u64, owner: (u64, u64)) -> u64 {
        let id = b.0;
        let flen = self.node(id).len;
        self.free.remove(&mut SharedSlots(&self.slots), id, flen);
        if flen > len {
            let m = self.split(id, len);
            let addr = self.node(m).addr;
            self.free.insert(&mut SharedSlots(&self.slots), Entry { len: flen - len, addr, id: m });
        }
        self.stats.reserved_current += len;
        self.stats.reserved_high = self.stats.reserved_high.max(self.stats.reserved_current);
        let first = self.granule(self.node(id).addr);
        let (mut g, end) = (first, first + (len >> self.gran.trailing_zeros()));
        while g < end {
            let bits = (end - g).min(64 - g % 64);
            let mask = if bits == 64 { u64::MAX } else { ((1u64 << bits) - 1) << (g % 64) };
            self.ever[(g / 64) as usize] |= mask;
            g += bits;
        }
        self.make_live(id, owner)
    }

    #[inline]
    fn make_live(&mut self, id: u32, (owner, pos): (u64, u64)) -> u64 {
        let n = self.nodes[id as usize].get_mut();
        let moved = n.tag == Tag::Free || n.stream != owner;
        n.tag = Tag::Live;
        n.stream = owner;
        n.pos = pos;
        let (addr, len) = (n.addr, n.len);
        self.set_exact_mark(id, live_mark(owner), moved);
        self.live += 1;
        self.stats.used_current += len;
        self.stats.used_high = self.stats.used_high.max(self.stats.used_current);
        addr
    }

    /// The free of the live allocation `b` (found with [`Blocks::live_block`]): caches it
    /// with the free's tags, merging with neighbours freed on the same stream. `clock` is
    /// the freeing stream's clock at the free.
    pub(crate) fn cache(
        &mut self,
        b: BlockId,
        stream: &Arc<StreamShared>,
        (pos, dep_real): (u64, u64),
        clock: &Arc<Clock>,
    ) {
        let id = b.0;
        let n = self.nodes[id as usize].get_mut();
        debug_assert_eq!(n.tag, Tag::Live);
        if !n.clock.as_ref().is_some_and(|c| Arc::ptr_eq(c, clock)) {
            n.clock = Some(Arc::clone(clock));
        }
        let (addr, len) = (self.node(id).addr, self.node(id).len);
        self.live -= 1;
        if !self.accesses.is_empty() {
            self.accesses.remove(&addr);
        }
        self.stats.used_current -= len;
        // A mark is the maximum since the last reset, so a decrease after a reset raises it.
        self.stats.used_high = self.stats.used_high.max(self.stats.used_current);
        let sid = stream.id;
        // Merged neighbours were freed earlier on the same stream, so this free's clock
        // (the latest) covers theirs.
        let (mut pos, mut dep_real) = (pos, dep_real);
        let bin = match self.bin_index(sid) {
            Some(i) => i,
            None => self.new_bin(stream),
        };
        let was_empty = self.bins[bin].sizes().is_empty();
        // A free on the allocating stream (the common case) reads its neighbours' marks
        // alone: a neighbour of that stream is exact beside this block (the marks
        // invariant). On another stream, a neighbour of the freeing stream may have a
        // stale mark, so its node says.
        let same_stream = self.node(id).stream == sid;
        for other in [self.node(id).prev, self.node(id).next] {
            let merges = other != NIL
                && if same_stream {
                    self.mark(other) == cached_mark(sid)
                } else {
                    owned_by(self.mark(other), sid) && self.node(other).tag == Tag::Cached
                };
            if !merges {
                continue;
            }
            let o = self.node(other);
            let olen = o.len;
            pos = pos.max(o.pos);
            dep_real = dep_real.max(o.dep_real);
            self.bins[bin].sizes_mut().remove(&mut SharedSlots(&self.slots), other, olen);
            self.absorb(id, other);
        }
        let n = self.nodes[id as usize].get_mut();
        n.tag = Tag::Cached;
        n.stream = sid;
        n.pos = pos;
        n.dep_real = dep_real;
        let e = Entry { len: n.len, addr: n.addr, id };
        self.set_exact_mark(id, cached_mark(sid), !same_stream);
        if was_empty {
            self.nonempty_bins += 1;
        }
        self.bins[bin].sizes_mut().insert(&mut SharedSlots(&self.slots), e);
    }

    /// The largest range of unreserved address space.
    pub(crate) fn largest_free(&self) -> u64 {
        self.free.largest()
    }

    /// The largest cached block.
    pub(crate) fn largest_cached(&self) -> u64 {
        self.bins.iter().map(|b| b.sizes().largest()).max().unwrap_or(0)
    }

    /// Number of live allocations.
    pub(crate) fn live_count(&self) -> usize {
        self.live
    }

    fn bin_index(&self, stream: u64) -> Option<usize> {
        if self.bins.len() <= LINEAR_BINS {
            return self.bin_ids.iter().position(|&id| id == stream);
        }
        self.bin_of.get(&stream).map(|&i| i as usize)
    }

    /// The cached blocks freed on `stream`, if it has a bin.
    fn bin(&self, stream: u64) -> Option<&Bin> {
        self.bin_index(stream).map(|i| &self.bins[i])
    }

    fn new_bin(&mut self, stream: &Arc<StreamShared>) -> usize {
        if self.bins.len() >= 2 * self.nonempty_bins + 16 {
            self.bins.retain(|b| !b.sizes().is_empty());
            self.bin_ids = self.bins.iter().map(|b| b.stream.id).collect();
            self.bin_of.clear();
            for (i, b) in self.bins.iter().enumerate() {
                self.bin_of.insert(b.stream.id, i as u32);
            }
        }
        self.bins.push(Bin { stream: Arc::clone(stream), sizes: UnsafeCell::new(SizeBins::new(self.gran)) });
        let i = self.bins.len() - 1;
        self.bin_of.insert(stream.id, i as u32);
        self.bin_ids.push(stream.id);
        i
    }
}

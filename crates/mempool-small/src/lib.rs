//! A stream-ordered small-block layer over any [`MemPool`].
//!
//! A stream-ordered pool rounds every allocation up to its granularity (2 MiB on Ascend), so
//! a framework that makes many small or oddly sized tensors reserves far more than it
//! uses. [`SmallBlocks`] sits between the framework and the pool, as PyTorch's caching
//! allocator and RAPIDS RMM's binning resource do: requests up to a **threshold** are carved
//! from larger pool blocks at a 512-byte alignment; larger requests go to the pool as they
//! are. It is generic over the [`Device`] and its pool, so the same code runs on the
//! emulator and on the real runtime, and it implements [`MemPool`] itself, so code written
//! against the trait (the `mempool` facade's buffers included) uses it unchanged.
//!
//! # The threshold
//!
//! `threshold` is the largest *requested* size, in bytes and inclusive, that the layer
//! serves from its blocks. A request of `1..=threshold` bytes is rounded up to 512 bytes
//! ([`ALIGN`]) and carved from a block; a request above it is passed to the pool
//! (which rounds it to its granularity). `0` turns the layer into a pass-through: every
//! request goes to the pool, and its errors come back as the pool gives them (no
//! [out-of-memory](#out-of-memory) retry), which is how a test lets the emulator's checker
//! judge every allocation on its own (see [the checker](#the-checker)). The conformance
//! suite checks both: see [Conformance](#conformance).
//!
//! Requests of at most 1 MiB ([`SMALL_LIMIT`]) are carved from *small* blocks of 2 MiB
//! ([`SMALL_BLOCK`], one granule at the default granularity); larger ones from *large*
//! blocks sized for little rounding waste: `k` times the request, rounded up to the
//! granularity, with the `k` that wastes the least within 20 MiB ([`LARGE_BLOCK`]) or
//! within the request's own rounded size when that is larger (a 2.25 MiB request gets an
//! 18 MiB block that holds eight, a 9 MiB request one that holds two, a 147.3 MiB request
//! one of 148 MiB). Later requests of the stream take the remainder. Within a stream's
//! blocks of one kind the layer takes the smallest free range that fits, then the lowest
//! address, and merges neighbouring free ranges of a block when they are freed.
//!
//! # Stream order
//!
//! Each block belongs to the stream it was allocated on (its *owner*), and is carved
//! only for requests on that stream:
//!
//! - A free on the owner stream makes the range reusable at once by the owner stream: work
//!   on one stream runs in order, so the next user is ordered after the free.
//! - A free on another stream `T` records an event on `T` and holds the range back until
//!   the host has seen that event complete ([`Device::query_event`], polled when the layer
//!   needs room, or [`Device::synchronize_event`] on the out-of-memory path). Work enqueued
//!   afterwards on the owner stream is then ordered after the free. When the pool's
//!   [`ReuseAllowInternalDependencies`] flag is on (attribute 3, rule e of the
//!   [allocation contract](mempool_hal::contract::allocation)), the layer follows it as the
//!   pool does: rather than take a new block, it makes the owner stream wait for the events
//!   of its pending ranges ([`Device::stream_wait_event`]) and reuses them at once.
//! - A block whose ranges are all free goes back to the pool with
//!   [`MemPool::free_async`] on its owner stream, which is ordered after every free of its
//!   ranges by the two rules above. Other streams reuse that memory only through the
//!   pool's own rules: its reuse flags, events and synchronizations (the
//!   [allocation contract](mempool_hal::contract::allocation)). Three exceptions keep
//!   memory in the layer a while, all on the owner stream and all given back by
//!   [`SmallBlocks::release_empty`], [`MemPool::trim_to`] and the out-of-memory path:
//!   - one empty small block per stream is kept as a spare, so that a same-stream
//!     allocate-and-free cycle never reaches the pool;
//!   - the last [`HOT`] small ranges freed on a stream stay unmerged, and a request of the
//!     same rounded size takes the latest one back at once (the fast path);
//!   - an empty block of at least [`PARK_MIN`] (64 MiB) is *parked*, up to [`PARKED`] per
//!     stream, for a later request of the same block size on its stream; one passed over by
//!     more than [`PARK_AGE`] block requests of its stream goes back. Given back at once, a
//!     large block would be split by the pool for the next smaller request (the pool takes
//!     the smallest cached block that fits), and the next request of its size would need
//!     fresh memory: on a fine-tuning trace that frees and reallocates 147 MiB tensors
//!     every step, parking brings RESERVED_HIGH from 1.090 to 1.037 times the peak of live
//!     requested bytes.
//!
//! # Out of memory
//!
//! When the pool cannot provide a block (or a large request), the layer waits for the
//! events of its pending cross-stream frees, gives every empty block back to the pool
//! (spares and parked blocks included), synchronizes the device (so that every free, the
//! layer's and any other, is known complete), trims the pool to its USED (so that the
//! cached memory goes back to the pool's address space and can be carved at any size) and
//! retries once; a block request also falls back to the smallest block that fits. The
//! second failure is returned as the pool's out-of-memory error. This path blocks; it is
//! the layer's equivalent of PyTorch freeing its cached blocks before reporting out of
//! memory. With threshold 0 the layer holds nothing and takes no part: the pool's
//! out-of-memory error is returned at once.
//!
//! # Statistics
//!
//! [`SmallBlocks::small_stats`] reports the layer's own counters: the requested bytes of
//! live allocations made through it, the pool bytes it holds (its blocks and the rounded
//! size of the requests it passed through), their high-water marks, and
//! [`SmallStats::waste`], the difference. The pool's own counters
//! ([`MemPool::stats_snapshot`]) are those of the pool underneath.
//!
//! # The checker
//!
//! The emulator's [stream-order checker](mempool_hal::contract::checker) judges pool
//! allocations; it "sees through" the layer as follows:
//!
//! - Every pool call the layer makes is itself a correct stream-ordered program, so the
//!   checker never refuses a correct program because it uses the layer.
//! - Copies, memsets and kernels on a carved range are checked against the pool block
//!   that holds it: an access not ordered after the block's allocation, outside the block,
//!   or after the block went back to the pool is refused as without the layer.
//! - What happens inside a block (a range freed on a stream that is not ordered after its
//!   last use, a use after the range was freed while the block is still held) is invisible
//!   to the pool. To have the checker judge every allocation on its own, run the tests
//!   with threshold 0: the layer then passes every request through and the checker
//!   refuses such a free as it does without the layer.
//!
//! The layer checks what it can itself on every backend: a free of a pointer that it did
//! not hand out, that was freed already, or that points inside an allocation is
//! `InvalidPointer` (107000), never a panic and never passed to the pool.
//!
//! # Conformance
//!
//! The workspace runs the conformance suite of `mempool-conformance` (contract §10)
//! through the layer on the emulator, in both execution modes and both profiles
//! (`tests/conformance_small.rs`), on a test device whose pools are layers over the
//! emulator's pools ([`SmallBlocks::new_shared`]):
//!
//! - at threshold 0 every one of the 30 scenarios passes unchanged: the layer is
//!   transparent;
//! - at threshold one granule (64 KiB there) the scenarios about attributes, properties,
//!   cross-stream reuse of multi-granule blocks (event dependencies, opportunistic and
//!   internal-dependency reuse), `trim_to` errors and bad handles pass (1, 2, 4-7,
//!   14-18, 25, 29). The other 17 do not apply: their exact expectations are about the
//!   pool's own carving of requests of at most a granule, which the layer serves from its
//!   blocks instead: the address of such a request, or RESERVED and USED counting it as
//!   one granule (3, 8-13, 20-24, 26-28), the out-of-memory figures,
//!   which the layer's [out-of-memory](#out-of-memory) path changes by trimming the pool
//!   (19), and a registry of granule-rounded ranges (30). The test file lists each with
//!   its reason, as ignored cases.
//!
//! # Example
//!
//! ```
//! use mempool_emu::Emulator;
//! use mempool_hal::{Device, MemPool, PoolProps};
//! use mempool_small::SmallBlocks;
//!
//! let emu = Emulator::new();
//! let s = emu.create_stream()?;
//! let pool = emu.create_pool(&PoolProps::builder().max_size(1 << 30).build())?;
//! let small = SmallBlocks::new(&emu, &pool, 1 << 20)?;
//!
//! let a = small.malloc_async(100, &s)?;
//! let b = small.malloc_async(1000, &s)?;
//! assert_eq!(b.addr(), a.addr() + 512); // both in one 2 MiB block
//! let st = small.small_stats();
//! assert_eq!((st.requested_current, st.held_current), (1100, 2 << 20));
//! // SAFETY: both are live allocations of `small`, used on `s` only.
//! unsafe {
//!     small.free_async(a, &s)?;
//!     small.free_async(b, &s)?;
//! }
//! assert_eq!(small.small_stats().requested_current, 0);
//! drop(small); // gives the empty block back to the pool
//! emu.synchronize_device()?;
//! emu.destroy_pool(&pool)?;
//! # Ok::<(), mempool_hal::Error>(())
//! ```

#![deny(missing_docs)]

use mempool_hal::attr::ReuseAllowInternalDependencies;
use mempool_hal::{
    AttrId, Device, DevicePtr, Error, ErrorKind, EventStatus, MemPool, MemPoolExt, PoolStats, RawAttrValue, Result,
    round_up,
};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;
use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The alignment, and the rounding, of every range carved from a block: 512 bytes.
pub const ALIGN: u64 = 512;
/// Requests of at most this many bytes (1 MiB) are carved from small blocks.
pub const SMALL_LIMIT: u64 = 1 << 20;
/// The size of a small block (2 MiB), rounded up to the pool's granularity.
pub const SMALL_BLOCK: u64 = 2 << 20;
/// The most a large block holds for several requests (20 MiB): a request above
/// [`SMALL_LIMIT`] gets a block of `k` times its rounded size, rounded up to the
/// granularity, with the `k` that wastes the smallest share of the block among those that
/// keep it within 20 MiB (or within one request's own rounded size, when that is larger).
pub const LARGE_BLOCK: u64 = 20 << 20;

/// How many freed small ranges a stream keeps unmerged for exact-size reuse.
pub const HOT: usize = 8;
/// Empty blocks of at least this size (64 MiB) are kept whole for a while (*parked*) rather
/// than given back at once: see [`PARKED`] and [`PARK_AGE`].
pub const PARK_MIN: u64 = 64 << 20;
/// How many empty blocks a stream keeps parked at most.
pub const PARKED: usize = 2;
/// A parked block goes back to the pool when the stream has asked for this many new blocks
/// since it was parked without one of its size.
pub const PARK_AGE: u64 = 5;

const NIL: u32 = u32::MAX;

/// The layer's own statistics (see [`SmallBlocks::small_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SmallStats {
    /// Requested bytes of the live allocations made through the layer (carved or passed
    /// through), as the caller asked for them.
    pub requested_current: u64,
    /// High-water mark of `requested_current`.
    pub requested_high: u64,
    /// Pool bytes the layer holds: its blocks (live, free or pending ranges alike) plus the
    /// granularity-rounded size of the live requests it passed through.
    pub held_current: u64,
    /// High-water mark of `held_current`.
    pub held_high: u64,
    /// Pool blocks the layer holds now.
    pub blocks: u64,
    /// Bytes of those blocks.
    pub block_bytes: u64,
    /// Live ranges carved from blocks.
    pub live_ranges: u64,
    /// Ranges freed on another stream than their block's, held back until the host sees
    /// the free complete.
    pub pending_frees: u64,
}

impl SmallStats {
    /// Bytes held but not requested: `held_current - requested_current` (rounding, free
    /// ranges, pending frees and spare blocks).
    pub fn waste(&self) -> u64 {
        self.held_current.saturating_sub(self.requested_current)
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    addr: u64,
    size: u64,
    prev: u32,
    next: u32,
    block: u32,
    free: bool,
    /// The requested bytes while live.
    requested: u64,
}

#[derive(Debug, Clone, Copy)]
struct Block {
    addr: u64,
    size: u64,
    arena: u32,
    /// Ranges live or pending.
    used: u32,
    small: bool,
}

#[derive(Debug)]
struct Arena<S> {
    stream: S,
    /// Free ranges by (size, address, node), small blocks then large blocks.
    free: [BTreeSet<(u64, u64, u32)>; 2],
    /// An empty small block kept for the next request.
    spare: Option<u32>,
    /// Small ranges freed on this stream lately, oldest first, not merged yet: a request of
    /// the same rounded size takes one back at once.
    hot: Vec<u32>,
    /// Empty blocks of at least [`PARK_MIN`] kept whole for a request of the same block
    /// size: (block, its node, the stream's block-request count when parked).
    parked: Vec<(u32, u32, u64)>,
    /// Block requests of this stream so far (the clock of `parked`).
    ticks: u64,
}

struct State<D: Device> {
    arenas: Vec<Arena<D::Stream>>,
    arena_of: FxHashMap<D::Stream, u32>,
    last: usize,
    nodes: Vec<Node>,
    spare_nodes: Vec<u32>,
    blocks: Vec<Block>,
    spare_blocks: Vec<u32>,
    /// Carved live ranges by address.
    live: FxHashMap<u64, u32>,
    /// Passed-through live allocations by address: (requested, rounded).
    direct: FxHashMap<u64, (u64, u64)>,
    pending: Vec<(u32, D::Event)>,
    events: Vec<D::Event>,
    stats: SmallStats,
}

/// How a layer holds its device or its pool: borrowed ([`SmallBlocks::new`]) or shared
/// ([`SmallBlocks::new_shared`]).
enum Held<'a, T> {
    Borrowed(&'a T),
    Shared(Arc<T>),
}

impl<T> Deref for Held<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            Held::Borrowed(t) => t,
            Held::Shared(t) => t,
        }
    }
}

/// A stream-ordered small-block layer over a pool of device `D` (see the
/// [crate docs](crate) for the threshold, the ordering rules and the statistics).
///
/// It borrows the device (for the events of cross-stream frees) and the pool
/// ([`SmallBlocks::new`]), or shares them through [`Arc`]s
/// ([`SmallBlocks::new_shared`], a `SmallBlocks<'static, D>` that can be stored next to
/// the pool, for instance as the pool type of a wrapping [`Device`]). Dropping
/// it waits for the events of its pending cross-stream frees, gives its empty blocks back
/// to the pool and destroys its events; blocks that still hold live ranges stay allocated
/// in the pool until the pool is destroyed.
///
/// It is `Sync`: one lock guards its state, held for the duration of each call, pool
/// calls included. The out-of-memory path synchronizes the device under that lock, so a
/// host function ([`Device::launch_host_func`]) must not call the layer.
pub struct SmallBlocks<'a, D: Device>
where
    D::Stream: Eq + Hash,
{
    dev: Held<'a, D>,
    pool: Held<'a, D::Pool>,
    threshold: u64,
    granularity: u64,
    state: Mutex<State<D>>,
}

impl<D: Device> fmt::Debug for SmallBlocks<'_, D>
where
    D::Stream: Eq + Hash,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmallBlocks")
            .field("pool", &*self.pool)
            .field("threshold", &self.threshold)
            .field("stats", &self.small_stats())
            .finish()
    }
}

fn class(rounded: u64) -> usize {
    usize::from(rounded > SMALL_LIMIT)
}

impl<D: Device + 'static> SmallBlocks<'static, D>
where
    D::Stream: Eq + Hash,
{
    /// A layer that shares its device and its pool (a pool of `dev`) rather than borrowing
    /// them, so that it can live as long as its owner wants: next to the pool in a struct,
    /// or as the pool of a wrapping [`Device`]. Otherwise the same as [`SmallBlocks::new`].
    ///
    /// # Errors
    ///
    /// A threshold above the pool's size: `InvalidParam` (107000).
    ///
    /// # Example
    ///
    /// ```
    /// use mempool_emu::Emulator;
    /// use mempool_hal::{Device, MemPool, PoolProps};
    /// use mempool_small::SmallBlocks;
    /// use std::sync::Arc;
    ///
    /// let emu = Arc::new(Emulator::new());
    /// let s = emu.create_stream()?;
    /// let pool = Arc::new(emu.create_pool(&PoolProps::builder().max_size(1 << 30).build())?);
    /// let small: SmallBlocks<'static, Emulator> = SmallBlocks::new_shared(Arc::clone(&emu), Arc::clone(&pool), 1 << 20)?;
    /// let a = small.malloc_async(100, &s)?;
    /// // SAFETY: a live allocation of `small`, used on `s` only.
    /// unsafe { small.free_async(a, &s)? };
    /// drop(small);
    /// emu.synchronize_device()?;
    /// emu.destroy_pool(&pool)?;
    /// # Ok::<(), mempool_hal::Error>(())
    /// ```
    pub fn new_shared(dev: Arc<D>, pool: Arc<D::Pool>, threshold: u64) -> Result<Self> {
        Self::with(Held::Shared(dev), Held::Shared(pool), threshold)
    }
}

impl<'a, D: Device> SmallBlocks<'a, D>
where
    D::Stream: Eq + Hash,
{
    /// A layer over `pool` (a pool of `dev`) serving requests of at most `threshold`
    /// bytes from its blocks (0: none, a pass-through).
    ///
    /// # Errors
    ///
    /// A threshold above the pool's size: `InvalidParam` (107000).
    pub fn new(dev: &'a D, pool: &'a D::Pool, threshold: u64) -> Result<Self> {
        Self::with(Held::Borrowed(dev), Held::Borrowed(pool), threshold)
    }

    fn with(dev: Held<'a, D>, pool: Held<'a, D::Pool>, threshold: u64) -> Result<Self> {
        if threshold > pool.size() {
            return Err(Error::invalid_param(
                "SmallBlocks::new",
                format!("threshold {threshold} is above the pool size {}", pool.size()),
            ));
        }
        let granularity = dev.pool_granularity().max(1).next_power_of_two();
        Ok(SmallBlocks {
            dev,
            pool,
            threshold,
            granularity,
            state: Mutex::new(State {
                arenas: Vec::new(),
                arena_of: FxHashMap::default(),
                last: usize::MAX,
                nodes: Vec::new(),
                spare_nodes: Vec::new(),
                blocks: Vec::new(),
                spare_blocks: Vec::new(),
                live: FxHashMap::default(),
                direct: FxHashMap::default(),
                pending: Vec::new(),
                events: Vec::new(),
                stats: SmallStats::default(),
            }),
        })
    }

    /// The threshold: the largest requested size served from blocks.
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// The pool underneath.
    pub fn pool(&self) -> &D::Pool {
        &self.pool
    }

    /// The layer's own statistics, read at one instant.
    pub fn small_stats(&self) -> SmallStats {
        self.lock().stats
    }

    /// Resets the high-water marks of [`SmallStats`] to their current values.
    pub fn reset_high(&self) {
        let mut st = self.lock();
        st.stats.requested_high = st.stats.requested_current;
        st.stats.held_high = st.stats.held_current;
    }

    /// Gives every empty block back to the pool (spares included), after taking in the
    /// cross-stream frees whose events the host sees complete; returns the bytes given
    /// back. It does not synchronize.
    ///
    /// # Errors
    ///
    /// An error of the device's event query or of the pool's free.
    pub fn release_empty(&self) -> Result<u64> {
        let mut st = self.lock();
        let before = st.stats.block_bytes;
        self.poll_pending(&mut st, false)?;
        self.flush_all_hot(&mut st)?;
        self.give_back_empty(&mut st)?;
        Ok(before - st.stats.block_bytes)
    }

    fn lock(&self) -> MutexGuard<'_, State<D>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn block_size(&self, rounded: u64) -> Option<u64> {
        let g = self.granularity;
        if rounded <= SMALL_LIMIT {
            return round_up(SMALL_BLOCK, g);
        }
        let one = round_up(rounded, g)?;
        // Room for k requests of this size, k chosen for the least rounding waste.
        let cap = LARGE_BLOCK.max(one);
        let (mut best, mut best_waste) = (one, (one - rounded) as f64 / one as f64);
        let mut k = 2u64;
        while let Some(total) = rounded.checked_mul(k).filter(|&t| t <= cap) {
            let block = round_up(total, g)?;
            let waste = (block - total) as f64 / block as f64;
            if waste + 1e-9 < best_waste {
                (best, best_waste) = (block, waste);
            }
            k += 1;
        }
        Some(best)
    }

    fn malloc_direct(&self, size: u64, stream: &D::Stream) -> Result<DevicePtr> {
        let p = match self.pool.malloc_async(size, stream) {
            Ok(p) => p,
            // With threshold 0 the layer holds nothing to give back and stays a pure
            // pass-through: the pool's error as it is.
            Err(e) if e.kind() == ErrorKind::OutOfMemory && self.threshold > 0 => {
                let mut st = self.lock();
                self.relieve(&mut st)?;
                drop(st);
                self.pool.malloc_async(size, stream)?
            }
            Err(e) => return Err(e),
        };
        let rounded = round_up(size, self.granularity).unwrap_or(size);
        let mut st = self.lock();
        st.direct.insert(p.addr(), (size, rounded));
        let s = &mut st.stats;
        s.requested_current += size;
        s.requested_high = s.requested_high.max(s.requested_current);
        s.held_current += rounded;
        s.held_high = s.held_high.max(s.held_current);
        Ok(p)
    }

    /// Waits for (`block`) or polls the events of pending cross-stream frees and frees
    /// the ranges whose event is complete.
    fn poll_pending(&self, st: &mut State<D>, block: bool) -> Result<()> {
        let mut i = 0;
        while i < st.pending.len() {
            let ev = &st.pending[i].1;
            if block {
                self.dev.synchronize_event(ev)?;
            } else if self.dev.query_event(ev)? != EventStatus::Complete {
                i += 1;
                continue;
            }
            let (n, ev) = st.pending.swap_remove(i);
            st.events.push(ev);
            st.stats.pending_frees -= 1;
            if let Some(b) = st.free_node(n) {
                self.emptied(st, b)?;
            }
        }
        Ok(())
    }

    /// With the pool's [`ReuseAllowInternalDependencies`] on: makes `stream` (the owner of
    /// arena `a`) wait for the events of the arena's pending cross-stream frees and frees
    /// those ranges, as the pool's rule e does for its own blocks. Returns whether any was.
    fn wait_pending(&self, st: &mut State<D>, a: u32, stream: &D::Stream) -> Result<bool> {
        let mut any = false;
        let mut i = 0;
        while i < st.pending.len() {
            let (n, ref ev) = st.pending[i];
            if st.blocks[st.nodes[n as usize].block as usize].arena != a {
                i += 1;
                continue;
            }
            self.dev.stream_wait_event(stream, ev)?;
            let (n, ev) = st.pending.swap_remove(i);
            st.events.push(ev);
            st.stats.pending_frees -= 1;
            any = true;
            if let Some(b) = st.free_node(n) {
                self.emptied(st, b)?;
            }
        }
        Ok(any)
    }

    /// Frees the unmerged ranges of arena `a` for good.
    fn flush_hot(&self, st: &mut State<D>, a: u32) -> Result<()> {
        let hot = std::mem::take(&mut st.arenas[a as usize].hot);
        for &n in &hot {
            if let Some(b) = st.free_node(n) {
                self.emptied(st, b)?;
            }
        }
        // Keep the allocation for next time.
        let mut hot = hot;
        hot.clear();
        st.arenas[a as usize].hot = hot;
        Ok(())
    }

    fn flush_all_hot(&self, st: &mut State<D>) -> Result<()> {
        for a in 0..st.arenas.len() as u32 {
            self.flush_hot(st, a)?;
        }
        Ok(())
    }

    /// A block just became empty: keep it as its stream's spare, or give it back.
    fn emptied(&self, st: &mut State<D>, b: u32) -> Result<()> {
        let blk = st.blocks[b as usize];
        let arena = &mut st.arenas[blk.arena as usize];
        if blk.small && arena.spare.is_none() {
            arena.spare = Some(b);
            return Ok(());
        }
        if !blk.small && blk.size >= PARK_MIN && arena.parked.len() < PARKED {
            let n = st.block_node(b);
            let arena = &mut st.arenas[blk.arena as usize];
            arena.free[1].remove(&(blk.size, blk.addr, n));
            let at = arena.ticks;
            arena.parked.push((b, n, at));
            return Ok(());
        }
        self.give_back(st, b)
    }

    /// Frees empty block `b` to the pool on its owner stream.
    fn give_back(&self, st: &mut State<D>, b: u32) -> Result<()> {
        let blk = st.blocks[b as usize];
        let arena = &st.arenas[blk.arena as usize];
        // SAFETY: the block is a live allocation of `self.pool` (the layer allocated it and
        // never freed it). Every range of it was freed on the owner stream, or on another
        // stream whose event the host has since seen complete, so the free below, on the
        // owner stream, is ordered after every use of the block.
        unsafe { self.pool.free_async(DevicePtr::from_addr(blk.addr), &arena.stream)? };
        let arena = &mut st.arenas[blk.arena as usize];
        if arena.spare == Some(b) {
            arena.spare = None;
        }
        // An empty block is one free node spanning it, out of the free set while parked.
        let parked = &mut st.arenas[blk.arena as usize].parked;
        let n = match parked.iter().position(|&(pb, _, _)| pb == b) {
            Some(i) => parked.remove(i).1,
            None => {
                let n = st.block_node(b);
                st.unlist(n);
                n
            }
        };
        st.spare_nodes.push(n);
        st.spare_blocks.push(b);
        st.blocks[b as usize].size = 0;
        let s = &mut st.stats;
        s.blocks -= 1;
        s.block_bytes -= blk.size;
        s.held_current -= blk.size;
        Ok(())
    }

    /// Gives back every empty block (spares and parked blocks included).
    fn give_back_empty(&self, st: &mut State<D>) -> Result<()> {
        let empty: Vec<u32> = (0..st.blocks.len() as u32)
            .filter(|&b| {
                let blk = &st.blocks[b as usize];
                blk.size > 0 && blk.used == 0
            })
            .collect();
        for b in empty {
            self.give_back(st, b)?;
        }
        Ok(())
    }

    /// The out-of-memory path before the retry: waits for pending frees, gives back every
    /// empty block, synchronizes the device (so that every free is known complete) and
    /// trims the pool to its USED.
    fn relieve(&self, st: &mut State<D>) -> Result<()> {
        self.poll_pending(st, true)?;
        self.flush_all_hot(st)?;
        self.give_back_empty(st)?;
        self.dev.synchronize_device()?;
        let used = self.pool.stats_snapshot()?.used_current;
        self.pool.trim_to(used)
    }

    fn malloc_small(&self, size: u64, stream: &D::Stream) -> Result<DevicePtr> {
        let rounded = round_up(size, ALIGN).ok_or_else(|| Error::invalid_param("malloc_async", "size overflows"))?;
        let c = class(rounded);
        let mut st = self.lock();
        let a = st.arena(stream);
        if c == 0 {
            let st = &mut *st;
            let hot = &mut st.arenas[a as usize].hot;
            if let Some(i) = hot.iter().rposition(|&n| st.nodes[n as usize].size == rounded) {
                let n = hot.remove(i);
                return Ok(st.revive(n, size));
            }
        }
        if let Some(n) = st.take(a, c, rounded) {
            return Ok(st.carve(n, rounded, size));
        }
        if !st.arenas[a as usize].hot.is_empty() {
            self.flush_hot(&mut st, a)?;
            if let Some(n) = st.take(a, c, rounded) {
                return Ok(st.carve(n, rounded, size));
            }
        }
        if !st.pending.is_empty() {
            self.poll_pending(&mut st, false)?;
            if let Some(n) = st.take(a, c, rounded) {
                return Ok(st.carve(n, rounded, size));
            }
            if self.pool.get(ReuseAllowInternalDependencies)? && self.wait_pending(&mut st, a, stream)? {
                if let Some(n) = st.take(a, c, rounded) {
                    return Ok(st.carve(n, rounded, size));
                }
            }
        }
        let bs = self
            .block_size(rounded)
            .ok_or_else(|| Error::invalid_param("malloc_async", "size overflows when rounded"))?;
        let min = round_up(rounded, self.granularity).unwrap_or(bs);
        // A parked block of this size serves the request; parked blocks passed over too
        // often go back to the pool.
        let state = &mut *st;
        let arena = &mut state.arenas[a as usize];
        arena.ticks += 1;
        let now = arena.ticks;
        if !arena.parked.is_empty() {
            let blocks = &state.blocks;
            if let Some(i) = arena.parked.iter().position(|&(b, _, _)| blocks[b as usize].size == bs) {
                let (_, n, _) = arena.parked.remove(i);
                return Ok(st.carve(n, rounded, size));
            }
            let old: Vec<u32> =
                arena.parked.iter().filter(|&&(_, _, at)| now - at > PARK_AGE).map(|&(b, _, _)| b).collect();
            for b in old {
                self.give_back(&mut st, b)?;
            }
        }
        let p = match self.pool.malloc_async(bs, stream) {
            Ok(p) => (p, bs),
            Err(e) if e.kind() == ErrorKind::OutOfMemory => {
                self.relieve(&mut st)?;
                if let Some(n) = st.take(a, c, rounded) {
                    return Ok(st.carve(n, rounded, size));
                }
                match self.pool.malloc_async(bs, stream) {
                    Ok(p) => (p, bs),
                    Err(e) if e.kind() == ErrorKind::OutOfMemory && min < bs => {
                        (self.pool.malloc_async(min, stream)?, min)
                    }
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let n = st.add_block(a, p.0.addr(), p.1, c == 0);
        Ok(st.carve(n, rounded, size))
    }
}

impl<D: Device> State<D>
where
    D::Stream: Eq + Hash,
{
    fn arena(&mut self, stream: &D::Stream) -> u32 {
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
                    free: Default::default(),
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

    /// The free node spanning empty block `b`.
    fn block_node(&self, b: u32) -> u32 {
        let blk = &self.blocks[b as usize];
        let set = &self.arenas[blk.arena as usize].free[usize::from(!blk.small)];
        set.range((blk.size, blk.addr, 0)..=(blk.size, blk.addr, u32::MAX)).next().map_or(NIL, |&(_, _, n)| n)
    }

    fn new_node(&mut self, node: Node) -> u32 {
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
    fn take(&mut self, a: u32, c: usize, rounded: u64) -> Option<u32> {
        let set = &mut self.arenas[a as usize].free[c];
        let &key = set.range((rounded, 0, 0)..).next()?;
        set.remove(&key);
        Some(key.2)
    }

    fn add_block(&mut self, a: u32, addr: u64, size: u64, small: bool) -> u32 {
        let blk = Block { addr, size, arena: a, used: 0, small };
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
        self.new_node(Node { addr, size, prev: NIL, next: NIL, block: b, free: true, requested: 0 })
    }

    /// Makes free node `n` (out of its set) live with `rounded` bytes, splitting off the
    /// rest as a free range.
    fn carve(&mut self, n: u32, rounded: u64, requested: u64) -> DevicePtr {
        let node = self.nodes[n as usize];
        let blk = self.blocks[node.block as usize];
        if node.size > rounded {
            let rest = Node {
                addr: node.addr + rounded,
                size: node.size - rounded,
                prev: n,
                next: node.next,
                block: node.block,
                free: true,
                requested: 0,
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
        self.live.insert(node.addr, n);
        let s = &mut self.stats;
        s.requested_current += requested;
        s.requested_high = s.requested_high.max(s.requested_current);
        s.live_ranges += 1;
        DevicePtr::from_addr(node.addr)
    }

    /// Makes node `n`, taken from a stream's unmerged ranges, live again.
    fn revive(&mut self, n: u32, requested: u64) -> DevicePtr {
        let node = &mut self.nodes[n as usize];
        node.requested = requested;
        let addr = node.addr;
        self.live.insert(addr, n);
        let s = &mut self.stats;
        s.requested_current += requested;
        s.requested_high = s.requested_high.max(s.requested_current);
        s.live_ranges += 1;
        DevicePtr::from_addr(addr)
    }

    /// Frees node `n` (no longer in `live`), merging it with free neighbours; returns its
    /// block when that became empty.
    fn free_node(&mut self, n: u32) -> Option<u32> {
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
        self.list(n);
        let b = &mut self.blocks[node.block as usize];
        b.used -= 1;
        (b.used == 0).then_some(node.block)
    }

    /// The set of free ranges that node `n`'s block lists its free ranges in.
    fn free_set(&mut self, n: u32) -> &mut BTreeSet<(u64, u64, u32)> {
        let blk = self.blocks[self.nodes[n as usize].block as usize];
        &mut self.arenas[blk.arena as usize].free[usize::from(!blk.small)]
    }

    /// Puts free node `n` into its set.
    fn list(&mut self, n: u32) {
        let node = self.nodes[n as usize];
        self.free_set(n).insert((node.size, node.addr, n));
    }

    /// Takes free node `n` out of its set.
    fn unlist(&mut self, n: u32) {
        let node = self.nodes[n as usize];
        self.free_set(n).remove(&(node.size, node.addr, n));
    }

    /// Merges the node after `a` into `a` (neither in a set) and recycles it.
    fn absorb_next(&mut self, a: u32) {
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

impl<D: Device> MemPool for SmallBlocks<'_, D>
where
    D::Stream: Eq + Hash,
{
    type Stream = D::Stream;

    /// Allocates `size` bytes on `stream`: carved from one of the stream's blocks when
    /// `size` is at most the threshold, else from the pool (see the [crate docs](crate)).
    ///
    /// # Errors
    ///
    /// `size == 0`: `InvalidParam` (107000). The pool's errors when it is asked for a
    /// block or a large request (out of memory only after the retry of the crate docs).
    fn malloc_async(&self, size: u64, stream: &D::Stream) -> Result<DevicePtr> {
        if size == 0 {
            return Err(Error::invalid_param("malloc_async", "size 0"));
        }
        if size > self.threshold {
            return self.malloc_direct(size, stream);
        }
        self.malloc_small(size, stream)
    }

    /// Frees `ptr` in stream order on `stream` (see the ordering rules in the
    /// [crate docs](crate)).
    ///
    /// # Safety
    ///
    /// As [`MemPool::free_async`]: every use of `ptr` must be ordered before this free.
    /// Pointers the layer did not hand out are refused with an error before they reach the
    /// pool.
    ///
    /// # Errors
    ///
    /// A pointer that is not the start of a live allocation of the layer (foreign, freed
    /// already, interior): `InvalidPointer` (107000). A cross-stream free whose event cannot
    /// be made or recorded (a destroyed stream): that error, with the allocation still live.
    /// The pool's errors for a passed-through allocation.
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &D::Stream) -> Result<()> {
        let mut st = self.lock();
        if let Some(n) = st.live.remove(&ptr.addr()) {
            let node = st.nodes[n as usize];
            let blk = st.blocks[node.block as usize];
            if st.arenas[blk.arena as usize].stream != *stream {
                let ev = match st.events.pop() {
                    Some(ev) => ev,
                    None => match self.dev.create_event() {
                        Ok(ev) => ev,
                        Err(e) => {
                            st.live.insert(ptr.addr(), n);
                            return Err(e);
                        }
                    },
                };
                if let Err(e) = self.dev.record_event(&ev, stream) {
                    st.events.push(ev);
                    st.live.insert(ptr.addr(), n);
                    return Err(e.with_op("free_async"));
                }
                st.pending.push((n, ev));
                let s = &mut st.stats;
                s.requested_current -= node.requested;
                s.live_ranges -= 1;
                s.pending_frees += 1;
                return Ok(());
            }
            let s = &mut st.stats;
            s.requested_current -= node.requested;
            s.live_ranges -= 1;
            st.nodes[n as usize].requested = 0;
            let n = if blk.small {
                let hot = &mut st.arenas[blk.arena as usize].hot;
                hot.push(n);
                if hot.len() <= HOT {
                    return Ok(());
                }
                hot.remove(0)
            } else {
                n
            };
            if let Some(b) = st.free_node(n) {
                self.emptied(&mut st, b)?;
            }
            return Ok(());
        }
        let Some(&(requested, rounded)) = st.direct.get(&ptr.addr()) else {
            return Err(Error::invalid_pointer(
                "free_async",
                format!("{ptr} is not the start of a live allocation of this small-block layer"),
            ));
        };
        // SAFETY: `ptr` is a live allocation the layer passed through from `self.pool`; the
        // caller owes that its uses are ordered before this free.
        unsafe { self.pool.free_async(ptr, stream)? };
        st.direct.remove(&ptr.addr());
        let s = &mut st.stats;
        s.requested_current -= requested;
        s.held_current -= rounded;
        Ok(())
    }

    /// Gives the layer's empty blocks back to the pool, then trims the pool (see
    /// [`MemPool::trim_to`]).
    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        self.release_empty()?;
        self.pool.trim_to(min_bytes_to_keep)
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        self.pool.get_attr_raw(attr)
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        self.pool.set_attr_raw(attr, value)
    }

    fn size(&self) -> u64 {
        self.pool.size()
    }

    /// The pool's counters (the layer's own are [`SmallBlocks::small_stats`]).
    fn stats_snapshot(&self) -> Result<PoolStats> {
        self.pool.stats_snapshot()
    }
}

impl<D: Device> Drop for SmallBlocks<'_, D>
where
    D::Stream: Eq + Hash,
{
    fn drop(&mut self) {
        let mut st = self.lock();
        let _ = self.poll_pending(&mut st, true);
        let _ = self.flush_all_hot(&mut st);
        let _ = self.give_back_empty(&mut st);
        let st = &mut *st;
        let events: Vec<D::Event> = st.events.drain(..).chain(st.pending.drain(..).map(|(_, e)| e)).collect();
        for ev in events {
            let _ = self.dev.destroy_event(&ev);
        }
    }
}

#[cfg(test)]
mod tests;

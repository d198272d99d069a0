//! [`SmallBlocks`]: how it holds its device and pool, the small and direct allocation
//! paths, pending cross-stream frees, giving blocks back, and what its drop does.

use mempool_hal::attr::ReuseAllowInternalDependencies;
use mempool_hal::{Device, DevicePtr, Error, ErrorKind, EventStatus, MemPool, MemPoolExt, Result, round_up};
use rustc_hash::FxHashMap;
use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::arena::{BLOCK_SIZES, State, class};
use crate::live::LiveRanges;
use crate::stats::SmallStats;
use crate::{ALIGN, LARGE_BLOCK, PARK_AGE, PARK_MIN, PARKED, SMALL_BLOCK, SMALL_LIMIT};

/// How a layer holds its device or its pool: borrowed ([`SmallBlocks::new`]) or shared
/// ([`SmallBlocks::new_shared`]).
pub(crate) enum Held<'a, T> {
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
    pub(crate) dev: Held<'a, D>,
    pub(crate) pool: Held<'a, D::Pool>,
    pub(crate) threshold: u64,
    pub(crate) granularity: u64,
    pub(crate) state: Mutex<State<D>>,
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
                live: LiveRanges::default(),
                direct: FxHashMap::default(),
                pending: Vec::new(),
                block_sizes: [(0, 0); BLOCK_SIZES],
                next_block_size: 0,
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

    /// Whether `ptr` is the start of a live allocation of the layer (carved from a block or
    /// passed through to the pool): what a caller asks after a free that failed, to tell a
    /// free the layer took (and then could not give its emptied block back) from one it
    /// refused.
    pub fn is_live(&self, ptr: DevicePtr) -> bool {
        let st = self.lock();
        st.live.contains(ptr.addr()) || st.direct.contains_key(&ptr.addr())
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

    pub(crate) fn lock(&self) -> MutexGuard<'_, State<D>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn block_size(&self, rounded: u64) -> Option<u64> {
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

    pub(crate) fn malloc_direct(&self, size: u64, stream: &D::Stream) -> Result<DevicePtr> {
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
    pub(crate) fn poll_pending(&self, st: &mut State<D>, block: bool) -> Result<()> {
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
    pub(crate) fn wait_pending(&self, st: &mut State<D>, a: u32, stream: &D::Stream) -> Result<bool> {
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
    pub(crate) fn flush_hot(&self, st: &mut State<D>, a: u32) -> Result<()> {
        let hot = std::mem::take(&mut st.arenas[a as usize].hot);
        for &(n, _) in &hot {
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

    pub(crate) fn flush_all_hot(&self, st: &mut State<D>) -> Result<()> {
        for a in 0..st.arenas.len() as u32 {
            self.flush_hot(st, a)?;
        }
        Ok(())
    }

    /// A block just became empty (its one free range in no set, [`State::free_node`]):
    /// keep it as its stream's spare, park it, or give it back. A block whose give-back
    /// fails stays out of the free sets, held until the next [`SmallBlocks::give_back_empty`].
    pub(crate) fn emptied(&self, st: &mut State<D>, b: u32) -> Result<()> {
        let blk = st.blocks[b as usize];
        let arena = &mut st.arenas[blk.arena as usize];
        if blk.small && arena.spare.is_none() {
            arena.spare = Some(b);
            st.list(blk.first);
            return Ok(());
        }
        if !blk.small && blk.size >= PARK_MIN && arena.parked.len() < PARKED {
            let at = arena.ticks;
            arena.parked.push((b, at));
            return Ok(());
        }
        self.give_back(st, b)
    }

    /// Frees empty block `b` to the pool on its owner stream.
    pub(crate) fn give_back(&self, st: &mut State<D>, b: u32) -> Result<()> {
        let blk = st.blocks[b as usize];
        let arena = &st.arenas[blk.arena as usize];
        // SAFETY: the block is a live allocation of `self.pool` (the layer allocated it and
        // never freed it). Every range of it was freed on the owner stream, or on another
        // stream whose event the host has since seen complete, so the free below, on the
        // owner stream, is ordered after every use of the block.
        unsafe { self.pool.free_async(DevicePtr::from_addr(blk.addr), &arena.stream)? };
        // An empty block is one free node spanning it, in the free set only while it is
        // its stream's spare.
        let n = blk.first;
        let arena = &mut st.arenas[blk.arena as usize];
        if let Some(i) = arena.parked.iter().position(|&(pb, _)| pb == b) {
            arena.parked.remove(i);
        } else if arena.spare == Some(b) {
            arena.spare = None;
            st.unlist(n);
        }
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
    pub(crate) fn give_back_empty(&self, st: &mut State<D>) -> Result<()> {
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
    pub(crate) fn relieve(&self, st: &mut State<D>) -> Result<()> {
        self.poll_pending(st, true)?;
        self.flush_all_hot(st)?;
        self.give_back_empty(st)?;
        self.dev.synchronize_device()?;
        let used = self.pool.stats_snapshot()?.used_current;
        self.pool.trim_to(used)
    }

    pub(crate) fn malloc_small(&self, size: u64, stream: &D::Stream) -> Result<DevicePtr> {
        let rounded = round_up(size, ALIGN).ok_or_else(|| Error::invalid_param("malloc_async", "size overflows"))?;
        let c = class(rounded);
        let mut st = self.lock();
        let a = st.arena(stream);
        if c == 0 {
            let st = &mut *st;
            let hot = &mut st.arenas[a as usize].hot;
            if let Some(i) = hot.iter().rposition(|&(_, size)| size == rounded) {
                let (n, _) = hot.remove(i);
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
        let bs = match st.block_sizes.iter().find(|&&(r, _)| r == rounded) {
            Some(&(_, bs)) => bs,
            None => {
                let bs = self
                    .block_size(rounded)
                    .ok_or_else(|| Error::invalid_param("malloc_async", "size overflows when rounded"))?;
                let i = st.next_block_size;
                st.block_sizes[i] = (rounded, bs);
                st.next_block_size = (i + 1) % BLOCK_SIZES;
                bs
            }
        };
        let min = round_up(rounded, self.granularity).unwrap_or(bs);
        // A parked block of this size serves the request; parked blocks passed over too
        // often go back to the pool.
        let state = &mut *st;
        let arena = &mut state.arenas[a as usize];
        arena.ticks += 1;
        let now = arena.ticks;
        if !arena.parked.is_empty() {
            let blocks = &state.blocks;
            if let Some(i) = arena.parked.iter().position(|&(b, _)| blocks[b as usize].size == bs) {
                let (b, _) = arena.parked.remove(i);
                let n = st.blocks[b as usize].first;
                return Ok(st.carve(n, rounded, size));
            }
            let old: Vec<u32> = arena.parked.iter().filter(|&&(_, at)| now - at > PARK_AGE).map(|&(b, _)| b).collect();
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

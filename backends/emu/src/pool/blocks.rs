//! The pool's bookkeeping: live allocations, cached blocks with their free tags, and the
//! unreserved address space. Pure data; the caller holds the pool lock and does the
//! syscalls (commit, decommit) this module asks for.

use crate::ReuseRule;
use crate::clock::Clock;
use crate::stream::StreamShared;
use mempool_hal::PoolStats;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// A freed block the pool still holds, tagged with where its free is ordered.
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    pub(crate) len: u64,
    /// The freeing stream.
    pub(crate) stream: Arc<StreamShared>,
    /// The free's position on that stream (the later one for merged blocks).
    pub(crate) pos: u64,
    /// The last real operation before the free: the free has executed once it completed.
    pub(crate) dep_real: u64,
    /// What the free is ordered after on other streams (the freeing stream's clock at
    /// the free), so an inserted dependency orders the allocating stream after all of it.
    pub(crate) clock: Arc<Clock>,
}

impl Cached {
    pub(crate) fn executed(&self) -> bool {
        self.stream.completed() >= self.dep_real
    }
}

/// A live allocation: its length and where it was allocated (stream and position). Kept
/// small: the live map is searched on every free.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    pub(crate) len: u64,
    /// The allocating stream.
    pub(crate) owner: u64,
    /// The allocation's position on that stream.
    pub(crate) pos: u64,
}

/// Accesses enqueued on a live allocation that may not have run yet (for the stream-order
/// checker): the stream, the position of the operation and its name.
pub(crate) type Pending = Vec<(Arc<StreamShared>, u64, &'static str)>;

/// The cached blocks of one freeing stream, ordered by (size, address).
#[derive(Debug)]
struct Bin {
    stream: u64,
    set: BTreeSet<(u64, u64)>,
}

/// Everything behind the pool lock.
#[derive(Debug)]
pub(crate) struct Blocks {
    pub(crate) stats: PoolStats,
    live: BTreeMap<u64, Live>,
    /// Per live allocation that has had accesses enqueued: those not known to have run.
    pending: HashMap<u64, Pending>,
    cached: BTreeMap<u64, Cached>,
    /// Per freeing stream: its cached blocks ordered by (size, address), for best fit.
    /// A short list searched linearly (a pool sees few streams); emptied bins stay (so the
    /// same-stream cycle of allocate and free neither hashes nor allocates) until they
    /// outnumber the others.
    bins: Vec<Bin>,
    /// How many bins hold blocks.
    nonempty_bins: usize,
    free: BTreeMap<u64, u64>,
    free_by_size: BTreeSet<(u64, u64)>,
}

impl Blocks {
    /// A pool whose whole range `[base, base + size)` is unreserved.
    pub(crate) fn new(base: u64, size: u64) -> Blocks {
        let mut b = Blocks {
            stats: PoolStats::default(),
            live: BTreeMap::new(),
            pending: HashMap::new(),
            cached: BTreeMap::new(),
            bins: Vec::new(),
            nonempty_bins: 0,
            free: BTreeMap::new(),
            free_by_size: BTreeSet::new(),
        };
        b.add_free(base, size);
        b
    }

    /// Rule a: the best cached block freed on `stream`.
    pub(crate) fn same_stream(&self, len: u64, stream: u64) -> Option<u64> {
        self.bin(stream).and_then(|bin| bin.range((len, 0)..).next()).map(|&(_, a)| a)
    }

    /// The best cached block of another stream than `skip` that satisfies `pred`.
    pub(crate) fn best_other(&self, len: u64, skip: u64, pred: impl Fn(&Cached) -> bool) -> Option<u64> {
        let mut best: Option<(u64, u64)> = None;
        for bin in &self.bins {
            if bin.stream == skip {
                continue;
            }
            for &key in bin.set.range((len, 0)..) {
                if best.is_some_and(|b| key >= b) {
                    break;
                }
                if pred(&self.cached[&key.1]) {
                    best = Some(key);
                    break;
                }
            }
        }
        best.map(|b| b.1)
    }

    /// Whether any stream other than `skip` has cached blocks.
    pub(crate) fn has_other_bins(&self, skip: u64) -> bool {
        self.nonempty_bins > usize::from(self.bin(skip).is_some_and(|b| !b.is_empty()))
    }

    /// Rules b-e, in order, for an allocation of `len` on stream `b` whose clock is
    /// `clock` (needed only for rule c).
    pub(crate) fn cross_stream(
        &self,
        len: u64,
        b: u64,
        flags: [bool; 3],
        clock: Option<&Clock>,
    ) -> Option<(ReuseRule, u64)> {
        if let Some(a) = self.best_other(len, b, |c| c.stream.host_known() >= c.pos) {
            return Some((ReuseRule::KnownComplete, a));
        }
        if let (true, Some(clock)) = (flags[0], clock) {
            if let Some(a) = self.best_other(len, b, |c| clock.get(c.stream.id) >= c.pos) {
                return Some((ReuseRule::EventDependency, a));
            }
        }
        if flags[1] {
            if let Some(a) = self.best_other(len, b, Cached::executed) {
                return Some((ReuseRule::Opportunistic, a));
            }
        }
        if flags[2] {
            if let Some(a) = self.best_other(len, b, |_| true) {
                return Some((ReuseRule::InternalDependency, a));
            }
        }
        None
    }

    /// Rule f: the best free range of address space.
    pub(crate) fn fresh(&self, len: u64) -> Option<u64> {
        self.free_by_size.range((len, 0)..).next().map(|&(_, a)| a)
    }

    /// Turns the low `len` bytes of the cached block at `addr` into a live allocation;
    /// the rest stays cached with the same tags (moved, not cloned).
    pub(crate) fn take_cached(&mut self, addr: u64, len: u64, owner: (u64, u64)) {
        let c = self.remove_cached(addr);
        if c.len > len {
            self.insert_cached(addr + len, Cached { len: c.len - len, ..c });
        }
        self.make_live(addr, len, owner);
    }

    /// Turns the low `len` bytes of the free range at `addr` into a live allocation.
    /// The caller has committed the memory.
    pub(crate) fn take_fresh(&mut self, addr: u64, len: u64, owner: (u64, u64)) {
        let flen = self.remove_free(addr);
        if flen > len {
            self.add_free(addr + len, flen - len);
        }
        self.stats.reserved_current += len;
        self.stats.reserved_high = self.stats.reserved_high.max(self.stats.reserved_current);
        self.make_live(addr, len, owner);
    }

    fn make_live(&mut self, addr: u64, len: u64, (owner, pos): (u64, u64)) {
        self.live.insert(addr, Live { len, owner, pos });
        self.stats.used_current += len;
        self.stats.used_high = self.stats.used_high.max(self.stats.used_current);
    }

    /// The length of the live allocation starting at `addr`, or why there is none.
    pub(crate) fn live_len(&self, addr: u64) -> Result<u64, &'static str> {
        if let Some(l) = self.live.get(&addr) {
            return Ok(l.len);
        }
        if self.containing_live(addr).is_some() {
            Err("an interior pointer of a live allocation")
        } else if self.cached.contains_key(&addr) || self.containing_cached(addr) {
            Err("already freed (double free)")
        } else {
            Err("not an allocation of this pool")
        }
    }

    /// The live allocation containing `addr`: its start and record.
    pub(crate) fn containing_live(&self, addr: u64) -> Option<(u64, &Live)> {
        self.live.range(..=addr).next_back().filter(|&(&a, l)| addr < a + l.len).map(|(&a, l)| (a, l))
    }

    /// The cached block containing `addr`: its start and tags.
    pub(crate) fn containing_cached_block(&self, addr: u64) -> Option<(u64, &Cached)> {
        self.cached.range(..=addr).next_back().filter(|&(&a, c)| addr < a + c.len).map(|(&a, c)| (a, c))
    }

    /// Notes an access enqueued on `stream` at `pos` to the live allocation at `start`,
    /// dropping notes of accesses that have run.
    pub(crate) fn note_access(&mut self, start: u64, stream: &Arc<StreamShared>, pos: u64, op: &'static str) {
        if self.live.contains_key(&start) {
            let pending = self.pending.entry(start).or_default();
            pending.retain(|(s, p, _)| s.completed() < *p);
            pending.push((Arc::clone(stream), pos, op));
        }
    }

    /// The accesses noted on the live allocation starting at `addr`.
    pub(crate) fn pending_accesses(&self, addr: u64) -> &[(Arc<StreamShared>, u64, &'static str)] {
        self.pending.get(&addr).map_or(&[], Vec::as_slice)
    }

    fn containing_cached(&self, addr: u64) -> bool {
        self.cached.range(..=addr).next_back().is_some_and(|(&a, c)| addr < a + c.len)
    }

    /// Whether `[addr, addr + len)` lies inside one live allocation.
    pub(crate) fn within_live(&self, addr: u64, len: u64) -> bool {
        self.containing_live(addr).is_some_and(|(a, l)| addr.checked_add(len).is_some_and(|end| end <= a + l.len))
    }

    /// Whether `[addr, addr + len)` is reserved memory (live or cached), so committed.
    pub(crate) fn committed(&self, addr: u64, len: u64, base: u64, size: u64) -> bool {
        let Some(end) = addr.checked_add(len) else { return false };
        if addr < base || end > base + size {
            return false;
        }
        self.free.range(..end).next_back().is_none_or(|(&a, &l)| a + l <= addr)
    }

    /// Ends the live allocation at `addr` (checked with [`Blocks::live_len`]) and caches
    /// it with the free's tags, merging with neighbours freed on the same stream.
    pub(crate) fn free(
        &mut self,
        addr: u64,
        len: u64,
        stream: Arc<StreamShared>,
        (pos, dep_real): (u64, u64),
        clock: Arc<Clock>,
    ) {
        self.live.remove(&addr);
        if !self.pending.is_empty() {
            self.pending.remove(&addr);
        }
        self.stats.used_current -= len;
        // A mark is the maximum since the last reset, so a decrease after a reset raises it.
        self.stats.used_high = self.stats.used_high.max(self.stats.used_current);
        // Merged neighbours were freed earlier on the same stream, so this free's clock
        // (the latest) covers theirs.
        let mut block = Cached { len, stream, pos, dep_real, clock };
        let mut start = addr;
        // Both neighbours in one descent: the block at the end (if any), then the one
        // before (`[addr, next)` itself is not cached).
        let next = addr + len;
        let mut near = self.cached.range(..=next).rev().map(|(&a, c)| (a, c.len, c.stream.id));
        let (next_stream, prev) = match near.next() {
            Some((a, _, ns)) if a == next => (Some(ns), near.next()),
            other => (None, other),
        };
        if let Some((pa, plen, ps)) = prev {
            if pa + plen == addr && ps == block.stream.id {
                let p = self.remove_cached(pa);
                start = pa;
                block.len += p.len;
                block.pos = block.pos.max(p.pos);
                block.dep_real = block.dep_real.max(p.dep_real);
            }
        }
        if next_stream == Some(block.stream.id) {
            let n = self.remove_cached(next);
            block.len += n.len;
            block.pos = block.pos.max(n.pos);
            block.dep_real = block.dep_real.max(n.dep_real);
        }
        self.insert_cached(start, block);
    }

    /// Plans a release down to `target` reserved bytes: completed cached blocks, smallest
    /// first (then lowest address), the last one split at `gran`. Returns the low-end
    /// ranges to release; apply each with [`Blocks::release`].
    pub(crate) fn plan_release(&self, target: u64, gran: u64) -> Vec<(u64, u64)> {
        let reserved = self.stats.reserved_current;
        if reserved <= target {
            return Vec::new();
        }
        let mut excess = mempool_hal::round_down(reserved - target, gran);
        if excess == 0 {
            return Vec::new();
        }
        let mut cands: Vec<(u64, u64)> =
            self.cached.iter().filter(|(_, c)| c.executed()).map(|(&a, c)| (c.len, a)).collect();
        cands.sort_unstable();
        let mut plan = Vec::new();
        for (len, addr) in cands {
            if excess == 0 {
                break;
            }
            let take = len.min(excess);
            plan.push((addr, take));
            excess -= take;
        }
        plan
    }

    /// Releases the low `take` bytes of the cached block at `addr` back to the free
    /// address space. The caller decommits the memory.
    pub(crate) fn release(&mut self, addr: u64, take: u64) {
        let c = self.remove_cached(addr);
        if c.len > take {
            self.insert_cached(addr + take, Cached { len: c.len - take, ..c });
        }
        self.stats.reserved_current -= take;
        let mut start = addr;
        let mut len = take;
        if let Some((&pa, &pl)) = self.free.range(..addr).next_back() {
            if pa + pl == addr {
                self.remove_free(pa);
                start = pa;
                len += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(start + len)) {
            self.remove_free(start + len);
            len += nl;
        }
        self.add_free(start, len);
    }

    /// Cached bytes whose free has not executed yet.
    pub(crate) fn pending_cached(&self) -> u64 {
        self.cached.values().filter(|c| !c.executed()).map(|c| c.len).sum()
    }

    /// The largest range of unreserved address space.
    pub(crate) fn largest_free(&self) -> u64 {
        self.free_by_size.last().map_or(0, |&(l, _)| l)
    }

    /// The largest cached block.
    pub(crate) fn largest_cached(&self) -> u64 {
        self.bins.iter().filter_map(|b| b.set.last()).map(|&(l, _)| l).max().unwrap_or(0)
    }

    /// Number of live allocations.
    pub(crate) fn live_count(&self) -> usize {
        self.live.len()
    }

    /// The cached blocks freed on `stream`, if it has a bin.
    fn bin(&self, stream: u64) -> Option<&BTreeSet<(u64, u64)>> {
        self.bins.iter().find(|b| b.stream == stream).map(|b| &b.set)
    }

    fn insert_cached(&mut self, addr: u64, c: Cached) {
        let sid = c.stream.id;
        let i = match self.bins.iter().position(|b| b.stream == sid) {
            Some(i) => i,
            None => {
                if self.bins.len() >= 2 * self.nonempty_bins + 16 {
                    self.bins.retain(|b| !b.set.is_empty());
                }
                self.bins.push(Bin { stream: sid, set: BTreeSet::new() });
                self.bins.len() - 1
            }
        };
        let bin = &mut self.bins[i].set;
        if bin.is_empty() {
            self.nonempty_bins += 1;
        }
        bin.insert((c.len, addr));
        self.cached.insert(addr, c);
    }

    fn remove_cached(&mut self, addr: u64) -> Cached {
        let c = self.cached.remove(&addr).expect("cached block exists");
        let sid = c.stream.id;
        let bin = &mut self.bins.iter_mut().find(|b| b.stream == sid).expect("bin of a cached block exists").set;
        bin.remove(&(c.len, addr));
        if bin.is_empty() {
            self.nonempty_bins -= 1;
        }
        c
    }

    fn add_free(&mut self, addr: u64, len: u64) {
        self.free.insert(addr, len);
        self.free_by_size.insert((len, addr));
    }

    fn remove_free(&mut self, addr: u64) -> u64 {
        let len = self.free.remove(&addr).expect("free range exists");
        self.free_by_size.remove(&(len, addr));
        len
    }

    /// Checks the structure's invariants (tests and debug builds).
    #[cfg(test)]
    pub(crate) fn check(&self, base: u64, size: u64) {
        let mut ranges: Vec<(u64, u64, char)> = Vec::new();
        ranges.extend(self.live.iter().map(|(&a, l)| (a, l.len, 'L')));
        ranges.extend(self.cached.iter().map(|(&a, c)| (a, c.len, 'C')));
        ranges.extend(self.free.iter().map(|(&a, &l)| (a, l, 'F')));
        ranges.sort_unstable();
        let mut at = base;
        for &(a, l, _) in &ranges {
            assert_eq!(a, at, "ranges tile the pool without gaps or overlaps");
            at += l;
        }
        assert_eq!(at, base + size);
        let used: u64 = self.live.values().map(|l| l.len).sum();
        let cached: u64 = self.cached.values().map(|c| c.len).sum();
        assert_eq!(self.stats.used_current, used);
        assert_eq!(self.stats.reserved_current, used + cached);
        for w in ranges.windows(2) {
            assert!(!(w[0].2 == 'F' && w[1].2 == 'F'), "free neighbours are merged");
        }
        assert!(self.pending.keys().all(|a| self.live.contains_key(a)), "pending accesses belong to live allocations");
        assert_eq!(self.nonempty_bins, self.bins.iter().filter(|b| !b.set.is_empty()).count());
        assert_eq!(
            self.bins.iter().map(|b| b.set.len()).sum::<usize>(),
            self.cached.len(),
            "bins index every cached block"
        );
        for (&a, c) in &self.cached {
            assert!(
                self.bin(c.stream.id).is_some_and(|b| b.contains(&(c.len, a))),
                "a cached block is in its stream's bin"
            );
        }
    }
}

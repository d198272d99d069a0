//! One pool's state ([`PoolShared`]), shared by its handles, the registry and queued work:
//! allocation, the stream-ordered free, release, trim and attributes.

use super::blocks::Blocks;
use super::budget::DeviceMemory;
use super::lanes::Lanes;
use super::mapping::{Commits, Mapping};
use super::pins::Pins;
use super::records::SYNC_OWNER;
use super::reuse::{Choice, ReuseCounts, ReuseRule, Rules, choose};
use crate::clock::{Clock, HostClock};
use crate::stream::{StreamShared, lock};
use crate::sync::{Arc, AtomicBool, AtomicU32, Condvar, Instant, Mutex, MutexGuard, Ordering, PoisonError};
use mempool_hal::attr::{AttrId, AttrRole, AttrWrite};
use mempool_hal::{
    DevicePtr, Error, ErrorKind, OomInfo, PoolCall, PoolStats, Profile, RawAttrValue, Result, ReuseFlags, code,
    round_up,
};
use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::time::Duration;

/// A pool's state: a slow path's alone ([`PoolShared::state`]), parts of it a stream's
/// fast path's (`lanes.rs`).
pub(crate) struct PoolState {
    pub(crate) blocks: Blocks,
    /// Which chunks of the mapping are accessible.
    commits: Commits,
    /// Reuse flags, attributes 1-3.
    pub(crate) flags: ReuseFlags,
    /// The reuse rules the flags and the profile allow (`reuse.rs`), kept with `flags`.
    rules: Rules,
    /// cann-open: the pool was destroyed and its memory given back at once
    /// ([`PoolShared::give_back`]); work that still touches it fails.
    given_back: bool,
    /// The ranges copies, memsets and kernels are touching now, without the lock
    /// ([`PoolShared::with_memory`]): never released, never given back.
    pins: Pins,
    pub(crate) threshold: u64,
    pub(crate) counts: ReuseCounts,
}

/// One pool's state, shared by its handles, the platform's registry and queued copies.
pub(crate) struct PoolShared {
    pub(crate) id: u64,
    pub(crate) device: u32,
    pub(crate) platform: u64,
    pub(crate) base: u64,
    pub(crate) size: u64,
    gran: u64,
    mapping: Mapping,
    /// The slow paths' lock ([`PoolShared::state`]).
    global: Mutex<()>,
    /// Signalled when a pin goes while someone waits for it (`PoolState::pins`).
    unpinned: Condvar,
    /// The streams' fast paths (`lanes.rs`).
    lanes: Lanes,
    state: UnsafeCell<PoolState>,
    destroyed: AtomicBool,
    pub(crate) settings: PoolSettings,
}

/// What a pool takes from its platform's configuration.
#[derive(Debug, Clone)]
pub(crate) struct PoolSettings {
    pub(crate) faults: Arc<Faults>,
    pub(crate) wait_timeout: Duration,
    pub(crate) checker: bool,
    /// The checker's race mode (only with `checker`).
    pub(crate) races: bool,
    /// What the host has observed (the checker's clock for synchronous host accesses).
    pub(crate) host: Arc<HostClock>,
    /// The pools' behaviour (contract §12).
    pub(crate) profile: Profile,
    /// The memory of the pool's device, which its fresh reservations draw on (contract §2).
    pub(crate) memory: Arc<DeviceMemory>,
}

/// Faults injected into a platform, for tests of failure paths.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    /// How many of the next host-memory commits fail.
    pub(crate) commit_failures: AtomicU32,
}

impl Faults {
    pub(crate) fn take_commit_failure(&self) -> bool {
        self.commit_failures.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok()
    }
}

// SAFETY: the state cell is reached only through a `StateGuard` (the pool's lock held
// and every fast path shut out) or by a fast path holding its stream's lane, which
// writes only what its stream owns (`lanes.rs`, `blocks.rs`): no data race. Everything
// else in the pool is `Sync` by itself.
unsafe impl Sync for PoolShared {}

/// A slow path's hold on a pool: its lock, with every fast path shut out
/// ([`PoolShared::state`]); lets them in again when dropped.
pub(crate) struct StateGuard<'a> {
    pool: &'a PoolShared,
    /// `None` only while waiting for a pin to go ([`PoolShared::wait_unpinned`]).
    lock: Option<MutexGuard<'a, ()>>,
}

impl Deref for StateGuard<'_> {
    type Target = PoolState;
    fn deref(&self) -> &PoolState {
        // SAFETY: the guard holds the pool's lock and every fast path is shut out.
        unsafe { &*self.pool.state.get() }
    }
}

impl DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut PoolState {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { &mut *self.pool.state.get() }
    }
}

impl StateGuard<'_> {
    /// Lets the fast paths in again, with the headroom below USED_HIGH to share; they run
    /// only while USED_HIGH is at least USED (`lanes.rs`).
    fn open_lanes(&self) {
        let s = &self.blocks.stats;
        self.pool.lanes.leave(s.used_high.checked_sub(s.used_current));
    }
}

impl Drop for StateGuard<'_> {
    fn drop(&mut self) {
        if self.lock.is_some() {
            self.open_lanes();
        }
        // The lock goes after this, with the field.
    }
}

impl fmt::Debug for PoolShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("id", &self.id)
            .field("device", &self.device)
            .field("base", &format_args!("{:#x}", self.base))
            .field("size", &self.size)
            .finish()
    }
}

/// The reuse flags of a new pool: CUDA turns all three on, Ascend none (contract §3).
fn initial_flags(profile: Profile) -> ReuseFlags {
    if profile.reuse_flags_on_at_creation() { ReuseFlags::ALL } else { ReuseFlags::NONE }
}

impl PoolShared {
    /// Reserves the address range of a pool of `size` bytes.
    pub(crate) fn create(
        id: u64,
        device: u32,
        platform: u64,
        size: u64,
        gran: u64,
        settings: PoolSettings,
    ) -> Result<PoolShared> {
        let mapping = Mapping::reserve(size, gran).map_err(|e| {
            Error::new(
                ErrorKind::HostAllocation,
                code::ACL_ERROR_RT_MEMORY_ALLOCATION,
                "create_pool",
                format!("cannot reserve {size} bytes of address space: {e}"),
            )
        })?;
        let base = mapping.base();
        let blocks = Blocks::new(base, size, gran).ok_or_else(|| {
            Error::new(
                ErrorKind::HostAllocation,
                code::ACL_ERROR_RT_MEMORY_ALLOCATION,
                "create_pool",
                format!("cannot allocate the index of a {size}-byte pool at granularity {gran}"),
            )
        })?;
        Ok(PoolShared {
            id,
            device,
            platform,
            base,
            size,
            gran,
            mapping,
            global: Mutex::new(()),
            lanes: Lanes::new(),
            state: UnsafeCell::new(PoolState {
                blocks,
                commits: Commits::new(size, gran),
                flags: initial_flags(settings.profile),
                rules: Rules::new(settings.profile, initial_flags(settings.profile)),
                given_back: false,
                pins: Pins::default(),
                threshold: 0,
                counts: ReuseCounts::default(),
            }),
            unpinned: Condvar::new(),
            destroyed: AtomicBool::new(false),
            settings,
        })
    }

    /// Commits host memory for a fresh block (or fails as injected).
    fn commit(&self, commits: &mut Commits, addr: u64, len: u64) -> std::io::Result<()> {
        if self.settings.faults.take_commit_failure() {
            return Err(std::io::Error::other("injected commit failure"));
        }
        commits.commit(&self.mapping, addr, len)
    }

    /// Locks the pool's state: the pool's lock, then every fast path shut out and what
    /// they changed folded into the counters (`lanes.rs`). Taken before any stream's
    /// state; the pools of one operation are locked by id (`access::with_locked`).
    pub(crate) fn state(&self) -> StateGuard<'_> {
        let lock = lock(&self.global);
        self.exclude_lanes();
        StateGuard { pool: self, lock: Some(lock) }
    }

    /// Shuts the fast paths out (the pool's lock is held) and folds their changes.
    fn exclude_lanes(&self) {
        self.lanes.exclude();
        let f = self.lanes.fold();
        // SAFETY: the pool's lock is held and every fast path is shut out: this is the
        // only reference to the state.
        let state = unsafe { &mut *self.state.get() };
        state.blocks.fold(f.used, f.live, f.nonempty);
        state.counts.same_stream += f.same_stream;
    }

    /// Marks the pool destroyed; `false` if it already was. What it reserved no longer
    /// counts against its device (contract §2): a destroyed pool reserves nothing more and
    /// releases nothing (both check the mark under the lock taken here).
    pub(crate) fn mark_destroyed(&self) -> bool {
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return false;
        }
        let state = self.state();
        self.settings.memory.unreserve(state.blocks.stats.reserved_current);
        true
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }

    /// Whether `addr` lies in this pool's range.
    pub(crate) fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.size
    }

    /// Bytes reserved now (tests: the device's counter is their sum over its pools).
    #[cfg(test)]
    pub(crate) fn reserved(&self) -> u64 {
        self.state().blocks.stats.reserved_current
    }

    /// Allocates `size` bytes in stream order on `s`; with `sync`, a synchronous
    /// allocation (as `aclrtMalloc`): served by the same rules, but the caller waits for
    /// `s` to finish what it has queued, and the block is ordered before everything
    /// enqueued afterwards on any stream.
    pub(crate) fn malloc(&self, size: u64, s: &Arc<StreamShared>, sync: bool) -> Result<(DevicePtr, ReuseRule)> {
        const OP: &str = "malloc_async";
        if s.device != self.device {
            return Err(Error::new(
                ErrorKind::WrongContext,
                code::ACL_ERROR_RT_STREAM_CONTEXT,
                OP,
                format!("stream {} is on device {}, the pool on device {}", s.id, s.device, self.device),
            ));
        }
        if size == 0 {
            return Err(Error::invalid_param(OP, "size 0"));
        }
        let len = round_up(size, self.gran)
            .ok_or_else(|| Error::invalid_param(OP, format!("size {size} overflows when rounded")))?;
        if !sync && let Some(addr) = self.fast_malloc(len, s) {
            return Ok((DevicePtr::from_addr(addr), ReuseRule::SameStream));
        }
        let mut guard = self.state();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, format_args!("pool {}", self.id)));
        }
        let state = &mut *guard;
        let owner = |pos: u64| if sync { (SYNC_OWNER, 0) } else { (s.id, pos) };
        let (rule, addr) = match choose(&state.blocks, len, s, state.rules, self.settings.wait_timeout)? {
            Choice::Cached(rule, block) => {
                let pos = s.alloc_position()?;
                (rule, state.blocks.take_cached(block, len, owner(pos)))
            }
            Choice::Fresh(block) => {
                let addr = state.blocks.addr(block);
                let pos = s.alloc_position()?;
                // The device's memory, summed over its pools (contract §2): the only
                // place an allocation touches it (reuse reserves nothing).
                if let Err(free) = self.settings.memory.reserve(len) {
                    let err = self.oom(OP, &state.blocks, len, Some(free));
                    let msg = format!("device {}: {}", self.device, err.message());
                    return Err(err.with_message(msg));
                }
                if let Err(e) = self.commit(&mut state.commits, addr, len) {
                    self.settings.memory.unreserve(len);
                    let err = self.oom(OP, &state.blocks, len, None);
                    let msg = format!("host memory commit failed ({e}); {}", err.message());
                    return Err(err.with_message(msg));
                }
                (ReuseRule::Fresh, state.blocks.take_fresh(block, len, owner(pos)))
            }
            Choice::Exhausted => return Err(self.oom(OP, &state.blocks, len, None)),
        };
        state.counts.bump(rule);
        self.lanes.assign(s.id);
        drop(guard);
        if sync {
            // Complete when the call returns: what the block waits for (an inserted wait,
            // earlier work of `s`) has run.
            s.drain(self.settings.wait_timeout, "malloc")?;
        }
        Ok((DevicePtr::from_addr(addr), rule))
    }

    /// The out-of-memory error of a request of `len` bytes; `device_free`: the device,
    /// not the pool, is full, with that much left to reserve.
    fn oom(&self, op: &'static str, blocks: &Blocks, len: u64, device_free: Option<u64>) -> Error {
        Error::out_of_memory(
            op,
            OomInfo {
                requested: len,
                stats: blocks.stats,
                pool_size: self.size,
                largest_free_range: blocks.largest_free(),
                largest_cached_block: blocks.largest_cached(),
                device_free,
            },
        )
    }

    /// The same-stream allocation on `s`'s lane (`lanes.rs`): rule a's best fit when it
    /// is a whole block of `len` bytes and the lane may take the bytes back. `None`:
    /// nothing changed, the slow path decides.
    fn fast_malloc(&self, len: u64, s: &StreamShared) -> Option<u64> {
        let lane = self.lanes.enter(s.id)?;
        if self.is_destroyed() || !lane.may_add(len) {
            return None;
        }
        // SAFETY: the lane is held, so no slow path is in: the state is only read here,
        // except what `s` owns, which `fast_take` writes (the ownership rule of `Blocks`).
        let state = unsafe { &*self.state.get() };
        if !state.rules.has_same_stream() {
            return None;
        }
        let pos = s.alloc_position().ok()?;
        let addr = state.blocks.fast_take(len, s.id, pos, &lane)?;
        lane.bump_same_stream();
        lane.served();
        Some(addr)
    }

    /// The free on `s`'s lane (`lanes.rs`) of a block `s` allocated, when it merges with
    /// nothing and the checker has no access noted: `None` when the slow path must decide
    /// (nothing changed then).
    fn fast_free(&self, addr: u64, s: &StreamShared) -> Option<Result<()>> {
        let lane = self.lanes.enter(s.id)?;
        if self.is_destroyed() || s.device != self.device {
            return None;
        }
        // SAFETY: as in `fast_malloc`.
        let state = unsafe { &*self.state.get() };
        let target = state.blocks.fast_free_target(addr, s.id)?;
        // The checker's rule holds: the same stream, and no access noted (`check_free`).
        // A block that holds the stream's clock already takes its marker without the
        // stream's lock (`stream/published.rs`); otherwise under it.
        let done = if let Some(marker) = s.fast_marker(state.blocks.clock_of(target)) {
            state.blocks.fast_cache(target, s, marker, None, &lane);
            Ok(())
        } else {
            let mut st = s.state();
            let marker = s.marker_locked(&mut st);
            if let Ok(marker) = marker {
                state.blocks.fast_cache(target, s, marker, Some(st.clock()), &lane);
            }
            marker.map(|_| ())
        };
        lane.served();
        Some(done)
    }

    /// Frees `addr` in stream order on `s`.
    pub(crate) fn free_async(self: &Arc<Self>, addr: u64, s: &Arc<StreamShared>) -> Result<()> {
        const OP: &str = "free_async";
        let deferred = self.settings.checker && s.has_open_waits();
        if !deferred && let Some(done) = self.fast_free(addr, s) {
            return done;
        }
        let mut state = self.state();
        if self.is_destroyed() {
            return Err(Error::invalid_pointer(OP, format!("{addr:#x} belongs to a destroyed pool")));
        }
        if s.device != self.device {
            // As CANN answers a stream of another context; the block would otherwise be
            // tagged with a stream that no synchronization of the pool's device observes.
            return Err(Error::new(
                ErrorKind::WrongContext,
                code::ACL_ERROR_RT_STREAM_CONTEXT,
                OP,
                format!("stream {} is on device {}, the pool of {addr:#x} on device {}", s.id, s.device, self.device),
            ));
        }
        let (block, _) =
            state.blocks.live_block(addr).map_err(|why| Error::invalid_pointer(OP, format!("{addr:#x} is {why}")))?;
        let mut st = s.state();
        if deferred && !st.open_waits().is_empty() {
            // Behind a wait whose order is not known yet (`stream.rs`, `OpenWait`): the
            // free is work of the stream, done (and checked) when the stream reaches it,
            // with the order the wait gave. The block stays allocated until then.
            let (pool, me) = (Arc::clone(self), Arc::clone(s));
            s.push_locked(&mut st, Box::new(move || pool.free_when_reached(addr, &me)))?;
            return Ok(());
        }
        if self.settings.checker {
            self.check_free(&state.blocks, block, addr, s, st.clock())?;
        }
        let marker = s.marker_locked(&mut st)?;
        state.blocks.cache(block, s, marker, st.clock());
        self.lanes.assign(s.id);
        Ok(())
    }

    /// The deferred free of [`PoolShared::free_async`], on the stream's worker: the same
    /// checks and caching, with the stream's order as it is now.
    fn free_when_reached(&self, addr: u64, s: &Arc<StreamShared>) -> Result<()> {
        const OP: &str = "free_async";
        let mut state = self.state();
        if self.is_destroyed() {
            return Err(Error::invalid_pointer(OP, format!("{addr:#x} belongs to a destroyed pool")));
        }
        let (block, _) =
            state.blocks.live_block(addr).map_err(|why| Error::invalid_pointer(OP, format!("{addr:#x} is {why}")))?;
        let mut st = s.state();
        self.check_free(&state.blocks, block, addr, s, st.clock())?;
        let marker = s.marker_locked(&mut st)?;
        state.blocks.cache(block, s, marker, st.clock());
        self.lanes.assign(s.id);
        Ok(())
    }

    fn release_locked(&self, state: &mut PoolState, target: u64) {
        // A block that overlaps a pinned range (a copy is touching it now) stays.
        let pins = &state.pins;
        let plan = state.blocks.plan_release(target, |addr, len| pins.overlaps(addr, len));
        if plan.is_empty() {
            return;
        }
        let mut released = 0;
        for (block, addr, take) in plan {
            // A failed decommit leaves pages resident but the range is still returned
            // to the address space: bookkeeping stays exact.
            let _ = state.commits.decommit(&self.mapping, addr, take);
            state.blocks.release(block, take);
            released += take;
        }
        self.settings.memory.unreserve(released);
        // A mark is the maximum since the last reset: a release after a reset raises it
        // to what is left (once per release, the value a caller can observe).
        let stats = &mut state.blocks.stats;
        stats.reserved_high = stats.reserved_high.max(stats.reserved_current);
    }

    /// The release at synchronization: down to max(threshold, USED). Not on cann-open
    /// (contract §12), where only `trim_to` releases.
    pub(crate) fn release_at_sync(&self) {
        if !self.settings.profile.releases_at_sync() {
            return;
        }
        let mut state = self.state();
        if self.is_destroyed() {
            return;
        }
        let target = state.threshold.max(state.blocks.stats.used_current);
        self.release_locked(&mut state, target);
    }

    pub(crate) fn trim_to(&self, keep: u64) -> Result<()> {
        const OP: &str = "trim_to";
        let mut state = self.state();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, format_args!("pool {}", self.id)));
        }
        let stats = state.blocks.stats;
        let misuse = |msg: String| Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_INTERNAL_ERROR, OP, msg));
        // CUDA releases what it can and refuses nothing; Ascend refuses both (contract §6).
        let cuda = self.settings.profile.trim_below_used_releases();
        if keep > self.size && !cuda {
            return misuse(format!("{keep} bytes to keep is above the pool size {}", self.size));
        }
        let keep = if cuda { keep.max(stats.used_current) } else { keep };
        if keep < stats.used_current {
            return misuse(format!("{keep} bytes to keep is below USED ({})", stats.used_current));
        }
        if keep >= stats.reserved_current {
            return Ok(());
        }
        self.release_locked(&mut state, keep);
        Ok(())
    }

    pub(crate) fn get_attr(&self, id: AttrId) -> Result<RawAttrValue> {
        let info = id.check_read()?;
        let state = self.state();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool("get_attr", PoolCall::Attribute, format_args!("pool {}", self.id)));
        }
        let s = &state.blocks.stats;
        Ok(match info.role {
            AttrRole::ReuseFlag(flag) => RawAttrValue::U32(u32::from(state.flags.flag(flag))),
            AttrRole::ReleaseThreshold => RawAttrValue::U64(state.threshold),
            AttrRole::Current(counter) => RawAttrValue::U64(counter.current(s)),
            AttrRole::High(counter) => RawAttrValue::U64(counter.high(s)),
        })
    }

    /// The four counters under one lock: a snapshot (contract §7, RESERVED ≥ USED).
    pub(crate) fn stats(&self) -> Result<PoolStats> {
        let state = self.state();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool("get_attr", PoolCall::Attribute, format_args!("pool {}", self.id)));
        }
        Ok(state.blocks.stats)
    }

    pub(crate) fn set_attr(&self, id: AttrId, value: RawAttrValue) -> Result<()> {
        let write = id.check_write(value, self.size)?;
        let mut state = self.state();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool("set_attr", PoolCall::Attribute, format_args!("pool {}", self.id)));
        }
        match write {
            AttrWrite::Flag(flag, on) => {
                state.flags.set_flag(flag, on);
                state.rules = Rules::new(self.settings.profile, state.flags);
            }
            AttrWrite::ReleaseThreshold(t) => state.threshold = t,
            // To 0 on Ascend, to CURRENT on CUDA (contract §3).
            AttrWrite::ResetHigh(counter) => {
                counter.reset_high(&mut state.blocks.stats, self.settings.profile.high_resets_to_current());
            }
        }
        Ok(())
    }

    /// cann-open (contract §12): a destroy does not wait for queued work. Gives every page
    /// of the destroyed pool back now and makes its range inaccessible; work queued before
    /// the destroy that touches the pool fails when it runs ([`PoolShared::with_memory`]).
    /// The address range stays reserved until the pool's last reference goes, then joins
    /// the quarantine (`mapping.rs`).
    ///
    /// Work touching the pool now (a pinned range) finishes first: no new pin is taken
    /// once `given_back` is set, and this waits for the last one to go (up to the wait
    /// timeout; past it the memory stays until the pool's last reference goes).
    pub(crate) fn give_back(&self) {
        let mut state = self.state();
        state.given_back = true;
        let deadline = Instant::now() + self.settings.wait_timeout;
        while !state.pins.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self.wait_unpinned(state, left);
        }
        // A failed system call leaves pages resident or accessible, never reachable:
        // every access checks `given_back` under this lock first.
        let _ = state.commits.decommit_all(&self.mapping);
    }

    /// Waits (up to `left`) for a pin to go, letting the lock go meanwhile.
    fn wait_unpinned<'a>(&'a self, mut state: StateGuard<'a>, left: Duration) -> StateGuard<'a> {
        state.pins.waiters += 1;
        state.open_lanes();
        let lock = state.lock.take().expect("a guard holds the lock");
        let lock = self.unpinned.wait_timeout(lock, left).unwrap_or_else(PoisonError::into_inner).0;
        self.exclude_lanes();
        state.lock = Some(lock);
        state.pins.waiters -= 1;
        state
    }

    /// Whether `[addr, addr + len)` lies inside one live allocation.
    pub(crate) fn is_live(&self, addr: u64, len: u64) -> bool {
        !self.is_destroyed() && self.state().blocks.within_live(addr, len)
    }

    /// The checker's rule for frees (contract §11): the free must be ordered after the
    /// block's allocation and after every access to it enqueued before, on any stream,
    /// whether or not that work has run.
    fn check_free(
        &self,
        blocks: &Blocks,
        block: super::blocks::BlockId,
        addr: u64,
        s: &StreamShared,
        clock: &Clock,
    ) -> Result<()> {
        let live = blocks.live_record(block);
        let host = &self.settings.host;
        if !live.ordered_before(Some(s.id), Some(clock), host) {
            return Err(Error::stream_order_violation(
                "free_async",
                format!(
                    "free_async on stream {sid} of {addr:#x}, allocated on stream {owner} after its position {pos}, \
                     but stream {sid} is not ordered after that allocation (it is ordered after stream {owner} up to \
                     position {seen}): record an event on stream {owner} after the allocation and make stream {sid} wait for it",
                    sid = s.id,
                    owner = live.owner,
                    pos = live.pos,
                    seen = clock.get(live.owner).max(host.get(live.owner)),
                ),
            ));
        }
        for a in blocks.accesses(addr) {
            if a.stream != s.id && clock.get(a.stream) < a.pos && host.get(a.stream) < a.pos {
                return Err(Error::stream_order_violation(
                    "free_async",
                    format!(
                        "free_async on stream {} of {addr:#x} races with {} on stream {} (its position {}), \
                         which is not ordered before the free (whether it has run does not matter): record an event \
                         on stream {} after that work and make stream {} wait for it, or synchronize stream {}",
                        s.id, a.op, a.stream, a.pos, a.stream, s.id, a.stream
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Runs `f` on the host memory `[addr, addr + len)` (`write`: `f` writes it) if it is
    /// still reserved. The range is pinned under the pool lock, and `f` runs without it:
    /// no release decommits a pinned range and no destroy gives it back, while
    /// allocations, frees and statistics on the pool go on. A pin that overlaps another
    /// one, either writing, waits for it first (bounded by the wait timeout).
    pub(crate) fn with_memory<R>(
        &self,
        addr: u64,
        len: u64,
        write: bool,
        op: &'static str,
        f: impl FnOnce(*mut u8) -> R,
    ) -> Result<R> {
        let mut state = self.state();
        let deadline = Instant::now() + self.settings.wait_timeout;
        loop {
            self.check_memory(&state, addr, len, op)?;
            if !state.pins.conflicts(addr, len, write) {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::new(
                    ErrorKind::Internal,
                    code::ACL_ERROR_RT_INTERNAL_ERROR,
                    op,
                    format!("[{addr:#x}, +{len}) stayed busy with another copy for {:?}", self.settings.wait_timeout),
                ));
            }
            state = self.wait_unpinned(state, left);
        }
        let pin = state.pins.pin(addr, len, write);
        drop(state);
        let _unpin = PinGuard { pool: self, pin };
        Ok(f(addr as *mut u8))
    }

    /// Whether `[addr, addr + len)` may be touched: the pool was not given back and the
    /// range is reserved.
    fn check_memory(&self, state: &PoolState, addr: u64, len: u64, op: &'static str) -> Result<()> {
        if state.given_back {
            return Err(Error::invalid_pointer(
                op,
                format!(
                    "[{addr:#x}, +{len}): its pool {} was destroyed before the work ran, and on the cann-open \
                     profile a destroy does not wait for queued work (its memory was given back at once)",
                    self.id
                ),
            ));
        }
        if !state.blocks.committed(addr, len, self.base, self.size) {
            return Err(Error::invalid_pointer(op, format!("[{addr:#x}, +{len}) was released before the work ran")));
        }
        Ok(())
    }

    /// Pinned ranges now (tests).
    #[cfg(test)]
    pub(crate) fn has_pins(&self) -> bool {
        !self.state().pins.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.state().blocks.check(self.base, self.size);
    }
}

/// Unpins a range when the work on it is done (or panicked).
struct PinGuard<'a> {
    pool: &'a PoolShared,
    pin: u64,
}

impl Drop for PinGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.pool.state();
        state.pins.unpin(self.pin);
        if state.pins.waiters > 0 {
            self.pool.unpinned.notify_all();
        }
    }
}

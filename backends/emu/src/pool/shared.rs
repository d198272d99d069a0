//! One pool's state ([`PoolShared`]), shared by its handles, the registry and queued work:
//! allocation, the stream-ordered free, release, trim and attributes.

use super::blocks::Blocks;
use super::mapping::{Commits, Mapping};
use crate::ReuseRule;
use crate::clock::Clock;
use crate::stream::{StreamShared, lock};
use mempool_hal::attr::{AttrId, AttrWrite};
use mempool_hal::{DevicePtr, Error, ErrorKind, OomInfo, PoolCall, RawAttrValue, Result, code, round_up};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How many allocations each reuse rule served, in rule order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReuseCounts {
    /// Rule a: same stream.
    pub same_stream: u64,
    /// Rule b: free observed complete by the host.
    pub known_complete: u64,
    /// Rule c: free ordered before through events.
    pub event_dependency: u64,
    /// Rule d: free already executed.
    pub opportunistic: u64,
    /// Rule e: the pool inserted a wait.
    pub internal_dependency: u64,
    /// Rule f: fresh address space.
    pub fresh: u64,
}

impl ReuseCounts {
    fn bump(&mut self, rule: ReuseRule) {
        match rule {
            ReuseRule::SameStream => self.same_stream += 1,
            ReuseRule::KnownComplete => self.known_complete += 1,
            ReuseRule::EventDependency => self.event_dependency += 1,
            ReuseRule::Opportunistic => self.opportunistic += 1,
            ReuseRule::InternalDependency => self.internal_dependency += 1,
            ReuseRule::Fresh => self.fresh += 1,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) blocks: Blocks,
    /// Which chunks of the mapping are accessible.
    commits: Commits,
    /// Reuse flags 1-3.
    pub(crate) flags: [bool; 3],
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
    inner: Mutex<Inner>,
    destroyed: AtomicBool,
    pub(crate) env: PoolEnv,
}

/// What a pool takes from its platform's configuration.
#[derive(Debug, Clone)]
pub(crate) struct PoolEnv {
    pub(crate) faults: Arc<Faults>,
    pub(crate) wait_timeout: Duration,
    pub(crate) checker: bool,
}

/// Faults injected into a platform, for tests of failure paths.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    /// How many of the next host-memory commits fail.
    pub(crate) commit_failures: AtomicU32,
}

impl Faults {
    fn take_commit_failure(&self) -> bool {
        self.commit_failures.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok()
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

impl PoolShared {
    /// Reserves the address range of a pool of `size` bytes.
    pub(crate) fn create(
        id: u64,
        device: u32,
        platform: u64,
        size: u64,
        gran: u64,
        env: PoolEnv,
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
            inner: Mutex::new(Inner {
                blocks,
                commits: Commits::new(size, gran),
                flags: [false; 3],
                threshold: 0,
                counts: ReuseCounts::default(),
            }),
            destroyed: AtomicBool::new(false),
            env,
        })
    }

    /// Commits host memory for a fresh block (or fails as injected).
    fn commit(&self, commits: &mut Commits, addr: u64, len: u64) -> std::io::Result<()> {
        if self.env.faults.take_commit_failure() {
            return Err(std::io::Error::other("injected commit failure"));
        }
        commits.commit(&self.mapping, addr, len)
    }

    pub(crate) fn inner(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Marks the pool destroyed; `false` if it already was.
    pub(crate) fn mark_destroyed(&self) -> bool {
        !self.destroyed.swap(true, Ordering::AcqRel)
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }

    /// Whether `addr` lies in this pool's range.
    pub(crate) fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.size
    }

    /// Bytes reserved now.
    pub(crate) fn reserved(&self) -> u64 {
        self.inner().blocks.stats.reserved_current
    }

    pub(crate) fn malloc(&self, size: u64, s: &Arc<StreamShared>) -> Result<(DevicePtr, ReuseRule)> {
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
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, format_args!("pool {}", self.id)));
        }
        let inner = &mut *inner;
        let b = s.id;
        let mut choice = inner.blocks.same_stream(len, b).map(|a| (ReuseRule::SameStream, a));
        if choice.is_none() && inner.blocks.has_other_bins(b) {
            // Rules b-e read (and rule e extends) the stream's clock.
            let mut st = s.state();
            choice = inner.blocks.cross_stream(len, b, inner.flags, Some(&st.clock));
            if let Some((ReuseRule::InternalDependency, block)) = choice {
                let (src, tags) = inner.blocks.cached_tags(block);
                let clock = Arc::make_mut(&mut st.clock);
                clock.merge(&tags.clock);
                clock.raise(src.id, tags.pos);
                if src.completed() < tags.dep_real {
                    let (target, timeout) = (tags.dep_real, self.env.wait_timeout);
                    s.push_locked(&mut st, Box::new(move || src.wait_for_work(target, timeout)))?;
                }
            }
        }
        let (rule, addr) = match choice {
            Some((rule, block)) => {
                let pos = s.alloc_position()?;
                (rule, inner.blocks.take_cached(block, len, (b, pos)))
            }
            None => {
                let Some(block) = inner.blocks.fresh(len) else {
                    return Err(self.oom(OP, &inner.blocks, len));
                };
                let addr = inner.blocks.addr(block);
                let pos = s.alloc_position()?;
                if let Err(e) = self.commit(&mut inner.commits, addr, len) {
                    let err = self.oom(OP, &inner.blocks, len);
                    let msg = format!("host memory commit failed ({e}); {}", err.message());
                    return Err(err.with_message(msg));
                }
                (ReuseRule::Fresh, inner.blocks.take_fresh(block, len, (b, pos)))
            }
        };
        inner.counts.bump(rule);
        Ok((DevicePtr::from_addr(addr), rule))
    }

    fn oom(&self, op: &'static str, blocks: &Blocks, len: u64) -> Error {
        Error::out_of_memory(
            op,
            OomInfo {
                requested: len,
                stats: blocks.stats,
                pool_size: self.size,
                largest_free_range: blocks.largest_free(),
                largest_cached_block: blocks.largest_cached(),
            },
        )
    }

    /// Frees `addr` in stream order on `s`.
    pub(crate) fn free_async(&self, addr: u64, s: &Arc<StreamShared>) -> Result<()> {
        const OP: &str = "free_async";
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(Error::invalid_pointer(OP, format!("{addr:#x} belongs to a destroyed pool")));
        }
        let (block, _) =
            inner.blocks.live_block(addr).map_err(|why| Error::invalid_pointer(OP, format!("{addr:#x} is {why}")))?;
        let mut st = s.state();
        if self.env.checker {
            self.check_free_races(&inner.blocks, addr, s, &st.clock)?;
        }
        let marker = s.marker_locked(&mut st)?;
        inner.blocks.free(block, s, marker, &st.clock);
        Ok(())
    }

    fn release_locked(&self, inner: &mut Inner, target: u64) {
        let plan = inner.blocks.plan_release(target);
        if plan.is_empty() {
            return;
        }
        for (block, addr, take) in plan {
            // A failed decommit leaves pages resident but the range is still returned
            // to the address space: bookkeeping stays exact.
            let _ = inner.commits.decommit(&self.mapping, addr, take);
            inner.blocks.release(block, take);
        }
        // A mark is the maximum since the last reset: a release after a reset raises it
        // to what is left (once per release, the value a caller can observe).
        let stats = &mut inner.blocks.stats;
        stats.reserved_high = stats.reserved_high.max(stats.reserved_current);
    }

    /// The release at synchronization: down to max(threshold, USED).
    pub(crate) fn release_at_sync(&self) {
        let mut inner = self.inner();
        if self.is_destroyed() {
            return;
        }
        let target = inner.threshold.max(inner.blocks.stats.used_current);
        self.release_locked(&mut inner, target);
    }

    pub(crate) fn trim_to(&self, keep: u64) -> Result<()> {
        const OP: &str = "trim_to";
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool(OP, PoolCall::Lifetime, format_args!("pool {}", self.id)));
        }
        let stats = inner.blocks.stats;
        let misuse = |msg: String| Err(Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_INTERNAL_ERROR, OP, msg));
        if keep > self.size {
            return misuse(format!("{keep} bytes to keep is above the pool size {}", self.size));
        }
        if keep < stats.used_current {
            return misuse(format!("{keep} bytes to keep is below USED ({})", stats.used_current));
        }
        if keep >= stats.reserved_current {
            return Ok(());
        }
        self.release_locked(&mut inner, keep);
        Ok(())
    }

    pub(crate) fn get_attr(&self, id: AttrId) -> Result<RawAttrValue> {
        id.check_read()?;
        let inner = self.inner();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool("get_attr", PoolCall::Attribute, format_args!("pool {}", self.id)));
        }
        let s = inner.blocks.stats;
        Ok(match id.0 {
            1..=3 => RawAttrValue::U32(u32::from(inner.flags[id.0 as usize - 1])),
            4 => RawAttrValue::U64(inner.threshold),
            5 => RawAttrValue::U64(s.reserved_current),
            6 => RawAttrValue::U64(s.reserved_high),
            7 => RawAttrValue::U64(s.used_current),
            _ => RawAttrValue::U64(s.used_high),
        })
    }

    pub(crate) fn set_attr(&self, id: AttrId, value: RawAttrValue) -> Result<()> {
        let write = id.check_write(value, self.size)?;
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(Error::destroyed_pool("set_attr", PoolCall::Attribute, format_args!("pool {}", self.id)));
        }
        match write {
            AttrWrite::Flag(id, on) => inner.flags[id.0 as usize - 1] = on,
            AttrWrite::ReleaseThreshold(t) => inner.threshold = t,
            AttrWrite::ResetHigh(AttrId::RESERVED_MEM_HIGH) => inner.blocks.stats.reserved_high = 0,
            AttrWrite::ResetHigh(_) => inner.blocks.stats.used_high = 0,
        }
        Ok(())
    }

    /// Whether `[addr, addr + len)` lies inside one live allocation.
    pub(crate) fn is_live(&self, addr: u64, len: u64) -> bool {
        !self.is_destroyed() && self.inner().blocks.within_live(addr, len)
    }

    /// The checker's rule for frees: no access to the block may still be pending on
    /// another stream unless it is ordered before the free.
    fn check_free_races(&self, blocks: &Blocks, addr: u64, s: &StreamShared, clock: &Clock) -> Result<()> {
        for (other, pos, what) in blocks.pending_accesses(addr) {
            if other.id != s.id && other.completed() < *pos && clock.get(other.id) < *pos {
                return Err(Error::stream_order_violation(
                    "free_async",
                    format!(
                        "free_async on stream {} of {addr:#x} races with {what} still pending on stream {} (its position {pos}), \
                         which is not ordered before the free: record an event on stream {} after that work and make stream {} wait for it",
                        s.id, other.id, other.id, s.id
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Runs `f` on the host memory `[addr, addr + len)` if it is still reserved, holding
    /// the pool lock so no release can decommit it meanwhile.
    pub(crate) fn with_memory<R>(
        &self,
        addr: u64,
        len: u64,
        op: &'static str,
        f: impl FnOnce(*mut u8) -> R,
    ) -> Result<R> {
        let inner = self.inner();
        if !inner.blocks.committed(addr, len, self.base, self.size) {
            return Err(Error::invalid_pointer(op, format!("[{addr:#x}, +{len}) was released before the work ran")));
        }
        let r = f(addr as *mut u8);
        drop(inner);
        Ok(r)
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.inner().blocks.check(self.base, self.size);
    }
}

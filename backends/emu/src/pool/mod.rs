//! The emulated pool: [`EmuPool`] and the [`MemPool`] implementation.

mod blocks;
mod mapping;

use crate::device::{Platform, check_stream};
use crate::stream::{StreamShared, lock};
use crate::{EmuStream, ReuseRule};
use blocks::Blocks;
use mapping::Mapping;
use mempool_hal::attr::{AttrId, AttrWrite};
use mempool_hal::{DevicePtr, Error, ErrorKind, MemPool, OomInfo, RawAttrValue, Result, code, round_up};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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

struct Inner {
    blocks: Blocks,
    /// Reuse flags 1-3.
    flags: [bool; 3],
    threshold: u64,
    counts: ReuseCounts,
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

fn param(op: &'static str, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID, op, msg)
}

fn bad_ptr(op: &'static str, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidPointer, code::ACL_ERROR_RT_PARAM_INVALID, op, msg)
}

impl PoolShared {
    /// Reserves the address range of a pool of `size` bytes.
    pub(crate) fn create(id: u64, device: u32, platform: u64, size: u64, gran: u64) -> Result<PoolShared> {
        let mapping = Mapping::reserve(size, gran).map_err(|e| {
            Error::new(
                ErrorKind::HostAllocation,
                code::ACL_ERROR_RT_MEMORY_ALLOCATION,
                "create_pool",
                format!("cannot reserve {size} bytes of address space: {e}"),
            )
        })?;
        let base = mapping.base();
        Ok(PoolShared {
            id,
            device,
            platform,
            base,
            size,
            gran,
            mapping,
            inner: Mutex::new(Inner {
                blocks: Blocks::new(base, size),
                flags: [false; 3],
                threshold: 0,
                counts: ReuseCounts::default(),
            }),
            destroyed: AtomicBool::new(false),
        })
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Marks the pool destroyed; `false` if it already was.
    pub(crate) fn mark_destroyed(&self) -> bool {
        !self.destroyed.swap(true, Ordering::AcqRel)
    }

    fn is_destroyed(&self) -> bool {
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

    fn malloc(&self, size: u64, s: &Arc<StreamShared>) -> Result<(DevicePtr, ReuseRule)> {
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
            return Err(param(OP, "size 0"));
        }
        let len = round_up(size, self.gran).ok_or_else(|| param(OP, format!("size {size} overflows when rounded")))?;
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(destroyed(OP));
        }
        let inner = &mut *inner;
        let b = s.id;
        let mut choice = inner.blocks.same_stream(len, b).map(|a| (ReuseRule::SameStream, a));
        if choice.is_none() && inner.blocks.has_other_bins(b) {
            choice = if inner.flags[0] {
                let st = s.state();
                inner.blocks.cross_stream(len, b, inner.flags, Some(&st.clock))
            } else {
                inner.blocks.cross_stream(len, b, inner.flags, None)
            };
        }
        let (rule, addr) = match choice {
            Some((rule, addr)) => {
                let tags = inner.blocks.take_cached(addr, len);
                if rule == ReuseRule::InternalDependency {
                    let mut st = s.state();
                    st.clock.raise(tags.stream.id, tags.pos);
                    if tags.stream.completed() < tags.dep_real {
                        let (src, target) = (Arc::clone(&tags.stream), tags.dep_real);
                        s.push_locked(
                            &mut st,
                            Box::new(move || {
                                src.wait_for(target);
                                Ok(())
                            }),
                        );
                    }
                }
                (rule, addr)
            }
            None => {
                let Some(addr) = inner.blocks.fresh(len) else {
                    return Err(self.oom(OP, &inner.blocks, len));
                };
                if let Err(e) = self.mapping.commit(addr, len) {
                    let mut err = self.oom(OP, &inner.blocks, len);
                    err = Error::new(
                        err.kind(),
                        err.code(),
                        OP,
                        format!("host memory commit failed ({e}); {}", err.message()),
                    );
                    return Err(err);
                }
                inner.blocks.take_fresh(addr, len);
                (ReuseRule::Fresh, addr)
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
    pub(crate) fn free(&self, addr: u64, s: &Arc<StreamShared>) -> Result<()> {
        const OP: &str = "free_async";
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(bad_ptr(OP, format!("{addr:#x} belongs to a destroyed pool")));
        }
        let len = inner.blocks.live_len(addr).map_err(|why| bad_ptr(OP, format!("{addr:#x} is {why}")))?;
        let (pos, dep_real) = {
            let mut st = s.state();
            StreamShared::marker_locked(&mut st)
        };
        inner.blocks.free(addr, len, Arc::clone(s), pos, dep_real);
        Ok(())
    }

    fn release_locked(&self, inner: &mut Inner, target: u64) {
        for (addr, take) in inner.blocks.plan_release(target, self.gran) {
            // A failed decommit leaves pages resident but the range is still returned
            // to the address space: bookkeeping stays exact.
            let _ = self.mapping.decommit(addr, take);
            inner.blocks.release(addr, take);
        }
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

    fn trim_to(&self, keep: u64) -> Result<()> {
        const OP: &str = "trim_to";
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(destroyed(OP));
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

    fn get_attr(&self, id: AttrId) -> Result<RawAttrValue> {
        id.check_read()?;
        let inner = self.inner();
        if self.is_destroyed() {
            return Err(destroyed_attr("get_attr"));
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

    fn set_attr(&self, id: AttrId, value: RawAttrValue) -> Result<()> {
        let write = id.check_write(value, self.size)?;
        let mut inner = self.inner();
        if self.is_destroyed() {
            return Err(destroyed_attr("set_attr"));
        }
        match write {
            AttrWrite::Flag(id, on) => inner.flags[id.0 as usize - 1] = on,
            AttrWrite::ReleaseThreshold(t) => inner.threshold = t,
            AttrWrite::ResetHigh(AttrId::RESERVED_MEM_HIGH) => inner.blocks.stats.reserved_high = 0,
            AttrWrite::ResetHigh(_) => inner.blocks.stats.used_high = 0,
        }
        Ok(())
    }

    /// Checks at enqueue time that `[addr, addr + len)` is inside one live allocation.
    pub(crate) fn check_live(&self, addr: u64, len: u64, op: &'static str) -> Result<()> {
        let inner = self.inner();
        if !self.is_destroyed() && inner.blocks.within_live(addr, len) {
            Ok(())
        } else {
            Err(bad_ptr(op, format!("[{addr:#x}, +{len}) is not inside a live allocation")))
        }
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
            return Err(bad_ptr(op, format!("[{addr:#x}, +{len}) was released before the work ran")));
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

fn destroyed(op: &'static str) -> Error {
    Error::new(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_INTERNAL_ERROR, op, "the pool was destroyed")
}

fn destroyed_attr(op: &'static str) -> Error {
    Error::new(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_PARAM_INVALID, op, "the pool was destroyed")
}

/// A pool of the emulator: a cheap handle; clones name the same pool.
#[derive(Clone)]
pub struct EmuPool {
    pub(crate) shared: Arc<PoolShared>,
    pub(crate) platform: Arc<Platform>,
}

impl fmt::Debug for EmuPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.shared, f)
    }
}

impl EmuPool {
    /// Like [`MemPool::malloc_async`], also saying which reuse rule (SPEC.md section 4)
    /// served the allocation.
    ///
    /// # Errors
    ///
    /// As [`MemPool::malloc_async`].
    pub fn malloc_async_traced(&self, size: u64, stream: &EmuStream) -> Result<(DevicePtr, ReuseRule)> {
        let s = check_stream(&self.platform, stream, "malloc_async")?;
        self.shared.malloc(size, s)
    }

    /// Like [`MemPool::free_async`], but safe: the emulator checks every pointer.
    ///
    /// # Errors
    ///
    /// As [`MemPool::free_async`].
    pub fn free(&self, ptr: DevicePtr, stream: &EmuStream) -> Result<()> {
        let s = check_stream(&self.platform, stream, "free_async")?;
        self.platform.free(ptr, s)
    }

    /// How many allocations each reuse rule has served since creation.
    pub fn reuse_counts(&self) -> ReuseCounts {
        self.shared.inner().counts
    }

    /// Number of live allocations.
    pub fn live_allocations(&self) -> usize {
        self.shared.inner().blocks.live_count()
    }

    /// Cached bytes whose free has not executed yet (never released).
    pub fn pending_cached_bytes(&self) -> u64 {
        self.shared.inner().blocks.pending_cached()
    }

    /// The first address of the pool's range.
    pub fn base(&self) -> DevicePtr {
        DevicePtr::from_addr(self.shared.base)
    }
}

impl MemPool for EmuPool {
    type Stream = EmuStream;

    fn malloc_async(&self, size: u64, stream: &EmuStream) -> Result<DevicePtr> {
        self.malloc_async_traced(size, stream).map(|(p, _)| p)
    }

    unsafe fn free_async(&self, ptr: DevicePtr, stream: &EmuStream) -> Result<()> {
        self.free(ptr, stream)
    }

    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()> {
        self.shared.trim_to(min_bytes_to_keep)
    }

    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue> {
        self.shared.get_attr(attr)
    }

    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()> {
        self.shared.set_attr(attr, value)
    }

    fn size(&self) -> u64 {
        self.shared.size
    }
}

#[cfg(test)]
mod tests {
    use crate::{Emulator, ExecutionMode};
    use mempool_hal::{Device, MemPool, MemPoolExt, PoolProps, attr};

    /// Random allocate/free/sync/trim sequences over three streams keep the block
    /// structure exact: live, cached and free ranges tile the pool, free neighbours are
    /// merged, and the counters match the blocks.
    #[test]
    fn random_sequences_keep_the_invariants() {
        const G: u64 = 64 << 10;
        for seed in 1..=20u64 {
            let emu = Emulator::builder()
                .granularity(G)
                .device_memory(64 * G)
                .mode(if seed % 2 == 0 { ExecutionMode::Deferred } else { ExecutionMode::Threaded })
                .build()
                .unwrap();
            let streams: Vec<_> = (0..3).map(|_| emu.create_stream().unwrap()).collect();
            let pool = emu.create_pool(&PoolProps::builder().max_size(48 * G).build()).unwrap();
            pool.set(attr::ReuseAllowOpportunistic, seed % 3 == 0).unwrap();
            pool.set(attr::ReuseAllowInternalDependencies, seed % 5 == 0).unwrap();
            pool.set(attr::ReleaseThreshold, (seed % 4) * 8 * G).unwrap();
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut next = move || {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            };
            let mut live = Vec::new();
            for _ in 0..400 {
                let s = &streams[(next() % 3) as usize];
                match next() % 10 {
                    0..=4 => {
                        if let Ok(p) = pool.malloc_async((next() % (4 * G)) + 1, s) {
                            live.push(p);
                        }
                    }
                    5..=7 if !live.is_empty() => {
                        let p = live.swap_remove((next() as usize) % live.len());
                        pool.free(p, s).unwrap();
                    }
                    8 => emu.synchronize_stream(s).unwrap(),
                    _ => {
                        let used = pool.stats().unwrap().used_current;
                        pool.trim_to(used).unwrap();
                    }
                }
                pool.shared.check_invariants();
            }
            for p in live.drain(..) {
                pool.free(p, &streams[0]).unwrap();
            }
            emu.synchronize_device().unwrap();
            pool.shared.check_invariants();
            let s = pool.stats().unwrap();
            assert_eq!(s.used_current, 0);
            let c = pool.reuse_counts();
            assert!(c.fresh > 10 && c.same_stream + c.known_complete > 10, "the sequence exercised reuse: {c:?}");
            assert!(s.reserved_current <= (seed % 4) * 8 * G, "release at device sync honours the threshold");
        }
    }
}

//! One device's pool, as the library serves it: a pool of the device with the small-block
//! layer over it, the framework's streams, the live allocations with the streams that used
//! them (record-stream), frees waiting for those streams, the memory fraction's cap, and the
//! out-of-memory and stream-order counters. Generic over the backend ([`Backend`]); the
//! exports see it through the object-safe [`Pool`]. Record-stream and the frees waiting
//! for other streams are `record_stream.rs`; the memory fraction's cap and the
//! out-of-memory path (make room, retry once, count) are `oom.rs`.

use crate::config::Settings;
use crate::error::AllocError;
use crate::history::{self, LiveBlock};
use crate::stats::Stats;
use mempool_hal::attr::{ReleaseThreshold, ReservedMemCurrent, ReservedMemHigh, UsedMemCurrent, UsedMemHigh};
use mempool_hal::{Device, DevicePtr, MemPool, MemPoolExt, PoolProps, round_down, round_up};
use mempool_small::SmallBlocks;
use mempool_trace::snapshot::SnapshotAction;
use rustc_hash::FxHashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What a NULL stream means on a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NullStream {
    /// The runtime's own default stream, passed on as it is (CUDA's legacy stream).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Borrowed,
    /// A stream the library creates for the device. `synchronous`: the runtime's pool calls
    /// do not take NULL (Ascend), so an allocation on it is complete when `mempool_alloc`
    /// returns and a free first waits for the device, as for memory of `aclrtMalloc`.
    Own {
        /// Whether the library waits around the NULL stream's allocations and frees.
        synchronous: bool,
    },
}

/// A backend the library can serve a device from.
pub(crate) trait Backend: Device + Sized + 'static
where
    Self::Stream: Eq + Hash,
{
    /// What NULL means.
    const NULL: NullStream;

    /// Whether the runtime has an external-allocator registry ([`Backend::register_allocator`]).
    const ALLOCATOR_REGISTRY: bool = false;

    /// Wraps a framework's raw stream handle, without taking ownership.
    ///
    /// # Safety
    ///
    /// `raw` comes from the framework as its stream handle; the backend hands it to the
    /// runtime, which must know it (the library loads the runtime the framework loaded).
    unsafe fn borrow(&self, raw: usize) -> Result<Self::Stream, AllocError>;

    /// Runs `f` and leaves the calling thread's current device (context) as it was before:
    /// the library is called from the framework's threads, which rely on their own.
    fn preserving<T>(&self, f: impl FnOnce() -> T) -> T {
        f()
    }

    /// Registers `layer` as the external allocator of `stream` in the runtime's registry
    /// (CANN's `aclrtAllocatorRegister`); the value returned unregisters it when dropped.
    /// Only the Ascend runtime has such a registry: the default refuses.
    fn register_allocator(
        &self,
        stream: &Self::Stream,
        layer: Arc<SmallBlocks<'static, Self>>,
    ) -> Result<Box<dyn std::any::Any + Send + Sync>, AllocError> {
        let _ = (stream, layer);
        Err(registry::no_registry())
    }
}

/// One device of the library, whatever its backend.
pub(crate) trait Pool: Send + Sync {
    /// Allocates `size` bytes in stream order on the raw stream `stream`.
    fn alloc(&self, size: u64, stream: usize) -> Result<u64, AllocError>;
    /// Frees the allocation at `ptr` of `size` bytes on the raw stream `stream`.
    fn free(&self, ptr: u64, size: u64, stream: usize) -> Result<(), AllocError>;
    /// Notes that `stream` uses the allocation at `ptr`; `false` if `ptr` is not a live
    /// allocation of this device.
    fn record_stream(&self, ptr: u64, stream: usize) -> Result<bool, AllocError>;
    /// Gives every cached byte back (see `mempool_empty_cache_checked`).
    fn empty_cache(&self, check: bool) -> Result<(), AllocError>;
    /// Caps the pool at `fraction` of the device's memory (already checked).
    fn set_fraction(&self, fraction: f64);
    /// The device's statistics.
    fn stats(&self) -> Result<Stats, AllocError>;
    /// Resets the high-water marks to the current values.
    fn reset_peak(&self) -> Result<(), AllocError>;
    /// The live allocations, for a snapshot's segments.
    fn live(&self) -> Vec<LiveBlock>;
    /// Registers the device's layer as the external allocator of the raw stream `stream`.
    fn register_allocator(&self, stream: usize) -> Result<(), AllocError>;
    /// Drops the library's registration on the raw stream `stream`; `false` if it had none.
    fn unregister_allocator(&self, stream: usize) -> Result<bool, AllocError>;
}

mod oom;
mod record_stream;
mod registry;

use record_stream::Deferred;

/// A live allocation: its size, its stream, and the other streams that used it.
struct Live {
    size: u64,
    stream: usize,
    uses: Vec<usize>,
}

/// What the device's lock guards.
struct Inner<D: Device> {
    /// The framework's streams, wrapped once each, by raw handle (0: NULL).
    streams: FxHashMap<usize, D::Stream>,
    live: FxHashMap<u64, Live>,
    deferred: Vec<Deferred<D::Event>>,
    /// Events of finished deferred frees, for the next ones.
    spare: Vec<D::Event>,
}

/// One device: see the [module docs](self).
pub(crate) struct DevicePool<D: Backend>
where
    D::Stream: Eq + Hash,
{
    index: i64,
    dev: Arc<D>,
    pool: Arc<D::Pool>,
    layer: Arc<SmallBlocks<'static, D>>,
    /// The layer's registrations as streams' external allocators (CANN's registry), by raw
    /// stream handle; dropping one unregisters it.
    registrations: Mutex<FxHashMap<usize, Box<dyn std::any::Any + Send + Sync>>>,
    /// The device's memory, for the memory fraction.
    total: u64,
    /// The pool's granularity.
    gran: u64,
    inner: Mutex<Inner<D>>,
    /// The cap of the memory fraction, in bytes; 0: none.
    limit: AtomicU64,
    oom_count: AtomicU64,
    oom_retries: AtomicU64,
    violations: AtomicU64,
}

impl<D: Backend> DevicePool<D>
where
    D::Stream: Eq + Hash,
{
    /// A pool of `dev` with the layer over it, as `settings` say.
    pub(crate) fn open(index: i64, dev: D, settings: &Settings) -> Result<Self, AllocError> {
        let dev = Arc::new(dev);
        let total = dev.mem_info()?.total;
        let gran = dev.pool_granularity().max(1);
        let size = round_down(settings.pool_size.unwrap_or(total), gran).max(gran);
        let props = PoolProps::builder().device(dev.id()).max_size(size).build();
        let pool = Arc::new(dev.create_pool(&props)?);
        pool.set(ReleaseThreshold, settings.release_threshold.unwrap_or(size).min(size))?;
        if let Some(flags) = settings.reuse {
            flags.apply(&*pool)?;
        }
        let threshold = settings.small_threshold.unwrap_or(size).min(size);
        let layer = Arc::new(SmallBlocks::new_shared(Arc::clone(&dev), Arc::clone(&pool), threshold)?);
        let mut streams = FxHashMap::default();
        if let NullStream::Own { .. } = D::NULL {
            streams.insert(0, dev.create_stream()?);
        }
        let limit = settings.memory_fraction.map_or(0, |f| oom::cap(f, total));
        Ok(DevicePool {
            index,
            dev,
            pool,
            layer,
            registrations: Mutex::new(FxHashMap::default()),
            total,
            gran,
            inner: Mutex::new(Inner { streams, live: FxHashMap::default(), deferred: Vec::new(), spare: Vec::new() }),
            limit: AtomicU64::new(limit),
            oom_count: AtomicU64::new(0),
            oom_retries: AtomicU64::new(0),
            violations: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner<D>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the library waits around allocations and frees on `raw`.
    fn synchronous(raw: usize) -> bool {
        raw == 0 && D::NULL == NullStream::Own { synchronous: true }
    }

    /// The stream behind `raw`, wrapped at its first use.
    fn stream(&self, inner: &mut Inner<D>, raw: usize) -> Result<D::Stream, AllocError> {
        if let Some(s) = inner.streams.get(&raw) {
            return Ok(s.clone());
        }
        // SAFETY: `raw` is the framework's stream handle for this device's runtime (the
        // library loaded the runtime the framework loaded); the backend does not own it.
        let s = unsafe { self.dev.borrow(raw) }?;
        inner.streams.insert(raw, s.clone());
        Ok(s)
    }

    /// One allocation attempt, within the memory fraction's cap.
    fn try_alloc(&self, size: u64, s: &D::Stream) -> Result<u64, AllocError> {
        let limit = self.limit.load(Ordering::Relaxed);
        if limit != 0 && size > self.layer.threshold() {
            // A request the layer passes to the pool: the pool would hold at least its live
            // bytes and this request, rounded, so this refusal is exact. A request the layer
            // carves may fit in a block it holds; it is judged by RESERVED afterwards (a new
            // block past the cap is given back before the call returns).
            let at_least = round_up(size, self.gran).unwrap_or(u64::MAX).saturating_add(self.pool.get(UsedMemCurrent)?);
            if at_least > limit {
                return Err(self.over_cap(size, limit, at_least));
            }
        }
        let p = self.layer.malloc_async(size, s)?;
        if limit != 0 {
            let reserved = self.pool.get(ReservedMemCurrent)?;
            if reserved > limit {
                // SAFETY: `p` was allocated on `s` just now and never handed out.
                unsafe { self.layer.free_async(p, s) }?;
                return Err(self.over_cap(size, limit, reserved));
            }
        }
        Ok(p.addr())
    }

    /// Frees `ptr` on `s` in the layer. A free the runtime refuses (the stream-order
    /// checker of the drop-in libraries refuses a free not ordered after every use) is
    /// retried once the device is synchronized; when that one passes, it was a stream-order
    /// violation: counted, and described as the thread's last error when the free is the
    /// caller's own (`own`; a waiting free completed during another call is only counted).
    fn release(&self, ptr: u64, s: &D::Stream, own: bool) -> Result<(), AllocError> {
        let p = DevicePtr::from_addr(ptr);
        // SAFETY: `ptr` is a live allocation of the layer (the library's own bookkeeping);
        // the framework owes that its uses are ordered before the free, announced through
        // record-stream, and a refused free is retried only after a device synchronization.
        let Err(first) = (unsafe { self.layer.free_async(p, s) }) else { return Ok(()) };
        self.dev.synchronize_device()?;
        // When the layer took the range back and then failed to give its emptied block to
        // the pool, the block stays with the layer, empty, and after the synchronization its
        // next use is ordered after every earlier one; otherwise the free is retried.
        if self.layer.is_live(p) {
            // SAFETY: as above; every use is complete now.
            unsafe { self.layer.free_async(p, s) }.map_err(|_| AllocError::Backend(first.clone()))?;
        }
        self.violations.fetch_add(1, Ordering::Relaxed);
        if !own {
            return Ok(());
        }
        crate::ffi::set_last_error(format!(
            "stream-order violation on device {}: the free of {ptr:#x} was refused ({first}); was a use on \
             another stream not announced with mempool_record_stream? The library synchronized the device and \
             freed it",
            self.index
        ));
        Ok(())
    }
}

impl<D: Backend> DevicePool<D>
where
    D::Stream: Eq + Hash,
{
    fn alloc_here(&self, size: u64, raw: usize) -> Result<u64, AllocError> {
        if size == 0 {
            return Err(AllocError::Invalid("size 0 (a framework allocates no memory for it)".into()));
        }
        let mut inner = self.lock();
        // Best effort: a waiting free that cannot be completed now (its stream destroyed
        // by the framework) must not fail this allocation; it is tried again later.
        let _ = self.poll_deferred(&mut inner, false);
        let s = self.stream(&mut inner, raw)?;
        let p = match self.try_alloc(size, &s) {
            Ok(p) => p,
            Err(first) if oom::is_oom(&first) => self.retry_after_oom(&mut inner, size, &s, raw)?,
            Err(e) => return Err(e),
        };
        if Self::synchronous(raw)
            && let Err(e) = self.dev.synchronize_stream(&s)
        {
            // SAFETY: allocated just now, never handed out.
            let _ = unsafe { self.layer.free_async(DevicePtr::from_addr(p), &s) };
            return Err(e.into());
        }
        inner.live.insert(p, Live { size, stream: raw, uses: Vec::new() });
        history::record(self.index, SnapshotAction::Alloc, p, size, raw);
        Ok(p)
    }

    fn free_here(&self, ptr: u64, size: u64, raw: usize) -> Result<(), AllocError> {
        let mut inner = self.lock();
        let Some(live) = inner.live.get(&ptr) else {
            let why = if inner.deferred.iter().any(|d| d.ptr == ptr) {
                "; it was freed already and waits for the streams that used it"
            } else {
                " (a foreign pointer, or freed already)"
            };
            return Err(AllocError::NotLive { ptr, device: self.index, why: why.into() });
        };
        if live.size != size {
            return Err(AllocError::WrongSize { ptr, allocated: live.size, given: size });
        }
        let uses: Vec<usize> = live.uses.iter().copied().filter(|&u| u != raw).collect();
        let s = self.stream(&mut inner, raw)?;
        if !uses.is_empty() {
            return self.defer_free(&mut inner, ptr, size, raw, uses);
        }
        if Self::synchronous(raw) {
            self.dev.synchronize_device()?;
        }
        self.release(ptr, &s, true)?;
        history::record(self.index, SnapshotAction::FreeRequested, ptr, size, raw);
        history::record(self.index, SnapshotAction::FreeCompleted, ptr, size, raw);
        inner.live.remove(&ptr);
        let _ = self.poll_deferred(&mut inner, false);
        Ok(())
    }

    fn empty_cache_here(&self, check: bool) -> Result<(), AllocError> {
        let mut inner = self.lock();
        self.make_room(&mut inner, check)
    }

    fn set_fraction_here(&self, fraction: f64) {
        self.limit.store(oom::cap(fraction, self.total), Ordering::Relaxed);
    }

    fn stats_here(&self) -> Result<Stats, AllocError> {
        let inner = self.lock();
        let p = self.pool.stats()?;
        let small = self.layer.small_stats();
        // Frees waiting for streams are the framework's no longer: not requested.
        let waiting: u64 = inner.deferred.iter().map(|d| d.size).sum();
        Ok(Stats {
            // A high-water mark reset to 0 (Ascend's rule) reads as the current value.
            used_current: p.used_current,
            used_high: p.used_high.max(p.used_current),
            reserved_current: p.reserved_current,
            reserved_high: p.reserved_high.max(p.reserved_current),
            requested_current: small.requested_current.saturating_sub(waiting),
            requested_high: small.requested_high,
            small_held_current: small.held_current,
            small_held_high: small.held_high,
            small_wasted: small.waste(),
            allocations: inner.live.len() as u64,
            pending_frees: inner.deferred.len() as u64 + small.pending_frees,
            oom_count: self.oom_count.load(Ordering::Relaxed),
            oom_retries: self.oom_retries.load(Ordering::Relaxed),
            stream_order_violations: self.violations.load(Ordering::Relaxed),
            memory_limit: self.limit.load(Ordering::Relaxed),
            ..Stats::default()
        })
    }

    fn reset_peak_here(&self) -> Result<(), AllocError> {
        let _inner = self.lock();
        self.layer.reset_high();
        self.pool.reset(UsedMemHigh)?;
        self.pool.reset(ReservedMemHigh)?;
        Ok(())
    }
}

impl<D: Backend> Pool for DevicePool<D>
where
    D::Stream: Eq + Hash,
{
    fn alloc(&self, size: u64, stream: usize) -> Result<u64, AllocError> {
        self.dev.preserving(|| self.alloc_here(size, stream))
    }

    fn free(&self, ptr: u64, size: u64, stream: usize) -> Result<(), AllocError> {
        self.dev.preserving(|| self.free_here(ptr, size, stream))
    }

    fn record_stream(&self, ptr: u64, stream: usize) -> Result<bool, AllocError> {
        self.dev.preserving(|| self.record_stream_here(ptr, stream))
    }

    fn empty_cache(&self, check: bool) -> Result<(), AllocError> {
        self.dev.preserving(|| self.empty_cache_here(check))
    }

    fn set_fraction(&self, fraction: f64) {
        self.set_fraction_here(fraction);
    }

    fn stats(&self) -> Result<Stats, AllocError> {
        self.dev.preserving(|| self.stats_here())
    }

    fn reset_peak(&self) -> Result<(), AllocError> {
        self.dev.preserving(|| self.reset_peak_here())
    }

    fn live(&self) -> Vec<LiveBlock> {
        let device = u32::try_from(self.index).unwrap_or(u32::MAX);
        let inner = self.lock();
        inner.live.iter().map(|(&addr, l)| LiveBlock { device, addr, size: l.size, stream: l.stream }).collect()
    }

    fn register_allocator(&self, stream: usize) -> Result<(), AllocError> {
        self.dev.preserving(|| self.register_allocator_here(stream))
    }

    fn unregister_allocator(&self, stream: usize) -> Result<bool, AllocError> {
        self.dev.preserving(|| self.unregister_allocator_here(stream))
    }
}

#[cfg(test)]
impl<D: Backend> DevicePool<D>
where
    D::Stream: Eq + Hash,
{
    /// Makes `stream` what the raw handle `raw` names (the emulator borrows no handle).
    pub(crate) fn adopt(&self, raw: usize, stream: D::Stream) {
        self.lock().streams.insert(raw, stream);
    }

    /// The device and the stream NULL names.
    pub(crate) fn parts(&self) -> (Arc<D>, D::Stream) {
        let s = self.lock().streams.get(&0).cloned();
        (Arc::clone(&self.dev), s.expect("the emulator's NULL stream is the library's own"))
    }
}

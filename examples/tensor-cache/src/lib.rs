//! A tensor-buffer cache on a stream-ordered memory pool: the way a framework uses
//! `mempool`.
//!
//! [`TensorCache`] keeps named device buffers ("tensors") resident between uses, so a
//! model does not re-allocate and re-upload its weights, activations or KV blocks on every
//! step. It is generic over [`Device`]: the library depends on `mempool` with no backend
//! at all; the application picks one. Its unit tests run on `mempool`'s mocks (feature
//! `mock`, from `[dev-dependencies]` only), its integration tests on the emulator.
//!
//! What it does with the pool:
//!
//! - **Per-stream allocation.** The cache owns a few streams ("lanes", say compute and
//!   copy). A tensor is allocated in stream order on the lane that first uses it, and
//!   belongs to that lane.
//! - **Stream-ordered frees.** Releasing or evicting a tensor frees it on the lane that
//!   owns it, after all work enqueued there: no synchronization, no waiting.
//! - **Hand-off with an event.** [`TensorCache::hand_off`] records an event on the owning
//!   lane and makes the new lane wait for it before the tensor changes hands, so the
//!   new owner's work, and its eventual free, are ordered after the old owner's. The pool
//!   follows such events when it reuses memory (`ReuseFollowEventDependencies`).
//! - **Memory pressure.** When the pool is out of memory, the cache first trims it
//!   (`trim_to(USED)` gives cached blocks back to the address space, so a block freed
//!   on one lane stops fragmenting another's), then evicts idle tensors, least recently
//!   used first, trimming again; optionally it synchronizes the device as a last resort.
//!
//! A tensor is *checked out* from [`TensorCache::acquire`] until
//! [`TensorCache::give_back`]; only given-back (idle) tensors are ever evicted.
//!
//! ```
//! use mempool::backend::Emulator;
//! use tensor_cache::{CacheConfig, Lane, TensorCache};
//!
//! let dev = Emulator::new();
//! let mut cache = TensorCache::new(&dev, CacheConfig { lanes: 2, ..CacheConfig::default() })?;
//! let (compute, copy) = (Lane(0), Lane(1));
//!
//! let w = cache.acquire("weights", 4 << 20, copy)?; // allocated on the copy lane
//! assert!(!w.hit);
//! cache.upload("weights", &[1, 2, 3])?; // in stream order on the copy lane
//! cache.hand_off("weights", compute)?; // compute waits for the upload
//! cache.give_back("weights")?;
//!
//! let again = cache.acquire("weights", 4 << 20, compute)?; // resident: no allocation
//! assert!(again.hit && again.ptr == w.ptr);
//! # Ok::<(), mempool::Error>(())
//! ```

#![deny(missing_docs)]
#![deny(unsafe_code)]

use mempool::prelude::*;
use mempool::{DevicePtr, Error, ErrorKind, HostBuffer, PoolProps, PoolStats, Result, attr, code};
use std::collections::HashMap;
use std::fmt;

/// One of the cache's streams, by index (`Lane(0)` is the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lane(pub usize);

/// How a [`TensorCache`] sets up its pool and behaves under memory pressure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheConfig {
    /// Streams the cache owns (at least 1).
    pub lanes: usize,
    /// The pool's size in bytes (0 = the whole device).
    pub pool_size: u64,
    /// Bytes of freed memory the pool keeps cached when the host synchronizes.
    pub release_threshold: u64,
    /// Whether, as a last resort under memory pressure, the cache synchronizes the whole
    /// device (so every free is known complete) before trimming and retrying.
    pub sync_under_pressure: bool,
}

impl Default for CacheConfig {
    /// Two lanes, a 1 GiB pool, 64 MiB kept at synchronization, no device synchronization.
    fn default() -> Self {
        CacheConfig { lanes: 2, pool_size: 1 << 30, release_threshold: 64 << 20, sync_under_pressure: false }
    }
}

/// A tensor handed out by [`TensorCache::acquire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tensor {
    /// Its device address: valid for work on its lane until it is released or evicted.
    pub ptr: DevicePtr,
    /// Its size in bytes.
    pub bytes: u64,
    /// Whether it was already resident (no allocation was made).
    pub hit: bool,
}

/// What the cache has done so far, with the pool's statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// `acquire` calls served by a resident tensor.
    pub hits: u64,
    /// `acquire` calls that allocated.
    pub misses: u64,
    /// Idle tensors freed to make room.
    pub evictions: u64,
    /// `trim_to` calls made under memory pressure.
    pub trims: u64,
    /// Device synchronizations made under memory pressure.
    pub syncs: u64,
    /// Bytes of resident tensors (as requested, before the pool rounds them).
    pub resident_bytes: u64,
    /// The pool's counters.
    pub pool: PoolStats,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    ptr: DevicePtr,
    bytes: u64,
    lane: usize,
    checked_out: bool,
    last_use: u64,
}

/// A cache of named device buffers on a stream-ordered pool. See the [crate docs](crate).
pub struct TensorCache<'d, D: Device> {
    dev: &'d D,
    pool: D::Pool,
    lanes: Vec<D::Stream>,
    handoff: D::Event,
    tensors: HashMap<String, Entry>,
    config: CacheConfig,
    tick: u64,
    stats: CacheStats,
}

impl<D: Device> fmt::Debug for TensorCache<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorCache")
            .field("pool", &self.pool)
            .field("lanes", &self.lanes)
            .field("tensors", &self.tensors.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

fn param(op: &'static str, message: String) -> Error {
    Error::new(ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID, op, message)
}

impl<'d, D: Device> TensorCache<'d, D> {
    /// Creates the pool (with event-dependency reuse on and the configured release
    /// threshold), the lanes and the hand-off event.
    ///
    /// # Errors
    ///
    /// `InvalidParam` for zero lanes; otherwise the backend's errors (a pool size
    /// larger than the device, a threshold above the pool size).
    pub fn new(dev: &'d D, config: CacheConfig) -> Result<Self> {
        if config.lanes == 0 {
            return Err(param("TensorCache::new", "a cache needs at least one lane".into()));
        }
        let pool = dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(config.pool_size).build())?;
        let handoff = match dev.create_event() {
            Ok(e) => e,
            Err(e) => {
                let _ = dev.destroy_pool(&pool);
                return Err(e);
            }
        };
        let mut cache = TensorCache {
            dev,
            pool,
            lanes: Vec::with_capacity(config.lanes),
            handoff,
            tensors: HashMap::new(),
            config,
            tick: 0,
            stats: CacheStats::default(),
        };
        // From here on, `Drop` gives back whatever was created.
        cache.pool.set(attr::ReleaseThreshold, config.release_threshold)?;
        cache.pool.set(attr::ReuseFollowEventDependencies, true)?;
        for _ in 0..config.lanes {
            cache.lanes.push(dev.create_stream()?);
        }
        Ok(cache)
    }

    /// The stream of `lane`, to enqueue work on.
    ///
    /// # Panics
    ///
    /// If the cache has no such lane.
    pub fn stream(&self, lane: Lane) -> &D::Stream {
        &self.lanes[lane.0]
    }

    /// The tensor `key` of at least `bytes` bytes for work on `lane`, checked out.
    ///
    /// A resident tensor on the same lane is a hit. A resident idle tensor that is too
    /// small is freed (on its lane) and replaced. Otherwise the tensor is allocated on
    /// `lane`; under memory pressure the cache trims, evicts idle tensors and, if
    /// configured, synchronizes, retrying after each step.
    ///
    /// # Errors
    ///
    /// - The tensor lives on another lane: `StreamOrderViolation` (hand it off first).
    /// - It is checked out and too small: `InvalidParam`. No such lane: `InvalidParam`.
    /// - No memory even after every pressure step: the pool's `OutOfMemory`.
    pub fn acquire(&mut self, key: &str, bytes: u64, lane: Lane) -> Result<Tensor> {
        const OP: &str = "TensorCache::acquire";
        self.check_lane(lane, OP)?;
        self.tick += 1;
        if let Some(e) = self.tensors.get_mut(key) {
            if e.lane != lane.0 {
                return Err(Error::new(
                    ErrorKind::StreamOrderViolation,
                    code::ACL_ERROR_RT_STREAM_CONTEXT,
                    OP,
                    format!("tensor {key:?} belongs to lane {}; hand it off to lane {} first", e.lane, lane.0),
                ));
            }
            if e.bytes >= bytes {
                e.checked_out = true;
                e.last_use = self.tick;
                self.stats.hits += 1;
                return Ok(Tensor { ptr: e.ptr, bytes: e.bytes, hit: true });
            }
            if e.checked_out {
                return Err(param(OP, format!("tensor {key:?} is checked out with {} bytes, {bytes} asked", e.bytes)));
            }
            self.release(key)?;
        }
        let ptr = self.malloc_under_pressure(bytes, lane.0)?;
        self.tensors.insert(key.to_owned(), Entry { ptr, bytes, lane: lane.0, checked_out: true, last_use: self.tick });
        self.stats.misses += 1;
        Ok(Tensor { ptr, bytes, hit: false })
    }

    /// Marks `key` idle: it stays resident for the next `acquire`, and may be evicted
    /// under memory pressure.
    ///
    /// # Errors
    ///
    /// No such tensor: `InvalidParam`.
    pub fn give_back(&mut self, key: &str) -> Result<()> {
        self.entry(key, "TensorCache::give_back")?.checked_out = false;
        Ok(())
    }

    /// Moves `key` to lane `to`: records the hand-off event on its lane and makes `to`
    /// wait for it, so everything `to` does with the tensor from now on, including its
    /// eventual free, is ordered after the work already enqueued on the old lane.
    ///
    /// # Errors
    ///
    /// No such tensor or lane: `InvalidParam`; the backend's errors from
    /// [`Device::record_event`] and [`Device::stream_wait_event`].
    pub fn hand_off(&mut self, key: &str, to: Lane) -> Result<()> {
        const OP: &str = "TensorCache::hand_off";
        self.check_lane(to, OP)?;
        let from = self.entry(key, OP)?.lane;
        if from != to.0 {
            self.dev.record_event(&self.handoff, &self.lanes[from])?;
            self.dev.stream_wait_event(&self.lanes[to.0], &self.handoff)?;
            self.entry(key, OP)?.lane = to.0;
        }
        Ok(())
    }

    /// Copies `data` to the start of tensor `key`, in stream order on its lane.
    ///
    /// # Errors
    ///
    /// No such tensor: `InvalidParam`; more bytes than the tensor holds: `InvalidParam`;
    /// the backend's copy errors.
    pub fn upload(&self, key: &str, data: &[u8]) -> Result<()> {
        const OP: &str = "TensorCache::upload";
        let e = self.get(key, OP)?;
        if data.len() as u64 > e.bytes {
            return Err(param(OP, format!("{} bytes do not fit tensor {key:?} of {}", data.len(), e.bytes)));
        }
        self.dev.memcpy_h2d_async(e.ptr, data, &self.lanes[e.lane])
    }

    /// Copies the start of tensor `key` into `dst`, in stream order on its lane (read
    /// `dst` after synchronizing the lane).
    ///
    /// # Errors
    ///
    /// No such tensor: `InvalidParam`; the backend's copy errors.
    pub fn download(&self, key: &str, dst: &HostBuffer) -> Result<()> {
        let e = self.get(key, "TensorCache::download")?;
        self.dev.memcpy_d2h_async(dst, e.ptr, &self.lanes[e.lane])
    }

    /// Frees `key` in stream order on its lane and forgets it. Returns whether it was
    /// resident.
    ///
    /// # Errors
    ///
    /// The backend's free errors; the tensor then stays resident.
    pub fn release(&mut self, key: &str) -> Result<bool> {
        let Some(e) = self.tensors.get(key).copied() else { return Ok(false) };
        free_on(&self.pool, e.ptr, &self.lanes[e.lane])?;
        self.tensors.remove(key);
        Ok(true)
    }

    /// Frees every idle tensor in stream order on its lane. Returns the bytes freed.
    ///
    /// # Errors
    ///
    /// The backend's free errors (tensors freed before the error stay freed).
    pub fn evict_idle(&mut self) -> Result<u64> {
        self.evict_lru(u64::MAX)
    }

    /// Synchronizes every lane: the work enqueued so far has run, and the pool releases
    /// cached memory above its threshold.
    ///
    /// # Errors
    ///
    /// The backend's synchronization errors.
    pub fn synchronize(&self) -> Result<()> {
        self.lanes.iter().try_for_each(|s| self.dev.synchronize_stream(s))
    }

    /// What the cache has done, with the pool's counters.
    ///
    /// # Errors
    ///
    /// The backend's errors reading the pool's statistics.
    pub fn stats(&self) -> Result<CacheStats> {
        let resident_bytes = self.tensors.values().map(|e| e.bytes).sum();
        Ok(CacheStats { resident_bytes, pool: self.pool.stats()?, ..self.stats })
    }

    /// Whether `key` is resident.
    pub fn contains(&self, key: &str) -> bool {
        self.tensors.contains_key(key)
    }

    fn check_lane(&self, lane: Lane, op: &'static str) -> Result<()> {
        if lane.0 < self.lanes.len() {
            Ok(())
        } else {
            Err(param(op, format!("lane {} does not exist ({} lanes)", lane.0, self.lanes.len())))
        }
    }

    fn get(&self, key: &str, op: &'static str) -> Result<Entry> {
        self.tensors.get(key).copied().ok_or_else(|| param(op, format!("no tensor {key:?}")))
    }

    fn entry(&mut self, key: &str, op: &'static str) -> Result<&mut Entry> {
        self.tensors.get_mut(key).ok_or_else(|| param(op, format!("no tensor {key:?}")))
    }

    /// Allocates, and under memory pressure: trims, evicts idle tensors (least recently
    /// used first, trimming after each batch), and, if configured, synchronizes the device;
    /// retrying after each step. Other errors are returned at once.
    fn malloc_under_pressure(&mut self, bytes: u64, lane: usize) -> Result<DevicePtr> {
        let mut oom = match self.pool.malloc_async(bytes, &self.lanes[lane]) {
            Err(e) if e.kind() == ErrorKind::OutOfMemory => e,
            other => return other,
        };
        // Evict at least what was asked for, rounded as the pool counts it.
        let want = oom.oom().map_or(bytes, |o| o.requested);
        let mut synced = false;
        let mut step = 0;
        loop {
            match step {
                0 => {} // trim alone: cached blocks of other lanes go back to the address space
                _ if self.evict_lru(want)? > 0 => {}
                _ if self.config.sync_under_pressure && !synced => {
                    self.dev.synchronize_device()?;
                    self.stats.syncs += 1;
                    synced = true;
                }
                _ => return Err(oom),
            }
            step += 1;
            let used = self.pool.get(attr::UsedMemCurrent)?;
            self.pool.trim_to(used)?;
            self.stats.trims += 1;
            match self.pool.malloc_async(bytes, &self.lanes[lane]) {
                Err(e) if e.kind() == ErrorKind::OutOfMemory => oom = e,
                other => return other,
            }
        }
    }

    /// Frees idle tensors, least recently used first, until at least `want` bytes (as
    /// requested) are freed or none is left. Returns the bytes freed.
    fn evict_lru(&mut self, want: u64) -> Result<u64> {
        let mut idle: Vec<(u64, String)> =
            self.tensors.iter().filter(|(_, e)| !e.checked_out).map(|(k, e)| (e.last_use, k.clone())).collect();
        idle.sort_unstable();
        let mut freed = 0u64;
        for (_, key) in idle {
            if freed >= want {
                break;
            }
            let bytes = self.tensors[&key].bytes;
            self.release(&key)?;
            self.stats.evictions += 1;
            freed = freed.saturating_add(bytes);
        }
        Ok(freed)
    }
}

impl<D: Device> Drop for TensorCache<'_, D> {
    /// Destroys the pool (its memory is given back once queued work has run), the event
    /// and the lanes; errors are ignored, as nothing could act on them.
    fn drop(&mut self) {
        let _ = self.dev.destroy_pool(&self.pool);
        let _ = self.dev.destroy_event(&self.handoff);
        for s in &self.lanes {
            let _ = self.dev.destroy_stream(s);
        }
    }
}

/// Frees a tensor the cache is forgetting.
#[allow(unsafe_code)]
fn free_on<P: MemPool>(pool: &P, ptr: DevicePtr, stream: &P::Stream) -> Result<()> {
    // SAFETY: `ptr` was returned by `pool.malloc_async` for a tensor still in the cache's
    // table, and each tensor is freed once (it is removed from the table right after a
    // successful free). Every use of it is ordered before this free: the cache's contract
    // is that a tensor is used only on its lane's stream, `stream` is that lane, and a
    // hand-off orders the previous lane's work before it with an event.
    unsafe { pool.free_async(ptr, stream) }
}

#[cfg(test)]
mod tests;

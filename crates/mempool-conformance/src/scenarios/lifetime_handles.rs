//! Scenarios 28-30: lifetime, bad handles and concurrency ([contract](mempool_hal::contract) §§7 and 8).

use super::{Gate, free, new_pool, released_at_sync};
use crate::{Capability, Failure, Harness, ScenarioResult, ensure, ensure_eq, expect_error};
use mempool_hal::{
    AttrId, Device, DevicePtr, ErrorKind, EventStatus, MemPool, MemPoolExt, Profile, RawAttrValue, ReuseFlags,
    StreamStatus, attr, code, round_down,
};
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// Scenario 28: destroying a pool with live allocations succeeds; freeing one of them
/// afterwards (through the destroyed pool's handle, or another pool's) is refused with
/// `InvalidPointer` (107000), and another pool keeps working.
///
/// Needs [`Capability::CheckedFree`]: the later frees are deliberately bad.
pub fn s28_destroy_with_live_allocations<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let s = dev.create_stream()?;
    let pool = new_pool(&dev, 64)?;
    let live = pool.malloc_async(2 * g, &s)?;
    let cached = pool.malloc_async(g, &s)?;
    free(&pool, cached, &s)?;

    dev.destroy_pool(&pool)?;
    let other = new_pool(&dev, 64)?;

    let bad = [
        (&pool, live, "a live allocation of the destroyed pool, through its handle"),
        (&other, live, "a live allocation of the destroyed pool, through another pool's handle"),
        (&pool, cached, "a freed block of the destroyed pool"),
    ];
    for (handle, ptr, what) in bad {
        // SAFETY: deliberately not a live allocation (its pool is destroyed). This
        // scenario runs only on backends with `Capability::CheckedFree`, whose contract
        // is to answer such a pointer with `InvalidPointer`; that is what is being
        // verified. No work touching the memory was ever enqueued.
        let result = unsafe { handle.free_async(ptr, &s) };
        expect_error(
            result,
            ErrorKind::InvalidPointer,
            code::ACL_ERROR_RT_PARAM_INVALID,
            format_args!("free_async of {what} ({ptr})"),
        )?;
    }

    let r = other.malloc_async(g, &s)?;
    ensure_eq!(other.stats()?.used_current, g, "USED of another pool after the refused frees");
    free(&other, r, &s)?;
    dev.synchronize_device()?;
    released_at_sync(h.profile(), &other, g, 0, format_args!("a device sync, on the other pool"))?;
    dev.destroy_pool(&other)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 29: stale and foreign handles are answered with errors, never a crash.
///
/// - A pool destroyed twice: 507000; a destroyed pool in `malloc_async` and `trim_to`:
///   507000, in `get_attr_raw` / `set_attr_raw`: 107000 (all `InvalidHandle`).
/// - A destroyed stream in `malloc_async`, `free_async`, `synchronize_stream`,
///   `record_event`, `stream_wait_event`, `launch_host_func`, `query_stream` and `destroy_stream`:
///   `InvalidHandle` (107017), and the pool's statistics do not move.
/// - A destroyed event in `record_event`, `stream_wait_event`, `synchronize_event`,
///   `query_event` and `destroy_event`: `InvalidHandle` (107017). A live event never
///   recorded queries `NotReady` (CANN's `ACL_EVENT_RECORDED_STATUS_NOT_READY` covers it).
/// - `query_stream` of a live stream: `Complete` once synchronized; with
///   [`Capability::BlockingHostFunctions`], `NotReady` while a host function holds it and
///   `Complete` after it ran.
/// - With [`Capability::ForeignHandles`], a stream, event and pool of a second device
///   (107017 for streams and events, 507000 for the pool). The Rust API cannot forge
///   garbage handles; foreign handles stand in for them. Without the capability these
///   checks are skipped, and the trial is reported with kind `partial`.
pub fn s29_bad_handles<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let s = dev.create_stream()?;
    let ev = dev.create_event()?;
    let pool = new_pool(&dev, 64)?;
    let invalid_handle = code::ACL_ERROR_RT_INVALID_HANDLE;

    // Pools.
    let dead_pool = new_pool(&dev, 8)?;
    dev.destroy_pool(&dead_pool)?;
    let pool_gone = |result: mempool_hal::Result<()>, code: i32, what: &str| {
        expect_error(result, ErrorKind::InvalidHandle, code, format_args!("{what} on a destroyed pool"))
    };
    pool_gone(dev.destroy_pool(&dead_pool), code::ACL_ERROR_RT_INTERNAL_ERROR, "destroy_pool")?;
    expect_error(
        dead_pool.malloc_async(g, &s),
        ErrorKind::InvalidHandle,
        code::ACL_ERROR_RT_INTERNAL_ERROR,
        "malloc_async on a destroyed pool",
    )?;
    pool_gone(dead_pool.trim_to(0), code::ACL_ERROR_RT_INTERNAL_ERROR, "trim_to")?;
    expect_error(
        dead_pool.get_attr_raw(AttrId::USED_MEM_CURRENT),
        ErrorKind::InvalidHandle,
        code::ACL_ERROR_RT_PARAM_INVALID,
        "get_attr_raw on a destroyed pool",
    )?;
    pool_gone(
        dead_pool.set_attr_raw(AttrId::RELEASE_THRESHOLD, RawAttrValue::U64(0)),
        code::ACL_ERROR_RT_PARAM_INVALID,
        "set_attr_raw",
    )?;

    // Streams.
    let dead_stream = dev.create_stream()?;
    dev.destroy_stream(&dead_stream)?;
    let stream_gone = |result: mempool_hal::Result<()>, what: &str| {
        expect_error(result, ErrorKind::InvalidHandle, invalid_handle, format_args!("{what} with a destroyed stream"))
    };
    let before = pool.stats()?;
    expect_error(
        pool.malloc_async(g, &dead_stream),
        ErrorKind::InvalidHandle,
        invalid_handle,
        "malloc_async on a destroyed stream",
    )?;
    ensure_eq!(pool.stats()?, before, "statistics after malloc_async on a destroyed stream");
    let p = pool.malloc_async(g, &s)?;
    let with_p = pool.stats()?;
    stream_gone(free(&pool, p, &dead_stream), "free_async")?;
    ensure_eq!(pool.stats()?, with_p, "statistics after free_async on a destroyed stream");
    stream_gone(dev.synchronize_stream(&dead_stream), "synchronize_stream")?;
    stream_gone(dev.record_event(&ev, &dead_stream), "record_event")?;
    stream_gone(dev.stream_wait_event(&dead_stream, &ev), "stream_wait_event")?;
    stream_gone(dev.launch_host_func(&dead_stream, Box::new(|| {})), "launch_host_func")?;
    expect_error(
        dev.query_stream(&dead_stream),
        ErrorKind::InvalidHandle,
        invalid_handle,
        "query_stream with a destroyed stream",
    )?;
    stream_gone(dev.destroy_stream(&dead_stream), "destroy_stream")?;
    free(&pool, p, &s)?;

    // Events.
    let dead_event = dev.create_event()?;
    dev.destroy_event(&dead_event)?;
    let event_gone = |result: mempool_hal::Result<()>, what: &str| {
        expect_error(result, ErrorKind::InvalidHandle, invalid_handle, format_args!("{what} with a destroyed event"))
    };
    event_gone(dev.record_event(&dead_event, &s), "record_event")?;
    event_gone(dev.stream_wait_event(&s, &dead_event), "stream_wait_event")?;
    event_gone(dev.synchronize_event(&dead_event), "synchronize_event")?;
    expect_error(
        dev.query_event(&dead_event),
        ErrorKind::InvalidHandle,
        invalid_handle,
        "query_event with a destroyed event",
    )?;
    event_gone(dev.destroy_event(&dead_event), "destroy_event")?;

    // The live handles still work after all that; the event, never recorded (its records
    // on the dead stream failed), is not ready, as CANN documents NOT_READY (CUDA
    // documents it complete).
    let unrecorded =
        if h.profile().unrecorded_event_is_complete() { EventStatus::Complete } else { EventStatus::NotReady };
    ensure_eq!(dev.query_event(&ev)?, unrecorded, "a live event never recorded (Ascend: not ready; CUDA: complete)");
    dev.record_event(&ev, &s)?;
    dev.synchronize_event(&ev)?;
    ensure_eq!(dev.query_event(&ev)?, EventStatus::Complete, "a live event after synchronizing it");
    dev.synchronize_stream(&s)?;
    ensure_eq!(dev.query_stream(&s)?, StreamStatus::Complete, "query_stream of a synchronized stream");
    if h.supports(Capability::BlockingHostFunctions) {
        // Not ready while a host function holds the stream; complete once it has run.
        let gate = Gate::new();
        dev.launch_host_func(&s, gate.blocker())?;
        ensure_eq!(dev.query_stream(&s)?, StreamStatus::NotReady, "query_stream while a host function blocks it");
        gate.open();
        dev.synchronize_stream(&s)?;
        gate.check_not_expired()?;
        ensure_eq!(dev.query_stream(&s)?, StreamStatus::Complete, "query_stream after the host function ran");
    }

    if h.supports(Capability::ForeignHandles) {
        foreign_handles(h, &dev, &pool, &s, &ev)?;
    }

    dev.destroy_pool(&pool)?;
    dev.destroy_event(&ev)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// The foreign-handle part of scenario 29: handles of a second device used on `dev`.
fn foreign_handles<H: Harness>(
    h: &H,
    dev: &H::Device,
    pool: &<H::Device as Device>::Pool,
    s: &<H::Device as Device>::Stream,
    ev: &<H::Device as Device>::Event,
) -> ScenarioResult {
    let g = dev.pool_granularity();
    let other = h.device()?;
    let fs = other.create_stream()?;
    let fe = other.create_event()?;
    let fp = new_pool(&other, 8)?;
    let invalid_handle = code::ACL_ERROR_RT_INVALID_HANDLE;
    let foreign = |result: mempool_hal::Result<()>, what: &str| {
        expect_error(result, ErrorKind::InvalidHandle, invalid_handle, format_args!("{what} with a foreign handle"))
    };

    let before = pool.stats()?;
    expect_error(
        pool.malloc_async(g, &fs),
        ErrorKind::InvalidHandle,
        invalid_handle,
        "malloc_async on a foreign stream",
    )?;
    ensure_eq!(pool.stats()?, before, "statistics after malloc_async on a foreign stream");
    foreign(dev.synchronize_stream(&fs), "synchronize_stream")?;
    foreign(dev.record_event(ev, &fs), "record_event (foreign stream)")?;
    foreign(dev.record_event(&fe, s), "record_event (foreign event)")?;
    foreign(dev.stream_wait_event(s, &fe), "stream_wait_event (foreign event)")?;
    foreign(dev.stream_wait_event(&fs, ev), "stream_wait_event (foreign stream)")?;
    foreign(dev.synchronize_event(&fe), "synchronize_event")?;
    expect_error(dev.query_event(&fe), ErrorKind::InvalidHandle, invalid_handle, "query_event with a foreign event")?;
    foreign(dev.launch_host_func(&fs, Box::new(|| {})), "launch_host_func")?;
    foreign(dev.destroy_event(&fe), "destroy_event")?;
    foreign(dev.destroy_stream(&fs), "destroy_stream")?;
    expect_error(
        dev.destroy_pool(&fp),
        ErrorKind::InvalidHandle,
        code::ACL_ERROR_RT_INTERNAL_ERROR,
        "destroy_pool with a foreign pool",
    )?;

    // The foreign handles are untouched on their own device.
    let q = fp.malloc_async(g, &fs)?;
    free(&fp, q, &fs)?;
    other.record_event(&fe, &fs)?;
    other.synchronize_event(&fe)?;
    other.destroy_pool(&fp)?;
    other.destroy_event(&fe)?;
    other.destroy_stream(&fs)?;
    Ok(())
}

/// Threads in scenario 30.
const THREADS: usize = 8;
/// Iterations per thread in scenario 30.
const ITERATIONS: usize = 200;
/// Live allocations a thread of scenario 30 holds at most.
const MAX_LIVE: usize = 4;
/// A thread of scenario 30 synchronizes its streams every this many iterations.
const SYNC_EVERY: usize = 32;

/// A deterministic pseudo-random sequence (Knuth's MMIX LCG), one per thread.
struct Lcg(u64);

impl Lcg {
    fn new(seed: u64) -> Self {
        Lcg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// Every live allocation of scenario 30, by address, with its rounded length: proves
/// that no block is handed out twice and that live blocks never overlap.
#[derive(Default)]
struct Registry {
    live: Mutex<BTreeMap<u64, u64>>,
}

impl Registry {
    fn insert(&self, ptr: DevicePtr, len: u64) -> ScenarioResult {
        let addr = ptr.addr();
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((&start, &l)) = live.range(..=addr).next_back() {
            ensure!(
                start.saturating_add(l) <= addr,
                "{ptr} (+{len}) was handed out while {start:#x} (+{l}) is live: they overlap"
            );
        }
        if let Some((&start, &l)) = live.range(addr..).next() {
            ensure!(
                addr.saturating_add(len) <= start,
                "{ptr} (+{len}) was handed out while {start:#x} (+{l}) is live: they overlap"
            );
        }
        live.insert(addr, len);
        Ok(())
    }

    fn remove(&self, ptr: DevicePtr, len: u64) -> ScenarioResult {
        let removed = self.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&ptr.addr());
        ensure_eq!(removed, Some(len), "registry entry of {ptr} at its free");
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.live.lock().unwrap_or_else(PoisonError::into_inner).is_empty()
    }
}

/// One thread of scenario 30: its own two streams and event, random-ish allocations of
/// 1 to 4 granules from either pool, frees on the allocating stream or (one in four) on
/// the second stream after an event orders it after the first.
fn churn<D: Device>(dev: &D, pools: &[D::Pool; 2], registry: &Registry, thread: usize) -> ScenarioResult {
    let g = dev.pool_granularity();
    let s = dev.create_stream()?;
    let f = dev.create_stream()?;
    let e = dev.create_event()?;
    let mut rng = Lcg::new(thread as u64 + 1);
    let mut live: Vec<(usize, DevicePtr, u64)> = Vec::with_capacity(MAX_LIVE);

    for i in 0..ITERATIONS {
        let r = rng.next();
        if live.is_empty() || (live.len() < MAX_LIVE && r % 2 == 0) {
            let which = (rng.next() % 2) as usize;
            let len = (1 + rng.next() % 4) * g;
            // Any size that rounds up to `len`.
            let size = len - rng.next() % g;
            let p = pools[which].malloc_async(size, &s)?;
            registry.insert(p, len)?;
            live.push((which, p, len));
        } else {
            let (which, p, len) = live.swap_remove((r / 2 % live.len() as u64) as usize);
            // Out of the registry before the free: once freed, another thread may get it.
            registry.remove(p, len)?;
            if rng.next() % 4 == 0 {
                dev.record_event(&e, &s)?;
                dev.stream_wait_event(&f, &e)?;
                free(&pools[which], p, &f)?;
            } else {
                free(&pools[which], p, &s)?;
            }
        }
        if i % SYNC_EVERY == SYNC_EVERY - 1 {
            dev.synchronize_stream(&f)?;
            dev.synchronize_stream(&s)?;
        }
    }
    for (which, p, len) in live {
        registry.remove(p, len)?;
        free(&pools[which], p, &s)?;
    }
    dev.synchronize_stream(&s)?;
    dev.synchronize_stream(&f)?;
    dev.destroy_event(&e)?;
    dev.destroy_stream(&s)?;
    dev.destroy_stream(&f)?;
    Ok(())
}

/// Scenario 30: 8 threads × 200 iterations allocate and free on their own streams from
/// two pools (one with all reuse flags on), some frees on a second stream ordered by an
/// event. No block is ever handed out twice or overlapping while live; at the end USED
/// is 0 and, after a device synchronization with threshold 0, RESERVED is 0: no block
/// was lost.
///
/// Needs [`Capability::Threads`].
pub fn s30_concurrent_alloc_free<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let granules = (round_down(dev.mem_info()?.total, g) / g).min(4096);
    let plain = new_pool(&dev, granules)?;
    let reusing = new_pool(&dev, granules)?;
    ReuseFlags::ALL.apply(&reusing)?;
    let pools = [plain, reusing];
    let registry = Registry::default();

    let results: Vec<ScenarioResult> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (dev, pools, registry) = (&dev, &pools, &registry);
                scope.spawn(move || churn(dev, pools, registry, t))
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|payload| Err(Failure::panicked(payload)))).collect()
    });
    for (t, result) in results.into_iter().enumerate() {
        if let Err(f) = result {
            return Err(Failure::new(format!("thread {t} of {THREADS}: {f}")));
        }
    }
    ensure!(registry.is_empty(), "live allocations left after every thread freed its own");

    for (name, pool) in ["the pool without reuse flags", "the pool with all reuse flags"].iter().zip(&pools) {
        let stats = pool.stats()?;
        ensure_eq!(stats.used_current, 0, "USED of {name} after all threads freed everything");
        ensure!(stats.used_high >= g, "USED_MEM_HIGH of {name} shows no allocation at all");
    }
    dev.synchronize_device()?;
    for (name, pool) in ["the pool without reuse flags", "the pool with all reuse flags"].iter().zip(&pools) {
        let stats = pool.stats()?;
        ensure_eq!(stats.used_current, 0, "USED of {name} after the device sync");
        if h.profile() == Profile::CannOpen {
            // No release at synchronization: trim_to(0) gives every cached block back.
            ensure!(stats.reserved_current > 0, "cann-open: {name} released at a device sync");
            pool.trim_to(0)?;
            ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 0, "cann-open: RESERVED of {name} after trim_to(0)");
        } else {
            ensure_eq!(stats.reserved_current, 0, "RESERVED of {name} after a device sync with threshold 0");
        }
    }
    let [plain, reusing] = pools;
    dev.destroy_pool(&plain)?;
    dev.destroy_pool(&reusing)?;
    Ok(())
}

//! Unit tests on `mempool`'s mocks: every pool call the cache makes, in order.

use super::*;
use mempool::backend::{Mock, MockEvent, MockMemPool, MockStream, out_of_memory};
use mempool::mock::mockall::Sequence;
use mempool::mock::predicate::eq;
use mempool::{AttrId, RawAttrValue};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

const MIB: u64 = 1 << 20;
const CONFIG: CacheConfig =
    CacheConfig { lanes: 2, pool_size: 64 * MIB, release_threshold: 8 * MIB, sync_under_pressure: false };
/// Lane 0 is the first stream the cache creates, lane 1 the second.
const S0: MockStream = MockStream(1);
const S1: MockStream = MockStream(2);

fn ptr(n: u64) -> DevicePtr {
    DevicePtr::from_addr(n * 0x10_0000)
}

/// The pool calls the cache made, as text, in order (shared with the mock's closures).
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// How the mocked pool answers.
struct Script {
    /// Answers to `malloc_async`, in order.
    mallocs: Vec<Result<DevicePtr>>,
    /// What USED_MEM_CURRENT reads.
    used: u64,
}

/// A mock device whose pool answers per `script` and logs every call, with the
/// constructor's own calls (pool on device 0, threshold, event-dependency reuse)
/// expected exactly once.
fn device(log: &Log, script: Script) -> Mock {
    let mut dev = Mock::new();
    dev.expect_id().return_const(0u32);
    let log = log.clone();
    dev.expect_create_pool().withf(|p| p.max_size == CONFIG.pool_size && p.location.id == 0).times(1).return_once(
        move |_| {
            let mut pool = MockMemPool::new();
            pool.expect_set_attr_raw()
                .with(eq(AttrId::RELEASE_THRESHOLD), eq(RawAttrValue::U64(CONFIG.release_threshold)))
                .times(1)
                .returning(|_, _| Ok(()));
            pool.expect_set_attr_raw()
                .with(eq(AttrId::REUSE_FOLLOW_EVENT_DEPENDENCIES), eq(RawAttrValue::U32(1)))
                .times(1)
                .returning(|_, _| Ok(()));
            let answers = Mutex::new(VecDeque::from(script.mallocs));
            let l = log.clone();
            pool.expect_malloc_async().returning(move |size, s| {
                let answer = answers.lock().unwrap().pop_front().expect("a malloc the script did not plan for");
                match &answer {
                    Ok(p) => l.push(format!("malloc {} MiB on {} -> {p}", size / MIB, s.0)),
                    Err(e) => l.push(format!("malloc {} MiB on {} -> {:?}", size / MIB, s.0, e.kind())),
                }
                answer
            });
            let l = log.clone();
            pool.expect_free_async().returning(move |p, s| {
                l.push(format!("free {p} on {}", s.0));
                Ok(())
            });
            let l = log.clone();
            pool.expect_get_attr_raw().with(eq(AttrId::USED_MEM_CURRENT)).returning(move |_| {
                l.push("read USED".into());
                Ok(RawAttrValue::U64(script.used))
            });
            pool.expect_trim_to().returning(move |n| {
                log.push(format!("trim_to {} MiB", n / MIB));
                Ok(())
            });
            Ok(pool)
        },
    );
    dev.allow_handles();
    dev
}

fn oom(size: u64) -> Result<DevicePtr> {
    Err(out_of_memory(size))
}

#[test]
fn new_sets_up_the_pool_and_one_stream_per_lane() -> Result<()> {
    let log = Log::default();
    let dev = device(&log, Script { mallocs: vec![], used: 0 });
    let cache = TensorCache::new(&dev, CONFIG)?;
    assert_eq!((cache.stream(Lane(0)), cache.stream(Lane(1))), (&S0, &S1));
    drop(cache); // the mock pool checks its `times(1)` expectations here
    assert!(log.take().is_empty(), "no allocation, free or trim");
    Ok(())
}

#[test]
fn zero_lanes_is_refused_before_the_device_is_touched() {
    let dev = Mock::new(); // any call would panic
    let e = TensorCache::new(&dev, CacheConfig { lanes: 0, ..CONFIG }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParam);
}

#[test]
fn a_failed_event_creation_destroys_the_pool() {
    let mut dev = Mock::new();
    dev.expect_id().return_const(0u32);
    dev.expect_create_pool().times(1).returning(|_| Ok(MockMemPool::new()));
    dev.expect_create_event().times(1).returning(|| Err(Error::new(ErrorKind::Internal, 507_000, "create_event", "x")));
    dev.expect_destroy_pool().times(1).returning(|_| Ok(()));
    let e = TensorCache::new(&dev, CONFIG).unwrap_err();
    assert_eq!(e.op(), "create_event");
}

#[test]
fn a_miss_allocates_on_its_lane_and_a_hit_allocates_nothing() -> Result<()> {
    let log = Log::default();
    let dev = device(&log, Script { mallocs: vec![Ok(ptr(1))], used: 0 });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    let t = cache.acquire("w", 3 * MIB, Lane(1))?;
    assert_eq!(t, Tensor { ptr: ptr(1), bytes: 3 * MIB, hit: false });
    cache.give_back("w")?;
    let again = cache.acquire("w", MIB, Lane(1))?;
    assert_eq!(again, Tensor { ptr: ptr(1), bytes: 3 * MIB, hit: true });
    let stats = cache.stats_without_pool();
    assert_eq!((stats.hits, stats.misses, stats.resident_bytes), (1, 1, 3 * MIB));
    assert_eq!(log.take(), ["malloc 3 MiB on 2 -> 0x100000"]);
    Ok(())
}

#[test]
fn release_frees_once_on_the_owning_lane() -> Result<()> {
    let log = Log::default();
    let dev = device(&log, Script { mallocs: vec![Ok(ptr(1))], used: 0 });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    cache.acquire("w", MIB, Lane(0))?;
    assert!(cache.release("w")?);
    assert!(!cache.release("w")?, "a second release frees nothing");
    assert!(!cache.contains("w"));
    assert_eq!(log.take(), ["malloc 1 MiB on 1 -> 0x100000", "free 0x100000 on 1"]);
    Ok(())
}

#[test]
fn growing_an_idle_tensor_frees_it_before_allocating_the_new_one() -> Result<()> {
    let log = Log::default();
    let dev = device(&log, Script { mallocs: vec![Ok(ptr(1)), Ok(ptr(2))], used: 0 });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    cache.acquire("kv", MIB, Lane(0))?;
    let e = cache.acquire("kv", 4 * MIB, Lane(0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParam, "a checked-out tensor is never freed under its user");
    cache.give_back("kv")?;
    assert_eq!(cache.acquire("kv", 4 * MIB, Lane(0))?.ptr, ptr(2));
    assert_eq!(log.take(), ["malloc 1 MiB on 1 -> 0x100000", "free 0x100000 on 1", "malloc 4 MiB on 1 -> 0x200000"]);
    Ok(())
}

#[test]
fn using_a_tensor_on_another_lane_needs_a_hand_off() -> Result<()> {
    let log = Log::default();
    let dev = device(&log, Script { mallocs: vec![Ok(ptr(1))], used: 0 });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    cache.acquire("w", MIB, Lane(0))?;
    let e = cache.acquire("w", MIB, Lane(1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamOrderViolation);
    assert_eq!(cache.acquire("w", MIB, Lane(2)).unwrap_err().kind(), ErrorKind::InvalidParam);
    assert_eq!(log.take(), ["malloc 1 MiB on 1 -> 0x100000"], "no second allocation");
    Ok(())
}

#[test]
fn hand_off_records_on_the_old_lane_then_the_new_lane_waits_and_later_frees() -> Result<()> {
    let log = Log::default();
    let mut dev = device(&log, Script { mallocs: vec![Ok(ptr(1))], used: 0 });
    let mut seq = Sequence::new();
    let l = log.clone();
    dev.expect_record_event().with(eq(MockEvent(1)), eq(S0)).times(1).in_sequence(&mut seq).returning(move |_, _| {
        l.push("record on 1".into());
        Ok(())
    });
    let l = log.clone();
    dev.expect_stream_wait_event().with(eq(S1), eq(MockEvent(1))).times(1).in_sequence(&mut seq).returning(
        move |_, _| {
            l.push("2 waits".into());
            Ok(())
        },
    );
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    cache.acquire("act", MIB, Lane(0))?;
    cache.hand_off("act", Lane(1))?;
    cache.hand_off("act", Lane(1))?; // already there: no event
    assert!(cache.acquire("act", MIB, Lane(1))?.hit);
    cache.release("act")?;
    assert_eq!(log.take(), ["malloc 1 MiB on 1 -> 0x100000", "record on 1", "2 waits", "free 0x100000 on 2"]);
    Ok(())
}

#[test]
fn uploads_and_downloads_go_to_the_owning_lane() -> Result<()> {
    let log = Log::default();
    let mut dev = device(&log, Script { mallocs: vec![Ok(ptr(1))], used: 0 });
    dev.expect_memcpy_h2d_async()
        .withf(|&p, data, &s| p == ptr(1) && data == b"abc" && s == S1)
        .times(1)
        .returning(|_, _, _| Ok(()));
    dev.expect_memcpy_d2h_async()
        .withf(|dst, &p, &s| dst.len() == 3 && p == ptr(1) && s == S1)
        .times(1)
        .returning(|_, _, _| Ok(()));
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    cache.acquire("t", 3, Lane(1))?;
    cache.upload("t", b"abc")?;
    assert_eq!(cache.upload("t", b"abcd").unwrap_err().kind(), ErrorKind::InvalidParam, "4 bytes into 3");
    cache.download("t", &HostBuffer::new(3))?;
    assert_eq!(cache.upload("nope", b"a").unwrap_err().kind(), ErrorKind::InvalidParam);
    Ok(())
}

#[test]
fn out_of_memory_trims_to_used_and_retries() -> Result<()> {
    let log = Log::default();
    let dev = device(&log, Script { mallocs: vec![oom(8 * MIB), Ok(ptr(5))], used: 6 * MIB });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    assert_eq!(cache.acquire("big", 8 * MIB, Lane(0))?.ptr, ptr(5));
    assert_eq!(
        log.take(),
        ["malloc 8 MiB on 1 -> OutOfMemory", "read USED", "trim_to 6 MiB", "malloc 8 MiB on 1 -> 0x500000"]
    );
    assert_eq!(cache.stats_without_pool().trims, 1);
    Ok(())
}

#[test]
fn lasting_pressure_evicts_idle_tensors_least_recently_used_first() -> Result<()> {
    let log = Log::default();
    let mallocs = vec![Ok(ptr(1)), Ok(ptr(2)), Ok(ptr(3)), oom(2 * MIB), oom(2 * MIB), Ok(ptr(1))];
    let dev = device(&log, Script { mallocs, used: 0 });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    cache.acquire("in-use", 2 * MIB, Lane(0))?; // oldest, but checked out
    cache.acquire("old", 2 * MIB, Lane(1))?;
    cache.acquire("recent", 2 * MIB, Lane(0))?;
    cache.give_back("old")?;
    cache.give_back("recent")?;
    log.take();

    assert_eq!(cache.acquire("new", 2 * MIB, Lane(0))?.ptr, ptr(1));
    assert_eq!(
        log.take(),
        [
            "malloc 2 MiB on 1 -> OutOfMemory",
            "read USED",
            "trim_to 0 MiB",
            "malloc 2 MiB on 1 -> OutOfMemory",
            "free 0x200000 on 2", // "old" only: it covers the 2 MiB asked for
            "read USED",
            "trim_to 0 MiB",
            "malloc 2 MiB on 1 -> 0x100000",
        ]
    );
    assert!(cache.contains("in-use") && cache.contains("recent") && !cache.contains("old"));
    let stats = cache.stats_without_pool();
    assert_eq!((stats.evictions, stats.trims), (1, 2));
    Ok(())
}

#[test]
fn when_nothing_helps_the_pools_error_comes_back_and_nothing_else_is_freed() -> Result<()> {
    let log = Log::default();
    let dev = device(&log, Script { mallocs: vec![Ok(ptr(1)), oom(4 * MIB), oom(4 * MIB)], used: 2 * MIB });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    cache.acquire("pinned", 2 * MIB, Lane(0))?;
    let e = cache.acquire("big", 4 * MIB, Lane(0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert_eq!(e.oom().map(|o| o.requested), Some(4 * MIB));
    assert!(!cache.contains("big") && cache.contains("pinned"));
    assert_eq!(
        log.take(),
        [
            "malloc 2 MiB on 1 -> 0x100000",
            "malloc 4 MiB on 1 -> OutOfMemory",
            "read USED",
            "trim_to 2 MiB",
            "malloc 4 MiB on 1 -> OutOfMemory",
        ]
    );
    Ok(())
}

#[test]
fn a_configured_device_sync_is_the_last_resort() -> Result<()> {
    let log = Log::default();
    let mut dev = device(&log, Script { mallocs: vec![oom(4 * MIB), oom(4 * MIB), Ok(ptr(7))], used: 0 });
    let l = log.clone();
    dev.expect_synchronize_device().times(1).returning(move || {
        l.push("sync device".into());
        Ok(())
    });
    let mut cache = TensorCache::new(&dev, CacheConfig { sync_under_pressure: true, ..CONFIG })?;
    assert_eq!(cache.acquire("big", 4 * MIB, Lane(1))?.ptr, ptr(7));
    assert_eq!(
        log.take(),
        [
            "malloc 4 MiB on 2 -> OutOfMemory",
            "read USED",
            "trim_to 0 MiB",
            "malloc 4 MiB on 2 -> OutOfMemory",
            "sync device",
            "read USED",
            "trim_to 0 MiB",
            "malloc 4 MiB on 2 -> 0x700000",
        ]
    );
    assert_eq!(cache.stats_without_pool().syncs, 1);
    Ok(())
}

#[test]
fn other_allocation_errors_are_not_retried() -> Result<()> {
    let log = Log::default();
    let bad = Err(Error::new(ErrorKind::InvalidHandle, 107_017, "malloc_async", "stale stream"));
    let dev = device(&log, Script { mallocs: vec![bad], used: 0 });
    let mut cache = TensorCache::new(&dev, CONFIG)?;
    assert_eq!(cache.acquire("w", MIB, Lane(0)).unwrap_err().kind(), ErrorKind::InvalidHandle);
    assert_eq!(log.take(), ["malloc 1 MiB on 1 -> InvalidHandle"]);
    Ok(())
}

impl<D: Device> TensorCache<'_, D> {
    /// The cache's own counters, without reading the pool (whose mock would need more
    /// expectations).
    fn stats_without_pool(&self) -> CacheStats {
        CacheStats { resident_bytes: self.tensors.values().map(|e| e.bytes).sum(), ..self.stats }
    }
}

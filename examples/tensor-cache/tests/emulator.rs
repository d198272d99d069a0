//! The cache for real, on the CPU emulator: data through hand-offs, stream-ordered
//! frees, and memory pressure with real pool exhaustion.

use mempool::backend::Emulator;
use mempool::{ErrorKind, HostBuffer, Result};
use tensor_cache::{CacheConfig, Lane, TensorCache};

/// 64 KiB granules keep the pools small.
const G: u64 = 64 << 10;
const COMPUTE: Lane = Lane(0);
const COPY: Lane = Lane(1);

fn emulator(deferred: bool) -> Emulator {
    let b = Emulator::builder().granularity(G).device_memory(1 << 30);
    if deferred { b.deferred() } else { b }.build().expect("valid emulator configuration")
}

/// A pool of `granules` granules that releases everything cached at synchronization.
fn config(granules: u64, sync_under_pressure: bool) -> CacheConfig {
    CacheConfig { lanes: 2, pool_size: granules * G, release_threshold: 0, sync_under_pressure }
}

#[test]
fn data_survives_a_hand_off_and_the_free_follows_the_new_owner() -> Result<()> {
    let dev = emulator(false);
    let mut cache = TensorCache::new(&dev, config(64, false))?;
    let x = cache.acquire("x", 3 * G, COPY)?;
    let data: Vec<u8> = (0..=255).cycle().take(100_000).collect();
    cache.upload("x", &data)?;
    cache.hand_off("x", COMPUTE)?;
    let out = HostBuffer::new(data.len());
    cache.download("x", &out)?; // on the compute lane, ordered after the upload
    cache.synchronize()?;
    assert_eq!(out.to_vec(), data);

    // Freed on the compute lane (its new owner): the next compute allocation of that size
    // reuses the block at once. Had it been freed on the copy lane, compute would not be
    // ordered after that free and would get fresh memory.
    cache.release("x")?;
    let y = cache.acquire("y", 3 * G, COMPUTE)?;
    assert_eq!(y.ptr, x.ptr);
    Ok(())
}

#[test]
fn hits_keep_tensors_resident_and_statistics_add_up() -> Result<()> {
    let dev = emulator(false);
    let mut cache = TensorCache::new(&dev, config(64, false))?;
    for step in 0..5 {
        let w = cache.acquire("weights", 10 * G, COMPUTE)?;
        assert_eq!(w.hit, step > 0);
        cache.give_back("weights")?;
    }
    let stats = cache.stats()?;
    assert_eq!((stats.hits, stats.misses), (4, 1));
    assert_eq!((stats.resident_bytes, stats.pool.used_current), (10 * G, 10 * G));
    cache.release("weights")?;
    cache.synchronize()?;
    assert_eq!(cache.stats()?.pool.reserved_current, 0, "threshold 0: released at synchronization");
    Ok(())
}

#[test]
fn pressure_on_the_evicted_tensors_lane_is_served_without_waiting() -> Result<()> {
    // Deferred: nothing runs until the host synchronizes, so the evicted tensor's free has
    // not run; same-lane reuse still serves the allocation at once.
    let dev = emulator(true);
    let mut cache = TensorCache::new(&dev, config(8, false))?;
    let old = cache.acquire("old", 4 * G, COPY)?;
    cache.acquire("newer", 4 * G, COPY)?;
    cache.upload("old", b"queued, not run")?; // real work ahead of the free on the copy lane
    cache.give_back("old")?;
    cache.give_back("newer")?;

    let t = cache.acquire("incoming", 4 * G, COPY)?;
    assert_eq!(t.ptr, old.ptr, "the least recently used tensor's block, reused on its lane");
    assert!(cache.contains("newer") && !cache.contains("old"));
    let stats = cache.stats()?;
    assert_eq!((stats.evictions, stats.syncs), (1, 0));
    assert_eq!(stats.pool.reserved_current, 8 * G);
    Ok(())
}

#[test]
fn pressure_on_another_lane_needs_the_device_sync_when_frees_have_not_run() -> Result<()> {
    for sync_under_pressure in [false, true] {
        let dev = emulator(true);
        let mut cache = TensorCache::new(&dev, config(8, sync_under_pressure))?;
        cache.acquire("a", 4 * G, COPY)?;
        cache.acquire("b", 4 * G, COPY)?;
        cache.upload("a", b"queued, not run")?; // real work ahead of the frees on the copy lane
        cache.give_back("a")?;
        cache.give_back("b")?;

        // The copy lane's frees have not run and compute is not ordered after them:
        // trimming cannot release them and compute cannot reuse them.
        let result = cache.acquire("c", 8 * G, COMPUTE);
        let stats = cache.stats()?;
        assert_eq!(stats.evictions, 2, "both idle tensors were evicted");
        if sync_under_pressure {
            assert!(result.is_ok(), "after the device sync the pool is empty: {result:?}");
            assert_eq!((stats.syncs, stats.pool.used_current, stats.pool.reserved_current), (1, 8 * G, 8 * G));
        } else {
            let e = result.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::OutOfMemory);
            assert_eq!(e.oom().map(|o| o.largest_cached_block), Some(8 * G), "the two evicted blocks merged");
            assert_eq!(stats.pool.used_current, 0);
        }
    }
    Ok(())
}

#[test]
fn pressure_is_relieved_by_trimming_once_the_frees_have_run() -> Result<()> {
    let dev = emulator(true);
    let mut cache = TensorCache::new(&dev, config(8, false))?;
    cache.acquire("a", 8 * G, COPY)?;
    cache.upload("a", b"queued")?; // real work ahead of the free on the copy lane
    cache.release("a")?;
    // The copy lane runs its free, but the host does not observe it: the block is not
    // known complete, and compute is not ordered after it, so compute cannot reuse it.
    dev.run_pending(cache.stream(COPY))?;
    assert_eq!(cache.stats()?.pool.reserved_current, 8 * G);

    let b = cache.acquire("b", 8 * G, COMPUTE)?;
    assert!(!b.hit);
    let stats = cache.stats()?;
    assert_eq!((stats.trims, stats.evictions, stats.syncs), (1, 0, 0), "one trim released the block: {stats:?}");
    assert_eq!((stats.pool.used_current, stats.pool.reserved_current), (8 * G, 8 * G));
    Ok(())
}

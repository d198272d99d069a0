//! Scenarios 22-27: release at synchronization and `trim_to` ([contract §6](mempool_hal::contract::release)).
//!
//! Every synchronization (stream, event or device) brings each pool's RESERVED down to
//! `max(RELEASE_THRESHOLD, USED)` by releasing cached blocks whose free has completed,
//! smallest first, splitting the last one at the granularity and releasing its low end.
//! Scenarios that synchronize only to complete frees set the threshold to the pool size
//! so that nothing is released behind their back.
//!
//! On a backend whose profile is `cann-open` (contract §12, [`Harness::profile`])
//! synchronizations release nothing: where a synchronization would release, the scenarios
//! check that RESERVED did not move and that `trim_to` the same target gives the memory
//! back; and since nothing is reused, scenario 26's last request takes the lowest free range.

use super::{Gate, free, new_pool, offset, released_at_sync};
use crate::{Harness, ScenarioResult, ensure_eq, expect_error};
use mempool_hal::{Device, ErrorKind, MemPool, MemPoolExt, Profile, attr, code};

/// Scenario 22: with the default threshold of 0, a stream synchronization releases all
/// completed cached memory (RESERVED = USED), and the released range is free address
/// space again.
pub fn s22_release_threshold_zero<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;
    ensure_eq!(pool.get(attr::ReleaseThreshold)?, 0, "default release threshold");

    let a = pool.malloc_async(g, &s)?;
    let b = pool.malloc_async(2 * g, &s)?;
    let c = pool.malloc_async(3 * g, &s)?;
    free(&pool, b, &s)?;
    free(&pool, c, &s)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 6 * g, "RESERVED before synchronizing (nothing released yet)");

    dev.synchronize_stream(&s)?;
    released_at_sync(h.profile(), &pool, 6 * g, g, format_args!("a stream sync with threshold 0"))?;
    let stats = pool.stats()?;
    ensure_eq!(stats.used_current, g, "USED after a stream sync");
    ensure_eq!(stats.reserved_high, 6 * g, "RESERVED_MEM_HIGH is not lowered by a release");

    let q = pool.malloc_async(2 * g, &s)?;
    ensure_eq!(q, offset(a, g)?, "the released range is carved again from the low end");
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 3 * g, "RESERVED after allocating from released space");

    free(&pool, a, &s)?;
    free(&pool, q, &s)?;
    dev.synchronize_stream(&s)?;
    released_at_sync(h.profile(), &pool, 3 * g, 0, format_args!("freeing everything and synchronizing"))?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 23: with threshold T, a stream synchronization brings RESERVED down to
/// exactly `max(T, USED)` when enough completed memory is cached (T when USED is below
/// it, USED when USED is above it), splitting cached blocks as needed.
pub fn s23_release_threshold_t<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;
    pool.set(attr::ReleaseThreshold, 3 * g)?;

    let live = pool.malloc_async(g, &s)?;
    let b = pool.malloc_async(6 * g, &s)?;
    free(&pool, b, &s)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 7 * g, "RESERVED before synchronizing");
    dev.synchronize_stream(&s)?;
    released_at_sync(h.profile(), &pool, 7 * g, 3 * g, format_args!("sync: T = 3 granules, USED = 1"))?;
    ensure_eq!(pool.get(attr::UsedMemCurrent)?, g, "USED after sync");

    // The 2 cached granules are too small: this is fresh memory, USED goes above T.
    let c = pool.malloc_async(4 * g, &s)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 7 * g, "RESERVED after a fresh 4-granule allocation");
    dev.synchronize_stream(&s)?;
    released_at_sync(h.profile(), &pool, 7 * g, 5 * g, format_args!("sync: T = 3 granules, USED = 5"))?;

    free(&pool, live, &s)?;
    free(&pool, c, &s)?;
    dev.synchronize_stream(&s)?;
    released_at_sync(h.profile(), &pool, 5 * g, 3 * g, format_args!("freeing everything: T = 3 granules, USED = 0"))?;
    let stats = pool.stats()?;
    ensure_eq!(stats.used_current, 0, "USED after freeing everything");

    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 24: an event synchronization (event recorded after the frees) and a device
/// synchronization release exactly as a stream synchronization does; the device
/// synchronization covers frees on every stream.
pub fn s24_release_at_event_and_device_sync<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let [s1, s2, s3] = [dev.create_stream()?, dev.create_stream()?, dev.create_stream()?];
    let e = dev.create_event()?;

    let by_event = new_pool(&dev, 64)?;
    by_event.set(attr::ReleaseThreshold, 2 * g)?;
    let live1 = by_event.malloc_async(g, &s1)?;
    let b = by_event.malloc_async(5 * g, &s1)?;
    free(&by_event, b, &s1)?;
    dev.record_event(&e, &s1)?;
    ensure_eq!(by_event.get(attr::ReservedMemCurrent)?, 6 * g, "RESERVED before the event sync");
    dev.synchronize_event(&e)?;
    released_at_sync(h.profile(), &by_event, 6 * g, 2 * g, format_args!("an event sync: T = 2, USED = 1"))?;

    let by_device = new_pool(&dev, 64)?;
    by_device.set(attr::ReleaseThreshold, 2 * g)?;
    let live2 = by_device.malloc_async(g, &s1)?;
    let b2 = by_device.malloc_async(3 * g, &s2)?;
    let c2 = by_device.malloc_async(2 * g, &s3)?;
    free(&by_device, b2, &s2)?;
    free(&by_device, c2, &s3)?;
    ensure_eq!(by_device.get(attr::ReservedMemCurrent)?, 6 * g, "RESERVED before the device sync");
    dev.synchronize_device()?;
    released_at_sync(
        h.profile(),
        &by_device,
        6 * g,
        2 * g,
        format_args!("a device sync (frees on two streams): T = 2, USED = 1"),
    )?;
    ensure_eq!(by_event.get(attr::ReservedMemCurrent)?, 2 * g, "the other pool after the device sync");

    free(&by_event, live1, &s1)?;
    free(&by_device, live2, &s1)?;
    dev.synchronize_device()?;
    dev.destroy_pool(&by_event)?;
    dev.destroy_pool(&by_device)?;
    dev.destroy_event(&e)?;
    for s in [s1, s2, s3] {
        dev.destroy_stream(&s)?;
    }
    Ok(())
}

/// Scenario 25: `trim_to` above the pool size or below USED is refused (507000) and
/// changes nothing; at or above RESERVED it succeeds and changes nothing; down to USED
/// it releases the completed cached memory.
pub fn s25_trim_errors<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 16)?;
    let size = pool.size();
    let s = dev.create_stream()?;
    pool.set(attr::ReleaseThreshold, size)?;

    let live = pool.malloc_async(2 * g, &s)?;
    let b = pool.malloc_async(3 * g, &s)?;
    free(&pool, b, &s)?;
    dev.synchronize_stream(&s)?;
    let before = pool.stats()?;
    ensure_eq!(before.reserved_current, 5 * g, "RESERVED before trimming (threshold = pool size)");

    let refused = [
        (size + 1, "one byte above the pool size"),
        (size + g, "one granule above the pool size"),
        (u64::MAX, "u64::MAX"),
        (2 * g - 1, "one byte below USED"),
        (0, "0, below USED"),
    ];
    // CUDA refuses none of these: above the pool size there is nothing to release, and
    // below USED it releases what it can (down to USED).
    let cuda = h.profile().trim_below_used_releases();
    for (target, what) in refused {
        if cuda && target > size {
            pool.trim_to(target)?;
        } else if !cuda {
            expect_error(
                pool.trim_to(target),
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                format_args!("trim_to({target}): {what}"),
            )?;
        } else {
            continue;
        }
        ensure_eq!(pool.stats()?, before, "statistics after trim_to({target}): {what}");
    }
    for target in [5 * g, 5 * g + 1, 8 * g, size] {
        pool.trim_to(target)?;
        ensure_eq!(pool.stats()?, before, "statistics after trim_to({target}), at or above RESERVED");
    }

    // On CUDA, trim_to(0) with 2 granules in use releases down to USED.
    pool.trim_to(if cuda { 0 } else { 2 * g })?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * g, "RESERVED after trim_to(USED)");

    free(&pool, live, &s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 26: `trim_to` releases the smallest completed cached blocks first and splits
/// the last one at the granularity, releasing its low end, to hit the target exactly.
///
/// Cached blocks of 1, 2 and 4 granules (kept apart by live spacers); trimming 2
/// granules must release the 1-granule block and the low half of the 2-granule block,
/// so the next 1-granule request on the stream gets the upper half of that block.
pub fn s26_trim_smallest_first_split<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;
    pool.set(attr::ReleaseThreshold, pool.size())?;

    let one = pool.malloc_async(g, &s)?;
    let spacer1 = pool.malloc_async(g, &s)?;
    let two = pool.malloc_async(2 * g, &s)?;
    let spacer2 = pool.malloc_async(g, &s)?;
    let four = pool.malloc_async(4 * g, &s)?;
    let spacer3 = pool.malloc_async(g, &s)?;
    ensure_eq!(two, offset(one, 2 * g)?, "layout: the 2-granule block follows a spacer");
    ensure_eq!(four, offset(one, 5 * g)?, "layout: the 4-granule block follows a spacer");
    free(&pool, four, &s)?;
    free(&pool, one, &s)?;
    free(&pool, two, &s)?;
    dev.synchronize_stream(&s)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 10 * g, "RESERVED before trimming (threshold = pool size)");

    pool.trim_to(8 * g)?;
    let stats = pool.stats()?;
    ensure_eq!(stats.reserved_current, 8 * g, "RESERVED after trim_to(8 granules)");
    ensure_eq!(stats.used_current, 3 * g, "USED after trimming (the spacers)");

    let p = pool.malloc_async(g, &s)?;
    if h.profile() == Profile::CannOpen {
        // No reuse: the lowest of the smallest free ranges, where the 1-granule block was.
        ensure_eq!(p, one, "cann-open: a 1-granule request takes the released range of the 1-granule block");
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 9 * g, "cann-open: RESERVED after a fresh granule");
    } else {
        ensure_eq!(
            p,
            offset(two, g)?,
            "a 1-granule request gets the upper half of the split 2-granule block (smallest first, low end released)"
        );
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 8 * g, "RESERVED after reusing the kept half");
    }

    pool.trim_to(4 * g)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 4 * g, "RESERVED after trim_to(USED)");

    for q in [p, spacer1, spacer2, spacer3] {
        free(&pool, q, &s)?;
    }
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 27: a cached block whose free has not executed yet (its stream is blocked
/// before the free) is released neither by synchronizing another stream nor by
/// `trim_to`; once its stream passes the free and is synchronized, it is.
///
/// Needs [`Capability::BlockingHostFunctions`].
///
/// [`Capability::BlockingHostFunctions`]: crate::Capability::BlockingHostFunctions
pub fn s27_unexecuted_free_not_released<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let a = dev.create_stream()?;
    let b = dev.create_stream()?;
    let gate = Gate::new();

    dev.launch_host_func(&a, gate.blocker())?;
    let x = pool.malloc_async(2 * g, &a)?;
    free(&pool, x, &a)?;
    let y = pool.malloc_async(g, &b)?;
    free(&pool, y, &b)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 3 * g, "RESERVED with two cached blocks");

    dev.synchronize_stream(&b)?;
    // B's block is released (on cann-open by the trim), A's (free not executed) is not.
    released_at_sync(h.profile(), &pool, 3 * g, 2 * g, format_args!("synchronizing B"))?;
    pool.trim_to(0)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * g, "RESERVED after trim_to(0) with A still blocked");

    gate.open();
    dev.synchronize_stream(&a)?;
    gate.check_not_expired()?;
    released_at_sync(h.profile(), &pool, 2 * g, 0, format_args!("A passed the free and was synchronized"))?;
    let stats = pool.stats()?;
    ensure_eq!(stats.used_current, 0, "USED at the end");

    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&a)?;
    dev.destroy_stream(&b)?;
    Ok(())
}

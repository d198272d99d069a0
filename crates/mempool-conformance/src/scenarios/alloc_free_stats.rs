//! Scenarios 9-21: allocation, free, reuse and statistics ([contract](mempool_hal::contract) §§4, 5 and 7).
//!
//! Addresses are checked exactly. A pool carves fresh blocks from the low end of its
//! address range, smallest free range first, so on a new pool the `n`-th fresh block
//! starts right after the `(n-1)`-th; cached blocks are chosen smallest first, then
//! lowest address, and are taken from their low end.
//!
//! On a backend whose profile is `cann-open` (contract §12, [`Harness::profile`]) nothing is
//! reused: the scenarios of the reuse rules (11, 12, 14-18, 21) expect fresh memory right
//! after the last fresh block instead, RESERVED growing, and `trim_to` giving the cached
//! memory back; scenario 19 trims before it allocates again.

use super::{Gate, free, new_pool, offset};
use crate::{Failure, Harness, ScenarioResult, ensure, ensure_eq, ensure_ne, expect_error};
use mempool_hal::{Device, DevicePtr, ErrorKind, MemPool, MemPoolExt, PoolStats, Profile, attr, code, round_up};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Scenario 9: a 1-byte allocation uses and reserves one granule; freeing it drops
/// USED to 0 and keeps the granule reserved (cached, no synchronization). Size 0 and a
/// size that overflows when rounded are refused (107000) and change nothing; `g + 1`
/// bytes take two granules.
pub fn s09_one_byte_rounds_to_granule<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;

    let p = pool.malloc_async(1, &s)?;
    ensure!(!p.is_null(), "a pool handed out the null address");
    let one = PoolStats { reserved_current: g, reserved_high: g, used_current: g, used_high: g };
    ensure_eq!(pool.stats()?, one, "statistics after a 1-byte allocation (granularity {g})");

    free(&pool, p, &s)?;
    let cached = PoolStats { used_current: 0, ..one };
    ensure_eq!(pool.stats()?, cached, "statistics after freeing it (the granule stays cached)");

    let mut refused = vec![0];
    if g > 1 {
        // Sizes that overflow when rounded up to the granularity.
        refused.extend([u64::MAX, u64::MAX - g + 2]);
    }
    for size in refused {
        expect_error(
            pool.malloc_async(size, &s),
            ErrorKind::InvalidParam,
            code::ACL_ERROR_RT_PARAM_INVALID,
            format_args!("malloc_async of {size} bytes"),
        )?;
        ensure_eq!(pool.stats()?, cached, "statistics after the refused allocation of {size} bytes");
    }

    let q = pool.malloc_async(g + 1, &s)?;
    ensure_eq!(pool.get(attr::UsedMemCurrent)?, 2 * g, "USED after allocating g + 1 bytes");
    ensure_eq!(
        pool.get(attr::ReservedMemCurrent)?,
        3 * g,
        "RESERVED after allocating g + 1 bytes (the cached granule is too small, a fresh block is reserved)"
    );

    free(&pool, q, &s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 10: consecutive fresh allocations on a new pool are carved from the low
/// end of its address range in address order, whichever stream asks.
pub fn s10_fresh_allocations_in_address_order<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let a = dev.create_stream()?;
    let b = dev.create_stream()?;

    let sizes = [g, 2 * g, 1, 3 * g, g + 1];
    let mut next: Option<DevicePtr> = None;
    let mut total = 0;
    let mut live = Vec::new();
    for (i, size) in sizes.into_iter().enumerate() {
        let stream = if i % 2 == 0 { &a } else { &b };
        let p = pool.malloc_async(size, stream)?;
        if let Some(expected) = next {
            ensure_eq!(p, expected, "fresh allocation #{i} ({size} bytes) is not right after the previous one");
        }
        let rounded = round_up(size, g).ok_or_else(|| Failure::new("rounded size overflows"))?;
        next = Some(offset(p, rounded)?);
        total += rounded;
        live.push((p, i));
    }
    let stats = pool.stats()?;
    ensure_eq!(stats.used_current, total, "USED after the fresh allocations");
    ensure_eq!(stats.reserved_current, total, "RESERVED after the fresh allocations");

    for (p, i) in live {
        free(&pool, p, if i % 2 == 0 { &a } else { &b })?;
    }
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&a)?;
    dev.destroy_stream(&b)?;
    Ok(())
}

/// Scenario 11: alloc, free, alloc of the same size on one stream returns the same
/// address without reserving more; a smaller request takes the low end of the cached
/// block and the rest stays cached for the next request.
///
/// On `cann-open`: every request takes fresh memory after the last one, RESERVED grows
/// with each, and `trim_to(USED)` after a synchronization gives the cached blocks back.
pub fn s11_same_stream_reuse<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;
    if h.profile() == Profile::CannOpen {
        let p = pool.malloc_async(3 * g, &s)?;
        free(&pool, p, &s)?;
        let q = pool.malloc_async(3 * g, &s)?;
        ensure_eq!(q, offset(p, 3 * g)?, "cann-open: same-size allocation after a free takes fresh memory");
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 6 * g, "cann-open: RESERVED grows with the fresh block");
        free(&pool, q, &s)?;
        let low = pool.malloc_async(g, &s)?;
        ensure_eq!(low, offset(p, 6 * g)?, "cann-open: a 1-granule request is fresh too");
        let stats = pool.stats()?;
        ensure_eq!(stats.reserved_current, 7 * g, "cann-open: RESERVED with 6 granules cached");
        ensure_eq!(stats.used_current, g, "cann-open: USED");
        dev.synchronize_stream(&s)?;
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 7 * g, "cann-open: a synchronization releases nothing");
        pool.trim_to(g)?;
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, g, "cann-open: trim_to(USED) gives the cached blocks back");
        let again = pool.malloc_async(3 * g, &s)?;
        ensure_eq!(again, p, "cann-open: the trimmed range is fresh space again, carved from the low end");
        free(&pool, low, &s)?;
        free(&pool, again, &s)?;
        dev.destroy_pool(&pool)?;
        dev.destroy_stream(&s)?;
        return Ok(());
    }

    let p = pool.malloc_async(3 * g, &s)?;
    free(&pool, p, &s)?;
    let q = pool.malloc_async(3 * g, &s)?;
    ensure_eq!(q, p, "same-size allocation after a free on the same stream");
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 3 * g, "RESERVED after same-stream reuse");
    ensure_eq!(pool.get(attr::UsedMemCurrent)?, 3 * g, "USED after same-stream reuse");

    free(&pool, q, &s)?;
    let low = pool.malloc_async(g, &s)?;
    ensure_eq!(low, p, "a 1-granule request takes the low end of the cached 3-granule block");
    let rest = pool.malloc_async(2 * g, &s)?;
    ensure_eq!(rest, offset(p, g)?, "a 2-granule request takes the cached rest of the block");
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 3 * g, "RESERVED after splitting the cached block");

    free(&pool, low, &s)?;
    free(&pool, rest, &s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 12: with cached blocks of 3, 5 and 8 granules (kept apart by live spacer
/// allocations, since neighbours freed on one stream merge), a 4-granule request takes
/// the 5-granule block and leaves 1 granule cached, which the next 1-granule request
/// gets (it is smaller than the 3-granule block).
pub fn s12_best_fit<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;

    let three = pool.malloc_async(3 * g, &s)?;
    let spacer1 = pool.malloc_async(g, &s)?;
    let five = pool.malloc_async(5 * g, &s)?;
    let spacer2 = pool.malloc_async(g, &s)?;
    let eight = pool.malloc_async(8 * g, &s)?;
    let spacer3 = pool.malloc_async(g, &s)?;
    ensure_eq!(five, offset(three, 4 * g)?, "layout: the 5-granule block follows the 3-granule block and a spacer");
    ensure_eq!(eight, offset(five, 6 * g)?, "layout: the 8-granule block follows the 5-granule block and a spacer");

    // Free in an order that is neither size nor address order.
    free(&pool, eight, &s)?;
    free(&pool, three, &s)?;
    free(&pool, five, &s)?;
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 19 * g, "RESERVED with 16 granules cached and 3 spacers live");

    let four = pool.malloc_async(4 * g, &s)?;
    let one = pool.malloc_async(g, &s)?;
    let stats = pool.stats()?;
    if h.profile() == Profile::CannOpen {
        ensure_eq!(four, offset(three, 19 * g)?, "cann-open: a 4-granule request takes fresh memory");
        ensure_eq!(one, offset(three, 23 * g)?, "cann-open: a 1-granule request takes fresh memory");
        ensure_eq!(stats.reserved_current, 24 * g, "cann-open: RESERVED grows by both requests");
    } else {
        ensure_eq!(four, five, "a 4-granule request takes the smallest cached block that fits (the 5-granule one)");
        ensure_eq!(one, offset(five, 4 * g)?, "a 1-granule request takes the 1 granule left of the 5-granule block");
        ensure_eq!(stats.reserved_current, 19 * g, "RESERVED after reusing cached blocks");
    }
    ensure_eq!(stats.used_current, 8 * g, "USED: 3 spacers, 4 granules and 1 granule");

    for p in [four, one, spacer1, spacer2, spacer3] {
        free(&pool, p, &s)?;
    }
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 13: with no reuse flag and no synchronization, memory freed on stream A is
/// not reused on stream B: B gets fresh memory and RESERVED grows.
pub fn s13_cross_stream_no_flags_no_sync<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let a = dev.create_stream()?;
    let b = dev.create_stream()?;

    let x = pool.malloc_async(2 * g, &a)?;
    free(&pool, x, &a)?;
    let y = pool.malloc_async(2 * g, &b)?;
    ensure_ne!(y, x, "B reused a block freed on A without any ordering or flag");
    ensure_eq!(y, offset(x, 2 * g)?, "B's allocation is fresh memory right after A's freed block");
    let z = pool.malloc_async(g, &b)?;
    ensure_eq!(z, offset(x, 4 * g)?, "a smaller request on B is not carved from A's freed block either");
    let stats = pool.stats()?;
    ensure_eq!(stats.reserved_current, 5 * g, "RESERVED: A's cached block plus B's two fresh blocks");
    ensure_eq!(stats.used_current, 3 * g, "USED: B's two blocks");

    free(&pool, y, &b)?;
    free(&pool, z, &b)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&a)?;
    dev.destroy_stream(&b)?;
    Ok(())
}

/// How the host observes that a free has completed, for scenario 14.
#[derive(Debug, Clone, Copy)]
enum Observe {
    Stream,
    Event,
    Device,
}

/// Scenario 14: once the host has synchronized with the freeing stream (or an event
/// recorded after the free, or the device), the block is reused on another stream with
/// no reuse flag set. The release threshold is the pool size, so the synchronization
/// keeps the cached block.
pub fn s14_cross_stream_after_sync<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    for how in [Observe::Stream, Observe::Event, Observe::Device] {
        let pool = new_pool(&dev, 64)?;
        pool.set(attr::ReleaseThreshold, pool.size())?;
        let a = dev.create_stream()?;
        let b = dev.create_stream()?;
        let e = dev.create_event()?;

        let x = pool.malloc_async(2 * g, &a)?;
        free(&pool, x, &a)?;
        match how {
            Observe::Stream => dev.synchronize_stream(&a)?,
            Observe::Event => {
                dev.record_event(&e, &a)?;
                dev.synchronize_event(&e)?;
            }
            Observe::Device => dev.synchronize_device()?,
        }
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * g, "RESERVED after a {how:?} sync (threshold = pool size)");
        let y = pool.malloc_async(2 * g, &b)?;
        if h.profile() == Profile::CannOpen {
            ensure_eq!(y, offset(x, 2 * g)?, "cann-open: B takes fresh memory after a {how:?} synchronization");
            ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 4 * g, "cann-open: RESERVED grows ({how:?} sync)");
        } else {
            ensure_eq!(y, x, "B reuses the block freed on A after a {how:?} synchronization");
            ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * g, "RESERVED after reuse ({how:?} sync)");
        }

        free(&pool, y, &b)?;
        dev.destroy_pool(&pool)?;
        dev.destroy_event(&e)?;
        dev.destroy_stream(&a)?;
        dev.destroy_stream(&b)?;
    }
    Ok(())
}

/// One case of scenario 15 on a fresh pool: allocate and free a 2-granule block X on A,
/// record E on A (after the free, or before it), make B wait on E, and allocate 2
/// granules on B. Returns (X, B's block).
fn event_dependency_case<D: Device>(dev: &D, flag: bool, record_before_free: bool) -> Result<[DevicePtr; 2], Failure> {
    let g = dev.pool_granularity();
    let pool = new_pool(dev, 64)?;
    pool.set(attr::ReuseFollowEventDependencies, flag)?;
    let a = dev.create_stream()?;
    let b = dev.create_stream()?;
    let e = dev.create_event()?;

    let x = pool.malloc_async(2 * g, &a)?;
    if record_before_free {
        dev.record_event(&e, &a)?;
        free(&pool, x, &a)?;
    } else {
        free(&pool, x, &a)?;
        dev.record_event(&e, &a)?;
    }
    dev.stream_wait_event(&b, &e)?;
    let y = pool.malloc_async(2 * g, &b)?;

    free(&pool, y, &b)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_event(&e)?;
    dev.destroy_stream(&a)?;
    dev.destroy_stream(&b)?;
    Ok([x, y])
}

/// Scenario 15: with REUSE_FOLLOW_EVENT_DEPENDENCIES on, B reuses a block freed on A
/// when B waits on an event recorded on A after the free; with the flag off it does
/// not; with the event recorded before the free it does not.
pub fn s15_event_dependency<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();

    let [x, y] = event_dependency_case(&dev, true, false)?;
    if h.profile() == Profile::CannOpen {
        ensure_eq!(y, offset(x, 2 * g)?, "cann-open, flag 1 on, E recorded after the free: B gets fresh memory");
    } else {
        ensure_eq!(y, x, "flag 1 on, E recorded after the free: B reuses A's block");
    }
    let [x, y] = event_dependency_case(&dev, false, false)?;
    ensure_eq!(y, offset(x, 2 * g)?, "flag 1 off: B gets fresh memory, not A's block");
    let [x, y] = event_dependency_case(&dev, true, true)?;
    ensure_eq!(y, offset(x, 2 * g)?, "flag 1 on, E recorded before the free: B gets fresh memory, not A's block");
    Ok(())
}

/// Scenario 16: with REUSE_FOLLOW_EVENT_DEPENDENCIES on, the ordering A → E1 → B →
/// E2 → C lets C reuse a block freed on A; a stream D that waited on nothing does not.
pub fn s16_event_chain<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    pool.set(attr::ReuseFollowEventDependencies, true)?;
    let [a, b, c, d] = [dev.create_stream()?, dev.create_stream()?, dev.create_stream()?, dev.create_stream()?];
    let e1 = dev.create_event()?;
    let e2 = dev.create_event()?;

    let x = pool.malloc_async(2 * g, &a)?;
    free(&pool, x, &a)?;
    dev.record_event(&e1, &a)?;
    dev.stream_wait_event(&b, &e1)?;
    dev.record_event(&e2, &b)?;
    dev.stream_wait_event(&c, &e2)?;

    let unordered = pool.malloc_async(2 * g, &d)?;
    ensure_eq!(unordered, offset(x, 2 * g)?, "D, not ordered after the free, gets fresh memory");
    let reused = pool.malloc_async(2 * g, &c)?;
    if h.profile() == Profile::CannOpen {
        ensure_eq!(reused, offset(x, 4 * g)?, "cann-open: C, ordered after A's free, still gets fresh memory");
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 6 * g, "cann-open: RESERVED: X and two fresh blocks");
    } else {
        ensure_eq!(reused, x, "C, ordered after A's free through E1, B and E2, reuses the block");
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 4 * g, "RESERVED: X and D's fresh block");
    }

    free(&pool, unordered, &d)?;
    free(&pool, reused, &c)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_event(&e1)?;
    dev.destroy_event(&e2)?;
    for s in [a, b, c, d] {
        dev.destroy_stream(&s)?;
    }
    Ok(())
}

/// Scenario 17: with REUSE_ALLOW_OPPORTUNISTIC on, B reuses a block freed on A only
/// once A has executed the free (without the host synchronizing); a pool without the
/// flag does not reuse it even then.
///
/// Needs [`Capability::BlockingHostFunctions`] and
/// [`Capability::ObserveExecutionWithoutSync`].
///
/// [`Capability::BlockingHostFunctions`]: crate::Capability::BlockingHostFunctions
/// [`Capability::ObserveExecutionWithoutSync`]: crate::Capability::ObserveExecutionWithoutSync
pub fn s17_opportunistic_reuse<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let with_flag = new_pool(&dev, 64)?;
    with_flag.set(attr::ReuseAllowOpportunistic, true)?;
    let without = new_pool(&dev, 64)?;
    let a = dev.create_stream()?;
    let b = dev.create_stream()?;
    let gate = Gate::new();

    dev.launch_host_func(&a, gate.blocker())?;
    let x = with_flag.malloc_async(2 * g, &a)?;
    free(&with_flag, x, &a)?;
    let xw = without.malloc_async(2 * g, &a)?;
    free(&without, xw, &a)?;

    let early = with_flag.malloc_async(2 * g, &b)?;
    ensure_eq!(early, offset(x, 2 * g)?, "flag 2 on, A blocked before the free: B gets fresh memory");

    gate.open();
    h.let_run(&dev, &a)?;
    gate.check_not_expired()?;

    let late = with_flag.malloc_async(2 * g, &b)?;
    if h.profile() == Profile::CannOpen {
        ensure_eq!(late, offset(x, 4 * g)?, "cann-open, flag 2 on, A has executed the free: B gets fresh memory");
    } else {
        ensure_eq!(late, x, "flag 2 on, A has executed the free: B reuses the block");
    }
    let late_without = without.malloc_async(2 * g, &b)?;
    ensure_eq!(late_without, offset(xw, 2 * g)?, "flag 2 off, A has executed the free: B still gets fresh memory");

    free(&with_flag, early, &b)?;
    free(&with_flag, late, &b)?;
    free(&without, late_without, &b)?;
    dev.synchronize_device()?;
    dev.destroy_pool(&with_flag)?;
    dev.destroy_pool(&without)?;
    dev.destroy_stream(&a)?;
    dev.destroy_stream(&b)?;
    Ok(())
}

/// Scenario 18: with REUSE_ALLOW_INTERNAL_DEPENDENCIES on, B reuses a block freed on A
/// while A is still blocked before the free, and work enqueued on B after the
/// allocation does not run until A has passed the free. Without the flag the block is
/// not reused.
///
/// Needs [`Capability::BlockingHostFunctions`].
///
/// [`Capability::BlockingHostFunctions`]: crate::Capability::BlockingHostFunctions
pub fn s18_internal_dependencies<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    pool.set(attr::ReuseAllowInternalDependencies, true)?;
    let without = new_pool(&dev, 64)?;
    let a = dev.create_stream()?;
    let b = dev.create_stream()?;
    let gate = Gate::new();
    let a_done = Arc::new(AtomicBool::new(false));
    let b_ran = Arc::new(AtomicBool::new(false));
    let b_saw_a_done = Arc::new(AtomicBool::new(false));

    let flag = Arc::clone(&a_done);
    dev.launch_host_func(&a, gate.blocker_then(move || flag.store(true, Ordering::SeqCst)))?;
    let x = pool.malloc_async(2 * g, &a)?;
    free(&pool, x, &a)?;
    let xw = without.malloc_async(2 * g, &a)?;
    free(&without, xw, &a)?;

    let y = pool.malloc_async(2 * g, &b)?;
    let cann_open = h.profile() == Profile::CannOpen;
    if cann_open {
        ensure_eq!(y, offset(x, 2 * g)?, "cann-open, flag 3 on: B gets fresh memory, no dependency is inserted");
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 4 * g, "cann-open: RESERVED grows");
    } else {
        ensure_eq!(y, x, "flag 3 on: B reuses A's block while A is still blocked before the free");
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * g, "RESERVED after internal-dependency reuse");
    }
    let yw = without.malloc_async(2 * g, &b)?;
    ensure_eq!(yw, offset(xw, 2 * g)?, "flag 3 off: B gets fresh memory");

    let (seen, ran) = (Arc::clone(&a_done), Arc::clone(&b_ran));
    let saw = Arc::clone(&b_saw_a_done);
    dev.launch_host_func(
        &b,
        Box::new(move || {
            saw.store(seen.load(Ordering::SeqCst), Ordering::SeqCst);
            ran.store(true, Ordering::SeqCst);
        }),
    )?;
    std::thread::sleep(Duration::from_millis(50));
    // On cann-open B reused nothing, so nothing orders B's work after A's free.
    if !cann_open {
        ensure!(!b_ran.load(Ordering::SeqCst), "work on B after the reused allocation ran while A was still blocked");
    }

    gate.open();
    dev.synchronize_stream(&b)?;
    gate.check_not_expired()?;
    ensure!(b_ran.load(Ordering::SeqCst), "work on B had not run after synchronizing B");
    if !cann_open {
        ensure!(b_saw_a_done.load(Ordering::SeqCst), "work on B ran before A passed the free");
    }

    free(&pool, y, &b)?;
    free(&without, yw, &b)?;
    dev.synchronize_device()?;
    dev.destroy_pool(&pool)?;
    dev.destroy_pool(&without)?;
    dev.destroy_stream(&a)?;
    dev.destroy_stream(&b)?;
    Ok(())
}

/// Scenario 19: a pool of 4 granules hands out 4; the 5th request fails with
/// `OutOfMemory` (507000) carrying a statistics snapshot; a 2-granule request after
/// freeing one granule fails too and reports the cached granule (fragmentation, not
/// exhaustion); then a 1-granule request succeeds: the pool still works.
pub fn s19_pool_exhaustion<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 4)?;
    let s = dev.create_stream()?;

    let mut live = Vec::new();
    for _ in 0..4 {
        live.push(pool.malloc_async(g, &s)?);
    }
    let full = pool.stats()?;
    let err = expect_error(
        pool.malloc_async(g, &s),
        ErrorKind::OutOfMemory,
        code::ACL_ERROR_RT_INTERNAL_ERROR,
        "a 5th granule from a pool of 4",
    )?;
    let Some(info) = err.oom() else {
        return Err(Failure::new(format!("the out-of-memory error carries no snapshot: {err}")));
    };
    ensure_eq!(info.requested, g, "OomInfo::requested");
    ensure_eq!(info.stats.used_current, 4 * g, "OomInfo::stats.used_current");
    ensure_eq!(info.stats.reserved_current, 4 * g, "OomInfo::stats.reserved_current");
    ensure_eq!(info.pool_size, 4 * g, "OomInfo::pool_size");
    ensure_eq!(info.largest_free_range, 0, "OomInfo::largest_free_range of a fully reserved pool");
    ensure_eq!(info.largest_cached_block, 0, "OomInfo::largest_cached_block with nothing freed");
    ensure_eq!(pool.stats()?, full, "statistics after the failed allocation");

    let freed = live.swap_remove(1);
    free(&pool, freed, &s)?;
    let err = expect_error(
        pool.malloc_async(2 * g, &s),
        ErrorKind::OutOfMemory,
        code::ACL_ERROR_RT_INTERNAL_ERROR,
        "2 granules from a full pool with 1 granule cached",
    )?;
    let Some(info) = err.oom() else {
        return Err(Failure::new(format!("the out-of-memory error carries no snapshot: {err}")));
    };
    ensure_eq!(info.requested, 2 * g, "OomInfo::requested of the 2-granule request");
    ensure_eq!(info.stats.used_current, 3 * g, "OomInfo::stats.used_current with one granule freed");
    ensure_eq!(info.largest_cached_block, g, "OomInfo::largest_cached_block with one granule freed");
    ensure_eq!(info.largest_free_range, 0, "OomInfo::largest_free_range with one granule freed");

    if h.profile() == Profile::CannOpen {
        // Nothing is reused: the cached granule comes back only through trim_to.
        dev.synchronize_stream(&s)?;
        pool.trim_to(3 * g)?;
        ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 3 * g, "cann-open: RESERVED after trim_to(USED)");
    }
    let again = pool.malloc_async(g, &s)?;
    ensure_eq!(again, freed, "the freed granule is handed out again on its stream");
    ensure_eq!(pool.get(attr::UsedMemCurrent)?, 4 * g, "USED after allocating again");
    live.push(again);

    for p in live {
        free(&pool, p, &s)?;
    }
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 20: freeing an interior pointer, freeing twice, and freeing an address no
/// pool knows are refused with `InvalidPointer` (107000), and the statistics do not
/// move; the allocations stay live and can be freed normally afterwards.
///
/// Needs [`Capability::CheckedFree`]: these frees are deliberately bad.
///
/// [`Capability::CheckedFree`]: crate::Capability::CheckedFree
pub fn s20_bad_free_pointers<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;

    let p = pool.malloc_async(2 * g, &s)?;
    let q = pool.malloc_async(g, &s)?;
    let r = pool.malloc_async(g, &s)?;
    free(&pool, r, &s)?;
    let before = pool.stats()?;

    let mut bad = vec![
        ("an interior pointer (start + 1)", offset(p, 1)?),
        ("an interior pointer (start + one granule)", offset(p, g)?),
        ("a pointer already freed", r),
        ("an address no pool knows (0x1000)", DevicePtr::from_addr(0x1000)),
        ("an address past the end of the pool", offset(p, pool.size())?),
    ];
    if g > 1 {
        bad.push(("an interior pointer (end - 1)", offset(q, g - 1)?));
    }
    for (what, ptr) in bad {
        // SAFETY: deliberately not a live allocation. This scenario runs only on
        // backends with `Capability::CheckedFree`, whose contract is to answer such a
        // pointer with `InvalidPointer`; that is what is being verified. No work is
        // enqueued that touches the pool's memory.
        let result = unsafe { pool.free_async(ptr, &s) };
        expect_error(
            result,
            ErrorKind::InvalidPointer,
            code::ACL_ERROR_RT_PARAM_INVALID,
            format_args!("free_async of {what}: {ptr}"),
        )?;
        ensure_eq!(pool.stats()?, before, "statistics after the refused free of {what}");
    }

    free(&pool, p, &s)?;
    free(&pool, q, &s)?;
    ensure_eq!(pool.get(attr::UsedMemCurrent)?, 0, "USED after freeing the live allocations");
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 21: the HIGH marks follow the maxima of their counters (not falling with
/// them), reset to 0 even while the counters are above 0, and rise again with the next
/// allocation.
pub fn s21_high_marks<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;

    let a = pool.malloc_async(2 * g, &s)?;
    let b = pool.malloc_async(3 * g, &s)?;
    let peak = PoolStats { reserved_current: 5 * g, reserved_high: 5 * g, used_current: 5 * g, used_high: 5 * g };
    ensure_eq!(pool.stats()?, peak, "statistics after allocating 2 and 3 granules");
    free(&pool, b, &s)?;
    ensure_eq!(pool.stats()?, PoolStats { used_current: 2 * g, ..peak }, "after freeing 3 granules (marks stay)");

    // Ascend resets a mark to 0, CUDA to its CURRENT value.
    let to_current = h.profile().high_resets_to_current();
    pool.reset(attr::UsedMemHigh)?;
    let want = if to_current { 2 * g } else { 0 };
    ensure_eq!(pool.get(attr::UsedMemHigh)?, want, "USED_MEM_HIGH after reset, with USED at 2 granules");
    ensure_eq!(pool.get(attr::ReservedMemHigh)?, 5 * g, "RESERVED_MEM_HIGH is not reset with USED_MEM_HIGH");
    pool.reset(attr::ReservedMemHigh)?;
    let want = if to_current { 5 * g } else { 0 };
    ensure_eq!(pool.get(attr::ReservedMemHigh)?, want, "RESERVED_MEM_HIGH after reset, with RESERVED at 5 granules");
    ensure_eq!(pool.get(attr::UsedMemCurrent)?, 2 * g, "USED after the resets");
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 5 * g, "RESERVED after the resets");

    // Reuses the low granule of the cached 3-granule block: USED changes, RESERVED not
    // (on cann-open: fresh, both change).
    let cann_open = h.profile() == Profile::CannOpen;
    let c = pool.malloc_async(g, &s)?;
    if cann_open {
        ensure_eq!(c, offset(a, 5 * g)?, "cann-open: a 1-granule request takes fresh memory");
    } else {
        ensure_eq!(c, b, "a 1-granule request reuses the cached block");
    }
    ensure_eq!(pool.get(attr::UsedMemHigh)?, 3 * g, "USED_MEM_HIGH rises again with the next allocation");
    // Fresh: the 2 cached granules are too small for 4.
    let d = pool.malloc_async(4 * g, &s)?;
    let stats = pool.stats()?;
    let reserved = if cann_open { 10 * g } else { 9 * g };
    ensure_eq!(stats.used_high, 7 * g, "USED_MEM_HIGH after a fresh 4-granule allocation");
    ensure_eq!(stats.reserved_current, reserved, "RESERVED after a fresh 4-granule allocation");
    ensure_eq!(stats.reserved_high, reserved, "RESERVED_MEM_HIGH rises again with the next reservation");

    for p in [a, c, d] {
        free(&pool, p, &s)?;
    }
    ensure_eq!(pool.get(attr::UsedMemHigh)?, 7 * g, "USED_MEM_HIGH after freeing everything");
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

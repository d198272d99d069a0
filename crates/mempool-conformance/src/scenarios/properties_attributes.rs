//! Scenarios 1-8: pool properties and attributes ([contract](mempool_hal::contract) §§2 and 3).

use super::{free, fresh_pool, new_pool};
use crate::{Harness, ScenarioResult, ensure, ensure_eq, expect_error};
use mempool_hal::attr::{self, ATTRIBUTES, Attribute, Readable, Writable};
use mempool_hal::{
    AllocationType, AttrId, Device, ErrorKind, HandleType, Location, LocationType, MemPool, MemPoolExt, PoolProps,
    PoolStats, RawAttrValue, ReuseFlags, code, round_down,
};

/// Scenario 1: a fresh pool reads the default of all eight attributes, through the
/// typed keys and through the raw path (with each attribute's C width).
pub fn s01_fresh_pool_defaults<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = fresh_pool(&dev, 64)?;
    // Ascend creates pools with the reuse flags off, CUDA with all three on.
    let flags_on = h.profile().reuse_flags_on_at_creation();
    let flags = if flags_on { ReuseFlags::ALL } else { ReuseFlags::NONE };

    ensure_eq!(pool.size(), 64 * g, "size of a pool created with max size 64 granules");
    ensure_eq!(ReuseFlags::read(&pool)?, flags, "reuse flags of a fresh pool (Ascend: all off; CUDA: all on)");
    ensure_eq!(pool.get(attr::ReleaseThreshold)?, 0, "release threshold of a fresh pool");
    ensure_eq!(pool.stats()?, PoolStats::default(), "statistics of a fresh pool");
    for info in ATTRIBUTES {
        let raw = pool.get_attr_raw(info.id)?;
        let default = if flags_on && ReuseFlags::NONE.get(info.id).is_some() { 1 } else { info.default };
        ensure_eq!(raw.width(), info.width, "C width of a raw read of {:?}", info.id);
        ensure_eq!(raw.as_u64(), default, "raw read of {:?} on a fresh pool", info.id);
    }

    dev.destroy_pool(&pool)?;
    Ok(())
}

/// Sets one reuse flag on and off, typed and raw, checking that the other two flags do
/// not move.
fn flag_round_trip<P, A>(pool: &P, key: A) -> ScenarioResult
where
    P: MemPool,
    A: Readable + Writable + Attribute<Value = bool>,
{
    let id = A::ID;
    let mut only_this = ReuseFlags::NONE;
    ensure!(only_this.set(id, true), "{id:?} is a reuse flag");

    pool.set(key, true)?;
    ensure_eq!(pool.get(key)?, true, "{id:?} after setting it to true");
    ensure_eq!(ReuseFlags::read(pool)?, only_this, "all reuse flags after setting only {id:?}");
    pool.set(key, false)?;
    ensure_eq!(pool.get(key)?, false, "{id:?} after setting it to false");
    ensure_eq!(ReuseFlags::read(pool)?, ReuseFlags::NONE, "all reuse flags after clearing {id:?}");

    pool.set_attr_raw(id, RawAttrValue::U32(5))?;
    ensure_eq!(pool.get_attr_raw(id)?, RawAttrValue::U32(1), "raw read of {id:?} after a raw write of 5 (stores 1)");
    ensure_eq!(pool.get(key)?, true, "typed read of {id:?} after a raw write of 5");
    pool.set_attr_raw(id, RawAttrValue::U32(0))?;
    ensure_eq!(pool.get_attr_raw(id)?, RawAttrValue::U32(0), "raw read of {id:?} after a raw write of 0");
    Ok(())
}

/// Scenario 2: each reuse flag reads back what was written (true, then false), leaves
/// the other flags alone, and a raw write of 5 stores 1.
pub fn s02_reuse_flags_round_trip<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let pool = new_pool(&dev, 64)?;

    flag_round_trip(&pool, attr::ReuseFollowEventDependencies)?;
    flag_round_trip(&pool, attr::ReuseAllowOpportunistic)?;
    flag_round_trip(&pool, attr::ReuseAllowInternalDependencies)?;
    ensure_eq!(pool.get(attr::ReleaseThreshold)?, 0, "release threshold after writing the reuse flags");

    dev.destroy_pool(&pool)?;
    Ok(())
}

/// Scenario 3: raw writes of RESERVED_MEM_CURRENT and USED_MEM_CURRENT are refused as
/// read-only (107000) and change nothing, whatever the value.
pub fn s03_read_only_counters_refuse_writes<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;
    let p = pool.malloc_async(1, &s)?;

    for id in [AttrId::RESERVED_MEM_CURRENT, AttrId::USED_MEM_CURRENT] {
        for value in [0, 12_345, 3 * g] {
            expect_error(
                pool.set_attr_raw(id, RawAttrValue::U64(value)),
                ErrorKind::ReadOnly,
                code::ACL_ERROR_RT_PARAM_INVALID,
                format_args!("raw write of {value} to {id:?}"),
            )?;
            ensure_eq!(pool.get_attr_raw(id)?, RawAttrValue::U64(g), "{id:?} after a refused write of {value}");
        }
    }

    free(&pool, p, &s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 4: writing a non-zero value to RESERVED_MEM_HIGH or USED_MEM_HIGH is
/// refused (507000) and changes nothing; writing 0 resets the mark to 0 (Ascend's rule:
/// not to the current value), raw or typed, and leaves the current counters alone.
pub fn s04_high_marks_reset_only<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let s = dev.create_stream()?;
    let p = pool.malloc_async(2 * g, &s)?;

    for id in [AttrId::RESERVED_MEM_HIGH, AttrId::USED_MEM_HIGH] {
        for value in [100, 2 * g] {
            expect_error(
                pool.set_attr_raw(id, RawAttrValue::U64(value)),
                ErrorKind::InvalidParam,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                format_args!("raw write of {value} to {id:?}"),
            )?;
            ensure_eq!(pool.get_attr_raw(id)?, RawAttrValue::U64(2 * g), "{id:?} after a refused write of {value}");
        }
    }

    // Ascend resets a mark to 0, CUDA to its CURRENT value.
    let reset = if h.profile().high_resets_to_current() { 2 * g } else { 0 };
    pool.set_attr_raw(AttrId::USED_MEM_HIGH, RawAttrValue::U64(0))?;
    ensure_eq!(pool.get(attr::UsedMemHigh)?, reset, "USED_MEM_HIGH after a raw write of 0 (Ascend: 0; CUDA: USED)");
    ensure_eq!(pool.get(attr::ReservedMemHigh)?, 2 * g, "RESERVED_MEM_HIGH after resetting only USED_MEM_HIGH");
    pool.reset(attr::ReservedMemHigh)?;
    ensure_eq!(pool.get(attr::ReservedMemHigh)?, reset, "RESERVED_MEM_HIGH after a typed reset");
    ensure_eq!(pool.get(attr::UsedMemCurrent)?, 2 * g, "USED_MEM_CURRENT after resetting the marks");
    ensure_eq!(pool.get(attr::ReservedMemCurrent)?, 2 * g, "RESERVED_MEM_CURRENT after resetting the marks");

    free(&pool, p, &s)?;
    dev.destroy_pool(&pool)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

/// Scenario 5: an unknown attribute id is refused (107000) by both get and set, with
/// either value width, and the known attributes keep their values.
pub fn s05_unknown_attribute_id<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let pool = new_pool(&dev, 64)?;

    for id in [0, 9, 10, 1000, u32::MAX].map(AttrId) {
        expect_error(
            pool.get_attr_raw(id),
            ErrorKind::UnknownAttribute,
            code::ACL_ERROR_RT_PARAM_INVALID,
            format_args!("raw read of {id:?}"),
        )?;
        for value in [RawAttrValue::U32(1), RawAttrValue::U64(1)] {
            expect_error(
                pool.set_attr_raw(id, value),
                ErrorKind::UnknownAttribute,
                code::ACL_ERROR_RT_PARAM_INVALID,
                format_args!("raw write of {value:?} to {id:?}"),
            )?;
        }
    }
    ensure_eq!(ReuseFlags::read(&pool)?, ReuseFlags::NONE, "reuse flags after writes to unknown ids");
    ensure_eq!(pool.get(attr::ReleaseThreshold)?, 0, "release threshold after writes to unknown ids");
    ensure_eq!(pool.stats()?, PoolStats::default(), "statistics after writes to unknown ids");

    dev.destroy_pool(&pool)?;
    Ok(())
}

/// Scenario 6: a release threshold above the pool size is refused (507000) and leaves
/// the threshold alone; exactly the pool size is accepted.
pub fn s06_threshold_limits<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let pool = new_pool(&dev, 64)?;
    let size = pool.size();

    for value in [size + 1, size + g, u64::MAX] {
        expect_error(
            pool.set(attr::ReleaseThreshold, value),
            ErrorKind::InvalidParam,
            code::ACL_ERROR_RT_INTERNAL_ERROR,
            format_args!("release threshold {value} on a pool of {size} bytes"),
        )?;
        ensure_eq!(pool.get(attr::ReleaseThreshold)?, 0, "threshold after refusing {value}");
    }
    pool.set(attr::ReleaseThreshold, size)?;
    ensure_eq!(pool.get(attr::ReleaseThreshold)?, size, "threshold set to exactly the pool size");
    expect_error(
        pool.set(attr::ReleaseThreshold, size + 1),
        ErrorKind::InvalidParam,
        code::ACL_ERROR_RT_INTERNAL_ERROR,
        "release threshold one byte above the pool size",
    )?;
    ensure_eq!(pool.get(attr::ReleaseThreshold)?, size, "threshold after a refused write");
    pool.set(attr::ReleaseThreshold, 3 * g + 1)?;
    ensure_eq!(pool.get(attr::ReleaseThreshold)?, 3 * g + 1, "threshold (not rounded: it is a byte count)");

    dev.destroy_pool(&pool)?;
    Ok(())
}

/// Scenario 7: bad properties are refused with the documented errors (allocation type 1,
/// location HOST and a non-zero reserved byte: 100000; a device id out of range: 107001;
/// a max size above the device's memory: 107000), and no pool is created: the device's
/// memory totals do not move. Valid properties, including handle type POSIX, work.
pub fn s07_bad_props_rejected<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    let total = dev.mem_info()?.total;
    let valid = PoolProps::builder().device(dev.id()).max_size(8 * g).build();
    let with_reserved = |i: usize| {
        let mut reserved = [0; 32];
        reserved[i] = 1;
        PoolProps { reserved, ..valid }
    };
    let on_device = |id: u32| PoolProps { location: Location { id, kind: LocationType::DEVICE }, ..valid };
    let bad_param = (ErrorKind::InvalidParam, code::ACL_ERROR_INVALID_PARAM);
    let bad_device = (ErrorKind::InvalidDevice, code::ACL_ERROR_RT_INVALID_DEVICEID);
    let too_big = (ErrorKind::InvalidParam, code::ACL_ERROR_RT_PARAM_INVALID);

    let cases = [
        ("allocation type 1", PoolProps { alloc_type: AllocationType(1), ..valid }, bad_param),
        (
            "location type HOST",
            PoolProps { location: Location { id: dev.id(), kind: LocationType::HOST }, ..valid },
            bad_param,
        ),
        ("reserved byte 0 set", with_reserved(0), bad_param),
        ("reserved byte 31 set", with_reserved(31), bad_param),
        ("device id 4096", on_device(4096), bad_device),
        ("device id u32::MAX", on_device(u32::MAX), bad_device),
        ("max size one granule above the device's memory", PoolProps { max_size: total + g, ..valid }, too_big),
        ("max size u64::MAX", PoolProps { max_size: u64::MAX, ..valid }, too_big),
    ];
    for (what, props, (kind, code)) in cases {
        let before = dev.mem_info()?;
        expect_error(dev.create_pool(&props), kind, code, format_args!("create_pool with {what}"))?;
        ensure_eq!(dev.mem_info()?, before, "device memory after the refused create_pool with {what}");
    }

    for props in [valid, PoolProps { handle_type: HandleType::POSIX, ..valid }] {
        let pool = dev.create_pool(&props)?;
        ensure_eq!(pool.size(), 8 * g, "size of a pool created with valid properties {props:?}");
        dev.destroy_pool(&pool)?;
    }
    Ok(())
}

/// Scenario 8: max size 0 makes a pool of the whole device (rounded down to the
/// granularity), and pools are not summed against the device; a max size that is not a
/// multiple of the granularity rounds up (granularity - 1 makes one granule, which
/// really holds only one granule).
pub fn s08_max_size_zero_and_rounding<H: Harness>(h: &H) -> ScenarioResult {
    let dev = h.device()?;
    let g = dev.pool_granularity();
    ensure!(g.is_power_of_two(), "pool granularity {g} is not a power of two");
    let total = dev.mem_info()?.total;
    let s = dev.create_stream()?;
    let whole_device = PoolProps::builder().device(dev.id()).max_size(0).build();

    let whole = dev.create_pool(&whole_device)?;
    ensure_eq!(whole.size(), round_down(total, g), "size of a pool with max size 0 (device has {total} bytes)");
    let second = dev.create_pool(&whole_device)?;
    ensure_eq!(second.size(), round_down(total, g), "size of a second whole-device pool (pools are not summed)");
    let p = whole.malloc_async(1, &s)?;
    ensure_eq!(whole.stats()?.used_current, g, "USED of the whole-device pool after a 1-byte allocation");
    free(&whole, p, &s)?;
    dev.destroy_pool(&second)?;
    dev.destroy_pool(&whole)?;

    let mut cases = vec![(1, g), (g + 1, 2 * g), (3 * g, 3 * g)];
    if g > 1 {
        cases.push((g - 1, g));
    }
    for (max_size, expected) in cases {
        let pool = dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(max_size).build())?;
        ensure_eq!(pool.size(), expected, "size of a pool created with max size {max_size} (granularity {g})");
        dev.destroy_pool(&pool)?;
    }

    let one = dev.create_pool(&PoolProps::builder().device(dev.id()).max_size(g.max(2) - 1).build())?;
    let p = one.malloc_async(g, &s)?;
    expect_error(
        one.malloc_async(1, &s),
        ErrorKind::OutOfMemory,
        code::ACL_ERROR_RT_INTERNAL_ERROR,
        "a second granule from a pool created with max size granularity - 1",
    )?;
    free(&one, p, &s)?;
    dev.destroy_pool(&one)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

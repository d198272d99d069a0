//! The mocks behave as a downstream unit test needs: expectations are checked, the typed
//! attribute methods reach the mocked raw path, errors can be injected, calls counted.

use mempool_hal::{
    AttrId, Device, DevicePtr, ErrorKind, EventStatus, MemPool, MemPoolExt, PoolProps, PoolStats, RawAttrValue, Result,
    attr,
};
use mempool_mock::predicate::eq;
use mempool_mock::{MockDevice, MockEvent, MockMemPool, MockStream, out_of_memory};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Frees `ptr` through the unsafe trait method (the mock checks nothing about it).
fn free(pool: &MockMemPool, ptr: DevicePtr, stream: &MockStream) -> Result<()> {
    // SAFETY: a mock pool owns no memory; the call only runs the test's expectation.
    unsafe { pool.free_async(ptr, stream) }
}

#[test]
fn typed_set_calls_the_raw_path_with_the_id_and_width() -> Result<()> {
    let mut pool = MockMemPool::new();
    pool.expect_set_attr_raw().with(eq(AttrId(4)), eq(RawAttrValue::U64(5))).times(1).returning(|_, _| Ok(()));
    pool.expect_set_attr_raw().with(eq(AttrId(1)), eq(RawAttrValue::U32(1))).times(1).returning(|_, _| Ok(()));
    pool.expect_set_attr_raw().with(eq(AttrId(8)), eq(RawAttrValue::U64(0))).times(1).returning(|_, _| Ok(()));
    pool.set(attr::ReleaseThreshold, 5)?;
    pool.set(attr::ReuseFollowEventDependencies, true)?;
    pool.reset(attr::UsedMemHigh)?;
    pool.checkpoint();
    Ok(())
}

#[test]
fn typed_get_and_stats_decode_the_raw_answers() -> Result<()> {
    let mut pool = MockMemPool::new();
    pool.expect_get_attr_raw().returning(|id| Ok(RawAttrValue::U64(u64::from(id.0) * 100)));
    assert_eq!(pool.get(attr::ReleaseThreshold)?, 400);
    assert_eq!(
        pool.stats()?,
        PoolStats { reserved_current: 500, reserved_high: 600, used_current: 700, used_high: 800 }
    );
    // A flag read answered with the wrong width is the backend's bug: Internal, not a panic.
    let e = pool.get(attr::ReuseAllowOpportunistic).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Internal);
    Ok(())
}

#[test]
fn errors_pass_through_the_typed_methods() {
    let mut pool = MockMemPool::new();
    pool.expect_set_attr_raw().returning(|id, v| id.check_write(v, 10).map(drop));
    let e = pool.set(attr::ReleaseThreshold, 11).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidParam, 507_000));
    assert!(pool.set(attr::ReleaseThreshold, 10).is_ok());
}

#[test]
fn injected_out_of_memory_reaches_the_caller() {
    let mut pool = MockMemPool::new();
    pool.expect_malloc_async().returning(|size, _| Err(out_of_memory(size)));
    let e = pool.malloc_async(3 << 20, &MockStream(1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert_eq!(e.oom().map(|o| o.requested), Some(3 << 20));
}

#[test]
fn free_async_calls_are_counted_and_matched_by_stream() -> Result<()> {
    let frees = Arc::new(AtomicUsize::new(0));
    let mut pool = MockMemPool::new();
    let counter = Arc::clone(&frees);
    pool.expect_free_async().withf(|_, s| *s == MockStream(2)).times(2).returning(move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    free(&pool, DevicePtr::from_addr(0x10), &MockStream(2))?;
    free(&pool, DevicePtr::from_addr(0x20), &MockStream(2))?;
    pool.checkpoint();
    assert_eq!(frees.load(Ordering::SeqCst), 2);
    Ok(())
}

#[test]
#[should_panic(expected = "No matching expectation found")]
fn a_free_on_an_unexpected_stream_panics() {
    let mut pool = MockMemPool::new();
    pool.expect_free_async().withf(|_, s| *s == MockStream(2)).returning(|_, _| Ok(()));
    let _ = free(&pool, DevicePtr::from_addr(0x10), &MockStream(3));
}

#[test]
#[should_panic(expected = "which is fewer than expected 1")]
fn a_missing_call_fails_the_checkpoint() {
    let mut pool = MockMemPool::new();
    pool.expect_trim_to().times(1).returning(|_| Ok(()));
    pool.checkpoint();
}

#[test]
fn allow_handles_counts_ids_and_earlier_expectations_win() -> Result<()> {
    let mut dev = MockDevice::new();
    dev.expect_create_stream()
        .times(1)
        .returning(|| Err(mempool_hal::Error::new(ErrorKind::Internal, 507_000, "create_stream", "injected")));
    dev.allow_handles();
    assert_eq!(dev.create_stream().unwrap_err().message(), "injected");
    assert_eq!(dev.create_stream()?, MockStream(1));
    assert_eq!(dev.create_stream()?, MockStream(2));
    assert_eq!(dev.create_event()?, MockEvent(1));
    dev.destroy_event(&MockEvent(1))?;
    dev.destroy_stream(&MockStream(2))?;
    dev.destroy_pool(&MockMemPool::new())?;
    Ok(())
}

/// Generic code sees the mock as any other device.
fn record_and_query<D: Device>(dev: &D) -> Result<EventStatus> {
    let s = dev.create_stream()?;
    let e = dev.create_event()?;
    dev.record_event(&e, &s)?;
    dev.query_event(&e)
}

#[test]
fn generic_code_runs_on_the_mock_device() -> Result<()> {
    let mut dev = MockDevice::new();
    dev.allow_handles();
    dev.expect_record_event().with(eq(MockEvent(1)), eq(MockStream(1))).times(1).returning(|_, _| Ok(()));
    dev.expect_query_event().times(1).returning(|_| Ok(EventStatus::NotReady));
    assert_eq!(record_and_query(&dev)?, EventStatus::NotReady);
    Ok(())
}

#[test]
fn host_functions_are_handed_to_the_expectation() -> Result<()> {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut dev = MockDevice::new();
    dev.expect_launch_host_func().times(1).returning(|_, f| {
        f();
        Ok(())
    });
    let r = Arc::clone(&ran);
    dev.launch_host_func(
        &MockStream(1),
        Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        }),
    )?;
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn create_pool_returns_the_pool_the_test_built() -> Result<()> {
    let mut dev = MockDevice::new();
    dev.expect_create_pool().withf(|p: &PoolProps| p.max_size == 1 << 30).times(1).returning(|_| {
        let mut pool = MockMemPool::new();
        pool.expect_size().return_const(1u64 << 30);
        Ok(pool)
    });
    let pool = dev.create_pool(&PoolProps::builder().max_size(1 << 30).build())?;
    assert_eq!(pool.size(), 1 << 30);
    Ok(())
}

/// The code under test of the virtual-memory mock: grows a reserved range by one chunk at
/// its end, giving the chunk back if the mapping fails.
fn grow<D: mempool_hal::VirtualMemory>(dev: &D, range: mempool_hal::Reserved, mapped: u64) -> Result<u64> {
    use mempool_hal::{Access, Granularity};
    let g = dev.granularity(Granularity::Minimum)?;
    let chunk = dev.create_physical(g)?;
    let at = DevicePtr::from_addr(range.base.addr() + mapped);
    if let Err(e) = dev.map(at, g, 0, chunk) {
        dev.release_physical(chunk)?;
        return Err(e);
    }
    dev.set_access(at, g, Access::ReadWrite)?;
    Ok(mapped + g)
}

#[test]
fn virtual_memory_calls_are_mocked() -> Result<()> {
    use mempool_hal::{Access, Mapping, Physical, Reserved};
    use mempool_mock::mockall::Sequence;
    const G: u64 = 2 << 20;
    let range = Reserved { base: DevicePtr::from_addr(0x40_0000_0000), size: 8 * G };
    let chunk = Physical { handle: 0x77, size: G };
    let mut dev = MockDevice::new();
    let mut seq = Sequence::new();
    dev.expect_granularity().returning(|_| Ok(G));
    dev.expect_create_physical().with(eq(G)).times(2).returning(move |_| Ok(chunk));
    dev.expect_map()
        .withf(move |at, size, off, c| (*at, *size, *off, *c) == (DevicePtr::from_addr(0x40_0000_0000), G, 0, chunk))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|at, size, _, _| Ok(Mapping { at, size }));
    dev.expect_set_access()
        .with(eq(DevicePtr::from_addr(0x40_0000_0000)), eq(G), eq(Access::ReadWrite))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _| Ok(()));
    dev.expect_map().times(1).in_sequence(&mut seq).returning(|_, _, _, _| Err(out_of_memory(G)));
    dev.expect_release_physical().with(eq(chunk)).times(1).in_sequence(&mut seq).returning(|_| Ok(()));
    assert_eq!(grow(&dev, range, 0)?, G);
    let e = grow(&dev, range, G).expect_err("the mapping fails");
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    dev.checkpoint();
    Ok(())
}

/// A framework's peer-access path against the mock: what the expectations say, in order,
/// with the arguments the code under test passes.
#[test]
fn peer_access_is_mocked_like_every_device_call() {
    let mut dev = MockDevice::new();
    let mut seq = mockall::Sequence::new();
    dev.expect_can_access_peer().withf(|&p| p == 1).times(1).in_sequence(&mut seq).returning(|_| Ok(true));
    dev.expect_enable_peer_access().withf(|&p| p == 1).times(1).in_sequence(&mut seq).returning(|_| Ok(()));
    dev.expect_disable_peer_access().withf(|&p| p == 1).times(1).in_sequence(&mut seq).returning(|_| {
        Err(mempool_hal::Error::new(
            mempool_hal::ErrorKind::InvalidParam,
            507_899,
            "disable_peer_access",
            "not enabled",
        ))
    });
    assert!(dev.can_access_peer(1).expect("mocked"));
    dev.enable_peer_access(1).expect("mocked");
    let e = dev.disable_peer_access(1).unwrap_err();
    assert_eq!((e.kind(), e.code()), (mempool_hal::ErrorKind::InvalidParam, 507_899));
}

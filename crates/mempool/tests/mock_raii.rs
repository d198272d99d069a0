//! The RAII types against the mock backend: exactly which trait calls they make, and
//! when. (Feature `mock`; `cargo xtask features` runs it.)
#![cfg(feature = "mock")]

use mempool::backend::{Mock, MockEvent, MockMemPool, MockStream};
use mempool::mock::predicate::eq;
use mempool::prelude::*;
use mempool::{AttrId, DevicePtr, Error, ErrorKind, Event, Pool, PoolProps, RawAttrValue, Stream, attr, code};
use std::sync::{Arc, Mutex};

const P: DevicePtr = DevicePtr::from_addr(0x4000);

/// Every call the pool saw, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// A device whose one pool hands out `P` and logs frees; `free_result` answers them.
fn device(log: &Log, free_result: fn(&MockStream) -> mempool::Result<()>) -> Mock {
    let mut dev = Mock::new();
    let pool_log = Arc::clone(log);
    dev.expect_create_pool().times(1).returning(move |_| {
        let mut pool = MockMemPool::new();
        pool.expect_malloc_async().returning(|_, _| Ok(P));
        let log = Arc::clone(&pool_log);
        pool.expect_free_async().returning(move |p, s| {
            log.lock().unwrap().push(format!("free {p} on {}", s.0));
            free_result(s)
        });
        Ok(pool)
    });
    let destroy_log = Arc::clone(log);
    dev.expect_destroy_pool().times(1).returning(move |_| {
        destroy_log.lock().unwrap().push("destroy pool".into());
        Ok(())
    });
    dev.allow_handles();
    dev
}

fn refused(op: &'static str) -> Error {
    Error::new(ErrorKind::InvalidHandle, code::ACL_ERROR_RT_INVALID_HANDLE, op, "refused by the test")
}

#[test]
fn a_dropped_buffer_frees_once_on_its_stream_before_the_pool_is_destroyed() -> mempool::Result<()> {
    let log = Log::default();
    let dev = device(&log, |_| Ok(()));
    {
        let _other = Stream::new(&dev)?; // MockStream(1)
        let stream = Stream::new(&dev)?; // MockStream(2)
        let pool = Pool::new(&dev, &PoolProps::default())?;
        let buf = pool.alloc(100, &stream)?;
        assert_eq!((buf.ptr(), buf.len()), (P, 100));
        drop(buf);
    }
    assert_eq!(*log.lock().unwrap(), ["free 0x4000 on 2", "destroy pool"]);
    Ok(())
}

#[test]
fn free_async_frees_on_the_given_stream_only() -> mempool::Result<()> {
    let log = Log::default();
    let dev = device(&log, |_| Ok(()));
    let (a, b) = (Stream::new(&dev)?, Stream::new(&dev)?);
    let pool = Pool::new(&dev, &PoolProps::default())?;
    pool.alloc(1, &a)?.free_async(&b)?;
    assert_eq!(*log.lock().unwrap(), ["free 0x4000 on 2"]);
    Ok(())
}

#[test]
fn a_refused_free_async_falls_back_to_the_allocating_stream() -> mempool::Result<()> {
    let log = Log::default();
    // Frees on stream 2 are refused; stream 1 accepts.
    let dev = device(&log, |s| if s.0 == 2 { Err(refused("free_async")) } else { Ok(()) });
    let (a, b) = (Stream::new(&dev)?, Stream::new(&dev)?);
    let pool = Pool::new(&dev, &PoolProps::default())?;
    let e = pool.alloc(1, &a)?.free_async(&b).unwrap_err();
    assert_eq!(e.op(), "free_async");
    assert_eq!(*log.lock().unwrap(), ["free 0x4000 on 2", "free 0x4000 on 1"]);
    assert!(pool.take_drop_error().is_none(), "the fallback free succeeded: nothing kept");
    Ok(())
}

#[test]
fn a_refused_drop_is_reported_once_by_the_next_alloc() -> mempool::Result<()> {
    let log = Log::default();
    let dev = device(&log, |_| Err(refused("free_async")));
    let stream = Stream::new(&dev)?;
    let pool = Pool::new(&dev, &PoolProps::default())?;
    drop(pool.alloc(1, &stream)?);
    let e = pool.alloc(1, &stream).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidHandle, "Buffer::drop"));
    let again = pool.alloc(1, &stream)?; // reported once, then the pool works again
    assert_eq!(again.ptr(), P);
    Ok(())
}

#[test]
fn streams_and_events_are_destroyed_by_their_own_ids() -> mempool::Result<()> {
    let mut dev = Mock::new();
    dev.expect_create_stream().times(1).returning(|| Ok(MockStream(7)));
    dev.expect_create_event().times(1).returning(|| Ok(MockEvent(9)));
    dev.expect_record_event().with(eq(MockEvent(9)), eq(MockStream(7))).times(1).returning(|_, _| Ok(()));
    dev.expect_stream_wait_event().with(eq(MockStream(7)), eq(MockEvent(9))).times(1).returning(|_, _| Ok(()));
    dev.expect_destroy_event().with(eq(MockEvent(9))).times(1).returning(|_| Ok(()));
    dev.expect_destroy_stream().with(eq(MockStream(7))).times(1).returning(|_| Ok(()));
    let stream = Stream::new(&dev)?;
    let event = Event::new(&dev)?;
    event.record(&stream)?;
    stream.wait(&event)?;
    Ok(())
}

#[test]
fn typed_attributes_on_a_facade_pool_reach_the_raw_path() -> mempool::Result<()> {
    let mut dev = Mock::new();
    dev.allow_handles();
    dev.expect_create_pool().returning(|_| {
        let mut pool = MockMemPool::new();
        pool.expect_set_attr_raw().with(eq(AttrId(4)), eq(RawAttrValue::U64(5))).times(1).returning(|_, _| Ok(()));
        pool.expect_get_attr_raw().with(eq(AttrId(7))).times(1).returning(|_| Ok(RawAttrValue::U64(6 << 20)));
        Ok(pool)
    });
    let pool = Pool::new(&dev, &PoolProps::default())?;
    pool.set(attr::ReleaseThreshold, 5)?;
    assert_eq!(pool.get(attr::UsedMemCurrent)?, 6 << 20);
    Ok(())
}

#[test]
fn allocation_errors_reach_the_caller_unchanged() -> mempool::Result<()> {
    let mut dev = Mock::new();
    dev.allow_handles();
    dev.expect_create_pool().returning(|_| {
        let mut pool = MockMemPool::new();
        pool.expect_malloc_async().returning(|size, _| Err(mempool::backend::out_of_memory(size)));
        Ok(pool)
    });
    let stream = Stream::new(&dev)?;
    let pool = Pool::new(&dev, &PoolProps::default())?;
    let e = pool.alloc(3 << 20, &stream).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert_eq!(e.oom().map(|o| o.requested), Some(3 << 20));
    Ok(())
}

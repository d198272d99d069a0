//! Downstream-style use of the `mempool` facade: RAII buffers, streams, events and pools
//! on the default backend.

use mempool::backend::Emulator;
use mempool::prelude::*;
use mempool::{ErrorKind, Event, HostBuffer, Pool, PoolProps, Stream, attr};

const G: u64 = 64 << 10;

fn device() -> Emulator {
    Emulator::builder().granularity(G).device_memory(1 << 30).build().expect("valid emulator config")
}

#[test]
fn dropped_buffers_free_in_stream_order() -> mempool::Result<()> {
    let dev = device();
    let stream = Stream::new(&dev)?;
    let pool = Pool::new(&dev, &PoolProps::builder().max_size(64 * G).build())?;
    {
        let a = pool.alloc(1, &stream)?;
        let b = pool.alloc(3 * G, &stream)?;
        assert_eq!(b.ptr().addr(), a.ptr().addr() + G, "carved from the low end");
        assert_eq!(pool.stats()?.used_current, 4 * G);
    }
    let s = pool.stats()?;
    assert_eq!((s.used_current, s.reserved_current), (0, 4 * G), "dropped buffers are cached, not released");
    stream.synchronize()?;
    assert_eq!(pool.stats()?.reserved_current, 0, "threshold 0: released at sync");
    Ok(())
}

#[test]
fn buffers_carry_data_and_free_on_another_stream_after_an_event() -> mempool::Result<()> {
    let dev = device();
    let (producer, consumer) = (Stream::new(&dev)?, Stream::new(&dev)?);
    let ready = Event::new(&dev)?;
    let pool = Pool::new(&dev, &PoolProps::builder().max_size(64 * G).build())?;
    pool.set(attr::ReuseFollowEventDependencies, true)?;
    let buf = pool.alloc(G, &producer)?;
    buf.fill(0, &producer)?;
    buf.copy_from_host(b"tensor", &producer)?;
    ready.record(&producer)?;
    consumer.wait(&ready)?;
    let out = HostBuffer::new(6);
    buf.copy_to_host(&out, &consumer)?;
    let addr = buf.ptr();
    buf.free_async(&consumer)?;
    let again = pool.alloc(G, &consumer)?;
    assert_eq!(again.ptr(), addr, "same-stream reuse after the free on the consumer");
    consumer.synchronize()?;
    assert_eq!(out.to_vec(), b"tensor");
    Ok(())
}

#[test]
fn a_refused_free_loses_nothing() -> mempool::Result<()> {
    let dev = device();
    let stream = Stream::new(&dev)?;
    let other = Stream::new(&dev)?;
    let pool = Pool::new(&dev, &PoolProps::builder().max_size(64 * G).build())?;
    let buf = pool.alloc(G, &stream)?;
    dev.destroy_stream(other.raw())?; // a stale handle behind the wrapper's back
    let err = buf.free_async(&other).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::InvalidHandle, 107_017));
    let s = pool.stats()?;
    assert_eq!(s.used_current, 0, "the buffer was freed on its own stream instead");
    assert!(pool.take_drop_error().is_none());
    Ok(())
}

#[test]
fn drop_errors_are_kept_and_reported_by_the_next_alloc() -> mempool::Result<()> {
    let dev = device();
    let stream = Stream::new(&dev)?;
    let pool = Pool::new(&dev, &PoolProps::builder().max_size(64 * G).build())?;
    let buf = pool.alloc(G, &stream)?;
    dev.destroy_stream(stream.raw())?;
    drop(buf); // cannot free on a destroyed stream
    let s2 = Stream::new(&dev)?;
    let err = pool.alloc(G, &s2).unwrap_err();
    assert_eq!((err.op(), err.kind()), ("Buffer::drop", ErrorKind::InvalidHandle));
    assert!(pool.alloc(G, &s2).is_ok(), "reported once");
    Ok(())
}

#[test]
fn pools_are_destroyed_when_dropped() -> mempool::Result<()> {
    let dev = device();
    let stream = Stream::new(&dev)?;
    let raw = {
        let pool = Pool::new(&dev, &PoolProps::builder().max_size(8 * G).build())?;
        (*pool).clone()
    };
    let err = raw.malloc_async(G, stream.raw()).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::InvalidHandle, 507_000));
    Ok(())
}

//! Emulator-specific behaviour beyond the conformance suite: deferred execution,
//! stepping, copies, asynchronous failures, devices, and queued work surviving destroy.
//!
//! The rules it checks: contract §1 (`mempool_hal::contract::objects`), §4 (`mempool_hal::contract::allocation`), §6 (`mempool_hal::contract::release`), §7 (`mempool_hal::contract::statistics`).

use mempool_emu::{Emulator, ExecutionMode, ReuseRule};
use mempool_hal::{
    Device, DevicePtr, ErrorKind, EventStatus, HostBuffer, MemPool, MemPoolExt, PoolProps, Result, attr,
};
use rstest::rstest;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const G: u64 = 64 << 10;

fn emu(mode: ExecutionMode) -> Emulator {
    Emulator::builder().granularity(G).device_memory(256 * G).mode(mode).build().expect("valid config")
}

fn props(granules: u64) -> PoolProps {
    PoolProps::builder().max_size(granules * G).build()
}

#[test]
fn deferred_mode_runs_nothing_until_the_host_asks() -> Result<()> {
    let emu = emu(ExecutionMode::Deferred);
    let s = emu.create_stream()?;
    let count = Arc::new(AtomicUsize::new(0));
    for _ in 0..3 {
        let c = Arc::clone(&count);
        emu.launch_host_func(
            &s,
            Box::new(move || {
                c.fetch_add(1, Ordering::SeqCst);
            }),
        )?;
    }
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!(count.load(Ordering::SeqCst), 0, "deferred work must not run by itself");
    assert!(!emu.is_idle(&s)?);
    assert_eq!(emu.step(&s, 2)?, 2);
    assert_eq!(count.load(Ordering::SeqCst), 2);
    emu.synchronize_stream(&s)?;
    assert_eq!(count.load(Ordering::SeqCst), 3);
    assert!(emu.is_idle(&s)?);
    assert_eq!(emu.step(&s, 1)?, 0);
    Ok(())
}

#[test]
fn deferred_wait_runs_the_other_stream_as_needed() -> Result<()> {
    let emu = emu(ExecutionMode::Deferred);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let o = Arc::clone(&order);
    emu.launch_host_func(&a, Box::new(move || o.lock().unwrap().push("a")))?;
    let ev = emu.create_event()?;
    assert_eq!(emu.query_event(&ev)?, EventStatus::NotReady, "never recorded (CANN's NOT_READY)");
    emu.record_event(&ev, &a)?;
    assert_eq!(emu.query_event(&ev)?, EventStatus::NotReady);
    emu.stream_wait_event(&b, &ev)?;
    let o = Arc::clone(&order);
    emu.launch_host_func(&b, Box::new(move || o.lock().unwrap().push("b")))?;
    emu.synchronize_stream(&b)?;
    assert_eq!(*order.lock().unwrap(), vec!["a", "b"]);
    assert_eq!(emu.query_event(&ev)?, EventStatus::Complete);
    Ok(())
}

#[test]
fn copies_and_memset_move_real_bytes() -> Result<()> {
    let emu = emu(ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let x = pool.malloc_async(3 * G, &s)?;
    let y = pool.malloc_async(G, &s)?;
    let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    emu.memset_async(x, 7, 3 * G, &s)?;
    emu.memcpy_h2d_async(x.checked_add(10).unwrap(), &data, &s)?;
    emu.memcpy_d2d_async(y, x, 2000, &s)?;
    let out = HostBuffer::new(2000);
    emu.memcpy_d2h_async(&out, y, &s)?;
    emu.synchronize_stream(&s)?;
    let out = out.to_vec();
    assert!(out[..10].iter().all(|&b| b == 7));
    assert_eq!(&out[10..1010], &data[..]);
    assert!(out[1010..].iter().all(|&b| b == 7));
    Ok(())
}

#[test]
fn copies_outside_live_memory_are_refused() -> Result<()> {
    let emu = emu(ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let x = pool.malloc_async(G, &s)?;
    let past_end = emu.memset_async(x, 0, G + 1, &s).unwrap_err();
    assert_eq!((past_end.kind(), past_end.code()), (ErrorKind::InvalidPointer, 107_000));
    let unknown = emu.memcpy_h2d_async(DevicePtr::from_addr(0x1000), &[1, 2, 3], &s).unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::InvalidPointer);
    pool.free(x, &s)?;
    let freed = emu.memcpy_d2h_async(&HostBuffer::new(8), x, &s).unwrap_err();
    assert_eq!(
        (freed.kind(), freed.code()),
        (ErrorKind::StreamOrderViolation, 107_000),
        "the checker names a use after free"
    );
    emu.memset_async(x, 0, 0, &s)?; // zero length: nothing to check, nothing done

    // With the checker off, the same use after free is only an invalid pointer.
    let emu = Emulator::builder().granularity(G).device_memory(256 * G).checker(false).build()?;
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let x = pool.malloc_async(G, &s)?;
    pool.free(x, &s)?;
    let freed = emu.memcpy_d2h_async(&HostBuffer::new(8), x, &s).unwrap_err();
    assert_eq!((freed.kind(), freed.code()), (ErrorKind::InvalidPointer, 107_000));
    Ok(())
}

#[test]
fn commit_failures_surface_as_out_of_memory_with_the_pool_intact() -> Result<()> {
    let emu = emu(ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let a = pool.malloc_async(G, &s)?;
    let before = pool.stats()?;
    emu.inject_commit_failures(2);
    for _ in 0..2 {
        let err = pool.malloc_async(2 * G, &s).unwrap_err();
        assert_eq!((err.kind(), err.code()), (ErrorKind::OutOfMemory, 507_000));
        assert!(err.message().contains("commit failed"), "{err}");
        assert_eq!(err.oom().map(|o| o.stats), Some(before), "the snapshot is the pool as it was");
        assert_eq!(pool.stats()?, before, "nothing was reserved or used");
    }
    let b = pool.malloc_async(2 * G, &s)?;
    assert_eq!(b.addr(), a.addr() + G, "the failed commits left the address space as it was");
    pool.free(a, &s)?;
    pool.free(b, &s)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(pool.stats()?.reserved_current, 0);
    Ok(())
}

#[test]
fn a_wait_that_never_ends_times_out_instead_of_hanging() -> Result<()> {
    let emu = Emulator::builder()
        .granularity(G)
        .device_memory(256 * G)
        .wait_timeout(std::time::Duration::from_millis(100))
        .build()?;
    let s = emu.create_stream()?;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    emu.launch_host_func(
        &s,
        Box::new(move || {
            let _ = rx.recv();
        }),
    )?;
    let err = emu.synchronize_stream(&s).unwrap_err();
    assert!(err.message().contains("did not reach position"), "{err}");
    tx.send(()).unwrap();
    emu.synchronize_stream(&s)?;
    Ok(())
}

#[test]
fn a_panicking_host_function_is_reported_at_the_next_sync_and_the_stream_goes_on() -> Result<()> {
    let emu = emu(ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    emu.launch_host_func(&s, Box::new(|| panic!("kernel exploded")))?;
    let err = emu.synchronize_stream(&s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AsyncFailure);
    assert!(err.message().contains("kernel exploded"), "{err}");
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    emu.launch_host_func(
        &s,
        Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        }),
    )?;
    emu.synchronize_stream(&s)?;
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn queued_work_keeps_a_destroyed_pool_s_memory() -> Result<()> {
    let emu = emu(ExecutionMode::Deferred);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&props(16))?;
    let x = pool.malloc_async(G, &s)?;
    let out = HostBuffer::new(16);
    emu.memset_async(x, 0x5A, G, &s)?;
    emu.memcpy_d2h_async(&out, x, &s)?;
    emu.destroy_pool(&pool)?; // the queued work has not run yet
    emu.synchronize_stream(&s)?;
    assert_eq!(out.to_vec(), vec![0x5A; 16]);
    let err = pool.free(x, &s).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::InvalidPointer, 107_000));
    Ok(())
}

#[test]
fn pools_live_on_the_device_their_props_name() -> Result<()> {
    let dev0 = Emulator::builder().granularity(G).device_memory(64 * G).devices(2).build()?;
    let dev1 = dev0.device(1)?;
    assert_eq!(dev0.device(2).unwrap_err().code(), 107_001);
    let s0 = dev0.create_stream()?;
    let s1 = dev1.create_stream()?;
    let pool = dev0.create_pool(&PoolProps::builder().device(1).max_size(8 * G).build())?;
    let err = pool.malloc_async(G, &s0).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::WrongContext, 107_003));
    let p = pool.malloc_async(G, &s1)?;
    assert_eq!(dev1.mem_info()?.free, 63 * G);
    assert_eq!(dev0.mem_info()?.free, 64 * G);
    pool.free(p, &s1)?;
    dev1.synchronize_device()?;
    assert_eq!(dev1.mem_info()?.free, 64 * G);
    Ok(())
}

/// Contract §2: RESERVED summed over the pools of a device never exceeds its memory; a
/// fresh reservation past it fails as pool exhaustion does, saying the device is full.
#[test]
fn the_pools_of_a_device_share_its_memory() -> Result<()> {
    let emu = Emulator::builder().granularity(G).device_memory(64 * G).devices(2).build()?;
    let s = emu.create_stream()?;
    // Two pools, each spanning most of the device.
    let (a, b) = (emu.create_pool(&props(60))?, emu.create_pool(&props(60))?);
    // No release at synchronization: only `trim_to` gives memory back here.
    b.set(attr::ReleaseThreshold, 60 * G)?;
    let reserved = || -> Result<u64> { Ok(a.stats()?.reserved_current + b.stats()?.reserved_current) };
    let in_a = a.malloc_async(40 * G, &s)?;
    let b1 = b.malloc_async(16 * G, &s)?;
    let b2 = b.malloc_async(8 * G, &s)?;
    assert_eq!(reserved()?, 64 * G, "fresh allocations succeed up to the device's memory");
    assert_eq!(emu.mem_info()?.free, 0);
    for (pool, name) in [(&a, "a"), (&b, "b")] {
        let err = pool.malloc_async(G, &s).unwrap_err();
        assert_eq!((err.kind(), err.code()), (ErrorKind::OutOfMemory, 507_000), "pool {name}: {err}");
        assert!(err.message().contains("device 0") && err.message().contains("the device, not the pool"), "{err}");
        let info = err.oom().expect("a snapshot");
        assert_eq!(info.device_free, Some(0), "pool {name}: the device is full");
        assert!(info.largest_free_range >= 8 * G, "pool {name} itself has room: {info:?}");
        assert_eq!(info.stats, pool.stats()?, "the snapshot is the pool as it was");
    }
    // A failed reservation took nothing, and reuse reserves nothing: it still works.
    assert_eq!(reserved()?, 64 * G);
    b.free(b2, &s)?;
    emu.synchronize_stream(&s)?;
    let (b2, rule) = b.malloc_async_traced(8 * G, &s)?;
    assert_eq!(rule, ReuseRule::SameStream);
    // The other device's memory is its own.
    let dev1 = emu.device(1)?;
    let (s1, c) = (dev1.create_stream()?, dev1.create_pool(&PoolProps::builder().device(1).build())?);
    let in_c = c.malloc_async(64 * G, &s1)?;
    assert_eq!(dev1.mem_info()?.free, 0);
    c.free(in_c, &s1)?;
    dev1.synchronize_stream(&s1)?;
    assert_eq!(dev1.mem_info()?.free, 64 * G);
    // A trim of one pool lets the other reserve again, exactly what was given back.
    b.free(b1, &s)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(emu.mem_info()?.free, 0, "b keeps its cached block");
    b.trim_to(8 * G)?;
    assert_eq!(emu.mem_info()?.free, 16 * G);
    let more = a.malloc_async(8 * G, &s)?;
    let rest = a.malloc_async(8 * G, &s)?;
    assert_eq!(a.malloc_async(G, &s).unwrap_err().oom().and_then(|o| o.device_free), Some(0));
    assert_eq!((reserved()?, emu.mem_info()?.free), (64 * G, 0), "mem_info agrees with the pools");
    // A commit that fails gives its reservation back.
    a.free(rest, &s)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(emu.mem_info()?.free, 8 * G);
    emu.inject_commit_failures(1);
    assert!(a.malloc_async(8 * G, &s).unwrap_err().message().contains("commit failed"));
    assert_eq!(emu.mem_info()?.free, 8 * G);
    // A destroyed pool's memory is the device's again.
    b.free(b2, &s)?;
    emu.synchronize_stream(&s)?;
    emu.destroy_pool(&b)?;
    assert_eq!(emu.mem_info()?.free, 16 * G);
    assert_eq!(emu.mem_info()?.free, 64 * G - a.stats()?.reserved_current);
    a.free(in_a, &s)?;
    a.free(more, &s)?;
    emu.synchronize_stream(&s)?;
    assert_eq!(emu.mem_info()?.free, 64 * G);
    Ok(())
}

#[test]
fn builder_refuses_bad_configs() -> Result<()> {
    assert_eq!(Emulator::builder().devices(0).build().unwrap_err().code(), 100_000);
    let many = Emulator::builder().devices(mempool_emu::MAX_DEVICES + 1).build().unwrap_err();
    assert_eq!(many.code(), 100_000);
    assert!(many.message().contains("1 to 1024"), "{}", many.message());
    assert_eq!(Emulator::builder().devices(mempool_emu::MAX_DEVICES).build()?.config().devices, 1024);
    let coarse = Emulator::builder().granularity(2 << 30).device_memory(4 << 30).build().unwrap_err();
    assert!(coarse.message().contains("to 1 GiB"), "{}", coarse.message());
    let huge = Emulator::builder().device_memory(mempool_emu::MAX_DEVICE_MEMORY + 1).build().unwrap_err();
    assert_eq!(huge.code(), 100_000);
    assert_eq!(Emulator::builder().granularity(3 << 20).build().unwrap_err().code(), 100_000);
    assert_eq!(Emulator::builder().granularity(512).build().unwrap_err().code(), 100_000);
    assert_eq!(Emulator::builder().granularity(G).device_memory(G - 1).build().unwrap_err().code(), 100_000);
    let e = Emulator::new();
    assert_eq!((e.config().device_memory, e.pool_granularity()), (16 << 30, 2 << 20));
    Ok(())
}

#[test]
fn traced_allocations_name_their_rule_and_counts_add_up() -> Result<()> {
    let emu = emu(ExecutionMode::Deferred);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props(32))?;
    pool.set(attr::ReleaseThreshold, pool.size())?;
    pool.set(attr::ReuseAllowInternalDependencies, true)?;
    let (x, r) = pool.malloc_async_traced(G, &a)?;
    assert_eq!(r, ReuseRule::Fresh);
    pool.free(x, &a)?;
    assert_eq!(pool.malloc_async_traced(G, &a)?, (x, ReuseRule::SameStream));
    emu.memset_async(x, 0, G, &a)?; // queued work that uses x before the free
    pool.free(x, &a)?;
    assert_eq!(pool.pending_cached_bytes(), G, "deferred: the free has not executed");
    assert_eq!(pool.malloc_async_traced(G, &b)?, (x, ReuseRule::InternalDependency));
    pool.free(x, &b)?;
    emu.synchronize_stream(&b)?;
    assert_eq!(pool.malloc_async_traced(G, &a)?, (x, ReuseRule::KnownComplete));
    let c = pool.reuse_counts();
    assert_eq!((c.fresh, c.same_stream, c.internal_dependency, c.known_complete), (1, 1, 1, 1));
    assert_eq!(pool.live_allocations(), 1);
    Ok(())
}

#[test]
fn event_elapsed_time_measures_real_milliseconds() -> Result<()> {
    let emu = emu(ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    let (start, end) = (emu.create_event()?, emu.create_event()?);
    let never = emu.event_elapsed_ms(&start, &end).unwrap_err();
    assert_eq!((never.code(), never.kind()), (507_000, ErrorKind::NotReady), "never recorded (CANN's 507000)");
    emu.record_event(&start, &s)?;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    emu.launch_host_func(
        &s,
        Box::new(move || {
            let _ = rx.recv();
            std::thread::sleep(std::time::Duration::from_millis(30));
        }),
    )?;
    emu.record_event(&end, &s)?;
    assert_eq!(emu.event_elapsed_ms(&start, &end).unwrap_err().kind(), ErrorKind::NotReady);
    tx.send(()).unwrap();
    emu.synchronize_event(&end)?;
    let ms = emu.event_elapsed_ms(&start, &end)?;
    assert!((25.0..5000.0).contains(&ms), "elapsed {ms} ms");
    assert!(emu.event_elapsed_ms(&end, &start)? < 0.0);
    emu.destroy_event(&end)?;
    assert_eq!(emu.event_elapsed_ms(&start, &end).unwrap_err().code(), 107_017);
    Ok(())
}

#[test]
fn work_enqueued_while_a_stream_is_destroyed_is_refused_not_lost() -> Result<()> {
    for _ in 0..50 {
        let emu = Emulator::builder()
            .granularity(G)
            .device_memory(256 * G)
            .wait_timeout(std::time::Duration::from_secs(5))
            .build()?;
        let s = emu.create_stream()?;
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (emu, s) = (emu.clone(), s.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        if let Err(e) = emu.launch_host_func(&s, Box::new(|| {})) {
                            assert_eq!(e.code(), 107_017, "{e}");
                            return;
                        }
                    }
                })
            })
            .collect();
        emu.destroy_stream(&s)?;
        for t in threads {
            t.join().unwrap();
        }
        // Everything that was accepted runs; nothing is stranded behind the destroy.
        emu.synchronize_device()?;
    }
    Ok(())
}

#[test]
fn bad_frees_say_what_the_pointer_is() -> Result<()> {
    let emu = emu(ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(64 * G).build())?;
    let p = pool.malloc_async_traced(2 * G, &s)?.0;
    let inside = DevicePtr::from_addr(p.addr() + G);
    let why = |r: Result<()>| r.unwrap_err().message().to_string();
    assert!(why(pool.free(inside, &s)).contains("interior pointer of a live allocation"));
    pool.free(p, &s)?;
    assert!(why(pool.free(p, &s)).contains("already freed (double free)"));
    assert!(why(pool.free(inside, &s)).contains("inside a freed block"));
    let outside = DevicePtr::from_addr(p.addr() + 32 * G);
    assert!(why(pool.free(outside, &s)).contains("not an allocation of this pool"));
    emu.synchronize_stream(&s)?;
    emu.destroy_pool(&pool)
}

#[test]
fn a_host_function_that_waits_for_its_own_stream_fails_at_once() -> Result<()> {
    let emu = emu(ExecutionMode::Threaded);
    let s = emu.create_stream()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let (inner, own) = (emu.clone(), s.clone());
    emu.launch_host_func(
        &s,
        Box::new(move || {
            let _ = tx.send(inner.synchronize_stream(&own));
        }),
    )?;
    // Well before the emulator's 60 s bound on every wait.
    let got = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("the host function returned");
    let e = got.unwrap_err();
    assert_eq!(e.code(), 507_000);
    assert!(e.message().contains("synchronizing its own stream deadlocks"), "{}", e.message());
    emu.synchronize_stream(&s)
}

#[test]
fn query_stream_neither_runs_deferred_work_nor_waits() -> Result<()> {
    let dev = emu(ExecutionMode::Deferred);
    let s = dev.create_stream()?;
    assert_eq!(dev.query_stream(&s)?, mempool_hal::StreamStatus::Complete, "an empty stream");
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    dev.launch_host_func(
        &s,
        Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        }),
    )?;
    assert_eq!(dev.query_stream(&s)?, mempool_hal::StreamStatus::NotReady);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "a query lets nothing run");
    dev.run_pending(&s)?;
    assert_eq!(dev.query_stream(&s)?, mempool_hal::StreamStatus::Complete);
    dev.destroy_stream(&s)?;
    assert_eq!(dev.query_stream(&s).unwrap_err().code(), mempool_hal::code::ACL_ERROR_RT_INVALID_HANDLE);
    Ok(())
}

/// Contract §1 and §4 rule b: a stream query answering complete orders later work, but it
/// is no synchronization: a block freed on the stream is not known complete for another
/// stream until the host synchronizes.
#[rstest]
fn a_complete_stream_query_is_no_synchronization_for_rule_b(
    #[values(ExecutionMode::Deferred, ExecutionMode::Threaded)] mode: ExecutionMode,
) -> Result<()> {
    let dev = emu(mode);
    let (a, b) = (dev.create_stream()?, dev.create_stream()?);
    let pool = dev.create_pool(&props(8))?;
    pool.set(attr::ReleaseThreshold, 8 * G)?;
    let x = pool.malloc_async(G, &a)?;
    pool.free(x, &a)?;
    dev.run_pending(&a)?;
    assert_eq!(dev.query_stream(&a)?, mempool_hal::StreamStatus::Complete);
    let (y, rule) = pool.malloc_async_traced(G, &b)?;
    assert_eq!(rule, ReuseRule::Fresh, "{mode:?}");
    assert_ne!(y, x);
    dev.synchronize_stream(&a)?;
    assert_eq!(pool.malloc_async_traced(G, &b)?, (x, ReuseRule::KnownComplete), "{mode:?}");
    Ok(())
}

/// Contract §1 (transitively) and §4 rule b: a synchronization of device 1 observes its
/// stream's end and everything that end is ordered after, on any device: a free on a
/// stream of device 0 that the stream of device 1 waited for is known complete.
#[rstest]
fn a_device_synchronization_observes_other_devices_streams_it_waited_for(
    #[values(ExecutionMode::Deferred, ExecutionMode::Threaded)] mode: ExecutionMode,
) -> Result<()> {
    let dev0 = Emulator::builder().granularity(G).device_memory(64 * G).devices(2).mode(mode).build()?;
    let dev1 = dev0.device(1)?;
    let (a, b, c) = (dev0.create_stream()?, dev0.create_stream()?, dev1.create_stream()?);
    let pool = dev0.create_pool(&props(8))?;
    let x = pool.malloc_async(G, &a)?;
    pool.free(x, &a)?;
    let ev = dev0.create_event()?;
    dev0.record_event(&ev, &a)?;
    // Device 1's synchronization releases nothing of device 0's pool (threshold 0).
    dev1.synchronize_device()?;
    assert_eq!(pool.stats()?.reserved_current, G);
    let (y, rule) = pool.malloc_async_traced(G, &b)?;
    assert_eq!((y == x, rule), (false, ReuseRule::Fresh), "{mode:?}: c has not waited yet");
    dev1.stream_wait_event(&c, &ev)?;
    dev1.synchronize_device()?;
    assert_eq!(pool.malloc_async_traced(G, &b)?, (x, ReuseRule::KnownComplete), "{mode:?}");
    Ok(())
}

#[test]
fn timed_synchronization_expires_on_a_blocked_stream() -> Result<()> {
    let dev = emu(ExecutionMode::Threaded);
    let s = dev.create_stream()?;
    let ev = dev.create_event()?;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    dev.launch_host_func(
        &s,
        Box::new(move || {
            let _ = rx.recv_timeout(std::time::Duration::from_secs(10));
        }),
    )?;
    dev.record_event(&ev, &s)?;
    let short = Some(std::time::Duration::from_millis(20));
    let e = dev.synchronize_stream_timeout(&s, short).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::NotReady, mempool_hal::code::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT));
    let e = dev.synchronize_event_timeout(&ev, short).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::NotReady, mempool_hal::code::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT));
    assert!(dev.event_timestamp_us(&ev).is_err(), "not reached yet");
    tx.send(()).unwrap();
    dev.synchronize_event_timeout(&ev, None)?;
    dev.synchronize_stream_timeout(&s, Some(std::time::Duration::from_secs(5)))?;
    assert!(dev.event_timestamp_us(&ev)? > 0);
    dev.reset_event(&ev, &s)?;
    assert_eq!(dev.query_event(&ev)?, mempool_hal::EventStatus::NotReady, "a reset event");
    Ok(())
}

#[test]
fn host_functions_on_one_thread_run_one_at_a_time_and_keep_stream_order() -> Result<()> {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;
    let emu = Emulator::builder().host_functions_on_one_thread(true).build()?;
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props(4))?;
    let x = pool.malloc_async(64, &b)?;
    let (gate, a_done, b_saw) =
        (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (g, done) = (Arc::clone(&gate), Arc::clone(&a_done));
    emu.launch_host_func(
        &a,
        Box::new(move || {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            done.store(true, Ordering::SeqCst);
        }),
    )?;
    std::thread::sleep(Duration::from_millis(20));
    // Device work on B still runs; B's host function waits for A's.
    emu.memset_async(x, 5, 64, &b)?;
    let ev = emu.create_event()?;
    emu.record_event(&ev, &b)?;
    let (done, saw) = (Arc::clone(&a_done), Arc::clone(&b_saw));
    emu.launch_host_func(&b, Box::new(move || saw.store(done.load(Ordering::SeqCst), Ordering::SeqCst)))?;
    emu.synchronize_event(&ev)?;
    let out = HostBuffer::new(64);
    // A panicking host function is reported as before, by the next synchronization.
    emu.launch_host_func(&b, Box::new(|| panic!("boom")))?;
    emu.memcpy_d2h_async(&out, x, &b)?;
    gate.store(true, Ordering::SeqCst);
    let e = emu.synchronize_stream(&b).unwrap_err();
    assert!(e.message().contains("panicked: boom"), "{}", e.message());
    assert!(b_saw.load(Ordering::SeqCst), "B's host function ran after A's returned");
    assert_eq!(out.to_vec(), vec![5; 64]);

    // A host function that synchronizes its own stream still fails at once.
    let (tx, rx) = std::sync::mpsc::channel();
    let (inner, own) = (emu.clone(), a.clone());
    emu.launch_host_func(&a, Box::new(move || drop(tx.send(inner.synchronize_stream(&own)))))?;
    let got = rx.recv_timeout(Duration::from_secs(20)).expect("the host function returned");
    assert!(got.unwrap_err().message().contains("host-function thread"));
    pool.free(x, &b)?;
    emu.synchronize_device()
}

//! Reliability of the emulator at its edges: a wait that outlasts the wait timeout,
//! statistics read while another thread changes the pool, a device synchronization with a
//! failing stream, synchronizations through another device's handle, and destroyed
//! streams.

use mempool_emu::{Emulator, ReuseRule};
use mempool_hal::{Device, ErrorKind, MemPool, MemPoolExt, PoolProps, Result, attr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const G: u64 = 64 << 10;

/// An emulator whose waits give up after `wait` (the tests block streams on purpose).
fn emu(wait: Duration) -> Emulator {
    Emulator::builder().granularity(G).device_memory(256 * G).wait_timeout(wait).build().expect("valid config")
}

/// Blocks `s` with a host function until the returned sender sends or drops.
fn block(emu: &Emulator, s: &<Emulator as Device>::Stream) -> Result<mpsc::Sender<()>> {
    let (tx, rx) = mpsc::channel::<()>();
    emu.launch_host_func(
        s,
        Box::new(move || {
            let _ = rx.recv();
        }),
    )?;
    Ok(tx)
}

/// contract::objects (rule 3) and contract::allocation (rule b): a wait that outlasts the
/// wait timeout never lets a synchronization observe what it waited for.
#[test]
fn a_timed_out_wait_lets_no_synchronization_observe_what_it_waited_for() -> Result<()> {
    let emu = emu(Duration::from_millis(100));
    let (a, b, c) = (emu.create_stream()?, emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&PoolProps::builder().max_size(8 * G).build())?;
    pool.set(attr::ReleaseThreshold, 8 * G)?; // nothing is released: only reuse decides
    let tx = block(&emu, &a)?;
    let x = pool.malloc_async(G, &a)?;
    emu.memset_async(x, 1, G, &a)?;
    pool.free(x, &a)?;
    let e = emu.create_event()?;
    emu.record_event(&e, &a)?;
    emu.stream_wait_event(&b, &e)?;
    // B's wait starts, and outlasts the timeout, before the host's drain of B does.
    std::thread::sleep(Duration::from_millis(30));
    assert!(emu.synchronize_stream(&b).is_err(), "B cannot complete while A is blocked");
    // A has run neither the memset nor the free: x is not known complete.
    let (y, rule) = pool.malloc_async_traced(G, &c)?;
    assert_eq!(rule, ReuseRule::Fresh, "{y} (x is {x})");
    assert_ne!(y, x);
    // Once A gets there, B's wait ends and everything completes in order.
    tx.send(()).unwrap();
    emu.synchronize_stream(&b)?;
    emu.synchronize_device()?;
    Ok(())
}

/// contract::statistics: the four counters are one snapshot, so RESERVED ≥ USED in every
/// answer, also while another thread allocates fresh memory, frees it and trims.
#[test]
fn stats_are_one_snapshot_while_another_thread_allocates_frees_and_trims() -> Result<()> {
    let emu = emu(Duration::from_secs(60));
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(8 * G).build())?;
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (pool, s, stop) = (pool.clone(), s.clone(), Arc::clone(&stop));
        std::thread::spawn(move || -> Result<u64> {
            let mut rounds = 0;
            while !stop.load(Ordering::Relaxed) {
                let p = pool.malloc_async(1, &s)?; // fresh: the trim below left nothing cached
                pool.free(p, &s)?;
                pool.trim_to(0)?;
                rounds += 1;
            }
            Ok(rounds)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut reads = 0u64;
    let mut bad = None;
    while Instant::now() < deadline && bad.is_none() {
        let st = pool.stats()?;
        if st.reserved_current < st.used_current {
            bad = Some(st);
        }
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = writer.join().unwrap()?;
    assert_eq!(bad, None, "a snapshot with RESERVED < USED after {reads} reads ({rounds} rounds)");
    assert!(rounds > 0 && reads > 0);
    Ok(())
}

/// contract::release and contract::objects (rule 3): a device synchronization drains,
/// observes and releases every stream even when one of them fails, then reports the error.
#[test]
fn a_failed_device_synchronization_still_drains_observes_and_releases_the_rest() -> Result<()> {
    let emu = emu(Duration::from_millis(100));
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let released = emu.create_pool(&PoolProps::builder().max_size(8 * G).build())?;
    let kept = emu.create_pool(&PoolProps::builder().max_size(8 * G).build())?;
    kept.set(attr::ReleaseThreshold, 8 * G)?;
    let tx = block(&emu, &a)?;
    let x = released.malloc_async(G, &b)?;
    released.free(x, &b)?;
    let y = kept.malloc_async(G, &b)?;
    kept.free(y, &b)?;
    let err = emu.synchronize_device().unwrap_err();
    assert!(err.message().contains("did not reach position"), "{err}");
    assert_eq!(released.stats()?.reserved_current, 0, "B's free executed: released at the synchronization");
    let c = emu.create_stream()?;
    assert_eq!(kept.malloc_async_traced(G, &c)?, (y, ReuseRule::KnownComplete), "B was observed");
    tx.send(()).unwrap();
    emu.synchronize_device()?;
    Ok(())
}

/// contract::release and contract::free: a synchronization releases the pools of the
/// stream's (or the event's) device, whichever device's handle makes it; a free on a
/// stream of another device than the pool's is refused.
#[test]
fn synchronizations_release_the_pools_of_the_stream_or_event_device() -> Result<()> {
    let dev0 = Emulator::builder().granularity(G).device_memory(64 * G).devices(2).build()?;
    let dev1 = dev0.device(1)?;
    let s1 = dev1.create_stream()?;
    let pool = dev1.create_pool(&PoolProps::builder().device(1).max_size(8 * G).build())?;
    let x = pool.malloc_async(G, &s1)?;
    pool.free(x, &s1)?;
    dev0.synchronize_stream(&s1)?;
    assert_eq!(pool.stats()?.reserved_current, 0, "stream sync through device 0's handle");
    let x = pool.malloc_async(G, &s1)?;
    pool.free(x, &s1)?;
    dev0.synchronize_stream_timeout(&s1, Some(Duration::from_secs(30)))?;
    assert_eq!(pool.stats()?.reserved_current, 0, "timed stream sync through device 0's handle");
    let e = dev1.create_event()?;
    for timed in [false, true] {
        let x = pool.malloc_async(G, &s1)?;
        pool.free(x, &s1)?;
        dev1.record_event(&e, &s1)?;
        if timed {
            dev0.synchronize_event_timeout(&e, Some(Duration::from_secs(30)))?;
        } else {
            dev0.synchronize_event(&e)?;
        }
        assert_eq!(pool.stats()?.reserved_current, 0, "event sync through device 0's handle (timed: {timed})");
    }
    let s0 = dev0.create_stream()?;
    let x = pool.malloc_async(G, &s1)?;
    let err = pool.free(x, &s0).unwrap_err();
    assert_eq!((err.kind(), err.code()), (ErrorKind::WrongContext, 107_003), "{err}");
    let err = dev0.free(x, &s0).unwrap_err();
    assert_eq!(err.code(), 107_003, "{err}");
    pool.free(x, &s1)?;
    dev1.synchronize_device()?;
    assert_eq!(pool.stats()?.reserved_current, 0);
    Ok(())
}

/// contract::statistics (handles): destroyed streams leave the platform's registry once
/// their work is done, also when the program only ever synchronizes streams.
#[test]
fn destroyed_streams_leave_the_registry_without_a_device_synchronization() -> Result<()> {
    let emu = Emulator::builder().granularity(G).device_memory(64 * G).build()?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(8 * G).build())?;
    for _ in 0..10_000 {
        let s = emu.create_stream()?;
        let p = pool.malloc_async(G, &s)?;
        pool.free(p, &s)?;
        emu.synchronize_stream(&s)?;
        emu.destroy_stream(&s)?;
    }
    // The workers end on their own; give the last ones a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    let small = 64 + 1;
    while emu.registered_streams_for_tests() > small && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let n = emu.registered_streams_for_tests();
    assert!(n <= small, "{n} streams still registered after 10,000 were destroyed");
    // A device synchronization observes the ones kept, which then leave too.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        emu.synchronize_device()?;
        let n = emu.registered_streams_for_tests();
        if n == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{n} streams still registered after device synchronizations");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(pool.stats()?.reserved_current, 0);
    Ok(())
}

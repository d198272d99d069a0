//! Tests of the whole emulator that read its internal state (the block structure's
//! invariants); the public behaviour is tested in `tests/`.

use crate::config::ExecutionMode;
use crate::device::Emulator;
use mempool_hal::{Device, MemPool, MemPoolExt, PoolProps, attr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Random allocate/free/sync/trim sequences over three streams keep the block
/// structure exact: live, cached and free ranges tile the pool, free neighbours are
/// merged, and the counters match the blocks.
#[test]
fn random_sequences_keep_the_invariants() {
    const G: u64 = 64 << 10;
    for seed in 1..=20u64 {
        let emu = Emulator::builder()
            .granularity(G)
            .device_memory(64 * G)
            .mode(if seed % 2 == 0 { ExecutionMode::Deferred } else { ExecutionMode::Threaded })
            // Frees land on random streams, unordered after their allocations: the
            // checker would refuse them, and the structure must stay exact regardless.
            .checker(false)
            .build()
            .unwrap();
        let streams: Vec<_> = (0..3).map(|_| emu.create_stream().unwrap()).collect();
        let pool = emu.create_pool(&PoolProps::builder().max_size(48 * G).build()).unwrap();
        pool.set(attr::ReuseAllowOpportunistic, seed % 3 == 0).unwrap();
        pool.set(attr::ReuseAllowInternalDependencies, seed % 5 == 0).unwrap();
        pool.set(attr::ReleaseThreshold, (seed % 4) * 8 * G).unwrap();
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut live = Vec::new();
        for _ in 0..400 {
            let s = &streams[(next() % 3) as usize];
            match next() % 10 {
                0..=4 => {
                    if let Ok(p) = pool.malloc_async((next() % (4 * G)) + 1, s) {
                        live.push(p);
                    }
                }
                5..=7 if !live.is_empty() => {
                    let p = live.swap_remove((next() as usize) % live.len());
                    pool.free(p, s).unwrap();
                }
                8 => emu.synchronize_stream(s).unwrap(),
                _ => {
                    let used = pool.stats().unwrap().used_current;
                    pool.trim_to(used).unwrap();
                }
            }
            pool.shared.check_invariants();
            assert_eq!(emu.mem_info().unwrap().free, 64 * G - pool.shared.reserved(), "the device counts RESERVED");
        }
        for p in live.drain(..) {
            pool.free(p, &streams[0]).unwrap();
        }
        emu.synchronize_device().unwrap();
        pool.shared.check_invariants();
        let s = pool.stats().unwrap();
        assert_eq!(s.used_current, 0);
        let c = pool.reuse_counts();
        assert!(c.fresh > 10 && c.same_stream + c.known_complete > 10, "the sequence exercised reuse: {c:?}");
        assert!(s.reserved_current <= (seed % 4) * 8 * G, "release at device sync honours the threshold");
    }
}

/// Runs `copy` on `[addr, addr + len)` of `pool` as a copy into it does (pinned, through
/// `with_memory`) on a thread of its own, and returns once the range is pinned, with a
/// flag the copy sets when it is done and the thread's handle.
fn copying(
    pool: &crate::EmuPool,
    addr: u64,
    len: u64,
    copy: impl FnOnce(*mut u8) + Send + 'static,
) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let done = Arc::new(AtomicBool::new(false));
    let (shared, flag) = (Arc::clone(&pool.shared), Arc::clone(&done));
    let t = std::thread::spawn(move || {
        shared
            .with_memory(addr, len, true, "memcpy", |p| {
                copy(p);
                flag.store(true, Ordering::SeqCst);
            })
            .expect("the range is reserved");
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pool.shared.has_pins() && !done.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the copy started");
        std::thread::yield_now();
    }
    (done, t)
}

/// Waits up to 10 s for `flag`.
fn wait_for(flag: &AtomicBool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !flag.load(Ordering::SeqCst) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// A copy into a pool does not hold the pool's lock while it moves bytes: a thread that
/// allocates and frees on the pool finishes its loop while a large copy into the pool is
/// still running (the copy waits for the loop, for at most 10 s, before it ends).
#[test]
fn allocations_go_on_while_a_copy_into_the_pool_runs() {
    const MIB: u64 = 1 << 20;
    let emu = Emulator::builder().granularity(2 * MIB).device_memory(1 << 30).build().unwrap();
    let s = emu.create_stream().unwrap();
    let pool = emu.create_pool(&PoolProps::builder().max_size(512 * MIB).build()).unwrap();
    let dst = pool.malloc_sync(256 * MIB, &s).unwrap();
    let looped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&looped);
    let (copied, t) = copying(&pool, dst.addr(), 256 * MIB, move |p| {
        // SAFETY: the test's range: 256 MiB of committed pool memory, pinned for writing.
        unsafe { std::ptr::write_bytes(p, 7, 256 << 20) };
        wait_for(&flag);
    });
    let (p2, s2) = (pool.clone(), emu.create_stream().unwrap());
    let worker = std::thread::spawn(move || {
        for _ in 0..1000 {
            let p = p2.malloc_async(2 * MIB, &s2).unwrap();
            p2.free(p, &s2).unwrap();
        }
        looped.store(true, Ordering::SeqCst);
        copied.load(Ordering::SeqCst)
    });
    let copy_was_done = worker.join().unwrap();
    t.join().unwrap();
    assert!(!copy_was_done, "the allocation loop finished while the copy was still running");
    let mut back = vec![0u8; 4096];
    let src = mempool_hal::DevicePtr::from_addr(dst.addr() + 100 * MIB);
    // SAFETY: `back` holds 4096 writable bytes for the call.
    unsafe { emu.memcpy_raw(crate::CopySide::Host(back.as_mut_ptr()), crate::CopySide::Device(src), 4096) }.unwrap();
    assert_eq!(back, vec![7u8; 4096], "the copy wrote the memory");
    pool.shared.check_invariants();
}

/// A pinned range (a copy is touching it) is never released, by a release at
/// synchronization or by `trim_to`, even once freed; it goes at the next release after the
/// copy is done.
#[test]
fn a_range_being_copied_is_not_released() {
    const G: u64 = 64 << 10;
    let emu = Emulator::builder().granularity(G).device_memory(64 * G).checker(false).build().unwrap();
    let s = emu.create_stream().unwrap();
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * G).build()).unwrap();
    // `z` stays live between them, so the two freed blocks do not merge.
    let x = pool.malloc_async(2 * G, &s).unwrap();
    let z = pool.malloc_async(G, &s).unwrap();
    let y = pool.malloc_async(G, &s).unwrap();
    let go = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&go);
    let (done, t) = copying(&pool, x.addr() + G, G, move |p| {
        assert!(wait_for(&flag), "the test lets the copy end");
        // SAFETY: one granule of committed pool memory, pinned for writing.
        unsafe { std::ptr::write_bytes(p, 1, G as usize) };
    });
    // Freed while it is being copied (a racy program: the checker is off), then released.
    pool.free(x, &s).unwrap();
    pool.free(y, &s).unwrap();
    emu.synchronize_stream(&s).unwrap();
    let st = pool.stats().unwrap();
    assert_eq!((st.used_current, st.reserved_current), (G, 3 * G), "only the block not pinned went");
    pool.trim_to(G).unwrap();
    assert_eq!(pool.stats().unwrap().reserved_current, 3 * G);
    assert_eq!(emu.mem_info().unwrap().free, 61 * G);
    assert_eq!(emu.mem_info().unwrap().free, 64 * G - pool.shared.reserved(), "the device counts the pool's RESERVED");
    pool.shared.check_invariants();
    go.store(true, Ordering::SeqCst);
    t.join().unwrap();
    assert!(done.load(Ordering::SeqCst) && !pool.shared.has_pins());
    pool.trim_to(G).unwrap();
    assert_eq!(pool.stats().unwrap().reserved_current, G);
    assert_eq!(emu.mem_info().unwrap().free, 63 * G);
    pool.free(z, &s).unwrap();
    emu.synchronize_stream(&s).unwrap();
    assert_eq!(emu.mem_info().unwrap().free, 64 * G);
    pool.shared.check_invariants();
}

/// cann-open (contract §12): a destroy gives the pool's memory back at once, but not
/// under a copy that is running: it waits for the copy to finish first.
#[test]
fn a_cann_open_destroy_waits_for_a_running_copy() {
    const G: u64 = 64 << 10;
    let emu =
        Emulator::builder().granularity(G).device_memory(64 * G).profile(crate::Profile::CannOpen).build().unwrap();
    let s = emu.create_stream().unwrap();
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * G).build()).unwrap();
    let x = pool.malloc_sync(G, &s).unwrap();
    let (done, t) = copying(&pool, x.addr(), G, |p| {
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: one granule of committed pool memory, pinned for writing.
        unsafe { std::ptr::write_bytes(p, 1, G as usize) };
    });
    emu.destroy_pool(&pool).unwrap();
    assert!(done.load(Ordering::SeqCst), "the destroy waited for the copy");
    t.join().unwrap();
    let err = pool.shared.with_memory(x.addr(), G, false, "memcpy", |_| ()).unwrap_err();
    assert!(err.message().contains("was destroyed before the work ran"), "{err}");
}

/// A long-running server: each request creates a stream, allocates there, hands the
/// result back to the main stream through events, destroys the stream, and synchronizes
/// the main stream. The main stream's clock keeps only the streams the host has not
/// observed (it does not grow with every stream ever created), and the reuse decisions
/// stay those of the contract: every request after the first reuses the block the main
/// stream freed before the last synchronization (rule b).
#[test]
fn clocks_forget_destroyed_streams_the_host_observed() {
    let emu = Emulator::builder().granularity(64 << 10).device_memory(1 << 30).build().unwrap();
    let pool = emu.create_pool(&PoolProps::builder().max_size(1 << 30).build()).unwrap();
    pool.set(attr::ReuseFollowEventDependencies, true).unwrap();
    pool.set(attr::ReleaseThreshold, 1 << 30).unwrap();
    let main = emu.create_stream().unwrap();
    let (to_req, to_main) = (emu.create_event().unwrap(), emu.create_event().unwrap());
    emu.record_event(&to_req, &main).unwrap();
    let mut rules = Vec::new();
    let mut longest = 0;
    for i in 0..300 {
        let s = emu.create_stream().unwrap();
        emu.stream_wait_event(&s, &to_req).unwrap();
        let (d, rule) = pool.malloc_async_traced(64 << 10, &s).unwrap();
        rules.push(rule);
        emu.record_event(&to_main, &s).unwrap();
        emu.stream_wait_event(&main, &to_main).unwrap();
        pool.free(d, &main).unwrap();
        emu.record_event(&to_req, &main).unwrap();
        emu.destroy_stream(&s).unwrap();
        emu.synchronize_stream(&main).unwrap();
        if i >= 100 {
            longest = longest.max(main.shared.state().clock().len());
        }
    }
    assert!(longest <= 70, "the main stream's clock names {longest} streams");
    assert_eq!(rules[0], crate::ReuseRule::Fresh);
    assert!(rules[1..].iter().all(|&r| r == crate::ReuseRule::KnownComplete), "{rules:?}");
    assert_eq!(pool.stats().unwrap().reserved_current, 64 << 10);
}

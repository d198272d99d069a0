//! Destroy while in use: threads use a pool, a stream, an event and a context while the
//! main thread destroys it.

use super::*;

/// What the threads of a scenario saw: codes outside the documented set (with where),
/// and how many calls succeeded and were refused.
#[derive(Default)]
struct Tally {
    odd: Vec<String>,
    ok: u64,
    refused: u64,
}

type Seen = Arc<Mutex<Tally>>;

/// A worker's call: `rc` must be one of `allowed`.
fn expect_in(seen: &Seen, what: &str, rc: aclError, allowed: &[aclError]) -> aclError {
    let mut t = seen.lock().unwrap();
    if !allowed.contains(&rc) {
        t.odd.push(format!("{what} returned {rc} (allowed {allowed:?}): {}", message()));
    } else if rc == OK {
        t.ok += 1;
    } else {
        t.refused += 1;
    }
    rc
}

/// The destroying thread's call: `rc` must be `want` (not counted).
fn expect_eq(seen: &Seen, what: &str, rc: aclError, want: aclError) {
    if rc != want {
        seen.lock().unwrap().odd.push(format!("{what} returned {rc}, expected {want}: {}", message()));
    }
}

/// Runs `workers` threads of `body(i, stop)` while `destroy` runs on this thread after a
/// short while; every worker must end within HANG after `stop` is set, and the workers
/// must have seen calls succeed (before the destroy) and be refused (after it). Returns
/// the failures and the number of worker calls.
fn scenario(
    name: &str,
    workers: usize,
    body: impl Fn(usize, &AtomicBool, &Seen) + Send + Sync + 'static,
    destroy: impl FnOnce(&Seen),
) -> (Vec<String>, u64) {
    let seen: Seen = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let body = Arc::new(body);
    let (done_tx, done_rx) = mpsc::channel();
    for i in 0..workers {
        let (seen, stop, body, done) = (Arc::clone(&seen), Arc::clone(&stop), Arc::clone(&body), done_tx.clone());
        std::thread::spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| body(i, &stop, &seen)));
            let _ = done.send(r.is_ok());
        });
    }
    std::thread::sleep(Duration::from_millis(30));
    destroy(&seen);
    std::thread::sleep(Duration::from_millis(30));
    stop.store(true, Ordering::Release);
    let mut failures: Vec<String> = Vec::new();
    for _ in 0..workers {
        match done_rx.recv_timeout(HANG) {
            Ok(true) => {}
            Ok(false) => failures.push(format!("{name}: a worker panicked")),
            Err(_) => {
                failures.push(format!("{name}: a worker did not finish within {HANG:?} (hang)"));
                break;
            }
        }
    }
    let t = seen.lock().unwrap();
    failures.extend(t.odd.iter().map(|s| format!("{name}: {s}")));
    if t.ok == 0 || t.refused == 0 {
        failures.push(format!("{name}: {} calls succeeded and {} were refused: no race was run", t.ok, t.refused));
    }
    (failures, t.ok + t.refused)
}

fn set_device_0() {
    // SAFETY: takes an integer only.
    check(unsafe { aclrtSetDevice(0) }, "aclrtSetDevice(0)");
}

fn new_stream() -> usize {
    let mut s: aclrtStream = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { aclrtCreateStream(&mut s) }, "a worker stream");
    s as usize
}

/// Threads allocate, write, free, read attributes, trim and synchronize on a pool while
/// it is destroyed.
pub(super) fn pool_destroyed_in_use() -> (Vec<String>, u64) {
    let pool = witness_pool(0);
    scenario(
        "pool destroyed while in use",
        4,
        move |_, stop, seen| {
            set_device_0();
            let s = new_stream();
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut p: *mut c_void = null_mut();
                // SAFETY: a valid out-pointer, handles from the shim (the pool may be
                // destroyed meanwhile: that is the point), addresses it returned, and a
                // `uint64_t` for attribute 7.
                unsafe {
                    let rc = aclrtMemPoolMallocAsync(&mut p, 1 << 20, sv(pool), sv(s));
                    if expect_in(seen, "aclrtMemPoolMallocAsync", rc, &[OK, INTERNAL]) == OK {
                        expect_in(
                            seen,
                            "aclrtMemsetAsync",
                            aclrtMemsetAsync(p, 1 << 20, 7, 1 << 20, sv(s)),
                            &[OK, RT_PARAM],
                        );
                        expect_in(seen, "aclrtMemPoolFreeAsync", aclrtMemPoolFreeAsync(p, sv(s)), &[OK, RT_PARAM]);
                    }
                    let mut used = 0u64;
                    expect_in(
                        seen,
                        "aclrtMemPoolGetAttr",
                        aclrtMemPoolGetAttr(sv(pool), 7, (&raw mut used).cast()),
                        &[OK, RT_PARAM],
                    );
                    expect_in(seen, "aclrtMemPoolTrimTo", aclrtMemPoolTrimTo(sv(pool), POOL_SIZE), &[OK, INTERNAL]);
                    expect_in(seen, "aclrtSynchronizeStream", aclrtSynchronizeStream(sv(s)), &[OK]);
                }
            }
            // SAFETY: the worker's own stream.
            expect_in(seen, "aclrtDestroyStream", unsafe { aclrtDestroyStream(sv(s)) }, &[OK]);
        },
        move |seen| {
            // SAFETY: a pool handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtMemPoolDestroy", aclrtMemPoolDestroy(sv(pool)), OK);
                expect_eq(seen, "aclrtMemPoolDestroy (again)", aclrtMemPoolDestroy(sv(pool)), INTERNAL);
            }
        },
    )
}

/// Threads allocate, write (memsets), copy, launch host functions, free, record, wait and
/// synchronize on one stream while it is destroyed: work is either refused (107017) or
/// queued before the destroy and run, never queued behind a worker that has ended.
pub(super) fn stream_destroyed_in_use() -> (Vec<String>, u64) {
    set_device_0();
    let shared = new_stream();
    let pool = witness_pool(0);
    let (mut failures, calls) = scenario(
        "stream destroyed while in use",
        4,
        move |_, stop, seen| {
            set_device_0();
            let own = new_stream();
            let mut ev: aclrtEvent = null_mut();
            // SAFETY: a valid out-pointer.
            check(unsafe { aclrtCreateEvent(&mut ev) }, "a worker event");
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut p: *mut c_void = null_mut();
                // SAFETY: a valid out-pointer, handles from the shim (the shared stream may
                // be destroyed meanwhile: that is the point) and addresses it returned.
                unsafe {
                    let rc = aclrtMemPoolMallocAsync(&mut p, 64 << 10, sv(pool), sv(shared));
                    if expect_in(seen, "aclrtMemPoolMallocAsync", rc, &[OK, HANDLE]) == OK {
                        let half = p.cast::<u8>().add(32 << 10).cast::<c_void>();
                        expect_in(
                            seen,
                            "aclrtMemsetAsync",
                            aclrtMemsetAsync(p, 32 << 10, 7, 32 << 10, sv(shared)),
                            &[OK, HANDLE],
                        );
                        expect_in(
                            seen,
                            "aclrtMemcpyAsync",
                            aclrtMemcpyAsync(half, 32 << 10, p, 32 << 10, ACL_MEMCPY_DEVICE_TO_DEVICE, sv(shared)),
                            &[OK, HANDLE],
                        );
                        expect_in(
                            seen,
                            "aclrtLaunchHostFunc",
                            aclrtLaunchHostFunc(sv(shared), Some(ignore_args), null_mut()),
                            &[OK, HANDLE],
                        );
                        let rc = aclrtMemPoolFreeAsync(p, sv(shared));
                        if expect_in(seen, "aclrtMemPoolFreeAsync", rc, &[OK, HANDLE]) != OK {
                            // The stream is gone: free the block on this thread's own
                            // stream once the device has passed everything.
                            expect_in(seen, "aclrtSynchronizeDevice", aclrtSynchronizeDevice(), &[OK]);
                            expect_in(
                                seen,
                                "aclrtMemPoolFreeAsync (own stream)",
                                aclrtMemPoolFreeAsync(p, sv(own)),
                                &[OK],
                            );
                        }
                    }
                    expect_in(seen, "aclrtRecordEvent", aclrtRecordEvent(ev, sv(shared)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtStreamWaitEvent", aclrtStreamWaitEvent(sv(own), ev), &[OK]);
                    expect_in(seen, "aclrtSynchronizeStream", aclrtSynchronizeStream(sv(shared)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtSynchronizeStream (own)", aclrtSynchronizeStream(sv(own)), &[OK]);
                }
            }
            // SAFETY: the worker's own handles.
            unsafe {
                expect_in(seen, "aclrtDestroyEvent", aclrtDestroyEvent(ev), &[OK]);
                expect_in(seen, "aclrtDestroyStream (own)", aclrtDestroyStream(sv(own)), &[OK]);
            }
        },
        move |seen| {
            // SAFETY: a stream handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtDestroyStream", aclrtDestroyStream(sv(shared)), OK);
                expect_eq(seen, "aclrtDestroyStream (again)", aclrtDestroyStream(sv(shared)), HANDLE);
            }
        },
    );
    let mut used = u64::MAX;
    // SAFETY: live handles and a `uint64_t` for attribute 7.
    unsafe {
        check(aclrtSynchronizeDevice(), "synchronizing the device");
        check(aclrtMemPoolGetAttr(sv(pool), 7, (&raw mut used).cast()), "USED");
        check(aclrtMemPoolDestroy(sv(pool)), "destroying the pool");
    }
    if used != 0 {
        failures.push(format!("stream destroyed while in use: {used} bytes still in use after every free"));
    }
    (failures, calls)
}

/// Threads record, wait on, synchronize and query one event while it is destroyed.
pub(super) fn event_destroyed_in_use() -> (Vec<String>, u64) {
    set_device_0();
    let mut ev: aclrtEvent = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { aclrtCreateEvent(&mut ev) }, "the shared event");
    let ev = ev as usize;
    scenario(
        "event destroyed while in use",
        4,
        move |_, stop, seen| {
            set_device_0();
            let own = new_stream();
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut st = 0;
                // SAFETY: handles from the shim (the event may be destroyed meanwhile:
                // that is the point) and a valid out-pointer.
                unsafe {
                    expect_in(seen, "aclrtRecordEvent", aclrtRecordEvent(sv(ev), sv(own)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtStreamWaitEvent", aclrtStreamWaitEvent(sv(own), sv(ev)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtSynchronizeEvent", aclrtSynchronizeEvent(sv(ev)), &[OK, HANDLE]);
                    expect_in(seen, "aclrtQueryEventStatus", aclrtQueryEventStatus(sv(ev), &mut st), &[OK, HANDLE]);
                }
            }
            // SAFETY: the worker's own stream.
            expect_in(seen, "aclrtDestroyStream (own)", unsafe { aclrtDestroyStream(sv(own)) }, &[OK]);
        },
        move |seen| {
            // SAFETY: an event handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtDestroyEvent", aclrtDestroyEvent(sv(ev)), OK);
                expect_eq(seen, "aclrtDestroyEvent (again)", aclrtDestroyEvent(sv(ev)), HANDLE);
            }
        },
    )
}

/// Threads make a context current and create and destroy streams in it while it is
/// destroyed.
pub(super) fn context_destroyed_in_use() -> (Vec<String>, u64) {
    let mut ctx: aclrtContext = null_mut();
    // SAFETY: a valid out-pointer; the default context is made current again after.
    unsafe {
        check(aclrtCreateContext(&mut ctx, 0), "the shared context");
    }
    set_device_0();
    let ctx = ctx as usize;
    scenario(
        "context destroyed while in use",
        4,
        move |_, stop, seen| {
            // SAFETY: the shared handle (maybe destroyed meanwhile: that is the point).
            if unsafe { aclrtSetCurrentContext(sv(ctx)) } != OK {
                set_device_0();
            }
            let mut after_stop = 0;
            while after_stop < 50 {
                if stop.load(Ordering::Acquire) {
                    after_stop += 1;
                }
                let mut s: aclrtStream = null_mut();
                // SAFETY: the shared handle, a valid out-pointer and the stream created.
                unsafe {
                    expect_in(seen, "aclrtSetCurrentContext", aclrtSetCurrentContext(sv(ctx)), &[OK, RT_PARAM]);
                    if expect_in(seen, "aclrtCreateStream", aclrtCreateStream(&mut s), &[OK]) == OK {
                        expect_in(seen, "aclrtDestroyStream", aclrtDestroyStream(s), &[OK]);
                    }
                }
            }
        },
        move |seen| {
            // SAFETY: a context handle, destroyed once and then once more.
            unsafe {
                expect_eq(seen, "aclrtDestroyContext", aclrtDestroyContext(sv(ctx)), OK);
                expect_eq(seen, "aclrtDestroyContext (again)", aclrtDestroyContext(sv(ctx)), NO_CONTEXT);
            }
        },
    )
}

//! Virtual memory from many threads at once (contract §14): each thread grows and shrinks
//! a segment of its own (reserve, malloc physical, map, copy in and out, unmap, free,
//! release) while a hostile thread frees, maps and unmaps the handles and addresses the
//! others hold. Every call answers 0 or one of CANN's documented codes, the workers' data
//! is exact whenever their own calls succeed, and the device's memory is all back at the
//! end. A test binary of its own, so the device's memory use is this test's alone.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

#[allow(dead_code)] // this binary uses only part of the shared helpers
mod common;
use common::message;

const G: usize = 2 << 20;
const WORKERS: usize = 4;
const ROUNDS: usize = 25;
const CHUNKS: usize = 3;

/// The handles and addresses the workers hold now, for the hostile thread.
static LIVE: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn used() -> usize {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) }, 0, "{}", message());
    total - free
}

/// One worker's rounds: a segment of CHUNKS granules, grown and shrunk.
fn worker(id: usize) {
    let prop = aclrtPhysicalMemProp::device(0);
    let mut host = vec![0u8; G];
    let mut back = vec![0u8; G];
    for round in 0..ROUNDS {
        let mut base: *mut c_void = null_mut();
        // SAFETY: valid out-pointers and props; the addresses and handles are the ones the
        // library returned; host buffers of G bytes outlive the synchronous copies.
        unsafe {
            assert_eq!(aclrtReserveMemAddress(&mut base, 8 * G, 0, null_mut(), 1), 0, "{}", message());
            let mut chunks = Vec::new();
            for c in 0..CHUNKS {
                let mut h: aclrtDrvMemHandle = null_mut();
                assert_eq!(aclrtMallocPhysical(&mut h, G, &prop, 0), 0, "{}", message());
                let at = base.cast::<u8>().add(c * G).cast::<c_void>();
                let rc = aclrtMapMem(at, G, 0, h, 0);
                // The hostile thread may have freed the handle in between: 107000.
                assert!(rc == 0 || rc == 107_000, "aclrtMapMem answered {rc}: {}", message());
                if rc != 0 {
                    let rc = aclrtFreePhysical(h);
                    assert!(rc == 0 || rc == 107_000, "aclrtFreePhysical answered {rc}");
                    continue;
                }
                LIVE.lock().unwrap().push((h as usize, at as usize));
                chunks.push((h, at));
                host.fill((id * 31 + round * 7 + c) as u8);
                let rc = aclrtMemcpy(at, G, host.as_ptr().cast(), G, ACL_MEMCPY_HOST_TO_DEVICE);
                // The hostile thread may have unmapped it: the checker refuses (107000).
                if rc == 0 && aclrtMemcpy(back.as_mut_ptr().cast(), G, at, G, ACL_MEMCPY_DEVICE_TO_HOST) == 0 {
                    // Unmapped and mapped again by nobody: the bytes are ours, or the
                    // read failed above.
                    assert!(back == host, "worker {id} round {round} chunk {c}: the bytes changed");
                } else {
                    assert!(rc == 0 || rc == 107_000, "aclrtMemcpy answered {rc}: {}", message());
                }
            }
            LIVE.lock().unwrap().retain(|(h, _)| !chunks.iter().any(|(mine, _)| *mine as usize == *h));
            for (h, at) in chunks {
                let rc = aclrtUnmapMem(at);
                assert!(rc == 0 || rc == 507_899, "aclrtUnmapMem answered {rc}: {}", message());
                let rc = aclrtFreePhysical(h);
                assert!(rc == 0 || rc == 107_000, "aclrtFreePhysical answered {rc}: {}", message());
            }
            // A mapping the hostile thread just made is unmapped by it right after: 107000
            // until then.
            let mut tries = 0;
            loop {
                let rc = aclrtReleaseMemAddress(base);
                if rc == 0 {
                    break;
                }
                assert!(rc == 107_000 && tries < 100_000, "aclrtReleaseMemAddress answered {rc}: {}", message());
                tries += 1;
                std::thread::yield_now();
            }
        }
    }
}

#[test]
fn workers_and_a_hostile_thread_share_the_platform() {
    // SAFETY: a device id.
    assert_eq!(unsafe { aclrtSetDevice(0) }, 0);
    let before = used();
    let done = AtomicBool::new(false);
    let mut hostile_calls = 0u64;
    std::thread::scope(|sc| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|id| {
                sc.spawn(move || {
                    // SAFETY: a device id.
                    assert_eq!(unsafe { aclrtSetDevice(0) }, 0);
                    worker(id);
                })
            })
            .collect();
        let hostile = sc.spawn(|| {
            let mut calls = 0u64;
            while !done.load(Ordering::Relaxed) {
                let victim = LIVE.lock().unwrap().last().copied();
                let Some((h, at)) = victim else {
                    std::thread::yield_now();
                    continue;
                };
                // SAFETY: handles and addresses are looked up by the library, never
                // dereferenced; the worker's own calls tolerate what this does.
                unsafe {
                    let rc = aclrtMapMem(at as *mut c_void, G, 0, h as aclrtDrvMemHandle, 0);
                    assert!(rc == 507_899 || rc == 107_000 || rc == 0, "hostile aclrtMapMem answered {rc}");
                    let rc = aclrtUnmapMem(at as *mut c_void);
                    assert!(rc == 0 || rc == 507_899, "hostile aclrtUnmapMem answered {rc}");
                    let rc = aclrtFreePhysical(h as aclrtDrvMemHandle);
                    assert!(rc == 0 || rc == 107_000, "hostile aclrtFreePhysical answered {rc}");
                    // Inside a reservation, never its start: refused, whatever is mapped.
                    let rc = aclrtReleaseMemAddress((at + 4096) as *mut c_void);
                    assert!(rc == 107_000, "hostile aclrtReleaseMemAddress answered {rc}");
                }
                calls += 4;
            }
            calls
        });
        for w in workers {
            w.join().expect("a worker");
        }
        done.store(true, Ordering::Relaxed);
        hostile_calls = hostile.join().expect("the hostile thread");
    });
    assert!(hostile_calls > 0, "the hostile thread made no call");
    assert_eq!(used(), before, "every chunk's memory is back");
    println!("{} worker rounds, {hostile_calls} hostile calls", WORKERS * ROUNDS);
}

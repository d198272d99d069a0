//! Virtual memory from many threads at once (contract §14): each thread grows and shrinks
//! a segment of its own (reserve, create, map, set access, copy in and out, unmap,
//! release, free) while a hostile thread maps, unmaps and releases the handles and
//! addresses the others hold. Every call answers 0 or `CUDA_ERROR_INVALID_VALUE`, the
//! workers' data is exact whenever their own calls succeed, and the device's memory is
//! all back at the end. A test binary of its own: `cuInit` and the device's memory are
//! this test's alone.

mod common;

use common::{init_and_use, message};
use cuda::exports::*;
use cuda::types::*;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

const G: usize = 2 << 20;
const WORKERS: usize = 4;
const ROUNDS: usize = 25;
const CHUNKS: usize = 3;

/// The handles and addresses the workers hold now, for the hostile thread.
static LIVE: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

fn used() -> usize {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; the calling thread has a current context.
    assert_eq!(unsafe { cuMemGetInfo_v2(&mut free, &mut total) }, CUDA_SUCCESS, "{}", message());
    total - free
}

fn ok_or_value(rc: CUresult, what: &str) {
    assert!(rc == CUDA_SUCCESS || rc == CUDA_ERROR_INVALID_VALUE, "{what} answered {rc}: {}", message());
}

/// One worker's rounds: a segment of CHUNKS granules, grown and shrunk.
fn worker(id: usize) {
    let prop = CUmemAllocationProp::device(0);
    let rw = CUmemAccessDesc::device(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    let mut stream: CUstream = std::ptr::null_mut();
    let mut host = vec![0u8; G];
    let mut back = vec![0u8; G];
    // SAFETY: valid out-pointers, props and descriptors; the addresses and handles are the
    // ones the library returned; host buffers of G bytes outlive the synchronizations.
    unsafe {
        assert_eq!(cuStreamCreate(&mut stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        for round in 0..ROUNDS {
            let mut base = 0u64;
            assert_eq!(cuMemAddressReserve(&mut base, 8 * G, 0, 0, 0), CUDA_SUCCESS, "{}", message());
            let mut chunks = Vec::new();
            for c in 0..CHUNKS {
                let mut h = 0u64;
                assert_eq!(cuMemCreate(&mut h, G, &prop, 0), CUDA_SUCCESS, "{}", message());
                let at = base + (c * G) as u64;
                assert_eq!(cuMemMap(at, G, 0, h, 0), CUDA_SUCCESS, "{}", message());
                LIVE.lock().unwrap().push((h, at));
                chunks.push((h, at));
                // The hostile thread may have unmapped it meanwhile.
                ok_or_value(cuMemSetAccess(at, G, &rw, 1), "cuMemSetAccess");
                host.fill((id * 31 + round * 7 + c) as u8);
                let a = cuMemcpyHtoDAsync_v2(at, host.as_ptr().cast(), G, stream);
                let b = cuMemcpyDtoHAsync_v2(back.as_mut_ptr().cast(), at, G, stream);
                let s = cuStreamSynchronize(stream);
                ok_or_value(a, "cuMemcpyHtoDAsync");
                ok_or_value(b, "cuMemcpyDtoHAsync");
                assert_eq!(s, CUDA_SUCCESS, "{}", message());
                if a == CUDA_SUCCESS && b == CUDA_SUCCESS {
                    assert!(back == host, "worker {id} round {round} chunk {c}: the bytes changed");
                }
            }
            LIVE.lock().unwrap().retain(|(h, _)| !chunks.iter().any(|(mine, _)| mine == h));
            for (h, at) in chunks {
                ok_or_value(cuMemUnmap(at, G), "cuMemUnmap");
                ok_or_value(cuMemRelease(h), "cuMemRelease");
            }
            // A mapping the hostile thread just made is unmapped by it right after.
            let mut tries = 0;
            while cuMemAddressFree(base, 8 * G) != CUDA_SUCCESS {
                assert!(tries < 100_000, "cuMemAddressFree: {}", message());
                tries += 1;
                std::thread::yield_now();
            }
        }
        assert_eq!(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
    }
}

#[test]
fn workers_and_a_hostile_thread_share_the_platform() {
    let ctx = init_and_use(0);
    let before = used();
    let done = AtomicBool::new(false);
    let mut hostile_calls = 0u64;
    let ctx_addr = ctx as usize;
    std::thread::scope(|sc| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|id| {
                sc.spawn(move || {
                    // SAFETY: a live primary context.
                    assert_eq!(unsafe { cuCtxSetCurrent(ctx_addr as CUcontext) }, CUDA_SUCCESS);
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
                // dereferenced; the workers tolerate what this does.
                unsafe {
                    ok_or_value(cuMemMap(at, G, 0, h, 0), "hostile cuMemMap");
                    ok_or_value(cuMemUnmap(at, G), "hostile cuMemUnmap");
                    let mut again = 0u64;
                    if cuMemRetainAllocationHandle(&mut again, at as *mut c_void) == CUDA_SUCCESS {
                        assert_eq!(cuMemRelease(again), CUDA_SUCCESS, "{}", message());
                    }
                    // Inside a reservation, never its start: refused.
                    let rc = cuMemAddressFree(at + 4096, G);
                    assert_eq!(rc, CUDA_ERROR_INVALID_VALUE, "hostile cuMemAddressFree");
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

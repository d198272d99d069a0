//! Host memory and copies as CANN does them (contract §8): `aclrtMallocHost` memory in
//! memsets and copies, sync and async; async copies from pageable memory done before the
//! call returns; CANN's argument order for copies and memsets (`count == 0` first,
//! `count > destMax` 107000, kind 5); and the host functions of a device running one at
//! a time on one thread.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

mod common;
use common::{message, props};

/// The tests that block a stream with a host function hold back every host function of
/// the device (they share one thread): they run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits until `flag` is set (at most 10 s, so a failing test cannot hang).
fn wait_for(flag: &AtomicBool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !flag.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn stream() -> aclrtStream {
    let mut s: aclrtStream = null_mut();
    // SAFETY: a valid out-pointer.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtCreateStream(&mut s), 0);
    }
    s
}

fn malloc_host(n: usize) -> *mut u8 {
    let mut p: *mut c_void = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, n) }, 0);
    p.cast()
}

/// A pool on device 0 and `n` bytes of it allocated on `s`, with `s` synchronized after:
/// device memory that any later work, and the host, may use.
fn device_buffer(s: aclrtStream, n: usize) -> (aclrtMemPool, *mut c_void) {
    let (mut pool, mut d): (aclrtMemPool, *mut c_void) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers and a live stream.
    unsafe {
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 64 << 20)), 0);
        assert_eq!(aclrtMemPoolMallocAsync(&mut d, n, pool, s), 0);
        // The host observes the allocation, so synchronous calls may use the memory too
        // (contract §11: a synchronous access must be ordered after the allocation).
        assert_eq!(aclrtSynchronizeStream(s), 0);
    }
    (pool, d)
}

/// Frees `d` on `s`, synchronizes `s` and destroys `pool`.
fn drop_device_buffer(s: aclrtStream, pool: aclrtMemPool, d: *mut c_void) {
    // SAFETY: shim handles and a pool address.
    unsafe {
        assert_eq!(aclrtMemPoolFreeAsync(d, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
    }
}

/// The bytes at `p`.
///
/// # Safety
///
/// `p` must be valid for reads of `n` bytes, not written meanwhile.
unsafe fn bytes(p: *const u8, n: usize) -> Vec<u8> {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

#[test]
fn the_cann_sample_pattern_runs_on_malloc_host_memory() {
    const N: usize = 4096;
    let s = stream();
    let (h_in, h_out) = (malloc_host(N), malloc_host(N));
    let (pool, d) = device_buffer(s, N);
    // SAFETY: buffers of N bytes from aclrtMallocHost and a pool, a live stream; the host
    // buffers are read only after the stream is synchronized.
    unsafe {
        // Synchronous: memset host and device buffers, then copy both ways.
        assert_eq!(aclrtMemset(h_in.cast(), N, 0x5a, N), 0, "{}", message());
        assert_eq!(aclrtMemset(h_out.cast(), N, 0, N), 0, "{}", message());
        assert_eq!(aclrtMemset(d, N, 0, N), 0);
        assert_eq!(aclrtMemcpy(d, N, h_in.cast(), N, ACL_MEMCPY_HOST_TO_DEVICE), 0);
        assert_eq!(aclrtMemcpy(h_out.cast(), N, d, N, ACL_MEMCPY_DEVICE_TO_HOST), 0);
        assert_eq!(bytes(h_out, N), vec![0x5a; N]);

        // Async, in stream order: memset the host buffers, copy in, change the device
        // buffer, copy out; nothing is read before the synchronization.
        assert_eq!(aclrtMemsetAsync(h_in.cast(), N, 7, N, s), 0, "{}", message());
        assert_eq!(aclrtMemsetAsync(h_out.cast(), N, 0, N, s), 0);
        assert_eq!(aclrtMemcpyAsync(d, N, h_in.cast(), N, ACL_MEMCPY_HOST_TO_DEVICE, s), 0);
        assert_eq!(aclrtMemsetAsync(d, N, 9, N / 2, s), 0);
        assert_eq!(aclrtMemcpyAsync(h_out.cast(), N, d, N, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        let mut want = vec![9u8; N / 2];
        want.resize(N, 7);
        assert_eq!(bytes(h_out, N), want);

        // DEFAULT finds the host side from the address; an async host-to-host copy is
        // refused, as CANN refuses it on a host (207000), and copies nothing.
        assert_eq!(aclrtMemcpyAsync(d, N, h_out.cast(), N, ACL_MEMCPY_DEFAULT, s), 0);
        assert_eq!(aclrtMemsetAsync(h_out.cast(), N, 1, N, s), 0);
        assert_eq!(aclrtMemcpyAsync(h_in.cast(), N, d, N, ACL_MEMCPY_DEFAULT, s), 0);
        let rc = aclrtMemcpyAsync(h_out.cast(), N, h_in.cast(), N / 4, ACL_MEMCPY_HOST_TO_HOST, s);
        assert_eq!(rc, mempool_hal::code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "{}", message());
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(bytes(h_in, N), want);
        assert_eq!(bytes(h_out, N), vec![1; N]);

        // A memset past the end of the allocation, or of pageable memory, is refused.
        assert_eq!(aclrtMemset(h_in.add(N - 8).cast(), 16, 0, 16), 107_000);
        assert!(message().contains("runs past the end of its aclrtMallocHost allocation"), "{}", message());
        let mut pageable = vec![0u8; 16];
        assert_eq!(aclrtMemsetAsync(pageable.as_mut_ptr().cast(), 16, 0, 16, s), 107_000);
        assert!(message().contains("neither device memory nor aclrtMallocHost memory"), "{}", message());

        drop_device_buffer(s, pool, d);
        assert_eq!(aclrtFreeHost(h_in.cast()), 0);
        assert_eq!(aclrtFreeHost(h_out.cast()), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

static GATE: AtomicBool = AtomicBool::new(false);
static A_DONE: AtomicBool = AtomicBool::new(false);
static B_RAN: AtomicBool = AtomicBool::new(false);
static B_SAW_A_DONE: AtomicBool = AtomicBool::new(false);

extern "C" fn block_until_gate(_: *mut c_void) {
    wait_for(&GATE);
    A_DONE.store(true, Ordering::SeqCst);
}

extern "C" fn note_b(_: *mut c_void) {
    B_SAW_A_DONE.store(A_DONE.load(Ordering::SeqCst), Ordering::SeqCst);
    B_RAN.store(true, Ordering::SeqCst);
}

#[test]
fn async_work_on_malloc_host_memory_waits_for_its_stream_and_outlives_a_free() {
    let _serial = serial();
    const N: usize = 256;
    let s = stream();
    let h = malloc_host(N);
    GATE.store(false, Ordering::SeqCst);
    // SAFETY: `h` holds N bytes; it is read only while no work on it is pending.
    unsafe {
        assert_eq!(aclrtMemset(h.cast(), N, 0, N), 0);
        assert_eq!(aclrtLaunchHostFunc(s, Some(block_until_gate), null_mut()), 0);
        assert_eq!(aclrtMemsetAsync(h.cast(), N, 3, N, s), 0);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(bytes(h, N), vec![0; N], "the memset waits for the host function before it");
        GATE.store(true, Ordering::SeqCst);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(bytes(h, N), vec![3; N]);

        // Freed while a memset on it is still queued: the memory stays until it has run.
        GATE.store(false, Ordering::SeqCst);
        assert_eq!(aclrtLaunchHostFunc(s, Some(block_until_gate), null_mut()), 0);
        assert_eq!(aclrtMemsetAsync(h.cast(), N, 4, N, s), 0);
        assert_eq!(aclrtFreeHost(h.cast()), 0);
        assert_eq!(aclrtFreeHost(h.cast()), 100_000, "freed once");
        GATE.store(true, Ordering::SeqCst);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

static SLOW_DONE: AtomicBool = AtomicBool::new(false);

extern "C" fn slow(_: *mut c_void) {
    std::thread::sleep(Duration::from_millis(50));
    SLOW_DONE.store(true, Ordering::SeqCst);
}

#[test]
fn an_async_copy_from_pageable_memory_is_done_before_the_call_returns() {
    let _serial = serial();
    const N: usize = 4096;
    let s = stream();
    let (pool, d) = device_buffer(s, N);
    let mut src: Vec<u8> = (0..N).map(|i| i as u8).collect();
    let want = src.clone();
    let mut out = vec![0u8; N];
    // SAFETY: pageable buffers of N bytes, valid during each call; `d` holds N bytes.
    unsafe {
        // The stream is synchronized first: the host function before the copy has run
        // when the call returns.
        SLOW_DONE.store(false, Ordering::SeqCst);
        assert_eq!(aclrtLaunchHostFunc(s, Some(slow), null_mut()), 0);
        assert_eq!(aclrtMemcpyAsync(d, N, src.as_ptr().cast(), N, ACL_MEMCPY_HOST_TO_DEVICE, s), 0);
        assert!(SLOW_DONE.load(Ordering::SeqCst), "the stream was synchronized before the copy");
        // The program reuses its buffer at once.
        src.fill(0xee);
        assert_eq!(aclrtMemcpyAsync(out.as_mut_ptr().cast(), N, d, N, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
        assert_eq!(out, want, "the copy out is done when the call returns");
        let rc = aclrtMemcpyAsync(out.as_mut_ptr().cast(), N, src.as_ptr().cast(), N, ACL_MEMCPY_DEFAULT, s);
        assert_eq!(
            rc,
            mempool_hal::code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "host to host, pageable: refused as on CANN"
        );
        assert_eq!(out, want, "nothing was copied");
        drop_device_buffer(s, pool, d);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

#[test]
fn a_pageable_async_copy_counts_as_the_host_observing_the_stream() {
    const G: usize = 2 << 20;
    let (a, b) = (stream(), stream());
    let mut pool: aclrtMemPool = null_mut();
    let mut x: *mut c_void = null_mut();
    let mut y: *mut c_void = null_mut();
    let mut host = vec![0u8; 16];
    // SAFETY: valid out-pointers, shim handles, a pageable buffer of 16 bytes.
    unsafe {
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 16 * G)), 0);
        let mut keep = (16 * G) as u64;
        assert_eq!(aclrtMemPoolSetAttr(pool, 4, (&raw mut keep).cast()), 0, "release threshold: keep all");
        assert_eq!(aclrtMemPoolMallocAsync(&mut x, G, pool, a), 0);
        assert_eq!(aclrtMemPoolMallocAsync(&mut y, G, pool, a), 0);
        assert_eq!(aclrtMemPoolFreeAsync(x, a), 0);
        // The copy synchronizes `a` (past the free of `x`) before it is done.
        assert_eq!(aclrtMemcpyAsync(host.as_mut_ptr().cast(), 16, y, 16, ACL_MEMCPY_DEVICE_TO_HOST, a), 0);
        let mut z: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut z, G, pool, b), 0);
        assert_eq!(z, x, "b reuses x: the host has observed its free complete");
        assert_eq!(aclrtMemPoolFreeAsync(z, b), 0);
        assert_eq!(aclrtMemPoolFreeAsync(y, a), 0);
        assert_eq!(aclrtSynchronizeDevice(), 0);
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
        assert_eq!(aclrtDestroyStream(a), 0);
        assert_eq!(aclrtDestroyStream(b), 0);
    }
}

#[test]
fn count_zero_first_count_above_the_maximum_107000_and_kind_5() {
    let s = stream();
    let h = malloc_host(64);
    let (pool, d) = device_buffer(s, 64);
    let garbage = 0x1234 as aclrtStream;
    // SAFETY: count-0 calls touch nothing; the other buffers hold 64 bytes.
    unsafe {
        assert_eq!(aclrtMemcpy(null_mut(), 0, std::ptr::null(), 0, 99), 0);
        assert_eq!(aclrtMemcpyAsync(null_mut(), 0, std::ptr::null(), 0, 99, garbage), 0);
        assert_eq!(aclrtMemset(null_mut(), 0, 0, 0), 0);
        assert_eq!(aclrtMemsetAsync(null_mut(), 0, 0, 0, garbage), 0);

        assert_eq!(aclrtMemcpy(d, 8, h.cast(), 16, ACL_MEMCPY_HOST_TO_DEVICE), 107_000);
        assert!(message().contains("larger than destMax"), "{}", message());
        assert_eq!(aclrtMemcpyAsync(d, 8, h.cast(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s), 107_000);
        assert_eq!(aclrtMemset(d, 8, 0, 16), 107_000);
        assert!(message().contains("larger than maxCount"), "{}", message());
        assert_eq!(aclrtMemsetAsync(d, 8, 0, 16, s), 107_000);
        assert_eq!(aclrtMemsetAsync(h.cast(), 8, 0, 16, s), 107_000);

        // Kind 5 (HOST_TO_BUF_TO_DEVICE) is HOST_TO_DEVICE; 6 is not a kind.
        assert_eq!(aclrtMemset(h.cast(), 64, 0x42, 64), 0);
        assert_eq!(aclrtMemcpy(d, 64, h.cast(), 64, 5), 0);
        assert_eq!(aclrtMemsetAsync(h.cast(), 64, 0x43, 64, s), 0);
        assert_eq!(aclrtMemcpyAsync(d, 64, h.cast(), 32, 5, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        let mut back = vec![0u8; 64];
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST), 0);
        let mut want = vec![0x43; 32];
        want.resize(64, 0x42);
        assert_eq!(back, want);
        assert_eq!(aclrtMemcpy(d, 64, h.cast(), 64, 6), 100_000);
        assert_eq!(aclrtMemcpyAsync(d, 64, h.cast(), 64, 6, s), 100_000);

        drop_device_buffer(s, pool, d);
        assert_eq!(aclrtFreeHost(h.cast()), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

#[test]
fn a_blocked_host_function_holds_back_host_functions_of_other_streams_not_their_work() {
    let _serial = serial();
    const N: usize = 1024;
    let (a, b) = (stream(), stream());
    let (pool, d) = device_buffer(b, N);
    let mut ev: aclrtEvent = null_mut();
    for f in [&GATE, &A_DONE, &B_RAN, &B_SAW_A_DONE] {
        f.store(false, Ordering::SeqCst);
    }
    // SAFETY: shim handles and out-pointers; `d` holds N bytes.
    unsafe {
        assert_eq!(aclrtCreateEvent(&mut ev), 0);
        assert_eq!(aclrtLaunchHostFunc(a, Some(block_until_gate), null_mut()), 0);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(aclrtMemsetAsync(d, N, 0x6b, N, b), 0);
        assert_eq!(aclrtRecordEvent(ev, b), 0);
        assert_eq!(aclrtLaunchHostFunc(b, Some(note_b), null_mut()), 0);

        // The memset on B completes while A's host function blocks.
        assert_eq!(aclrtSynchronizeEvent(ev), 0);
        let mut back = vec![0u8; N];
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), N, d, N, ACL_MEMCPY_DEVICE_TO_HOST), 0);
        assert_eq!(back, vec![0x6b; N]);
        // B's host function waits for A's, on the device's one host-function thread.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!B_RAN.load(Ordering::SeqCst), "B's host function ran while A's was blocked");

        GATE.store(true, Ordering::SeqCst);
        assert_eq!(aclrtSynchronizeStream(b), 0);
        assert!(B_RAN.load(Ordering::SeqCst));
        assert!(B_SAW_A_DONE.load(Ordering::SeqCst), "B's host function ran after A's returned");
        assert_eq!(aclrtSynchronizeStream(a), 0);
        assert_eq!(aclrtDestroyEvent(ev), 0);
        drop_device_buffer(b, pool, d);
        assert_eq!(aclrtDestroyStream(a), 0);
        assert_eq!(aclrtDestroyStream(b), 0);
    }
}

static CTX: AtomicUsize = AtomicUsize::new(0);
static OTHER: AtomicUsize = AtomicUsize::new(0);
static GO: AtomicBool = AtomicBool::new(false);
static SYNC_RC: AtomicI32 = AtomicI32::new(-1);
static SYNC_MS: AtomicUsize = AtomicUsize::new(0);
static SYNC_MSG: Mutex<String> = Mutex::new(String::new());

extern "C" fn synchronize_other(_: *mut c_void) {
    wait_for(&GO);
    let t = Instant::now();
    // SAFETY: a context and a stream handle of the shim.
    let rc = unsafe {
        assert_eq!(aclrtSetCurrentContext(CTX.load(Ordering::SeqCst) as aclrtContext), 0);
        aclrtSynchronizeStream(OTHER.load(Ordering::SeqCst) as aclrtStream)
    };
    SYNC_MS.store(t.elapsed().as_millis() as usize, Ordering::SeqCst);
    *SYNC_MSG.lock().unwrap_or_else(PoisonError::into_inner) = message();
    SYNC_RC.store(rc, Ordering::SeqCst);
}

extern "C" fn nothing(_: *mut c_void) {}

#[test]
fn a_host_function_synchronizing_a_stream_held_back_by_it_fails_fast() {
    let _serial = serial();
    let (a, b) = (stream(), stream());
    let mut ctx: aclrtContext = null_mut();
    GO.store(false, Ordering::SeqCst);
    SYNC_RC.store(-1, Ordering::SeqCst);
    // SAFETY: shim handles and out-pointers.
    unsafe {
        assert_eq!(aclrtGetCurrentContext(&mut ctx), 0);
        CTX.store(ctx as usize, Ordering::SeqCst);
        OTHER.store(b as usize, Ordering::SeqCst);
        assert_eq!(aclrtLaunchHostFunc(a, Some(synchronize_other), null_mut()), 0);
        std::thread::sleep(Duration::from_millis(20));
        // B's host function now waits for the thread that A's host function holds.
        assert_eq!(aclrtLaunchHostFunc(b, Some(nothing), null_mut()), 0);
        std::thread::sleep(Duration::from_millis(20));
        GO.store(true, Ordering::SeqCst);
        assert_eq!(aclrtSynchronizeStream(a), 0);
        assert_eq!(aclrtSynchronizeStream(b), 0);
    }
    assert_eq!(SYNC_RC.load(Ordering::SeqCst), 507_000);
    let msg = SYNC_MSG.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert!(msg.contains("host-function thread"), "{msg}");
    assert!(SYNC_MS.load(Ordering::SeqCst) < 5_000, "it failed at once, not after the wait timeout");
    // SAFETY: live streams.
    unsafe {
        assert_eq!(aclrtDestroyStream(a), 0);
        assert_eq!(aclrtDestroyStream(b), 0);
    }
}

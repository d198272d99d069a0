//! Host registration as the driver does it (contract §15), through the C entry points: a
//! registered range is page-locked memory for the async copies (queued, not done before
//! the call returns) and reachable through its device pointer, until it is unregistered;
//! unregistering under a queued copy leaves the copy its bytes.

mod common;

use common::{check, init_and_use, message};
use cuda::exports::*;
use cuda::types::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The tests block a stream with a host function and watch a flag: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

static SLOW_DONE: AtomicBool = AtomicBool::new(false);

extern "C" fn slow(_: *mut c_void) {
    std::thread::sleep(Duration::from_millis(100));
    SLOW_DONE.store(true, Ordering::SeqCst);
}

/// A stream of device 0 and `n` bytes of its default pool, allocated and synchronized.
fn setup(n: usize) -> (CUstream, CUdeviceptr) {
    init_and_use(0);
    let (mut s, mut d): (CUstream, CUdeviceptr) = (null_mut(), 0);
    // SAFETY: valid out-pointers and live handles.
    unsafe {
        check(cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        check(cuMemAllocAsync(&mut d, n, s), "cuMemAllocAsync");
        check(cuStreamSynchronize(s), "cuStreamSynchronize");
    }
    (s, d)
}

fn teardown(s: CUstream, d: CUdeviceptr) {
    // SAFETY: live handles and a live allocation.
    unsafe {
        check(cuMemFreeAsync(d, s), "cuMemFreeAsync");
        check(cuStreamSynchronize(s), "cuStreamSynchronize");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
    }
}

/// Queues the slow host function on `s`.
fn block(s: CUstream) {
    SLOW_DONE.store(false, Ordering::SeqCst);
    // SAFETY: a live stream and a host function that ignores its argument.
    check(unsafe { cuLaunchHostFunc(s, Some(slow), null_mut()) }, "cuLaunchHostFunc");
}

#[test]
fn a_registered_range_is_copied_in_stream_order_and_pageable_after_unregistering() {
    let _serial = serial();
    const N: usize = 8192;
    let (s, d) = setup(N);
    let mut host = vec![0u8; N];
    let h: *mut c_void = host.as_mut_ptr().cast();
    let mut dp: CUdeviceptr = 0;
    // SAFETY: `host` outlives the registration and every copy on it (synchronized below).
    unsafe {
        assert_eq!(cuMemHostRegister_v2(h, N, 0), 0, "{}", message());
        assert_eq!(cuMemHostGetDevicePointer_v2(&mut dp, h, 0), 0);
        assert_eq!(dp, h as CUdeviceptr, "the device pointer is the host pointer");
        check(cuMemsetD8Async(d, 0x3c, N, s), "cuMemsetD8Async");
        block(s);
        assert_eq!(cuMemcpyDtoHAsync_v2(h, d, N, s), 0);
        assert!(!SLOW_DONE.load(Ordering::SeqCst), "queued behind the host function, not done in the call");
        check(cuStreamSynchronize(s), "cuStreamSynchronize");
        assert!(host.iter().all(|&b| b == 0x3c), "the copy into the registered range ran");
        // Through the device pointer, as device memory.
        host.fill(0x71);
        block(s);
        assert_eq!(cuMemcpyDtoDAsync_v2(d, dp, N, s), 0);
        assert!(!SLOW_DONE.load(Ordering::SeqCst), "queued too");
        let mut out = vec![0u8; N];
        assert_eq!(cuMemcpyDtoHAsync_v2(out.as_mut_ptr().cast(), d, N, s), 0);
        assert!(out.iter().all(|&b| b == 0x71), "pageable `out`: done in the call, after the registered copy");

        assert_eq!(cuMemHostUnregister(h), 0);
        block(s);
        assert_eq!(cuMemcpyDtoHAsync_v2(h, d, N, s), 0);
        assert!(SLOW_DONE.load(Ordering::SeqCst), "pageable again: the stream ran before the copy");
        assert_eq!(cuMemcpyDtoDAsync_v2(d, dp, N, s), CUDA_ERROR_INVALID_VALUE, "no device pointer any more");
        assert_eq!(cuMemHostGetDevicePointer_v2(&mut dp, h, 0), CUDA_ERROR_INVALID_VALUE);
    }
    teardown(s, d);
}

#[test]
fn unregistering_under_a_queued_copy_leaves_the_copy_its_bytes() {
    let _serial = serial();
    const N: usize = 4096;
    let (s, d) = setup(N);
    let mut host = vec![0u8; N];
    let h: *mut c_void = host.as_mut_ptr().cast();
    // SAFETY: `host` outlives the registration and the copy (synchronized below).
    unsafe {
        assert_eq!(cuMemHostRegister(h, N, CU_MEMHOSTREGISTER_PORTABLE), 0, "{}", message());
        check(cuMemsetD8Async(d, 0x5e, N, s), "cuMemsetD8Async");
        block(s);
        assert_eq!(cuMemcpyDtoHAsync_v2(h, d, N, s), 0);
        assert_eq!(cuMemHostUnregister(h), 0, "unregistered with the copy still queued");
        assert!(!SLOW_DONE.load(Ordering::SeqCst), "the unregister did not wait");
        check(cuStreamSynchronize(s), "cuStreamSynchronize");
    }
    assert!(host.iter().all(|&b| b == 0x5e), "the queued copy wrote the caller's bytes");
    teardown(s, d);
}

#[test]
fn overlap_and_unknown_pointers_get_the_drivers_codes() {
    let _serial = serial();
    init_and_use(0);
    let host = vec![0u8; 4 * 4096];
    let at = |off: usize| host.as_ptr().wrapping_add(off).cast_mut().cast::<c_void>();
    // SAFETY: every range lies in `host`, which outlives the registrations.
    unsafe {
        assert_eq!(cuMemHostRegister_v2(at(0), 4096, CU_MEMHOSTREGISTER_READ_ONLY), 0);
        assert_eq!(cuMemHostRegister_v2(at(0), 4096, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        assert_eq!(cuMemHostRegister(at(4000), 200, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        assert_eq!(cuMemHostRegister_v2(at(4096), 100, 0), 0, "disjoint bytes of the next page");
        assert_eq!(cuMemHostRegister_v2(at(4196), 100, 0), 0, "and more of the same page");
        assert_eq!(cuMemHostUnregister(at(8)), CUDA_ERROR_INVALID_VALUE, "interior");
        assert_eq!(cuMemHostUnregister(at(8192)), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
        for p in [0, 4096, 4196] {
            assert_eq!(cuMemHostUnregister(at(p)), 0);
        }
        assert_eq!(cuMemHostUnregister(at(0)), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "twice");
    }
}

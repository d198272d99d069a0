//! Host registration as CANN does it (contract §15): `aclrtHostRegister`,
//! `aclrtHostRegisterV2`, `aclrtHostUnregister` with CANN's checks and codes; a registered
//! range is page-locked memory for copies (queued, not done before the call returns) until
//! it is unregistered, and pageable again after.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

mod common;
use common::{message, props};

/// The tests that block a stream with a host function hold back every host function of
/// the device (they share one thread): they run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

static SLOW_DONE: AtomicBool = AtomicBool::new(false);

extern "C" fn slow(_: *mut c_void) {
    std::thread::sleep(Duration::from_millis(100));
    SLOW_DONE.store(true, Ordering::SeqCst);
}

/// A stream of device 0 (set on this thread), a pool and `n` bytes of it, synchronized.
fn setup(n: usize) -> (aclrtStream, aclrtMemPool, *mut c_void) {
    let (mut s, mut pool, mut d): (aclrtStream, aclrtMemPool, *mut c_void) = (null_mut(), null_mut(), null_mut());
    // SAFETY: valid out-pointers and live handles.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 64 << 20)), 0);
        assert_eq!(aclrtMemPoolMallocAsync(&mut d, n, pool, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
    }
    (s, pool, d)
}

fn teardown(s: aclrtStream, pool: aclrtMemPool, d: *mut c_void) {
    // SAFETY: live handles and a live pool address.
    unsafe {
        assert_eq!(aclrtMemPoolFreeAsync(d, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

#[test]
fn a_registered_range_is_copied_in_stream_order_and_pageable_after_unregistering() {
    let _serial = serial();
    const N: usize = 8192;
    let (s, pool, d) = setup(N);
    let mut host = vec![0u8; N];
    let h: *mut c_void = host.as_mut_ptr().cast();
    let mut dev: *mut c_void = null_mut();
    // SAFETY: `host` outlives the registration and every copy on it (synchronized below).
    unsafe {
        assert_eq!(aclrtHostRegister(h, N as u64, ACL_HOST_REGISTER_MAPPED, &mut dev), 0, "{}", message());
        assert_eq!(dev, h, "the device address is the host address on the emulator");
        assert_eq!(aclrtMemsetAsync(d, N, 0x3c, N, s), 0);
        SLOW_DONE.store(false, Ordering::SeqCst);
        assert_eq!(aclrtLaunchHostFunc(s, Some(slow), null_mut()), 0);
        assert_eq!(aclrtMemcpyAsync(h, N, d, N, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
        assert!(!SLOW_DONE.load(Ordering::SeqCst), "queued behind the host function, not done in the call");
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert!(host.iter().all(|&b| b == 0x3c), "the copy into the registered range ran");
        // Through the device address, named as device memory.
        host.fill(0x71);
        assert_eq!(aclrtMemcpyAsync(d, N, dev, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s), 0);
        let mut out = vec![0u8; N];
        assert_eq!(aclrtMemcpyAsync(out.as_mut_ptr().cast(), N, d, N, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
        assert!(out.iter().all(|&b| b == 0x71), "pageable `out`: done in the call, after the registered copy");

        assert_eq!(aclrtHostUnregister(h), 0);
        SLOW_DONE.store(false, Ordering::SeqCst);
        assert_eq!(aclrtLaunchHostFunc(s, Some(slow), null_mut()), 0);
        assert_eq!(aclrtMemcpyAsync(h, N, d, N, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
        assert!(SLOW_DONE.load(Ordering::SeqCst), "pageable again: the stream ran before the copy");
        let rc = aclrtMemcpyAsync(d, N, dev, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s);
        assert_eq!(rc, 107_000, "no device address any more: {}", message());
    }
    teardown(s, pool, d);
}

#[test]
fn unregistering_under_a_queued_copy_leaves_the_copy_its_bytes() {
    let _serial = serial();
    const N: usize = 4096;
    let (s, pool, d) = setup(N);
    let mut host = vec![0u8; N];
    let h: *mut c_void = host.as_mut_ptr().cast();
    // SAFETY: `host` outlives the registration and the copy (synchronized below).
    unsafe {
        assert_eq!(aclrtHostRegisterV2(h, N as u64, ACL_HOST_REG_MAPPED), 0, "{}", message());
        assert_eq!(aclrtMemsetAsync(d, N, 0x5e, N, s), 0);
        SLOW_DONE.store(false, Ordering::SeqCst);
        assert_eq!(aclrtLaunchHostFunc(s, Some(slow), null_mut()), 0);
        assert_eq!(aclrtMemcpyAsync(h, N, d, N, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
        assert_eq!(aclrtHostUnregister(h), 0, "unregistered with the copy still queued");
        assert!(!SLOW_DONE.load(Ordering::SeqCst), "the unregister did not wait");
        assert_eq!(aclrtSynchronizeStream(s), 0);
    }
    assert!(host.iter().all(|&b| b == 0x5e), "the queued copy wrote the caller's bytes");
    teardown(s, pool, d);
}

#[test]
fn misuse_is_answered_with_canns_codes() {
    const N: usize = 16384;
    let mut host = vec![0u8; N];
    let h: *mut c_void = host.as_mut_ptr().cast();
    let at = |off: usize| host.as_ptr().wrapping_add(off).cast_mut().cast::<c_void>();
    let mut dev: *mut c_void = null_mut();
    // SAFETY: every range lies in `host`, which outlives the registrations; out-pointers
    // are valid or null on purpose.
    unsafe {
        // No current context on a fresh thread: 107002, after the argument checks.
        let ptr = h as usize;
        std::thread::spawn(move || {
            let p = ptr as *mut c_void;
            let mut dev: *mut c_void = null_mut();
            assert_eq!(aclrtHostRegister(null_mut(), 64, 0, &mut dev), 100_000);
            assert_eq!(aclrtHostRegister(p, 64, 0, &mut dev), 107_002);
            assert_eq!(aclrtHostRegisterV2(p, 64, ACL_HOST_REG_MAPPED), 107_002);
            assert_eq!(aclrtHostUnregister(p), 107_002);
        })
        .join()
        .expect("the thread's checks");
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtHostRegister(null_mut(), 64, 0, &mut dev), 100_000);
        assert_eq!(aclrtHostRegister(h, 64, 0, null_mut()), 100_000);
        assert_eq!(aclrtHostRegister(h, 0, 0, &mut dev), 100_000);
        assert_eq!(aclrtHostRegister(h, 64, 2, &mut dev), 207_000, "MAPPED's V2 bit is no V1 type");
        assert_eq!(aclrtHostRegister(h, u64::MAX, 0, &mut dev), 107_000, "wraps the address space");
        assert_eq!(aclrtHostRegisterV2(null_mut(), 64, ACL_HOST_REG_MAPPED), 100_000);
        assert_eq!(aclrtHostRegisterV2(h, 0, ACL_HOST_REG_MAPPED), 100_000);
        assert_eq!(aclrtHostRegisterV2(h, 64, 0), 107_000, "no flag");
        assert_eq!(aclrtHostRegisterV2(h, 64, ACL_HOST_REG_MAPPED | 1), 107_000, "a stray bit");

        let types = (ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY) as aclrtHostRegisterType;
        assert_eq!(aclrtHostRegister(h, 4096, types, &mut dev), 0, "{}", message());
        assert_eq!(aclrtHostRegister(h, 4096, 0, &mut dev), 507_910, "the same range");
        assert_eq!(aclrtHostRegisterV2(at(4095), 2, ACL_HOST_REG_PINNED), 507_910, "its last byte");
        assert_eq!(aclrtHostRegisterV2(at(4096), 4096, ACL_HOST_REG_PINNED), 0, "beside it");
        assert_eq!(aclrtHostUnregister(at(8)), 507_911, "interior");
        assert_eq!(aclrtHostUnregister(at(8192)), 507_911, "never registered");
        assert_eq!(aclrtHostUnregister(null_mut()), 100_000);
        assert_eq!(aclrtHostUnregister(h), 0);
        assert_eq!(aclrtHostUnregister(h), 507_911, "twice");
        assert_eq!(aclrtHostUnregister(at(4096)), 0);

        let mut pinned: *mut c_void = null_mut();
        assert_eq!(aclrtMallocHost(&mut pinned, 4096), 0);
        assert_eq!(aclrtHostRegisterV2(pinned, 4096, ACL_HOST_REG_PINNED), 507_910, "page-locked already");
        assert_eq!(aclrtFreeHost(pinned), 0);
        let mut d: *mut c_void = null_mut();
        assert_eq!(aclrtMalloc(&mut d, 4096, ACL_MEM_MALLOC_HUGE_FIRST), 0);
        assert_eq!(aclrtHostRegister(d, 4096, 0, &mut dev), 107_000, "device memory");
        assert_eq!(aclrtFree(d), 0);
    }
}

//! The device's memory is shared by its pools and `aclrtMalloc` (contract §2): once a user
//! pool has reserved nearly all of it, `aclrtMalloc` answers 207001, the pool 507000, and
//! `aclrtGetMemInfo` says nothing is free. A test binary of its own, so the device's
//! memory use is this test's alone.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;

#[allow(dead_code)] // this binary uses only part of the shared helpers
mod common;
use common::{message, props};
use std::ptr::null_mut;

#[test]
fn a_full_device_answers_207001_to_aclrtmalloc_and_507000_to_its_pools() {
    const GRAN: usize = 2 << 20;
    // SAFETY: valid out-pointers and shim handles; nothing is dereferenced on the host.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let mem_free = || {
            let (mut free, mut total) = (0usize, 0usize);
            assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), 0);
            free
        };
        let mut s: aclrtStream = null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let mut pool: aclrtMemPool = null_mut();
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 0)), 0, "{}", message());
        // All of the device's memory but one granule, reserved by the user pool.
        let free = mem_free();
        let mut big: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut big, free - GRAN, pool, s), 0, "{}", message());
        assert_eq!(mem_free(), GRAN);

        let mut p: *mut c_void = null_mut();
        assert_eq!(aclrtMalloc(&mut p, 2 * GRAN, ACL_MEM_MALLOC_HUGE_FIRST), 207_001);
        assert!(message().contains("the device, not the pool, is full"), "{}", message());
        assert!(p.is_null());
        // What is left still serves a synchronous allocation; then nothing is free.
        assert_eq!(aclrtMalloc(&mut p, 4096, ACL_MEM_MALLOC_HUGE_FIRST), 0, "{}", message());
        assert_eq!(mem_free(), 0);
        let mut q: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut q, GRAN, pool, s), 507_000);
        assert!(message().contains("device 0"), "{}", message());

        // Given back, the memory serves both again.
        assert_eq!(aclrtMemPoolFreeAsync(big, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtMemPoolTrimTo(pool, 0), 0);
        let mut r: *mut c_void = null_mut();
        assert_eq!(aclrtMalloc(&mut r, 2 * GRAN, ACL_MEM_MALLOC_HUGE_FIRST), 0, "{}", message());
        assert_eq!(aclrtFree(r), 0);
        assert_eq!(aclrtFree(p), 0);
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

//! `aclrtFree` gives the hidden pool's memory back, and leaves user pools alone: it is not
//! a synchronization, so it runs no release pass (contract §6) over the pools of the
//! device. A test binary of its own with one test: a synchronization anywhere else on the
//! device would release the user pool, which is what it checks does not happen.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;

mod common;
use common::{message, props};

const GRAN: u64 = 2 << 20;

fn attr(pool: aclrtMemPool, id: aclrtMemPoolAttr) -> u64 {
    let mut v = u64::MAX;
    // SAFETY: a live pool and a `uint64_t` for attributes 4-8.
    assert_eq!(unsafe { aclrtMemPoolGetAttr(pool, id, (&raw mut v).cast()) }, 0, "{}", message());
    v
}

#[test]
fn acl_free_does_not_release_user_pools() {
    // SAFETY: valid out-pointers and props, live handles, a `uint64_t` for attribute 4,
    // and addresses the library returned.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let mut s: aclrtStream = null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let mut pool: aclrtMemPool = null_mut();
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 64 << 20)), 0, "{}", message());
        // A cached block whose free has executed and which the host has observed: the
        // threshold is the pool's size while the stream is synchronized, then 0.
        let keep_all = 64u64 << 20;
        assert_eq!(aclrtMemPoolSetAttr(pool, 4, (&raw const keep_all).cast_mut().cast()), 0);
        let mut p: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut p, 4096, pool, s), 0, "{}", message());
        assert_eq!(aclrtMemPoolFreeAsync(p, s), 0, "{}", message());
        assert_eq!(aclrtSynchronizeStream(s), 0, "{}", message());
        let zero = 0u64;
        assert_eq!(aclrtMemPoolSetAttr(pool, 4, (&raw const zero).cast_mut().cast()), 0);
        assert_eq!((attr(pool, 5), attr(pool, 7)), (GRAN, 0), "RESERVED one granule, USED 0");

        // Unrelated synchronous memory: the last piece of a block freed gives the block
        // back, and nothing of the user pool.
        let used = || {
            let (mut free, mut total) = (0usize, 0usize);
            assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), 0);
            total - free
        };
        let before = used();
        let mut d: *mut c_void = null_mut();
        assert_eq!(aclrtMalloc(&mut d, 100, ACL_MEM_MALLOC_HUGE_FIRST), 0, "{}", message());
        assert_eq!(used() - before, GRAN as usize, "a granule of the hidden pool");
        assert_eq!(aclrtFree(d), 0, "{}", message());
        assert_eq!(attr(pool, 5), GRAN, "aclrtFree released the user pool's cached block");
        assert_eq!(used(), before, "aclrtFree gave the hidden pool's granule back");

        // The next synchronization is what releases it.
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(attr(pool, 5), 0, "the synchronization releases down to the threshold");
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

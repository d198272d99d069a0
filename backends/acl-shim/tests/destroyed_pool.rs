//! A pointer that outlived its pool, copied with `ACL_MEMCPY_DEFAULT`: the shim must find
//! it to be device memory and refuse the copy (107000), not copy through it as host memory.
//!
//! A binary of its own, with one test: the destroyed pool's address range goes back to the
//! host, and a concurrent test that mapped memory there would make the pointer host memory
//! again.
//!
//! The rules it checks: contract §7 (`mempool_hal::contract::statistics`), §8 (`mempool_hal::contract::c_abi`).

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;

mod common;
use common::{message, props};
use std::ptr::null_mut;

#[test]
fn default_copies_of_a_destroyed_pools_memory_are_refused_not_crashed() {
    // SAFETY: valid out-pointers, host buffers of 64 bytes, shim handles; the device
    // pointer outlives its pool on purpose, and every copy of it must be refused.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let mut s: aclrtStream = null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let mut pool: aclrtMemPool = null_mut();
        let props = props(0, 64 << 20);
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props), 0);
        let mut p: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut p, 4096, pool, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtMemPoolDestroy(pool), 0);

        let host = [7u8; 64];
        let mut back = [0u8; 64];
        assert_eq!(aclrtMemcpy(p, 64, host.as_ptr().cast(), 64, ACL_MEMCPY_DEFAULT), 107_000);
        assert!(message().contains("destroyed pool"), "{}", message());
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 64, p, 64, ACL_MEMCPY_DEFAULT), 107_000);
        assert_eq!(aclrtMemcpyAsync(p, 64, host.as_ptr().cast(), 64, ACL_MEMCPY_DEFAULT, s), 107_000);
        assert_eq!(back, [0; 64], "nothing was copied");
        // Host memory is still host memory for DEFAULT.
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 64, host.as_ptr().cast(), 64, ACL_MEMCPY_DEFAULT), 0);
        assert_eq!(back, host);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

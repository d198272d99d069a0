//! `aclrtMalloc` memory (contract §8): sizes padded as CANN pads them, small allocations
//! sharing a granule of the hidden pool, accepted by every copy and memset, and the
//! granule given back when its last allocation is freed. A test binary of its own, so the
//! device's memory use is this test's alone.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;

#[allow(dead_code)] // this binary uses only part of the shared helpers
mod common;
use common::message;
use std::ptr::null_mut;
#[test]
fn small_synchronous_allocations_share_a_granule_and_give_it_back() {
    // SAFETY: valid out-pointers, host buffers of the stated sizes that outlive the
    // synchronizations below, shim handles.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let used = || {
            let (mut free, mut total) = (0usize, 0usize);
            assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), 0);
            total - free
        };
        let before = used();
        // aclrtMalloc pads to a multiple of 32 bytes plus 32; aclrtMallocAlign32 does not add 32.
        let mut p: Vec<*mut c_void> = vec![null_mut(); 64];
        for q in &mut p {
            assert_eq!(aclrtMalloc(q, 1, ACL_MEM_MALLOC_HUGE_FIRST), 0, "{}", message());
        }
        let mut a32: *mut c_void = null_mut();
        assert_eq!(aclrtMallocAlign32(&mut a32, 20, ACL_MEM_MALLOC_HUGE_FIRST), 0);
        let mut after32: *mut c_void = null_mut();
        assert_eq!(aclrtMallocAlign32(&mut after32, 1, ACL_MEM_MALLOC_HUGE_FIRST), 0);
        let mut addrs: Vec<usize> = p.iter().map(|&q| q as usize).collect();
        addrs.sort_unstable();
        assert!(addrs.iter().all(|a| a % 32 == 0), "32-byte aligned");
        assert!(addrs.windows(2).all(|w| w[1] - w[0] == 64), "1 byte pads to 64: {addrs:x?}");
        assert_eq!(after32 as usize - a32 as usize, 32, "aclrtMallocAlign32 pads 20 bytes to 32");
        assert_eq!(used() - before, 2 << 20, "66 small allocations take one granule");
        // Every check accepts them: copies and memsets, sync and async, user and default stream.
        let mut s: aclrtStream = null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let h: Vec<u8> = (0..64).collect();
        let mut back = vec![0u8; 64];
        for (i, &q) in p.iter().enumerate() {
            let stream = if i % 2 == 0 { s } else { null_mut() };
            assert_eq!(aclrtMemsetAsync(q, 64, i as i32, 64, stream), 0, "{}", message());
            assert_eq!(aclrtMemcpyAsync(q, 64, h.as_ptr().cast(), 8, ACL_MEMCPY_HOST_TO_DEVICE, stream), 0);
        }
        assert_eq!(aclrtSynchronizeDevice(), 0);
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 64, p[3], 64, ACL_MEMCPY_DEVICE_TO_HOST), 0);
        assert_eq!(&back[..8], &h[..8]);
        assert_eq!(&back[8..], &[3u8; 56][..]);
        assert_eq!(aclrtMemcpy(p[5], 64, p[3], 64, ACL_MEMCPY_DEVICE_TO_DEVICE), 0);
        assert_eq!(aclrtMemset(p[7], 64, 9, 64), 0);
        assert_eq!(aclrtMemcpyAsync(p[9], 64, p[7], 64, ACL_MEMCPY_DEFAULT, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 64, p[9], 64, ACL_MEMCPY_DEVICE_TO_HOST), 0);
        assert_eq!(back, vec![9u8; 64]);
        // Within what was allocated (the padded size), not past it, nor in freed memory.
        assert_eq!(aclrtMemset(p[0], 65, 0, 65), 107_000, "past the end of its 64 bytes");
        let last = *p.last().unwrap();
        assert_eq!(aclrtFree(last), 0);
        assert_eq!(aclrtMemsetAsync(last, 64, 0, 64, s), 107_000, "freed");
        assert_eq!(aclrtMemcpy(last, 64, h.as_ptr().cast(), 64, ACL_MEMCPY_HOST_TO_DEVICE), 107_000);
        assert_eq!(aclrtFree(last), 107_000, "double free");
        assert_eq!(aclrtFree(p[1].cast::<u8>().add(32).cast()), 107_000, "interior pointer");
        // Freed in any order (and one in stream order), the granule goes back.
        assert_eq!(aclrtMemPoolFreeAsync(p[0], s), 0, "{}", message());
        let mut order: Vec<*mut c_void> = p[1..p.len() - 1].to_vec();
        order.sort_by_key(|&q| (q as usize).wrapping_mul(0x9e37_79b9) % 97);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        for q in order {
            assert_eq!(aclrtFree(q), 0, "{}", message());
        }
        assert_eq!(aclrtFree(a32), 0);
        assert_eq!(used() - before, 2 << 20, "one piece left");
        assert_eq!(aclrtFree(after32), 0);
        assert_eq!(used(), before, "the last piece gives the granule back");
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

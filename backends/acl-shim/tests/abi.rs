//! The C ABI called directly from Rust: contexts, handle checks, per-thread messages,
//! synchronous memory, copies and event timing.
//!
//! The rules it checks: contract §8 (`mempool_hal::contract::c_abi`).

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;

mod common;
use common::{message, props};
use std::ptr::null_mut;

#[test]
fn calls_without_a_current_device_are_refused_not_crashed() {
    std::thread::spawn(|| {
        let mut s: aclrtStream = null_mut();
        let mut ctx: aclrtContext = null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut s), 107_002);
            assert!(message().contains("no current device"), "{}", message());
            assert_eq!(aclrtSynchronizeDevice(), 107_002);
            assert_eq!(aclrtGetCurrentContext(&mut ctx), 107_002);
            assert_eq!(aclrtSetDevice(99), 107_001);
            assert_eq!(aclrtSetDevice(0), 0);
            assert_eq!(aclrtCreateStream(&mut s), 0);
            assert_eq!(aclrtDestroyStream(s), 0);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn wrong_kind_and_garbage_handles_get_codes_and_messages_are_per_thread() {
    // SAFETY: valid out-pointers and handles from the shim (or deliberate garbage, which
    // the shim must refuse).
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let mut ev: aclrtEvent = null_mut();
        assert_eq!(aclrtCreateEvent(&mut ev), 0);
        assert_eq!(aclrtSynchronizeStream(ev), 107_017, "an event is not a stream");
        assert_eq!(aclrtSynchronizeStream(0x1234 as aclrtStream), 107_017);
        assert_eq!(aclrtMemPoolDestroy(ev), 507_000, "an event is not a pool");
        assert_eq!(aclrtDestroyEvent(ev), 0);
        assert_eq!(aclrtDestroyEvent(ev), 107_017);
        assert!(message().contains("destroyed"), "{}", message());
    }
    let other = std::thread::spawn(message).join().unwrap();
    assert_eq!(other, "", "another thread sees its own (empty) message");
}

#[test]
fn synchronous_memory_round_trips_and_frees_in_stream_order() {
    // SAFETY: valid out-pointers, host buffers of the stated sizes, shim handles.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let mut d: *mut c_void = null_mut();
        assert_eq!(aclrtMalloc(&mut d, 4096, ACL_MEM_MALLOC_HUGE_FIRST), 0);
        let src: Vec<u8> = (0..=255).collect();
        let mut back = vec![0u8; 256];
        assert_eq!(aclrtMemset(d, 4096, 0x11, 4096), 0);
        assert_eq!(aclrtMemcpy(d, 4096, src.as_ptr().cast(), 256, ACL_MEMCPY_HOST_TO_DEVICE), 0);
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 256, d, 256, ACL_MEMCPY_DEFAULT), 0);
        assert_eq!(back, src);
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 256, d, 256, 7), 100_000, "bad kind");
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 16, d, 256, ACL_MEMCPY_DEVICE_TO_HOST), 107_000);
        assert_eq!(
            aclrtMemcpy(back.as_mut_ptr().cast(), 256, back.as_ptr().cast(), 256, ACL_MEMCPY_DEVICE_TO_HOST),
            107_000,
            "a host address is not device memory"
        );
        let mut s: aclrtStream = null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtMemPoolFreeAsync(d, s), 0, "aclrtMalloc memory frees in stream order");
        assert_eq!(aclrtMemPoolFreeAsync(d, s), 107_000);
        assert_eq!(aclrtFree(d), 107_000, "already freed");
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

#[test]
fn event_elapsed_time_is_real_milliseconds() {
    extern "C" fn sleep_20ms(_: *mut c_void) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: valid out-pointers and shim handles; the host function takes no data.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let (mut s, mut a, mut b) = (null_mut(), null_mut(), null_mut());
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtCreateEvent(&mut a), 0);
        assert_eq!(aclrtCreateEvent(&mut b), 0);
        assert_eq!(aclrtRecordEvent(a, s), 0);
        assert_eq!(aclrtLaunchHostFunc(s, Some(sleep_20ms), null_mut()), 0);
        assert_eq!(aclrtLaunchHostFunc(s, None, null_mut()), 107_000);
        assert_eq!(aclrtRecordEvent(b, s), 0);
        assert_eq!(aclrtSynchronizeEvent(b), 0);
        let mut status = -1;
        assert_eq!(aclrtQueryEventStatus(b, &mut status), 0);
        assert_eq!(status, ACL_EVENT_RECORDED_STATUS_COMPLETE);
        let mut ms = 0f32;
        assert_eq!(aclrtEventElapsedTime(&mut ms, a, b), 0);
        assert!((15.0..5000.0).contains(&ms), "elapsed {ms} ms");
        assert_eq!(aclrtEventElapsedTime(null_mut(), a, b), 100_000);
        for h in [a, b] {
            assert_eq!(aclrtDestroyEvent(h), 0);
        }
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

/// Device 0 current, streams `a` and `b`, a 64 MiB pool, and 4096 bytes of it allocated
/// on `a` (not yet ordered before anything on `b`).
fn two_streams_and_an_allocation_on_the_first() -> (aclrtStream, aclrtStream, aclrtMemPool, *mut c_void) {
    // SAFETY: valid out-pointers and shim handles.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let (mut a, mut b) = (null_mut(), null_mut());
        assert_eq!(aclrtCreateStream(&mut a), 0);
        assert_eq!(aclrtCreateStream(&mut b), 0);
        let mut pool: aclrtMemPool = null_mut();
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 64 << 20)), 0);
        let mut x: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut x, 4096, pool, a), 0);
        (a, b, pool, x)
    }
}

#[test]
fn stream_order_violations_answer_107000_naming_streams_and_operations() {
    // SAFETY: valid out-pointers and shim handles; the refused calls enqueue nothing.
    unsafe {
        let (a, b, pool, x) = two_streams_and_an_allocation_on_the_first();
        assert_eq!(aclrtMemsetAsync(x, 4096, 0, 4096, b), 107_000, "b is not ordered after the allocation on a");
        let m = message();
        assert!(m.contains("not ordered after that allocation") && m.contains("memset_async"), "{m}");
        assert_eq!(message(), "", "aclGetRecentErrMsg takes the message (CANN: obtains and clears)");
        assert_eq!(aclrtMemPoolFreeAsync(x, a), 0);
        assert_eq!(aclrtMemsetAsync(x, 4096, 0, 4096, a), 107_000);
        assert!(message().contains("use after free"), "{}", message());
        assert_eq!(aclrtSynchronizeStream(a), 0);
        let mut v: u64 = 0;
        assert_eq!(aclrtMemPoolSetAttr(pool, -1, (&raw mut v).cast()), 107_000);
        assert!(message().contains("unknown pool attribute id -1"), "{}", message());
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
        assert_eq!(aclrtDestroyStream(a), 0);
        assert_eq!(aclrtDestroyStream(b), 0);
    }
}

#[test]
fn synchronous_memory_serves_async_copies_and_memsets_on_any_stream() {
    // SAFETY: valid out-pointers, host buffers of the stated sizes that outlive the
    // synchronizations below, shim handles.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let mut s: aclrtStream = null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let mut d: *mut c_void = null_mut();
        assert_eq!(aclrtMalloc(&mut d, 4096, ACL_MEM_MALLOC_HUGE_FIRST), 0);
        let h: Vec<u8> = (1..=16).collect();
        // A user stream.
        assert_eq!(aclrtMemsetAsync(d, 4096, 0, 4096, s), 0, "{}", message());
        assert_eq!(aclrtMemcpyAsync(d, 16, h.as_ptr().cast(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s), 0, "{}", message());
        assert_eq!(aclrtSynchronizeStream(s), 0);
        // The default (null) stream.
        let tail = d.cast::<u8>().add(16).cast::<c_void>();
        assert_eq!(aclrtMemsetAsync(tail, 16, 0x22, 16, null_mut()), 0, "{}", message());
        assert_eq!(aclrtMemcpyAsync(d, 16, h.as_ptr().cast(), 16, ACL_MEMCPY_DEFAULT, null_mut()), 0, "{}", message());
        assert_eq!(aclrtSynchronizeDevice(), 0);
        let mut back = vec![0u8; 32];
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 32, d, 32, ACL_MEMCPY_DEVICE_TO_HOST), 0);
        assert_eq!(&back[..16], &h[..]);
        assert_eq!(&back[16..], &[0x22; 16]);
        assert_eq!(aclrtFree(d), 0, "{}", message());
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

#[test]
fn a_synchronized_allocation_is_usable_on_every_stream() {
    // SAFETY: valid out-pointers, a host buffer of the stated size that outlives the
    // synchronization below, shim handles; the refused call enqueues nothing.
    unsafe {
        let (a, b, pool, x) = two_streams_and_an_allocation_on_the_first();
        assert_eq!(aclrtMemsetAsync(x, 4096, 0, 4096, b), 107_000, "not yet ordered");
        assert!(message().contains(" on stream "), "{}", message());
        assert_eq!(aclrtSynchronizeStream(a), 0);
        let h = [7u8; 64];
        assert_eq!(aclrtMemsetAsync(x, 4096, 0, 4096, b), 0, "{}", message());
        assert_eq!(aclrtMemcpyAsync(x, 64, h.as_ptr().cast(), 64, ACL_MEMCPY_HOST_TO_DEVICE, b), 0, "{}", message());
        assert_eq!(aclrtMemPoolFreeAsync(x, b), 0, "{}", message());
        assert_eq!(aclrtSynchronizeStream(b), 0);
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
        assert_eq!(aclrtDestroyStream(a), 0);
        assert_eq!(aclrtDestroyStream(b), 0);
    }
}

#[test]
fn pool_calls_check_their_arguments_in_canns_order() {
    // SAFETY: valid out-pointers; handles are looked up, never dereferenced.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let (mut s, mut dead_s) = (null_mut(), null_mut());
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtCreateStream(&mut dead_s), 0);
        assert_eq!(aclrtDestroyStream(dead_s), 0);
        let mut dead_pool: aclrtMemPool = null_mut();
        let props = props(0, 64 << 20);
        assert_eq!(aclrtMemPoolCreate(&mut dead_pool, &props), 0);
        assert_eq!(aclrtMemPoolDestroy(dead_pool), 0);
        let mut p: *mut c_void = null_mut();
        // The stream before the pool: 107017, not 507000.
        assert_eq!(aclrtMemPoolMallocAsync(&mut p, 16, dead_pool, dead_s), 107_017);
        // A size that overflows before the pool: 107000, not 507000.
        assert_eq!(aclrtMemPoolMallocAsync(&mut p, usize::MAX, dead_pool, s), 107_000);
        assert_eq!(aclrtMemPoolMallocAsync(&mut p, 16, dead_pool, s), 507_000);
        assert!(p.is_null());
        // No current context: 107003 for pool malloc and free (the stream handle first).
        let (s_, pool_, dead_s_) = (s as usize, dead_pool as usize, dead_s as usize);
        std::thread::spawn(move || {
            let (s, pool) = (s_ as aclrtStream, pool_ as aclrtMemPool);
            let mut p: *mut c_void = null_mut();
            assert_eq!(aclrtMemPoolMallocAsync(&mut p, 16, pool, s), 107_003);
            assert_eq!(aclrtMemPoolFreeAsync(0x1000 as *mut c_void, s), 107_003);
            assert_eq!(aclrtMemPoolMallocAsync(&mut p, 16, pool, dead_s_ as aclrtStream), 107_017);
            // Destroy looks the pool up before it needs a context.
            assert_eq!(aclrtMemPoolDestroy(pool), 507_000);
        })
        .join()
        .unwrap();
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

#[test]
fn event_calls_that_need_no_context_and_elapsed_time_of_an_event_never_recorded() {
    // SAFETY: valid out-pointers and shim handles.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0);
        let (mut a, mut b) = (null_mut(), null_mut());
        assert_eq!(aclrtCreateEvent(&mut a), 0);
        assert_eq!(aclrtCreateEvent(&mut b), 0);
        assert_eq!(aclrtRecordEvent(b, null_mut()), 0);
        let mut ms = 0f32;
        assert_eq!(aclrtEventElapsedTime(&mut ms, a, b), 507_000, "a was never recorded (CANN: 507000)");
        let (a, b) = (a as usize, b as usize);
        std::thread::spawn(move || {
            let (a, b) = (a as aclrtEvent, b as aclrtEvent);
            let mut st = -1;
            assert_eq!(aclrtSynchronizeEvent(b), 0);
            assert_eq!(aclrtQueryEventStatus(b, &mut st), 0);
            assert_eq!(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
            let mut ms = 0f32;
            assert_eq!(aclrtEventElapsedTime(&mut ms, b, b), 0);
            assert_eq!(aclrtDestroyEvent(a), 0);
            assert_eq!(aclrtDestroyEvent(b), 0);
            let mut h: *mut c_void = null_mut();
            assert_eq!(aclrtMallocHost(&mut h, 16), 107_002, "aclrtMallocHost needs a context");
        })
        .join()
        .unwrap();
    }
}

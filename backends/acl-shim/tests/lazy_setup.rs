//! The library sets up each device lazily: the default stream at the first use of the
//! null stream, the hidden pool and stream of `aclrtMalloc` at the first synchronous
//! allocation. Threads that make that first use on one device at once must create those
//! objects once: a thread that loses the race must not leave a stream (with its worker
//! thread) or a pool behind.
//!
//! A test binary of its own with one test, so its first calls are the process's first
//! uses of every device. What it counts is the streams in the emulator's registry (a
//! stream starts its worker thread only with its first work, so threads no longer show
//! an orphan stream), and the process's threads (`/proc/self/status`): none may be left
//! behind either.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[allow(dead_code)] // this binary uses only part of the shared helpers
mod common;
use common::message;

const DEVICES: u32 = 8;
const THREADS: usize = 12;

/// The number of threads of this process.
fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("Threads:")).expect("a Threads line");
    line["Threads:".len()..].trim().parse::<usize>().expect("a thread count")
}

/// The number of threads once it is `want`, or after 5 s (threads just joined may take
/// a moment to leave the kernel's list; an orphan worker thread never leaves).
fn threads_settled_at(want: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n = threads();
        if n == want || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn racing_first_uses_of_a_device_create_its_hidden_objects_once() {
    // SAFETY: this binary has this one test and it has started no thread yet, so nothing
    // reads the environment concurrently; the shim reads it at its first call.
    unsafe { std::env::set_var(acl_rt::ENV_DEVICES, DEVICES.to_string()) };
    let mut count = 0u32;
    // SAFETY: a valid out-pointer. The first call builds the platform: no device is set up.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, 0, "{}", message());
    assert_eq!(count, DEVICES);
    let before = threads();
    let streams_before = acl_rt::registered_streams_for_tests().expect("the library started");

    for device in 0..DEVICES as i32 {
        let go = Arc::new(Barrier::new(THREADS));
        let racers: Vec<_> = (0..THREADS)
            .map(|i| {
                let go = Arc::clone(&go);
                std::thread::spawn(move || {
                    // SAFETY: a device id in range, valid out-pointers, the null (default)
                    // stream and the allocation just made.
                    unsafe {
                        assert_eq!(aclrtSetDevice(device), 0, "{}", message());
                        go.wait();
                        if i % 2 == 0 {
                            let mut p: *mut c_void = null_mut();
                            assert_eq!(aclrtMalloc(&mut p, 64, ACL_MEM_MALLOC_HUGE_FIRST), 0, "{}", message());
                            assert_eq!(aclrtFree(p), 0, "{}", message());
                        } else {
                            assert_eq!(aclrtSynchronizeStream(null_mut()), 0, "{}", message());
                        }
                    }
                })
            })
            .collect();
        for r in racers {
            r.join().expect("a racing thread failed");
        }
    }

    // Each device now has exactly two streams of the library's own: its default stream
    // and the hidden stream of `aclrtMalloc`. An orphan stream would stay registered.
    let streams = acl_rt::registered_streams_for_tests().expect("the library started");
    assert_eq!(
        streams,
        streams_before + 2 * DEVICES as usize,
        "{DEVICES} devices set up by {THREADS} racing threads each: {streams_before} streams before, {streams} \
         after (a stream per orphan beyond the two of each device)"
    );
    // The synchronizations ran nothing and the allocations queued nothing, so no stream
    // started a worker: the racing threads have gone and left no thread behind.
    let after = threads_settled_at(before);
    assert_eq!(after, before, "threads before the race {before}, after {after}");
    // And the devices work: the hidden pool of each answers.
    for device in 0..DEVICES as i32 {
        let mut p: *mut c_void = null_mut();
        // SAFETY: a device id in range, a valid out-pointer, the allocation just made.
        unsafe {
            assert_eq!(aclrtSetDevice(device), 0);
            assert_eq!(aclrtMalloc(&mut p, 64, ACL_MEM_MALLOC_HUGE_FIRST), 0, "{}", message());
            assert_eq!(aclrtFree(p), 0, "{}", message());
        }
    }
}

//! Destroy while in use: threads use a stream while the main thread destroys it.

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Threads query, set and launch on a stream while the main thread destroys it: every call
/// answers 0 or `CUDA_ERROR_INVALID_HANDLE`, and nothing hangs or crashes.
pub(super) fn stream_destroyed_in_use(fx: &Fx) -> Vec<String> {
    let mut failures = Vec::new();
    for round in 0..20 {
        let mut s: CUstream = null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { cuStreamCreate(&mut s, 0) }, "a stream");
        let h = s as usize;
        let stop = Arc::new(AtomicBool::new(false));
        let (a, host) = (fx.a, fx.host);
        let workers: Vec<_> = (0..3)
            .map(|i| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut codes = Vec::new();
                    while !stop.load(Ordering::Acquire) {
                        // SAFETY: the handle is looked up (live or destroyed); `a` is a live
                        // allocation holding 64 bytes, `host` cuMemAllocHost memory.
                        let rc = unsafe {
                            match i {
                                0 => cuStreamQuery(st(h)),
                                1 => cuMemcpyDtoHAsync_v2(host as *mut c_void, a, 64, st(h)),
                                _ => cuLaunchHostFunc(st(h), Some(ignore), null_mut()),
                            }
                        };
                        codes.push(rc);
                    }
                    codes
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(2));
        // SAFETY: a live handle.
        check(unsafe { cuStreamDestroy_v2(s) }, "destroying the stream in use");
        std::thread::sleep(Duration::from_millis(2));
        stop.store(true, Ordering::Release);
        for w in workers {
            for rc in w.join().expect("a worker") {
                if rc != OK && rc != HANDLE && rc != CUDA_ERROR_NOT_READY {
                    failures.push(format!("round {round}: a call answered {rc}"));
                }
            }
        }
    }
    // The copies queued on the destroyed streams ran: the pinned buffer is idle again.
    // SAFETY: a live handle.
    check(unsafe { cuStreamSynchronize(st(fx.s)) }, "synchronizing");
    failures
}

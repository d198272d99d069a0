//! Primary contexts: retains are counted, the last release deactivates the context (calls
//! that need a current context answer `CUDA_ERROR_INVALID_CONTEXT` while it is current),
//! and a new retain activates it again with the same handle; the current context is per
//! thread. A test binary of its own: retain counts are process-wide.

mod common;

use common::{check, init_and_use, message};
use cuda::exports::*;
use cuda::types::*;
use std::ptr::null_mut;

#[test]
fn the_last_release_deactivates_the_primary_context_until_it_is_retained_again() {
    let ctx = init_and_use(0);
    let mut again: CUcontext = null_mut();
    let mut s: CUstream = null_mut();
    let mut current: CUcontext = null_mut();
    // SAFETY: valid out-pointers and handles the library returned.
    unsafe {
        check(cuDevicePrimaryCtxRetain(&mut again, 0), "a second retain");
        assert_eq!(again, ctx, "one primary context per device");
        check(cuDevicePrimaryCtxRelease_v2(0), "the first release");
        check(cuStreamCreate(&mut s, 0), "still active after one release");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
        check(cuDevicePrimaryCtxRelease_v2(0), "the last release");
        assert_eq!(cuStreamCreate(&mut s, 0), CUDA_ERROR_INVALID_CONTEXT, "released: {}", message());
        assert_eq!(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(cuStreamSynchronize(null_mut()), CUDA_ERROR_INVALID_CONTEXT, "the NULL stream");
        assert_eq!(cuCtxSetCurrent(ctx), CUDA_ERROR_INVALID_CONTEXT, "a released context cannot be made current");
        check(cuCtxGetCurrent(&mut current), "cuCtxGetCurrent");
        assert_eq!(current, ctx, "it stays the thread's current context");
        assert_eq!(cuDevicePrimaryCtxRelease_v2(0), CUDA_ERROR_INVALID_CONTEXT, "nothing left to release");
        check(cuDevicePrimaryCtxRetain(&mut again, 0), "retained again");
        assert_eq!(again, ctx, "the same handle");
        check(cuStreamCreate(&mut s, 0), "active again");
        check(cuStreamDestroy_v2(s), "cuStreamDestroy");
    }
    // The current context is per thread: another thread has none until it sets one.
    let ctx = ctx as usize;
    std::thread::spawn(move || {
        let mut c: CUcontext = 0x1 as CUcontext;
        // SAFETY: valid out-pointers and a live context handle.
        unsafe {
            check(cuCtxGetCurrent(&mut c), "cuCtxGetCurrent");
            assert!(c.is_null(), "a new thread has no current context");
            assert_eq!(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
            check(cuCtxSetCurrent(ctx as CUcontext), "cuCtxSetCurrent");
            check(cuCtxSynchronize(), "cuCtxSynchronize");
            check(cuCtxSetCurrent(null_mut()), "NULL clears");
            check(cuCtxGetCurrent(&mut c), "cuCtxGetCurrent");
            assert!(c.is_null());
        }
    })
    .join()
    .expect("the other thread");
}
